/* test_gemm_mma_emulate.c — gemm_mma's data path emulated on the host from the PTX ISA's
 * definitions, so the address math the kernel uses (gemm_index.h: ldmatrix lane offsets,
 * direct tf32 reads, store coordinates, split-K ranges, swizzle) is checked end to end without
 * a GPU.  Shared memory tiles are filled as load_tile fills them (padded pitches of the
 * kernel); ldmatrix (.x4, .x4.trans) delivers to each lane what PTX 9.7.9.29 says it does for
 * the addresses the kernel computes; mma.m16n8k16 / m16n8k8 (tf32) take their A, B and C
 * fragments at the positions of PTX 9.7.14.5.8 / 9.7.14.5.7.  The result must equal a plain
 * matrix product exactly (small integer inputs), for f16-style (2-byte) and tf32 (4-byte)
 * elements, B stored K x N and N x K, several tiles, split-K and edge shapes. */
#include "../templates/gemm/gemm_index.h"
#include "test.h"

typedef struct cfg { int bm, bn, bk, wm, wn, es, bcol, split, swz; } cfg;

/* shared memory: one float per element, element i at byte i*es */
static float *smA, *smB;
static int A_LD, B_LD;

/* ldmatrix.x4 (optionally .trans) over array `sm` with per-lane byte addresses: out[lane][j]
 * receives the 32-bit register j as 1 (es 4) or 2 (es 2) elements. */
static void ldsm(const float *sm, int es, const int addr[32], int trans, float out[32][4][2]) {
  for (int t = 0; t < 32; t++)
    for (int j = 0; j < 4; j++) {
      if (!trans) { /* row t/4 of matrix j, bytes 4*(t%4) .. +3 */
        int byte = addr[8 * j + t / 4] + 4 * (t % 4);
        if (es == 2) {
          out[t][j][0] = sm[byte / 2];
          out[t][j][1] = sm[byte / 2 + 1];
        } else {
          out[t][j][0] = sm[byte / 4];
        }
      } else { /* 16-bit: rows 2*(t%4) and 2*(t%4)+1 of matrix j, column t/4 */
        out[t][j][0] = sm[(addr[8 * j + 2 * (t % 4)] + 2 * (t / 4)) / 2];
        out[t][j][1] = sm[(addr[8 * j + 2 * (t % 4) + 1] + 2 * (t / 4)) / 2];
      }
    }
}

/* mma.sync: c[lane][4] += A(16 x k) B(k x 8) from fragments a[lane][4][2], b[lane][2][2]. */
static void mma(int es, float a[32][4][2], float b[32][2][2], float c[32][4]) {
  float A[16][16] = {{0}}, B[16][8] = {{0}};
  const int kk = es == 2 ? 16 : 8;
  for (int t = 0; t < 32; t++) {
    int g = t / 4, tig = t % 4;
    if (es == 2) {
      for (int i = 0; i < 8; i++) A[g + 8 * ((i / 2) % 2)][2 * tig + i % 2 + 8 * (i / 4)] = a[t][i / 2][i % 2];
      for (int i = 0; i < 4; i++) B[2 * tig + i % 2 + 8 * (i / 2)][g] = b[t][i / 2][i % 2];
    } else {
      for (int i = 0; i < 4; i++) A[g + 8 * (i % 2)][tig + 4 * (i / 2)] = a[t][i][0];
      for (int i = 0; i < 2; i++) B[tig + 4 * i][g] = b[t][i][0];
    }
  }
  for (int t = 0; t < 32; t++)
    for (int i = 0; i < 4; i++) {
      int r = gemm_mma_c_row(t, i), col = gemm_mma_c_col(t, i);
      float s = 0;
      for (int k = 0; k < kk; k++) s += A[r][k] * B[k][col];
      c[t][i] += s;
    }
}

