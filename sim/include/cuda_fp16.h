// cuda_fp16.h for the sim (sim/sim_cuda.hpp): __half as 16 bits and the conversions the
// templates use, rounded as the device rounds (to nearest even).
#pragma once
#include "../sim_cuda.hpp"
struct __align__(2) __half {
  unsigned short x;
};
static inline float __half2float(__half h) { return sim::f16_value(h.x); }
static inline __half __float2half_rn(float f) { return {sim::f16_bits(f)}; }
static inline __half __float2half(float f) { return {sim::f16_bits(f)}; }
