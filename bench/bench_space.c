/* bench_space.c — how fast a large template space is built by backtracking.
 *
 * Loads the synthetic GEMM-like manifest tests/data/manifests/large/bench_gemm.json (13
 * parameters, 18 constraints, a product above 10^8; tests/long/test_space_large.c checks its
 * space against brute force), builds its space for a 4096^3 f16 problem on the h200 spec (sm_90) and
 * prints the product, the valid count and the build time (best and median of 5), then the cost
 * of index lookups, neighbour listing and format/parse round trips.  Target: a space of at
 * least 10^6 valid configurations out of at least 10^8 built in under 1 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "template/expr.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(void) {
  const char *src = getenv("ROOFTUNE_SOURCE_DIR");
  char mpath[1024];
  snprintf(mpath, sizeof mpath, "%s/tests/data/manifests/large/bench_gemm.json",
           src ? src : ROOFTUNE_SOURCE_DIR);
  rt_error err = {0};
  manifest *m;
  int rc = 1;
  if (manifest_load(mpath, &m, &err)) {
    char line[1024];
    rt_error_format(&err, line, sizeof line);
    fprintf(stderr, "bench_space: %s\n", line);
    goto out;
  }
  rt_vars env;
  rt_vars_clear(&env);
  rt_vars_set(&env, "M", 4096);
  rt_vars_set(&env, "N", 4096);
  rt_vars_set(&env, "K", 4096);
  manifest_env_dtype("f16", &env, NULL);
  gpu_spec_env(arch_spec_find("sm_90"), gpu_spec_find("h200"), &env, NULL);

  enum { RUNS = 5 };
  double t[RUNS];
  space *sp = NULL;
  for (int r = 0; r < RUNS; r++) {
    space_free(sp);
    double t0 = now();
    if (manifest_build_space(m, &env, &sp, &err)) {
      fprintf(stderr, "bench_space: %s\n", err.text);
      manifest_free(m);
      goto out;
    }
    t[r] = now() - t0;
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  size_t n = space_size(sp);
  printf("space: %zu valid of %.0f combinations (%d parameters, %d constraints)\n", n,
         space_product(sp), manifest_nparams(m), manifest_nconstraints(m));
  printf("build (backtracking + index): best %.3f s, median %.3f s over %d runs (target < 1 s)\n",
         t[0], t[RUNS / 2], RUNS);

  /* index lookups, neighbours, format + parse */
  double t0 = now();
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (space_index(sp, space_config(sp, i)) != (long)i) bad++;
  double ti = now() - t0;
  t0 = now();
  size_t total = 0, nb[64];
  for (size_t i = 0; i < n; i++) total += space_neighbours(sp, i, nb, 64);
  double tn = now() - t0;
  size_t rounds = n < 100000 ? n : 100000, badp = 0;
  t0 = now();
  for (size_t i = 0; i < rounds; i++) {
    char buf[512];
    size_t back;
    space_format_config(sp, i * (n / rounds), buf, sizeof buf);
    if (space_parse_config(sp, buf, &back, NULL) || back != i * (n / rounds)) badp++;
  }
  double tp = now() - t0;
  printf("index: %.1f ns per lookup (%zu wrong)\n", 1e9 * ti / (double)n, bad);
  printf("neighbours: %.1f ns per configuration, %.2f valid neighbours on average\n",
         1e9 * tn / (double)n, (double)total / (double)n);
  printf("format + parse: %.2f us per round trip (%zu wrong)\n", 1e6 * tp / (double)rounds, badp);
  /* one constraint of the kind space construction evaluates, alone */
  {
    expr_scope *sc = expr_scope_new();
    const char *const nm[] = {"STAGES",  "BLOCK_M",     "BLOCK_N",
                              "BLOCK_K", "dtype_bytes", "device.smem_per_block_optin"};
    for (int i = 0; i < 6; i++) expr_scope_add(sc, nm[i], 0, NULL);
    expr *e;
    if (expr_parse("STAGES*(BLOCK_M+BLOCK_N)*BLOCK_K*dtype_bytes <= device.smem_per_block_optin",
                   sc, &e, NULL) == RT_OK) {
      long long slots[6] = {1, 64, 128, 32, 2, 232448}, r, acc = 0;
      const long reps = 10000000;
      t0 = now();
      for (long i = 0; i < reps; i++) {
        slots[0] = 1 + (i & 7);
        expr_eval(e, slots, &r, NULL);
        acc += r;
      }
      double te = now() - t0;
      printf("expr: %.1f ns per evaluation of a 9-operation constraint (%lld true)\n",
             1e9 * te / (double)reps, acc);
      expr_free(e);
    }
    expr_scope_free(sc);
  }
  rc = (bad || badp || n < 1000000 || space_product(sp) < 1e8) ? 1 : 0;
  if (rc) fprintf(stderr, "bench_space: the space is not what the benchmark needs\n");
  space_free(sp);
  manifest_free(m);
out:
  return rc;
}
