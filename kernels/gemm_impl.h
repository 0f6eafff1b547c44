/* gemm_impl.h — private to the gemm family's two halves, not part of gemm.h: what gemm_serve.c
 * (serving: the shape syntax, names, coordinates, cuBLASLt replay, TMA maps) gives gemm.c
 * (tuning: costs, tolerance, the GPU side and cuBLASLt's candidates), and the fields both
 * family_ops objects share (GEMM_SERVING_OPS: gemm_serving has them alone, gemm_family adds the
 * tuning fields). */
#ifndef ROOFTUNE_GEMM_IMPL_H
#define ROOFTUNE_GEMM_IMPL_H

#include "kernels/gemm.h"
#include "templates/gemm/gemm_epilogue.h"

#define GEMM_SHAPE_HELP                                                                           \
  "[BATCH@]MxNxK[:nn|:nt][+OPTION...] with positive integers (nt: B stored N x K; options "       \
  "b=e4m3|e5m2 vscale alpha "                                                                     \
  "beta bias relu|gelu|silu residual out=f32|f16|bf16), e.g. 4096x4096x4096, 8@128x4096x4096:nt " \
  "or "                                                                                           \
  "4096x14336x4096:nt+bias+gelu+out=bf16"

rt_status gemm_parse_shape(const family_ops *self, const char *shape, const char *dtype,
                           const char *args, problem *out, rt_error *err);
rt_status gemm_bind(const family_ops *self, const problem *p, rt_vars *vars);
void gemm_coords(const family_ops *self, const problem *p, family_coords *out);

/* What serving and tuning both say of gemm (family.h). */
#define GEMM_SERVING_OPS                                                                \
  .name = "gemm", .shape_help = GEMM_SHAPE_HELP, .example_shape = "4096x4096x4096",     \
  .example_more =                                                                       \
      "16x4096x4096:nt", /* a decode-time linear layer: gemm_skinny takes <= 16 rows */ \
      .library = "cublaslt", .library_label = "cuBLASLt", .default_layout = "nn",       \
  .parse_shape = gemm_parse_shape, .bind = gemm_bind, .coords = gemm_coords

/* Bytes of an element of dtype code c (gemm_dtype_code); 0 for an unknown one. */
int gemm_code_bytes(int c);
/* The output types' names, by GEMM_OUT_* code. */
extern const char *const gemm_out_names[3];

/* ---- cuBLASLt, shared by the runtime's replay (gemm_lt_matmul) and the tuner's candidates ---- */

/* Descriptors for row-major D = A * B computed as column-major D^T = B^T A^T. */
typedef struct gemm_lt_desc {
  cublasLtMatmulDesc_t op;        /* compute type, transposes, epilogue, scales */
  cublasLtMatrixLayout_t a, b, c; /* cuBLASLt's A (= our B), B (= our A), C = D */
  int c_mode;                     /* what cuBLASLt's C is: 0 none (beta 0), 1 our C (beta), 2 the
                                   residual (beta 1) */
} gemm_lt_desc;

rt_status gemm_lt_check(cublasStatus_t s, const char *what, rt_error *err);
void gemm_lt_desc_free(gemm_lt_desc *d);
/* The descriptors of problem p (operand types, output type and epilogue from its options): tf32
 * picks CUBLAS_COMPUTE_32F_FAST_TF32, fast_accum fp8 fast accumulation; epi (NULL: none) gives
 * the bias and scale pointers.  RT_ERR_UNSUPPORTED when cuBLASLt has no fused form of the
 * epilogue. */
rt_status gemm_lt_desc_make_epi(const problem *p, int tf32, int fast_accum,
                                const gemm_epi_args *epi, gemm_lt_desc *d, rt_error *err);
rt_status gemm_lt_desc_make(const problem *p, int tf32, gemm_lt_desc *d, rt_error *err);
/* Top `max` heuristic algorithms for the descriptors; *count of them written. */
rt_status gemm_lt_heuristic(cublasLtHandle_t lt, const gemm_lt_desc *d, size_t ws, int max,
                            cublasLtMatmulHeuristicResult_t *res, int *count, rt_error *err);
/* D = alpha * op(A) op(B) (+ beta * Cin) with the descriptors' epilogue; Cin is ignored when
 * beta is 0 (D stands in for it). */
rt_status gemm_lt_run(cublasLtHandle_t lt, const gemm_lt_desc *d, const cublasLtMatmulAlgo_t *algo,
                      CUdeviceptr A, CUdeviceptr B, CUdeviceptr Cin, float alpha, float beta,
                      CUdeviceptr D, CUdeviceptr ws, size_t ws_size, CUstream stream,
                      rt_error *err);
/* cuBLASLt's C and beta for the descriptors' c_mode. */
void gemm_lt_c(const gemm_lt_desc *d, const gemm_epi_args *epi, CUdeviceptr *c, float *beta);

#endif
