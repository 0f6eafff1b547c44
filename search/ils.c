/* ils.c — iterated local search (kicks from the best, random restarts), lever (the best's
 * lever first, then Bayesian optimisation) and model (predicted order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy_internal.h"

/* Tuned on the development spaces (see bench/bench_strategies.c): */
enum {
  LS_NEAR_STEPS = 1, /* moves of one domain step are tried before the far ones */
  LS_KICK_MOVES = 3, /* a kick changes this many random parameters of the best */
  LS_PATIENCE = 4    /* kicks without a new best before a random restart */
};

rt_status strategy_ls_init(strategy *st, strategy_ls *ls, rt_error *err) {
  memset(ls, 0, sizeof *ls);
  ls->cur = -1;
  ls->awaiting = -1;
  ls->best_at_kick = INFINITY;
  ls->cand = malloc((strategy_moves_cap(st) + 1) * sizeof *ls->cand);
  return ls->cand ? RT_OK : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
}

void strategy_ls_free(strategy_ls *ls) { free(ls->cand); }

void strategy_ls_move(strategy *st, strategy_ls *ls, size_t idx) {
  ls->cur = (long)idx;
  size_t cap = strategy_moves_cap(st);
  size_t nn = strategy_moves(st, idx, LS_NEAR_STEPS, ls->cand, cap);
  strategy_shuffle(st, ls->cand, nn);
  /* the far moves: every one-parameter change not among the near ones */
  size_t *all = ls->cand + nn;
  size_t na = strategy_moves(st, idx, 0, all, cap - nn);
  size_t k = 0;
  for (size_t i = 0; i < na; i++) {
    int near = 0;
    for (size_t j = 0; j < nn && !near; j++) near = ls->cand[j] == all[i];
    if (!near) all[k++] = all[i];
  }
  strategy_shuffle(st, all, k);
  ls->ncand = nn + k;
  ls->pos = 0;
}

/* A random walk of LS_KICK_MOVES one-parameter changes from the best, through valid
 * configurations only. */
static long strategy_ls_kick(strategy *st) {
  size_t p = (size_t)st->best;
  uint16_t *cfg = st->cfg;
  for (int m = 0; m < LS_KICK_MOVES; m++) {
    for (int tries = 0; tries < 16; tries++) {
      memcpy(cfg, space_config(st->sp, p), (size_t)st->np * sizeof *cfg);
      int q = (int)strategy_rand_below(st, (size_t)st->np);
      int count = space_param_at(st->sp, q)->count;
      if (count < 2) continue;
      size_t v = strategy_rand_below(st, (size_t)count - 1);
      cfg[q] = (uint16_t)(v >= cfg[q] ? v + 1 : v);
      long j = space_index(st->sp, cfg);
      if (j >= 0) {
        p = (size_t)j;
        break;
      }
    }
  }
  return (long)p;
}

long strategy_ls_next(strategy *st, strategy_ls *ls) {
  for (int guard = 0; guard < 256; guard++) {
    if (ls->cur < 0) {
      if (ls->awaiting >= 0 && st->state[ls->awaiting] == ST_PENDING) return -1;
      long s;
      if (st->best >= 0 && ls->fails < LS_PATIENCE) {
        s = strategy_ls_kick(st);
      } else {
        ls->fails = 0; /* kicks stopped paying: a random restart */
        s = strategy_random_unseen(st);
      }
      if (s < 0) return -1;
      if (st->state[s] == ST_UNSEEN) {
        ls->awaiting = s;
        return s;
      }
      if (st->state[s] == ST_TOLD && isfinite(st->time[s])) strategy_ls_move(st, ls, (size_t)s);
      else ls->fails++;
      continue;
    }
    while (ls->pos < ls->ncand) {
      size_t c = ls->cand[ls->pos++];
      if (st->state[c] == ST_UNSEEN) return (long)c;
      if (st->state[c] == ST_TOLD && st->time[c] < st->time[ls->cur]) {
        strategy_ls_move(st, ls, c); /* known to be better: a free step */
        break;
      }
    }
    if (ls->pos < ls->ncand) continue;
    /* a local optimum: kick from the best, or restart when kicks stopped paying */
    if (st->best_time < ls->best_at_kick) ls->fails = 0;
    else ls->fails++;
    ls->best_at_kick = st->best_time;
    ls->cur = -1;
  }
  return -1;
}

