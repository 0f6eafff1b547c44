// gemm_skinny.cu — GEMM for a few rows on the CUDA cores: the decode-time linear layer, M <= 16
// tokens against a weight stored N x K (layout "nt"), whose time is reading B once.
//
// C[b] = A[b] * B[b] for b < BATCH, fp32 accumulation and fp32 output (the gemm family ABI, see
// kernels/gemm.h).  A is M x K row-major; B is stored N x K row-major (B_COL == 1).  Inputs f32,
// f16 or bf16.  Each warp owns COLS columns of C (rows of B) and walks them along K with 16-byte
// loads that bypass L1 (B is read once), UNROLL chunks per column in flight; every lane keeps
// ROWS x COLS fp32 partial sums, reading the block's ROWS rows of A through L1 (small, shared by
// every warp).  The partial sums of a warp meet by shuffles and one lane per element stores it,
// or adds it with an atomic when SPLIT_K > 1 splits K over gridDim.z (the launcher zeroes the
// output).  Any M, N, K: a K whose rows are not 16-byte aligned takes an element-wise path.
//
// Parameters (#defines from the manifest): ROWS (rows of C per block), COLS (columns per warp),
// WARPS, UNROLL, SPLIT_K, B_COL (1), THREADS = 32*WARPS and the prefix's RT_DTYPE_<dtype>.
// Launch: grid (ceil(M/ROWS) * ceil(N/(WARPS*COLS)), 1, SPLIT_K*BATCH), block THREADS, no
// shared memory.  Placement and K ranges come from gemm_index.h (gemm_skinny_*).
#include "gemm_index.h"

#define VEC (16 / ES)  // elements per 16-byte load

static_assert(B_COL == 1, "gemm_skinny reads B stored N x K (layout nt)");
static_assert(THREADS == 32 * WARPS, "THREADS must be 32*WARPS");

__device__ __forceinline__ float to_f32(elem_t x) {
#if DTYPE_CODE == 0
  return __uint_as_float(x);
#elif DTYPE_CODE == 2
  return __uint_as_float((unsigned)x << 16);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x));
  return f;
#endif
}

// The VEC elements of a 16-byte word as floats.
__device__ __forceinline__ void unpack_word(unsigned w, float *f) {
#if DTYPE_CODE == 0
  f[0] = __uint_as_float(w);
#else
  f[0] = to_f32((elem_t)(w & 0xffffu));
  f[1] = to_f32((elem_t)(w >> 16));
#endif
}
__device__ __forceinline__ void unpack(const uint4 &v, float *f) {
  unpack_word(v.x, f);
  unpack_word(v.y, f + VEC / 4);
  unpack_word(v.z, f + 2 * VEC / 4);
  unpack_word(v.w, f + 3 * VEC / 4);
}

// B is streamed: read once, kept out of L1 so that A stays there.
__device__ __forceinline__ uint4 load_stream(const elem_t *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_skinny(const void *__restrict__ A_, const void *__restrict__ B_, float *__restrict__ C,
            int M, int N, int K) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int row_block, col_block;
  gemm_skinny_tile(blockIdx.x, gemm_ceil_div(N, WARPS * COLS), &row_block, &col_block);
  const int batch = blockIdx.z / SPLIT_K, slice = blockIdx.z % SPLIT_K;
  const elem_t *A = (const elem_t *)A_ + (long long)batch * M * K;
  const elem_t *B = (const elem_t *)B_ + (long long)batch * N * K;
  C += (long long)batch * M * N;
  const int m0 = row_block * ROWS, n0 = col_block * WARPS * COLS + warp * COLS;
  int k0, k1;
  gemm_skinny_krange(K, VEC, SPLIT_K, slice, &k0, &k1);

  float acc[ROWS][COLS];
#pragma unroll
  for (int m = 0; m < ROWS; ++m)
#pragma unroll
    for (int c = 0; c < COLS; ++c) acc[m][c] = 0.f;

  if (K % VEC == 0) {  // every row of A and B starts on a 16-byte boundary
    for (int i = 0;; i += UNROLL) {
      if (gemm_skinny_k(k0, k1, lane, VEC, i) >= k1) break;
      uint4 b[UNROLL][COLS];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int k = gemm_skinny_k(k0, k1, lane, VEC, i + u);
#pragma unroll
        for (int c = 0; c < COLS; ++c)
          b[u][c] = (k < k1 && n0 + c < N) ? load_stream(B + (long long)(n0 + c) * K + k)
                                           : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int k = gemm_skinny_k(k0, k1, lane, VEC, i + u);
        if (k >= k1) break;
        float bf[COLS][VEC];
#pragma unroll
        for (int c = 0; c < COLS; ++c) unpack(b[u][c], bf[c]);
#pragma unroll
        for (int m = 0; m < ROWS; ++m) {
          if (m0 + m >= M) break;
          float af[VEC];
          unpack(__ldg((const uint4 *)(A + (long long)(m0 + m) * K + k)), af);
#pragma unroll
          for (int c = 0; c < COLS; ++c)
#pragma unroll
            for (int v = 0; v < VEC; ++v) acc[m][c] = fmaf(af[v], bf[c][v], acc[m][c]);
        }
      }
    }
  } else {  // element by element, lanes striding over K
    for (int k = k0 + lane; k < k1; k += 32) {
#pragma unroll
      for (int c = 0; c < COLS; ++c) {
        if (n0 + c >= N) break;
        const float bv = to_f32(B[(long long)(n0 + c) * K + k]);
#pragma unroll
        for (int m = 0; m < ROWS; ++m)
          if (m0 + m < M) acc[m][c] = fmaf(to_f32(A[(long long)(m0 + m) * K + k]), bv, acc[m][c]);
      }
    }
  }

  // The warp's sum of each element, then one lane per element writes it.
#pragma unroll
  for (int m = 0; m < ROWS; ++m)
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
      float v = acc[m][c];
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane == (m * COLS + c) % 32 && m0 + m < M && n0 + c < N) {
        float *dst = C + (long long)(m0 + m) * N + n0 + c;
#if SPLIT_K == 1
        *dst = v;
#else
        atomicAdd(dst, v);
#endif
      }
    }
}
