/* gemm_serve.c — the GEMM family's serving half (gemm.h), what librooftune links: the shape
 * syntax and its options, the names manifest expressions see, the serving coordinates, cuBLASLt
 * replay of a library winner, and the TMA maps of a TMA winner.  gemm.c adds what tuning needs. */
#include "kernels/gemm_impl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/cuda_driver.h"

/* Kernels take int dimensions and do their tile arithmetic in 32 bits (ceil_div(M, BLOCK_M),
 * tile * BLOCK_M + offset): a dimension leaves room for one more tile of up to 1024. */
#define GEMM_MAX_DIM   (2147483647LL - 1024)
#define GEMM_MAX_BATCH 4096 /* grid z carries SPLIT_K*BATCH (<= 65535) */

/* ---------------------------------------------------------------- dtypes and conversions */

int gemm_dtype_code(const char *dtype) {
  if (!dtype) return -1;
  if (!strcmp(dtype, "f32") || !strcmp(dtype, "tf32")) return 0; /* tf32: fp32 inputs */
  if (!strcmp(dtype, "f16")) return 1;
  if (!strcmp(dtype, "bf16")) return 2;
  if (!strcmp(dtype, "e4m3")) return GEMM_CODE_E4M3;
  if (!strcmp(dtype, "e5m2")) return GEMM_CODE_E5M2;
  return -1;
}

int gemm_code_bytes(int c) { return c < 0 ? 0 : c == 0 ? 4 : GEMM_IS_FP8(c) ? 1 : 2; }

int gemm_dtype_bytes(const char *dtype) { return gemm_code_bytes(gemm_dtype_code(dtype)); }

int gemm_out_bytes(int out_code) { return out_code == GEMM_OUT_F32 ? 4 : 2; }

static const char *gemm_code_name(int c) {
  switch (c) {
    case 0: return "f32";
    case 1: return "f16";
    case 2: return "bf16";
    case GEMM_CODE_E4M3: return "e4m3";
    case GEMM_CODE_E5M2: return "e5m2";
    default: return "?";
  }
}

/* ---------------------------------------------------------------- options and epilogue */

static rt_status gemm_bad_shape(rt_error *err, const char *shape, const char *why);

static const char *const gemm_act_names[] = {"", "relu", "gelu", "silu"};
const char *const gemm_out_names[3] = {"f32", "f16", "bf16"};

/* Parses the options at `text` ("+bias+gelu", "" for none) of a problem whose A has type
 * a_code; the error names the shape. */
static rt_status gemm_parse_options(const char *shape, const char *text, int a_code, gemm_epi *e,
                                    rt_error *err) {
  memset(e, 0, sizeof *e);
  e->a_code = e->b_code = a_code;
  e->out_code = GEMM_OUT_F32;
  int seen_b = 0, seen_out = 0;
  const char *s = text;
  while (*s) {
    char tok[32], why[160];
    if (*s != '+')
      return gemm_bad_shape(err, shape, "options follow K or the layout, each after a '+'");
    s++;
    size_t n = strcspn(s, "+");
    if (n == 0 || n >= sizeof tok)
      return gemm_bad_shape(err, shape, "an option after '+' is empty or too long");
    memcpy(tok, s, n);
    tok[n] = '\0';
    s += n;
    int *flag = NULL, act = 0;
    if (!strncmp(tok, "b=", 2)) {
      const int b = gemm_dtype_code(tok + 2);
      if (!GEMM_IS_FP8(b) || !GEMM_IS_FP8(a_code))
        return gemm_bad_shape(err, shape,
                              "+b= gives B an fp8 type (e4m3 or e5m2) beside an fp8 dtype");
      if (seen_b++) return gemm_bad_shape(err, shape, "option +b= is given twice");
      e->b_code = b;
      continue;
    }
    if (!strncmp(tok, "out=", 4)) {
      int o = -1;
      for (int i = 0; i < 3; i++)
        if (!strcmp(tok + 4, gemm_out_names[i])) o = i;
      if (o < 0) return gemm_bad_shape(err, shape, "+out= takes f32, f16 or bf16");
      if (seen_out++) return gemm_bad_shape(err, shape, "option +out= is given twice");
      e->out_code = o;
      continue;
    }
    if (!strcmp(tok, "vscale")) {
      if (!GEMM_IS_FP8(a_code))
        return gemm_bad_shape(err, shape, "+vscale scales fp8 inputs; the dtype is not fp8");
      flag = &e->vscale;
    } else if (!strcmp(tok, "alpha"))
      flag = &e->alpha;
    else if (!strcmp(tok, "beta"))
      flag = &e->beta;
    else if (!strcmp(tok, "bias"))
      flag = &e->bias;
    else if (!strcmp(tok, "residual"))
      flag = &e->residual;
    else
      for (int i = 1; i < 4; i++)
        if (!strcmp(tok, gemm_act_names[i])) act = i;
    if (act) {
      if (e->act) {
        snprintf(why, sizeof why, "one activation at most (+%s and +%s)", gemm_act_names[e->act],
                 tok);
        return gemm_bad_shape(err, shape, why);
      }
      e->act = act;
      continue;
    }
    if (!flag) {
      snprintf(why, sizeof why, "unknown option +%s", tok);
      return gemm_bad_shape(err, shape, why);
    }
    if ((*flag)++) {
      snprintf(why, sizeof why, "option +%s is given twice", tok);
      return gemm_bad_shape(err, shape, why);
    }
  }
  e->on = e->alpha || e->beta || e->bias || e->residual || e->act || e->out_code != GEMM_OUT_F32 ||
          GEMM_IS_FP8(e->a_code);
  return RT_OK;
}

