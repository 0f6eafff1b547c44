/* attention_impl.h — private to the attention family's two halves, not part of attention.h:
 * what attention_serve.c (serving: the shape syntax, names, coordinates, kernel arguments, TMA
 * maps) and attention.c (tuning: costs, tolerance, the GPU side, cuDNN's candidates) share, and
 * the fields both family_ops objects have (ATTN_SERVING_OPS: attention_serving has them alone,
 * attention_family adds the tuning fields). */
#ifndef ROOFTUNE_ATTENTION_IMPL_H
#define ROOFTUNE_ATTENTION_IMPL_H

#include <stdlib.h>
#include <string.h>

#include "kernels/attention.h"

#define ATTN_SHAPE_HELP                                                                           \
  "BxHQ[:HKV]xSQ[:SKV]xD[:causal][:paged[16|32|64]] with positive integers, e.g. 4x32x4096x128, " \
  "1x32:8x8192x128:causal or 64x32:8x1:8192x128:paged16"

rt_status attn_parse_shape(const family_ops *self, const char *shape, const char *dtype,
                           const char *args, problem *out, rt_error *err);
rt_status attn_bind(const family_ops *self, const problem *p, rt_vars *v);
void attn_coords(const family_ops *self, const problem *p, family_coords *out);

/* What serving and tuning both say of attention (family.h). */
#define ATTN_SERVING_OPS                                                                \
  .name = "attention", .shape_help = ATTN_SHAPE_HELP, .example_shape = "4x32x4096x128", \
  .example_more = "64x32:8x1:8192x128", .library = "cudnn", .library_label = "cuDNN",   \
  .parse_shape = attn_parse_shape, .bind = attn_bind, .coords = attn_coords

/* ---- the problem's dimensions, for both halves ---- */

static inline long long dim(const problem *p, const char *n) { return problem_dim(p, n); }

/* The KV lengths of p into lens (B entries): args when ragged, else SKV each. */
static inline void kv_lens_of(const problem *p, int *lens) {
  const long long B = dim(p, "B"), SKV = dim(p, "SKV");
  const char *s = p->args;
  for (long long b = 0; b < B; b++) {
    if (dim(p, "RAGGED") && *s) {
      lens[b] = (int)strtol(s, (char **)&s, 10);
      if (*s == ',') s++;
    } else {
      lens[b] = (int)SKV;
    }
  }
}

static inline long long max_pages(const problem *p) {
  long long page = dim(p, "PAGE");
  return page ? (dim(p, "SKV") + page - 1) / page : 0;
}

static inline long long num_pages(const problem *p) {
  long long page = dim(p, "PAGE");
  if (!page) return 0;
  if (!dim(p, "RAGGED")) return dim(p, "B") * max_pages(p);
  long long n = 0;
  for (int b = 0; b < dim(p, "B"); b++) n += (attention_kv_len(p, b) + page - 1) / page;
  return n > 0 ? n : 1;
}

#endif
