/* gemm.h — the GEMM kernel family: D = epilogue(A * B) (optionally batched) with f32, tf32,
 * f16, bf16 or fp8 (e4m3, e5m2) inputs and an f32, f16 or bf16 output.
 *
 * Problem syntax (`--shape`): `[BATCH@]MxNxK[:LAYOUT][+OPTION...]` with positive integers and
 * the input precision given separately as dtype f32 | tf32 | f16 | bf16 | e4m3 | e5m2 (A's, and
 * B's unless an option says otherwise): f32 is fp32 inputs and fp32 math (CUDA-core FMA,
 * cuBLASLt's CUBLAS_COMPUTE_32F); tf32 is fp32 inputs rounded to tf32 for tensor-core products
 * with fp32 accumulation (the mma templates' m16n8k8 path, cuBLASLt's
 * CUBLAS_COMPUTE_32F_FAST_TF32), a dtype of its own with its own tolerance.  LAYOUT says how B
 * is stored; A is always M x K row-major and D is always M x N row-major:
 *   nn (default)  B is K x N row-major;
 *   nt            B is stored N x K row-major (the weight of a linear layer, y = x W^T).
 * Options (any order, each at most once; the canonical text lists them in this order):
 *   b=e4m3|e5m2   B's element type when it is not A's (fp8 only: e4m3 x e5m2 and so on);
 *   vscale        fp8 scales per row of A (M floats) and per column of B (N floats) instead of
 *                 one per tensor (the outer-product scaling of row-wise quantisation);
 *   alpha         D = alpha * acc (an epilogue with nothing else);
 *   beta          + beta * C, C an M x N input of the output type (pre-activation);
 *   bias          + bias[N] of the output type (pre-activation);
 *   relu|gelu|silu  the activation (GELU in its tanh form);
 *   residual      + residual[M x N] of the output type, after the activation;
 *   out=f32|f16|bf16  the output type (default f32).
 * templates/gemm/gemm_epilogue.h defines the arithmetic.  fp8 inputs need the nt layout (wgmma
 * and cuBLASLt read fp8 operands K-major only) and always carry per-tensor scales (scale_a,
 * scale_b: D = alpha * scale_a * scale_b * acc ...).  Examples: 4096x4096x4096,
 * 1x4096x14336:nt, 8@512x512x64, 4096x14336x4096:nt+bias+gelu+out=bf16, and with dtype e4m3
 * 8192x8192x8192:nt+b=e5m2+out=bf16.  BATCH is a strided batch: A, B and D of batch b start
 * b*M*K, b*K*N and b*M*N elements in (C and residual as D; bias is shared).  The canonical text
 * is "[BATCH@]MxNxK" with ":nt" appended for the nt layout, then the options ("+out=f32" and a
 * "+b=" equal to the dtype left out; "+alpha" left out beside any other epilogue option).
 *
 * Kernel ABI shared by every template in templates/gemm/: accumulation is fp32; without options
 * the output is fp32 (split-K adds fp32 partial sums with atomics into an output the launcher
 * zeroes first).  Entry arguments are (A, B, D, int M, int N, int K) with device pointers,
 * except for TMA templates (manifest derived TMA_BOX_K present), whose first two arguments are
 * CUtensorMap descriptors of A (dims K, M, BATCH; box TMA_BOX_K x TMA_BOX_M) and of B: for nt B
 * stored N x K (dims K, N, BATCH; box TMA_BOX_K x TMA_BOX_N), for nn B stored K x N (dims N,
 * K, BATCH; box TMA_BOX_N x TMA_BOX_K), 128-byte swizzled (fp8 as UINT8 elements).  A problem
 * with an epilogue (any option, or fp8 inputs: the fact `epi` is 1) passes a seventh argument,
 * the gemm_epi_args of gemm_epilogue.h by value.  The names manifest expressions see: M, N, K,
 * BATCH, dtype_bytes (A's), b_bytes, b_e5m2 (1 when B is e5m2), b_col (1 for nt; templates take
 * B's layout as a parameter B_COL [0, 1] constrained by "B_COL == b_col"), out_bytes, out_code
 * (0 f32, 1 f16, 2 bf16), epi, epi_beta, epi_bias, epi_act (0 none, 1 relu, 2 gelu, 3 silu),
 * epi_res.  A template without the epilogue says "epi == 0"; one with it ties parameters to
 * these facts as it does B_COL.
 *
 * Verification: inputs are seeded uniform values in [-1, 1) rounded to the dtype (fp8: divided
 * by a per-tensor scale amax/max_finite, 1/448 for e4m3 and 1/57344 for e5m2, then rounded to
 * nearest even, saturating, so the stored values span the format's range and its subnormals);
 * epilogue inputs are seeded values rounded to the output type, alpha = 3/sqrt(K) (an output
 * of RMS about 1, where the activations bend) with +alpha or any other option, beta = 0.5.  The
 * reference is cuBLASLt with CUBLAS_COMPUTE_32F and an fp32 output (true fp32 for f32 inputs;
 * for fp8 inputs cuBLASLt's bf16 matmul of bf16 copies of them, which holds every fp8 value
 * exactly), then the epilogue on the host in double precision.  A candidate passes when its
 * relative Frobenius error is under gemm's tolerance and no element is NaN or further than 32
 * tolerances times the reference's RMS from its reference value.  The tolerance: f32 and
 * f16/bf16 inputs 1e-4 (both sides form the same products exactly and add in fp32; only the
 * summation order differs, ~sqrt(K) * 2^-24); tf32 3e-3 (inputs rounded to 10 mantissa bits,
 * relative error ~5e-4); fp8 4 * 2^-13 * sqrt(max(1, K/32)): the products of fp8 values are
 * exact in fp32 on both sides, but Hopper's fp8 tensor cores add each k32 step into the
 * accumulator keeping about 14 bits (reported by DeepSeek-V3 for the H800; cuBLASLt's
 * CUBLASLT_MATMUL_DESC_FAST_ACCUM skips its periodic promotion to fp32), an error of at most
 * 2^-13 of the running sum per step, growing like a random walk over the K/32 steps, with a
 * factor 4 of margin (K = 4096: 5.5e-3; a dropped K slab of 128 is 0.18, a wrong element 32
 * tolerances); plus the output's rounding, 2^-8 for bf16 and 2^-11 for f16 (the relative
 * error of rounding to nearest).  cuBLASLt candidates: for tf32 the FAST_TF32 algorithms; for
 * f32 FAST_TF32 and CUBLAS_COMPUTE_32F algorithms alternate, tf32 first, and the tuner keeps
 * the tf32 ones only when an f32 run admits tf32 (--allow-tf32), verifying them with tf32's
 * tolerance; for fp8 they alternate FAST_ACCUM off and on, with the A/B scale pointers; a
 * problem with an epilogue gets cuBLASLt's fused epilogue (BIAS, RELU, GELU and their _BIAS
 * forms, beta with C; a residual without activation as C with beta 1) or, where cuBLASLt has
 * none (SiLU; a residual after an activation or beside beta), no candidates.
 *
 * cuBLASLt candidates are described by a stable text, e.g.
 *   "cublaslt compute=32F id=21 tile=20 stages=19 splitk=1 reduction=0 swizzle=1 custom=0
 *    inner=0 cluster=0"  (" fastaccum=1" appended for fp8 fast accumulation)
 * (the cublasLtMatmulAlgoConfigAttributes_t values), which gemm_lt_algo_parse() turns back
 * into an algorithm for gemm_lt_matmul() — what the runtime uses to replay a winner.
 */
