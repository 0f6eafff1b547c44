/* replay_compile.h — a recorded kernel compiled again, so a replay has the static facts a live
 * tune has: registers, shared memory, spills, occupancy and its limiter, the launch, and the cost
 * formulas' FLOPs and bytes.
 *
 * The recording (ktfile.h) holds times and, for KTT, counters; its kernel's source is the user's
 * (third-party code rooftune does not ship).  A manifest (manifest.h) describes it: its
 * parameters are the recording's, by name (every recorded value must be in their lists; derived
 * values may rename them for the source, e.g. "block_size_x": "BLOCK_SIZE_X"), its "source" is the
 * file the user puts beside the manifest, its "archs" the recorded GPU's (sm_75 for a Turing
 * card), with launch geometry, roles and cost formulas over the parameters, dtype and device facts
 * (a recording has no problem: its sizes are its parameters).  The "family" field names the run.
 * Each recorded configuration is found in the manifest's space by its values, given the
 * manifest's #define prefix and compiled by NVRTC for the arch (in the compile pool, through the
 * cubin cache: a second replay compiles nothing), and its ptxas report and launch become its
 * static facts on the recorded GPU, with its occupancy; the compiled register counts are compared
 * with those the recording reports (KTT's CompilationData), which says whether the source and
 * manifest are the ones the recording was made with.
 */
#ifndef ROOFTUNE_REPLAY_COMPILE_H
#define ROOFTUNE_REPLAY_COMPILE_H

#include <stddef.h>

#include "core/result.h"
#include "core/status.h"
#include "model/gpu_spec.h"
#include "template/ktfile.h"
#include "template/roles.h"

typedef struct replay_facts {
  size_t n;               /* the recording's configurations */
  static_facts *facts;    /* per configuration: compiled facts with occupancy on the GPU;
                              threads_per_block 0 where not compiled */
  double *flops;          /* per configuration: cost.flops; 0 where unknown */
  double *executed_flops; /* cost.executed_flops (else flops) */
  double *dram_bytes;     /* cost.dram_bytes */
  param_roles roles;      /* the manifest's roles (or guessed from its parameter names) */
  char arch[16];          /* what was compiled for */
  size_t mapped;          /* recorded configurations the manifest's space holds */
  size_t compiled;        /* of those, compiled (cache hits included) */
  size_t failed;          /* compile errors and crashes */
  size_t cache_hits;      /* compiles served from the cubin cache */
  size_t compared;        /* compiled configurations the recording gives registers for */
  size_t agree;           /* of those, with the same register count */
} replay_facts;

/* Compiles kf's configurations from the manifest at manifest_path for gpu's architecture (the
 * manifest must list it), with `jobs` compile processes (0: one per core).  Errors (RT_ERR_*)
 * name the manifest or the recording: a parameter of one the other lacks, a recorded value
 * outside the manifest's list, an architecture the manifest does not list, a source that cannot
 * be read ("put the kernel's source at PATH").  A configuration that fails to compile is a count,
 * not an error. */
rt_status replay_compile(const ktfile *kf, const char *manifest_path, const gpu_spec *gpu, int jobs,
                         replay_facts *out, rt_error *err);
void replay_facts_free(replay_facts *f);

#endif
