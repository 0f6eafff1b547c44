// gemm_mma.cu — tensor-core GEMM with mma.sync, ldmatrix and a multi-stage cp.async pipeline.
//
// C[b] = A[b] * B[b] for b < BATCH, fp32 accumulation and fp32 output (the gemm family ABI, see
// kernels/gemm.h).  A is M x K row-major; B is K x N row-major (B_COL == 0, layout "nn") or
// stored N x K row-major (B_COL == 1, layout "nt", the linear-layer weight).  Inputs are f16 or
// bf16 (mma.m16n8k16) or f32 rounded to tf32 (mma.m16n8k8, cvt.rna).  Any M, N, K: when the
// rows are 16-byte aligned, tiles come in by cp.async with zero fill past the edges; otherwise
// an element-wise path loads them.  SPLIT_K > 1 splits the K tiles over gridDim.z and adds the
// partial products with atomics into an output the launcher zeroed.
//
// Parameters (#defines from the manifest): BLOCK_M, BLOCK_N, BLOCK_K, WARPS_M, WARPS_N,
// STAGES, SPLIT_K, SWIZZLE (tile rows per L2 group), THREADS, B_COL (0: B is K x N, 1: B is
// stored N x K) and the prefix's RT_DTYPE_<dtype>.  Launch: grid (tiles_m*tiles_n, 1, SPLIT_K*BATCH), block THREADS, dynamic
// shared memory STAGES*(A tile + B tile) with the padded strides below (= the manifest's SMEM).
#include "gemm_index.h"

#define CH (16 / ES)       // elements per 16-byte chunk
#define KSTEP (32 / ES)    // K of one mma: 16 (f16/bf16) or 8 (tf32)
#define A_LD (BLOCK_K + 16 / ES)  // +16 bytes: ldmatrix rows hit distinct banks
#if B_COL
#define B_LD (BLOCK_K + 16 / ES)
#define B_TILE (BLOCK_N * B_LD)
#else
#define B_LD (BLOCK_N + 8)
#define B_TILE (BLOCK_K * B_LD)
#endif
#define A_TILE (BLOCK_M * A_LD)
#define WTM (BLOCK_M / WARPS_M)
#define WTN (BLOCK_N / WARPS_N)
#define MI (WTM / 16)
#define NI (WTN / 8)

static_assert(THREADS == WARPS_M * WARPS_N * 32, "THREADS must be WARPS_M*WARPS_N*32");
static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile must be a multiple of 16x16");
static_assert(BLOCK_K % 16 == 0, "BLOCK_K must be a multiple of 16");
static_assert(STAGES >= 2, "STAGES must be at least 2");

