/* attention_serve.c — the attention family's serving half (attention.h), what librooftune
 * links: the shape syntax and its facts, the names manifest expressions see, the serving
 * coordinates, a kernel's argument block and split-KV scratch, and the TMA maps of TMA
 * templates (the plan of attn_tma.h and its encoding).  attention.c adds what tuning needs. */
#include "kernels/attention_impl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "templates/attention/attn_tma.h"
#include "core/util.h"
#include "driver/cuda_driver.h"

#define ATTN_MAX_B    65535     /* grid z */
#define ATTN_MAX_H    65535     /* grid y */
#define ATTN_MAX_S    (1 << 24) /* tokens per sequence */
#define ATTN_MAX_LENS 1024      /* sequences with their own lengths (--kv-lens) */

/* ---- the problem ---- */

long long attention_kv_len(const problem *p, int b) {
  if (!dim(p, "RAGGED")) return dim(p, "SKV");
  const char *s = p->args;
  for (int i = 0; i < b && *s; i++) {
    s = strchr(s, ',');
    if (!s) return 0;
    s++;
  }
  return strtol(s, NULL, 10);
}

/* (query, key) pairs one head attends in a sequence of kv keys under the mask. */
static long long seq_pairs(long long SQ, long long kv, int causal) {
  if (!causal) return SQ * kv;
  /* query i attends min(kv, max(0, i + kv - SQ + 1)) keys */
  long long total = 0;
  long long first = SQ - kv; /* queries i < first attend nothing */
  if (first < 0) first = 0;
  for (long long i = first; i < SQ; i++) {
    long long n = i + kv - SQ + 1;
    total += n > kv ? kv : n;
  }
  return total;
}

static rt_status bad_shape(rt_error *err, const char *shape, const char *why) {
  rt_error_set(err, RT_ERR_PARSE, "bad attention shape \"%s\": %s; expected %s", shape, why,
               ATTN_SHAPE_HELP);
  rt_error_locate(err, "--shape", NULL, 0, 0);
  return RT_ERR_PARSE;
}

static int number(const char **s, long long *v) {
  if (**s < '0' || **s > '9') return 0;
  errno = 0;
  char *end;
  *v = strtoll(*s, &end, 10);
  if (errno || *v <= 0) return 0;
  *s = end;
  return 1;
}

