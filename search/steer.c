/* steer.c — the steered search: bayes' Gaussian process (bayes.c) told what the diagnosis knows.
 *
 *   - What compiling a configuration tells before it runs (its static facts: occupancy, registers,
 *     shared memory, threads, waves, local memory, its roofline bound; model/features.h),
 *     given as strategy_options.features, are inputs of the surrogate beside the parameters, so
 *     the model carries what one result says about every configuration that shares its facts
 *     (a register count past 64 that halves occupancy, a spill) instead of only about its
 *     neighbours.  They stay out of the initial design's distance.  Without a survey (a replay,
 *     a tune: a configuration's facts known once proposed) each fact, and the work each
 *     diagnosis counted, is predicted for the rest by its law (law_internal.h) and is an input
 *     while the law holds, weighted by the evidence (bayes.c, bo_laws).
 *   - Exploitation moves one parameter at a time: each exploit step takes the unseen neighbour of
 *     the best (of the next best once those are spent) with the lowest predicted mean among those
 *     that move the parameter whose turn it is, in turn over the parameters and the bred
 *     children; bayes takes the lowest mean over all neighbours, so one parameter with many
 *     values (pnpoly's block_size_x, 31) takes every exploit step while the one that matters
 *     waits.
 *   - The diagnosis' lever: when the best has one (told with its result), its first parameter
 *     that can move its way takes the exploit step, moved that way, for as long as lever moves
 *     beat their base at least as often as the other exploit moves do (each counted from one win
 *     and one loss); when they stop paying, the turns go on in order.  Where no role is declared
 *     (a kernel rooftune has never seen), the lever is learned from the results: the parameters
 *     whose position moves the signal of the best's limit (evidence.c).
 *   - Parameters of 3 or 4 values 0, 1, 2 (, 3) are modes (a method, a variant), one input per
 *     value, so the model does not take mode 1 to be between modes 0 and 2.
 * Recordings without counters, templates without a diagnosis: the first two still apply, the
 * lever and the facts do not (bench/bench_steer.c's "steer-blind" runs steer told nothing but
 * times, which separates the two).
 */
#include <stdlib.h>
#include <string.h>

#include "search/bayes_internal.h"
#include "search/evidence_internal.h"

typedef struct {
  int turn;             /* the slot (parameter, or np: children) whose turn is next */
  int lever_n, lever_w; /* lever moves told, and those that beat their base */
  int move_n, move_w;   /* the other exploit moves told, and their wins */
  long pending;         /* the last exploit pick, until told; -1 none */
  int pending_lever;    /* it was a lever move */
  int turns;            /* 1: exploitation one parameter at a time (steer_turns), 0: bayes' */
  double pending_base;  /* its base's time */
  evidence ev;          /* what each parameter moves, from the results (evidence.c) */
} steer_state;

/* The lever's way for parameter p in the best's lever ("BLOCK_N+,BLOCK_M-"): +1, -1, or 0 when
 * the lever does not name it; *at its position in the lever. */
static int steer_lever_dir(const strategy *st, const char *lever, int p, int *at) {
  const char *name = space_param_at(st->sp, p)->name;
  size_t len = strlen(name);
  int k = 0;
  for (const char *s = lever; *s; k++) {
    size_t item = strcspn(s, ",");
    if (item == len + 1 && strncmp(s, name, len) == 0 && (s[len] == '+' || s[len] == '-')) {
      *at = k;
      return s[len] == '+' ? 1 : -1;
    }
    s += item;
    if (*s == ',') s++;
  }
  return 0;
}

/* Lever moves keep the first turn while they win at least as often as the others. */
static int steer_lever_pays(const steer_state *ss) {
  return (ss->lever_w + 1.0) / (ss->lever_n + 2.0) >= (ss->move_w + 1.0) / (ss->move_n + 2.0);
}

enum { STEER_SLOTS = 65 }; /* parameters (at most 64) and the children */

