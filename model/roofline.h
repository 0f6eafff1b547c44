/* roofline.h — the arithmetic the model device and the diagnosis share: the roofs a device
 * offers (copy bandwidth, the FLOP/s of each compute path, launch overhead), the DRAM bytes a
 * tiled kernel moves once L2 reuse is counted, wave quantization, and the compute path a dtype
 * takes.  Pure functions over numbers; the model device predicts times with them and the
 * diagnosis places measured (or predicted) times against the same roofs, so the two never
 * disagree about what a roof is.
 */
#ifndef ROOFTUNE_ROOFLINE_H
#define ROOFTUNE_ROOFLINE_H

#include "core/result.h"
#include "model/gpu_spec.h"

#define ROOFLINE_L2_BW_FACTOR \
  2.5 /* L2 bandwidth / DRAM copy bandwidth assumed without a
                                     measurement (Hopper and Ampere L2 reads reach ~2-3x HBM) */

/* The roofs a candidate is held against. */
typedef struct roofline_ceilings {
  double bw;                /* DRAM bytes/s (copy bandwidth: bytes read + written) */
  double flops[PATH_COUNT]; /* FLOP/s per compute path (wgmma rate for PATH_TC_F16) */
  double mma_sync_fraction; /* share of the f16 tensor rate mma.sync reaches; 1 off sm_90 */
  double launch_overhead_s; /* a launch's fixed cost */
  int sm_count;             /* multiprocessors */
  double l2_bw;             /* L2 bytes/s (an estimate, ROOFLINE_L2_BW_FACTOR x bw); 0: unknown */
  int measured;             /* 1: bw/flops measured on this device; 0: the spec table */
  char gpu[64];             /* what they describe: "NVIDIA H200 (spec)" */
} roofline_ceilings;

/* The spec table's ceilings for GPU (measured = 0). */
void roofline_from_spec(const gpu_spec *gpu, roofline_ceilings *out);

/* What c->bw is, in words, for a label: "measured here" (a copy on this device), "measured on
 * an NVIDIA H200" (the spec table's copy bandwidth, measured on one GPU of the kind) or "90 %
 * of the datasheet" (estimated); gpu: the spec table's entry (NULL: unknown).  buf is returned. */
const char *roofline_bw_basis(const roofline_ceilings *c, const gpu_spec *gpu, char *buf,
                              size_t size);
/* The roofs a run holds candidates against, in one line: the DRAM copy bandwidth with its basis,
 * where the FLOP/s come from, and the datasheet bandwidth the roof bounds use. */
void roofline_describe(const roofline_ceilings *c, const gpu_spec *gpu, char *buf, size_t size);

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
double roofline_candidate_dram(double bytes, double scratch_bytes, double min_bytes,
                               double calibration, int sm_count, const static_facts *facts);

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

/* The FLOP/s ceiling of a compute path: c->flops[path], times c->mma_sync_fraction for f16/bf16
 * tensor cores through mma.sync rather than wgmma (wgmma 0); 0 when the device has none. */
double roofline_path_peak(const roofline_ceilings *c, compute_path path, int wgmma);

/* ---- spending the budget where it can pay ----
 * A template's best possible time on a problem: its roofline bound, the larger of the fewest
 * FLOPs any of its configurations executes (cost.executed_flops: the padding of its smallest
 * fitting tiles included) over its precision path's peak and the problem's compulsory bytes
 * (inputs read once, output written once) over the copy bandwidth, plus one launch.  The compute
 * peak is the share of the SMs the largest grid any configuration launches can occupy (a block
 * runs on one SM: 32 blocks on 132 SMs reach 32/132 of the peak), which is what bounds a prefill
 * template on a one-row decode problem; the bandwidth is not scaled so (one SM can draw more than
 * its share of DRAM bandwidth, by an amount the spec table does not hold).  No configuration of
 * the template can run faster on these ceilings, so the bound is safe to prune with: a template
 * whose bound cannot come within `slack` of the incumbent cannot win.  With spec-sheet ceilings
 * the bound is optimistic (kernels reach ~85 % of a datasheet peak); with measured ceilings it is
 * the achievable roof. */
typedef struct template_roof {
  double seconds;   /* the bound: max(compute_s, memory_s) + launch_s */
  double compute_s; /* fewest executed FLOPs / the path's peak on the SMs the grid can fill */
  double memory_s;  /* compulsory bytes / copy bandwidth */
  double launch_s;  /* one launch's fixed cost */
  int memory_bound; /* 1 when memory_s >= compute_s */
} template_roof;

/* The bound for a template that executes at least min_executed_flops (> 0, or 0 for a pure
 * data-movement kernel), moves at least min_bytes (>= 0) and launches at most max_blocks blocks
 * (0: unknown, the whole GPU), on path/wgmma of ceilings c.  RT_ERR_INVALID when both counts are
 * 0, a count is negative or not finite, or the device has no ceiling for what the template needs
 * (the path's peak for FLOPs, bandwidth for bytes). */
rt_status roofline_template_roof(double min_executed_flops, double min_bytes, long long max_blocks,
                                 compute_path path, int wgmma, const roofline_ceilings *c,
                                 template_roof *out, rt_error *err);

/* The ceilings a bound that must hold on the GPU is computed on (the across-template rule rules
 * templates out by it): for each roof the higher of the run's (measured, or the spec table's
 * achievable copy bandwidth) and gpu's datasheet figure (dram_bw_spec, peak_flops), and no launch
 * cost (an event-timed kernel may take less than the spec's launch overhead).  A measured copy
 * bandwidth is not an upper bound (a kernel that only reads can beat a copy), nor is a measured
 * matmul rate (a tuned kernel can beat the library's), so neither bounds alone.  Returns 0 (out
 * zeroed) without a datasheet (gpu NULL): then no bound is safe to rule out by. */
int roofline_bound_ceilings(const roofline_ceilings *run, const gpu_spec *gpu,
                            roofline_ceilings *out);

/* Across templates: 1 when a template with bound `roof` can still come within `slack` (0.05:
 * five per cent) of the incumbent's time, i.e. roof->seconds <= incumbent_s * (1 + slack); 1
 * without an incumbent (incumbent_s not > 0).  0: the template gets no more evaluations. */
int roofline_can_win(const template_roof *roof, double incumbent_s, double slack);

/* The share of a roof at which a template's search stops: ROOFLINE_STOP_MEASURED of measured
 * ceilings, ROOFLINE_STOP_SPEC of spec-sheet ones (the diagnosis' "at the roof", DIAG_AT_ROOF). */
#define ROOFLINE_STOP_MEASURED 0.95
#define ROOFLINE_STOP_SPEC     0.85
double roofline_stop_fraction(const roofline_ceilings *c);

/* Within a template: 1 when its best time reaches `fraction` of its bound (roof->seconds /
 * best_s >= fraction): a further evaluation can gain at most 1/fraction - 1.  0 without a best. */
int roofline_at_roof(const template_roof *roof, double best_s, double fraction);

#endif
