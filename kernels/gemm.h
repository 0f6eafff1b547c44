/* gemm.h — the GEMM kernel family: C = A * B (optionally batched) in f32, tf32, f16 or bf16.
 *
 * Problem syntax (`--shape`): `[BATCH@]MxNxK[:LAYOUT]` with positive integers and the input
 * precision given separately as dtype f32 | tf32 | f16 | bf16: f32 is fp32 inputs and fp32
 * math (CUDA-core FMA, cuBLASLt's CUBLAS_COMPUTE_32F); tf32 is fp32 inputs rounded to tf32 for
 * tensor-core products with fp32 accumulation (the mma templates' m16n8k8 path, cuBLASLt's
 * CUBLAS_COMPUTE_32F_FAST_TF32), a dtype of its own with its own tolerance.  LAYOUT says how B is stored; A is
 * always M x K row-major and C is always M x N row-major:
 *   nn (default)  B is K x N row-major;
 *   nt            B is stored N x K row-major (the weight of a linear layer, y = x W^T).
 * Examples: 4096x4096x4096, 1x4096x14336:nt, 8@512x512x64.  BATCH is a strided batch: A, B
 * and C of batch b start b*M*K, b*K*N and b*M*N elements in.  The canonical text is
 * "[BATCH@]MxNxK" with ":nt" appended for the nt layout.
 *
 * Kernel ABI shared by every template in templates/gemm/: the output is fp32 whatever the
 * input precision (accumulation is fp32; split-K adds fp32 partial sums with atomics into an
 * output the launcher zeroes first).  Entry arguments are (A, B, C, int M, int N, int K) with
 * device pointers, except for TMA templates (manifest derived TMA_BOX_K present), whose first
 * two arguments are CUtensorMap descriptors of A (dims K, M, BATCH; box TMA_BOX_K x
 * TMA_BOX_M) and of B: for nt B stored N x K (dims K, N, BATCH; box TMA_BOX_K x TMA_BOX_N),
 * for nn B stored K x N (dims N, K, BATCH; box TMA_BOX_N x TMA_BOX_K), 128-byte swizzled.  The
 * names manifest expressions see: M, N, K, BATCH, dtype_bytes, b_col (1 for nt; templates
 * take B's layout as a parameter B_COL [0, 1] constrained by "B_COL == b_col"), out_bytes (4).
 *
 * Verification: inputs are seeded uniform values in [-1, 1) rounded to the dtype; the
 * reference is cuBLASLt with CUBLAS_COMPUTE_32F (true fp32 for f32 inputs); a candidate passes
 * when its relative Frobenius error is under gemm's tolerance for the dtype and no element is
 * NaN or further than 32 tolerances times the reference's RMS from its reference value.  tf32
 * gets 3e-3 (inputs rounded to 10 mantissa bits, relative error ~5e-4); f32, f16 and bf16 get
 * 1e-4 (both sides form the same products exactly and add in fp32).  cuBLASLt candidates: for
 * tf32 the CUBLAS_COMPUTE_32F_FAST_TF32 algorithms; for f32 CUBLAS_COMPUTE_32F_FAST_TF32 and
 * CUBLAS_COMPUTE_32F algorithms alternate, tf32 first, and the tuner keeps the tf32 ones only
 * when an f32 run admits tf32 (--allow-tf32), verifying them with tf32's tolerance.
 *
 * cuBLASLt candidates are described by a stable text, e.g.
 *   "cublaslt compute=32F id=21 tile=20 stages=19 splitk=1 reduction=0 swizzle=1 custom=0
 *    inner=0 cluster=0"
 * (the cublasLtMatmulAlgoConfigAttributes_t values), which gemm_lt_algo_parse() turns back
 * into an algorithm for gemm_lt_matmul() — what the runtime uses to replay a winner.
 */
#ifndef ROOFTUNE_GEMM_H
#define ROOFTUNE_GEMM_H

#include <cublasLt.h>
#include <stdint.h>

#include "kernels/family.h"

extern const family_ops gemm_family;

/* 0 f32 and tf32 (fp32 inputs), 1 f16, 2 bf16; -1 for anything else. */
int gemm_dtype_code(const char *dtype);
/* Bytes per input element (4 or 2); 0 for an unknown dtype. */
int gemm_dtype_bytes(const char *dtype);