rt_status attn_parse_shape(const family_ops *self, const char *shape, const char *dtype,
                           const char *args, problem *out, rt_error *err) {
  (void)self;
  const char *in = shape ? shape : "";
  if (!dtype || (strcmp(dtype, "f16") && strcmp(dtype, "bf16"))) {
    rt_error_locate(err, "--dtype", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_INVALID,
                        "the attention family takes dtype f16 or bf16, not \"%s\"",
                        dtype ? dtype : "");
  }
  const char *s = in;
  long long B, HQ, HKV, SQ, SKV, D;
  if (!number(&s, &B)) return bad_shape(err, in, "B must be a positive integer");
  if (*s++ != 'x' || !number(&s, &HQ)) return bad_shape(err, in, "HQ must follow B after 'x'");
  HKV = HQ;
  if (*s == ':' && s[1] >= '0' && s[1] <= '9') {
    s++;
    if (!number(&s, &HKV)) return bad_shape(err, in, "HKV must be a positive integer");
  }
  if (*s++ != 'x' || !number(&s, &SQ))
    return bad_shape(err, in, "SQ must follow the heads after 'x'");
  SKV = SQ;
  if (*s == ':' && s[1] >= '0' && s[1] <= '9') {
    s++;
    if (!number(&s, &SKV)) return bad_shape(err, in, "SKV must be a positive integer");
  }
  if (*s++ != 'x' || !number(&s, &D))
    return bad_shape(err, in, "D must follow the lengths after 'x'");
  int causal = 0, page = 0;
  unsigned long long digest = 0;
  int has_digest = 0;
  while (*s == ':') {
    s++;
    if (!strncmp(s, "causal", 6) && (s[6] == ':' || !s[6])) {
      if (causal) return bad_shape(err, in, ":causal given twice");
      causal = 1;
      s += 6;
    } else if (!strncmp(s, "paged", 5)) {
      if (page) return bad_shape(err, in, ":paged given twice");
      s += 5;
      long long n = 16;
      if (*s >= '0' && *s <= '9' && !number(&s, &n)) return bad_shape(err, in, "bad page size");
      if (n != 16 && n != 32 && n != 64)
        return bad_shape(err, in, "pages hold 16, 32 or 64 tokens");
      page = (int)n;
    } else if (!strncmp(s, "lens-", 5)) {
      char *end;
      errno = 0;
      digest = strtoull(s + 5, &end, 16);
      if (errno || end != s + 5 + 8)
        return bad_shape(err, in, ":lens- is followed by the 8 hex digits of the lengths' digest");
      has_digest = 1;
      s = end;
    } else {
      return bad_shape(err, in, "the suffixes are :causal and :paged[16|32|64]");
    }
  }
  if (*s) return bad_shape(err, in, "unexpected text after the head dim");
  if (B > ATTN_MAX_B) return bad_shape(err, in, "B is larger than 65535");
  if (HQ > ATTN_MAX_H) return bad_shape(err, in, "HQ is larger than 65535");
  if (HQ % HKV) return bad_shape(err, in, "HQ must be a multiple of HKV");
  if (SQ > ATTN_MAX_S || SKV > ATTN_MAX_S)
    return bad_shape(err, in, "a sequence has at most 16777216 tokens");
  if (D % 8 || D > 256) return bad_shape(err, in, "D must be a multiple of 8 and at most 256");
  if ((double)B * SKV * HKV * D > 1e12 || (double)B * SQ * HQ * D > 1e12)
    return bad_shape(err, in, "the tensors would exceed 10^12 elements");
  memset(out, 0, sizeof *out);
  snprintf(out->family, sizeof out->family, "attention");
  snprintf(out->dtype, sizeof out->dtype, "%s", dtype);
  const char *names[] = {"B", "HQ", "HKV", "SQ", "SKV", "D", "CAUSAL", "PAGE"};
  long long vals[] = {B, HQ, HKV, SQ, SKV, D, causal, page};
  for (int i = 0; i < 8; i++) problem_add_dim(out, names[i], vals[i]);
  /* ragged lengths: the args, named in the shape by their digest */
  long long kv_tokens = 0, pairs = 0;
  int ragged = args && *args;
  if (has_digest && !ragged) {
    rt_error_locate(err, "--kv-lens", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_USAGE,
                        "the shape \"%s\" names per-sequence KV lengths by their digest: give the "
                        "lengths themselves with --kv-lens",
                        in);
  }
  if (ragged) {
    if (B > ATTN_MAX_LENS) {
      rt_error_locate(err, "--kv-lens", NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID,
                          "at most %d sequences have their own lengths (B is %lld)", ATTN_MAX_LENS,
                          B);
    }
    const char *a = args;
    size_t n = 0;
    for (long long b = 0; b < B; b++) {
      char *end;
      errno = 0;
      long long len = strtoll(a, &end, 10);
      if (end == a || errno || len < 0 || len > SKV || (*end && *end != ',') ||
          (b + 1 < B && *end != ',') || (b + 1 == B && *end)) {
        rt_error_locate(err, "--kv-lens", NULL, 0, 0);
        return rt_error_set(
            err, RT_ERR_INVALID,
            "--kv-lens needs %lld lengths from 0 to SKV = %lld, separated by commas; "
            "length %lld is wrong or missing",
            B, SKV, b + 1);
      }
      int w = snprintf(out->args + n, sizeof out->args - n, "%s%lld", b ? "," : "", len);
      if (w < 0 || (size_t)w >= sizeof out->args - n) {
        rt_error_locate(err, "--kv-lens", NULL, 0, 0);
        return rt_error_set(err, RT_ERR_INVALID, "--kv-lens is too long");
      }
      n += (size_t)w;
      kv_tokens += len;
      pairs += seq_pairs(SQ, len, causal);
      a = *end ? end + 1 : end;
    }
    unsigned long long h = rt_fnv1a(RT_FNV_START, out->args) & 0xffffffffull;
    if (has_digest && h != digest) {
      rt_error_locate(err, "--kv-lens", NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID,
                          "the lengths given (digest %08llx) are not the ones the shape names "
                          "(%08llx)",
                          h, digest);
    }
    digest = h;
  } else {
    kv_tokens = B * SKV;
    pairs = B * seq_pairs(SQ, SKV, causal);
  }
  problem_add_dim(out, "RAGGED", ragged);
  problem_add_dim(out, "KVTOK", kv_tokens);
  problem_add_dim(out, "PAIRS", pairs);
  char base[64];
  int w = snprintf(base, sizeof base, "%lldx%lld", B, HQ);
  if (HKV != HQ) w += snprintf(base + w, sizeof base - (size_t)w, ":%lld", HKV);
  w += snprintf(base + w, sizeof base - (size_t)w, "x%lld", SQ);
  if (SKV != SQ) w += snprintf(base + w, sizeof base - (size_t)w, ":%lld", SKV);
  w += snprintf(base + w, sizeof base - (size_t)w, "x%lld%s", D, causal ? ":causal" : "");
  if (page) w += snprintf(base + w, sizeof base - (size_t)w, ":paged%d", page);
  if (ragged) snprintf(base + w, sizeof base - (size_t)w, ":lens-%08llx", digest);
  snprintf(out->shape, sizeof out->shape, "%s", base);
  return RT_OK;
}

