/* gemm.c — the GEMM family's tuning half (gemm.h): FLOPs, compulsory bytes and tolerance, and
 * on the GPU its seeded inputs, the cuBLASLt reference, verification, template launches and
 * cuBLASLt's candidates; the whole gemm_family.  gemm_serve.c has what serving needs. */
#include "kernels/gemm_impl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/numeric.h"
#include "driver/cuda_driver.h"

#define GEMM_LIB_MAX   64
#define GEMM_WORKSPACE (32u << 20) /* cuBLASLt workspace */

/* ---------------------------------------------------------------- host side */

static double gemm_flops(const family_ops *self, const problem *p) {
  (void)self;
  return 2.0 * (double)problem_dim(p, "M") * (double)problem_dim(p, "N") *
         (double)problem_dim(p, "K") * (double)problem_dim(p, "BATCH");
}

static double gemm_min_bytes(const family_ops *self, const problem *p) {
  (void)self;
  gemm_epi e;
  if (gemm_problem_epi(p, &e, NULL)) return 0;
  double m = (double)problem_dim(p, "M"), n = (double)problem_dim(p, "N"),
         k = (double)problem_dim(p, "K");
  const double ob = gemm_out_bytes(e.out_code);
  /* A and B once, D written once, C and the residual read once, the bias once per batch */
  return (double)problem_dim(p, "BATCH") *
             (gemm_code_bytes(e.a_code) * m * k + gemm_code_bytes(e.b_code) * k * n +
              ob * m * n * (1 + e.beta + e.residual) + ob * n * e.bias) +
         (e.vscale ? 4.0 * (m + n) : 0);
}

/* A separate pass would read the product back and write it again: twice the output's bytes, for
 * an epilogue with an elementwise step (a lone alpha or output type cuBLASLt's GEMM does itself). */
static double gemm_fused_bytes(const family_ops *self, const problem *p) {
  (void)self;
  gemm_epi e;
  if (gemm_problem_epi(p, &e, NULL) || !(e.beta || e.bias || e.act || e.residual)) return 0;
  return 2.0 * gemm_out_bytes(e.out_code) * (double)problem_dim(p, "M") *
         (double)problem_dim(p, "N") * (double)problem_dim(p, "BATCH");
}

static double gemm_tolerance(const family_ops *self, const problem *p) {
  (void)self;
  /* see gemm.h: f32 (fp32 products) and f16/bf16 (exact products of the rounded inputs) add in
   * fp32 on both sides, only the summation order differs (~sqrt(K) * 2^-24); tf32 rounds the
   * inputs to 10 mantissa bits before the products (~5e-4 against fp32); fp8 admits the fp8
   * tensor cores' 14-bit accumulation; the output's rounding comes on top */
  gemm_epi e;
  if (gemm_problem_epi(p, &e, NULL)) return 0;
  double tol;
  if (GEMM_IS_FP8(e.a_code)) {
    const double steps = fmax(1.0, (double)problem_dim(p, "K") / 32.0);
    tol = 4.0 * ldexp(1.0, -13) * sqrt(steps);
  } else {
    tol = !strcmp(p->dtype, "tf32") ? 3e-3 : 1e-4;
  }
  if (e.out_code == GEMM_OUT_BF16)
    tol += ldexp(1.0, -8);
  else if (e.out_code == GEMM_OUT_F16)
    tol += ldexp(1.0, -11);
  return tol;
}

/* ---------------------------------------------------------------- GPU side */

