/* cuda_driver.h — the CUDA driver API, loaded at run time.
 *
 * rooftune never links libcuda: it dlopen()s libcuda.so.1 on first use, so the binary starts,
 * compiles, predicts and replays on a machine without a driver and only running a kernel needs
 * one.  cuda_driver_load() fills the table `cu` below; every entry has the driver's own
 * signature from <cuda.h>.  cuda_gpu_query() reads what `rooftune info` and the device layer
 * need about each GPU.
 */
#ifndef ROOFTUNE_CUDA_DRIVER_H
#define ROOFTUNE_CUDA_DRIVER_H

#include <cuda.h>

#include "core/status.h"

#define CUDA_DRIVER_FUNCS(X)                                                                 \
  X(cuInit, (unsigned int))                                                                  \
  X(cuDriverGetVersion, (int *))                                                             \
  X(cuGetErrorString, (CUresult, const char **))                                             \
  X(cuGetErrorName, (CUresult, const char **))                                               \
  X(cuDeviceGetCount, (int *))                                                               \
  X(cuDeviceGet, (CUdevice *, int))                                                          \
  X(cuDeviceGetName, (char *, int, CUdevice))                                                \
  X(cuDeviceGetAttribute, (int *, CUdevice_attribute, CUdevice))                             \
  X(cuDeviceTotalMem_v2, (size_t *, CUdevice))                                               \
  X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                                       \
  X(cuDevicePrimaryCtxRelease_v2, (CUdevice))                                                \
  X(cuCtxSetCurrent, (CUcontext))                                                            \
  X(cuCtxSynchronize, (void))                                                                \
  X(cuCtxGetCurrent, (CUcontext *))                                                          \
  X(cuCtxGetDevice, (CUdevice *))                                                            \
  X(cuModuleLoadData, (CUmodule *, const void *))                                            \
  X(cuModuleUnload, (CUmodule))                                                              \
  X(cuModuleGetFunction, (CUfunction *, CUmodule, const char *))                             \
  X(cuFuncGetAttribute, (int *, CUfunction_attribute, CUfunction))                           \
  X(cuFuncSetAttribute, (CUfunction, CUfunction_attribute, int))                             \
  X(cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                     unsigned, CUstream, void **, void **))                                  \
  X(cuMemAlloc_v2, (CUdeviceptr *, size_t))                                                  \
  X(cuMemFree_v2, (CUdeviceptr))                                                             \
  X(cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))                                    \
  X(cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))                                          \
  X(cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUstream))                      \
  X(cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream))                         \
  X(cuMemsetD16Async, (CUdeviceptr, unsigned short, size_t, CUstream))                       \
  X(cuMemsetD32Async, (CUdeviceptr, unsigned int, size_t, CUstream))                         \
  X(cuStreamCreate, (CUstream *, unsigned int))                                              \
  X(cuStreamDestroy_v2, (CUstream))                                                          \
  X(cuStreamSynchronize, (CUstream))                                                         \
  X(cuEventCreate, (CUevent *, unsigned int))                                                \
  X(cuEventDestroy_v2, (CUevent))                                                            \
  X(cuEventRecord, (CUevent, CUstream))                                                      \
  X(cuEventSynchronize, (CUevent))                                                           \
  X(cuEventElapsedTime, (float *, CUevent, CUevent))                                         \
  X(cuTensorMapEncodeTiled,                                                                  \
    (CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,             \
     const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,      \
     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill))

typedef struct cuda_driver {
#define CUDA_DRIVER_FIELD(name, args) CUresult(*name) args;
  CUDA_DRIVER_FUNCS(CUDA_DRIVER_FIELD)
#undef CUDA_DRIVER_FIELD
  void *handle;    /* dlopen handle; NULL until loaded (the sim's table: its own non-NULL mark) */
  const char *sim; /* NULL: the CUDA driver; else the table serves the sim (its name, "sim:h200"):
                      host memory and launches on the CPU, no vendor library (cuBLASLt, cuDNN)
                      behind it, so a family computes its reference on the host */
} cuda_driver;

/* The loaded table; valid after cuda_driver_load() returned RT_OK. */
extern cuda_driver cu;

/* Loads libcuda.so.1 (or $ROOFTUNE_LIBCUDA) and calls cuInit(0) once.
 * RT_ERR_NO_DRIVER when the library is absent, RT_ERR_NO_GPU when cuInit finds no device. */
rt_status cuda_driver_load(rt_error *err);

/* Makes TABLE (every function filled, handle non-NULL) the loaded driver in place of libcuda:
 * what the sim device installs (tuner/device/sim_driver.h), so the families' GPU code runs
 * unchanged against it; cuda_driver_load() then answers RT_OK without loading anything. */
void cuda_driver_use(const cuda_driver *table);

/* Sets err from a CUresult: "WHAT: CUDA_ERROR_NAME (description)"; returns RT_ERR_CUDA. */
rt_status cuda_check(CUresult r, const char *what, rt_error *err);

typedef struct cuda_gpu_info {
  int ordinal;              /* device index */
  char name[256];           /* "NVIDIA H200" */
  int cc_major, cc_minor;   /* compute capability */
  int sm_count;             /* multiprocessors */
  size_t memory_bytes;      /* global memory */
  int l2_bytes;             /* L2 cache size */
  int clock_khz;            /* SM clock (peak) */
  int mem_clock_khz;        /* memory clock (peak) */
  int bus_width_bits;       /* memory bus width */
  int smem_per_block_optin; /* max dynamic+static shared memory per block after opt-in */
  int smem_per_sm;          /* shared memory per multiprocessor */
  int regs_per_sm;          /* 32-bit registers per multiprocessor */
  int max_threads_per_sm;   /* resident threads per multiprocessor */
  int max_blocks_per_sm;    /* resident blocks per multiprocessor */
} cuda_gpu_info;

/* Driver version (e.g. 12080) in *version; needs a loaded driver. */
rt_status cuda_driver_version(int *version, rt_error *err);
/* Number of GPUs; needs a loaded driver. */
rt_status cuda_gpu_count(int *count, rt_error *err);
/* Facts about GPU `ordinal`. */
rt_status cuda_gpu_query(int ordinal, cuda_gpu_info *info, rt_error *err);

#endif
