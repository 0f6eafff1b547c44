/* attention_library.c — THE SEAM for attention's vendor fallback (rule 4 of rooftune.h): where
 * rooftune_attention goes when no tuned kernel serves a problem, or when the served winner is a
 * tuned cuDNN plan (a library winner, "cudnn sdpa engine=N knobs=... version=V").
 *
 * What belongs here: cuDNN's SDPA through kernels/attention_cudnn.h (add kernels/attention_cudnn.c
 * and tuner/driver/cudnn.c to RT_RUNTIME_BELOW then; the family's serving half does not need
 * them, and cuDNN itself is dlopen()ed): attn_cudnn_open(p, io) over the
 * caller's Q, K, V, O, an LSE (the graph always writes one: a scratch when the caller gives
 * none) and block table; attn_cudnn_add(c, identity) to replay a tuned plan, or
 * attn_cudnn_list(c, 1) for cuDNN's own choice; attn_cudnn_run(c, i, stream).  Still to solve
 * before it can go in: opening builds the graph and its plans (some engines compile at run
 * time), so the open handles need a cache per (problem, context) with the pointers rebound per
 * call; and a padded (ragged) graph reads the per-sequence lengths from the host, where the
 * caller's kv_lens are on the GPU.  Then make rt_attention_library_available() say whether
 * cuDNN loads, and rt_attention_library() run and fill info (path ROOFTUNE_PATH_LIBRARY, template
 * "cudnn", config the identity).  Until then the call fails cleanly, ROOFTUNE_ERR_NOT_FOUND with
 * the reason, lookups report rule NONE for attention rather than LIBRARY, and tuned cuDNN
 * winners are passed over as ones this library cannot run. */
#include "runtime/runtime.h"

int rt_attention_library_available(void) { return 0; }

int rt_attention_library(const problem *p, const rooftune_attention_problem *a, void *stream, const char *identity,
                         const char *why, rooftune_info *info) {
  (void)a;
  (void)stream;
  rt_copy(info->reason, sizeof info->reason, why);
  if (identity)
    return rt_fail(ROOFTUNE_ERR_NOT_FOUND,
                   "rooftune_attention: attention %s %s is served a tuned cuDNN plan (%s), and this librooftune "
                   "cannot run cuDNN yet", p->shape, p->dtype, identity);
  return rt_fail(ROOFTUNE_ERR_NOT_FOUND,
                 "rooftune_attention: no tuned kernel serves attention %s %s (%s), and this librooftune has no "
                 "vendor fallback (cuDNN) yet", p->shape, p->dtype, why);
}
