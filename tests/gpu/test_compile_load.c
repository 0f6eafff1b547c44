/* test_compile_load.c — on a GPU: what compile_source reports is what the driver sees.  A kernel
 * compiled for the GPU's own architecture loads from its cubin under the lowered name, the
 * driver's register and static shared memory counts equal the parsed ptxas report, and the kernel
 * computes the right values (a C++ template entry, so the mangled name is exercised). */
/* stages: driver compile */
#include "test.h"
#include "compile/compile.h"
#include "driver/cuda_driver.h"

static const char source[] =
    "#define SCALE 3\n"
    "#line 1\n"
    "template <int BLOCK> __global__ void scale(const float *x, float *y, int n) {\n"
    "  __shared__ float tile[BLOCK];\n"
    "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
    "  tile[threadIdx.x] = i < n ? x[i] : 0.f;\n"
    "  __syncthreads();\n"
    "  if (i < n) y[i] = SCALE * tile[threadIdx.x];\n"
    "}\n"
    "template __global__ void scale<128>(const float *, float *, int);\n";

TEST_CASE(loads_as_reported) {
  rt_error err = {0};
  if (cuda_driver_load(&err) != RT_OK) {
    char why[900];
    snprintf(why, sizeof why, "no CUDA driver or GPU: %s", err.text);
    test_skip(why);
  }
  cuda_gpu_info g;
  if (cuda_gpu_query(0, &g, &err)) test_skip(err.text);
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d%d", g.cc_major, g.cc_minor);
  if (!compile_arch_valid(arch)) test_skip("this GPU's architecture is not a rooftune target");

  compile_options opt = {0};
  opt.arch = arch;
  opt.entry = "scale<128>";
  compile_result r;
  CHECK_INT(compile_source(source, "scale.cu", &opt, &r, &err), RT_OK);
  if (r.status) return;

  CUdevice dev;
  CUcontext ctx;
  CHECK_INT(cu.cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  CHECK_INT(cu.cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  CHECK_INT(cu.cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  CUmodule mod;
  CUfunction fn;
  CHECK_INT(cu.cuModuleLoadData(&mod, r.cubin), CUDA_SUCCESS);
  CHECK_INT(cu.cuModuleGetFunction(&fn, mod, r.lowered_name), CUDA_SUCCESS);
  int regs = -1, smem = -1;
  CHECK_INT(cu.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn), CUDA_SUCCESS);
  CHECK_INT(cu.cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn), CUDA_SUCCESS);
  CHECK_INT(regs, r.report.registers);
  CHECK_INT(smem, r.report.smem_static);

  enum { N = 1000 };
  float host[N], out[N];
  for (int i = 0; i < N; i++) host[i] = (float)i * 0.5f;
  CUdeviceptr dx, dy;
  CHECK_INT(cu.cuMemAlloc_v2(&dx, sizeof host), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemAlloc_v2(&dy, sizeof host), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemcpyHtoD_v2(dx, host, sizeof host), CUDA_SUCCESS);
  int n = N;
  void *args[] = {&dx, &dy, &n};
  CHECK_INT(cu.cuLaunchKernel(fn, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL),
            CUDA_SUCCESS);
  CHECK_INT(cu.cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemcpyDtoH_v2(out, dy, sizeof out), CUDA_SUCCESS);
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += out[i] != 3.0f * host[i];
  CHECK_INT(wrong, 0);
  cu.cuMemFree_v2(dx);
  cu.cuMemFree_v2(dy);
  cu.cuModuleUnload(mod);
  cu.cuDevicePrimaryCtxRelease_v2(dev);
  compile_result_free(&r);
}

TEST_LIST(TEST_ENTRY(loads_as_reported))
