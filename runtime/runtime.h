/* runtime.h — what the files of librooftune share (not installed): errors, the families the
 * library serves, the serving coordinates, the geometry path, the database handle with its
 * index, the driver and the loaded-kernel cache.
 *
 *   status.c      the status table: rooftune_strerror, the mapping from engine codes, errors
 *   families.c    the families served beyond their tuned shapes (kernels/served.c) and the distance
 *   geometry.c    one path: a winner's recipe evaluated and checked for a queried shape
 *   lookup.c      the handle, the index, the serving rules, the answer cache
 *   launch.c      the driver, loading cubins, launching, the per-handle kernel cache
 *   gemm.c        rooftune_gemm and its cuBLASLt fallback
 *   attention.c   rooftune_attention: arguments, TMA maps, split-KV scratch
 *   attention_library.c  attention's vendor library: cuDNN's SDPA, its plans kept per context and stream
 */
#ifndef ROOFTUNE_RUNTIME_INTERNAL_H
#define ROOFTUNE_RUNTIME_INTERNAL_H

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "db/db.h"
#include "kernels/family.h"
#include "runtime/include/rooftune.h"
#include "core/problem.h"
#include "core/status.h"
#include "core/util.h"

/* ---- status.c ---- */

/* Sets the calling thread's last error and returns code. */
int rt_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets it from an engine error and returns the public code for err->code. */
int rt_fail_err(const rt_error *err);
/* The public code for an engine status. */
int rt_public_code(rt_status s);
/* rt_copy (a bounded copy) is core/util.h's. */

/* ---- families.c ---- */

/* A family as this library knows it: a C family's serving half (family_serving_find), or a
 * generic entry (positional dimensions, no vendor library) for any other name. */
typedef struct rt_family {
  const char *name;      /* "gemm" */
  const family_ops *ops; /* its serving half; NULL: dims by position only */
  const char *library;   /* rule 4's vendor library (ops->library: "cublaslt", "cudnn"), or NULL */
  const char *default_layout; /* ops->default_layout ("nn" for gemm), else "" */
} rt_family;

/* The family NAME (by value: it names static data only). */
rt_family rt_family_get(const char *name);

/* The serving coordinates of a problem of family f (rooftune.h, "Distance"): the family's own
 * (family_ops.coords), or the batch then every dimension in order (kind 10 + n). */
void rt_coords_of(const rt_family *f, const problem *p, family_coords *out);
/* The log-distance; -1 when the two are of different kinds. */
double rt_coords_distance(const family_coords *a, const family_coords *b);

/* A problem parsed from a shape text: by the family (ops), or as "[BATCH@]d1xd2x..." with
 * positional dimensions D0, D1, ... and BATCH.  RT_ERR_PARSE / RT_ERR_INVALID with the
 * family's message. */
rt_status rt_problem_parse(const rt_family *f, const char *shape, const char *dtype,
                           const char *layout, problem *out, rt_error *err);
/* A stored winner's problem from its dims text ("M=4096,N=4096,K=4096") and shape. */
void rt_problem_from_entry(const db_entry *e, problem *out);

/* ---- geometry.c ---- */

/* Serves winner e (its recipe r) for the queried problem q of family f: the environment (the
 * stored one with the family's names recomputed for q), the stored values, the shape-dependent
 * derived values evaluated in order, every shape-dependent constraint checked, then the launch
 * expressions within CUDA's limits.  1 with grid, block and smem when e admits q; 0 with why
 * ("constraint K % BLOCK_K == 0 fails for 4096x4096x4095") otherwise. */
int rt_geometry(const rt_family *f, const db_entry *e, const db_recipe *r, const problem *q,
                unsigned grid[3], unsigned block[3], unsigned *smem, char *why, size_t why_size);

/* ---- lookup.c ---- */

typedef struct rt_index_entry rt_index_entry;
typedef struct rt_cache_slot rt_cache_slot;

typedef struct rt_loaded {
  long long winner_id; /* which winner */
  double time_ms;      /* its time: a replaced winner (faster, same row) is a new key */
  CUcontext ctx;       /* in which context */
  rooftune_kernel *k;  /* the loaded kernel */
} rt_loaded;

struct rooftune_db {
  db *d;                 /* the open database */
  pthread_mutex_t mu;    /* guards everything below */
  int indexed;           /* the index is built */
  db_entry *entries;     /* db_entries() block */
  rt_index_entry *idx;   /* one per entry */
  size_t n;              /* entries */
  char toolkit[96];      /* this library's toolkit identity */
  rt_cache_slot *cache;  /* earlier answers */
  size_t cached;         /* slots used */
  rt_loaded kernels[32]; /* kernels the one-call entry points loaded */
  int nkernels;          /* entries used */
  atomic_int call_flags; /* rooftune_set_flags(): what the one-call functions add to their query */
};

/* The query flags the one-call functions add to ROOFTUNE_RUNNABLE (rooftune_set_flags; 0 for a
 * NULL db). */
int rt_call_flags(rooftune_db *r);

/* This library's toolkit identity: "cuda A.B, nvrtc A.B, cublaslt V" (the CUDA it was built
 * with, whose NVRTC the tuner runs; the cuBLASLt it runs with). */
void rt_toolkit(char *buf, size_t size);

/* ---- launch.c ---- */

struct rooftune_kernel {
  CUmodule mod;     /* the loaded module */
  CUfunction fn;    /* its entry */
  unsigned grid[3]; /* the match's geometry (valid when geometry_ok) */
  unsigned block[3];
  unsigned smem;
  int geometry_ok;
};

/* Loads the driver once (thread-safe). */
rt_status rt_driver_load(rt_error *err);
/* The current context, its device and the device's name; ROOFTUNE_ERR_NO_GPU without one. */
int rt_current(CUcontext *ctx, CUdevice *dev, char *name, size_t size, const char *who);
/* The kernel of winner m in context ctx, loaded once per handle; *owned = 1 when the cache was
 * full and the caller frees it after the launch (after synchronising the stream). */
int rt_kernel_get(rooftune_db *r, const rooftune_match *m, CUcontext ctx, rooftune_kernel **out,
                  int *owned);
/* Fills info from a served match. */
void rt_info_from_match(const rooftune_match *m, rooftune_info *info);

/* ---- attention_library.c ---- */

/* 1 when attention can run through the vendor library: cuDNN loads (once; the first answer
 * stays). */
int rt_attention_library_available(void);
/* Runs call a (problem p) through cuDNN's SDPA on stream: the plan a tuned library winner names
 * (identity, "cudnn sdpa engine=..."): ROOFTUNE_OK, an error of the run, or -1 with why (of
 * why_size) saying why that plan cannot run here, for the caller to go on with cuDNN's own
 * choice; or cuDNN's own choice (identity NULL; why says why no tuned kernel ran): ROOFTUNE_OK
 * with info's path ROOFTUNE_PATH_LIBRARY, template "cudnn" and the reason, else
 * ROOFTUNE_ERR_NOT_FOUND when cuDNN is not available, ROOFTUNE_ERR_UNSUPPORTED when it cannot
 * run the problem, each with both reasons in rooftune_last_error(). */
int rt_attention_library(const problem *p, const rooftune_attention_problem *a, void *stream,
                         const char *identity, char *why, size_t why_size, rooftune_info *info);

#endif