/* The canonical options text of e ("" without options). */
static void gemm_options_text(const gemm_epi *e, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
#define GEMM_ADD(...) n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__)
  if (e->b_code != e->a_code) GEMM_ADD("+b=%s", gemm_code_name(e->b_code));
  if (e->vscale) GEMM_ADD("+vscale");
  const int other = e->beta || e->bias || e->act || e->residual || e->out_code != GEMM_OUT_F32;
  if (e->alpha && !other) GEMM_ADD("+alpha");
  if (e->beta) GEMM_ADD("+beta");
  if (e->bias) GEMM_ADD("+bias");
  if (e->act) GEMM_ADD("+%s", gemm_act_names[e->act]);
  if (e->residual) GEMM_ADD("+residual");
  if (e->out_code != GEMM_OUT_F32) GEMM_ADD("+out=%s", gemm_out_names[e->out_code]);
#undef GEMM_ADD
}

rt_status gemm_problem_epi(const problem *p, gemm_epi *out, rt_error *err) {
  const int a = gemm_dtype_code(p->dtype);
  if (a < 0) return rt_error_set(err, RT_ERR_INVALID, "unknown gemm dtype \"%s\"", p->dtype);
  const char *plus = strchr(p->shape, '+');
  return gemm_parse_options(p->shape, plus ? plus : "", a, out, err);
}

