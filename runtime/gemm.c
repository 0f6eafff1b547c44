/* gemm.c — rooftune_gemm and rooftune_gemm_ex: the tuned kernel served by the rules of
 * rooftune.h for this GPU (a winner serves only queries with its problem's options: fp8
 * operand types, vector scales, the fused epilogue), its TMA maps for TMA winners, and the
 * cuBLASLt fallback (cuBLASLt's own choice, with its fused epilogue where it has one). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/gemm.h"
#include "templates/gemm/gemm_epilogue.h"
#include "runtime/runtime.h"
#include "driver/cuda_driver.h"

/* cuBLASLt state shared by every caller: one handle, and one workspace per (context, stream)
 * so that matmuls running at once on different streams never share scratch memory; past 16
 * pairs cuBLASLt runs without a workspace. */
static pthread_mutex_t lt_mu = PTHREAD_MUTEX_INITIALIZER;
static cublasLtHandle_t lt_handle;
static struct {
  CUcontext ctx;
  void *stream;
  CUdeviceptr ws;
} lt_ws[16];
#define LT_WS_BYTES (32u << 20)

/* epi: the epilogue's argument for a problem with options or fp8 inputs, else NULL. */
static int lt_run(const problem *p, const gemm_lt_algo *algo, const void *A, const void *B, void *C,
                  const gemm_epi_args *epi, CUcontext ctx, void *stream) {
  rt_error err = {0};
  pthread_mutex_lock(&lt_mu);
  if (!lt_handle && cublasLtCreate(&lt_handle) != CUBLAS_STATUS_SUCCESS) {
    pthread_mutex_unlock(&lt_mu);
    return rt_fail(ROOFTUNE_ERR_CUBLAS, "cublasLtCreate failed");
  }
  CUdeviceptr ws = 0;
  int i;
  for (i = 0; i < 16 && lt_ws[i].ctx; i++)
    if (lt_ws[i].ctx == ctx && lt_ws[i].stream == stream) ws = lt_ws[i].ws;
  if (!ws && i < 16) {
    if (cu.cuMemAlloc_v2(&ws, LT_WS_BYTES) == CUDA_SUCCESS) {
      lt_ws[i].ctx = ctx;
      lt_ws[i].stream = stream;
      lt_ws[i].ws = ws;
    } else {
      ws = 0;
    }
  }
  pthread_mutex_unlock(&lt_mu);
  rt_status s =
      gemm_lt_matmul_epi(lt_handle, p, algo, (CUdeviceptr)A, (CUdeviceptr)B, (CUdeviceptr)C, epi,
                         ws, ws ? LT_WS_BYTES : 0, (CUstream)stream, &err);
  return s ? rt_fail_err(&err) : ROOFTUNE_OK;
}

/* The two CUtensorMap arguments of a TMA winner (vars holds its TMA_BOX_* values) over the
 * caller's A and B: gemm_tma_maps, the tuning launcher's own builder.  RT_ERR_UNSUPPORTED when
 * TMA cannot address the operands. */
static rt_status tma_args(const problem *p, const rt_vars *v, const void *A, const void *B,
                          CUtensorMap *ma, CUtensorMap *mb, rt_error *err) {
  long long b_col = 0;
  if (rt_vars_get(v, "B_COL", &b_col) && b_col != !strcmp(p->layout, "nt"))
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "the winner was compiled for the other layout (B_COL=%lld)", b_col);
  return gemm_tma_maps(p, v, (CUdeviceptr)A, (CUdeviceptr)B, ma, mb, err);
}

int rooftune_gemm(rooftune_db *r, const char *dtype, const char *layout, long long M, long long N,
                  long long K, const void *A, const void *B, float *C, void *stream,
                  rooftune_info *info) {
  return rooftune_gemm_batched(r, dtype, layout, 1, M, N, K, A, B, C, stream, info);
}