rt_status attn_bind(const family_ops *self, const problem *p, rt_vars *v) {
  (void)self;
  const long long HQ = dim(p, "HQ"), HKV = dim(p, "HKV");
  const struct {
    const char *name;
    long long value;
  } f[] = {
      {"B", dim(p, "B")},
      {"HQ", HQ},
      {"HKV", HKV},
      {"SQ", dim(p, "SQ")},
      {"SKV", dim(p, "SKV")},
      {"D", dim(p, "D")},
      {"causal", dim(p, "CAUSAL")},
      {"group", HKV ? HQ / HKV : 0},
      {"paged", dim(p, "PAGE") > 0},
      {"page_size", dim(p, "PAGE")},
      {"max_pages", max_pages(p)},
      {"num_pages", num_pages(p)},
      {"ragged", dim(p, "RAGGED")},
      {"kv_tokens", dim(p, "KVTOK")},
      {"pairs", dim(p, "PAIRS")},
      {"dtype_bytes", 2},
  };
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    rt_status s = rt_vars_set(v, f[i].name, f[i].value);
    if (s) return s;
  }
  return RT_OK;
}

void attention_args(const problem *p, unsigned long long q, unsigned long long k,
                    unsigned long long v, unsigned long long o, unsigned long long lse,
                    unsigned long long block_table, unsigned long long kv_lens,
                    unsigned long long work, unsigned long long counters, attn_args *a) {
  memset(a, 0, sizeof *a);
  a->q = q;
  a->k = k;
  a->v = v;
  a->o = o;
  a->lse = lse;
  a->block_table = block_table;
  a->kv_lens = kv_lens;
  a->work = work;
  a->counters = counters;
  a->B = (int)dim(p, "B");
  a->HQ = (int)dim(p, "HQ");
  a->HKV = (int)dim(p, "HKV");
  a->SQ = (int)dim(p, "SQ");
  a->SKV = (int)dim(p, "SKV");
  a->D = (int)dim(p, "D");
  a->causal = (int)dim(p, "CAUSAL");
  a->page_size = (int)dim(p, "PAGE");
  a->max_pages = (int)max_pages(p);
  a->num_pages = (int)num_pages(p);
  a->scale = (float)(1.0 / sqrt((double)a->D));
  a->scale_log2 = (float)(1.0 / sqrt((double)a->D) * 1.4426950408889634);
}

size_t attention_work_floats(const problem *p, long long splits) {
  if (splits < 1) splits = 1;
  return (size_t)dim(p, "B") * (size_t)dim(p, "HQ") * (size_t)dim(p, "SQ") * (size_t)splits *
         (size_t)(dim(p, "D") + 2);
}

/* ---- TMA maps ---- */

