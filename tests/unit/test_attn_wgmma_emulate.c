/* test_attn_wgmma_emulate.c — attn_wgmma's data path emulated on the host from the PTX ISA's
 * definitions, so the arithmetic the kernel runs through attn_wgmma_index.h (tile ranges, masks,
 * shared-memory placement, TMA coordinates, wgmma descriptors, fragment coordinates, stages and
 * parities, the online softmax) and the TMA plan of attn_tma.h are checked end to end without a
 * GPU, against a plain double-precision softmax(scale * Q K^T) V and LSE.
 *
 * What is emulated, and from which definition:
 *   - the TMA unit: a box (attn_tma_plan's dims, byte strides, box) at the kernel's coordinates,
 *     elements past a dimension read as zero, written in box order as 128-byte rows at the
 *     kernel's shared-memory destination under the 128-byte swizzle (address bits 4-6 XOR bits
 *     7-9); its bytes complete on the barrier later, at a random moment, and the destination
 *     holds NaN from the issue until then;
 *   - mbarriers: arrival count, transaction bytes, phases; try_wait.parity(P) passes once the
 *     phase of parity P has completed (the current phase's parity differs from P);
 *   - wgmma.mma_async m64nNk16: shared-memory operands read through the 64-bit descriptors the
 *     kernel builds (start, LBO, SBO, 128-byte swizzle mode), K-major and MN-major (imm-trans-b)
 *     canonical layouts of PTX 9.7.15.5.1.2; the register A operand and the f32 accumulator at
 *     the thread/element positions of figures wgmma-64N16-A and wgmma-64N16-D (9.7.15.5.1.1),
 *     written below from the ISA, not taken from the header; scale-d 0 for the first slab of S;
 *     a committed group's accumulators hold NaN until the wait_group that retires it, and at that
 *     wait the group is computed again from the then-current shared memory and A registers:
 *     a stage refilled or P overwritten while the tensor cores read it shows as a mismatch;
 *   - the warp shuffles of the quad reductions (xor 1 then xor 2);
 *   - the producer and consumer warpgroups as programs that mirror attn_wgmma.cu statement by
 *     statement, interleaved by a seeded random scheduler (a missing wait or a wrong parity
 *     deadlocks or reads poisoned data; a release before the wait lets the producer refill a
 *     stage under a wgmma);
 *   - the epilogue's stores, counted: every O element and LSE value written exactly once.
 * Exact mode keeps P and O in fp32 (the result must match the reference to ~1e-5); dtype mode
 * rounds P and O to f16 or bf16 as cvt.rn does (the family's tolerances).  Shapes: causal and
 * not, SQ and SKV not multiples of the tiles, SQ > SKV (queries with no key), grouped heads,
 * ragged kv_lens including an empty sequence, a single query; D 64, 128, 256; a few
 * configurations each (one and two consumers, OVERLAP 0 and 1, 2 to 4 stages, BLOCK_N 64 to
 * 176).  Also: the TMA plan's parameters for several problems and its refusals, and the
 * manifest's SMEM against attn_smem_bytes. */
/* stages: model */
#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "templates/attention/attn_abi.h"
#include "templates/attention/attn_tma.h"
#include "templates/attention/attn_wgmma_index.h"
#include "test.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"

/* ------------------------------------------------------------------ PTX layouts (test side) */

/* Figure wgmma-64N16-D: f32 accumulator element i of thread t of the warpgroup. */
static void frag_d(int t, int i, int *row, int *col) {
  const int warp = t / 32, lane = t % 32;
  *row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
  *col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
}
/* Figure wgmma-64N16-A: a_i (i = 0..7; register i/2, half i%2) of thread t: warp w owns rows
 * 16w..16w+15 as an m16n8k16-style 16x16 tile: a0,a1 row g cols 2q,2q+1; a2,a3 row g+8; a4,a5
 * row g cols 8+2q..; a6,a7 row g+8 cols 8+2q.. (g = lane/4, q = lane%4). */
static void frag_a(int t, int i, int *row, int *col) {
  const int warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  static const int dr[8] = {0, 0, 8, 8, 0, 0, 8, 8}, dc[8] = {0, 1, 0, 1, 8, 9, 8, 9};
  *row = 16 * warp + g + dr[i];
  *col = 2 * q + dc[i];
}

/* ------------------------------------------------------------------ numbers */

static float round_sig(float v, int sig, int emin) {
  if (v == 0.f || !isfinite(v)) return v;
  int e;
  frexpf(v, &e); /* |v| in [2^(e-1), 2^e) */
  if (e - 1 < emin) e = emin + 1;
  const float q = ldexpf(1.f, e - sig);
  return rintf(v / q) * q; /* round to nearest even */
}
/* cvt.rn to the dtype (0: keep fp32) */
static float rnd(int mode, float v) {
  return mode == 1 ? round_sig(v, 11, -14) : mode == 2 ? round_sig(v, 8, -126) : v;
}

static unsigned long long lcg_state;
static unsigned lcg(void) {
  lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(lcg_state >> 33);
}

/* ------------------------------------------------------------------ problem and config */

typedef struct prob {
  int B, HQ, HKV, SQ, SKV, causal;
  const int *kv_lens; /* [B] or NULL */
} prob;
typedef struct cfg {
  int d, bn, consumers, stages, overlap;
} cfg;

#define MAXT   128 /* threads of a warpgroup */
#define MAXACC 128 /* accumulators per thread (N/2, N <= 256) */
#define MAXOPS 4096

enum {
  OP_EXPECT,
  OP_TMA,
  OP_WAIT,
  OP_QK,
  OP_PV,
  OP_WAITG,
  OP_RELEASE,
  OP_SOFTMAX,
  OP_RESCALE,
  OP_MOVEP,
  OP_EPI,
  OP_CLEARV,
  OP_CBAR
};
typedef struct op {
  int kind;
  int bar, parity, bytes;   /* EXPECT, WAIT, RELEASE; TMA: its barrier */
  int tensor;               /* TMA: ATTN_TMA_Q/K/V */
  unsigned dst;             /* TMA: shared address */
  int c[4];                 /* TMA: coordinates, innermost first */
  int stage, tile, into_pn; /* QK, PV: stage; SOFTMAX: tile, target; WAITG: groups left */
} op;
typedef struct program {
  op ops[MAXOPS];
  int n, pc;
} program;

typedef struct mbar {
  int count, pending, tx, phase;
} mbar;

typedef struct group {
  int kind, stage;
  float base[MAXT][MAXACC]; /* PV: the accumulators it adds to */
  float out[MAXT][MAXACC];  /* its result, computed at issue */
} group;

typedef struct wgstate {
  float s[MAXT][MAXACC], o[MAXT][MAXACC];
  float p[MAXT][MAXACC], pn[MAXT][MAXACC]; /* 16-bit halves: [2*reg + half] */
  float m[MAXT][2], l[MAXT][2], factor[MAXT][2];
  group g[2];
  int ng;
} wgstate;

typedef struct tma_event {
  unsigned dst;
  int bar, bytes, elems;
  float vals[256 * 64]; /* the box, in box order */
} tma_event;

typedef struct emu {
  const prob *p;
  const cfg *c;
  int mode; /* 0 exact, 1 f16, 2 bf16 */
  int bm, b, h, hkv, m0, L, n_tiles, first_masked;
  unsigned sQ, sK, sV, smem_end;
  float *sm; /* shared memory: one float per 16-bit slot */
  mbar bars[1 + 4 * 8];
  attn_tma_params prm[3];
  const float *glob[3];
  float scale, scale_log2;
  program prod, cons[2];
  wgstate *wg[2];
  tma_event *ev[64];
  int nev;
  float *O, *LSE;
  int *o_hits, *lse_hits;
  int cbar_passed[2]; /* named barriers (bar.sync 1) each consumer has passed */
  int failed;
} emu;

#define FAIL(e, ...)                                              \
  do {                                                            \
    if (!(e)->failed) fprintf(stderr, "emulation: " __VA_ARGS__); \
    (e)->failed = 1;                                              \
  } while (0)

/* ------------------------------------------------------------------ shared memory, TMA */

#define SMEM_BASE 1024u /* the kernel aligns its base up to 1024 bytes; any such value */

static unsigned swz(unsigned addr) { return addr ^ (((addr >> 7) & 7u) << 4); }
static float sm_read(emu *e, unsigned addr) {
  addr = swz(addr);
  if (addr < SMEM_BASE || addr + 2 > e->smem_end || addr % 2) {
    FAIL(e, "shared read at %u outside the data regions [%u, %u)\n", addr, SMEM_BASE, e->smem_end);
    return NAN;
  }
  return e->sm[addr / 2];
}

