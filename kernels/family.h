/* family.h — what the engine needs from a kernel family, and the registry of families.
 *
 * A family is what a problem is: how a shape is written, which names manifest expressions see
 * (M, N, K, BATCH, dtype_bytes, ...), how many FLOPs and compulsory bytes a problem has, and the
 * reference its candidates are checked against.  On a GPU (inside the measuring worker, with a
 * current CUDA context) it also owns the data: seeded random inputs, the reference output,
 * poisoning the outputs before each run, launching a template's kernel with the family's
 * argument layout, verifying, and the library candidates (cuBLASLt for GEMM) that compete with
 * the templates.
 *
 * Two kinds sit behind this one seam.  Most families are declared in JSON beside their
 * templates (FOLDER/family.json, kernels/declared.h): a user's own kernel needs no C.  Families
 * that bring vendor libraries or host-side descriptors (gemm: cuBLASLt and TMA) are C modules.
 * Everything after the family (model, diagnosis, search, database, runtime) is the same for
 * both.
 *
 * A C family NAME is two files: kernels/NAME_serve.c, what serving needs (the shape syntax and
 * names, the serving coordinates, the vendor library's name, the default layout, and what the
 * runtime launches with: descriptors, argument blocks), which librooftune links and which
 * defines NAME_serving, the family_ops with only those fields; and kernels/NAME.c, what tuning
 * needs on top (costs, tolerance, the GPU side), which defines NAME_family, the whole
 * family_ops.  CMake finds the C families by the first file (kernels/NAME_serve.c) and lists them
 * once, as C_FAMILIES in the generated kernels/c_families.h: the registry below and the
 * runtime's table (family_serving_find) both come from it.
 */
#ifndef ROOFTUNE_FAMILY_H
#define ROOFTUNE_FAMILY_H

#include <cuda.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/problem.h"
#include "core/status.h"
#include "core/vars.h"
#include "model/gpu_spec.h"

typedef struct family_gpu family_gpu; /* a family's device-side state for one problem */

/* The reference kernel a family's candidates are checked against: the family names a template
 * (family_ops.reference); the engine compiles it for the GPU and plans its launch for the
 * problem, and the family runs it once in gpu_setup. */
typedef struct family_reference {
  const void *cubin; /* compiled for the GPU measured on */
  size_t cubin_size;
  const char *entry; /* its kernel's symbol in the cubin */
  rt_vars vars;      /* its configuration's values (as a candidate's plan has them) */
  unsigned grid[3], block[3], smem; /* its launch for the problem */
} family_reference;

#define FAMILY_COORDS_MAX 10

/* A problem's serving coordinates (runtime/include/rooftune.h, "Distance"): natural logs of the
 * dimensions that decide how alike two problems are, and a kind, so that problems of different
 * kinds (attention prefill and decode) are never compared. */
typedef struct family_coords {
  int kind;                    /* the family's own (1 gemm, 2 attention prefill, 3 decode); the
                                 runtime's generic coordinates are 10 + n */
  int n;                       /* coordinates used */
  double x[FAMILY_COORDS_MAX]; /* ln of each */
} family_coords;

/* ln of problem p's dimension NAME, 1 when it is absent or not positive: what coordinates are
 * made of. */
static inline double family_ln_dim(const problem *p, const char *name) {
  long long v = problem_dim(p, name);
  return log((double)(v > 0 ? v : 1));
}

