/* test_attn_decode_math.c — the arithmetic of attn_decode_index.h on its own:
 *   - split and combine: the keys of a row cut into any number of pieces (empty pieces, pieces
 *     whose every key is masked, rows with no key at all), each piece reduced to (m, l, o) by the
 *     kernel's online softmax, the pieces merged with the kernel's merge rules, equal one softmax
 *     over the whole row (O and LSE against double precision); merging in a tree gives the same;
 *     no NaN anywhere;
 *   - the split ranges: contiguous, tile-aligned, balanced, covering [0, kv_len) exactly once,
 *     empty only when there are fewer tiles than splits;
 *   - the K/V addresses: every token of every sequence maps, through the block table, to its
 *     page row (pages scattered by a random permutation), distinct tokens to distinct rows
 *     inside the pool; contiguous offsets as the ABI says; 64-bit offsets past 2^31;
 *   - the causal bound per query, the LSE of a merged state;
 *   - the partial-buffer layout: every (group, split, row, column) and (m, l) entry distinct and
 *     inside B*HQ*SQ*SPLITS*(D+2) floats;
 *   - the tile-load lane mapping covers a tile exactly once; the shared-memory swizzle is a
 *     bijection within each row and the eight rows an ldmatrix matrix (or a cp.async wave) reads
 *     fall into eight different 16-byte bank groups. */
/* stages: none */
#include <math.h>
#include <stdint.h>

#include "../templates/attention/attn_decode_index.h"
#include "test.h"

static uint64_t rng_state = 42;
static uint32_t rng(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}
static double urand(void) { return (double)rng() / 2147483648.0 - 1.0; }

#define DV 8 /* columns of V in the merge tests */

typedef struct state {
  float m, l, o[DV];
} state;

/* The kernel's online softmax over keys [a, b) of a row (log2-domain scores x, -inf masked),
 * in chunks of `chunk` keys as its tiles do. */
static state reduce(const float *x, const float (*v)[DV], int a, int b, int chunk) {
  state s = {ATTN_NEG_INF, 0, {0}};
  for (int c0 = a; c0 < b; c0 += chunk) {
    const int c1 = c0 + chunk < b ? c0 + chunk : b;
    float mx = ATTN_NEG_INF;
    for (int j = c0; j < c1; j++) mx = attn_fmax(mx, x[j]);
    const float mn = attn_fmax(s.m, mx), eb = attn_exp_base(mn), alpha = ptx_exp2(s.m - eb);
    float rs = 0, po[DV] = {0};
    for (int j = c0; j < c1; j++) {
      const float p = ptx_exp2(x[j] - eb);
      rs += p;
      for (int d = 0; d < DV; d++) po[d] += p * v[j][d];
    }
    s.l = s.l * alpha + rs;
    for (int d = 0; d < DV; d++) s.o[d] = s.o[d] * alpha + po[d];
    s.m = mn;
  }
  return s;
}

/* The kernel's merge of n states: M = max m, weights attn_merge_weight, L = sum w l. */
static state merge(const state *s, int n) {
  state r = {ATTN_NEG_INF, 0, {0}};
  for (int i = 0; i < n; i++) r.m = attn_fmax(r.m, s[i].m);
  for (int i = 0; i < n; i++) {
    const float w = attn_merge_weight(s[i].m, r.m);
    r.l += w * s[i].l;
    for (int d = 0; d < DV; d++) r.o[d] += w * s[i].o[d];
  }
  return r;
}

static int all_finite(const state *s) {
  if (isnan(s->m) || !isfinite(s->l)) return 0;
  for (int d = 0; d < DV; d++)
    if (!isfinite(s->o[d])) return 0;
  return 1;
}

/* Checks a merged state against the double softmax of the row. */
static void check_state(const state *s, const float *x, const float (*v)[DV], int n,
                        const char *what) {
  double mx = -INFINITY, sum = 0, o[DV] = {0};
  for (int j = 0; j < n; j++)
    if (x[j] > mx) mx = x[j];
  for (int j = 0; j < n && isfinite(mx); j++) {
    const double w = exp2((double)x[j] - mx);
    sum += w;
    for (int d = 0; d < DV; d++) o[d] += w * v[j][d];
  }
  const double lse = sum > 0 ? (mx + log2(sum)) * log(2.0) : -INFINITY;
  CHECK(all_finite(s));
  const float sc = attn_out_scale(s->l), L = attn_lse(s->m, s->l);
  if (sum > 0) {
    CHECK_NEAR(L, lse, 1e-4 * (1 + fabs(lse)));
    for (int d = 0; d < DV; d++) CHECK_NEAR(s->o[d] * sc, o[d] / sum, 2e-5);
  } else {
    CHECK(isinf(L) && L < 0);
    CHECK(sc == 0.f);
    for (int d = 0; d < DV; d++) CHECK(s->o[d] * sc == 0.f);
  }
  if (test_failures) fprintf(stderr, "  (in %s, n %d)\n", what, n);
}

