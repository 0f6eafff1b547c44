/* test_attn_decode_emulate.c — attn_decode's data path emulated on the host, block by block and
 * warp by warp, through the index header the kernel uses (attn_decode_index.h), and checked
 * against a double-precision softmax(scale Q K^T) V and LSE.
 *
 * What is emulated as the kernel does it: the split ranges; Q into a swizzled shared tile; the
 * block-table reads one tile ahead through the two-tile page-id buffer; each thread's loads of
 * K and V (lane mapping, 64-bit offsets, contiguous or paged, zero fill past the split) into
 * the cp.async ring (STAGES >= 2: commit groups, wait_group, the stage rotation) or the direct
 * register loads and shared stores (STAGES 1); ldmatrix (.x4 and .x4.trans, PTX 9.7.9.29)
 * delivering to each lane what its lane addresses select; mma.m16n8k16 taking fragments at the
 * positions of PTX 9.7.14.5.8; the log2-domain scaling, the kv_len / causal mask, the running
 * max with the quad shuffles, the rescale, P rounded to the dtype and packed from the S
 * accumulators; the token-slice merge in shared memory, the partials in `work`, the atomic
 * ticket (blocks run in a random order; the one drawing the last ticket merges) and the
 * counter reset.  Shared memory is checked for races: a location written (or landed by
 * cp.async) and read in the same barrier epoch, or read and then overwritten in the same
 * epoch, is reported, and a cp.async destination reads as NaN until its group is waited for.
 * Global reads outside K, V or the block table, block-table entries past a sequence's pages
 * (poisoned with -1) and `work` entries never written (NaN-poisoned) all fail the test; O and
 * LSE are NaN-poisoned before every launch, and each problem is launched twice on the same
 * counters (they must come back zero).
 *
 * Problems: contiguous and paged (PAGE 16, 32), ragged lengths with 0, 1 and lengths that are
 * not multiples of BLOCK_N or PAGE, SQ 1, 4 and 8 with and without the causal mask, GQA 1:1,
 * 4:1 and 8:1, D 64, 128 and 256, SPLITS 1..16 (more splits than tiles and than tokens),
 * every STAGES, both VEC, several warp layouts; then a seeded random sweep. */
/* stages: none */
#include <math.h>
#include <stdint.h>

#include "../templates/attention/attn_abi.h"
#include "../templates/attention/attn_decode_index.h"
#include "test.h"

/* ---- the problem and the configuration ---- */

typedef struct prob {
  int B, HQ, HKV, SQ, SKV, D, causal, page; /* page 0: contiguous */
  int kv_lens[8];                           /* used when ragged */
  int ragged;
  int bf16; /* dtype: 1 bf16, 0 f16 */
} prob;

typedef struct cfg {
  int splits, block_n, warps, vec, stages;
} cfg;

/* The dtype's rounding (to nearest even) of a float. */
static float round_to(float x, int bf16) {
  if (x == 0 || !isfinite(x)) return x;
  int e;
  frexpf(x, &e);
  int ex = e - 1;
  const int mant = bf16 ? 7 : 10, emin = bf16 ? -126 : -14;
  if (ex < emin) ex = emin;
  const float q = ldexpf(1.0f, ex - mant);
  return nearbyintf(x / q) * q;
}

static uint64_t rng_state;
static uint32_t rng(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}
static float urand(void) { return (float)((double)rng() / 2147483648.0 - 1.0); } /* [-1, 1) */

/* ---- the emulated machine ---- */

typedef struct tracked {
  float *v;
  int *wr, *rd; /* barrier epoch of the last write (landing) and read; -1 never */
  int n;
} tracked;

static int g_epoch, g_races, g_oob;

static void tr_init(tracked *t, int n) {
  t->n = n;
  t->v = malloc(sizeof(float) * (size_t)n);
  t->wr = malloc(sizeof(int) * (size_t)n);
  t->rd = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) t->v[i] = NAN, t->wr[i] = t->rd[i] = -1;
}
static void tr_free(tracked *t) {
  free(t->v);
  free(t->wr);
  free(t->rd);
}
static float tr_read(tracked *t, int i) {
  if (i < 0 || i >= t->n) {
    g_races++;
    return NAN;
  }
  if (t->wr[i] == g_epoch) g_races++; /* written or landed in this epoch: no barrier between */
  t->rd[i] = g_epoch;
  return t->v[i];
}
static void tr_write(tracked *t, int i, float v) {
  if (i < 0 || i >= t->n) {
    g_races++;
    return;
  }
  if (t->rd[i] == g_epoch) g_races++; /* read in this epoch by some thread */
  t->v[i] = v;
  t->wr[i] = g_epoch;
}

/* cp.async: the copies of the open group and of committed groups not yet waited for. */
typedef struct copy {
  int slot, group;
  float v;
} copy;
static copy *g_copies;
static int g_ncopies, g_cap_copies, g_groups; /* g_groups: committed so far in this block */

typedef struct emu {
  const prob *p;
  const cfg *c;
  int group, rows, q_rows, wms, wns, nw, threads, cpr, iters, vb, row_bytes, tile_bytes;
  const float *Q, *K, *V;
  long long kv_elems;
  const int *table; /* [B, max_pages], -1 past a sequence's pages */
  int max_pages;
  float *O, *LSE, *work;
  long long work_n;
  int *counters;
  int *merges;  /* merges per group in this launch: exactly one when SPLITS > 1 */
  tracked sm;   /* Q tile and the stages, one slot per 2-byte element */
  tracked oscr; /* the token-slice merge scratch (floats) */
  tracked mls;  /* m (then weights) and l of the slices */
  tracked wsm;  /* split weights, row M, row L */
  tracked spg;  /* page ids of two tiles */
  int ticket;
} emu;

/* Per-lane registers of one warp. */
typedef struct lane_regs {
  float m[2], l[2], o[32][4];
  int bnd[2];
} lane_regs;

