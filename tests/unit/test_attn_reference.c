/* test_attn_reference.c — the attention family's reference math (templates/attention/attn_ref.h,
 * the very functions attn_reference.cu calls, composed on the host by attn_ref_row) against an
 * independent double-precision softmax(scale Q K^T) V written here, for every case of
 * attn_abi.h: grouped-query and multi-query heads, the bottom-right causal mask with SQ < SKV,
 * SQ = SKV and SQ > SKV (rows with no key: O = 0, LSE = -inf), SQ = 1 decode, paged K/V through a
 * shuffled block_table with several page sizes, ragged kv_lens (empty sequences included), head
 * dims 64, 128 and 256, f16 and bf16.
 *
 * Independence: the test builds logical K and V as doubles [B][SKV][HKV][D] and its double softmax
 * reads those; only the inputs handed to attn_ref.h are scattered into the paged pools.  Its mask,
 * its heads, its element encoding are its own.  Inputs are multiples of 2^-10 (f16) or 2^-7
 * (bf16) in [-1, 1), exact in the dtype, so both sides see the same numbers.
 *
 * Tolerance: |O - O_double| <= 4e-6 and |LSE - LSE_double| <= 4e-6 * max(1, |LSE|).  A raw fp32
 * score over at most 256 products of magnitude <= 1 is off by at most 256 * 2^-24 ~ 1.5e-5, about
 * 1e-6 after the scale 1/sqrt(D); that moves each weight by a relative 1e-6 and the convex
 * combination O (|O| <= 1) by about as much; expf and the key-order sums add a few ulp.  The
 * largest errors seen are about 1.4e-7.  A wrong key, head, page or mask moves O by far more
 * (of the order of 1/kv_len). */
/* stages: none */
#include "../templates/attention/attn_ref.h"
#include "test.h"

#include <stdint.h>

/* f16 / bf16 bits of a value exactly representable in the dtype (the test's inputs). */
static unsigned short enc(double x, int dtype) {
  float f = (float)x;
  unsigned u;
  memcpy(&u, &f, 4);
  if (dtype == 2) return (unsigned short)(u >> 16);
  const unsigned sign = (u >> 16) & 0x8000u;
  const double ax = fabs(x);
  if (ax == 0) return (unsigned short)sign;
  int e;
  const double fr = frexp(ax, &e); /* ax = fr * 2^e, fr in [0.5, 1) */
  if (e - 1 >= -14)
    return (unsigned short)(sign | (unsigned)(e - 1 + 15) << 10 | (unsigned)((fr * 2 - 1) * 1024));
  return (unsigned short)(sign | (unsigned)(ax * 16777216.0)); /* subnormal: ax / 2^-24 */
}

/* Known encodings decoded by attn_ref.h. */
static void check_elements(void) {
  CHECK(attn_ref_elem(0x3c00, 1) == 1.f);
  CHECK(attn_ref_elem(0xc000, 1) == -2.f);
  CHECK(attn_ref_elem(0x3555, 1) == (float)(0x155 + 1024) / 1024.f / 4.f);
  CHECK(attn_ref_elem(0x0001, 1) == 5.9604644775390625e-8f); /* smallest subnormal, 2^-24 */
  CHECK(attn_ref_elem(0x83ff, 1) == -1023 * 5.9604644775390625e-8f);
  CHECK(attn_ref_elem(0x7bff, 1) == 65504.f);
  CHECK(isinf(attn_ref_elem(0xfc00, 1)) && attn_ref_elem(0xfc00, 1) < 0);
  CHECK(attn_ref_elem(0x8000, 1) == 0.f && signbit(attn_ref_elem(0x8000, 1)));
  CHECK(attn_ref_elem(0x3f80, 2) == 1.f);
  CHECK(attn_ref_elem(0xbfc0, 2) == -1.5f);
  CHECK(attn_ref_elem(0x0001, 2) == ldexpf(1.f, -133));
  for (int k = -1024; k < 1024; k += 7) {
    CHECK(attn_ref_elem(enc(k / 1024.0, 1), 1) == (float)(k / 1024.0));
    CHECK(attn_ref_elem(enc((k / 8) / 128.0, 2), 2) == (float)((k / 8) / 128.0));
  }
  CHECK(attn_ref_elem(enc(3 * 5.9604644775390625e-8, 1), 1) == 3 * 5.9604644775390625e-8f);
}

typedef struct tcase {
  const char *what;
  int B, HQ, HKV, SQ, SKV, D, causal;
  int page_size; /* 0: contiguous */
  int ragged;    /* 1: kv_lens from lens[] */
  int lens[4];
} tcase;

static uint64_t rng = 88172645463325252ull;
static uint32_t next_u32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 32);
}
/* A value in [-1, 1) on the dtype's exact grid. */
static double input_value(int dtype) {
  return dtype == 2 ? ((int)(next_u32() % 256) - 128) / 128.0
                    : ((int)(next_u32() % 2048) - 1024) / 1024.0;
}

