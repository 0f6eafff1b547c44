/* bench_db.c — the tuning database's costs: storing results (one transaction each, as a tuner
 * does, and batched, as an import does), the resume query, the file size per 10,000 results,
 * and runtime lookup latency through rooftune.h: cold (open + index build + first answer), warm
 * (a repeated query, answered from the cache) and uncached (a new shape: a nearest-shape scan).
 *
 *     bench_db [RESULTS]        default 10000; prints figures, checks nothing */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "runtime/include/rooftune.h"
#include "tests/unit/db_fixture.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* Stores `total` results over problems of 100 configs each, one transaction per result when
 * batch == 0; returns seconds. Every problem gets a winner with a cubin of cubin_bytes. */
static double fill(const char *path, int total, int batch, size_t cubin_bytes, int *problems) {
  rt_error err = {0};
  db *d = NULL;
  if (db_open(path, DB_CREATE, &d, &err)) {
    fprintf(stderr, "bench_db: %s\n", err.text);
    exit(1);
  }
  char toolkit[96];
  db_toolkit_string(toolkit, sizeof toolkit, &err);
  unsigned char *cubin = calloc(1, cubin_bytes ? cubin_bytes : 1);
  for (size_t i = 0; i < cubin_bytes; i++) cubin[i] = (unsigned char)(i * 131 + (i >> 7));
  double t0 = now_s();
  int per = 100, np = (total + per - 1) / per;
  candidate_result *rs = calloc((size_t)per, sizeof *rs);
  long long ids[100];
  for (int p = 0; p < np; p++) {
    long long m = 16 + p, n = 1024LL << (p % 4), k = 512LL << (p / 4 % 4); /* all distinct */
    db_run_spec spec = fx_spec(fx_gemm(m, n, k, p % 2 ? "bf16" : "f16"), "NVIDIA H200");
    snprintf(spec.prov.toolkit, sizeof spec.prov.toolkit, "%s", toolkit);
    db_run *r = NULL;
    if (db_run_begin(d, &spec, &r, &err) ||
        db_run_template(r, "gemm_mma", "gemm", "s", "m", &err)) {
      fprintf(stderr, "bench_db: %s\n", err.text);
      exit(1);
    }
    int count = per < total - p * per ? per : total - p * per;
    for (int c = 0; c < count; c++) {
      rs[c] = fx_result("gemm_mma", 16 << (c % 5), 16 << (c / 5 % 5), 1.0 + c * 0.01);
      snprintf(rs[c].config, sizeof rs[c].config,
               "BLOCK_M=%d,BLOCK_N=%d,BLOCK_K=%d,WARPS_M=%d,WARPS_N=%d,STAGES=%d,SPLIT_K=%d,"
               "SWIZZLE=%d,B_LAYOUT=0",
               32 << (c % 4), 64 << (c / 4 % 3), 32 << (c / 12 % 2), 1 << (c / 24 % 3), 2,
               3 + c % 2, 1, 1 << (c % 2) * 3);
      snprintf(rs[c].diag.sentence, sizeof rs[c].diag.sentence,
               "compute-bound at %d %% of the tensor-core ceiling; grow BLOCK_N", 50 + c % 40);
      if (!batch && db_run_store(r, &rs[c], &ids[c], &err)) {
        fprintf(stderr, "bench_db: %s\n", err.text);
        exit(1);
      }
    }
    if (batch && db_run_store_many(r, rs, (size_t)count, ids, &err)) {
      fprintf(stderr, "bench_db: %s\n", err.text);
      exit(1);
    }
    db_winner w = fx_winner("gemm_mma", cubin, cubin_bytes);
    if (cubin_bytes && db_run_set_winner(r, ids[0], &w, NULL, &err)) {
      fprintf(stderr, "bench_db: %s\n", err.text);
      exit(1);
    }
    db_run_finish(r, "done", &err);
    db_run_free(r);
  }
  double t = now_s() - t0;
  db_close(d);
  free(rs);
  free(cubin);
  *problems = np;
  return t;
}