static void cp_issue(emu *e, int slot, float v) {
  if (slot < 0 || slot >= e->sm.n) {
    g_races++;
    return;
  }
  if (e->sm.rd[slot] == g_epoch) g_races++; /* overwriting what is being read this epoch */
  e->sm.v[slot] = NAN;                      /* in flight */
  e->sm.wr[slot] = g_epoch;
  if (g_ncopies == g_cap_copies) {
    g_cap_copies = g_cap_copies ? 2 * g_cap_copies : 4096;
    g_copies = realloc(g_copies, sizeof(copy) * (size_t)g_cap_copies);
  }
  g_copies[g_ncopies++] = (copy){slot, g_groups, v};
}
static void cp_commit(void) { g_groups++; }
/* cp.async.wait_group n: every group but the newest n lands. */
static void cp_wait(emu *e, int n) {
  int keep = 0;
  for (int i = 0; i < g_ncopies; i++) {
    if (g_copies[i].group < g_groups - n) {
      e->sm.v[g_copies[i].slot] = g_copies[i].v;
      e->sm.wr[g_copies[i].slot] = g_epoch;
    } else {
      g_copies[keep++] = g_copies[i];
    }
  }
  g_ncopies = keep;
}
static void barrier(void) { g_epoch++; }

/* A global read of n elements of X (size elements) at off; zeros and counted when outside. */
static void gread(const float *X, long long size, long long off, int n, float *out) {
  if (off < 0 || off + n > size) {
    g_oob++;
    for (int x = 0; x < n; x++) out[x] = 0;
    return;
  }
  for (int x = 0; x < n; x++) out[x] = X[off + x];
}
static int table_read(emu *e, long long idx) {
  if (idx < 0 || idx >= (long long)e->p->B * e->max_pages || e->table[idx] < 0) {
    g_oob++;
    return 0;
  }
  return e->table[idx];
}

/* ldmatrix.x4 over shared slots, one byte address per lane (at byte_base + addr[lane]):
 * out[lane][reg][half]. */
static void ldsm(emu *e, int byte_base, const int addr[32], int trans, float out[32][4][2]) {
  for (int t = 0; t < 32; t++)
    for (int j = 0; j < 4; j++)
      if (!trans) { /* row t/4 of matrix j, 16-bit elements 2(t%4), 2(t%4)+1 */
        const int byte = byte_base + addr[8 * j + t / 4] + 4 * (t % 4);
        out[t][j][0] = tr_read(&e->sm, byte / 2);
        out[t][j][1] = tr_read(&e->sm, byte / 2 + 1);
      } else { /* rows 2(t%4), 2(t%4)+1 of matrix j, column t/4 */
        out[t][j][0] = tr_read(&e->sm, (byte_base + addr[8 * j + 2 * (t % 4)] + 2 * (t / 4)) / 2);
        out[t][j][1] =
            tr_read(&e->sm, (byte_base + addr[8 * j + 2 * (t % 4) + 1] + 2 * (t / 4)) / 2);
      }
}

/* mma.m16n8k16, f32 accumulate: c[lane][4] += A B from a[lane][4][2] and b[lane][2][2]. */
static void mma(float a[32][4][2], float b[32][2][2], float c[32][4]) {
  float A[16][16], Bm[16][8];
  for (int t = 0; t < 32; t++) {
    const int g = t / 4, tig = t % 4;
    for (int i = 0; i < 8; i++)
      A[g + 8 * ((i / 2) % 2)][2 * tig + i % 2 + 8 * (i / 4)] = a[t][i / 2][i % 2];
    for (int i = 0; i < 4; i++) Bm[2 * tig + i % 2 + 8 * (i / 2)][g] = b[t][i / 2][i % 2];
  }
  for (int t = 0; t < 32; t++)
    for (int i = 0; i < 4; i++) {
      const int r = attn_acc_row(t, i), col = attn_acc_col(t, i);
      float s = 0;
      for (int k = 0; k < 16; k++) s += A[r][k] * Bm[k][col];
      c[t][i] += s;
    }
}

static void shfl_xor_max(float v[32][2], int h, int mask) {
  float t[32];
  for (int l = 0; l < 32; l++) t[l] = attn_fmax(v[l][h], v[l ^ mask][h]);
  for (int l = 0; l < 32; l++) v[l][h] = t[l];
}

/* ---- one block ---- */

static int vec_of(const emu *e) { return e->c->vec; }

/* consume(): S = Q K^T, the online softmax and O += P V for warp `warp`, as the kernel does. */
static void consume(emu *e, lane_regs *lr, int warp, int stage, int base, int mask_from,
                    float scale_log2) {
  const int wm = attn_warp_m(warp, e->wms), wn = attn_warp_n(warp, e->wms), RB = e->row_bytes,
            D = e->p->D;
  const int sk = e->q_rows * RB + stage * 2 * e->tile_bytes, sv = sk + e->tile_bytes;
  static float s[32][16][4];
  static float qa[32][4][2], kb[32][4][2], vb[32][4][2], pa[32][4][2], bb[32][2][2];
  int addr[32];
  for (int l = 0; l < 32; l++)
    for (int j = 0; j < e->nw / 8; j++)
      for (int i = 0; i < 4; i++) s[l][j][i] = 0;
  for (int ks = 0; ks < D / 16; ks++) {
    for (int l = 0; l < 32; l++) addr[l] = attn_ldsm_q(16 * wm, ks, l, RB);
    ldsm(e, 0, addr, 0, qa);
    for (int jp = 0; jp < e->nw / 16; jp++) {
      for (int l = 0; l < 32; l++) addr[l] = attn_ldsm_k(wn * e->nw + 16 * jp, ks, l, RB);
      ldsm(e, sk, addr, 0, kb);
      for (int half = 0; half < 2; half++) {
        float c[32][4];
        for (int l = 0; l < 32; l++) {
          for (int r = 0; r < 2; r++)
            for (int x = 0; x < 2; x++) bb[l][r][x] = kb[l][2 * half + r][x];
          for (int i = 0; i < 4; i++) c[l][i] = s[l][2 * jp + half][i];
        }
        mma(qa, bb, c);
        for (int l = 0; l < 32; l++)
          for (int i = 0; i < 4; i++) s[l][2 * jp + half][i] = c[l][i];
      }
    }
  }
  /* the header's scaling and mask, the quad's max by xor shuffles, the header's softmax step */
  const int need_mask = base + e->c->block_n > mask_from;
  float mx[32][2];
  for (int l = 0; l < 32; l++)
    attn_decode_scores(s[l], e->nw / 8, scale_log2, need_mask, base + wn * e->nw, l, lr[l].bnd,
                       mx[l]);
  for (int h = 0; h < 2; h++) {
    shfl_xor_max(mx, h, 1);
    shfl_xor_max(mx, h, 2);
  }
  for (int l = 0; l < 32; l++)
    attn_decode_softmax(s[l], e->nw / 8, lr[l].o, D / 8, lr[l].m, lr[l].l, mx[l]);
  for (int kk = 0; kk < e->nw / 16; kk++) {
    for (int l = 0; l < 32; l++)
      for (int j = 0; j < 4; j++) {
        const float *t = s[l][attn_p_tile(kk, j)] + attn_p_elem(j);
        pa[l][j][0] = round_to(t[0], e->p->bf16); /* pack2: low half the first */
        pa[l][j][1] = round_to(t[1], e->p->bf16);
      }
    for (int dp = 0; dp < D / 16; dp++) {
      for (int l = 0; l < 32; l++) addr[l] = attn_ldsm_v(wn * e->nw + 16 * kk, 16 * dp, l, RB);
      ldsm(e, sv, addr, 1, vb);
      for (int half = 0; half < 2; half++) {
        float c[32][4];
        for (int l = 0; l < 32; l++) {
          for (int r = 0; r < 2; r++)
            for (int x = 0; x < 2; x++) bb[l][r][x] = vb[l][2 * half + r][x];
          for (int i = 0; i < 4; i++) c[l][i] = lr[l].o[2 * dp + half][i];
        }
        mma(pa, bb, c);
        for (int l = 0; l < 32; l++)
          for (int i = 0; i < 4; i++) lr[l].o[2 * dp + half][i] = c[l][i];
      }
    }
  }
}

