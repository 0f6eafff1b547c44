/* attn_ref.h — the per-row math of the attention family's reference (attn_reference.cu), valid C
 * and CUDA C++, so tests/unit/test_attn_reference.c runs the very same code on the host and
 * compares it with an independent double-precision softmax(scale Q K^T) V.
 *
 * It shares nothing with the templates under test (attn_index.h): its own mask, its own offsets
 * (contiguous and paged K/V), its own softmax, so the verification of a candidate never depends
 * on the code being verified.  Plain arithmetic: fp32 scores z_j = scale * q.k_j (fmaf in head-dim
 * order), a two-pass softmax (the row max m, then p_j = expf(z_j - m), l = sum p_j and
 * acc_d = sum p_j v_jd in key order), O = acc / l, LSE = m + logf(l).  Every sum runs in key (or
 * head-dim) order whatever the thread count, so the kernel's result equals attn_ref_row's on the
 * host up to expf/logf's last bits.  A row that attends no key: O = 0, LSE = -INFINITY.
 *
 * dtype codes: 1 f16, 2 bf16 (the inputs are 16-bit; attn_abi.h).
 */
#ifndef ROOFTUNE_ATTN_REF_H
#define ROOFTUNE_ATTN_REF_H

#include "attn_abi.h"
#include "../common/rt_ptx.h" /* the exact f16 conversion in the kernel */

#if defined(__CUDACC__)
#define ATTN_REF_FN static __host__ __device__ __forceinline__
#else
#include <math.h>
#define ATTN_REF_FN static inline
#endif

#define ATTN_REF_MAX_D 256 /* largest head dimension the reference takes */

#if defined(__CUDACC__)
ATTN_REF_FN float attn_ref_neg_inf(void) { return __int_as_float(0xff800000u); }
ATTN_REF_FN float attn_ref_bits(unsigned u) { return __uint_as_float(u); }
#else
ATTN_REF_FN float attn_ref_neg_inf(void) { return -INFINITY; }
ATTN_REF_FN float attn_ref_bits(unsigned u) {
  union {
    unsigned u;
    float f;
  } x;
  x.u = u;
  return x.f;
}
#endif

/* One 16-bit element to float, exactly. */
ATTN_REF_FN float attn_ref_f16(unsigned short h) {
#if defined(__CUDA_ARCH__)
  return ptx_f16_to_f32(h);
#else
  const unsigned sign = (unsigned)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return attn_ref_bits(sign | 0x7f800000u | (m << 13)); /* inf, nan */
  if (e != 0) return attn_ref_bits(sign | ((e + 112u) << 23) | (m << 13));
  /* zero or subnormal: m * 2^-24 */
  return attn_ref_bits(sign) + (sign ? -1.f : 1.f) * (float)m * 5.9604644775390625e-8f;
#endif
}
ATTN_REF_FN float attn_ref_bf16(unsigned short h) { return attn_ref_bits((unsigned)h << 16); }
ATTN_REF_FN float attn_ref_elem(unsigned short h, int dtype) {
  return dtype == 2 ? attn_ref_bf16(h) : attn_ref_f16(h);
}

/* --- the problem --- */

/* Keys of sequence b. */
ATTN_REF_FN int attn_ref_kv_len(const attn_args *a, int b) {
  return a->kv_lens ? ((const int *)a->kv_lens)[b] : a->SKV;
}
/* The KV head of query head h. */
ATTN_REF_FN int attn_ref_kv_head(const attn_args *a, int h) { return h / (a->HQ / a->HKV); }
/* How many keys query i of sequence b attends: keys 0 .. n-1 (the causal limit is
 * j <= i + kv_len - SQ, bottom right). */
ATTN_REF_FN int attn_ref_keys(const attn_args *a, int b, int i) {
  const long long kv = attn_ref_kv_len(a, b);
  long long n = a->causal ? (long long)i + kv - a->SQ + 1 : kv;
  if (n < 0) n = 0;
  if (n > kv) n = kv;
  return (int)n;
}
/* Element offset of key j of KV head hk of sequence b in K (and V): contiguous
 * [B, SKV, HKV, D], or paged [num_pages, page_size, HKV, D] through block_table. */
ATTN_REF_FN long long attn_ref_kv_row(const attn_args *a, int b, int j, int hk) {
  long long slot;
  if (a->block_table) {
    const int page = ((const int *)a->block_table)[(long long)b * a->max_pages + j / a->page_size];
    slot = (long long)page * a->page_size + j % a->page_size;
  } else {
    slot = (long long)b * a->SKV + j;
  }
  return (slot * a->HKV + hk) * a->D;
}
ATTN_REF_FN long long attn_ref_q_row(const attn_args *a, int b, int i, int h) {
  return (((long long)b * a->SQ + i) * a->HQ + h) * a->D;
}
ATTN_REF_FN long long attn_ref_lse_index(const attn_args *a, int b, int h, int i) {
  return ((long long)b * a->HQ + h) * a->SQ + i;
}

