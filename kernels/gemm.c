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
#include "templates/gemm/gemm_epilogue.h"
#include "tuner/driver/cuda_driver.h"

#define GEMM_SHAPE_HELP \
  "[BATCH@]MxNxK[:nn|:nt][+OPTION...] with positive integers (nt: B stored N x K; options b=e4m3|e5m2 vscale alpha " \
  "beta bias relu|gelu|silu residual out=f32|f16|bf16), e.g. 4096x4096x4096, 8@128x4096x4096:nt or " \
  "4096x14336x4096:nt+bias+gelu+out=bf16"
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
  if (!strcmp(dtype, "e4m3")) return GEMM_CODE_E4M3;
  if (!strcmp(dtype, "e5m2")) return GEMM_CODE_E5M2;
  return -1;
}

static int gemm_code_bytes(int c) { return c < 0 ? 0 : c == 0 ? 4 : GEMM_IS_FP8(c) ? 1 : 2; }

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
static const char *const gemm_out_names[] = {"f32", "f16", "bf16"};

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
    if (*s != '+') return gemm_bad_shape(err, shape, "options follow K or the layout, each after a '+'");
    s++;
    size_t n = strcspn(s, "+");
    if (n == 0 || n >= sizeof tok) return gemm_bad_shape(err, shape, "an option after '+' is empty or too long");
    memcpy(tok, s, n);
    tok[n] = '\0';
    s += n;
    int *flag = NULL, act = 0;
    if (!strncmp(tok, "b=", 2)) {
      const int b = gemm_dtype_code(tok + 2);
      if (!GEMM_IS_FP8(b) || !GEMM_IS_FP8(a_code))
        return gemm_bad_shape(err, shape, "+b= gives B an fp8 type (e4m3 or e5m2) beside an fp8 dtype");
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
      if (!GEMM_IS_FP8(a_code)) return gemm_bad_shape(err, shape, "+vscale scales fp8 inputs; the dtype is not fp8");
      flag = &e->vscale;
    } else if (!strcmp(tok, "alpha")) flag = &e->alpha;
    else if (!strcmp(tok, "beta")) flag = &e->beta;
    else if (!strcmp(tok, "bias")) flag = &e->bias;
    else if (!strcmp(tok, "residual")) flag = &e->residual;
    else
      for (int i = 1; i < 4; i++)
        if (!strcmp(tok, gemm_act_names[i])) act = i;
    if (act) {
      if (e->act) {
        snprintf(why, sizeof why, "one activation at most (+%s and +%s)", gemm_act_names[e->act], tok);
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

double gemm_epi_reference(const gemm_epi *e, double s, double beta, double acc, double c, double bias,
                          double r) {
  double v = s * acc;
  if (e->beta) v += beta * c;
  if (e->bias) v += bias;
  if (e->act == GEMM_ACT_RELU) v = v > 0 ? v : 0;
  else if (e->act == GEMM_ACT_GELU) v = 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  else if (e->act == GEMM_ACT_SILU) v = v / (1.0 + exp(-v));
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

static rt_status gemm_parse_shape(const family_ops *self, const char *shape, const char *dtype,
                                  const char *args, problem *out, rt_error *err) {
  (void)self;
  if (args && *args) {
    rt_error_locate(err, "--kv-lens", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_USAGE, "the gemm family takes no per-sequence lengths");
  }
  if (!shape || !*shape) return gemm_bad_shape(err, shape ? shape : "", "it is empty");
  if (gemm_dtype_code(dtype) < 0) {
    rt_error_set(err, RT_ERR_INVALID, "unknown gemm dtype \"%s\": use f32, tf32, f16, bf16, e4m3 or e5m2",
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
    const size_t n = strcspn(s, "+");
    if (n == 2 && (!strncmp(s, "nn", 2) || !strncmp(s, "nt", 2))) {
      snprintf(layout, sizeof layout, "%.2s", s);
    } else if (n == 2 && (!strncmp(s, "tn", 2) || !strncmp(s, "tt", 2))) {
      return gemm_bad_shape(err, shape, "A must be row-major (layouts tn and tt are not supported); use nn or nt");
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
    return gemm_bad_shape(err, shape, "fp8 inputs need B stored N x K, layout nt (wgmma and cuBLASLt read fp8 "
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
    snprintf(why, sizeof why, "its canonical text is longer than %zu characters", sizeof out->shape - 1);
    return gemm_bad_shape(err, shape, why);
  }
  return RT_OK;
}

static rt_status gemm_bind(const family_ops *self, const problem *p, rt_vars *vars) {
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
      (st = rt_vars_set(vars, "out_code", e.out_code)) ||
      (st = rt_vars_set(vars, "epi", e.on)) ||
      (st = rt_vars_set(vars, "epi_beta", e.beta)) ||
      (st = rt_vars_set(vars, "epi_bias", e.bias)) ||
      (st = rt_vars_set(vars, "epi_act", e.act)) ||
      (st = rt_vars_set(vars, "epi_res", e.residual)))
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
  gemm_epi e;
  if (gemm_problem_epi(p, &e, NULL)) return 0;
  double m = (double)problem_dim(p, "M"), n = (double)problem_dim(p, "N"), k = (double)problem_dim(p, "K");
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
  return 2.0 * gemm_out_bytes(e.out_code) * (double)problem_dim(p, "M") * (double)problem_dim(p, "N") *
         (double)problem_dim(p, "BATCH");
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
  if (e.out_code == GEMM_OUT_BF16) tol += ldexp(1.0, -8);
  else if (e.out_code == GEMM_OUT_F16) tol += ldexp(1.0, -11);
  return tol;
}

/* ---------------------------------------------------------------- cuBLASLt */

static rt_status gemm_lt_check(cublasStatus_t s, const char *what, rt_error *err) {
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
  return out_code == GEMM_OUT_F32 ? CUDA_R_32F : out_code == GEMM_OUT_F16 ? CUDA_R_16F : CUDA_R_16BF;
}

/* Descriptors for row-major D = A * B computed as column-major D^T = B^T A^T. */
typedef struct gemm_lt_desc {
  cublasLtMatmulDesc_t op;      /* compute type, transposes, epilogue, scales */
  cublasLtMatrixLayout_t a, b, c; /* cuBLASLt's A (= our B), B (= our A), C = D */
  int c_mode;                   /* what cuBLASLt's C is: 0 none (beta 0), 1 our C (beta), 2 the
                                   residual (beta 1) */
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

/* cuBLASLt's fused form of an epilogue: its epilogue value and what its C is (c_mode of
 * gemm_lt_desc).  0 when it has none (SiLU; a residual after an activation or beside beta). */
static int gemm_lt_epilogue(const gemm_epi *e, cublasLtEpilogue_t *ep, int *c_mode) {
  if (e->act == GEMM_ACT_SILU || (e->residual && (e->act || e->beta))) return 0;
  static const cublasLtEpilogue_t plain[] = {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_GELU};
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
static rt_status gemm_lt_desc_make_epi(const problem *p, int tf32, int fast_accum, const gemm_epi_args *epi,
                                       gemm_lt_desc *d, rt_error *err) {
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
  const cudaDataType_t ta_t = gemm_cuda_type(e.b_code), tb_t = gemm_cuda_type(e.a_code), tc = gemm_out_type(e.out_code);
  cublasOperation_t ta = nt ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  if ((st = gemm_lt_check(cublasLtMatmulDescCreate(&d->op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
                          "cublasLtMatmulDescCreate", err)) ||
      (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
                          "cublasLtMatmulDescSetAttribute(TRANSA)", err)) ||
      (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
                          "cublasLtMatmulDescSetAttribute(TRANSB)", err)) ||
      /* cuBLASLt's A is our B: column-major N x K (ld N) for nn, K x N (ld K) transposed for nt */
      (st = gemm_lt_check(nt ? cublasLtMatrixLayoutCreate(&d->a, ta_t, K, N, (int64_t)K)
                             : cublasLtMatrixLayoutCreate(&d->a, ta_t, N, K, (int64_t)N),
                          "cublasLtMatrixLayoutCreate(B)", err)) ||
      /* cuBLASLt's B is our A: column-major K x M, ld K */
      (st = gemm_lt_check(cublasLtMatrixLayoutCreate(&d->b, tb_t, K, M, (int64_t)K), "cublasLtMatrixLayoutCreate(A)", err)) ||
      (st = gemm_lt_check(cublasLtMatrixLayoutCreate(&d->c, tc, N, M, (int64_t)N), "cublasLtMatrixLayoutCreate(C)", err)))
    goto fail;
  if (ep != CUBLASLT_EPILOGUE_DEFAULT &&
      (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep),
                          "cublasLtMatmulDescSetAttribute(EPILOGUE)", err)))
    goto fail;
  if (e.bias) {
    const void *bias = (const void *)(uintptr_t)(epi ? epi->bias : 0);
    const int32_t bt = (int32_t)tc; /* our bias has the output's type */
    if ((st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                            "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", err)) ||
        (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt),
                            "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)", err)))
      goto fail;
  }
  if (GEMM_IS_FP8(e.a_code)) {
    /* cuBLASLt's A is our B: the scales swap too */
    const void *sa = (const void *)(uintptr_t)(epi ? epi->scale_b : 0), *sb = (const void *)(uintptr_t)(epi ? epi->scale_a : 0);
    const int8_t fast = (int8_t)(fast_accum != 0);
    const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    if (e.vscale &&
        ((st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode),
                             "cublasLtMatmulDescSetAttribute(A_SCALE_MODE)", err)) ||
         (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode),
                             "cublasLtMatmulDescSetAttribute(B_SCALE_MODE)", err))))
      goto fail;
    if ((sa && (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa),
                                   "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)", err))) ||
        (sb && (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb),
                                   "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)", err))) ||
        (st = gemm_lt_check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast),
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