/* Runs served winner m; ROOFTUNE_OK, or an error, or -1 with why when the call must fall back. */
static int run_tuned(rooftune_db *r, const rooftune_match *m, const problem *p, long long batch,
                     long long M, long long N, long long K, const void *A, const void *B, void *C,
                     gemm_epi_args *epi, int with_epi, CUcontext ctx, void *stream, char *why,
                     size_t size) {
  rt_error err = {0};
  if (m->library_algo[0]) {
    gemm_lt_algo algo;
    if (gemm_lt_algo_parse(m->library_algo, &algo, &err)) {
      snprintf(why, size, "the tuned cuBLASLt algorithm does not read back: %.200s", err.text);
      return -1;
    }
    if (lt_run(p, &algo, A, B, C, with_epi ? epi : NULL, ctx, stream) == ROOFTUNE_OK)
      return ROOFTUNE_OK;
    snprintf(why, size, "the tuned cuBLASLt algorithm cannot run here: %.200s",
             rooftune_last_error());
    return -1;
  }
  rt_vars v;
  rt_vars_clear(&v);
  if (rt_vars_parse(&v, m->vars, &err)) {
    snprintf(why, size, "the winner's values do not read back: %.200s", err.text);
    return -1;
  }
  long long box = 0, split = 1;
  const int tma = rt_vars_get(&v, "TMA_BOX_K", &box);
  rt_vars_get(&v, "SPLIT_K", &split);
  CUtensorMap ma, mb;
  if (!tma && ((uintptr_t)A | (uintptr_t)B | (uintptr_t)C) % 16) {
    snprintf(why, size,
             "the tuned kernel reads A and B in 16-byte vectors and writes C in pairs: it needs "
             "16-byte-aligned operands, as the allocations it was tuned on were");
    return -1;
  }
  if (tma && tma_args(p, &v, A, B, &ma, &mb, &err)) {
    snprintf(why, size, "the winner %.40s uses TMA, which cannot take these operands: %.150s",
             m->template_name, err.text);
    return -1;
  }
  rooftune_kernel *k = NULL;
  int owned = 0;
  int rc = rt_kernel_get(r, m, ctx, &k, &owned);
  if (rc) return rc;
  /* split-K adds fp32 partial sums (the manifests allow it only with an fp32 output) */
  if (split > 1 &&
      cuda_check(cu.cuMemsetD32Async((CUdeviceptr)C, 0, (size_t)(batch * M * N), (CUstream)stream),
                 "cuMemsetD32Async", &err)) {
    if (owned) rooftune_kernel_free(k);
    return rt_fail_err(&err);
  }
  int im = (int)M, in = (int)N, ik = (int)K;
  CUdeviceptr pa = (CUdeviceptr)A, pb = (CUdeviceptr)B, pc = (CUdeviceptr)C;
  /* a kernel with the epilogue (kernels/gemm.h) takes its argument seventh; the driver reads as
   * many as the kernel declares */
  void *args[] = {&pa, &pb, &pc, &im, &in, &ik, epi};
  if (tma) { /* TMA templates take A's and B's tensor maps in place of the pointers */
    args[0] = &ma;
    args[1] = &mb;
  }
  /* the match's geometry: a kernel cached from an earlier call holds that call's shape */
  rc = rooftune_kernel_launch_geometry(k, m->grid, m->block, m->smem, stream, args);
  if (owned) { /* the module must outlive the launch */
    cu.cuStreamSynchronize((CUstream)stream);
    rooftune_kernel_free(k);
  }
  return rc;
}

int rooftune_gemm_batched(rooftune_db *r, const char *dtype, const char *layout, long long batch,
                          long long M, long long N, long long K, const void *A, const void *B,
                          float *C, void *stream, rooftune_info *info) {
  if (!dtype || (strcmp(dtype, "f32") && strcmp(dtype, "tf32") && strcmp(dtype, "f16") &&
                 strcmp(dtype, "bf16"))) {
    if (info) memset(info, 0, sizeof *info);
    return rt_fail(ROOFTUNE_ERR_INVALID,
                   "rooftune_gemm: dtype '%s' is not f32, tf32, f16 or bf16 (fp8 goes through "
                   "rooftune_gemm_ex)",
                   dtype ? dtype : "(null)");
  }
  return rooftune_gemm_ex(r, dtype, layout, batch, M, N, K, A, B, C, NULL, stream, info);
}

/* The options text of kernels/gemm.h for opt ("" for none) and the epilogue argument of the
 * kernels; an unknown name is ROOFTUNE_ERR_INVALID. */
static int gemm_options(const char *dtype, const rooftune_gemm_options *opt, char *text,
                        size_t size, gemm_epi_args *args) {
  memset(args, 0, sizeof *args);
  args->alpha = 1.0f;
  text[0] = '\0';
  if (!opt) return ROOFTUNE_OK;
  size_t n = 0;
#define OPT_ADD(...) n += (size_t)snprintf(text + n, n < size ? size - n : 0, __VA_ARGS__)
  if (opt->b_dtype && strcmp(opt->b_dtype, dtype)) OPT_ADD("+b=%s", opt->b_dtype);
  if (opt->vector_scales) {
    if (!opt->scale_a || !opt->scale_b)
      return rt_fail(
          ROOFTUNE_ERR_INVALID,
          "rooftune_gemm_ex: vector_scales needs scale_a (M floats) and scale_b (N floats)");
    OPT_ADD("+vscale");
  }
  if (opt->alpha != 1.0f) OPT_ADD("+alpha");
  if (opt->C) OPT_ADD("+beta");
  if (opt->bias) OPT_ADD("+bias");
  if (opt->activation && *opt->activation && strcmp(opt->activation, "none")) {
    if (strcmp(opt->activation, "relu") && strcmp(opt->activation, "gelu") &&
        strcmp(opt->activation, "silu"))
      return rt_fail(ROOFTUNE_ERR_INVALID,
                     "rooftune_gemm_ex: activation '%s' is not none, relu, gelu or silu",
                     opt->activation);
    OPT_ADD("+%s", opt->activation);
  }
  if (opt->residual) OPT_ADD("+residual");
  if (opt->out_dtype) OPT_ADD("+out=%s", opt->out_dtype);
#undef OPT_ADD
  if (n >= size) return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm_ex: too many options");
  args->c = (unsigned long long)(uintptr_t)opt->C;
  args->bias = (unsigned long long)(uintptr_t)opt->bias;
  args->residual = (unsigned long long)(uintptr_t)opt->residual;
  args->scale_a = (unsigned long long)(uintptr_t)opt->scale_a;
  args->scale_b = (unsigned long long)(uintptr_t)opt->scale_b;
  args->alpha = opt->alpha;
  args->beta = opt->C ? opt->beta : 0.0f;
  return ROOFTUNE_OK;
}