/* The TMA unit: box of tensor `tensor` at coordinates c (innermost first), in box order; elements
 * past a dimension are zero (FLOAT_OOB_FILL_NONE). */
static int tma_fetch(emu *e, int tensor, const int c[4], float *vals) {
  const attn_tma_params *q = &e->prm[tensor];
  const uint64_t stride[4] = {2, q->strides[0], q->strides[1], q->strides[2]};
  int n = 0;
  for (uint32_t i3 = 0; i3 < q->box[3]; i3++)
    for (uint32_t i2 = 0; i2 < q->box[2]; i2++)
      for (uint32_t i1 = 0; i1 < q->box[1]; i1++)
        for (uint32_t i0 = 0; i0 < q->box[0]; i0++) {
          const long long g[4] = {c[0] + (long long)i0, c[1] + (long long)i1, c[2] + (long long)i2,
                                  c[3] + (long long)i3};
          int in = 1;
          uint64_t off = 0;
          for (int d = 0; d < 4; d++) {
            if (g[d] < 0 || (uint64_t)g[d] >= q->dims[d]) in = 0;
            off += (uint64_t)g[d] * stride[d];
          }
          vals[n++] = in ? e->glob[tensor][off / 2] : 0.f;
        }
  return n;
}

/* ------------------------------------------------------------------ barriers */

static void bar_check(mbar *b) {
  if (b->pending == 0 && b->tx == 0) {
    b->phase++;
    b->pending = b->count;
  }
}
static void bar_arrive(emu *e, int i) {
  if (e->bars[i].pending <= 0) FAIL(e, "barrier %d: arrival beyond its count\n", i);
  e->bars[i].pending--;
  bar_check(&e->bars[i]);
}
static void bar_complete_tx(emu *e, int i, int bytes) {
  e->bars[i].tx -= bytes;
  if (e->bars[i].tx < 0) FAIL(e, "barrier %d: more bytes arrived than expected\n", i);
  bar_check(&e->bars[i]);
}
static int bar_passes(const emu *e, int i, int parity) { return (e->bars[i].phase & 1) != parity; }

/* ------------------------------------------------------------------ wgmma */

/* descriptor fields; 0 when a field the kernel should leave zero is not */
static int desc_decode(emu *e, unsigned long long d, unsigned *start, unsigned *lbo,
                       unsigned *sbo) {
  *start = (unsigned)(d & 0x3FFF) << 4;
  *lbo = (unsigned)((d >> 16) & 0x3FFF) << 4;
  *sbo = (unsigned)((d >> 32) & 0x3FFF) << 4;
  const unsigned long long must_zero =
      (3ull << 14) | (3ull << 30) | (0x7ull << 46) | (0x7ull << 49) | (0x3FFull << 52);
  if ((d >> 62) != 1 || (d & must_zero)) {
    FAIL(e, "descriptor %#llx: not a 128-byte-swizzle descriptor with base offset 0\n", d);
    return 0;
  }
  return 1;
}
/* Element (r, k) of a K-major operand (r: M or N, k < 16 of the slab): 8-row core-matrix groups
 * SBO apart, rows 128 bytes apart, k contiguous; then the swizzle. */
static float kmajor(emu *e, unsigned start, unsigned sbo, int r, int k) {
  return sm_read(e, start + (unsigned)(r % 8) * 128 + (unsigned)(r / 8) * sbo + 2u * (unsigned)k);
}
/* Element (k, n) of an MN-major B (imm-trans-b 1): n contiguous in 64-element atoms LBO apart,
 * k rows 128 bytes apart in 8-row groups SBO apart; then the swizzle. */
static float mnmajor(emu *e, unsigned start, unsigned lbo, unsigned sbo, int k, int n) {
  return sm_read(e, start + 2u * (unsigned)(n % 64) + (unsigned)(n / 64) * lbo +
                        (unsigned)(k % 8) * 128 + (unsigned)(k / 8) * sbo);
}

static float mat[64][256];

/* S = Q K^T of consumer c from K stage `stage`, as the kernel's issue_qk issues it. */
static void wgmma_qk(emu *e, int c, int stage, float out[MAXT][MAXACC]) {
  const cfg *g = e->c;
  for (int ks = 0; ks < g->d / 16; ks++) {
    const unsigned long long da =
        ptx_desc_add(ptx_desc(e->sQ, ATTN_LBO_KMAJOR, ATTN_SBO), attn_q_desc_start(c, ks, e->bm));
    const unsigned long long db = ptx_desc_add(ptx_desc(e->sK, ATTN_LBO_KMAJOR, ATTN_SBO),
                                               attn_k_desc_start(stage, ks, g->bn, g->d));
    unsigned as, al, asb, bs, bl, bsb;
    if (!desc_decode(e, da, &as, &al, &asb) || !desc_decode(e, db, &bs, &bl, &bsb)) return;
    static float A[64][16], Bm[16][256];
    for (int r = 0; r < 64; r++)
      for (int k = 0; k < 16; k++) A[r][k] = kmajor(e, as, asb, r, k);
    for (int n = 0; n < g->bn; n++)
      for (int k = 0; k < 16; k++) Bm[k][n] = kmajor(e, bs, bsb, n, k);
    for (int r = 0; r < 64; r++)
      for (int n = 0; n < g->bn; n++) {
        float acc = ks == 0 ? 0.f : mat[r][n]; /* scale-d 0 on the first slab */
        for (int k = 0; k < 16; k++) acc += A[r][k] * Bm[k][n];
        mat[r][n] = acc;
      }
  }
  for (int t = 0; t < MAXT; t++)
    for (int i = 0; i < g->bn / 2; i++) {
      int row, col;
      frag_d(t, i, &row, &col);
      out[t][i] = mat[row][col];
    }
}

/* O = base + P V from V stage `stage`, P from the warpgroup's p registers (issue_pv). */
static void wgmma_pv(emu *e, const wgstate *w, int stage, float base[MAXT][MAXACC],
                     float out[MAXT][MAXACC]) {
  const cfg *g = e->c;
  for (int t = 0; t < MAXT; t++)
    for (int i = 0; i < g->d / 2; i++) {
      int row, col;
      frag_d(t, i, &row, &col);
      mat[row][col] = base[t][i];
    }
  for (int kk = 0; kk < g->bn / 16; kk++) {
    const unsigned long long db = ptx_desc_add(ptx_desc(e->sV, attn_v_lbo(g->bn), ATTN_SBO),
                                               attn_v_desc_start(stage, kk, g->bn, g->d));
    unsigned bs, bl, bsb;
    if (!desc_decode(e, db, &bs, &bl, &bsb)) return;
    static float A[64][16], Bm[16][256];
    for (int t = 0; t < MAXT; t++)
      for (int r = 0; r < 4; r++)
        for (int hf = 0; hf < 2; hf++) { /* the kernel's registers p + 4*kk: a_{2r+hf} */
          int row, col;
          frag_a(t, 2 * r + hf, &row, &col);
          A[row][col] = w->p[t][2 * (4 * kk + r) + hf];
        }
    for (int k = 0; k < 16; k++)
      for (int n = 0; n < g->d; n++) Bm[k][n] = mnmajor(e, bs, bl, bsb, k, n);
    for (int r = 0; r < 64; r++)
      for (int n = 0; n < g->d; n++) {
        float acc = mat[r][n];
        for (int k = 0; k < 16; k++) acc += A[r][k] * Bm[k][n];
        mat[r][n] = acc;
      }
  }
  for (int t = 0; t < MAXT; t++)
    for (int i = 0; i < g->d / 2; i++) {
      int row, col;
      frag_d(t, i, &row, &col);
      out[t][i] = mat[row][col];
    }
}

/* ------------------------------------------------------------------ the programs */

