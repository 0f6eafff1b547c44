/* bench_gemm.c — TFLOP/s of the best sampled configuration of each gemm template and of
 * cuBLASLt (its default heuristic choice, and the best of its top 8) on GPU 0.
 *
 * Suite: squares 1024, 2048, 4096, 8192 in bf16, f16 and f32; LLM shapes M in {1, 16, 64, 256}
 * with (N, K) in {(4096, 4096), (14336, 4096), (4096, 14336)} in bf16.  Layout nt (B stored
 * N x K, as a linear layer's weight), fp32 output.  Each template: --configs N configurations
 * (default 24), the N/2 the model device ranks fastest for this GPU and the rest spread over
 * its space, every one verified against the cuBLASLt reference before it may count, timed as the median of --reps runs (default 10) after an L2 flush each.
 * cuBLASLt's default is its top heuristic algorithm with CUBLAS_COMPUTE_32F (for f32 that is
 * true fp32; the tf32 template competes with it, and the best-of-8 column includes
 * CUBLAS_COMPUTE_32F_FAST_TF32 algorithms).  Prints "SKIP: no GPU" and exits 0 without a GPU. */
#include <getopt.h>

#include "gemm_harness.h"

typedef struct tpl_ctx {
  gh *h;
  family_gpu *g;
  const manifest *m;
  const space *sp;
  size_t idx;
  const rt_vars *env;
  CUfunction fn;
  int lib;             /* >= 0: library candidate */
  const problem *p;
  cublasLtHandle_t lt; /* for the default */
  CUdeviceptr ws;
} tpl_ctx;

static rt_status launch_tpl(void *c, rt_error *err) {
  tpl_ctx *t = c;
  return gh_launch(t->h, t->g, t->m, t->sp, t->idx, t->env, t->fn, err);
}
static rt_status launch_lib(void *c, rt_error *err) {
  tpl_ctx *t = c;
  return gemm_family.library_launch(t->g, t->lib, t->h->stream, err);
}
static rt_status launch_default(void *c, rt_error *err) {
  tpl_ctx *t = c;
  CUdeviceptr A, B, C;
  gemm_gpu_buffers(t->g, &A, &B, &C);
  return gemm_lt_matmul(t->lt, t->p, NULL, A, B, C, t->ws, gemm_gpu_workspace_bytes(t->g), t->h->stream, err);
}

static int verified(family_gpu *g, gh *h, rt_status (*launch)(void *, rt_error *), void *ctx) {
  rt_error err;
  double rel;
  return gemm_family.gpu_poison(g, h->stream, &err) == RT_OK && launch(ctx, &err) == RT_OK &&
         gemm_family.gpu_verify(g, &rel, &err) == RT_OK;
}

