/* toolkit.h — what the CUDA toolkit this rooftune was built with offers, found at run time:
 * the toolkit (header) version, NVRTC's version and the architectures it can target, and the
 * cuBLASLt version.  None of it needs a driver or a GPU. */
#ifndef ROOFTUNE_TOOLKIT_H
#define ROOFTUNE_TOOLKIT_H

#include <stddef.h>

#include "core/status.h"

typedef struct toolkit_info {
  int cuda_major, cuda_minor;   /* CUDA_VERSION of the headers rooftune was built with */
  int nvrtc_major, nvrtc_minor; /* nvrtcVersion() */
  int archs[64];                /* nvrtcGetSupportedArchs(): 80, 86, 89, 90, ... */
  int arch_count;               /* entries used in archs */
  size_t cublaslt_version;      /* cublasLtGetVersion(): 130000 + ... */
} toolkit_info;

rt_status toolkit_query(toolkit_info *info, rt_error *err);

#endif
