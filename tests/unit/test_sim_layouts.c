/* Every layout twin of sim/sim_layout.h, evaluated for every (thread, value), against the
 * definitions it was written from, stated here the way they are published: CuTe's MMA traits
 * (SM80_16x8x16 and SM80_16x8x8 TF32: ALayout, BLayout, CLayout as (thread, value) -> index
 * shape:stride layouts), its ldmatrix copy traits (SM75_U32x4_LDSM_N, SM75_U16x8_LDSM_T: the
 * destination bits), the GMMA accumulator and register-A layouts (CLayout_64xN, ALayout_64x16),
 * CuTe's generic Swizzle<B,M,S> functor at <3,4,3>, the 128-byte-swizzle canonical forms of the
 * wgmma descriptor (PTX ISA 9.7.15.5.1.2) and its bit fields (9.7.15.5.1.1), also against the
 * encoder the kernels use (rt_ptx.h's ptx_desc).  A mismatch names the layout, thread and value. */
/* stages: none */
#include <stdio.h>
#include <string.h>

#include "sim/sim_layout.h"
#include "templates/common/rt_ptx.h"
#include "test.h"

/* A CuTe layout of two modes (thread, value), each a colexicographic list of (size, stride). */
typedef struct mode {
  int n;
  int size[4], stride[4];
} mode;
typedef struct tv_layout {
  mode t, v;
} tv_layout;

static int eval_mode(const mode *m, int coord) {
  int idx = 0;
  for (int i = 0; i < m->n; i++) {
    idx += (coord % m->size[i]) * m->stride[i];
    coord /= m->size[i];
  }
  return idx;
}
static int mode_size(const mode *m) {
  int s = 1;
  for (int i = 0; i < m->n; i++) s *= m->size[i];
  return s;
}
static int eval(const tv_layout *l, int t, int v) {
  return eval_mode(&l->t, t) + eval_mode(&l->v, v);
}

typedef void (*twin_fn)(int t, int v, int *r, int *c);
/* layout l maps (t, v) to r + rows * c (column-major over rows x cols); the twin says (r, c) */
static int check_tv(const char *name, const tv_layout *l, int rows, twin_fn twin) {
  int bad = 0;
  for (int t = 0; t < mode_size(&l->t); t++)
    for (int v = 0; v < mode_size(&l->v); v++) {
      const int idx = eval(l, t, v);
      int r, c;
      twin(t, v, &r, &c);
      if (r != idx % rows || c != idx / rows) {
        if (!bad)
          fprintf(stderr, "%s: thread %d value %d: twin (%d, %d), CuTe (%d, %d)\n", name, t, v, r,
                  c, idx % rows, idx / rows);
        bad++;
      }
    }
  return bad;
}

static void a16816(int t, int v, int *m, int *k) { sim_mma16816_a(t, v, m, k); }
static void b16816(int t, int v, int *n, int *k) {
  int kk, nn;
  sim_mma16816_b(t, v, &kk, &nn);
  *n = nn, *k = kk;
}
static void c_mma(int t, int v, int *m, int *n) { sim_mma_c(t, v, m, n); }
static void a1688(int t, int v, int *m, int *k) { sim_mma1688_a(t, v, m, k); }
static void b1688(int t, int v, int *n, int *k) {
  int kk, nn;
  sim_mma1688_b(t, v, &kk, &nn);
  *n = nn, *k = kk;
}
static void c_gmma(int t, int v, int *m, int *n) { sim_gmma_c(t, v, m, n); }
static void a_gmma(int t, int v, int *m, int *k) { sim_gmma_a16(t, v, m, k); }

TEST_CASE(mma_sync_fragments) {
  /* SM80_16x8x16_F32{F16,BF16}: (T32, V) -> (M, K) / (N, K) / (M, N), column-major */
  const tv_layout A = {{2, {4, 8}, {32, 1}}, {3, {2, 2, 2}, {16, 8, 128}}},
                  B = {{2, {4, 8}, {16, 1}}, {2, {2, 2}, {8, 64}}},
                  C = {{2, {4, 8}, {32, 1}}, {2, {2, 2}, {16, 8}}};
  CHECK_INT(check_tv("m16n8k16 A", &A, 16, a16816), 0);
  CHECK_INT(check_tv("m16n8k16 B", &B, 8, b16816), 0);
  CHECK_INT(check_tv("m16n8k16 C", &C, 16, c_mma), 0);
  /* SM80_16x8x8_F32TF32TF32F32_TN */
  const tv_layout At = {{2, {4, 8}, {16, 1}}, {2, {2, 2}, {8, 64}}},
                  Bt = {{2, {4, 8}, {8, 1}}, {1, {2}, {32}}};
  CHECK_INT(check_tv("m16n8k8 tf32 A", &At, 16, a1688), 0);
  CHECK_INT(check_tv("m16n8k8 tf32 B", &Bt, 8, b1688), 0);
}

