/* test_gemm_mma_emulate.c — gemm_mma's data path emulated on the host from the PTX ISA's
 * definitions, so the address math the kernel uses (gemm_index.h: cp.async chunk placement and
 * row masks, ldmatrix lane offsets, direct tf32 reads, store coordinates, split-K ranges,
 * swizzle) and its pipeline schedule are checked end to end without a GPU.  Each thread's
 * cp.async chunks are placed as the kernel's plans place them (padded pitches, zero fill past
 * the edges); a stage being refilled holds NaN from the copy's issue until the wait that
 * completes its group, so a fragment read from a stage in flight (a wrong stage rotation, a
 * missing wait) poisons the result, and barrier epochs flag a stage read before a barrier made
 * its copy visible or refilled before a barrier ended its reads.  ldmatrix (.x4, .x4.trans) delivers to each lane what PTX
 * 9.7.9.29 says it does for the addresses the kernel computes; mma.m16n8k16 / m16n8k8 (tf32)
 * take their A, B and C fragments at the positions of PTX 9.7.14.5.8 / 9.7.14.5.7.  The result
 * must equal a plain matrix product exactly (small integer inputs), for f16-style (2-byte) and
 * tf32 (4-byte) elements, B stored K x N and N x K, several tiles, stage counts, split-K and
 * edge shapes. */
/* stages: none */
#include "templates/gemm/gemm_index.h"
#include "test.h"

typedef struct cfg {
  int bm, bn, bk, wm, wn, es, bcol, split, swz, stages;
} cfg;

#define MAXW  8 /* warps */
#define MAXMI 4 /* 16-row tiles per warp tile (64 rows) */
#define MAXNI 8 /* 8-column tiles per warp tile (64 columns) */
#define MAXST 4 /* stages */

/* shared memory: one float per element, element i at byte i*es; stage s of A at smA[s] */
static float *smA[MAXST], *smB[MAXST], *pendA[MAXST], *pendB[MAXST];
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
      for (int i = 0; i < 8; i++)
        A[g + 8 * ((i / 2) % 2)][2 * tig + i % 2 + 8 * (i / 4)] = a[t][i / 2][i % 2];
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

typedef struct emu {
  const cfg *c;
  long long oob; /* chunks read from outside their matrix */
  int M, N, K, threads, ch, a_cpr, b_cpr, a_iters, b_iters;
  const float *A, *B;
  gemm_plan pa[256], pb[256]; /* each thread's plans (gemm_index.h), as the kernel steps them */
  int vec;
} emu;

/* A 16-byte chunk at element `src` of a matrix of `size` elements: read when ok (and counted
 * when it reaches outside the matrix), else zero. */
static float chunk_elem(emu *e, const float *X, long long size, int ok, long long src, int x) {
  if (!ok) return 0;
  if (src < 0 || src + e->ch > size) {
    e->oob++;
    return 0;
  }
  return X[src + x];
}

/* copy_kmajor: thread plan p copies the next K tile of a K-contiguous operand X (size
 * elements) into stage sm (pitch ld) and steps to the one after. */
static void copy_kmajor(emu *e, gemm_plan *p, float *sm, int ld, int cpr, int iters, const float *X,
                        long long size) {
  long long src = p->src;
  for (int i = 0; i < iters; i++) {
    int ok = p->k_left > 0 && (p->rows_in >> i & 1u);
    for (int x = 0; x < e->ch; x++)
      sm[p->smem + i * (e->threads / cpr) * ld + x] = chunk_elem(e, X, size, ok, src, x);
    src += p->step;
  }
  p->src += e->c->bk;
  p->k_left -= e->c->bk;
}

