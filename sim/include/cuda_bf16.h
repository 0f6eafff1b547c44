// cuda_bf16.h for the sim (sim/sim_cuda.hpp): __nv_bfloat16 as 16 bits and the conversions the
// templates use, rounded as the device rounds (to nearest even).
#pragma once
#include "../sim_cuda.hpp"
struct __align__(2) __nv_bfloat16 {
  unsigned short x;
};
static inline float __bfloat162float(__nv_bfloat16 h) { return sim::bf16_value(h.x); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return {sim::bf16_bits(f)}; }
static inline __nv_bfloat16 __float2bfloat16(float f) { return {sim::bf16_bits(f)}; }
