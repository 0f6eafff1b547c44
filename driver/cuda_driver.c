/* cuda_driver.c — dlopen()s libcuda.so.1 and fills the function table. */
#include "driver/cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cuda_driver cu;
static rt_status load_status = RT_OK;
static int load_tried;
static char load_text[512];

rt_status cuda_check(CUresult r, const char *what, rt_error *err) {
  if (r == CUDA_SUCCESS) return RT_OK;
  const char *name = "CUDA_ERROR_UNKNOWN", *desc = "unknown error";
  if (cu.cuGetErrorName) cu.cuGetErrorName(r, &name);
  if (cu.cuGetErrorString) cu.cuGetErrorString(r, &desc);
  return rt_error_set(err, RT_ERR_CUDA, "%s: %s (%s)", what, name, desc);
}

rt_status cuda_driver_load(rt_error *err) {
  if (load_tried) {
    if (load_status != RT_OK) rt_error_set(err, load_status, "%s", load_text);
    return load_status;
  }
  load_tried = 1;
  const char *path = getenv("ROOFTUNE_LIBCUDA");
  if (!path || !*path) path = "libcuda.so.1";
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    load_status = RT_ERR_NO_DRIVER;
    snprintf(load_text, sizeof load_text,
             "no CUDA driver: %s could not be loaded (install the NVIDIA driver to run kernels)",
             path);
    return rt_error_set(err, load_status, "%s", load_text);
  }
#define CUDA_DRIVER_DLSYM(name, args)                                                         \
  *(void **)(&cu.name) = dlsym(h, #name);                                                     \
  if (!cu.name) {                                                                             \
    load_status = RT_ERR_NO_DRIVER;                                                           \
    snprintf(load_text, sizeof load_text,                                                     \
             "the CUDA driver in %s lacks %s: it is too old for this rooftune", path, #name); \
    dlclose(h);                                                                               \
    memset(&cu, 0, sizeof cu);                                                                \
    return rt_error_set(err, load_status, "%s", load_text);                                   \
  }
  CUDA_DRIVER_FUNCS(CUDA_DRIVER_DLSYM)
#undef CUDA_DRIVER_DLSYM
  cu.handle = h;
  CUresult r = cu.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char *name = "?";
    cu.cuGetErrorName(r, &name);
    load_status = r == CUDA_ERROR_NO_DEVICE ? RT_ERR_NO_GPU : RT_ERR_CUDA;
    snprintf(load_text, sizeof load_text, "the CUDA driver loaded but cuInit failed: %s%s", name,
             r == CUDA_ERROR_NO_DEVICE ? " (no GPU is visible)" : "");
    return rt_error_set(err, load_status, "%s", load_text);
  }
  return RT_OK;
}

void cuda_driver_use(const cuda_driver *table) {
  cu = *table;
  load_tried = 1;
  load_status = RT_OK;
  load_text[0] = '\0';
}

rt_status cuda_driver_version(int *version, rt_error *err) {
  rt_status s = cuda_driver_load(err);
  if (s) return s;
  return cuda_check(cu.cuDriverGetVersion(version), "cuDriverGetVersion", err);
}

rt_status cuda_gpu_count(int *count, rt_error *err) {
  *count = 0;
  rt_status s = cuda_driver_load(err);
  if (s) return s;
  return cuda_check(cu.cuDeviceGetCount(count), "cuDeviceGetCount", err);
}

rt_status cuda_gpu_query(int ordinal, cuda_gpu_info *info, rt_error *err) {
  memset(info, 0, sizeof *info);
  rt_status s = cuda_driver_load(err);
  if (s) return s;
  CUdevice dev;
  if ((s = cuda_check(cu.cuDeviceGet(&dev, ordinal), "cuDeviceGet", err))) return s;
  info->ordinal = ordinal;
  if ((s = cuda_check(cu.cuDeviceGetName(info->name, sizeof info->name, dev), "cuDeviceGetName",
                      err)))
    return s;
  if ((s = cuda_check(cu.cuDeviceTotalMem_v2(&info->memory_bytes, dev), "cuDeviceTotalMem", err)))
    return s;
  struct {
    CUdevice_attribute attr;
    int *out;
  } attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info->cc_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info->cc_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info->sm_count},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &info->l2_bytes},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &info->clock_khz},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &info->mem_clock_khz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &info->bus_width_bits},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info->smem_per_block_optin},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &info->smem_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &info->regs_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &info->max_threads_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, &info->max_blocks_per_sm},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    if ((s = cuda_check(cu.cuDeviceGetAttribute(attrs[i].out, attrs[i].attr, dev),
                        "cuDeviceGetAttribute", err)))
      return s;
  return RT_OK;
}
