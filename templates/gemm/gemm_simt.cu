// gemm_simt.cu — fp32 GEMM on the CUDA cores: block tile, per-thread micro-tile, vector loads,
// double-buffered shared memory with register staging (one barrier per K tile).
//
// C[b] = A[b] * B[b] in fp32 (the gemm family ABI, kernels/gemm.h).  A is M x K row-major; B is
// K x N row-major (B_COL == 0, layout "nn") or stored N x K row-major (B_COL == 1, "nt").  Any
// M, N, K: vector loads are used when rows are VEC-aligned, scalar guarded loads otherwise;
// stores are guarded.
//
// Parameters: BLOCK_M, BLOCK_N, BLOCK_K, THREAD_M, THREAD_N (the micro-tile), VEC (global and
// shared vector width, 1, 2 or 4), SWIZZLE, THREADS = (BLOCK_M/THREAD_M)*(BLOCK_N/THREAD_N),
// B_COL (0: B is K x N, 1: stored N x K).  Launch: grid (tiles_m*tiles_n, 1, BATCH), block THREADS, static shared memory only.
#include "gemm_index.h"

#define TN_THREADS (BLOCK_N / THREAD_N)  // threads along N
#define TM_THREADS (BLOCK_M / THREAD_M)
#define A_PAD      4  // As is stored K-major: [BLOCK_K][BLOCK_M + A_PAD]
#define A_LOADS    ((BLOCK_M * BLOCK_K / VEC + THREADS - 1) / THREADS)
#define B_LOADS    ((BLOCK_N * BLOCK_K / VEC + THREADS - 1) / THREADS)

static_assert(THREADS == TM_THREADS * TN_THREADS,
              "THREADS must be (BLOCK_M/THREAD_M)*(BLOCK_N/THREAD_N)");
static_assert(THREAD_N % VEC == 0 && BLOCK_K % VEC == 0 && BLOCK_N % VEC == 0,
              "VEC must divide THREAD_N, BLOCK_K and BLOCK_N");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");

template <int V>
struct vec_t;
template <>
struct vec_t<1> {
  typedef float type;
};
template <>
struct vec_t<2> {
  typedef float2 type;
};
template <>
struct vec_t<4> {
  typedef float4 type;
};
typedef vec_t<VEC>::type fvec;

// Packs VEC floats from registers into a vector (no type punning of register arrays).
__device__ __forceinline__ fvec pack(const float *r) {
  fvec v;
#pragma unroll
  for (int i = 0; i < VEC; ++i) ((float *)&v)[i] = r[i];
  return v;
}

__device__ __forceinline__ void vload(float *dst, const float *src) {
  fvec v = *(const fvec *)src;
  const float *p = (const float *)&v;
#pragma unroll
  for (int i = 0; i < VEC; ++i) dst[i] = p[i];
}

// Reads the VEC elements of load slot `c` of the A tile into `r` (zero outside the matrix).
// Slot c covers row c / (BLOCK_K/VEC), k (c % (BLOCK_K/VEC))*VEC .. +VEC.
__device__ __forceinline__ void fetch_a(float *r, const float *A, int c, int m0, int k0, int M,
                                        int K, bool vec) {
  const int row = c / (BLOCK_K / VEC), k = (c % (BLOCK_K / VEC)) * VEC;
  const int gm = m0 + row, gk = k0 + k;
  if (vec && gm < M && gk + VEC <= K) {
    vload(r, A + (long long)gm * K + gk);
  } else {
#pragma unroll
    for (int v = 0; v < VEC; ++v)
      r[v] = (gm < M && gk + v < K) ? A[(long long)gm * K + gk + v] : 0.f;
  }
}

