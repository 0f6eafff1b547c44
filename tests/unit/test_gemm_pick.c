/* test_gemm_pick.c — the configurations the GPU benchmark measures per template (gh_pick_for in
 * bench/gemm_harness.h): the model's fastest first, in its order, then a spread over the space,
 * all distinct and inside it; without a model GPU only the spread. */
/* stages: tune */
#include "../../bench/gemm_harness.h"
#include "test.h"

TEST_CASE(pick_order) {
  char path[1200];
  snprintf(path, sizeof path, "%s/templates/gemm/gemm_wgmma.json", test_source_dir());
  manifest *m = NULL;
  rt_error err = {0};
  CHECK_INT(manifest_load(path, &m, &err), RT_OK);
  problem p;
  rt_vars env;
  rt_vars_clear(&env);
  space *sp = NULL;
  const gpu_spec *gpu = gpu_spec_find("h200");
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "4096x4096x4096:nt", "bf16", NULL, &p, &err),
            RT_OK);
  CHECK_INT(problem_env(&gemm_family, &p, arch_spec_find("sm_90a"), gpu, &env, NULL), RT_OK);
  CHECK_INT(manifest_build_space(m, &env, &sp, &err), RT_OK);
  if (!sp) return;
  const size_t size = space_size(sp);
  const double min_bytes = gemm_family.min_bytes(&gemm_family, &p);
  double best = HUGE_VAL;
  for (size_t i = 0; i < size; i++)
    best = fmin(best, tune_predict_config(m, sp, i, &env, gpu, "bf16", min_bytes));
  CHECK(isfinite(best));

  size_t idx[8];
  int n = gh_pick_for(gpu, m, sp, &env, &p, 8, idx);
  CHECK_INT(n, 8);
  double prev = 0;
  for (int i = 0; i < n; i++) {
    CHECK(idx[i] < size);
    for (int j = 0; j < i; j++) CHECK(idx[i] != idx[j]);
    if (i < 4) { /* the model's four fastest, fastest first */
      double t = tune_predict_config(m, sp, idx[i], &env, gpu, "bf16", min_bytes);
      CHECK(t >= prev);
      if (i == 0) CHECK_NEAR(t, best, 1e-12);
      prev = t;
    }
  }
  CHECK_INT(gh_pick_for(NULL, m, sp, &env, &p, 8, idx), 8);
  CHECK_INT(idx[0], 0); /* the spread starts at the first configuration */
  CHECK_INT(idx[7], size - 1);
  space_free(sp);
  manifest_free(m);
}

TEST_LIST(TEST_ENTRY(pick_order))
