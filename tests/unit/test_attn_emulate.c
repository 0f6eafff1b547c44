/* test_attn_emulate.c — attn_mma's data path emulated on the host from the PTX ISA's definitions,
 * so the index math the kernel takes from attn_index.h (block placement, KV tile range, mask,
 * cp.async plans, ldmatrix lane offsets, the S -> P register reuse, the online softmax, output
 * staging and store coordinates) and its pipeline schedule are checked end to end without a GPU.
 *
 *  - cp.async: each thread's chunks are placed as its plan places them (padded pitch, zero fill
 *    past SQ or kv_len, source pointed at the base when filled); a buffer being refilled holds NaN
 *    from the copy's issue until the wait_group that completes its group, so reading a stage in
 *    flight (a wrong group count, a wrong stage rotation) poisons the result; barrier epochs flag
 *    a buffer read before a barrier made its copy visible or refilled before a barrier ended the
 *    reads of its previous tile.  Q shares group 0 with K of tile 0.
 *  - ldmatrix .x4 and .x4.trans deliver to each lane what PTX 9.7.9.29 says for the addresses
 *    the kernel computes (16-byte aligned, inside the written part of the tile); mma.m16n8k16
 *    takes A, B and C at the positions of PTX 9.7.14.5.8, written here from the ISA, not taken
 *    from attn_index.h (whose fragment maps are checked against these separately).
 *  - the softmax runs exactly as the kernel runs it (attn_index.h's functions, the quad max and
 *    the final quad sum by xor shuffles, the order of every sum); P is rounded to the dtype before
 *    the second mma, O rounded to the dtype when staged, as the kernel's cvt does.
 *  - each warp stages O in rows of the Q buffer only it read, and every element of O and LSE is
 *    written exactly once (both start as NaN).
 *  - a warp whose 16 rows all lie past SQ (padding of the last query tile) computes nothing that
 *    reaches memory: its ldmatrix addresses and barrier order are checked like the others', its
 *    mmas are skipped (they were most of the emulation's time).
 *
 * The result must match a plain double-precision softmax(scale Q K^T) V and its LSE, computed here
 * with the test's own mask, for every row (rows with no key: O = 0, LSE = -inf), on shapes whose
 * SQ and SKV are multiples of no tile, SQ < SKV and SQ > SKV, SQ = 1, grouped heads, ragged
 * kv_lens with an empty sequence, causal and not, D 64, 128, 256, several configurations each,
 * f16 and bf16 in turn.
 *
 * Inputs are the family's kind (logits over tens of units, spike keys: kernels/attention.c) in
 * multiples of 1/8 that f16 and bf16 hold exactly, so S = Q K^T is exact in fp32.
 * Two kinds of run: the kernel's rounding (P and O to the dtype): |O - O_double| <=
 * u (1 + |O_double|) + 2e-5 with u the dtype's unit roundoff (2^-8 bf16, 2^-11 f16), since
 * rounding each p_j moves O = sum p_j v_j / l by at most u max|v| (|v| <= 1) and the output
 * rounding by u |O|; and (every third case), to see index errors that rounding would hide, P and O
 * unrounded:
 * |O - O_double| <= 1e-5 (exp2f and fp32 sums over at most a few hundred keys).  LSE in both:
 * relative 1e-5. */
/* stages: none */
#include "../templates/attention/attn_index.h"
#include "test.h"

#include <stdint.h>

typedef struct cfg {
  int bm, bn, stages, qregs;
} cfg;
typedef struct shape {
  int B, HQ, HKV, SQ, SKV;
  int ragged, lens[4];
} shape;

#define MAXW      8
#define MAXT      256
#define MAXST     3
#define MAXKD     16
#define MAXNT     16
#define MAXDT     32
#define NBUF      (1 + 2 * MAXST) /* shared buffers: 0 the Q tile, 1+s K stage s, 1+STAGES+s V stage s */
#define MAXGRP    4096
#define IN_FLIGHT (1 << 30)

/* the configuration and problem being emulated */
static int D, LD, CPR, BM, BN, ST, QREGS, W, T, KD, NT, DT, RSTEP;
static int dtype; /* 1 f16, 2 bf16 */
static int exact; /* 1: P and O not rounded */
static int B_, HQ, HKV, SQ, SKV, causal;
static const int *kv_lens;
static float scale, scale_log2;

