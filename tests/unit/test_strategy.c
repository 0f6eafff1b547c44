/* test_strategy.c — every strategy behind ask/tell: repeatable per seed, never hands a
 * configuration out twice, honours budgets in evaluations and (on a fake clock) seconds; brute
 * force finds the optimum; lever moves the parameter the diagnosis names first; a prior's
 * configurations come first. */
/* stages: search */
#include <math.h>
#include <stdint.h>

#include "search/strategy.h"
#include "test.h"

/* A synthetic GEMM-like space: BLOCK_M, BLOCK_N in {16..256}, SPLIT in {1,2,4}, valid when the
 * tile holds at most 128x128 elements; one in seven configurations fails to compile. */
static const long long blocks[] = {16, 32, 64, 128, 256};
static const long long splits[] = {1, 2, 4};

static space *make_space(void) {
  space *s = space_new();
  rt_error err = {0};
  CHECK_INT(space_add_param(s, "BLOCK_M", 5, blocks, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "BLOCK_N", 5, blocks, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "SPLIT", 3, splits, NULL, &err), RT_OK);
  for (uint16_t m = 0; m < 5; m++)
    for (uint16_t n = 0; n < 5; n++)
      for (uint16_t k = 0; k < 3; k++) {
        if (blocks[m] * blocks[n] > 128 * 128) continue;
        uint16_t cfg[3] = {m, n, k};
        CHECK_INT(space_add_config(s, cfg, &err), RT_OK);
      }
  CHECK_INT(space_finish(s, &err), RT_OK);
  return s;
}

/* Time of a configuration: best at BLOCK_M=128, BLOCK_N=64, SPLIT=2 (memory-bound when the
 * tile is small); configurations numbered 7, 14, ... fail. */
static int fails(size_t idx) { return idx % 7 == 6; }

static double time_of(const space *s, size_t idx) {
  double m = (double)space_value(s, idx, 0), n = (double)space_value(s, idx, 1);
  double k = (double)space_value(s, idx, 2);
  return 1.0 + fabs(log2(m / 128)) * 0.7 + fabs(log2(n / 64)) * 0.5 + fabs(log2(k / 2)) * 0.3;
}

static size_t run(const space *s, const char *name, uint64_t seed, long max_evals, size_t *seq,
                  size_t cap) {
  strategy_options o = {.name = name, .seed = seed, .max_evals = max_evals};
  strategy *st = NULL;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  if (!st) return 0;
  size_t n = 0, idx;
  while (strategy_ask(st, &idx, 1) == 1) {
    if (n < cap) seq[n] = idx;
    n++;
    rt_status status = fails(idx) ? RT_ERR_COMPILE : RT_OK;
    CHECK_INT(strategy_tell(st, idx, status, time_of(s, idx), NULL, &err), RT_OK);
  }
  CHECK_INT(strategy_evaluations(st), n);
  strategy_free(st);
  return n;
}

static void check_every_strategy(const space *s) {
  size_t n = space_size(s);
  size_t a[256], b[256];
  for (const char *const *name = strategy_names(); *name; name++) {
    if (strategy_flags(*name) & STRATEGY_PREDICTED) continue; /* needs predictions */
    /* the whole space, each configuration exactly once */
    size_t got = run(s, *name, 1, 0, a, 256);
    CHECK_INT(got, n);
    char seen[256] = {0};
    for (size_t i = 0; i < got && i < 256; i++) {
      CHECK(a[i] < n && !seen[a[i]]);
      if (a[i] < n) seen[a[i]] = 1;
    }
    /* same seed, same run */
    CHECK_INT(run(s, *name, 42, 0, b, 256), n);
    size_t c[256];
    run(s, *name, 42, 0, c, 256);
    CHECK(memcmp(b, c, n * sizeof *b) == 0);
    /* the evaluation budget */
    CHECK_INT(run(s, *name, 3, 7, a, 256), 7);
  }
  /* without diagnoses (a replayed foreign kernel) lever falls back to bayes, choice for choice */
  run(s, "lever", 7, 0, a, 256);
  run(s, "bayes", 7, 0, b, 256);
  CHECK(memcmp(a, b, n * sizeof *a) == 0);
  /* random depends on its seed */
  run(s, "random", 1, 0, a, 256);
  run(s, "random", 2, 0, b, 256);
  CHECK(memcmp(a, b, n * sizeof *a) != 0);
}

