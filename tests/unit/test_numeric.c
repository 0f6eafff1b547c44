/* test_numeric.c — the 8-bit float formats of kernels/numeric.h against their definitions (OCP
 * FP8: e4m3 with bias 7, no infinities and S.1111.111 as NaN; e5m2 with bias 15, IEEE-like).
 * Every code decodes to the value the format's formula gives (written out again here, apart
 * from the library's code); every finite code encodes back to itself; between any two
 * neighbouring codes the midpoint rounds to the even code and the floats just beside it to the
 * nearer code (round-to-nearest-even over the normal and the subnormal range, and into zero);
 * past the largest finite value a value saturates (PTX cvt .satfinite) or, without saturation,
 * becomes infinity (e5m2) or NaN (e4m3); NaN stays NaN with its sign; infinity saturates.  And
 * the two facts the GEMM kernels and reference lean on: an e5m2 byte is the top byte of the f16
 * of its value, and every fp8 value is a bf16 value. */
/* stages: kernels */
#include <math.h>

#include "kernels/numeric.h"
#include "test.h"

typedef struct fmt {
  const char *name;
  int ebits, mbits, bias;
  uint8_t (*enc)(float, int);
  float (*dec)(uint8_t);
  float max;
} fmt;

/* The value of code c by the format's definition (NaN for NaN codes, +-INFINITY for e5m2's
 * infinities). */
static double definition(const fmt *f, unsigned c) {
  const unsigned s = c >> 7, E = (c >> f->mbits) & ((1u << f->ebits) - 1),
                 M = c & ((1u << f->mbits) - 1);
  const unsigned etop = (1u << f->ebits) - 1;
  double v;
  if (f->ebits == 4 && E == etop && M == (1u << f->mbits) - 1) return NAN;
  if (f->ebits == 5 && E == etop) {
    if (M) return NAN;
    v = INFINITY;
  } else if (E == 0) {
    v = (double)M / (1 << f->mbits) * pow(2.0, 1 - f->bias);
  } else {
    v = (1.0 + (double)M / (1 << f->mbits)) * pow(2.0, (double)E - f->bias);
  }
  return s ? -v : v;
}

static int finite_code(const fmt *f, unsigned c) { return isfinite(definition(f, c)); }

