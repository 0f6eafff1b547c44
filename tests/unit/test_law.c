/* test_law.c — facts predicted by their laws (search/law.c) and what the steered search does
 * with them (deterministic per seed; evaluations are counted, never timed):
 *   - a fact that is a product of the parameters' values (threads = A x B) is fitted exactly and
 *     predicted where nothing was tried; a fact the parameters scramble fails the leave-one-out
 *     gate;
 *   - steer told each configuration's fact only once it proposed it (no survey), where the time
 *     follows that fact (a valley along A x B = 45, which a model smooth in each parameter's
 *     position sees only blurred), needs far fewer evaluations than blind;
 *   - told no facts, steer runs exactly as blind (the recordings without counters);
 *   - on the counter recording in ../shared (skipped without it): the levers are non-empty and
 *     the evaluations differ from --blind; on a recording without counters they are the same,
 *     seed by seed. */
/* stages: search */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/law_internal.h"
#include "search/replay.h"
#include "search/strategy.h"
#include "test.h"

enum { NA = 12, NB = 12 };

/* A x B, each 1..12. */
static const long long order_a[NA] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static const long long order_b[NB] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

static space *make_space(void) {
  space *s = space_new();
  rt_error err = {0};
  CHECK_INT(space_add_param(s, "A", NA, order_a, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "B", NB, order_b, NULL, &err), RT_OK);
  for (uint16_t i = 0; i < NA; i++)
    for (uint16_t j = 0; j < NB; j++) {
      uint16_t cfg[2] = {i, j};
      CHECK_INT(space_add_config(s, cfg, &err), RT_OK);
    }
  CHECK_INT(space_finish(s, &err), RT_OK);
  return s;
}

/* log2 of the threads, A x B: a law. */
static double threads_of(const space *s, size_t idx) {
  return log2((double)space_value(s, idx, 0) * (double)space_value(s, idx, 1));
}

/* A fact the values scramble (a hash): no law. */
static double scrambled_of(const space *s, size_t idx) {
  uint64_t h = (uint64_t)space_value(s, idx, 0) * 0x9e3779b97f4a7c15ull ^
               (uint64_t)space_value(s, idx, 1) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return (double)(h % 1000) / 1000.0;
}

/* The time follows the threads (fastest at 2^5.5 ~ 45 threads), and A a little. */
static double time_of(const space *s, size_t idx) {
  return 1.0 + fabs(threads_of(s, idx) - 5.5) + 0.01 * (double)space_value(s, idx, 0);
}

TEST_CASE(law_fit_and_gate) {
  space *s = make_space();
  strategy_options o = {.name = "random", .seed = 1};
  strategy *st = NULL;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  fact_law law;
  CHECK_INT(law_init(st, &law, &err), RT_OK);
  CHECK_INT(law.nz, 3); /* the intercept, A, B */
  size_t obs[20];
  double y[20], z[20], beta[LAW_MAX_TERMS];
  for (int i = 0; i < 20; i++) {
    obs[i] = (size_t)(i * 7 + 3) % space_size(s);
    y[i] = threads_of(s, obs[i]);
    z[i] = scrambled_of(s, obs[i]);
  }
  double r2 = law_fit(&law, obs, y, 20, beta);
  printf("law: threads R2 %.4f, ", r2);
  CHECK(r2 > 0.999);
  for (size_t i = 0; i < space_size(s); i++) /* everywhere, tried or not */
    CHECK(fabs(law_predict(&law, i, beta) - threads_of(s, i)) < 1e-3);
  double r2s = law_fit(&law, obs, z, 20, beta);
  printf("scrambled R2 %.4f\n", r2s);
  CHECK(r2s < LAW_MIN_R2);
  /* too few values known: no law */
  CHECK(law_fit(&law, obs, y, 4, beta) == -INFINITY);
  law_free(&law);
  strategy_free(st);
  space_free(s);
}

/* Evaluations until the optimum; feat: each configuration's facts (1 a row), revealed as the
 * strategy proposes them (no survey); with_diag: each result told with a diagnosis that carries
 * counted work (FLOPs and bytes) but no lever. */