static void check_brute_force(const space *s) {
  strategy_options o = {.name = "brute_force"};
  strategy *st;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  size_t idx[8], k, expect = 0, best = 0;
  double tbest = INFINITY;
  while ((k = strategy_ask(st, idx, 8)) > 0) { /* brute force hands out batches */
    for (size_t i = 0; i < k; i++) {
      CHECK_INT(idx[i], expect++);
      int f = fails(idx[i]);
      double t = time_of(s, idx[i]);
      if (!f && t < tbest) tbest = t, best = idx[i];
      CHECK_INT(strategy_tell(st, idx[i], f ? RT_ERR_LAUNCH : RT_OK, t, NULL, &err), RT_OK);
    }
  }
  size_t got;
  double tgot;
  CHECK(strategy_best(st, &got, &tgot));
  CHECK_INT(got, best);
  CHECK_NEAR(tgot, tbest, 0);
  char text[128];
  space_format_config(s, got, text, sizeof text);
  CHECK_STR(text, "BLOCK_M=128,BLOCK_N=64,SPLIT=2");
  strategy_free(st);
}

static double fake_now;
static double fake_clock(void *ctx) {
  (void)ctx;
  return fake_now;
}

static void check_seconds_budget(const space *s) {
  for (const char *const *name = strategy_names(); *name; name++) {
    if (strategy_flags(*name) & STRATEGY_PREDICTED) continue; /* needs predictions */
    fake_now = 100;
    strategy_options o = {.name = *name, .seed = 5, .max_seconds = 10, .clock = fake_clock};
    strategy *st;
    rt_error err = {0};
    CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
    size_t idx, n = 0;
    while (strategy_ask(st, &idx, 1) == 1) {
      fake_now += 3; /* each evaluation takes 3 s: asks at 0, 3, 6, 9 s */
      CHECK_INT(strategy_tell(st, idx, RT_OK, time_of(s, idx), NULL, &err), RT_OK);
      n++;
    }
    CHECK_INT(n, 4);
    strategy_free(st);
  }
}

static void check_errors(const space *s) {
  strategy *st = NULL;
  rt_error err = {0};
  strategy_options o = {.name = "no_such"};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "no_such");
  CHECK_CONTAINS(err.text, "lever");
  o.name = "model"; /* needs predictions */
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_ERR_INVALID);
  o.name = "random";
  o.max_evals = -1;
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_ERR_INVALID);
  o.max_evals = 0;
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  size_t idx;
  CHECK_INT(strategy_ask(st, &idx, 1), 1);
  CHECK_INT(strategy_tell(st, (idx + 1) % space_size(s), RT_OK, 1.0, NULL, &err), RT_ERR_INVALID);
  CHECK_INT(strategy_tell(st, idx, RT_OK, -1.0, NULL, &err), RT_ERR_INVALID); /* no time */
  CHECK_INT(strategy_tell(st, idx, RT_OK, 2.0, NULL, &err), RT_OK);
  CHECK_INT(strategy_tell(st, idx, RT_OK, 2.0, NULL, &err), RT_ERR_INVALID); /* twice */
  CHECK_INT(strategy_tell(st, 100000, RT_OK, 2.0, NULL, &err), RT_ERR_INVALID);
  strategy_free(st);
  /* exactly one strategy is the default, and it is the one strategy_default names */
  int defaults = 0;
  for (const char *const *n = strategy_names(); *n; n++)
    if (strategy_flags(*n) & STRATEGY_DEFAULT) {
      defaults++;
      CHECK_STR(*n, strategy_default());
    }
  CHECK_INT(defaults, 1);
  CHECK_INT(strategy_flags(strategy_default()) & (STRATEGY_KEEPS_ORDER | STRATEGY_PREDICTED), 0);
}

