/* strategy.c — the ask/tell core every strategy shares, and brute_force and random. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/strategy_internal.h"
#include "core/util.h"

static const strategy_kind *const strategy_kinds[] = {
    &strategy_kind_brute_force, &strategy_kind_random,  &strategy_kind_ils,
    &strategy_kind_annealing,   &strategy_kind_genetic, &strategy_kind_lever,
    &strategy_kind_bayes,       &strategy_kind_steer,   &strategy_kind_steer_turns,
    &strategy_kind_model};
#define STRATEGY_NKINDS (sizeof strategy_kinds / sizeof strategy_kinds[0])

const char *const *strategy_names(void) {
  static const char *names[STRATEGY_NKINDS + 1];
  for (size_t i = 0; i < STRATEGY_NKINDS; i++) names[i] = strategy_kinds[i]->name;
  names[STRATEGY_NKINDS] = NULL;
  return names;
}

static const strategy_kind *strategy_kind_named(const char *name) {
  if (!name) name = strategy_default();
  for (size_t i = 0; i < STRATEGY_NKINDS; i++)
    if (strcmp(strategy_kinds[i]->name, name) == 0) return strategy_kinds[i];
  return NULL;
}

int strategy_flags(const char *name) {
  const strategy_kind *k = strategy_kind_named(name);
  return k ? k->flags : 0;
}

const char *strategy_list(int without, char *buf, size_t size) {
  size_t n = 0;
  if (size) buf[0] = '\0';
  for (size_t i = 0; i < STRATEGY_NKINDS && n < size; i++) {
    if (strategy_kinds[i]->flags & without) continue;
    int w = snprintf(buf + n, size - n, "%s%s", n ? ", " : "", strategy_kinds[i]->name);
    if (w < 0) break;
    n += (size_t)w;
  }
  return buf;
}

/* The kind flagged STRATEGY_DEFAULT in its table entry (why that one: at its entry). */
const char *strategy_default(void) {
  for (size_t i = 0; i < STRATEGY_NKINDS; i++)
    if (strategy_kinds[i]->flags & STRATEGY_DEFAULT) return strategy_kinds[i]->name;
  return "bayes";
}

static double strategy_monotonic(void *ctx) {
  (void)ctx;
  return rt_now_s();
}

static double strategy_now(const strategy *st) { return st->opt.clock(st->opt.clock_ctx); }

/* ---- the generator: xoshiro256**, seeded by splitmix64 ---- */

static uint64_t strategy_splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t strategy_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t strategy_rand(strategy *st) {
  uint64_t *s = st->rng;
  uint64_t r = strategy_rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = strategy_rotl(s[3], 45);
  return r;
}

size_t strategy_rand_below(strategy *st, size_t n) {
  /* Lemire's multiply-shift with rejection: unbiased */
  uint64_t x = strategy_rand(st);
  __uint128_t m = (__uint128_t)x * n;
  uint64_t l = (uint64_t)m;
  if (l < n) {
    uint64_t t = -(uint64_t)n % n;
    while (l < t) {
      x = strategy_rand(st);
      m = (__uint128_t)x * n;
      l = (uint64_t)m;
    }
  }
  return (size_t)(m >> 64);
}

double strategy_rand_unit(strategy *st) { return (double)(strategy_rand(st) >> 11) * 0x1.0p-53; }

void strategy_shuffle(strategy *st, size_t *a, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = strategy_rand_below(st, i);
    size_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
  }
}

long strategy_random_unseen(strategy *st) {
  /* A lazily drawn permutation (Fisher-Yates one step at a time), skipping the configurations
   * handed out by other means: uniform over the unseen, each visited once overall. */
  while (st->perm_pos < st->n) {
    size_t j = st->perm_pos + strategy_rand_below(st, st->n - st->perm_pos);
    size_t t = st->perm[j];
    st->perm[j] = st->perm[st->perm_pos];
    st->perm[st->perm_pos++] = t;
    if (st->state[t] == ST_UNSEEN) return (long)t;
  }
  return -1;
}

/* ---- neighbourhoods ---- */

size_t strategy_moves_cap(const strategy *st) {
  size_t c = 0;
  for (int p = 0; p < st->np; p++) c += (size_t)space_param_at(st->sp, p)->count - 1;
  return c;
}

