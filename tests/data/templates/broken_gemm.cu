// broken_gemm.cu — test-only: VARIANT 1 does not compile (an undeclared name on line 6).
extern "C" __global__ void broken_gemm(const float *A, const float *B, float *C, int M, int N, int K) {
  int i = blockIdx.x * THREADS + threadIdx.x;
  if (i >= M * N) return;
#if VARIANT == 1
  C[i] = not_declared_anywhere;
#else
  float acc = 0.f;
  for (int k = 0; k < K; k++) acc += A[(i / N) * K + k] * B[k * N + i % N] * (VARIANT + 1);
  C[i] = acc;
#endif
}
