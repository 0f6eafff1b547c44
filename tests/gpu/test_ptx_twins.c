/* test_ptx_twins.c — on a GPU: every rt_ptx.h wrapper against its host twin (sim/sim_ptx.hpp).
 * templates/ptxcheck/ptx_twins.cu runs once on the GPU (NVRTC for its architecture) and once on
 * the sim for the same target on the same inputs; each wrapper's words must agree bit for bit
 * (conversions, packing, shuffles, ldmatrix, mma.sync, cp.async groups, shared stores, loads,
 * named barriers, mbarrier parity, TMA boxes with the 128-byte swizzle, a
 * cluster of two (ranks, barriers, multicast, remote arrivals), wgmma SS and RS from 128-byte-swizzled descriptors), NaNs
 * with any payload, ex2/lg2.approx within 2^-21.  Each wrapper that differs is named.  The sim
 * half alone runs in every test run (tests/unit/test_sim_ptx_twins.c); tier 1 of
 * tests/gpu/run.sh runs this (step ptx-twins). */
/* stages: driver compile sim */
#include "ptx_twins_util.h"
#include "compile/compile.h"
#include "driver/cuda_driver.h"

/* kernel k on the GPU: out (PT_OUT words, zeros at first) gets its words, the others' kept */
static void run_gpu(const char *src, const char *arch, int k, const unsigned *in, unsigned *out) {
  compile_options opt;
  pt_options(&opt, arch, pt_kernels[k].entry);
  compile_result r;
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(compile_source(src, "ptx_twins.cu", &opt, &r, &err), RT_OK);
  if (r.status) fprintf(stderr, "%s\n", r.log);
  CHECK_INT(r.status, RT_OK);
  if (r.status) return;
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr din, dout;
  CHECK_INT(cu.cuModuleLoadData(&mod, r.cubin), CUDA_SUCCESS);
  CHECK_INT(cu.cuModuleGetFunction(&fn, mod, r.lowered_name), CUDA_SUCCESS);
  CHECK_INT(cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, PT_SMEM),
            CUDA_SUCCESS);
  CHECK_INT(cu.cuMemAlloc_v2(&din, PT_IN * 4), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemAlloc_v2(&dout, PT_OUT * 4), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemcpyHtoD_v2(din, in, PT_IN * 4), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemcpyHtoD_v2(dout, out, PT_OUT * 4), CUDA_SUCCESS); /* out: zeros */
  pt_map map;
  cuuint64_t dims[3], strides[2];
  for (int i = 0; i < 3; i++) dims[i] = pt_tma_dims[i], strides[i % 2] = pt_tma_strides[i % 2];
  CHECK_INT(cu.cuTensorMapEncodeTiled(
                (CUtensorMap *)&map, (CUtensorMapDataType)PT_TMA_TYPE, 3, (void *)(uintptr_t)din,
                dims, strides, pt_tma_box, pt_tma_elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                (CUtensorMapSwizzle)PT_TMA_SWIZZLE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            CUDA_SUCCESS);
  void *args[] = {&din, &dout, &map};
  CHECK_INT(cu.cuLaunchKernel(fn, pt_kernels[k].blocks, 1, 1, PT_THREADS, 1, 1, PT_SMEM, NULL, args,
                              NULL),
            CUDA_SUCCESS);
  CHECK_INT(cu.cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemcpyDtoH_v2(out, dout, PT_OUT * 4), CUDA_SUCCESS);
  cu.cuMemFree_v2(din);
  cu.cuMemFree_v2(dout);
  cu.cuModuleUnload(mod);
  compile_result_free(&r);
}

TEST_CASE(every_wrapper_agrees_with_its_twin) {
  rt_error err = {0};
  if (cuda_driver_load(&err) != RT_OK) {
    char why[900];
    snprintf(why, sizeof why, "no CUDA driver or GPU: %s", err.text);
    test_skip(why);
  }
  cuda_gpu_info g;
  if (cuda_gpu_query(0, &g, &err)) test_skip(err.text);
  const int sm90 = g.cc_major == 9 && g.cc_minor == 0;
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d%d%s", g.cc_major, g.cc_minor, sm90 ? "a" : "");
  if (!compile_arch_valid(arch)) test_skip("this GPU's architecture is not a rooftune target");
  /* the sim half needs the host compiler (sim/sim.h: CXX, else g++) */
  const char *cxx = getenv("CXX");
  char probe[600];
  snprintf(probe, sizeof probe, "'%s' --version >/dev/null 2>&1", cxx && *cxx ? cxx : "g++");
  if (system(probe) != 0)
    test_skip("no host C++ compiler for the sim half (set CXX; g++ by default)");
  CUdevice dev;
  CUcontext ctx;
  CHECK_INT(cu.cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  CHECK_INT(cu.cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  CHECK_INT(cu.cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  char *src = pt_source();
  unsigned *in = malloc(PT_IN * 4), *gpu = calloc(PT_OUT, 4), *sim = calloc(PT_OUT, 4);
  CHECK(src && in && gpu && sim);
  if (src && in && gpu && sim) {
    pt_inputs(in);
    for (int k = 0; k < (sm90 ? 2 : 1); k++) run_gpu(src, arch, k, in, gpu);
    CHECK_INT(pt_run_sim(src, arch, sm90, in, sim), RT_OK);
    printf("%s: %d wrapper cases on the GPU and the sim\n", arch, PT_NCASES);
    CHECK_INT(pt_compare(gpu, sim, sm90), 0);
  }
  free(src);
  free(in);
  free(gpu);
  free(sim);
  cu.cuDevicePrimaryCtxRelease_v2(dev);
}

TEST_LIST(TEST_ENTRY(every_wrapper_agrees_with_its_twin))
