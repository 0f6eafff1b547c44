/* attention_cudnn.c — cuDNN's SDPA as the attention family's library candidates (see
 * attention_cudnn.h): the family_ops hooks over the SDPA module (attention_sdpa.h), which the
 * family's GPU state opens over its buffers.  The tuner's half: librooftune serves cuDNN through
 * attention_sdpa.h directly. */
#include "kernels/attention_cudnn.h"

#include <errno.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- the family's hooks */

/* Any reason cuDNN has no candidate is the library's, not the tune's: RT_ERR_UNSUPPORTED with
 * the reason, so the tuner notes it and the templates compete among themselves. */
static rt_status no_candidates(rt_status st, rt_error *err) {
  if (st == RT_OK) return RT_OK;
  if (err) err->code = RT_ERR_UNSUPPORTED;
  return RT_ERR_UNSUPPORTED;
}

rt_status attention_cudnn_library_list(family_gpu *g, int max, int *count, rt_error *err) {
  *count = 0;
  const char *cap = getenv("ROOFTUNE_CUDNN_MAX");
  if (cap && *cap) { /* at most this many candidates: each plan may compile kernels */
    char *end;
    errno = 0;
    long v = strtol(cap, &end, 10);
    if (errno || *end || v < 1 || v > ATTN_CUDNN_MAX_CANDIDATES) {
      rt_error_locate(err, "ROOFTUNE_CUDNN_MAX", NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID,
                          "ROOFTUNE_CUDNN_MAX must be a whole number from 1 to %d, not \"%s\"",
                          ATTN_CUDNN_MAX_CANDIDATES, cap);
    }
    if (v < max) max = (int)v;
  }
  attn_cudnn *c = NULL;
  rt_status st = attention_gpu_cudnn(g, &c, err);
  if (!st) st = attn_cudnn_list(c, max, count, err);
  return no_candidates(st, err);
}

rt_status attention_cudnn_library_describe(family_gpu *g, int i, char *buf, size_t size,
                                           rt_error *err) {
  attn_cudnn *c = NULL;
  rt_status st = attention_gpu_cudnn(g, &c, err);
  return st ? st : attn_cudnn_describe(c, i, buf, size, err);
}

rt_status attention_cudnn_library_launch(family_gpu *g, int i, CUstream stream, rt_error *err) {
  attn_cudnn *c = NULL;
  rt_status st = attention_gpu_cudnn(g, &c, err);
  return st ? st : attn_cudnn_run(c, i, stream, err);
}
