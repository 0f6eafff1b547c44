/* test_db_claims.c — concurrent tuners of one problem claim the candidates they evaluate:
 *   - a candidate claimed by a live run is held for every other run, which then gets the result
 *     once it is stored (so it is never evaluated twice);
 *   - storing the result releases the claim; so do finishing the run and db_run_release;
 *   - a claim of a run whose process is gone (a killed tuner) has expired: the next claimant
 *     takes it, and the dead run is marked "interrupted" (killed runs stayed "running" forever);
 *   - a run on another machine holds its claims for DB_CLAIM_LEASE_S after its last write;
 *   - db_run_begin marks killed runs interrupted, keeping their committed results. */
/* stages: db */
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include "test.h"
#include "unit/db_fixture.h"

static char path[512];

static db_run *begin(db *d, rt_error *err) {
  db_run_spec spec = fx_spec(fx_gemm(1024, 1024, 1024, "bf16"), "model:h200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "src", "man", err), RT_OK);
  return r;
}

static candidate_result result(const char *hash, double ms) {
  candidate_result c = fx_result("gemm_mma", 128, 64, ms);
  c.timing = TIMING_PREDICTED;
  snprintf(c.code_hash, sizeof c.code_hash, "%s", hash);
  return c;
}

static int claim(db_run *r, const char *hash, long long *holder, candidate_result *done) {
  rt_error err = {0};
  int state = -1;
  CHECK_INT(db_run_claim(r, "gemm_mma", "BLOCK_M=128,BLOCK_N=64", hash, &state, done, holder, &err),
            RT_OK);
  return state;
}

static const char *run_status(db *d, long long id) {
  static char buf[32];
  sqlite3 *h = NULL;
  buf[0] = 0;
  if (sqlite3_open_v2(db_path(d), &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(h, "SELECT status FROM runs WHERE id=?", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW) snprintf(buf, sizeof buf, "%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return buf;
}

static void tamper(const char *sql) {
  sqlite3 *h = NULL;
  CHECK(sqlite3_open(path, &h) == SQLITE_OK);
  CHECK(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK);
  sqlite3_close(h);
}

static void test_held_then_done(db *d) {
  rt_error err = {0};
  db_run *a = begin(d, &err), *b = begin(d, &err);
  long long holder = 0;
  CHECK_INT(claim(a, "h1", NULL, NULL), DB_CLAIM_GRANTED);
  CHECK_INT(claim(a, "h1", NULL, NULL), DB_CLAIM_GRANTED); /* its own claim again */
  CHECK_INT(claim(b, "h1", &holder, NULL), DB_CLAIM_HELD);
  CHECK_INT(holder, db_run_id(a));
  candidate_result c = result("h1", 0.75);
  CHECK_INT(db_run_store(a, &c, NULL, &err), RT_OK);
  candidate_result got;
  memset(&got, 0, sizeof got);
  CHECK_INT(claim(b, "h1", NULL, &got), DB_CLAIM_DONE);
  CHECK_NEAR(got.time_ms, 0.75, 0);
  CHECK_STR(got.code_hash, "h1");
  CHECK_STR(got.template_name, "gemm_mma");
  /* a result without a code hash is found by template and configuration */
  const char *cfg = "BLOCK_M=256,BLOCK_N=32";
  int state = -1;
  CHECK_INT(db_run_claim(a, "gemm_mma", cfg, "", &state, NULL, NULL, &err), RT_OK);
  CHECK_INT(state, DB_CLAIM_GRANTED);
  CHECK_INT(db_run_claim(b, "gemm_mma", cfg, "", &state, NULL, NULL, &err), RT_OK);
  CHECK_INT(state, DB_CLAIM_HELD);
  c = fx_result("gemm_mma", 256, 32, 0.5);
  CHECK_INT(db_run_store(a, &c, NULL, &err), RT_OK);
  CHECK_INT(db_run_claim(b, "gemm_mma", cfg, "", &state, &got, NULL, &err), RT_OK);
  CHECK_INT(state, DB_CLAIM_DONE);
  CHECK_NEAR(got.time_ms, 0.5, 0);
  /* released by hand, and by finishing */
  CHECK_INT(claim(a, "h2", NULL, NULL), DB_CLAIM_GRANTED);
  CHECK_INT(claim(b, "h2", NULL, NULL), DB_CLAIM_HELD);
  CHECK_INT(db_run_release(a, "gemm_mma", "BLOCK_M=128,BLOCK_N=64", "h2", &err), RT_OK);
  CHECK_INT(claim(b, "h2", NULL, NULL), DB_CLAIM_GRANTED);
  CHECK_INT(claim(a, "h3", NULL, NULL), DB_CLAIM_GRANTED);
  CHECK_INT(claim(b, "h3", NULL, NULL), DB_CLAIM_HELD);
  CHECK_INT(db_run_finish(a, "done", &err), RT_OK);
  CHECK_INT(claim(b, "h3", NULL, NULL), DB_CLAIM_GRANTED);
  db_run_finish(b, "done", &err);
  db_run_free(a);
  db_run_free(b);
}

/* A child process begins a run, claims H, then dies with SIGKILL (or _exit when kill is 0). */
static long long child_claims_and_dies(const char *hash, int sigkill) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    rt_error err = {0};
    db *d = NULL;
    if (db_open(path, DB_CREATE, &d, &err)) _exit(1);
    db_run *r = begin(d, &err);
    candidate_result c = result("stored-by-child", 2.0);
    if (db_run_store(r, &c, NULL, &err)) _exit(1);
    int state = -1;
    if (db_run_claim(r, "gemm_mma", "X", hash, &state, NULL, NULL, &err) ||
        state != DB_CLAIM_GRANTED)
      _exit(1);
    long long id = db_run_id(r);
    if (write(fds[1], &id, sizeof id) != (ssize_t)sizeof id) _exit(1);
    if (sigkill) pause(); /* killed here, in the middle of its run */
    _exit(0);             /* or it ends without finishing its run */
  }
  close(fds[1]);
  long long id = 0;
  CHECK(read(fds[0], &id, sizeof id) == (ssize_t)sizeof id);
  close(fds[0]);
  if (sigkill) kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  return id;
}

static void test_dead_run_expires(db *d) {
  rt_error err = {0};
  long long dead = child_claims_and_dies("h-dead", 1);
  CHECK(dead > 0);
  CHECK_STR(run_status(d, dead), "running");
  db_run *b = begin(d, &err);
  /* the claim of the killed run has expired */
  int state = -1;
  CHECK_INT(db_run_claim(b, "gemm_mma", "X", "h-dead", &state, NULL, NULL, &err), RT_OK);
  CHECK_INT(state, DB_CLAIM_GRANTED);
  CHECK_STR(run_status(d, dead), "interrupted");
  /* its committed result is kept */
  candidate_result got;
  CHECK_INT(db_run_claim(b, "gemm_mma", "X", "stored-by-child", &state, &got, NULL, &err), RT_OK);
  CHECK_INT(state, DB_CLAIM_DONE);
  db_run_finish(b, "done", &err);
  db_run_free(b);

  /* a run that ended without finishing is marked interrupted by the next run that begins */
  long long gone = child_claims_and_dies("h-gone", 0);
  CHECK_STR(run_status(d, gone), "running");
  db_run *c = begin(d, &err);
  CHECK_STR(run_status(d, gone), "interrupted");
  db_run_finish(c, "done", &err);
  db_run_free(c);
}

static void test_other_machine_lease(db *d) {
  rt_error err = {0};
  db_run *a = begin(d, &err), *b = begin(d, &err);
  CHECK_INT(claim(a, "h-far", NULL, NULL), DB_CLAIM_GRANTED);
  char sql[256];
  snprintf(
      sql, sizeof sql,
      "UPDATE run_owners SET host='elsewhere', beat_at=strftime('%%s','now') WHERE run_id=%lld",
      db_run_id(a));
  tamper(sql);
  CHECK_INT(claim(b, "h-far", NULL, NULL), DB_CLAIM_HELD); /* heard from just now */
  snprintf(sql, sizeof sql,
           "UPDATE run_owners SET beat_at=strftime('%%s','now')-%d WHERE run_id=%lld",
           DB_CLAIM_LEASE_S + 5, db_run_id(a));
  tamper(sql);
  CHECK_INT(claim(b, "h-far", NULL, NULL), DB_CLAIM_GRANTED); /* silent for longer than the lease */
  db_run_finish(b, "done", &err);
  db_run_free(a);
  db_run_free(b);
}

TEST_CASE(claims) {
  srand((unsigned)getpid());
  fx_tmpname(path, sizeof path, "claims");
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  if (!d) return;
  test_held_then_done(d);
  test_dead_run_expires(d);
  test_other_machine_lease(d);
  char report[4096];
  int problems = -1;
  CHECK_INT(db_check(d, report, sizeof report, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  db_close(d);
  fx_remove(path);
}

TEST_LIST(TEST_ENTRY(claims))