static void store_o(emu *e, int b, int kvh, int r, int c8, const float acc[8], float sc) {
  const prob *p = e->p;
  const long long off = attn_q_offset(b, attn_row_query(r, e->group),
                                      attn_row_head(r, e->group, kvh), p->SQ, p->HQ, p->D) +
                        8 * c8;
  if (off < 0 || off + 8 > (long long)p->B * p->SQ * p->HQ * p->D) {
    g_oob++;
    return;
  }
  for (int x = 0; x < 8; x++) e->O[off + x] = round_to(acc[x] * sc, p->bf16);
}
static void store_lse(emu *e, int b, int kvh, int r, float v) {
  const prob *p = e->p;
  const long long off = attn_lse_offset(b, attn_row_head(r, e->group, kvh),
                                        attn_row_query(r, e->group), p->HQ, p->SQ);
  if (off < 0 || off >= (long long)p->B * p->HQ * p->SQ) {
    g_oob++;
    return;
  }
  e->LSE[off] = v;
}
static float work_read(emu *e, long long i) {
  if (i < 0 || i >= e->work_n) {
    g_oob++;
    return NAN;
  }
  return e->work[i];
}
static void work_write(emu *e, long long i, float v) {
  if (i < 0 || i >= e->work_n) {
    g_oob++;
    return;
  }
  e->work[i] = v;
}

static lane_regs g_lr[8][32];

/* The block's token slices (its warps along N) merged into its rows: written out when the split is
 * the whole sequence (1: the block is done), else its partials and their max/sum into `work`. */
static int slices_merge(emu *e, int split, int kvh, int b) {
  const prob *p = e->p;
  const cfg *c = e->c;
  const int D = p->D, Qr = e->q_rows, wns = e->wns, rows = e->rows;
  const int bg = b * p->HKV + kvh;
  /* the token slices merge */
  for (int w = 0; w < c->warps; w++) {
    const int wm = attn_warp_m(w, e->wms), wn = attn_warp_n(w, e->wms);
    lane_regs *lr = g_lr[w];
    for (int h = 0; h < 2; h++) {
      float t[32];
      for (int l = 0; l < 32; l++) t[l] = lr[l].l[h] + lr[l ^ 1].l[h];
      for (int l = 0; l < 32; l++) lr[l].l[h] = t[l];
      for (int l = 0; l < 32; l++) t[l] = lr[l].l[h] + lr[l ^ 2].l[h];
      for (int l = 0; l < 32; l++) lr[l].l[h] = t[l];
    }
    for (int l = 0; l < 32; l++) {
      for (int nt = 0; nt < D / 8; nt++)
        for (int h = 0; h < 2; h++) {
          const int r = attn_thread_row(wm, l, h), d = 8 * nt + attn_acc_col(l, 2 * h);
          tr_write(&e->oscr, attn_oscr(wn, r, d, Qr, D), lr[l].o[nt][2 * h]);
          tr_write(&e->oscr, attn_oscr(wn, r, d, Qr, D) + 1, lr[l].o[nt][2 * h + 1]);
        }
      if (l % 4 == 0)
        for (int h = 0; h < 2; h++) {
          const int r = attn_thread_row(wm, l, h);
          tr_write(&e->mls, attn_mlscr(wn, r, Qr), lr[l].m[h]);
          tr_write(&e->mls, wns * Qr + attn_mlscr(wn, r, Qr), lr[l].l[h]);
        }
    }
  }
  barrier();
  for (int r = 0; r < Qr; r++) {
    /* the row's thread: the reads of its merge checked against the barrier epochs, then the
     * header's merge on the scratch itself (the weights go in place, the row's own slots) */
    for (int w = 0; w < wns; w++) {
      tr_read(&e->mls, attn_mlscr(w, r, Qr));
      tr_read(&e->mls, wns * Qr + attn_mlscr(w, r, Qr));
    }
    float M, L;
    attn_merge_slices(e->mls.v, r, Qr, wns, &M, &L);
    tr_write(&e->wsm, c->splits * Qr + r, M);
    tr_write(&e->wsm, (c->splits + 1) * Qr + r, L);
  }
  barrier();
  if (c->splits == 1) {
    for (int ei = 0; ei < rows * (D / 8); ei++) {
      const int r = ei / (D / 8), c8 = ei % (D / 8);
      float acc[8] = {0};
      for (int w = 0; w < wns; w++) {
        const float wt = tr_read(&e->mls, attn_mlscr(w, r, Qr));
        for (int x = 0; x < 8; x++)
          acc[x] += wt * tr_read(&e->oscr, attn_oscr(w, r, 8 * c8 + x, Qr, D));
      }
      store_o(e, b, kvh, r, c8, acc, attn_out_scale(tr_read(&e->wsm, (c->splits + 1) * Qr + r)));
    }
    for (int r = 0; r < rows; r++)
      store_lse(e, b, kvh, r,
                attn_lse(tr_read(&e->wsm, c->splits * Qr + r),
                         tr_read(&e->wsm, (c->splits + 1) * Qr + r)));
    return 1;
  }
  for (int ei = 0; ei < rows * (D / 4); ei++) {
    const int r = ei / (D / 4), c4 = ei % (D / 4);
    float acc[4] = {0};
    for (int w = 0; w < wns; w++) {
      const float wt = tr_read(&e->mls, attn_mlscr(w, r, Qr));
      for (int x = 0; x < 4; x++)
        acc[x] += wt * tr_read(&e->oscr, attn_oscr(w, r, 4 * c4 + x, Qr, D));
    }
    for (int x = 0; x < 4; x++)
      work_write(e, attn_work_o(bg, split, r, c->splits, rows, D) + 4 * c4 + x, acc[x]);
  }
  const long long total_rows = (long long)p->B * p->HQ * p->SQ;
  for (int r = 0; r < rows; r++) {
    const long long ml = attn_work_ml(bg, split, r, c->splits, rows, D, total_rows);
    work_write(e, ml, tr_read(&e->wsm, c->splits * Qr + r));
    work_write(e, ml + 1, tr_read(&e->wsm, (c->splits + 1) * Qr + r));
  }
  return 0;
}

