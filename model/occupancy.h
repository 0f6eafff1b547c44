/* occupancy.h — how many blocks of a kernel fit on one SM, and what stops more from fitting.
 *
 * The calculation is the one of NVIDIA's CUDA Occupancy Calculator (the spreadsheet shipped with
 * the toolkit, and cudaOccupancyMaxActiveBlocksPerMultiprocessor in cuda_occupancy.h) with the
 * limits of the CUDA C++ Programming Guide, "Compute Capabilities", technical specifications
 * table, as kept in gpu_spec.h's arch_spec.  Four limits, each a number of resident blocks:
 *
 *   registers  a warp is given ceil(regs_per_thread * 32 / reg_alloc_unit) * reg_alloc_unit
 *              registers (unit 256 on sm_80..sm_90, so a per-thread count is in effect rounded
 *              up to a multiple of 8); warps_by_regs = floor(regs_per_sm / regs_per_warp);
 *              blocks = floor(warps_by_regs / warps_per_block).  More than max_regs_per_thread
 *              (255) cannot launch.
 *   smem       a block takes ceil((static + dynamic) / smem_alloc_unit) * smem_alloc_unit bytes
 *              (unit 128) plus smem_reserved_per_block (1 KiB the system keeps per block from
 *              sm_80 on); blocks = floor(smem_per_sm / that), with smem_per_sm the largest
 *              carveout (the driver picks a carveout that fits; we assume it may pick the
 *              largest).  More than smem_per_block_optin per block cannot launch.
 *   threads    warps_per_block = ceil(threads / 32); blocks = floor(max_warps_per_sm /
 *              warps_per_block).  More than max_threads_per_block cannot launch.
 *   blocks     max_blocks_per_sm.
 *
 * Resident blocks are the smallest of the four, and the limiter is the one that reaches it; on a
 * tie the fixed limits win (threads, then blocks, then registers, then smem), because when the
 * warp slots or the block slots are full, shrinking registers or shared memory cannot add a
 * block.  A kernel that cannot launch names the resource that forbids it.  Active warps = blocks * warps_per_block, and
 * occupancy = active warps / max_warps_per_sm.  Worked examples are in tests/unit/test_occupancy.c.
 */
#ifndef ROOFTUNE_OCCUPANCY_H
#define ROOFTUNE_OCCUPANCY_H

#include "model/gpu_spec.h"
#include "core/result.h"
#include "core/status.h"

typedef struct occupancy_input {
  int threads_per_block;    /* block size (x*y*z) */
  int registers_per_thread; /* from the ptxas report; 0 counts as no register limit */
  int smem_static;          /* bytes of __shared__ in the kernel (ptxas "smem") */
  int smem_dynamic;         /* bytes asked for at launch */
} occupancy_input;

typedef struct occupancy {
  int blocks_per_sm;   /* resident blocks: the smallest of the four limits */
  int active_warps;    /* blocks_per_sm * warps_per_block */
  double fraction;     /* active_warps / max_warps_per_sm, 0..1 */
  const char *limiter; /* "registers", "smem", "threads" or "blocks" (static strings) */
  int warps_per_block; /* ceil(threads / 32) */
  int regs_per_warp;   /* registers allocated to one warp after rounding */
  int smem_per_block;  /* bytes allocated to one block, reserve included */
  int by_registers;    /* blocks the register file allows (regs_per_sm when registers are 0) */
  int by_smem;         /* blocks shared memory allows */
  int by_threads;      /* blocks the warp slots allow */
  int by_blocks;       /* the per-SM block limit */
} occupancy;

/* Fills out for kernel facts `in` on architecture `arch`.  A kernel that cannot launch at all
 * (too many registers, threads or bytes of shared memory per block) gets blocks_per_sm 0 and the
 * limiter that forbids it, with RT_OK: that is a fact about the candidate, not an error.
 * RT_ERR_INVALID only for nonsense input (threads <= 0, negative counts). */
rt_status occupancy_compute(const arch_spec *arch, const occupancy_input *in, occupancy *out,
                            rt_error *err);

/* Convenience for the engine: reads threads_per_block, registers, smem_static and smem_dynamic
 * from facts and writes blocks_per_sm, occupancy and limiter back. */
rt_status occupancy_fill_facts(const arch_spec *arch, static_facts *facts, rt_error *err);

#endif
