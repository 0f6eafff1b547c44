/* gemm.c — the GEMM family: shapes, facts, inputs, the cuBLASLt reference, verification,
 * template launches and cuBLASLt candidates.  See gemm.h for the syntax and the kernel ABI. */
#include "kernels/gemm.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/numeric.h"
#include "tuner/driver/cuda_driver.h"

#define GEMM_SHAPE_HELP \
  "[BATCH@]MxNxK[:nn|:nt] with positive integers (nt: B stored N x K), e.g. 4096x4096x4096 or 8@128x4096x4096:nt"
/* Kernels take int dimensions and do their tile arithmetic in 32 bits (ceil_div(M, BLOCK_M),
 * tile * BLOCK_M + offset): a dimension leaves room for one more tile of up to 1024. */
#define GEMM_MAX_DIM (2147483647LL - 1024)
#define GEMM_MAX_BATCH 4096       /* grid z carries SPLIT_K*BATCH (<= 65535) */
#define GEMM_LIB_MAX 64
#define GEMM_WORKSPACE (32u << 20) /* cuBLASLt workspace */

/* ---------------------------------------------------------------- dtypes and conversions */

int gemm_dtype_code(const char *dtype) {
  if (!dtype) return -1;
  if (!strcmp(dtype, "f32") || !strcmp(dtype, "tf32")) return 0; /* tf32: fp32 inputs */
  if (!strcmp(dtype, "f16")) return 1;
  if (!strcmp(dtype, "bf16")) return 2;
  return -1;
}

int gemm_dtype_bytes(const char *dtype) {
  int c = gemm_dtype_code(dtype);
  return c < 0 ? 0 : c == 0 ? 4 : 2;
}

/* ---------------------------------------------------------------- host side */


/* Reads a positive decimal integer at *s; advances *s.  0 when there is none. */
static long long gemm_number(const char **s) {
  const char *q = *s;
  long long v = 0;
  if (*q < '0' || *q > '9') return 0;
  while (*q >= '0' && *q <= '9') {
    if (v > (LLONG_MAX - 9) / 10) return -1;
    v = v * 10 + (*q++ - '0');
  }
  *s = q;
  return v;
}

static rt_status gemm_bad_shape(rt_error *err, const char *shape, const char *why) {
  rt_error_set(err, RT_ERR_PARSE, "bad gemm shape \"%s\": %s; expected %s", shape, why,
               GEMM_SHAPE_HELP);
  rt_error_locate(err, "--shape", NULL, 0, 0);
  return RT_ERR_PARSE;
}

static rt_status gemm_parse_shape(const family_ops *self, const char *shape, const char *dtype,
                                  const char *args, problem *out, rt_error *err) {
  (void)self;
  if (args && *args) {
    rt_error_locate(err, "--kv-lens", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_USAGE, "the gemm family takes no per-sequence lengths");
  }
  if (!shape || !*shape) return gemm_bad_shape(err, shape ? shape : "", "it is empty");
  if (gemm_dtype_code(dtype) < 0) {
    rt_error_set(err, RT_ERR_INVALID, "unknown gemm dtype \"%s\": use f32, tf32, f16 or bf16",
                 dtype ? dtype : "");
    rt_error_locate(err, "--dtype", NULL, 0, 0);
    return RT_ERR_INVALID;
  }
  const char *s = shape;
  long long batch = 1, v[3];
  const char *at = strchr(shape, '@');
  if (at) {
    batch = gemm_number(&s);
    if (batch <= 0 || s != at) return gemm_bad_shape(err, shape, "the batch before '@' must be a positive integer");
    if (batch > GEMM_MAX_BATCH) return gemm_bad_shape(err, shape, "the batch is larger than 4096");
    s = at + 1;
  }
  static const char *const names[3] = {"M", "N", "K"};
  for (int i = 0; i < 3; i++) {
    long long x = gemm_number(&s);
    if (x <= 0) {
      char why[96];
      snprintf(why, sizeof why, "%s must be a positive integer", names[i]);
      return gemm_bad_shape(err, shape, why);
    }
    if (x > GEMM_MAX_DIM) {
      char why[96];
      snprintf(why, sizeof why, "%s is larger than %lld (the kernels' tile arithmetic is 32-bit)", names[i],
               GEMM_MAX_DIM);
      return gemm_bad_shape(err, shape, why);
    }
    v[i] = x;
    if (i < 2) {
      if (*s != 'x') return gemm_bad_shape(err, shape, "dimensions are separated by 'x'");
      s++;
    }
  }
  char layout[8] = "nn";
  if (*s == ':') {
    s++;
    if (!strcmp(s, "nn") || !strcmp(s, "nt")) {
      snprintf(layout, sizeof layout, "%s", s);
    } else if (!strcmp(s, "tn") || !strcmp(s, "tt")) {
      return gemm_bad_shape(err, shape, "A must be row-major (layouts tn and tt are not supported); use nn or nt");
    } else {
      return gemm_bad_shape(err, shape, "the layout after ':' must be nn or nt");
    }
  } else if (*s) {
    return gemm_bad_shape(err, shape, "unexpected text after K");
  }
  memset(out, 0, sizeof *out);
  snprintf(out->family, sizeof out->family, "gemm");
  snprintf(out->dtype, sizeof out->dtype, "%s", dtype);
  snprintf(out->layout, sizeof out->layout, "%s", layout);
  out->ndims = 4;
  static const char *const all[4] = {"M", "N", "K", "BATCH"};
  long long vals[4] = {v[0], v[1], v[2], batch};
  for (int i = 0; i < 4; i++) {
    snprintf(out->dim_names[i], sizeof out->dim_names[i], "%s", all[i]);
    out->dims[i] = vals[i];
  }
  char b[24] = "";
  if (batch > 1) snprintf(b, sizeof b, "%lld@", batch);
  snprintf(out->shape, sizeof out->shape, "%s%lldx%lldx%lld%s", b, v[0], v[1], v[2],
           strcmp(layout, "nt") ? "" : ":nt");
  return RT_OK;
}

