/* test_db_check_values.c — `db check` checks what is stored, not only SQLite's integrity: a
 * trigger that deletes every new result, times stored as text or as negative numbers, a
 * success without a time, unknown statuses, problems whose texts do not fit what rooftune reads
 * them into or whose dimensions are not NAME=N lists.  Each passed `db check` before; each is
 * now one line of the report.  A healthy database (with a killed run) still checks out. */
/* stages: db */
#include <sqlite3.h>

#include "test.h"
#include "unit/db_fixture.h"

static char path[512];

static void make_db(void) {
  fx_tmpname(path, sizeof path, "checkvals");
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(256, 256, 256, "f16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "src", "man", &err), RT_OK);
  for (int i = 0; i < 4; i++) {
    candidate_result c = fx_result("gemm_mma", 64, 16 * (i + 1), 1.0 + i);
    CHECK_INT(db_run_store(r, &c, NULL, &err), RT_OK);
  }
  candidate_result bad = fx_result("gemm_mma", 128, 128, NAN);
  bad.status = RT_ERR_COMPILE;
  snprintf(bad.detail, sizeof bad.detail, "ptxas: too many registers");
  CHECK_INT(db_run_store(r, &bad, NULL, &err), RT_OK);
  db_run_free(r); /* never finished: a killed run, which is a note, not a problem */
  db_close(d);
}

/* Runs SQL on the file behind rooftune's back. */
static void tamper(const char *sql) {
  sqlite3 *h = NULL;
  CHECK(sqlite3_open(path, &h) == SQLITE_OK);
  char *msg = NULL;
  if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
    fprintf(stderr, "tamper: %s: %s\n", sql, msg);
    CHECK(0);
  }
  sqlite3_free(msg);
  sqlite3_close(h);
}

static int check(char *report, size_t size) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  if (!d) return -1;
  int problems = -1;
  CHECK_INT(db_check(d, report, size, &problems, &err), RT_OK);
  db_close(d);
  return problems;
}

TEST_CASE(tampered_values) {
  srand((unsigned)getpid());
  char report[8192];
  make_db();
  CHECK_INT(check(report, sizeof report), 0);
  CHECK_CONTAINS(report, "never finished");

  static const struct {
    const char *sql;  /* the damage */
    const char *line; /* what the report says */
    const char *undo;
  } cases[] = {
      {"CREATE TRIGGER eat AFTER INSERT ON results BEGIN DELETE FROM results; END",
       "trigger eat on results is not one rooftune creates", "DROP TRIGGER eat"},
      {"UPDATE results SET time_ms = 'fast' WHERE id = 1",
       "result 1: time_ms is text 'fast', not a number",
       "UPDATE results SET time_ms = 1.0 WHERE id = 1"},
      {"UPDATE results SET time_ms = -2.5 WHERE id = 2",
       "result 2 (OK): time -2.5 ms is not a time",
       "UPDATE results SET time_ms = 2.0 WHERE id = 2"},
      {"UPDATE results SET time_ms = NULL WHERE id = 3",
       "result 3 (OK): time NULL ms is not a time",
       "UPDATE results SET time_ms = 3.0 WHERE id = 3"},
      {"UPDATE results SET spread = -1 WHERE id = 4", "result 4: spread -1",
       "UPDATE results SET spread = 0 WHERE id = 4"},
      {"UPDATE results SET status = 'FINE' WHERE id = 4", "result 4: status 'FINE' is not a status",
       "UPDATE results SET status = 'OK' WHERE id = 4"},
      {"UPDATE problems SET family = 'a_family_name_of_24_chs'",
       "problem 1: family 'a_family_name_of_24_chs'", "UPDATE problems SET family = 'gemm'"},
      {"UPDATE problems SET shape = ''", "problem 1: shape '' is empty",
       "UPDATE problems SET shape = '256x256x256'"},
      {"UPDATE problems SET dims = 'M=abc,N=2'", "problem 1: dims M=abc,N=2 are not NAME=N",
       "UPDATE problems SET dims = 'M=256,N=256,K=256'"},
      {"UPDATE results SET config = printf('%.800c', 'x') WHERE id = 1",
       "result 1: its configuration is 800 characters",
       "UPDATE results SET config = 'BLOCK_M=64,BLOCK_N=16' WHERE id = 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tamper(cases[i].sql);
    int n = check(report, sizeof report);
    CHECK(n >= 1);
    CHECK_CONTAINS(report, cases[i].line);
    tamper(cases[i].undo);
    CHECK_INT(check(report, sizeof report), 0); /* and the undo leaves it healthy again */
  }
  /* a trigger does what it says: it ate the row rooftune stored */
  tamper(
      "CREATE TRIGGER eat AFTER INSERT ON results BEGIN DELETE FROM results WHERE id = new.id; "
      "END");
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(256, 256, 256, "f16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  candidate_result c = fx_result("gemm_mma", 256, 256, 0.5);
  CHECK_INT(db_run_store(r, &c, NULL, &err), RT_OK);
  db_counts cnt;
  CHECK_INT(db_count(d, &cnt, &err), RT_OK);
  CHECK_INT(cnt.results, 5); /* the new one is gone */
  db_run_free(r);
  db_close(d);
  CHECK(check(report, sizeof report) >= 1);
  CHECK_CONTAINS(report, "DROP TRIGGER \"eat\"");
  fx_remove(path);
}

TEST_LIST(TEST_ENTRY(tampered_values))
