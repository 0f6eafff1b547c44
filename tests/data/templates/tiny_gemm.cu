// tiny_gemm.cu — test-only template: C = A * B with TILE x TILE shared-memory tiles, one output
// element per thread, the K loop unrolled UNROLL times.  fp32 output, f32 or f16 input.
#include <cuda_fp16.h>
#include "tiny_common.h"

#ifdef RT_DTYPE_f16
typedef __half in_t;
#else
typedef float in_t;
#endif

extern "C" __global__ void tiny_gemm(const in_t *A, const in_t *B, float *C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  size_t batch = blockIdx.z;
  A += batch * (size_t)M * K;
  B += batch * (size_t)K * N;
  C += batch * (size_t)M * N;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[threadIdx.y][threadIdx.x] = load_or_zero(A, row, k0 + threadIdx.x, M, K);
    Bs[threadIdx.y][threadIdx.x] = load_or_zero(B, k0 + threadIdx.y, col, K, N);
    __syncthreads();
#pragma unroll UNROLL
    for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
