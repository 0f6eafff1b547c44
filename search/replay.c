/* replay.c — strategies scored on recorded spaces. */
#include "search/replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy.h"
#include "tuner/core/util.h"

double replay_percentile(double *v, size_t n, double q) {
  if (n == 0) return NAN;
  rt_sort_doubles(v, n);
  return rt_quantile(v, n, q / 100.0);
}

rt_status replay_run(const ktfile *kf, const char *name, int seeds, long budget, double eps,
                     const ktfile *prior, replay_stats *stats, rt_error *err) {
  memset(stats, 0, sizeof *stats);
  if (seeds < 1) return rt_error_set(err, RT_ERR_USAGE, "--seeds must be at least 1");
  if (budget < 1) return rt_error_set(err, RT_ERR_USAGE, "--budget must be at least 1");
  if (!(eps >= 0)) return rt_error_set(err, RT_ERR_USAGE, "--target must be >= 0");
  stats->seeds = seeds;
  stats->budget = budget;
  stats->eps = eps;
  stats->configs = kf->configs;
  stats->valid = kf->valid;
  stats->optimum_ms = kf->optimum_ms;
  stats->within = ktfile_count_within(kf, eps);
  stats->random_expected = (double)(kf->valid + 1) / (double)(stats->within + 1);
  size_t *order = NULL;
  if (prior) {
    rt_status rc = ktfile_rank_in(prior, kf->space, &order, &stats->prior, err);
    if (rc) return rc;
  }
  stats->evals = malloc((size_t)seeds * sizeof *stats->evals);
  double *v = malloc((size_t)seeds * sizeof *v);
  if (!stats->evals || !v) {
    free(order);
    free(v);
    replay_stats_free(stats);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  double target = kf->optimum_ms * (1 + eps);
  int reached = 0;
  for (int s = 0; s < seeds; s++) {
    strategy_options o = {.name = name, .seed = (uint64_t)s, .max_evals = budget,
                          .prior = order, .nprior = stats->prior};
    strategy *st;
    rt_status rc = strategy_new(kf->space, &o, &st, err);
    if (rc) {
      free(order);
      free(v);
      replay_stats_free(stats);
      return rc;
    }
    snprintf(stats->strategy, sizeof stats->strategy, "%s", strategy_name(st));
    long hit = -1;
    size_t idx;
    while (hit < 0 && strategy_ask(st, &idx, 1) == 1) {
      rt_status status = ktfile_status(kf, idx);
      rc = strategy_tell(st, idx, status, kf->time_ms[idx], NULL, err);
      if (rc) break;
      if (status == RT_OK && kf->time_ms[idx] <= target) hit = (long)strategy_evaluations(st);
    }
    strategy_free(st);
    if (rc) {
      free(order);
      free(v);
      replay_stats_free(stats);
      return rc;
    }
    stats->evals[s] = hit;
    v[s] = hit >= 0 ? (double)hit : 2.0 * (double)budget;
    reached += hit >= 0;
  }
  stats->reached = (double)reached / seeds;
  stats->median = replay_percentile(v, (size_t)seeds, 50);
  stats->p90 = replay_percentile(v, (size_t)seeds, 90);
  free(order);
  free(v);
  return RT_OK;
}

void replay_stats_free(replay_stats *stats) {
  free(stats->evals);
  stats->evals = NULL;
}
