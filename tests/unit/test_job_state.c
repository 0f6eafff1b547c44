/* test_job_state.c — the fresh rules on a database built here: never tuned, fresh, interrupted
 * (with what is left of the round), failed (a failed run; runs without a success), stale by
 * toolkit, by driver and by age, the rules turned off, a split problem counting only its
 * shard's runs; and recheck verdicts (same, SLOWER, FAILS) from recheck runs. */
/* stages: job */
#include <sqlite3.h>
#include <unistd.h>

#include "db_fixture.h"
#include "test.h"
#include "job/job.h"
#include "job/state.h"

static char toolkit[96];

/* The problem as the gemm family parses "MxNxK" (layout nn). */
static problem gemm_nn(long long m) {
  problem p = fx_gemm(m, 64, 64, "f32");
  snprintf(p.layout, sizeof p.layout, "nn");
  return p;
}

/* A run of problem MxNxK f32 on DEVICE (driver when > 0) with COMMAND and STATUS, storing
 * NOK successful results (1.0, 1.1, ... ms) and NFAIL failed ones; the best becomes the winner
 * when win.  Returns the run id. */
static long long add_run(db *d, long long m, const char *command, const char *status, int nok,
                         int nfail, int win, const char *tk, int driver, double base_ms) {
  db_run_spec spec = fx_spec(gemm_nn(m), "model:h200");
  snprintf(spec.prov.toolkit, sizeof spec.prov.toolkit, "%s", tk ? tk : toolkit);
  spec.prov.device.driver_version = driver;
  snprintf(spec.command, sizeof spec.command, "%s", command);
  db_run *r = NULL;
  rt_error err = {0};
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  if (!r) return 0;
  CHECK_INT(db_run_template(r, "tmpl_x", "gemm", "src", "man", &err), RT_OK);
  long long best = 0;
  for (int i = 0; i < nok + nfail; i++) {
    candidate_result c = fx_result("tmpl_x", 16 << (i % 4), 16 << (i / 4), base_ms + 0.1 * i);
    c.timing = TIMING_PREDICTED;
    if (i >= nok) {
      c.status = RT_ERR_COMPILE;
      c.time_ms = NAN;
    }
    long long id = 0;
    CHECK_INT(db_run_store(r, &c, &id, &err), RT_OK);
    if (i == 0) best = id;
  }
  if (win && nok) {
    db_winner w = fx_winner("k", "cubin", 5);
    CHECK_INT(db_run_set_winner(r, best, &w, NULL, &err), RT_OK);
  }
  if (strcmp(status, "running")) CHECK_INT(db_run_finish(r, status, &err), RT_OK);
  long long id = db_run_id(r);
  db_run_free(r);
  return id;
}

/* A recheck of the winner of MxNxK: one result of config BLOCK_M=16,BLOCK_N=16 at ms (NAN:
 * failed). */
static void add_recheck(db *d, long long m, double ms) {
  db_run_spec spec = fx_spec(gemm_nn(m), "model:h200");
  snprintf(spec.prov.toolkit, sizeof spec.prov.toolkit, "%s", toolkit);
  snprintf(spec.command, sizeof spec.command,
           "rooftune recheck (tmpl_x %lldx64x64 f32 BLOCK_M=16,BLOCK_N=16)", m);
  db_run *r = NULL;
  rt_error err = {0};
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  if (!r) return;
  CHECK_INT(db_run_template(r, "tmpl_x", "gemm", "src", "man", &err), RT_OK);
  candidate_result c = fx_result("tmpl_x", 16, 16, ms);
  c.timing = TIMING_PREDICTED;
  c.spread = 0;
  if (isnan(ms)) c.status = RT_ERR_WRONG_RESULT;
  CHECK_INT(db_run_store(r, &c, NULL, &err), RT_OK);
  CHECK_INT(db_run_finish(r, "done", &err), RT_OK);
  db_run_free(r);
}

static void sql(const char *path, const char *q) {
  sqlite3 *h = NULL;
  CHECK_INT(sqlite3_open(path, &h), SQLITE_OK);
  char *msg = NULL;
  CHECK_INT(sqlite3_exec(h, q, NULL, NULL, &msg), SQLITE_OK);
  if (msg) fprintf(stderr, "  %s\n", msg);
  sqlite3_free(msg);
  sqlite3_close(h);
}

