/* sim_driver.h — the CUDA driver API served by the sim (sim/sim.h), for the sim device.
 *
 * The families' GPU code (kernels/NAME.c: inputs, references, launches, checks) calls the driver
 * through the table `cu` (driver/cuda_driver.h).  sim_driver_install() puts a table there
 * whose functions run on the host: cuMemAlloc is sim_buffer_alloc (red zones: a read or write
 * past a buffer is named by the launch that made it), copies and memsets are memcpy and loops,
 * streams and events are synchronous no-ops, cuTensorMapEncodeTiled is sim_tensor_map_encode,
 * cuModuleLoadData takes a sim image (below) and cuModuleGetFunction compiles it with
 * sim_compile (cached by content), cuLaunchKernel is sim_run.  A failed launch returns
 * CUDA_ERROR_LAUNCH_FAILED (an out-of-bounds access CUDA_ERROR_ILLEGAL_ADDRESS) and
 * cuGetErrorString gives the sim's message for it, so a family's cuda_check names what the sim
 * saw.  No vendor library stands behind the table (cu.sim is set): a family computes its
 * reference on the host.
 *
 * A sim image is what cuModuleLoadData gets instead of a cubin: text, "#rooftune-sim-image 1",
 * then "arch ARCH", "name NAME", "cluster X Y Z" and "include DIR" lines, an empty line, then
 * the configuration's complete source (the text NVRTC compiles). */
#ifndef ROOFTUNE_SIM_DRIVER_H
#define ROOFTUNE_SIM_DRIVER_H

#include <stddef.h>

#include "compile/compile.h"
#include "core/status.h"

/* The GPU the table answers for (cuDeviceGetAttribute, cuDeviceGetName). */
typedef struct sim_driver_gpu {
  char name[64]; /* "sim:h200" */
  int cc_major, cc_minor;
  int sm_count;
  int l2_bytes;
  int smem_per_block_optin; /* bytes */
  int smem_per_sm;
  int regs_per_sm;
  int max_threads_per_sm;
  int max_blocks_per_sm;
} sim_driver_gpu;

/* Installs the sim's table as the driver (cuda_driver_use) for GPU g. */
void sim_driver_install(const sim_driver_gpu *g);

/* A sim image of SOURCE (named NAME in messages) for opt's arch and include folders, into a
 * malloc'd NUL-terminated text (*out, *size with the NUL).  The cluster shape is the one the
 * source's __cluster_dims__(CLUSTER, 1, 1) gives with its "#define CLUSTER N" (the sim's dialect
 * drops the attribute, so the image carries it). */
rt_status sim_image_make(const char *source, const char *name, const compile_options *opt,
                         char **out, size_t *size, rt_error *err);

/* Blocks the sim ran in its launches since install, and launches made. */
void sim_driver_stats(long long *launches, long long *blocks);

#endif
