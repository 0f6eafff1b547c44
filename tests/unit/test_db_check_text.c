/* test_db_check_text.c — `db check` flags what rooftune never writes in a text: markup in a
 * plain field (a result's limit, a run's start time, a device's name), bytes that are not UTF-8
 * (a configuration), a terminal escape in a free-text one (a compiler message), naming the
 * table, the row and the column; and leaves alone what free text legitimately holds (a launch
 * expression with < and &&, a compiler message with template brackets, a sentence). */
/* stages: db */
#include <sqlite3.h>

#include "db_fixture.h"
#include "test.h"

static int check(const char *path, char *report, size_t size) {
  db *d = NULL;
  rt_error err = {0};
  int problems = -1;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  if (d) CHECK_INT(db_check(d, report, size, &problems, &err), RT_OK);
  db_close(d);
  return problems;
}

static void sql(const char *path, const char *text) {
  sqlite3 *h = NULL;
  CHECK_INT(sqlite3_open(path, &h), SQLITE_OK);
  char *msg = NULL;
  int rc = sqlite3_exec(h, text, NULL, NULL, &msg);
  if (rc) fprintf(stderr, "%s: %s\n", text, msg);
  CHECK_INT(rc, SQLITE_OK);
  sqlite3_free(msg);
  sqlite3_close(h);
}

TEST_CASE(hostile_text) {
  char path[256];
  fx_tmpname(path, sizeof path, "checktext");
  db *d = NULL;
  rt_error err = {0};
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(64, 64, 64, "f16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "s", "m", &err), RT_OK);
  long long ids[3] = {0};
  for (int i = 0; i < 3; i++) {
    candidate_result c = fx_result("gemm_mma", 16 << i, 32, 1.0 + i);
    CHECK_INT(db_run_store(r, &c, &ids[i], &err), RT_OK);
  }
  db_winner w = fx_winner("k", "cubin", 5);
  snprintf(w.grid[0], sizeof w.grid[0], "N < 4096 && M > 0 ? ceil_div(N, 64) : 1");
  CHECK_INT(db_run_set_winner(r, ids[0], &w, NULL, &err), RT_OK);
  CHECK_INT(db_run_finish(r, "done", &err), RT_OK);
  db_run_free(r);
  db_close(d);

  char report[8192];
  sql(path,
      "UPDATE results SET detail = 'error: no match for std::vector<int> & \"x\"\n  at line 3', "
      "diag_sentence = 'occupancy < 50 % & falling'");
  CHECK_INT(check(path, report, sizeof report), 0); /* free text may hold < & and quotes */

  sql(path, "UPDATE results SET diag_limit = '<img src=x onerror=alert(1)>' WHERE id = 2");
  sql(path, "UPDATE runs SET started_at = started_at || '<script>x</script>'");
  sql(path, "UPDATE devices SET name = name || '\"><b>'");
  sql(path, "UPDATE results SET config = config || CAST(X'FFC0BC' AS TEXT) WHERE id = 3");
  sql(path, "UPDATE results SET detail = 'red ' || char(27) || '[31m' WHERE id = 1");
  int n = check(path, report, sizeof report);
  CHECK_INT(n, 6); /* the five, and the image tag's length: diag_limit is read into 24 bytes */
  CHECK_CONTAINS(report, "results row 2: diag_limit is 28 characters, more than the 23");
  CHECK_CONTAINS(report, "results row 2: diag_limit holds markup");
  CHECK_CONTAINS(report, "runs row 1: started_at holds markup");
  CHECK_CONTAINS(report, "devices row 1: name holds markup");
  CHECK_CONTAINS(report, "results row 3: config holds bytes that are not UTF-8");
  CHECK_CONTAINS(report, "results row 1: detail holds a control character");
  CHECK_CONTAINS(report, "\\xff\\xc0\\xbc"); /* shown escaped, never as the bytes */
  CHECK(strchr(report, 27) == NULL);
  /* the launch expression's < and && are fine (the note on the unverified winner is no problem) */
  CHECK(strstr(report, "winners row") == NULL);

  /* more than 20 in one column (31 with row 2): 20 lines and a count, every one a problem */
  sql(path,
      "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 30) "
      "INSERT INTO results(run_id, problem_id, device_id, template_id, toolkit, config, status, "
      "timing, "
      "created_at, time_ms, diag_limit) SELECT run_id, problem_id, device_id, template_id, "
      "toolkit, config || i, "
      "status, timing, created_at, time_ms, '<b>' FROM results, k WHERE results.id = 1");
  n = check(path, report, sizeof report);
  CHECK_INT(n, 6 + 30);
  CHECK_CONTAINS(report, "... and 11 more texts like it in results.diag_limit");
  fx_remove(path);
}

TEST_LIST(TEST_ENTRY(hostile_text))
