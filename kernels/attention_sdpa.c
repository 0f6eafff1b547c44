/* attention_sdpa.c — cuDNN's SDPA (see attention_sdpa.h): the identity text, the operation
 * graph in the backend API, heuristics and plans, execution.  What the tuner's cuDNN candidates
 * (attention_cudnn.c) and librooftune's fallback (runtime/attention_library.c) share. */
#include "kernels/attention_sdpa.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/attention.h"
#include "driver/cuda_driver.h"
#include "driver/cudnn.h"

#define ATTN_CUDNN_MAX_WORKSPACE ((size_t)1 << 30) /* configurations asking for more are left out */
#define ATTN_CUDNN_MAX_DESCS     96                /* descriptors of one graph */
#define ATTN_CUDNN_MAX_OPS       32

/* ---------------------------------------------------------------- the identity text */

static const struct {
  const char *name;
  int value;
} knob_names[] = {
#define KNOB_ENTRY(name, value) {#name, value},
    CUDNN_KNOB_TYPES(KNOB_ENTRY)
#undef KNOB_ENTRY
};

const char *attn_cudnn_knob_name(int type) {
  for (size_t i = 0; i < sizeof knob_names / sizeof knob_names[0]; i++)
    if (knob_names[i].value == type) return knob_names[i].name;
  return NULL;
}

int attn_cudnn_id_format(const attn_cudnn_id *id, char *buf, size_t size) {
  char knobs[ATTN_CUDNN_MAX_KNOBS * 40 + 2] = "-";
  size_t n = 0;
  for (int i = 0; i < id->nknobs && i < ATTN_CUDNN_MAX_KNOBS; i++) {
    const char *name = attn_cudnn_knob_name(id->knobs[i].type);
    int w = name ? snprintf(knobs + n, sizeof knobs - n, "%s%s:%lld", i ? "," : "", name,
                            id->knobs[i].value)
                 : snprintf(knobs + n, sizeof knobs - n, "%s%d:%lld", i ? "," : "",
                            id->knobs[i].type, id->knobs[i].value);
    if (w > 0) n += (size_t)w < sizeof knobs - n ? (size_t)w : sizeof knobs - n - 1;
  }
  return snprintf(buf, size, "cudnn sdpa engine=%lld knobs=%s version=%d", id->engine, knobs,
                  id->version);
}

static rt_status bad_id(rt_error *err, const char *text, const char *why) {
  return rt_error_set(err, RT_ERR_PARSE,
                      "bad cuDNN SDPA candidate \"%.200s\": %s; expected \"cudnn sdpa engine=N "
                      "knobs=TYPE:VALUE,...|- version=V\"",
                      text, why);
}

/* Reads a decimal integer at *s (optional '-' when allow_neg), advancing *s. */
static int read_int(const char **s, int allow_neg, long long *v) {
  const char *p = *s;
  if (*p == '-' && !allow_neg) return 0;
  if (*p != '-' && (*p < '0' || *p > '9')) return 0;
  if (*p == '-' && (p[1] < '0' || p[1] > '9')) return 0;
  char *end;
  errno = 0;
  *v = strtoll(p, &end, 10);
  if (errno) return 0;
  *s = end;
  return 1;
}

rt_status attn_cudnn_id_parse(const char *text, attn_cudnn_id *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  const char *t = text ? text : "";
  const char *s = t;
  if (strncmp(s, "cudnn sdpa ", 11) != 0)
    return bad_id(err, t, "it must start with \"cudnn sdpa \"");
  s += 11;
  long long v;
  if (strncmp(s, "engine=", 7) != 0) return bad_id(err, t, "engine= must come first");
  s += 7;
  if (!read_int(&s, 0, &v) || v > INT_MAX)
    return bad_id(err, t, "engine must be a non-negative integer");
  out->engine = v;
  if (strncmp(s, " knobs=", 7) != 0) return bad_id(err, t, "knobs= must follow the engine");
  s += 7;
  if (*s == '-' && (s[1] == ' ' || !s[1])) {
    s++;
  } else {
    for (;;) {
      int type = -1;
      if (*s >= '0' && *s <= '9') {
        if (!read_int(&s, 0, &v) || v >= CUDNN_KNOB_TYPE_COUNTS)
          return bad_id(err, t, "a knob number is out of range");
        type = (int)v;
      } else {
        size_t len = strcspn(s, ":, ");
        for (size_t i = 0; i < sizeof knob_names / sizeof knob_names[0]; i++)
          if (strlen(knob_names[i].name) == len && !strncmp(s, knob_names[i].name, len))
            type = knob_names[i].value;
        if (type < 0)
          return bad_id(err, t, "a knob type is not one of cuDNN's (cudnnBackendKnobType_t)");
        s += len;
      }
      if (*s++ != ':') return bad_id(err, t, "a knob is TYPE:VALUE");
      if (!read_int(&s, 1, &v)) return bad_id(err, t, "a knob's value must be an integer");
      if (out->nknobs >= ATTN_CUDNN_MAX_KNOBS)
        return bad_id(err, t, "more knobs than rooftune keeps (12)");
      if (out->nknobs && type <= out->knobs[out->nknobs - 1].type)
        return bad_id(err, t, "knobs must be distinct and in the order of their types");
      out->knobs[out->nknobs].type = type;
      out->knobs[out->nknobs++].value = v;
      if (*s != ',') break;
      s++;
    }
  }
  if (strncmp(s, " version=", 9) != 0) return bad_id(err, t, "version= must follow the knobs");
  s += 9;
  if (!read_int(&s, 0, &v) || v < 90000 || v >= 100000)
    return bad_id(err, t, "version must be a cuDNN 9 version such as 91900");
  out->version = (int)v;
  if (*s) return bad_id(err, t, "unexpected text after the version");
  return RT_OK;
}

/* ---------------------------------------------------------------- support rules */

static long long dim(const problem *p, const char *n) { return problem_dim(p, n); }

/* 1 when the graph of p as call runs it masks per sequence. */
static int padded_of(const problem *p, const attn_cudnn_call *call) {
  return dim(p, "PAGE") > 0 || dim(p, "RAGGED") > 0 || (call && call->device_lens);
}

rt_status attn_cudnn_supports(const problem *p, int version, rt_error *err) {
  return attn_cudnn_supports_call(p, NULL, version, err);
}

