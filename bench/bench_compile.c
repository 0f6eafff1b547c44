/* bench_compile.c — compile throughput of the NVRTC pipeline on a real template.
 *
 * usage: bench_compile [TEMPLATE] [--arch sm_90] [--dtype D] [--n N]
 *
 * Takes N configurations spread evenly over TEMPLATE's space (default gemm_mma, 8 of them, for
 * 4096^3) and prints:
 *   1. the pool's scaling: compiles per second with 1 worker, 2 and one per core (no cache, no
 *      PCH), the speed-up of each over 1, the CPU seconds each compile took (other programs'
 *      load inflates wall time, much less CPU time), and what a worker's start costs: as many
 *      one-compile jobs as workers, against one compile in one worker (fork, NVRTC's
 *      initialisation, which every worker pays once);
 *   2. the cache: a run that fills it, then the rerun that compiles nothing;
 *   3. precompiled headers: 1 worker with and without PCH on the template as it is, and on the
 *      same template with <cuda/barrier> and <cuda/pipeline> included at its top (the case PCH
 *      is for: heavy system headers; the GEMM templates include none and use inline PTX).
 * Wall-clock figures from this machine; nothing here is a test.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/family.h"
#include "compile/compile_pool.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"

/* CPU seconds of reaped children (the compile workers) so far. */
static double bench_child_cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/* Wall time and rate, and the workers' CPU seconds per compile, which the load that other
 * programs put on the machine does not inflate as much as wall time. */
static void bench_report(const char *what, const compile_pool_stats *st, double cpu) {
  size_t ran = st->jobs - st->cache_hits;
  printf(
      "%-46s %6.2f s  %5.2f compiles/s  %5.2f cpu-s/compile  (%zu jobs, %zu hits, %zu failed, "
      "%d workers)\n",
      what, st->seconds, st->seconds > 0 ? (double)ran / st->seconds : 0,
      ran ? cpu / (double)ran : 0, st->jobs, st->cache_hits, st->compile_errors + st->failed,
      st->workers);
}

static int bench_run(const char *what, compile_job *jobs, size_t n, const compile_options *opt,
                     int workers, cubin_cache *cache, compile_pool_stats *st) {
  compile_result *res = calloc(n, sizeof *res);
  compile_pool_options popt = {0};
  popt.workers = workers;
  popt.cache = cache;
  popt.timeout_s = 600;
  rt_error err = {0};
  double cpu0 = bench_child_cpu();
  if (compile_pool_run(jobs, n, opt, &popt, res, st, &err)) {
    fprintf(stderr, "bench_compile: %s\n", err.text);
    free(res);
    return 1;
  }
  for (size_t i = 0; i < n; i++) compile_result_free(&res[i]);
  free(res);
  bench_report(what, st, bench_child_cpu() - cpu0);
  return 0;
}

