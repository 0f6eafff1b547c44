/* genetic.c — a steady-state genetic algorithm: tournament selection, uniform crossover,
 * per-parameter mutation; each told child replaces the worst member when it is better. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy_internal.h"

/* Tuned on the development spaces (see bench/bench_strategies.c): */
enum { GA_POP = 16, GA_TOURNAMENT = 2 };
#define GA_MUT 1.0 /* expected mutated parameters per child */

typedef struct {
  size_t pop[GA_POP]; /* members: told configurations with a time */
  int npop;           /* members so far */
} strategy_ga;

static rt_status strategy_ga_init(strategy *st, rt_error *err) {
  st->impl = calloc(1, sizeof(strategy_ga));
  return st->impl ? RT_OK : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
}

static size_t strategy_ga_pick(strategy *st, strategy_ga *ga) {
  size_t b = ga->pop[strategy_rand_below(st, (size_t)ga->npop)];
  for (int i = 1; i < GA_TOURNAMENT; i++) {
    size_t c = ga->pop[strategy_rand_below(st, (size_t)ga->npop)];
    if (st->time[c] < st->time[b]) b = c;
  }
  return b;
}

static void strategy_ga_offer(strategy *st, strategy_ga *ga, size_t idx) {
  double t = st->time[idx];
  if (!isfinite(t)) return;
  int worst = 0;
  for (int i = 0; i < ga->npop; i++) {
    if (ga->pop[i] == idx) return;
    if (st->time[ga->pop[i]] > st->time[ga->pop[worst]]) worst = i;
  }
  if (ga->npop < GA_POP)
    ga->pop[ga->npop++] = idx;
  else if (t < st->time[ga->pop[worst]])
    ga->pop[worst] = idx;
}

static long strategy_ga_next(strategy *st) {
  strategy_ga *ga = st->impl;
  if (ga->npop < GA_POP) return -1; /* the first members are random */
  uint16_t *cfg = st->cfg;
  double mut = GA_MUT / st->np;
  for (int tries = 0; tries < 256; tries++) {
    const uint16_t *a = space_config(st->sp, strategy_ga_pick(st, ga));
    const uint16_t *b = space_config(st->sp, strategy_ga_pick(st, ga));
    for (int p = 0; p < st->np; p++) {
      cfg[p] = strategy_rand_below(st, 2) ? a[p] : b[p];
      int count = space_param_at(st->sp, p)->count;
      if (count > 1 && strategy_rand_unit(st) < mut) {
        if (strategy_rand_below(st, 2)) {
          int v = cfg[p] + (strategy_rand_below(st, 2) ? 1 : -1);
          if (v >= 0 && v < count) cfg[p] = (uint16_t)v;
        } else {
          cfg[p] = (uint16_t)strategy_rand_below(st, (size_t)count);
        }
      }
    }
    long j = space_index(st->sp, cfg);
    if (j < 0) continue;
    if (st->state[j] == ST_UNSEEN) return j;
    if (st->state[j] == ST_TOLD) strategy_ga_offer(st, ga, (size_t)j);
  }
  return -1;
}

static void strategy_ga_told(strategy *st, size_t idx, double t) {
  (void)t;
  strategy_ga_offer(st, st->impl, idx);
}

static void strategy_ga_free(strategy *st) { free(st->impl); }

const strategy_kind strategy_kind_genetic = {
    "genetic", 0, strategy_ga_init, strategy_ga_next, strategy_ga_told, strategy_ga_free};
