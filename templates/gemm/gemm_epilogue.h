/* gemm_epilogue.h — the fused epilogue of the GEMM templates: its kernel argument, its
 * arithmetic, and the stores of the output types.  Valid C (the gemm family and the host tests
 * include it) and CUDA C++ (the templates do).
 *
 * A gemm problem with options (kernels/gemm.h: `+beta`, `+bias`, `+relu|+gelu|+silu`,
 * `+residual`, `+out=bf16|f16`, `+alpha`, or fp8 inputs) computes, for each output element,
 *
 *     v = alpha * scale_a * scale_b * acc        (acc: the fp32 sum over K of A*B)
 *     v += beta * C[m][n]                        (+beta)
 *     v += bias[n]                               (+bias)
 *     v = act(v)                                 (+relu | +gelu | +silu)
 *     v += residual[m][n]                        (+residual)
 *     D[m][n] = v rounded to the output type     (+out=..., round to nearest even)
 *
 * C, bias and residual hold elements of the output type; C and residual are M x N row-major
 * per batch (stride M*N), bias has N elements shared by the batch.  scale_a and scale_b point at
 * one fp32 value each (the per-tensor dequantisation scales of fp8 inputs; 0 means 1), as
 * cuBLASLt's A/B_SCALE_POINTER do (with +vscale: M and N floats, cuBLASLt's OUTER_VEC_32F).  Such a kernel takes one more argument after (A, B, D, M, N,
 * K): a gemm_epi_args by value.  Which steps run is in its flags, read at run time (a uniform
 * branch per step, after the main loop), so one compiled kernel serves every epilogue of its
 * output type; the output type is a template parameter (it changes the stores).
 *
 * GELU is the tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed as
 * x * sigmoid(2u) with u that argument (the same function: 1 + tanh(u) = 2 sigmoid(2u)), which
 * stays accurate where 1 + tanh(u) cancels; SiLU is x * sigmoid(x).  sigmoid(z) = 1/(1+e^-z)
 * with e^-z from ex2.approx (relative error about 2^-22 in the kernels), so both are within a
 * few fp32 ulps of the exact functions; */
#ifndef ROOFTUNE_GEMM_EPILOGUE_H
#define ROOFTUNE_GEMM_EPILOGUE_H

#if defined(__CUDACC__)
#define GEMM_EPI_FN static __host__ __device__ __forceinline__
#else
#include <math.h>
#define GEMM_EPI_FN static inline
#endif

/* The epilogue's kernel argument (56 bytes, the same layout in C and CUDA). */
typedef struct gemm_epi_args {
  unsigned long long c;        /* beta's C (output type), or 0 */
  unsigned long long bias;     /* bias[N] (output type), or 0 */
  unsigned long long residual; /* residual (output type), or 0 */
  unsigned long long scale_a;  /* const float * (fp8 A's scale), or 0 for 1 */
  unsigned long long scale_b;  /* const float * (fp8 B's scale), or 0 for 1 */
  float alpha, beta;
  unsigned flags; /* GEMM_EPI_BETA | _BIAS | _RES | (activation << GEMM_EPI_ACT_SHIFT) */
  unsigned pad;
} gemm_epi_args;

/* Activation codes: the family's epi_act. */
enum { GEMM_ACT_NONE = 0, GEMM_ACT_RELU = 1, GEMM_ACT_GELU = 2, GEMM_ACT_SILU = 3 };
/* gemm_epi_args.flags; GEMM_EPI_VSCALE: scale_a holds M floats (one per row of A) and scale_b N
 * (one per column of D), so the product's scale is alpha * scale_a[m] * scale_b[n] (fp8 with
 * per-row / per-column quantisation, +vscale; both vectors shared by the batch) */
enum {
  GEMM_EPI_BETA = 1,
  GEMM_EPI_BIAS = 2,
  GEMM_EPI_RES = 4,
  GEMM_EPI_VSCALE = 16,
  GEMM_EPI_ACT_SHIFT = 8
};
/* Output type codes: the manifests' OUT_TYPE and the family's out_code. */
enum { GEMM_OUT_F32 = 0, GEMM_OUT_F16 = 1, GEMM_OUT_BF16 = 2 };

/* x / (1 + e^-z); z is held above -80 so the divisor stays under 2^126, where __fdividef
 * would return 0 early (the true value there is under 1e-33 |x|). */
GEMM_EPI_FN float gemm_epi_sigmoid_mul(float x, float z) {
  z = z > -80.0f ? z : -80.0f;
#if defined(__CUDA_ARCH__)
  return __fdividef(x, 1.0f + __expf(-z));
#else
  return x / (1.0f + expf(-z));
#endif
}

GEMM_EPI_FN float gemm_epi_act(int act, float v) {
  if (act == GEMM_ACT_RELU) return v > 0.0f ? v : 0.0f;
  if (act == GEMM_ACT_GELU) {
    const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    return gemm_epi_sigmoid_mul(v, 2.0f * u);
  }
  if (act == GEMM_ACT_SILU) return gemm_epi_sigmoid_mul(v, v);
  return v;
}

/* One element through the steps of `flags` (gemm_epi_args.flags): s*acc (+ beta*c) (+ bias)
 * -> act (+ r).  The kernels load c, bias and r only for the steps that read them (else 0). */
GEMM_EPI_FN float gemm_epi_apply(unsigned flags, int act, float s, float beta, float acc, float c,
                                 float bias, float r) {
  float v = s * acc;
  if (flags & GEMM_EPI_BETA) v = beta * c + v;
  if (flags & GEMM_EPI_BIAS) v += bias;
  if (act) v = gemm_epi_act(act, v);
  if (flags & GEMM_EPI_RES) v += r;
  return v;
}

#endif
