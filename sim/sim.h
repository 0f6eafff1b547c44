/* sim.h — the sim: a template's kernel run on the CPU.  One configuration's complete source
 * (the text NVRTC gets: manifest_config_source's prefix and template) is compiled with the host
 * C++ compiler as CUDA-dialect C++ (-DRT_SIM, __CUDACC__ and __CUDA_ARCH__ of the target; the
 * dialect is sim/sim_cuda.hpp, every rt_ptx.h wrapper's host twin sim/sim_ptx.hpp) into a
 * shared object kept in a cache folder under a key of its content, loaded with dlopen, and
 * run over a grid on host buffers: threads as fibers, blocks, clusters, shared memory per
 * block, warp and warpgroup rendezvous, asynchronous copies and products completing at the
 * latest legal moment with their destinations NaN until then, under one of four schedules.
 *
 * What a run proves: the kernel body, its index arithmetic and its synchronisation under the
 * twins' semantics.  What it does not: that each wrapper's PTX does what its twin does, the
 * memory model beyond latest-legal completion, or any time.
 *
 * Errors are statuses with a message: RT_ERR_COMPILE (the compiler's first error, the log in
 * the module's compile log), RT_ERR_LAUNCH (a fault the twins saw, a deadlock naming every
 * waiting thread and its source line, an out-of-bounds access of a sim_buffer), RT_ERR_UNSUPPORTED
 * (a mode of an instruction the twins do not emulate, named), RT_ERR_INVALID (the launch). */
#ifndef ROOFTUNE_SIM_H
#define ROOFTUNE_SIM_H

#include <stddef.h>

#include "sim/sim_abi.h"
#include "compile/compile.h"
#include "core/status.h"

typedef struct sim_module sim_module;

/* Where compiled shared objects are kept: $ROOFTUNE_CACHE_DIR/sim, else
 * $XDG_CACHE_HOME/rooftune/sim, else ~/.cache/rooftune/sim (the cubin cache's folder and
 * switch: ROOFTUNE_CACHE_DIR=off compiles into a temporary folder removed on free).  0 and ""
 * when off. */
int sim_cache_dir(char *buf, size_t size);

/* Compiles `source` (named `name` in messages) for opt->arch (its __CUDA_ARCH__) with opt's
 * include folders and entry (an extern "C" kernel name, required), unless the cache holds it,
 * and loads it.  cache_dir NULL: sim_cache_dir().  The key is SHA-256 over the source, the
 * arch, the entry, the compiler's identity and flags, and every header of the include folders
 * and of sim/. */
rt_status sim_compile(const char *source, const char *name, const compile_options *opt,
                      const char *cache_dir, sim_module **out, rt_error *err);
void sim_module_free(sim_module *m);
/* 1 when sim_compile found the shared object in the cache. */
int sim_module_cached(const sim_module *m);
/* Seconds the host compile took (0 for a cache hit). */
double sim_module_compile_seconds(const sim_module *m);
/* The shared object's path. */
const char *sim_module_path(const sim_module *m);

/* One launch: sizes as cuLaunchKernel's, params as its kernelParams. */
typedef struct sim_launch {
  unsigned grid[3], block[3];
  unsigned cluster[3];     /* the kernel's __cluster_dims__, which the sim cannot read from the
                            * compiled code (gemm_wgmma's is (CLUSTER,1,1)); {0,0,0}: none */
  size_t shared_bytes;     /* dynamic shared memory per block */
  void **params;           /* one pointer per kernel parameter */
  sim_schedule schedule;   /* SIM_SCHED_ROUND_ROBIN by default (0) */
  unsigned long long seed; /* SIM_SCHED_RANDOM's */
  long long first_block;   /* run the clusters from this block on ... */
  long long max_blocks;    /* ... at most this many blocks (0: all) */
} sim_launch;

/* Runs the grid.  RT_OK, or the status above with the message in err (the seed and schedule
 * named, so a run can be repeated).  *blocks_run (may be NULL) gets the blocks completed. */
rt_status sim_run(sim_module *m, const sim_launch *l, long long *blocks_run, rt_error *err);

/* The schedule named `name` ("round-robin", "random", "producer-first", "consumer-first"). */
int sim_schedule_from_name(const char *name, sim_schedule *out);
const char *sim_schedule_name(sim_schedule s);

/* Host memory with red zones: `bytes` usable, the end against an inaccessible page (a read or
 * write past it is an out-of-bounds fault that sim_run reports with the buffer's name and
 * offset) and the start after one; the few bytes of slack before the end page (the size rounded
 * up to 16) hold a pattern that sim_run checks after the grid.  NULL when out of memory. */
void *sim_buffer_alloc(size_t bytes, const char *name);
void sim_buffer_free(void *p);

/* The CUtensorMap (128 bytes at map) cuTensorMapEncodeTiled would make, for the sim's TMA
 * twins: the same arguments in the same order (the CU_TENSOR_MAP_* enum values as ints).
 * RT_ERR_INVALID naming the argument when the driver would refuse it. */
rt_status sim_tensor_map_encode(void *map, int data_type, unsigned rank, void *base,
                                const unsigned long long *dims, const unsigned long long *strides,
                                const unsigned *box, const unsigned *elem_strides, int interleave,
                                int swizzle, int l2_promotion, int oob_fill, rt_error *err);

#endif
