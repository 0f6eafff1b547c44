// attn_reference.cu — the attention family's reference: every candidate is verified against it,
// so it is plain (no tiling, no tensor cores, no code shared with the templates) and covers every
// case of attn_abi.h: grouped-query heads, the bottom-right causal mask, any SQ and SKV (SQ = 1
// decode included), paged K/V through block_table, ragged kv_lens, rows with no key (O = 0,
// LSE = -INFINITY), LSE written when lse != 0.
//
// ONE EXCEPTION TO THE ABI: O is written as fp32 (a.o is a float *, [B, SQ, HQ, D]), so candidates
// are compared against an unrounded result.  The host allocates B*SQ*HQ*D floats for it.  The
// manifest's derived value ATTN_REFERENCE = 1 says so: the host runs this template as the
// reference and never as a candidate.
//
// Block (i, h, b) of the grid (SQ, HQ, B) computes query row i of head h of sequence b with THREADS
// threads; the per-row math is attn_ref.h's (which tests/unit/test_attn_reference.c runs on the
// host against a double-precision softmax):
//   pass 1  thread t computes z_j = scale * q.k_j for keys j = t, t + THREADS, ...; the block
//           takes their max m
//   pass 2  per chunk of THREADS keys: thread t writes p_j = expf(z_j - m) of key j0 + t to shared
//           memory; then every thread adds the chunk's p in key order to l and, for its head-dim
//           columns d = t, t + THREADS, ..., p_j v_jd to acc_d
//   O_d = acc_d / l, LSE = m + logf(l)
// z is recomputed in pass 2 by the same function, so it is bit-identical to pass 1's and p <= 1.
// Head dims up to ATTN_REF_MAX_D (256), taken from a.D at run time.
#include "attn_ref.h"

#if defined(RT_DTYPE_bf16)
#define REF_DTYPE 2
#else
#define REF_DTYPE 1
#endif
#define DPT ((ATTN_REF_MAX_D + THREADS - 1) / THREADS)  // head-dim columns per thread, at most

static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS must be a multiple of 32");

extern "C" __global__ void __launch_bounds__(THREADS, 1) attn_reference(const attn_args a) {
  __shared__ float q[ATTN_REF_MAX_D];
  __shared__ float p[THREADS];
  __shared__ float wmax[THREADS / 32];
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z, t = threadIdx.x;
  const int D = a.D, hk = attn_ref_kv_head(&a, h), n = attn_ref_keys(&a, b, i);

  for (int d = t; d < D; d += THREADS) q[d] = attn_ref_q(&a, REF_DTYPE, b, i, h, d);
  __syncthreads();

  // pass 1: the row max
  float m = attn_ref_neg_inf();
  for (int j = t; j < n; j += THREADS) m = fmaxf(m, attn_ref_score(&a, REF_DTYPE, q, b, hk, j));
  for (int x = 16; x > 0; x /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, x));
  if (t % 32 == 0) wmax[t / 32] = m;
  __syncthreads();
  m = wmax[0];
  for (int w = 1; w < THREADS / 32; w++) m = fmaxf(m, wmax[w]);

  // pass 2: weights, their sum and the weighted V, chunk by chunk in key order
  float acc[DPT], l = 0.f;
#pragma unroll
  for (int k = 0; k < DPT; k++) acc[k] = 0.f;
  for (int j0 = 0; j0 < n; j0 += THREADS) {
    const int count = n - j0 < THREADS ? n - j0 : THREADS;
    if (t < count) p[t] = attn_ref_weight(attn_ref_score(&a, REF_DTYPE, q, b, hk, j0 + t), m);
    __syncthreads();
    l = attn_ref_sum(p, count, l);
#pragma unroll
    for (int k = 0; k < DPT; k++)
      if (t + k * THREADS < D)
        acc[k] = attn_ref_accumulate(&a, REF_DTYPE, b, hk, j0, p, count, t + k * THREADS, acc[k]);
    __syncthreads();
  }

  float *o = (float *)a.o + attn_ref_q_row(&a, b, i, h);
#pragma unroll
  for (int k = 0; k < DPT; k++)
    if (t + k * THREADS < D) o[t + k * THREADS] = attn_ref_out(acc[k], l);
  if (a.lse && t == 0) ((float *)a.lse)[attn_ref_lse_index(&a, b, h, i)] = attn_ref_lse(m, l);
}
