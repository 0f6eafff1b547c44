/* test_counters.c — hardware counters on a real GPU (driver/cupti.h): skips (77) without
 * a GPU, without CUPTI, or where profiling is not permitted, each with the reason printed.
 *   1. CUPTI directly, on a kernel whose traffic is known: y = 2x over 64 Mi floats reads and
 *      writes 256 MiB each; with the L2 flushed before every pass the counters must say so
 *      (DRAM read within 5 %, written within 25 %: up to an L2's worth may still sit in it, L2
 *      traffic at least both), no tensor-pipe work, warps active, a stall reason; the counter
 *      data image decodes again to the same numbers (cupti_decode on a real image).
 *   2. The whole path: `tune` on the cuda device profiles each template's best after timing
 *      (in the worker, never inside the timed runs), stores the counters with the result and
 *      diagnoses with them; a cuBLASLt candidate is profiled through the device too. */
/* stages: tune */
#include "test.h"
#include "kernels/family.h"
#include "compile/compile.h"
#include "tuner/device/device.h"
#include "driver/cuda_driver.h"
#include "driver/cupti.h"
#include "tuner/tune.h"

static const char *scale_source =
    "extern \"C\" __global__ void scale2(const float *x, float *y, long n) {\n"
    "  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * "
    "blockDim.x)\n"
    "    y[i] = 2.0f * x[i];\n"
    "}\n";

typedef struct run {
  CUfunction fn;
  CUdeviceptr x, y, flush;
  size_t flush_bytes;
  long n;
  CUstream stream;
  int sm;
} run;

static rt_status flush(void *ctx, rt_error *err) {
  run *r = ctx;
  rt_status st =
      cuda_check(cu.cuMemsetD32Async(r->flush, 1, r->flush_bytes / 4, r->stream), "flush", err);
  return st ? st : cuda_check(cu.cuStreamSynchronize(r->stream), "flush", err);
}

static rt_status launch(void *ctx, rt_error *err) {
  run *r = ctx;
  void *args[] = {&r->x, &r->y, &r->n};
  rt_status st = cuda_check(
      cu.cuLaunchKernel(r->fn, (unsigned)(r->sm * 8), 1, 1, 256, 1, 1, 0, r->stream, args, NULL),
      "launch scale2", err);
  return st ? st : cuda_check(cu.cuStreamSynchronize(r->stream), "scale2", err);
}

