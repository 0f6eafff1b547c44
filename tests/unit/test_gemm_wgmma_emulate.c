/* test_gemm_wgmma_emulate.c — gemm_wgmma's data path for one-byte (fp8) and two-byte (bf16)
 * elements, emulated on the host from the PTX ISA's definitions, through the kernel's own index
 * and epilogue code (gemm_index.h, gemm_epilogue.h).
 *
 * For every output tile and K slab: TMA writes each box (BLOCK_K elements of 128 bytes of K x
 * rows, zero outside the tensor) into a stage in the 128-byte swizzle (16-byte chunk index XOR
 * row % 8); each wgmma (K step ks of gemm_wgmma_k_steps, k32 for fp8 and k16 for bf16) reads A
 * and B through its matrix descriptors (start address from gemm_wgmma_a_start /
 * gemm_wgmma_b_start, LBO, SBO) as the K-major canonical layout defines them — element (row, k)
 * at start + (row % 8) * 128 + (row / 8) * SBO + k * element_bytes, then the swizzle's XOR of
 * address bits 4-6 with bits 7-9 — decodes the bytes as e4m3, e5m2 or bf16, and adds the
 * products into the m64nN accumulator fragment (gemm_wgmma_d_row/_col).  Then the epilogue of
 * the kernel (gemm_epi_apply with the argument's flags, the output rounded to nearest even) and
 * the stores.  The result must match a double-precision product of the same decoded inputs
 * through the family's reference epilogue (gemm_epi_reference) to fp32 accuracy plus the
 * output's rounding, and every output element must be written exactly once, on edge shapes
 * (M, N not multiples of the tile, a K whose last slab is partly outside). */
/* stages: kernels */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm.h"
#include "kernels/numeric.h"
#include "templates/gemm/gemm_epilogue.h"
#include "templates/gemm/gemm_index.h"
#include "test.h"

typedef struct cfg {
  int a_code, b_code; /* gemm_dtype_code: 2 bf16, 4 e4m3, 5 e5m2 */
  int bm, bn, wg;     /* BLOCK_M, BLOCK_N, WARPGROUPS */
  int cl;             /* CLUSTER: blocks along N sharing (multicasting) their A tile */
  int out;            /* GEMM_OUT_* */
  unsigned flags;     /* GEMM_EPI_* */
  int act;            /* GEMM_ACT_* */
} cfg;

static int code_bytes(int c) { return c == 2 ? 2 : 1; }

static double decode(const unsigned char *p, int code) {
  if (code == 2) return num_bf16_to_f32((uint16_t)(p[0] | p[1] << 8));
  return code == GEMM_CODE_E4M3 ? num_e4m3_to_f32(p[0]) : num_e5m2_to_f32(p[0]);
}
static void encode(unsigned char *p, int code, float v) {
  if (code == 2) {
    uint16_t h = num_f32_to_bf16(v);
    p[0] = (unsigned char)h;
    p[1] = (unsigned char)(h >> 8);
  } else {
    p[0] = code == GEMM_CODE_E4M3 ? num_f32_to_e4m3(v, 1) : num_f32_to_e5m2(v, 1);
  }
}
static float scale_of(int code) {
  return code == GEMM_CODE_E4M3   ? 1.0f / NUM_E4M3_MAX
         : code == GEMM_CODE_E5M2 ? 1.0f / NUM_E5M2_MAX
                                  : 1.0f;
}
static float round_out(int out, float v) {
  if (out == GEMM_OUT_BF16) return num_bf16_to_f32(num_f32_to_bf16(v));
  if (out == GEMM_OUT_F16) return num_f16_to_f32(num_f32_to_f16(v));
  return v;
}

/* A wgmma operand element (row, k) of a K-major operand in a 128-byte-swizzled stage (at shared
 * address 0, 1024-aligned), from the descriptor the kernel builds (rt_ptx.h's ptx_desc), decoded
 * as PTX ISA 9.7.15.5.1 defines it: start and SBO fields, swizzle mode 128B; the canonical
 * K-major layout, then the swizzle's XOR of address bits 4-6 with bits 7-9. */
static int desc_bad;
static const unsigned char *desc_read(const unsigned char *stage, unsigned long long desc, int row,
                                      int k, int es) {
  const int start = (int)(desc & 0x3FFF) << 4, sbo = (int)((desc >> 32) & 0x3FFF) << 4;
  if (desc >> 62 != 1) desc_bad++;
  int a = start + (row % 8) * 128 + (row / 8) * sbo + k * es;
  a ^= ((a >> 7) & 7) << 4;
  return stage + a;
}