struct family_gpu {
  problem p;                        /* the problem */
  problem pref;                     /* the reference's: plain, fp32 out, bf16 for fp8 inputs */
  gemm_epi epi;                     /* its operand types and epilogue */
  int code;                         /* A's dtype code */
  size_t es, bs, os;                /* bytes of an A, a B and an output element */
  size_t a_elems, b_elems, c_elems; /* elements of A, B and C over the batch */
  CUdeviceptr A, B, C, ref,
      ws;               /* inputs, candidate output, reference product, cuBLASLt workspace */
  CUdeviceptr A16, B16; /* fp8 inputs: their bf16 copies, which the reference multiplies */
  CUdeviceptr cin, bias, res, scales; /* the epilogue's inputs (0 when unused); scales: sa, sb */
  gemm_epi_args args;                 /* what the templates get */
  size_t ws_size;                     /* workspace bytes */
  float *host_ref;                    /* the reference output (after the epilogue, unrounded) */
  unsigned char *host_c;              /* candidate copy for verification (output type) */
  double ref_sq;                      /* sum of squares of the reference */
  double tol;                     /* the tolerance verification holds candidates to (gemm_tolerance
                                  of the problem, or a candidate's own: gpu_tolerance) */
  cublasLtHandle_t lt;            /* cuBLASLt handle (current context) */
  gemm_lt_desc ref_desc;          /* the reference matmul */
  gemm_lt_desc desc[2];           /* candidates: [0] CUBLAS_COMPUTE_32F, [1] 32F_FAST_TF32 (f32) or
                                  FAST_ACCUM (fp8); with the problem's epilogue */
  int ndesc;                      /* descriptors made: 0 when cuBLASLt cannot fuse the epilogue */
  int nlib;                       /* library candidates listed */
  gemm_lt_algo lib[GEMM_LIB_MAX]; /* their descriptions */
  cublasLtMatmulAlgo_t lib_algo[GEMM_LIB_MAX]; /* and configured algorithms */
};

void gemm_gpu_buffers(const family_gpu *g, CUdeviceptr *A, CUdeviceptr *B, CUdeviceptr *C) {
  *A = g->A;
  *B = g->B;
  *C = g->C;
}
size_t gemm_gpu_workspace_bytes(const family_gpu *g) { return g->ws_size; }
void gemm_gpu_epi_args(const family_gpu *g, gemm_epi_args *out) { *out = g->args; }

/* The per-tensor scale of seeded fp8 inputs: amax / max_finite with amax 1 (gemm.h). */
static float gemm_fp8_scale(int code) {
  return code == GEMM_CODE_E4M3 ? 1.0f / NUM_E4M3_MAX : 1.0f / NUM_E5M2_MAX;
}
/* +vscale: row i of A (column i of B) stands for values of amax 2^(i % 7 - 3) (2^(i % 5 - 2)),
 * quantised with that amax: the same stored values as the per-tensor case, each row's scale
 * apart. */
static float gemm_fp8_vscale(int code, long long i, int of_b) {
  return gemm_fp8_scale(code) * ldexpf(1.0f, of_b ? (int)(i % 5) - 2 : (int)(i % 7) - 3);
}

/* Element i of a buffer of type code (gemm_dtype_code, or for outputs 0/1/2) as a double. */
static double gemm_elem(const unsigned char *buf, size_t i, int code) {
  switch (code) {
    case 0: {
      float f;
      memcpy(&f, buf + 4 * i, 4);
      return f;
    }
    case 1: {
      uint16_t h;
      memcpy(&h, buf + 2 * i, 2);
      return num_f16_to_f32(h);
    }
    case 2: {
      uint16_t h;
      memcpy(&h, buf + 2 * i, 2);
      return num_bf16_to_f32(h);
    }
    case GEMM_CODE_E4M3: return num_e4m3_to_f32(buf[i]);
    case GEMM_CODE_E5M2: return num_e5m2_to_f32(buf[i]);
    default: return NAN;
  }
}

/* Stores v in element i of a buffer of type code, rounded to nearest even (fp8: v / scale,
 * saturating). */
static void gemm_put(unsigned char *buf, size_t i, int code, float v, float scale) {
  if (code == 0)
    memcpy(buf + 4 * i, &v, 4);
  else if (code == 1 || code == 2) {
    uint16_t h = code == 1 ? num_f32_to_f16(v) : num_f32_to_bf16(v);
    memcpy(buf + 2 * i, &h, 2);
  } else {
    buf[i] = code == GEMM_CODE_E4M3 ? num_f32_to_e4m3(v / scale, 1) : num_f32_to_e5m2(v / scale, 1);
  }
}

/* Uploads n seeded uniform [-1, 1) values rounded to type code (fp8: divided by its scale
 * first) in 1 Mi-element pieces; for fp8 also their exact bf16 copies to dst16, and with host
 * != NULL the stored values as floats there. */
