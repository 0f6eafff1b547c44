/* bench_job_status.c — `job status` on large jobs: for each size (default 20,000 and 100,000
 * problems) a job file of that many GEMM problems on the model device and a database holding,
 * for each problem, a tuning run, a result and its winner (made in bulk with SQL from one
 * problem stored through the database API); then the times of loading the job file, of
 * job_status() (the states of every problem, read in one pass over the runs and winners) and of
 * `rooftune job status --json` end to end, and the time per problem, which stays flat when the
 * work is linear.  Each size runs twice: the problems' target a family ("gemm"), then a template
 * ("gemm_mma", whose manifest the job file's loader finds once, not once per problem).  Last, the
 * CPU seconds of job_status() against no database ("no-db"): every problem without a winner,
 * so each one's space is checked (whether its target has a valid configuration at all).
 *
 *     bench_job_status [N ...]        prints figures; exits 1 when a property (not a time) fails */
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "tests/unit/db_fixture.h"
#include "job/job.h"
#include "job/run.h"

/* CPU seconds of this process (user + system): the host is shared, so its wall time is not
 * all ours. */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Problem i's shape: distinct for every i < 10^8. */
static void shape_of(int i, char *buf, size_t size) {
  snprintf(buf, size, "%dx%dx64", 16 + i % 10000, 16 + i / 10000);
}

static void write_job(const char *path, const char *dbp, int n, const char *target) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fprintf(
      f,
      "{\"rooftune_job\": 1, \"name\": \"big\", \"database\": \"%s\", \"device\": \"model:h200\",\n"
      " \"recheck\": false, \"fresh\": {\"template\": false}, \"defaults\": {\"dtype\": \"f16\", "
      "\"budget\": 2},\n"
      " \"problems\": [\n",
      dbp);
  for (int i = 0; i < n; i++) {
    char s[64];
    shape_of(i, s, sizeof s);
    fprintf(f, "  {\"target\": \"%s\", \"shape\": \"%s\"}%s\n", target, s, i + 1 < n ? "," : "");
  }
  fprintf(f, "]}\n");
  fclose(f);
}

static void sql(sqlite3 *h, const char *text) {
  char *msg = NULL;
  if (sqlite3_exec(h, text, NULL, NULL, &msg) != SQLITE_OK) {
    fprintf(stderr, "bench_job_status: %s: %s\n", text, msg);
    exit(1);
  }
}

/* A database with a run, a result and a winner for each of n problems. */
static void make_db(const char *path, int n) {
  unlink(path);
  rt_error err = {0};
  db *d = NULL;
  if (db_open(path, DB_CREATE, &d, &err)) {
    fprintf(stderr, "bench_job_status: %s\n", err.text);
    exit(1);
  }
  problem p = fx_gemm(16, 16, 64, "f16");
  snprintf(p.layout, sizeof p.layout, "nn"); /* as the gemm family writes it */
  problem_add_dim(&p, "BATCH", 1);
  db_run_spec spec = fx_spec(p, "model:h200");
  db_toolkit_string(spec.prov.toolkit, sizeof spec.prov.toolkit, &err);
  snprintf(spec.command, sizeof spec.command, "rooftune tune gemm");
  db_run *r = NULL;
  long long id = 0;
  candidate_result c = fx_result("gemm_mma", 32, 32, 0.01);
  c.timing = TIMING_PREDICTED;
  db_winner w = fx_winner("k", "cubin", 5);
  if (db_run_begin(d, &spec, &r, &err) || db_run_template(r, "gemm_mma", "gemm", "s", "m", &err) ||
      db_run_store(r, &c, &id, &err) || db_run_set_winner(r, id, &w, NULL, &err) ||
      db_run_finish(r, "done", &err)) {
    fprintf(stderr, "bench_job_status: %s\n", err.text);
    exit(1);
  }
  db_run_free(r);
  db_close(d);
  /* problems 2..n, each with a copy of problem 1's run, result and winner */
  sqlite3 *h = NULL;
  sqlite3_open(path, &h);
  char q[2048];
  sql(h, "BEGIN");
  snprintf(q, sizeof q,
           "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < %d) "
           "INSERT INTO problems(family, shape, dtype, layout, dims, args) SELECT 'gemm', "
           "(16 + i %% 10000) || 'x' || (16 + i / 10000) || 'x64', 'f16', layout, "
           "'M=' || (16 + i %% 10000) || ',N=' || (16 + i / 10000) || ',K=64,BATCH=1', '' FROM k, "
           "problems WHERE "
           "problems.id = 1",
           n - 1);
  sql(h, q);
  sql(h,
      "INSERT INTO runs(problem_id, device_id, toolkit, arch, strategy, seed, budget, "
      "rooftune_version, command, "
      "started_at, finished_at, status) SELECT p.id, r.device_id, r.toolkit, r.arch, r.strategy, "
      "r.seed, r.budget, "
      "r.rooftune_version, r.command, r.started_at, r.finished_at, r.status FROM problems p, runs "
      "r WHERE r.id = 1 "
      "AND p.id > 1");
  sql(h,
      "INSERT INTO results(run_id, problem_id, device_id, template_id, toolkit, config, status, "
      "timing, time_ms, "
      "flops, created_at) SELECT runs.id, runs.problem_id, r.device_id, r.template_id, r.toolkit, "
      "r.config, r.status, "
      "r.timing, r.time_ms, r.flops, r.created_at FROM runs, results r WHERE r.id = 1 AND runs.id "
      "> 1");
  sql(h,
      "INSERT INTO winners(problem_id, device_id, template_id, toolkit, result_id, entry, arch, "
      "updated_at) "
      "SELECT res.problem_id, w.device_id, w.template_id, w.toolkit, res.id, w.entry, w.arch, "
      "w.updated_at "
      "FROM results res, winners w WHERE w.id = 1 AND res.id > 1");
  sql(h, "COMMIT");
  sqlite3_close(h);
}

