/* evidence_internal.h — parameters' roles learned from the evaluations, for the steered search
 * (steer.c).  Not for use outside search/.
 *
 * A role is what a parameter moves: the achieved fraction of the compute roof, the arithmetic
 * intensity (DRAM bytes per FLOP: reuse), the last wave's idle share, the occupancy the
 * resources allow, local memory (spills).  Each told result adds its configuration's parameter
 * positions and those signals (from its diagnosis and its compile facts, where it has them) to
 * running sums, so a parameter's role is the correlation of its domain position with each signal
 * over the results so far; no name is read.  The best's limit (its diagnosis: compute, memory,
 * waves, occupancy, spills) says which signal to move and which way, and the lever is the
 * parameters whose position moves that signal most clearly, each the way that helps, as a
 * declared lever reads ("TILE_SIZE_X+,READ_ONLY-").  Declared roles come first: steer follows a
 * learned lever only where the diagnosis named none (strategy_best_lever).
 */
#ifndef ROOFTUNE_EVIDENCE_INTERNAL_H
#define ROOFTUNE_EVIDENCE_INTERNAL_H

#include "search/strategy_internal.h"

/* The signals: X(id, what). */
#define EVIDENCE_SIGNALS(X)                                                  \
  X(FLOPS, "the achieved fraction of the compute roof (diagnosis)")          \
  X(INTENSITY, "log of FLOPs per DRAM byte: reuse (diagnosis)")              \
  X(TAIL, "the idle share of the last wave (diagnosis)")                     \
  X(OCCUPANCY, "the occupancy the registers, shared memory and block allow") \
  X(LOCAL, "local memory per thread, log2: spills (compile facts)")

typedef enum {
#define EVIDENCE_ENUM(id, what) EV_##id,
  EVIDENCE_SIGNALS(EVIDENCE_ENUM)
#undef EVIDENCE_ENUM
      EV_COUNT
} evidence_signal;

enum { EVIDENCE_PARAMS = 64, EVIDENCE_LEVER_ITEMS = 2, EVIDENCE_MIN_RESULTS = 8 };
#define EVIDENCE_MIN_CORR 0.3

typedef struct evidence {
  double n[EVIDENCE_PARAMS][EV_COUNT]; /* results with the signal, per parameter and signal */
  double sx[EVIDENCE_PARAMS][EV_COUNT], sy[EVIDENCE_PARAMS][EV_COUNT];
  double sxx[EVIDENCE_PARAMS][EV_COUNT], syy[EVIDENCE_PARAMS][EV_COUNT];
  double sxy[EVIDENCE_PARAMS][EV_COUNT];
  char best_limit[24]; /* the best's diagnosis' limit, "" none */
} evidence;

/* Adds result idx (told now: st->told its diagnosis, NULL none; st->feat its compile facts). */
void evidence_add(evidence *ev, const strategy *st, size_t idx);
/* The lever learned for the best's limit into out ("" when no parameter moves its signal
 * clearly enough, or the best had no diagnosis). */
void evidence_lever(const evidence *ev, const strategy *st, char *out, size_t size);

#endif
