/* test_steer.c — what the steered search does with what it is told, on synthetic spaces where
 * each piece of knowledge is what decides (deterministic per seed; evaluations are counted,
 * never timed):
 *   - features: the time depends only on a pre-run fact (an "occupancy" scrambled over the
 *     parameters), so told the fact of every configuration (a survey) steer needs far fewer
 *     evaluations than told nothing;
 *   - what a tune would know: without a survey a configuration's facts reach the strategy only
 *     once it has handed it out (facts changed where it never went change nothing), and blind
 *     withholds the facts and the diagnoses (the same run as one told neither), and steer told
 *     neither searches as bayes does where no parameter is a mode;
 *   - roles from evidence: a diagnosis without a lever (no role declared) and a figure that one
 *     parameter moves give a lever learned from the results, naming that parameter and the way
 *     that helps; a declared lever comes first, and blind learns nothing;
 *   - one parameter at a time (steer_turns), and modes as modes: pnpoly's shape (a parameter of 31 values that
 *     moves the time a little, two modes whose best pair holds only with the largest tiles),
 *     where bayes' exploitation spends its steps on the 31 values;
 *   - the lever: after the initial design the best's lever names the parameter and the way, and
 *     steer's first exploit step moves it that way; a lever whose moves keep losing stops being
 *     followed;
 *   - bad options are refused. */
/* stages: search */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy.h"
#include "test.h"

/* ---- a space where only a pre-run fact matters ---- */

enum { FA = 16, FB = 16 };

static space *make_grid(int na, int nb, const char *a, const char *b) {
  space *s = space_new();
  rt_error err = {0};
  long long va[64], vb[64];
  for (int i = 0; i < na; i++) va[i] = i;
  for (int i = 0; i < nb; i++) vb[i] = 1 + i; /* not mode-like: starts at 1 */
  CHECK_INT(space_add_param(s, a, na, va, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, b, nb, vb, NULL, &err), RT_OK);
  for (uint16_t i = 0; i < na; i++)
    for (uint16_t j = 0; j < nb; j++) {
      uint16_t cfg[2] = {i, j};
      CHECK_INT(space_add_config(s, cfg, &err), RT_OK);
    }
  CHECK_INT(space_finish(s, &err), RT_OK);
  return s;
}

/* A fact the parameters scramble (a hash), which alone sets the time. */
static double fact_of(const space *s, size_t idx) {
  uint64_t h = (uint64_t)space_value(s, idx, 0) * 0x9e3779b97f4a7c15ull ^
               (uint64_t)space_value(s, idx, 1) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return (double)(h % 1000) / 1000.0;
}

/* Evaluations until the optimum (time 1.0 within 1e-9), with or without the features (every
 * configuration's, as a survey gives them, when survey is set); blind: told only times.  When
 * handed is not NULL, each configuration handed out is marked there. */
static long until_best_as(const space *s, const char *name, uint64_t seed, const double *feat,
                          int survey, int blind, double (*time_fn)(const space *, size_t),
                          const char *lever, unsigned char *handed) {
  strategy_options o = {.name = name,
                        .seed = seed,
                        .features = feat,
                        .nfeatures = feat ? 1 : 0,
                        .survey = survey,
                        .blind = blind};
  strategy *st = NULL;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  if (!st) return -1;
  double best = INFINITY;
  for (size_t i = 0; i < space_size(s); i++) best = fmin(best, time_fn(s, i));
  size_t idx;
  long k = 0;
  diagnosis d;
  memset(&d, 0, sizeof d);
  snprintf(d.limit, sizeof d.limit, "memory");
  snprintf(d.lever, sizeof d.lever, "%s", lever ? lever : "");
  while (strategy_ask(st, &idx, 1) == 1) {
    k++;
    if (handed) handed[idx] = 1;
    double t = time_fn(s, idx);
    CHECK_INT(strategy_tell(st, idx, RT_OK, t, lever ? &d : NULL, &err), RT_OK);
    if (t <= best) break;
  }
  strategy_free(st);
  return k;
}