/* The split's ticket: the last split of a (batch, KV head) merges every split's partials. */
static void splits_merge(emu *e, int kvh, int b, int kv_len) {
  const prob *p = e->p;
  const cfg *c = e->c;
  const int D = p->D, Qr = e->q_rows, rows = e->rows;
  const int bg = b * p->HKV + kvh;
  const int BN = c->block_n;
  /* the ticket */
  barrier();
  const int ticket = e->counters[bg]++;
  if (!attn_ticket_is_last(ticket, c->splits)) return;
  e->merges[bg]++;
  const long long total_rows = (long long)p->B * p->HQ * p->SQ;
  barrier();
  for (int r = 0; r < rows; r++) {
    /* the header's merge reads `work` itself (never-written partials are NaN, so a wrong split
     * or offset shows); its weights are then recorded in the tracked scratch */
    float M, L;
    attn_merge_splits(e->work, bg, r, c->splits, rows, D, total_rows, kv_len, BN, e->wsm.v, Qr, &M,
                      &L);
    for (int s = 0; s < c->splits; s++)
      tr_write(&e->wsm, attn_wsm(s, r, Qr), e->wsm.v[attn_wsm(s, r, Qr)]);
    tr_write(&e->wsm, (c->splits + 1) * Qr + r, L);
    store_lse(e, b, kvh, r, attn_lse(M, L));
  }
  barrier();
  for (int ei = 0; ei < rows * (D / 8); ei++) {
    const int r = ei / (D / 8), c8 = ei % (D / 8);
    float acc[8] = {0};
    for (int s = 0; s < c->splits; s++) {
      const float wt = tr_read(&e->wsm, attn_wsm(s, r, Qr));
      if (wt != 0.f)
        for (int x = 0; x < 8; x++)
          acc[x] += wt * work_read(e, attn_work_o(bg, s, r, c->splits, rows, D) + 8 * c8 + x);
    }
    store_o(e, b, kvh, r, c8, acc, attn_out_scale(tr_read(&e->wsm, (c->splits + 1) * Qr + r)));
  }
  e->counters[bg] = 0;
}