__device__ __forceinline__ unsigned smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, bool pred) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldsm_x4(unsigned r[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_trans(unsigned r[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ unsigned to_tf32(unsigned x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
  return r;
}

__device__ __forceinline__ void mma(float c[4], const unsigned a[4], const unsigned b[2]) {
#if DTYPE_CODE == 0
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
#elif DTYPE_CODE == 1
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
#else
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
#endif
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Loads K tile `kt` into one pipeline stage.  `vec` selects the cp.async path (rows 16-byte
// aligned, so every 16-byte chunk is wholly inside or wholly outside the matrix).
__device__ __forceinline__ void load_tile(const elem_t *__restrict__ A,
                                          const elem_t *__restrict__ B, elem_t *sA, elem_t *sB,
                                          int m0, int n0, int kt, int M, int N, int K, bool vec,
                                          int tid) {
  const int k0 = kt * BLOCK_K;
  if (vec) {
    const unsigned a_base = smem_u32(sA), b_base = smem_u32(sB);
#pragma unroll
    for (int c = tid; c < BLOCK_M * (BLOCK_K / CH); c += THREADS) {
      int r = c / (BLOCK_K / CH), kc = (c % (BLOCK_K / CH)) * CH;
      bool ok = m0 + r < M && k0 + kc < K;
      const elem_t *src = ok ? A + (long long)(m0 + r) * K + (k0 + kc) : A;
      cp_async16(a_base + (r * A_LD + kc) * ES, src, ok);
    }
#if B_COL
#pragma unroll
    for (int c = tid; c < BLOCK_N * (BLOCK_K / CH); c += THREADS) {
      int r = c / (BLOCK_K / CH), kc = (c % (BLOCK_K / CH)) * CH;
      bool ok = n0 + r < N && k0 + kc < K;
      const elem_t *src = ok ? B + (long long)(n0 + r) * K + (k0 + kc) : B;
      cp_async16(b_base + (r * B_LD + kc) * ES, src, ok);
    }
#else
#pragma unroll
    for (int c = tid; c < BLOCK_K * (BLOCK_N / CH); c += THREADS) {
      int r = c / (BLOCK_N / CH), nc = (c % (BLOCK_N / CH)) * CH;
      bool ok = k0 + r < K && n0 + nc < N;
      const elem_t *src = ok ? B + (long long)(k0 + r) * N + (n0 + nc) : B;
      cp_async16(b_base + (r * B_LD + nc) * ES, src, ok);
    }
#endif
  } else {
    for (int e = tid; e < BLOCK_M * BLOCK_K; e += THREADS) {
      int r = e / BLOCK_K, k = e % BLOCK_K;
      bool ok = m0 + r < M && k0 + k < K;
      sA[r * A_LD + k] = ok ? A[(long long)(m0 + r) * K + (k0 + k)] : (elem_t)0;
    }
#if B_COL
    for (int e = tid; e < BLOCK_N * BLOCK_K; e += THREADS) {
      int r = e / BLOCK_K, k = e % BLOCK_K;
      bool ok = n0 + r < N && k0 + k < K;
      sB[r * B_LD + k] = ok ? B[(long long)(n0 + r) * K + (k0 + k)] : (elem_t)0;
    }
#else
    for (int e = tid; e < BLOCK_K * BLOCK_N; e += THREADS) {
      int r = e / BLOCK_N, n = e % BLOCK_N;
      bool ok = k0 + r < K && n0 + n < N;
      sB[r * B_LD + n] = ok ? B[(long long)(k0 + r) * N + (n0 + n)] : (elem_t)0;
    }
#endif
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_mma(const void *__restrict__ A_, const void *__restrict__ B_, float *__restrict__ C,
         int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;

  int tile_m, tile_n;
  gemm_swizzle(blockIdx.x, gemm_ceil_div(M, BLOCK_M), gemm_ceil_div(N, BLOCK_N), SWIZZLE,
               &tile_m, &tile_n);
  const int batch = blockIdx.z / SPLIT_K, slice = blockIdx.z % SPLIT_K;
  const elem_t *A = (const elem_t *)A_ + (long long)batch * M * K;
  const elem_t *B = (const elem_t *)B_ + (long long)batch * K * N;
  C += (long long)batch * M * N;
  const int m0 = tile_m * BLOCK_M, n0 = tile_n * BLOCK_N;

  int kt_begin, kt_end;
  gemm_split_range(gemm_ceil_div(K, BLOCK_K), SPLIT_K, slice, &kt_begin, &kt_end);
  const int nk = kt_end - kt_begin;
#if SPLIT_K > 1
  if (nk <= 0) return;  // an empty slice adds nothing
#endif
  // cp.async needs 16-byte aligned rows: K (and N for row-major B) multiples of a chunk.
#if B_COL
  const bool vec = K % CH == 0;
#else
  const bool vec = K % CH == 0 && N % CH == 0;
#endif

  elem_t *sA0 = (elem_t *)smem;
  elem_t *sB0 = sA0 + STAGES * A_TILE;

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < nk) load_tile(A, B, sA0 + s * A_TILE, sB0 + s * B_TILE, m0, n0, kt_begin + s, M, N, K, vec, tid);
    cp_async_commit();
  }

  for (int i = 0; i < nk; ++i) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    {  // refill the stage consumed in the previous iteration
      int next = i + STAGES - 1;
      int st = next % STAGES;
      if (next < nk)
        load_tile(A, B, sA0 + st * A_TILE, sB0 + st * B_TILE, m0, n0, kt_begin + next, M, N, K, vec, tid);
      cp_async_commit();
    }
    const int st = i % STAGES;
    const elem_t *sA = sA0 + st * A_TILE;
    const elem_t *sB = sB0 + st * B_TILE;
    const unsigned a_base = smem_u32(sA);
    const unsigned b_base = smem_u32(sB);
#pragma unroll
    for (int ks = 0; ks < BLOCK_K / KSTEP; ++ks) {
      unsigned af[MI][4], bf[NI][2];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        ldsm_x4(af[mi], a_base + gemm_ldsm_a_offset(warp_m * WTM + mi * 16, ks, lane, A_LD * ES));
      }
#pragma unroll
      for (int nj = 0; nj < NI / 2; ++nj) {
#if B_COL
        unsigned r[4];
        ldsm_x4(r, b_base + gemm_ldsm_bcol_offset(warp_n * WTN + nj * 16, ks, lane, B_LD * ES));
        bf[2 * nj][0] = r[0]; bf[2 * nj][1] = r[1];
        bf[2 * nj + 1][0] = r[2]; bf[2 * nj + 1][1] = r[3];
#elif ES == 2
        unsigned r[4];
        ldsm_x4_trans(r, b_base + gemm_ldsm_brow_offset(warp_n * WTN + nj * 16, ks, KSTEP, lane, B_LD * ES, ES));
        bf[2 * nj][0] = r[0]; bf[2 * nj][1] = r[1];
        bf[2 * nj + 1][0] = r[2]; bf[2 * nj + 1][1] = r[3];
#else
        // tf32 with N-contiguous B: ldmatrix cannot transpose 32-bit elements; b0 = (k tig,
        // n g), b1 = (k tig+4, n g) read directly (B_LD = BLOCK_N+8 keeps the banks distinct).
#pragma unroll
        for (int t = 0; t < 2; ++t) {
          const int n0 = warp_n * WTN + (2 * nj + t) * 8;
          bf[2 * nj + t][0] = sB[gemm_tf32_brow_index(n0, ks, lane, 0, B_LD)];
          bf[2 * nj + t][1] = sB[gemm_tf32_brow_index(n0, ks, lane, 1, B_LD)];
        }
#endif
      }
#if DTYPE_CODE == 0
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int e = 0; e < 4; ++e) af[mi][e] = to_tf32(af[mi][e]);
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        bf[ni][0] = to_tf32(bf[ni][0]);
        bf[ni][1] = to_tf32(bf[ni][1]);
      }
#endif
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) mma(acc[mi][ni], af[mi], bf[ni]);
    }
  }
  cp_async_wait<0>();

  // Epilogue: accumulator pairs (e, e+1) are neighbours in one row.
  const bool pair_ok = N % 2 == 0;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int e = 0; e < 4; e += 2) {
        int row = gemm_mma_out_row(tile_m, BLOCK_M, warp_m, WTM, mi, lane, e);
        int col = gemm_mma_out_col(tile_n, BLOCK_N, warp_n, WTN, ni, lane, e);
        if (row >= M) continue;
        float *dst = C + (long long)row * N + col;
#if SPLIT_K == 1
        if (pair_ok && col + 1 < N) {
          *(float2 *)dst = make_float2(acc[mi][ni][e], acc[mi][ni][e + 1]);
        } else {
          if (col < N) dst[0] = acc[mi][ni][e];
          if (col + 1 < N) dst[1] = acc[mi][ni][e + 1];
        }
#else
        (void)pair_ok;
        if (col < N) atomicAdd(dst, acc[mi][ni][e]);
        if (col + 1 < N) atomicAdd(dst + 1, acc[mi][ni][e + 1]);
#endif
      }
}
