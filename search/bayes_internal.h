/* bayes_internal.h — the Gaussian-process search bayes.c implements and steer.c builds on: its
 * state, how it is set up, and the hook through which steer takes the exploitation steps.  Not
 * for use outside search/. */
#ifndef ROOFTUNE_BAYES_INTERNAL_H
#define ROOFTUNE_BAYES_INTERNAL_H

#include "search/strategy_internal.h"

/* One exploitation step as the hook sees it: the candidates of this step with their predicted
 * means, of which the first nneigh are the base's unseen neighbours (the first nmoves of those
 * its one-parameter moves) and bred children, the rest a uniform sample. */
typedef struct bo_step {
  const strategy_rank_key *rank; /* rank[c]: candidate c's mean (key) and position in cand (idx) */
  const size_t *cand;            /* candidate configurations */
  size_t nneigh;                 /* neighbours and children: rank[c].idx < nneigh */
  size_t nmoves;                 /* one-parameter moves of base: rank[c].idx < nmoves */
  long base;                     /* whose neighbours they are (the best with unseen ones), -1 */
} bo_step;

/* The steered search's hooks (steer.c): exploit returns the configuration to evaluate, or -1 for
 * bayes' own choice (the lowest mean among neighbours and children); told sees every result;
 * state (malloc'ed) is theirs, and bo_free frees it. */
typedef struct bo_hooks {
  long (*exploit)(strategy *st, void *state, const bo_step *step);
  void (*told)(strategy *st, void *state, size_t idx, double t);
  void *state;
} bo_hooks;

/* How the surrogate sees a configuration. */
typedef struct bo_setup {
  int categorical; /* 1: a parameter of 3 or 4 values 0, 1, 2 (, 3) names modes (a method, a
                      variant), not magnitudes: one input per value instead of a position */
  int features;    /* 1: the caller's features (strategy_options.features) are inputs too */
  int predict;     /* 1: where the features are known only once tried (no survey), the features
                      and the counted work of the diagnoses (log FLOPs, log DRAM bytes), each
                      predicted by its law for the configurations not tried yet (law_internal.h),
                      are inputs while the law holds; a strategy told neither (blind, no counters,
                      no facts) searches exactly as without */
  bo_hooks hooks;  /* exploit NULL: bayes' exploitation */
} bo_setup;

/* 1 when parameter sp looks like a choice of modes: 3 or 4 values that are 0, 1, 2 (, 3). */
int bo_is_mode(const space_param *sp);

/* Sets st->impl up for the search with setup; bo_next, bo_told and bo_free run it. */
rt_status bo_init(strategy *st, const bo_setup *setup, rt_error *err);
long bo_next(strategy *st);
void bo_told(strategy *st, size_t idx, double t);
void bo_free(strategy *st);

#endif