static long until_best(const space *s, const char *name, uint64_t seed, const double *feat,
                       int blind, int with_diag) {
  strategy_options o = {
      .name = name, .seed = seed, .features = feat, .nfeatures = feat ? 1 : 0, .blind = blind};
  strategy *st = NULL;
  rt_error err = {0};
  CHECK_INT(strategy_new(s, &o, &st, &err), RT_OK);
  if (!st) return -1;
  double best = INFINITY;
  for (size_t i = 0; i < space_size(s); i++) best = fmin(best, time_of(s, i));
  size_t idx;
  long k = 0;
  while (strategy_ask(st, &idx, 1) == 1) {
    k++;
    double t = time_of(s, idx);
    diagnosis d;
    memset(&d, 0, sizeof d);
    snprintf(d.limit, sizeof d.limit, "memory");
    d.achieved_flops = 1e12 * (1 + scrambled_of(s, idx)) / (t * 1e-3);
    d.achieved_bw = 1e11 / (t * 1e-3);
    CHECK_INT(strategy_tell(st, idx, RT_OK, t, with_diag ? &d : NULL, &err), RT_OK);
    if (t <= best) break;
  }
  strategy_free(st);
  return k;
}

static double median(long *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      long t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n % 2 ? (double)v[n / 2] : 0.5 * (double)(v[n / 2 - 1] + v[n / 2]);
}

TEST_CASE(facts_by_law_steer) {
  space *s = make_space();
  size_t n = space_size(s);
  double *feat = malloc(n * sizeof *feat);
  for (size_t i = 0; i < n; i++) feat[i] = threads_of(s, i);
  long told[15], blind[15];
  int same = 0;
  for (int seed = 0; seed < 15; seed++) {
    told[seed] = until_best(s, "steer", (uint64_t)seed, feat, 0, 1);
    blind[seed] = until_best(s, "steer", (uint64_t)seed, feat, 1, 1);
    /* told no facts, only diagnoses: the run of blind, seed by seed */
    same += until_best(s, "steer", (uint64_t)seed, NULL, 0, 1) == blind[seed];
  }
  CHECK_INT(same, 15);
  double mt = median(told, 15), mb = median(blind, 15);
  printf(
      "facts by law: steer told the facts once proposed needs %.0f evaluations, blind %.0f "
      "(of %zu)\n",
      mt, mb, n);
  CHECK(mt * 1.5 < mb);
  free(feat);
  space_free(s);
}

/* The recordings in ../shared: with counters, the levers and the facts change the search; without,
 * steer is its blind self. */
TEST_CASE(recordings) {
  const char *dir = getenv("ROOFTUNE_SHARED_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/data/spaces/ktt_convolution_RTX_2080_Ti.json.gz",
           dir ? dir : "../shared");
  ktfile *kf = NULL;
  rt_error err = {0};
  if (ktfile_load(path, &kf, &err) != RT_OK) {
    test_skip(err.text); /* a clone without ../shared */
    return;
  }
  replay_stats a, b;
  replay_given seen = {0}, blind = {.blind = 1};
  CHECK_INT(replay_run_given(kf, "steer", 8, 1000, 0.05, NULL, 0, &seen, &a, &err), RT_OK);
  CHECK_INT(replay_run_given(kf, "steer", 8, 1000, 0.05, NULL, 0, &blind, &b, &err), RT_OK);
  CHECK(a.diagnosed > 0);
  CHECK(a.learned_steps > 0); /* no role is declared there: every lever is learned */
  CHECK_INT(b.lever_steps, 0);
  int differ = 0;
  for (int i = 0; i < 8; i++) differ += a.evals[i] != b.evals[i];
  printf(
      "recordings: KTT convolution, levers after %zu of %zu results, %d of 8 seeds differ from "
      "blind\n",
      a.lever_steps, a.steps, differ);
  CHECK(differ > 0);
  replay_stats_free(&a);
  replay_stats_free(&b);
  ktfile_free(kf);
  snprintf(path, sizeof path, "%s/data/spaces/convolution_A4000.json.gz", dir ? dir : "../shared");
  CHECK_INT(ktfile_load(path, &kf, &err), RT_OK);
  if (!kf) return;
  CHECK_INT(replay_run_given(kf, "steer", 8, 1000, 0.05, NULL, 0, &seen, &a, &err), RT_OK);
  CHECK_INT(replay_run_given(kf, "steer", 8, 1000, 0.05, NULL, 0, &blind, &b, &err), RT_OK);
  CHECK_INT(a.diagnosed, 0);
  for (int i = 0; i < 8; i++) CHECK_INT(a.evals[i], b.evals[i]);
  replay_stats_free(&a);
  replay_stats_free(&b);
  ktfile_free(kf);
}

TEST_LIST(TEST_ENTRY(law_fit_and_gate), TEST_ENTRY(facts_by_law_steer), TEST_ENTRY(recordings))