size_t strategy_moves(const strategy *st, size_t idx, int steps, size_t *out, size_t cap) {
  uint16_t *cfg = st->cfg;
  memcpy(cfg, space_config(st->sp, idx), (size_t)st->np * sizeof *cfg);
  size_t k = 0;
  for (int p = 0; p < st->np; p++) {
    int count = space_param_at(st->sp, p)->count;
    int orig = cfg[p];
    int reach = steps > 0 ? steps : count;
    for (int d = 1; d <= reach; d++)
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        int v = orig + sgn * d;
        if (v < 0 || v >= count) continue;
        cfg[p] = (uint16_t)v;
        long j = space_index(st->sp, cfg);
        if (j >= 0 && k < cap) out[k++] = (size_t)j;
      }
    cfg[p] = (uint16_t)orig;
  }
  return k;
}

/* ---- a predicted order ---- */

int strategy_rank_cmp(const void *a, const void *b) {
  const strategy_rank_key *x = a, *y = b;
  if (x->key < y->key) return -1;
  if (x->key > y->key) return 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

rt_status strategy_rank_predicted(const space *s, strategy_predict_fn predict, void *ctx,
                                  size_t **order, rt_error *err) {
  size_t n = space_size(s);
  *order = malloc((n ? n : 1) * sizeof **order);
  strategy_rank_key *keys = malloc((n ? n : 1) * sizeof *keys);
  if (!*order || !keys) {
    free(*order);
    *order = NULL;
    free(keys);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    double k = predict(ctx, i);
    keys[i].key = isnan(k) ? INFINITY : k;
    keys[i].idx = i;
  }
  qsort(keys, n, sizeof *keys, strategy_rank_cmp);
  for (size_t i = 0; i < n; i++) (*order)[i] = keys[i].idx;
  free(keys);
  return RT_OK;
}

/* ---- the core ---- */

/* What the strategy may know of the caller's features (strategy_options.features): every row
 * when surveyed, else a copy to reveal a row from as its configuration is handed out; none when
 * blind.  st->opt.features is cleared: st->feat is what the strategies read.  0: out of memory. */
static int strategy_features_init(strategy *st) {
  const double *src = st->opt.features;
  size_t cells = st->n * (size_t)st->opt.nfeatures;
  st->opt.features = NULL;
  if (!src || st->opt.blind || cells == 0) {
    st->opt.nfeatures = 0;
    return 1;
  }
  st->nfeat = st->opt.nfeatures;
  st->feat = malloc(cells * sizeof *st->feat);
  if (!st->feat) return 0;
  if (st->opt.survey) {
    memcpy(st->feat, src, cells * sizeof *st->feat);
    return 1;
  }
  st->feat_src = malloc(cells * sizeof *st->feat_src);
  if (!st->feat_src) return 0;
  memcpy(st->feat_src, src, cells * sizeof *st->feat_src);
  for (size_t i = 0; i < cells; i++) st->feat[i] = NAN;
  return 1;
}

/* Configuration j handed out: its features become known (as compiling it tells them). */
static void strategy_reveal(strategy *st, size_t j) {
  if (!st->feat_src) return;
  size_t w = (size_t)st->nfeat;
  memcpy(st->feat + j * w, st->feat_src + j * w, w * sizeof *st->feat);
}

rt_status strategy_new(const space *s, const strategy_options *opt, strategy **out, rt_error *err) {
  *out = NULL;
  const char *name = opt && opt->name ? opt->name : strategy_default();
  const strategy_kind *kind = strategy_kind_named(name);
  if (!kind) {
    char list[256];
    return rt_error_set(err, RT_ERR_INVALID, "unknown strategy '%s'; the strategies are %s", name,
                        strategy_list(0, list, sizeof list));
  }
  if (!s || space_size(s) == 0)
    return rt_error_set(err, RT_ERR_SPACE_EMPTY, "the space has no configuration to search");
  if (opt && (opt->max_evals < 0 || opt->max_seconds < 0 || isnan(opt->max_seconds)))
    return rt_error_set(err, RT_ERR_INVALID, "budgets must be >= 0 (0: no limit)");
  if (opt && (opt->nfeatures < 0 || (opt->nfeatures > 0 && !opt->features) ||
              (opt->features && opt->nfeatures == 0)))
    return rt_error_set(err, RT_ERR_INVALID, "features: %d per configuration given as %s",
                        opt->nfeatures, opt->features ? "a table" : "NULL");
  if (opt && opt->nprior && !opt->prior)
    return rt_error_set(err, RT_ERR_INVALID, "a prior of %zu configurations given as NULL",
                        opt->nprior);
  for (size_t i = 0; opt && i < opt->nprior; i++)
    if (opt->prior[i] >= space_size(s))
      return rt_error_set(err, RT_ERR_INVALID,
                          "prior entry %zu is configuration %zu; the space has %zu", i,
                          opt->prior[i], space_size(s));
  strategy *st = calloc(1, sizeof *st);
  if (!st) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  if (opt) st->opt = *opt;
  st->opt.name = kind->name;
  if (!st->opt.clock) st->opt.clock = strategy_monotonic;
  st->sp = s;
  st->n = space_size(s);
  st->np = space_nparams(s);
  st->kind = kind;
  st->best = -1;
  st->best_time = INFINITY;
  uint64_t x = st->opt.seed;
  for (int i = 0; i < 4; i++) st->rng[i] = strategy_splitmix(&x);
  st->state = calloc(st->n, 1);
  st->time = malloc(st->n * sizeof *st->time);
  st->perm = malloc(st->n * sizeof *st->perm);
  st->cfg = malloc((size_t)st->np * sizeof *st->cfg);
  /* the prior's first entries, without repeats; a strategy that keeps its order takes none */
  size_t want = kind->flags & STRATEGY_KEEPS_ORDER ? 0 : st->opt.nprior;
  if (want > STRATEGY_PRIOR_MAX) want = STRATEGY_PRIOR_MAX;
  st->prior = malloc((want ? want : 1) * sizeof *st->prior);
  st->trust.seeds = malloc((want ? want : 1) * sizeof *st->trust.seeds);
  st->trust.seed_best = st->trust.own_best = INFINITY;
  for (size_t i = 0; st->prior && st->state && i < st->opt.nprior && st->nprior < want; i++) {
    size_t c = st->opt.prior[i];
    if (st->state[c]) continue;
    st->state[c] = ST_PENDING; /* a mark until the loop ends */
    st->prior[st->nprior++] = c;
  }
  for (size_t i = 0; st->state && i < st->nprior; i++) st->state[st->prior[i]] = ST_UNSEEN;
  st->opt.prior = NULL; /* the copy above is what is used */
  st->opt.nprior = 0;
  int feat_ok = strategy_features_init(st);
  if (!st->state || !st->time || !st->perm || !st->cfg || !st->prior || !st->trust.seeds ||
      !feat_ok) {
    strategy_free(st);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory for a space of %zu configurations",
                        space_size(s));
  }
  for (size_t i = 0; i < st->n; i++) {
    st->time[i] = NAN;
    st->perm[i] = i;
  }
  if (kind->init) {
    rt_status rc = kind->init(st, err);
    if (rc) {
      strategy_free(st);
      return rc;
    }
  }
  st->t0 = strategy_now(st);
  *out = st;
  return RT_OK;
}