int rooftune_gemm_ex(rooftune_db *r, const char *dtype, const char *layout, long long batch,
                     long long M, long long N, long long K, const void *A, const void *B, void *C,
                     const rooftune_gemm_options *opt, void *stream, rooftune_info *info) {
  rooftune_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  if (gemm_dtype_code(dtype) < 0)
    return rt_fail(ROOFTUNE_ERR_INVALID,
                   "rooftune_gemm: dtype '%s' is not f32, tf32, f16, bf16, e4m3 or e5m2",
                   dtype ? dtype : "(null)");
  if (!layout || !*layout) layout = "nn";
  if (strcmp(layout, "nn") && strcmp(layout, "nt"))
    return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: layout '%s' is not nn or nt", layout);
  if (M <= 0 || N <= 0 || K <= 0 || M > 0x7fffffff || N > 0x7fffffff || K > 0x7fffffff)
    return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: M, N, K must be in 1..2^31-1");
  if (batch < 1 || batch > 4096)
    return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: batch %lld is not in 1..4096", batch);
  if (!A || !B || !C) return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: a NULL matrix pointer");
  gemm_epi_args epi;
  char opts[96];
  int rc = gemm_options(dtype, opt, opts, sizeof opts, &epi);
  if (rc) return rc;
  CUcontext ctx = NULL;
  CUdevice dev = 0;
  char devname[128];
  if ((rc = rt_current(&ctx, &dev, devname, sizeof devname, "rooftune_gemm"))) return rc;
  char shape[256], prefix[24] = "";
  if (batch > 1) snprintf(prefix, sizeof prefix, "%lld@", batch);
  int sn = snprintf(shape, sizeof shape, "%s%lldx%lldx%lld%s%s", prefix, M, N, K,
                    strcmp(layout, "nt") ? "" : ":nt", opts);
  if (sn < 0 || (size_t)sn >= sizeof shape) /* never a shape cut short: another problem's */
    return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: the problem's text is over %zu characters",
                   sizeof shape - 1);
  static _Thread_local problem p;
  rt_error err = {0};
  if (gemm_serving.parse_shape(&gemm_serving, shape, dtype, NULL, &p, &err))
    return rt_fail_err(&err);
  gemm_epi pe;
  if (gemm_problem_epi(&p, &pe, &err)) return rt_fail_err(&err);
  epi.flags = (pe.beta ? GEMM_EPI_BETA : 0u) | (pe.bias ? GEMM_EPI_BIAS : 0u) |
              (pe.residual ? GEMM_EPI_RES : 0u) | (pe.vscale ? GEMM_EPI_VSCALE : 0u) |
              ((unsigned)pe.act << GEMM_EPI_ACT_SHIFT);
  /* the canonical text is what was tuned (it drops a +b= equal to the dtype, +alpha beside others) */
  snprintf(shape, sizeof shape, "%s", p.shape);

  char why[512] = "no tuning database given";
  rooftune_match m;
  memset(&m, 0, sizeof m);
  if (r) { /* the options travel in the shape */
    rooftune_query q = {.family = "gemm",
                        .shape = shape,
                        .dtype = dtype,
                        .layout = layout,
                        .device = devname,
                        .flags = ROOFTUNE_RUNNABLE | rt_call_flags(r)};
    if ((rc = rooftune_lookup(r, &q, &m))) return rc;
    rt_copy(why, sizeof why, m.reason);
  }
  if (m.match != ROOFTUNE_MATCH_NONE) {
    rc = run_tuned(r, &m, &p, batch, M, N, K, A, B, C, &epi, pe.on, ctx, stream, why, sizeof why);
    if (rc == ROOFTUNE_OK) {
      rt_info_from_match(&m, info);
      return ROOFTUNE_OK;
    }
    if (rc > 0) return rc;
  }
  if ((rc = lt_run(&p, NULL, A, B, C, pe.on ? &epi : NULL, ctx, stream))) return rc;
  info->path = ROOFTUNE_PATH_LIBRARY;
  rt_copy(info->template_name, sizeof info->template_name, "cublaslt");
  rt_copy(info->reason, sizeof info->reason, why);
  info->passed_count = m.passed_count;
  rt_copy(info->passed_over, sizeof info->passed_over, m.passed_over);
  return ROOFTUNE_OK;
}