static op *emit(emu *e, program *pg, int kind) {
  if (pg->n >= MAXOPS) {
    FAIL(e, "program too long\n");
    pg->n = MAXOPS - 1;
  }
  op *o = &pg->ops[pg->n++];
  memset(o, 0, sizeof *o);
  o->kind = kind;
  return o;
}
static void emit_wait(emu *e, program *pg, int bar, int parity) {
  op *o = emit(e, pg, OP_WAIT);
  o->bar = bar;
  o->parity = parity;
}
static void emit_expect(emu *e, program *pg, int bar, int bytes) {
  op *o = emit(e, pg, OP_EXPECT);
  o->bar = bar;
  o->bytes = bytes;
}
static void emit_tma(emu *e, program *pg, int tensor, unsigned dst, int bar, int c0, int c1, int c2,
                     int c3) {
  op *o = emit(e, pg, OP_TMA);
  o->tensor = tensor;
  o->dst = dst;
  o->bar = bar;
  o->c[0] = c0, o->c[1] = c1, o->c[2] = c2, o->c[3] = c3;
}
static void emit_simple(emu *e, program *pg, int kind, int stage, int tile, int into_pn) {
  op *o = emit(e, pg, kind);
  o->stage = stage;
  o->tile = tile;
  o->into_pn = into_pn;
}
static void emit_release(emu *e, program *pg, int bar) {
  op *o = emit(e, pg, OP_RELEASE);
  o->bar = bar;
}

/* clear_v_tail(): with ragged kv_lens, the consumers clear the V rows of tile n at keys >= L,
 * then meet at the named barrier; nothing when the tile has no such row. */
static void emit_clear_v(emu *e, program *pg, int stage, int n) {
  if (!e->p->kv_lens || attn_v_clear_from(n, e->c->bn, e->L) == e->c->bn) return;
  emit_simple(e, pg, OP_CLEARV, stage, n, 0);
  emit_simple(e, pg, OP_CBAR, 0, 0, 0);
}

/* The producer warpgroup's thread 0 (attn_wgmma.cu, `if (wg == 0)`). */
static void producer_program(emu *e) {
  const cfg *g = e->c;
  program *pg = &e->prod;
  const int S = g->stages, KCH = g->d / ATTN_CHUNK;
  if (e->n_tiles <= 0) return;
  emit_expect(e, pg, attn_bar_q(), attn_tile_bytes(e->bm, g->d));
  for (int j = 0; j < KCH; j++)
    emit_tma(e, pg, ATTN_TMA_Q, e->sQ + attn_q_box(j, e->bm), attn_bar_q(), attn_box_col(j), e->h,
             e->m0, e->b);
  for (int n = 0; n < e->n_tiles; n++) {
    const int s = ptx_stage(n, S);
    if (n >= S) emit_wait(e, pg, attn_bar_kempty(s), ptx_empty_parity(n, S));
    emit_expect(e, pg, attn_bar_kfull(s), attn_tile_bytes(g->bn, g->d));
    for (int j = 0; j < KCH; j++)
      emit_tma(e, pg, ATTN_TMA_K, e->sK + attn_kv_box(s, j, g->bn, g->d), attn_bar_kfull(s),
               attn_box_col(j), e->hkv, n * g->bn, e->b);
    if (n >= S) emit_wait(e, pg, attn_bar_vempty(s), ptx_empty_parity(n, S));
    emit_expect(e, pg, attn_bar_vfull(s), attn_tile_bytes(g->bn, g->d));
    for (int j = 0; j < KCH; j++)
      emit_tma(e, pg, ATTN_TMA_V, e->sV + attn_kv_box(s, j, g->bn, g->d), attn_bar_vfull(s),
               attn_box_col(j), e->hkv, n * g->bn, e->b);
  }
}

/* A consumer warpgroup (attn_wgmma.cu, the `else` branch), OVERLAP 1 or 0. */
static void consumer_program(emu *e, int c) {
  const cfg *g = e->c;
  program *pg = &e->cons[c];
  const int S = g->stages, N = e->n_tiles;
  if (N > 0) {
    emit_wait(e, pg, attn_bar_q(), 0);
    if (g->overlap) {
      emit_wait(e, pg, attn_bar_kfull(0), 0);
      emit_simple(e, pg, OP_QK, 0, 0, 0);
      emit_simple(e, pg, OP_WAITG, 0, 0, 0);
      emit_release(e, pg, attn_bar_kempty(0));
      emit_simple(e, pg, OP_SOFTMAX, 0, 0, 0);
      for (int n = 1; n < N; n++) {
        const int sn = ptx_stage(n, S), sp = ptx_stage(n - 1, S);
        emit_wait(e, pg, attn_bar_kfull(sn), ptx_full_parity(n, S));
        emit_simple(e, pg, OP_QK, sn, 0, 0);
        emit_wait(e, pg, attn_bar_vfull(sp), ptx_full_parity(n - 1, S));
        emit_simple(e, pg, OP_PV, sp, 0, 0);
        emit_simple(e, pg, OP_WAITG, 1, 0, 0);
        emit_release(e, pg, attn_bar_kempty(sn));
        emit_simple(e, pg, OP_SOFTMAX, 0, n, 1);
        emit_simple(e, pg, OP_WAITG, 0, 0, 0);
        emit_release(e, pg, attn_bar_vempty(sp));
        emit_simple(e, pg, OP_RESCALE, 0, 0, 0);
        emit_simple(e, pg, OP_MOVEP, 0, 0, 0);
      }
      const int sl = ptx_stage(N - 1, S);
      emit_wait(e, pg, attn_bar_vfull(sl), ptx_full_parity(N - 1, S));
      emit_clear_v(e, pg, sl, N - 1);
      emit_simple(e, pg, OP_PV, sl, 0, 0);
      emit_simple(e, pg, OP_WAITG, 0, 0, 0);
      emit_release(e, pg, attn_bar_vempty(sl));
    } else {
      for (int n = 0; n < N; n++) {
        const int sn = ptx_stage(n, S);
        emit_wait(e, pg, attn_bar_kfull(sn), ptx_full_parity(n, S));
        emit_simple(e, pg, OP_QK, sn, 0, 0);
        emit_simple(e, pg, OP_WAITG, 0, 0, 0);
        emit_release(e, pg, attn_bar_kempty(sn));
        emit_simple(e, pg, OP_SOFTMAX, 0, n, 0);
        emit_simple(e, pg, OP_RESCALE, 0, 0, 0);
        emit_wait(e, pg, attn_bar_vfull(sn), ptx_full_parity(n, S));
        emit_clear_v(e, pg, sn, n);
        emit_simple(e, pg, OP_PV, sn, 0, 0);
        emit_simple(e, pg, OP_WAITG, 0, 0, 0);
        emit_release(e, pg, attn_bar_vempty(sn));
      }
    }
  }
  emit_simple(e, pg, OP_EPI, 0, 0, 0);
}

/* ------------------------------------------------------------------ consumer steps */

/* softmax_tile: the tile's scores s into P (p or pn), m, l, factor; shuffles over the quad. */
static void do_softmax(emu *e, int c, int tile, int into_pn) {
  const cfg *g = e->c;
  wgstate *w = e->wg[c];
  const int sacc = g->bn / 2, masked = tile >= e->first_masked;
  static float mx[MAXT][2], v1[MAXT][2], x[MAXT][MAXACC];
  for (int t = 0; t < MAXT; t++) {
    const int row0 = attn_thread_row(e->m0, c, t);
    int e0 = ATTN_NO_MASK, e1 = ATTN_NO_MASK;
    if (masked) attn_tile_ends(t, row0, tile * g->bn, e->L, e->p->SQ, e->p->causal, &e0, &e1);
    attn_masked_scores(w->s[t], sacc, e0, e1, x[t]);
    attn_row_max(x[t], sacc, mx[t]);
  }
  for (int t = 0; t < MAXT; t++)
    for (int r = 0; r < 2; r++) v1[t][r] = attn_fmax(mx[t][r], mx[t ^ 1][r]);
  for (int t = 0; t < MAXT; t++)
    for (int r = 0; r < 2; r++) mx[t][r] = attn_fmax(v1[t][r], v1[t ^ 2][r]);
  float(*dst)[MAXACC] = into_pn ? w->pn : w->p;
  for (int t = 0; t < MAXT; t++) {
    float *pf = x[t];
    attn_softmax_step(pf, sacc, mx[t], w->m[t], w->l[t], w->factor[t], e->scale_log2);
    for (int kk = 0; kk < g->bn / 16; kk++)
      for (int q = 0; q < 4; q++) { /* p[4kk+q] = pack2(pf[p_acc(kk,2q)], pf[p_acc(kk,2q+1)]) */
        dst[t][2 * (4 * kk + q)] = rnd(e->mode, pf[attn_p_acc(kk, 2 * q)]);
        dst[t][2 * (4 * kk + q) + 1] = rnd(e->mode, pf[attn_p_acc(kk, 2 * q + 1)]);
      }
  }
}