static rt_status gemm_upload_random(CUdeviceptr dst, CUdeviceptr dst16, float *host, size_t n,
                                    int code, uint64_t seed, rt_error *err) {
  const size_t piece = (size_t)1 << 20, es = (size_t)gemm_code_bytes(code);
  const float scale = GEMM_IS_FP8(code) ? gemm_fp8_scale(code) : 1.0f;
  unsigned char *buf = malloc(piece * es), *b16 = dst16 ? malloc(piece * 2) : NULL;
  if (!buf || (dst16 && !b16)) {
    free(buf);
    free(b16);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory for gemm inputs");
  }
  uint64_t s = seed;
  rt_status st = RT_OK;
  for (size_t off = 0; off < n && !st; off += piece) {
    size_t cnt = n - off < piece ? n - off : piece;
    for (size_t i = 0; i < cnt; i++) {
      float v = (float)((double)(num_rng(&s) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
      gemm_put(buf, i, code, v, scale);
      const float stored = (float)gemm_elem(buf, i, code);
      if (b16) gemm_put(b16, i, 2, stored, 1.0f); /* exact: every fp8 value is a bf16 value */
      if (host) host[off + i] = stored;
    }
    st = cuda_check(cu.cuMemcpyHtoD_v2(dst + off * es, buf, cnt * es), "upload gemm inputs", err);
    if (!st && b16)
      st = cuda_check(cu.cuMemcpyHtoD_v2(dst16 + off * 2, b16, cnt * 2), "upload gemm inputs", err);
  }
  free(buf);
  free(b16);
  return st;
}

static void gemm_gpu_teardown(family_gpu *g) {
  if (!g) return;
  gemm_lt_desc_free(&g->ref_desc);
  gemm_lt_desc_free(&g->desc[0]);
  gemm_lt_desc_free(&g->desc[1]);
  if (g->lt) cublasLtDestroy(g->lt);
  CUdeviceptr *bufs[] = {&g->A,   &g->B,   &g->C,    &g->ref, &g->ws,    &g->A16,
                         &g->B16, &g->cin, &g->bias, &g->res, &g->scales};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (*bufs[i]) cu.cuMemFree_v2(*bufs[i]);
  free(g->host_ref);
  free(g->host_c);
  free(g);
}

static rt_status gemm_alloc(CUdeviceptr *p, size_t bytes, const char *what, rt_error *err) {
  CUresult r = cu.cuMemAlloc_v2(p, bytes ? bytes : 1);
  if (r == CUDA_SUCCESS) return RT_OK;
  char w[96];
  snprintf(w, sizeof w, "allocate %zu bytes for gemm %s", bytes, what);
  return cuda_check(r, w, err);
}

/* The reference's problem: the same dims and layout, no options, bf16 for fp8 inputs. */
static rt_status gemm_reference_problem(const problem *p, const gemm_epi *e, problem *out,
                                        rt_error *err) {
  char shape[64];
  snprintf(shape, sizeof shape, "%.*s", (int)strcspn(p->shape, "+"), p->shape);
  return gemm_parse_shape(&gemm_family, shape, GEMM_IS_FP8(e->a_code) ? "bf16" : p->dtype, NULL,
                          out, err);
}

/* The candidates' descriptors: f32 tf32 beside fp32, fp8 fast accumulation beside promotion;
 * none when cuBLASLt cannot fuse the epilogue. */
static rt_status gemm_make_descs(family_gpu *g, const problem *p, int fp8, rt_error *err) {
  rt_status st;
  const int two = g->code == 0 || fp8;
  rt_error derr = {0};
  g->ndesc = 0;
  for (int i = 0; i < 1 + two; i++) {
    st = gemm_lt_desc_make_epi(p, g->code == 0 && i, fp8 && i, &g->args, &g->desc[i], &derr);
    if (st == RT_ERR_UNSUPPORTED) break;
    if (st) {
      *err = derr;
      return st;
    }
    g->ndesc++;
  }
  return RT_OK;
}

/* The product on the host in double precision, into host_ref: what the reference is on the sim
 * (cu.sim), which has no cuBLASLt.  A is M x K, B K x N (nn) or N x K (nt), row-major per batch. */
static rt_status gemm_reference_host(family_gpu *g, size_t M, size_t N, rt_error *err) {
  const size_t K = (size_t)problem_dim(&g->p, "K"), batch = (size_t)problem_dim(&g->p, "BATCH");
  const int nt = !strcmp(g->p.layout, "nt");
  unsigned char *a = malloc(g->a_elems * g->es), *b = malloc(g->b_elems * g->bs);
  double *arow = malloc(K * sizeof *arow), *bt = malloc(K * N * sizeof *bt);
  rt_status st = RT_OK;
  if (!a || !b || !arow || !bt)
    st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for the host reference");
  if (!st) st = cuda_check(cu.cuMemcpyDtoH_v2(a, g->A, g->a_elems * g->es), "read A", err);
  if (!st) st = cuda_check(cu.cuMemcpyDtoH_v2(b, g->B, g->b_elems * g->bs), "read B", err);
  for (size_t bi = 0; bi < batch && !st; bi++) {
    for (size_t n = 0; n < N; n++) /* B's column n, K-contiguous */
      for (size_t k = 0; k < K; k++)
        bt[n * K + k] = gemm_elem(b, bi * K * N + (nt ? n * K + k : k * N + n), g->epi.b_code);
    for (size_t m = 0; m < M; m++) {
      for (size_t k = 0; k < K; k++) arow[k] = gemm_elem(a, (bi * M + m) * K + k, g->code);
      for (size_t n = 0; n < N; n++) {
        double s = 0;
        for (size_t k = 0; k < K; k++) s += arow[k] * bt[n * K + k];
        g->host_ref[(bi * M + m) * N + n] = (float)s;
      }
    }
  }
  free(a);
  free(b);
  free(arow);
  free(bt);
  return st;
}

/* The reference: cuBLASLt's own choice with true fp32 compute and an fp32 output (bf16 copies
 * of fp8 inputs), or on the sim the host's product, then the epilogue here in double precision:
 * host_ref and ref_sq.
 * SC: the fp8 scales; VSC, HC, HBIAS, HRES: the vector scales, C input, bias and residual on the
 * host (NULL: none). */
static rt_status gemm_reference_run(family_gpu *g, CUstream stream, int fp8, size_t M, size_t N,
                                    const float sc[2], const float *vsc, const float *hc,
                                    const float *hbias, const float *hres, rt_error *err) {
  const gemm_epi *e = &g->epi;
  rt_status st;
  cublasLtMatmulHeuristicResult_t r;
  int n = 0;
  const CUdeviceptr ra = fp8 ? g->A16 : g->A, rb = fp8 ? g->B16 : g->B;
  if (cu.sim) {
    if ((st = gemm_reference_host(g, M, N, err))) return st;
  } else if ((st = gemm_lt_heuristic(g->lt, &g->ref_desc, g->ws_size, 1, &r, &n, err)) ||
             (st = cuda_check(cu.cuMemsetD32Async(g->ref, 0x7fc00000u, g->c_elems, stream),
                              "poison reference", err)) ||
             (st = gemm_lt_run(g->lt, &g->ref_desc, &r.algo, ra, rb, 0, 1.0f, 0.0f, g->ref, g->ws,
                               g->ws_size, stream, err)) ||
             (st = cuda_check(cu.cuStreamSynchronize(stream), "reference matmul", err)) ||
             (st = cuda_check(cu.cuMemcpyDtoH_v2(g->host_ref, g->ref, g->c_elems * 4),
                              "download reference", err)))
    return st;
  const double s = (double)g->args.alpha * sc[0] * sc[1];
  for (size_t i = 0; i < g->c_elems; i++) {
    /* +vscale: element (m, n) of batch b is at b*M*N + m*N + n */
    const double si = vsc ? (double)g->args.alpha * vsc[i % (M * N) / N] * vsc[M + i % N] : s;
    double v = g->host_ref[i];
    if (!isfinite(v)) {
      return rt_error_set(err, RT_ERR_INTERNAL,
                          "the cuBLASLt reference has a non-finite element at %zu", i);
    }
    if (e->on) {
      v = gemm_epi_reference(e, si, g->args.beta, v, hc ? hc[i] : 0, hbias ? hbias[i % N] : 0,
                             hres ? hres[i] : 0);
      g->host_ref[i] = (float)v;
    }
    g->ref_sq += v * v;
  }
  return RT_OK;
}

static rt_status gemm_gpu_setup(const family_ops *self, const problem *p, uint64_t seed,
                                const family_reference *ref, CUstream stream, family_gpu **out,
                                rt_error *err) {
  (void)self;
  (void)ref; /* the reference is cuBLASLt's own */
  *out = NULL;
  if (!cu.handle)
    return rt_error_set(err, RT_ERR_NO_DRIVER,
                        "gemm needs a loaded CUDA driver and a current context");
  family_gpu *g = calloc(1, sizeof *g);
  if (!g) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  float *hc = NULL, *hbias = NULL, *hres = NULL, *vsc = NULL;
  g->p = *p;
  rt_status st;
  if ((st = gemm_problem_epi(p, &g->epi, err)) ||
      (st = gemm_reference_problem(p, &g->epi, &g->pref, err))) {
    free(g);
    return st;
  }
  const gemm_epi *e = &g->epi;
  const int fp8 = GEMM_IS_FP8(e->a_code);
  g->code = e->a_code;
  g->es = (size_t)gemm_code_bytes(e->a_code);
  g->bs = (size_t)gemm_code_bytes(e->b_code);
  g->os = (size_t)gemm_out_bytes(e->out_code);
  const size_t M = (size_t)problem_dim(p, "M"), N = (size_t)problem_dim(p, "N"),
               K = (size_t)problem_dim(p, "K"), batch = (size_t)problem_dim(p, "BATCH");
  g->a_elems = batch * M * K;
  g->b_elems = batch * K * N;
  g->c_elems = batch * M * N;
  g->ws_size = GEMM_WORKSPACE;
  if ((st = gemm_alloc(&g->A, g->a_elems * g->es, "A", err)) ||
      (st = gemm_alloc(&g->B, g->b_elems * g->bs, "B", err)) ||
      (st = gemm_alloc(&g->C, g->c_elems * g->os, "C", err)) ||
      (st = gemm_alloc(&g->ref, g->c_elems * 4, "reference", err)) ||
      (st = gemm_alloc(&g->ws, g->ws_size, "workspace", err)) ||
      (fp8 && ((st = gemm_alloc(&g->A16, g->a_elems * 2, "A's bf16 copy", err)) ||
               (st = gemm_alloc(&g->B16, g->b_elems * 2, "B's bf16 copy", err)) ||
               (st = gemm_alloc(&g->scales, e->vscale ? 4 * (M + N) : 8, "scales", err)))) ||
      (e->beta && (st = gemm_alloc(&g->cin, g->c_elems * g->os, "C input", err))) ||
      (e->bias && (st = gemm_alloc(&g->bias, N * g->os, "bias", err))) ||
      (e->residual && (st = gemm_alloc(&g->res, g->c_elems * g->os, "residual", err))))
    goto fail;
  g->host_ref = malloc(g->c_elems * 4);
  g->host_c = malloc(g->c_elems * 4);
  hc = e->beta ? malloc(g->c_elems * 4) : NULL;
  hbias = e->bias ? malloc(N * 4) : NULL;
  hres = e->residual ? malloc(g->c_elems * 4) : NULL;
  if (!g->host_ref || !g->host_c || (e->beta && !hc) || (e->bias && !hbias) ||
      (e->residual && !hres)) {
    st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for %zu output elements", g->c_elems);
    goto fail;
  }
  if ((st = gemm_upload_random(g->A, g->A16, NULL, g->a_elems, e->a_code, seed ^ 0xa11ce5eedull,
                               err)) ||
      (st = gemm_upload_random(g->B, g->B16, NULL, g->b_elems, e->b_code, seed ^ 0xb0b5eedull,
                               err)) ||
      (e->beta && (st = gemm_upload_random(g->cin, 0, hc, g->c_elems, e->out_code,
                                           seed ^ 0xc0ffeeull, err))) ||
      (e->bias &&
       (st = gemm_upload_random(g->bias, 0, hbias, N, e->out_code, seed ^ 0xb1a5ull, err))) ||
      (e->residual &&
       (st = gemm_upload_random(g->res, 0, hres, g->c_elems, e->out_code, seed ^ 0x7e51dull, err))))
    goto fail;
  /* the epilogue's scalars (gemm.h): alpha 3/sqrt(K) gives an output of RMS about 1 */
  const float sc[2] = {fp8 ? gemm_fp8_scale(e->a_code) : 1.0f,
                       fp8 ? gemm_fp8_scale(e->b_code) : 1.0f};
  if (e->vscale) {
    vsc = malloc(4 * (M + N));
    if (!vsc) {
      st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for the fp8 scale vectors");
      goto fail;
    }
    for (size_t i = 0; i < M; i++) vsc[i] = gemm_fp8_vscale(e->a_code, (long long)i, 0);
    for (size_t i = 0; i < N; i++) vsc[M + i] = gemm_fp8_vscale(e->b_code, (long long)i, 1);
    if ((st = cuda_check(cu.cuMemcpyHtoD_v2(g->scales, vsc, 4 * (M + N)),
                         "upload the fp8 scale vectors", err)))
      goto fail;
  } else if (fp8 && (st = cuda_check(cu.cuMemcpyHtoD_v2(g->scales, sc, sizeof sc),
                                     "upload the fp8 scales", err))) {
    goto fail;
  }
  g->args.c = g->cin;
  g->args.bias = g->bias;
  g->args.residual = g->res;
  g->args.scale_a = fp8 ? g->scales : 0;
  g->args.scale_b = fp8 ? g->scales + (e->vscale ? 4 * M : 4) : 0;
  g->args.alpha = e->on ? (float)(3.0 / sqrt((double)K)) : 1.0f;
  g->args.beta = e->beta ? 0.5f : 0.0f;
  g->args.flags = (e->beta ? GEMM_EPI_BETA : 0u) | (e->bias ? GEMM_EPI_BIAS : 0u) |
                  (e->residual ? GEMM_EPI_RES : 0u) | (e->vscale ? GEMM_EPI_VSCALE : 0u) |
                  ((unsigned)e->act << GEMM_EPI_ACT_SHIFT);
  /* a copy from pageable memory may return before its DMA lands, and the candidates' stream
   * does not wait for the default stream: wait here, once */
  if ((st = cuda_check(cu.cuCtxSynchronize(), "finish the input upload", err))) goto fail;
  /* the sim has no cuBLASLt: no library candidates, the reference on the host */
  if (!cu.sim && ((st = gemm_lt_check(cublasLtCreate(&g->lt), "cublasLtCreate", err)) ||
                  (st = gemm_lt_desc_make(&g->pref, 0, &g->ref_desc, err))))
    goto fail;
  if ((!cu.sim && (st = gemm_make_descs(g, p, fp8, err))) ||
      (st = gemm_reference_run(g, stream, fp8, M, N, sc, vsc, hc, hbias, hres, err)))
    goto fail;
  free(hc);
  free(hbias);
  free(hres);
  free(vsc);
  *out = g;
  return RT_OK;
fail:
  free(hc);
  free(hbias);
  free(hres);
  free(vsc);
  gemm_gpu_teardown(g);
  return st;
}

static rt_status gemm_gpu_poison(family_gpu *g, CUstream stream, rt_error *err) {
  if (g->os == 4)
    return cuda_check(cu.cuMemsetD32Async(g->C, 0x7fc00000u, g->c_elems, stream),
                      "poison gemm output", err);
  const unsigned short nan = g->epi.out_code == GEMM_OUT_F16 ? 0x7e00u : 0x7fc0u;
  return cuda_check(cu.cuMemsetD16Async(g->C, nan, g->c_elems, stream), "poison gemm output", err);
}

static rt_status gemm_gpu_launch(family_gpu *g, CUfunction fn, const rt_vars *config,
                                 const unsigned grid[3], const unsigned block[3], unsigned smem,
                                 CUstream stream, rt_error *err) {
  int M = (int)problem_dim(&g->p, "M"), N = (int)problem_dim(&g->p, "N"),
      K = (int)problem_dim(&g->p, "K");
  long long split = 1;
  rt_vars_get(config, "SPLIT_K", &split);
  rt_status st = family_allow_smem(fn, smem, err);
  if (st) return st;
  /* split-K adds partial sums with atomics: the output (fp32: the manifests' constraints)
   * starts at zero */
  if (split > 1 && g->os != 4)
    return rt_error_set(err, RT_ERR_INVALID, "split-K adds fp32 partial sums; this output is %s",
                        gemm_out_names[g->epi.out_code]);
  if (split > 1 && (st = cuda_check(cu.cuMemsetD32Async(g->C, 0, g->c_elems, stream),
                                    "zero the split-K output", err)))
    return st;
  /* the seventh, the epilogue's argument, is read only by a kernel that declares it (the driver
   * reads as many as the kernel has) */
  void *args[7] = {&g->A, &g->B, &g->C, &M, &N, &K, &g->args};
  CUtensorMap ma, mb;
  if (rt_vars_find(config, "TMA_BOX_K") >= 0) {
    if ((st = gemm_tma_maps(&g->p, config, g->A, g->B, &ma, &mb, err))) return st;
    args[0] = &ma;
    args[1] = &mb;
  }
  return cuda_check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                      smem, stream, args, NULL),
                    "launch gemm template", err);
}