void strategy_ls_told(strategy *st, strategy_ls *ls, size_t idx, double t) {
  if ((long)idx == ls->awaiting) {
    ls->awaiting = -1;
    if (isfinite(t)) strategy_ls_move(st, ls, idx);
    else ls->fails++;
    return;
  }
  if (ls->cur >= 0 && t < st->time[ls->cur]) strategy_ls_move(st, ls, idx);
  /* a result it did not ask for before it has a point (a prior's): start from the best one */
  else if (ls->cur < 0 && ls->awaiting < 0 && (long)idx == st->best) strategy_ls_move(st, ls, idx);
}

/* ---- ils ---- */

static rt_status strategy_ils_init(strategy *st, rt_error *err) {
  strategy_ls *ls = malloc(sizeof *ls);
  if (!ls) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  st->impl = ls;
  return strategy_ls_init(st, ls, err);
}

static long strategy_ils_next(strategy *st) { return strategy_ls_next(st, st->impl); }

static void strategy_ils_told(strategy *st, size_t idx, double t) {
  strategy_ls_told(st, st->impl, idx, t);
}

static void strategy_ils_free(strategy *st) {
  if (st->impl) strategy_ls_free(st->impl);
  free(st->impl);
}

const strategy_kind strategy_kind_ils = {"ils", 0, strategy_ils_init, strategy_ils_next,
                                         strategy_ils_told, strategy_ils_free};

/* ---- lever: the best's lever first, Bayesian optimisation when no lever applies ---- */

typedef struct {
  void *inner;     /* the fallback's state (strategy_kind_bayes) */
  size_t *queue;   /* lever moves of the current best, in order */
  size_t nqueue;   /* entries */
  size_t qpos;     /* next entry */
  size_t qcap;     /* allocated */
} strategy_lever;

/* Runs the fallback's hook with its own state in st->impl. */
#define LEVER_INNER(st, lv, call)   \
  do {                              \
    void *mine_ = (st)->impl;       \
    (st)->impl = (lv)->inner;       \
    call;                           \
    (lv)->inner = (st)->impl;       \
    (st)->impl = mine_;             \
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
  if (j >= 0 && st->state[j] == ST_UNSEEN && lv->nqueue < lv->qcap) lv->queue[lv->nqueue++] = (size_t)j;
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

const strategy_kind strategy_kind_lever = {"lever", 0, strategy_lever_init, strategy_lever_next,
                                           strategy_lever_told, strategy_lever_free};

/* ---- model: the configurations in the order of a predicted time ---- */

typedef struct {
  size_t *order; /* configurations by predicted time, fastest first */
  size_t pos;    /* next entry */
} strategy_model;

static rt_status strategy_model_init(strategy *st, rt_error *err) {
  if (!st->opt.predict)
    return rt_error_set(err, RT_ERR_INVALID, "the model strategy needs a predicted time for "
                                             "each configuration (a model device)");
  strategy_model *m = calloc(1, sizeof *m);
  st->impl = m;
  if (!m) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  return strategy_rank_predicted(st->sp, st->opt.predict, st->opt.predict_ctx, &m->order, err);
}

static long strategy_model_next(strategy *st) {
  strategy_model *m = st->impl;
  while (m->pos < st->n && st->state[m->order[m->pos]] != ST_UNSEEN) m->pos++;
  return m->pos < st->n ? (long)m->order[m->pos++] : -1;
}

static void strategy_model_free(strategy *st) {
  strategy_model *m = st->impl;
  if (m) free(m->order);
  free(m);
}

const strategy_kind strategy_kind_model = {"model", 1, strategy_model_init, strategy_model_next,
                                           NULL, strategy_model_free};