static void run_block(emu *e, int split, int kvh, int b, float scale_log2) {
  const prob *p = e->p;
  const cfg *c = e->c;
  const int D = p->D, RB = e->row_bytes, T = e->threads, BN = c->block_n, VEC = vec_of(e);
  const int rows = e->rows, Qr = e->q_rows;
  const int kv_len = attn_kv_len(p->ragged ? p->kv_lens : NULL, b, p->SKV);
  int t0, t1;
  attn_split_range(kv_len, BN, c->splits, split, &t0, &t1);
  g_ncopies = 0;
  g_groups = 0;
  barrier(); /* a new block: fresh shared memory epochs */
  for (int i = 0; i < e->sm.n; i++) e->sm.v[i] = NAN;

  if (c->splits == 1 || t0 < t1) {
    /* Q */
    for (int ei = 0; ei < Qr * (RB / 16); ei++) {
      const int r = ei / (RB / 16), ch = ei % (RB / 16);
      float v[8] = {0};
      if (r < rows)
        gread(e->Q, (long long)p->B * p->SQ * p->HQ * D,
              attn_q_offset(b, attn_row_query(r, e->group), attn_row_head(r, e->group, kvh), p->SQ,
                            p->HQ, D) +
                  ch * 8,
              8, v);
      for (int x = 0; x < 8; x++) tr_write(&e->sm, (attn_swz(r, ch * 16, RB) + 2 * x) / 2, v[x]);
    }
    for (int w = 0; w < c->warps; w++)
      for (int l = 0; l < 32; l++) {
        lane_regs *lr = &g_lr[w][l];
        for (int h = 0; h < 2; h++) {
          lr->bnd[h] = attn_row_bound(attn_thread_row(attn_warp_m(w, e->wms), l, h), rows, kv_len,
                                      p->SQ, e->group, p->causal);
          lr->m[h] = ATTN_NEG_INF;
          lr->l[h] = 0;
        }
        for (int nt = 0; nt < D / 8; nt++)
          for (int i = 0; i < 4; i++) lr->o[nt][i] = 0;
      }
    const int mask_from = attn_key_bound(kv_len, p->SQ, 0, p->causal);
    const int ntiles = attn_tiles(t0, t1, BN);
    const int pg_per = (BN + T - 1) / T;
    static int nxt[256][4];
    /* the page-id pipeline */
#define TABLE_LOAD(kt)                                                                     \
  do {                                                                                     \
    if (p->page)                                                                           \
      for (int t = 0; t < T; t++)                                                          \
        for (int q = 0; q < pg_per; q++) {                                                 \
          const int row = t + q * T, tok = t0 + (kt)*BN + row;                             \
          nxt[t][q] = row < BN && tok < t1                                                 \
                          ? table_read(e, attn_table_index(b, tok, p->page, e->max_pages)) \
                          : 0;                                                             \
        }                                                                                  \
  } while (0)
#define TABLE_STORE(kt)                                                                       \
  do {                                                                                        \
    if (p->page)                                                                              \
      for (int t = 0; t < T; t++)                                                             \
        for (int q = 0; q < pg_per; q++)                                                      \
          if (t + q * T < BN) tr_write(&e->spg, ((kt)&1) * BN + t + q * T, (float)nxt[t][q]); \
  } while (0)
    /* element offset of thread t's load i of tile kt (row, token) */
#define SRC_OFFSET(kt, t, i, row, tok)                                                           \
  (attn_kv_offset(p->page, p->page ? (int)tr_read(&e->spg, ((kt)&1) * BN + (row)) : 0, b, (tok), \
                  p->SKV, p->HKV, kvh, D) +                                                      \
   (long long)attn_load_piece((t), (i), T, e->cpr) * VEC)
    TABLE_LOAD(0);
    TABLE_STORE(0);
    if (c->stages > 1) {
      const int S = c->stages;
#define ISSUE(kt, stage)                                                            \
  do {                                                                              \
    const int base_ = t0 + (kt)*BN, sk_ = Qr * RB + (stage)*2 * e->tile_bytes;      \
    for (int t = 0; t < T; t++)                                                     \
      for (int i = 0; i < e->iters; i++) {                                          \
        const int row = attn_load_row(t, i, T, e->cpr), tok = base_ + row;          \
        const int ok = tok < t1;                                                    \
        float kv[2][8] = {{0}};                                                     \
        if (ok) {                                                                   \
          const long long off = SRC_OFFSET(kt, t, i, row, tok);                     \
          gread(e->K, e->kv_elems, off, VEC, kv[0]);                                \
          gread(e->V, e->kv_elems, off, VEC, kv[1]);                                \
        }                                                                           \
        const int so = attn_swz(row, attn_load_piece(t, i, T, e->cpr) * e->vb, RB); \
        for (int x = 0; x < VEC; x++) {                                             \
          cp_issue(e, (sk_ + so) / 2 + x, kv[0][x]);                                \
          cp_issue(e, (sk_ + e->tile_bytes + so) / 2 + x, kv[1][x]);                \
        }                                                                           \
      }                                                                             \
  } while (0)
      if (p->page) barrier();
      for (int st = 0; st < S - 1; st++) {
        if (st < ntiles) {
          ISSUE(st, st);
          if (p->page) {
            TABLE_LOAD(st + 1);
            TABLE_STORE(st + 1);
            barrier();
          }
        }
        cp_commit();
      }
      for (int kt = 0; kt < ntiles; kt++) {
        cp_wait(e, S - 2);
        barrier();
        const int kn = kt + S - 1;
        if (kn < ntiles) {
          ISSUE(kn, kn % S);
          TABLE_LOAD(kn + 1);
        }
        cp_commit();
        for (int w = 0; w < c->warps; w++)
          consume(e, g_lr[w], w, kt % S, t0 + kt * BN, mask_from, scale_log2);
        if (kn < ntiles) TABLE_STORE(kn + 1);
      }
      cp_wait(e, 0);
#undef ISSUE
    } else {
      static float kr[256][32][8], vr[256][32][8];
      barrier();
      for (int kt = 0; kt < ntiles; kt++) {
        const int base = t0 + kt * BN;
        for (int t = 0; t < T; t++)
          for (int i = 0; i < e->iters; i++) {
            const int row = attn_load_row(t, i, T, e->cpr), tok = base + row;
            for (int x = 0; x < VEC; x++) kr[t][i][x] = vr[t][i][x] = 0;
            if (tok < t1) {
              const long long off = SRC_OFFSET(kt, t, i, row, tok);
              gread(e->K, e->kv_elems, off, VEC, kr[t][i]);
              gread(e->V, e->kv_elems, off, VEC, vr[t][i]);
            }
          }
        TABLE_LOAD(kt + 1);
        barrier();
        for (int t = 0; t < T; t++)
          for (int i = 0; i < e->iters; i++) {
            const int so = attn_swz(attn_load_row(t, i, T, e->cpr),
                                    attn_load_piece(t, i, T, e->cpr) * e->vb, RB);
            for (int x = 0; x < VEC; x++) {
              tr_write(&e->sm, (Qr * RB + so) / 2 + x, kr[t][i][x]);
              tr_write(&e->sm, (Qr * RB + e->tile_bytes + so) / 2 + x, vr[t][i][x]);
            }
          }
        TABLE_STORE(kt + 1);
        barrier();
        for (int w = 0; w < c->warps; w++) consume(e, g_lr[w], w, 0, base, mask_from, scale_log2);
      }
    }
#undef TABLE_LOAD
#undef TABLE_STORE
#undef SRC_OFFSET
    barrier();
    if (slices_merge(e, split, kvh, b)) return;
  }
  splits_merge(e, kvh, b, kv_len);
}

/* ---- a whole problem ---- */

static int q_rows_for(int rows) { return rows <= 16 ? 16 : rows <= 32 ? 32 : 64; }

/* The manifest's constraints that the emulator relies on (the kernel static_asserts them). */
static int cfg_valid(const prob *p, const cfg *c) {
  const int rows = p->HQ / p->HKV * p->SQ;
  if (rows > 64) return 0;
  const int wms = q_rows_for(rows) / 16, threads = 32 * c->warps;
  if (c->warps % wms) return 0;
  const int wns = c->warps / wms, cpr = p->D / c->vec;
  return c->block_n % (16 * wns) == 0 && (c->block_n * cpr) % threads == 0 &&
         c->block_n * cpr / threads <= 32 && c->warps <= 8 && c->block_n <= 128;
}

/* Runs the problem under the configuration twice and compares with the double reference.
 * Returns the relative Frobenius error of O (the worst of the two runs), or -1 on a failure
 * already reported. */
