// softmax_common.h — what the softmax family's kernels share: the element type the problem's
// dtype names (the source prefix defines RT_DTYPE_f32, RT_DTYPE_f16 or RT_DTYPE_bf16) and its
// conversions to and from float.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#if defined(RT_DTYPE_f16)
typedef __half elem;
__device__ __forceinline__ float to_float(elem v) { return __half2float(v); }
__device__ __forceinline__ elem from_float(float v) { return __float2half_rn(v); }
#elif defined(RT_DTYPE_bf16)
typedef __nv_bfloat16 elem;
__device__ __forceinline__ float to_float(elem v) { return __bfloat162float(v); }
__device__ __forceinline__ elem from_float(float v) { return __float2bfloat16_rn(v); }
#else
typedef float elem;
__device__ __forceinline__ float to_float(elem v) { return v; }
__device__ __forceinline__ elem from_float(float v) { return v; }
#endif

// -infinity as a float, without <math.h> (NVRTC has none)
#define NEG_INF (__int_as_float(0xff800000u))
