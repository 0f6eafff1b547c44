/* strategy.h — search strategies behind one ask/tell interface.
 *
 * A strategy walks a space (space.h) and never evaluates anything itself: the caller asks it
 * for the next configuration numbers, evaluates them (on a GPU, on the model device, or by
 * looking a recorded time up in a replay file) and tells it each result: a time, or a failure,
 * and optionally the candidate's diagnosis, whose lever the `lever` strategy follows.  So one
 * strategy serves `tune`, the model device and `replay` alike.
 *
 * Every strategy hands out each configuration at most once; a failed configuration counts as an
 * evaluation (on a real run it costs a compile).  Budgets: a number of evaluations and a number
 * of seconds on a clock the caller may replace (tests use a fake one); when either is spent, or
 * the space is exhausted, ask returns 0.  The seed makes a run repeatable: each strategy uses
 * its own xoshiro256** generator seeded from it, never rand().
 *
 * Strategies: brute_force (space order), random, ils (iterated local search with restarts),
 * annealing (simulated annealing), genetic (steady-state genetic algorithm), bayes (Bayesian
 * optimisation: a Gaussian process on log times, alternating exploitation of the best's
 * neighbours and children with expected improvement), lever (moves the parameters the current
 * best's lever names first, and falls back to bayes when no lever applies: on replayed files
 * without counters, which carry no diagnosis, lever and bayes make the same choices), steer
 * (bayes told what the diagnosis knows: the best's lever first while lever moves pay, a lever
 * learned from the evaluations where no role is declared, the pre-run facts as surrogate inputs
 * when surveyed, predicted by their laws otherwise; see steer.c; steer_turns: exploitation one
 * parameter at a time), and model (in the order of a predicted time from the caller, e.g. the
 * model device).  The default (STRATEGY_DEFAULT, steer) was chosen by replayed results on
 * brute-forced spaces: see bench/results/diagnosis.md, bench/bench_steer.c.
 *
 * A prior (strategy_options.prior) transfers what is known from elsewhere, typically the same
 * kernel's results on another GPU: every strategy that does not keep its own order
 * (STRATEGY_KEEPS_ORDER) starts with its first STRATEGY_PRIOR_FIRST configurations, then
 * carries on as it would from any results, the prior getting further turns only while its seeds
 * lead (STRATEGY_PRIOR_EVERY); bayes, lever and steer try them and keep them out of their model
 * (a seed that reaches the target ends the search, one that misleads costs its own evaluation
 * and no more).
 *
 * What a strategy is beside its name is a flag of its table entry (strategy_flags), which the
 * callers ask instead of the name; every list of strategies a user reads is strategy_list's.
 */
#ifndef ROOFTUNE_STRATEGY_H
#define ROOFTUNE_STRATEGY_H

#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "template/space.h"
#include "core/status.h"

typedef struct strategy strategy;

/* Seconds on some monotonic clock. */
typedef double (*strategy_clock_fn)(void *ctx);
/* Predicted time (any unit, lower is better) of configuration idx; for the model strategy. */
typedef double (*strategy_predict_fn)(void *ctx, size_t idx);

typedef struct strategy_options {
  const char *name;            /* strategy name (strategy_names()); NULL: the default */
  uint64_t seed;               /* same seed, same space, same results told → same run */
  long max_evals;              /* evaluation budget; 0: no limit (the whole space) */
  double max_seconds;          /* time budget from strategy_new; 0: no limit */
  strategy_clock_fn clock;     /* NULL: CLOCK_MONOTONIC */
  void *clock_ctx;             /* passed to clock */
  strategy_predict_fn predict; /* required by "model", ignored by the others */
  void *predict_ctx;           /* passed to predict */
  const double *features;      /* what compiling each configuration tells (its static facts:
                              * occupancy, registers, shared memory, waves ...), space_size x
                              * nfeatures values, row-major, NaN where unknown; copied.  A
                              * strategy sees a configuration's row only once it has handed it
                              * out (a tune compiles what it proposes, no more), unless survey
                              * is set.  bayes ignores them; steer learns from them which
                              * parameter moves what and weighs them as surrogate inputs (when
                              * not surveyed, as their laws predict them from those it was
                              * told: search/law_internal.h).  NULL: none */
  int nfeatures;               /* values per configuration in features */
  int survey;                  /* 1: every row of features is known from the start, as a
                              * compile-first survey of the whole space gives them (its compile
                              * cost is the caller's to count: replay --survey) */
  int blind;                   /* 1: the strategy is told only times: features and diagnoses are
                              * withheld, so a run against the same run not blind measures what
                              * the diagnosis adds (replay --blind, tune --blind) */
  const size_t *prior;         /* configurations to evaluate first, most promising first: e.g.
                              * the fastest of the same kernel's results on another GPU
                              * (ktfile_rank_in); copied.  NULL: none */
  size_t nprior;               /* entries in prior (at most STRATEGY_PRIOR_MAX are used) */
} strategy_options;