static rt_status gemm_bind(const family_ops *self, const problem *p, rt_vars *vars) {
  (void)self;
  rt_status st;
  int code = gemm_dtype_code(p->dtype);
  if (code < 0) return RT_ERR_INVALID;
  if ((st = rt_vars_set(vars, "M", problem_dim(p, "M"))) ||
      (st = rt_vars_set(vars, "N", problem_dim(p, "N"))) ||
      (st = rt_vars_set(vars, "K", problem_dim(p, "K"))) ||
      (st = rt_vars_set(vars, "BATCH", problem_dim(p, "BATCH"))) ||
      (st = rt_vars_set(vars, "dtype_bytes", gemm_dtype_bytes(p->dtype))) ||
      (st = rt_vars_set(vars, "b_col", !strcmp(p->layout, "nt"))) ||
      (st = rt_vars_set(vars, "out_bytes", 4)))
    return st;
  return RT_OK;
}

static double gemm_flops(const family_ops *self, const problem *p) {
  (void)self;
  return 2.0 * (double)problem_dim(p, "M") * (double)problem_dim(p, "N") * (double)problem_dim(p, "K") *
         (double)problem_dim(p, "BATCH");
}

static double gemm_min_bytes(const family_ops *self, const problem *p) {
  (void)self;
  double m = (double)problem_dim(p, "M"), n = (double)problem_dim(p, "N"), k = (double)problem_dim(p, "K");
  return (double)problem_dim(p, "BATCH") * (gemm_dtype_bytes(p->dtype) * (m * k + k * n) + 4.0 * m * n);
}

static double gemm_tolerance(const family_ops *self, const problem *p) {
  (void)self;
  /* f32 (fp32 products), f16/bf16 (exact products of the rounded inputs): both sides add in
   * fp32, only the summation order differs (~sqrt(K) * 2^-24).  tf32: the inputs are rounded to
   * 10 mantissa bits before the products (relative error ~5e-4 against fp32). */
  return !strcmp(p->dtype, "tf32") ? 3e-3 : 1e-4;
}

/* ---------------------------------------------------------------- cuBLASLt */

static rt_status gemm_lt_check(cublasStatus_t s, const char *what, rt_error *err) {
  if (s == CUBLAS_STATUS_SUCCESS) return RT_OK;
  return rt_error_set(err, RT_ERR_CUBLAS, "%s: %s (%s)", what, cublasLtGetStatusName(s),
                      cublasLtGetStatusString(s));
}

static cudaDataType_t gemm_cuda_type(int code) {
  return code == 0 ? CUDA_R_32F : code == 1 ? CUDA_R_16F : CUDA_R_16BF;
}

/* Descriptors for row-major C = A * B computed as column-major C^T = B^T A^T. */
typedef struct gemm_lt_desc {
  cublasLtMatmulDesc_t op;      /* compute type, transposes */
  cublasLtMatrixLayout_t a, b, c; /* cuBLASLt's A (= our B), B (= our A), C = D */
} gemm_lt_desc;

static void gemm_lt_desc_free(gemm_lt_desc *d) {
  if (d->op) cublasLtMatmulDescDestroy(d->op);
  if (d->a) cublasLtMatrixLayoutDestroy(d->a);
  if (d->b) cublasLtMatrixLayoutDestroy(d->b);
  if (d->c) cublasLtMatrixLayoutDestroy(d->c);
  memset(d, 0, sizeof *d);
}

static rt_status gemm_lt_batch(cublasLtMatrixLayout_t l, int32_t batch, int64_t stride,
                               rt_error *err) {
  rt_status st = gemm_lt_check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch),
                               "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)", err);
  if (st) return st;
  return gemm_lt_check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
                       "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)", err);
}