rt_status attn_cudnn_supports_call(const problem *p, const attn_cudnn_call *call, int version,
                                   rt_error *err) {
  char v[32];
  cudnn_version_text(version, v, sizeof v);
  const long long SQ = dim(p, "SQ"), SKV = dim(p, "SKV"), D = dim(p, "D");
  const int paged = dim(p, "PAGE") > 0, padded = padded_of(p, call), causal = dim(p, "CAUSAL") > 0;
  if (strcmp(p->family, "attention") != 0)
    return rt_error_set(err, RT_ERR_INVALID, "cuDNN SDPA takes attention problems, not %s",
                        p->family);
  if (strcmp(p->dtype, "bf16") && strcmp(p->dtype, "f16"))
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "cuDNN SDPA takes bf16 or f16, not %s", p->dtype);
  if (version < 90000)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "cuDNN %s is older than 9.0, whose graph API rooftune uses", v);
  if (version == 91000 || version == 91001)
    return rt_error_set(
        err, RT_ERR_UNSUPPORTED,
        "cuDNN %s has known bugs in SDPA forward for f16/bf16 (cudnn-frontend refuses it): "
        "use 9.10.2 or newer",
        v);
  if (D % 8)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "cuDNN SDPA needs the head dim to be a multiple of 8 (D is %lld)", D);
  if (D > 256)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "cuDNN SDPA takes head dims up to 256 (D is %lld)",
                        D);
  if (paged && version < 90500)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "paged K/V caches need cuDNN 9.5 or newer; this is %s", v);
  if (paged && D > 128 && version <= 90900)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "cuDNN %s pages K/V caches only for head dims up to 128", v);
  if (causal && !padded && SQ > SKV)
    return rt_error_set(
        err, RT_ERR_UNSUPPORTED,
        "cuDNN's bottom-right causal mask needs SQ <= SKV without per-sequence lengths "
        "(SQ %lld, SKV %lld)",
        SQ, SKV);
  if (causal && SQ != SKV && version < 90600 && (SQ % 64 || SKV % 64))
    return rt_error_set(
        err, RT_ERR_UNSUPPORTED,
        "cuDNN %s takes a bottom-right causal mask only when SQ and SKV are multiples of 64", v);
  return RT_OK;
}

/* ---------------------------------------------------------------- the graph */

/* Unique ids of the tensors the caller provides (virtual ones count up from UID_VIRTUAL). */
enum {
  UID_Q = 1,
  UID_K,
  UID_V,
  UID_O,
  UID_STATS,
  UID_SCALE,
  UID_SEQ_Q,
  UID_SEQ_KV,
  UID_PAGE_TABLE_K,
  UID_PAGE_TABLE_V,
  UID_NEG_INF,
  UID_SKV_SCALAR,
  UID_SQ_SCALAR,
  UID_COUNT,
  UID_VIRTUAL = 100
};

struct attn_cudnn_graph {
  problem p;
  cudnnBackendDescriptor_t descs[ATTN_CUDNN_MAX_DESCS]; /* everything made, freed in reverse */
  int ndescs;
  cudnnBackendDescriptor_t ops[ATTN_CUDNN_MAX_OPS];
  int nops;
  char op_names[ATTN_CUDNN_MAX_OPS * 18];
  cudnnBackendDescriptor_t graph;
  long long engines;
  int64_t next_uid;
  int padded, paged, bottom_right;
  long long pages;        /* in each pool when paged, else 0 */
  int has_uid[UID_COUNT]; /* which provided tensors the graph has */
  /* by-value scalars: the variant pack points at these */
  float scale, neg_inf;
  int32_t s_q, s_kv;
};

typedef struct builder {
  attn_cudnn_graph *g;
  rt_error *err;
  rt_status st; /* the first failure; later steps are skipped */
} builder;

static cudnnBackendDescriptor_t make(builder *b, int type, const char *what) {
  if (b->st) return NULL;
  if (b->g->ndescs >= ATTN_CUDNN_MAX_DESCS) {
    b->st = rt_error_set(b->err, RT_ERR_INTERNAL, "the SDPA graph needs more than %d descriptors",
                         ATTN_CUDNN_MAX_DESCS);
    return NULL;
  }
  cudnnBackendDescriptor_t d = NULL;
  char w[96];
  snprintf(w, sizeof w, "create the %s descriptor", what);
  b->st = cudnn_check(dnn.cudnnBackendCreateDescriptor(type, &d), w, b->err);
  if (b->st) return NULL;
  b->g->descs[b->g->ndescs++] = d;
  return d;
}

static void set(builder *b, cudnnBackendDescriptor_t d, int attr, int type, int64_t n,
                const void *v, const char *what) {
  if (b->st) return;
  char w[128];
  snprintf(w, sizeof w, "set %s", what);
  b->st = cudnn_check(dnn.cudnnBackendSetAttribute(d, attr, type, n, v), w, b->err);
}

static void finalize(builder *b, cudnnBackendDescriptor_t d, const char *what) {
  if (b->st) return;
  char w[128];
  snprintf(w, sizeof w, "finalize %s", what);
  b->st = cudnn_check(dnn.cudnnBackendFinalize(d), w, b->err);
}

static void add_op(builder *b, cudnnBackendDescriptor_t op, const char *name) {
  if (b->st) return;
  attn_cudnn_graph *g = b->g;
  if (g->nops >= ATTN_CUDNN_MAX_OPS) {
    b->st = rt_error_set(b->err, RT_ERR_INTERNAL, "the SDPA graph needs more than %d operations",
                         ATTN_CUDNN_MAX_OPS);
    return;
  }
  g->ops[g->nops++] = op;
  size_t n = strlen(g->op_names);
  snprintf(g->op_names + n, sizeof g->op_names - n, "%s%s", n ? " " : "", name);
}

typedef struct shape4 {
  int64_t d[4], s[4];
} shape4;

static shape4 shape(int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t s0, int64_t s1,
                    int64_t s2, int64_t s3) {
  shape4 x = {{d0, d1, d2, d3}, {s0, s1, s2, s3}};
  return x;
}

/* A tensor: uid 0 takes the next virtual id (and makes it virtual). */
static cudnnBackendDescriptor_t tensor(builder *b, int64_t uid, int dtype, shape4 sh, int by_value,
                                       const char *what) {
  cudnnBackendDescriptor_t t = make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
  bool virt = uid == 0, byval = by_value != 0;
  if (virt) uid = b->g->next_uid++;
  int64_t align = 16;
  set(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dtype, what);
  set(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, sh.d, what);
  set(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, sh.s, what);
  set(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what);
  set(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, what);
  if (virt) set(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt, what);
  if (byval) set(b, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byval, what);
  finalize(b, t, what);
  if (!virt && uid < UID_COUNT && !b->st) b->g->has_uid[uid] = 1;
  return t;
}

static const char *pw_name(int mode) {
  switch (mode) {
    case CUDNN_POINTWISE_ADD: return "add";
    case CUDNN_POINTWISE_MUL: return "mul";
    case CUDNN_POINTWISE_DIV: return "div";
    case CUDNN_POINTWISE_SUB: return "sub";
    case CUDNN_POINTWISE_EXP: return "exp";
    case CUDNN_POINTWISE_LOG: return "log";
    case CUDNN_POINTWISE_CMP_GE: return "cmp_ge";
    case CUDNN_POINTWISE_CMP_LT: return "cmp_lt";
    case CUDNN_POINTWISE_LOGICAL_AND: return "and";
    case CUDNN_POINTWISE_GEN_INDEX: return "gen_index";
    case CUDNN_POINTWISE_BINARY_SELECT: return "select";
  }
  return "pointwise";
}

