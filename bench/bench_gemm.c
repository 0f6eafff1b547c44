/* bench_gemm.c — TFLOP/s of the best sampled configuration of each gemm template and of
 * cuBLASLt (its default heuristic choice, and the best of its top 8) on GPU 0.
 *
 * Suites (--suite):
 *   issue4 (default): squares 1024, 2048, 4096, 8192 in bf16, f16 and f32; LLM shapes M in
 *     {1, 16, 64, 256} with (N, K) in {(4096, 4096), (14336, 4096), (4096, 14336)} in bf16.
 *     Layout nt (B stored N x K, as a linear layer's weight), fp32 output.
 *   fp8: e4m3 (and e4m3 x e5m2) with per-tensor scales, squares 4096 and 8192 and the LLM
 *     shapes M 16 and 256 x 14336 x 4096, fp32 and bf16 outputs; cuBLASLt's default is its top
 *     algorithm without fast accumulation, the best of 8 includes FAST_ACCUM ones.
 *   epilogue: the MLP's up projection 4096x14336x4096:nt with bias + GELU to bf16 (and bias +
 *     ReLU, and the same at M 256), fused in the templates and in cuBLASLt's epilogue, against
 *     running it unfused: cuBLASLt's default GEMM to bf16 and then a separate bias + activation
 *     kernel (16-byte loads, in place), each timed on its own after an L2 flush; the bytes the
 *     separate pass moves (D read and written, the bias) are printed beside it.  Each template: --configs N configurations
 * (default 24), the N/2 the model device ranks fastest for this GPU and the rest spread over
 * its space, every one verified against the cuBLASLt reference before it may count, timed as the median of --reps runs (default 10) after an L2 flush each.
 * cuBLASLt's default is its top heuristic algorithm with CUBLAS_COMPUTE_32F (for f32 that is
 * true fp32; the tf32 template competes with it, and the best-of-8 column includes
 * CUBLAS_COMPUTE_32F_FAST_TF32 algorithms).  Prints "SKIP: no GPU" and exits 0 without a GPU. */
#include <getopt.h>

#include "gemm_harness.h"
#include "templates/gemm/gemm_epilogue.h"

/* The separate bias + activation pass over a bf16 D (M x N, N a multiple of 8), in place. */
static const char bias_act_src[] =
    "__device__ float bf(unsigned h) { return __uint_as_float(h << 16); }\n"
    "__device__ float act_f(int act, float v) {\n"
    "  if (act == 1) return v > 0.f ? v : 0.f;\n"
    "  if (act == 2) { float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);\n"
    "                  return __fdividef(v, 1.f + __expf(-2.f * fmaxf(u, -40.f))); }\n"
    "  if (act == 3) return __fdividef(v, 1.f + __expf(-fmaxf(v, -80.f)));\n"
    "  return v;\n"
    "}\n"
    "extern \"C\" __global__ void bias_act(unsigned short *d, const unsigned short *bias, long "
    "long total, int n,\n"
    "                                      int act) {\n"
    "  const long long step = (long long)gridDim.x * blockDim.x * 8;\n"
    "  for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 8; i < total; i += "
    "step) {\n"
    "    uint4 v = *(const uint4 *)(d + i);\n"
    "    const uint4 b = *(const uint4 *)(bias + i % n);\n"
    "    unsigned *pv = (unsigned *)&v;\n"
    "    const unsigned *pb = (const unsigned *)&b;\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < 4; ++j) {\n"
    "      float lo = act_f(act, bf(pv[j] & 0xffffu) + bf(pb[j] & 0xffffu));\n"
    "      float hi = act_f(act, bf(pv[j] >> 16) + bf(pb[j] >> 16));\n"
    "      unsigned w;\n"
    "      asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(w) : \"f\"(hi), \"f\"(lo));\n"
    "      pv[j] = w;\n"
    "    }\n"
    "    *(uint4 *)(d + i) = v;\n"
    "  }\n"
    "}\n";

typedef struct sep_ctx {
  gh *h;
  CUfunction fn;
  CUdeviceptr d, bias;
  long long total;
  int n, act;
} sep_ctx;

static rt_status launch_sep(void *c, rt_error *err) {
  sep_ctx *t = c;
  void *args[] = {&t->d, &t->bias, &t->total, &t->n, &t->act};
  return cuda_check(cu.cuLaunchKernel(t->fn, (unsigned)(t->h->info.sm_count * 8), 1, 1, 256, 1, 1,
                                      0, t->h->stream, args, NULL),
                    "launch bias_act", err);
}