#ifndef ROOFTUNE_GEMM_H
#define ROOFTUNE_GEMM_H

#include <cublasLt.h>
#include <stdint.h>

#include "kernels/family.h"

extern const family_ops gemm_family;  /* the whole family (gemm.c), for the tuner */
extern const family_ops gemm_serving; /* its serving half (gemm_serve.c), for librooftune */

/* 0 f32 and tf32 (fp32 inputs), 1 f16, 2 bf16, 4 e4m3, 5 e5m2; -1 for anything else. */
int gemm_dtype_code(const char *dtype);
/* Bytes per input element (4, 2 or 1); 0 for an unknown dtype. */
int gemm_dtype_bytes(const char *dtype);
#define GEMM_CODE_E4M3    4
#define GEMM_CODE_E5M2    5
#define GEMM_IS_FP8(code) ((code) == GEMM_CODE_E4M3 || (code) == GEMM_CODE_E5M2)

/* A problem's operand types and epilogue, read from its canonical shape text. */
typedef struct gemm_epi {
  int a_code, b_code;       /* gemm_dtype_code of A and B */
  int out_code;             /* GEMM_OUT_F32, _F16, _BF16 (gemm_epilogue.h) */
  int on;                   /* 1: the kernels take a gemm_epi_args (any option, or fp8 inputs) */
  int alpha;                /* +alpha was given */
  int beta, bias, residual; /* the inputs it reads */
  int act;                  /* GEMM_ACT_* */
  int vscale;               /* +vscale: fp8 scales per row of A and per column of B */
} gemm_epi;

