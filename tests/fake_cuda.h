/* fake_cuda.h — a CUDA driver table (driver/cuda_driver.h's `cu`) for host tests of a
 * family's GPU side: device memory is host memory (a CUdeviceptr is the malloc'ed address),
 * copies and memsets act at once, streams and modules are tokens, and a launch calls the test's
 * own function with the kernel's token and its argument array, so the test plays the kernel.
 * fake_cuda_install() fills `cu` (cu.handle is set, so the family believes a driver is loaded);
 * fake_cuda_allocs() counts the live allocations (0 after a teardown that frees everything). */
#ifndef ROOFTUNE_FAKE_CUDA_H
#define ROOFTUNE_FAKE_CUDA_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "driver/cuda_driver.h"

/* The test's kernel: `fn` is 1 + the index of the module's load (the first cubin loaded is
 * function 1), args the launch's kernelParams. */
typedef void (*fake_cuda_kernel)(uintptr_t fn, void **args, const unsigned grid[3]);

static fake_cuda_kernel fake_cuda_run;
static int fake_cuda_live, fake_cuda_modules, fake_cuda_launches;

static CUresult fake_cuMemAlloc(CUdeviceptr *p, size_t n) {
  void *m = malloc(n ? n : 1);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  fake_cuda_live++;
  *p = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemFree(CUdeviceptr p) {
  if (p) fake_cuda_live--;
  free((void *)(uintptr_t)p);
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) {
  memcpy((void *)(uintptr_t)d, s, n);
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) {
  memcpy(d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  (void)st;
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  (void)s;
  memset((void *)(uintptr_t)d, v, n);
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemsetD16(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
  (void)s;
  for (size_t i = 0; i < n; i++) ((unsigned short *)(uintptr_t)d)[i] = v;
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemsetD32(CUdeviceptr d, unsigned v, size_t n, CUstream s) {
  (void)s;
  for (size_t i = 0; i < n; i++) ((unsigned *)(uintptr_t)d)[i] = v;
  return CUDA_SUCCESS;
}
static CUresult fake_cuSync(void) { return CUDA_SUCCESS; }
static CUresult fake_cuStreamSync(CUstream s) {
  (void)s;
  return CUDA_SUCCESS;
}
static CUresult fake_cuModuleLoadData(CUmodule *m, const void *image) {
  (void)image;
  *m = (CUmodule)(uintptr_t)(++fake_cuda_modules);
  return CUDA_SUCCESS;
}
static CUresult fake_cuModuleUnload(CUmodule m) {
  (void)m;
  return CUDA_SUCCESS;
}
static CUresult fake_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  (void)name;
  *f = (CUfunction)m;
  return CUDA_SUCCESS;
}
static CUresult fake_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  (void)f, (void)a, (void)v;
  return CUDA_SUCCESS;
}
static CUresult fake_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                    unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                    CUstream s, void **args, void **extra) {
  (void)bx, (void)by, (void)bz, (void)smem, (void)s, (void)extra;
  const unsigned grid[3] = {gx, gy, gz};
  fake_cuda_launches++;
  if (fake_cuda_run) fake_cuda_run((uintptr_t)f, args, grid);
  return CUDA_SUCCESS;
}
static CUresult fake_cuGetErrorText(CUresult r, const char **s) {
  (void)r;
  *s = "fake driver error";
  return CUDA_SUCCESS;
}

static void fake_cuda_install(fake_cuda_kernel run) {
  memset(&cu, 0, sizeof cu);
  cu.handle = (void *)&cu;
  cu.cuMemAlloc_v2 = fake_cuMemAlloc;
  cu.cuMemFree_v2 = fake_cuMemFree;
  cu.cuMemcpyHtoD_v2 = fake_cuMemcpyHtoD;
  cu.cuMemcpyDtoH_v2 = fake_cuMemcpyDtoH;
  cu.cuMemcpyDtoDAsync_v2 = fake_cuMemcpyDtoDAsync;
  cu.cuMemsetD8Async = fake_cuMemsetD8;
  cu.cuMemsetD16Async = fake_cuMemsetD16;
  cu.cuMemsetD32Async = fake_cuMemsetD32;
  cu.cuCtxSynchronize = fake_cuSync;
  cu.cuStreamSynchronize = fake_cuStreamSync;
  cu.cuModuleLoadData = fake_cuModuleLoadData;
  cu.cuModuleUnload = fake_cuModuleUnload;
  cu.cuModuleGetFunction = fake_cuModuleGetFunction;
  cu.cuFuncSetAttribute = fake_cuFuncSetAttribute;
  cu.cuLaunchKernel = fake_cuLaunchKernel;
  cu.cuGetErrorName = fake_cuGetErrorText;
  cu.cuGetErrorString = fake_cuGetErrorText;
  fake_cuda_run = run;
  fake_cuda_live = fake_cuda_modules = fake_cuda_launches = 0;
}

static int fake_cuda_allocs(void) { return fake_cuda_live; }

#endif