static void check_lever(const space *s) {
  /* the first configuration is a random start; its diagnosis says memory-bound, lever
   * BLOCK_N+: the next one asked must be the same configuration with BLOCK_N one step up */
  for (uint64_t seed = 0; seed < 20; seed++) {
    strategy_options o = {.name = "lever", .seed = seed};
    strategy *st;
    rt_error err = {0};
    CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
    size_t first, next;
    CHECK_INT(strategy_ask(st, &first, 1), 1);
    diagnosis d = {0};
    snprintf(d.limit, sizeof d.limit, "memory");
    snprintf(d.lever, sizeof d.lever, "BLOCK_N+,BLOCK_M+");
    CHECK_INT(strategy_tell(st, first, RT_OK, time_of(s, first), &d, &err), RT_OK);
    CHECK_INT(strategy_ask(st, &next, 1), 1);
    const uint16_t *a = space_config(s, first), *b = space_config(s, next);
    uint16_t want[3] = {a[0], (uint16_t)(a[1] + 1), a[2]};
    long up = space_index(s, want);
    if (up >= 0) {
      CHECK_INT(next, up); /* BLOCK_N first, as the lever names it first */
    } else {
      /* BLOCK_N cannot grow here: BLOCK_M+ is the next named move when valid */
      uint16_t want2[3] = {(uint16_t)(a[0] + 1), a[1], a[2]};
      long up2 = space_index(s, want2);
      if (up2 >= 0)
        CHECK_INT(next, up2);
      else
        CHECK(b != NULL); /* no lever move applies: the local search's choice */
    }
    strategy_free(st);
  }
  /* a lever naming nothing in the space (a foreign kernel) falls back without harm */
  strategy_options o = {.name = "lever", .seed = 9};
  strategy *st;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  diagnosis d = {0};
  snprintf(d.lever, sizeof d.lever, "WARPS+,STAGES-");
  size_t idx, n = 0;
  while (strategy_ask(st, &idx, 1) == 1) {
    CHECK_INT(strategy_tell(st, idx, RT_OK, time_of(s, idx), &d, &err), RT_OK);
    n++;
  }
  CHECK_INT(n, space_size(s));
  strategy_free(st);
}

static double predict_true(void *ctx, size_t idx) { return time_of(ctx, idx); }

/* Trust: a prior whose seeds lead gets a turn after every STRATEGY_PRIOR_EVERY of the search's
 * own past its opening seeds (each told faster than the last, and than all of the search's
 * own); a prior the search's own results beat gets no turn after its first seed (when the
 * opening spaces its seeds) nor after its opening; one whose later seed brings nothing
 * better stops there.  On a 400-configuration space without failures; seed times are the
 * test's, not the space's. */
/* The prior's first entry past the opening seeds that got[0..upto) does not hold. */
static size_t next_prior(const size_t *prior, const size_t *got, size_t upto) {
  for (size_t i = STRATEGY_PRIOR_FIRST; i < STRATEGY_PRIOR_MAX; i++) {
    int seen = 0;
    for (size_t k = 0; k < upto; k++) seen |= got[k] == prior[i];
    if (!seen) return prior[i];
  }
  return (size_t)-1;
}

/* The ask (0-based) at which the prior's i-th seed comes while its seeds lead: the opening ones
 * with STRATEGY_PRIOR_GAP of the search's own between them, then one after every
 * STRATEGY_PRIOR_EVERY of the search's own. */
static size_t seed_ask(size_t i) {
  const size_t first = STRATEGY_PRIOR_FIRST, gap = STRATEGY_PRIOR_GAP;
  if (i < first) return i * (gap + 1);
  return (first - 1) * (gap + 1) + (i - first + 1) * (STRATEGY_PRIOR_EVERY + 1);
}