double gemm_epi_reference(const gemm_epi *e, double s, double beta, double acc, double c,
                          double bias, double r) {
  double v = s * acc;
  if (e->beta) v += beta * c;
  if (e->bias) v += bias;
  if (e->act == GEMM_ACT_RELU)
    v = v > 0 ? v : 0;
  else if (e->act == GEMM_ACT_GELU)
    v = 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  else if (e->act == GEMM_ACT_SILU)
    v = v / (1.0 + exp(-v));
  if (e->residual) v += r;
  return v;
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

rt_status gemm_parse_shape(const family_ops *self, const char *shape, const char *dtype,
                           const char *args, problem *out, rt_error *err) {
  (void)self;
  if (args && *args) {
    rt_error_locate(err, "--kv-lens", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_USAGE, "the gemm family takes no per-sequence lengths");
  }
  if (!shape || !*shape) return gemm_bad_shape(err, shape ? shape : "", "it is empty");
  if (gemm_dtype_code(dtype) < 0) {
    rt_error_set(err, RT_ERR_INVALID,
                 "unknown gemm dtype \"%s\": use f32, tf32, f16, bf16, e4m3 or e5m2",
                 dtype ? dtype : "");
    rt_error_locate(err, "--dtype", NULL, 0, 0);
    return RT_ERR_INVALID;
  }
  const char *s = shape;
  long long batch = 1, v[3];
  const char *at = strchr(shape, '@');
  if (at) {
    batch = gemm_number(&s);
    if (batch <= 0 || s != at)
      return gemm_bad_shape(err, shape, "the batch before '@' must be a positive integer");
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
      snprintf(why, sizeof why, "%s is larger than %lld (the kernels' tile arithmetic is 32-bit)",
               names[i], GEMM_MAX_DIM);
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
    const size_t n = strcspn(s, "+");
    if (n == 2 && (!strncmp(s, "nn", 2) || !strncmp(s, "nt", 2))) {
      snprintf(layout, sizeof layout, "%.2s", s);
    } else if (n == 2 && (!strncmp(s, "tn", 2) || !strncmp(s, "tt", 2))) {
      return gemm_bad_shape(
          err, shape, "A must be row-major (layouts tn and tt are not supported); use nn or nt");
    } else {
      return gemm_bad_shape(err, shape, "the layout after ':' must be nn or nt");
    }
    s += n;
  } else if (*s && *s != '+') {
    return gemm_bad_shape(err, shape, "unexpected text after K");
  }
  gemm_epi e;
  rt_status st = gemm_parse_options(shape, s, gemm_dtype_code(dtype), &e, err);
  if (st) return st;
  if (GEMM_IS_FP8(e.a_code) && strcmp(layout, "nt"))
    return gemm_bad_shape(err, shape,
                          "fp8 inputs need B stored N x K, layout nt (wgmma and cuBLASLt read fp8 "
                          "operands K-major only)");
  char opts[96];
  gemm_options_text(&e, opts, sizeof opts);
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
  int len = snprintf(out->shape, sizeof out->shape, "%s%lldx%lldx%lld%s%s", b, v[0], v[1], v[2],
                     strcmp(layout, "nt") ? "" : ":nt", opts);
  if (len < 0 || (size_t)len >= sizeof out->shape) {
    char why[96];
    snprintf(why, sizeof why, "its canonical text is longer than %zu characters",
             sizeof out->shape - 1);
    return gemm_bad_shape(err, shape, why);
  }
  return RT_OK;
}

rt_status gemm_bind(const family_ops *self, const problem *p, rt_vars *vars) {
  (void)self;
  rt_status st;
  gemm_epi e;
  if (gemm_problem_epi(p, &e, NULL)) return RT_ERR_INVALID;
  if ((st = rt_vars_set(vars, "M", problem_dim(p, "M"))) ||
      (st = rt_vars_set(vars, "N", problem_dim(p, "N"))) ||
      (st = rt_vars_set(vars, "K", problem_dim(p, "K"))) ||
      (st = rt_vars_set(vars, "BATCH", problem_dim(p, "BATCH"))) ||
      (st = rt_vars_set(vars, "dtype_bytes", gemm_code_bytes(e.a_code))) ||
      (st = rt_vars_set(vars, "b_bytes", gemm_code_bytes(e.b_code))) ||
      (st = rt_vars_set(vars, "b_e5m2", e.b_code == GEMM_CODE_E5M2)) ||
      (st = rt_vars_set(vars, "b_col", !strcmp(p->layout, "nt"))) ||
      (st = rt_vars_set(vars, "out_bytes", gemm_out_bytes(e.out_code))) ||
      (st = rt_vars_set(vars, "out_code", e.out_code)) || (st = rt_vars_set(vars, "epi", e.on)) ||
      (st = rt_vars_set(vars, "epi_beta", e.beta)) ||
      (st = rt_vars_set(vars, "epi_bias", e.bias)) || (st = rt_vars_set(vars, "epi_act", e.act)) ||
      (st = rt_vars_set(vars, "epi_res", e.residual)))
    return st;
  return RT_OK;
}

/* ---------------------------------------------------------------- cuBLASLt */

rt_status gemm_lt_check(cublasStatus_t s, const char *what, rt_error *err) {
  if (s == CUBLAS_STATUS_SUCCESS) return RT_OK;
  return rt_error_set(err, RT_ERR_CUBLAS, "%s: %s (%s)", what, cublasLtGetStatusName(s),
                      cublasLtGetStatusString(s));
}

static cudaDataType_t gemm_cuda_type(int code) {
  switch (code) {
    case 0: return CUDA_R_32F;
    case 1: return CUDA_R_16F;
    case GEMM_CODE_E4M3: return CUDA_R_8F_E4M3;
    case GEMM_CODE_E5M2: return CUDA_R_8F_E5M2;
    default: return CUDA_R_16BF;
  }
}

static cudaDataType_t gemm_out_type(int out_code) {
  return out_code == GEMM_OUT_F32   ? CUDA_R_32F
         : out_code == GEMM_OUT_F16 ? CUDA_R_16F
                                    : CUDA_R_16BF;
}

void gemm_lt_desc_free(gemm_lt_desc *d) {
  if (d->op) cublasLtMatmulDescDestroy(d->op);
  if (d->a) cublasLtMatrixLayoutDestroy(d->a);
  if (d->b) cublasLtMatrixLayoutDestroy(d->b);
  if (d->c) cublasLtMatrixLayoutDestroy(d->c);
  memset(d, 0, sizeof *d);
}

static rt_status gemm_lt_batch(cublasLtMatrixLayout_t l, int32_t batch, int64_t stride,
                               rt_error *err) {
  rt_status st = gemm_lt_check(
      cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch),
      "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)", err);
  if (st) return st;
  return gemm_lt_check(cublasLtMatrixLayoutSetAttribute(
                           l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
                       "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)", err);
}

/* cuBLASLt's fused form of an epilogue: its epilogue value and what its C is (c_mode of
 * gemm_lt_desc).  0 when it has none (SiLU; a residual after an activation or beside beta). */
static int gemm_lt_epilogue(const gemm_epi *e, cublasLtEpilogue_t *ep, int *c_mode) {
  if (e->act == GEMM_ACT_SILU || (e->residual && (e->act || e->beta))) return 0;
  static const cublasLtEpilogue_t plain[] = {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_RELU,
                                             CUBLASLT_EPILOGUE_GELU};
  static const cublasLtEpilogue_t biased[] = {CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_RELU_BIAS,
                                              CUBLASLT_EPILOGUE_GELU_BIAS};
  *ep = e->bias ? biased[e->act] : plain[e->act];
  *c_mode = e->beta ? 1 : e->residual ? 2 : 0;
  return 1;
}

/* The descriptors of problem p (operand types, output type and epilogue from its options): tf32
 * picks CUBLAS_COMPUTE_32F_FAST_TF32, fast_accum fp8 fast accumulation; epi (NULL: none) gives
 * the bias and scale pointers.  RT_ERR_UNSUPPORTED when cuBLASLt has no fused form of the
 * epilogue. */
rt_status gemm_lt_desc_make_epi(const problem *p, int tf32, int fast_accum,
                                const gemm_epi_args *epi, gemm_lt_desc *d, rt_error *err) {
  memset(d, 0, sizeof *d);
  gemm_epi e;
  rt_status st = gemm_problem_epi(p, &e, err);
  if (st) return st;
  cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_DEFAULT;
  if (!gemm_lt_epilogue(&e, &ep, &d->c_mode))
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "cuBLASLt has no fused epilogue for %s", p->shape);
  const uint64_t M = (uint64_t)problem_dim(p, "M"), N = (uint64_t)problem_dim(p, "N"),
                 K = (uint64_t)problem_dim(p, "K");
  const int32_t batch = (int32_t)problem_dim(p, "BATCH");
  const int nt = !strcmp(p->layout, "nt");
  const cudaDataType_t ta_t = gemm_cuda_type(e.b_code), tb_t = gemm_cuda_type(e.a_code),
                       tc = gemm_out_type(e.out_code);
  cublasOperation_t ta = nt ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  if ((st = gemm_lt_check(
           cublasLtMatmulDescCreate(
               &d->op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
           "cublasLtMatmulDescCreate", err)) ||
      (st = gemm_lt_check(
           cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
           "cublasLtMatmulDescSetAttribute(TRANSA)", err)) ||
      (st = gemm_lt_check(
           cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
           "cublasLtMatmulDescSetAttribute(TRANSB)", err)) ||
      /* cuBLASLt's A is our B: column-major N x K (ld N) for nn, K x N (ld K) transposed for nt */
      (st = gemm_lt_check(nt ? cublasLtMatrixLayoutCreate(&d->a, ta_t, K, N, (int64_t)K)
                             : cublasLtMatrixLayoutCreate(&d->a, ta_t, N, K, (int64_t)N),
                          "cublasLtMatrixLayoutCreate(B)", err)) ||
      /* cuBLASLt's B is our A: column-major K x M, ld K */
      (st = gemm_lt_check(cublasLtMatrixLayoutCreate(&d->b, tb_t, K, M, (int64_t)K),
                          "cublasLtMatrixLayoutCreate(A)", err)) ||
      (st = gemm_lt_check(cublasLtMatrixLayoutCreate(&d->c, tc, N, M, (int64_t)N),
                          "cublasLtMatrixLayoutCreate(C)", err)))
    goto fail;
  if (ep != CUBLASLT_EPILOGUE_DEFAULT &&
      (st = gemm_lt_check(
           cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep),
           "cublasLtMatmulDescSetAttribute(EPILOGUE)", err)))
    goto fail;
  if (e.bias) {
    const void *bias = (const void *)(uintptr_t)(epi ? epi->bias : 0);
    const int32_t bt = (int32_t)tc; /* our bias has the output's type */
    if ((st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                           &bias, sizeof bias),
                            "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", err)) ||
        (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(
                                d->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt),
                            "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)", err)))
      goto fail;
  }
  if (GEMM_IS_FP8(e.a_code)) {
    /* cuBLASLt's A is our B: the scales swap too */
    const void *sa = (const void *)(uintptr_t)(epi ? epi->scale_b : 0),
               *sb = (const void *)(uintptr_t)(epi ? epi->scale_a : 0);
    const int8_t fast = (int8_t)(fast_accum != 0);
    const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    if (e.vscale &&
        ((st = gemm_lt_check(cublasLtMatmulDescSetAttribute(
                                 d->op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode),
                             "cublasLtMatmulDescSetAttribute(A_SCALE_MODE)", err)) ||
         (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(
                                 d->op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode),
                             "cublasLtMatmulDescSetAttribute(B_SCALE_MODE)", err))))
      goto fail;
    if ((sa && (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(
                                       d->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa),
                                   "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)", err))) ||
        (sb && (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(
                                       d->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb),
                                   "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)", err))) ||
        (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                           &fast, sizeof fast),
                            "cublasLtMatmulDescSetAttribute(FAST_ACCUM)", err)))
      goto fail;
  }
  if (batch > 1 && ((st = gemm_lt_batch(d->a, batch, (int64_t)(K * N), err)) ||
                    (st = gemm_lt_batch(d->b, batch, (int64_t)(M * K), err)) ||
                    (st = gemm_lt_batch(d->c, batch, (int64_t)(M * N), err))))
    goto fail;
  return RT_OK;