/* The kernel on the host: every block, slice, warp and lane. */
static int run(const cfg *c, int M, int N, int K) {
  const int WTM = c->bm / c->wm, WTN = c->bn / c->wn, MI = WTM / 16, NI = WTN / 8;
  const int kstep = 32 / c->es;
  A_LD = c->bk + 16 / c->es;
  B_LD = c->bcol ? c->bk + 16 / c->es : c->bn + 8;
  float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
  float *C = calloc((size_t)M * N, sizeof(float)), *R = calloc((size_t)M * N, sizeof(float));
  smA = calloc((size_t)c->bm * A_LD, sizeof(float));
  smB = calloc((size_t)(c->bcol ? c->bn * B_LD : c->bk * B_LD), sizeof(float));
  for (int i = 0; i < M * K; i++) A[i] = (float)((i * 7 + 3) % 5 - 2);
  for (int i = 0; i < K * N; i++) B[i] = (float)((i * 11 + 1) % 5 - 2);
  /* Bk(k, n): the math's B; stored N x K when bcol */
#define BK_(k, n) (c->bcol ? B[(size_t)(n) * K + (k)] : B[(size_t)(k) * N + (n)])
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      float s = 0;
      for (int k = 0; k < K; k++) s += A[(size_t)m * K + k] * BK_(k, n);
      R[(size_t)m * N + n] = s;
    }
  const int tiles_m = gemm_ceil_div(M, c->bm), tiles_n = gemm_ceil_div(N, c->bn);
  float(*acc)[32][4] = malloc(sizeof(float) * 32 * 4 * MI * NI * c->wm * c->wn);
  for (int pid = 0; pid < tiles_m * tiles_n; pid++) {
    int tm, tn;
    gemm_swizzle(pid, tiles_m, tiles_n, c->swz, &tm, &tn);
    const int m0 = tm * c->bm, n0 = tn * c->bn;
    for (int slice = 0; slice < c->split; slice++) {
      int kb, ke;
      gemm_split_range(gemm_ceil_div(K, c->bk), c->split, slice, &kb, &ke);
      memset(acc, 0, sizeof(float) * 32 * 4 * MI * NI * c->wm * c->wn);
      for (int kt = kb; kt < ke; kt++) {
        const int k0 = kt * c->bk;
        for (int r = 0; r < c->bm; r++)
          for (int k = 0; k < c->bk; k++)
            smA[r * A_LD + k] = m0 + r < M && k0 + k < K ? A[(size_t)(m0 + r) * K + k0 + k] : 0;
        if (c->bcol) {
          for (int r = 0; r < c->bn; r++)
            for (int k = 0; k < c->bk; k++) smB[r * B_LD + k] = n0 + r < N && k0 + k < K ? BK_(k0 + k, n0 + r) : 0;
        } else {
          for (int k = 0; k < c->bk; k++)
            for (int n = 0; n < c->bn; n++) smB[k * B_LD + n] = k0 + k < K && n0 + n < N ? BK_(k0 + k, n0 + n) : 0;
        }
        for (int w = 0; w < c->wm * c->wn; w++) {
          const int warp_m = w / c->wn, warp_n = w % c->wn;
          for (int ks = 0; ks < c->bk / kstep; ks++) {
            static float af[8][32][4][2], bf[16][32][2][2];
            for (int mi = 0; mi < MI; mi++) {
              int addr[32];
              for (int l = 0; l < 32; l++) addr[l] = gemm_ldsm_a_offset(warp_m * WTM + mi * 16, ks, l, A_LD * c->es);
              ldsm(smA, c->es, addr, 0, af[mi]);
            }
            for (int nj = 0; nj < NI / 2; nj++) {
              float r[32][4][2];
              int addr[32];
              if (c->bcol || c->es == 2) {
                for (int l = 0; l < 32; l++)
                  addr[l] = c->bcol ? gemm_ldsm_bcol_offset(warp_n * WTN + nj * 16, ks, l, B_LD * c->es)
                                    : gemm_ldsm_brow_offset(warp_n * WTN + nj * 16, ks, kstep, l, B_LD * c->es, c->es);
                ldsm(smB, c->es, addr, !c->bcol, r);
                for (int l = 0; l < 32; l++)
                  for (int e = 0; e < 2; e++) {
                    bf[2 * nj][l][0][e] = r[l][0][e];
                    bf[2 * nj][l][1][e] = r[l][1][e];
                    bf[2 * nj + 1][l][0][e] = r[l][2][e];
                    bf[2 * nj + 1][l][1][e] = r[l][3][e];
                  }
              } else {
                for (int t = 0; t < 2; t++)
                  for (int l = 0; l < 32; l++) {
                    int nb = warp_n * WTN + (2 * nj + t) * 8;
                    bf[2 * nj + t][l][0][0] = smB[gemm_tf32_brow_index(nb, ks, l, 0, B_LD)];
                    bf[2 * nj + t][l][1][0] = smB[gemm_tf32_brow_index(nb, ks, l, 1, B_LD)];
                  }
              }
            }
            for (int mi = 0; mi < MI; mi++)
              for (int ni = 0; ni < NI; ni++) mma(c->es, af[mi], bf[ni], acc[(w * MI + mi) * NI + ni]);
          }
        }
      }
      for (int w = 0; w < c->wm * c->wn; w++)
        for (int mi = 0; mi < MI; mi++)
          for (int ni = 0; ni < NI; ni++)
            for (int l = 0; l < 32; l++)
              for (int e = 0; e < 4; e++) {
                int row = gemm_mma_out_row(tm, c->bm, w / c->wn, WTM, mi, l, e);
                int col = gemm_mma_out_col(tn, c->bn, w % c->wn, WTN, ni, l, e);
                if (row < M && col < N) C[(size_t)row * N + col] += acc[(w * MI + mi) * NI + ni][l][e];
              }
    }
  }
  int bad = 0;
  for (int i = 0; i < M * N && bad < 3; i++)
    if (C[i] != R[i]) {
      fprintf(stderr, "cfg %dx%dx%d warps %dx%d es %d bcol %d split %d, %dx%dx%d: C[%d][%d] = %g, expected %g\n",
              c->bm, c->bn, c->bk, c->wm, c->wn, c->es, c->bcol, c->split, M, N, K, i / N, i % N, C[i], R[i]);
      bad++;
    }
#undef BK_
  free(A);
  free(B);
  free(C);
  free(R);
  free(smA);
  free(smB);
  free(acc);
  return bad == 0;
}

int main(void) {
  static const cfg cfgs[] = {
      {64, 64, 32, 2, 2, 2, 0, 1, 8}, {64, 64, 32, 2, 2, 2, 1, 1, 1}, {32, 64, 64, 1, 2, 2, 1, 3, 8},
      {128, 64, 32, 2, 2, 2, 0, 2, 8}, {64, 64, 32, 2, 2, 4, 0, 1, 8}, {64, 64, 32, 2, 2, 4, 1, 1, 1},
      {32, 128, 64, 1, 2, 4, 0, 3, 8}, {64, 32, 32, 2, 1, 4, 1, 2, 1},
  };
  static const int shapes[][3] = {{70, 90, 100}, {1, 40, 33}, {16, 8, 16}, {129, 65, 200}};
  for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      CHECK(run(&cfgs[c], shapes[s][0], shapes[s][1], shapes[s][2]));
  return test_done();
}
