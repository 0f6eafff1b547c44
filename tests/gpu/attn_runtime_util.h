/* attn_runtime_util.h — what the GPU tests of rooftune_attention share: a problem on the GPU
 * with seeded bf16 inputs (case_t, setup: contiguous or paged through a shuffled block table,
 * per-sequence lengths when c->len is set), a call checked against a double-precision CPU
 * reference (O within 1e-2 relative Frobenius, the LSE within 1e-3; the bottom-right causal
 * mask, grouped heads, the caller's scale), and teardown.  Included by one test file each. */
#ifndef ROOFTUNE_ATTN_RUNTIME_UTIL_H
#define ROOFTUNE_ATTN_RUNTIME_UTIL_H

#include <math.h>
#include <stdint.h>

#include "kernels/numeric.h"
#include "runtime/include/rooftune.h"
#include "test.h"
#include "driver/cuda_driver.h"

/* A problem on the GPU with its inputs, outputs and the CPU reference. */
typedef struct case_t {
  rooftune_attention_problem a;
  CUdeviceptr q, k, v, o, lse, table, lens;
  float *qf, *kf, *vf; /* the inputs as the kernel sees them (bf16 values) */
  int *tab, *len;
} case_t;

static inline float rnd(uint64_t *s) {
  return num_bf16_to_f32(num_f32_to_bf16((float)num_uniform(s, -1, 1)));
}

/* K/V row (token t of sequence b, head h) in the host copy. */
static inline const float *kv_row(const case_t *c, const float *base, int b, int t, int h) {
  const rooftune_attention_problem *a = &c->a;
  const long long hkv = a->heads_kv ? a->heads_kv : a->heads_q;
  if (a->page_size) {
    long long mp = (a->seq_kv + a->page_size - 1) / a->page_size;
    long long page = c->tab[b * mp + t / a->page_size];
    return base + ((page * a->page_size + t % a->page_size) * hkv + h) * a->head_dim;
  }
  return base + (((long long)b * a->seq_kv + t) * hkv + h) * a->head_dim;
}

static inline void setup(case_t *c, uint64_t seed) {
  rooftune_attention_problem *a = &c->a;
  const long long hkv = a->heads_kv ? a->heads_kv : a->heads_q, D = a->head_dim;
  const size_t nq = (size_t)(a->batch * a->seq_q * a->heads_q * D);
  const long long mp = a->page_size ? (a->seq_kv + a->page_size - 1) / a->page_size : 0;
  if (a->page_size) a->num_pages = a->batch * mp;
  const size_t nkv = (size_t)(a->page_size ? a->num_pages * a->page_size * hkv * D
                                           : a->batch * a->seq_kv * hkv * D);
  c->qf = malloc(nq * 4);
  c->kf = malloc(nkv * 4);
  c->vf = malloc(nkv * 4);
  uint16_t *h = malloc((nq > nkv ? nq : nkv) * 2);
  uint64_t s = seed;
  for (size_t i = 0; i < nq; i++) h[i] = num_f32_to_bf16(c->qf[i] = rnd(&s));
  cu.cuMemAlloc_v2(&c->q, nq * 2);
  cu.cuMemcpyHtoD_v2(c->q, h, nq * 2);
  for (size_t i = 0; i < nkv; i++) h[i] = num_f32_to_bf16(c->kf[i] = rnd(&s));
  cu.cuMemAlloc_v2(&c->k, nkv * 2);
  cu.cuMemcpyHtoD_v2(c->k, h, nkv * 2);
  for (size_t i = 0; i < nkv; i++) h[i] = num_f32_to_bf16(c->vf[i] = rnd(&s));
  cu.cuMemAlloc_v2(&c->v, nkv * 2);
  cu.cuMemcpyHtoD_v2(c->v, h, nkv * 2);
  free(h);
  cu.cuMemAlloc_v2(&c->o, nq * 2);
  cu.cuMemAlloc_v2(&c->lse, (size_t)(a->batch * a->heads_q * a->seq_q) * 4);
  if (a->page_size) { /* pages of all sequences in reverse order: neighbours are not neighbours */
    c->tab = malloc((size_t)(a->batch * mp) * sizeof *c->tab);
    for (long long i = 0; i < a->batch * mp; i++) c->tab[i] = (int)(a->batch * mp - 1 - i);
    cu.cuMemAlloc_v2(&c->table, (size_t)(a->batch * mp) * 4);
    cu.cuMemcpyHtoD_v2(c->table, c->tab, (size_t)(a->batch * mp) * 4);
    a->block_table = (const int *)c->table;
  }
  if (c->len) {
    cu.cuMemAlloc_v2(&c->lens, (size_t)a->batch * 4);
    cu.cuMemcpyHtoD_v2(c->lens, c->len, (size_t)a->batch * 4);
    a->kv_lens = (const int *)c->lens;
  }
  a->q = (const void *)c->q;
  a->k = (const void *)c->k;
  a->v = (const void *)c->v;
  a->o = (void *)c->o;
  a->lse = (float *)c->lse;
}