void strategy_free(strategy *st) {
  if (!st) return;
  if (st->kind && st->kind->free) st->kind->free(st);
  free(st->state);
  free(st->time);
  free(st->perm);
  free(st->cfg);
  free(st->prior);
  free(st->trust.seeds);
  free(st->feat);
  free(st->feat_src);
  free(st);
}

const char *strategy_name(const strategy *st) { return st->kind->name; }

/* ---- the prior and how far it is trusted ---- */

int strategy_is_seed(const strategy *st, size_t idx) {
  for (size_t k = 0; k < st->trust.nseeds; k++)
    if (st->trust.seeds[k] == idx) return 1;
  return 0;
}

/* The prior's next configuration when this ask is its turn, else -1 (the search's own turn).
 * Its turns (strategy.h, "How far a prior is trusted"): the first seed; the rest of the opening
 * STRATEGY_PRIOR_GAP of the search's own apart, then one after every STRATEGY_PRIOR_EVERY of the
 * search's own, each only while the seeds lead, so never once the search's own results have
 * beaten them, nor after a seed that stalled (strategy_prior_told). */
static long strategy_prior_turn(strategy *st) {
  strategy_trust *t = &st->trust;
  int open = t->nseeds < STRATEGY_PRIOR_FIRST;
  /* the seeds lead while faster than everything the search chose itself; in the opening also
   * while the search has no success of its own to hold them against */
  int leads = !t->lost && (t->seed_best < t->own_best || (open && isinf(t->own_best)));
  size_t gap = open ? STRATEGY_PRIOR_GAP : STRATEGY_PRIOR_EVERY;
  int turn = t->nseeds == 0 || (leads && t->own >= gap);
  while (turn && st->prior_pos < st->nprior) {
    size_t j = st->prior[st->prior_pos++];
    if (st->state[j] != ST_UNSEEN) continue;
    t->seeds[t->nseeds++] = j;
    t->own = 0; /* the search's own turns count from this seed */
    return (long)j;
  }
  t->own++;
  return -1;
}