/* The fixture every case reads: a job of nine problems, one state each, and its database. */
static char dir[] = "/tmp/rooftune-job-state-XXXXXX";
static char jp[256], dbp[256];
static job *j;
static const job_shard whole = {0, 1};

static void setup(void) {
  rt_error err = {0};
  CHECK_INT(db_toolkit_string(toolkit, sizeof toolkit, &err), RT_OK);
  CHECK(mkdtemp(dir) != NULL);
  snprintf(jp, sizeof jp, "%s/j.json", dir);
  snprintf(dbp, sizeof dbp, "%s/t.db", dir);
  FILE *f = fopen(jp, "w");
  CHECK(f != NULL);
  if (!f) exit(test_done());
  /* problem k is 2^k x 64 x 64 ... (k = 0..8): one state each */
  fprintf(f,
          "{\"rooftune_job\": 1, \"name\": \"st\", \"database\": \"t.db\", \"defaults\": "
          "{\"dtype\": \"f32\", "
          "\"budget\": 8}, \"fresh\": {\"max_age\": \"7d\"}, \"problems\": [\n");
  for (int k = 0; k < 9; k++)
    fprintf(f, "  {\"target\": \"gemm\", \"shape\": \"%dx64x64\"%s}%s\n", 1 << (k + 4),
            k == 7 ? ", \"split\": true" : "", k < 8 ? "," : "");
  fprintf(f, "]}\n");
  fclose(f);
  CHECK_INT(job_load(jp, &j, &err), RT_OK);
  if (!j) {
    fprintf(stderr, "  %s\n", err.text);
    exit(test_done());
  }
  db *d = NULL;
  CHECK_INT(db_open(dbp, DB_CREATE, &d, &err), RT_OK);
  /* 0 (16): never tuned.  1 (32): fresh, with three rechecks.  2 (64): a done round, then one
   * interrupted after 3 of 8.  3 (128): failed.  4 (256): runs, no success.  5 (512): another
   * toolkit.  6 (1024): another driver.  7 (2048, split): shard 1/2's run interrupted, shard
   * 0/2's done.  8 (4096): done, but 8 days ago */
  add_run(d, 32, "rooftune job run j.json [job st shard 0/1]: gemm 32x64x64 f32", "done", 4, 1, 1,
          NULL, 0, 1.0);
  add_run(d, 64, "rooftune tune gemm", "done", 8, 0, 1, NULL, 0, 1.0);
  add_run(d, 64, "rooftune job run j.json [job st shard 0/1]: gemm 64x64x64 f32", "interrupted", 2,
          1, 1, NULL, 0, 2.0);
  add_run(d, 128, "rooftune tune gemm", "failed", 0, 0, 0, NULL, 0, 1.0);
  add_run(d, 256, "rooftune tune gemm", "done", 0, 3, 0, NULL, 0, 1.0);
  add_run(d, 512, "rooftune tune gemm", "done", 3, 0, 1, "cuda 12.4, nvrtc 12.4, cublaslt 120400",
          0, 1.0);
  add_run(d, 1024, "rooftune tune gemm", "done", 3, 0, 1, NULL, 12040, 1.0);
  add_run(d, 2048, "rooftune job run j.json [job st shard 0/2]: gemm", "done", 4, 0, 1, NULL, 0,
          1.0);
  add_run(d, 2048, "rooftune job run j.json [job st shard 1/2]: gemm", "running", 1, 0, 0, NULL, 0,
          1.0);
  add_run(d, 4096, "rooftune tune gemm", "done", 3, 0, 1, NULL, 0, 1.0);
  db_close(d);
  d = NULL;
  sql(dbp,
      "UPDATE runs SET started_at='2020-01-01T00:00:00Z', finished_at='2020-01-01T01:00:00Z' WHERE "
      "problem_id="
      "(SELECT id FROM problems WHERE shape='4096x64x64');"
      "UPDATE winners SET updated_at='2020-01-01T01:00:00Z' WHERE problem_id=(SELECT id FROM "
      "problems WHERE "
      "shape='4096x64x64')");
}

