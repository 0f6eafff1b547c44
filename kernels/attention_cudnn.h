/* attention_cudnn.h — cuDNN's SDPA configurations (attention_sdpa.h) as the attention family's
 * library candidates, as cuBLASLt's algorithms are gemm's: the family_ops hooks the tuner calls
 * inside the measuring worker.  The tuner's half of cuDNN: librooftune serves cuDNN through
 * attention_sdpa.h alone.
 */
#ifndef ROOFTUNE_ATTENTION_CUDNN_H
#define ROOFTUNE_ATTENTION_CUDNN_H

#include "kernels/attention_sdpa.h"
#include "kernels/family.h"

/* ---- the attention family's library_list / _describe / _launch ---- */

/* The cuDNN state of a family_gpu, opened over its buffers on first use and closed by its
 * teardown (kernels/attention.c owns family_gpu). */
rt_status attention_gpu_cudnn(family_gpu *g, attn_cudnn **out, rt_error *err);

/* No candidate for the problem (cuDNN absent, too old, the problem or GPU not supported, no
 * engine) is RT_ERR_UNSUPPORTED with the reason, which the tuner notes before it goes on with
 * the templates.  $ROOFTUNE_CUDNN_MAX (1 to 32) caps how many are listed, mode A's first — a
 * plan of a runtime-compiled engine takes seconds to build; a bad value is RT_ERR_INVALID. */

rt_status attention_cudnn_library_list(family_gpu *g, int max, int *count, rt_error *err);
rt_status attention_cudnn_library_describe(family_gpu *g, int i, char *buf, size_t size,
                                           rt_error *err);
rt_status attention_cudnn_library_launch(family_gpu *g, int i, CUstream stream, rt_error *err);

#endif