/* copy_b_nmajor: the same for B stored K x N (rows along K). */
static void copy_b_nmajor(emu *e, gemm_plan *p, float *sm) {
  for (int i = 0; i < e->b_iters; i++) {
    int ok = p->rows_in != 0 && i * (e->threads / e->b_cpr) < p->k_left;
    for (int x = 0; x < e->ch; x++)
      sm[p->smem + i * (e->threads / e->b_cpr) * B_LD + x] =
          chunk_elem(e, e->B, (long long)e->N * e->K, ok, p->src, x);
    p->src += p->step;
  }
  p->k_left -= e->c->bk;
}

/* The next K tile (kt) of both operands into the pending buffers of stage `st`, as load_tile
 * does: through the plans (VEC) or element by element. */
static void load_tile(emu *e, int st, int m0, int n0, int kt) {
  const cfg *c = e->c;
  float *sa = pendA[st], *sb = pendB[st];
  const int M = e->M, N = e->N, K = e->K, k0 = kt * c->bk;
  if (e->vec) {
    for (int t = 0; t < e->threads; t++) {
      copy_kmajor(e, &e->pa[t], sa, A_LD, e->a_cpr, e->a_iters, e->A, (long long)M * K);
      if (c->bcol)
        copy_kmajor(e, &e->pb[t], sb, B_LD, e->b_cpr, e->b_iters, e->B, (long long)N * K);
      else
        copy_b_nmajor(e, &e->pb[t], sb);
    }
  } else {
    for (int r = 0; r < c->bm; r++)
      for (int k = 0; k < c->bk; k++)
        sa[r * A_LD + k] = m0 + r < M && k0 + k < K ? e->A[(size_t)(m0 + r) * K + k0 + k] : 0;
    if (c->bcol) {
      for (int r = 0; r < c->bn; r++)
        for (int k = 0; k < c->bk; k++)
          sb[r * B_LD + k] = n0 + r < N && k0 + k < K ? e->B[(size_t)(n0 + r) * K + k0 + k] : 0;
    } else {
      for (int k = 0; k < c->bk; k++)
        for (int n = 0; n < c->bn; n++)
          sb[k * B_LD + n] = k0 + k < K && n0 + n < N ? e->B[(size_t)(k0 + k) * N + n0 + n] : 0;
    }
  }
}

/* cp.async groups: group g loads stage grp[g] (-1: an empty group).  Issuing a load fills the
 * stage with NaN; the wait that completes the group moves the pending tile in.
 *
 * Barriers: the warps run in lockstep here, so the order of shared-memory accesses between
 * warps is checked by epochs instead.  `epoch` counts __syncthreads; a stage may be read only in
 * an epoch after the one its copy completed in (each thread's wait covers its own copies; the
 * barrier after it makes them visible to the other warps), and refilled only in an epoch after
 * the last one it was read in (another warp may still be reading it before that barrier). */
#define MAXGRP 4096
static int grp[MAXGRP], committed, completed;
static size_t a_stage_elems, b_stage_elems;
static int epoch, done_epoch[MAXST], read_epoch[MAXST], races;

static void issue(emu *e, int st, int m0, int n0, int kt) {
  if (read_epoch[st] >= epoch) races++; /* refilled while another warp may still read it */
  for (size_t i = 0; i < a_stage_elems; i++) smA[st][i] = pendA[st][i] = NAN;
  for (size_t i = 0; i < b_stage_elems; i++) smB[st][i] = pendB[st][i] = NAN;
  load_tile(e, st, m0, n0, kt); /* a chunk no thread copies stays NaN */
  done_epoch[st] = 1 << 30;     /* in flight */
  grp[committed] = st;
}
static void commit(void) {
  committed++;
  grp[committed] = -1;
}
static void wait_group(int n) {
  while (committed - completed > n) {
    int st = grp[completed++];
    if (st >= 0) {
      memcpy(smA[st], pendA[st], a_stage_elems * sizeof(float));
      memcpy(smB[st], pendB[st], b_stage_elems * sizeof(float));
      done_epoch[st] = epoch;
    }
  }
}
static void syncthreads(void) { epoch++; }
/* a fragment read from stage st */
static void reading(int st) {
  if (done_epoch[st] >= epoch) races++; /* not complete, or not yet visible to this warp */
  read_epoch[st] = epoch;
}