static rt_status gemm_lt_desc_make(const problem *p, int tf32, gemm_lt_desc *d, rt_error *err) {
  memset(d, 0, sizeof *d);
  const uint64_t M = (uint64_t)problem_dim(p, "M"), N = (uint64_t)problem_dim(p, "N"),
                 K = (uint64_t)problem_dim(p, "K");
  const int32_t batch = (int32_t)problem_dim(p, "BATCH");
  const int code = gemm_dtype_code(p->dtype), nt = !strcmp(p->layout, "nt");
  const cudaDataType_t t = gemm_cuda_type(code);
  cublasOperation_t ta = nt ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  rt_status st;
  if ((st = gemm_lt_check(cublasLtMatmulDescCreate(&d->op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
                          "cublasLtMatmulDescCreate", err)) ||
      (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
                          "cublasLtMatmulDescSetAttribute(TRANSA)", err)) ||
      (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
                          "cublasLtMatmulDescSetAttribute(TRANSB)", err)) ||
      /* cuBLASLt's A is our B: column-major N x K (ld N) for nn, K x N (ld K) transposed for nt */
      (st = gemm_lt_check(nt ? cublasLtMatrixLayoutCreate(&d->a, t, K, N, (int64_t)K)
                             : cublasLtMatrixLayoutCreate(&d->a, t, N, K, (int64_t)N),
                          "cublasLtMatrixLayoutCreate(B)", err)) ||
      /* cuBLASLt's B is our A: column-major K x M, ld K */
      (st = gemm_lt_check(cublasLtMatrixLayoutCreate(&d->b, t, K, M, (int64_t)K), "cublasLtMatrixLayoutCreate(A)", err)) ||
      (st = gemm_lt_check(cublasLtMatrixLayoutCreate(&d->c, CUDA_R_32F, N, M, (int64_t)N), "cublasLtMatrixLayoutCreate(C)", err))) {
    gemm_lt_desc_free(d);
    return st;
  }
  if (batch > 1 && ((st = gemm_lt_batch(d->a, batch, (int64_t)(K * N), err)) ||
                    (st = gemm_lt_batch(d->b, batch, (int64_t)(M * K), err)) ||
                    (st = gemm_lt_batch(d->c, batch, (int64_t)(M * N), err)))) {
    gemm_lt_desc_free(d);
    return st;
  }
  return RT_OK;
}

/* Top `max` heuristic algorithms for the descriptors; *count of them written. */
static rt_status gemm_lt_heuristic(cublasLtHandle_t lt, const gemm_lt_desc *d, size_t ws,
                                   int max, cublasLtMatmulHeuristicResult_t *res, int *count,
                                   rt_error *err) {
  cublasLtMatmulPreference_t pref = NULL;
  uint64_t wsz = ws;
  *count = 0;
  rt_status st = gemm_lt_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", err);
  if (st) return st;
  st = gemm_lt_check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof wsz),
                     "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)", err);
  if (!st)
    st = gemm_lt_check(cublasLtMatmulAlgoGetHeuristic(lt, d->op, d->a, d->b, d->c, d->c, pref, max, res, count),
                       "cublasLtMatmulAlgoGetHeuristic", err);
  cublasLtMatmulPreferenceDestroy(pref);
  if (!st && *count == 0)
    st = rt_error_set(err, RT_ERR_UNSUPPORTED, "cuBLASLt has no algorithm for this problem");
  return st;
}

int gemm_lt_algo_format(const gemm_lt_algo *a, char *buf, size_t size) {
  return snprintf(buf, size,
                  "cublaslt compute=%s id=%d tile=%u stages=%u splitk=%d reduction=%u swizzle=%u "
                  "custom=%u inner=%u cluster=%u",
                  a->tf32 ? "32F_FAST_TF32" : "32F", a->id, a->tile, a->stages, a->splitk,
                  a->reduction, a->swizzle, a->custom, a->inner, a->cluster);
}

