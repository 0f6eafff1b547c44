/* diagnose.h — why a candidate is as fast as it is: one dominant limit, its lever, a sentence.
 *
 * Pure arithmetic over what a device and the compiler already know: the FLOPs and modeled
 * DRAM bytes of the problem, the time (measured, predicted or replayed), the static facts
 * (registers, spills, occupancy and its limiter, grid blocks, resident blocks per SM), the
 * compute path the template uses (SIMT fp32, tf32 or f16/bf16 tensor cores; mma.sync or wgmma
 * on sm_90) and the ceilings (the spec table, or a device's measured copy bandwidth and matmul
 * rate).  The memory roof is DRAM, and L2 when the blocks' loads through it (every re-read
 * of an input tile) come near its bandwidth.  Out come the achieved FLOP/s and bytes/s with their fractions of the ceilings, the
 * arithmetic intensity against the ridge point, waves and the tail, and ONE dominant limit from
 * the design table (memory, compute, occupancy/latency, waves/tail, spills, launch overhead),
 * and "xu" where measured counters show the special-function pipe busier than any roof.
 * Compute counts the math the kernel does: a 128-row tile over a 1-row problem keeps the
 * tensor cores busy on padding, which the diagnosis says, with smaller tiles as the lever.
 *
 * The lever is machine-readable for search's `lever` strategy: a comma-separated list of the
 * template's parameters, each followed by '+' (raise it) or '-' (lower it), most promising
 * first: "BLOCK_N+,BLOCK_M+".  Parameters are named by their role (tile sizes, split-K,
 * stages, warps, vector width, unrolling), so one rule serves every template; roles come from
 * the manifest or are guessed from common parameter names.  An empty lever means no template
 * parameter helps (launch overhead; compute-bound at the roof), or none can move further.
 */
#ifndef ROOFTUNE_DIAGNOSE_H
#define ROOFTUNE_DIAGNOSE_H

#include "model/gpu_spec.h"
#include "model/roofline.h"
#include "core/result.h"
#include "template/space.h"
#include "core/status.h"
#include "core/vars.h"
#include "template/roles.h"

typedef struct diag_input {
  double flops;                /* FLOPs of the problem */
  double executed_flops;       /* FLOPs the kernel does, the padded parts of partial tiles
                               included (cost.executed_flops); 0: flops */
  double dram_bytes;           /* modeled DRAM bytes of this configuration (after L2 reuse) */
  double l2_bytes;             /* bytes the blocks load through L2 (the cost formula's count, every
                               re-read included); 0: unknown */
  double min_bytes;            /* the problem's compulsory bytes (inputs once, output once); 0:
                               unknown.  Near l2_bytes, larger tiles have nothing to re-read
                               less and are not proposed for a memory-bound kernel */
  double time_s;               /* the candidate's time */
  static_facts facts;          /* registers, spills, occupancy, limiter, grid blocks */
  compute_path path;           /* the instruction path the template uses */
  int wgmma;                   /* 1 when a PATH_TC_F16 template uses wgmma (sm_90a) */
  const param_roles *roles;    /* parameter roles of the template; NULL: no template lever */
  const rt_vars *config;       /* the configuration's values (orders tile levers); may be NULL */
  const space *domains;        /* the template's space; may be NULL.  With it (and config) a lever
                               names a parameter only when moving it that way (the next value,
                               and the next, every other value kept) reaches a configuration
                               that satisfies every constraint (space_move), and diagnosis.move
                               says which: never BLOCK_K+ when 64 is the only BLOCK_K, BLOCK_M+
                               at the largest BLOCK_M, or BLOCK_N+ where every larger BLOCK_N
                               breaks a shared-memory or warp-count constraint */
  const hw_counters *measured; /* the candidate's hardware counters, or NULL: with them the
                               roofline position comes from the measured DRAM bytes (read +
                               written) and L2 bytes, occupancy from the measured active warps,
                               and the sentence names the top warp-stall reason; diagnosis.basis
                               lists the facts that were measured */
  int (*tried)(void *ctx, size_t idx);       /* 1: configuration idx of domains is measured already
                               (this run, or told from the database); NULL: none known.  A
                               lever's move then skips to the next untried valid value that
                               way, and a parameter whose every move that way is measured is
                               left out: the sentence says the neighbourhood is exhausted */
  double (*bytes_at)(void *ctx, size_t idx); /* the cost formula's bytes of configuration idx
                               (as l2_bytes); NULL: unknown.  With it a tile is named as a
                               memory-bound kernel's lever only when its move loads fewer bytes
                               (a row softmax's threads per row re-read nothing less) */
  void *ctx;                                 /* for tried and bytes_at */
  double fused_bytes; /* DRAM bytes the problem's fused epilogue saves against running it
                               as a separate pass (the intermediate written and read again); 0:
                               none.  The sentence then says so, with the time at the copy
                               bandwidth */
} diag_input;

/* Fills out (limit, lever, sentence, fractions, intensity, ridge, waves, tail).
 * RT_ERR_INVALID when the time or the ceilings are not positive. */
rt_status diagnose(const diag_input *in, const roofline_ceilings *ceil, diagnosis *out,
                   rt_error *err);

/* What the waves of d leave idle, in words: "12 % of the last wave" (a tail under one wave), or
 * "51 % of the GPU throughout" when the rounds are smaller than the GPU (a persistent grid of
 * fewer blocks than it holds: the tail is more than a wave, and a share of the last wave
 * would be over 100 %).  buf is returned. */
const char *diag_idle_words(const diagnosis *d, char *buf, size_t size);

/* Thresholds (fractions of a ceiling) the rules use, exposed for tests and docs. */
#define DIAG_NEAR_ROOF     0.60 /* at or above: bound by that roof */
#define DIAG_AT_ROOF       0.85 /* compute-bound at or above: stop, nothing left to gain */
#define DIAG_LOW           0.50 /* both under: occupancy / latency */
#define DIAG_PAD_FACTOR    1.5  /* executed / problem FLOPs at or above: padding can dominate */
#define DIAG_WAVE_EFF      0.75 /* waves / ceil(waves) under this: waves / tail */
#define DIAG_LAUNCH_FACTOR 3.0  /* time under this many launch overheads: launch-bound */

#endif