/* The operand types and epilogue of problem p (a gemm problem whose shape parsed). */
rt_status gemm_problem_epi(const problem *p, gemm_epi *out, rt_error *err);
/* Bytes of an output element (4 or 2). */
int gemm_out_bytes(int out_code);
/* The reference epilogue of gemm_epilogue.h in double precision, for one element: acc is the
 * fp32 product sum, c and r the C and residual elements, bias the bias element (unused ones 0);
 * s = alpha * scale_a * scale_b.  Rounding to the output type is the caller's. */
double gemm_epi_reference(const gemm_epi *e, double s, double beta, double acc, double c,
                          double bias, double r);

/* A cuBLASLt algorithm as configuration attributes: what identifies it across processes. */
typedef struct gemm_lt_algo {
  int tf32;           /* 1: CUBLAS_COMPUTE_32F_FAST_TF32, 0: CUBLAS_COMPUTE_32F */
  int id;             /* CUBLASLT_ALGO_CONFIG_ID */
  unsigned tile;      /* CUBLASLT_ALGO_CONFIG_TILE_ID */
  unsigned stages;    /* CUBLASLT_ALGO_CONFIG_STAGES_ID */
  int splitk;         /* CUBLASLT_ALGO_CONFIG_SPLITK_NUM */
  unsigned reduction; /* CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME */
  unsigned swizzle;   /* CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING */
  unsigned custom;    /* CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION */
  unsigned inner;     /* CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID */
  unsigned cluster;   /* CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID */
  int fast_accum;     /* fp8: CUBLASLT_MATMUL_DESC_FAST_ACCUM (a descriptor attribute) */
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
/* The same for a problem with an epilogue or fp8 inputs (gemm_lt_matmul refuses those): D is
 * the output, epi the epilogue's operands and scalars (gemm_epilogue.h).  RT_ERR_UNSUPPORTED
 * when cuBLASLt has no fused form of the problem's epilogue (see above). */
struct gemm_epi_args;
rt_status gemm_lt_matmul_epi(cublasLtHandle_t lt, const problem *p, const gemm_lt_algo *a,
                             CUdeviceptr A, CUdeviceptr B, CUdeviceptr D,
                             const struct gemm_epi_args *epi, CUdeviceptr workspace, size_t ws_size,
                             CUstream stream, rt_error *err);

/* How one TMA operand's CUtensorMap is encoded: exactly the arguments of
 * cuTensorMapEncodeTiled.  gemm_tma_plan computes them (pure, no driver), gemm_tma_encode makes
 * the driver call; the tuning launcher and the runtime (rooftune_gemm) both go through them. */
typedef struct gemm_tma_params {
  CUtensorMapDataType type;         /* FLOAT16, BFLOAT16 or (fp8) UINT8 */
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
 * candidate output that gpu_verify checks, and the epilogue argument the templates get (its
 * operands on the GPU, the seeded alpha and beta). */
void gemm_gpu_buffers(const family_gpu *g, CUdeviceptr *A, CUdeviceptr *B, CUdeviceptr *C);
size_t gemm_gpu_workspace_bytes(const family_gpu *g);
void gemm_gpu_epi_args(const family_gpu *g, struct gemm_epi_args *out);

#endif