/* --- rounding to the dtype, round to nearest even (the cvt.rn of the kernel) --- */
static float round_dtype(float x) {
  if (exact || x == 0 || isnan(x) || isinf(x)) return x;
  uint32_t u;
  memcpy(&u, &x, 4);
  if (dtype == 2) {
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
  }
  /* f16: 11 significant bits, subnormal below 2^-14 (spacing 2^-24) */
  int e;
  frexpf(fabsf(x), &e);
  const float q = e - 1 >= -14 ? ldexpf(1.f, e - 1 - 10) : ldexpf(1.f, -24);
  return rintf(x / q) * q; /* exact: x/q and the product are powers-of-two scalings */
}

/* --- global memory --- */
static float *Qg, *Kg, *Vg, *Og, *Lg;
static int *Ow, *Lw; /* writes per element */
static long long nq, nkv, oob;

/* --- shared memory, cp.async groups and barrier epochs --- */
static float *buf[NBUF], *pend[NBUF];
static int buf_rows[NBUF];
static int grp[MAXGRP], committed, completed;
static int epoch, done_epoch[NBUF], read_epoch[NBUF], races, smem_bad;
static int q_reader[128]; /* the warp that read each Q tile row, -1 none */

static void issue_begin(int id) {
  if (read_epoch[id] >= epoch) races++; /* another warp may still read it */
  for (int x = 0; x < buf_rows[id] * LD; x++) buf[id][x] = pend[id][x] = NAN;
  done_epoch[id] = IN_FLIGHT;
  grp[committed] |= 1 << id;
}
static void commit(void) {
  committed++;
  grp[committed] = 0;
}
static void wait_group(int n) {
  while (committed - completed > n) {
    for (int id = 0; id < NBUF; id++)
      if (grp[completed] >> id & 1) {
        memcpy(buf[id], pend[id], sizeof(float) * buf_rows[id] * LD);
        done_epoch[id] = epoch;
      }
    completed++;
  }
}
static void syncthreads(void) { epoch++; }
static void reading(int id) {
  if (done_epoch[id] >= epoch) races++; /* in flight, or not yet visible to this warp */
  read_epoch[id] = epoch;
}

/* copy_tile: every thread's chunks of a tile by its plan, into pending buffer id; X is the global
 * array (size n), base the kernel's base offset. */
static void copy_tile(int id, int iters, const attn_plan *plans, const float *X, long long n,
                      long long base) {
  issue_begin(id);
  for (int t = 0; t < T; t++) {
    const attn_plan p = plans[t];
    long long src = base + p.src;
    for (int i = 0; i < iters; i++, src += p.step) {
      const int ok = attn_plan_in(p, i, T, CPR), at = p.smem + i * RSTEP * LD;
      if (at < 0 || at % LD + 8 > D || at / LD >= buf_rows[id]) {
        smem_bad++;
        continue;
      }
      for (int x = 0; x < 8; x++) {
        float v = 0;
        if (ok) {
          if (src < 0 || src + 8 > n) {
            oob++;
          } else {
            v = X[src + x];
          }
        }
        pend[id][at + x] = v;
      }
    }
  }
}

/* ldmatrix.x4 (.trans) from buffer id with per-lane byte addresses: out[lane][r][half]. */
static void ldsm(int id, const int addr[32], int trans, float out[32][4][2]) {
  for (int l = 0; l < 32; l++) {
    const int a = addr[l];
    if (a % 16 || a < 0 || (a / 2) % LD + 8 > D || a / 2 / LD >= buf_rows[id]) smem_bad++;
  }
  if (smem_bad) {
    memset(out, 0, sizeof(float) * 32 * 8);
    return;
  }
  for (int t = 0; t < 32; t++)
    for (int j = 0; j < 4; j++)
      for (int x = 0; x < 2; x++)
        out[t][j][x] = trans ? buf[id][(addr[8 * j + 2 * (t % 4) + x] + 2 * (t / 4)) / 2]
                             : buf[id][(addr[8 * j + t / 4] + 4 * (t % 4)) / 2 + x];
}

/* mma.m16n8k16, fp32 accumulate: c[lane][4] += A B with A from a[lane][4][2] and B from
 * b0/b1[lane][2] (registers 0, 1), positions from PTX 9.7.14.5.8. */
