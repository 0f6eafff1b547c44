/* attention.h — the attention family: O = softmax(scale * Q K^T) V per head, for prefill (many
 * queries) and decode (a few queries against a long KV cache, contiguous or paged as vLLM
 * lays it out), in f16 or bf16 with fp32 accumulation and an fp32 softmax.
 *
 * Problem syntax (`--shape`): B x HQ[:HKV] x SQ[:SKV] x D, then optional suffixes:
 *   :causal     the bottom-right causal mask (query i attends keys j <= i + kv_len - SQ)
 *   :paged[N]   K and V in a pool of pages of N tokens (16, 32 or 64; :paged is 16) read
 *               through a block table
 * HQ query heads share HKV key/value heads (HQ % HKV == 0; HKV defaults to HQ); SQ queries
 * and SKV keys per sequence (SKV defaults to SQ); head dim D (a multiple of 8, at most 256:
 * the templates take 64, 128 and 256).  Examples: 4x32x4096x128, 1x32:8x8192x128:causal,
 * 8x16x512:2048x64, 64x32:8x1:8192x128:paged16.  Ragged batches: the per-sequence KV lengths
 * are the problem's args ("L1,L2,...", B values each at most SKV; `--kv-lens`); the canonical
 * shape then ends in ":lens-XXXXXXXX", a digest of them, and parsing that shape needs the same
 * lengths again.  Layouts and the kernel ABI are templates/attention/attn_abi.h's; the scale is
 * 1/sqrt(D).
 *
 * The names manifest expressions see: B HQ HKV SQ SKV D causal group (HQ/HKV) paged page_size
 * max_pages (ceil(SKV/page_size)) num_pages (the pool: every sequence's pages) ragged kv_tokens
 * (the keys of all sequences) pairs (the (query, key) pairs one head attends, summed over the
 * batch, exactly under the mask) dtype_bytes.  FLOPs: 4*HQ*D*pairs.  Compulsory bytes: Q and O
 * once, K and V once per KV head, the LSE, the block table and lengths when present.
 *
 * Verification (on a GPU): seeded inputs, made by every core (attention.c's upload_input): Q and
 * K with scaled logits that spread over tens of units (a standard deviation of about 3) and four
 * spike keys per sequence, one per quarter of its length, standing 5 to 11 above the rest; V
 * uniform in [-1, 1); all rounded to the dtype; K and V rows past a sequence's keys NaN (a
 * kernel must not read them into O); the page pool in a shuffled order, so pages are
 * scattered.  The reference template attn_reference
 * writes O and the LSE in fp32; a candidate passes when its O's relative Frobenius error is
 * under 1e-2 (bf16) or 2e-3 (f16), no element is NaN or off by more than 32 tolerances of the
 * reference's RMS, and every LSE agrees within 1e-3 (rows with no key: O = 0, LSE = -inf
 * exactly).  O and LSE are NaN-poisoned before the checked run.
 */
#ifndef ROOFTUNE_ATTENTION_H
#define ROOFTUNE_ATTENTION_H

#include "kernels/family.h"
#include "templates/attention/attn_abi.h"
#include "templates/attention/attn_tma.h"

extern const family_ops attention_family; /* the whole family (attention.c), for the tuner */
extern const family_ops
    attention_serving; /* its serving half (attention_serve.c), for librooftune */

/* The attn_args of problem p for buffers at the given device addresses (block_table, kv_lens,
 * work, counters may be 0).  What the tuner's launcher and the runtime both fill. */
void attention_args(const problem *p, unsigned long long q, unsigned long long k,
                    unsigned long long v, unsigned long long o, unsigned long long lse,
                    unsigned long long block_table, unsigned long long kv_lens,
                    unsigned long long work, unsigned long long counters, attn_args *out);

/* Keys sequence b of p attends (its KV length). */
long long attention_kv_len(const problem *p, int b);

/* The split-KV scratch a configuration needs, in floats (attn_abi.h: B*HQ*SQ*SPLITS*(D+2)). */
size_t attention_work_floats(const problem *p, long long splits);

/* The tensor maps of a TMA template (configuration ATTN_TMA = 1, box sizes TMA_INNER,
 * TMA_ROWS_Q and TMA_ROWS_KV in config) over problem p's Q, K and V at those device addresses:
 * the kernel's first argument (attn_tma.h).  attention_tma_plan computes the arguments of
 * cuTensorMapEncodeTiled (pure: no driver), attention_tma_maps also encodes them (the driver
 * loaded); the tuner's launcher and the runtime (rooftune_attention) both go through them.
 * RT_ERR_UNSUPPORTED naming the operand and the rule when TMA cannot map it (an address not
 * 16-byte aligned, ...), RT_ERR_INVALID when config lacks the box sizes. */
rt_status attention_tma_plan(const problem *p, const rt_vars *config, unsigned long long q,
                             unsigned long long k, unsigned long long v,
                             attn_tma_params out[ATTN_TMA_OPERANDS], rt_error *err);
rt_status attention_tma_maps(const problem *p, const rt_vars *config, unsigned long long q,
                             unsigned long long k, unsigned long long v, attn_tma_maps *maps,
                             rt_error *err);

#endif
