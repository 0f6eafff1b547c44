/* test_gemm_pipe.c — gemm_wgmma's warp-specialised pipeline (PRODUCER 1), simulated on the host
 * with the kernel's own stage and parity arithmetic (gemm_pipe_* in gemm_index.h).
 *
 * The simulation models what the PTX ISA promises and no more: an mbarrier completes a phase
 * when its pending arrivals reach zero and its transaction count is back to zero; try_wait.parity
 * P succeeds once the phase with parity P has completed; a TMA load writes its stage at any time
 * between its issue and its completion; a wgmma group reads its stage until a later wait_group
 * says it is done.  A random scheduler interleaves the producer, the TMA engine and every
 * consumer thread, thousands of times over several STAGES and K lengths.  It must never deadlock,
 * never let a load write a stage that a consumer's wgmma may still read, always hand a consumer
 * the slab it waits for, and a parity wait must never succeed on a phase two ahead (aliasing). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../templates/gemm/gemm_index.h"
#include "test.h"

enum { MAXS = 8, CONS = 4, MAXK = 40 };

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
  int stages, nk;
  mbar full[MAXS], empty[MAXS];
  int content[MAXS];         /* slab in each stage, -1 none */
  int load_kt[2 * MAXS];     /* loads in flight: slab, -1 free */
  int load_stage[2 * MAXS];
  int prod_kt;               /* producer: next slab to load */
  int cons_kt[CONS];         /* consumer: next slab to issue */
  int reading[CONS][2];      /* consumer's wgmma groups in flight: slabs being read, -1 none */
  int bad_read, bad_write;
} sim;

/* A stage may be written only when no consumer's wgmma group reads it. */
static void check_write(sim *s, int st) {
  for (int c = 0; c < CONS; c++)
    for (int g = 0; g < 2; g++)
      if (s->reading[c][g] >= 0 && gemm_pipe_stage(s->reading[c][g], s->stages) == st) s->bad_write++;
}

static int broken; /* 1: the producer skips the empty barrier (the test must notice) */

static int step_producer(sim *s) {
  int kt = s->prod_kt;
  if (kt >= s->nk) return 0;
  int st = gemm_pipe_stage(kt, s->stages);
  if (kt >= s->stages && !broken &&
      !mbar_try_wait(&s->empty[st], gemm_pipe_empty_parity(kt, s->stages), kt / s->stages - 1))
    return 0;
  int slot = -1;
  for (int i = 0; i < 2 * MAXS; i++)
    if (s->load_kt[i] < 0) slot = i;
  if (slot < 0) return 0;
  mbar_arrive_tx(&s->full[st], 2); /* expect_tx: A and B, one byte each here */
  s->load_kt[slot] = kt;
  s->load_stage[slot] = st;
  check_write(s, st); /* the copy may start writing at once */
  s->prod_kt++;
  return 1;
}

static int step_tma(sim *s, int slot) {
  if (s->load_kt[slot] < 0) return 0;
  int st = s->load_stage[slot];
  check_write(s, st);
  s->content[st] = s->load_kt[slot];
  s->load_kt[slot] = -1;
  mbar_complete_tx(&s->full[st], 2);
  return 1;
}

static int step_consumer(sim *s, int c) {
  int kt = s->cons_kt[c];
  if (kt >= s->nk) {
    /* the epilogue's wait_group 0: every read is done */
    s->reading[c][0] = s->reading[c][1] = -1;
    return 0;
  }
  int st = gemm_pipe_stage(kt, s->stages);
  if (!mbar_try_wait(&s->full[st], gemm_pipe_full_parity(kt, s->stages), kt / s->stages)) return 0;
  if (s->content[st] != kt) s->bad_read++;
  /* commit slab kt's group, then wait_group 1: the older group (slab kt-1) is done */
  s->reading[c][1] = s->reading[c][0];
  s->reading[c][0] = kt;
  int done = gemm_pipe_release(kt);
  if (s->reading[c][1] != done && !(done < 0 && s->reading[c][1] < 0)) s->bad_read++;
  s->reading[c][1] = -1;
  if (done >= 0) mbar_arrive(&s->empty[gemm_pipe_stage(done, s->stages)]);
  s->cons_kt[c]++;
  return 1;
}

static uint64_t rng = 88172645463325252ull;
static unsigned rnd(unsigned n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng % n);
}

/* One run; returns 1 when every consumer got through every slab. */
static int run(int stages, int nk, sim *s) {
  memset(s, 0, sizeof *s);
  s->stages = stages;
  s->nk = nk;
  for (int i = 0; i < stages; i++) {
    mbar_init(&s->full[i], 1);
    mbar_init(&s->empty[i], CONS);
    s->content[i] = -1;
  }
  for (int i = 0; i < 2 * MAXS; i++) s->load_kt[i] = -1;
  memset(s->reading, 0xff, sizeof s->reading);
  for (;;) {
    int actors = 1 + 2 * MAXS + CONS, moved = 0;
    /* try actors from a random start until one moves */
    int first = (int)rnd((unsigned)actors);
    for (int i = 0; i < actors && !moved; i++) {
      int a = (first + i) % actors;
      if (a == 0) moved = step_producer(s);
      else if (a <= 2 * MAXS) moved = step_tma(s, a - 1);
      else moved = step_consumer(s, a - 1 - 2 * MAXS);
    }
    if (!moved) break;
  }
  for (int c = 0; c < CONS; c++)
    if (s->cons_kt[c] != nk) return 0;
  return 1;
}

int main(void) {
  static sim s;
  int runs = 0, stuck = 0, bad_read = 0, bad_write = 0;
  for (int stages = 2; stages <= 6; stages++)
    for (int nk = 1; nk <= MAXK; nk += (nk < 12 ? 1 : 7))
      for (int rep = 0; rep < 200; rep++) {
        runs++;
        stuck += !run(stages, nk, &s);
        bad_read += s.bad_read;
        bad_write += s.bad_write;
      }
  CHECK(runs > 1000);
  CHECK_INT(stuck, 0);
  CHECK_INT(bad_read, 0);
  CHECK_INT(bad_write, 0);
  CHECK_INT(failures_alias, 0);

  /* the simulation can fail: a producer that does not wait for the empty barrier overwrites a
   * stage under a consumer's wgmma, or hands it the wrong slab */
  broken = 1;
  int caught = 0;
  for (int rep = 0; rep < 50; rep++) {
    run(3, 20, &s);
    caught += s.bad_write + s.bad_read;
  }
  CHECK(caught > 0);
  return test_done();
}