int main(int argc, char **argv) {
  int total = argc > 1 ? atoi(argv[1]) : 10000;
  if (total < 100) total = 100;
  srand((unsigned)getpid());
  char a[512], b[512];
  fx_tmpname(a, sizeof a, "bench-a");
  fx_tmpname(b, sizeof b, "bench-b");
  int np = 0;
  double t_each = fill(a, total, 0, 0, &np);
  double t_batch = fill(b, total, 1, 0, &np);
  long size_a = file_size(a);
  printf("store, one transaction per result: %8.0f results/s (%.1f us each)\n", total / t_each,
         t_each / total * 1e6);
  printf("store, batched per problem:        %8.0f results/s\n", total / t_batch);
  printf("database size: %.2f MB per 10,000 results (%d results, %d problems, no winners)\n",
         size_a / 1e6 * 10000.0 / total, total, np);
  fx_remove(b);
  double t_cubin = fill(b, total, 1, 64 * 1024, &np);
  (void)t_cubin;
  printf("database size with a 64 KiB cubin per winner: %.2f MB per 10,000 results (%d winners)\n",
         file_size(b) / 1e6 * 10000.0 / total, np);

  /* Resume query. */
  rt_error err = {0};
  db *d = NULL;
  db_open(a, DB_CREATE, &d, &err);
  char toolkit[96];
  db_toolkit_string(toolkit, sizeof toolkit, &err);
  db_run_spec spec = fx_spec(fx_gemm(16, 1024, 512, "f16"), "NVIDIA H200"); /* problem 0 */
  snprintf(spec.prov.toolkit, sizeof spec.prov.toolkit, "%s", toolkit);
  db_run *r = NULL;
  db_run_begin(d, &spec, &r, &err);
  db_run_template(r, "gemm_mma", "gemm", "s", "m", &err);
  int hits = 0, reps = 20000;
  double t0 = now_s();
  for (int i = 0; i < reps; i++) {
    char cfg[256];
    snprintf(cfg, sizeof cfg,
             "BLOCK_M=%d,BLOCK_N=%d,BLOCK_K=%d,WARPS_M=%d,WARPS_N=2,STAGES=%d,"
             "SPLIT_K=1,SWIZZLE=%d,B_LAYOUT=0",
             32 << (i % 4), 64 << (i / 4 % 3), 32 << (i / 12 % 2), 1 << (i / 24 % 3), 3 + i % 2,
             1 << (i % 2) * 3);
    hits += db_run_has_result(r, "gemm_mma", cfg);
  }
  double t_has = (now_s() - t0) / reps;
  printf("resume query db_run_has_result: %.2f us (%d of %d found)\n", t_has * 1e6, hits, reps);
  db_run_free(r);
  db_close(d);

  /* Lookups through the public API, on the file with cubins (winners for every problem). */
  t0 = now_s();
  rooftune_db *rt = NULL;
  if (rooftune_open(b, &rt)) {
    fprintf(stderr, "bench_db: %s\n", rooftune_last_error());
    return 1;
  }
  double t_open = now_s() - t0;
  rooftune_query q = {.family = "gemm", .shape = "16x1024x512", .dtype = "f16", .device = "H200"};
  rooftune_match m;
  t0 = now_s();
  rooftune_lookup(rt, &q, &m);
  double t_first = now_s() - t0;
  printf(
      "lookup cold: open %.0f us + first lookup %.0f us (builds the index of %d winners), "
      "match %s\n",
      t_open * 1e6, t_first * 1e6, np,
      m.match == ROOFTUNE_MATCH_EXACT ? "exact"
      : m.match                       ? "nearest"
                                      : "none");
  reps = 200000;
  t0 = now_s();
  for (int i = 0; i < reps; i++) rooftune_lookup(rt, &q, &m);
  printf("lookup warm (same query again):               %.3f us\n", (now_s() - t0) / reps * 1e6);
  reps = 2000;
  t0 = now_s();
  for (int i = 0; i < reps; i++) {
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%d", 17 + i, 1000 + i % 7, 500 + i / 7);
    rooftune_query qn = {.family = "gemm", .shape = shape, .dtype = "bf16", .device = "H200"};
    rooftune_lookup(rt, &qn, &m);
  }
  printf("lookup uncached (new shape, nearest of %d):   %.2f us (match %s, geometry %s)\n", np,
         (now_s() - t0) / reps * 1e6, m.match == ROOFTUNE_MATCH_NEAREST ? "nearest" : "other",
         m.geometry_ok ? "evaluated" : "none");
  /* the same with no distance cap: every answer evaluates a winner's recipe for the shape */
  t0 = now_s();
  int served = 0;
  for (int i = 0; i < reps; i++) {
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%d", 5017 + i, 1000 + i % 7, 500 + i / 7);
    rooftune_query qn = {
        .family = "gemm", .shape = shape, .dtype = "bf16", .device = "H200", .nearest_max = 100};
    rooftune_lookup(rt, &qn, &m);
    served += m.match == ROOFTUNE_MATCH_NEAREST && m.geometry_ok;
  }
  printf(
      "lookup uncached, recipe evaluated:            %.2f us (%d of %d served with a geometry)\n",
      (now_s() - t0) / reps * 1e6, served, reps);
  rooftune_close(rt);
  fx_remove(a);
  fx_remove(b);
  return 0;
}
