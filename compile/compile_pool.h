/* compile_pool.h — many compiles at once, each isolated in a worker process, through the cache.
 *
 * compile_pool_run compiles a list of source texts with one set of options.  Cached results are
 * taken first (cubin_cache.h); the rest go to N worker processes forked from the caller (default:
 * one per online core).  A worker compiles job after job, so NVRTC's in-process PCH heap pays
 * from its second compile on; it gets job numbers over a pipe and sends each whole
 * compile_result back over another.  A worker that dies (a crash inside NVRTC, abort, the OOM
 * killer) costs only the job it held: that job's result is RT_ERR_CRASH with the signal in its
 * message, and a fresh worker takes over.  A job that runs past timeout_s has its worker killed
 * and gets RT_ERR_TIMEOUT.  Results land in results[i] for jobs[i] whatever the finishing order,
 * so output is deterministic.  With opt->pch, NVRTC's PCH files go into a folder the run makes
 * under $TMPDIR (else /tmp), a subfolder per worker, and the run removes it when its workers are
 * gone (workers leave with _exit or are killed, which would leave NVRTC's own folder behind:
 * 7 MB per worker and run for gemm_mma); opt->pch_dir is ignored.  New results (compiled or
 * compile error) are stored in the cache by the calling process only; workers never touch
 * SQLite.
 *
 * The caller must be single-threaded while the pool runs (it forks).  SIGPIPE is ignored for the
 * duration and restored after.
 */
#ifndef ROOFTUNE_COMPILE_POOL_H
#define ROOFTUNE_COMPILE_POOL_H

#include <stddef.h>

#include "compile/compile.h"
#include "compile/cubin_cache.h"
#include "core/status.h"

typedef struct compile_job {
  const char *source; /* the complete text: #define prefix, #line 1, template source */
  const char *name;   /* the file name NVRTC's messages use ("gemm_mma.cu") */
} compile_job;

typedef struct compile_pool_options {
  int workers;        /* worker processes; 0: one per online core; at most 256 */
  double timeout_s;   /* limit for one compile; 0: none */
  cubin_cache *cache; /* NULL: compile everything */
  /* Tests only: runs inside the worker just before job `index` compiles (a test makes it
   * abort() or sleep to prove a crash or a hang costs only that job).  NULL in real use. */
  void (*child_hook)(size_t index);
  /* Called in the caller's process as each result arrives (cache hits first); may be NULL. */
  void (*progress)(void *ctx, size_t index, const compile_result *r);
  void *progress_ctx; /* handed to progress */
} compile_pool_options;

typedef struct compile_pool_stats {
  size_t jobs;            /* jobs given */
  size_t compiled;        /* status RT_OK (cache hits included) */
  size_t compile_errors;  /* status RT_ERR_COMPILE (cache hits included) */
  size_t failed;          /* crashes, timeouts, NVRTC failures */
  size_t cache_hits;      /* results taken from the cache */
  int workers;            /* worker processes started at first (0 when all were hits) */
  double seconds;         /* wall time of the whole run */
  double compile_seconds; /* sum of the compile times of the jobs that ran */
} compile_pool_stats;

/* Compiles jobs[0..n) into results[0..n) (the caller frees each with compile_result_free).
 * Returns RT_OK when every job has a result, whatever its status; an error only when the run
 * could not happen (bad options, no processes or pipes).  With ROOFTUNE_COMPILE_DRY=1 in the
 * environment nothing is compiled: what the cache lacks gets status RT_ERR_NOT_FOUND (counted
 * as failed), so a run on the model device says which candidates it would have compiled
 * (tests/gpu/run.sh --plan). */
rt_status compile_pool_run(const compile_job *jobs, size_t n, const compile_options *opt,
                           const compile_pool_options *popt, compile_result *results,
                           compile_pool_stats *stats, rt_error *err);

#endif