int main(int argc, char **argv) {
  int nconf = 24, reps = 10, c;
  static const struct option longopts[] = {{"configs", required_argument, 0, 'c'},
                                           {"reps", required_argument, 0, 'r'},
                                           {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  while ((c = getopt_long(argc, argv, "c:r:h", longopts, NULL)) != -1) {
    if (c == 'c') nconf = atoi(optarg);
    else if (c == 'r') reps = atoi(optarg);
    else {
      printf("usage: bench_gemm [--configs N] [--reps R]\n");
      return c == 'h' ? 0 : 2;
    }
  }
  if (nconf < 1 || nconf > 256 || reps < 1 || reps > 64) {
    fprintf(stderr, "bench_gemm: --configs must be 1..256 and --reps 1..64\n");
    return 2;
  }
  gh h;
  rt_error err;
  /* a build carried to another machine finds the templates through ROOFTUNE_SOURCE_DIR */
  const char *source_dir = getenv("ROOFTUNE_SOURCE_DIR");
  if (gh_open(&h, source_dir && *source_dir ? source_dir : ROOFTUNE_SOURCE_DIR, &err) != RT_OK) {
    printf("SKIP: no GPU (%s)\n", err.text);
    return 0;
  }
  enum { NT = 4 };
  static const char *const names[NT] = {"gemm_simt", "gemm_mma", "gemm_wgmma", "gemm_skinny"};
  manifest *ms[NT] = {0};
  for (int t = 0; t < NT; t++) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.json", h.tmpl_dir, names[t]);
    if (manifest_load(path, &ms[t], &err) != RT_OK) {
      fprintf(stderr, "bench_gemm: %s\n", err.text);
      return 1;
    }
  }
  /* in the order the targets need them, so a run cut short by its time cap still has
   * the rows that matter: 4096^3 bf16, the skinny LLM shapes, then the other squares */
  char suite[64][2][48];
  int ns = 0;
  snprintf(suite[ns][0], 48, "4096x4096x4096:nt");
  snprintf(suite[ns++][1], 48, "bf16");
  static const int ms_[] = {1, 16, 64, 256}, nk[][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) {
      snprintf(suite[ns][0], 48, "%dx%dx%d:nt", ms_[i], nk[j][0], nk[j][1]);
      snprintf(suite[ns++][1], 48, "bf16");
    }
  static const char *const dts[] = {"bf16", "f16", "f32", "tf32"};
  for (int d = 0; d < 4; d++)
    for (int s = 1024; s <= 8192; s *= 2) {
      if (d == 0 && s == 4096) continue; /* first already */
      snprintf(suite[ns][0], 48, "%dx%dx%d:nt", s, s, s);
      snprintf(suite[ns++][1], 48, "%s", dts[d]);
    }

  printf("GPU: %s (cc %d.%d), %d configs per template, median of %d runs, L2 flushed\n", h.info.name,
         h.info.cc_major, h.info.cc_minor, nconf, reps);
  printf("own/lt: the best template over cuBLASLt's default; tuned/lt: the tuner's pick (templates\n"
         "and the 8 cuBLASLt candidates) over cuBLASLt's default.  f32 rows are fp32 math (simt,\n"
         "skinny; lt-best-of8 mixes in FAST_TF32 algorithms); tf32 rows: mma's tf32 path and\n"
         "cuBLASLt's FAST_TF32 algorithms (lt-default stays CUBLAS_COMPUTE_32F, true fp32).\n");
  printf("%-20s %-5s %9s %9s %9s %9s %11s %11s %9s %9s  %s\n", "shape", "dtype", "simt", "mma", "wgmma",
         "skinny", "lt-default", "lt-best-of8", "own/lt", "tuned/lt", "(TFLOP/s, measured)");
  cublasLtHandle_t lt = NULL;
  cublasLtCreate(&lt);
  for (int s = 0; s < ns; s++) {
    problem p;
    family_gpu *g = NULL;
    if (gemm_family.parse_shape(&gemm_family, suite[s][0], suite[s][1], NULL, &p, &err) ||
        gemm_family.gpu_setup(&gemm_family, &p, 7, NULL, h.stream, &g, &err)) {
      printf("%-20s %-5s setup failed: %s\n", suite[s][0], suite[s][1], err.text);
      continue;
    }
    const double flops = gemm_family.flops(&gemm_family, &p);
    double best[NT] = {0};
    char best_cfg[NT][256] = {""};
    rt_vars env;
    gh_env(&h, &p, &env, &err);
    for (int t = 0; t < NT; t++) {
      char archbuf[16];
      const char *arch = gh_arch(&h, ms[t], archbuf, sizeof archbuf);
      space *sp = NULL;
      if (!arch || !manifest_has_dtype(ms[t], p.dtype) || manifest_build_space(ms[t], &env, &sp, NULL) != RT_OK) continue;
      size_t idx[256];
      int n = gh_pick(&h, ms[t], sp, &env, &p, nconf, idx);
      gh_compile(&h, ms[t], sp, idx, n, &env, p.dtype, arch);
      for (int i = 0; i < n; i++) {
        char *src = gh_source(ms[t], sp, idx[i], &env, p.dtype, NULL);
        gh_module *mod = src ? gh_find(&h, src, arch) : NULL;
        free(src);
        if (!mod || !mod->fn) continue;
        tpl_ctx tc = {&h, g, ms[t], sp, idx[i], &env, mod->fn, -1, &p, lt, 0};
        if (!verified(g, &h, launch_tpl, &tc)) {
          char cfg[256];
          space_format_config(sp, idx[i], cfg, sizeof cfg);
          fprintf(stderr, "%s %s %s [%s]: WRONG RESULT\n", names[t], suite[s][0], p.dtype, cfg);
          continue;
        }
        double ms_t = gh_time(&h, launch_tpl, &tc, reps);
        double tf = flops / (ms_t * 1e-3) / 1e12;
        if (ms_t > 0 && tf > best[t]) {
          best[t] = tf;
          space_format_config(sp, idx[i], best_cfg[t], sizeof best_cfg[t]);
        }
      }
      space_free(sp);
    }
    double lt_def = 0, lt_best = 0;
    CUdeviceptr ws = 0;
    cu.cuMemAlloc_v2(&ws, gemm_gpu_workspace_bytes(g));
    {
      tpl_ctx tc = {&h, g, NULL, NULL, 0, &env, NULL, -1, &p, lt, ws};
      if (verified(g, &h, launch_default, &tc)) lt_def = flops / (gh_time(&h, launch_default, &tc, reps) * 1e-3) / 1e12;
    }
    int count = 0;
    if (gemm_family.library_list(g, 8, &count, &err) == RT_OK)
      for (int i = 0; i < count; i++) {
        tpl_ctx tc = {&h, g, NULL, NULL, 0, &env, NULL, i, &p, lt, ws};
        if (!verified(g, &h, launch_lib, &tc)) continue;
        double tf = flops / (gh_time(&h, launch_lib, &tc, reps) * 1e-3) / 1e12;
        if (tf > lt_best) lt_best = tf;
      }
    cu.cuMemFree_v2(ws);
    double own = 0;
    for (int t = 0; t < NT; t++) own = fmax(own, best[t]);
    printf("%-20s %-5s %9.1f %9.1f %9.1f %9.1f %11.1f %11.1f %8.2fx %8.2fx\n", suite[s][0], suite[s][1],
           best[0], best[1], best[2], best[3], lt_def, lt_best, lt_def > 0 ? own / lt_def : 0.0,
           lt_def > 0 ? fmax(own, lt_best) / lt_def : 0.0);
    for (int t = 0; t < NT; t++)
      if (best[t] > 0) printf("    %-10s best: %s\n", names[t], best_cfg[t]);
    fflush(stdout);
    gemm_family.gpu_teardown(g);
  }
  cublasLtDestroy(lt);
  for (int t = 0; t < NT; t++) manifest_free(ms[t]);
  gh_close(&h);
  return 0;
}
