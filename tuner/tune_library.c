/* tune_library.c — the family's vendor-library candidates (tune_impl.h): on a device that runs
 * kernels, the library's own choices for the problem (cuBLASLt's algorithms, cuDNN's SDPA
 * engines) compete with the templates, stored under the library's name (family_ops.library);
 * the counters of the fastest few are read and the fastest is stored as the library's winner. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/tune_impl.h"

rt_status tune_library(tune_ctx *c, rt_error *err) {
  char ids[TUNE_MAX_LIBRARY][256];
  int count = 0;
  rt_error lerr = {0};
  rt_status rc = device_library_list(c->dev, TUNE_MAX_LIBRARY, ids, &count, &lerr);
  if (rc == RT_ERR_UNSUPPORTED) { /* the library has nothing for this problem: say why, go on */
    tune_note(c->rep, "no library candidates: %.200s", lerr.text);
    return RT_OK;
  }
  if (rc) {
    if (err) *err = lerr;
    return rc;
  }
  if (count == 0) return RT_OK;
  tune_search *s = calloc(1, sizeof *s);
  tune_cand *k = calloc(TUNE_MAX_LIBRARY, sizeof *k);
  if (!s || !k) {
    free(s);
    free(k);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  s->kind = TUNE_LIBRARY;
  s->name = c->fam->library ? c->fam->library : c->fam->name;
  s->phase = "library";
  s->min_bytes = c->fam->min_bytes(c->fam, &c->prob);
  s->top_all = 1; /* its fastest is its winner, stopped early or not */
  size_t n = 0;
  for (int i = 0; i < count; i++) {
    tune_cand_library(c, s, i, ids[i], &k[n]);
    /* f32 means fp32 math: cuBLASLt's FAST_TF32 algorithms only with --allow-tf32 */
    if (!strcmp(c->prob.dtype, "f32") && !strcmp(k[n].precision, "tf32") && !c->o->allow_tf32)
      continue;
    n++;
  }
  rc = tune_store_search(c, s, c->prob.family, err);
  if (!rc) rc = tune_batch(c, s, k, n, err);
  if (!rc) { /* the counters of the fastest few */
    tune_profile(c, s);
    rc = tune_store_winner(c, s, tune_winner(c, s), err);
  }
  tune_search_free(s);
  free(s);
  free(k);
  return rc;
}