TEST_CASE(split_combine) {
  enum { N = 300 };
  static float x[N], v[N][DV];
  const int fails0 = test_failures;
  for (int trial = 0; trial < 400 && test_failures == fails0; trial++) {
    const int n = (int)(rng() % N);
    const int mode = trial % 4; /* 0 plain, 1 some keys masked, 2 all masked, 3 wide range */
    for (int j = 0; j < n; j++) {
      x[j] = (float)(mode == 3 ? 40 * urand() : 3 * urand());
      if (mode == 1 && rng() % 3 == 0) x[j] = ATTN_NEG_INF;
      if (mode == 2) x[j] = ATTN_NEG_INF;
      for (int d = 0; d < DV; d++) v[j][d] = (float)urand();
    }
    /* a masked stretch: a piece with keys but no attended key */
    if (mode == 1 && n > 20)
      for (int j = 5; j < 15; j++) x[j] = ATTN_NEG_INF;
    /* pieces: cut points anywhere (repeats give empty pieces), 1..24 of them */
    const int pieces = 1 + (int)(rng() % 24);
    int cut[26];
    cut[0] = 0;
    cut[pieces] = n;
    for (int i = 1; i < pieces; i++) cut[i] = n ? (int)(rng() % (uint32_t)(n + 1)) : 0;
    for (int i = 1; i < pieces; i++) /* sort the inner cuts */
      for (int k = i + 1; k < pieces; k++)
        if (cut[k] < cut[i]) {
          const int t = cut[i];
          cut[i] = cut[k];
          cut[k] = t;
        }
    state st[25];
    const int chunk = 1 + (int)(rng() % 40);
    for (int i = 0; i < pieces; i++) {
      st[i] = reduce(x, (const float(*)[DV])v, cut[i], cut[i + 1], chunk);
      CHECK(all_finite(&st[i]));
    }
    state all = merge(st, pieces);
    check_state(&all, x, (const float(*)[DV])v, n, "linear merge");
    /* a tree: pairs, then pairs of pairs (what a block merge followed by a split merge does) */
    state lvl[25];
    int cnt = pieces;
    memcpy(lvl, st, sizeof(state) * (size_t)pieces);
    while (cnt > 1) {
      int k = 0;
      for (int i = 0; i < cnt; i += 2) lvl[k++] = i + 1 < cnt ? merge(lvl + i, 2) : lvl[i];
      cnt = k;
    }
    check_state(&lvl[0], x, (const float(*)[DV])v, n, "tree merge");
    /* one piece, in one chunk: the kernel's SPLITS 1 */
    state one = reduce(x, (const float(*)[DV])v, 0, n, n ? n : 1);
    check_state(&one, x, (const float(*)[DV])v, n, "one piece");
  }
  /* the edge values themselves */
  CHECK(attn_exp_base(ATTN_NEG_INF) == 0.f);
  CHECK(attn_merge_weight(ATTN_NEG_INF, ATTN_NEG_INF) == 0.f);
  CHECK(attn_merge_weight(ATTN_NEG_INF, 3.f) == 0.f);
  CHECK(attn_merge_weight(2.f, 2.f) == 1.f);
  CHECK_NEAR(attn_merge_weight(1.f, 3.f), 0.25, 1e-7);
  CHECK(isinf(attn_lse(ATTN_NEG_INF, 0.f)) && attn_lse(ATTN_NEG_INF, 0.f) < 0);
  CHECK_NEAR(attn_lse(1.f, 4.f), 3.0 * log(2.0), 1e-6);
}

TEST_CASE(split_ranges) {
  const int fails0 = test_failures;
  for (int kv_len = 0; kv_len <= 300 && test_failures == fails0; kv_len++)
    for (int bn = 16; bn <= 128; bn *= 2)
      for (int splits = 1; splits <= 40; splits++) {
        const int tiles = (kv_len + bn - 1) / bn;
        int next = 0, tmin = 1 << 30, tmax = -1, empty = 0;
        for (int s = 0; s < splits; s++) {
          int b0, b1;
          attn_split_range(kv_len, bn, splits, s, &b0, &b1);
          CHECK_INT(b0, next); /* contiguous, in order, no gap, no overlap */
          CHECK(b1 >= b0);
          CHECK(b0 % bn == 0 || b0 == kv_len); /* starts on a tile */
          CHECK(b1 % bn == 0 || b1 == kv_len);
          const int t = attn_tiles(b0, b1, bn);
          if (t < tmin) tmin = t;
          if (t > tmax) tmax = t;
          empty += b0 == b1;
          next = b1;
        }
        CHECK_INT(next, kv_len);
        CHECK(tmax - tmin <= 1);
        CHECK(empty == 0 || tiles < splits);
        if (test_failures != fails0) {
          fprintf(stderr, "  (kv_len %d, BLOCK_N %d, SPLITS %d)\n", kv_len, bn, splits);
          break;
        }
      }
}