static long until_best(const space *s, const char *name, uint64_t seed, const double *feat,
                       double (*time_fn)(const space *, size_t), const char *lever) {
  return until_best_as(s, name, seed, feat, feat != NULL, 0, time_fn, lever, NULL);
}

static double time_by_fact(const space *s, size_t idx) { return 1.0 + 4.0 * fact_of(s, idx); }

static double median(long *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      long t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n % 2 ? (double)v[n / 2] : 0.5 * (double)(v[n / 2 - 1] + v[n / 2]);
}

TEST_CASE(features) {
  space *s = make_grid(FA, FB, "A", "B");
  size_t n = space_size(s);
  double *feat = malloc(n * sizeof *feat);
  for (size_t i = 0; i < n; i++) feat[i] = fact_of(s, i);
  long told[15], blind[15];
  for (int seed = 0; seed < 15; seed++) {
    told[seed] = until_best(s, "steer", (uint64_t)seed, feat, time_by_fact, NULL);
    blind[seed] = until_best(s, "steer", (uint64_t)seed, NULL, time_by_fact, NULL);
  }
  double mt = median(told, 15), mb = median(blind, 15);
  printf("features: steer told the fact needs %.0f evaluations, told nothing %.0f (of %zu)\n", mt,
         mb, n);
  CHECK(mt * 3 < mb);
  /* bayes ignores them: the same run with and without */
  CHECK_INT(until_best(s, "bayes", 3, feat, time_by_fact, NULL),
            until_best(s, "bayes", 3, NULL, time_by_fact, NULL));
  free(feat);
  space_free(s);
}

/* A tune compiles what it proposes: without a survey, facts of configurations the strategy never
 * handed out cannot change its run; with one they do (the check has teeth).  Blind: the run of
 * a strategy told nothing, whatever it is given. */
TEST_CASE(told_what_a_tune_knows) {
  space *s = make_grid(FA, FB, "A", "B");
  size_t n = space_size(s);
  double *feat = malloc(n * sizeof *feat), *other = malloc(n * sizeof *other);
  unsigned char *handed = calloc(n, 1);
  for (size_t i = 0; i < n; i++) feat[i] = fact_of(s, i);
  int differ = 0;
  for (int seed = 0; seed < 5; seed++) {
    memset(handed, 0, n);
    long k = until_best_as(s, "steer", (uint64_t)seed, feat, 0, 0, time_by_fact, NULL, handed);
    size_t unseen = 0;
    for (size_t i = 0; i < n; i++) {
      other[i] = handed[i] ? feat[i] : 1.0 - feat[i]; /* where it never went: the opposite */
      unseen += !handed[i];
    }
    CHECK(unseen > 0);
    CHECK_INT(until_best_as(s, "steer", (uint64_t)seed, other, 0, 0, time_by_fact, NULL, NULL), k);
    differ += until_best_as(s, "steer", (uint64_t)seed, other, 1, 0, time_by_fact, NULL, NULL) !=
              until_best_as(s, "steer", (uint64_t)seed, feat, 1, 0, time_by_fact, NULL, NULL);
    /* blind: told the facts ahead and a lever, it runs as told nothing */
    long none = until_best_as(s, "steer", (uint64_t)seed, NULL, 0, 0, time_by_fact, NULL, NULL);
    /* told nothing, on parameters that are no modes, steer's search is bayes' */
    CHECK_INT(until_best_as(s, "bayes", (uint64_t)seed, NULL, 0, 0, time_by_fact, NULL, NULL),
              none);
    CHECK_INT(until_best_as(s, "steer", (uint64_t)seed, feat, 1, 1, time_by_fact, "A+", NULL),
              none);
    differ +=
        until_best_as(s, "steer", (uint64_t)seed, feat, 1, 0, time_by_fact, "A+", NULL) != none;
  }
  CHECK(differ >= 5);
  free(handed);
  free(other);
  free(feat);
  space_free(s);
}

