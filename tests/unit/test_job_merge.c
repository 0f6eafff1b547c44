/* test_job_merge.c — merging shard databases: the merged winners are the fastest across the
 * shards, the same whichever order the files are merged in (a tie goes to the same result), a
 * second merge adds nothing, results of another GPU model stay apart, and a run a shard first
 * had "running" takes its later status. */
/* stages: job */
#include <sqlite3.h>
#include <unistd.h>

#include "db_fixture.h"
#include "test.h"
#include "job/run.h"

/* Stores candidates (ms each; 0 ends) of problem MxNxK on DEVICE in database PATH as one run
 * with STATUS, the fastest the winner. */
static void shard(const char *path, long long m, const char *device, const double *ms,
                  const char *status) {
  db *d = NULL;
  rt_error err = {0};
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(m, 64, 64, "f16"), device);
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "s", "m", &err), RT_OK);
  long long best = 0;
  double best_ms = 0;
  for (int i = 0; ms[i] > 0; i++) {
    candidate_result c = fx_result("gemm_mma", 16 << (i % 3), 16 << (i / 3) << (m % 7), ms[i]);
    long long id = 0;
    CHECK_INT(db_run_store(r, &c, &id, &err), RT_OK);
    if (!best || ms[i] < best_ms) best = id, best_ms = ms[i];
  }
  db_winner w = fx_winner("k", "cubin", 5);
  CHECK_INT(db_run_set_winner(r, best, &w, NULL, &err), RT_OK);
  if (strcmp(status, "running")) CHECK_INT(db_run_finish(r, status, &err), RT_OK);
  db_run_free(r);
  db_close(d);
}

/* "device|shape|config|time|result uid" of every winner, sorted, into buf. */
static void winners(const char *path, char *buf, size_t size) {
  sqlite3 *h = NULL;
  buf[0] = 0;
  CHECK_INT(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st = NULL;
  CHECK_INT(sqlite3_prepare_v2(
                h,
                "SELECT v.name || '|' || p.shape || '|' || r.config || '|' || r.time_ms || '|' || "
                "r.uid FROM winners w JOIN results r ON r.id=w.result_id JOIN problems p ON "
                "p.id=w.problem_id JOIN devices v ON v.id=w.device_id ORDER BY 1",
                -1, &st, NULL),
            SQLITE_OK);
  size_t n = 0;
  while (sqlite3_step(st) == SQLITE_ROW)
    n += (size_t)snprintf(buf + n, size - n, "%s\n", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(h);
}

static long long count(const char *path, const char *q) {
  sqlite3 *h = NULL;
  long long v = -1;
  sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

/* Three shards' databases and two merged ones. */
static char a[256], b[256], c[256], x[256], y[256];

static void setup(void) {
  fx_tmpname(a, sizeof a, "merge-a");
  fx_tmpname(b, sizeof b, "merge-b");
  fx_tmpname(c, sizeof c, "merge-c");
  fx_tmpname(x, sizeof x, "merge-x");
  fx_tmpname(y, sizeof y, "merge-y");
  /* problem 128: a split problem, shards a and b; their bests tie at 1.0 ms (other configs).
   * problem 256: shard b only.  c: problem 128 on another GPU model (faster, never mixed in),
   * and a run still "running" that c later finishes */
  const double a128[] = {1.5, 1.0, 2.0, 0}, b128[] = {1.2, 1.0, 0}, b256[] = {3.0, 2.5, 0},
               c128[] = {0.5, 0};
  shard(a, 128, "NVIDIA H200", a128, "done");
  shard(b, 128, "NVIDIA H200", b128, "done");
  shard(b, 256, "NVIDIA H200", b256, "done");
  shard(c, 128, "NVIDIA A100-SXM4-80GB", c128, "running");
}

static void teardown(void) {
  fx_remove(a);
  fx_remove(b);
  fx_remove(c);
  fx_remove(x);
  fx_remove(y);
}

/* in either order the same winners; again, nothing added; a run's later status wins */
TEST_CASE(merged) {
  char *order1[] = {a, b, c}, *order2[] = {c, b, a};
  job_merge_stats st;
  rt_error err = {0};
  CHECK_INT(job_merge(x, order1, 3, &st, &err), RT_OK);
  CHECK_INT(st.files, 3);
  CHECK_INT(st.added, 3 + 2 + 2 + 1);
  CHECK_INT(st.winners, 3);
  CHECK_INT(job_merge(y, order2, 3, &st, &err), RT_OK);
  char wx[4096], wy[4096];
  winners(x, wx, sizeof wx);
  winners(y, wy, sizeof wy);
  CHECK_STR(wx, wy);
  CHECK_CONTAINS(wx, "NVIDIA A100-SXM4-80GB|128x64x64|");
  CHECK_CONTAINS(wx, "NVIDIA H200|128x64x64|");
  CHECK_CONTAINS(wx, "|1.0|");
  CHECK_CONTAINS(wx, "NVIDIA H200|256x64x64|");
  CHECK(strstr(wx, "H200|128x64x64|BLOCK_M=16,BLOCK_N=16|0.5") ==
        NULL); /* the A100's time stays the A100's */
  /* idempotent: merging the same files again adds nothing and changes no winner */
  CHECK_INT(job_merge(x, order2, 3, &st, &err), RT_OK);
  CHECK_INT(st.added, 0);
  char wx2[4096];
  winners(x, wx2, sizeof wx2);
  CHECK_STR(wx, wx2);
  CHECK_INT(count(x, "SELECT count(*) FROM runs"), 4);
  CHECK_INT(count(x, "SELECT count(*) FROM runs WHERE status='running'"), 1);
  /* c's run finishes (interrupted): the merged database takes the later status */
  db *d = NULL;
  CHECK_INT(db_open(c, DB_CREATE, &d, &err), RT_OK);
  db_run_info *runs = NULL;
  size_t n = 0;
  CHECK_INT(db_runs(d, &runs, &n, &err), RT_OK);
  CHECK_INT(n, 1);
  if (n) CHECK_INT(db_run_set_status(d, runs[0].id, "interrupted", &err), RT_OK);
  free(runs);
  db_close(d);
  char *one[] = {c};
  CHECK_INT(job_merge(x, one, 1, &st, &err), RT_OK);
  CHECK_INT(count(x, "SELECT count(*) FROM runs WHERE status='running'"), 0);
  CHECK_INT(count(x, "SELECT count(*) FROM runs WHERE status='interrupted'"), 1);
  /* an older copy of the run ("running") merged after it changes nothing back */
  CHECK_INT(job_merge(y, one, 1, &st, &err), RT_OK);
  CHECK_INT(count(y, "SELECT count(*) FROM runs WHERE status='interrupted'"), 1);
}

/* a file that is not a database is refused naming it */
TEST_CASE(not_a_database) {
  job_merge_stats st;
  rt_error err = {0};
  char bad[300];
  snprintf(bad, sizeof bad, "%s.txt", a);
  FILE *f = fopen(bad, "w");
  if (f) {
    fputs("not a database at all, just some words to make it long enough to look like a file\n", f);
    fclose(f);
  }
  char *badv[] = {bad};
  CHECK(job_merge(x, badv, 1, &st, &err) != RT_OK);
  char line[1600];
  rt_error_format(&err, line, sizeof line);
  CHECK_CONTAINS(line, bad);
  unlink(bad);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(merged), TEST_ENTRY(not_a_database))
