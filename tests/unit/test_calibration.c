/* test_calibration.c — what counters leave behind for the model, without a GPU: a stored result
 * updated once its counters are read (db_run_update_result: every field, only this run's rows),
 * counters and the verdict surviving a read back and an export, calibrations stored per GPU and
 * template (replaced, refused when not positive, absent as "not found"), and the model device
 * scaling a template's modelled DRAM bytes by its calibration. */
/* stages: device */
#include "test.h"
#include "db_fixture.h"
#include "tuner/device/device.h"
#include "model/gpu_spec.h"

static void test_update(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200");
  db_run *run = NULL, *other = NULL;
  CHECK_INT(db_run_begin(d, &spec, &run, &err), RT_OK);
  CHECK_INT(db_run_template(run, "gemm_wgmma", "gemm", "s", "m", &err), RT_OK);
  candidate_result r = fx_result("gemm_wgmma", 128, 256, 0.19);
  snprintf(r.precision, sizeof r.precision, "bf16");
  long long id = 0;
  CHECK_INT(db_run_store(run, &r, &id, &err), RT_OK);
  /* the counters arrive after the timing: the row takes them, its id stays */
  r.counters.measured = 1;
  r.counters.dram_read_bytes = 1.25e8;
  r.counters.dram_write_bytes = 6.7e7;
  r.counters.l2_bytes = 2.1e9;
  r.counters.occupancy = 0.23;
  r.counters.tensor_pipe = 0.81;
  snprintf(r.counters.stalls, sizeof r.counters.stalls,
           "gmma:0.48,barrier:0.20,long_scoreboard:0.11");
  snprintf(r.diag.basis, sizeof r.diag.basis, "dram,l2,occupancy,stalls");
  snprintf(r.verdict, sizeof r.verdict, "tied with 1 other within the 1.2 %% spread");
  CHECK_INT(db_run_update_result(run, id, &r, &err), RT_OK);
  /* another run cannot rewrite it */
  CHECK_INT(db_run_begin(d, &spec, &other, &err), RT_OK);
  rt_error e2 = {0};
  CHECK_INT(db_run_update_result(other, id, &r, &e2), RT_ERR_NOT_FOUND);
  CHECK_CONTAINS(e2.text, "is not one of run");
  candidate_result *prev = NULL;
  size_t n = 0;
  CHECK_INT(db_run_template(other, "gemm_wgmma", "gemm", "s", "m", &err), RT_OK);
  CHECK_INT(db_run_previous(other, "gemm_wgmma", &prev, &n, &err), RT_OK);
  CHECK_INT(n, 1);
  if (n == 1) {
    CHECK_INT(prev[0].counters.measured, 1);
    CHECK_NEAR(prev[0].counters.dram_read_bytes, 1.25e8, 0);
    CHECK_NEAR(prev[0].counters.occupancy, 0.23, 0);
    CHECK_STR(prev[0].counters.stalls, "gmma:0.48,barrier:0.20,long_scoreboard:0.11");
    CHECK_STR(prev[0].diag.basis, "dram,l2,occupancy,stalls");
    CHECK_STR(prev[0].verdict, "tied with 1 other within the 1.2 % spread");
    CHECK_STR(prev[0].precision, "bf16");
  }
  free(prev);
  db_run_free(other);
  db_run_free(run);
  db_close(d);
}

static void test_calibrations(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  double ratio = 0;
  int found = 1, samples = 0;
  CHECK_INT(
      db_calibration_get(d, "h200", "gemm_wgmma", "dram_bytes", &ratio, &samples, &found, &err),
      RT_OK);
  CHECK_INT(found, 0);
  CHECK_INT(db_calibration_set(d, "h200", "gemm_wgmma", "dram_bytes", 0.83, 3, &err), RT_OK);
  CHECK_INT(db_calibration_set(d, "h100", "gemm_wgmma", "dram_bytes", 1.4, 2, &err), RT_OK);
  CHECK_INT(
      db_calibration_get(d, "h200", "gemm_wgmma", "dram_bytes", &ratio, &samples, &found, &err),
      RT_OK);
  CHECK(found && ratio == 0.83 && samples == 3);
  CHECK_INT(db_calibration_set(d, "h200", "gemm_wgmma", "dram_bytes", 0.9, 5, &err),
            RT_OK); /* replaced */
  CHECK_INT(
      db_calibration_get(d, "h200", "gemm_wgmma", "dram_bytes", &ratio, &samples, &found, &err),
      RT_OK);
  CHECK(found && ratio == 0.9 && samples == 5);
  CHECK_INT(db_calibration_get(d, "h100", "gemm_wgmma", "dram_bytes", &ratio, NULL, &found, &err),
            RT_OK);
  CHECK(found && ratio == 1.4);
  rt_error e = {0};
  CHECK_INT(db_calibration_set(d, "h200", "gemm_mma", "dram_bytes", -1, 1, &e), RT_ERR_INVALID);
  CHECK_CONTAINS(e.text, "a calibration of gemm_mma on h200 needs a positive ratio");
  CHECK_INT(db_calibration_set(d, "h200", "gemm_mma", "l2_bytes", 1.1, 1, &e), RT_ERR_INVALID);
  CHECK_CONTAINS(e.text, "calibration kind 'l2_bytes' is not dram_bytes");
  db_close(d);
}

/* A memory-bound candidate on model:h200: the predicted time follows the calibrated bytes. */
TEST_CASE(model_scale) {
  const gpu_spec *gpu = gpu_spec_find("h200");
  candidate_plan pl;
  memset(&pl, 0, sizeof pl);
  snprintf(pl.config, sizeof pl.config, "X=1");
  pl.flops = 1e9;
  pl.executed_flops = 1e9;
  pl.dram_bytes = 4e9;
  device_candidate c;
  memset(&c, 0, sizeof c);
  c.plan = &pl;
  c.path = PATH_TC_F16;
  c.wgmma = 1;
  c.facts.threads_per_block = 256;
  c.facts.blocks_per_sm = 4;
  c.facts.grid_blocks = 4 * 132;
  c.facts.smem_dynamic = 64 * 1024;
  double t1 = 0, t2 = 0, t3 = 0;
  CHECK_INT(device_model_predict(gpu, &c, &t1, NULL), RT_OK);
  c.dram_calibration = 0.5;
  CHECK_INT(device_model_predict(gpu, &c, &t2, NULL), RT_OK);
  c.dram_calibration = 1.0;
  CHECK_INT(device_model_predict(gpu, &c, &t3, NULL), RT_OK);
  CHECK(t2 < t1);
  CHECK_NEAR(t3, t1, 0);
  /* memory-bound: half the bytes, about half the time (the L2 floor and the launch aside) */
  CHECK(t2 / t1 > 0.45 && t2 / t1 < 0.75);
  printf("model:h200, 4 GB modelled: %.3f ms, calibrated 0.5x: %.3f ms\n", t1 * 1e3, t2 * 1e3);
}

TEST_CASE(update_and_calibrations) {
  char path[512];
  fx_tmpname(path, sizeof path, "calibration");
  fx_remove(path);
  test_update(path);
  test_calibrations(path);
  fx_remove(path);
}

TEST_LIST(TEST_ENTRY(update_and_calibrations), TEST_ENTRY(model_scale))