TEST_CASE(counters) {
  rt_error err = {0};
  int n = 0;
  if (cuda_driver_load(&err) != RT_OK || cuda_gpu_count(&n, &err) != RT_OK || n == 0) {
    test_skip(err.text[0] ? err.text : "no CUDA GPU");
  }
#if defined(__SANITIZE_ADDRESS__)
  test_skip("libcupti loads libnvperf_host with RTLD_DEEPBIND, which AddressSanitizer cannot run");
#endif
  if (cupti_load(&err) != RT_OK) {
    test_skip(err.text);
  }
  cuda_gpu_info info;
  CHECK_INT(cuda_gpu_query(0, &info, &err), RT_OK);
  CUdevice dev;
  CUcontext ctx;
  CHECK_INT(cuda_check(cu.cuDeviceGet(&dev, 0), "cuDeviceGet", &err), RT_OK);
  CHECK_INT(cuda_check(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "retain", &err), RT_OK);
  CHECK_INT(cuda_check(cu.cuCtxSetCurrent(ctx), "current", &err), RT_OK);

  /* 1. a kernel of known traffic */
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d%d", info.cc_major, info.cc_minor);
  compile_options co;
  memset(&co, 0, sizeof co);
  co.arch = arch;
  co.entry = "scale2";
  compile_result cr;
  CHECK_INT(compile_source(scale_source, "scale2.cu", &co, &cr, &err), RT_OK);
  run r;
  memset(&r, 0, sizeof r);
  r.n = 64L << 20;
  r.sm = info.sm_count;
  r.flush_bytes = 2 * (size_t)info.l2_bytes;
  CUmodule mod;
  CHECK_INT(cuda_check(cu.cuModuleLoadData(&mod, cr.cubin), "load", &err), RT_OK);
  CHECK_INT(cuda_check(cu.cuModuleGetFunction(&r.fn, mod, cr.lowered_name), "function", &err),
            RT_OK);
  CHECK_INT(cuda_check(cu.cuStreamCreate(&r.stream, CU_STREAM_NON_BLOCKING), "stream", &err),
            RT_OK);
  CHECK_INT(cuda_check(cu.cuMemAlloc_v2(&r.x, (size_t)r.n * 4), "alloc", &err), RT_OK);
  CHECK_INT(cuda_check(cu.cuMemAlloc_v2(&r.y, (size_t)r.n * 4), "alloc", &err), RT_OK);
  CHECK_INT(cuda_check(cu.cuMemAlloc_v2(&r.flush, r.flush_bytes), "alloc", &err), RT_OK);
  CHECK_INT(cuda_check(cu.cuMemsetD32Async(r.x, 0x3f800000u, (size_t)r.n, r.stream), "init", &err),
            RT_OK);
  CHECK_INT(launch(&r, &err), RT_OK);
  hw_counters c;
  size_t passes = 0, size = 0;
  uint8_t *image = NULL;
  rt_status st = cupti_profile(ctx, 0, flush, launch, &r, &c, &passes, &image, &size, &err);
  if (st == RT_ERR_UNSUPPORTED) {
    char why[sizeof err.text + 64];
    snprintf(why, sizeof why, "counters cannot be read on this machine: %s", err.text);
    test_skip(why);
  }
  CHECK_INT(st, RT_OK);
  const double bytes = (double)r.n * 4;
  printf(
      "scale2 over %.0f MiB: %zu passes, DRAM read %.1f MiB written %.1f MiB, L2 %.1f MiB, "
      "occupancy %.0f %%, "
      "tensor %.1f %%, fma %.1f %%, SM %.0f %%, %.3f ms, stalls %s\n",
      bytes / 1048576, passes, c.dram_read_bytes / 1048576, c.dram_write_bytes / 1048576,
      c.l2_bytes / 1048576, 100 * c.occupancy, 100 * c.tensor_pipe, 100 * c.fma_pipe,
      100 * c.sm_throughput, c.duration_ms, c.stalls);
  CHECK(c.measured == 1);
  CHECK(passes >= 2);
  CHECK(c.dram_read_bytes > 0.95 * bytes && c.dram_read_bytes < 1.05 * bytes);
  CHECK(c.dram_write_bytes > 0.75 * bytes && c.dram_write_bytes < 1.05 * bytes);
  CHECK(c.l2_bytes >= 1.9 * bytes);
  CHECK(c.occupancy > 0.2 && c.occupancy <= 1.0);
  CHECK(c.tensor_pipe < 0.01);
  CHECK(c.duration_ms > 0);
  CHECK(c.stalls[0] != 0);
  /* the real counter data image decodes again to the same numbers */
  const cupti_metrics *m = cupti_profile_metrics();
  CHECK(m != NULL && image != NULL && size > 0);
  if (m && image) {
    hw_counters again;
    CHECK_INT(cupti_decode(m, image, size, &again, &err), RT_OK);
    CHECK_NEAR(again.dram_read_bytes, c.dram_read_bytes, 0);
    CHECK_NEAR(again.occupancy, c.occupancy, 0);
    CHECK_STR(again.stalls, c.stalls);
  }
  free(image);
  cu.cuMemFree_v2(r.x);
  cu.cuMemFree_v2(r.y);
  cu.cuMemFree_v2(r.flush);
  cu.cuModuleUnload(mod);
  compile_result_free(&cr);

  /* 2. the whole path, in the worker */
  const char *bin = getenv("ROOFTUNE_BIN");
  if (!bin) test_skip("ROOFTUNE_BIN is not set (run through ctest)");
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = "gemm";
  o.shape = "2048x2048x2048";
  o.dtype = "bf16";
  o.device = "cuda";
  o.budget = 6;
  o.strategy = "random";
  o.worker_exe = bin;
  o.worker_argv = TEST_WORKER_ARGV;
  tune_report rep;
  rt_error_clear(&err);
  CHECK_INT(tune_run(&o, &rep, &err), RT_OK);
  if (err.text[0]) fprintf(stderr, "  %s\n", err.text);
  if (!err.text[0]) {
    printf("profiled %zu candidates; note: %s\n", rep.profiled, rep.note);
    CHECK(rep.profiled >= 2); /* a template's best and cuBLASLt's */
    int lib = 0, tmpl = 0;
    for (size_t i = 0; i < rep.nresults; i++) {
      const candidate_result *x = &rep.results[i];
      if (!x->counters.measured) continue;
      /* inputs at least once, the fp32 output once */
      CHECK(x->counters.dram_read_bytes > 0.9 * 2 * 2048.0 * 2048 * 2);
      CHECK(x->counters.dram_write_bytes > 0.7 * 2048.0 * 2048 * 4);
      CHECK(x->counters.tensor_pipe > 0.05);
      CHECK(strstr(x->diag.basis, "dram") != NULL);
      lib += !strcmp(x->template_name, "cublaslt");
      tmpl += strcmp(x->template_name, "cublaslt") != 0;
      printf(
          "%-10s %.4f ms: DRAM %.1f MB (model %.1f), L2 %.1f MB, occupancy %.0f %%, tensor %.0f "
          "%%, %s | %s\n",
          x->template_name, x->time_ms,
          (x->counters.dram_read_bytes + x->counters.dram_write_bytes) / 1e6, x->dram_bytes / 1e6,
          x->counters.l2_bytes / 1e6, 100 * x->counters.occupancy, 100 * x->counters.tensor_pipe,
          x->counters.stalls, x->diag.sentence);
    }
    CHECK(lib >= 1 && tmpl >= 1);
    printf("best: %s; why: %s; calibration: %s\n", rep.best.diag.sentence, rep.best.verdict,
           rep.calibration);
    CHECK(rep.calibration[0] != 0);
    tune_report_free(&rep);
  }
  cu.cuDevicePrimaryCtxRelease_v2(dev);
}

TEST_LIST(TEST_ENTRY(counters))