static void check_trust(void) {
  space *s = space_new();
  rt_error err = {0};
  long long v[20];
  for (int i = 0; i < 20; i++) v[i] = i + 1;
  CHECK_INT(space_add_param(s, "A", 20, v, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "B", 20, v, NULL, &err), RT_OK);
  for (uint16_t a = 0; a < 20; a++)
    for (uint16_t b = 0; b < 20; b++) {
      uint16_t cfg[2] = {a, b};
      CHECK_INT(space_add_config(s, cfg, &err), RT_OK);
    }
  CHECK_INT(space_finish(s, &err), RT_OK);
  size_t prior[STRATEGY_PRIOR_MAX];
  for (size_t i = 0; i < STRATEGY_PRIOR_MAX; i++) prior[i] = 7 + 23 * i; /* spread over the space */
  const size_t first = STRATEGY_PRIOR_FIRST;
  const size_t t1 = seed_ask(first), t2 = seed_ask(first + 1), asks = t2 + 2;
  CHECK(asks < 400);
  const char *names[] = {"bayes", "random", "ils"};
  /* mode 0: the seeds lead and each is faster than the last; 1: the search's own are faster;
   * 2: the seeds lead but the first extended one is slower than the opening ones */
  for (int mode = 0; mode < 3; mode++)
    for (size_t n = 0; n < sizeof names / sizeof *names; n++) {
      strategy_options o = {
          .name = names[n], .seed = 3, .prior = prior, .nprior = STRATEGY_PRIOR_MAX};
      strategy *st;
      CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
      size_t got[400], k = 0, idx, seeds = 0;
      while (k < asks && strategy_ask(st, &idx, 1) == 1) {
        /* the prior's turns come at these asks (an entry the search's own picks took is the
         * search's, told as its own); once the search's own lead (mode 1), only the first seed
         * and those opening before any result of its own */
        int opening = 0;
        for (size_t i = 0; i < first; i++)
          opening |= k == seed_ask(i) && (mode != 1 || i == 0 || STRATEGY_PRIOR_GAP == 0);
        int seed = opening || (mode != 1 && (k == t1 || k == t2));
        got[k++] = idx;
        double t = 10.0 + (double)(k % 5); /* the search's own */
        if (seed) {
          seeds++;
          t = mode == 1 ? 100.0 : mode == 2 && seeds == first + 1 ? 9.0 : 5.0 / (double)seeds;
        }
        CHECK_INT(strategy_tell(st, idx, RT_OK, t, NULL, &err), RT_OK);
      }
      CHECK_INT(k, asks);
      for (size_t i = 0; i < first; i++)
        if (mode != 1 || i == 0 || STRATEGY_PRIOR_GAP == 0)
          CHECK_INT(got[seed_ask(i)], prior[i]);
        else
          CHECK(got[seed_ask(i)] != prior[i]); /* the search's own led: no second seed */
      /* the prior's turns after the opening: one after every STRATEGY_PRIOR_EVERY of the
       * search's own (its picks may have taken a prior entry already: the turn takes the next) */
      size_t n1 = next_prior(prior, got, t1), n2 = next_prior(prior, got, t2);
      if (mode == 0) {
        CHECK_INT(got[t1], n1);
        CHECK_INT(got[t2], n2);
      } else if (mode == 1) {
        CHECK(got[t1] != n1);
        CHECK(got[t2] != n2);
      } else {
        CHECK_INT(got[t1], n1); /* it led: a turn; it stalled: none after */
        CHECK(got[t2] != n2);
      }
      strategy_free(st);
    }
  space_free(s);
}

/* A prior's first STRATEGY_PRIOR_FIRST configurations come first (repeats and all), for every
 * strategy that takes one; then each strategy goes on as usual and still covers the space. */