static long steer_exploit(strategy *st, void *state, const bo_step *s) {
  steer_state *ss = state;
  int slots = st->np + 1;
  if (s->base < 0 || slots > STEER_SLOTS) return -1;
  const uint16_t *base = space_config(st->sp, (size_t)s->base);
  long pick[STEER_SLOTS], lpick[STEER_SLOTS];
  double lo[STEER_SLOTS], llo[STEER_SLOTS];
  int lat[STEER_SLOTS];
  for (int p = 0; p < slots; p++) pick[p] = lpick[p] = -1, lo[p] = llo[p] = 1e300, lat[p] = 1 << 20;
  const char *lv = strategy_best_lever(st, NULL);
  int lever = lv[0] && s->base == st->best && steer_lever_pays(ss);
  size_t n = s->nneigh;
  long mean_pick = -1;
  double mean_lo = 1e300;
  for (size_t c = 0; c < n; c++) {
    /* the candidates are in cand order here: rank[c].idx == c until bayes sorts them */
    size_t at = s->rank[c].idx;
    if (at >= n) continue;
    const uint16_t *x = space_config(st->sp, s->cand[at]);
    int moved = -1, ndiff = 0;
    for (int q = 0; q < st->np; q++)
      if (x[q] != base[q]) moved = q, ndiff++;
    int slot = ndiff == 1 && at < s->nmoves ? moved : st->np;
    double key = s->rank[c].key;
    if (key < mean_lo) mean_lo = key, mean_pick = (long)s->cand[at];
    if (key < lo[slot]) lo[slot] = key, pick[slot] = (long)s->cand[at];
    int k = 0, dir = lever && slot < st->np ? steer_lever_dir(st, lv, slot, &k) : 0;
    if (dir && (x[slot] > base[slot]) == (dir > 0) && key < llo[slot])
      llo[slot] = key, lpick[slot] = (long)s->cand[at], lat[slot] = k;
  }
  int chosen = -1;
  for (int p = 0; p < st->np; p++) /* the lever's first parameter that can move its way */
    if (lpick[p] >= 0 && (chosen < 0 || lat[p] < lat[chosen])) chosen = p;
  ss->pending_lever = chosen >= 0;
  if (chosen >= 0) {
    pick[chosen] = lpick[chosen];
  } else if (!ss->turns) { /* bayes' own pick: the lowest mean of all, the first of equals */
    if (mean_pick < 0) return -1;
    ss->pending = mean_pick;
    ss->pending_base = st->time[s->base];
    return mean_pick;
  } else {
    for (int k = 0; k < slots && chosen < 0; k++)
      if (pick[(ss->turn + k) % slots] >= 0) chosen = (ss->turn + k) % slots;
    if (chosen < 0) return -1;
    ss->turn = (chosen + 1) % slots;
  }
  ss->pending = pick[chosen];
  ss->pending_base = st->time[s->base];
  return pick[chosen];
}

static void steer_told(strategy *st, void *state, size_t idx, double t) {
  steer_state *ss = state;
  evidence_add(&ss->ev, st, idx);
  if (!st->lever[0]) evidence_lever(&ss->ev, st, st->learned, sizeof st->learned);
  if ((long)idx != ss->pending) return;
  int win = t < ss->pending_base;
  if (ss->pending_lever)
    ss->lever_n++, ss->lever_w += win;
  else
    ss->move_n++, ss->move_w += win;
  ss->pending = -1;
}

static rt_status steer_init(strategy *st, int turns, rt_error *err) {
  steer_state *ss = calloc(1, sizeof *ss);
  if (!ss) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  ss->pending = -1;
  ss->turns = turns;
  bo_setup setup = {1, 1, 1, {steer_exploit, steer_told, ss}};
  rt_status rc = bo_init(st, &setup, err);
  if (rc && !st->impl) free(ss); /* bo_free frees it otherwise */
  return rc;
}

static rt_status strategy_steer_init(strategy *st, rt_error *err) { return steer_init(st, 0, err); }

static rt_status strategy_steer_turns_init(strategy *st, rt_error *err) {
  return steer_init(st, 1, err);
}

/* The default (STRATEGY_DEFAULT): even with bayes or ahead on every set measured and ahead on the
 * counter recordings (bench/results/diagnosis.md, replayed: the KTT convolution 29 evaluations
 * against bayes' 42 at 30 seeds and 32.5 at 100; pnpoly's modes 43 against 66 at 100 seeds; the
 * same median as bayes on every other recording and on each of rooftune's ten template problems
 * on model:h200). */
const strategy_kind strategy_kind_steer = {"steer", STRATEGY_DEFAULT, strategy_steer_init,
                                           bo_next, bo_told,          bo_free};
const strategy_kind strategy_kind_steer_turns = {"steer_turns", 0,       strategy_steer_turns_init,
                                                 bo_next,       bo_told, bo_free};
