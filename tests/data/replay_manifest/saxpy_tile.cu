// saxpy_tile.cu — the project's own small kernel for tests/unit/test_replay_compile.c: y = a*x + y
// through a shared-memory tile of BLOCK*UNROLL floats (so its static shared memory is known).
extern "C" __global__ void saxpy_tile(float *y, const float *x, float a, int n) {
  __shared__ float tile[BLOCK * UNROLL];
  int base = blockIdx.x * BLOCK * UNROLL;
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    int i = base + u * BLOCK + threadIdx.x;
    tile[u * BLOCK + threadIdx.x] = i < n ? x[i] : 0.0f;
  }
  __syncthreads();
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    int i = base + u * BLOCK + threadIdx.x;
    if (i < n) y[i] = a * tile[u * BLOCK + threadIdx.x] + y[i];
  }
}
