/* bench_job.c — the targets of jobs and reports, on the model device (no GPU needed):
 *   1. a job of N small GEMM problems (default 100), tuned once, then run again unchanged:
 *      the rerun must evaluate 0 candidates; its wall time (target: < 2 s for 100 problems);
 *   2. the same job as 4 shards (each into its own database, one after another here; on 4
 *      GPUs or nodes they run at once): the problems each shard did, that the quarters are
 *      disjoint and cover the job, and that the merged winners equal the 1-shard run's; times;
 *   3. the report of a database of 10,000 candidates (100 problems x 100): its time (target
 *      < 2 s) and size (target < 5 MB).
 *
 *     bench_job [PROBLEMS]        prints figures; exits 1 when a property (not a time) fails
 *
 * The tuning itself compiles with NVRTC through the cubin cache ($ROOFTUNE_CACHE_DIR): the
 * first run of a cold cache takes minutes on two cores; the figures that matter are of the
 * runs after it. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "tests/unit/db_fixture.h"
#include "job/job.h"
#include "job/report.h"
#include "job/run.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bad = 0;
#define EXPECT(cond, ...)                        \
  do {                                           \
    if (!(cond)) {                               \
      printf("  PROPERTY FAILED: " __VA_ARGS__); \
      printf("\n");                              \
      bad = 1;                                   \
    }                                            \
  } while (0)

static void write_job(const char *path, const char *name, int n, const char *extra) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fprintf(f,
          "{\"rooftune_job\": 1, \"name\": \"%s\", \"database\": \"%s.db\", \"device\": "
          "\"model:h200\", %s\n"
          " \"recheck\": false, \"defaults\": {\"dtype\": \"f32\", \"budget\": 2, \"seed\": 1},\n "
          "\"problems\": [\n",
          name, name, extra);
  for (int i = 0; i < n; i++) /* distinct small shapes: M and N from 16 to 512, K 64 */
    fprintf(f, "  {\"target\": \"gemm\", \"shape\": \"%dx%dx64\"}%s\n", 16 * (1 + i % 10),
            32 * (1 + i / 10), i + 1 < n ? "," : "");
  fprintf(f, "]}\n");
  fclose(f);
}

static double run(const char *path, job_shard s, job_outcome *out) {
  job *j = NULL;
  rt_error err = {0};
  if (job_load(path, &j, &err)) {
    fprintf(stderr, "bench_job: %s: %s (%s line %d)\n", path, err.text, err.field, err.line);
    exit(1);
  }
  job_run_options o;
  memset(&o, 0, sizeof o);
  o.shard = s;
  double t0 = now_s();
  if (job_run(j, &o, out, &err)) {
    fprintf(stderr, "bench_job: %s\n", err.text);
    exit(1);
  }
  double t = now_s() - t0;
  job_free(j);
  return t;
}

/* "shape|template|config|time" of every winner, sorted, joined by newlines (malloc'ed). */
static char *winners(const char *path) {
  sqlite3 *h = NULL;
  sqlite3_stmt *st = NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = calloc(1, cap);
  if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(
          h,
          "SELECT p.shape || '|' || t.name || '|' || r.config || '|' || r.time_ms FROM winners w "
          "JOIN results r ON r.id=w.result_id JOIN problems p ON p.id=w.problem_id JOIN templates "
          "t "
          "ON t.id=w.template_id ORDER BY 1",
          -1, &st, NULL) != SQLITE_OK) {
    sqlite3_close(h);
    return buf;
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *row = (const char *)sqlite3_column_text(st, 0);
    size_t l = strlen(row) + 2;
    if (n + l >= cap) buf = realloc(buf, cap = 2 * cap + l);
    n += (size_t)snprintf(buf + n, cap - n, "%s\n", row);
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return buf;
}