static void check_format(const fmt *f) {
  int bad = 0;
  /* decoding every code */
  for (unsigned c = 0; c < 256; c++) {
    double want = definition(f, c), got = f->dec((uint8_t)c);
    if (isnan(want) ? !isnan(got) : got != want) {
      if (bad++ < 5)
        fprintf(stderr, "%s code 0x%02x decodes to %g, the definition says %g\n", f->name, c, got,
                want);
    }
  }
  CHECK_INT(bad, 0);
  /* every finite code encodes back to itself, with or without saturation (-0 keeps its sign) */
  bad = 0;
  for (unsigned c = 0; c < 256; c++)
    if (finite_code(f, c))
      for (int sat = 0; sat <= 1; sat++)
        if (f->enc((float)definition(f, c), sat) != c && bad++ < 5)
          fprintf(stderr, "%s %g encodes to 0x%02x, not 0x%02x\n", f->name, definition(f, c),
                  f->enc((float)definition(f, c), sat), c);
  CHECK_INT(bad, 0);
  /* rounding between neighbours (positive codes c, c+1 and their negatives): the midpoint is
   * exact in float (at most one bit more than the format has) */
  bad = 0;
  int ties = 0;
  for (unsigned c = 0; c < 0x7f; c++) {
    if (!finite_code(f, c) || !finite_code(f, c + 1)) continue;
    const float lo = (float)definition(f, c), hi = (float)definition(f, c + 1), mid = (lo + hi) / 2;
    CHECK((double)mid == ((double)lo + (double)hi) / 2);
    for (int neg = 0; neg <= 1; neg++) {
      const float sg = neg ? -1.0f : 1.0f;
      const unsigned sb = neg ? 0x80u : 0;
      const unsigned even = (c & 1) ? c + 1 : c;
      if (f->enc(sg * mid, 1) != (sb | even)) bad++;
      if (f->enc(sg * nextafterf(mid, 0), 1) != (sb | c)) bad++;
      if (f->enc(sg * nextafterf(mid, INFINITY), 1) != (sb | (c + 1))) bad++;
      ties++;
    }
  }
  CHECK_INT(bad, 0);
  CHECK(ties >= 2 * 0x7a);
  /* under half the smallest subnormal: zero; exactly half: zero (even); just above: 0x01 */
  const float tiny = (float)definition(f, 1);
  CHECK_INT(f->enc(tiny / 2, 1), 0x00);
  CHECK_INT(f->enc(-tiny / 2, 1), 0x80);
  CHECK_INT(f->enc(nextafterf(tiny / 2, 1), 1), 0x01);
  CHECK_INT(f->enc(tiny / 3, 0), 0x00);
  CHECK_INT(f->enc(1e-30f, 0), 0x00);
  /* past the largest finite value: the step after it would be 2^(emax) * 2^-mbits; its
   * midpoint ties to even (the largest finite code is even: 110 / 11 -> the next would be odd
   * for e4m3 and is infinity for e5m2) */
  const unsigned maxc = f->ebits == 4 ? 0x7e : 0x7b;
  CHECK_INT(f->enc(f->max, 0), maxc);
  const float step = (float)(definition(f, maxc) - definition(f, maxc - 1)),
              over_mid = f->max + step / 2;
  CHECK_INT(f->enc(over_mid, 1), maxc);                       /* a tie, saturated */
  CHECK_INT(f->enc(nextafterf(over_mid, 0), 0), maxc);        /* rounds down */
  CHECK_INT(f->enc(nextafterf(over_mid, INFINITY), 1), maxc); /* saturated */
  CHECK_INT(f->enc(-nextafterf(over_mid, INFINITY), 1), 0x80 | maxc);
  CHECK_INT(f->enc(1e30f, 1), maxc);
  CHECK_INT(f->enc(INFINITY, 1), maxc);
  CHECK_INT(f->enc(-INFINITY, 1), 0x80 | maxc);
  if (f->ebits == 4) {                    /* no infinity: an overflow is NaN */
    CHECK_INT(f->enc(over_mid, 0), 0x7e); /* the tie goes to the even (finite) code */
    CHECK_INT(f->enc(nextafterf(over_mid, INFINITY), 0), 0x7f);
    CHECK_INT(f->enc(-1e30f, 0), 0xff);
    CHECK_INT(f->enc(INFINITY, 0), 0x7f);
  } else { /* IEEE: ties to even, which is infinity */
    CHECK_INT(f->enc(over_mid, 0), 0x7c);
    CHECK_INT(f->enc(nextafterf(over_mid, INFINITY), 0), 0x7c);
    CHECK_INT(f->enc(-1e30f, 0), 0xfc);
    CHECK_INT(f->enc(INFINITY, 0), 0x7c);
    CHECK_INT(f->enc(-INFINITY, 0), 0xfc);
    CHECK(isinf(f->dec(0x7c)) && f->dec(0x7c) > 0 && isinf(f->dec(0xfc)) && f->dec(0xfc) < 0);
  }
  /* NaN stays NaN, with or without saturation, and keeps its sign */
  for (int sat = 0; sat <= 1; sat++) {
    CHECK(isnan(f->dec(f->enc(NAN, sat))));
    CHECK(isnan(f->dec(f->enc(-NAN, sat))));
    CHECK_INT(f->enc(-NAN, sat) & 0x80, 0x80);
    CHECK_INT(f->enc(NAN, sat) & 0x80, 0);
  }
  /* seeded values over the whole range: the encoding is a nearest code, found again by a
   * search over all finite codes (a zero keeps the value's sign) */
  uint64_t s = 42;
  bad = 0;
  for (int i = 0; i < 20000; i++) {
    float x = (float)num_uniform(&s, -1.0, 1.0) * f->max * (float)pow(2.0, -(double)(i % 24));
    const unsigned got = f->enc(x, 1);
    double bd = INFINITY;
    for (unsigned c = 0; c < 256; c++)
      if (finite_code(f, c)) bd = fmin(bd, fabs(definition(f, c) - x));
    if (!finite_code(f, got) || (definition(f, got) == 0 && !!signbit(x) != !!(got & 0x80))) bad++;
    if (fabs(definition(f, got) - x) != bd) bad++;
  }
  CHECK_INT(bad, 0);
}