fail:
  gemm_lt_desc_free(d);
  return st;
}

rt_status gemm_lt_desc_make(const problem *p, int tf32, gemm_lt_desc *d, rt_error *err) {
  return gemm_lt_desc_make_epi(p, tf32, 0, NULL, d, err);
}

/* Top `max` heuristic algorithms for the descriptors; *count of them written. */
rt_status gemm_lt_heuristic(cublasLtHandle_t lt, const gemm_lt_desc *d, size_t ws, int max,
                            cublasLtMatmulHeuristicResult_t *res, int *count, rt_error *err) {
  cublasLtMatmulPreference_t pref = NULL;
  uint64_t wsz = ws;
  *count = 0;
  rt_status st =
      gemm_lt_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", err);
  if (st) return st;
  st = gemm_lt_check(cublasLtMatmulPreferenceSetAttribute(
                         pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof wsz),
                     "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)", err);
  if (!st)
    st = gemm_lt_check(
        cublasLtMatmulAlgoGetHeuristic(lt, d->op, d->a, d->b, d->c, d->c, pref, max, res, count),
        "cublasLtMatmulAlgoGetHeuristic", err);
  cublasLtMatmulPreferenceDestroy(pref);
  if (!st && *count == 0)
    st = rt_error_set(err, RT_ERR_UNSUPPORTED, "cuBLASLt has no algorithm for this problem");
  return st;
}

