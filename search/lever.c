/* lever.c — the lever strategy: the moves the current best's diagnosis names first (its lever,
 * inside the space), Bayesian optimisation when no lever applies. */
#include <stdlib.h>
#include <string.h>

#include "search/strategy_internal.h"

typedef struct {
  void *inner;   /* the fallback's state (strategy_kind_bayes) */
  size_t *queue; /* lever moves of the current best, in order */
  size_t nqueue; /* entries */
  size_t qpos;   /* next entry */
  size_t qcap;   /* allocated */
} strategy_lever;

/* Runs the fallback's hook with its own state in st->impl. */
#define LEVER_INNER(st, lv, call) \
  do {                            \
    void *mine_ = (st)->impl;     \
    (st)->impl = (lv)->inner;     \
    call;                         \
    (lv)->inner = (st)->impl;     \
    (st)->impl = mine_;           \
  } while (0)

static rt_status strategy_lever_init(strategy *st, rt_error *err) {
  strategy_lever *lv = calloc(1, sizeof *lv);
  if (!lv) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  st->impl = lv;
  lv->qcap = 4 * (size_t)st->np + 4;
  lv->queue = malloc(lv->qcap * sizeof *lv->queue);
  if (!lv->queue) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  rt_status rc = RT_OK;
  LEVER_INNER(st, lv, rc = strategy_kind_bayes.init(st, err));
  return rc;
}

static void strategy_lever_push(strategy *st, strategy_lever *lv) {
  long j = space_index(st->sp, st->cfg);
  if (j >= 0 && st->state[j] == ST_UNSEEN && lv->nqueue < lv->qcap)
    lv->queue[lv->nqueue++] = (size_t)j;
}

/* Parses the best's lever ("BLOCK_N+,BLOCK_M-") into moves of the best that stay in the space
 * (space_move: the nearest value that way whose configuration is valid): each named parameter
 * one valid move its way (in the lever's order), then all of them together, then each a second
 * valid move further. */
static void strategy_lever_plan(strategy *st, strategy_lever *lv) {
  lv->nqueue = lv->qpos = 0;
  int pidx[32], dir[32], nl = 0;
  const char *s = st->lever;
  while (*s && nl < 32) {
    while (*s == ' ') s++;
    size_t len = strcspn(s, ",");
    size_t nlen = len;
    while (nlen > 0 && s[nlen - 1] == ' ') nlen--;
    int d = 0;
    if (nlen > 0 && (s[nlen - 1] == '+' || s[nlen - 1] == '-')) {
      d = s[nlen - 1] == '+' ? 1 : -1;
      nlen--;
    }
    char name[96];
    if (d && nlen > 0 && nlen < sizeof name) {
      memcpy(name, s, nlen);
      name[nlen] = '\0';
      int p = space_param_index(st->sp, name);
      if (p >= 0) {
        pidx[nl] = p;
        dir[nl++] = d;
      }
    }
    s += len;
    if (*s == ',') s++;
  }
  if (nl == 0) return;
  const uint16_t *best = space_config(st->sp, (size_t)st->best);
  size_t bytes = (size_t)st->np * sizeof *st->cfg;
  long one[32];
  for (int i = 0; i < nl; i++) {
    one[i] = space_move(st->sp, best, pidx[i], dir[i], 1);
    if (one[i] >= 0) {
      memcpy(st->cfg, space_config(st->sp, (size_t)one[i]), bytes);
      strategy_lever_push(st, lv);
    }
  }
  if (nl > 1) { /* every named parameter moved at once, each to its own valid move's value */
    memcpy(st->cfg, best, bytes);
    int ok = 1;
    for (int i = 0; i < nl && ok; i++) {
      ok = one[i] >= 0;
      if (ok) st->cfg[pidx[i]] = space_config(st->sp, (size_t)one[i])[pidx[i]];
    }
    if (ok) strategy_lever_push(st, lv);
  }
  for (int i = 0; i < nl; i++) {
    long two = space_move(st->sp, best, pidx[i], dir[i], 2);
    if (two >= 0) {
      memcpy(st->cfg, space_config(st->sp, (size_t)two), bytes);
      strategy_lever_push(st, lv);
    }
  }
}

static long strategy_lever_next(strategy *st) {
  strategy_lever *lv = st->impl;
  if (st->best_changed) {
    st->best_changed = 0;
    strategy_lever_plan(st, lv);
  }
  while (lv->qpos < lv->nqueue) {
    size_t c = lv->queue[lv->qpos++];
    if (st->state[c] == ST_UNSEEN) return (long)c;
  }
  long r = -1;
  LEVER_INNER(st, lv, r = strategy_kind_bayes.next(st));
  return r;
}

static void strategy_lever_told(strategy *st, size_t idx, double t) {
  strategy_lever *lv = st->impl;
  LEVER_INNER(st, lv, strategy_kind_bayes.told(st, idx, t));
}

static void strategy_lever_free(strategy *st) {
  strategy_lever *lv = st->impl;
  if (!lv) return;
  LEVER_INNER(st, lv, strategy_kind_bayes.free(st));
  free(lv->queue);
  free(lv);
}

const strategy_kind strategy_kind_lever = {
    "lever", 0, strategy_lever_init, strategy_lever_next, strategy_lever_told, strategy_lever_free};