typedef struct tpl_ctx {
  gh *h;
  family_gpu *g;
  const manifest *m;
  const space *sp;
  size_t idx;
  const rt_vars *env;
  CUfunction fn;
  int lib; /* >= 0: library candidate */
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
  gemm_epi_args epi;
  gemm_gpu_buffers(t->g, &A, &B, &C);
  gemm_gpu_epi_args(t->g, &epi);
  return gemm_lt_matmul_epi(t->lt, t->p, NULL, A, B, C, &epi, t->ws, gemm_gpu_workspace_bytes(t->g),
                            t->h->stream, err);
}

static int verified(family_gpu *g, gh *h, rt_status (*launch)(void *, rt_error *), void *ctx) {
  rt_error err;
  double rel;
  return gemm_family.gpu_poison(g, h->stream, &err) == RT_OK && launch(ctx, &err) == RT_OK &&
         gemm_family.gpu_verify(g, &rel, &err) == RT_OK;
}

/* The epilogue suite's comparison: the same product unfused (cuBLASLt's default, bf16 out) then
 * the separate bias + activation pass over its output, against the best fused time. */
static void separate_pass(gh *h, CUfunction sep_fn, const char *shape, const char *dtype,
                          const problem *p, rt_vars *env, cublasLtHandle_t lt, int reps,
                          double flops, double own, double lt_best) {
  rt_error err = {0};
  /* unfused: the same product without the epilogue's steps (cuBLASLt's default, bf16 out),
   * then the separate pass over its output */
  char plain[64];
  snprintf(plain, sizeof plain, "%.*s+out=bf16", (int)strcspn(shape, "+"), shape);
  problem pp;
  family_gpu *gp = NULL;
  gemm_epi e;
  gemm_problem_epi(p, &e, NULL);
  if (!gemm_family.parse_shape(&gemm_family, plain, dtype, NULL, &pp, &err) &&
      !gemm_family.gpu_setup(&gemm_family, &pp, 7, NULL, h->stream, &gp, &err)) {
    CUdeviceptr ws2 = 0, bias = 0, A2, B2, C2;
    const long long M = problem_dim(&pp, "M"), N = problem_dim(&pp, "N");
    cu.cuMemAlloc_v2(&ws2, gemm_gpu_workspace_bytes(gp));
    cu.cuMemAlloc_v2(&bias, (size_t)N * 2);
    cu.cuMemsetD16Async(bias, 0x3c00u, (size_t)N,
                        h->stream); /* bf16 1.0: the pass does real work */
    tpl_ctx tc = {h, gp, NULL, NULL, 0, env, NULL, -1, &pp, lt, ws2};
    const double t_gemm = gh_time(h, launch_default, &tc, reps);
    gemm_gpu_buffers(gp, &A2, &B2, &C2);
    sep_ctx sc = {h, sep_fn, C2, bias, M * N, (int)N, e.act};
    const double t_sep = gh_time(h, launch_sep, &sc, reps);
    const double t_fused = flops / (fmax(own, lt_best) * 1e12) * 1e3;
    printf(
        "    separate: GEMM %.4f ms + bias+act %.4f ms (%.0f MB moved) = %.4f ms; fused best "
        "%.4f ms; "
        "fused/sep %.2fx; own fused vs cuBLASLt fused %.2fx\n",
        t_gemm, t_sep, (4.0 * M * N + 2.0 * N) / 1e6, t_gemm + t_sep, t_fused,
        (t_gemm + t_sep) / t_fused, lt_best > 0 ? own / lt_best : 0.0);
    cu.cuMemFree_v2(ws2);
    cu.cuMemFree_v2(bias);
    gemm_family.gpu_teardown(gp);
  } else {
    printf("    separate: setup failed: %s\n", err.text);
  }
}

/* Template M's NCONF picked configurations of problem P (SHAPE as the suite writes it), each verified then timed: the fastest
 * in *best (TFLOP/s) and best_cfg. */
