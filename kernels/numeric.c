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
  if (e == 31)
    x = sign | 0x7f800000u | (mant << 13);
  else
    x = sign | ((e - 15 + 127) << 23) | (mant << 13);
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

/* One 8-bit float format: exponent bits, mantissa bits, the largest finite code (magnitude)
 * and what an overflow gives without saturation. */
typedef struct fp8_format {
  int ebits, mbits, bias;
  unsigned max_finite; /* 0x7e (e4m3), 0x7b (e5m2) */
  unsigned overflow;   /* 0x7f NaN (e4m3), 0x7c infinity (e5m2) */
  unsigned nan;        /* 0x7f, 0x7e */
} fp8_format;

static const fp8_format fmt_e4m3 = {4, 3, 7, 0x7e, 0x7f, 0x7f};
static const fp8_format fmt_e5m2 = {5, 2, 15, 0x7b, 0x7c, 0x7e};

/* The code of the magnitude nearest to x (x >= 0, finite), ties to even, counting codes past
 * the format's end as if its exponent range went on (the caller saturates).  Exact: every step
 * scales a double by a power of two and rint rounds to nearest even. */
static unsigned fp8_round(const fp8_format *f, double x) {
  const int emin = 1 - f->bias;                   /* exponent of the smallest normal */
  const int emax = (1 << f->ebits) - 1 - f->bias; /* exponent of the largest exponent field */
  if (x == 0) return 0;
  int e;
  frexp(x, &e);
  e -= 1;       /* x = m * 2^e, m in [1, 2) */
  if (e < emin) /* subnormal: multiples of 2^(emin - mbits); 2^mbits is the smallest normal */
    return (unsigned)rint(ldexp(x, f->mbits - emin));
  if (e > emax + 1) return 0x7fffu;              /* far past the end */
  const double q = rint(ldexp(x, f->mbits - e)); /* in [2^mbits, 2^(mbits+1)] */
  return ((unsigned)(e + f->bias) << f->mbits) + (unsigned)q - (1u << f->mbits);
}

static uint8_t fp8_encode(const fp8_format *f, float v, int saturate) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  const unsigned sign = (bits >> 24) & 0x80u;
  if (isnan(v)) return (uint8_t)(sign | f->nan);
  unsigned code = isinf(v) ? 0x7fffu : fp8_round(f, fabs((double)v));
  if (code > f->max_finite) code = saturate ? f->max_finite : f->overflow;
  return (uint8_t)(sign | code);
}

static float fp8_decode(const fp8_format *f, uint8_t x) {
  const unsigned mag = x & 0x7fu, e = mag >> f->mbits, m = mag & ((1u << f->mbits) - 1);
  const unsigned etop = (1u << f->ebits) - 1;
  double v;
  if (f->ebits == 4 && mag == 0x7fu) return NAN;
  if (f->ebits == 5 && e == etop)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp((double)m, 1 - f->bias - f->mbits);
  else
    v = ldexp(1.0 + ldexp((double)m, -f->mbits), (int)e - f->bias);
  return (float)((x & 0x80u) ? -v : v);
}

uint8_t num_f32_to_e4m3(float f, int saturate) { return fp8_encode(&fmt_e4m3, f, saturate); }
uint8_t num_f32_to_e5m2(float f, int saturate) { return fp8_encode(&fmt_e5m2, f, saturate); }
float num_e4m3_to_f32(uint8_t x) { return fp8_decode(&fmt_e4m3, x); }
float num_e5m2_to_f32(uint8_t x) { return fp8_decode(&fmt_e5m2, x); }

uint64_t num_rng(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double num_uniform(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * ((double)(num_rng(s) >> 11) / 9007199254740992.0);
}
