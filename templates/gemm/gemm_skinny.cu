// gemm_skinny.cu — GEMM for a few rows on the CUDA cores: the decode-time linear layer, M <= 16
// tokens against a weight stored N x K (layout "nt"), whose time is reading B once.
//
// C[b] = A[b] * B[b] for b < BATCH, fp32 accumulation and fp32 output (the gemm family ABI, see
// kernels/gemm.h), or with EPI 1 the fused epilogue of gemm_epilogue.h (its steps are the
// argument's run-time flags; OUT_TYPE the output's type).  A is M x K row-major; B is stored
// N x K row-major (B_COL == 1).  Inputs f32, f16, bf16 or fp8 (e4m3, e5m2; B's type B_E5M2;
// sm_89 and later: e4m3 pairs become f16 pairs with cvt.rn.f16x2.e4m3x2, an e5m2 byte is the
// top half of the f16 of the same value), fp8 scales applied once to each sum.  Each warp owns COLS columns of C (rows of B) and walks them along K with 16-byte
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
#include "gemm_epilogue.h"
#include "gemm_index.h"
#include "rt_ptx.h"

#define VEC (16 / ES)  // elements per 16-byte load
#ifndef EPI
#define EPI 0
#endif
#ifndef OUT_TYPE
#define OUT_TYPE 0
#endif
#ifndef B_E5M2
#define B_E5M2 0
#endif
#define FP8    (DTYPE_CODE == 4 || DTYPE_CODE == 5)
#define A_E5M2 (DTYPE_CODE == 5)
static_assert(EPI || (!FP8 && OUT_TYPE == 0), "fp8 inputs and a 16-bit output need EPI 1");
static_assert(SPLIT_K == 1 || OUT_TYPE == 0, "split-K adds fp32 partial sums");

static_assert(B_COL == 1, "gemm_skinny reads B stored N x K (layout nt)");
static_assert(THREADS == 32 * WARPS, "THREADS must be 32*WARPS");

__device__ __forceinline__ float f16_to_f32(unsigned short h) { return ptx_f16_to_f32(h); }

#if FP8
// Two fp8 values (the low and high byte of b) as an f16x2 word, low value in the low half.
__device__ __forceinline__ unsigned fp8x2_to_f16x2(unsigned short b, bool e5m2) {
  unsigned r;
  if (e5m2) {
    r = ((unsigned)(b & 0xffu) << 8) | ((unsigned)(b & 0xff00u) << 16);  // e5m2 = f16's top byte
  } else {
    r = ptx_e4m3x2_to_f16x2(b);
  }
  return r;
}
// The four fp8 values of a 32-bit word as floats.
__device__ __forceinline__ void unpack_word(unsigned w, float *f, bool e5m2) {
  const unsigned lo = fp8x2_to_f16x2((unsigned short)(w & 0xffffu), e5m2),
                 hi = fp8x2_to_f16x2((unsigned short)(w >> 16), e5m2);
  f[0] = f16_to_f32((unsigned short)(lo & 0xffffu));
  f[1] = f16_to_f32((unsigned short)(lo >> 16));
  f[2] = f16_to_f32((unsigned short)(hi & 0xffffu));
  f[3] = f16_to_f32((unsigned short)(hi >> 16));
}
__device__ __forceinline__ float to_f32(elem_t x, bool e5m2) {
  return f16_to_f32((unsigned short)(fp8x2_to_f16x2((unsigned short)x, e5m2) & 0xffffu));
}
#else
__device__ __forceinline__ float to_f32(elem_t x, bool = false) {
#if DTYPE_CODE == 0
  return __uint_as_float(x);
#elif DTYPE_CODE == 2
  return __uint_as_float((unsigned)x << 16);
#else
  return f16_to_f32(x);
#endif
}

// The VEC/4 elements of a 32-bit word as floats.
__device__ __forceinline__ void unpack_word(unsigned w, float *f, bool = false) {
#if DTYPE_CODE == 0
  f[0] = __uint_as_float(w);
#else
  f[0] = to_f32((elem_t)(w & 0xffffu));
  f[1] = to_f32((elem_t)(w >> 16));
#endif
}
#endif
// The VEC elements of a 16-byte word as floats (e5m2: the word holds e5m2 values, fp8 only).
__device__ __forceinline__ void unpack(const uint4 &v, float *f, bool e5m2) {
  unpack_word(v.x, f, e5m2);
  unpack_word(v.y, f + VEC / 4, e5m2);
  unpack_word(v.z, f + 2 * VEC / 4, e5m2);
  unpack_word(v.w, f + 3 * VEC / 4, e5m2);
}