static int mma_live = 1; /* 0: the warp's rows all lie past SQ (see run_block) */
static void mma(float a[32][4][2], float b[32][2][2], float c[32][4]) {
  if (!mma_live) return;
  float A[16][16], Bm[16][8];
  for (int t = 0; t < 32; t++) {
    const int g = t / 4, tig = t % 4;
    for (int r = 0; r < 4; r++)
      for (int x = 0; x < 2; x++) {
        const int i = 2 * r + x; /* a_i */
        A[g + ((i < 2 || (i >= 4 && i < 6)) ? 0 : 8)][tig * 2 + (i & 1) + (i >= 4 ? 8 : 0)] =
            a[t][r][x];
      }
    for (int r = 0; r < 2; r++)
      for (int x = 0; x < 2; x++) {
        const int i = 2 * r + x; /* b_i */
        Bm[tig * 2 + (i & 1) + (i >= 2 ? 8 : 0)][g] = b[t][r][x];
      }
  }
  for (int t = 0; t < 32; t++)
    for (int i = 0; i < 4; i++) {
      const int row = t / 4 + (i >= 2 ? 8 : 0), col = (t % 4) * 2 + (i & 1);
      float s = c[t][i];
      for (int k = 0; k < 16; k++) s += A[row][k] * Bm[k][col];
      c[t][i] = s;
    }
}

/* per-warp state, as the kernel's registers */
static float o_acc[MAXW][MAXDT][32][4], m_st[MAXW][32][2], l_st[MAXW][32][2];
static float qf[MAXW][MAXKD][32][4][2];
static float s_acc[MAXNT][32][4];
static float lane_s[32][MAXNT][4], lane_o[32][MAXDT][4]; /* one lane's S and O registers */

static void pick(float frag[32][4][2], int lo, float out[32][2][2]) {
  for (int l = 0; l < 32; l++)
    for (int x = 0; x < 2; x++) {
      out[l][0][x] = frag[l][lo][x];
      out[l][1][x] = frag[l][lo + 1][x];
    }
}

static void load_q_frag(int w, int kd, float out[32][4][2]) {
  int addr[32];
  reading(0);
  for (int l = 0; l < 32; l++) {
    addr[l] = attn_ldsm_q_offset(16 * w, kd, l, LD * 2);
    const int row = addr[l] / 2 / LD;
    if (q_reader[row] != -1 && q_reader[row] != w) smem_bad++;
    q_reader[row] = w;
  }
  ldsm(0, addr, 0, out);
}

/* One block of the grid, as attn_mma runs it. */
/* The epilogue of the block at rows M0 of head H, batch B: each warp's O normalised and staged
 * through shared memory (buf[0]) to O, and its rows' LSE. */
static void epilogue(int m0, int h, int b) {
  if (done_epoch[0] == IN_FLIGHT) smem_bad++; /* staging over a Q copy in flight */
  for (int w = 0; w < W; w++) {
    float l1[32][2], l2[32][2], inv[32][2];
    for (int l = 0; l < 32; l++)
      for (int r = 0; r < 2; r++) l1[l][r] = l_st[w][l][r] + l_st[w][l ^ 1][r];
    for (int l = 0; l < 32; l++)
      for (int r = 0; r < 2; r++) {
        l2[l][r] = l1[l][r] + l1[l ^ 2][r];
        inv[l][r] = attn_softmax_inv(l2[l][r]);
      }
    for (int dt = 0; dt < DT; dt++)
      for (int l = 0; l < 32; l++)
        for (int e = 0; e < 4; e += 2) {
          const int at = attn_o_stage_offset(16 * w, dt, l, e, LD), row = at / LD;
          if (row < 16 * w || row >= 16 * w + 16 || (q_reader[row] != -1 && q_reader[row] != w) ||
              at % 2 || at % LD + 2 > D) {
            smem_bad++;
            continue;
          }
          buf[0][at] = round_dtype(o_acc[w][dt][l][e] * inv[l][attn_mma_c_half(e)]);
          buf[0][at + 1] = round_dtype(o_acc[w][dt][l][e + 1] * inv[l][attn_mma_c_half(e)]);
        }
    for (int i = 0; i < attn_store_iters(CPR); i++)
      for (int l = 0; l < 32; l++) {
        const int r = attn_store_row(l, i, CPR), c = attn_store_chunk(l, i, CPR),
                  row = m0 + 16 * w + r;
        if (row >= SQ) continue;
        const long long at = attn_q_offset(b, row, h, SQ, HQ, D) + c * 8;
        for (int x = 0; x < 8; x++) {
          Og[at + x] = buf[0][(16 * w + r) * LD + c * 8 + x];
          Ow[at + x]++;
        }
      }
    for (int l = 0; l < 32; l += 4)
      for (int r = 0; r < 2; r++) {
        const int row = attn_mma_lse_row(m0, 16 * w, l, r);
        if (row >= SQ) continue;
        const long long at = attn_lse_offset(b, h, row, HQ, SQ);
        Lg[at] = attn_softmax_lse(m_st[w][l][r], l2[l][r], scale_log2);
        Lw[at]++;
      }
  }
}

