/* replay.c — strategies scored on recorded spaces. */
#include "search/replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy.h"
#include "core/util.h"
#include "model/features.h"
#include "model/recorded.h"

double replay_percentile(double *v, size_t n, double q) {
  if (n == 0) return NAN;
  rt_sort_doubles(v, n);
  return rt_quantile(v, n, q / 100.0);
}

/* What the strategy is told beyond times (recorded.h): each timed configuration's diagnosis
 * from its recorded counters, and every configuration's compile facts as features, those a
 * manifest compiled (given) in place of the recording's, with the roofline bound of its cost
 * formulas.  NULL where there is nothing to tell (no counters, no facts, a GPU the spec table
 * does not know). */
static rt_status replay_recorded(const ktfile *kf, const replay_given *given, replay_stats *stats,
                                 diagnosis **diag, double **feat, rt_error *err) {
  *diag = NULL;
  *feat = NULL;
  const gpu_spec *gpu = gpu_spec_match_name(kf->device_name);
  if (!gpu) return RT_OK;
  int facts = kf->facts || (given && given->facts);
  if (kf->counters) *diag = calloc(kf->configs, sizeof **diag);
  if (facts) *feat = malloc(kf->configs * FEATURE_COUNT * sizeof **feat);
  if ((kf->counters && !*diag) || (facts && !*feat))
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  if (!*diag && !*feat) return RT_OK;
  snprintf(stats->gpu, sizeof stats->gpu, "%s", gpu->name);
  for (size_t i = 0; i < kf->configs; i++) {
    candidate_result r;
    ktfile_result(kf, i, &r);
    double executed = 0, bytes = 0;
    if (given && given->facts && given->facts[i].threads_per_block > 0) r.facts = given->facts[i];
    if (given && given->flops) r.flops = given->flops[i];
    if (given && given->executed_flops) executed = given->executed_flops[i];
    if (given && given->dram_bytes) bytes = given->dram_bytes[i];
    if (*feat) recorded_features(&r.facts, gpu, executed, bytes, *feat + i * FEATURE_COUNT);
    if (!*diag) continue;
    rt_status rc = recorded_diagnose(&r, gpu, given ? given->roles : NULL, kf->space, i, err);
    if (rc) return rc;
    (*diag)[i] = r.diag;
    stats->diagnosed += r.diag.limit[0] != 0;
  }
  stats->features = *feat ? FEATURE_COUNT : 0;
  return RT_OK;
}

rt_status replay_run(const ktfile *kf, const char *name, int seeds, long budget, double eps,
                     const ktfile *prior, replay_stats *stats, rt_error *err) {
  return replay_run_given(kf, name, seeds, budget, eps, prior ? &prior : NULL, prior != NULL, NULL,
                          stats, err);
}

/* One configuration in the merged order: its mean rank fraction, its place among equals. */
typedef struct prior_rank {
  double score; /* sum over the recordings of rank / list length (1 when not ranked) */
  size_t tie;   /* its rank in the first recording that ranks it, then its number */
  size_t idx;   /* the configuration */
} prior_rank;

static int prior_rank_cmp(const void *a, const void *b) {
  const prior_rank *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? -1 : 1;
  return (x->tie > y->tie) - (x->tie < y->tie);
}

rt_status replay_merge_orders(const size_t *const *orders, const size_t *lens, int n, size_t ns,
                              size_t **order, size_t *len, rt_error *err) {
  *order = NULL;
  *len = 0;
  size_t big = (size_t)-1;
  prior_rank *pr = malloc((ns ? ns : 1) * sizeof *pr);
  if (!pr) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < ns; i++) pr[i] = (prior_rank){(double)n, big, i};
  for (int p = 0; p < n; p++) {
    const size_t *o = orders[p];
    size_t m = lens[p];
    for (size_t r = 0; r < m; r++) {
      if (o[r] >= ns) continue;
      pr[o[r]].score += (double)r / (double)m - 1.0;
      if (pr[o[r]].tie == big) pr[o[r]].tie = (size_t)p * ns + r;
    }
  }
  size_t k = 0;
  for (size_t i = 0; i < ns; i++)
    if (pr[i].tie != big) pr[k++] = pr[i];
  qsort(pr, k, sizeof *pr, prior_rank_cmp);
  rt_status rc = RT_OK;
  if (!(*order = malloc((k ? k : 1) * sizeof **order)))
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (size_t i = 0; !rc && i < k; i++) (*order)[i] = pr[i].idx;
  if (!rc) *len = k;
  free(pr);
  return rc;
}

