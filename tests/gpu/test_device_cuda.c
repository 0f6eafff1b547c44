/* test_device_cuda.c — the cuda device on a real GPU: a tuned template is verified and
 * measured; a kernel that writes nothing is RT_ERR_WRONG_RESULT; an illegal address and an
 * endless loop cost only their candidate and a fresh worker carries on; cuBLASLt candidates are
 * listed and measured; the ceilings are measured.  Skips (77) without a driver or GPU. */
/* stages: tune */
#include "test.h"
#include "kernels/family.h"
#include "compile/compile.h"
#include "driver/cuda_driver.h"
#include "tuner/device/device.h"
#include "tuner/tune.h"

static const char *bad_source =
    "extern \"C\" __global__ void writes_nothing() {}\n"
    "extern \"C\" __global__ void illegal_address() { *(volatile int *)0x10 = 1; }\n"
    /* a loop over a volatile local ended on an H200 (the compiler may drop it); a volatile
     * global read every turn it must keep */
    "extern \"C\" __global__ void spins(const int *a) {\n"
    "  const volatile int *v = a;\n"
    "  while (v[0] == v[0]) {}\n"
    "}\n";

static void eval_bad(device *d, const char *arch, const char *entry, rt_status want) {
  compile_options co;
  memset(&co, 0, sizeof co);
  co.arch = arch;
  co.entry = entry;
  compile_result cr;
  rt_error err = {0};
  rt_status cs = compile_source(bad_source, "bad.cu", &co, &cr, &err);
  if (cs)
    fprintf(stderr, "compiling %s for %s: %s\n%.2000s\n", entry, arch ? arch : "(none)", err.text,
            cr.log ? cr.log : "");
  CHECK_INT(cs, RT_OK);
  if (cs) {
    compile_result_free(&cr);
    return;
  }
  candidate_plan pl;
  memset(&pl, 0, sizeof pl);
  snprintf(pl.config, sizeof pl.config, "%s", entry);
  pl.grid[0] = pl.grid[1] = pl.grid[2] = 1;
  pl.block[0] = 32;
  pl.block[1] = pl.block[2] = 1;
  device_candidate c;
  memset(&c, 0, sizeof c);
  c.template_name = "bad";
  c.plan = &pl;
  c.entry = cr.lowered_name;
  c.cubin = cr.cubin;
  c.cubin_size = cr.cubin_size;
  c.library_index = -1;
  candidate_result r;
  CHECK_INT(device_evaluate(d, &c, &r, &err), RT_OK);
  CHECK_INT(r.status, want);
  printf("%s: %s (%s)\n", entry, rt_status_name(r.status), r.detail);
  compile_result_free(&cr);
}

static const char *bin; /* the rooftune binary, whose __worker the device runs */

static void setup(void) {
  rt_error err = {0};
  int n = 0;
  if (cuda_driver_load(&err) != RT_OK || cuda_gpu_count(&n, &err) != RT_OK || n == 0)
    test_skip(err.text[0] ? err.text : "no CUDA GPU");
  bin = getenv("ROOFTUNE_BIN");
  if (!bin) test_skip("ROOFTUNE_BIN is not set (run through ctest)");
}