/* y = mode(x[, bb][, t]) computed in `compute`; axis >= 0 for GEN_INDEX. */
static void pointwise(builder *b, int mode, int compute, cudnnBackendDescriptor_t x,
                      cudnnBackendDescriptor_t bb, cudnnBackendDescriptor_t t,
                      cudnnBackendDescriptor_t y, int64_t axis) {
  const char *name = pw_name(mode);
  char what[64];
  snprintf(what, sizeof what, "pointwise %s", name);
  cudnnBackendDescriptor_t pw = make(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what);
  set(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what);
  set(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute, what);
  if (axis >= 0) set(b, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, what);
  finalize(b, pw, what);
  cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
  float one = 1.0f;
  set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw,
      what);
  set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
  set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
  if (bb)
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bb, what);
  if (t)
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t, what);
  set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one, what);
  set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one, what);
  finalize(b, op, what);
  add_op(b, op, name);
}

static void reduction(builder *b, int op_kind, cudnnBackendDescriptor_t x,
                      cudnnBackendDescriptor_t y) {
  const char *what = op_kind == CUDNN_REDUCE_TENSOR_MAX ? "reduction max" : "reduction add";
  int compute = CUDNN_DATA_FLOAT;
  bool deterministic = false;
  cudnnBackendDescriptor_t r = make(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what);
  set(b, r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what);
  set(b, r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &op_kind, what);
  if (dnn.version >= 91100)
    set(b, r, CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, CUDNN_TYPE_BOOLEAN, 1, &deterministic, what);
  finalize(b, r, what);
  cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
  set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &r, what);
  set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
  set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
  finalize(b, op, what);
  add_op(b, op, op_kind == CUDNN_REDUCE_TENSOR_MAX ? "max" : "sum");
}

/* c = a b, fp32 compute; the overrides (may be NULL) are the per-sequence M / N / K. */
static void matmul(builder *b, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t bb,
                   cudnnBackendDescriptor_t c, cudnnBackendDescriptor_t m_override,
                   cudnnBackendDescriptor_t n_override, cudnnBackendDescriptor_t k_override,
                   const char *what) {
  int compute = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t mm = make(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR, what);
  set(b, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what);
  finalize(b, mm, what);
  cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, what);
  set(b, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, what);
  set(b, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bb, what);
  set(b, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, what);
  set(b, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, what);
  if (m_override)
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &m_override, what);
  if (n_override)
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &n_override, what);
  if (k_override)
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &k_override, what);
  finalize(b, op, what);
  add_op(b, op, "matmul");
}

static void paged_load(builder *b, cudnnBackendDescriptor_t pool, cudnnBackendDescriptor_t table,
                       cudnnBackendDescriptor_t seq, cudnnBackendDescriptor_t y, const char *what) {
  cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR, what);
  set(b, op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
      &pool, what);
  set(b, op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      1, &table, what);
  set(b, op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
      &seq, what);
  set(b, op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
      what);
  finalize(b, op, what);
  add_op(b, op, "paged_load");
}

void attn_cudnn_graph_free(attn_cudnn_graph *g) {
  if (!g) return;
  if (dnn.handle)
    for (int i = g->ndescs - 1; i >= 0; i--) dnn.cudnnBackendDestroyDescriptor(g->descs[i]);
  free(g);
}

const char *attn_cudnn_graph_ops(const attn_cudnn_graph *g) { return g->op_names; }
int attn_cudnn_graph_padded(const attn_cudnn_graph *g) { return g->padded; }
float attn_cudnn_graph_scale(const attn_cudnn_graph *g) { return g->scale; }
long long attn_cudnn_graph_pages(const attn_cudnn_graph *g) { return g->pages; }
long long attn_cudnn_graph_engines(const attn_cudnn_graph *g) { return g->engines; }
void *attn_cudnn_graph_desc(const attn_cudnn_graph *g) { return g->graph; }

rt_status attn_cudnn_graph_build(const problem *p, void *handle, attn_cudnn_graph **out,
                                 rt_error *err) {
  return attn_cudnn_graph_build_call(p, NULL, handle, out, err);
}

/* The pages of each pool: the call's, else what the problem's sequences need. */
static long long pool_pages(const problem *p, const attn_cudnn_call *call) {
  const long long B = dim(p, "B"), SKV = dim(p, "SKV"), PAGE = dim(p, "PAGE");
  if (PAGE <= 0) return 0;
  if (call && call->num_pages > 0) return call->num_pages;
  long long pages = B * ((SKV + PAGE - 1) / PAGE);
  if (dim(p, "RAGGED")) {
    pages = 0;
    for (int i = 0; i < B; i++) pages += (attention_kv_len(p, i) + PAGE - 1) / PAGE;
    if (pages < 1) pages = 1;
  }
  return pages;
}

/* S with what lies past a sequence's length (row >= seq_q or col >= seq_kv) set to -inf. */
static cudnnBackendDescriptor_t padding_mask(builder *b, cudnnBackendDescriptor_t last,
                                             shape4 s_rows, cudnnBackendDescriptor_t seq_q,
                                             cudnnBackendDescriptor_t seq_kv,
                                             cudnnBackendDescriptor_t neg_inf) {
  cudnnBackendDescriptor_t row = tensor(b, 0, CUDNN_DATA_INT32, s_rows, 0, "padding row index");
  pointwise(b, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, last, NULL, NULL, row, 2);
  cudnnBackendDescriptor_t col = tensor(b, 0, CUDNN_DATA_INT32, s_rows, 0, "padding column index");
  pointwise(b, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, last, NULL, NULL, col, 3);
  cudnnBackendDescriptor_t rm = tensor(b, 0, CUDNN_DATA_BOOLEAN, s_rows, 0, "row < seq_q");
  pointwise(b, CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, row, seq_q, NULL, rm, -1);
  cudnnBackendDescriptor_t cm = tensor(b, 0, CUDNN_DATA_BOOLEAN, s_rows, 0, "col < seq_kv");
  pointwise(b, CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, col, seq_kv, NULL, cm, -1);
  cudnnBackendDescriptor_t keep = tensor(b, 0, CUDNN_DATA_BOOLEAN, s_rows, 0, "padding mask");
  pointwise(b, CUDNN_POINTWISE_LOGICAL_AND, CUDNN_DATA_BOOLEAN, rm, cm, NULL, keep, -1);
  cudnnBackendDescriptor_t sp = tensor(b, 0, CUDNN_DATA_FLOAT, s_rows, 0, "padded S");
  pointwise(b, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, last, neg_inf, keep, sp, -1);
  return sp;
}

/* S with what lies above the causal diagonal set to -inf: row >= col, or from the bottom right
 * (row + seq_kv - seq_q >= col) where the lengths differ or are padded. */