rt_status replay_rank_priors(const ktfile *const *priors, int n, const space *s, size_t **order,
                             size_t *len, rt_error *err) {
  *order = NULL;
  *len = 0;
  size_t **o = calloc((size_t)(n > 0 ? n : 1), sizeof *o);
  size_t *m = calloc((size_t)(n > 0 ? n : 1), sizeof *m);
  rt_status rc = o && m ? RT_OK : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (int p = 0; p < n && !rc; p++) rc = ktfile_rank_in(priors[p], s, &o[p], &m[p], err);
  if (!rc) rc = replay_merge_orders((const size_t *const *)o, m, n, space_size(s), order, len, err);
  for (int p = 0; o && p < n; p++) free(o[p]);
  free(o);
  free(m);
  return rc;
}

rt_status replay_run_given(const ktfile *kf, const char *name, int seeds, long budget, double eps,
                           const ktfile *const *priors, int npriors, const replay_given *given,
                           replay_stats *stats, rt_error *err) {
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
  diagnosis *diag = NULL;
  double *feat = NULL, *v = NULL;
  rt_status rc = RT_OK;
  if (npriors > 0 &&
      (rc = replay_rank_priors(priors, npriors, kf->space, &order, &stats->prior, err)))
    goto done;
  if ((rc = replay_recorded(kf, given, stats, &diag, &feat, err))) goto done;
  stats->evals = malloc((size_t)seeds * sizeof *stats->evals);
  v = malloc((size_t)seeds * sizeof *v);
  if (!stats->evals || !v) {
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  stats->blind = given && given->blind;
  stats->survey = given && given->survey && feat;
  stats->survey_cost = stats->survey ? REPLAY_SURVEY_SHARE * (double)kf->configs : 0;
  double target = kf->optimum_ms * (1 + eps);
  int reached = 0;
  for (int s = 0; s < seeds && !rc; s++) {
    strategy_options o = {.name = name,
                          .seed = (uint64_t)s,
                          .max_evals = budget,
                          .prior = order,
                          .nprior = stats->prior,
                          .features = feat,
                          .nfeatures = stats->features,
                          .survey = stats->survey,
                          .blind = stats->blind};
    strategy *st;
    if ((rc = strategy_new(kf->space, &o, &st, err))) break;
    snprintf(stats->strategy, sizeof stats->strategy, "%s", strategy_name(st));
    long hit = -1;
    size_t idx;
    while (hit < 0 && strategy_ask(st, &idx, 1) == 1) {
      rt_status status = ktfile_status(kf, idx);
      const diagnosis *d = diag && diag[idx].limit[0] ? &diag[idx] : NULL;
      if ((rc = strategy_tell(st, idx, status, kf->time_ms[idx], d, err))) break;
      int learned;
      stats->steps++;
      if (strategy_best_lever(st, &learned)[0])
        stats->lever_steps++, stats->learned_steps += learned;
      if (status == RT_OK && kf->time_ms[idx] <= target) hit = (long)strategy_evaluations(st);
    }
    strategy_free(st);
    stats->evals[s] = hit;
    v[s] = hit >= 0 ? (double)hit + stats->survey_cost : 2.0 * (double)budget;
    reached += hit >= 0;
  }
  if (!rc) {
    stats->reached = (double)reached / seeds;
    stats->median = replay_percentile(v, (size_t)seeds, 50);
    stats->p90 = replay_percentile(v, (size_t)seeds, 90);
  }
done:
  free(order);
  free(diag);
  free(feat);
  free(v);
  if (rc) replay_stats_free(stats);
  return rc;
}

void replay_stats_free(replay_stats *stats) {
  free(stats->evals);
  stats->evals = NULL;
}