typedef struct family_ops {
  const char *name;          /* "gemm" */
  const char *shape_help;    /* one line: the shape syntax, for error messages */
  const char *example_shape; /* a shape that parses, for checks that need a problem */
  const char *example_more;  /* another, for templates the first does not admit (attention:
                                a decode shape); NULL when the first serves them all */
  const char *reference;     /* the reference template's name; NULL when the family checks
                                against something else (gemm: cuBLASLt) */
  const char *declared_in;   /* the family.json it was declared in; NULL for a C family */
  /* Roles (template/roles.h) the diagnosis may name as levers for this family's
   * templates, as a "tile_m,warps,..." list; NULL: every role. */
  const char *levers;
  /* The vendor library whose candidates compete with the templates and which serves a problem
   * no tuned kernel admits (rule 4 of rooftune.h): "cublaslt", "cudnn"; NULL: none. */
  const char *library;
  const char *library_label; /* how a reader knows it: "cuBLASLt", "cuDNN" */
  /* The layout a problem has when its shape names none ("nn" for gemm: the layout travels as
   * the shape's suffix); NULL: the family has no layouts. */
  const char *default_layout;

  /* --- serving: what librooftune needs (kernels/NAME_serve.c) --- */
  /* The problem's serving coordinates; NULL: the runtime's generic ones (BATCH, then the
   * dimensions in order). */
  void (*coords)(const struct family_ops *self, const problem *p, family_coords *out);

  /* --- host side, no GPU needed --- */
  /* Every host-side operation and gpu_setup take the family itself first (self), so one
   * implementation serves every family declared in JSON. */
  /* args: the problem's data beyond its shape (the attention family's per-sequence KV lengths,
   * "L1,L2,..."), kept in out->args; NULL or "" when there is none.  A family that takes no
   * such data refuses non-empty args. */
  rt_status (*parse_shape)(const struct family_ops *self, const char *shape, const char *dtype,
                           const char *args, problem *out, rt_error *err);
  /* Adds the names manifest expressions see for this problem (dims, dtype_bytes, ...). */
  rt_status (*bind)(const struct family_ops *self, const problem *p, rt_vars *vars);
  double (*flops)(const struct family_ops *self, const problem *p);
  /* compulsory DRAM traffic: inputs read once, output written once */
  double (*min_bytes)(const struct family_ops *self, const problem *p);
  /* Relative error a correct kernel stays under for this dtype (and reduction length). */
  double (*tolerance)(const struct family_ops *self, const problem *p);

  /* --- GPU side, inside the worker, with a current context --- */
  /* Allocates inputs (seeded), computes the reference output with the family's reference (ref:
   * the compiled reference template, NULL when the family names none). */
  rt_status (*gpu_setup)(const struct family_ops *self, const problem *p, uint64_t seed,
                         const family_reference *ref, CUstream stream, family_gpu **out,
                         rt_error *err);
  void (*gpu_teardown)(family_gpu *g);
  /* Fills the outputs with NaN (and resets in-out buffers) so a kernel that writes nothing
   * cannot pass. */
  rt_status (*gpu_poison)(family_gpu *g, CUstream stream, rt_error *err);
  /* Launches a template kernel: `config` holds the configuration's parameter and derived values
   * (the template's argument layout may depend on them, e.g. TMA boxes), grid/block/smem come
   * from the manifest. */
  rt_status (*gpu_launch)(family_gpu *g, CUfunction fn, const rt_vars *config,
                          const unsigned grid[3], const unsigned block[3], unsigned smem,
                          CUstream stream, rt_error *err);
  /* Compares the outputs with the reference's; NaN never passes.  *rel_error is the error the
   * family's check measured (relative Frobenius, or the largest absolute difference). */
  rt_status (*gpu_verify)(family_gpu *g, double *rel_error, rt_error *err);
  /* Optional: the tolerance gpu_verify holds the next candidates to (0: the problem's own), for a
   * candidate that computes in another precision than the problem (a tf32 candidate of an f32
   * gemm run).  A family without it admits no such candidate. */
  void (*gpu_tolerance)(family_gpu *g, double tolerance);

  /* Library candidates (cuBLASLt algorithms for GEMM), stored under `library` above; NULL when
   * the family has none. */
  rt_status (*library_list)(family_gpu *g, int max, int *count, rt_error *err);
  /* A stable text that identifies library candidate i so the runtime can use it again. */
  rt_status (*library_describe)(family_gpu *g, int i, char *buf, size_t size, rt_error *err);
  rt_status (*library_launch)(family_gpu *g, int i, CUstream stream, rt_error *err);

  /* DRAM bytes the problem's fused epilogue saves against a separate pass over the output
   * (gemm: its bias, activation, residual or beta); NULL or 0: nothing fused.  The diagnosis
   * says it. */
  double (*fused_bytes)(const struct family_ops *self, const problem *p);
} family_ops;