static cudnnBackendDescriptor_t causal_mask(builder *b, cudnnBackendDescriptor_t last,
                                            shape4 s_rows, shape4 one,
                                            cudnnBackendDescriptor_t seq_q,
                                            cudnnBackendDescriptor_t seq_kv,
                                            cudnnBackendDescriptor_t neg_inf) {
  const attn_cudnn_graph *g = b->g;
  cudnnBackendDescriptor_t row = tensor(b, 0, CUDNN_DATA_INT32, s_rows, 0, "causal row index");
  pointwise(b, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, last, NULL, NULL, row, 2);
  cudnnBackendDescriptor_t col = tensor(b, 0, CUDNN_DATA_INT32, s_rows, 0, "causal column index");
  pointwise(b, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, last, NULL, NULL, col, 3);
  if (g->bottom_right) {
    cudnnBackendDescriptor_t skv = seq_kv, sq = seq_q;
    if (!g->padded) {
      skv = tensor(b, UID_SKV_SCALAR, CUDNN_DATA_INT32, one, 1, "SKV");
      sq = tensor(b, UID_SQ_SCALAR, CUDNN_DATA_INT32, one, 1, "SQ");
    }
    cudnnBackendDescriptor_t r1 = tensor(b, 0, CUDNN_DATA_INT32, s_rows, 0, "row + seq_kv");
    pointwise(b, CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, row, skv, NULL, r1, -1);
    cudnnBackendDescriptor_t r2 = tensor(b, 0, CUDNN_DATA_INT32, s_rows, 0, "row + seq_kv - seq_q");
    pointwise(b, CUDNN_POINTWISE_SUB, CUDNN_DATA_INT32, r1, sq, NULL, r2, -1);
    row = r2;
  }
  cudnnBackendDescriptor_t keep = tensor(b, 0, CUDNN_DATA_BOOLEAN, s_rows, 0, "causal mask");
  pointwise(b, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, col, NULL, keep, -1);
  cudnnBackendDescriptor_t sc = tensor(b, 0, CUDNN_DATA_FLOAT, s_rows, 0, "masked S");
  pointwise(b, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, last, neg_inf, keep, sc, -1);
  return sc;
}

/* P = softmax(S) in the input dtype IO (what the second matmul reads), and its log-sum-exp into
 * STATS. */
static cudnnBackendDescriptor_t softmax_lse(builder *b, cudnnBackendDescriptor_t last,
                                            shape4 s_rows, shape4 s_stat, int io,
                                            cudnnBackendDescriptor_t stats) {
  cudnnBackendDescriptor_t m = tensor(b, 0, CUDNN_DATA_FLOAT, s_stat, 0, "row max");
  reduction(b, CUDNN_REDUCE_TENSOR_MAX, last, m);
  cudnnBackendDescriptor_t sub = tensor(b, 0, CUDNN_DATA_FLOAT, s_rows, 0, "S - max");
  pointwise(b, CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, last, m, NULL, sub, -1);
  cudnnBackendDescriptor_t e = tensor(b, 0, CUDNN_DATA_FLOAT, s_rows, 0, "exp(S - max)");
  pointwise(b, CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, sub, NULL, NULL, e, -1);
  cudnnBackendDescriptor_t z = tensor(b, 0, CUDNN_DATA_FLOAT, s_stat, 0, "row sum");
  reduction(b, CUDNN_REDUCE_TENSOR_ADD, e, z);
  cudnnBackendDescriptor_t lz = tensor(b, 0, CUDNN_DATA_FLOAT, s_stat, 0, "log(row sum)");
  pointwise(b, CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, z, NULL, NULL, lz, -1);
  pointwise(b, CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, m, lz, NULL, stats, -1);
  cudnnBackendDescriptor_t pr =
      tensor(b, 0, io, s_rows, 0, "P"); /* bmm2 reads P in the input dtype */
  pointwise(b, CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, e, z, NULL, pr, -1);
  return pr;
}

rt_status attn_cudnn_graph_build_call(const problem *p, const attn_cudnn_call *call, void *handle,
                                      attn_cudnn_graph **out, rt_error *err) {
  *out = NULL;
  rt_status st = cudnn_load(err);
  if (st) return st;
  if ((st = attn_cudnn_supports_call(p, call, dnn.version, err))) return st;
  attn_cudnn_graph *g = calloc(1, sizeof *g);
  if (!g) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  g->p = *p;
  g->next_uid = UID_VIRTUAL;
  const int64_t B = dim(p, "B"), HQ = dim(p, "HQ"), HKV = dim(p, "HKV"), SQ = dim(p, "SQ"),
                SKV = dim(p, "SKV"), D = dim(p, "D"), PAGE = dim(p, "PAGE");
  const int io = strcmp(p->dtype, "bf16") ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
  g->paged = PAGE > 0;
  g->padded = padded_of(p, call);
  g->pages = pool_pages(p, call);
  const int causal = dim(p, "CAUSAL") > 0;
  g->bottom_right = causal && (g->padded || SQ != SKV);
  g->scale = call && call->scale != 0 ? call->scale : (float)(1.0 / sqrt((double)D));
  g->neg_inf =
      dnn.version < 91000 ? -FLT_MAX : -INFINITY; /* older cuDNN masks with the lowest float */
  g->s_q = (int32_t)SQ;
  g->s_kv = (int32_t)SKV;
  builder bd = {g, err, RT_OK}, *b = &bd;

  /* the family's tensors, [B, S, H, D] in memory, as cuDNN's [B, H, S, D] with strides */
  const shape4 one = shape(1, 1, 1, 1, 1, 1, 1, 1);
  const shape4 s_rows = shape(B, HQ, SQ, SKV, HQ * SQ * SKV, SQ * SKV, SKV, 1); /* scores */
  const shape4 s_stat = shape(B, HQ, SQ, 1, HQ * SQ, SQ, 1, 1);                 /* one per row */
  cudnnBackendDescriptor_t q =
      tensor(b, UID_Q, io, shape(B, HQ, SQ, D, SQ * HQ * D, D, HQ * D, 1), 0, "Q");
  cudnnBackendDescriptor_t o =
      tensor(b, UID_O, io, shape(B, HQ, SQ, D, SQ * HQ * D, D, HQ * D, 1), 0, "O");
  cudnnBackendDescriptor_t stats = tensor(b, UID_STATS, CUDNN_DATA_FLOAT, s_stat, 0, "the LSE");
  cudnnBackendDescriptor_t scale = tensor(b, UID_SCALE, CUDNN_DATA_FLOAT, one, 1, "the scale");
  cudnnBackendDescriptor_t neg_inf = NULL, seq_q = NULL, seq_kv = NULL, kt, v;
  if (g->padded || causal) neg_inf = tensor(b, UID_NEG_INF, CUDNN_DATA_FLOAT, one, 1, "-inf");
  if (g->padded) {
    const shape4 per_seq = shape(B, 1, 1, 1, 1, 1, 1, 1);
    seq_q = tensor(b, UID_SEQ_Q, CUDNN_DATA_INT32, per_seq, 0, "the query lengths");
    seq_kv = tensor(b, UID_SEQ_KV, CUDNN_DATA_INT32, per_seq, 0, "the KV lengths");
  }
  cudnnBackendDescriptor_t vpool = NULL, tv = NULL;
  if (g->paged) {
    /* the pool holds every sequence's pages (attention.h: num_pages), or the call's */
    const long long mp = (SKV + PAGE - 1) / PAGE, pages = g->pages;
    const shape4 pool = shape(pages, HKV, PAGE, D, PAGE * HKV * D, D, HKV * D, 1);
    const shape4 table = shape(B, 1, mp, 1, mp, mp, 1, 1);
    cudnnBackendDescriptor_t kpool = tensor(b, UID_K, io, pool, 0, "the K pool");
    vpool = tensor(b, UID_V, io, pool, 0, "the V pool");
    cudnnBackendDescriptor_t tk =
        tensor(b, UID_PAGE_TABLE_K, CUDNN_DATA_INT32, table, 0, "the K block table");
    tv = tensor(b, UID_PAGE_TABLE_V, CUDNN_DATA_INT32, table, 0, "the V block table");
    /* K^T [B, HKV, D, SKV] and V [B, HKV, SKV, D] gathered from the pools (virtual) */
    kt = tensor(b, 0, io, shape(B, HKV, D, SKV, D * SKV * HKV, D * SKV, 1, D), 0, "K^T gathered");
    paged_load(b, kpool, tk, seq_kv, kt, "paged load of K");
    v = tensor(b, 0, io, shape(B, HKV, SKV, D, D * SKV * HKV, D * SKV, D, 1), 0, "V gathered");
  } else {
    kt = tensor(b, UID_K, io, shape(B, HKV, D, SKV, SKV * HKV * D, D, 1, HKV * D), 0, "K^T");
    v = tensor(b, UID_V, io, shape(B, HKV, SKV, D, SKV * HKV * D, D, HKV * D, 1), 0, "V");
  }

  /* S = scale * Q K^T */
  cudnnBackendDescriptor_t s = tensor(b, 0, CUDNN_DATA_FLOAT, s_rows, 0, "S");
  matmul(b, q, kt, s, seq_q, seq_kv, NULL, "matmul Q K^T");
  cudnnBackendDescriptor_t s1 = tensor(b, 0, CUDNN_DATA_FLOAT, s_rows, 0, "scaled S");
  pointwise(b, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, s, scale, NULL, s1, -1);
  cudnnBackendDescriptor_t last = s1;

  if (g->padded) last = padding_mask(b, last, s_rows, seq_q, seq_kv, neg_inf);
  if (causal) last = causal_mask(b, last, s_rows, one, seq_q, seq_kv, neg_inf);
  cudnnBackendDescriptor_t pr = softmax_lse(b, last, s_rows, s_stat, io, stats);

  /* O = P V (the V gather sits where cudnn-frontend puts it, just before) */
  if (g->paged) paged_load(b, vpool, tv, seq_kv, v, "paged load of V");
  matmul(b, pr, v, o, seq_q, NULL, seq_kv, "matmul P V");

  cudnnBackendDescriptor_t graph =
      make(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
  set(b, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, g->nops, g->ops,
      "the graph's operations");
  if (handle)
    set(b, graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle,
        "the graph's handle");
  finalize(b, graph, "the SDPA operation graph");
  if (!b->st) {
    int64_t n = 0, count = 0;
    b->st = cudnn_check(
        dnn.cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT,
                                     CUDNN_TYPE_INT64, 1, &n, &count),
        "count the graph's engines", err);
    g->engines = count;
  }
  if (b->st) {
    attn_cudnn_graph_free(g);
    return b->st;
  }
  g->graph = graph;
  *out = g;
  return RT_OK;
}

