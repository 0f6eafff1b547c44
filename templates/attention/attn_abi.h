/* attn_abi.h — the attention family's kernel ABI: the one argument every attention template
 * takes, and the facts of the problem it describes.  Valid C (the host side, kernels/attention.c,
 * and the host tests include it) and CUDA C++ (the templates include it through the template
 * folder's include path), so both sides agree on the layout by construction.
 *
 * Problem.  B sequences; HQ query heads and HKV key/value heads (HQ % HKV == 0: query head h reads
 * KV head h / (HQ / HKV), grouped-query attention); SQ queries and up to SKV keys per sequence;
 * head dimension D (64, 128 or 256).  Inputs are f16 or bf16 (the prefix's RT_DTYPE_<dtype>),
 * products accumulate in fp32 and the softmax runs in fp32; O is written in the input dtype.
 *
 *   Q  [B, SQ, HQ, D]   row-major (PyTorch's (B, S, H, D), FlashAttention's layout)
 *   K  contiguous: [B, SKV, HKV, D];  paged: [num_pages, page_size, HKV, D]
 *   V  the same layout as K
 *   O  [B, SQ, HQ, D]
 *   LSE [B, HQ, SQ] fp32, optional (lse == 0: not written): the natural-log log-sum-exp of the
 *       scaled scores of the row, ln(sum_j exp(scale * q.k_j)); -INFINITY for a row with no key
 *
 * Keys of sequence b: kv_len(b) = kv_lens ? kv_lens[b] : SKV (0 <= kv_len(b) <= SKV).
 * Paged: token t of sequence b lives in page block_table[b * max_pages + t / page_size], row
 * t % page_size (vLLM's layout); block_table entries past the sequence's pages are not read.
 * Mask: query i (0 <= i < SQ) of sequence b attends key j < kv_len(b) when causal == 0, and when
 * causal == 1 only keys j <= i + kv_len(b) - SQ (aligned to the bottom right, as FlashAttention
 * and cuDNN do when SQ < SKV).  A query that attends no key gets O = 0 and LSE = -INFINITY.
 * O[b, i, h] = sum_j softmax_j(scale * q.k_j) v_j over the attended keys j.
 *
 * Scratch for split-KV (decode) templates: work holds at least
 *     B * HQ * SQ * SPLITS * (D + 2) floats
 * (SPLITS from the configuration, 1 when it has none), laid out as the template likes (partial
 * outputs and their running max and sum); counters holds B * HKV ints that are zero before the
 * launch, and a template that uses them (an atomic ticket: the last block of a group merges the
 * partials) leaves them zero again, so the same buffers serve the next launch unchanged (the
 * tuner also zeroes them before each candidate's checked run: one faulty candidate cannot make
 * the next fail).
 *
 * Kernels: extern "C" __global__ void NAME(const attn_args a) — one struct by value, so adding a
 * field never changes a template's signature.  Device pointers travel as 64-bit integers.
 */
#ifndef ROOFTUNE_ATTN_ABI_H
#define ROOFTUNE_ATTN_ABI_H

typedef struct attn_args {
  unsigned long long q;           /* const elem *: Q */
  unsigned long long k;           /* const elem *: K (contiguous or paged) */
  unsigned long long v;           /* const elem *: V (as K) */
  unsigned long long o;           /* elem *: O */
  unsigned long long lse;         /* float *: LSE, or 0 */
  unsigned long long block_table; /* const int *: [B, max_pages] page indices (paged), or 0 */
  unsigned long long kv_lens;     /* const int *: [B] keys per sequence, or 0 (all SKV) */
  unsigned long long work;        /* float *: split-KV partials, or 0 */
  unsigned long long counters;    /* int *: [B * HKV] tickets, zero before and after, or 0 */
  int B, HQ, HKV, SQ, SKV, D;     /* the problem */
  int causal;                     /* 1: the bottom-right causal mask above */
  int page_size;                  /* tokens per page when paged, else 0 */
  int max_pages;                  /* columns of block_table when paged, else 0 */
  int num_pages;                  /* pages in the K and V pools when paged, else 0 */
  float scale;                    /* softmax scale, 1/sqrt(D) unless the caller says otherwise */
  float scale_log2;               /* scale * log2(e): exp(scale*s) == exp2(scale_log2*s) */
} attn_args;

#endif
