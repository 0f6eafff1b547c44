/* test_gemm_pipe.c — gemm_wgmma's warp-specialised pipeline (PRODUCER 1), simulated on the host
 * with the kernel's own stage, parity and release arithmetic (ptx_stage and ptx_*_parity of
 * rt_ptx.h, gemm_pipe_release of gemm_index.h):
 * one block or a cluster of two sharing A by multicast, over one or several work units (a
 * persistent block's tiles, whose slabs the pipeline counts on from one tile to the next).
 *
 * The simulation models what the PTX ISA promises and no more: an mbarrier completes a phase
 * when its pending arrivals reach zero and its transaction count is back to zero; try_wait.parity
 * P succeeds once the phase with parity P has completed; a TMA load (each destination of a
 * multicast on its own) writes its stage at any time between its issue and its completion; a
 * wgmma group reads its stage until a later wait_group says it is done.  A random scheduler
 * interleaves the producers, the TMA engine and every consumer warp, thousands of times over
 * several STAGES, K lengths and unit counts.  It must never deadlock, never let a load write a
 * stage that a consumer's wgmma may still read, always hand a consumer the slab it waits for in
 * every part of the stage (its own B, each block's part of A), and a parity wait must never
 * succeed on a phase two ahead (aliasing).  Each unit gets random edges (M rows of the tile, N
 * columns of the cluster's tiles), so boxes wholly outside the tensor, which the kernel does not
 * load, happen often: what a full barrier expects (gemm_wgmma_stage_bytes) must equal the
 * bytes the loads that are issued bring, or the run sticks. */
/* stages: none */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "templates/gemm/gemm_index.h"
#include "test.h"

enum { MAXS = 6, MAXCL = 2, WARPS = 3, MAXLOADS = 64, MAXU = 3 };
/* the simulated tile: BLOCK_M 128 (A parts of 128/cluster rows), BLOCK_N 128 stored K x N
 * (nn: two B boxes of 64 columns), BLOCK_K 64, 16-bit elements */
enum { BM = 128, BN = 128, BK = 64, PARTS = 1 + 2 /* A parts (at most MAXCL), then B boxes */ };

typedef struct {
  int count;   /* arrivals per phase */
  int pending; /* arrivals still missing in this phase */
  int tx;      /* transaction bytes still expected */
  int phase;   /* phases completed */
} mbar;

static void mbar_init(mbar *b, int count) {
  b->count = b->pending = count;
  b->tx = 0;
  b->phase = 0;
}

static void mbar_check(mbar *b) {
  if (b->pending == 0 && b->tx == 0) {
    b->phase++;
    b->pending = b->count;
  }
}

static void mbar_arrive(mbar *b) {
  b->pending--;
  mbar_check(b);
}

static void mbar_arrive_tx(mbar *b, int bytes) {
  b->tx += bytes;
  b->pending--;
  mbar_check(b);
}

static void mbar_complete_tx(mbar *b, int bytes) {
  b->tx -= bytes;
  mbar_check(b);
}

/* try_wait.parity for the waiter that expects phase number `want` to complete; 1 when it may go
 * on.  Fails the test if the barrier ran two phases past the one the parity names. */
static int failures_alias;
static int mbar_try_wait(const mbar *b, int parity, int want) {
  if ((want & 1) != parity) failures_alias++; /* the kernel's parity names another phase */
  if (b->phase > want + 1) failures_alias++;  /* aliasing: parity would be ambiguous */
  return (b->phase & 1) != parity && b->phase > want;
}

typedef struct {
  int cta, stage, part, slab, bytes; /* part: 0..cl-1 A parts, MAXCL + j: B box j; slab -1: free */
} load;

typedef struct {
  int g, kt, unit; /* next slab (over units), its index in the unit, the unit */
  int reading[2];  /* wgmma groups in flight: slabs, -1 none */
} warp;

typedef struct {
  int stages, nk, units, cl;
  mbar full[MAXCL][MAXS], empty[MAXCL][MAXS];
  int content[MAXCL][MAXS][MAXCL + 2]; /* slab in each part of each stage, -1 none */
  int M[MAXU], N[MAXU];                /* each unit's edges: rows of A, columns of B inside */
  load loads[MAXLOADS];
  int prod_g[MAXCL]; /* producer of each block: next slab to load */
  warp w[MAXCL][WARPS];
  int bad_read, bad_write;
} sim;

