/* attention_library.c — THE SEAM for attention's vendor fallback (rule 4 of rooftune.h): where
 * rooftune_attention goes when no tuned winner serves a problem.  cuDNN's SDPA (being added as
 * the attention family's library candidates in the tuner) belongs here: make
 * rt_attention_library_available() say 1 when cuDNN loads, and rt_attention_library() run p
 * through it on the caller's stream and fill info (path ROOFTUNE_PATH_LIBRARY, template
 * "cudnn").  Until then the call fails cleanly: ROOFTUNE_ERR_NOT_FOUND with the reason, and
 * lookups report rule NONE for attention, not LIBRARY. */
#include "runtime/runtime.h"

int rt_attention_library_available(void) { return 0; }

int rt_attention_library(const problem *p, const rooftune_attention_problem *a, void *stream, const char *why,
                         rooftune_info *info) {
  (void)a;
  (void)stream;
  rt_copy(info->reason, sizeof info->reason, why);
  return rt_fail(ROOFTUNE_ERR_NOT_FOUND,
                 "rooftune_attention: no tuned kernel serves attention %s %s (%s), and this librooftune has no "
                 "vendor fallback (cuDNN) yet", p->shape, p->dtype, why);
}
