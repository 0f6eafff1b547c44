/* test_declared_gpu.c (GPU) — families declared in JSON, measured: the shipped softmax (f32,
 * f16, bf16) and transpose (f32, bf16) families are tuned on the cuda device, every candidate
 * verified against the family's reference template before it is timed, and none may be wrong;
 * the fixture family "twice" (tests/data/families/gpu) has a template whose BUG parameter
 * leaves the last element unwritten (BUG=1) or scales by 2.002 (BUG=2): the check must catch
 * both in f32, and the bf16 bound (1e-2) must let BUG=2 pass while still catching BUG=1; the
 * fixture family "affine" (y = a*x + b, its f32 scalars written 0.25 and "-1.5e-3 + 1/N") has a
 * reference that writes those constants itself, so its candidates pass only when the float
 * scalars reach the kernel as written.  Skips (77) without a GPU. */
/* stages: tune */
#include "test.h"
#include "driver/cuda_driver.h"
#include "tuner/tune.h"

static tune_report run(const char *target, const char *shape, const char *dtype, const char *config,
                       const char *path, long budget, rt_status *st) {
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = target;
  o.shape = shape;
  o.dtype = dtype;
  o.device = "cuda";
  o.config = config;
  o.template_path = path;
  o.budget = budget;
  o.strategy = "random";
  o.worker_exe = getenv("ROOFTUNE_BIN");
  o.worker_argv = TEST_WORKER_ARGV;
  tune_report rep;
  rt_error err = {0};
  *st = tune_run(&o, &rep, &err);
  if (*st) fprintf(stderr, "%s %s %s: %s\n", target, shape, dtype, err.text);
  return rep;
}

static void shipped(const char *family, const char *shape, const char *dtype) {
  rt_status st;
  tune_report rep = run(family, shape, dtype, NULL, NULL, 6, &st);
  CHECK_INT(st, RT_OK);
  if (st) return;
  int wrong = 0;
  for (size_t i = 0; i < rep.nresults; i++) wrong += rep.results[i].status == RT_ERR_WRONG_RESULT;
  CHECK_INT(wrong, 0);
  CHECK(rep.have_best);
  if (rep.have_best)
    printf("%s %s %s: best %s %s %.4f ms (verify error %.2g), %zu evaluated\n", family, shape,
           dtype, rep.best.template_name, rep.best.config, rep.best.time_ms, rep.best.verify_error,
           rep.evaluated);
  tune_report_free(&rep);
}

static void fixture(const char *path, const char *dtype, int bug, rt_status want) {
  char cfg[64];
  snprintf(cfg, sizeof cfg, "T=256,BUG=%d", bug);
  rt_status st;
  tune_report rep = run("twice", "100000", dtype, cfg, path, 1, &st);
  CHECK_INT(st, RT_OK);
  if (st) return;
  CHECK_INT(rep.nresults, 1);
  if (rep.nresults == 1) {
    CHECK_INT(rep.results[0].status, want);
    printf("twice %s BUG=%d: %s (%s)\n", dtype, bug, rt_status_name(rep.results[0].status),
           rep.results[0].detail);
  }
  tune_report_free(&rep);
}

TEST_CASE(declared_families) {
  rt_error err = {0};
  int n = 0;
  if (cuda_driver_load(&err) != RT_OK || cuda_gpu_count(&n, &err) != RT_OK || n == 0) {
    test_skip(err.text[0] ? err.text : "no CUDA GPU");
  }
  if (!getenv("ROOFTUNE_BIN")) test_skip("ROOFTUNE_BIN is not set (run through ctest)");
  shipped("softmax", "4096x1000", "f32");
  shipped("softmax", "1000x4096", "f16");
  shipped("softmax", "513x8192", "bf16");
  shipped("transpose", "4000x3000", "f32");
  shipped("transpose", "1024x4096", "bf16");
  char path[1200];
  snprintf(path, sizeof path, "%s/tests/data/families/gpu:%s/templates", test_source_dir(),
           test_source_dir());
  fixture(path, "f32", 0, RT_OK);
  fixture(path, "f32", 1, RT_ERR_WRONG_RESULT);
  fixture(path, "f32", 2, RT_ERR_WRONG_RESULT);
  fixture(path, "bf16", 1, RT_ERR_WRONG_RESULT);
  fixture(path, "bf16", 2, RT_OK);
  rt_status st;
  tune_report rep = run("affine", "4096", "f32", NULL, path, 2, &st);
  CHECK_INT(st, RT_OK);
  if (!st) {
    for (size_t i = 0; i < rep.nresults; i++) {
      CHECK_INT(rep.results[i].status, RT_OK);
      printf("affine 4096 f32 %s: %s (%s)\n", rep.results[i].config,
             rt_status_name(rep.results[i].status), rep.results[i].detail);
    }
    CHECK(rep.nresults >= 1);
    tune_report_free(&rep);
  }
}

TEST_LIST(TEST_ENTRY(declared_families))