/* Consumer c's share of the rows clear_v_tail zeroes (its thread t is consumer thread
 * tc = 128c + t), as generic stores at the physical addresses. */
static void do_clear_v(emu *e, int c, int stage, int n) {
  const cfg *g = e->c;
  const int from = attn_v_clear_from(n, g->bn, e->L);
  for (int t = 0; t < MAXT; t++) {
    const int tc = c * MAXT + t;
    for (int r = from + tc / 8; r < g->bn; r += 16 * g->consumers)
      for (int j = 0; j < g->d / ATTN_CHUNK; j++) {
        const unsigned addr =
            e->sV + (unsigned)attn_v_clear_offset(stage, j, r, tc % 8, g->bn, g->d);
        if (addr < e->sV || addr + 16 > e->smem_end) {
          FAIL(e, "V clear at %u outside the V region\n", addr);
          return;
        }
        for (int x = 0; x < 8; x++) e->sm[addr / 2 + (unsigned)x] = 0.f;
      }
  }
}

static void do_epilogue(emu *e, int c) {
  const cfg *g = e->c;
  const prob *p = e->p;
  wgstate *w = e->wg[c];
  static float l1[MAXT][2], lf[MAXT][2];
  for (int t = 0; t < MAXT; t++)
    for (int r = 0; r < 2; r++) l1[t][r] = w->l[t][r] + w->l[t ^ 1][r];
  for (int t = 0; t < MAXT; t++)
    for (int r = 0; r < 2; r++) lf[t][r] = l1[t][r] + l1[t ^ 2][r];
  for (int t = 0; t < MAXT; t++) {
    attn_normalise(w->o[t], g->d / 2, lf[t]);
    const int row0 = attn_thread_row(e->m0, c, t);
    for (int i = 0; i < g->d / 2; i += 2) {
      const int row = attn_o_row(row0, i);
      if (row >= p->SQ) continue;
      const long long off = attn_o_offset(e->b, row, e->h, attn_acc_col(t, i), p->SQ, p->HQ, g->d);
      e->O[off] = rnd(e->mode, w->o[t][i]);
      e->O[off + 1] = rnd(e->mode, w->o[t][i + 1]);
      e->o_hits[off]++;
      e->o_hits[off + 1]++;
    }
    if (attn_lse_writer(t))
      for (int r = 0; r < 2; r++)
        if (attn_lse_row(row0, r) < p->SQ) {
          const long long off = attn_lse_offset(e->b, e->h, attn_lse_row(row0, r), p->SQ, p->HQ);
          e->LSE[off] = attn_lse(w->m[t][r], lf[t][r], e->scale_log2);
          e->lse_hits[off]++;
        }
  }
}

/* Retires the oldest groups until `left` remain; each is computed again from the current shared
 * memory and registers and must equal what its issue saw. */
static void do_waitg(emu *e, int c, int left) {
  wgstate *w = e->wg[c];
  const cfg *g = e->c;
  static float again[MAXT][MAXACC];
  while (w->ng > left) {
    group *gr = &w->g[0];
    const int n = gr->kind == OP_QK ? g->bn / 2 : g->d / 2;
    if (gr->kind == OP_QK)
      wgmma_qk(e, c, gr->stage, again);
    else
      wgmma_pv(e, w, gr->stage, gr->base, again);
    float(*dst)[MAXACC] = gr->kind == OP_QK ? w->s : w->o;
    for (int t = 0; t < MAXT; t++)
      for (int i = 0; i < n; i++) {
        if (memcmp(&again[t][i], &gr->out[t][i], sizeof(float)) != 0)
          FAIL(e,
               "block (m0 %d, h %d, b %d) consumer %d: the operands of a %s group changed while it "
               "was in flight\n",
               e->m0, e->h, e->b, c, gr->kind == OP_QK ? "QK" : "PV");
        dst[t][i] = gr->out[t][i];
      }
    w->g[0] = w->g[1];
    w->ng--;
  }
}

static void do_issue(emu *e, int c, int kind, int stage) {
  wgstate *w = e->wg[c];
  const cfg *g = e->c;
  if (w->ng >= 2) {
    FAIL(e, "more than two wgmma groups in flight\n");
    return;
  }
  group *gr = &w->g[w->ng++];
  gr->kind = kind;
  gr->stage = stage;
  if (kind == OP_QK) {
    wgmma_qk(e, c, stage, gr->out);
    for (int t = 0; t < MAXT; t++)
      for (int i = 0; i < g->bn / 2; i++) w->s[t][i] = NAN; /* undefined until the wait */
  } else {
    memcpy(gr->base, w->o, sizeof gr->base);
    wgmma_pv(e, w, stage, gr->base, gr->out);
    for (int t = 0; t < MAXT; t++)
      for (int i = 0; i < g->d / 2; i++) w->o[t][i] = NAN;
  }
}

/* ------------------------------------------------------------------ the scheduler */

static int runnable(const emu *e, const program *pg) {
  if (pg->pc >= pg->n) return 0;
  const op *o = &pg->ops[pg->pc];
  if (o->kind == OP_CBAR) { /* bar.sync 1: passes once every consumer has arrived at it */
    const int me = (int)(pg - e->cons), k = e->cbar_passed[me];
    for (int c = 0; c < e->c->consumers; c++) {
      const program *q = &e->cons[c];
      const int there = q->pc < q->n && q->ops[q->pc].kind == OP_CBAR && e->cbar_passed[c] == k;
      if (!there && e->cbar_passed[c] <= k) return 0;
    }
    return 1;
  }
  return o->kind != OP_WAIT || bar_passes(e, o->bar, o->parity);
}

static void step_producer(emu *e) {
  const op *o = &e->prod.ops[e->prod.pc++];
  if (o->kind == OP_EXPECT) {
    e->bars[o->bar].tx += o->bytes;
    bar_arrive(e, o->bar);
  } else if (o->kind == OP_TMA) {
    if (e->nev >= 64) {
      FAIL(e, "too many TMA loads in flight\n");
      return;
    }
    tma_event *ev = e->ev[e->nev++];
    ev->dst = o->dst;
    ev->bar = o->bar;
    ev->elems = tma_fetch(e, o->tensor, o->c, ev->vals);
    ev->bytes = 2 * ev->elems;
    const unsigned lo = o->tensor == ATTN_TMA_Q   ? e->sQ
                        : o->tensor == ATTN_TMA_K ? e->sK
                                                  : e->sV,
                   hi = o->tensor == ATTN_TMA_Q   ? e->sK
                        : o->tensor == ATTN_TMA_K ? e->sV
                                                  : e->smem_end;
    if (o->dst % 1024 || o->dst < lo || o->dst + (unsigned)ev->bytes > hi)
      FAIL(e, "TMA box of %d bytes at %u: not 1024-aligned inside its region [%u, %u)\n", ev->bytes,
           o->dst, lo, hi);
    for (int k = 0; k < ev->elems; k++)
      e->sm[swz(o->dst + 2u * (unsigned)k) / 2] = NAN; /* in flight */
  }
}

static void step_tma(emu *e, int k) {
  tma_event *ev = e->ev[k];
  for (int i = 0; i < ev->elems; i++) e->sm[swz(ev->dst + 2u * (unsigned)i) / 2] = ev->vals[i];
  bar_complete_tx(e, ev->bar, ev->bytes);
  e->ev[k] = e->ev[e->nev - 1];
  e->ev[--e->nev] = ev;
}

static void step_consumer(emu *e, int c) {
  const op *o = &e->cons[c].ops[e->cons[c].pc++];
  wgstate *w = e->wg[c];
  const cfg *g = e->c;
  switch (o->kind) {
    case OP_WAIT: break;
    case OP_QK:
    case OP_PV: do_issue(e, c, o->kind, o->stage); break;
    case OP_WAITG: do_waitg(e, c, o->stage); break;
    case OP_RELEASE:
      for (int warp = 0; warp < 4; warp++) bar_arrive(e, o->bar);
      break;
    case OP_SOFTMAX: do_softmax(e, c, o->tile, o->into_pn); break;
    case OP_RESCALE: /* rescale(): a warp whose factors are all exactly 1 skips it */
      for (int warp = 0; warp < 4; warp++) {
        int any = 0;
        for (int t = 32 * warp; t < 32 * warp + 32; t++)
          any |= w->factor[t][0] != 1.f || w->factor[t][1] != 1.f;
        for (int t = 32 * warp; any && t < 32 * warp + 32; t++)
          attn_rescale(w->o[t], g->d / 2, w->factor[t]);
      }
      break;
    case OP_MOVEP: memcpy(w->p, w->pn, sizeof w->p); break;
    case OP_CLEARV: do_clear_v(e, c, o->stage, o->tile); break;
    case OP_CBAR: e->cbar_passed[c]++; break;
    case OP_EPI:
      if (w->ng) FAIL(e, "epilogue with wgmma groups in flight\n");
      do_epilogue(e, c);
      break;
    default: FAIL(e, "bad op %d\n", o->kind);
  }
}