int main(int argc, char **argv) {
  int sizes[8] = {20000, 100000}, nsizes = 2;
  if (argc > 1) {
    nsizes = 0;
    for (int i = 1; i < argc && nsizes < 8; i++) sizes[nsizes++] = atoi(argv[i]);
  }
  char dir[] = "/tmp/bench-job-status-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  const char *bin = getenv("ROOFTUNE_BIN");
  int bad = 0;
  printf("job status on the model device, one run, result and winner per problem (%s)\n", dir);
  printf("%10s %10s %10s %12s %12s %10s %14s %12s %14s\n", "problems", "target", "load s",
         "status s", "us/problem", "cpu s", "command s", "fresh", "no-db cpu s");
  for (int s = 0; s < 2 * nsizes; s++) {
    int n = sizes[s / 2];
    const char *target = s % 2 ? "gemm_mma" : "gemm";
    char jp[300], dbp[300];
    snprintf(jp, sizeof jp, "%s/big-%d.json", dir, n);
    snprintf(dbp, sizeof dbp, "%s/big-%d.db", dir, n);
    write_job(jp, dbp, n, target);
    make_db(dbp, n);
    rt_error err = {0};
    job *j = NULL;
    double t0 = now_s(), c0 = cpu_s();
    if (job_load(jp, &j, &err)) {
      fprintf(stderr, "bench_job_status: %s: %s\n", jp, err.text);
      return 1;
    }
    double t_load = now_s() - t0;
    json_t *st = NULL;
    t0 = now_s();
    if (job_status(j, (job_shard){0, 1}, NULL, NULL, &st, &err)) {
      fprintf(stderr, "bench_job_status: %s\n", err.text);
      return 1;
    }
    double t_status = now_s() - t0, t_cpu = cpu_s() - c0;
    json_t *ps = json_object_get(st, "problems");
    size_t fresh = 0;
    for (size_t i = 0; i < json_array_size(ps); i++)
      fresh += !strcmp(json_string_value(json_object_get(json_array_get(ps, i), "state")), "fresh");
    if (json_array_size(ps) != (size_t)n || fresh != (size_t)n) {
      printf("  PROPERTY FAILED: %zu problems, %zu fresh, expected %d of each\n",
             json_array_size(ps), fresh, n);
      bad = 1;
    }
    json_decref(st);
    /* the same job against no database: nothing stored, so every problem's space is checked
     * (once per distinct target, shape and dtype; each check stops at a first configuration) */
    char nodb[320];
    snprintf(nodb, sizeof nodb, "%s/none.db", dir);
    c0 = cpu_s();
    if (job_status(j, (job_shard){0, 1}, NULL, nodb, &st, &err)) {
      fprintf(stderr, "bench_job_status: %s\n", err.text);
      return 1;
    }
    double t_empty_cpu = cpu_s() - c0;
    ps = json_object_get(st, "problems");
    size_t never = 0;
    for (size_t i = 0; i < json_array_size(ps); i++)
      never += !strcmp(json_string_value(json_object_get(json_array_get(ps, i), "state")),
                       "never tuned");
    if (never != (size_t)n) {
      printf("  PROPERTY FAILED: %zu of %d never tuned without a database\n", never, n);
      bad = 1;
    }
    json_decref(st);
    job_free(j);
    double t_cmd = -1;
    if (bin) {
      char cmd[800];
      snprintf(cmd, sizeof cmd, "'%s' job status '%s' --json >/dev/null", bin, jp);
      t0 = now_s();
      if (system(cmd) != 0) bad = 1;
      t_cmd = now_s() - t0;
    }
    printf("%10d %10s %10.2f %12.2f %12.1f %10.2f %14.2f %12zu %14.2f\n", n, target, t_load,
           t_status, 1e6 * (t_load + t_status) / n, t_cpu, t_cmd, fresh, t_empty_cpu);
    if (!getenv("KEEP")) unlink(jp);
    if (!getenv("KEEP")) unlink(dbp);
  }
  if (!getenv("KEEP")) rmdir(dir);
  if (!bin) printf("(set ROOFTUNE_BIN to time the command too)\n");
  return bad;
}
