/* toolkit.c — toolkit, NVRTC and cuBLASLt versions. */
#include "compile/toolkit.h"

#include <cublasLt.h>
#include <cuda.h>
#include <nvrtc.h>
#include <string.h>

rt_status toolkit_query(toolkit_info *info, rt_error *err) {
  memset(info, 0, sizeof *info);
  info->cuda_major = CUDA_VERSION / 1000;
  info->cuda_minor = (CUDA_VERSION % 1000) / 10;
  nvrtcResult r = nvrtcVersion(&info->nvrtc_major, &info->nvrtc_minor);
  if (r != NVRTC_SUCCESS)
    return rt_error_set(err, RT_ERR_NVRTC, "nvrtcVersion: %s", nvrtcGetErrorString(r));
  int n = 0;
  if ((r = nvrtcGetNumSupportedArchs(&n)) != NVRTC_SUCCESS)
    return rt_error_set(err, RT_ERR_NVRTC, "nvrtcGetNumSupportedArchs: %s", nvrtcGetErrorString(r));
  int all[256];
  if (n > 256) n = 256;
  if ((r = nvrtcGetSupportedArchs(all)) != NVRTC_SUCCESS)
    return rt_error_set(err, RT_ERR_NVRTC, "nvrtcGetSupportedArchs: %s", nvrtcGetErrorString(r));
  for (int i = 0; i < n && info->arch_count < (int)(sizeof info->archs / sizeof info->archs[0]);
       i++)
    info->archs[info->arch_count++] = all[i];
  info->cublaslt_version = cublasLtGetVersion();
  return RT_OK;
}