static rt_status gemm_gpu_verify(family_gpu *g, double *rel_error, rt_error *err) {
  rt_status st;
  *rel_error = NAN;
  if ((st = cuda_check(cu.cuCtxSynchronize(), "finish the gemm candidate", err)) ||
      (st = cuda_check(cu.cuMemcpyDtoH_v2(g->host_c, g->C, g->c_elems * g->os),
                       "download gemm output", err)))
    return st;
  const double tol = g->tol > 0 ? g->tol : gemm_tolerance(&gemm_family, &g->p);
  const double rms = sqrt(g->ref_sq / (double)g->c_elems);
  double diff_sq = 0;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < g->c_elems; i++) {
    double c = gemm_elem(g->host_c, i, g->epi.out_code), r = g->host_ref[i], d = c - r;
    if (!isfinite(c) || fabs(d) > 32 * tol * rms) {
      if (!bad++) first_bad = i;
      if (!isfinite(c)) diff_sq = INFINITY;
    }
    diff_sq += d * d;
  }
  double rel = g->ref_sq > 0 ? sqrt(diff_sq / g->ref_sq) : sqrt(diff_sq);
  if (bad && isfinite(rel) && rel <= tol)
    rel = nextafter(tol, INFINITY); /* an outlier never passes */
  *rel_error = rel;
  if (bad || !(rel <= tol)) {
    const size_t N = (size_t)problem_dim(&g->p, "N"), M = (size_t)problem_dim(&g->p, "M");
    if (!bad)
      return rt_error_set(err, RT_ERR_WRONG_RESULT,
                          "gemm output differs from the cuBLASLt reference: relative error %.3g "
                          "over tolerance %.1g for %s",
                          rel, tol, g->p.dtype);
    return rt_error_set(err, RT_ERR_WRONG_RESULT,
                        "gemm output differs from the cuBLASLt reference: relative error %.3g "
                        "(tolerance %.1g for %s), "
                        "%zu elements NaN or off by more than 32 tolerances of the reference RMS, "
                        "first at batch %zu "
                        "row %zu column %zu (%g, expected %g)",
                        rel, tol, g->p.dtype, bad, first_bad / (M * N), first_bad % (M * N) / N,
                        first_bad % N, gemm_elem(g->host_c, first_bad, g->epi.out_code),
                        (double)g->host_ref[first_bad]);
  }
  return RT_OK;
}