int main(int argc, char **argv) {
  const char *name = "gemm_mma", *arch = "sm_90", *dtype = NULL;
  size_t n = 8;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--arch") && i + 1 < argc)
      arch = argv[++i];
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc)
      dtype = argv[++i];
    else if (!strcmp(argv[i], "--n") && i + 1 < argc)
      n = (size_t)atol(argv[++i]);
    else if (argv[i][0] != '-')
      name = argv[i];
    else {
      fprintf(stderr, "usage: bench_compile [TEMPLATE] [--arch A] [--dtype D] [--n N]\n");
      return 2;
    }
  }
  rt_error err = {0};
  manifest *m = NULL;
  if (catalog_find(NULL, name, &m, &err)) {
    fprintf(stderr, "bench_compile: %s\n", err.text);
    return 1;
  }
  if (!dtype) dtype = manifest_dtype(m, 0);
  const family_ops *fam = family_find(manifest_family(m));
  problem prob;
  rt_vars env;
  space *sp = NULL;
  if (!fam || fam->parse_shape(fam, "4096x4096x4096", dtype, NULL, &prob, &err) ||
      problem_env(fam, &prob, arch_spec_find(arch), NULL, &env, &err) ||
      manifest_build_space(m, &env, &sp, &err)) {
    fprintf(stderr, "bench_compile: %s\n", err.text[0] ? err.text : "family not found");
    return 1;
  }
  size_t size = space_size(sp);
  if (n > size) n = size;
  char *source = NULL;
  if (manifest_read_source(m, &source, &err)) {
    fprintf(stderr, "bench_compile: %s: %s\n", err.source, err.text);
    return 1;
  }
  static const char heavy[] = "#include <cuda/barrier>\n#include <cuda/pipeline>\n";
  compile_job *jobs = calloc(n, sizeof *jobs), *heavy_jobs = calloc(n, sizeof *heavy_jobs);
  for (size_t i = 0; i < n; i++) {
    size_t idx = (size_t)((unsigned long long)i * size / n);
    char *prefix = NULL;
    if (manifest_source_prefix(m, sp, idx, &env, dtype, &prefix, &err)) {
      fprintf(stderr, "bench_compile: %s\n", err.text);
      return 1;
    }
    size_t len = strlen(prefix) + strlen(source) + sizeof heavy + 1;
    char *t = malloc(len), *h = malloc(len);
    snprintf(t, len, "%s%s", prefix, source);
    /* the heavy variant: the includes go after #line, so the file's own lines shift by two */
    snprintf(h, len, "%s%s%s", prefix, heavy, source);
    free(prefix);
    jobs[i].source = t;
    heavy_jobs[i].source = h;
    jobs[i].name = heavy_jobs[i].name = manifest_source_name(m);
  }
  compile_options opt;
  manifest_compile_options(m, arch, &opt);
  opt.pch = 0; /* the figures below switch PCH on where they measure it */

  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  printf("template %s, %s, %s, %zu of %zu configurations, %ld cores, load average %.1f\n",
         manifest_name(m), arch, dtype, n, size, sysconf(_SC_NPROCESSORS_ONLN), load[0]);
  compile_pool_stats st;
  int bad = 0;
  const int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  bad |= bench_run("1 worker, no cache, no PCH", jobs, n, &opt, 1, NULL, &st);
  const double one = st.seconds;
  const int counts[] = {2, cores};
  for (int k = 0; k < 2; k++) {
    if (k == 1 && cores <= 2) break; /* all cores is 2 here: measured above */
    char what[64];
    snprintf(what, sizeof what, "%d workers%s, no cache, no PCH", counts[k],
             k ? " (all cores)" : "");
    bad |= bench_run(what, jobs, n, &opt, counts[k], NULL, &st);
    printf("  speed-up with %d workers: %.2fx (ideal %dx)\n", counts[k],
           st.seconds > 0 ? one / st.seconds : 0, counts[k]);
  }
  /* a worker's start: one compile in one fresh worker, then W fresh workers with one each */
  bad |= bench_run("1 job, 1 fresh worker", jobs, 1, &opt, 1, NULL, &st);
  const double single = st.seconds;
  const int w = cores < (int)n ? cores : (int)n;
  bad |= bench_run("one job each for every worker", jobs, (size_t)w, &opt, w, NULL, &st);
  printf(
      "  a fresh worker's first compile: %.2f s; %d of them side by side: %.2f s (steady state "
      "%.2f s a compile)\n",
      single, w, st.seconds, one / (double)n);

  char dir[] = "/tmp/rooftune-bench-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  cubin_cache *cache = NULL;
  if (cubin_cache_open(dir, &cache, &err)) {
    fprintf(stderr, "bench_compile: %s\n", err.text);
    return 1;
  }
  bad |= bench_run("2 workers, filling the cache", jobs, n, &opt, 2, cache, &st);
  bad |= bench_run("rerun from the cache", jobs, n, &opt, 2, cache, &st);
  printf("  rerun: %.4f s for %zu candidates (%zu compiled anew)\n", st.seconds, n,
         st.jobs - st.cache_hits);
  cubin_cache_close(cache);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);

  opt.pch = 1;
  bad |= bench_run("1 worker, PCH (template as is)", jobs, n, &opt, 1, NULL, &st);
  opt.pch = 0;
  bad |=
      bench_run("1 worker, no PCH, + <cuda/barrier,pipeline>", heavy_jobs, n, &opt, 1, NULL, &st);
  double no_pch = st.seconds;
  opt.pch = 1;
  bad |= bench_run("1 worker, PCH, + <cuda/barrier,pipeline>", heavy_jobs, n, &opt, 1, NULL, &st);
  printf("  PCH on heavy headers: %.2fx\n", st.seconds > 0 ? no_pch / st.seconds : 0);

  for (size_t i = 0; i < n; i++) {
    free((char *)jobs[i].source);
    free((char *)heavy_jobs[i].source);
  }
  free(jobs);
  free(heavy_jobs);
  free(source);
  space_free(sp);
  manifest_free(m);
  return bad;
}
