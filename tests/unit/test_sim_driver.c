/* The CUDA driver table the sim serves (tuner/device/sim_driver.h), as the families call it
 * through `cu`: host memory that copies and memsets reach, a cubin refused with the reason in
 * cuGetErrorString, a sim image compiled and launched, and a kernel that reads one element past
 * its input stopped with CUDA_ERROR_ILLEGAL_ADDRESS naming the allocation and offset (what a
 * family's cuda_check then reports); the last launch's blocks counted. */
/* stages: device */
#include "tuner/device/sim_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "driver/cuda_driver.h"

static const char *kernel =
    "extern \"C\" __global__ void shift(const float *x, float *y, int n, int off) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = 2.0f * x[i + off];\n"
    "}\n";

static void setup(void) {
  sim_driver_gpu g;
  memset(&g, 0, sizeof g);
  snprintf(g.name, sizeof g.name, "sim:test");
  g.cc_major = 8;
  g.sm_count = 4;
  g.smem_per_block_optin = 99 * 1024;
  sim_driver_install(&g);
}
static void teardown(void) {}

TEST_CASE(memory) {
  CHECK(cu.sim != NULL && cu.handle != NULL);
  CHECK_INT(cuda_driver_load(NULL), RT_OK); /* the table is the driver: nothing to load */
  CUdeviceptr p = 0;
  CHECK_INT(cu.cuMemAlloc_v2(&p, 64), CUDA_SUCCESS);
  unsigned in[16], out[16];
  for (int i = 0; i < 16; i++) in[i] = (unsigned)i * 7u;
  CHECK_INT(cu.cuMemcpyHtoD_v2(p, in, sizeof in), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemsetD32Async(p + 8, 0x7fc00000u, 2, NULL), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemcpyDtoH_v2(out, p, sizeof out), CUDA_SUCCESS);
  CHECK_INT(out[1], 7);
  CHECK_INT(out[2] == 0x7fc00000u && out[3] == 0x7fc00000u && out[4] == 28, 1);
  int v = 0;
  CHECK_INT(cu.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), CUDA_SUCCESS);
  CHECK_INT(v, 4);
  CHECK_INT(cu.cuMemFree_v2(p), CUDA_SUCCESS);
}

TEST_CASE(cubin_refused) {
  CUmodule m = NULL;
  CUresult r = cu.cuModuleLoadData(&m,
                                   "\x7f"
                                   "ELF not an image");
  CHECK_INT(r, CUDA_ERROR_INVALID_IMAGE);
  rt_error err = {0};
  CHECK_INT(cuda_check(r, "load", &err), RT_ERR_CUDA);
  CHECK_CONTAINS(err.text, "CUDA_ERROR_INVALID_IMAGE (the sim runs sim images");
}

TEST_CASE(launch_and_out_of_bounds) {
  compile_options opt;
  memset(&opt, 0, sizeof opt);
  opt.arch = "sm_80";
  char *image = NULL;
  size_t size = 0;
  CHECK_INT(sim_image_make(kernel, "shift.cu", &opt, &image, &size, NULL), RT_OK);
  CHECK(image && size == strlen(image) + 1);
  CUmodule m = NULL;
  CUfunction f = NULL;
  CHECK_INT(cu.cuModuleLoadData(&m, image), CUDA_SUCCESS);
  free(image);
  CHECK_INT(cu.cuModuleGetFunction(&f, m, "shift"), CUDA_SUCCESS);
  if (!f) return;
  const int n = 100;
  CUdeviceptr x = 0, y = 0;
  CHECK_INT(cu.cuMemAlloc_v2(&x, n * 4) | cu.cuMemAlloc_v2(&y, n * 4), CUDA_SUCCESS);
  float h[100];
  for (int i = 0; i < n; i++) h[i] = (float)i;
  cu.cuMemcpyHtoD_v2(x, h, sizeof h);
  int nn = n, off = 0;
  void *args[] = {&x, &y, &nn, &off};
  CHECK_INT(cu.cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, NULL, args, NULL), CUDA_SUCCESS);
  cu.cuMemcpyDtoH_v2(h, y, sizeof h);
  CHECK(h[0] == 0.0f && h[99] == 198.0f);
  long long launches = 0, blocks = 0;
  sim_driver_stats(&launches, &blocks);
  CHECK(launches >= 1 && blocks >= 4);
  /* one element past x at the last thread */
  off = 1;
  CUresult r = cu.cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
  CHECK_INT(r, CUDA_ERROR_ILLEGAL_ADDRESS);
  rt_error err = {0};
  cuda_check(r, "launch", &err);
  CHECK_CONTAINS(err.text, "out-of-bounds");
  CHECK_CONTAINS(err.text, "(400 bytes) at byte offset 400");
  /* more dynamic shared memory than the function allows is refused, as on a GPU */
  off = 0;
  CHECK_INT(cu.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 64 * 1024, NULL, args, NULL),
            CUDA_ERROR_INVALID_VALUE);
  cu.cuMemFree_v2(x);
  cu.cuMemFree_v2(y);
  CHECK_INT(cu.cuModuleUnload(m), CUDA_SUCCESS);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(memory), TEST_ENTRY(cubin_refused),
                  TEST_ENTRY(launch_and_out_of_bounds))