static float af[MAXW][2][MAXMI][32][4][2], bfr[MAXW][2][MAXNI][32][2][2];

/* load_frags: the fragments of K step ks of stage st for warp w into buffer `buf`. */
static void load_frags(const cfg *c, int w, int buf, int st, int ks) {
  const int WTM = c->bm / c->wm, WTN = c->bn / c->wn, MI = WTM / 16, NI = WTN / 8;
  const int kstep = 32 / c->es, warp_m = w / c->wn, warp_n = w % c->wn;
  reading(st);
  for (int mi = 0; mi < MI; mi++) {
    int addr[32];
    for (int l = 0; l < 32; l++)
      addr[l] = gemm_ldsm_a_offset(warp_m * WTM + mi * 16, ks, l, A_LD * c->es);
    ldsm(smA[st], c->es, addr, 0, af[w][buf][mi]);
  }
  for (int nj = 0; nj < NI / 2; nj++) {
    float r[32][4][2];
    int addr[32];
    if (c->bcol || c->es == 2) {
      for (int l = 0; l < 32; l++)
        addr[l] = c->bcol ? gemm_ldsm_bcol_offset(warp_n * WTN + nj * 16, ks, l, B_LD * c->es)
                          : gemm_ldsm_brow_offset(warp_n * WTN + nj * 16, ks, kstep, l,
                                                  B_LD * c->es, c->es);
      ldsm(smB[st], c->es, addr, !c->bcol, r);
      for (int l = 0; l < 32; l++)
        for (int x = 0; x < 2; x++) {
          bfr[w][buf][2 * nj][l][0][x] = r[l][0][x];
          bfr[w][buf][2 * nj][l][1][x] = r[l][1][x];
          bfr[w][buf][2 * nj + 1][l][0][x] = r[l][2][x];
          bfr[w][buf][2 * nj + 1][l][1][x] = r[l][3][x];
        }
    } else {
      for (int t = 0; t < 2; t++)
        for (int l = 0; l < 32; l++) {
          int nb = warp_n * WTN + (2 * nj + t) * 8;
          bfr[w][buf][2 * nj + t][l][0][0] = smB[st][gemm_tf32_brow_index(nb, ks, l, 0, B_LD)];
          bfr[w][buf][2 * nj + t][l][1][0] = smB[st][gemm_tf32_brow_index(nb, ks, l, 1, B_LD)];
        }
    }
  }
}