rt_status gemm_lt_algo_parse(const char *text, gemm_lt_algo *out, rt_error *err) {
  static const char *const keys[] = {"id", "tile", "stages", "splitk", "reduction",
                                     "swizzle", "custom", "inner", "cluster"};
  long long vals[9];
  if (!text || strncmp(text, "cublaslt ", 9) != 0)
    return rt_error_set(err, RT_ERR_PARSE, "bad cuBLASLt algorithm \"%s\": it must start with \"cublaslt \"",
                        text ? text : "");
  memset(out, 0, sizeof *out);
  const char *c = strstr(text, " compute=");
  if (!c) return rt_error_set(err, RT_ERR_PARSE, "bad cuBLASLt algorithm \"%s\": compute= is missing", text);
  c += 9;
  if (!strncmp(c, "32F_FAST_TF32", 13) && (c[13] == ' ' || !c[13])) out->tf32 = 1;
  else if (!strncmp(c, "32F", 3) && (c[3] == ' ' || !c[3])) out->tf32 = 0;
  else return rt_error_set(err, RT_ERR_PARSE, "bad cuBLASLt algorithm \"%s\": compute must be 32F or 32F_FAST_TF32", text);
  for (int i = 0; i < 9; i++) {
    char key[24];
    snprintf(key, sizeof key, " %s=", keys[i]);
    const char *k = strstr(text, key);
    if (!k) return rt_error_set(err, RT_ERR_PARSE, "bad cuBLASLt algorithm \"%s\": %s= is missing", text, keys[i]);
    k += strlen(key);
    char *end;
    errno = 0;
    vals[i] = strtoll(k, &end, 10);
    if (end == k || (*end && *end != ' ') || errno || vals[i] < 0 || vals[i] > INT_MAX)
      return rt_error_set(err, RT_ERR_PARSE, "bad cuBLASLt algorithm \"%s\": %s must be a non-negative integer",
                          text, keys[i]);
  }
  out->id = (int)vals[0];
  out->tile = (unsigned)vals[1];
  out->stages = (unsigned)vals[2];
  out->splitk = (int)vals[3];
  out->reduction = (unsigned)vals[4];
  out->swizzle = (unsigned)vals[5];
  out->custom = (unsigned)vals[6];
  out->inner = (unsigned)vals[7];
  out->cluster = (unsigned)vals[8];
  return RT_OK;
}

rt_status gemm_lt_algo_read(const cublasLtMatmulAlgo_t *algo, int tf32, gemm_lt_algo *out,
                            rt_error *err) {
  size_t w;
  int32_t id = 0, splitk = 1;
  uint32_t tile = 0, stages = 0, red = 0, swz = 0, custom = 0;
  uint16_t inner = 0, cluster = 0;
  rt_status st;
  memset(out, 0, sizeof *out);
  if ((st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w), "algo ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w), "algo TILE_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w), "algo STAGES_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w), "algo SPLITK_NUM", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &w), "algo REDUCTION_SCHEME", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz, &w), "algo CTA_SWIZZLING", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom, &w), "algo CUSTOM_OPTION", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner, &w), "algo INNER_SHAPE_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &w), "algo CLUSTER_SHAPE_ID", err)))
    return st;
  out->tf32 = tf32;
  out->id = id;
  out->tile = tile;
  out->stages = stages;
  out->splitk = splitk;
  out->reduction = red;
  out->swizzle = swz;
  out->custom = custom;
  out->inner = inner;
  out->cluster = cluster;
  return RT_OK;
}

/* Rebuilds a described algorithm for problem p and checks it against the descriptors. */
static rt_status gemm_lt_algo_build(cublasLtHandle_t lt, const problem *p, const gemm_lt_desc *d,
                                    const gemm_lt_algo *a, size_t ws, cublasLtMatmulAlgo_t *algo,
                                    rt_error *err) {
  const cudaDataType_t t = gemm_cuda_type(gemm_dtype_code(p->dtype));
  int32_t splitk = a->splitk;
  uint32_t tile = a->tile, stages = a->stages, red = a->reduction, swz = a->swizzle, custom = a->custom;
  uint16_t inner = (uint16_t)a->inner, cluster = (uint16_t)a->cluster;
  rt_status st;
  cublasStatus_t s = cublasLtMatmulAlgoInit(lt, a->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                            CUDA_R_32F, t, t, CUDA_R_32F, CUDA_R_32F, a->id, algo);
  if (s != CUBLAS_STATUS_SUCCESS)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "cuBLASLt algorithm %d cannot be initialized for %s: %s", a->id,
                        p->dtype, cublasLtGetStatusName(s));
  if ((st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile), "set TILE_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages), "set STAGES_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk), "set SPLITK_NUM", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red), "set REDUCTION_SCHEME", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz), "set CTA_SWIZZLING", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom), "set CUSTOM_OPTION", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner), "set INNER_SHAPE_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster), "set CLUSTER_SHAPE_ID", err)))
    return st;
  cublasLtMatmulHeuristicResult_t r;
  memset(&r, 0, sizeof r);
  s = cublasLtMatmulAlgoCheck(lt, d->op, d->a, d->b, d->c, d->c, algo, &r);
  if (s != CUBLAS_STATUS_SUCCESS)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "cuBLASLt algorithm %d does not run this problem here: %s", a->id,
                        cublasLtGetStatusName(s));
  if (r.workspaceSize > ws)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "cuBLASLt algorithm %d needs %zu bytes of workspace, %zu given",
                        a->id, r.workspaceSize, ws);
  return RT_OK;
}