int gemm_lt_algo_format(const gemm_lt_algo *a, char *buf, size_t size) {
  return snprintf(buf, size,
                  "cublaslt compute=%s id=%d tile=%u stages=%u splitk=%d reduction=%u swizzle=%u "
                  "custom=%u inner=%u cluster=%u%s",
                  a->tf32 ? "32F_FAST_TF32" : "32F", a->id, a->tile, a->stages, a->splitk,
                  a->reduction, a->swizzle, a->custom, a->inner, a->cluster,
                  a->fast_accum ? " fastaccum=1" : "");
}

rt_status gemm_lt_algo_parse(const char *text, gemm_lt_algo *out, rt_error *err) {
  static const char *const keys[] = {"id",      "tile",   "stages", "splitk", "reduction",
                                     "swizzle", "custom", "inner",  "cluster"};
  long long vals[9];
  if (!text || strncmp(text, "cublaslt ", 9) != 0)
    return rt_error_set(err, RT_ERR_PARSE,
                        "bad cuBLASLt algorithm \"%s\": it must start with \"cublaslt \"",
                        text ? text : "");
  memset(out, 0, sizeof *out);
  const char *c = strstr(text, " compute=");
  if (!c)
    return rt_error_set(err, RT_ERR_PARSE, "bad cuBLASLt algorithm \"%s\": compute= is missing",
                        text);
  c += 9;
  if (!strncmp(c, "32F_FAST_TF32", 13) && (c[13] == ' ' || !c[13]))
    out->tf32 = 1;
  else if (!strncmp(c, "32F", 3) && (c[3] == ' ' || !c[3]))
    out->tf32 = 0;
  else
    return rt_error_set(err, RT_ERR_PARSE,
                        "bad cuBLASLt algorithm \"%s\": compute must be 32F or 32F_FAST_TF32",
                        text);
  for (int i = 0; i < 9; i++) {
    char key[24];
    snprintf(key, sizeof key, " %s=", keys[i]);
    const char *k = strstr(text, key);
    if (!k)
      return rt_error_set(err, RT_ERR_PARSE, "bad cuBLASLt algorithm \"%s\": %s= is missing", text,
                          keys[i]);
    k += strlen(key);
    char *end;
    errno = 0;
    vals[i] = strtoll(k, &end, 10);
    if (end == k || (*end && *end != ' ') || errno || vals[i] < 0 || vals[i] > INT_MAX)
      return rt_error_set(err, RT_ERR_PARSE,
                          "bad cuBLASLt algorithm \"%s\": %s must be a non-negative integer", text,
                          keys[i]);
  }
  const char *fa = strstr(text, " fastaccum=");
  if (fa) {
    fa += 11;
    if ((fa[0] != '0' && fa[0] != '1') || (fa[1] && fa[1] != ' '))
      return rt_error_set(err, RT_ERR_PARSE,
                          "bad cuBLASLt algorithm \"%s\": fastaccum must be 0 or 1", text);
    out->fast_accum = fa[0] == '1';
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
  if ((st = gemm_lt_check(
           cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w),
           "algo ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID,
                                                               &tile, sizeof tile, &w),
                          "algo TILE_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                                               &stages, sizeof stages, &w),
                          "algo STAGES_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w),
                          "algo SPLITK_NUM", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &w),
                          "algo REDUCTION_SCHEME", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz, &w),
                          "algo CTA_SWIZZLING", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom, &w),
                          "algo CUSTOM_OPTION", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigGetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner, &w),
                          "algo INNER_SHAPE_ID", err)) ||
      (st = gemm_lt_check(
           cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                                &cluster, sizeof cluster, &w),
           "algo CLUSTER_SHAPE_ID", err)))
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
  gemm_epi e;
  rt_status st = gemm_problem_epi(p, &e, err);
  if (st) return st;
  const cudaDataType_t tA = gemm_cuda_type(e.b_code), tB = gemm_cuda_type(e.a_code),
                       tC = gemm_out_type(e.out_code);
  int32_t splitk = a->splitk;
  uint32_t tile = a->tile, stages = a->stages, red = a->reduction, swz = a->swizzle,
           custom = a->custom;
  uint16_t inner = (uint16_t)a->inner, cluster = (uint16_t)a->cluster;
  cublasStatus_t s =
      cublasLtMatmulAlgoInit(lt, a->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                             CUDA_R_32F, tA, tB, tC, tC, a->id, algo);
  if (s != CUBLAS_STATUS_SUCCESS)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "cuBLASLt algorithm %d cannot be initialized for %s: %s", a->id, p->dtype,
                        cublasLtGetStatusName(s));
  if ((st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID,
                                                               &tile, sizeof tile),
                          "set TILE_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                                               &stages, sizeof stages),
                          "set STAGES_ID", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk),
                          "set SPLITK_NUM", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red),
                          "set REDUCTION_SCHEME", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz),
                          "set CTA_SWIZZLING", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom),
                          "set CUSTOM_OPTION", err)) ||
      (st = gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(
                              algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner),
                          "set INNER_SHAPE_ID", err)) ||
      (st =
           gemm_lt_check(cublasLtMatmulAlgoConfigSetAttribute(
                             algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster),
                         "set CLUSTER_SHAPE_ID", err)))
    return st;
  cublasLtMatmulHeuristicResult_t r;
  memset(&r, 0, sizeof r);
  s = cublasLtMatmulAlgoCheck(lt, d->op, d->a, d->b, d->c, d->c, algo, &r);
  if (s != CUBLAS_STATUS_SUCCESS)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "cuBLASLt algorithm %d does not run this problem here: %s", a->id,
                        cublasLtGetStatusName(s));
  if (r.workspaceSize > ws)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "cuBLASLt algorithm %d needs %zu bytes of workspace, %zu given", a->id,
                        r.workspaceSize, ws);
  return RT_OK;
}

