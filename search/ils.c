/* ils.c — the local search the other strategies build on (near moves first, then far ones),
 * and iterated local search: kicks from the best, random restarts. */
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
      if (st->state[s] == ST_TOLD && isfinite(st->time[s]))
        strategy_ls_move(st, ls, (size_t)s);
      else
        ls->fails++;
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
    if (st->best_time < ls->best_at_kick)
      ls->fails = 0;
    else
      ls->fails++;
    ls->best_at_kick = st->best_time;
    ls->cur = -1;
  }
  return -1;
}

void strategy_ls_told(strategy *st, strategy_ls *ls, size_t idx, double t) {
  if ((long)idx == ls->awaiting) {
    ls->awaiting = -1;
    if (isfinite(t))
      strategy_ls_move(st, ls, idx);
    else
      ls->fails++;
    return;
  }
  if (ls->cur >= 0 && t < st->time[ls->cur]) strategy_ls_move(st, ls, idx);
  /* a result it did not ask for before it has a point (a prior's): start from the best one */
  else if (ls->cur < 0 && ls->awaiting < 0 && (long)idx == st->best)
    strategy_ls_move(st, ls, idx);
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

const strategy_kind strategy_kind_ils = {
    "ils", 0, strategy_ils_init, strategy_ils_next, strategy_ils_told, strategy_ils_free};