static void run_block(int bx, int by, int bz) {
  const int tiles_m = attn_ceil_div(SQ, BM);
  int tile, h, b;
  attn_block(bx, by, bz, tiles_m, causal, &tile, &h, &b);
  const int hk = attn_kv_head(h, HQ, HKV), kv_len = kv_lens ? kv_lens[b] : SKV, m0 = tile * BM;
  int n_full, n_end;
  attn_kv_tiles(m0, BM, BN, SQ, kv_len, causal, &n_full, &n_end);
  const long long q_pitch = (long long)HQ * D, kv_pitch = (long long)HKV * D;
  const long long qbase = attn_q_offset(b, 0, h, SQ, HQ, D),
                  kvbase = attn_kv_offset(b, 0, hk, SKV, HKV, D);
  static attn_plan pq[MAXT], pkv[MAXT];
  for (int t = 0; t < T; t++) {
    pq[t] = attn_plan_rows(t, T, CPR, m0, SQ, q_pitch, LD);
    pkv[t] = attn_plan_rows(t, T, CPR, 0, kv_len, kv_pitch, LD);
  }
  const int q_iters = attn_load_iters(BM, CPR, T), kv_iters = attn_load_iters(BN, CPR, T);
  committed = completed = 0;
  grp[0] = 0;
  epoch = 1;
  for (int id = 0; id < NBUF; id++) {
    done_epoch[id] = read_epoch[id] = 0;
    if (buf[id])
      for (int x = 0; x < buf_rows[id] * LD; x++)
        buf[id][x] = NAN; /* what the last block left: not this one's */
  }
  for (int r = 0; r < 128; r++) q_reader[r] = -1;

  if (n_end > 0) copy_tile(0, q_iters, pq, Qg, nq, qbase);
  for (int s = 0; s < ST - 1; s++) {
    if (s < n_end) copy_tile(1 + s, kv_iters, pkv, Kg, nkv, kvbase);
    commit();
    if (s < n_end) copy_tile(1 + ST + s, kv_iters, pkv, Vg, nkv, kvbase);
    commit();
    for (int t = 0; t < T; t++) attn_plan_next(&pkv[t], BN, kv_pitch);
  }
  for (int w = 0; w < W; w++)
    for (int l = 0; l < 32; l++) {
      for (int dt = 0; dt < DT; dt++)
        for (int e = 0; e < 4; e++) o_acc[w][dt][l][e] = 0;
      for (int r = 0; r < 2; r++) m_st[w][l][r] = attn_neg_inf(), l_st[w][l][r] = 0;
    }

  int st = 0, st_fill = ST - 1;
  for (int n = 0; n < n_end; n++) {
    wait_group(2 * ST - 3);
    syncthreads();
    if (n + ST - 1 < n_end) copy_tile(1 + st_fill, kv_iters, pkv, Kg, nkv, kvbase);
    commit();
    if (n + ST - 1 < n_end) copy_tile(1 + ST + st_fill, kv_iters, pkv, Vg, nkv, kvbase);
    commit();
    for (int t = 0; t < T; t++) attn_plan_next(&pkv[t], BN, kv_pitch);
    static float sp[MAXW][MAXNT][32][4]; /* each warp's P, kept for the second half */
    for (int w = 0; w < W; w++) {
      mma_live = m0 + 16 * w < SQ;
      if (QREGS && n == 0)
        for (int kd = 0; kd < KD; kd++) load_q_frag(w, kd, qf[w][kd]);
      memset(s_acc, 0, sizeof s_acc);
      for (int kd = 0; kd < KD; kd++) {
        static float qa[32][4][2];
        if (QREGS)
          memcpy(qa, qf[w][kd], sizeof qa);
        else
          load_q_frag(w, kd, qa);
        for (int np = 0; np < NT / 2; np++) {
          int addr[32];
          float kb[32][4][2], b01[32][2][2];
          reading(1 + st);
          for (int l = 0; l < 32; l++) addr[l] = attn_ldsm_k_offset(np * 16, kd, l, LD * 2);
          ldsm(1 + st, addr, 0, kb);
          pick(kb, 0, b01);
          mma(qa, b01, s_acc[2 * np]);
          pick(kb, 2, b01);
          mma(qa, b01, s_acc[2 * np + 1]);
        }
      }
      /* the lane's registers as the kernel holds them (s[nt][4], o[dt][4]), through the
       * header's mask and softmax steps, the quad's max by xor shuffles in between */
      for (int l = 0; l < 32; l++)
        for (int e = 0; e < 4; e++) {
          for (int nt = 0; nt < NT; nt++) lane_s[l][nt][e] = s_acc[nt][l][e];
          for (int dt = 0; dt < DT; dt++) lane_o[l][dt][e] = o_acc[w][dt][l][e];
        }
      if (n >= n_full)
        for (int l = 0; l < 32; l++)
          attn_mma_mask(lane_s[l], NT, l, m0 + 16 * w, n * BN, SQ, kv_len, causal);
      for (int r = 0; r < 2; r++) {
        float mx[32], mx1[32], mx2[32];
        for (int l = 0; l < 32; l++) mx[l] = attn_mma_row_max((const float(*)[4])lane_s[l], NT, r);
        for (int l = 0; l < 32; l++) mx1[l] = attn_softmax_max(mx[l], mx[l ^ 1]);
        for (int l = 0; l < 32; l++) mx2[l] = attn_softmax_max(mx1[l], mx1[l ^ 2]);
        for (int l = 0; l < 32; l++)
          attn_mma_softmax_row(lane_s[l], NT, lane_o[l], DT, r, mx2[l], &m_st[w][l][r],
                               &l_st[w][l][r], scale_log2);
      }
      for (int l = 0; l < 32; l++)
        for (int e = 0; e < 4; e++) {
          for (int nt = 0; nt < NT; nt++) s_acc[nt][l][e] = lane_s[l][nt][e];
          for (int dt = 0; dt < DT; dt++) o_acc[w][dt][l][e] = lane_o[l][dt][e];
        }
      memcpy(sp[w], s_acc, sizeof s_acc);
    }
    wait_group(2 * ST - 2);
    syncthreads();
    for (int w = 0; w < W; w++) {
      mma_live = m0 + 16 * w < SQ;
      for (int kk = 0; kk < BN / 16; kk++) {
        static float pa[32][4][2];
        for (int l = 0; l < 32; l++)
          for (int r = 0; r < 4; r++)
            for (int x = 0; x < 2; x++)
              pa[l][r][x] = round_dtype(sp[w][attn_p_tile(kk, r)][l][attn_p_elem(r, x)]);
        for (int dp = 0; dp < DT / 2; dp++) {
          int addr[32];
          float vb[32][4][2], b01[32][2][2];
          reading(1 + ST + st);
          for (int l = 0; l < 32; l++) addr[l] = attn_ldsm_v_offset(kk * 16, dp * 16, l, LD * 2);
          ldsm(1 + ST + st, addr, 1, vb);
          pick(vb, 0, b01);
          mma(pa, b01, o_acc[w][2 * dp]);
          pick(vb, 2, b01);
          mma(pa, b01, o_acc[w][2 * dp + 1]);
        }
      }
    }
    st = st + 1 == ST ? 0 : st + 1;
    st_fill = st_fill + 1 == ST ? 0 : st_fill + 1;
  }
  wait_group(0);
  mma_live = 1;

  epilogue(m0, h, b);
}

