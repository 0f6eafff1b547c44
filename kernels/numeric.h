/* numeric.h — the number formats the families store and the seeded values they fill inputs
 * with: f32 to f16 and bf16 with round-to-nearest-even (NaN kept, overflow to infinity for
 * f16), back to f32 exactly, the two 8-bit float formats of Hopper's tensor cores, and a
 * splitmix64 generator, so the same seed gives the same inputs on every machine.
 *
 * FP8 (the OCP 8-bit floating point formats, as CUDA's __nv_fp8_e4m3 / __nv_fp8_e5m2 and PTX
 * cvt's .e4m3 / .e5m2 define them):
 *   e4m3  1 sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities; S.1111.111 (0x7f,
 *         0xff) is NaN, so the largest finite value is S.1111.110 = 448; smallest normal 2^-6,
 *         subnormals k * 2^-9 (k = 1..7).
 *   e5m2  1 sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like: S.11111.00 is
 *         infinity, S.11111.{01,10,11} NaN; largest finite 57344; smallest normal 2^-14,
 *         subnormals k * 2^-16 (k = 1..3).
 * Encoding rounds to nearest, ties to even, in both the normal and the subnormal range (a
 * value under half the smallest subnormal becomes a signed zero).  NaN becomes the format's
 * NaN (sign kept, 0x7f / 0x7e pattern).  A magnitude that rounds past the largest finite
 * value: with `saturate` (PTX cvt .satfinite, what the tensor-core paths use) it becomes the
 * largest finite value of that sign, infinity included; without, e5m2 gives infinity and e4m3,
 * which has none, NaN (infinity in gives the same). */
#ifndef ROOFTUNE_NUMERIC_H
#define ROOFTUNE_NUMERIC_H

#include <stdint.h>

uint16_t num_f32_to_f16(float f);
uint16_t num_f32_to_bf16(float f);
float num_f16_to_f32(uint16_t h);
float num_bf16_to_f32(uint16_t h);

uint8_t num_f32_to_e4m3(float f, int saturate);
uint8_t num_f32_to_e5m2(float f, int saturate);
float num_e4m3_to_f32(uint8_t x);
float num_e5m2_to_f32(uint8_t x);
/* The largest finite values, 448 and 57344. */
#define NUM_E4M3_MAX 448.0f
#define NUM_E5M2_MAX 57344.0f

/* Element i of the splitmix64 stream that starts at state `seed` (num_hash(seed, 0) is what
 * num_rng gives first from *s == seed): a counter-based generator, so any part of a large input
 * can be made on its own, by several threads at once. */
static inline uint64_t num_hash(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* The next value of a splitmix64 stream with state *s. */
uint64_t num_rng(uint64_t *s);
/* A uniform double in [lo, hi) from the stream (53 random bits). */
double num_uniform(uint64_t *s, double lo, double hi);

#endif