TEST_CASE(ldmatrix_fragments) {
  /* destination bits (T32, bit-of-value) -> bit of four 8x8 b16 matrices stored row-major
   * (128 bits a row, 1024 a matrix): LDSM_N ((4,8),(32,4)):((32,128),(1,1024)), LDSM_T
   * ((4,8),(16,2,4)):((256,16),(1,128,1024)) */
  const tv_layout N = {{2, {4, 8}, {32, 128}}, {2, {32, 4}, {1, 1024}}},
                  T = {{2, {4, 8}, {256, 16}}, {3, {16, 2, 4}, {1, 128, 1024}}};
  int bad = 0;
  for (int trans = 0; trans < 2; trans++)
    for (int lane = 0; lane < 32; lane++)
      for (int r = 0; r < 4; r++)
        for (int h = 0; h < 2; h++) {
          const int v = r * 32 + h * 16; /* the first bit of half h of register r */
          const int bit = eval(trans ? &T : &N, lane, trans ? (h + 2 * r) * 16 : v);
          int row, col;
          sim_ldsm(lane, r, h, trans, &row, &col);
          const int want_m = bit / 1024, want_row = bit % 1024 / 128, want_col = bit % 128 / 16;
          if (want_m != r || want_row != row || want_col != col) {
            if (!bad)
              fprintf(stderr,
                      "ldmatrix%s lane %d reg %d half %d: twin (%d, %d), CuTe m%d (%d, %d)\n",
                      trans ? ".trans" : "", lane, r, h, row, col, want_m, want_row, want_col);
            bad++;
          }
        }
  CHECK_INT(bad, 0);
}

TEST_CASE(gmma_fragments) {
  /* CLayout_64xN: ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)); ALayout_64x16 (16-bit RS):
   * ((4,8,4),(2,2,2)):((128,1,16),(64,8,512)) */
  static const int ns[] = {64, 80, 96, 128, 176, 256};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    const tv_layout C = {{3, {4, 8, 4}, {128, 1, 16}}, {3, {2, 2, ns[i] / 8}, {64, 8, 512}}};
    char name[32];
    snprintf(name, sizeof name, "GMMA C 64x%d", ns[i]);
    CHECK_INT(check_tv(name, &C, 64, c_gmma), 0);
  }
  const tv_layout A = {{3, {4, 8, 4}, {128, 1, 16}}, {3, {2, 2, 2}, {64, 8, 512}}};
  CHECK_INT(check_tv("GMMA A 64x16", &A, 64, a_gmma), 0);
}

/* CuTe's Swizzle<B, M, S>: offset ^ ((offset & yyy) >> S), yyy the B bits from M + S */
static unsigned cute_swizzle(unsigned off, int b, int m, int s) {
  const unsigned yyy = ((1u << b) - 1) << (m + s);
  return off ^ ((off & yyy) >> s);
}

TEST_CASE(swizzle_128b) {
  int bad = 0;
  for (unsigned a = 0; a < (1u << 18); a++)
    if (sim_sw128(a) != cute_swizzle(a, 3, 4, 3)) bad++;
  CHECK_INT(bad, 0);
  /* and the kernels' own (rt_ptx.h): byte b of row r of a box at a 1024-aligned start */
  bad = 0;
  for (int r = 0; r < 64; r++)
    for (int b = 0; b < 128; b++)
      if ((unsigned)ptx_sw128(r, b) != sim_sw128((unsigned)(r * 128 + b))) bad++;
  CHECK_INT(bad, 0);
}

TEST_CASE(descriptor_fields_and_canonical_forms) {
  /* the kernels' encoder against the bit fields: start, LBO, SBO >> 4 in 14 bits each at 0, 16,
   * 32; base offset 0; mode 1 (128B) in bits 62-63 */
  for (unsigned addr = 0; addr < (1u << 18); addr += 16 * 37) {
    const unsigned lbo = 16 * (addr % 97), sbo = 1024;
    const sim_desc d = sim_desc_decode(ptx_desc(addr, lbo, sbo));
    CHECK(d.start == addr && d.lbo == lbo && d.sbo == sbo && d.base_offset == 0 && d.mode == 1);
  }
  /* K-major SW128, in bytes: ((8, m), (e)) : ((128, SBO), (es)); MN-major:
   * ((128/es, m), (8, k)) : ((es, LBO), (128, SBO)) (PTX ISA's 8-row, 128-byte core groups) */
  const sim_desc s = {0x4000, 0x2000, 1024, 0, 1};
  int bad = 0;
  for (int es = 1; es <= 2; es++)
    for (int mn = 0; mn < 256; mn++)
      for (int k = 0; k < 64 / es; k++) {
        const mode km = {2, {8, 64}, {128, (int)s.sbo}}, kk = {1, {128}, {es}};
        const mode mm = {2, {128 / es, 8}, {es, (int)s.lbo}}, mk = {2, {8, 8}, {128, (int)s.sbo}};
        const unsigned want_k = s.start + (unsigned)(eval_mode(&km, mn) + eval_mode(&kk, k));
        const unsigned want_mn = s.start + (unsigned)(eval_mode(&mm, mn) + eval_mode(&mk, k));
        bad += sim_desc_kmajor(&s, es, mn, k) != want_k;
        if (k < 16) bad += sim_desc_mnmajor(&s, es, mn, k) != want_mn;
      }
  CHECK_INT(bad, 0);
}

TEST_LIST(TEST_ENTRY(mma_sync_fragments), TEST_ENTRY(ldmatrix_fragments),
          TEST_ENTRY(gmma_fragments), TEST_ENTRY(swizzle_128b),
          TEST_ENTRY(descriptor_fields_and_canonical_forms))