/* --- the row's math --- */

/* Query row i of head h as floats. */
ATTN_REF_FN float attn_ref_q(const attn_args *a, int dtype, int b, int i, int h, int d) {
  return attn_ref_elem(((const unsigned short *)a->q)[attn_ref_q_row(a, b, i, h) + d], dtype);
}
/* z_j = scale * sum_d q_d k_jd, fmaf in d order. */
ATTN_REF_FN float attn_ref_score(const attn_args *a, int dtype, const float *q, int b, int hk,
                                 int j) {
  const unsigned short *k = (const unsigned short *)a->k + attn_ref_kv_row(a, b, j, hk);
  float s = 0.f;
#if defined(__CUDA_ARCH__)
  /* 16-byte loads (rows start on 16 bytes: D is a multiple of 8), the same order of fmas */
  for (int d = 0; d < a->D; d += 8) {
    const uint4 c = *(const uint4 *)(k + d);
    s = fmaf(q[d + 0], attn_ref_elem((unsigned short)(c.x & 0xffffu), dtype), s);
    s = fmaf(q[d + 1], attn_ref_elem((unsigned short)(c.x >> 16), dtype), s);
    s = fmaf(q[d + 2], attn_ref_elem((unsigned short)(c.y & 0xffffu), dtype), s);
    s = fmaf(q[d + 3], attn_ref_elem((unsigned short)(c.y >> 16), dtype), s);
    s = fmaf(q[d + 4], attn_ref_elem((unsigned short)(c.z & 0xffffu), dtype), s);
    s = fmaf(q[d + 5], attn_ref_elem((unsigned short)(c.z >> 16), dtype), s);
    s = fmaf(q[d + 6], attn_ref_elem((unsigned short)(c.w & 0xffffu), dtype), s);
    s = fmaf(q[d + 7], attn_ref_elem((unsigned short)(c.w >> 16), dtype), s);
  }
#else
  for (int d = 0; d < a->D; d++) s = fmaf(q[d], attn_ref_elem(k[d], dtype), s);
#endif
  return s * a->scale;
}
/* Second pass: the weight of a key given the row max m (the max of the same z values). */
ATTN_REF_FN float attn_ref_weight(float z, float m) { return expf(z - m); }
/* l + p_0 + ... + p_{count-1}, in order. */
ATTN_REF_FN float attn_ref_sum(const float *p, int count, float l) {
  for (int x = 0; x < count; x++) l += p[x];
  return l;
}
/* acc + sum_x p_x v_{j0+x, d}, fmaf in key order. */
ATTN_REF_FN float attn_ref_accumulate(const attn_args *a, int dtype, int b, int hk, int j0,
                                      const float *p, int count, int d, float acc) {
  const unsigned short *v = (const unsigned short *)a->v;
  for (int x = 0; x < count; x++)
    acc = fmaf(p[x], attn_ref_elem(v[attn_ref_kv_row(a, b, j0 + x, hk) + d], dtype), acc);
  return acc;
}
/* O_d and LSE of a row from its sums; a row with no key (l == 0): 0 and -INFINITY. */
ATTN_REF_FN float attn_ref_out(float acc, float l) { return l > 0.f ? acc / l : 0.f; }
ATTN_REF_FN float attn_ref_lse(float m, float l) {
  return l > 0.f ? m + logf(l) : attn_ref_neg_inf();
}

#if !defined(__CUDACC__)
/* The kernel's computation of one row, on the host: O (fp32, D values) into o, LSE into *lse.
 * The kernel computes the same z values on many threads, takes their max (exact in any order)
 * and runs the sums of every key chunk in key order, so it gets these numbers. */
static inline void attn_ref_row(const attn_args *a, int dtype, int b, int i, int h, float *o,
                                float *lse) {
  float q[ATTN_REF_MAX_D], p[64];
  const int hk = attn_ref_kv_head(a, h), n = attn_ref_keys(a, b, i);
  for (int d = 0; d < a->D; d++) q[d] = attn_ref_q(a, dtype, b, i, h, d);
  float m = attn_ref_neg_inf(), l = 0.f;
  for (int j = 0; j < n; j++) {
    const float z = attn_ref_score(a, dtype, q, b, hk, j);
    m = m > z ? m : z;
  }
  for (int d = 0; d < a->D; d++) o[d] = 0.f;
  for (int j0 = 0; j0 < n; j0 += 64) {
    const int count = n - j0 < 64 ? n - j0 : 64;
    for (int x = 0; x < count; x++)
      p[x] = attn_ref_weight(attn_ref_score(a, dtype, q, b, hk, j0 + x), m);
    l = attn_ref_sum(p, count, l);
    for (int d = 0; d < a->D; d++)
      o[d] = attn_ref_accumulate(a, dtype, b, hk, j0, p, count, d, o[d]);
  }
  for (int d = 0; d < a->D; d++) o[d] = attn_ref_out(o[d], l);
  *lse = attn_ref_lse(m, l);
}
#endif

#endif
