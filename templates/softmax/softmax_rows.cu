// softmax_rows.cu — softmax over rows, tuned: a block of WARPS warps works on THREADS/ROW_THREADS
// rows at once, ROW_THREADS threads sharing each row.  Each thread reads its part of the row in
// vectors of VEC elements, UNROLL vectors in flight; ONLINE 1 keeps a running max and sum in one
// pass (then a second pass writes), ONLINE 0 makes three passes (max, sum, write).  The partial
// results of a row's threads combine by warp shuffles, and through shared memory when a row
// spans several warps.  fp32 math for every dtype.
//
// Parameters (#defines from the manifest): WARPS, ROW_THREADS, VEC, UNROLL, ONLINE, THREADS.
#include "softmax_common.h"

#define RPB       (THREADS / ROW_THREADS)                // rows per block
#define ROW_WARPS ((ROW_THREADS + 31) / 32)              // warps sharing one row
#define LANES     (ROW_THREADS < 32 ? ROW_THREADS : 32)  // threads of a row within one warp

struct __align__(sizeof(elem) * VEC) vec_t {
  elem v[VEC];
};

__device__ __forceinline__ void combine(float &m, float &s, float m2, float s2) {
  float mm = fmaxf(m, m2);
  s = (m == NEG_INF ? 0.f : s * __expf(m - mm)) + (m2 == NEG_INF ? 0.f : s2 * __expf(m2 - mm));
  m = mm;
}

// Reduces (m, s) over the ROW_THREADS threads of a row; every one of them gets the result.
// mode 0: max of m; mode 1: sum of s; mode 2: the online (m, s) pair.
__device__ __forceinline__ void row_reduce(float &m, float &s, int mode,
                                           float (*red)[ROW_WARPS][2]) {
  for (int o = LANES / 2; o > 0; o /= 2) {
    float m2 = __shfl_xor_sync(0xffffffffu, m, o, LANES),
          s2 = __shfl_xor_sync(0xffffffffu, s, o, LANES);
    if (mode == 0)
      m = fmaxf(m, m2);
    else if (mode == 1)
      s += s2;
    else
      combine(m, s, m2, s2);
  }
#if ROW_WARPS > 1
  const int row = threadIdx.x / ROW_THREADS, w = (threadIdx.x % ROW_THREADS) / 32;
  __syncthreads();
  if (threadIdx.x % 32 == 0) {
    red[row][w][0] = m;
    red[row][w][1] = s;
  }
  __syncthreads();
  m = red[row][0][0];
  s = red[row][0][1];
  for (int k = 1; k < ROW_WARPS; k++) {
    if (mode == 0)
      m = fmaxf(m, red[row][k][0]);
    else if (mode == 1)
      s += red[row][k][1];
    else
      combine(m, s, red[row][k][0], red[row][k][1]);
  }
#endif
}

// The UNROLL vectors of a row this thread reads at step i0 (ROW_THREADS vectors apart), all
// loads issued before any is used; those past the row's nv vectors are left alone.
__device__ __forceinline__ void load(vec_t (&buf)[UNROLL], const vec_t *xr, int i0, int nv) {
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
    if (i0 + u * ROW_THREADS < nv) buf[u] = xr[i0 + u * ROW_THREADS];
}

extern "C" __global__ void __launch_bounds__(THREADS)
    softmax_rows(const elem *x, elem *y, int rows, int cols) {
  __shared__ float red[RPB][ROW_WARPS][2];
  const int r = blockIdx.x * RPB + threadIdx.x / ROW_THREADS, t = threadIdx.x % ROW_THREADS;
  const bool live = r < rows;  // every thread takes part in the block's barriers
  const vec_t *xr = (const vec_t *)(x + (size_t)(live ? r : 0) * cols);
  vec_t *yr = (vec_t *)(y + (size_t)(live ? r : 0) * cols);
  const int nv = live ? cols / VEC : 0;  // vectors in the row (COLS % VEC == 0)
  float m = NEG_INF, s = 0.f;
  for (int i0 = t; i0 < nv; i0 += ROW_THREADS * UNROLL) {
    vec_t buf[UNROLL];
    load(buf, xr, i0, nv);
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
      if (i0 + u * ROW_THREADS < nv)
#pragma unroll
        for (int k = 0; k < VEC; k++) {
          float v = to_float(buf[u].v[k]);
#if ONLINE
          if (v > m) {
            s = s * __expf(m - v) + 1.f;
            m = v;
          } else {
            s += __expf(v - m);
          }
#else
          m = fmaxf(m, v);
#endif
        }
  }
#if ONLINE
  row_reduce(m, s, 2, red);
#else
  row_reduce(m, s, 0, red);
  for (int i0 = t; i0 < nv; i0 += ROW_THREADS * UNROLL) {
    vec_t buf[UNROLL];
    load(buf, xr, i0, nv);
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
      if (i0 + u * ROW_THREADS < nv)
#pragma unroll
        for (int k = 0; k < VEC; k++) s += __expf(to_float(buf[u].v[k]) - m);
  }
  row_reduce(m, s, 1, red);
#endif
  const float inv = 1.f / s;
  for (int i0 = t; i0 < nv; i0 += ROW_THREADS * UNROLL) {
    vec_t buf[UNROLL];
    load(buf, xr, i0, nv);
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
      if (i0 + u * ROW_THREADS < nv) {
        vec_t o;
#pragma unroll
        for (int k = 0; k < VEC; k++) o.v[k] = from_float(__expf(to_float(buf[u].v[k]) - m) * inv);
        yr[i0 + u * ROW_THREADS] = o;
      }
  }
}
