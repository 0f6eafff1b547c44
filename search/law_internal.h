/* law_internal.h — what compiling and running a configuration tells (its compile facts, the work
 * its counters count), predicted for the configurations not tried yet from those that were, for
 * the steered search's surrogate (bayes.c, steer.c).  Not for use outside search/.
 *
 * Why a law and not the surrogate itself: a kernel's compile facts and counted work are products
 * and ratios of its parameters' values (threads = block x by block y; shared memory ~ the tile
 * with its halo; DRAM bytes ~ 1 / the reuse a tile gives; registers ~ the outputs per thread),
 * so their logarithms are close to linear in the logarithms of the values, a law a dozen results
 * pin down and that holds far from them, where the time's Gaussian process (smooth over the
 * parameters' positions, every one alike) knows only its neighbours.  Each signal's law is fitted
 * by least squares, one term per parameter (log2 of its value where every value is positive, else
 * its position; one term per value but the first for a choice of modes) and an intercept, and is
 * trusted only while it predicts the results it was fitted on held out one at a time (its
 * leave-one-out R^2, from the hat matrix, at least LAW_MIN_R2): a fact that follows no such law
 * (an occupancy with its cliffs) is left out rather than guessed.
 */
#ifndef ROOFTUNE_LAW_INTERNAL_H
#define ROOFTUNE_LAW_INTERNAL_H

#include "search/strategy_internal.h"

enum { LAW_MAX_TERMS = 32 };
/* A law is an input of the surrogate only at or above this leave-one-out R^2: 0.9 leaves a
 * tenth of the signal's spread unexplained, less than a parameter's own step moves a fact. */
#define LAW_MIN_R2 0.9

typedef struct fact_law {
  int nz;    /* terms per configuration, the intercept first; 0: the space has too many */
  double *z; /* n x nz: every configuration's terms */
} fact_law;

/* The terms of every configuration of st's space.  Out of memory is RT_ERR_NOMEM; a space with
 * more than LAW_MAX_TERMS terms gets nz 0 (no law: law_fit fails). */
rt_status law_init(const strategy *st, fact_law *law, rt_error *err);
void law_free(fact_law *law);
/* Fits y[i] (NaN: unknown, skipped) of configurations obs[0..m) into beta (nz values) and
 * returns the fit's leave-one-out R^2, or -INFINITY when fewer than nz + 2 values are known or
 * the values do not vary. */
double law_fit(const fact_law *law, const size_t *obs, const double *y, size_t m, double *beta);
/* The law's value at configuration idx. */
double law_predict(const fact_law *law, size_t idx, const double *beta);

#endif
