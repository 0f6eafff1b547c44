/* annealing.c — simulated annealing over one-parameter moves, with reheats from the best. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy_internal.h"

/* Tuned on the development spaces (see bench/bench_strategies.c): */
#define SA_T0   0.10  /* starting temperature, relative: 10 % worse is accepted with 1/e */
#define SA_COOL 0.95  /* temperature factor per evaluation */
#define SA_TMIN 0.002 /* below this, reheat from the best */

typedef struct {
  long cur;    /* the current point, -1 before the first success */
  double temp; /* the temperature */
} strategy_sa;

static rt_status strategy_sa_init(strategy *st, rt_error *err) {
  strategy_sa *sa = calloc(1, sizeof *sa);
  if (!sa) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  sa->cur = -1;
  sa->temp = SA_T0;
  st->impl = sa;
  return RT_OK;
}

static int strategy_sa_accept(strategy *st, strategy_sa *sa, double t) {
  double c = st->time[sa->cur];
  if (t <= c) return 1;
  if (!isfinite(t)) return 0;
  return strategy_rand_unit(st) < exp(-(t / c - 1) / sa->temp);
}

/* A random one-parameter move of cur: one step half of the time, any value otherwise. */
static long strategy_sa_move(strategy *st, size_t cur) {
  uint16_t *cfg = st->cfg;
  for (int tries = 0; tries < 32; tries++) {
    memcpy(cfg, space_config(st->sp, cur), (size_t)st->np * sizeof *cfg);
    int q = (int)strategy_rand_below(st, (size_t)st->np);
    int count = space_param_at(st->sp, q)->count;
    if (count < 2) continue;
    if (strategy_rand_below(st, 2)) {
      int v = cfg[q] + (strategy_rand_below(st, 2) ? 1 : -1);
      if (v < 0 || v >= count) continue;
      cfg[q] = (uint16_t)v;
    } else {
      size_t v = strategy_rand_below(st, (size_t)count - 1);
      cfg[q] = (uint16_t)(v >= cfg[q] ? v + 1 : v);
    }
    long j = space_index(st->sp, cfg);
    if (j >= 0) return j;
  }
  return -1;
}

static long strategy_sa_next(strategy *st) {
  strategy_sa *sa = st->impl;
  if (sa->cur < 0) return -1; /* a random start */
  for (int tries = 0; tries < 256; tries++) {
    long j = strategy_sa_move(st, (size_t)sa->cur);
    if (j < 0) break;
    if (st->state[j] == ST_UNSEEN) return j;
    if (st->state[j] == ST_TOLD && strategy_sa_accept(st, sa, st->time[j])) sa->cur = j;
  }
  return -1; /* stuck among seen configurations: a random jump */
}

static void strategy_sa_told(strategy *st, size_t idx, double t) {
  strategy_sa *sa = st->impl;
  if (sa->cur < 0) {
    if (isfinite(t)) sa->cur = (long)idx;
    return;
  }
  if (strategy_sa_accept(st, sa, t)) sa->cur = (long)idx;
  sa->temp *= SA_COOL;
  if (sa->temp < SA_TMIN) {
    sa->temp = SA_T0;
    sa->cur = st->best;
  }
}

static void strategy_sa_free(strategy *st) { free(st->impl); }

const strategy_kind strategy_kind_annealing = {
    "annealing", 0, strategy_sa_init, strategy_sa_next, strategy_sa_told, strategy_sa_free};