static rt_status gemm_lt_run(cublasLtHandle_t lt, const gemm_lt_desc *d, const cublasLtMatmulAlgo_t *algo,
                             CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, CUdeviceptr ws, size_t ws_size,
                             CUstream stream, rt_error *err) {
  const float one = 1.0f, zero = 0.0f;
  /* C^T = B^T A^T: cuBLASLt's A operand is our B and its B operand our A. */
  return gemm_lt_check(cublasLtMatmul(lt, d->op, &one, (const void *)(uintptr_t)B, d->a, (const void *)(uintptr_t)A, d->b,
                                      &zero, (const void *)(uintptr_t)C, d->c, (void *)(uintptr_t)C, d->c, algo,
                                      (void *)(uintptr_t)ws, ws_size, (cudaStream_t)stream),
                       "cublasLtMatmul", err);
}

rt_status gemm_lt_matmul(cublasLtHandle_t lt, const problem *p, const gemm_lt_algo *a,
                         CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, CUdeviceptr workspace,
                         size_t ws_size, CUstream stream, rt_error *err) {
  gemm_lt_desc d;
  cublasLtMatmulAlgo_t algo;
  rt_status st = gemm_lt_desc_make(p, a ? a->tf32 : 0, &d, err);
  if (st) return st;
  if (a) {
    st = gemm_lt_algo_build(lt, p, &d, a, ws_size, &algo, err);
  } else {
    cublasLtMatmulHeuristicResult_t r;
    int n = 0;
    st = gemm_lt_heuristic(lt, &d, ws_size, 1, &r, &n, err);
    algo = r.algo;
  }
  if (!st) st = gemm_lt_run(lt, &d, &algo, A, B, C, workspace, ws_size, stream, err);
  gemm_lt_desc_free(&d);
  return st;
}

/* ---------------------------------------------------------------- GPU side */

struct family_gpu {
  problem p;                   /* the problem */
  int code;                    /* dtype code */
  size_t es;                   /* input element bytes */
  size_t a_elems, b_elems, c_elems; /* elements of A, B and C over the batch */
  CUdeviceptr A, B, C, ref, ws; /* inputs, candidate output, reference output, cuBLASLt workspace */
  size_t ws_size;              /* workspace bytes */
  float *host_ref, *host_c;    /* reference copy, candidate copy for verification */
  double ref_sq;               /* sum of squares of the reference */
  double tol;                  /* the tolerance verification holds candidates to (gemm_tolerance
                                  of the problem, or a candidate's own: gpu_tolerance) */
  cublasLtHandle_t lt;         /* cuBLASLt handle (current context) */
  gemm_lt_desc desc[2];        /* [0] CUBLAS_COMPUTE_32F, [1] 32F_FAST_TF32 (f32 only) */
  int nlib;                    /* library candidates listed */
  gemm_lt_algo lib[GEMM_LIB_MAX];            /* their descriptions */
  cublasLtMatmulAlgo_t lib_algo[GEMM_LIB_MAX]; /* and configured algorithms */
};

void gemm_gpu_buffers(const family_gpu *g, CUdeviceptr *A, CUdeviceptr *B, CUdeviceptr *C) {
  *A = g->A;
  *B = g->B;
  *C = g->C;
}
size_t gemm_gpu_workspace_bytes(const family_gpu *g) { return g->ws_size; }