/* the whole loop on the GPU: verified, measured, stored nowhere */
TEST_CASE(tune_loop) {
  rt_error err = {0};
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = "gemm";
  o.shape = "1024x1024x1024";
  o.dtype = "f16";
  o.device = "cuda";
  o.budget = 4;
  o.strategy = "random";
  o.worker_exe = bin;
  o.worker_argv = TEST_WORKER_ARGV;
  tune_report rep;
  CHECK_INT(tune_run(&o, &rep, &err), RT_OK);
  if (!err.text[0]) {
    CHECK_INT(rep.timing, TIMING_MEASURED);
    CHECK(rep.have_best);
    int library = 0;
    for (size_t i = 0; i < rep.nresults; i++) {
      const candidate_result *r = &rep.results[i];
      CHECK(r->status != RT_ERR_WRONG_RESULT || strcmp(r->template_name, "cublaslt") != 0);
      if (r->status == RT_OK) {
        CHECK(r->verify_error >= 0 && r->verify_error < 1e-2);
        CHECK(r->repetitions >= 3); /* 5, or 3 for a candidate whose first run is slow */
        CHECK(r->time_ms > 0);
      }
      library += strcmp(r->template_name, "cublaslt") == 0;
      printf("%-10s %-70s %-16s %.4f ms err %.2g reps %d %s\n", r->template_name, r->config,
             rt_status_name(r->status), r->time_ms, r->verify_error, r->repetitions, r->detail);
    }
    CHECK(library > 0);
    printf("best %s %s %.4f ms (%s): %s\n", rep.best.template_name, rep.best.config,
           rep.best.time_ms, rep.ceilings, rep.best.diag.sentence);
    tune_report_free(&rep);
  } else {
    fprintf(stderr, "  %s\n", err.text);
  }
}

/* failures are the candidate's, and the worker is replaced; the ceilings are measured */
TEST_CASE(candidate_failures) {
  rt_error err = {0};
  device_options dopt;
  memset(&dopt, 0, sizeof dopt);
  dopt.worker_exe = bin;
  dopt.worker_argv = TEST_WORKER_ARGV;
  dopt.timeout_s = 3;
  device *d = NULL;
  rt_error_clear(&err);
  CHECK_INT(device_open("cuda", &dopt, &d, &err), RT_OK);
  if (!d) return;
  const family_ops *gemm = family_find("gemm");
  problem p;
  CHECK_INT(gemm->parse_shape(gemm, "256x256x256", "f16", NULL, &p, &err), RT_OK);
  CHECK_INT(device_begin(d, gemm, &p, NULL, &err), RT_OK);
  const char *arch = device_arch(d);
  eval_bad(d, arch, "writes_nothing", RT_ERR_WRONG_RESULT);
  eval_bad(d, arch, "illegal_address", RT_ERR_CRASH);
  eval_bad(d, arch, "spins", RT_ERR_TIMEOUT);
  eval_bad(d, arch, "writes_nothing", RT_ERR_WRONG_RESULT); /* a fresh worker answers */
  CHECK(device_worker_restarts(d) >= 2);

  roofline_ceilings ceil;
  CHECK_INT(device_measure_ceilings(d, "f16", &ceil, &err), RT_OK);
  CHECK(ceil.measured == 1);
  CHECK(ceil.bw > 1e11);
  CHECK(ceil.flops[PATH_TC_F16] > 1e12);
  printf("ceilings: copy %.2f TB/s, f16 matmul %.1f TFLOP/s\n", ceil.bw / 1e12,
         ceil.flops[PATH_TC_F16] / 1e12);
  device_close(d);
}

/* the worker's command comes from whoever opens the device: without it the device opens (its
 * name is still known) and measuring says what is missing */
TEST_CASE(no_worker_argv) {
  rt_error err = {0};
  const family_ops *gemm = family_find("gemm");
  problem p;
  CHECK_INT(gemm->parse_shape(gemm, "256x256x256", "f16", NULL, &p, &err), RT_OK);
  device_options dopt;
  device *d = NULL;
  memset(&dopt, 0, sizeof dopt);
  dopt.worker_exe = bin;
  rt_error_clear(&err);
  CHECK_INT(device_open("cuda", &dopt, &d, &err), RT_OK);
  if (d) {
    CHECK_INT(device_begin(d, gemm, &p, NULL, &err), RT_ERR_USAGE);
    CHECK_CONTAINS(err.text, "worker_argv");
    device_close(d);
  }
}

TEST_LIST_FIXTURE(setup, NULL, TEST_ENTRY(tune_loop), TEST_ENTRY(candidate_failures),
                  TEST_ENTRY(no_worker_argv))