/* The reference O and LSE in double, from attn_abi.h's definitions (not the index header): Q
 * and the logical K/V ([B][SKV][HKV][D]), each batch's KV length in LENS. */
static void reference(const prob *p, const float *Q, const float *Kl, const float *Vl,
                      const int *lens, float scale, double *Oref, double *Lref) {
  const int D = p->D, group = p->HQ / p->HKV;
  double *sc = malloc(sizeof(double) * (size_t)(p->SKV + 1));
  for (int b = 0; b < p->B; b++)
    for (int h = 0; h < p->HQ; h++)
      for (int i = 0; i < p->SQ; i++) {
        const int kvh = h / group;
        int bound = lens[b]; /* keys j < bound: j <= i + kv_len - SQ under the causal mask */
        if (p->causal && i + lens[b] - p->SQ + 1 < bound) bound = i + lens[b] - p->SQ + 1;
        if (bound < 0) bound = 0;
        const float *q = Q + (((long long)b * p->SQ + i) * p->HQ + h) * D;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < bound; j++) {
          const float *k = Kl + (((long long)b * p->SKV + j) * p->HKV + kvh) * D;
          double dot = 0;
          for (int d = 0; d < D; d++) dot += (double)q[d] * k[d];
          sc[j] = dot * scale;
          if (sc[j] > mx) mx = sc[j];
        }
        double *o = Oref + (((long long)b * p->SQ + i) * p->HQ + h) * D;
        for (int j = 0; j < bound; j++) {
          const double w = exp(sc[j] - mx);
          sum += w;
          const float *v = Vl + (((long long)b * p->SKV + j) * p->HKV + kvh) * D;
          for (int d = 0; d < D; d++) o[d] += w * v[d];
        }
        for (int d = 0; d < D && bound > 0; d++) o[d] /= sum;
        Lref[((long long)b * p->HQ + h) * p->SQ + i] = bound > 0 ? mx + log(sum) : -INFINITY;
      }

  free(sc);
}

/* One run's outputs against the reference: the relative error of O in *rel; 1 when O and the
 * LSE are within tolerance with no race, bad read or counter left (else the reasons printed). */
static int run_ok(const emu *e, const double *Oref, const double *Lref, long long q_n,
                  long long lse_n, const char *label, int run, double *rel_out) {
  const prob *p = e->p;
  const cfg *c = e->c;
  double err2 = 0, ref2 = 0, lse_err = 0;
  int nans = 0;
  for (long long i = 0; i < q_n; i++) {
    if (!isfinite(e->O[i])) nans++;
    err2 += (e->O[i] - Oref[i]) * (e->O[i] - Oref[i]);
    ref2 += Oref[i] * Oref[i];
  }
  for (long long i = 0; i < lse_n; i++) {
    if (isinf(Lref[i])) {
      if (!(isinf(e->LSE[i]) && e->LSE[i] < 0)) nans++;
    } else if (!isfinite(e->LSE[i])) {
      nans++;
    } else if (fabs(e->LSE[i] - Lref[i]) > lse_err) {
      lse_err = fabs(e->LSE[i] - Lref[i]);
    }
  }
  int counters_left = 0;
  for (int i = 0; i < p->B * p->HKV; i++)
    counters_left += e->counters[i] != 0 || (c->splits > 1 && e->merges[i] != 1);
  const double rel = ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
  const double tol = p->bf16 ? 1e-2 : 2e-3;
  const int ok =
      !nans && g_races == 0 && g_oob == 0 && counters_left == 0 && rel <= tol && lse_err <= 2e-3;
  if (!ok) {
    fprintf(stderr,
            "%s: run %d: rel error %.3g (tol %.0e), lse error %.3g, %d non-finite, %d races, %d "
            "bad reads, "
            "%d counters left or groups not merged exactly once\n",
            label, run, rel, tol, lse_err, nans, g_races, g_oob, counters_left);
  }
  *rel_out = rel;
  return ok;
}