static void best_of_template(gh *h, manifest *m, const char *name, const char *shape,
                             const problem *p, rt_vars *env, family_gpu *g, cublasLtHandle_t lt,
                             int nconf, int reps, double flops, double *best, char *best_cfg,
                             size_t best_size) {
  char archbuf[16];
  const char *arch = gh_arch(h, m, archbuf, sizeof archbuf);
  space *sp = NULL;
  if (!arch || !manifest_has_dtype(m, p->dtype) || manifest_build_space(m, env, &sp, NULL) != RT_OK)
    return;
  size_t idx[256];
  int n = gh_pick(h, m, sp, env, p, nconf, idx);
  gh_compile(h, m, sp, idx, n, env, p->dtype, arch);
  for (int i = 0; i < n; i++) {
    char *src = gh_source(m, sp, idx[i], env, p->dtype, NULL);
    gh_module *mod = src ? gh_find(h, src, arch) : NULL;
    free(src);
    if (!mod || !mod->fn) continue;
    tpl_ctx tc = {h, g, m, sp, idx[i], env, mod->fn, -1, p, lt, 0};
    if (!verified(g, h, launch_tpl, &tc)) {
      char cfg[256];
      space_format_config(sp, idx[i], cfg, sizeof cfg);
      fprintf(stderr, "%s %s %s [%s]: WRONG RESULT\n", name, shape, p->dtype, cfg);
      continue;
    }
    double ms_t = gh_time(h, launch_tpl, &tc, reps);
    double tf = flops / (ms_t * 1e-3) / 1e12;
    if (ms_t > 0 && tf > *best) {
      *best = tf;
      space_format_config(sp, idx[i], best_cfg, best_size);
    }
  }
  space_free(sp);
}

/* The shapes and dtypes of suite NAME into suite (at most 64): in the order the targets
 * need them, so a run cut short by its time cap still has the rows that matter; their count. */
static int suite_of(const char *suite_name, int epi_suite, char suite[64][2][64]) {
  int ns = 0;
  if (!strcmp(suite_name, "fp8")) {
    /* the target rows first: 8192^3 (own >= 0.9x) and 4096^3, then the LLM shapes, B e5m2 */
    static const char *const f8[][2] = {{"8192x8192x8192:nt", "e4m3"},
                                        {"4096x4096x4096:nt", "e4m3"},
                                        {"4096x4096x4096:nt+out=bf16", "e4m3"},
                                        {"256x14336x4096:nt+out=bf16", "e4m3"},
                                        {"16x14336x4096:nt+out=bf16", "e4m3"},
                                        {"8192x8192x8192:nt+b=e5m2", "e4m3"},
                                        {"8192x8192x8192:nt+vscale+out=bf16", "e4m3"}};
    for (size_t i = 0; i < sizeof f8 / sizeof f8[0]; i++) {
      snprintf(suite[ns][0], 64, "%s", f8[i][0]);
      snprintf(suite[ns++][1], 64, "%s", f8[i][1]);
    }
  } else if (epi_suite) {
    static const char *const ep[][2] = {{"4096x14336x4096:nt+bias+gelu+out=bf16", "bf16"},
                                        {"4096x14336x4096:nt+bias+relu+out=bf16", "bf16"},
                                        {"256x14336x4096:nt+bias+gelu+out=bf16", "bf16"},
                                        {"4096x14336x4096:nt+bias+gelu+out=bf16", "e4m3"}};
    for (size_t i = 0; i < sizeof ep / sizeof ep[0]; i++) {
      snprintf(suite[ns][0], 64, "%s", ep[i][0]);
      snprintf(suite[ns++][1], 64, "%s", ep[i][1]);
    }
  } else {
    snprintf(suite[ns][0], 64, "4096x4096x4096:nt");
    snprintf(suite[ns++][1], 64, "bf16");
    static const int ms_[] = {1, 16, 64, 256},
                     nk[][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}};
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++) {
        snprintf(suite[ns][0], 64, "%dx%dx%d:nt", ms_[i], nk[j][0], nk[j][1]);
        snprintf(suite[ns++][1], 64, "bf16");
      }
    static const char *const dts[] = {"bf16", "f16", "f32", "tf32"};
    for (int d = 0; d < 4; d++)
      for (int s = 1024; s <= 8192; s *= 2) {
        if (d == 0 && s == 4096) continue; /* first already */
        snprintf(suite[ns][0], 64, "%dx%dx%d:nt", s, s, s);
        snprintf(suite[ns++][1], 64, "%s", dts[d]);
      }
  }
  return ns;
}