static int run_case(const tcase *c, int dtype, double *worst_o, double *worst_lse) {
  const int B = c->B, HQ = c->HQ, HKV = c->HKV, SQ = c->SQ, SKV = c->SKV, D = c->D,
            group = HQ / HKV;
  int kv_lens[4];
  for (int b = 0; b < B; b++) kv_lens[b] = c->ragged ? c->lens[b] : SKV;
  const size_t nq = (size_t)B * SQ * HQ * D, nkv = (size_t)B * SKV * HKV * D;
  double *Qd = malloc(sizeof(double) * nq), *Kd = malloc(sizeof(double) * nkv),
         *Vd = malloc(sizeof(double) * nkv);
  unsigned short *Q = malloc(2 * nq);
  for (size_t x = 0; x < nq; x++) Q[x] = enc(Qd[x] = input_value(dtype), dtype);
  for (size_t x = 0; x < nkv; x++) Kd[x] = input_value(dtype), Vd[x] = input_value(dtype);

  /* device-format K and V: contiguous, or scattered over shuffled pages */
  const int ps = c->page_size, max_pages = ps ? (SKV + ps - 1) / ps : 0;
  int num_pages = 0, *table = NULL;
  size_t pool_rows = (size_t)B * SKV;
  if (ps) {
    num_pages = B * max_pages + 3; /* a few pages nobody uses */
    int *perm = malloc(sizeof(int) * num_pages);
    for (int x = 0; x < num_pages; x++) perm[x] = x;
    for (int x = num_pages - 1; x > 0; x--) {
      int y = (int)(next_u32() % (uint32_t)(x + 1)), t = perm[x];
      perm[x] = perm[y];
      perm[y] = t;
    }
    table = malloc(sizeof(int) * B * max_pages);
    for (int b = 0; b < B; b++)
      for (int p = 0; p < max_pages; p++) /* entries past the sequence's pages are not read: -1 */
        table[b * max_pages + p] = p * ps < kv_lens[b] ? perm[b * max_pages + p] : -1;
    free(perm);
    pool_rows = (size_t)num_pages * ps;
  }
  unsigned short *K = malloc(2 * pool_rows * HKV * D), *V = malloc(2 * pool_rows * HKV * D);
  for (size_t x = 0; x < pool_rows * HKV * D; x++) K[x] = V[x] = 0x7fff; /* NaN in f16 and bf16 */
  for (int b = 0; b < B; b++)
    for (int j = 0; j < SKV; j++) {
      size_t row;
      if (ps) {
        if (j >= kv_lens[b]) continue; /* past the sequence: no page */
        row = (size_t)table[b * max_pages + j / ps] * ps + j % ps;
      } else {
        row = (size_t)b * SKV + j;
      }
      for (int hk = 0; hk < HKV; hk++)
        for (int d = 0; d < D; d++) {
          const size_t lx = (((size_t)b * SKV + j) * HKV + hk) * D + d;
          K[(row * HKV + hk) * D + d] = enc(Kd[lx], dtype);
          V[(row * HKV + hk) * D + d] = enc(Vd[lx], dtype);
        }
    }
  if (c->ragged && !ps) /* keys past kv_len exist in memory but must not be read: NaN */
    for (int b = 0; b < B; b++)
      for (size_t x = (size_t)kv_lens[b] * HKV * D; x < (size_t)SKV * HKV * D; x++)
        K[(size_t)b * SKV * HKV * D + x] = V[(size_t)b * SKV * HKV * D + x] = 0x7fff;

  attn_args a;
  memset(&a, 0, sizeof a);
  a.q = (unsigned long long)(uintptr_t)Q;
  a.k = (unsigned long long)(uintptr_t)K;
  a.v = (unsigned long long)(uintptr_t)V;
  a.block_table = (unsigned long long)(uintptr_t)table;
  a.kv_lens = c->ragged ? (unsigned long long)(uintptr_t)kv_lens : 0;
  a.B = B, a.HQ = HQ, a.HKV = HKV, a.SQ = SQ, a.SKV = SKV, a.D = D, a.causal = c->causal;
  a.page_size = ps, a.max_pages = max_pages, a.num_pages = num_pages;
  a.scale = (float)(1.0 / sqrt((double)D));
  a.scale_log2 = (float)(1.0 / sqrt((double)D) * 1.4426950408889634);

  int bad = 0, empty_rows = 0;
  float o[ATTN_REF_MAX_D];
  double *z = malloc(sizeof(double) * (SKV + 1));
  for (int b = 0; b < B; b++)
    for (int h = 0; h < HQ; h++)
      for (int i = 0; i < SQ; i++) {
        for (int d = 0; d < D; d++) o[d] = NAN;
        float lse = NAN;
        attn_ref_row(&a, dtype, b, i, h, o, &lse);
        /* the double softmax over the keys this row attends */
        const int hk = h / group, kv = kv_lens[b];
        const double scale = 1.0 / sqrt((double)D);
        double m = -INFINITY, l = 0;
        int n = 0;
        for (int j = 0; j < kv; j++) {
          if (c->causal && j > i + kv - SQ) break;
          double s = 0;
          for (int d = 0; d < D; d++)
            s += Qd[(((size_t)b * SQ + i) * HQ + h) * D + d] *
                 Kd[(((size_t)b * SKV + j) * HKV + hk) * D + d];
          z[n++] = scale * s;
          if (scale * s > m) m = scale * s;
        }
        for (int j = 0; j < n; j++) l += exp(z[j] - m);
        if (n == 0) {
          empty_rows++;
          int zero = 1;
          for (int d = 0; d < D; d++) zero &= o[d] == 0.f;
          if (!zero || !(isinf(lse) && lse < 0)) {
            if (bad++ < 3)
              fprintf(stderr,
                      "%s dtype %d: row (b %d, h %d, i %d) has no key: O[0] = %g, LSE = %g, "
                      "expected 0, -inf\n",
                      c->what, dtype, b, h, i, o[0], lse);
          }
          continue;
        }
        const double want_lse = m + log(l);
        double err_lse = fabs(lse - want_lse) / (fabs(want_lse) > 1 ? fabs(want_lse) : 1);
        if (!(err_lse <= 4e-6)) {
          if (bad++ < 3)
            fprintf(stderr, "%s dtype %d: LSE (b %d, h %d, i %d) = %.7g, expected %.7g\n", c->what,
                    dtype, b, h, i, lse, want_lse);
        }
        if (err_lse > *worst_lse) *worst_lse = err_lse;
        for (int d = 0; d < D; d++) {
          double want = 0;
          for (int j = 0; j < n; j++)
            want += exp(z[j] - m) * Vd[(((size_t)b * SKV + j) * HKV + hk) * D + d];
          want /= l;
          const double err = fabs(o[d] - want);
          if (!(err <= 4e-6)) {
            if (bad++ < 3)
              fprintf(stderr, "%s dtype %d: O (b %d, h %d, i %d, d %d) = %.7g, expected %.7g\n",
                      c->what, dtype, b, h, i, d, o[d], want);
          }
          if (err > *worst_o) *worst_o = err;
        }
      }
  printf("%-44s %-4s: %d rows, %d with no key, %s\n", c->what, dtype == 2 ? "bf16" : "f16",
         B * HQ * SQ, empty_rows, bad ? "FAILED" : "ok");
  free(z);
  free(Qd);
  free(Kd);
  free(Vd);
  free(Q);
  free(K);
  free(V);
  free(table);
  return bad == 0;
}