TEST_CASE(formats) {
  static const fmt e4m3 = {"e4m3", 4, 3, 7, num_f32_to_e4m3, num_e4m3_to_f32, NUM_E4M3_MAX};
  static const fmt e5m2 = {"e5m2", 5, 2, 15, num_f32_to_e5m2, num_e5m2_to_f32, NUM_E5M2_MAX};
  check_format(&e4m3);
  check_format(&e5m2);
}

TEST_CASE(hand_codes) {
  /* hand-checked codes (the OCP tables) */
  CHECK_INT(num_f32_to_e4m3(1.0f, 1), 0x38);
  CHECK_INT(num_f32_to_e4m3(-2.0f, 1), 0xc0);
  CHECK_INT(num_f32_to_e4m3(448.0f, 0), 0x7e);
  CHECK_INT(num_f32_to_e4m3(0.001953125f, 0), 0x01); /* 2^-9 */
  CHECK_INT(num_f32_to_e4m3(0.015625f, 0), 0x08);    /* 2^-6, the smallest normal */
  CHECK_INT(num_f32_to_e4m3(0.1f, 0), 0x1d);         /* 0.1015625 */
  CHECK_INT(num_f32_to_e4m3(-0.0f, 0), 0x80);
  CHECK_INT(num_f32_to_e5m2(1.0f, 1), 0x3c);
  CHECK_INT(num_f32_to_e5m2(57344.0f, 0), 0x7b);
  CHECK_INT(num_f32_to_e5m2(1.52587890625e-05f, 0), 0x01); /* 2^-16 */
  CHECK_INT(num_f32_to_e5m2(6.103515625e-05f, 0), 0x04);   /* 2^-14 */
  CHECK_INT(num_f32_to_e5m2(0.1f, 0), 0x2e);               /* 0.09375 */
  CHECK_NEAR(num_e4m3_to_f32(0x7e), 448.0, 0);
  CHECK_NEAR(num_e5m2_to_f32(0x7b), 57344.0, 0);
}

TEST_CASE(e5m2_is_f16_top) {
  /* an e5m2 byte is the top byte of the f16 of the same value (gemm_skinny widens e5m2 so) */
  for (unsigned c = 0; c < 256; c++) {
    const float h = num_f16_to_f32((uint16_t)(c << 8)), e = num_e5m2_to_f32((uint8_t)c);
    CHECK(isnan(e) ? isnan(h) : h == e);
  }
}

TEST_CASE(fp8_in_bf16) {
  /* every fp8 value is a bf16 value: the GEMM family's reference multiplies bf16 copies */
  for (unsigned c = 0; c < 256; c++) {
    float a = num_e4m3_to_f32((uint8_t)c), b = num_e5m2_to_f32((uint8_t)c);
    if (!isnan(a)) CHECK(num_bf16_to_f32(num_f32_to_bf16(a)) == a);
    if (!isnan(b)) CHECK(num_bf16_to_f32(num_f32_to_bf16(b)) == b);
  }
}

TEST_LIST(TEST_ENTRY(formats), TEST_ENTRY(hand_codes), TEST_ENTRY(e5m2_is_f16_top),
          TEST_ENTRY(fp8_in_bf16))
