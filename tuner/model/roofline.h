/* roofline.h — the arithmetic the model device and the diagnosis share: the roofs a device
 * offers (copy bandwidth, the FLOP/s of each compute path, launch overhead), the DRAM bytes a
 * tiled kernel moves once L2 reuse is counted, wave quantization, and the compute path a dtype
 * takes.  Pure functions over numbers; the model device predicts times with them and the
 * diagnosis places measured (or predicted) times against the same roofs, so the two never
 * disagree about what a roof is.
 */
#ifndef ROOFTUNE_ROOFLINE_H
#define ROOFTUNE_ROOFLINE_H

#include "tuner/core/result.h"
#include "tuner/model/gpu_spec.h"

#define ROOFLINE_L2_BW_FACTOR 2.5 /* L2 bandwidth / DRAM copy bandwidth assumed without a
                                     measurement (Hopper and Ampere L2 reads reach ~2-3x HBM) */

/* The roofs a candidate is held against. */
typedef struct roofline_ceilings {
  double bw;                   /* DRAM bytes/s (copy bandwidth: bytes read + written) */
  double flops[PATH_COUNT];    /* FLOP/s per compute path (wgmma rate for PATH_TC_F16) */
  double mma_sync_fraction;    /* share of the f16 tensor rate mma.sync reaches; 1 off sm_90 */
  double launch_overhead_s;    /* a launch's fixed cost */
  int sm_count;                /* multiprocessors */
  double l2_bw;                /* L2 bytes/s (an estimate, ROOFLINE_L2_BW_FACTOR x bw); 0: unknown */
  int measured;                /* 1: bw/flops measured on this device; 0: the spec table */
  char gpu[64];                /* what they describe: "NVIDIA H200 (spec)" */
} roofline_ceilings;

/* The spec table's ceilings for GPU (measured = 0). */
void roofline_from_spec(const gpu_spec *gpu, roofline_ceilings *out);

/* The DRAM bytes a tiled kernel moves once L2 is counted: the compulsory bytes (min_bytes:
 * inputs read once, output written once) plus the re-reads the cost formula counts (bytes -
 * min_bytes) divided by sqrt(concurrent), the number of blocks resident at once: they form a
 * patch of about sqrt(n) x sqrt(n) output tiles whose shared input panels come from L2.  bytes
 * when min_bytes is 0 or larger. */
double roofline_dram_bytes(double bytes, double min_bytes, double concurrent);

/* The DRAM bytes one candidate moves, for the model device and the diagnosis alike: the cost
 * formula's bytes (every load, re-reads included) less what L2 serves (roofline_dram_bytes over
 * the blocks of facts resident at once on sm_count SMs), times calibration (> 0: measured over
 * modelled DRAM bytes of its template on this GPU; 0: none), plus scratch_bytes (split partials,
 * written and read back whole).  What passes through L2 is bytes + scratch_bytes. */
double roofline_candidate_dram(double bytes, double scratch_bytes, double min_bytes, double calibration,
                               int sm_count, const static_facts *facts);

/* Wave quantization.  `capacity` blocks fit on the GPU at once; a launch of `grid` blocks does
 * `work` blocks' worth of work (work == grid, or more for a persistent grid whose blocks loop).
 * *waves = work / capacity, the GPU-fulls of work; *full = the GPU-fulls of time it takes: the
 * rounds of min(grid, capacity) resident blocks, each costing as much as a full GPU's round
 * (idle slots included).  waves / full is the fraction of the GPU kept busy.  Both 0 when the
 * grid or capacity is unknown (<= 0). */
void roofline_waves(long long grid, long long work, double capacity, double *waves, double *full);

/* The compute path a dtype's tensor-core template uses: "f32" → PATH_SIMT_F32 unless
 * tensor_cores (then PATH_TC_TF32), "tf32" → PATH_TC_TF32, "f16"/"bf16" → PATH_TC_F16,
 * "e4m3"/"e5m2" → PATH_TC_F8. */
compute_path roofline_path_for_dtype(const char *dtype, int tensor_cores);

/* The blocks resident at once: SMs x resident blocks per SM, at most the grid (when known). */
double roofline_concurrent(int sm_count, int blocks_per_sm, long long grid_blocks);

#endif