int main(int argc, char **argv) {
  int nconf = 24, reps = 10, c;
  const char *suite_name = "issue4";
  static const struct option longopts[] = {{"configs", required_argument, 0, 'c'},
                                           {"reps", required_argument, 0, 'r'},
                                           {"suite", required_argument, 0, 's'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
  while ((c = getopt_long(argc, argv, "c:r:s:h", longopts, NULL)) != -1) {
    if (c == 'c')
      nconf = atoi(optarg);
    else if (c == 'r')
      reps = atoi(optarg);
    else if (c == 's')
      suite_name = optarg;
    else {
      printf("usage: bench_gemm [--configs N] [--reps R] [--suite issue4|fp8|epilogue]\n");
      return c == 'h' ? 0 : 2;
    }
  }
  if (strcmp(suite_name, "issue4") && strcmp(suite_name, "fp8") && strcmp(suite_name, "epilogue")) {
    fprintf(stderr, "bench_gemm: unknown suite \"%s\": use issue4, fp8 or epilogue\n", suite_name);
    return 2;
  }
  const int epi_suite = !strcmp(suite_name, "epilogue");
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
  char suite[64][2][64]; /* 4096^3 bf16, the skinny LLM shapes, then the other squares */
  const int ns = suite_of(suite_name, epi_suite, suite);
  /* the epilogue suite's separate pass */
  CUfunction sep_fn = NULL;
  if (epi_suite) {
    compile_options opt;
    memset(&opt, 0, sizeof opt);
    char archbuf[16];
    snprintf(archbuf, sizeof archbuf, "sm_%d%d", h.info.cc_major, h.info.cc_minor);
    opt.arch = archbuf;
    opt.entry = "bias_act";
    compile_result r;
    memset(&r, 0, sizeof r);
    CUmodule mod;
    if (compile_source(bias_act_src, "bias_act.cu", &opt, &r, &err) != RT_OK || r.status != RT_OK ||
        cu.cuModuleLoadData(&mod, r.cubin) != CUDA_SUCCESS ||
        cu.cuModuleGetFunction(&sep_fn, mod, r.lowered_name) != CUDA_SUCCESS) {
      fprintf(stderr, "bench_gemm: the separate bias_act kernel did not build: %s %s\n", err.text,
              r.message);
      sep_fn = NULL;
    }
    compile_result_free(&r);
  }

  printf("GPU: %s (cc %d.%d), suite %s, %d configs per template, median of %d runs, L2 flushed\n",
         h.info.name, h.info.cc_major, h.info.cc_minor, suite_name, nconf, reps);
  printf(
      "own/lt: the best template over cuBLASLt's default; tuned/lt: the tuner's pick (templates\n"
      "and the 8 cuBLASLt candidates) over cuBLASLt's default.  f32 rows are fp32 math (simt,\n"
      "skinny; lt-best-of8 mixes in FAST_TF32 algorithms); tf32 rows: mma's tf32 path and\n"
      "cuBLASLt's FAST_TF32 algorithms (lt-default stays CUBLAS_COMPUTE_32F, true fp32).\n");
  printf("%-20s %-5s %9s %9s %9s %9s %11s %11s %9s %9s  %s\n", "shape", "dtype", "simt", "mma",
         "wgmma", "skinny", "lt-default", "lt-best-of8", "own/lt", "tuned/lt",
         "(TFLOP/s, measured)");
  if (epi_suite)
    printf(
        "epilogue rows also: separate = cuBLASLt's default GEMM to bf16, then the bias+activation "
        "kernel;\n"
        "fused/sep: the best fused time (own or cuBLASLt's epilogue) over the separate one's (ms, "
        "measured)\n");
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
    for (int t = 0; t < NT; t++)
      best_of_template(&h, ms[t], names[t], suite[s][0], &p, &env, g, lt, nconf, reps, flops,
                       &best[t], best_cfg[t], sizeof best_cfg[t]);
    double lt_def = 0, lt_best = 0;
    CUdeviceptr ws = 0;
    cu.cuMemAlloc_v2(&ws, gemm_gpu_workspace_bytes(g));
    {
      tpl_ctx tc = {&h, g, NULL, NULL, 0, &env, NULL, -1, &p, lt, ws};
      if (verified(g, &h, launch_default, &tc))
        lt_def = flops / (gh_time(&h, launch_default, &tc, reps) * 1e-3) / 1e12;
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
    printf("%-20s %-5s %9.1f %9.1f %9.1f %9.1f %11.1f %11.1f %8.2fx %8.2fx\n", suite[s][0],
           suite[s][1], best[0], best[1], best[2], best[3], lt_def, lt_best,
           lt_def > 0 ? own / lt_def : 0.0, lt_def > 0 ? fmax(own, lt_best) / lt_def : 0.0);
    if (epi_suite && sep_fn && !strcmp(suite[s][1], "bf16"))
      separate_pass(&h, sep_fn, suite[s][0], suite[s][1], &p, &env, lt, reps, flops, own, lt_best);
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