#if B_COL
// Slot c covers n row c / (BLOCK_K/VEC), k .. +VEC of the N x K storage.
__device__ __forceinline__ void fetch_b(float *r, const float *B, int c, int n0, int k0, int N,
                                        int K, bool vec) {
  const int row = c / (BLOCK_K / VEC), k = (c % (BLOCK_K / VEC)) * VEC;
  const int gn = n0 + row, gk = k0 + k;
  if (vec && gn < N && gk + VEC <= K) {
    vload(r, B + (long long)gn * K + gk);
  } else {
#pragma unroll
    for (int v = 0; v < VEC; ++v)
      r[v] = (gn < N && gk + v < K) ? B[(long long)gn * K + gk + v] : 0.f;
  }
}
#else
// Slot c covers k row c / (BLOCK_N/VEC), n .. +VEC of the K x N storage.
__device__ __forceinline__ void fetch_b(float *r, const float *B, int c, int n0, int k0, int N,
                                        int K, bool vec) {
  const int kr = c / (BLOCK_N / VEC), n = (c % (BLOCK_N / VEC)) * VEC;
  const int gk = k0 + kr, gn = n0 + n;
  if (vec && gk < K && gn + VEC <= N) {
    vload(r, B + (long long)gk * N + gn);
  } else {
#pragma unroll
    for (int v = 0; v < VEC; ++v)
      r[v] = (gk < K && gn + v < N) ? B[(long long)gk * N + gn + v] : 0.f;
  }
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_simt(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
              int M, int N, int K) {
  __shared__ __align__(16) float As[2][BLOCK_K][BLOCK_M + A_PAD];
  __shared__ __align__(16) float Bs[2][BLOCK_K][BLOCK_N];
  const int tid = threadIdx.x;
  const int tx = tid % TN_THREADS, ty = tid / TN_THREADS;
  int tile_m, tile_n;
  gemm_swizzle(blockIdx.x, gemm_ceil_div(M, BLOCK_M), gemm_ceil_div(N, BLOCK_N), SWIZZLE, &tile_m,
               &tile_n);
  const int batch = blockIdx.z;
  A += (long long)batch * M * K;
  B += (long long)batch * K * N;
  C += (long long)batch * M * N;
  const int m0 = tile_m * BLOCK_M, n0 = tile_n * BLOCK_N;
  const bool vec_a = K % VEC == 0;
#if B_COL
  const bool vec_b = K % VEC == 0;
#else
  const bool vec_b = N % VEC == 0;
#endif

  float ra[A_LOADS][VEC], rb[B_LOADS][VEC];
  float acc[THREAD_M][THREAD_N];
#pragma unroll
  for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
    for (int j = 0; j < THREAD_N; ++j) acc[i][j] = 0.f;

  const int nk = gemm_ceil_div(K, BLOCK_K);

  // fetch: global -> registers; stash: registers -> shared buffer `buf`
#define FETCH(k0)                                                                   \
  do {                                                                              \
    _Pragma("unroll") for (int l = 0; l < A_LOADS; ++l) {                           \
      int c = tid + l * THREADS;                                                    \
      if (c < BLOCK_M * BLOCK_K / VEC) fetch_a(ra[l], A, c, m0, (k0), M, K, vec_a); \
    }                                                                               \
    _Pragma("unroll") for (int l = 0; l < B_LOADS; ++l) {                           \
      int c = tid + l * THREADS;                                                    \
      if (c < BLOCK_N * BLOCK_K / VEC) fetch_b(rb[l], B, c, n0, (k0), N, K, vec_b); \
    }                                                                               \
  } while (0)

  auto stash = [&](int buf) {
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
      int c = tid + l * THREADS;
      if (c < BLOCK_M * BLOCK_K / VEC) {
        int row = c / (BLOCK_K / VEC), k = (c % (BLOCK_K / VEC)) * VEC;
#pragma unroll
        for (int v = 0; v < VEC; ++v) As[buf][k + v][row] = ra[l][v];
      }
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      int c = tid + l * THREADS;
      if (c < BLOCK_N * BLOCK_K / VEC) {
#if B_COL
        int row = c / (BLOCK_K / VEC), k = (c % (BLOCK_K / VEC)) * VEC;
#pragma unroll
        for (int v = 0; v < VEC; ++v) Bs[buf][k + v][row] = rb[l][v];
#else
        int kr = c / (BLOCK_N / VEC), n = (c % (BLOCK_N / VEC)) * VEC;
        *(fvec *)&Bs[buf][kr][n] = pack(rb[l]);
#endif
      }
    }
  };

  FETCH(0);
  stash(0);
  __syncthreads();

  for (int kt = 0; kt < nk; ++kt) {
    const int buf = kt % 2;
    if (kt + 1 < nk) FETCH((kt + 1) * BLOCK_K);
#pragma unroll
    for (int k = 0; k < BLOCK_K; ++k) {
      float a[THREAD_M], b[THREAD_N];
#pragma unroll
      for (int i = 0; i < THREAD_M; ++i) a[i] = As[buf][k][ty * THREAD_M + i];
#pragma unroll
      for (int j = 0; j < THREAD_N / VEC; ++j) {
        fvec v = *(const fvec *)&Bs[buf][k][j * TN_THREADS * VEC + tx * VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) b[j * VEC + e] = ((const float *)&v)[e];
      }
#pragma unroll
      for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (int j = 0; j < THREAD_N; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (kt + 1 < nk) stash(buf ^ 1);
    __syncthreads();
  }
#undef FETCH

  const bool vec_c = N % VEC == 0;
#pragma unroll
  for (int i = 0; i < THREAD_M; ++i) {
    const int row = gemm_simt_row(tile_m, BLOCK_M, ty, THREAD_M, i);
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < THREAD_N / VEC; ++j) {
      const int col = gemm_simt_col(tile_n, BLOCK_N, tx, TN_THREADS, VEC, j, 0);
      float *dst = C + (long long)row * N + col;
      if (vec_c && col + VEC <= N) {
        *(fvec *)dst = pack(&acc[i][j * VEC]);
      } else {
#pragma unroll
        for (int e = 0; e < VEC; ++e)
          if (col + e < N) dst[e] = acc[i][j * VEC + e];
      }
    }
  }
}
