/* test_replay.c — replay scoring on a small recorded space: evaluations to target, misses at
 * twice the budget, random search's exact expectation; a recording with counters replays with
 * its diagnoses and compile facts. */
/* stages: search */
#include "search/replay.h"
#include "search/strategy.h"
#include "test.h"
#include "model/features.h"

/* tests/data/ktfiles/small.json: ten configurations, seven valid, for every case */
static ktfile *small;

static void setup(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/ktfiles/small.json", test_source_dir());
  rt_error err = {0};
  CHECK_INT(ktfile_load(path, &small, &err), RT_OK);
  if (!small) exit(test_done());
}

static void teardown(void) { ktfile_free(small); }

TEST_CASE(brute_force) {
  ktfile *kf = small;
  rt_error err = {0};
  replay_stats rs;
  /* brute force walks the file's order: 1.04 ms (within 5 % of 1.0) is the 4th record */
  CHECK_INT(replay_run(kf, "brute_force", 3, 100, 0.05, NULL, &rs, &err), RT_OK);
  CHECK_STR(rs.strategy, "brute_force");
  CHECK_INT(rs.valid, 7);
  CHECK_INT(rs.configs, 10);
  CHECK_INT(rs.within, 2);
  CHECK_NEAR(rs.random_expected, 8.0 / 3.0, 1e-12);
  CHECK_NEAR(rs.median, 4, 0);
  CHECK_NEAR(rs.p90, 4, 0);
  CHECK_NEAR(rs.reached, 1, 0);
  CHECK_INT(rs.evals[0], 4);
  replay_stats_free(&rs);
  /* the exact optimum is the 5th */
  CHECK_INT(replay_run(kf, "brute_force", 1, 100, 0, NULL, &rs, &err), RT_OK);
  CHECK_NEAR(rs.median, 5, 0);
  CHECK_NEAR(rs.random_expected, 8.0 / 2.0, 1e-12);
  replay_stats_free(&rs);
  /* a budget of 2 misses: counted as 4 */
  CHECK_INT(replay_run(kf, "brute_force", 2, 2, 0.05, NULL, &rs, &err), RT_OK);
  CHECK_NEAR(rs.median, 4, 0);
  CHECK_NEAR(rs.reached, 0, 0);
  CHECK_INT(rs.evals[1], -1);
  replay_stats_free(&rs);
}

TEST_CASE(every_strategy) {
  ktfile *kf = small;
  rt_error err = {0};
  replay_stats rs;
  /* every strategy reaches the target on a 10-configuration space within 10 evaluations */
  for (const char *const *n = strategy_names(); *n; n++) {
    if (strcmp(*n, "model") == 0) continue;
    CHECK_INT(replay_run(kf, *n, 5, 10, 0.05, NULL, &rs, &err), RT_OK);
    CHECK_NEAR(rs.reached, 1, 0);
    CHECK(rs.median >= 1 && rs.median <= 10);
    replay_stats_free(&rs);
  }
}

TEST_CASE(default_strategy) {
  ktfile *kf = small;
  rt_error err = {0};
  replay_stats rs;
  /* the default strategy when none is named */
  CHECK_INT(replay_run(kf, NULL, 1, 10, 0.05, NULL, &rs, &err), RT_OK);
  CHECK_STR(rs.strategy, strategy_default());
  replay_stats_free(&rs);
  CHECK_INT(replay_run(kf, "nope", 1, 10, 0.05, NULL, &rs, &err), RT_ERR_INVALID);
  CHECK_INT(replay_run(kf, "random", 0, 10, 0.05, NULL, &rs, &err), RT_ERR_USAGE);
}

TEST_CASE(counters) {
  ktfile *kf = small;
  rt_error err = {0};
  replay_stats rs;
  char path[1024];
  /* a KTT recording with counters on a GPU of the spec table: every timed configuration is
   * told with its diagnosis and the strategy gets the compile facts; a file without counters
   * gives neither */
  CHECK_INT(replay_run(kf, "steer", 2, 10, 0.05, NULL, &rs, &err), RT_OK);
  CHECK_INT(rs.diagnosed, 0);
  CHECK_INT(rs.features, 0);
  CHECK_STR(rs.gpu, "");
  replay_stats_free(&rs);
  ktfile *kc = NULL;
  snprintf(path, sizeof path, "%s/tests/data/ktfiles/ktt_counters.json", test_source_dir());
  CHECK_INT(ktfile_load(path, &kc, &err), RT_OK);
  if (kc) {
    CHECK_INT(replay_run(kc, "steer", 3, 10, 0.05, NULL, &rs, &err), RT_OK);
    CHECK_INT(rs.diagnosed, 4);
    CHECK_INT(rs.features, FEATURE_COUNT);
    CHECK_STR(rs.gpu, "NVIDIA GeForce RTX 2080 Ti");
    CHECK_NEAR(rs.reached, 1, 0);
    replay_stats_free(&rs);
    ktfile_free(kc);
  }
}

TEST_CASE(percentiles) {
  double v[] = {5, 1, 4, 2, 3};
  CHECK_NEAR(replay_percentile(v, 5, 50), 3, 1e-12);
  CHECK_NEAR(replay_percentile(v, 5, 90), 4.6, 1e-12);
  double w[] = {1, 2};
  CHECK_NEAR(replay_percentile(w, 2, 50), 1.5, 1e-12);
}

/* Several priors: one is its own order (twice, the same); two go by the mean rank fraction, so a
 * configuration both rank high leads, and every configuration either ranks is in the order. */
TEST_CASE(priors_merged) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/ktfiles/prior_other_gpu.json", test_source_dir());
  rt_error err = {0};
  ktfile *other = NULL;
  CHECK_INT(ktfile_load(path, &other, &err), RT_OK);
  if (!other) return;
  const space *s = small->space;
  size_t *one = NULL, n1 = 0, *two = NULL, n2 = 0, *mix = NULL, nm = 0, *o2 = NULL, no2 = 0;
  CHECK_INT(ktfile_rank_in(other, s, &one, &n1, &err), RT_OK);
  const ktfile *same[2] = {other, other}, *both[2] = {other, small};
  CHECK_INT(replay_rank_priors(same, 2, s, &two, &n2, &err), RT_OK);
  CHECK_INT(n2, n1);
  for (size_t i = 0; i < n1 && i < n2; i++) CHECK_INT(two[i], one[i]);
  CHECK_INT(replay_rank_priors(both, 2, s, &mix, &nm, &err), RT_OK);
  CHECK_INT(ktfile_rank_in(small, s, &o2, &no2, &err), RT_OK);
  size_t ns = space_size(s);
  double *score = calloc(ns, sizeof *score);
  for (size_t i = 0; i < ns; i++) score[i] = 2;
  for (size_t r = 0; r < n1; r++) score[one[r]] += (double)r / (double)n1 - 1;
  for (size_t r = 0; r < no2; r++) score[o2[r]] += (double)r / (double)no2 - 1;
  size_t ranked = 0;
  for (size_t i = 0; i < ns; i++) ranked += score[i] < 2;
  CHECK_INT(nm, ranked);
  for (size_t i = 1; i < nm; i++) CHECK(score[mix[i - 1]] <= score[mix[i]]);
  free(score);
  free(one);
  free(two);
  free(mix);
  free(o2);
  ktfile_free(other);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(priors_merged), TEST_ENTRY(brute_force),
                  TEST_ENTRY(every_strategy), TEST_ENTRY(default_strategy), TEST_ENTRY(counters),
                  TEST_ENTRY(percentiles))