/* D = alpha * op(A) op(B) (+ beta * Cin) with the descriptors' epilogue; Cin is ignored when
 * beta is 0 (D stands in for it). */
rt_status gemm_lt_run(cublasLtHandle_t lt, const gemm_lt_desc *d, const cublasLtMatmulAlgo_t *algo,
                      CUdeviceptr A, CUdeviceptr B, CUdeviceptr Cin, float alpha, float beta,
                      CUdeviceptr D, CUdeviceptr ws, size_t ws_size, CUstream stream,
                      rt_error *err) {
  if (!beta || !Cin) Cin = D;
  /* D^T = B^T A^T: cuBLASLt's A operand is our B and its B operand our A. */
  return gemm_lt_check(
      cublasLtMatmul(lt, d->op, &alpha, (const void *)(uintptr_t)B, d->a,
                     (const void *)(uintptr_t)A, d->b, &beta, (const void *)(uintptr_t)Cin, d->c,
                     (void *)(uintptr_t)D, d->c, algo, (void *)(uintptr_t)ws, ws_size,
                     (cudaStream_t)stream),
      "cublasLtMatmul", err);
}

/* cuBLASLt's C and beta for the descriptors' c_mode. */
void gemm_lt_c(const gemm_lt_desc *d, const gemm_epi_args *epi, CUdeviceptr *c, float *beta) {
  *c = 0;
  *beta = 0;
  if (d->c_mode == 1 && epi) {
    *c = (CUdeviceptr)epi->c;
    *beta = epi->beta;
  } else if (d->c_mode == 2 && epi) {
    *c = (CUdeviceptr)epi->residual;
    *beta = 1;
  }
}