/* Uploads n seeded uniform [-1, 1) values rounded to the dtype, in 1 Mi-element pieces. */
static rt_status gemm_upload_random(CUdeviceptr dst, size_t n, int code, uint64_t seed, rt_error *err) {
  const size_t piece = (size_t)1 << 20, es = code == 0 ? 4 : 2;
  unsigned char *buf = malloc(piece * es);
  if (!buf) return rt_error_set(err, RT_ERR_NOMEM, "out of memory for gemm inputs");
  uint64_t s = seed;
  rt_status st = RT_OK;
  for (size_t off = 0; off < n && !st; off += piece) {
    size_t cnt = n - off < piece ? n - off : piece;
    for (size_t i = 0; i < cnt; i++) {
      float v = (float)((double)(num_rng(&s) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
      if (code == 0) memcpy(buf + 4 * i, &v, 4);
      else {
        uint16_t h = code == 1 ? num_f32_to_f16(v) : num_f32_to_bf16(v);
        memcpy(buf + 2 * i, &h, 2);
      }
    }
    st = cuda_check(cu.cuMemcpyHtoD_v2(dst + off * es, buf, cnt * es), "upload gemm inputs", err);
  }
  free(buf);
  return st;
}

static void gemm_gpu_teardown(family_gpu *g) {
  if (!g) return;
  gemm_lt_desc_free(&g->desc[0]);
  gemm_lt_desc_free(&g->desc[1]);
  if (g->lt) cublasLtDestroy(g->lt);
  CUdeviceptr *bufs[] = {&g->A, &g->B, &g->C, &g->ref, &g->ws};
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

static rt_status gemm_gpu_setup(const family_ops *self, const problem *p, uint64_t seed,
                                const family_reference *ref, CUstream stream, family_gpu **out,
                                rt_error *err) {
  (void)self;
  (void)ref; /* the reference is cuBLASLt's own */
  *out = NULL;
  if (!cu.handle) return rt_error_set(err, RT_ERR_NO_DRIVER, "gemm needs a loaded CUDA driver and a current context");
  family_gpu *g = calloc(1, sizeof *g);
  if (!g) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  g->p = *p;
  g->code = gemm_dtype_code(p->dtype);
  g->es = (size_t)gemm_dtype_bytes(p->dtype);
  const size_t M = (size_t)problem_dim(p, "M"), N = (size_t)problem_dim(p, "N"), K = (size_t)problem_dim(p, "K"),
               batch = (size_t)problem_dim(p, "BATCH");
  g->a_elems = batch * M * K;
  g->b_elems = batch * K * N;
  g->c_elems = batch * M * N;
  g->ws_size = GEMM_WORKSPACE;
  rt_status st;
  if ((st = gemm_alloc(&g->A, g->a_elems * g->es, "A", err)) || (st = gemm_alloc(&g->B, g->b_elems * g->es, "B", err)) ||
      (st = gemm_alloc(&g->C, g->c_elems * 4, "C", err)) || (st = gemm_alloc(&g->ref, g->c_elems * 4, "reference", err)) ||
      (st = gemm_alloc(&g->ws, g->ws_size, "workspace", err)))
    goto fail;
  g->host_ref = malloc(g->c_elems * 4);
  g->host_c = malloc(g->c_elems * 4);
  if (!g->host_ref || !g->host_c) {
    st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for %zu output elements", g->c_elems);
    goto fail;
  }
  if ((st = gemm_upload_random(g->A, g->a_elems, g->code, seed ^ 0xa11ce5eedull, err)) ||
      (st = gemm_upload_random(g->B, g->b_elems, g->code, seed ^ 0xb0b5eedull, err)) ||
      /* a copy from pageable memory may return before its DMA lands, and the candidates' stream
       * does not wait for the default stream: wait here, once */
      (st = cuda_check(cu.cuCtxSynchronize(), "finish the input upload", err)))
    goto fail;
  if ((st = gemm_lt_check(cublasLtCreate(&g->lt), "cublasLtCreate", err)) ||
      (st = gemm_lt_desc_make(p, 0, &g->desc[0], err)) ||
      (g->code == 0 && (st = gemm_lt_desc_make(p, 1, &g->desc[1], err))))
    goto fail;
  /* The reference: cuBLASLt's own choice with true fp32 compute. */
  {
    cublasLtMatmulHeuristicResult_t r;
    int n = 0;
    if ((st = gemm_lt_heuristic(g->lt, &g->desc[0], g->ws_size, 1, &r, &n, err)) ||
        (st = cuda_check(cu.cuMemsetD32Async(g->ref, 0x7fc00000u, g->c_elems, stream), "poison reference", err)) ||
        (st = gemm_lt_run(g->lt, &g->desc[0], &r.algo, g->A, g->B, g->ref, g->ws, g->ws_size, stream, err)) ||
        (st = cuda_check(cu.cuStreamSynchronize(stream), "reference matmul", err)) ||
        (st = cuda_check(cu.cuMemcpyDtoH_v2(g->host_ref, g->ref, g->c_elems * 4), "download reference", err)))
      goto fail;
  }
  for (size_t i = 0; i < g->c_elems; i++) {
    double v = g->host_ref[i];
    if (!isfinite(v)) {
      st = rt_error_set(err, RT_ERR_INTERNAL, "the cuBLASLt reference has a non-finite element at %zu", i);
      goto fail;
    }
    g->ref_sq += v * v;
  }
  *out = g;
  return RT_OK;
fail:
  gemm_gpu_teardown(g);
  return st;
}

static rt_status gemm_gpu_poison(family_gpu *g, CUstream stream, rt_error *err) {
  return cuda_check(cu.cuMemsetD32Async(g->C, 0x7fc00000u, g->c_elems, stream), "poison gemm output", err);
}

/* A rank-3 (inner, rows, batch) tensor map over a row-major operand whose rows hold `inner`
 * contiguous elements (`name` names that dimension in errors), 128-byte swizzle: A and the
 * N x K B of nt are (K, rows); the K x N B of nn is (N, K). */
static rt_status gemm_tma_operand(gemm_tma_params *o, const problem *p, int es, CUdeviceptr base,
                                  const char *what, const char *name, long long inner, long long rows,
                                  long long box_inner, long long box_rows, rt_error *err) {
  const int code = gemm_dtype_code(p->dtype);
  if (code != 1 && code != 2) return rt_error_set(err, RT_ERR_UNSUPPORTED, "the TMA templates take f16 or bf16 inputs");
  if ((inner * (long long)es) % 16 != 0)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "TMA needs %s*dtype_bytes to be a multiple of 16 (%s is %lld)",
                        name, name, inner);
  if (base % 16 != 0)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "TMA needs %s's address to be 16-byte aligned (it is 0x%llx)", what,
                        (unsigned long long)base);
  if (box_inner * (long long)es > 128 || box_rows > 256 || box_inner <= 0 || box_rows <= 0)
    return rt_error_set(err, RT_ERR_INVALID, "TMA box %lldx%lld is outside the 128-byte swizzle limits", box_inner,
                        box_rows);
  memset(o, 0, sizeof *o);
  o->type = code == 1 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  o->rank = 3;
  o->base = base;
  o->dims[0] = (cuuint64_t)inner;
  o->dims[1] = (cuuint64_t)rows;
  o->dims[2] = (cuuint64_t)problem_dim(p, "BATCH");
  o->strides[0] = (cuuint64_t)(inner * (long long)es);
  o->strides[1] = (cuuint64_t)(inner * rows * (long long)es);
  o->box[0] = (cuuint32_t)box_inner;
  o->box[1] = (cuuint32_t)box_rows;
  o->box[2] = 1;
  for (int i = 0; i < 3; i++) o->elem_strides[i] = 1;
  o->interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  o->swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  o->l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  o->oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  return RT_OK;
}

rt_status gemm_tma_plan(const problem *p, const rt_vars *config, CUdeviceptr A, CUdeviceptr B,
                        gemm_tma_params out[2], rt_error *err) {
  long long box_k = 0, box_m = 0, box_n = 0;
  if (!rt_vars_get(config, "TMA_BOX_K", &box_k) || !rt_vars_get(config, "TMA_BOX_M", &box_m) ||
      !rt_vars_get(config, "TMA_BOX_N", &box_n))
    return rt_error_set(err, RT_ERR_INVALID, "a TMA template config needs TMA_BOX_M, TMA_BOX_N and TMA_BOX_K");
  const int es = gemm_dtype_bytes(p->dtype), nt = !strcmp(p->layout, "nt");
  const long long M = problem_dim(p, "M"), N = problem_dim(p, "N"), K = problem_dim(p, "K");
  rt_status st;
  if ((st = gemm_tma_operand(&out[0], p, es, A, "A", "K", K, M, box_k, box_m, err))) return st;
  return nt ? gemm_tma_operand(&out[1], p, es, B, "B", "K", K, N, box_k, box_n, err)
            : gemm_tma_operand(&out[1], p, es, B, "B", "N", N, K, box_n, box_k, err);
}

rt_status gemm_tma_encode(const gemm_tma_params *o, CUtensorMap *map, rt_error *err) {
  return cuda_check(cu.cuTensorMapEncodeTiled(map, o->type, o->rank, (void *)(uintptr_t)o->base, o->dims, o->strides,
                                               o->box, o->elem_strides, o->interleave, o->swizzle, o->l2, o->oob),
                    "cuTensorMapEncodeTiled", err);
}

rt_status gemm_tma_maps(const problem *p, const rt_vars *config, CUdeviceptr A, CUdeviceptr B,
                        CUtensorMap *map_a, CUtensorMap *map_b, rt_error *err) {
  gemm_tma_params prm[2];
  rt_status st;
  if ((st = gemm_tma_plan(p, config, A, B, prm, err)) || (st = gemm_tma_encode(&prm[0], map_a, err))) return st;
  return gemm_tma_encode(&prm[1], map_b, err);
}

static rt_status gemm_gpu_launch(family_gpu *g, CUfunction fn, const rt_vars *config, const unsigned grid[3],
                                 const unsigned block[3], unsigned smem, CUstream stream, rt_error *err) {
  int M = (int)problem_dim(&g->p, "M"), N = (int)problem_dim(&g->p, "N"), K = (int)problem_dim(&g->p, "K");
  long long split = 1;
  rt_vars_get(config, "SPLIT_K", &split);
  rt_status st;
  if (smem > 48 * 1024 &&
      (st = cuda_check(cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
                       "allow the template's dynamic shared memory", err)))
    return st;
  /* split-K adds partial sums with atomics: the output starts at zero */
  if (split > 1 && (st = cuda_check(cu.cuMemsetD32Async(g->C, 0, g->c_elems, stream), "zero the split-K output", err)))
    return st;
  if (rt_vars_find(config, "TMA_BOX_K") >= 0) {
    CUtensorMap ma, mb;
    if ((st = gemm_tma_maps(&g->p, config, g->A, g->B, &ma, &mb, err))) return st;
    void *args[] = {&ma, &mb, &g->C, &M, &N, &K};
    return cuda_check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream, args, NULL),
                      "launch gemm template", err);
  }
  void *args[] = {&g->A, &g->B, &g->C, &M, &N, &K};
  return cuda_check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream, args, NULL),
                    "launch gemm template", err);
}