/* The kernel on the host: every block, slice, warp and lane, through gemm_mma's mainloop. */
static int run(const cfg *c, int M, int N, int K) {
  const int WTM = c->bm / c->wm, WTN = c->bn / c->wn, MI = WTM / 16, NI = WTN / 8,
            W = c->wm * c->wn;
  const int kstep = 32 / c->es, ksteps = c->bk / kstep, S = c->stages;
  emu e = {.c = c, .M = M, .N = N, .K = K, .threads = 32 * W, .ch = 16 / c->es};
  e.a_cpr = c->bk / e.ch;
  e.b_cpr = c->bcol ? c->bk / e.ch : c->bn / e.ch;
  e.a_iters = gemm_load_iters(c->bm, e.a_cpr, e.threads);
  e.b_iters = gemm_load_iters(c->bcol ? c->bn : c->bk, e.b_cpr, e.threads);
  e.vec = K % e.ch == 0 && (c->bcol || N % e.ch == 0);
  A_LD = c->bk + 16 / c->es;
  B_LD = c->bcol ? c->bk + 16 / c->es : c->bn + 8;
  a_stage_elems = (size_t)c->bm * A_LD;
  b_stage_elems = (size_t)(c->bcol ? c->bn * B_LD : c->bk * B_LD);
  float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
  float *C = calloc((size_t)M * N, sizeof(float)), *R = calloc((size_t)M * N, sizeof(float));
  for (int s = 0; s < S; s++) {
    smA[s] = malloc(sizeof(float) * a_stage_elems);
    smB[s] = malloc(sizeof(float) * b_stage_elems);
    pendA[s] = malloc(sizeof(float) * a_stage_elems);
    pendB[s] = malloc(sizeof(float) * b_stage_elems);
    for (size_t i = 0; i < a_stage_elems; i++) smA[s][i] = NAN;
    for (size_t i = 0; i < b_stage_elems; i++) smB[s][i] = NAN;
  }
  e.A = A;
  e.B = B;
  for (int i = 0; i < M * K; i++) A[i] = (float)((i * 7 + 3) % 5 - 2);
  for (int i = 0; i < K * N; i++) B[i] = (float)((i * 11 + 1) % 5 - 2);
    /* Bk(k, n): the math's B; stored N x K when bcol */
#define BK_(k, n) (c->bcol ? B[(size_t)(n)*K + (k)] : B[(size_t)(k)*N + (n)])
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      float s = 0;
      for (int k = 0; k < K; k++) s += A[(size_t)m * K + k] * BK_(k, n);
      R[(size_t)m * N + n] = s;
    }
#undef BK_
  const int tiles_m = gemm_ceil_div(M, c->bm), tiles_n = gemm_ceil_div(N, c->bn);
  float(*acc)[32][4] = malloc(sizeof(float) * 32 * 4 * MI * NI * W);
  for (int pid = 0; pid < tiles_m * tiles_n; pid++) {
    int tm, tn;
    gemm_swizzle(pid, tiles_m, tiles_n, c->swz, &tm, &tn);
    const int m0 = tm * c->bm, n0 = tn * c->bn;
    for (int slice = 0; slice < c->split; slice++) {
      int kb, ke;
      gemm_split_range(gemm_ceil_div(K, c->bk), c->split, slice, &kb, &ke);
      const int nk = ke - kb;
      if (nk <= 0) continue;
      memset(acc, 0, sizeof(float) * 32 * 4 * MI * NI * W);
      for (int t = 0; t < e.threads; t++) {
        e.pa[t] =
            gemm_plan_kmajor(t, e.threads, e.a_cpr, e.a_iters, e.ch, c->bk, kb, m0, M, K, A_LD);
        e.pb[t] = c->bcol
                      ? gemm_plan_kmajor(t, e.threads, e.b_cpr, e.b_iters, e.ch, c->bk, kb, n0, N,
                                         K, B_LD)
                      : gemm_plan_nmajor(t, e.threads, e.b_cpr, e.ch, c->bk, kb, n0, N, K, B_LD);
      }
      committed = completed = 0;
      grp[0] = -1;
      epoch = 1;
      for (int s = 0; s < S; s++) done_epoch[s] = read_epoch[s] = 0;
      if (nk + S >= MAXGRP) return 0;
      for (int s = 0; s < S - 1; s++) {
        if (s < nk) issue(&e, s, m0, n0, kb + s);
        commit();
      }
      wait_group(S - 2);
      syncthreads();
      for (int w = 0; w < W; w++) load_frags(c, w, 0, 0, 0);
      int st = 0, st_next = 1 % S, st_fill = S - 1;
      for (int i = 0; i < nk; i++) {
        if (i + S - 1 < nk) issue(&e, st_fill, m0, n0, kb + i + S - 1);
        commit();
        for (int ks = 0; ks < ksteps; ks++) {
          if (ks == ksteps - 1) {
            wait_group(S - 2);
            syncthreads();
          }
          for (int w = 0; w < W; w++) {
            if (ks < ksteps - 1)
              load_frags(c, w, (ks + 1) % 2, st, ks + 1);
            else if (i + 1 < nk)
              load_frags(c, w, (ks + 1) % 2, st_next, 0);
            for (int mi = 0; mi < MI; mi++)
              for (int ni = 0; ni < NI; ni++)
                mma(c->es, af[w][ks % 2][mi], bfr[w][ks % 2][ni], acc[(w * MI + mi) * NI + ni]);
          }
        }
        st_fill = st;
        st = st_next;
        st_next = st_next + 1 == S ? 0 : st_next + 1;
      }
      wait_group(0);
      for (int w = 0; w < W; w++)
        for (int mi = 0; mi < MI; mi++)
          for (int ni = 0; ni < NI; ni++)
            for (int l = 0; l < 32; l++)
              for (int x = 0; x < 4; x++) {
                int row = gemm_mma_out_row(tm, c->bm, w / c->wn, WTM, mi, l, x);
                int col = gemm_mma_out_col(tn, c->bn, w % c->wn, WTN, ni, l, x);
                if (row < M && col < N)
                  C[(size_t)row * N + col] += acc[(w * MI + mi) * NI + ni][l][x];
              }
    }
  }
  int bad = 0;
  if (races) {
    fprintf(stderr,
            "cfg %dx%dx%d stages %d, %dx%dx%d: %d shared-memory stage accesses not ordered by a "
            "barrier\n",
            c->bm, c->bn, c->bk, c->stages, M, N, K, races);
    bad++;
    races = 0;
  }
  if (e.oob) {
    fprintf(
        stderr,
        "cfg %dx%dx%d warps %dx%d es %d bcol %d, %dx%dx%d: %lld chunk reads outside the inputs\n",
        c->bm, c->bn, c->bk, c->wm, c->wn, c->es, c->bcol, M, N, K, e.oob);
    bad++;
  }
  for (int i = 0; i < M * N && bad < 3; i++)
    if (!(C[i] == R[i])) {
      fprintf(stderr,
              "cfg %dx%dx%d warps %dx%d es %d bcol %d split %d stages %d (%s path), %dx%dx%d: "
              "C[%d][%d] = %g, expected %g\n",
              c->bm, c->bn, c->bk, c->wm, c->wn, c->es, c->bcol, c->split, c->stages,
              e.vec ? "cp.async" : "element", M, N, K, i / N, i % N, C[i], R[i]);
      bad++;
    }
  free(A);
  free(B);
  free(C);
  free(R);
  for (int s = 0; s < S; s++) {
    free(smA[s]);
    free(smB[s]);
    free(pendA[s]);
    free(pendB[s]);
  }
  free(acc);
  return bad == 0;
}