static void check_prior(const space *s) {
  size_t n = space_size(s), best = 0;
  for (size_t i = 1; i < n; i++)
    if (time_of(s, i) < time_of(s, best)) best = i;
  /* a prior that names the optimum first (so its seeds lead throughout), then a slow one, with
   * repeats */
  size_t slow = best == 0 ? 1 : 0;
  size_t prior[] = {best, best, slow, slow, 3, 4, 5};
  rt_error err = {0};
  for (const char *const *name = strategy_names(); *name; name++) {
    if (strategy_flags(*name) & STRATEGY_PREDICTED) continue; /* needs predictions */
    strategy_options o = {.name = *name, .seed = 5, .prior = prior, .nprior = 7};
    strategy *st;
    CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
    size_t got[256], k = 0, idx;
    while (strategy_ask(st, &idx, 1) == 1) {
      if (k < 256) got[k++] = idx;
      CHECK_INT(strategy_tell(st, idx, RT_OK, time_of(s, idx), NULL, &err), RT_OK);
    }
    CHECK_INT(k, n);
    if (strategy_flags(*name) & STRATEGY_KEEPS_ORDER) {
      CHECK_INT(got[0], 0); /* its own order */
    } else {
      /* the opening seeds: the prior's first STRATEGY_PRIOR_FIRST distinct entries, with
       * STRATEGY_PRIOR_GAP of the strategy's own between them */
      size_t distinct[] = {best, slow, 3, 4, 5};
      CHECK(STRATEGY_PRIOR_FIRST <= 5);
      for (size_t i = 0; i < STRATEGY_PRIOR_FIRST; i++) CHECK_INT(got[seed_ask(i)], distinct[i]);
    }
    strategy_free(st);
  }
  /* ils climbs from the prior's best: its next point is a neighbour of it */
  size_t p2[] = {best};
  strategy_options o = {.name = "ils", .seed = 1, .prior = p2, .nprior = 1};
  strategy *st;
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  size_t idx, nb[32];
  CHECK_INT(strategy_ask(st, &idx, 1), 1);
  CHECK_INT(idx, best);
  CHECK_INT(strategy_tell(st, idx, RT_OK, time_of(s, idx), NULL, &err), RT_OK);
  CHECK_INT(strategy_ask(st, &idx, 1), 1);
  size_t nn = space_neighbours(s, best, nb, 32);
  int near = 0;
  for (size_t i = 0; i < nn && i < 32; i++) near |= nb[i] == idx;
  CHECK(near);
  strategy_free(st);
  /* bad priors */
  size_t out_of_range[] = {n};
  o = (strategy_options){.name = "bayes", .prior = out_of_range, .nprior = 1};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "prior entry 0");
  o = (strategy_options){.name = "bayes", .prior = NULL, .nprior = 2};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_ERR_INVALID);
}

static void check_model(const space *s) {
  strategy_options o = {.name = "model", .predict = predict_true, .predict_ctx = (void *)s};
  strategy *st;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  size_t idx;
  CHECK_INT(strategy_ask(st, &idx, 1), 1);
  char text[128];
  space_format_config(s, idx, text, sizeof text);
  CHECK_STR(text, "BLOCK_M=128,BLOCK_N=64,SPLIT=2"); /* the predicted best comes first */
  strategy_free(st);
}

TEST_CASE(strategies) {
  space *s = make_space();
  CHECK(space_size(s) > 40);
  check_every_strategy(s);
  check_brute_force(s);
  check_seconds_budget(s);
  check_errors(s);
  check_lever(s);
  check_model(s);
  check_prior(s);
  check_trust();
  space_free(s);
}

/* What a strategy is, its table entry's flags, and the lists a user reads, made from the table:
 * every name once, in strategy_names()'s order, less the ones a flag leaves out. */
TEST_CASE(traits) {
  CHECK(strategy_flags("brute_force") & STRATEGY_EXHAUSTIVE);
  CHECK(strategy_flags("brute_force") & STRATEGY_KEEPS_ORDER);
  CHECK(strategy_flags("model") & STRATEGY_PREDICTED);
  CHECK(strategy_flags("model") & STRATEGY_KEEPS_ORDER);
  CHECK_INT(strategy_flags("bayes") & (STRATEGY_KEEPS_ORDER | STRATEGY_EXHAUSTIVE), 0);
  CHECK_INT(strategy_flags("no_such"), 0);
  CHECK_INT(strategy_flags(NULL), strategy_flags(strategy_default()));
  int flags[] = {0, STRATEGY_PREDICTED, STRATEGY_EXHAUSTIVE | STRATEGY_PREDICTED};
  for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
    char list[512], want[512] = "";
    for (const char *const *n = strategy_names(); *n; n++)
      if (!(strategy_flags(*n) & flags[f]))
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", *want ? ", " : "", *n);
    CHECK_STR(strategy_list(flags[f], list, sizeof list), want);
  }
  char list[512], small[8];
  CHECK_INT(strlen(strategy_list(0, small, sizeof small)), sizeof small - 1); /* cut short */
  space *s = make_space();
  strategy *st = NULL;
  rt_error err = {0};
  strategy_options o = {.name = "no_such"};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_ERR_INVALID);
  char want[600];
  snprintf(want, sizeof want, "unknown strategy 'no_such'; the strategies are %s",
           strategy_list(0, list, sizeof list));
  CHECK_STR(err.text, want);
  space_free(s);
}

TEST_LIST(TEST_ENTRY(strategies), TEST_ENTRY(traits))