/* The kernel over the whole grid; then the comparison with the double softmax.  Returns 1 when
 * all holds. */
static int run(const cfg *c, int d, const shape *sh, int cs, int dt_code, int ex) {
  D = d, BM = c->bm, BN = c->bn, ST = c->stages, QREGS = c->qregs;
  LD = attn_smem_ld(D), CPR = D / 8, W = BM / 16, T = 32 * W, KD = D / 16, NT = BN / 8, DT = D / 8,
  RSTEP = T / CPR;
  dtype = dt_code, exact = ex;
  B_ = sh->B, HQ = sh->HQ, HKV = sh->HKV, SQ = sh->SQ, SKV = sh->SKV, causal = cs;
  kv_lens = sh->ragged ? sh->lens : NULL;
  scale = (float)(1 / sqrt((double)D));
  scale_log2 = (float)(1 / sqrt((double)D) * 1.4426950408889634);
  if (T % CPR || (BN * CPR) % T || (BM * CPR) % T) return 0;

  nq = (long long)B_ * SQ * HQ * D, nkv = (long long)B_ * SKV * HKV * D;
  Qg = malloc(sizeof(float) * nq), Kg = malloc(sizeof(float) * nkv),
  Vg = malloc(sizeof(float) * nkv);
  Og = malloc(sizeof(float) * nq), Ow = calloc(nq, sizeof(int));
  const long long nl = (long long)B_ * HQ * SQ;
  Lg = malloc(sizeof(float) * nl), Lw = calloc(nl, sizeof(int));
  uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(D * 131 + SQ * 7 + SKV);
#define NEXT() (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, (int)((rng >> 33) % 17) - 8)
  /* the family's kind of inputs (kernels/attention.c), kept exact: Q = 3/8 k + sign(d), K = 3/8 k
   * (k an integer in [-8, 8]), scaled logits with a standard deviation near 4; spike keys at
   * 1/8, 3/8, 5/8 and 7/8 of every sequence, K = 2(n + 2) / sqrt(D) * sign(d) (to 1/8), whose
   * logits stand about 4, 6, 8 and 10 above the row's mean; V = k/8 */
  for (long long x = 0; x < nq; x++)
    Qg[x] = NEXT() * 3 / 8.f + ((x % D) * 7 % 3 ? 1.f : -1.f), Og[x] = NAN;
  for (long long x = 0; x < nkv; x++) Kg[x] = NEXT() * 3 / 8.f, Vg[x] = NEXT() / 8.f;
  for (int b = 0; b < B_; b++) {
    const int L = kv_lens ? kv_lens[b] : SKV;
    for (int n = 0; n < 4 && L >= 8; n++)
      for (int hk = 0; hk < HKV; hk++)
        for (int e = 0; e < D; e++)
          Kg[(((long long)b * SKV + (2 * n + 1) * L / 8) * HKV + hk) * D + e] =
              roundf(8.f * 2 * (n + 2) / sqrtf((float)D)) / 8.f * ((e * 7 % 3) ? 1.f : -1.f);
  }
  for (long long x = 0; x < nl; x++) Lg[x] = NAN;
  if (kv_lens) /* keys past kv_len exist in memory and must not reach the result */
    for (int b = 0; b < B_; b++)
      for (long long x = (long long)kv_lens[b] * HKV * D; x < (long long)SKV * HKV * D; x++)
        Kg[(long long)b * SKV * HKV * D + x] = Vg[(long long)b * SKV * HKV * D + x] = NAN;
#undef NEXT
  buf_rows[0] = BM;
  for (int s = 0; s < ST; s++) buf_rows[1 + s] = buf_rows[1 + ST + s] = BN;
  for (int id = 0; id < 1 + 2 * ST; id++) {
    buf[id] = malloc(sizeof(float) * buf_rows[id] * LD);
    pend[id] = malloc(sizeof(float) * buf_rows[id] * LD);
  }
  oob = races = smem_bad = 0;

  const int tiles_m = attn_ceil_div(SQ, BM);
  for (int bz = 0; bz < B_; bz++)
    for (int by = 0; by < HQ; by++)
      for (int bx = 0; bx < tiles_m; bx++) run_block(bx, by, bz);

  char what[200];
  snprintf(what, sizeof what,
           "BM %d BN %d stages %d q_in_regs %d, D %d, B %d HQ %d HKV %d SQ %d SKV %d%s, %s%s, %s",
           BM, BN, ST, QREGS, D, B_, HQ, HKV, SQ, SKV, kv_lens ? " ragged" : "",
           causal ? "causal" : "no mask", exact ? " unrounded" : "", dtype == 2 ? "bf16" : "f16");
  int bad = 0;
  if (races)
    fprintf(stderr, "%s: %d shared-memory accesses not ordered by a barrier\n", what, races), bad++;
  if (oob) fprintf(stderr, "%s: %lld chunk reads outside the inputs\n", what, oob), bad++;
  if (smem_bad)
    fprintf(stderr, "%s: %d shared-memory accesses outside their tile or rows\n", what, smem_bad),
        bad++;
  const double u = exact ? 0 : dtype == 2 ? 1.0 / 256 : 1.0 / 2048, abs_tol = exact ? 1e-5 : 2e-5;
  double worst = 0;
  double *z = malloc(sizeof(double) * (SKV + 1));
  for (int b = 0; b < B_ && bad < 4; b++)
    for (int h = 0; h < HQ && bad < 4; h++)
      for (int i = 0; i < SQ && bad < 4; i++) {
        const int hk = h / (HQ / HKV), kv = kv_lens ? kv_lens[b] : SKV;
        int n = 0;
        double m = -INFINITY, l = 0;
        for (int j = 0; j < kv && !(causal && j > i + kv - SQ); j++) {
          double s = 0;
          for (int e = 0; e < D; e++)
            s += (double)Qg[(((long long)b * SQ + i) * HQ + h) * D + e] *
                 Kg[(((long long)b * SKV + j) * HKV + hk) * D + e];
          z[n] = s / sqrt((double)D);
          if (z[n] > m) m = z[n];
          n++;
        }
        for (int j = 0; j < n; j++) l += exp(z[j] - m);
        const long long li = ((long long)b * HQ + h) * SQ + i;
        const double want_lse = n ? m + log(l) : -INFINITY, got_lse = Lg[li];
        if (Lw[li] != 1 ||
            !(n ? fabs(got_lse - want_lse) <= 1e-5 * (fabs(want_lse) > 1 ? fabs(want_lse) : 1)
                : (isinf(got_lse) && got_lse < 0))) {
          fprintf(stderr, "%s: LSE[b %d][h %d][i %d] = %.7g (written %d times), expected %.7g\n",
                  what, b, h, i, got_lse, Lw[li], want_lse);
          bad++;
        }
        for (int e = 0; e < D && bad < 4; e++) {
          double want = 0;
          for (int j = 0; j < n; j++)
            want += exp(z[j] - m) * Vg[(((long long)b * SKV + j) * HKV + hk) * D + e];
          if (n) want /= l;
          const long long oi = (((long long)b * SQ + i) * HQ + h) * D + e;
          const double err = fabs(Og[oi] - want);
          if (err > worst) worst = err;
          if (Ow[oi] != 1 || !(err <= u * (1 + fabs(want)) + abs_tol) || (n == 0 && Og[oi] != 0)) {
            fprintf(stderr,
                    "%s: O[b %d][i %d][h %d][d %d] = %.7g (written %d times), expected %.7g (%d "
                    "keys)\n",
                    what, b, i, h, e, Og[oi], Ow[oi], want, n);
            bad++;
          }
        }
      }
  free(z);
  free(Qg), free(Kg), free(Vg), free(Og), free(Ow), free(Lg), free(Lw);
  for (int id = 0; id < NBUF; id++) {
    free(buf[id]), free(pend[id]);
    buf[id] = pend[id] = NULL;
  }
  return bad == 0;
}