static void teardown(void) {
  job_free(j);
  fx_remove(dbp);
  unlink(jp);
  rmdir(dir);
}

/* The database (read-only, or to add rechecks to) and the job's view of it. */
static void open_env(db **d, int mode, job_env *env) {
  rt_error err = {0};
  CHECK_INT(db_open(dbp, mode, d, &err), RT_OK);
  CHECK_INT(job_env_open(env, "model:h200", *d, &err), RT_OK);
}

static void close_env(db *d, job_env *env) {
  job_env_free(env);
  db_close(d);
}

TEST_CASE(states) {
  db *d = NULL;
  job_env env;
  open_env(&d, DB_READONLY, &env);
  job_state st[9];
  for (int k = 0; k < 9; k++) job_state_of(j, (size_t)k, whole, &env, &st[k]);
  CHECK_INT(st[0].kind, JOB_STATE_NEVER);
  CHECK(st[0].best == NULL);
  CHECK_INT(st[0].left, 8);
  CHECK_INT(st[1].kind, JOB_STATE_FRESH);
  CHECK(st[1].best && fabs(st[1].best->time_ms - 1.0) < 1e-12);
  CHECK(st[1].age_s >= 0 && st[1].age_s < 600);
  CHECK_INT(st[2].kind, JOB_STATE_INTERRUPTED);
  CHECK_INT(st[2].left, 5);
  CHECK_CONTAINS(st[2].reason, "after 3 of 8");
  CHECK_INT(st[3].kind, JOB_STATE_FAILED);
  CHECK_CONTAINS(st[3].reason, "failed");
  CHECK_INT(st[4].kind, JOB_STATE_FAILED);
  CHECK_CONTAINS(st[4].reason, "no candidate has succeeded");
  CHECK_INT(st[5].kind, JOB_STATE_STALE);
  CHECK_CONTAINS(st[5].reason, "another toolkit (cuda 12.4");
  CHECK_INT(st[6].kind, JOB_STATE_STALE);
  CHECK_CONTAINS(st[6].reason, "driver 12040 (now 0)");
  CHECK_INT(st[7].kind,
            JOB_STATE_INTERRUPTED); /* unsharded, every run counts: the latest is shard 1's */
  CHECK_INT(st[7].left, 7);
  CHECK_INT(st[8].kind, JOB_STATE_STALE);
  CHECK_CONTAINS(st[8].reason, "(max_age 7.0 d)");
  CHECK(st[8].age_s > 300 * 86400.0);
  close_env(d, &env);
}

TEST_CASE(shards) {
  db *d = NULL;
  job_env env;
  open_env(&d, DB_READONLY, &env);
  /* the split problem under two shards: each counts its own runs, and has half the budget */
  job_state s0, s1;
  job_state_of(j, 7, (job_shard){0, 2}, &env, &s0);
  job_state_of(j, 7, (job_shard){1, 2}, &env, &s1);
  CHECK_INT(s0.kind, JOB_STATE_FRESH);
  CHECK_INT(s0.budget, 4);
  CHECK_INT(s1.kind, JOB_STATE_INTERRUPTED);
  CHECK_INT(s1.left, 3);
  close_env(d, &env);
}

TEST_CASE(rules_off) {
  db *d = NULL;
  job_env env;
  open_env(&d, DB_READONLY, &env);
  /* the rules can be turned off */
  j->fresh.toolkit = 0;
  j->fresh.driver = 0;
  j->fresh.max_age_s = 0;
  job_state t5, t6, t8;
  job_state_of(j, 5, whole, &env, &t5);
  job_state_of(j, 6, whole, &env, &t6);
  job_state_of(j, 8, whole, &env, &t8);
  CHECK_INT(t5.kind, JOB_STATE_FRESH);
  CHECK_INT(t6.kind, JOB_STATE_FRESH);
  CHECK_INT(t8.kind, JOB_STATE_FRESH);
  j->fresh.toolkit = j->fresh.driver = 1;
  j->fresh.max_age_s = 7 * 86400.0;
  const job_winner *w[4];
  CHECK_INT(job_current_winners(j, 1, &env, w, 4), 1);
  CHECK_INT(job_current_winners(j, 5, &env, w, 4), 0);
  close_env(d, &env);
}