/* --- the registry --- */

/* The serving half of C family NAME (NAME_serving: shape, names, coordinates, library, default
 * layout; no tuning field), from the one list of C families; NULL for any other name.  What
 * librooftune serves families by (kernels/served.c). */
const family_ops *family_serving_find(const char *name);
/* A problem's serving coordinates (rooftune.h, "Distance"): the serving half's own
 * (family_ops.coords), or, for a family without one (serving NULL), the batch then every
 * dimension in order (kind 10 + n).  The one definition the runtime's serving rules and a
 * tune's prior from nearby shapes (tuner/tune_transfer.c) share. */
void family_coords_of(const family_ops *serving, const problem *p, family_coords *out);
/* The log-distance between two problems' coordinates; -1 when they are of different kinds. */
double family_coords_distance(const family_coords *a, const family_coords *b);
/* How a reader knows the vendor library called LIBRARY ("cublaslt": "cuBLASLt"), from the family
 * that names it; LIBRARY itself when no C family does. */
const char *family_library_label(const char *library);

/* The family called NAME: a C family, or one declared in a family.json of the template search
 * path (loaded on first use; family_load_path reports what does not load).  NULL when unknown. */
const family_ops *family_find(const char *name);
/* Loads every family.json of a template search path (NULL: catalog_path()).  Loading a file
 * again is a no-op; a family name declared twice (or a declaration named like a C family) is
 * RT_ERR_MANIFEST naming both files. */
rt_status family_load_path(const char *path, rt_error *err);
/* Loads one family.json (what the measuring worker does with the file it is sent). */
rt_status family_load_file(const char *path, const family_ops **out, rt_error *err);
/* "gemm, softmax, transpose": the families known now, for messages. */
const char *family_names(void);

/* The names manifest expressions see for problem p of family fam: the family's own (fam->bind:
 * dimensions and facts), the dtype facts (dtype_bytes, dtype_is_<d>) and the device facts of
 * arch and, when known, gpu (gpu_spec_env).  env is cleared first.  The one way the engine, the
 * runtime, the benchmarks and the tests build an environment. */
rt_status problem_env(const family_ops *fam, const problem *p, const arch_spec *arch,
                      const gpu_spec *gpu, rt_vars *env, rt_error *err);

/* 1 when the family lets the diagnosis name role ROLE_NAME ("tile_m") as a lever. */
int family_allows_lever(const family_ops *fam, const char *role_name);

/* --- what the families' GPU sides share (inside the worker, with a current context) --- */

/* Allows fn smem bytes of dynamic shared memory (a launch over 48 KiB must ask first). */
rt_status family_allow_smem(CUfunction fn, unsigned smem, rt_error *err);
/* Launches reference kernel fn (ref's launch) on stream with g's arguments, after poisoning
 * what it writes (so a reference that writes nothing cannot pass). */
typedef rt_status (*family_reference_launch)(family_gpu *g, const family_reference *ref,
                                             CUfunction fn, CUstream stream, rt_error *err);
/* A gpu_setup's reference run, once: ref's cubin loaded, its entry found, its dynamic shared
 * memory allowed, launch(g, ref, ...) called, the stream waited for, the module unloaded; the
 * error names the step that failed. */
rt_status family_reference_run(family_gpu *g, const family_reference *ref, CUstream stream,
                               family_reference_launch launch, rt_error *err);

#endif