/* attn_index.h's fragment maps against the PTX ISA's (written again here), the S -> P register
 * reuse, and the bank-conflict freedom of the ldmatrix phases and the output staging. */
static void check_layouts(void) {
  for (int l = 0; l < 32; l++) {
    const int g = l / 4, tig = l % 4;
    for (int i = 0; i < 8; i++) {
      CHECK_INT(attn_mma_a_row(l, i), g + ((i < 2 || (i >= 4 && i < 6)) ? 0 : 8));
      CHECK_INT(attn_mma_a_col(l, i), tig * 2 + (i & 1) + (i >= 4 ? 8 : 0));
    }
    for (int i = 0; i < 4; i++) {
      CHECK_INT(attn_mma_b_k(l, i), tig * 2 + (i & 1) + (i >= 2 ? 8 : 0));
      CHECK_INT(attn_mma_c_row(l, i), g + (i >= 2 ? 8 : 0));
      CHECK_INT(attn_mma_c_col(l, i), tig * 2 + (i & 1));
    }
    CHECK_INT(attn_mma_b_n(l), g);
    /* P: the element the lane puts in A position (row, col of the k16 step) is the S element of
     * the same lane at that row and key */
    for (int kk = 0; kk < 4; kk++)
      for (int r = 0; r < 4; r++)
        for (int x = 0; x < 2; x++) {
          const int tile = attn_p_tile(kk, r), e = attn_p_elem(r, x);
          CHECK_INT(attn_mma_c_row(l, e), attn_mma_a_row(l, 2 * r + x));
          CHECK_INT(tile * 8 + attn_mma_c_col(l, e), kk * 16 + attn_mma_a_col(l, 2 * r + x));
        }
  }
  /* ldmatrix phases (8 lanes, 8 rows of 16 bytes): distinct 16-byte bank groups; the staging
   * stores of a warp (32 lanes, 4 bytes each): distinct banks */
  static const int dims[] = {64, 128, 256};
  for (int di = 0; di < 3; di++) {
    const int ldb = attn_smem_ld(dims[di]) * 2;
    for (int kind = 0; kind < 3; kind++)
      for (int ph = 0; ph < 4; ph++) {
        int seen = 0;
        for (int l = 8 * ph; l < 8 * ph + 8; l++) {
          const int a = kind == 0   ? attn_ldsm_q_offset(16, 3, l, ldb)
                        : kind == 1 ? attn_ldsm_k_offset(32, 2, l, ldb)
                                    : attn_ldsm_v_offset(16, 32, l, ldb);
          seen |= 1 << (a / 16 % 8);
        }
        CHECK_INT(seen, 0xff);
      }
    for (int dt = 0; dt < 2; dt++)
      for (int e = 0; e < 4; e += 2) {
        unsigned long long banks = 0;
        for (int l = 0; l < 32; l++)
          banks |= 1ull << (attn_o_stage_offset(16, dt, l, e, attn_smem_ld(dims[di])) * 2 / 4 % 32);
        CHECK(banks == 0xffffffffull);
      }
  }
  /* the KV tile range against a brute force over the rows of a tile */
  for (int cs = 0; cs < 2; cs++)
    for (int SQ_ = 1; SQ_ < 90; SQ_ += 13)
      for (int kv = 0; kv < 100; kv += 11)
        for (int m0 = 0; m0 < SQ_; m0 += 32) {
          int n_full, n_end;
          attn_kv_tiles(m0, 32, 16, SQ_, kv, cs, &n_full, &n_end);
          for (int n = 0; n < (kv + 15) / 16 + 1; n++) {
            int any = 0, all = 1;
            for (int i = m0; i < m0 + 32; i++)
              for (int j = n * 16; j < n * 16 + 16; j++) {
                const int vis = j < kv && (!cs || j <= i + kv - SQ_);
                if (i < SQ_) any |= vis;
                all &= vis;
              }
            if (any) CHECK(n < n_end);
            if (n >= n_end) CHECK(!any);
            if (n < n_full) CHECK(all);
          }
          CHECK(n_full <= n_end);
        }
}