/* ---------------------------------------------------------------- candidates on a GPU */

/* A candidate: its identity, and once built (on its first run: a plan may compile kernels at
 * run time, so listing stays quick and the cost falls on the candidate's own evaluation) its
 * descriptors; a build that failed is remembered with cuDNN's message. */
typedef struct candidate {
  attn_cudnn_id id;
  char text[256];
  int built;
  rt_status failed; /* RT_OK, or why it cannot be built */
  char why[512];
  cudnnBackendDescriptor_t engine, cfg, plan;
  cudnnBackendDescriptor_t knobs[ATTN_CUDNN_MAX_KNOBS];
  int nknob_descs;
  size_t workspace; /* bytes */
} candidate;

struct attn_cudnn {
  problem p;
  attn_cudnn_call call; /* what the call adds to the problem */
  attn_cudnn_io io;
  cudnnHandle_t handle;
  attn_cudnn_graph *graph;
  CUdeviceptr seq_q, seq_kv; /* int32 [B] when the graph is padded */
  CUdeviceptr ws;            /* workspace for every candidate */
  size_t ws_size;
  cudnnBackendDescriptor_t pack; /* the variant pack over the buffers and ws */
  candidate cand[ATTN_CUDNN_MAX_CANDIDATES];
  int n;
};

static void destroy(cudnnBackendDescriptor_t *d) {
  if (*d && dnn.handle) dnn.cudnnBackendDestroyDescriptor(*d);
  *d = NULL;
}

/* Destroys a candidate's descriptors; its identity stays. */
static void candidate_release(candidate *k) {
  destroy(&k->plan);
  destroy(&k->cfg);
  for (int i = k->nknob_descs - 1; i >= 0; i--) destroy(&k->knobs[i]);
  k->nknob_descs = 0;
  destroy(&k->engine);
  k->built = 0;
  k->workspace = 0;
}

static void candidate_free(candidate *k) {
  candidate_release(k);
  memset(k, 0, sizeof *k);
}

/* A candidate of identity id, not built yet. */
static void candidate_init(candidate *k, const attn_cudnn_id *id) {
  memset(k, 0, sizeof *k);
  k->id = *id;
  attn_cudnn_id_format(id, k->text, sizeof k->text);
}

static int cmp_knob(const void *a, const void *b) {
  const attn_cudnn_knob *x = a, *y = b;
  return (x->type > y->type) - (x->type < y->type);
}

/* The identity of an engine configuration from cuDNN's heuristics. */
static rt_status read_cfg(cudnnBackendDescriptor_t cfg, attn_cudnn_id *id, rt_error *err) {
  memset(id, 0, sizeof *id);
  id->version = dnn.version;
  cudnnBackendDescriptor_t engine = NULL, knobs[CUDNN_KNOB_TYPE_COUNTS] = {NULL};
  int nk = 0;
  int64_t n = 0, index = -1;
  rt_status st =
      cudnn_check(dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine),
                  "create an engine descriptor", err);
  if (!st)
    st = cudnn_check(dnn.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine),
                     "read an engine configuration's engine", err);
  if (!st)
    st = cudnn_check(dnn.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                  CUDNN_TYPE_INT64, 1, &n, &index),
                     "read an engine's global index", err);
  for (; !st && nk < CUDNN_KNOB_TYPE_COUNTS; nk++)
    st = cudnn_check(
        dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[nk]),
        "create a knob choice descriptor", err);
  int64_t got = 0;
  if (!st)
    st = cudnn_check(dnn.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                                  CUDNN_KNOB_TYPE_COUNTS, &got, knobs),
                     "read an engine configuration's knobs", err);
  if (!st && got > ATTN_CUDNN_MAX_KNOBS)
    st =
        rt_error_set(err, RT_ERR_UNSUPPORTED, "cuDNN engine %lld has %lld knobs; rooftune keeps %d",
                     (long long)index, (long long)got, ATTN_CUDNN_MAX_KNOBS);
  for (int64_t i = 0; !st && i < got; i++) {
    int type = 0;
    int64_t value = 0;
    st = cudnn_check(dnn.cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                                  CUDNN_TYPE_KNOB_TYPE, 1, &n, &type),
                     "read a knob's type", err);
    if (!st)
      st = cudnn_check(dnn.cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                                    CUDNN_TYPE_INT64, 1, &n, &value),
                       "read a knob's value", err);
    id->knobs[i].type = type;
    id->knobs[i].value = value;
  }
  if (!st) {
    id->engine = index;
    id->nknobs = (int)got;
    qsort(id->knobs, (size_t)id->nknobs, sizeof id->knobs[0], cmp_knob);
  }
  for (int i = nk - 1; i >= 0; i--) destroy(&knobs[i]);
  destroy(&engine);
  return st;
}

