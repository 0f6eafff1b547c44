/* strategy_internal.h — what the strategy files share: the strategy record, the vtable each
 * strategy fills in, the generator, and neighbourhood helpers.  Not for use outside search/. */
#ifndef ROOFTUNE_STRATEGY_INTERNAL_H
#define ROOFTUNE_STRATEGY_INTERNAL_H

#include "search/strategy.h"

enum { ST_UNSEEN = 0, ST_PENDING = 1, ST_TOLD = 2 };

typedef struct strategy_kind {
  const char *name; /* "ils" */
  int flags;        /* what it is: STRATEGY_BATCH, STRATEGY_KEEPS_ORDER ... (strategy.h); 0: none */
  /* Sets st->impl up; may be NULL. */
  rt_status (*init)(strategy *st, rt_error *err);
  /* An unseen configuration to evaluate next, or -1 for "nothing in mind" (the core then hands
   * out a random unseen one). */
  long (*next)(strategy *st);
  /* A result told: t is the time, INFINITY for a failure. */
  void (*told)(strategy *st, size_t idx, double t);
  void (*free)(strategy *st);
} strategy_kind;

/* What the search knows of its prior's worth (strategy.c, strategy_prior_turn): the seeds it
 * handed out, the best time among them and among its own choices (the prior has turns while the
 * seeds' is the lower), and whether a later seed stalled (then it has none). */
typedef struct strategy_trust {
  size_t *seeds;    /* configurations handed out as the prior's, in order (owned) */
  size_t nseeds;    /* entries in seeds */
  size_t own;       /* configurations the search chose itself since the last seed */
  double seed_best; /* best time told for a seed (INFINITY: none succeeded yet) */
  double own_best;  /* best time told for the search's own */
  int lost;         /* 1: a seed past the opening brought nothing better: no more turns */
} strategy_trust;

/* 1 when configuration idx was handed out as one of the prior's seeds: strategies that keep
 * seeds out of their model (bayes) ask this. */
int strategy_is_seed(const strategy *st, size_t idx);

struct strategy {
  const space *sp;           /* the space walked */
  size_t n;                  /* its size */
  int np;                    /* its parameters */
  const strategy_kind *kind; /* which strategy */
  strategy_options opt;      /* as given (name replaced by the kind's) */
  uint64_t rng[4];           /* xoshiro256** state */
  uint8_t *state;            /* per configuration: ST_UNSEEN / ST_PENDING / ST_TOLD */
  double *time;              /* per configuration: told time, INFINITY for failures */
  size_t handed;             /* configurations handed out */
  size_t evals;              /* results told */
  double t0;                 /* clock at strategy_new */
  long best;                 /* best configuration told, -1 before the first success */
  double best_time;          /* its time */
  char lever[160];           /* the best's lever, "" when it had none */
  char learned[160];         /* a lever the strategy learned for the best from the evidence
                                (steer.c), "" none: strategy_best_lever's answer when lever is "" */
  const diagnosis *told;     /* while kind->told runs: the result's diagnosis, NULL none/blind */
  double *feat;              /* what the strategy knows of each configuration's features, n x
                                nfeat: a row once the configuration is handed out (every row
                                when surveyed), NaN before; NULL when none or blind */
  double *feat_src;          /* the caller's features (a copy), revealed row by row; NULL when
                                surveyed, none or blind */
  int nfeat;                 /* features per configuration, 0: none */
  int best_changed;          /* set when best moves; strategies clear it */
  size_t *perm;              /* random permutation of the unseen, for random picks */
  size_t perm_pos;           /* entries of perm already drawn */
  uint16_t *cfg;             /* scratch configuration, np entries */
  size_t *prior;             /* the prior's configurations, most promising first (owned) */
  size_t nprior;             /* entries in prior (at most STRATEGY_PRIOR_MAX) */
  size_t prior_pos;          /* entries handed out or skipped */
  strategy_trust trust;      /* how far the prior is trusted (strategy_prior_turn) */
  void *impl;                /* the strategy's own state */
};

uint64_t strategy_rand(strategy *st);
/* Uniform in [0, n), n > 0. */
size_t strategy_rand_below(strategy *st, size_t n);
/* Uniform in [0, 1). */
double strategy_rand_unit(strategy *st);
/* A uniformly random unseen configuration, or -1 when none is left. */
long strategy_random_unseen(strategy *st);
/* A configuration (idx: its number, or a position in a candidate list) with a key to sort by
 * (a predicted time or mean); strategy_rank_cmp orders by key, ties by idx, for qsort. */
typedef struct strategy_rank_key {
  double key;
  size_t idx;
} strategy_rank_key;
int strategy_rank_cmp(const void *a, const void *b);

/* Shuffles a[0..n). */
void strategy_shuffle(strategy *st, size_t *a, size_t n);

/* Configurations that differ from idx in one parameter by at most `steps` domain positions
 * (steps <= 0: any position); writes up to cap into out, returns how many it wrote.  The
 * order is by parameter, then by distance. */
size_t strategy_moves(const strategy *st, size_t idx, int steps, size_t *out, size_t cap);
/* The total number of one-parameter changes (an upper bound for strategy_moves). */
size_t strategy_moves_cap(const strategy *st);

/* Local search: first improvement over a neighbourhood of near moves (one step of one
 * parameter) before far ones (any value of one parameter), kicks from the best local optimum,
 * random restarts after LS_PATIENCE kicks without a new best. */
typedef struct strategy_ls {
  long cur;            /* the point being improved, -1 when a start is awaited */
  long awaiting;       /* a start or kick point handed out and not yet told, or -1 */
  size_t *cand;        /* cur's neighbourhood in the order it is tried */
  size_t ncand;        /* entries */
  size_t pos;          /* next entry to try */
  int fails;           /* kicks since the best improved */
  double best_at_kick; /* best time when the last kick started */
} strategy_ls;

rt_status strategy_ls_init(strategy *st, strategy_ls *ls, rt_error *err);
void strategy_ls_free(strategy_ls *ls);
long strategy_ls_next(strategy *st, strategy_ls *ls);
void strategy_ls_told(strategy *st, strategy_ls *ls, size_t idx, double t);
/* Makes idx (told, finite time) the current point. */
void strategy_ls_move(strategy *st, strategy_ls *ls, size_t idx);

extern const strategy_kind strategy_kind_brute_force;
extern const strategy_kind strategy_kind_random;
extern const strategy_kind strategy_kind_ils;
extern const strategy_kind strategy_kind_annealing;
extern const strategy_kind strategy_kind_genetic;
extern const strategy_kind strategy_kind_lever;
extern const strategy_kind strategy_kind_model;
extern const strategy_kind strategy_kind_bayes;
extern const strategy_kind strategy_kind_steer;
extern const strategy_kind strategy_kind_steer_turns;

#endif