TEST_CASE(configurations) {
  check_layouts();
  static const cfg cfgs[] = {
      {32, 32, 2, 0},  {64, 32, 3, 1},   {64, 64, 2, 1},  {128, 64, 3, 0},
      {32, 128, 2, 1}, {128, 128, 2, 0}, {64, 128, 3, 0},
  };
  static const shape shapes[] = {
      {1, 2, 1, 37, 37, 0, {0}},         /* SQ = SKV, no tile multiple */
      {1, 4, 2, 19, 83, 0, {0}},         /* SQ < SKV, grouped heads */
      {1, 1, 1, 150, 45, 0, {0}},        /* SQ > SKV: causal rows with no key */
      {1, 2, 1, 1, 70, 0, {0}},          /* SQ = 1 */
      {3, 1, 1, 33, 70, 1, {70, 0, 29}}, /* ragged, an empty sequence */
  };
  static const int dims[] = {64, 128, 256};
  /* every configuration, shape and mask for each head dim (half the configurations at D 256,
   * the slowest to emulate); the dtype alternates, and every third case runs unrounded */
  int runs = 0, k = 0;
  for (int di = 0; di < 3; di++)
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
      if (dims[di] == 256 && c % 2) continue;
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int cs = 0; cs < 2; cs++, k++) {
          CHECK(run(&cfgs[c], dims[di], &shapes[s], cs, 1 + k % 2, k % 3 == 0));
          runs++;
        }
    }
  printf("%d emulated runs\n", runs);
}

TEST_LIST(TEST_ENTRY(configurations))