/* The engine, knob choices and engine configuration an identity names, finalized for graph g
 * (devprop: a device property descriptor, or NULL for the current GPU).  On failure what was
 * made is destroyed. */
static rt_status make_config(const attn_cudnn_graph *g, const attn_cudnn_id *id, void *devprop,
                             cudnnBackendDescriptor_t *engine, cudnnBackendDescriptor_t *knobs,
                             int *nknobs, cudnnBackendDescriptor_t *cfg, rt_error *err) {
  *engine = *cfg = NULL;
  *nknobs = 0;
  if (id->engine < 0 || id->engine >= g->engines)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "cuDNN has engines 0 to %lld for this graph, not %lld", g->engines - 1,
                        id->engine);
  void *graph = g->graph;
  int64_t index = id->engine;
  char what[96];
  snprintf(what, sizeof what, "cuDNN engine %lld", id->engine);
  rt_status st =
      cudnn_check(dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, engine),
                  "create an engine descriptor", err);
  if (!st)
    st = cudnn_check(dnn.cudnnBackendSetAttribute(*engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph),
                     "set the engine's graph", err);
  if (!st)
    st = cudnn_check(dnn.cudnnBackendSetAttribute(*engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                  CUDNN_TYPE_INT64, 1, &index),
                     "set the engine's index", err);
  if (!st && devprop)
    st = cudnn_check(dnn.cudnnBackendSetAttribute(*engine, CUDNN_ATTR_ENGINE_DEVICEPROP,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &devprop),
                     "set the engine's device", err);
  if (!st) st = cudnn_check(dnn.cudnnBackendFinalize(*engine), what, err);
  for (int i = 0; !st && i < id->nknobs; i++) {
    int type = id->knobs[i].type;
    int64_t value = id->knobs[i].value;
    st = cudnn_check(
        dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[i]),
        "create a knob choice", err);
    if (!st) *nknobs = i + 1;
    if (!st)
      st = cudnn_check(dnn.cudnnBackendSetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                                    CUDNN_TYPE_KNOB_TYPE, 1, &type),
                       "set a knob's type", err);
    if (!st)
      st = cudnn_check(dnn.cudnnBackendSetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                                    CUDNN_TYPE_INT64, 1, &value),
                       "set a knob's value", err);
    if (!st) st = cudnn_check(dnn.cudnnBackendFinalize(knobs[i]), "finalize a knob choice", err);
  }
  if (!st)
    st = cudnn_check(dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, cfg),
                     "create an engine configuration", err);
  if (!st)
    st = cudnn_check(dnn.cudnnBackendSetAttribute(*cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, engine),
                     "set the configuration's engine", err);
  if (!st)
    st = cudnn_check(dnn.cudnnBackendSetAttribute(*cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, id->nknobs, knobs),
                     "set the configuration's knobs", err);
  if (!st)
    st = cudnn_check(dnn.cudnnBackendFinalize(*cfg), "finalize the engine configuration", err);
  if (st) {
    destroy(cfg);
    for (int i = *nknobs - 1; i >= 0; i--) destroy(&knobs[i]);
    *nknobs = 0;
    destroy(engine);
  }
  return st;
}

rt_status attn_cudnn_graph_config(const attn_cudnn_graph *g, const char *text, void *devprop,
                                  rt_error *err) {
  attn_cudnn_id id;
  rt_status st = attn_cudnn_id_parse(text, &id, err);
  if (st) return st;
  cudnnBackendDescriptor_t engine, cfg, knobs[ATTN_CUDNN_MAX_KNOBS];
  int nk = 0;
  if ((st = make_config(g, &id, devprop, &engine, knobs, &nk, &cfg, err))) return st;
  destroy(&cfg);
  for (int i = nk - 1; i >= 0; i--) destroy(&knobs[i]);
  destroy(&engine);
  return RT_OK;
}

/* Engine configuration and execution plan of k's identity. */
static rt_status build_plan(attn_cudnn *c, candidate *k, rt_error *err) {
  int64_t n = 0, ws = 0;
  char what[320];
  rt_status st =
      make_config(c->graph, &k->id, NULL, &k->engine, k->knobs, &k->nknob_descs, &k->cfg, err);
  if (!st)
    st = cudnn_check(
        dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &k->plan),
        "create an execution plan", err);
  if (!st)
    st = cudnn_check(dnn.cudnnBackendSetAttribute(k->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                                  CUDNN_TYPE_HANDLE, 1, &c->handle),
                     "set the plan's handle", err);
  if (!st)
    st = cudnn_check(dnn.cudnnBackendSetAttribute(k->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &k->cfg),
                     "set the plan's configuration", err);
  if (!st) {
    snprintf(what, sizeof what, "build the plan of \"%s\"", k->text);
    st = cudnn_check(dnn.cudnnBackendFinalize(k->plan), what, err);
  }
  if (!st)
    st = cudnn_check(dnn.cudnnBackendGetAttribute(k->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                  CUDNN_TYPE_INT64, 1, &n, &ws),
                     "read the plan's workspace size", err);
  if (!st && (ws < 0 || (size_t)ws > ATTN_CUDNN_MAX_WORKSPACE))
    st = rt_error_set(err, RT_ERR_UNSUPPORTED,
                      "\"%s\" wants %lld bytes of workspace; rooftune allows %zu", k->text,
                      (long long)ws, ATTN_CUDNN_MAX_WORKSPACE);
  if (st) {
    candidate_release(k);
    return st;
  }
  k->workspace = (size_t)ws;
  k->built = 1;
  return RT_OK;
}