/* A trap: the corner A, B <= 2 is nearly as fast as the optimum (A = B = 12) and far from it. */
static double time_trap(const space *s, size_t idx) {
  double a = (double)space_value(s, idx, 0), b = (double)space_value(s, idx, 1);
  if (a <= 2 && b <= 3) return 1.02 + 0.001 * (a + b);
  return 1.0 + fabs(a - 12) / 16 + fabs(b - 12) / 16;
}

/* Evaluations until the optimum with the prior given (NULL: none). */
static long until_best_prior(const space *s, const char *name, uint64_t seed, const size_t *prior,
                             size_t nprior) {
  strategy_options o = {.name = name, .seed = seed, .prior = prior, .nprior = nprior};
  strategy *st = NULL;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  size_t idx;
  long k = 0;
  while (st && strategy_ask(st, &idx, 1) == 1) {
    k++;
    double t = time_trap(s, idx);
    CHECK_INT(strategy_tell(st, idx, RT_OK, t, NULL, &err), RT_OK);
    if (t <= 1.0) break;
  }
  strategy_free(st);
  return k;
}

/* A misleading prior (another GPU's best, in the trap here) costs its seeds and about nothing
 * more: bayes and steer try the seeds and keep them out of their model. */
TEST_CASE(misleading_prior) {
  space *s = make_grid(FA, FB, "A", "B");
  size_t trap[3];
  uint16_t c0[2] = {0, 0}, c1[2] = {1, 0}, c2[2] = {0, 1};
  trap[0] = (size_t)space_index(s, c0), trap[1] = (size_t)space_index(s, c1);
  trap[2] = (size_t)space_index(s, c2);
  static const char *const names[] = {"bayes", "steer"};
  for (int k = 0; k < 2; k++) {
    long cold = 0, warm = 0;
    for (uint64_t seed = 0; seed < 9; seed++) {
      cold += until_best_prior(s, names[k], seed, NULL, 0);
      warm += until_best_prior(s, names[k], seed, trap, 3);
    }
    printf("misleading prior: %s over 9 runs %ld evaluations, %ld cold\n", names[k], warm, cold);
    CHECK(warm <= cold + 3 * 9 + 9);
  }
  space_free(s);
}

/* ---- one parameter at a time ---- */

/* pnpoly's shape: W (31 block sizes) moves the time by a few per cent, irregularly; T (11 tile
 * sizes) matters most, larger is better; of the modes M (4) and U (3), M = 0 is best, and U = 0
 * only with the largest tiles (U = 2 is better below) */
static space *make_modes(void) {
  space *s = space_new();
  rt_error err = {0};
  long long w[31], m[4] = {0, 1, 2, 3}, t[11], u[3] = {0, 1, 2};
  for (int i = 0; i < 31; i++) w[i] = 32 * (i + 1);
  for (int i = 0; i < 11; i++) t[i] = 2 * i + (i == 0);
  CHECK_INT(space_add_param(s, "M", 4, m, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "W", 31, w, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "T", 11, t, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "U", 3, u, NULL, &err), RT_OK);
  for (uint16_t a = 0; a < 4; a++)
    for (uint16_t b = 0; b < 31; b++)
      for (uint16_t c = 0; c < 11; c++)
        for (uint16_t d = 0; d < 3; d++) {
          uint16_t cfg[4] = {a, b, c, d};
          CHECK_INT(space_add_config(s, cfg, &err), RT_OK);
        }
  CHECK_INT(space_finish(s, &err), RT_OK);
  return s;
}