static void gemm_gpu_tolerance(family_gpu *g, double tolerance) { g->tol = tolerance; }

static rt_status gemm_library_list(family_gpu *g, int max, int *count, rt_error *err) {
  if (max > GEMM_LIB_MAX) max = GEMM_LIB_MAX;
  *count = g->nlib = 0;
  if (max <= 0 || g->ndesc == 0) return RT_OK; /* no fused form of this epilogue in cuBLASLt */
  cublasLtMatmulHeuristicResult_t r0[GEMM_LIB_MAX], r1[GEMM_LIB_MAX];
  int n0 = 0, n1 = 0;
  rt_status st = gemm_lt_heuristic(g->lt, &g->desc[0], g->ws_size, max, r0, &n0, err);
  /* what cuBLASLt does not take (fp8 e5m2 x e5m2, an output or bias type of an epilogue) has
   * no candidates rather than an error: the templates still tune */
  if (st == RT_ERR_UNSUPPORTED || (st == RT_ERR_CUBLAS && g->epi.on)) {
    n0 = 0;
    st = RT_OK;
  }
  if (st) return st;
  if (g->ndesc > 1 &&
      gemm_lt_heuristic(g->lt, &g->desc[1], g->ws_size, max, r1, &n1, NULL) != RT_OK)
    n1 = 0;
  /* tf32: the FAST_TF32 algorithms alone; f32: tf32 and fp32 algorithms alternate, tf32 first
   * (the tuner runs the tf32 ones in an f32 run only when asked to: --allow-tf32); fp8:
   * promoting and fast-accumulating ones alternate, promoting first */
  if (!strcmp(g->p.dtype, "tf32")) n0 = 0;
  const int second_first = g->code == 0;
  int i0 = 0, i1 = 0;
  while (g->nlib < max && (i0 < n0 || i1 < n1)) {
    int use1 = i1 < n1 && (i0 >= n0 || (second_first ? i1 <= i0 : i1 < i0));
    const cublasLtMatmulHeuristicResult_t *r = use1 ? &r1[i1++] : &r0[i0++];
    if (r->state != CUBLAS_STATUS_SUCCESS) continue;
    if ((st = gemm_lt_algo_read(&r->algo, use1 && g->code == 0, &g->lib[g->nlib], err))) return st;
    g->lib[g->nlib].fast_accum = use1 && GEMM_IS_FP8(g->code);
    g->lib_algo[g->nlib++] = r->algo;
  }
  *count = g->nlib;
  return RT_OK;
}