static rt_status gemm_gpu_verify(family_gpu *g, double *rel_error, rt_error *err) {
  rt_status st;
  *rel_error = NAN;
  if ((st = cuda_check(cu.cuCtxSynchronize(), "finish the gemm candidate", err)) ||
      (st = cuda_check(cu.cuMemcpyDtoH_v2(g->host_c, g->C, g->c_elems * 4), "download gemm output", err)))
    return st;
  const double tol = g->tol > 0 ? g->tol : gemm_tolerance(&gemm_family, &g->p);
  const double rms = sqrt(g->ref_sq / (double)g->c_elems);
  double diff_sq = 0;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < g->c_elems; i++) {
    double c = g->host_c[i], r = g->host_ref[i], d = c - r;
    if (!isfinite(c) || fabs(d) > 32 * tol * rms) {
      if (!bad++) first_bad = i;
      if (!isfinite(c)) diff_sq = INFINITY;
    }
    diff_sq += d * d;
  }
  double rel = g->ref_sq > 0 ? sqrt(diff_sq / g->ref_sq) : sqrt(diff_sq);
  if (bad && isfinite(rel) && rel <= tol) rel = nextafter(tol, INFINITY); /* an outlier never passes */
  *rel_error = rel;
  if (bad || !(rel <= tol)) {
    const size_t N = (size_t)problem_dim(&g->p, "N"), M = (size_t)problem_dim(&g->p, "M");
    if (!bad)
      return rt_error_set(err, RT_ERR_WRONG_RESULT,
                          "gemm output differs from the cuBLASLt reference: relative error %.3g over tolerance %.1g for %s",
                          rel, tol, g->p.dtype);
    return rt_error_set(err, RT_ERR_WRONG_RESULT,
                        "gemm output differs from the cuBLASLt reference: relative error %.3g (tolerance %.1g for %s), "
                        "%zu elements NaN or off by more than 32 tolerances of the reference RMS, first at batch %zu "
                        "row %zu column %zu (%g, expected %g)",
                        rel, tol, g->p.dtype, bad, first_bad / (M * N), first_bad % (M * N) / N, first_bad % N,
                        (double)g->host_c[first_bad], (double)g->host_ref[first_bad]);
  }
  return RT_OK;
}