rt_status gemm_lt_matmul_epi(cublasLtHandle_t lt, const problem *p, const gemm_lt_algo *a,
                             CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, const gemm_epi_args *epi,
                             CUdeviceptr workspace, size_t ws_size, CUstream stream,
                             rt_error *err) {
  gemm_epi e;
  rt_status st = gemm_problem_epi(p, &e, err);
  if (st) return st;
  if (!epi && (e.beta || e.bias || e.residual))
    return rt_error_set(err, RT_ERR_INVALID,
                        "gemm %s needs its epilogue's operands (C, bias or residual)", p->shape);
  gemm_lt_desc d;
  cublasLtMatmulAlgo_t algo;
  if ((st = gemm_lt_desc_make_epi(p, a ? a->tf32 : 0, a ? a->fast_accum : 0, epi, &d, err)))
    return st;
  if (a) {
    st = gemm_lt_algo_build(lt, p, &d, a, ws_size, &algo, err);
  } else {
    cublasLtMatmulHeuristicResult_t r;
    int n = 0;
    st = gemm_lt_heuristic(lt, &d, ws_size, 1, &r, &n, err);
    algo = r.algo;
  }
  CUdeviceptr c;
  float beta;
  gemm_lt_c(&d, epi, &c, &beta);
  if (!st)
    st = gemm_lt_run(lt, &d, &algo, A, B, c, epi ? epi->alpha : 1.0f, beta, D, workspace, ws_size,
                     stream, err);
  gemm_lt_desc_free(&d);
  return st;
}