static rt_status gemm_library_describe(family_gpu *g, int i, char *buf, size_t size,
                                       rt_error *err) {
  if (i < 0 || i >= g->nlib)
    return rt_error_set(err, RT_ERR_NOT_FOUND, "no cuBLASLt candidate %d (%d listed)", i, g->nlib);
  gemm_lt_algo_format(&g->lib[i], buf, size);
  return RT_OK;
}

static rt_status gemm_library_launch(family_gpu *g, int i, CUstream stream, rt_error *err) {
  if (i < 0 || i >= g->nlib)
    return rt_error_set(err, RT_ERR_NOT_FOUND, "no cuBLASLt candidate %d (%d listed)", i, g->nlib);
  const gemm_lt_desc *d = &g->desc[g->lib[i].tf32 || g->lib[i].fast_accum ? 1 : 0];
  CUdeviceptr c;
  float beta;
  gemm_lt_c(d, &g->args, &c, &beta);
  return gemm_lt_run(g->lt, d, &g->lib_algo[i], g->A, g->B, c, g->args.alpha, beta, g->C, g->ws,
                     g->ws_size, stream, err);
}

const family_ops gemm_family = {
    GEMM_SERVING_OPS,
    .flops = gemm_flops,
    .min_bytes = gemm_min_bytes,
    .tolerance = gemm_tolerance,
    .gpu_setup = gemm_gpu_setup,
    .gpu_teardown = gemm_gpu_teardown,
    .gpu_poison = gemm_gpu_poison,
    .gpu_launch = gemm_gpu_launch,
    .gpu_verify = gemm_gpu_verify,
    .gpu_tolerance = gemm_gpu_tolerance,
    .library_list = gemm_library_list,
    .library_describe = gemm_library_describe,
    .library_launch = gemm_library_launch,
    .fused_bytes = gemm_fused_bytes,
};
