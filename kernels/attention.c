/* attention.c — the attention family (see attention.h): shapes and their facts, the GPU inputs
 * (contiguous or paged KV, ragged lengths), the reference run, TMA maps for TMA templates, the
 * split-KV scratch, verification of O and the LSE. */
#include "kernels/attention.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/attention_cudnn.h"
#include "kernels/numeric.h"
#include "templates/attention/attn_tma.h"
#include "tuner/driver/cuda_driver.h"

#define ATTN_SHAPE_HELP                                                                          \
  "BxHQ[:HKV]xSQ[:SKV]xD[:causal][:paged[16|32|64]] with positive integers, e.g. 4x32x4096x128, " \
  "1x32:8x8192x128:causal or 64x32:8x1:8192x128:paged16"
#define ATTN_MAX_B 65535     /* grid z */
#define ATTN_MAX_H 65535     /* grid y */
#define ATTN_MAX_S (1 << 24) /* tokens per sequence */
#define ATTN_MAX_LENS 1024   /* sequences with their own lengths (--kv-lens) */

/* ---- the problem ---- */

static long long dim(const problem *p, const char *n) { return problem_dim(p, n); }

/* The KV lengths of p into lens (B entries): args when ragged, else SKV each. */
static void kv_lens_of(const problem *p, int *lens) {
  const long long B = dim(p, "B"), SKV = dim(p, "SKV");
  const char *s = p->args;
  for (long long b = 0; b < B; b++) {
    if (dim(p, "RAGGED") && *s) {
      lens[b] = (int)strtol(s, (char **)&s, 10);
      if (*s == ',') s++;
    } else {
      lens[b] = (int)SKV;
    }
  }
}

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
  rt_error_set(err, RT_ERR_PARSE, "bad attention shape \"%s\": %s; expected %s", shape, why, ATTN_SHAPE_HELP);
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

