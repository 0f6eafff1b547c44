// each thread scales UNROLL float4 vectors, a grid-stride loop over the rest
extern "C" __global__ void vscale_vec(const float *x, float *y, int n, float a) {
  int v = n / 4;
  for (int i = blockIdx.x * THREADS * UNROLL + threadIdx.x; i < v;
       i += gridDim.x * THREADS * UNROLL)
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
      if (i + u * THREADS < v) {
        float4 t = ((const float4 *)x)[i + u * THREADS];
        ((float4 *)y)[i + u * THREADS] = make_float4(a * t.x, a * t.y, a * t.z, a * t.w);
      }
  for (int i = 4 * v + blockIdx.x * THREADS + threadIdx.x; i < n; i += gridDim.x * THREADS)
    y[i] = a * x[i];
}