static rt_status gemm_lt_desc_make(const problem *p, int tf32, gemm_lt_desc *d, rt_error *err) {
  return gemm_lt_desc_make_epi(p, tf32, 0, NULL, d, err);
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
                  "custom=%u inner=%u cluster=%u%s",
                  a->tf32 ? "32F_FAST_TF32" : "32F", a->id, a->tile, a->stages, a->splitk,
                  a->reduction, a->swizzle, a->custom, a->inner, a->cluster,
                  a->fast_accum ? " fastaccum=1" : "");
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
  const char *fa = strstr(text, " fastaccum=");
  if (fa) {
    fa += 11;
    if ((fa[0] != '0' && fa[0] != '1') || (fa[1] && fa[1] != ' '))
      return rt_error_set(err, RT_ERR_PARSE, "bad cuBLASLt algorithm \"%s\": fastaccum must be 0 or 1", text);
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
  gemm_epi e;
  rt_status st = gemm_problem_epi(p, &e, err);
  if (st) return st;
  const cudaDataType_t tA = gemm_cuda_type(e.b_code), tB = gemm_cuda_type(e.a_code), tC = gemm_out_type(e.out_code);
  int32_t splitk = a->splitk;
  uint32_t tile = a->tile, stages = a->stages, red = a->reduction, swz = a->swizzle, custom = a->custom;
  uint16_t inner = (uint16_t)a->inner, cluster = (uint16_t)a->cluster;
  cublasStatus_t s = cublasLtMatmulAlgoInit(lt, a->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                            CUDA_R_32F, tA, tB, tC, tC, a->id, algo);
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

/* D = alpha * op(A) op(B) (+ beta * Cin) with the descriptors' epilogue; Cin is ignored when
 * beta is 0 (D stands in for it). */
static rt_status gemm_lt_run(cublasLtHandle_t lt, const gemm_lt_desc *d, const cublasLtMatmulAlgo_t *algo,
                             CUdeviceptr A, CUdeviceptr B, CUdeviceptr Cin, float alpha, float beta, CUdeviceptr D,
                             CUdeviceptr ws, size_t ws_size, CUstream stream, rt_error *err) {
  if (!beta || !Cin) Cin = D;
  /* D^T = B^T A^T: cuBLASLt's A operand is our B and its B operand our A. */
  return gemm_lt_check(cublasLtMatmul(lt, d->op, &alpha, (const void *)(uintptr_t)B, d->a, (const void *)(uintptr_t)A, d->b,
                                      &beta, (const void *)(uintptr_t)Cin, d->c, (void *)(uintptr_t)D, d->c, algo,
                                      (void *)(uintptr_t)ws, ws_size, (cudaStream_t)stream),
                       "cublasLtMatmul", err);
}

/* cuBLASLt's C and beta for the descriptors' c_mode. */
static void gemm_lt_c(const gemm_lt_desc *d, const gemm_epi_args *epi, CUdeviceptr *c, float *beta) {
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

rt_status gemm_lt_matmul_epi(cublasLtHandle_t lt, const problem *p, const gemm_lt_algo *a, CUdeviceptr A,
                             CUdeviceptr B, CUdeviceptr D, const gemm_epi_args *epi, CUdeviceptr workspace,
                             size_t ws_size, CUstream stream, rt_error *err) {
  gemm_epi e;
  rt_status st = gemm_problem_epi(p, &e, err);
  if (st) return st;
  if (!epi && (e.beta || e.bias || e.residual))
    return rt_error_set(err, RT_ERR_INVALID, "gemm %s needs its epilogue's operands (C, bias or residual)", p->shape);
  gemm_lt_desc d;
  cublasLtMatmulAlgo_t algo;
  if ((st = gemm_lt_desc_make_epi(p, a ? a->tf32 : 0, a ? a->fast_accum : 0, epi, &d, err))) return st;
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
  if (!st) st = gemm_lt_run(lt, &d, &algo, A, B, c, epi ? epi->alpha : 1.0f, beta, D, workspace, ws_size, stream, err);
  gemm_lt_desc_free(&d);
  return st;
}

rt_status gemm_lt_matmul(cublasLtHandle_t lt, const problem *p, const gemm_lt_algo *a,
                         CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, CUdeviceptr workspace,
                         size_t ws_size, CUstream stream, rt_error *err) {
  return gemm_lt_matmul_epi(lt, p, a, A, B, C, NULL, workspace, ws_size, stream, err);
}

/* ---------------------------------------------------------------- GPU side */

struct family_gpu {
  problem p;                   /* the problem */
  problem pref;                /* the reference's: plain, fp32 out, bf16 for fp8 inputs */
  gemm_epi epi;                /* its operand types and epilogue */
  int code;                    /* A's dtype code */
  size_t es, bs, os;           /* bytes of an A, a B and an output element */
  size_t a_elems, b_elems, c_elems; /* elements of A, B and C over the batch */
  CUdeviceptr A, B, C, ref, ws; /* inputs, candidate output, reference product, cuBLASLt workspace */
  CUdeviceptr A16, B16;        /* fp8 inputs: their bf16 copies, which the reference multiplies */
  CUdeviceptr cin, bias, res, scales; /* the epilogue's inputs (0 when unused); scales: sa, sb */
  gemm_epi_args args;          /* what the templates get */
  size_t ws_size;              /* workspace bytes */
  float *host_ref;             /* the reference output (after the epilogue, unrounded) */
  unsigned char *host_c;       /* candidate copy for verification (output type) */
  double ref_sq;               /* sum of squares of the reference */
  double tol;                  /* the tolerance verification holds candidates to (gemm_tolerance
                                  of the problem, or a candidate's own: gpu_tolerance) */
  cublasLtHandle_t lt;         /* cuBLASLt handle (current context) */
  gemm_lt_desc ref_desc;       /* the reference matmul */
  gemm_lt_desc desc[2];        /* candidates: [0] CUBLAS_COMPUTE_32F, [1] 32F_FAST_TF32 (f32) or
                                  FAST_ACCUM (fp8); with the problem's epilogue */
  int ndesc;                   /* descriptors made: 0 when cuBLASLt cannot fuse the epilogue */
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
void gemm_gpu_epi_args(const family_gpu *g, gemm_epi_args *out) { *out = g->args; }

/* The per-tensor scale of seeded fp8 inputs: amax / max_finite with amax 1 (gemm.h). */
static float gemm_fp8_scale(int code) { return code == GEMM_CODE_E4M3 ? 1.0f / NUM_E4M3_MAX : 1.0f / NUM_E5M2_MAX; }
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
  if (code == 0) memcpy(buf + 4 * i, &v, 4);
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
static rt_status gemm_upload_random(CUdeviceptr dst, CUdeviceptr dst16, float *host, size_t n, int code,
                                    uint64_t seed, rt_error *err) {
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
    if (!st && b16) st = cuda_check(cu.cuMemcpyHtoD_v2(dst16 + off * 2, b16, cnt * 2), "upload gemm inputs", err);
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
  CUdeviceptr *bufs[] = {&g->A, &g->B, &g->C, &g->ref, &g->ws, &g->A16, &g->B16, &g->cin, &g->bias, &g->res, &g->scales};
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
static rt_status gemm_reference_problem(const problem *p, const gemm_epi *e, problem *out, rt_error *err) {
  char shape[64];
  snprintf(shape, sizeof shape, "%.*s", (int)strcspn(p->shape, "+"), p->shape);
  return gemm_parse_shape(&gemm_family, shape, GEMM_IS_FP8(e->a_code) ? "bf16" : p->dtype, NULL, out, err);
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
  float *hc = NULL, *hbias = NULL, *hres = NULL, *vsc = NULL;
  g->p = *p;
  rt_status st;
  if ((st = gemm_problem_epi(p, &g->epi, err)) || (st = gemm_reference_problem(p, &g->epi, &g->pref, err))) {
    free(g);
    return st;
  }
  const gemm_epi *e = &g->epi;
  const int fp8 = GEMM_IS_FP8(e->a_code);
  g->code = e->a_code;
  g->es = (size_t)gemm_code_bytes(e->a_code);
  g->bs = (size_t)gemm_code_bytes(e->b_code);
  g->os = (size_t)gemm_out_bytes(e->out_code);
  const size_t M = (size_t)problem_dim(p, "M"), N = (size_t)problem_dim(p, "N"), K = (size_t)problem_dim(p, "K"),
               batch = (size_t)problem_dim(p, "BATCH");
  g->a_elems = batch * M * K;
  g->b_elems = batch * K * N;
  g->c_elems = batch * M * N;
  g->ws_size = GEMM_WORKSPACE;
  if ((st = gemm_alloc(&g->A, g->a_elems * g->es, "A", err)) || (st = gemm_alloc(&g->B, g->b_elems * g->bs, "B", err)) ||
      (st = gemm_alloc(&g->C, g->c_elems * g->os, "C", err)) || (st = gemm_alloc(&g->ref, g->c_elems * 4, "reference", err)) ||
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
  if (!g->host_ref || !g->host_c || (e->beta && !hc) || (e->bias && !hbias) || (e->residual && !hres)) {
    st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for %zu output elements", g->c_elems);
    goto fail;
  }
  if ((st = gemm_upload_random(g->A, g->A16, NULL, g->a_elems, e->a_code, seed ^ 0xa11ce5eedull, err)) ||
      (st = gemm_upload_random(g->B, g->B16, NULL, g->b_elems, e->b_code, seed ^ 0xb0b5eedull, err)) ||
      (e->beta && (st = gemm_upload_random(g->cin, 0, hc, g->c_elems, e->out_code, seed ^ 0xc0ffeeull, err))) ||
      (e->bias && (st = gemm_upload_random(g->bias, 0, hbias, N, e->out_code, seed ^ 0xb1a5ull, err))) ||
      (e->residual && (st = gemm_upload_random(g->res, 0, hres, g->c_elems, e->out_code, seed ^ 0x7e51dull, err))))
    goto fail;
  /* the epilogue's scalars (gemm.h): alpha 3/sqrt(K) gives an output of RMS about 1 */
  const float sc[2] = {fp8 ? gemm_fp8_scale(e->a_code) : 1.0f, fp8 ? gemm_fp8_scale(e->b_code) : 1.0f};
  if (e->vscale) {
    vsc = malloc(4 * (M + N));
    if (!vsc) {
      st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for the fp8 scale vectors");
      goto fail;
    }
    for (size_t i = 0; i < M; i++) vsc[i] = gemm_fp8_vscale(e->a_code, (long long)i, 0);
    for (size_t i = 0; i < N; i++) vsc[M + i] = gemm_fp8_vscale(e->b_code, (long long)i, 1);
    if ((st = cuda_check(cu.cuMemcpyHtoD_v2(g->scales, vsc, 4 * (M + N)), "upload the fp8 scale vectors", err))) goto fail;
  } else if (fp8 && (st = cuda_check(cu.cuMemcpyHtoD_v2(g->scales, sc, sizeof sc), "upload the fp8 scales", err))) {
    goto fail;
  }
  g->args.c = g->cin;
  g->args.bias = g->bias;
  g->args.residual = g->res;
  g->args.scale_a = fp8 ? g->scales : 0;
  g->args.scale_b = fp8 ? g->scales + (e->vscale ? 4 * M : 4) : 0;
  g->args.alpha = e->on ? (float)(3.0 / sqrt((double)K)) : 1.0f;
  g->args.beta = e->beta ? 0.5f : 0.0f;
  g->args.flags = (e->beta ? GEMM_EPI_BETA : 0u) | (e->bias ? GEMM_EPI_BIAS : 0u) | (e->residual ? GEMM_EPI_RES : 0u) |
                  (e->vscale ? GEMM_EPI_VSCALE : 0u) | ((unsigned)e->act << GEMM_EPI_ACT_SHIFT);
  /* a copy from pageable memory may return before its DMA lands, and the candidates' stream
   * does not wait for the default stream: wait here, once */
  if ((st = cuda_check(cu.cuCtxSynchronize(), "finish the input upload", err))) goto fail;
  if ((st = gemm_lt_check(cublasLtCreate(&g->lt), "cublasLtCreate", err)) ||
      (st = gemm_lt_desc_make(&g->pref, 0, &g->ref_desc, err)))
    goto fail;
  /* the candidates' descriptors: f32 tf32 beside fp32, fp8 fast accumulation beside promotion;
   * none when cuBLASLt cannot fuse the epilogue */
  {
    const int two = g->code == 0 || fp8;
    rt_error derr = {0};
    g->ndesc = 0;
    for (int i = 0; i < 1 + two; i++) {
      st = gemm_lt_desc_make_epi(p, g->code == 0 && i, fp8 && i, &g->args, &g->desc[i], &derr);
      if (st == RT_ERR_UNSUPPORTED) break;
      if (st) {
        *err = derr;
        goto fail;
      }
      g->ndesc++;
    }
    st = RT_OK;
  }
  /* The reference: cuBLASLt's own choice with true fp32 compute and an fp32 output (bf16 copies
   * of fp8 inputs), then the epilogue here in double precision. */
  {
    cublasLtMatmulHeuristicResult_t r;
    int n = 0;
    const CUdeviceptr ra = fp8 ? g->A16 : g->A, rb = fp8 ? g->B16 : g->B;
    if ((st = gemm_lt_heuristic(g->lt, &g->ref_desc, g->ws_size, 1, &r, &n, err)) ||
        (st = cuda_check(cu.cuMemsetD32Async(g->ref, 0x7fc00000u, g->c_elems, stream), "poison reference", err)) ||
        (st = gemm_lt_run(g->lt, &g->ref_desc, &r.algo, ra, rb, 0, 1.0f, 0.0f, g->ref, g->ws, g->ws_size, stream, err)) ||
        (st = cuda_check(cu.cuStreamSynchronize(stream), "reference matmul", err)) ||
        (st = cuda_check(cu.cuMemcpyDtoH_v2(g->host_ref, g->ref, g->c_elems * 4), "download reference", err)))
      goto fail;
  }
  {
    const double s = (double)g->args.alpha * sc[0] * sc[1];
    for (size_t i = 0; i < g->c_elems; i++) {
      /* +vscale: element (m, n) of batch b is at b*M*N + m*N + n */
      const double si = vsc ? (double)g->args.alpha * vsc[i % (M * N) / N] * vsc[M + i % N] : s;
      double v = g->host_ref[i];
      if (!isfinite(v)) {
        st = rt_error_set(err, RT_ERR_INTERNAL, "the cuBLASLt reference has a non-finite element at %zu", i);
        goto fail;
      }
      if (e->on) {
        v = gemm_epi_reference(e, si, g->args.beta, v, hc ? hc[i] : 0, hbias ? hbias[i % N] : 0, hres ? hres[i] : 0);
        g->host_ref[i] = (float)v;
      }
      g->ref_sq += v * v;
    }
  }
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
  if (g->os == 4) return cuda_check(cu.cuMemsetD32Async(g->C, 0x7fc00000u, g->c_elems, stream), "poison gemm output", err);
  const unsigned short nan = g->epi.out_code == GEMM_OUT_F16 ? 0x7e00u : 0x7fc0u;
  return cuda_check(cu.cuMemsetD16Async(g->C, nan, g->c_elems, stream), "poison gemm output", err);
}

/* A rank-3 (inner, rows, batch) tensor map over a row-major operand whose rows hold `inner`
 * contiguous elements (`name` names that dimension in errors), 128-byte swizzle: A and the
 * N x K B of nt are (K, rows); the K x N B of nn is (N, K). */
static rt_status gemm_tma_operand(gemm_tma_params *o, const problem *p, int es, CUdeviceptr base,
                                  const char *what, const char *name, long long inner, long long rows,
                                  long long box_inner, long long box_rows, rt_error *err) {
  const int code = gemm_dtype_code(p->dtype);
  if (code != 1 && code != 2 && !GEMM_IS_FP8(code))
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "the TMA templates take f16, bf16 or fp8 inputs");
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
  /* split-K adds partial sums with atomics: the output (fp32: the manifests' constraints)
   * starts at zero */
  if (split > 1 && g->os != 4)
    return rt_error_set(err, RT_ERR_INVALID, "split-K adds fp32 partial sums; this output is %s",
                        gemm_out_names[g->epi.out_code]);
  if (split > 1 && (st = cuda_check(cu.cuMemsetD32Async(g->C, 0, g->c_elems, stream), "zero the split-K output", err)))
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
  return cuda_check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream, args, NULL),
                    "launch gemm template", err);
}

static rt_status gemm_gpu_verify(family_gpu *g, double *rel_error, rt_error *err) {
  rt_status st;
  *rel_error = NAN;
  if ((st = cuda_check(cu.cuCtxSynchronize(), "finish the gemm candidate", err)) ||
      (st = cuda_check(cu.cuMemcpyDtoH_v2(g->host_c, g->C, g->c_elems * g->os), "download gemm output", err)))
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
                        gemm_elem(g->host_c, first_bad, g->epi.out_code), (double)g->host_ref[first_bad]);
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
  if (g->ndesc > 1 && gemm_lt_heuristic(g->lt, &g->desc[1], g->ws_size, max, r1, &n1, NULL) != RT_OK) n1 = 0;
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

static rt_status gemm_library_describe(family_gpu *g, int i, char *buf, size_t size, rt_error *err) {
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
  return gemm_lt_run(g->lt, d, &g->lib_algo[i], g->A, g->B, c, g->args.alpha, beta, g->C, g->ws, g->ws_size, stream,
                     err);
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
    .library = "cublaslt",
    .library_list = gemm_library_list,
    .library_describe = gemm_library_describe,
    .library_launch = gemm_library_launch,
    .fused_bytes = gemm_fused_bytes,
};
