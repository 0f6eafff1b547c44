/* features.h — what the diagnosis knows of a configuration before it runs, as numbers a
 * surrogate can take as inputs (strategy_options.features).
 *
 * Everything here comes from compiling the configuration and from its manifest's cost
 * formulas, not from running it: the occupancy the registers, shared memory and block allow on
 * the GPU's architecture, the registers, the shared memory and the threads per block, how full
 * the last wave of blocks is, the local memory per thread (stack frame and spills), and the
 * configuration's roofline bound: the larger of its executed FLOPs over the compute path's
 * peak and its modelled DRAM bytes over the copy bandwidth (padding included, so a tile that
 * pads a skinny problem has a higher bound).  A replayed recording gives the compile facts of
 * every configuration that ran (ktfile.h); a template's candidates get them from ptxas and the
 * manifest.  Unknown values are NaN (a configuration that never compiled, a recording without a
 * cost formula); the search puts those in the middle of the feature's range.
 */
#ifndef ROOFTUNE_FEATURES_H
#define ROOFTUNE_FEATURES_H

#include "core/result.h"

/* The features, in the order of a row: X(id, what). */
#define FEATURE_TABLE(X)                                                              \
  X(OCCUPANCY, "occupancy the registers, shared memory and block allow, 0..1")        \
  X(REGISTERS, "log2 of the registers per thread")                                    \
  X(SMEM, "log2 of 1 + the shared memory per block, static and dynamic (bytes)")      \
  X(THREADS, "log2 of the threads per block")                                         \
  X(WAVES, "how full the blocks' waves keep the GPU: waves / ceil(waves), 0..1")      \
  X(LOCAL, "log2 of 1 + the local memory per thread: stack frame and spills (bytes)") \
  X(ROOF, "log of the roofline bound: max(executed FLOPs / peak, DRAM bytes / bandwidth)")

typedef enum {
#define FEATURE_ENUM(id, what) FEATURE_##id,
  FEATURE_TABLE(FEATURE_ENUM)
#undef FEATURE_ENUM
      FEATURE_COUNT
} feature_id;

typedef struct feature_input {
  const static_facts *facts; /* registers, smem, threads, stack and spills, and the occupancy
                                fields (occupancy_fill_facts); threads_per_block 0: unknown */
  int sm_count;              /* the GPU's SMs, for waves; 0: unknown */
  double executed_flops;     /* the arithmetic the kernel does, padding included; 0: unknown */
  double dram_bytes;         /* modelled DRAM bytes; 0: unknown */
  double peak_flops;         /* the compute path's peak FLOP/s; 0: unknown */
  double bw;                 /* the copy bandwidth, bytes/s; 0: unknown */
} feature_input;

/* One configuration's row: FEATURE_COUNT values, NaN where unknown. */
void features_fill(const feature_input *in, double out[FEATURE_COUNT]);
/* What feature f is, in words ("occupancy ..."). */
const char *feature_what(feature_id f);

#endif