/* TMA: box (rows x 128 bytes) of a row-major K-contiguous matrix X (rows_total x K elements of
 * es bytes) at (k0, r0) into stage at byte `at` (a stage of `size` bytes), zero outside the
 * matrix.  Returns the bytes that landed (the box's, counted by the full barrier), 0 when the
 * box would land outside the stage (then nothing is written). */
static int tma_box(unsigned char *stage, int at, int size, const unsigned char *X, int rows_total,
                   int K, int es, int r0, int k0, int rows, int box_k) {
  if (at < 0 || at + rows * 128 > size) return 0;
  for (int r = 0; r < rows; r++)
    for (int i = 0; i < box_k; i++)
      for (int b = 0; b < es; b++) {
        const int in = r0 + r < rows_total && k0 + i < K;
        stage[at + ptx_sw128(r, i * es + b)] = in ? X[((size_t)(r0 + r) * K + k0 + i) * es + b] : 0;
      }
  return rows * 128;
}

/* A stage before its loads land: what an earlier slab (or another tile) left, here 0xff bytes,
 * which decode as NaN in e4m3, e5m2 and bf16, so a read of a part nobody loaded poisons the tile. */
static void stale(unsigned char *stage, int size) { memset(stage, 0xff, (size_t)size); }

/* The reference D in double from the decoded inputs and the epilogue's definition
 * (gemm_epi_reference); *rms its root mean square. */
static double *reference(const cfg *c, int M, int N, int K, const unsigned char *A,
                         const unsigned char *B, const float *Cin, const float *bias,
                         const float *R, const float *va, const float *vb, float alpha, float beta,
                         double *rms) {
  const int es = code_bytes(c->a_code), vs = (c->flags & GEMM_EPI_VSCALE) != 0;
  const float sa = scale_of(c->a_code), sb = scale_of(c->b_code);
  gemm_epi e = {0};
  e.beta = !!(c->flags & GEMM_EPI_BETA);
  e.bias = !!(c->flags & GEMM_EPI_BIAS);
  e.residual = !!(c->flags & GEMM_EPI_RES);
  e.act = c->act;
  double *ref = malloc(sizeof(double) * M * N), sq = 0;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double dot = 0;
      for (int k = 0; k < K; k++)
        dot += decode(A + ((size_t)m * K + k) * es, c->a_code) *
               decode(B + ((size_t)n * K + k) * es, c->b_code);
      const size_t at = (size_t)m * N + n;
      const double s_mn = vs ? (double)alpha * va[m] * vb[n] : (double)alpha * sa * sb;
      ref[at] = gemm_epi_reference(&e, s_mn, beta, dot, Cin[at], bias[n], R[at]);
      sq += ref[at] * ref[at];
    }
  *rms = sqrt(sq / (M * (double)N));
  return ref;
}

/* D against the reference REF (of root mean square RMS) within the output type's rounding; the
 * count of elements off (the first three printed) plus those not written exactly once. */
static int output_bad(const cfg *c, int M, int N, int K, const float *D, const unsigned char *cnt,
                      const double *ref, double rms) {
  const int cl = c->cl > 1 ? c->cl : 1;
  const double u = c->out == GEMM_OUT_BF16  ? ldexp(1, -8)
                   : c->out == GEMM_OUT_F16 ? ldexp(1, -11)
                                            : 0;
  int bad = 0, unwritten = 0;
  for (size_t i = 0; i < (size_t)M * N; i++) {
    if (cnt[i] != 1) {
      unwritten++;
      continue;
    }
    const double d = fabs(D[i] - ref[i]), lim = u * fabs(ref[i]) + 3e-6 * rms + 1e-30;
    if (!(d <= lim) && bad++ < 3)
      fprintf(stderr,
              "a %d b %d %dx%d wg %d cluster %d out %d flags %u act %d, %dx%dx%d: D[%zu][%zu] = "
              "%.8g, reference %.8g\n",
              c->a_code, c->b_code, c->bm, c->bn, c->wg, cl, c->out, c->flags, c->act, M, N, K,
              i / N, i % N, D[i], ref[i]);
  }
  if (unwritten)
    fprintf(stderr, "a %d b %d %dx%d, %dx%dx%d: %d elements not written exactly once\n", c->a_code,
            c->b_code, c->bm, c->bn, M, N, K, unwritten);
  return bad + unwritten;
}

