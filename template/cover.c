/* cover.c — covering sets of a space (cover.h). */
#include "template/cover.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Items: value v of parameter p is item base[p] + v; value pair (va, vb) of pair k is item
 * pbase[k] + va * count(b) + vb.  An item no configuration has is never required. */
typedef struct cover_items {
  int np, npairs;
  int (*pair)[2]; /* parameter indices */
  size_t *base, *pbase, total;
} cover_items;

static size_t items_of(const cover_items *it, const space *s, const uint16_t *cfg, size_t *out) {
  size_t n = 0;
  for (int p = 0; p < it->np; p++)
    if (space_param_at(s, p)->count > 1) out[n++] = it->base[p] + cfg[p];
  for (int k = 0; k < it->npairs; k++) {
    const int a = it->pair[k][0], b = it->pair[k][1];
    out[n++] = it->pbase[k] + (size_t)cfg[a] * (size_t)space_param_at(s, b)->count + cfg[b];
  }
  return n;
}

rt_status space_cover(const space *s, const char *const (*pairs)[2], int npairs, size_t **out,
                      size_t *n, size_t *items, rt_error *err) {
  *out = NULL;
  *n = 0;
  if (items) *items = 0;
  cover_items it = {space_nparams(s), npairs, NULL, NULL, NULL, 0};
  const size_t N = space_size(s), per = (size_t)it.np + (size_t)npairs;
  it.pair = calloc((size_t)npairs + 1, sizeof *it.pair);
  it.base = calloc((size_t)it.np + 1, sizeof *it.base);
  it.pbase = calloc((size_t)npairs + 1, sizeof *it.pbase);
  size_t *chosen = malloc((N + 1) * sizeof *chosen), *buf = malloc((per + 1) * sizeof *buf);
  unsigned char *need = NULL, *taken = calloc(N + 1, 1);
  rt_status st = it.pair && it.base && it.pbase && chosen && buf && taken
                     ? RT_OK
                     : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (int p = 0; !st && p < it.np; p++)
    it.base[p] = it.total, it.total += (size_t)space_param_at(s, p)->count;
  for (int k = 0; !st && k < npairs; k++) {
    for (int j = 0; j < 2; j++) {
      it.pair[k][j] = space_param_index(s, pairs[k][j]);
      if (it.pair[k][j] < 0)
        st = rt_error_set(err, RT_ERR_INVALID, "cover pair %d: %s is not a parameter", k,
                          pairs[k][j]);
    }
    if (st) break;
    it.pbase[k] = it.total;
    it.total += (size_t)space_param_at(s, it.pair[k][0])->count *
                (size_t)space_param_at(s, it.pair[k][1])->count;
  }
  if (!st && !(need = calloc(it.total + 1, 1)))
    st = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  /* what the space has: each item some configuration holds */
  size_t left = 0;
  for (size_t c = 0; !st && c < N; c++) {
    const size_t m = items_of(&it, s, space_config(s, c), buf);
    for (size_t i = 0; i < m; i++)
      if (!need[buf[i]]) need[buf[i]] = 1, left++;
  }
  if (items) *items = left;
  /* greedy: the configuration holding the most items still needed, the lowest index on ties */
  while (!st && left > 0) {
    size_t best = N, best_gain = 0;
    for (size_t c = 0; c < N; c++) {
      if (taken[c]) continue;
      const size_t m = items_of(&it, s, space_config(s, c), buf);
      size_t gain = 0;
      for (size_t i = 0; i < m; i++) gain += need[buf[i]] == 1;
      if (gain > best_gain) best_gain = gain, best = c;
    }
    if (best == N) break; /* cannot happen: every needed item is some configuration's */
    taken[best] = 1;
    chosen[(*n)++] = best;
    const size_t m = items_of(&it, s, space_config(s, best), buf);
    for (size_t i = 0; i < m; i++)
      if (need[buf[i]] == 1) need[buf[i]] = 2, left--;
  }
  free(it.pair);
  free(it.base);
  free(it.pbase);
  free(buf);
  free(need);
  free(taken);
  if (st) {
    free(chosen);
    *n = 0;
    return st;
  }
  *out = chosen;
  return RT_OK;
}

/* space_subset's test: the configurations the set chose (a mask over the space) */
static int cover_keeps(void *ctx, const space *s, size_t idx) {
  (void)s;
  return ((const unsigned char *)ctx)[idx];
}

rt_status manifest_cover_space(const manifest *m, const space *s, space **out, rt_error *err) {
  *out = NULL;
  const int np = manifest_ncover(m);
  const char *(*pairs)[2] = calloc((size_t)np + 1, sizeof *pairs);
  if (!pairs) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < np; i++) manifest_cover_pair(m, i, &pairs[i][0], &pairs[i][1]);
  size_t *idx = NULL, n = 0;
  rt_status st = space_cover(s, (const char *const(*)[2])pairs, np, &idx, &n, NULL, err);
  unsigned char *mask = st ? NULL : calloc(space_size(s) + 1, 1);
  if (!st && !mask) st = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (size_t i = 0; !st && i < n; i++) mask[idx[i]] = 1;
  if (!st) st = space_subset(s, cover_keeps, mask, out, err);
  free(mask);
  free(idx);
  free(pairs);
  return st;
}