/* A stage of block c may be written only when none of its consumers' wgmmas reads it. */
static void check_write(sim *s, int c, int st) {
  for (int w = 0; w < WARPS; w++)
    for (int k = 0; k < 2; k++)
      if (s->w[c][w].reading[k] >= 0 && ptx_stage(s->w[c][w].reading[k], s->stages) == st)
        s->bad_write++;
}

static int broken; /* 1: the producer skips the empty barrier (the test must notice) */
static int local;  /* 1: consumers release only their own block's stage (the test must notice) */

/* Is part p (A part r < MAXCL, B box MAXCL + j) of block r's tile in unit u inside the tensor?
 * Written here independently of gemm_index.h: the tile is at row 0, block r's columns start at
 * r * BN. */
static int inside(const sim *s, int u, int r, int p) {
  if (p < MAXCL) return p * (BM / s->cl) < s->M[u];
  return r * BN + 64 * (p - MAXCL) < s->N[u];
}

static int issue(sim *s, int cta, int st, int part, int g, int bytes) {
  for (int i = 0; i < MAXLOADS; i++)
    if (s->loads[i].slab < 0) {
      s->loads[i] = (load){cta, st, part, g, bytes};
      check_write(s, cta, st); /* the copy may start writing at once */
      return 1;
    }
  return 0;
}

static int step_producer(sim *s, int r) {
  int g = s->prod_g[r];
  if (g >= s->units * s->nk) return 0;
  int st = ptx_stage(g, s->stages);
  if (g >= s->stages && !broken &&
      !mbar_try_wait(&s->empty[r][st], ptx_empty_parity(g, s->stages), g / s->stages - 1))
    return 0;
  int free_slots = 0;
  for (int i = 0; i < MAXLOADS; i++) free_slots += s->loads[i].slab < 0;
  if (free_slots < s->cl + 2) return 0;
  const int u = g / s->nk;
  /* expect_tx: the kernel's own count of what reaches this block's stage */
  mbar_arrive_tx(&s->full[r][st],
                 gemm_wgmma_stage_bytes(0, BM, BN, BK, s->cl, 0, r * BN, s->M[u], s->N[u]));
  if (inside(s, u, r, r)) /* this block's A part, multicast, unless wholly outside */
    for (int c = 0; c < s->cl; c++) issue(s, c, st, r, g, BM / s->cl * BK * 2);
  for (int j = 0; j < 2; j++) /* its own B boxes that are inside */
    if (inside(s, u, r, MAXCL + j)) issue(s, r, st, MAXCL + j, g, 64 * BK * 2);
  s->prod_g[r]++;
  return 1;
}

static int step_tma(sim *s, int i) {
  load *l = &s->loads[i];
  if (l->slab < 0) return 0;
  check_write(s, l->cta, l->stage);
  s->content[l->cta][l->stage][l->part] = l->slab;
  mbar_complete_tx(&s->full[l->cta][l->stage], l->bytes);
  l->slab = -1;
  return 1;
}

/* The kernel's release_stage: lane 0 of the warp arrives at the stage's empty barrier of every
 * block of the cluster. */
static void release(sim *s, int r, int slab) {
  for (int c = 0; c < s->cl; c++)
    if (!local || c == r) mbar_arrive(&s->empty[c][ptx_stage(slab, s->stages)]);
}

static int step_consumer(sim *s, int r, int wi) {
  warp *w = &s->w[r][wi];
  if (w->unit >= s->units) return 0;
  if (w->kt == s->nk) {
    /* the unit's wait_group 0, its last slab released, the epilogue; then the next unit */
    w->reading[0] = w->reading[1] = -1;
    release(s, r, w->g - 1);
    w->unit++;
    w->kt = 0;
    return 1;
  }
  int st = ptx_stage(w->g, s->stages);
  if (!mbar_try_wait(&s->full[r][st], ptx_full_parity(w->g, s->stages), w->g / s->stages)) return 0;
  for (int p = 0; p < MAXCL + 2; p++) /* every part inside holds this slab */
    if ((p >= MAXCL || p < s->cl) && inside(s, w->unit, r, p) && s->content[r][st][p] != w->g)
      s->bad_read++;
  /* commit slab g's group, then wait_group 1: the older group is done */
  w->reading[1] = w->reading[0];
  w->reading[0] = w->g;
  int done = gemm_pipe_release(w->g - w->kt, w->kt);
  if (w->reading[1] != done) s->bad_read++;
  w->reading[1] = -1;
  if (done >= 0) release(s, r, done);
  w->g++;
  w->kt++;
  return 1;
}