/* How far a prior is trusted (strategy.c, strategy_prior_turn).  The opening: the prior's first
 * STRATEGY_PRIOR_FIRST configurations, STRATEGY_PRIOR_GAP of the search's own choices between two
 * of them, each after the first only while the seeds lead (the best seed faster than everything
 * the search chose itself); they take the place of its random start (ils's first point,
 * genetic's first members) or come before it (bayes' initial design).  After the opening, the
 * prior's next entry gets a turn after every STRATEGY_PRIOR_EVERY of the search's own while the
 * seeds still lead, up to STRATEGY_PRIOR_MAX entries in all.  The first result of the search's
 * own that beats every seed, or a seed past the opening that brings nothing better than the
 * seeds before it, ends the prior's turns for good.  So a misleading prior costs its two opening
 * seeds and at most one more, and a prior that keeps leading is followed down its ranking.
 * Chosen on the shared recordings, leave one GPU out, and on priors of known quality (a
 * recording's own times with log-normal noise, bench_transfer --noise;
 * bench/results/transfer.md): one opening seed lost half the gain of a fair prior (noise 0.3),
 * three cost a misleading one more than 0.9x of its cold run. */
#ifndef STRATEGY_PRIOR_FIRST /* a -D may override these three: the benchmark's variants */
#define STRATEGY_PRIOR_FIRST 2
#endif
#ifndef STRATEGY_PRIOR_GAP
#define STRATEGY_PRIOR_GAP 1
#endif
#ifndef STRATEGY_PRIOR_EVERY
#define STRATEGY_PRIOR_EVERY 16
#endif
#define STRATEGY_PRIOR_MAX 16

/* Every configuration of s by predicted time, fastest first (ties and NaN in space order, NaN
 * last): the model strategy's order, and a prior from the model device.  *order: malloc'ed,
 * space_size(s) entries. */
rt_status strategy_rank_predicted(const space *s, strategy_predict_fn predict, void *ctx,
                                  size_t **order, rt_error *err);

/* A strategy's traits, the flags of its table entry. */
enum {
  STRATEGY_BATCH = 1,       /* ask may hand out many configurations at once */
  STRATEGY_KEEPS_ORDER = 2, /* an order of its own (space order, predicted order): takes no prior */
  STRATEGY_EXHAUSTIVE = 4,  /* asks for every configuration: nothing for the roof rules to skip */
  STRATEGY_PREDICTED = 8,   /* needs predicted times (strategy_options.predict) */
  STRATEGY_DEFAULT = 16,    /* the default: exactly one strategy has it, the one the measurements
                               support (strategy_default) */
};

/* The names, NULL-terminated, in a stable order. */
const char *const *strategy_names(void);
/* The flags of the strategy named name (NULL: the default); 0 for a name that is none. */
int strategy_flags(const char *name);
/* The names of the strategies with none of the flags in `without` ("brute_force, random, ..."),
 * written into buf (size bytes, cut short if it must be); returns buf. */
const char *strategy_list(int without, char *buf, size_t size);
/* The default strategy's name. */
const char *strategy_default(void);

rt_status strategy_new(const space *s, const strategy_options *opt, strategy **out, rt_error *err);
void strategy_free(strategy *st);
const char *strategy_name(const strategy *st);

/* Writes up to cap configuration numbers to evaluate next into out and returns how many; 0 when
 * a budget is spent or every configuration has been handed out.  Sequential strategies hand
 * out one at a time (ask, tell, ask ...); brute_force and random fill out. */
size_t strategy_ask(strategy *st, size_t *out, size_t cap);

/* Tells the result of a configuration ask handed out: status RT_OK with time_ms > 0, or a
 * failure status (time ignored).  diag may be NULL; its lever ("BLOCK_N+,BLOCK_M-") is what the
 * lever strategy moves next, and steer learns the parameters' roles from its figures.  Telling
 * a configuration not handed out, or twice, is an error.  A blind strategy ignores diag. */
rt_status strategy_tell(strategy *st, size_t idx, rt_status status, double time_ms,
                        const diagnosis *diag, rt_error *err);

/* The lever the strategy follows from the best so far: the best's diagnosis' (its declared
 * roles), else one steer learned from the evaluations (which parameters move the counters and
 * compile facts of the best's limit); "" when it has none (every strategy but steer follows
 * only declared levers).  *learned: 1 when the lever came from the evidence. */
const char *strategy_best_lever(const strategy *st, int *learned);

/* Unique evaluations told so far (failures included). */
size_t strategy_evaluations(const strategy *st);
/* The best configuration told so far and its time; returns 0 when none succeeded yet. */
int strategy_best(const strategy *st, size_t *idx, double *time_ms);

#endif