static double time_modes(const space *s, size_t idx) {
  static const double mf[4] = {1.0, 1.7, 1.05, 1.05};
  int mode = (int)space_value(s, idx, 0), w = (int)space_value(s, idx, 1) / 32;
  int t = (int)space_value(s, idx, 2), u = (int)space_value(s, idx, 3);
  double tf = 1.0 + 2.5 / (1.0 + t);
  double uf = u == 0 ? (t >= 18 ? 1.0 : 1.25) : u == 1 ? 1.24 : 1.15 - 0.05 * (t >= 18);
  double wf = 1.0 + 0.04 * ((w * 7) % 5) / 5.0 + (w > 16 ? 0.1 : 0);
  return tf * mf[mode] * uf * wf;
}

/* The parameters the exploit steps move (from the best at that moment), over the first 8
 * exploit steps after the design: a bit per parameter (children count as none). */
static unsigned moved_params(const space *s, const char *name, uint64_t seed) {
  strategy_options o = {.name = name, .seed = seed};
  strategy *st = NULL;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  unsigned bits = 0;
  size_t idx;
  for (size_t k = 0; k < 26 && st && strategy_ask(st, &idx, 1) == 1; k++) {
    size_t b;
    if (k >= 10 && k % 2 == 1 && strategy_best(st, &b, NULL)) {
      int moved = -1, ndiff = 0;
      for (int p = 0; p < space_nparams(s); p++)
        if (space_value(s, idx, p) != space_value(s, b, p)) moved = p, ndiff++;
      if (ndiff == 1) bits |= 1u << moved;
    }
    CHECK_INT(strategy_tell(st, idx, RT_OK, time_modes(s, idx), NULL, &err), RT_OK);
  }
  strategy_free(st);
  return bits;
}

static int popcount(unsigned v) {
  int n = 0;
  for (; v; v &= v - 1) n++;
  return n;
}

TEST_CASE(turns) {
  space *s = make_modes();
  int steer = 0, bayes = 0;
  for (int seed = 0; seed < 10; seed++) {
    steer += popcount(moved_params(s, "steer_turns", (uint64_t)seed));
    bayes += popcount(moved_params(s, "bayes", (uint64_t)seed));
  }
  printf(
      "turns: over 10 runs the first 8 exploit steps moved %d parameters (steer_turns) and %d "
      "(bayes)\n",
      steer, bayes);
  CHECK(steer >= 3 * 10); /* at least 3 of the 4 parameters each run */
  CHECK(steer > bayes);
  space_free(s);
}

/* ---- the lever ---- */

static double time_by_b(const space *s, size_t idx) {
  /* B = 10 is best, A barely matters */
  return 1.0 + 0.5 * fabs((double)space_value(s, idx, 1) - 10) / FB +
         0.001 * (double)space_value(s, idx, 0);
}

TEST_CASE(lever) {
  space *s = make_grid(FA, FB, "A", "B");
  /* the lever names B+: every exploit step after the design (the odd results from the 11th
   * on) whose best can still move B up moves it up, and only B */
  strategy_options o = {.name = "steer", .seed = 4};
  strategy *st = NULL;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  diagnosis d;
  memset(&d, 0, sizeof d);
  snprintf(d.limit, sizeof d.limit, "memory");
  snprintf(d.lever, sizeof d.lever, "B+");
  size_t idx;
  int checked = 0, moved_up = 0;
  for (size_t k = 0; k < 40 && strategy_ask(st, &idx, 1) == 1; k++) {
    size_t b;
    if (!checked && k >= 10 && k % 2 == 1 && strategy_best(st, &b, NULL) &&
        space_value(s, b, 1) < 10) {
      checked++;
      moved_up += space_value(s, idx, 1) > space_value(s, b, 1) &&
                  space_value(s, idx, 0) == space_value(s, b, 0);
    }
    CHECK_INT(strategy_tell(st, idx, RT_OK, time_by_b(s, idx), &d, &err), RT_OK);
  }
  CHECK_INT(checked, 1);
  CHECK_INT(moved_up, 1);
  strategy_free(st);
  /* a lever that names the wrong way (B-) loses every time: after a few losses the exploit
   * steps go back to their turns, and the search still finds the best */
  long wrong[9], none[9];
  for (int seed = 0; seed < 9; seed++) {
    wrong[seed] = until_best(s, "steer", (uint64_t)seed, NULL, time_by_b, "B-");
    none[seed] = until_best(s, "steer", (uint64_t)seed, NULL, time_by_b, NULL);
  }
  double mw = median(wrong, 9), mn = median(none, 9);
  printf("lever: a wrong lever costs %.0f evaluations against %.0f without one\n", mw, mn);
  CHECK(mw <= 2 * mn + 4);
  space_free(s);
}