// Output elements (OUT_TYPE 0 fp32, 1 f16, 2 bf16) and the epilogue's loads.
#if OUT_TYPE == 0
typedef float out_t;
__device__ __forceinline__ float ld_out(const float *p) { return *p; }
__device__ __forceinline__ void st_out(float *p, float v) { *p = v; }
#else
typedef unsigned short out_t;
__device__ __forceinline__ float ld_out(const unsigned short *p) {
#if OUT_TYPE == 2
  return __uint_as_float((unsigned)*p << 16);
#else
  return f16_to_f32(*p);
#endif
}
__device__ __forceinline__ void st_out(unsigned short *p, float v) {
  *p = OUT_TYPE == 2 ? ptx_f32_to_bf16(v) : ptx_f32_to_f16(v);
}
#endif

// B is streamed: read once, kept out of L1 so that A stays there (rt_ptx.h's ptx_ld_stream16).

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_skinny(const void *__restrict__ A_, const void *__restrict__ B_, out_t *__restrict__ C,
                int M, int N, int K
#if EPI
                ,
                const gemm_epi_args epi
#endif
    ) {
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
          b[u][c] = (k < k1 && n0 + c < N) ? ptx_ld_stream16(B + (long long)(n0 + c) * K + k)
                                           : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int k = gemm_skinny_k(k0, k1, lane, VEC, i + u);
        if (k >= k1) break;
        float bf[COLS][VEC];
#pragma unroll
        for (int c = 0; c < COLS; ++c) unpack(b[u][c], bf[c], B_E5M2);
#pragma unroll
        for (int m = 0; m < ROWS; ++m) {
          if (m0 + m >= M) break;
          float af[VEC];
          unpack(__ldg((const uint4 *)(A + (long long)(m0 + m) * K + k)), af, A_E5M2);
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
        const float bv = to_f32(B[(long long)(n0 + c) * K + k], B_E5M2);
#pragma unroll
        for (int m = 0; m < ROWS; ++m)
          if (m0 + m < M)
            acc[m][c] = fmaf(to_f32(A[(long long)(m0 + m) * K + k], A_E5M2), bv, acc[m][c]);
      }
    }
  }

  // The warp's sum of each element, then one lane per element writes it (through the epilogue;
  // with split-K only slice 0 adds the bias and the residual).
#if EPI
  const bool vscale = (epi.flags & GEMM_EPI_VSCALE) != 0;  // scales per row of A, column of B
  const float scale = vscale ? epi.alpha
                             : epi.alpha * (epi.scale_a ? *(const float *)epi.scale_a : 1.f) *
                                   (epi.scale_b ? *(const float *)epi.scale_b : 1.f);
  const unsigned flags =
      slice == 0 ? epi.flags : epi.flags & ~(unsigned)(GEMM_EPI_BIAS | GEMM_EPI_RES);
  const int act = (int)(epi.flags >> GEMM_EPI_ACT_SHIFT) & 3;
#endif
#pragma unroll
  for (int m = 0; m < ROWS; ++m)
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
      float v = acc[m][c];
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane == (m * COLS + c) % 32 && m0 + m < M && n0 + c < N) {
        const long long at = (long long)(m0 + m) * N + n0 + c;
        out_t *dst = C + at;
#if EPI
        const long long bat = (long long)batch * M * N + at;
        const float sv = vscale ? scale * ((const float *)epi.scale_a)[m0 + m] *
                                      ((const float *)epi.scale_b)[n0 + c]
                                : scale;
        v = gemm_epi_apply(
            flags, act, sv, epi.beta, v,
            (flags & GEMM_EPI_BETA) ? ld_out((const out_t *)epi.c + bat) : 0.f,
            (flags & GEMM_EPI_BIAS) ? ld_out((const out_t *)epi.bias + n0 + c) : 0.f,
            (flags & GEMM_EPI_RES) ? ld_out((const out_t *)epi.residual + bat) : 0.f);
#endif
#if SPLIT_K == 1
        st_out(dst, v);
#else
        atomicAdd(dst, v);
#endif
      }
    }
}