/* One block (query tile, head, sequence) of one launch. */
static void run_block(emu *e, int bx, int h, int b) {
  const prob *p = e->p;
  const cfg *g = e->c;
  e->bm = 64 * g->consumers;
  e->b = b;
  e->h = h;
  e->hkv = h / (p->HQ / p->HKV);
  e->m0 = attn_m_tile(bx, attn_ceil_div(p->SQ, e->bm), p->causal) * e->bm;
  e->L = attn_kv_len(p->kv_lens, b, p->SKV);
  e->n_tiles = attn_kv_tiles(e->m0, e->bm, e->L, p->SQ, p->causal, g->bn);
  e->first_masked = attn_first_masked(e->m0, e->L, p->SQ, p->causal, g->bn, e->n_tiles);
  e->sQ = SMEM_BASE;
  e->sK = SMEM_BASE + (unsigned)attn_smem_k(e->bm, g->d);
  e->sV = SMEM_BASE + (unsigned)attn_smem_v(e->bm, g->bn, g->d, g->stages);
  e->smem_end = SMEM_BASE + (unsigned)attn_smem_bars(e->bm, g->bn, g->d, g->stages);
  if (attn_smem_bytes(e->bm, g->bn, g->d, g->stages) >
      arch_spec_find("sm_90a")->smem_per_block_optin) {
    FAIL(e, "configuration needs %d bytes of shared memory\n",
         attn_smem_bytes(e->bm, g->bn, g->d, g->stages));
    return;
  }
  for (unsigned i = 0; i < e->smem_end / 2; i++) e->sm[i] = NAN;
  e->bars[attn_bar_q()] = (mbar){1, 1, 0, 0};
  for (int s = 0; s < g->stages; s++) {
    e->bars[attn_bar_kfull(s)] = (mbar){1, 1, 0, 0};
    e->bars[attn_bar_vfull(s)] = (mbar){1, 1, 0, 0};
    e->bars[attn_bar_kempty(s)] = (mbar){4 * g->consumers, 4 * g->consumers, 0, 0};
    e->bars[attn_bar_vempty(s)] = (mbar){4 * g->consumers, 4 * g->consumers, 0, 0};
  }
  e->prod.n = e->prod.pc = 0;
  producer_program(e);
  for (int c = 0; c < g->consumers; c++) {
    wgstate *w = e->wg[c];
    for (int t = 0; t < MAXT; t++) {
      for (int i = 0; i < MAXACC; i++)
        w->s[t][i] = w->p[t][i] = w->pn[t][i] = NAN, w->o[t][i] = 0.f;
      w->m[t][0] = w->m[t][1] = ATTN_NEG_INF;
      w->l[t][0] = w->l[t][1] = 0.f;
      w->factor[t][0] = w->factor[t][1] = NAN;
    }
    w->ng = 0;
    e->cbar_passed[c] = 0;
    e->cons[c].n = e->cons[c].pc = 0;
    consumer_program(e, c);
  }
  /* random interleaving of the producer, the consumers and the TMA completions */
  for (;;) {
    int cand[2 + 2 + 64], nc = 0;
    if (runnable(e, &e->prod)) cand[nc++] = -1;
    for (int c = 0; c < g->consumers; c++)
      if (runnable(e, &e->cons[c])) cand[nc++] = -2 - c;
    for (int k = 0; k < e->nev; k++) cand[nc++] = k;
    if (!nc) break;
    const int pick = cand[lcg() % (unsigned)nc];
    if (pick == -1)
      step_producer(e);
    else if (pick <= -2)
      step_consumer(e, -2 - pick);
    else
      step_tma(e, pick);
    if (e->failed) return;
  }
  int stuck = e->prod.pc < e->prod.n;
  for (int c = 0; c < g->consumers; c++) stuck |= e->cons[c].pc < e->cons[c].n;
  if (stuck)
    FAIL(e, "block (m0 %d, h %d, b %d): deadlock (producer at op %d of %d)\n", e->m0, h, b,
         e->prod.pc, e->prod.n);
}

/* ------------------------------------------------------------------ reference and driver */

static void reference(const prob *p, int D, const float *Q, const float *K, const float *V,
                      double scale, double *O, double *LSE) {
  const int per_kv = p->HQ / p->HKV;
  double *s = malloc(sizeof(double) * (size_t)(p->SKV > 0 ? p->SKV : 1));
  for (int b = 0; b < p->B; b++)
    for (int h = 0; h < p->HQ; h++)
      for (int i = 0; i < p->SQ; i++) {
        const int L = p->kv_lens ? p->kv_lens[b] : p->SKV, hk = h / per_kv;
        int end = p->causal ? i + L - p->SQ + 1 : L; /* attn_abi.h: keys j <= i + L - SQ */
        if (end > L) end = L;
        double *o = O + (((size_t)b * p->SQ + i) * p->HQ + h) * D;
        const size_t li = ((size_t)b * p->HQ + h) * p->SQ + i;
        for (int d = 0; d < D; d++) o[d] = 0;
        if (end <= 0) {
          LSE[li] = -INFINITY;
          continue;
        }
        const float *q = Q + (((size_t)b * p->SQ + i) * p->HQ + h) * D;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < end; j++) {
          const float *k = K + (((size_t)b * p->SKV + j) * p->HKV + hk) * D;
          double dot = 0;
          for (int d = 0; d < D; d++) dot += (double)q[d] * k[d];
          s[j] = scale * dot;
          if (s[j] > mx) mx = s[j];
        }
        for (int j = 0; j < end; j++) {
          const double w = exp(s[j] - mx);
          const float *v = V + (((size_t)b * p->SKV + j) * p->HKV + hk) * D;
          sum += w;
          for (int d = 0; d < D; d++) o[d] += w * v[d];
        }
        for (int d = 0; d < D; d++) o[d] /= sum;
        LSE[li] = mx + log(sum);
      }
  free(s);
}

static void fill(float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    x[i] = (float)((int)(lcg() % 128) - 64) / 64.f; /* exact in f16 and bf16 */
}

