/* numeric.c — number formats and seeded values (see numeric.h). */
#include "kernels/numeric.h"

#include <math.h>
#include <string.h>

uint16_t num_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
  if (e == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  int exp = (int)e - 127 + 15;
  if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) { /* subnormal half (or zero) */
    if (exp < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    int shift = 14 - exp;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++; /* a carry rounds into the exponent */
  return (uint16_t)(sign | h);
}

uint16_t num_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

float num_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
  if (e == 0) {
    float v = ldexpf((float)mant, -24);
    return sign ? -v : v;
  }
  if (e == 31) x = sign | 0x7f800000u | (mant << 13);
  else x = sign | ((e - 15 + 127) << 23) | (mant << 13);
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

float num_bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

uint64_t num_rng(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double num_uniform(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * ((double)(num_rng(s) >> 11) / 9007199254740992.0);
}