rt_status gemm_lt_matmul(cublasLtHandle_t lt, const problem *p, const gemm_lt_algo *a,
                         CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, CUdeviceptr workspace,
                         size_t ws_size, CUstream stream, rt_error *err) {
  return gemm_lt_matmul_epi(lt, p, a, A, B, C, NULL, workspace, ws_size, stream, err);
}

/* A rank-3 (inner, rows, batch) tensor map over a row-major operand whose rows hold `inner`
 * contiguous elements (`name` names that dimension in errors), 128-byte swizzle: A and the
 * N x K B of nt are (K, rows); the K x N B of nn is (N, K). */
static rt_status gemm_tma_operand(gemm_tma_params *o, const problem *p, int es, CUdeviceptr base,
                                  const char *what, const char *name, long long inner,
                                  long long rows, long long box_inner, long long box_rows,
                                  rt_error *err) {
  const int code = gemm_dtype_code(p->dtype);
  if (code != 1 && code != 2 && !GEMM_IS_FP8(code))
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "the TMA templates take f16, bf16 or fp8 inputs");
  if ((inner * (long long)es) % 16 != 0)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "TMA needs %s*dtype_bytes to be a multiple of 16 (%s is %lld)", name, name,
                        inner);
  if (base % 16 != 0)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "TMA needs %s's address to be 16-byte aligned (it is 0x%llx)", what,
                        (unsigned long long)base);
  if (box_inner * (long long)es > 128 || box_rows > 256 || box_inner <= 0 || box_rows <= 0)
    return rt_error_set(err, RT_ERR_INVALID,
                        "TMA box %lldx%lld is outside the 128-byte swizzle limits", box_inner,
                        box_rows);
  memset(o, 0, sizeof *o);
  o->type = code == 1   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
            : code == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                        : CU_TENSOR_MAP_DATA_TYPE_UINT8; /* fp8: bytes, which TMA only moves */
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
    return rt_error_set(err, RT_ERR_INVALID,
                        "a TMA template config needs TMA_BOX_M, TMA_BOX_N and TMA_BOX_K");
  const int es = gemm_dtype_bytes(p->dtype), nt = !strcmp(p->layout, "nt");
  const long long M = problem_dim(p, "M"), N = problem_dim(p, "N"), K = problem_dim(p, "K");
  rt_status st;
  if ((st = gemm_tma_operand(&out[0], p, es, A, "A", "K", K, M, box_k, box_m, err))) return st;
  return nt ? gemm_tma_operand(&out[1], p, es, B, "B", "K", K, N, box_k, box_n, err)
            : gemm_tma_operand(&out[1], p, es, B, "B", "N", N, K, box_n, box_k, err);
}

rt_status gemm_tma_encode(const gemm_tma_params *o, CUtensorMap *map, rt_error *err) {
  return cuda_check(cu.cuTensorMapEncodeTiled(map, o->type, o->rank, (void *)(uintptr_t)o->base,
                                              o->dims, o->strides, o->box, o->elem_strides,
                                              o->interleave, o->swizzle, o->l2, o->oob),
                    "cuTensorMapEncodeTiled", err);
}

rt_status gemm_tma_maps(const problem *p, const rt_vars *config, CUdeviceptr A, CUdeviceptr B,
                        CUtensorMap *map_a, CUtensorMap *map_b, rt_error *err) {
  gemm_tma_params prm[2];
  rt_status st;
  if ((st = gemm_tma_plan(p, config, A, B, prm, err)) ||
      (st = gemm_tma_encode(&prm[0], map_a, err)))
    return st;
  return gemm_tma_encode(&prm[1], map_b, err);
}

/* ---------------------------------------------------------------- serving */

/* BATCH, M, N and K: a gemm is as close to another as its four dimensions are. */
void gemm_coords(const family_ops *self, const problem *p, family_coords *out) {
  (void)self;
  memset(out, 0, sizeof *out);
  out->kind = 1;
  const char *names[] = {"BATCH", "M", "N", "K"};
  for (int i = 0; i < 4; i++) out->x[out->n++] = family_ln_dim(p, names[i]);
}

const family_ops gemm_serving = {GEMM_SERVING_OPS};