/* (Re)makes the workspace for the largest candidate and the variant pack over it. */
static rt_status make_pack(attn_cudnn *c, rt_error *err) {
  size_t need = 0;
  for (int i = 0; i < c->n; i++)
    if (c->cand[i].workspace > need) need = c->cand[i].workspace;
  rt_status st;
  if (need > c->ws_size || !c->pack) {
    if (need > c->ws_size) {
      /* a run in flight may still use the old workspace */
      if (c->ws &&
          (st = cuda_check(cu.cuCtxSynchronize(), "finish the runs on cuDNN's workspace", err)))
        return st;
      if (c->ws) cu.cuMemFree_v2(c->ws);
      c->ws = 0;
      c->ws_size = 0;
      if ((st = cuda_check(cu.cuMemAlloc_v2(&c->ws, need), "allocate cuDNN's workspace", err)))
        return st;
      c->ws_size = need;
    }
    destroy(&c->pack);
    const attn_cudnn_graph *g = c->graph;
    int64_t uids[UID_COUNT];
    void *ptrs[UID_COUNT];
    int n = 0;
    for (int u = 1; u < UID_COUNT; u++) {
      if (!g->has_uid[u]) continue;
      void *p = NULL;
      switch (u) {
        case UID_Q: p = (void *)(uintptr_t)c->io.q; break;
        case UID_K: p = (void *)(uintptr_t)c->io.k; break;
        case UID_V: p = (void *)(uintptr_t)c->io.v; break;
        case UID_O: p = (void *)(uintptr_t)c->io.o; break;
        case UID_STATS: p = (void *)(uintptr_t)c->io.lse; break;
        case UID_SCALE: p = (void *)&g->scale; break;
        case UID_NEG_INF: p = (void *)&g->neg_inf; break;
        case UID_SEQ_Q: p = (void *)(uintptr_t)c->seq_q; break;
        case UID_SEQ_KV:
          p = (void *)(uintptr_t)(c->call.device_lens ? c->io.seq_kv : c->seq_kv);
          break;
        case UID_PAGE_TABLE_K:
        case UID_PAGE_TABLE_V: p = (void *)(uintptr_t)c->io.block_table; break;
        case UID_SKV_SCALAR: p = (void *)&g->s_kv; break;
        case UID_SQ_SCALAR: p = (void *)&g->s_q; break;
      }
      uids[n] = u;
      ptrs[n++] = p;
    }
    void *ws = (void *)(uintptr_t)c->ws;
    st = cudnn_check(
        dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &c->pack),
        "create the variant pack", err);
    if (!st)
      st = cudnn_check(dnn.cudnnBackendSetAttribute(c->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                                    CUDNN_TYPE_INT64, n, uids),
                       "set the variant pack's ids", err);
    if (!st)
      st = cudnn_check(dnn.cudnnBackendSetAttribute(c->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                                    CUDNN_TYPE_VOID_PTR, n, ptrs),
                       "set the variant pack's pointers", err);
    if (!st)
      st = cudnn_check(dnn.cudnnBackendSetAttribute(c->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                                    CUDNN_TYPE_VOID_PTR, 1, &ws),
                       "set the variant pack's workspace", err);
    if (!st) st = cudnn_check(dnn.cudnnBackendFinalize(c->pack), "finalize the variant pack", err);
    if (st) {
      destroy(&c->pack);
      return st;
    }
  }
  return RT_OK;
}

static void drop_candidates(attn_cudnn *c) {
  for (int i = 0; i < c->n; i++) candidate_free(&c->cand[i]);
  c->n = 0;
}

void attn_cudnn_close(attn_cudnn *c) {
  if (!c) return;
  drop_candidates(c);
  destroy(&c->pack);
  attn_cudnn_graph_free(c->graph);
  if (cu.handle) {
    if (c->ws) cu.cuMemFree_v2(c->ws);
    if (c->seq_q) cu.cuMemFree_v2(c->seq_q);
    if (c->seq_kv) cu.cuMemFree_v2(c->seq_kv);
  }
  if (c->handle && dnn.handle) dnn.cudnnDestroy(c->handle);
  free(c);
}

rt_status attn_cudnn_open(const problem *p, const attn_cudnn_io *io, attn_cudnn **out,
                          rt_error *err) {
  return attn_cudnn_open_call(p, NULL, io, out, err);
}

void attn_cudnn_bind(attn_cudnn *c, const attn_cudnn_io *io) {
  if (!memcmp(&c->io, io, sizeof *io)) return;
  c->io = *io;
  destroy(&c->pack); /* remade over the new buffers before the next run */
}

rt_status attn_cudnn_open_call(const problem *p, const attn_cudnn_call *call,
                               const attn_cudnn_io *io, attn_cudnn **out, rt_error *err) {
  *out = NULL;
  rt_status st = cudnn_load(err);
  if (st) return st;
  if ((st = attn_cudnn_supports_call(p, call, dnn.version, err))) return st;
  if (!cu.handle)
    return rt_error_set(err, RT_ERR_NO_DRIVER,
                        "cuDNN SDPA needs a loaded CUDA driver and a current context");
  CUdevice dev;
  int major = 0;
  if ((st = cuda_check(cu.cuCtxGetDevice(&dev), "find the current GPU", err)) ||
      (st = cuda_check(
           cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
           "read the GPU's compute capability", err)))
    return st;
  if (major < 8)
    return rt_error_set(
        err, RT_ERR_UNSUPPORTED,
        "cuDNN SDPA for f16/bf16 needs compute capability 8.0 or newer (this GPU is %d.x)", major);
  attn_cudnn *c = calloc(1, sizeof *c);
  if (!c) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  c->p = *p;
  if (call) c->call = *call;
  c->io = *io;
  if ((st = cudnn_check(dnn.cudnnCreate(&c->handle), "create a cuDNN handle", err)) ||
      (st = attn_cudnn_graph_build_call(p, call, c->handle, &c->graph, err)))
    goto fail;
  if (c->graph->paged && !io->block_table) {
    st = rt_error_set(err, RT_ERR_INVALID, "a paged problem needs the block table");
    goto fail;
  }
  if (c->call.device_lens && !io->seq_kv) {
    st = rt_error_set(err, RT_ERR_INVALID,
                      "the call's KV lengths are on the device, and none were given");
    goto fail;
  }
  if (c->graph->padded) {
    const long long B = dim(p, "B"), SQ = dim(p, "SQ");
    int32_t *lens = malloc((size_t)B * 2 * sizeof *lens);
    if (!lens) {
      st = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
      goto fail;
    }
    for (long long i = 0; i < B; i++) {
      lens[i] = (int32_t)SQ;
      lens[B + i] = (int32_t)attention_kv_len(p, (int)i);
    }
    if (!(st = cuda_check(cu.cuMemAlloc_v2(&c->seq_q, (size_t)B * 4), "allocate the query lengths",
                          err)) &&
        !(st = cuda_check(cu.cuMemcpyHtoD_v2(c->seq_q, lens, (size_t)B * 4),
                          "upload the query lengths", err)) &&
        !c->call.device_lens && /* else the call's own buffer holds them */
        !(st = cuda_check(cu.cuMemAlloc_v2(&c->seq_kv, (size_t)B * 4), "allocate the KV lengths",
                          err)))
      st = cuda_check(cu.cuMemcpyHtoD_v2(c->seq_kv, lens + B, (size_t)B * 4),
                      "upload the KV lengths", err);
    free(lens);
    if (st) goto fail;
  }
  *out = c;
  return RT_OK;
fail:
  attn_cudnn_close(c);
  return st;
}

int attn_cudnn_count(const attn_cudnn *c) { return c ? c->n : 0; }

size_t attn_cudnn_workspace(const attn_cudnn *c, int i) {
  return c && i >= 0 && i < c->n ? c->cand[i].workspace : 0;
}

int attn_cudnn_built(const attn_cudnn *c, int i) {
  return c && i >= 0 && i < c->n && c->cand[i].built;
}

/* Appends the first reason a configuration was refused (why[]: what cuDNN said). */
static void remember(char *why, size_t size, const rt_error *e) {
  size_t n = strlen(why);
  if (n || !e->text[0]) return;
  snprintf(why, size, "%.*s", (int)(size - 1), e->text);
}