/* Emulates one launch of configuration g on problem p and compares with the reference. */
static void check_launch(const prob *p, const cfg *g, int mode, unsigned seed) {
  static emu E;
  emu *e = &E;
  memset(e, 0, sizeof *e);
  e->p = p;
  e->c = g;
  e->mode = mode;
  lcg_state = seed;
  const size_t nq = (size_t)p->B * p->SQ * p->HQ * g->d, nk = (size_t)p->B * p->SKV * p->HKV * g->d,
               nl = (size_t)p->B * p->HQ * p->SQ;
  float *Q = malloc(nq * sizeof *Q), *K = malloc(nk * sizeof *K), *V = malloc(nk * sizeof *V);
  double *RO = malloc(nq * sizeof *RO), *RL = malloc(nl * sizeof *RL);
  e->O = malloc(nq * sizeof *e->O);
  e->LSE = malloc(nl * sizeof *e->LSE);
  e->o_hits = calloc(nq, sizeof *e->o_hits);
  e->lse_hits = calloc(nl, sizeof *e->lse_hits);
  e->sm = malloc(sizeof(float) * 128 * 1024); /* 256 KB of 16-bit slots */
  for (int c = 0; c < 2; c++) e->wg[c] = malloc(sizeof(wgstate));
  for (int k = 0; k < 64; k++) e->ev[k] = malloc(sizeof(tma_event));
  fill(Q, nq);
  fill(K, nk);
  fill(V, nk);
  /* the family's kind of inputs (kernels/attention.c), kept exact in f16 and bf16: Q = 3u +
   * sign(d), K = 3u (u the fill's multiples of 1/64), scaled logits with a standard deviation
   * near 3.5, and spike keys at 1/8, 3/8, 5/8 and 7/8 of each sequence, K = 2(n + 2) / sqrt(D)
   * sign(d) (to 1/64), whose logits stand about 4, 6, 8 and 10 above the row's mean */
  for (size_t i = 0; i < nq; i++) Q[i] = 3 * Q[i] + ((i % (size_t)g->d) * 7 % 3 ? 1.f : -1.f);
  for (size_t i = 0; i < nk; i++) K[i] *= 3;
  for (int b = 0; b < p->B; b++) {
    const int L = p->kv_lens ? p->kv_lens[b] : p->SKV;
    for (int n = 0; n < 4 && L >= 8; n++)
      for (int hk = 0; hk < p->HKV; hk++)
        for (int d = 0; d < g->d; d++)
          K[(((size_t)b * p->SKV + (size_t)((2 * n + 1) * L / 8)) * p->HKV + hk) * g->d + d] =
              roundf(64.f * 2 * (n + 2) / sqrtf((float)g->d)) / 64.f * ((d * 7 % 3) ? 1.f : -1.f);
  }
  /* ragged: the caller's K and V rows past a sequence's length are NaN (TMA loads them: they lie
   * inside SKV); none may reach O, not even multiplied by a zero weight */
  if (p->kv_lens)
    for (int b = 0; b < p->B; b++)
      for (size_t i = (size_t)p->kv_lens[b] * p->HKV * g->d; i < (size_t)p->SKV * p->HKV * g->d;
           i++)
        K[(size_t)b * p->SKV * p->HKV * g->d + i] = V[(size_t)b * p->SKV * p->HKV * g->d + i] = NAN;
  for (size_t i = 0; i < nq; i++) e->O[i] = NAN; /* outputs poisoned, as the family does */
  for (size_t i = 0; i < nl; i++) e->LSE[i] = NAN;
  e->scale = 1.f / sqrtf((float)g->d);
  e->scale_log2 = e->scale * 1.44269504088896340736f;
  reference(p, g->d, Q, K, V, (double)e->scale, RO, RL);

  /* the host's TMA plan, from the configuration's box sizes */
  attn_tma_problem tp = {p->B,
                         p->HQ,
                         p->HKV,
                         p->SQ,
                         p->SKV,
                         g->d,
                         2,
                         mode == 2,
                         0x7f0000000000ull,
                         0x7f1000000000ull,
                         0x7f2000000000ull};
  attn_tma_box box = {64, 64 * g->consumers, g->bn};
  int bad = 0;
  CHECK_INT(attn_tma_plan(&tp, &box, e->prm, &bad), ATTN_TMA_OK);
  e->glob[0] = Q, e->glob[1] = K, e->glob[2] = V;

  const int tiles_m = attn_ceil_div(p->SQ, 64 * g->consumers);
  for (int b = 0; b < p->B && !e->failed; b++)
    for (int h = 0; h < p->HQ && !e->failed; h++)
      for (int bx = 0; bx < tiles_m && !e->failed; bx++) run_block(e, bx, h, b);

  int hits_ok = 1;
  for (size_t i = 0; i < nq; i++) hits_ok &= e->o_hits[i] == 1;
  for (size_t i = 0; i < nl; i++) hits_ok &= e->lse_hits[i] == 1;
  double diff = 0, ref = 0, worst = 0, worst_lse = 0;
  int nan = 0, lse_bad = 0;
  for (size_t i = 0; i < nq; i++) {
    const double d = e->O[i] - RO[i];
    if (!isfinite(e->O[i])) nan++;
    diff += d * d;
    ref += RO[i] * RO[i];
    if (fabs(d) > worst) worst = fabs(d);
  }
  for (size_t i = 0; i < nl; i++) {
    if (isinf(RL[i])) {
      lse_bad += !(isinf(e->LSE[i]) && e->LSE[i] < 0);
      continue;
    }
    const double d = fabs(e->LSE[i] - RL[i]);
    if (!(d <= 1e30))
      lse_bad++;
    else if (d > worst_lse)
      worst_lse = d;
  }
  const double rel = ref > 0 ? sqrt(diff / ref) : sqrt(diff);
  const double tol = mode == 0 ? 2e-5 : mode == 1 ? 2e-3 : 1e-2;
  const int ok = !e->failed && hits_ok && !nan && !lse_bad && (mode ? rel <= tol : worst <= tol) &&
                 worst_lse <= (mode ? 1e-3 : 1e-4);
  CHECK(ok);
  printf(
      "%-4s D %3d BN %3d C %d ST %d OV %d | B %d HQ %d HKV %d SQ %4d SKV %4d%s%s: max |dO| %.2e "
      "rel %.2e max |dLSE| "
      "%.2e%s\n",
      mode == 0   ? "fp32"
      : mode == 1 ? "f16"
                  : "bf16",
      g->d, g->bn, g->consumers, g->stages, g->overlap, p->B, p->HQ, p->HKV, p->SQ, p->SKV,
      p->causal ? " causal" : "", p->kv_lens ? " ragged" : "", worst, rel, worst_lse,
      ok ? "" : "  FAILED");
  if (!hits_ok) fprintf(stderr, "  an output element was not written exactly once\n");
  if (nan || lse_bad)
    fprintf(stderr, "  %d O elements not finite, %d LSE values wrong\n", nan, lse_bad);
  free(Q), free(K), free(V), free(RO), free(RL), free(e->O), free(e->LSE), free(e->o_hits),
      free(e->lse_hits);
  free(e->sm);
  for (int c = 0; c < 2; c++) free(e->wg[c]);
  for (int k = 0; k < 64; k++) free(e->ev[k]);
}

/* ------------------------------------------------------------------ index checks */

/* The fragment maps of the header against the ISA's (above), and the A and D layouts bijective. */
static void check_fragments(void) {
  static int seen[64][256];
  int ok = 1;
  memset(seen, 0, sizeof seen);
  for (int t = 0; t < 128; t++)
    for (int i = 0; i < 128; i++) {
      int row, col;
      frag_d(t, i, &row, &col);
      ok &= attn_acc_row(t, i) == row && attn_acc_col(t, i) == col &&
            attn_acc_half(i) == (row - attn_acc_row(t, 0)) / 8;
      seen[row][col]++;
    }
  for (int r = 0; r < 64; r++)
    for (int c = 0; c < 256; c++) ok &= seen[r][c] == 1;
  CHECK(ok);
  /* P slab kk: a_i of thread t is S element attn_p_acc(kk, i), at S column 16kk + (a_i's column) */
  ok = 1;
  memset(seen, 0, sizeof seen);
  for (int kk = 0; kk < 16; kk++)
    for (int t = 0; t < 128; t++)
      for (int i = 0; i < 8; i++) {
        int ar, ac, sr, sc;
        frag_a(t, i, &ar, &ac);
        frag_d(t, attn_p_acc(kk, i), &sr, &sc);
        ok &= ar == sr && 16 * kk + ac == sc;
        if (kk == 0) seen[ar][ac]++;
      }
  for (int r = 0; r < 64; r++)
    for (int c = 0; c < 16; c++) ok &= seen[r][c] == 1;
  CHECK(ok);
}

/* Tile ranges and the first masked tile against brute force over the mask of attn_abi.h. */
static void check_tiles(void) {
  int bad = 0;
  for (int causal = 0; causal < 2; causal++)
    for (int SQ = 1; SQ <= 300; SQ += 37)
      for (int L = 0; L <= 320; L += 29)
        for (int bm = 64; bm <= 128; bm += 64)
          for (int bn = 64; bn <= 176; bn += 16)
            for (int m0 = 0; m0 < SQ; m0 += bm) {
              int need = 0, whole = 1 << 30; /* tiles needed; first tile not whole for some row */
              for (int row = m0; row < m0 + bm; row++) {
                int end = causal ? row + L - SQ + 1 : L;
                if (end > L) end = L;
                if (row < SQ && end > 0 && attn_ceil_div(end, bn) > need)
                  need = attn_ceil_div(end, bn);
                if (row < SQ && (end < 0 ? 0 : end) / bn < whole) whole = (end < 0 ? 0 : end) / bn;
                if (attn_key_end(row, L, SQ, causal) != end) bad++;
              }
              const int n = attn_kv_tiles(m0, bm, L, SQ, causal, bn),
                        fm = attn_first_masked(m0, L, SQ, causal, bn, n);
              if (whole > need) whole = need;
              if (n != need || fm != whole) {
                if (bad < 5)
                  fprintf(stderr,
                          "tiles: causal %d SQ %d L %d bm %d bn %d m0 %d: %d tiles (want %d), "
                          "first masked %d (want %d)\n",
                          causal, SQ, L, bm, bn, m0, n, need, fm, whole);
                bad++;
              }
            }
  CHECK_INT(bad, 0);
  /* causal tiles run last to first: a bijection either way */
  for (int causal = 0; causal < 2; causal++) {
    int seen[7] = {0};
    for (int bx = 0; bx < 7; bx++) seen[attn_m_tile(bx, 7, causal)]++;
    for (int i = 0; i < 7; i++) CHECK_INT(seen[i], 1);
  }
  CHECK_INT(attn_m_tile(0, 7, 1), 6);
}