static unsigned long long fnv64(const char *s) {
  unsigned long long h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static rt_status attn_parse_shape(const family_ops *self, const char *shape, const char *dtype,
                                  const char *args, problem *out, rt_error *err) {
  (void)self;
  const char *in = shape ? shape : "";
  if (!dtype || (strcmp(dtype, "f16") && strcmp(dtype, "bf16"))) {
    rt_error_locate(err, "--dtype", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_INVALID, "the attention family takes dtype f16 or bf16, not \"%s\"",
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
  if (*s++ != 'x' || !number(&s, &SQ)) return bad_shape(err, in, "SQ must follow the heads after 'x'");
  SKV = SQ;
  if (*s == ':' && s[1] >= '0' && s[1] <= '9') {
    s++;
    if (!number(&s, &SKV)) return bad_shape(err, in, "SKV must be a positive integer");
  }
  if (*s++ != 'x' || !number(&s, &D)) return bad_shape(err, in, "D must follow the lengths after 'x'");
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
      if (n != 16 && n != 32 && n != 64) return bad_shape(err, in, "pages hold 16, 32 or 64 tokens");
      page = (int)n;
    } else if (!strncmp(s, "lens-", 5)) {
      char *end;
      errno = 0;
      digest = strtoull(s + 5, &end, 16);
      if (errno || end != s + 5 + 8) return bad_shape(err, in, ":lens- is followed by the 8 hex digits of the lengths' digest");
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
  if (SQ > ATTN_MAX_S || SKV > ATTN_MAX_S) return bad_shape(err, in, "a sequence has at most 16777216 tokens");
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
    return rt_error_set(err, RT_ERR_USAGE, "the shape \"%s\" names per-sequence KV lengths by their digest: give the "
                        "lengths themselves with --kv-lens", in);
  }
  if (ragged) {
    if (B > ATTN_MAX_LENS) {
      rt_error_locate(err, "--kv-lens", NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID, "at most %d sequences have their own lengths (B is %lld)", ATTN_MAX_LENS, B);
    }
    const char *a = args;
    size_t n = 0;
    for (long long b = 0; b < B; b++) {
      char *end;
      errno = 0;
      long long len = strtoll(a, &end, 10);
      if (end == a || errno || len < 0 || len > SKV || (*end && *end != ',') || (b + 1 < B && *end != ',') ||
          (b + 1 == B && *end)) {
        rt_error_locate(err, "--kv-lens", NULL, 0, 0);
        return rt_error_set(err, RT_ERR_INVALID,
                            "--kv-lens needs %lld lengths from 0 to SKV = %lld, separated by commas; "
                            "length %lld is wrong or missing", B, SKV, b + 1);
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
    unsigned long long h = fnv64(out->args) & 0xffffffffull;
    if (has_digest && h != digest) {
      rt_error_locate(err, "--kv-lens", NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID, "the lengths given (digest %08llx) are not the ones the shape names "
                          "(%08llx)", h, digest);
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

static long long max_pages(const problem *p) {
  long long page = dim(p, "PAGE");
  return page ? (dim(p, "SKV") + page - 1) / page : 0;
}

static long long num_pages(const problem *p) {
  long long page = dim(p, "PAGE");
  if (!page) return 0;
  if (!dim(p, "RAGGED")) return dim(p, "B") * max_pages(p);
  long long n = 0;
  for (int b = 0; b < dim(p, "B"); b++) n += (attention_kv_len(p, b) + page - 1) / page;
  return n > 0 ? n : 1;
}

static rt_status attn_bind(const family_ops *self, const problem *p, rt_vars *v) {
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

static double attn_flops(const family_ops *self, const problem *p) {
  (void)self;
  return 4.0 * (double)dim(p, "HQ") * (double)dim(p, "D") * (double)dim(p, "PAIRS");
}

static double attn_min_bytes(const family_ops *self, const problem *p) {
  (void)self;
  const double B = (double)dim(p, "B"), HQ = (double)dim(p, "HQ"), HKV = (double)dim(p, "HKV"),
               SQ = (double)dim(p, "SQ"), D = (double)dim(p, "D"), kv = (double)dim(p, "KVTOK");
  double bytes = 2.0 * (2.0 * B * SQ * HQ * D + 2.0 * kv * HKV * D) + 4.0 * B * HQ * SQ;
  if (dim(p, "PAGE")) bytes += 4.0 * B * (double)max_pages(p);
  if (dim(p, "RAGGED")) bytes += 4.0 * B;
  return bytes;
}

static double attn_tolerance(const family_ops *self, const problem *p) {
  (void)self;
  return strcmp(p->dtype, "bf16") ? 2e-3 : 1e-2;
}

void attention_args(const problem *p, unsigned long long q, unsigned long long k, unsigned long long v,
                    unsigned long long o, unsigned long long lse, unsigned long long block_table,
                    unsigned long long kv_lens, unsigned long long work, unsigned long long counters,
                    attn_args *a) {
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

/* ---- the GPU side ---- */

struct family_gpu {
  problem p;
  int bf16;
  size_t q_elems, kv_elems, o_elems, lse_elems;
  CUdeviceptr q, k, v, o, lse;       /* inputs and the candidate's outputs */
  CUdeviceptr ref_o, ref_lse;        /* the reference's fp32 outputs */
  CUdeviceptr table, lens;           /* block table, per-sequence lengths (0 when unused) */
  CUdeviceptr work, counters;        /* split-KV scratch (grown on demand), tickets */
  size_t work_floats;                /* work's size */
  float *want_o, *want_lse;          /* the reference, on the host */
  uint16_t *got_o;                   /* the candidate's O, downloaded */
  float *got_lse;
  double ref_sq;                     /* sum of squares of the reference O */
  attn_cudnn *dnn;                   /* cuDNN's candidates (attention_cudnn.h), on first use */
};

static rt_status alloc(CUdeviceptr *p, size_t bytes, const char *what, rt_error *err) {
  CUresult r = cu.cuMemAlloc_v2(p, bytes ? bytes : 16);
  if (r == CUDA_SUCCESS) return RT_OK;
  char w[128];
  snprintf(w, sizeof w, "allocate %zu bytes for attention %s", bytes, what);
  return cuda_check(r, w, err);
}

static rt_status upload_random(CUdeviceptr dst, size_t n, int bf16, uint64_t seed, rt_error *err) {
  const size_t piece = (size_t)1 << 20;
  uint16_t *buf = malloc(piece * 2);
  if (!buf) return rt_error_set(err, RT_ERR_NOMEM, "out of memory for attention inputs");
  uint64_t s = seed;
  rt_status st = RT_OK;
  for (size_t off = 0; off < n && !st; off += piece) {
    size_t cnt = n - off < piece ? n - off : piece;
    for (size_t i = 0; i < cnt; i++) {
      float x = (float)num_uniform(&s, -1.0, 1.0);
      buf[i] = bf16 ? num_f32_to_bf16(x) : num_f32_to_f16(x);
    }
    st = cuda_check(cu.cuMemcpyHtoD_v2(dst + off * 2, buf, cnt * 2), "upload attention inputs", err);
  }
  free(buf);
  return st;
}

static void attn_gpu_teardown(family_gpu *g) {
  if (!g) return;
  attn_cudnn_close(g->dnn);
  CUdeviceptr *bufs[] = {&g->q, &g->k, &g->v, &g->o, &g->lse, &g->ref_o, &g->ref_lse,
                         &g->table, &g->lens, &g->work, &g->counters};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (*bufs[i]) cu.cuMemFree_v2(*bufs[i]);
  free(g->want_o);
  free(g->want_lse);
  free(g->got_o);
  free(g->got_lse);
  free(g);
}

rt_status attention_gpu_cudnn(family_gpu *g, attn_cudnn **out, rt_error *err) {
  if (!g->dnn) {
    attn_cudnn_io io = {g->q, g->k, g->v, g->o, g->lse, g->table};
    rt_status st = attn_cudnn_open(&g->p, &io, &g->dnn, err);
    if (st) return st;
  }
  *out = g->dnn;
  return RT_OK;
}

static rt_status set_smem(CUfunction fn, unsigned smem, rt_error *err) {
  if (smem <= 48 * 1024) return RT_OK;
  return cuda_check(cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
                    "allow the kernel's dynamic shared memory", err);
}

static rt_status attn_gpu_setup(const family_ops *self, const problem *p, uint64_t seed,
                                const family_reference *ref, CUstream stream, family_gpu **out,
                                rt_error *err) {
  (void)self;
  *out = NULL;
  if (!cu.handle) return rt_error_set(err, RT_ERR_NO_DRIVER, "attention needs a loaded CUDA driver and a current context");
  if (!ref || !ref->cubin)
    return rt_error_set(err, RT_ERR_INVALID, "attention checks against its reference template attn_reference, which was not given");
  family_gpu *g = calloc(1, sizeof *g);
  if (!g) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  g->p = *p;
  g->bf16 = strcmp(p->dtype, "bf16") == 0;
  const size_t B = (size_t)dim(p, "B"), HQ = (size_t)dim(p, "HQ"), HKV = (size_t)dim(p, "HKV"),
               SQ = (size_t)dim(p, "SQ"), SKV = (size_t)dim(p, "SKV"), D = (size_t)dim(p, "D"),
               page = (size_t)dim(p, "PAGE");
  const size_t pages = (size_t)num_pages(p), mp = (size_t)max_pages(p);
  g->q_elems = g->o_elems = B * SQ * HQ * D;
  g->kv_elems = page ? pages * page * HKV * D : B * SKV * HKV * D;
  g->lse_elems = B * HQ * SQ;
  int *lens = malloc(B * sizeof *lens), *table = NULL;
  rt_status st = lens ? RT_OK : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  if (!st) kv_lens_of(p, lens);
  if (!st && ((st = alloc(&g->q, g->q_elems * 2, "Q", err)) || (st = alloc(&g->k, g->kv_elems * 2, "K", err)) ||
              (st = alloc(&g->v, g->kv_elems * 2, "V", err)) || (st = alloc(&g->o, g->o_elems * 2, "O", err)) ||
              (st = alloc(&g->lse, g->lse_elems * 4, "LSE", err)) ||
              (st = alloc(&g->ref_o, g->o_elems * 4, "the reference O", err)) ||
              (st = alloc(&g->ref_lse, g->lse_elems * 4, "the reference LSE", err)) ||
              (st = alloc(&g->counters, B * HKV * 4, "split-KV counters", err))))
    goto fail;
  if (!st) st = cuda_check(cu.cuMemsetD32Async(g->counters, 0, B * HKV, stream), "zero the split-KV counters", err);
  if (!st && dim(p, "RAGGED")) {
    if ((st = alloc(&g->lens, B * 4, "KV lengths", err)) ||
        (st = cuda_check(cu.cuMemcpyHtoD_v2(g->lens, lens, B * 4), "upload KV lengths", err)))
      goto fail;
  }
  if (!st && page) {
    /* every sequence's pages, drawn from a shuffled pool so neighbours are not neighbours */
    table = calloc(B * mp, sizeof *table);
    int *perm = malloc(pages * sizeof *perm);
    if (!table || !perm) {
      free(perm);
      st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for the block table");
      goto fail;
    }
    uint64_t rs = seed ^ 0x9a6e5eedull;
    for (size_t i = 0; i < pages; i++) perm[i] = (int)i;
    for (size_t i = pages; i > 1; i--) {
      size_t j = (size_t)(num_rng(&rs) % i);
      int t = perm[i - 1];
      perm[i - 1] = perm[j];
      perm[j] = t;
    }
    size_t next = 0;
    for (size_t b = 0; b < B; b++)
      for (size_t j = 0; j < (size_t)((lens[b] + (int)page - 1) / (int)page); j++) table[b * mp + j] = perm[next++];
    free(perm);
    if ((st = alloc(&g->table, B * mp * 4, "the block table", err)) ||
        (st = cuda_check(cu.cuMemcpyHtoD_v2(g->table, table, B * mp * 4), "upload the block table", err)))
      goto fail;
  }
  if ((st = upload_random(g->q, g->q_elems, g->bf16, seed ^ 0x51ull, err)) ||
      (st = upload_random(g->k, g->kv_elems, g->bf16, seed ^ 0x4bull, err)) ||
      (st = upload_random(g->v, g->kv_elems, g->bf16, seed ^ 0x56ull, err)) ||
      (st = cuda_check(cu.cuCtxSynchronize(), "finish the input upload", err)))
    goto fail;
  /* the reference, once */
  {
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    attn_args a;
    attention_args(p, g->q, g->k, g->v, g->ref_o, g->ref_lse, g->table, g->lens, 0, 0, &a);
    void *args[] = {&a};
    st = cuda_check(cu.cuModuleLoadData(&mod, ref->cubin), "load the reference's cubin", err);
    if (!st) st = cuda_check(cu.cuModuleGetFunction(&fn, mod, ref->entry ? ref->entry : ""), "find the reference kernel", err);
    if (!st) st = set_smem(fn, ref->smem, err);
    if (!st) st = cuda_check(cu.cuMemsetD32Async(g->ref_o, 0x7fc00000u, g->o_elems, stream), "poison the reference O", err);
    if (!st)
      st = cuda_check(cu.cuLaunchKernel(fn, ref->grid[0], ref->grid[1], ref->grid[2], ref->block[0], ref->block[1],
                                        ref->block[2], ref->smem, stream, args, NULL),
                      "launch the reference", err);
    if (!st) st = cuda_check(cu.cuStreamSynchronize(stream), "run the reference", err);
    if (mod) cu.cuModuleUnload(mod);
    if (st) goto fail;
  }
  g->want_o = malloc(g->o_elems * 4);
  g->want_lse = malloc(g->lse_elems * 4);
  g->got_o = malloc(g->o_elems * 2);
  g->got_lse = malloc(g->lse_elems * 4);
  if (!g->want_o || !g->want_lse || !g->got_o || !g->got_lse) {
    st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for %zu output elements", g->o_elems);
    goto fail;
  }
  if ((st = cuda_check(cu.cuMemcpyDtoH_v2(g->want_o, g->ref_o, g->o_elems * 4), "download the reference O", err)) ||
      (st = cuda_check(cu.cuMemcpyDtoH_v2(g->want_lse, g->ref_lse, g->lse_elems * 4), "download the reference LSE", err)))
    goto fail;
  for (size_t i = 0; i < g->o_elems; i++) {
    if (!isfinite(g->want_o[i])) {
      st = rt_error_set(err, RT_ERR_INTERNAL, "the reference left O[%zu] = %g: it must write every element", i,
                        (double)g->want_o[i]);
      goto fail;
    }
    g->ref_sq += (double)g->want_o[i] * g->want_o[i];
  }
  free(lens);
  free(table);
  *out = g;
  return RT_OK;
fail:
  free(lens);
  free(table);
  attn_gpu_teardown(g);
  return st;
}

static rt_status attn_gpu_poison(family_gpu *g, CUstream stream, rt_error *err) {
  rt_status st = cuda_check(cu.cuMemsetD16Async(g->o, g->bf16 ? 0x7fc0u : 0x7e00u, g->o_elems, stream), "poison O", err);
  if (!st) st = cuda_check(cu.cuMemsetD32Async(g->lse, 0x7fc00000u, g->lse_elems, stream), "poison the LSE", err);
  return st;
}

static rt_status attn_gpu_launch(family_gpu *g, CUfunction fn, const rt_vars *config, const unsigned grid[3],
                                 const unsigned block[3], unsigned smem, CUstream stream, rt_error *err) {
  long long splits = 1;
  rt_vars_get(config, "SPLITS", &splits);
  size_t need = attention_work_floats(&g->p, splits);
  rt_status st;
  if (splits > 1 && need > g->work_floats) { /* split-KV scratch, grown to the largest asked for */
    if (g->work) cu.cuMemFree_v2(g->work);
    g->work = 0;
    g->work_floats = 0;
    if ((st = alloc(&g->work, need * 4, "split-KV partials", err))) return st;
    g->work_floats = need;
  }
  if ((st = set_smem(fn, smem, err))) return st;
  attn_args a;
  attention_args(&g->p, g->q, g->k, g->v, g->o, g->lse, g->table, g->lens, splits > 1 ? g->work : 0, g->counters, &a);
  long long tma = 0;
  rt_vars_get(config, "ATTN_TMA", &tma);
  if (tma) {
    attn_tma_maps maps;
    if ((st = attention_tma_maps(&g->p, config, g->q, g->k, g->v, &maps, err))) return st;
    void *args[] = {&maps, &a};
    return cuda_check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream, args, NULL),
                      "launch attention template", err);
  }
  void *args[] = {&a};
  return cuda_check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream, args, NULL),
                    "launch attention template", err);
}

static rt_status attn_gpu_verify(family_gpu *g, double *rel_error, rt_error *err) {
  *rel_error = NAN;
  rt_status st;
  if ((st = cuda_check(cu.cuCtxSynchronize(), "finish the attention candidate", err)) ||
      (st = cuda_check(cu.cuMemcpyDtoH_v2(g->got_o, g->o, g->o_elems * 2), "download O", err)) ||
      (st = cuda_check(cu.cuMemcpyDtoH_v2(g->got_lse, g->lse, g->lse_elems * 4), "download the LSE", err)))
    return st;
  const double tol = attn_tolerance(NULL, &g->p), rms = sqrt(g->ref_sq / (double)g->o_elems);
  double diff_sq = 0;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < g->o_elems; i++) {
    double c = g->bf16 ? num_bf16_to_f32(g->got_o[i]) : num_f16_to_f32(g->got_o[i]), r = g->want_o[i], d = c - r;
    if (!isfinite(c) || fabs(d) > 32 * tol * (rms > 0 ? rms : 1)) {
      if (!bad++) first = i;
      if (!isfinite(c)) diff_sq = INFINITY;
    }
    diff_sq += d * d;
  }
  double rel = g->ref_sq > 0 ? sqrt(diff_sq / g->ref_sq) : sqrt(diff_sq);
  if (bad && isfinite(rel) && rel <= tol) rel = nextafter(tol, INFINITY); /* an outlier never passes */
  *rel_error = rel;
  const size_t D = (size_t)dim(&g->p, "D"), HQ = (size_t)dim(&g->p, "HQ"), SQ = (size_t)dim(&g->p, "SQ");
  if (bad || !(rel <= tol)) {
    if (!bad)
      return rt_error_set(err, RT_ERR_WRONG_RESULT, "O differs from the reference: relative error %.3g over %.1g for %s",
                          rel, tol, g->p.dtype);
    size_t row = first / D;
    double c = g->bf16 ? num_bf16_to_f32(g->got_o[first]) : num_f16_to_f32(g->got_o[first]);
    return rt_error_set(err, RT_ERR_WRONG_RESULT,
                        "O differs from the reference: relative error %.3g (tolerance %.1g for %s), %zu elements NaN "
                        "or off by more than 32 tolerances of the reference RMS, first at sequence %zu query %zu "
                        "head %zu dim %zu (%g, expected %g)",
                        rel, tol, g->p.dtype, bad, row / (SQ * HQ), row / HQ % SQ, row % HQ, first % D, c,
                        (double)g->want_o[first]);
  }
  for (size_t i = 0; i < g->lse_elems; i++) {
    double c = g->got_lse[i], r = g->want_lse[i];
    int ok = isinf(r) && r < 0 ? isinf(c) && c < 0 : isfinite(c) && fabs(c - r) <= 1e-3 * fmax(1.0, fabs(r));
    if (!ok)
      return rt_error_set(err, RT_ERR_WRONG_RESULT,
                          "the LSE differs from the reference at sequence %zu head %zu query %zu (%g, expected %g)",
                          i / (HQ * SQ), i / SQ % HQ, i % SQ, c, r);
  }
  return RT_OK;
}

const family_ops attention_family = {
    .name = "attention",
    .shape_help = ATTN_SHAPE_HELP,
    .example_shape = "4x32x4096x128",
    .example_more = "64x32:8x1:8192x128",
    .reference = "attn_reference",
    .parse_shape = attn_parse_shape,
    .bind = attn_bind,
    .flops = attn_flops,
    .min_bytes = attn_min_bytes,
    .tolerance = attn_tolerance,
    .gpu_setup = attn_gpu_setup,
    .gpu_teardown = attn_gpu_teardown,
    .gpu_poison = attn_gpu_poison,
    .gpu_launch = attn_gpu_launch,
    .gpu_verify = attn_gpu_verify,
    .library = "cudnn",
    .library_list = attention_cudnn_library_list,
    .library_describe = attention_cudnn_library_describe,
    .library_launch = attention_cudnn_library_launch,
};