static void gemm_gpu_tolerance(family_gpu *g, double tolerance) { g->tol = tolerance; }

static rt_status gemm_library_list(family_gpu *g, int max, int *count, rt_error *err) {
  if (max > GEMM_LIB_MAX) max = GEMM_LIB_MAX;
  *count = g->nlib = 0;
  if (max <= 0) return RT_OK;
  cublasLtMatmulHeuristicResult_t r32[GEMM_LIB_MAX], rtf[GEMM_LIB_MAX];
  int n32 = 0, ntf = 0;
  rt_status st = gemm_lt_heuristic(g->lt, &g->desc[0], g->ws_size, max, r32, &n32, err);
  if (st) return st;
  if (g->code == 0 && gemm_lt_heuristic(g->lt, &g->desc[1], g->ws_size, max, rtf, &ntf, NULL) != RT_OK) ntf = 0;
  /* tf32: the FAST_TF32 algorithms alone; f32: fp32 and tf32 algorithms alternate, tf32 first
   * (the tuner runs the tf32 ones in an f32 run only when asked to: --allow-tf32) */
  if (!strcmp(g->p.dtype, "tf32")) n32 = 0;
  int i32 = 0, itf = 0;
  while (g->nlib < max && (i32 < n32 || itf < ntf)) {
    int use_tf = itf < ntf && (i32 >= n32 || itf <= i32);
    const cublasLtMatmulHeuristicResult_t *r = use_tf ? &rtf[itf++] : &r32[i32++];
    if (r->state != CUBLAS_STATUS_SUCCESS) continue;
    if ((st = gemm_lt_algo_read(&r->algo, use_tf, &g->lib[g->nlib], err))) return st;
    g->lib_algo[g->nlib++] = r->algo;
  }
  *count = g->nlib;
  return RT_OK;
}

static rt_status gemm_library_describe(family_gpu *g, int i, char *buf, size_t size, rt_error *err) {
  if (i < 0 || i >= g->nlib)
    return rt_error_set(err, RT_ERR_NOT_FOUND, "no cuBLASLt candidate %d (%d listed)", i, g->nlib);
  gemm_lt_algo_format(&g->lib[i], buf, size);
  return RT_OK;
}

static rt_status gemm_library_launch(family_gpu *g, int i, CUstream stream, rt_error *err) {
  if (i < 0 || i >= g->nlib)
    return rt_error_set(err, RT_ERR_NOT_FOUND, "no cuBLASLt candidate %d (%d listed)", i, g->nlib);
  return gemm_lt_run(g->lt, &g->desc[g->lib[i].tf32 ? 1 : 0], &g->lib_algo[i], g->A, g->B, g->C, g->ws,
                     g->ws_size, stream, err);
}

const family_ops gemm_family = {
    .name = "gemm",
    .shape_help = GEMM_SHAPE_HELP,
    .example_shape = "4096x4096x4096",
    .parse_shape = gemm_parse_shape,
    .bind = gemm_bind,
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
};