static uint64_t rng = 88172645463325252ull;
static unsigned rnd(unsigned n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng % n);
}

/* One run; returns 1 when every consumer warp got through every slab of every unit. */
static int run(int cl, int stages, int nk, int units, sim *s) {
  memset(s, 0, sizeof *s);
  s->cl = cl;
  s->stages = stages;
  s->nk = nk;
  s->units = units;
  for (int c = 0; c < cl; c++)
    for (int i = 0; i < stages; i++) {
      mbar_init(&s->full[c][i], 1);
      mbar_init(&s->empty[c][i],
                WARPS * (local ? 1 : cl)); /* EMPTY_ARRIVALS: the cluster's consumer warps */
      for (int p = 0; p < MAXCL + 2; p++) s->content[c][i][p] = -1;
    }
  for (int i = 0; i < MAXLOADS; i++) s->loads[i].slab = -1;
  for (int u = 0; u < units;
       u++) { /* a unit's tile row has 1..BM rows inside; its columns 1..cl*BN */
    s->M[u] = 1 + (int)rnd(BM);
    s->N[u] = 1 + (int)rnd((unsigned)(cl * BN));
  }
  for (int c = 0; c < cl; c++)
    for (int w = 0; w < WARPS; w++) s->w[c][w].reading[0] = s->w[c][w].reading[1] = -1;
  for (;;) {
    int actors = cl + MAXLOADS + cl * WARPS, moved = 0;
    int first = (int)rnd((unsigned)actors); /* try actors from a random start until one moves */
    for (int i = 0; i < actors && !moved; i++) {
      int a = (first + i) % actors;
      if (a < cl)
        moved = step_producer(s, a);
      else if (a < cl + MAXLOADS)
        moved = step_tma(s, a - cl);
      else
        moved = step_consumer(s, (a - cl - MAXLOADS) / WARPS, (a - cl - MAXLOADS) % WARPS);
    }
    if (!moved) break;
  }
  for (int c = 0; c < cl; c++)
    for (int w = 0; w < WARPS; w++)
      if (s->w[c][w].unit != units) return 0;
  /* every empty barrier got exactly the arrivals of every slab: nothing left half-released */
  for (int c = 0; c < cl; c++)
    for (int i = 0; i < stages; i++)
      if (s->empty[c][i].pending != s->empty[c][i].count) return 0;
  return 1;
}

TEST_CASE(protocol) {
  static sim s;
  int runs = 0, stuck = 0, bad_read = 0, bad_write = 0;
  for (int cl = 1; cl <= MAXCL; cl++)
    for (int stages = 2; stages <= MAXS; stages++)
      for (int nk = 1; nk <= 30; nk += (nk < 8 ? 1 : 7))
        for (int units = 1; units <= 3; units++)
          for (int rep = 0; rep < 40; rep++) {
            runs++;
            stuck += !run(cl, stages, nk, units, &s);
            bad_read += s.bad_read;
            bad_write += s.bad_write;
          }
  CHECK(runs > 5000);
  CHECK_INT(stuck, 0);
  CHECK_INT(bad_read, 0);
  CHECK_INT(bad_write, 0);
  CHECK_INT(failures_alias, 0);
}

TEST_CASE(broken_producer) {
  static sim s;
  /* the simulation can fail: a producer that does not wait for the empty barrier overwrites a
   * stage under a consumer's wgmma, hands it the wrong slab, or arrives twice in one phase of
   * the full barrier, which then never completes (stuck) */
  broken = 1;
  for (int cl = 1; cl <= MAXCL; cl++) {
    int caught = 0;
    for (int rep = 0; rep < 50; rep++) {
      caught += !run(cl, 3, 20, 2, &s);
      caught += s.bad_write + s.bad_read;
    }
    CHECK(caught > 0);
  }
  broken = 0;
}

TEST_CASE(local_barriers) {
  static sim s;
  /* and a cluster whose empty barriers count only their own block's warps: a peer's multicast
   * refill of A overwrites a stage under this block's wgmma */
  local = 1;
  int caught = 0;
  for (int rep = 0; rep < 200; rep++) {
    caught += !run(2, 2, 12, 2, &s);
    caught += s.bad_write + s.bad_read;
  }
  CHECK(caught > 0);
}

TEST_LIST(TEST_ENTRY(protocol), TEST_ENTRY(broken_producer), TEST_ENTRY(local_barriers))