static int run(const cfg *c, int M, int N, int K, uint64_t seed) {
  const int es = code_bytes(c->a_code), bk = 128 / es, ksteps = gemm_wgmma_k_steps(bk, es),
            ik = gemm_wgmma_instr_k(es), wg_tiles = c->bm / (64 * c->wg), acc_n = c->bn / 2;
  const float sa = scale_of(c->a_code), sb = scale_of(c->b_code);
  const float alpha = (float)(3.0 / sqrt((double)K)), beta = 0.5f;
  unsigned char *A = malloc((size_t)M * K * es), *B = malloc((size_t)N * K * es);
  float *Cin = malloc(sizeof(float) * M * N), *bias = malloc(sizeof(float) * N),
        *R = malloc(sizeof(float) * M * N);
  float *D = malloc(sizeof(float) * M * N);
  unsigned char *cnt = calloc((size_t)M * N, 1);
  const int cl = c->cl > 1 ? c->cl : 1, a_bytes = c->bm * 128, b_bytes = c->bn * 128;
  /* one A and one B stage per block of the cluster, and each block's accumulators */
  unsigned char *sA = malloc((size_t)cl * a_bytes), *sB = malloc((size_t)cl * b_bytes);
  const size_t acc_per = (size_t)c->wg * wg_tiles * 128 * acc_n;
  float *acc = malloc(sizeof(float) * acc_per * cl);
  int misplaced = 0, bytes_bad = 0;
  float *opA = malloc(sizeof(float) * 64 * 32),
        *opB = malloc(sizeof(float) * 256 * 32); /* operands, k <= 32 */
  uint64_t s = seed;
  for (size_t i = 0; i < (size_t)M * K; i++)
    encode(A + i * es, c->a_code, (float)num_uniform(&s, -1, 1) / sa);
  for (size_t i = 0; i < (size_t)N * K; i++)
    encode(B + i * es, c->b_code, (float)num_uniform(&s, -1, 1) / sb);
  for (int i = 0; i < M * N; i++) Cin[i] = round_out(c->out, (float)num_uniform(&s, -1, 1));
  for (int i = 0; i < M * N; i++) R[i] = round_out(c->out, (float)num_uniform(&s, -1, 1));
  for (int i = 0; i < N; i++) bias[i] = round_out(c->out, (float)num_uniform(&s, -1, 1));
  const int tiles_m = gemm_ceil_div(M, c->bm), tiles_n = gemm_ceil_div(N, c->bn);
  const float sc = alpha * sa * sb;
  /* +vscale: per-row and per-column scales (amax 2^(i%7-3), 2^(i%5-2), as the family seeds) */
  const int vs = (c->flags & GEMM_EPI_VSCALE) != 0;
  float *va = malloc(sizeof(float) * M), *vb = malloc(sizeof(float) * N);
  for (int i = 0; i < M; i++) va[i] = sa * ldexpf(1.0f, i % 7 - 3);
  for (int i = 0; i < N; i++) vb[i] = sb * ldexpf(1.0f, i % 5 - 2);
  const int part_rows = gemm_wgmma_a_part_rows(c->bm, cl);
  for (int u = 0; u < gemm_units(tiles_m, tiles_n, cl); u++) {
    int tm = 0, tn[2] = {0, 0};
    for (int rank = 0; rank < cl; rank++)
      gemm_unit_tile(u, tiles_m, tiles_n, cl, 8, rank, &tm, &tn[rank]);
    const int m0 = tm * c->bm;
    memset(acc, 0, sizeof(float) * acc_per * cl);
    for (int kt = 0; kt < gemm_ceil_div(K, bk); kt++) {
      /* load_stage of every block of the cluster: each block whose part of the A tile lies inside
       * M multicasts it into the same place of every block's stage; each block loads its own B
       * when its tile's first column lies inside N.  Every block's full barrier expects what
       * gemm_wgmma_stage_bytes_es says and must receive exactly that. */
      int landed[2] = {0, 0};
      for (int rank = 0; rank < cl; rank++)
        stale(sA + rank * a_bytes, a_bytes), stale(sB + rank * b_bytes, b_bytes);
      for (int q = 0; q < cl; q++) {
        const int row = gemm_wgmma_a_part_row(q, m0, c->bm, cl);
        if (row >= M) continue;
        for (int rank = 0; rank < cl; rank++) {
          const int got =
              tma_box(sA + rank * a_bytes, gemm_wgmma_a_part_offset(q, c->bm, bk, es, cl), a_bytes,
                      A, M, K, es, row, kt * bk, part_rows, bk);
          if (!got) misplaced++;
          landed[rank] += got;
        }
      }
      for (int rank = 0; rank < cl; rank++) {
        const int n0 = tn[rank] * c->bn;
        if (gemm_wgmma_b_box_in(1, 0, n0, N))
          landed[rank] +=
              tma_box(sB + rank * b_bytes, 0, b_bytes, B, N, K, es, n0, kt * bk, c->bn, bk);
        if (landed[rank] != gemm_wgmma_stage_bytes_es(1, c->bm, c->bn, bk, es, cl, m0, n0, M, N))
          bytes_bad++;
      }
      for (int rank = 0; rank < cl; rank++)
        for (int ks = 0; ks < ksteps; ks++) {
          const unsigned char *sAr = sA + rank * a_bytes, *sBr = sB + rank * b_bytes;
          const int bstart = gemm_wgmma_b_start(1, ks), sbo = gemm_wgmma_b_sbo();
          /* the wgmma's B operand (N x k) through its descriptor, decoded once */
          for (int n = 0; n < c->bn; n++)
            for (int k = 0; k < ik; k++)
              opB[n * 32 + k] = (float)decode(
                  desc_read(sBr, ptx_desc((unsigned)bstart, gemm_wgmma_b_lbo(1, bk), (unsigned)sbo),
                            n, k, es),
                  c->b_code);
          for (int w = 0; w < c->wg; w++)
            for (int mt = 0; mt < wg_tiles; mt++) {
              const int astart = gemm_wgmma_a_start(w * wg_tiles + mt, ks);
              for (int r = 0; r < 64; r++)
                for (int k = 0; k < ik; k++)
                  opA[r * 32 + k] = (float)decode(
                      desc_read(sAr, ptx_desc((unsigned)astart, 16, 1024), r, k, es), c->a_code);
              float *a = acc + rank * acc_per + ((size_t)(w * wg_tiles + mt) * 128) * acc_n;
              for (int t = 0; t < 128; t++)
                for (int i = 0; i < acc_n; i++) {
                  const float *ar = opA + gemm_wgmma_d_row(t, i) * 32,
                              *bc = opB + gemm_wgmma_d_col(t, i) * 32;
                  float sum = 0;
                  for (int k = 0; k < ik; k++) sum += ar[k] * bc[k];
                  a[(size_t)t * acc_n + i] += sum;
                }
            }
        }
    }
    /* the epilogue and the stores, as store_tile walks them (a cluster's tile past N stores nothing) */
    for (int rank = 0; rank < cl; rank++)
      for (int w = 0; w < c->wg; w++)
        for (int mt = 0; mt < wg_tiles; mt++)
          for (int t = 0; t < 128; t++)
            for (int i = 0; i < acc_n; i++) {
              const int row = m0 + (w * wg_tiles + mt) * 64 + gemm_wgmma_d_row(t, i),
                        col = tn[rank] * c->bn + gemm_wgmma_d_col(t, i);
              if (row >= M || col >= N) continue;
              const size_t at = (size_t)row * N + col;
              const float v = gemm_epi_apply(
                  c->flags, c->act, vs ? alpha * va[row] * vb[col] : sc, beta,
                  acc[rank * acc_per + ((size_t)(w * wg_tiles + mt) * 128 + t) * acc_n + i],
                  (c->flags & GEMM_EPI_BETA) ? Cin[at] : 0,
                  (c->flags & GEMM_EPI_BIAS) ? bias[col] : 0,
                  (c->flags & GEMM_EPI_RES) ? R[at] : 0);
              D[at] = round_out(c->out, v);
              cnt[at]++;
            }
  }
  double rms;
  double *ref = reference(c, M, N, K, A, B, Cin, bias, R, va, vb, alpha, beta, &rms);
  const int bad = output_bad(c, M, N, K, D, cnt, ref, rms);
  if (misplaced || bytes_bad)
    fprintf(stderr,
            "a %d b %d %dx%d cluster %d, %dx%dx%d: %d A parts multicast outside the stage, %d "
            "stages whose "
            "landed bytes differ from what the full barrier expects\n",
            c->a_code, c->b_code, c->bm, c->bn, cl, M, N, K, misplaced, bytes_bad);
  free(A);
  free(B);
  free(Cin);
  free(bias);
  free(R);
  free(D);
  free(cnt);
  free(sA);
  free(sB);
  free(acc);
  free(opA);
  free(opB);
  free(ref);
  free(va);
  free(vb);
  if (desc_bad) fprintf(stderr, "%d descriptors without the 128-byte swizzle mode\n", desc_bad);
  return bad == 0 && misplaced == 0 && bytes_bad == 0 && desc_bad == 0 && rms > 0.1;
}