/* rechecks of problem 1's winner (1.0 ms): same, then 50 % slower, then broken; then the run
 * sets, the rechecks' among them */
TEST_CASE(rechecks_and_runs) {
  db *d = NULL;
  job_env env;
  rt_error err = {0};
  const job_winner *w[4];
  job_state st[9];
  open_env(&d, DB_READONLY, &env);
  recheck_verdict v;
  if (job_current_winners(j, 1, &env, w, 4) != 1) {
    CHECK(!"problem 1 has its winner");
    close_env(d, &env);
    return;
  }
  CHECK(job_env_last_recheck(&env, w[0], 0.05, &v) == NULL);
  db_close(d);
  job_env_free(&env);
  CHECK_INT(db_open(dbp, DB_CREATE, &d, &err), RT_OK);
  add_recheck(d, 32, 1.01);
  CHECK_INT(job_env_open(&env, "model:h200", d, &err), RT_OK);
  job_current_winners(j, 1, &env, w, 4);
  const job_run_rec *r = job_env_last_recheck(&env, w[0], 0.05, &v);
  CHECK(r != NULL);
  CHECK_INT(v, RECHECK_SAME);
  job_env_free(&env);
  add_recheck(d, 32, 1.5);
  CHECK_INT(job_env_open(&env, "model:h200", d, &err), RT_OK);
  job_current_winners(j, 1, &env, w, 4);
  job_env_last_recheck(&env, w[0], 0.05, &v);
  CHECK_INT(v, RECHECK_SLOWER);
  CHECK_INT(job_env_last_recheck(&env, w[0], 0.6, &v) != NULL, 1);
  CHECK_INT(v, RECHECK_SAME); /* within a 60 % tolerance */
  job_env_free(&env);
  add_recheck(d, 32, NAN);
  CHECK_INT(job_env_open(&env, "model:h200", d, &err), RT_OK);
  job_current_winners(j, 1, &env, w, 4);
  job_env_last_recheck(&env, w[0], 0.05, &v);
  CHECK_INT(v, RECHECK_FAILS);
  /* rechecks are not tuning runs: problem 1 stays fresh */
  job_state_of(j, 1, whole, &env, &st[1]);
  CHECK_INT(st[1].kind, JOB_STATE_FRESH);
  /* a run set interrupted by id, and one that does not exist */
  db_run_info *runs = NULL;
  size_t nruns = 0;
  CHECK_INT(db_runs(d, &runs, &nruns, &err), RT_OK);
  CHECK(nruns >= 13);
  long long running = 0;
  for (size_t i = 0; i < nruns; i++)
    if (!strcmp(runs[i].status, "running")) running = runs[i].id;
  CHECK(running > 0);
  CHECK_STR(runs[0].shape, "4096x64x64"); /* by start time: that one was moved to 2020 */
  const db_run_info *r32 = NULL;
  for (size_t i = 0; i < nruns; i++)
    if (!strcmp(runs[i].shape, "32x64x64") && !r32) r32 = &runs[i];
  CHECK(r32 != NULL);
  if (r32) {
    CHECK_INT(r32->results, 5);
    CHECK_INT(r32->ok, 4);
    CHECK_NEAR(r32->best_ms, 1.0, 1e-12);
    CHECK_STR(r32->best_template, "tmpl_x");
    CHECK_STR(r32->status, "done");
    CHECK_STR(r32->last_status, "ERR_COMPILE");
  }
  free(runs);
  CHECK_INT(db_run_set_status(d, running, "interrupted", &err), RT_OK);
  CHECK_INT(db_run_set_status(d, 999999, "interrupted", &err), RT_ERR_NOT_FOUND);
  CHECK_INT(db_run_set_status(d, running, "paused", &err), RT_ERR_INVALID);
  CHECK_INT(db_runs(d, &runs, &nruns, &err), RT_OK);
  for (size_t i = 0; i < nruns; i++)
    if (runs[i].id == running) {
      CHECK_STR(runs[i].status, "interrupted");
      CHECK(runs[i].finished_at[0] != 0);
    }
  free(runs);
  close_env(d, &env);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(states), TEST_ENTRY(shards), TEST_ENTRY(rules_off),
                  TEST_ENTRY(rechecks_and_runs))