static double run_case(const prob *p, const cfg *c, const char *label) {
  const int D = p->D, group = p->HQ / p->HKV;
  const float scale = 1.0f / sqrtf((float)D);
  const float scale_log2 = scale * 1.4426950408889634f;
  emu e;
  memset(&e, 0, sizeof e);
  e.p = p;
  e.c = c;
  e.group = group;
  e.rows = group * p->SQ;
  e.q_rows = q_rows_for(e.rows);
  e.wms = e.q_rows / 16;
  e.wns = c->warps / e.wms;
  e.nw = c->block_n / e.wns;
  e.threads = 32 * c->warps;
  e.cpr = D / c->vec;
  e.iters = c->block_n * e.cpr / e.threads;
  e.vb = c->vec * 2;
  e.row_bytes = 2 * D;
  e.tile_bytes = c->block_n * e.row_bytes;
  int lens[8];
  for (int b = 0; b < p->B; b++) lens[b] = attn_kv_len(p->ragged ? p->kv_lens : NULL, b, p->SKV);

  /* inputs: Q, and K/V contiguous or in scattered pages; unused K/V rows are NaN */
  const long long q_n = (long long)p->B * p->SQ * p->HQ * D;
  float *Q = malloc(sizeof(float) * (size_t)q_n);
  /* the family's kind of inputs (kernels/attention.c): Q = 2.75u + sign(d), K = 2.75u (scaled
   * logits of standard deviation ~3), spike keys at 1/8, 3/8, 5/8 and 7/8 of each sequence,
   * K = 2(n + 2) / sqrt(D) sign(d), standing about 4, 6, 8 and 10 above the row's mean; V = u */
  for (long long i = 0; i < q_n; i++)
    Q[i] = round_to(2.75f * urand() + ((i % D) * 7 % 3 ? 1.f : -1.f), p->bf16);
  int *table = NULL, pages_used = 0;
  long long kv_n;
  if (p->page) {
    e.max_pages = (p->SKV + p->page - 1) / p->page;
    if (e.max_pages < 1) e.max_pages = 1;
    for (int b = 0; b < p->B; b++) pages_used += (lens[b] + p->page - 1) / p->page;
    const int num_pages = pages_used + 3; /* a few spare pages nobody owns */
    int *perm = malloc(sizeof(int) * (size_t)num_pages);
    for (int i = 0; i < num_pages; i++) perm[i] = i;
    for (int i = num_pages - 1; i > 0; i--) {
      const int j = (int)(rng() % (uint32_t)(i + 1)), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    table = malloc(sizeof(int) * (size_t)(p->B * e.max_pages));
    int next = 0;
    for (int b = 0; b < p->B; b++)
      for (int j = 0; j < e.max_pages; j++)
        table[b * e.max_pages + j] = j * p->page < lens[b] ? perm[next++] : -1;
    free(perm);
    kv_n = (long long)num_pages * p->page * p->HKV * D;
  } else {
    kv_n = (long long)p->B * p->SKV * p->HKV * D;
  }
  float *K = malloc(sizeof(float) * (size_t)(kv_n ? kv_n : 1)),
        *V = malloc(sizeof(float) * (size_t)(kv_n ? kv_n : 1));
  for (long long i = 0; i < kv_n; i++) K[i] = V[i] = NAN;
  /* logical K/V for the reference: [B][SKV][HKV][D] */
  const long long lg_n = (long long)p->B * p->SKV * p->HKV * D;
  float *Kl = malloc(sizeof(float) * (size_t)(lg_n ? lg_n : 1)),
        *Vl = malloc(sizeof(float) * (size_t)(lg_n ? lg_n : 1));
  for (int b = 0; b < p->B; b++)
    for (int t = 0; t < lens[b]; t++)
      for (int h = 0; h < p->HKV; h++) {
        /* attn_abi.h's layouts, written out (not through the index header under test) */
        const long long dst =
            p->page ? (((long long)table[b * e.max_pages + t / p->page] * p->page + t % p->page) *
                           p->HKV +
                       h) *
                          D
                    : (((long long)b * p->SKV + t) * p->HKV + h) * D;
        const long long lg = (((long long)b * p->SKV + t) * p->HKV + h) * D;
        const int spike = lens[b] >= 8 && t % (lens[b] / 4 > 0 ? lens[b] / 4 : 1) == lens[b] / 8 &&
                          t < 4 * (lens[b] / 4);
        const int n = spike ? t / (lens[b] / 4) : 0;
        for (int d = 0; d < D; d++) {
          const float k = spike ? 2.f * (n + 2) / sqrtf((float)D) * ((d * 7 % 3) ? 1.f : -1.f)
                                : 2.75f * urand();
          K[dst + d] = Kl[lg + d] = round_to(k, p->bf16);
          V[dst + d] = Vl[lg + d] = round_to(urand(), p->bf16);
        }
      }
  e.Q = Q;
  e.K = K;
  e.V = V;
  e.kv_elems = kv_n;
  e.table = table;

  /* the reference, in double, from attn_abi.h's definitions (not the index header) */
  const long long lse_n = (long long)p->B * p->HQ * p->SQ;
  double *Oref = calloc((size_t)q_n, sizeof(double)), *Lref = calloc((size_t)lse_n, sizeof(double));
  reference(p, Q, Kl, Vl, lens, scale, Oref, Lref);
  /* scratch and outputs */
  e.work_n = lse_n * c->splits * (D + 2);
  e.work = malloc(sizeof(float) * (size_t)e.work_n);
  e.counters = calloc((size_t)(p->B * p->HKV), sizeof(int));
  e.merges = calloc((size_t)(p->B * p->HKV), sizeof(int));
  e.O = malloc(sizeof(float) * (size_t)q_n);
  e.LSE = malloc(sizeof(float) * (size_t)lse_n);
  const int sm_bytes = e.q_rows * e.row_bytes + (c->stages > 1 ? c->stages : 1) * 2 * e.tile_bytes;
  tr_init(&e.sm, sm_bytes / 2);
  tr_init(&e.oscr, e.wns * e.q_rows * (D + 4));
  tr_init(&e.mls, 2 * e.wns * e.q_rows);
  tr_init(&e.wsm, (c->splits + 2) * e.q_rows);
  tr_init(&e.spg, 2 * c->block_n);

  const int nblocks = c->splits * p->HKV * p->B;
  int *order = malloc(sizeof(int) * (size_t)nblocks);
  double worst = 0;
  int failed = 0;
  for (int run = 0; run < 2; run++) {
    for (long long i = 0; i < e.work_n; i++) e.work[i] = NAN;
    for (long long i = 0; i < q_n; i++) e.O[i] = NAN;
    for (long long i = 0; i < lse_n; i++) e.LSE[i] = NAN;
    for (int i = 0; i < nblocks; i++) order[i] = i;
    for (int i = nblocks - 1; i > 0; i--) {
      const int j = (int)(rng() % (uint32_t)(i + 1)), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    g_races = g_oob = 0;
    memset(e.merges, 0, sizeof(int) * (size_t)(p->B * p->HKV));
    for (int i = 0; i < nblocks; i++) {
      const int blk = order[i];
      run_block(&e, blk % c->splits, (blk / c->splits) % p->HKV, blk / (c->splits * p->HKV),
                scale_log2);
    }
    double rel;
    const int ok = run_ok(&e, Oref, Lref, q_n, lse_n, label, run, &rel);
    if (!ok) failed = 1;
    CHECK(ok);
    if (rel > worst) worst = rel;
  }
  free(order);
  tr_free(&e.sm);
  tr_free(&e.oscr);
  tr_free(&e.mls);
  tr_free(&e.wsm);
  tr_free(&e.spg);
  free(e.work);
  free(e.counters);
  free(e.merges);
  free(e.O);
  free(e.LSE);
  free(Oref);
  free(Lref);
  free(Q);
  free(K);
  free(V);
  free(Kl);
  free(Vl);
  free(table);
  return failed ? -1 : worst;
}

static void label_of(const prob *p, const cfg *c, char *buf, size_t n) {
  char lens[64] = "";
  if (p->ragged) {
    size_t k = 0;
    for (int b = 0; b < p->B; b++)
      k += (size_t)snprintf(lens + k, sizeof lens - k, "%s%d", b ? "," : "", p->kv_lens[b]);
  }
  snprintf(buf, n,
           "B%d HQ%d HKV%d SQ%d SKV%d D%d%s page%d %s%s%s | SPLITS=%d BLOCK_N=%d WARPS=%d VEC=%d "
           "STAGES=%d",
           p->B, p->HQ, p->HKV, p->SQ, p->SKV, p->D, p->causal ? " causal" : "", p->page,
           p->bf16 ? "bf16" : "f16", p->ragged ? " lens " : "", lens, c->splits, c->block_n,
           c->warps, c->vec, c->stages);
}

static void one(const prob *p, const cfg *c) {
  char label[256];
  label_of(p, c, label, sizeof label);
  if (!cfg_valid(p, c)) {
    fprintf(stderr, "%s: not a valid configuration\n", label);
    CHECK(0);
    return;
  }
  const double err = run_case(p, c, label);
  printf("%-150s rel error %.2e\n", label, err);
}

static void setup(void) { rng_state = 12345; }

TEST_CASE(named) {
  /* named cases: each line a problem and a configuration */
  static const struct {
    prob p;
    cfg c;
  } cases[] = {
      /* GQA 4:1, D 128, contiguous, ragged with 0, 1 and non-multiples of BLOCK_N */
      {{4, 8, 2, 1, 100, 128, 0, 0, {0, 1, 37, 100}, 1, 0}, {1, 32, 2, 8, 2}},
      {{4, 8, 2, 1, 100, 128, 0, 0, {0, 1, 37, 100}, 1, 1}, {3, 32, 2, 8, 3}},
      {{4, 8, 2, 1, 100, 128, 0, 0, {0, 1, 37, 100}, 1, 0}, {16, 16, 1, 4, 1}},
      /* paged 16, GQA 8:1, D 64, SQ 4 causal (32 rows: two row warps), lengths below SQ too */
      {{5, 16, 2, 4, 70, 64, 1, 16, {5, 16, 33, 0, 70}, 1, 0}, {5, 32, 4, 8, 2}},
      {{5, 16, 2, 4, 70, 64, 1, 16, {2, 16, 33, 1, 70}, 1, 1}, {2, 16, 2, 4, 1}},
      {{5, 16, 2, 4, 70, 64, 1, 16, {5, 16, 33, 0, 70}, 1, 0}, {7, 64, 8, 8, 4}},
      /* paged 32, GQA 4:1, D 256, SQ 4 causal (16 rows) */
      {{3, 8, 2, 4, 90, 256, 1, 32, {90, 31, 64}, 1, 1}, {4, 32, 2, 4, 1}},
      {{3, 8, 2, 4, 90, 256, 1, 32, {90, 31, 64}, 1, 0}, {1, 16, 1, 8, 3}},
      /* more splits than tiles and than tokens */
      {{2, 4, 1, 1, 20, 64, 0, 0, {20, 3}, 1, 0}, {16, 16, 1, 8, 2}},
      {{2, 4, 1, 1, 20, 64, 0, 32, {20, 3}, 1, 1}, {16, 32, 2, 8, 4}},
      /* MHA (one row of 16), not ragged, D 128, long ring */
      {{2, 2, 2, 1, 300, 128, 0, 0, {0}, 0, 0}, {1, 16, 1, 8, 4}},
      {{2, 2, 2, 1, 300, 128, 0, 16, {0}, 0, 1}, {8, 64, 4, 8, 3}},
      /* SQ 8 x GQA 8:1: 64 rows, four row warps; causal and not */
      {{2, 8, 1, 8, 50, 64, 1, 16, {50, 9}, 1, 0}, {3, 16, 4, 8, 2}},
      {{2, 8, 1, 8, 50, 128, 0, 0, {50, 9}, 1, 1}, {2, 32, 8, 8, 1}},
      /* every row masked in some sequences (kv_len < SQ, causal), SPLITS 1 and many */
      {{3, 4, 1, 4, 40, 64, 1, 16, {0, 2, 40}, 1, 0}, {1, 16, 1, 8, 1}},
      {{3, 4, 1, 4, 40, 64, 1, 16, {0, 2, 40}, 1, 0}, {9, 16, 1, 8, 2}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) one(&cases[i].p, &cases[i].c);
}

TEST_CASE(random_sweep) {
  /* a seeded random sweep over problems and configurations the manifest allows */
  static const int dims[] = {64, 128, 256}, pages[] = {0, 16, 32, 64}, groups[] = {1, 4, 8},
                   sqs[] = {1, 2, 4, 8};
  static const int bns[] = {16, 32, 64, 128}, warps[] = {1, 2, 4, 8}, vecs[] = {4, 8};
  int done = 0;
  for (int tries = 0; done < 24 && tries < 10000; tries++) {
    prob p;
    cfg c;
    memset(&p, 0, sizeof p);
    p.D = dims[rng() % 3];
    p.page = pages[rng() % 4];
    p.HKV = 1 + (int)(rng() % 2);
    p.HQ = p.HKV * groups[rng() % 3];
    p.SQ = sqs[rng() % 4];
    p.causal = (int)(rng() % 2);
    p.bf16 = (int)(rng() % 2);
    p.B = 1 + (int)(rng() % 3);
    p.SKV = 1 + (int)(rng() % 160);
    p.ragged = (int)(rng() % 2);
    for (int b = 0; b < p.B; b++) p.kv_lens[b] = (int)(rng() % (uint32_t)(p.SKV + 1));
    c.splits = 1 + (int)(rng() % 16);
    c.block_n = bns[rng() % 4];
    c.warps = warps[rng() % 4];
    c.vec = vecs[rng() % 2];
    c.stages = 1 + (int)(rng() % 4);
    if (!cfg_valid(&p, &c)) continue;
    /* the manifest's register budget: D/2 + NW/2 (+ ITERS*VEC for direct loads, 16-byte only) <= 136 */
    const int nw = c.block_n / (c.warps / (q_rows_for(p.HQ / p.HKV * p.SQ) / 16));
    const int staging = c.stages == 1 ? c.block_n * (p.D / c.vec) / (32 * c.warps) * c.vec : 0;
    if (p.D / 2 + nw / 2 + staging > 136 || (c.stages == 1 && c.vec != 8)) continue;
    if (p.HQ / p.HKV * p.SQ * (p.D / 64) * p.SKV * p.B > 400000) continue; /* keep it quick */
    one(&p, &c);
    done++;
  }
  CHECK(done == 24);
}

static void teardown(void) { free(g_copies); }

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(named), TEST_ENTRY(random_sweep))