/* Runs the call on stream (output poisoned first) and compares with the reference; returns the
 * path, and what ran in *out (may be NULL).  Without a->lse the LSE is not compared. */
static inline int run_on(rooftune_db *rdb, case_t *c, void *stream, const char *what,
                         rooftune_info *out) {
  rooftune_attention_problem *a = &c->a;
  const long long hkv = a->heads_kv ? a->heads_kv : a->heads_q, D = a->head_dim,
                  group = a->heads_q / hkv;
  const size_t nq = (size_t)(a->batch * a->seq_q * a->heads_q * D),
               nl = (size_t)(a->batch * a->heads_q * a->seq_q);
  const CUdeviceptr o_buf = (CUdeviceptr)a->o;
  cu.cuMemsetD16Async(o_buf, 0x7fc0, nq, (CUstream)stream);
  cu.cuMemsetD32Async(c->lse, 0x7fc00000u, nl, (CUstream)stream);
  rooftune_info info;
  memset(&info, 0, sizeof info);
  int rc = rooftune_attention(rdb, a, stream, &info);
  if (rc) fprintf(stderr, "%s: %s\n", what, rooftune_last_error());
  CHECK_INT(rc, ROOFTUNE_OK);
  CHECK_INT(cu.cuCtxSynchronize(), CUDA_SUCCESS);
  uint16_t *o = malloc(nq * 2);
  float *lse = malloc(nl * 4);
  cu.cuMemcpyDtoH_v2(o, o_buf, nq * 2);
  cu.cuMemcpyDtoH_v2(lse, c->lse, nl * 4);
  const double scale = a->scale != 0 ? a->scale : 1.0 / sqrt((double)D);
  double diff = 0, norm = 0;
  int bad_lse = 0;
  double *p = malloc((size_t)a->seq_kv * sizeof *p);
  for (long long b = 0; b < a->batch; b++) {
    const long long kv = c->len ? c->len[b] : a->seq_kv;
    for (long long i = 0; i < a->seq_q; i++)
      for (long long h = 0; h < a->heads_q; h++) {
        const float *qr = c->qf + ((b * a->seq_q + i) * a->heads_q + h) * D;
        long long last = a->causal ? i + kv - a->seq_q : kv - 1; /* bottom-right mask */
        if (last > kv - 1) last = kv - 1;
        double mx = -INFINITY, sum = 0;
        for (long long j = 0; j <= last; j++) {
          const float *kr = kv_row(c, c->kf, (int)b, (int)j, (int)(h / group));
          double dot = 0;
          for (long long d = 0; d < D; d++) dot += (double)qr[d] * kr[d];
          p[j] = dot * scale;
          if (p[j] > mx) mx = p[j];
        }
        for (long long j = 0; j <= last; j++) sum += (p[j] = exp(p[j] - mx));
        const double want_lse = last >= 0 ? mx + log(sum) : -INFINITY;
        const float got_lse = lse[(b * a->heads_q + h) * a->seq_q + i];
        if (a->lse &&
            !(isinf(want_lse) ? isinf(got_lse) && got_lse < 0
                              : fabs(got_lse - want_lse) <= 1e-3 * fmax(1, fabs(want_lse))))
          bad_lse++;
        for (long long d = 0; d < D; d++) {
          double want = 0;
          for (long long j = 0; j <= last; j++)
            want += p[j] / sum * kv_row(c, c->vf, (int)b, (int)j, (int)(h / group))[d];
          double got = num_bf16_to_f32(o[((b * a->seq_q + i) * a->heads_q + h) * D + d]);
          diff += isfinite(got) ? (got - want) * (got - want) : INFINITY;
          norm += want * want;
        }
      }
  }
  const double rel = sqrt(diff / (norm > 0 ? norm : 1));
  printf("%s: path %d, %s %s (tuned for %s), relative error %.2g, %d LSE rows off%s%s\n", what,
         info.path, info.template_name, info.config, info.shape, rel, bad_lse,
         info.reason[0] ? " — " : "", info.reason);
  CHECK(rel < 1e-2);
  CHECK_INT(bad_lse, 0);
  free(p);
  free(o);
  free(lse);
  if (out) *out = info;
  return info.path;
}

/* run_on the default stream. */
static inline int run_and_check(rooftune_db *rdb, case_t *c, const char *what) {
  return run_on(rdb, c, NULL, what, NULL);
}

static inline void teardown(case_t *c) {
  CUdeviceptr *bufs[] = {&c->q, &c->k, &c->v, &c->o, &c->lse, &c->table, &c->lens};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (*bufs[i]) cu.cuMemFree_v2(*bufs[i]);
  free(c->qf);
  free(c->kf);
  free(c->vf);
  free(c->tab);
}

#endif