TEST_CASE(tiles) {
  const unsigned BIAS = GEMM_EPI_BIAS, BETA = GEMM_EPI_BETA, RES = GEMM_EPI_RES;
  static cfg cfgs[20];
  int n = 0;
  /* fp8 pairs, bf16; tiles with one and two consumer warpgroups; the epilogues */
  cfgs[n++] = (cfg){GEMM_CODE_E4M3, GEMM_CODE_E4M3, 128, 256, 2, 1, GEMM_OUT_F32, 0, 0};
  cfgs[n++] =
      (cfg){GEMM_CODE_E4M3, GEMM_CODE_E5M2, 64, 128, 1, 1, GEMM_OUT_BF16, BIAS, GEMM_ACT_GELU};
  cfgs[n++] = (cfg){GEMM_CODE_E5M2, GEMM_CODE_E4M3, 256,          128, 2, 1,
                    GEMM_OUT_F16,   BETA | RES,     GEMM_ACT_SILU};
  cfgs[n++] =
      (cfg){GEMM_CODE_E5M2, GEMM_CODE_E5M2, 128, 64, 1, 1, GEMM_OUT_F32, BIAS | RES, GEMM_ACT_RELU};
  cfgs[n++] = (cfg){GEMM_CODE_E4M3, GEMM_CODE_E4M3,         128,          128, 1, 1,
                    GEMM_OUT_BF16,  BIAS | GEMM_EPI_VSCALE, GEMM_ACT_GELU};
  cfgs[n++] = (cfg){2, 2, 128, 128, 1, 1, GEMM_OUT_BF16, BIAS, GEMM_ACT_GELU};
  cfgs[n++] = (cfg){2, 2, 64, 256, 1, 1, GEMM_OUT_F32, BETA | BIAS | RES, GEMM_ACT_RELU};
  /* two-block clusters: each block multicasts its half of the A tile into both blocks' stages,
   * fp8 (128-byte K rows of 128 elements) and bf16 (of 64) */
  cfgs[n++] =
      (cfg){GEMM_CODE_E4M3, GEMM_CODE_E4M3, 128, 128, 1, 2, GEMM_OUT_BF16, BIAS, GEMM_ACT_GELU};
  cfgs[n++] = (cfg){GEMM_CODE_E5M2, GEMM_CODE_E4M3, 256, 64, 2, 2, GEMM_OUT_F32, 0, 0};
  cfgs[n++] = (cfg){GEMM_CODE_E4M3, GEMM_CODE_E5M2, 128, 256, 2, 2, GEMM_OUT_F16, RES, 0};
  cfgs[n++] = (cfg){2, 2, 128, 128, 1, 2, GEMM_OUT_BF16, BIAS, GEMM_ACT_RELU};
  /* edge shapes: rows and columns past the tile, a K whose last slab is mostly outside, one row */
  static const int shapes[][3] = {{70, 136, 384}, {1, 72, 160}, {129, 64, 128}};
  for (int i = 0; i < n; i++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      CHECK(run(&cfgs[i], shapes[s][0], shapes[s][1], shapes[s][2], 7 + 13 * i + s));
}

TEST_CASE(step_arithmetic) {
  /* the step arithmetic by hand: 4 wgmmas per 128-byte row, k32 for fp8, k16 for 16-bit */
  CHECK_INT(gemm_wgmma_k_steps(128, 1), 4);
  CHECK_INT(gemm_wgmma_k_steps(64, 2), 4);
  CHECK_INT(gemm_wgmma_instr_k(1), 32);
  CHECK_INT(gemm_wgmma_instr_k(2), 16);
  CHECK_INT(gemm_wgmma_a_start(3, 2), 3 * 8192 + 64);
}

TEST_CASE(stage_bytes) {
  /* a stage's expected bytes for fp8 are those of bf16 with half the elements of K */
  CHECK_INT(gemm_wgmma_stage_bytes_es(1, 128, 256, 128, 1, 1, 0, 0, 4096, 4096),
            gemm_wgmma_stage_bytes(1, 128, 256, 64, 1, 0, 0, 4096, 4096));
  CHECK_INT(gemm_wgmma_stage_bytes_es(1, 128, 256, 128, 1, 2, 0, 0, 16, 4096), (64 + 256) * 128);
}

TEST_LIST(TEST_ENTRY(tiles), TEST_ENTRY(step_arithmetic), TEST_ENTRY(stage_bytes))