/* The swizzle ptx_sw128 (rt_ptx.h) documents is the TMA unit's (address bits) on 1024-aligned boxes; the
 * barriers lie past the data; the stage ring's parities. */
static void check_layout(void) {
  int ok = 1;
  for (int row = 0; row < 256; row++)
    for (int byte = 0; byte < 128; byte++)
      ok &= (unsigned)ptx_sw128(row, byte) == swz((unsigned)(row * 128 + byte));
  CHECK(ok);
  for (int stages = 1; stages <= 4; stages++)
    for (int n = 0; n < 40; n++) {
      /* the consumer of tile n waits for completed phase n/stages of its full barrier; the
       * producer refilling for tile n waits for phase n/stages - 1 of the empty barrier */
      CHECK_INT(ptx_full_parity(n, stages), (n / stages) % 2);
      if (n >= stages) CHECK_INT(ptx_empty_parity(n, stages), (n / stages - 1) % 2);
    }
  /* a descriptor plus an offset is the descriptor of the address plus the offset */
  ok = 1;
  for (unsigned a = 0; a < (1u << 18); a += 1024)
    for (int off = 0; a + (unsigned)off < (1u << 18) && off < 65536; off += 16 * 37)
      ok &= ptx_desc_add(ptx_desc(a, 16, 1024), off) == ptx_desc(a + (unsigned)off, 16, 1024) &&
            ptx_desc_add(ptx_desc(a, 8192, 1024), off) == ptx_desc(a + (unsigned)off, 8192, 1024);
  CHECK(ok);
  CHECK_INT(attn_smem_bytes(128, 128, 128, 2),
            1024 + 128 * 128 * 2 + 2 * 2 * 128 * 128 * 2 + 8 * 9);
  CHECK_INT(attn_bar_vempty(3), 4 * 3 + 4);
}

/* The manifest's SMEM is attn_smem_bytes for every configuration it allows, within the opt-in
 * limit; the derived box sizes are the kernel's tiles. */
static void check_manifest(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/templates/attention/attn_wgmma.json", test_source_dir());
  manifest *m = NULL;
  rt_error err = {0};
  CHECK_INT(manifest_load(path, &m, &err), RT_OK);
  if (!m) {
    fprintf(stderr, "%s\n", err.text);
    return;
  }
  static const int dims[] = {64, 128, 256};
  size_t total = 0;
  for (int di = 0; di < 3; di++)
    for (int causal = 0; causal < 2; causal++) {
      rt_vars env;
      rt_vars_clear(&env);
      const gpu_spec *gpu = gpu_spec_find("h200");
      CHECK_INT(gpu_spec_env(arch_spec_find("sm_90a"), gpu, &env, &err), RT_OK);
      CHECK_INT(manifest_env_dtype("bf16", &env, &err), RT_OK);
      const char *names[] = {"B",      "HQ",        "HKV",   "SQ",         "SKV",       "D",
                             "causal", "group",     "paged", "page_size",  "max_pages", "num_pages",
                             "ragged", "kv_tokens", "pairs", "dtype_bytes"};
      const long long pairs =
          causal ? 2 * 1000 * 1001 / 2 : 2 * 1000 * 1000; /* SQ = SKV = 1000, B = 2 */
      const long long vals[] = {2, 16, 4, 1000, 1000, dims[di], causal, 4,
                                0, 0,  0, 0,    0,    2000,     pairs,  2};
      for (int i = 0; i < 16; i++) rt_vars_set(&env, names[i], vals[i]);
      space *sp = NULL;
      CHECK_INT(manifest_build_space(m, &env, &sp, &err), RT_OK);
      if (!sp) continue;
      for (size_t k = 0; k < space_size(sp); k++) {
        rt_vars v;
        CHECK_INT(manifest_config_vars(m, sp, k, &env, &v, &err), RT_OK);
        long long d = 0, bn = 0, cons = 0, st = 0, smem = 0, rq = 0, rkv = 0, inner = 0, tma = 0;
        rt_vars_get(&v, "HEAD_DIM", &d), rt_vars_get(&v, "BLOCK_N", &bn),
            rt_vars_get(&v, "CONSUMERS", &cons);
        rt_vars_get(&v, "STAGES", &st), rt_vars_get(&v, "SMEM", &smem),
            rt_vars_get(&v, "TMA_ROWS_Q", &rq);
        rt_vars_get(&v, "TMA_ROWS_KV", &rkv), rt_vars_get(&v, "TMA_INNER", &inner),
            rt_vars_get(&v, "ATTN_TMA", &tma);
        CHECK_INT(smem, attn_smem_bytes(64 * (int)cons, (int)bn, (int)d, (int)st));
        CHECK(smem <= arch_spec_find("sm_90a")->smem_per_block_optin);
        CHECK(rq == 64 * cons && rkv == bn && inner == ATTN_CHUNK && tma == 1 && d == dims[di]);
        /* the problem's FLOPs; the executed ones at least those and, on this shape, at most the
         * padded tiles' (causal: half a KV tile of padding per query tile, estimated) */
        double flops = 0, bytes = 0, executed = 0;
        CHECK_INT(manifest_cost(m, &v, &flops, &bytes, &executed, &err), RT_OK);
        CHECK_NEAR(flops, 4.0 * 16 * d * pairs, 1);
        CHECK(executed >= flops && executed <= 1.45 * flops);
        CHECK(bytes >= 2.0 * (2 * 2 * 1000 * 16 * d + 2 * 2 * 1000 * 4 * d));
        unsigned grid[3], block[3], dyn = 0;
        CHECK_INT(manifest_launch(m, &v, grid, block, &dyn, &err), RT_OK);
        CHECK(grid[0] == (unsigned)attn_ceil_div(1000, 64 * (int)cons) && grid[1] == 16 &&
              grid[2] == 2);
        CHECK(block[0] == 128u * (unsigned)(cons + 1) && block[1] == 1 && block[2] == 1 &&
              dyn == (unsigned)smem);
        total++;
      }
      space_free(sp);
    }
  CHECK(total > 0);
  manifest_free(m);
}

/* ------------------------------------------------------------------ the TMA plan */

