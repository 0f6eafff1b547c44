#pragma once
#if defined(RT_DTYPE_bf16)
#include <cuda_bf16.h>
typedef __nv_bfloat16 elem;
__device__ __forceinline__ float f(elem v) { return __bfloat162float(v); }
__device__ __forceinline__ elem e(float v) { return __float2bfloat16_rn(v); }
#else
typedef float elem;
__device__ __forceinline__ float f(elem v) { return v; }
__device__ __forceinline__ elem e(float v) { return v; }
#endif