TEST_CASE(configurations) {
  static const cfg cfgs[] = {
      {64, 64, 32, 2, 2, 2, 0, 1, 8, 3},   {64, 64, 32, 2, 2, 2, 1, 1, 1, 2},
      {32, 64, 64, 1, 2, 2, 1, 3, 8, 4},   {128, 64, 32, 2, 2, 2, 0, 2, 8, 3},
      {64, 64, 32, 2, 2, 4, 0, 1, 8, 4},   {64, 64, 32, 2, 2, 4, 1, 1, 1, 3},
      {32, 128, 64, 1, 2, 4, 0, 3, 8, 3},  {64, 32, 32, 2, 1, 4, 1, 2, 1, 4},
      {256, 128, 64, 4, 2, 2, 0, 1, 1, 3}, {128, 256, 32, 2, 4, 2, 1, 2, 8, 4},
  };
  /* K and N multiples of 8 take the cp.async path for both element sizes; the others the
   * element path */
  static const int shapes[][3] = {{70, 90, 100},  {1, 40, 33},   {16, 8, 16},
                                  {129, 65, 200}, {70, 96, 136}, {257, 136, 264}};
  for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      CHECK(run(&cfgs[c], shapes[s][0], shapes[s][1], shapes[s][2]));
}

TEST_LIST(TEST_ENTRY(configurations))