static void check_plan(void) {
  /* cuda.h's values, struct layout, and the params' arrays pass as cuTensorMapEncodeTiled's */
  CHECK_INT(ATTN_TMA_DTYPE_FLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  CHECK_INT(ATTN_TMA_DTYPE_BFLOAT16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  CHECK_INT(ATTN_TMA_INTERLEAVE_NONE, CU_TENSOR_MAP_INTERLEAVE_NONE);
  CHECK_INT(ATTN_TMA_SWIZZLE_128B, CU_TENSOR_MAP_SWIZZLE_128B);
  CHECK_INT(ATTN_TMA_L2_PROMOTION_256B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  CHECK_INT(ATTN_TMA_OOB_FILL_ZERO, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  CHECK_INT(sizeof(attn_tma_map), sizeof(CUtensorMap));
  CHECK_INT(_Alignof(attn_tma_map), 64);
  CHECK_INT(sizeof(attn_tma_maps), 3 * sizeof(CUtensorMap));
  CHECK_INT(offsetof(attn_tma_maps, k), 128);
  CHECK_INT(offsetof(attn_tma_maps, v), 256);
  {
    attn_tma_params q;
    const cuuint64_t *dims = q.dims, *strides = q.strides;
    const cuuint32_t *box = q.box, *es = q.elem_strides;
    (void)dims, (void)strides, (void)box, (void)es;
  }

  static const struct {
    long long B, HQ, HKV, SQ, SKV, D;
    int bf16;
    long long rows_q, rows_kv;
  } probs[] = {
      {2, 32, 8, 4096, 4096, 128, 1, 128, 128},
      {1, 8, 8, 1, 32768, 64, 0, 64, 176},
      {4, 16, 2, 1000, 777, 256, 1, 128, 80},
      {3, 5, 1, 17, 4099, 128, 0, 64, 64},
  };
  for (size_t i = 0; i < sizeof probs / sizeof probs[0]; i++) {
    attn_tma_problem p = {
        probs[i].B,       probs[i].HQ, probs[i].HKV,  probs[i].SQ,       probs[i].SKV,
        probs[i].D,       2,           probs[i].bf16, 0x7f0000000000ull, 0x7f0100000010ull,
        0x7f0200000020ull};
    attn_tma_box bx = {64, probs[i].rows_q, probs[i].rows_kv};
    attn_tma_params out[3];
    int bad = 7;
    CHECK_INT(attn_tma_plan(&p, &bx, out, &bad), ATTN_TMA_OK);
    CHECK_INT(bad, -1);
    for (int o = 0; o < 3; o++) {
      const attn_tma_params *t = &out[o];
      const long long heads = o ? p.HKV : p.HQ, tokens = o ? p.SKV : p.SQ,
                      rows = o ? bx.rows_kv : bx.rows_q;
      CHECK_INT(t->type,
                probs[i].bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
      CHECK_INT(t->rank, 4);
      CHECK_INT(t->base, o == 0 ? p.q : o == 1 ? p.k : p.v);
      CHECK_INT(t->dims[0], p.D);
      CHECK_INT(t->dims[1], heads);
      CHECK_INT(t->dims[2], tokens);
      CHECK_INT(t->dims[3], p.B);
      CHECK_INT(t->strides[0], p.D * 2);
      CHECK_INT(t->strides[1], heads * p.D * 2);
      CHECK_INT(t->strides[2], tokens * heads * p.D * 2);
      CHECK_INT(t->box[0], 64);
      CHECK_INT(t->box[1], 1);
      CHECK_INT(t->box[2], rows);
      CHECK_INT(t->box[3], 1);
      for (int d = 0; d < 4; d++) CHECK_INT(t->elem_strides[d], 1);
      CHECK_INT(t->interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
      CHECK_INT(t->swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
      CHECK_INT(t->l2, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
      CHECK_INT(t->oob, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      /* the ABI's element offset of (b, token, head, d) is the tensor map's byte offset / 2 */
      const long long b = p.B - 1, tok = tokens - 1, hd = heads - 1, d = p.D - 1;
      CHECK_INT((d * 2 + hd * (long long)t->strides[0] + tok * (long long)t->strides[1] +
                 b * (long long)t->strides[2]) /
                    2,
                ((b * tokens + tok) * heads + hd) * p.D + d);
    }
  }

  /* refusals: the rule, the operand at fault, out untouched */
  attn_tma_problem ok = {2, 8, 2, 100, 100, 128, 2, 1, 0x1000, 0x2000, 0x3000};
  attn_tma_box bx = {64, 128, 128};
  attn_tma_params out[3];
  memset(out, 0x5a, sizeof out);
  attn_tma_problem p;
  int bad;
  p = ok, p.k = 0x2008;
  CHECK_INT(attn_tma_plan(&p, &bx, out, &bad), ATTN_TMA_ERR_ALIGN);
  CHECK_INT(bad, ATTN_TMA_K);
  CHECK(out[0].rank == 0x5a5a5a5au);
  p = ok, p.q = 0x1001;
  CHECK_INT(attn_tma_plan(&p, &bx, out, &bad), ATTN_TMA_ERR_ALIGN);
  CHECK_INT(bad, ATTN_TMA_Q);
  p = ok, p.v = 0x3004;
  CHECK_INT(attn_tma_plan(&p, &bx, out, &bad), ATTN_TMA_ERR_ALIGN);
  CHECK_INT(bad, ATTN_TMA_V);
  p = ok, p.elem_bytes = 4;
  CHECK_INT(attn_tma_plan(&p, &bx, out, &bad), ATTN_TMA_ERR_DTYPE);
  CHECK_INT(bad, -1);
  p = ok, p.SKV = 0;
  CHECK_INT(attn_tma_plan(&p, &bx, out, NULL), ATTN_TMA_ERR_SHAPE);
  p = ok, p.HQ = 6, p.HKV = 4;
  CHECK_INT(attn_tma_plan(&p, &bx, out, NULL), ATTN_TMA_ERR_SHAPE);
  p = ok, p.SQ = (1ll << 32) + 1;
  CHECK_INT(attn_tma_plan(&p, &bx, out, NULL), ATTN_TMA_ERR_SHAPE);
  p = ok, p.SKV = 1ll << 31, p.HKV = 8, p.HQ = 8; /* K's sequence stride 2^31 * 8 * 256 B = 2^42 */
  CHECK_INT(attn_tma_plan(&p, &bx, out, &bad), ATTN_TMA_ERR_STRIDE);
  CHECK_INT(bad, ATTN_TMA_K);
  p = ok, p.D = 96; /* 96 is not a multiple of the 64-element box */
  CHECK_INT(attn_tma_plan(&p, &bx, out, NULL), ATTN_TMA_ERR_BOX);
  attn_tma_box b2 = bx;
  b2.inner = 128; /* 256 bytes: past the 128-byte swizzle span */
  CHECK_INT(attn_tma_plan(&ok, &b2, out, NULL), ATTN_TMA_ERR_BOX);
  b2 = bx, b2.inner = 4; /* 8 bytes: not a multiple of 16 */
  p = ok, p.D = 64;
  CHECK_INT(attn_tma_plan(&p, &b2, out, NULL), ATTN_TMA_ERR_BOX);
  b2 = bx, b2.rows_kv = 257;
  CHECK_INT(attn_tma_plan(&ok, &b2, out, NULL), ATTN_TMA_ERR_BOX);
  b2 = bx, b2.rows_q = 0;
  CHECK_INT(attn_tma_plan(&ok, &b2, out, NULL), ATTN_TMA_ERR_BOX);
  CHECK(out[0].rank == 0x5a5a5a5au);
  CHECK_CONTAINS(attn_tma_strerror(ATTN_TMA_ERR_ALIGN), "16-byte aligned");
  CHECK_CONTAINS(attn_tma_strerror(ATTN_TMA_ERR_BOX), "128-byte");
  CHECK_CONTAINS(attn_tma_strerror(ATTN_TMA_ERR_STRIDE), "multiple of 16");
  CHECK_INT(attn_tma_plan(&ok, &bx, out, &bad), ATTN_TMA_OK);
}

TEST_CASE(configurations) {
  check_fragments();
  check_tiles();
  check_layout();
  check_plan();
  check_manifest();

  static const int ragged[2] = {0, 77}, ragged2[3] = {130, 1, 64};
  const prob probs[] = {
      {2, 4, 2, 150, 230, 0, NULL},  /* 0: grouped heads, nothing a multiple of a tile */
      {2, 4, 2, 150, 230, 1, NULL},  /* 1: causal, SQ < SKV */
      {1, 2, 1, 230, 150, 1, NULL},  /* 2: causal, SQ > SKV: the first 80 queries attend nothing */
      {2, 2, 2, 70, 100, 0, ragged}, /* 3: ragged, one sequence empty */
      {2, 2, 2, 70, 100, 1, ragged}, /* 4: ragged and causal */
      {1, 3, 1, 1, 300, 1, NULL},    /* 5: one query (decode-like), causal */
      {3, 2, 1, 129, 140, 1, ragged2}, /* 6: ragged causal, 129 rows: a tile of one row */
  };
  static const cfg cfgs[] = {
      {64, 64, 1, 2, 0},  {64, 80, 2, 3, 1},  {64, 176, 1, 2, 1},  {64, 128, 2, 4, 1},
      {128, 64, 2, 2, 1}, {128, 96, 1, 3, 0}, {128, 128, 2, 2, 1}, {128, 176, 1, 2, 1},
      {256, 64, 2, 2, 1}, {256, 80, 1, 2, 0}, {256, 96, 1, 2, 1},
  };
  const int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]),
            nprob = (int)(sizeof probs / sizeof probs[0]);
  /* every configuration on three problems (rotating), exact; a few in f16 and bf16 */
  for (int k = 0; k < ncfg; k++)
    for (int j = 0; j < 3; j++)
      check_launch(&probs[(k * 3 + j) % nprob], &cfgs[k], 0, 1000u + (unsigned)(k * 7 + j));
  check_launch(&probs[1], &cfgs[6], 2, 77);
  check_launch(&probs[0], &cfgs[1], 1, 78);
  check_launch(&probs[4], &cfgs[8], 2, 79);
  check_launch(&probs[6], &cfgs[3], 1, 80);
}

TEST_LIST(TEST_ENTRY(configurations))
