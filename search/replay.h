/* replay.h — scores a strategy on a recorded brute-forced space (ktfile.h): runs it with seeds
 * 0..N-1, looking each asked configuration's time up in the file, and counts the evaluations
 * it needs to reach a configuration within eps of the file's known optimum.
 *
 * Failed configurations count as evaluations (on a real run each costs a compile and a launch).
 * A run that misses the target within the budget counts as twice the budget in the median and
 * p90.  Random search's need is computed exactly, not sampled: drawing without replacement from
 * V timed configurations of which k are within the target takes (V+1)/(k+1) draws on average.
 * (Random search over the whole file would also draw the failed configurations, so this
 * flatters random search slightly: the comparison is conservative.)
 *
 * A recording that carries counters (KTT's results files) is replayed as a GPU run would be:
 * every timed configuration is told with its diagnosis, made from its measured counters on the
 * recorded GPU's roofs (recorded.h), and the strategy learns a configuration's compile facts
 * (registers, shared memory, block, grid: features.h) once it proposes it, as a tune compiles
 * what it proposes (strategy_options.features; steer uses both, bayes neither).  A failed
 * configuration is therefore like any other until tried.  With survey, every configuration's
 * facts are known from the start, as a compile-first survey gives them, and its cost is counted:
 * REPLAY_SURVEY_SHARE of an evaluation per configuration, added to every run's evaluations.
 * Blind tells the strategy only times (strategy_options.blind).
 */
#ifndef ROOFTUNE_REPLAY_H
#define ROOFTUNE_REPLAY_H

#include <stddef.h>

#include "template/ktfile.h"
#include "template/roles.h"
#include "core/status.h"

/* Evaluations a replay may spend per run unless told otherwise: a long tuning session on a real
 * GPU (about an hour at a few seconds per compile and measurement). */
#define REPLAY_DEFAULT_BUDGET 1000
#define REPLAY_DEFAULT_EPS    0.05
/* What compiling one configuration costs, in evaluations, when a survey compiles them all ahead:
 * compiles run on every core while an evaluation waits for its own compile and then the GPU, so a
 * survey's compile costs about a tenth of an evaluation's wall time on an 8-core host. */
#define REPLAY_SURVEY_SHARE 0.1

typedef struct replay_stats {
  char strategy[32];      /* the strategy run */
  int seeds;              /* runs, seeds 0..seeds-1 */
  long budget;            /* evaluations per run */
  double eps;             /* target: time <= optimum * (1 + eps) */
  size_t configs;         /* configurations in the file (failed ones included) */
  size_t valid;           /* configurations with a time */
  size_t within;          /* timed configurations within the target (k) */
  double optimum_ms;      /* the file's best time */
  double median;          /* evaluations to reach the target (misses count 2 * budget) */
  double p90;             /* 90th percentile of the same */
  double reached;         /* fraction of runs that reached the target within the budget */
  double random_expected; /* (valid + 1) / (within + 1) */
  long *evals;            /* per seed: evaluations to target, or -1 when missed (owned) */
  size_t prior;           /* configurations of kf the prior ranks (0: no prior) */
  size_t diagnosed;       /* configurations told with a diagnosis from their recorded counters
                             (recorded.h; a KTT file on a GPU of the spec table), 0: none */
  int features;           /* features per configuration the strategy is given (its compile
                             facts, features.h), 0: none */
  char gpu[64];           /* the spec-table GPU the counters are held against, "" */
  int blind;              /* 1: the strategy was told only times */
  int survey;             /* 1: every configuration's facts were given ahead */
  double survey_cost;     /* evaluations the survey's compiles count in each run (0: none) */
  size_t steps;           /* results told, over every seed */
  size_t lever_steps;     /* of them, those after which the best had a lever the strategy
                             follows (strategy_best_lever) */
  size_t learned_steps;   /* of those, the levers learned from the evidence, not declared */
} replay_stats;

/* What a replay knows of kf's configurations beyond the file: a manifest's compile facts and
 * cost formulas (tuner/replay_compile.h), one entry per configuration of kf; any field NULL;
 * and how much of it the strategy is told. */
typedef struct replay_given {
  const static_facts *facts;    /* in place of the recording's where threads_per_block > 0 */
  const double *flops;          /* cost.flops: the diagnosis' FLOPs (0: the recording's estimate) */
  const double *executed_flops; /* cost.executed_flops, and dram_bytes: the roofline bound */
  const double *dram_bytes;
  const param_roles *roles; /* the levers' names (NULL: guessed from the parameter names) */
  int blind;                /* 1: tell the strategy only times (strategy_options.blind) */
  int survey;               /* 1: give every configuration's facts ahead, at a counted cost */
} replay_given;

/* Runs strategy NAME (NULL: the default) on kf; stats->evals is allocated (replay_stats_free).
 * prior (NULL: none) is another recording of the same kernel, typically on another GPU, whose
 * fastest configurations every run starts with (ktfile_rank_in, strategy_options.prior). */
rt_status replay_run(const ktfile *kf, const char *name, int seeds, long budget, double eps,
                     const ktfile *prior, replay_stats *stats, rt_error *err);
/* replay_run with what a manifest adds (given may be NULL: replay_run) and any number of priors
 * (npriors of them; replay_rank_priors merges them). */
rt_status replay_run_given(const ktfile *kf, const char *name, int seeds, long budget, double eps,
                           const ktfile *const *priors, int npriors, const replay_given *given,
                           replay_stats *stats, rt_error *err);

/* The configurations of space s by what n recordings of the same kernel elsewhere say (other
 * GPUs, other shapes): each ranks the configurations it holds (ktfile_rank_in), and the order is
 * by the mean of each configuration's rank as a fraction of each list (one a recording lacks
 * counts as its last), ties in the first recording's order: a configuration fast on every
 * other GPU comes before one fast on one, so one misleading recording cannot lead alone.
 * *order (malloc'ed) holds every configuration some recording ranks; *len its entries.  A
 * recording that shares no parameter with s is RT_ERR_INVALID naming it. */
rt_status replay_rank_priors(const ktfile *const *priors, int n, const space *s, size_t **order,
                             size_t *len, rt_error *err);
/* The merge replay_rank_priors makes, of n rankings already in a space of ns configurations
 * (orders[p]: lens[p] configuration numbers, fastest first; a number >= ns is ignored): by the
 * mean rank fraction, one a ranking lacks counting as its last, ties in the first ranking's
 * order.  What a tune's prior from the database merges its devices' and shapes' rankings with
 * (tuner/tune_transfer.c).  *order malloc'ed, *len entries. */
rt_status replay_merge_orders(const size_t *const *orders, const size_t *lens, int n, size_t ns,
                              size_t **order, size_t *len, rt_error *err);
void replay_stats_free(replay_stats *stats);

/* Percentile q (0..100) of v[0..n) with linear interpolation; v is sorted in place. */
double replay_percentile(double *v, size_t n, double q);

#endif