/* What a result says of the prior: a seed's time, or the search's own.  The prior's turns end
 * when the search's own beats every seed, or when a seed past the opening ones brings nothing
 * better than the seeds before it (the ordering has stopped paying). */
static void strategy_prior_told(strategy *st, size_t idx, double t) {
  strategy_trust *tr = &st->trust;
  if (tr->nseeds == 0) return;
  size_t k = 0;
  while (k < tr->nseeds && tr->seeds[k] != idx) k++;
  if (k < tr->nseeds) {
    if (k >= STRATEGY_PRIOR_FIRST && !(t < tr->seed_best)) tr->lost = 1;
    if (t < tr->seed_best) tr->seed_best = t;
  } else if (t < tr->own_best) {
    tr->own_best = t; /* once below every seed, the prior never leads again: no seed comes */
  }
}

size_t strategy_ask(strategy *st, size_t *out, size_t cap) {
  size_t k = 0;
  while (k < cap) {
    if (st->opt.max_evals > 0 && st->handed >= (size_t)st->opt.max_evals) break;
    if (st->handed >= st->n) break;
    if (st->opt.max_seconds > 0 && strategy_now(st) - st->t0 >= st->opt.max_seconds) break;
    long j = strategy_prior_turn(st);
    if (j < 0 && st->kind->next) j = st->kind->next(st);
    if (j < 0 || st->state[j] != ST_UNSEEN) j = strategy_random_unseen(st);
    if (j < 0) break;
    st->state[j] = ST_PENDING;
    strategy_reveal(st, (size_t)j);
    st->handed++;
    out[k++] = (size_t)j;
    if (!(st->kind->flags & STRATEGY_BATCH)) break;
  }
  return k;
}

rt_status strategy_tell(strategy *st, size_t idx, rt_status status, double time_ms,
                        const diagnosis *diag, rt_error *err) {
  if (idx >= st->n || st->state[idx] != ST_PENDING)
    return rt_error_set(err, RT_ERR_INVALID,
                        "configuration %zu was not handed out by ask, or was told already", idx);
  double t = INFINITY;
  if (status == RT_OK) {
    if (!(time_ms > 0) || !isfinite(time_ms))
      return rt_error_set(err, RT_ERR_INVALID,
                          "configuration %zu: a successful result needs a time > 0, not %g", idx,
                          time_ms);
    t = time_ms;
  }
  if (st->opt.blind) diag = NULL;
  st->state[idx] = ST_TOLD;
  st->time[idx] = t;
  st->evals++;
  strategy_prior_told(st, idx, t);
  if (t < st->best_time) {
    st->best = (long)idx;
    st->best_time = t;
    snprintf(st->lever, sizeof st->lever, "%s", diag ? diag->lever : "");
    st->learned[0] = '\0'; /* the strategy learns the new best's, if it does */
    st->best_changed = 1;
  }
  st->told = diag;
  if (st->kind->told) st->kind->told(st, idx, t);
  st->told = NULL;
  return RT_OK;
}

const char *strategy_best_lever(const strategy *st, int *learned) {
  int l = !st->lever[0] && st->learned[0];
  if (learned) *learned = l;
  return l ? st->learned : st->lever;
}

size_t strategy_evaluations(const strategy *st) { return st->evals; }

int strategy_best(const strategy *st, size_t *idx, double *time_ms) {
  if (st->best < 0) return 0;
  if (idx) *idx = (size_t)st->best;
  if (time_ms) *time_ms = st->best_time;
  return 1;
}

/* ---- brute_force: the space in order ---- */

typedef struct {
  size_t next; /* next configuration number */
} strategy_brute;

static rt_status strategy_brute_init(strategy *st, rt_error *err) {
  st->impl = calloc(1, sizeof(strategy_brute));
  return st->impl ? RT_OK : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
}

static long strategy_brute_next(strategy *st) {
  strategy_brute *b = st->impl;
  while (b->next < st->n && st->state[b->next] != ST_UNSEEN) b->next++;
  return b->next < st->n ? (long)b->next++ : -1;
}

static void strategy_impl_free(strategy *st) { free(st->impl); }

const strategy_kind strategy_kind_brute_force = {
    "brute_force",
    STRATEGY_BATCH | STRATEGY_KEEPS_ORDER | STRATEGY_EXHAUSTIVE,
    strategy_brute_init,
    strategy_brute_next,
    NULL,
    strategy_impl_free};

/* ---- random: uniform without replacement (the core's fallback is exactly that) ---- */

const strategy_kind strategy_kind_random = {"random", STRATEGY_BATCH, NULL, NULL, NULL, NULL};