TEST_CASE(references) {
  check_elements();
  static const tcase cases[] = {
      {"MHA, no mask, SQ = SKV = 37, D 64", 2, 2, 2, 37, 37, 64, 0, 0, 0, {0}},
      {"GQA 4:2, causal, SQ = SKV = 50, D 128", 1, 4, 2, 50, 50, 128, 1, 0, 0, {0}},
      {"MQA 3:1, causal, SQ 13 < SKV 70, D 64", 2, 3, 1, 13, 70, 64, 1, 0, 0, {0}},
      {"GQA 4:2, causal, SQ 70 > SKV 20, D 128", 1, 4, 2, 70, 20, 128, 1, 0, 0, {0}},
      {"decode SQ = 1, SKV 200, causal, D 256", 2, 4, 1, 1, 200, 256, 1, 0, 0, {0}},
      {"decode SQ = 1, SKV 129, no mask, D 256", 1, 2, 2, 1, 129, 256, 0, 0, 0, {0}},
      {"no mask, SQ 40 > SKV 9, D 64", 1, 2, 1, 40, 9, 64, 0, 0, 0, {0}},
      {"ragged {17, 0, 64}, no mask, SQ 9, D 64", 3, 2, 2, 9, 64, 64, 0, 0, 1, {17, 0, 64}},
      {"ragged {5, 31, 0}, causal, SQ 12, D 128", 3, 4, 2, 12, 31, 128, 1, 0, 1, {5, 31, 0}},
      {"paged 16, ragged {0, 33, 100}, causal, SQ 5", 3, 4, 2, 5, 100, 64, 1, 16, 1, {0, 33, 100}},
      {"paged 64, no mask, SQ 3, SKV 150, D 128", 2, 2, 1, 3, 150, 128, 0, 64, 0, {0}},
      {"paged 32, ragged {1, 64}, decode, D 256", 2, 8, 2, 1, 64, 256, 1, 32, 1, {1, 64}},
  };
  for (int dtype = 1; dtype <= 2; dtype++) {
    double worst_o = 0, worst_lse = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
      CHECK(run_case(&cases[c], dtype, &worst_o, &worst_lse));
    printf("%s: largest |O - O_double| %.3g, largest relative LSE error %.3g (bound 4e-6)\n",
           dtype == 2 ? "bf16" : "f16", worst_o, worst_lse);
  }
}

TEST_LIST(TEST_ENTRY(references))