/* Memory-bound everywhere, no role declared: the intensity (reuse) rises with B, A does nothing
 * to it; the time falls with the intensity.  lever: the declared lever told, or "". */
static void learned_run(const char *lever, int blind, char *out, size_t size, int *learned) {
  space *s = make_grid(FA, FB, "A", "B");
  strategy_options o = {.name = "steer", .seed = 2, .blind = blind};
  strategy *st = NULL;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  size_t idx;
  for (int k = 0; k < 24 && st && strategy_ask(st, &idx, 1) == 1; k++) {
    diagnosis d;
    memset(&d, 0, sizeof d);
    snprintf(d.limit, sizeof d.limit, "memory");
    snprintf(d.lever, sizeof d.lever, "%s", lever);
    double b = (double)space_value(s, idx, 1), a = (double)space_value(s, idx, 0);
    d.intensity = 2.0 + b + 0.3 * fact_of(s, idx);
    d.bw_frac = 0.9;
    double t = 10.0 / d.intensity + 0.01 * fabs(a - 7);
    CHECK_INT(strategy_tell(st, idx, RT_OK, t, &d, &err), RT_OK);
  }
  snprintf(out, size, "%s", st ? strategy_best_lever(st, learned) : "");
  strategy_free(st);
  space_free(s);
}

TEST_CASE(learned_lever) {
  char lv[160];
  int learned = -1;
  learned_run("", 0, lv, sizeof lv, &learned);
  printf("learned lever: '%s'\n", lv);
  CHECK_INT(learned, 1);
  CHECK(strncmp(lv, "B+", 2) == 0);
  learned_run("A-", 0, lv, sizeof lv, &learned); /* declared: it comes first */
  CHECK_STR(lv, "A-");
  CHECK_INT(learned, 0);
  learned_run("", 1, lv, sizeof lv, &learned);
  CHECK_STR(lv, "");
}

TEST_CASE(options) {
  space *s = make_grid(4, 4, "A", "B");
  double f[16] = {0};
  strategy *st = NULL;
  rt_error err = {0};
  strategy_options o = {.name = "steer", .features = NULL, .nfeatures = 2};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "features");
  o = (strategy_options){.name = "steer", .features = f, .nfeatures = 0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_ERR_INVALID);
  o = (strategy_options){.name = "steer", .features = f, .nfeatures = -1};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_ERR_INVALID);
  /* unknown values (NaN) are fine */
  for (int i = 0; i < 16; i++) f[i] = i % 3 ? NAN : i;
  o = (strategy_options){.name = "steer", .features = f, .nfeatures = 1, .max_evals = 16};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  size_t idx, k = 0;
  while (st && strategy_ask(st, &idx, 1) == 1) {
    CHECK_INT(strategy_tell(st, idx, RT_OK, 1.0 + (double)idx, NULL, &err), RT_OK);
    k++;
  }
  CHECK_INT(k, 16);
  strategy_free(st);
  space_free(s);
}

TEST_LIST(TEST_ENTRY(features), TEST_ENTRY(told_what_a_tune_knows), TEST_ENTRY(misleading_prior),
          TEST_ENTRY(turns), TEST_ENTRY(lever), TEST_ENTRY(learned_lever), TEST_ENTRY(options))