TEST_CASE(addresses) {
  /* paged: B sequences of ragged lengths in pages scattered by a permutation */
  static const int pages[] = {16, 32, 64};
  for (int pi = 0; pi < 3; pi++) {
    const int P = pages[pi], B = 5, HKV = 3, D = 64, SKV = 333;
    const int max_pages = (SKV + P - 1) / P;
    int lens[5], used = 0;
    for (int b = 0; b < B; b++) {
      lens[b] = b == 0 ? 0 : b == 1 ? 1 : b == 2 ? P : (int)(rng() % (SKV + 1));
      used += (lens[b] + P - 1) / P;
    }
    const int num_pages = used + 2;
    int *perm = malloc(sizeof(int) * (size_t)num_pages),
        *table = malloc(sizeof(int) * (size_t)(B * max_pages));
    for (int i = 0; i < num_pages; i++) perm[i] = i;
    for (int i = num_pages - 1; i > 0; i--) {
      const int j = (int)(rng() % (uint32_t)(i + 1)), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    int k = 0;
    for (int b = 0; b < B; b++)
      for (int j = 0; j < max_pages; j++)
        table[b * max_pages + j] = j * P < lens[b] ? perm[k++] : -1;
    const long long pool_rows = (long long)num_pages * P;
    char *seen = calloc((size_t)(pool_rows * HKV), 1);
    int bad = 0;
    for (int b = 0; b < B; b++)
      for (int t = 0; t < lens[b]; t++) {
        const long long ti = attn_table_index(b, t, P, max_pages);
        if (ti < b * (long long)max_pages || ti >= (b + 1) * (long long)max_pages ||
            table[ti] < 0) {
          bad++;
          continue;
        }
        for (int h = 0; h < HKV; h++) {
          const long long off = attn_kv_offset(P, table[ti], b, t, SKV, HKV, h, D);
          /* the ABI: page block_table[b*max_pages + t/page], row t % page, [pages, page, HKV, D] */
          const long long want =
              (((long long)table[b * max_pages + t / P] * P + t % P) * HKV + h) * D;
          if (off != want || off % D || off < 0 || off / D >= pool_rows * HKV || seen[off / D])
            bad++;
          else
            seen[off / D] = 1;
        }
      }
    CHECK_INT(bad, 0);
    free(seen);
    free(perm);
    free(table);
  }
  /* contiguous, and 64-bit offsets: 64 x 131072 x 8 x 128 elements is 2^33 */
  CHECK(attn_kv_offset(0, 0, 3, 7, 100, 2, 1, 64) == ((3LL * 100 + 7) * 2 + 1) * 64);
  CHECK(attn_kv_offset(0, 0, 63, 131071, 131072, 8, 7, 128) ==
        ((63LL * 131072 + 131071) * 8 + 7) * 128);
  CHECK(attn_kv_offset(64, 2000000, 0, 63, 0, 8, 7, 128) == ((2000000LL * 64 + 63) * 8 + 7) * 128);
  CHECK(attn_table_index(40000, 100000, 16, 70000) == 40000LL * 70000 + 100000 / 16);
  CHECK(attn_q_offset(63, 7, 63, 8, 64, 256) == ((63LL * 8 + 7) * 64 + 63) * 256);
  CHECK(attn_lse_offset(63, 63, 7, 64, 8) == (63LL * 64 + 63) * 8 + 7);
  CHECK(attn_work_o(65535, 31, 63, 32, 64, 256) == ((65535LL * 32 + 31) * 64 + 63) * 256);
}

TEST_CASE(causal) {
  for (int kv_len = 0; kv_len <= 20; kv_len++)
    for (int SQ = 1; SQ <= 8; SQ++)
      for (int i = 0; i < SQ; i++) {
        int want = 0;
        for (int j = 0; j < kv_len; j++) want += j <= i + kv_len - SQ;
        CHECK_INT(attn_key_bound(kv_len, SQ, i, 1), want);
        CHECK_INT(attn_key_bound(kv_len, SQ, i, 0), kv_len);
        CHECK(attn_key_bound(kv_len, SQ, 0, 1) <=
              attn_key_bound(kv_len, SQ, i, 1)); /* query 0 bounds the mask */
      }
}

TEST_CASE(work_layout) {
  const int B = 3, HKV = 2, D = 64;
  static const int groups[] = {1, 4, 8}, sqs[] = {1, 4}, splitss[] = {2, 5, 16};
  for (int gi = 0; gi < 3; gi++)
    for (int qi = 0; qi < 2; qi++)
      for (int si = 0; si < 3; si++) {
        const int group = groups[gi], SQ = sqs[qi], S = splitss[si], rows = group * SQ,
                  HQ = HKV * group;
        const long long total_rows = (long long)B * HQ * SQ, n = total_rows * S * (D + 2);
        char *seen = calloc((size_t)n, 1);
        int bad = 0;
        for (int bg = 0; bg < B * HKV; bg++)
          for (int s = 0; s < S; s++)
            for (int r = 0; r < rows; r++) {
              for (int d = 0; d < D; d++) {
                const long long i = attn_work_o(bg, s, r, S, rows, D) + d;
                if (i < 0 || i >= n || seen[i]++) bad++;
              }
              for (int x = 0; x < 2; x++) {
                const long long i = attn_work_ml(bg, s, r, S, rows, D, total_rows) + x;
                if (i < 0 || i >= n || seen[i]++) bad++;
              }
              /* 16-byte alignment of the o vectors (float4 stores and loads) */
              if (attn_work_o(bg, s, r, S, rows, D) % 4) bad++;
            }
        CHECK_INT(bad, 0);
        free(seen);
      }
}

TEST_CASE(loads_and_swizzle) {
  /* every piece of a tile loaded once, for the layouts the manifest allows */
  for (int D = 64; D <= 256; D *= 2)
    for (int vec = 4; vec <= 8; vec *= 2)
      for (int threads = 32; threads <= 256; threads *= 2)
        for (int bn = 16; bn <= 128; bn *= 2) {
          const int cpr = D / vec;
          if ((bn * cpr) % threads) continue;
          const int iters = bn * cpr / threads;
          char *seen = calloc((size_t)(bn * cpr), 1);
          int bad = 0;
          for (int t = 0; t < threads; t++)
            for (int i = 0; i < iters; i++) {
              const int r = attn_load_row(t, i, threads, cpr),
                        p = attn_load_piece(t, i, threads, cpr);
              if (r < 0 || r >= bn || p < 0 || p >= cpr || seen[r * cpr + p]++) bad++;
            }
          CHECK_INT(bad, 0);
          free(seen);
        }
  for (int rb = 128; rb <= 512; rb *= 2) {
    int bad = 0;
    for (int row = 0; row < 32; row++) {
      char seen[512] = {0};
      for (int byte = 0; byte < rb; byte++) {
        const int off = attn_swz(row, byte, rb);
        if (off < row * rb || off >= (row + 1) * rb || seen[off - row * rb]++) bad++;
        /* the same formula as the plain XOR swizzle */
        if (off != row * rb + ((((byte / 16) ^ (row % 8)) * 16) | (byte % 16))) bad++;
      }
    }
    /* conflict-free phases: 8 consecutive rows, one chunk -> 8 distinct bank groups */
    for (int row0 = 0; row0 < 32; row0 += 8)
      for (int chunk = 0; chunk < rb / 16; chunk++) {
        int groups = 0;
        for (int r = row0; r < row0 + 8; r++)
          groups |= 1 << ((attn_swz(r, chunk * 16, rb) / 16) % 8);
        if (groups != 0xff) bad++;
      }
    CHECK_INT(bad, 0);
  }
  /* the ldmatrix lane addresses: each of the four matrices is 8 distinct rows of one chunk */
  for (int lane = 0; lane < 32; lane++) {
    CHECK_INT(attn_ldsm_q(16, 3, lane, 256), attn_swz(16 + lane % 16, (6 + lane / 16) * 16, 256));
    CHECK_INT(attn_ldsm_k(32, 1, lane, 128),
              attn_swz(32 + lane % 8 + 8 * (lane / 16), (2 + (lane / 8) % 2) * 16, 128));
    CHECK_INT(attn_ldsm_v(16, 32, lane, 512), attn_swz(16 + lane % 16, (4 + lane / 16) * 16, 512));
  }
}

TEST_LIST(TEST_ENTRY(split_combine), TEST_ENTRY(split_ranges), TEST_ENTRY(addresses),
          TEST_ENTRY(causal), TEST_ENTRY(work_layout), TEST_ENTRY(loads_and_swizzle))