static void bench_report(const char *dir) {
  char dbp[1200], out[1300];
  snprintf(dbp, sizeof dbp, "%s/report10k.db", dir);
  snprintf(out, sizeof out, "%s/report10k.html", dir);
  fx_remove(dbp);
  db *d = NULL;
  rt_error err = {0};
  if (db_open(dbp, DB_CREATE, &d, &err)) {
    fprintf(stderr, "bench_job: %s\n", err.text);
    exit(1);
  }
  candidate_result *rs = calloc(100, sizeof *rs);
  for (int p = 0; p < 100; p++) {
    db_run_spec spec = fx_spec(fx_gemm(64 * (1 + p % 10), 256 * (1 + p / 10), 4096, "bf16"),
                               p % 2 ? "NVIDIA H200" : "model:h200");
    db_run *r = NULL;
    if (db_run_begin(d, &spec, &r, &err) ||
        db_run_template(r, "gemm_mma", "gemm", "s", "m", &err)) {
      fprintf(stderr, "bench_job: %s\n", err.text);
      exit(1);
    }
    for (int c = 0; c < 100; c++) {
      rs[c] = fx_result("gemm_mma", 16 << (c % 5), 16 << (c / 5 % 5), 0.05 + 0.001 * c);
      snprintf(rs[c].config, sizeof rs[c].config,
               "BLOCK_M=%d,BLOCK_N=%d,BLOCK_K=%d,WARPS_M=%d,WARPS_N=%d,STAGES=%d,SPLIT_K=%d,"
               "SWIZZLE=%d,B_COL=0",
               16 << (c % 5), 16 << (c / 5 % 5), 32 << (c / 25 % 2), 1 + c % 2, 1 + c / 2 % 4,
               2 + c / 50, 1, 8);
      rs[c].diag.intensity = 50.0 + 7 * c;
      rs[c].diag.achieved_flops = 1e14 * (1 + 0.05 * c);
      if (p % 2 == 0) rs[c].timing = TIMING_PREDICTED;
      if (c % 17 == 3) {
        rs[c].status = RT_ERR_COMPILE;
        rs[c].time_ms = NAN;
      }
    }
    long long ids[100];
    if (db_run_store_many(r, rs, 100, ids, &err)) {
      fprintf(stderr, "bench_job: %s\n", err.text);
      exit(1);
    }
    db_winner w = fx_winner("k", "cubin", 5);
    db_run_set_winner(r, ids[0], &w, NULL, &err);
    db_run_finish(r, "done", &err);
    db_run_free(r);
  }
  free(rs);
  report_options o = {NULL, "bench", 0, 0};
  report_stats st;
  double t0 = now_s();
  rt_status rc = report_write(d, &o, out, &st, &err);
  double t = now_s() - t0;
  db_close(d);
  EXPECT(rc == RT_OK, "report: %s", err.text);
  printf(
      "3. report of %zu candidates (%zu problem sections, %zu points plotted, %zu failed): %.3f s, "
      "%.2f MB "
      "(targets < 2 s, < 5 MB)\n",
      st.candidates, st.sections, st.points, st.failed, t, st.bytes / 1e6);
  EXPECT(st.candidates == 10000, "%zu candidates, not 10000", st.candidates);
  unlink(out);
  fx_remove(dbp);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  if (n < 4 || n > 100) {
    fprintf(stderr, "usage: bench_job [PROBLEMS, 4 to 100]\n");
    return 2;
  }
  char dir[] = "/tmp/rooftune-bench-job-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  printf("bench_job: %d problems on model:h200 (times are the host's: %ld cores), in %s\n", n,
         sysconf(_SC_NPROCESSORS_ONLN), dir);
  char a[1200], b[1200];
  snprintf(a, sizeof a, "%s/one.json", dir);
  snprintf(b, sizeof b, "%s/four.json", dir);
  write_job(a, "one", n, "");
  write_job(b, "four", n, "\"shard_database\": \"shards/{name}-{i}-of-{n}.db\",");
  job_outcome o1, o2;
  double t1 = run(a, (job_shard){0, 1}, &o1);
  printf(
      "1. first run: %zu problems tuned, %zu evaluated, %zu failed in %.2f s (compiles through the "
      "cubin cache)\n",
      o1.tuned, o1.evaluated, o1.failed, t1);
  double t2 = run(a, (job_shard){0, 1}, &o2);
  printf(
      "   rerun of the unchanged job: %zu evaluated, %zu fresh, in %.3f s (target: 0 evaluated, < "
      "2 s for 100)\n",
      o2.evaluated, o2.fresh, t2);
  EXPECT(o2.evaluated == 0 && o2.fresh == (size_t)n, "the rerun evaluated %zu and found %zu fresh",
         o2.evaluated, o2.fresh);
  job_outcome_free(&o1);
  job_outcome_free(&o2);

  /* 4 shards of the same job into databases of their own, merged */
  double ts[4], tmax = 0, tsum = 0;
  size_t owned[4], total = 0;
  for (int i = 0; i < 4; i++) {
    job_outcome o;
    ts[i] = run(b, (job_shard){i, 4}, &o);
    owned[i] = json_array_size(json_object_get(o.summary, "problems"));
    total += owned[i];
    tmax = fmax(tmax, ts[i]);
    tsum += ts[i];
    EXPECT(o.failed == 0, "shard %d: %zu failed", i, o.failed);
    job_outcome_free(&o);
  }
  /* disjoint: every problem in exactly one shard's summary */
  char seen[100] = {0};
  int overlap = 0;
  for (int i = 0; i < 4; i++) {
    char sp[1300];
    snprintf(sp, sizeof sp, "%s/four-out/summary-shard-%d-of-4.json", dir, i);
    json_t *s = json_load_file(sp, 0, NULL);
    size_t k;
    json_t *p;
    json_array_foreach(json_object_get(s, "problems"), k, p) {
      int m = 0, nn = 0;
      sscanf(json_string_value(json_object_get(p, "shape")), "%dx%dx", &m, &nn);
      int idx = (nn / 32 - 1) * 10 + (m / 16 - 1);
      if (idx >= 0 && idx < 100) overlap += seen[idx]++;
    }
    json_decref(s);
  }
  char mdb[1300];
  snprintf(mdb, sizeof mdb, "%s/four.db", dir);
  char *shards[4];
  for (int i = 0; i < 4; i++) {
    shards[i] = malloc(1300);
    snprintf(shards[i], 1300, "%s/shards/four-%d-of-4.db", dir, i);
  }
  job_merge_stats ms;
  rt_error err = {0};
  double tm0 = now_s();
  rt_status mrc = job_merge(mdb, shards, 4, &ms, &err);
  double tm = now_s() - tm0;
  EXPECT(mrc == RT_OK, "merge: %s", err.text);
  char one_db[1300];
  snprintf(one_db, sizeof one_db, "%s/one.db", dir);
  char *w1 = winners(one_db), *w4 = winners(mdb);
  int same = !strcmp(w1, w4);
  size_t nw = 0;
  for (const char *c = w1; *c; c++) nw += *c == '\n';
  printf(
      "2. 4 shards: %zu + %zu + %zu + %zu problems (%s, %s), %.2f / %.2f / %.2f / %.2f s (max "
      "%.2f, sum %.2f; "
      "1 shard, the first run: %.2f s); merged in %.3f s (%lld results); winners %s the 1-shard "
      "run's (%zu)\n",
      owned[0], owned[1], owned[2], owned[3],
      total == (size_t)n ? "covering the job" : "NOT covering the job",
      overlap ? "OVERLAPPING" : "disjoint", ts[0], ts[1], ts[2], ts[3], tmax, tsum, t1, tm,
      ms.added, same ? "identical to" : "DIFFERENT from", nw);
  EXPECT(total == (size_t)n && !overlap && same, "the shards' quarters or merged winners");
  free(w1);
  free(w4);
  for (int i = 0; i < 4; i++) free(shards[i]);

  bench_report(dir);
  char cmd[1300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench_job: could not remove %s\n", dir);
  return bad;
}
