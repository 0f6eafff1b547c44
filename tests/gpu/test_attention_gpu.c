/* test_attention_gpu.c (GPU) — the attention family's templates measured and verified against
 * attn_reference on the shapes of issues 17 and 18: one token (1x1x1x64), an S that is not a
 * multiple of any tile (2x8x129x128), grouped heads under the causal mask
 * (1x32:8x4096x128:causal), SQ < SKV (4x16x512:2048x64), head dim 256 (2x8x512x256), and the
 * decode shapes (ragged lengths 5, 1000 and 777; paged with 16-token pages; four queries with
 * the causal mask).  Every template the family has for the shape runs a few configurations;
 * none may be wrong, and each shape needs a verified winner.  Skips (77) without a GPU. */
/* stages: tune */
#include "test.h"
#include "driver/cuda_driver.h"
#include "tuner/tune.h"

static void check(const char *shape, const char *args, const char *dtype) {
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = "attention";
  o.shape = shape;
  o.dtype = dtype;
  o.problem_args = args;
  o.device = "cuda";
  o.budget = 5;
  o.strategy = "random";
  o.worker_exe = getenv("ROOFTUNE_BIN");
  o.worker_argv = TEST_WORKER_ARGV;
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "attention %s %s: %s\n", shape, dtype, err.text);
    return;
  }
  int wrong = 0;
  for (size_t i = 0; i < rep.nresults; i++) {
    const candidate_result *r = &rep.results[i];
    if (r->status == RT_ERR_WRONG_RESULT) {
      wrong++;
      fprintf(stderr, "WRONG %s %s: %s\n", r->template_name, r->config, r->detail);
    }
  }
  CHECK_INT(wrong, 0);
  CHECK(rep.have_best);
  if (rep.have_best)
    printf("attention %s %s: best %s %s %.4f ms, verify error %.2g (%zu evaluated, %zu failed)\n",
           shape, dtype, rep.best.template_name, rep.best.config, rep.best.time_ms,
           rep.best.verify_error, rep.evaluated, rep.failed);
  tune_report_free(&rep);
}

TEST_CASE(templates_verified) {
  rt_error err = {0};
  int n = 0;
  if (cuda_driver_load(&err) != RT_OK || cuda_gpu_count(&n, &err) != RT_OK || n == 0) {
    test_skip(err.text[0] ? err.text : "no CUDA GPU");
  }
  if (!getenv("ROOFTUNE_BIN")) test_skip("ROOFTUNE_BIN is not set (run through ctest)");
  check("1x1x1x64", NULL, "bf16");
  check("2x8x129x128", NULL, "f16");
  check("1x32:8x4096x128:causal", NULL, "bf16");
  check("4x16x512:2048x64", NULL, "bf16");
  check("2x8x512x256", NULL, "bf16");
  check("1x1x1:1x64", NULL, "f16");
  check("3x8:1x1:1000x128", "5,1000,777", "bf16");
  check("64x32:8x1:8192x128:paged16", NULL, "bf16");
  check("8x32:8x4:4096x128:causal", NULL, "bf16");
}

TEST_LIST(TEST_ENTRY(templates_verified))
