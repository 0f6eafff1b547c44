/* family.h — what the engine needs from a kernel family (gemm, attention).
 *
 * A family knows its problems: how a shape is written, which names manifest expressions see
 * (M, N, K, BATCH, dtype_bytes, ...), how many FLOPs and compulsory bytes a problem has.  On a
 * GPU (inside the measuring worker, with a current CUDA context) it also owns the data: seeded
 * random inputs, the reference output, poisoning the output before each run, launching a
 * template's kernel with the family's argument layout, verifying, and the library candidates
 * (cuBLASLt for GEMM) that compete with the templates.
 */
#ifndef ROOFTUNE_FAMILY_H
#define ROOFTUNE_FAMILY_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "tuner/core/problem.h"
#include "tuner/core/status.h"
#include "tuner/core/vars.h"
#include "tuner/model/gpu_spec.h"


typedef struct family_gpu family_gpu; /* a family's device-side state for one problem */

typedef struct family_ops {
  const char *name;  /* "gemm" */
  const char *shape_help; /* one line: the shape syntax, for error messages */

  /* --- host side, no GPU needed --- */
  /* Every host-side operation and gpu_setup take the family itself first (self), so one
   * implementation serves every family declared in JSON (kernels/declared.h). */
  rt_status (*parse_shape)(const struct family_ops *self, const char *shape, const char *dtype,
                           problem *out, rt_error *err);
  /* Adds the names manifest expressions see for this problem (dims, dtype_bytes, ...). */
  rt_status (*bind)(const struct family_ops *self, const problem *p, rt_vars *vars);
  double (*flops)(const struct family_ops *self, const problem *p);
  /* compulsory DRAM traffic: inputs read once, output written once */
  double (*min_bytes)(const struct family_ops *self, const problem *p);
  /* Relative error a correct kernel stays under for this dtype (and reduction length). */
  double (*tolerance)(const struct family_ops *self, const problem *p);

  /* --- GPU side, inside the worker, with a current context --- */
  /* Allocates inputs (seeded), computes the reference output with the family's reference. */
  rt_status (*gpu_setup)(const struct family_ops *self, const problem *p, uint64_t seed,
                         CUstream stream, family_gpu **out, rt_error *err);
  void (*gpu_teardown)(family_gpu *g);
  /* Fills the output with NaN so a kernel that writes nothing cannot pass. */
  rt_status (*gpu_poison)(family_gpu *g, CUstream stream, rt_error *err);
  /* Launches a template kernel: `config` holds the configuration's parameter and derived values
   * (the template's argument layout may depend on them, e.g. TMA boxes), grid/block/smem come
   * from the manifest. */
  rt_status (*gpu_launch)(family_gpu *g, CUfunction fn, const rt_vars *config,
                          const unsigned grid[3], const unsigned block[3], unsigned smem,
                          CUstream stream, rt_error *err);
  /* Compares the output with the reference: relative Frobenius error; NaN never passes. */
  rt_status (*gpu_verify)(family_gpu *g, double *rel_error, rt_error *err);

  /* Library candidates (cuBLASLt algorithms for GEMM); NULL when the family has none. */
  rt_status (*library_list)(family_gpu *g, int max, int *count, rt_error *err);
  /* A stable text that identifies library candidate i so the runtime can use it again. */
  rt_status (*library_describe)(family_gpu *g, int i, char *buf, size_t size, rt_error *err);
  rt_status (*library_launch)(family_gpu *g, int i, CUstream stream, rt_error *err);
} family_ops;

/* The names manifest expressions see for problem p of family fam: the family's own (fam->bind:
 * dimensions and facts), the dtype facts (dtype_bytes, dtype_is_<d>) and the device facts of
 * arch and, when known, gpu (gpu_spec_env).  env is cleared first.  The one way the engine, the
 * runtime, the benchmarks and the tests build an environment. */
rt_status problem_env(const family_ops *fam, const problem *p, const arch_spec *arch,
                      const gpu_spec *gpu, rt_vars *env, rt_error *err);

/* The registered families; NULL when unknown ("gemm"). */
const family_ops *family_find(const char *name);
/* "gemm, attention": for error messages. */
const char *family_names(void);

#endif