rt_status attention_tma_plan(const problem *p, const rt_vars *config, unsigned long long q,
                             unsigned long long k, unsigned long long v,
                             attn_tma_params out[ATTN_TMA_OPERANDS], rt_error *err) {
  long long inner = 0, rq = 0, rkv = 0;
  if (!rt_vars_get(config, "TMA_INNER", &inner) || !rt_vars_get(config, "TMA_ROWS_Q", &rq) ||
      !rt_vars_get(config, "TMA_ROWS_KV", &rkv))
    return rt_error_set(err, RT_ERR_INVALID,
                        "a TMA attention template needs TMA_INNER, TMA_ROWS_Q and TMA_ROWS_KV");
  attn_tma_problem tp = {problem_dim(p, "B"),
                         problem_dim(p, "HQ"),
                         problem_dim(p, "HKV"),
                         problem_dim(p, "SQ"),
                         problem_dim(p, "SKV"),
                         problem_dim(p, "D"),
                         strcmp(p->dtype, "f16") && strcmp(p->dtype, "bf16") ? 4 : 2,
                         strcmp(p->dtype, "bf16") == 0,
                         q,
                         k,
                         v};
  attn_tma_box box = {inner, rq, rkv};
  int bad = -1, rc = attn_tma_plan(&tp, &box, out, &bad);
  if (rc)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "TMA cannot map %s: %s",
                        bad == ATTN_TMA_Q   ? "Q"
                        : bad == ATTN_TMA_K ? "K"
                        : bad == ATTN_TMA_V ? "V"
                                            : "the problem",
                        attn_tma_strerror(rc));
  return RT_OK;
}

rt_status attention_tma_maps(const problem *p, const rt_vars *config, unsigned long long q,
                             unsigned long long k, unsigned long long v, attn_tma_maps *maps,
                             rt_error *err) {
  attn_tma_params prm[ATTN_TMA_OPERANDS];
  rt_status st = attention_tma_plan(p, config, q, k, v, prm, err);
  if (st) return st;
  if (!cu.cuTensorMapEncodeTiled)
    return rt_error_set(err, RT_ERR_NO_DRIVER,
                        "TMA maps need the CUDA driver (cuTensorMapEncodeTiled)");
  attn_tma_map *dst[ATTN_TMA_OPERANDS] = {&maps->q, &maps->k, &maps->v};
  for (int o = 0; o < ATTN_TMA_OPERANDS; o++) {
    CUtensorMap m;
    cuuint64_t dims[4], strides[3];
    cuuint32_t boxd[4], es[4];
    for (int i = 0; i < 4; i++) {
      dims[i] = prm[o].dims[i];
      boxd[i] = prm[o].box[i];
      es[i] = prm[o].elem_strides[i];
    }
    for (int i = 0; i < 3; i++) strides[i] = prm[o].strides[i];
    st =
        cuda_check(cu.cuTensorMapEncodeTiled(
                       &m, (CUtensorMapDataType)prm[o].type, prm[o].rank,
                       (void *)(uintptr_t)prm[o].base, dims, strides, boxd, es,
                       (CUtensorMapInterleave)prm[o].interleave, (CUtensorMapSwizzle)prm[o].swizzle,
                       (CUtensorMapL2promotion)prm[o].l2, (CUtensorMapFloatOOBfill)prm[o].oob),
                   "cuTensorMapEncodeTiled", err);
    if (st) return st;
    memcpy(dst[o], &m, sizeof *dst[o]);
  }
  return RT_OK;
}

/* ---- serving ---- */

/* At most this many queries per sequence make an attention problem a decode problem. */
#define ATTN_DECODE_MAX_SQ 8

/* Prefill: the grid's parallelism (B*HQ), SQ and SKV.  Decode (SQ <= ATTN_DECODE_MAX_SQ), a
 * kind of its own: the grid's parallelism (B*HKV) and the keys a split streams (SKV). */
void attn_coords(const family_ops *self, const problem *p, family_coords *out) {
  (void)self;
  memset(out, 0, sizeof *out);
  const double b = family_ln_dim(p, "B");
  if (problem_dim(p, "SQ") <= ATTN_DECODE_MAX_SQ) {
    out->kind = 3;
    out->x[out->n++] = b + family_ln_dim(p, "HKV");
    out->x[out->n++] = family_ln_dim(p, "SKV");
  } else {
    out->kind = 2;
    out->x[out->n++] = b + family_ln_dim(p, "HQ");
    out->x[out->n++] = family_ln_dim(p, "SQ");
    out->x[out->n++] = family_ln_dim(p, "SKV");
  }
}

const family_ops attention_serving = {ATTN_SERVING_OPS};