rt_status attn_cudnn_list(attn_cudnn *c, int max, int *count, rt_error *err) {
  *count = 0;
  drop_candidates(c);
  if (max > ATTN_CUDNN_MAX_CANDIDATES) max = ATTN_CUDNN_MAX_CANDIDATES;
  if (max <= 0) return RT_OK;
  static const int modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
  static const char *const mode_names[2] = {"mode A", "fallback"};
  char why[400] = "";
  int offered = 0;
  for (int m = 0; m < 2 && c->n < max; m++) {
    rt_error e;
    rt_error_clear(&e);
    cudnnBackendDescriptor_t heur = NULL;
    void *graph = c->graph->graph;
    int mode = modes[m];
    int64_t n = 0;
    char what[64];
    snprintf(what, sizeof what, "cuDNN heuristics (%s)", mode_names[m]);
    rt_status st = cudnn_check(
        dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur), what, &e);
    if (!st)
      st = cudnn_check(dnn.cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph),
                       what, &e);
    if (!st)
      st = cudnn_check(dnn.cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE,
                                                    CUDNN_TYPE_HEUR_MODE, 1, &mode),
                       what, &e);
    if (!st) st = cudnn_check(dnn.cudnnBackendFinalize(heur), what, &e);
    if (!st)
      st = cudnn_check(dnn.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL),
                       what, &e);
    if (n > 64) n = 64;
    cudnnBackendDescriptor_t cfgs[64] = {NULL};
    int made = 0;
    for (; !st && made < n; made++)
      st = cudnn_check(
          dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[made]), what,
          &e);
    int64_t got = 0;
    if (!st && n > 0)
      st = cudnn_check(dnn.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, cfgs),
                       what, &e);
    if (st) remember(why, sizeof why, &e);
    if (!st && got == 0 && !why[0]) {
      char last[300];
      cudnn_last_error(last, sizeof last);
      if (last[0]) snprintf(why, sizeof why, "%s offered nothing (%s)", what, last);
    }
    for (int64_t i = 0; !st && i < got && c->n < max; i++) {
      attn_cudnn_id id, again;
      char text[256];
      rt_error_clear(&e);
      offered++;
      if (read_cfg(cfgs[i], &id, &e)) {
        remember(why, sizeof why, &e);
        continue;
      }
      if (attn_cudnn_id_format(&id, text, sizeof text) >= (int)sizeof text) {
        rt_error_set(&e, RT_ERR_UNSUPPORTED,
                     "engine %lld's %d knobs make an identity longer than 255 bytes", id.engine,
                     id.nknobs);
        remember(why, sizeof why, &e);
        continue;
      }
      int dup = 0;
      for (int j = 0; j < c->n; j++) dup |= strcmp(c->cand[j].text, text) == 0;
      if (dup) continue;
      /* the plan that runs is the one its text names: what the runtime would replay */
      if (attn_cudnn_id_parse(text, &again, &e)) {
        remember(why, sizeof why, &e);
        continue;
      }
      candidate_init(&c->cand[c->n++], &again);
    }
    for (int i = made - 1; i >= 0; i--) destroy(&cfgs[i]);
    destroy(&heur);
  }
  char v[32];
  cudnn_version_text(dnn.version, v, sizeof v);
  if (c->n == 0)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "cuDNN %s offers no configuration for this SDPA (%d seen)%s%.400s", v,
                        offered, why[0] ? ": " : "", why);
  *count = c->n;
  return RT_OK;
}

/* Builds candidate i's plan when it has none, and the workspace and variant pack it needs. */
static rt_status prepare(attn_cudnn *c, int i, rt_error *err) {
  candidate *k = &c->cand[i];
  if (k->failed) return rt_error_set(err, k->failed, "%s", k->why);
  if (k->built && c->pack) return RT_OK;
  rt_status st = RT_OK;
  if (!k->built) {
    rt_error e;
    rt_error_clear(&e);
    if ((st = build_plan(c, k, &e))) {
      k->failed = st;
      snprintf(k->why, sizeof k->why, "%.*s", (int)sizeof k->why - 1, e.text);
      return rt_error_set(err, k->failed, "%s", k->why);
    }
  }
  return make_pack(c, err);
}

rt_status attn_cudnn_build(attn_cudnn *c, int i, rt_error *err) {
  if (!c || i < 0 || i >= c->n)
    return rt_error_set(err, RT_ERR_NOT_FOUND, "no cuDNN candidate %d (%d listed)", i,
                        c ? c->n : 0);
  return prepare(c, i, err);
}

rt_status attn_cudnn_describe(const attn_cudnn *c, int i, char *buf, size_t size, rt_error *err) {
  if (!c || i < 0 || i >= c->n)
    return rt_error_set(err, RT_ERR_NOT_FOUND, "no cuDNN candidate %d (%d listed)", i,
                        c ? c->n : 0);
  if (snprintf(buf, size, "%s", c->cand[i].text) >= (int)size)
    return rt_error_set(err, RT_ERR_INVALID,
                        "cuDNN candidate %d's identity needs more than %zu bytes", i, size);
  return RT_OK;
}

rt_status attn_cudnn_add(attn_cudnn *c, const char *text, int *index, rt_error *err) {
  attn_cudnn_id id;
  rt_status st = attn_cudnn_id_parse(text, &id, err);
  if (st) return st;
  if (id.version != dnn.version) {
    char want[32], have[32];
    cudnn_version_text(id.version, want, sizeof want);
    cudnn_version_text(dnn.version, have, sizeof have);
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "\"%s\" was listed by cuDNN %s and this is cuDNN %s, whose engine numbers "
                        "may differ: tune again",
                        text, want, have);
  }
  if (c->n >= ATTN_CUDNN_MAX_CANDIDATES)
    return rt_error_set(err, RT_ERR_INVALID, "at most %d cuDNN candidates are held",
                        ATTN_CUDNN_MAX_CANDIDATES);
  candidate_init(&c->cand[c->n], &id);
  if ((st = build_plan(c, &c->cand[c->n], err))) {
    candidate_free(&c->cand[c->n]);
    return st;
  }
  c->n++;
  if ((st = make_pack(c, err))) {
    candidate_free(&c->cand[--c->n]);
    return st;
  }
  *index = c->n - 1;
  return RT_OK;
}

rt_status attn_cudnn_run(attn_cudnn *c, int i, CUstream stream, rt_error *err) {
  if (!c || i < 0 || i >= c->n)
    return rt_error_set(err, RT_ERR_NOT_FOUND, "no cuDNN candidate %d (%d listed)", i,
                        c ? c->n : 0);
  rt_status st = prepare(c, i, err);
  if (st) return st;
  if ((st = cudnn_check(dnn.cudnnSetStream(c->handle, stream), "give cuDNN the stream", err)))
    return st;
  char what[300];
  snprintf(what, sizeof what, "run \"%s\"", c->cand[i].text);
  return cudnn_check(dnn.cudnnBackendExecute(c->handle, c->cand[i].plan, c->pack), what, err);
}