/* A cuBLASLt algorithm as configuration attributes: what identifies it across processes. */
typedef struct gemm_lt_algo {
  int tf32;                /* 1: CUBLAS_COMPUTE_32F_FAST_TF32, 0: CUBLAS_COMPUTE_32F */
  int id;                  /* CUBLASLT_ALGO_CONFIG_ID */
  unsigned tile;           /* CUBLASLT_ALGO_CONFIG_TILE_ID */
  unsigned stages;         /* CUBLASLT_ALGO_CONFIG_STAGES_ID */
  int splitk;              /* CUBLASLT_ALGO_CONFIG_SPLITK_NUM */
  unsigned reduction;      /* CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME */
  unsigned swizzle;        /* CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING */
  unsigned custom;         /* CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION */
  unsigned inner;          /* CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID */
  unsigned cluster;        /* CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID */
} gemm_lt_algo;

/* The stable text of an algorithm (see above); returns what snprintf returns. */
int gemm_lt_algo_format(const gemm_lt_algo *a, char *buf, size_t size);
/* Parses that text; RT_ERR_PARSE naming the bad field otherwise. */
rt_status gemm_lt_algo_parse(const char *text, gemm_lt_algo *out, rt_error *err);
/* Reads the attributes of a configured algorithm (e.g. a heuristic result). */
rt_status gemm_lt_algo_read(const cublasLtMatmulAlgo_t *algo, int tf32, gemm_lt_algo *out,
                            rt_error *err);

/* Runs C = A * B for problem p with algorithm a on `stream` (needs a current CUDA context):
 * builds the descriptors, rebuilds the algorithm (cublasLtMatmulAlgoInit + its attributes),
 * checks it (cublasLtMatmulAlgoCheck: RT_ERR_UNSUPPORTED when this GPU or problem cannot run
 * it, or its workspace exceeds ws_size) and calls cublasLtMatmul.  a == NULL uses cuBLASLt's
 * own heuristic choice with CUBLAS_COMPUTE_32F. */
rt_status gemm_lt_matmul(cublasLtHandle_t lt, const problem *p, const gemm_lt_algo *a,
                         CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, CUdeviceptr workspace,
                         size_t ws_size, CUstream stream, rt_error *err);

/* How one TMA operand's CUtensorMap is encoded: exactly the arguments of
 * cuTensorMapEncodeTiled.  gemm_tma_plan computes them (pure, no driver), gemm_tma_encode makes
 * the driver call; the tuning launcher and the runtime (rooftune_gemm) both go through them. */
typedef struct gemm_tma_params {
  CUtensorMapDataType type;         /* FLOAT16 or BFLOAT16 */
  cuuint32_t rank;                  /* 3: (inner, rows, batch) */
  CUdeviceptr base;                 /* global address of the operand (16-byte aligned) */
  cuuint64_t dims[3];               /* inner (contiguous) extent, rows, BATCH */
  cuuint64_t strides[2];            /* bytes between rows and between batches */
  cuuint32_t box[3];                /* box extents: box_inner, box_rows, 1 */
  cuuint32_t elem_strides[3];       /* all 1 */
  CUtensorMapInterleave interleave; /* NONE */
  CUtensorMapSwizzle swizzle;       /* 128B */
  CUtensorMapL2promotion l2;        /* L2_256B */
  CUtensorMapFloatOOBfill oob;      /* NONE (out-of-bounds elements read as zero) */
} gemm_tma_params;

/* The encode parameters of A's (out[0]) and B's (out[1]) tensor maps for problem p (M, N, K,
 * BATCH, layout, dtype) at device addresses A and B, with the box sizes of a TMA template
 * configuration (config's TMA_BOX_M, TMA_BOX_N, TMA_BOX_K; see the ABI above).
 * RT_ERR_UNSUPPORTED when TMA cannot address the operands (f32 input, an address not 16-byte
 * aligned, a row of K (or, for nn, N) elements not a multiple of 16 bytes); RT_ERR_INVALID when
 * the config lacks the box sizes or they exceed the 128-byte swizzle limits. */
rt_status gemm_tma_plan(const problem *p, const rt_vars *config, CUdeviceptr A, CUdeviceptr B,
                        gemm_tma_params out[2], rt_error *err);
/* cuTensorMapEncodeTiled with those parameters (needs the driver loaded). */
rt_status gemm_tma_encode(const gemm_tma_params *prm, CUtensorMap *map, rt_error *err);
/* gemm_tma_plan then gemm_tma_encode for both operands: the two kernel arguments. */
rt_status gemm_tma_maps(const problem *p, const rt_vars *config, CUdeviceptr A, CUdeviceptr B,
                        CUtensorMap *map_a, CUtensorMap *map_b, rt_error *err);

/* GPU-side accessors for benchmarks and tests (valid after gpu_setup): the inputs and the
 * candidate output that gpu_verify checks. */
void gemm_gpu_buffers(const family_gpu *g, CUdeviceptr *A, CUdeviceptr *B, CUdeviceptr *C);
size_t gemm_gpu_workspace_bytes(const family_gpu *g);

#endif
