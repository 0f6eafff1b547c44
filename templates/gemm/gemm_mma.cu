// gemm_mma.cu — tensor-core GEMM with mma.sync, ldmatrix and a multi-stage cp.async pipeline.
//
// C[b] = A[b] * B[b] for b < BATCH, fp32 accumulation and fp32 output (the gemm family ABI, see
// kernels/gemm.h).  A is M x K row-major; B is K x N row-major (B_COL == 0, layout "nn") or
// stored N x K row-major (B_COL == 1, layout "nt", the linear-layer weight).  Inputs are f16 or
// bf16 (mma.m16n8k16) or f32 rounded to tf32 (mma.m16n8k8, cvt).  Any M, N, K: when the rows
// are 16-byte aligned, tiles come in by cp.async with zero fill past the edges, each thread's
// chunk addresses and row masks set up once before the main loop (chunk_plan); otherwise an
// element-wise path loads them.  ldmatrix reads the next K step's fragments while the current
// step's mmas run, across tile boundaries too.  SPLIT_K > 1 splits the K tiles over gridDim.z
// and adds the partial products with atomics into an output the launcher zeroed.
//
// The first H200 runs (bench/results/h200-2026-11-30) measured the earlier form of this loop at
// 4.4 instructions per mma (address arithmetic for every chunk of every tile, recomputed in the
// loop); the cp.async path of this one is 2.3 per mma for 256x128x64 bf16 on sm_90 (298 SASS
// instructions per tile and warp, 128 of them mma), counted in the compiled code, not yet timed.
//
// Parameters (#defines from the manifest): BLOCK_M, BLOCK_N, BLOCK_K, WARPS_M, WARPS_N,
// STAGES, SPLIT_K, SWIZZLE (tile rows per L2 group), THREADS, B_COL (0: B is K x N, 1: B is
// stored N x K) and the prefix's RT_DTYPE_<dtype>.  Launch: grid (tiles_m*tiles_n, 1, SPLIT_K*BATCH), block THREADS, dynamic
// shared memory STAGES*(A tile + B tile) with the padded strides below (= the manifest's SMEM).
#include "gemm_index.h"
#include "rt_ptx.h"

#define CH    (16 / ES)            // elements per 16-byte chunk
#define KSTEP (32 / ES)            // K of one mma: 16 (f16/bf16) or 8 (tf32)
#define A_LD  (BLOCK_K + 16 / ES)  // +16 bytes: ldmatrix rows hit distinct banks
#if B_COL
#define B_LD   (BLOCK_K + 16 / ES)
#define B_TILE (BLOCK_N * B_LD)
#else
#define B_LD   (BLOCK_N + 8)
#define B_TILE (BLOCK_K * B_LD)
#endif
#define A_TILE (BLOCK_M * A_LD)
#define WTM    (BLOCK_M / WARPS_M)
#define WTN    (BLOCK_N / WARPS_N)
#define MI     (WTM / 16)
#define NI     (WTN / 8)

static_assert(THREADS == WARPS_M * WARPS_N * 32, "THREADS must be WARPS_M*WARPS_N*32");
static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile must be a multiple of 16x16");
static_assert(BLOCK_K % 16 == 0, "BLOCK_K must be a multiple of 16");
static_assert(STAGES >= 2, "STAGES must be at least 2");

// f32 -> tf32, rounded to nearest: sm_90 has it as one instruction (cvt.rn, PTX ISA 7.8); before
// that only .rna exists, which compiles to a compare, an add and a mask.
__device__ __forceinline__ unsigned to_tf32(unsigned x) {
#if __CUDA_ARCH__ >= 900
  return ptx_tf32_rn(__uint_as_float(x));
#else
  return ptx_tf32_rna(__uint_as_float(x));
#endif
}

// c += a b for this dtype (rt_ptx.h): m16n8k8 tf32, or m16n8k16 f16 / bf16.
__device__ __forceinline__ void mma(float c[4], const unsigned a[4], const unsigned b[2]) {
#if DTYPE_CODE == 0
  ptx_mma_m16n8k8_tf32(c, a, b[0], b[1]);
#else
  ptx_mma_m16n8k16<DTYPE_CODE == 2>(c, a, b[0], b[1]);
#endif
}

#define KSTEPS (BLOCK_K / KSTEP)
// The fragments of step ks live in buffer ks % 2, and the next tile's step 0 is read into buffer
// KSTEPS % 2 during the last step: that must be buffer 0.
static_assert(KSTEPS % 2 == 0, "BLOCK_K must be an even number of mma K steps");
#define A_CPR (BLOCK_K / CH)  // 16-byte chunks per row of a stage's A tile
#if B_COL
#define B_ROWS BLOCK_N
#define B_CPR  (BLOCK_K / CH)
#else
#define B_ROWS BLOCK_K
#define B_CPR  (BLOCK_N / CH)
#endif
#define A_ITERS (BLOCK_M * A_CPR / THREADS)  // chunks per thread and stage (gemm_load_iters)
#define B_ITERS (B_ROWS * B_CPR / THREADS)
#define A_RSTEP (THREADS / A_CPR)  // rows between a thread's chunks
#define B_RSTEP (THREADS / B_CPR)
static_assert(THREADS % A_CPR == 0 && (BLOCK_M * A_CPR) % THREADS == 0,
              "A tile chunks must split evenly over the threads");
static_assert(THREADS % B_CPR == 0 && (B_ROWS * B_CPR) % THREADS == 0,
              "B tile chunks must split evenly over the threads");
static_assert(A_ITERS <= 32 && B_ITERS <= 32, "row masks hold 32 rows");

// A thread's copy loops are unrolled fully up to 8 chunks of 16-bit elements and by 4 beyond
// that; tf32 tiles are not unrolled.  Further unrolled, they keep every chunk's address live
// and 64x64 warp tiles spill (tf32 ones even by 2, on sm_90); a loop costs a few instructions
// a chunk.
__host__ __device__ constexpr int copy_unroll(int n) { return ES == 2 ? (n <= 8 ? n : 4) : 1; }

// One thread's share of a stage's cp.async loads of one operand: gemm_plan (gemm_index.h, which
// says what each field is) with the source as a pointer and the shared offset in bytes, set up
// once before the main loop and stepped one K tile per load.
struct chunk_plan {
  const elem_t *src;
  long long step;
  unsigned smem;
  unsigned rows_in;
  int k_left;
};

__device__ __forceinline__ chunk_plan to_chunk_plan(const elem_t *X, gemm_plan g) {
  return chunk_plan{X + g.src, g.step, (unsigned)(g.smem * ES), g.rows_in, g.k_left};
}

// Copies the next K tile of a K-contiguous operand (rows along M or N) and steps to the one
// after: chunks past K or on rows outside the matrix are zero-filled, their source pointed at
// the matrix start.
template <int ITERS, int SMEM_STEP>
__device__ __forceinline__ void copy_kmajor(chunk_plan &p, unsigned stage, const elem_t *X) {
  const bool k_in = p.k_left > 0;
  const elem_t *src = p.src;
  constexpr int unroll = copy_unroll(ITERS);
#pragma unroll unroll
  for (int i = 0; i < ITERS; ++i) {
    const bool ok = k_in && (p.rows_in >> i & 1u);
    ptx_cp_async16(stage + p.smem + i * SMEM_STEP, ok ? src : X, ok);
    src += p.step;
  }
  p.src += BLOCK_K;
  p.k_left -= BLOCK_K;
}

#if !B_COL
// Copies the next K tile of B stored K x N (rows along K) and steps to the one after: rows past
// K, or a chunk column past N, are zero-filled.  A tile is B_ITERS steps, so the source pointer
// ends on the next tile's first row.
__device__ __forceinline__ void copy_b_nmajor(chunk_plan &p, unsigned stage, const elem_t *B) {
  constexpr int unroll = copy_unroll(B_ITERS);
#pragma unroll unroll
  for (int i = 0; i < B_ITERS; ++i) {
    const bool ok = p.rows_in != 0 && i * B_RSTEP < p.k_left;
    ptx_cp_async16(stage + p.smem + i * (B_RSTEP * B_LD * ES), ok ? p.src : B, ok);
    p.src += p.step;
  }
  p.k_left -= BLOCK_K;
}
#endif

// Loads K tile `kt` into one pipeline stage.  VEC: by cp.async through the plans (rows 16-byte
// aligned, so every chunk is wholly inside or wholly outside the matrix); otherwise element
// by element.
template <bool VEC>
__device__ __forceinline__ void load_tile(const elem_t *__restrict__ A,
                                          const elem_t *__restrict__ B, chunk_plan &pa,
                                          chunk_plan &pb, elem_t *sA, elem_t *sB, int m0, int n0,
                                          int kt, int M, int N, int K, int tid) {
  const int k0 = kt * BLOCK_K;
  if (VEC) {
    copy_kmajor<A_ITERS, A_RSTEP * A_LD * ES>(pa, ptx_smem_u32(sA), A);
#if B_COL
    copy_kmajor<B_ITERS, B_RSTEP * B_LD * ES>(pb, ptx_smem_u32(sB), B);
#else
    copy_b_nmajor(pb, ptx_smem_u32(sB), B);
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

// The fragments of K step ks of a stage: A for the warp's MI 16-row tiles, B for its NI 8-column
// tiles (rounded to tf32 for f32 inputs).
__device__ __forceinline__ void load_frags(unsigned af[MI][4], unsigned bf[NI][2], const elem_t *sA,
                                           const elem_t *sB, int ks, int warp_m, int warp_n,
                                           int lane) {
  const unsigned a_base = ptx_smem_u32(sA), b_base = ptx_smem_u32(sB);
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
    ptx_ldsm_x4(af[mi], a_base + gemm_ldsm_a_offset(warp_m * WTM + mi * 16, ks, lane, A_LD * ES));
#pragma unroll
  for (int nj = 0; nj < NI / 2; ++nj) {
#if B_COL
    unsigned r[4];
    ptx_ldsm_x4(r, b_base + gemm_ldsm_bcol_offset(warp_n * WTN + nj * 16, ks, lane, B_LD * ES));
    bf[2 * nj][0] = r[0];
    bf[2 * nj][1] = r[1];
    bf[2 * nj + 1][0] = r[2];
    bf[2 * nj + 1][1] = r[3];
#elif ES == 2
    unsigned r[4];
    ptx_ldsm_x4_trans(
        r, b_base + gemm_ldsm_brow_offset(warp_n * WTN + nj * 16, ks, KSTEP, lane, B_LD * ES, ES));
    bf[2 * nj][0] = r[0];
    bf[2 * nj][1] = r[1];
    bf[2 * nj + 1][0] = r[2];
    bf[2 * nj + 1][1] = r[3];
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
}

// The fragments after K step ks of the tile in stage st, into the other buffer: step ks+1, or
// step 0 of the next tile (stage st_next) when there is one.
__device__ __forceinline__ void next_frags(unsigned af[2][MI][4], unsigned bf[2][NI][2],
                                           const elem_t *sA0, const elem_t *sB0, int st,
                                           int st_next, int ks, bool more, int warp_m, int warp_n,
                                           int lane) {
  const int b = (ks + 1) % 2;
  if (ks < KSTEPS - 1)
    load_frags(af[b], bf[b], sA0 + st * A_TILE, sB0 + st * B_TILE, ks + 1, warp_m, warp_n, lane);
  else if (more)
    load_frags(af[b], bf[b], sA0 + st_next * A_TILE, sB0 + st_next * B_TILE, 0, warp_m, warp_n,
               lane);
}

// In source order the next fragments are read before the current step's mmas: ptxas then
// overlaps the next tile's ldmatrix with the last step's mmas.  Where that left ptxas (NVRTC
// 13.0) spilling 64x64 warp tiles they are read after, which spills no configuration of the
// space: before sm_90 (8-16 bytes with split-K, up to 352 with tf32, whose rounding takes three
// instructions there) and tf32 with B stored N x K on sm_90 (48 bytes).  tf32 with B stored
// K x N on sm_90 spills read after (up to 88 bytes) and not before.
#define FRAGS_AFTER (__CUDA_ARCH__ < 900 || (DTYPE_CODE == 0 && B_COL))

// The pipeline over the block's nk K tiles from kt_begin.  STAGES-1 tiles are in flight ahead of
// the one computed; the fragments of the next K step are read while the current step's mmas
// run, across the tile boundary too: before the last step of tile i every thread waits for tile
// i+1 and passes a barrier (after which tile i's stage, whose fragments are all in registers,
// is free; it is refilled at the start of tile i+1).
template <bool VEC>
__device__ __forceinline__ void mainloop(float acc[MI][NI][4], const elem_t *__restrict__ A,
                                         const elem_t *__restrict__ B, elem_t *sA0, elem_t *sB0,
                                         int m0, int n0, int kt_begin, int nk, int M, int N, int K,
                                         int tid, int warp_m, int warp_n, int lane) {
  chunk_plan pa = {}, pb = {};
  if (VEC) {
    pa = to_chunk_plan(
        A, gemm_plan_kmajor(tid, THREADS, A_CPR, A_ITERS, CH, BLOCK_K, kt_begin, m0, M, K, A_LD));
#if B_COL
    pb = to_chunk_plan(
        B, gemm_plan_kmajor(tid, THREADS, B_CPR, B_ITERS, CH, BLOCK_K, kt_begin, n0, N, K, B_LD));
#else
    pb = to_chunk_plan(
        B, gemm_plan_nmajor(tid, THREADS, B_CPR, CH, BLOCK_K, kt_begin, n0, N, K, B_LD));
#endif
  }

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < nk)
      load_tile<VEC>(A, B, pa, pb, sA0 + s * A_TILE, sB0 + s * B_TILE, m0, n0, kt_begin + s, M, N,
                     K, tid);
    ptx_cp_async_commit();
  }
  ptx_cp_async_wait<STAGES - 2>();
  __syncthreads();

  unsigned af[2][MI][4], bf[2][NI][2];
  load_frags(af[0], bf[0], sA0, sB0, 0, warp_m, warp_n, lane);
  // st: the stage of tile i; st_next: of tile i+1; st_fill: the stage tile i+STAGES-1 goes to
  // (the one tile i-1 used).  Stepped instead of taken modulo STAGES.
  int st = 0, st_next = 1 % STAGES, st_fill = STAGES - 1;
  for (int i = 0; i < nk; ++i) {
    if (i + STAGES - 1 < nk)
      load_tile<VEC>(A, B, pa, pb, sA0 + st_fill * A_TILE, sB0 + st_fill * B_TILE, m0, n0,
                     kt_begin + i + STAGES - 1, M, N, K, tid);
    ptx_cp_async_commit();
#pragma unroll
    for (int ks = 0; ks < KSTEPS; ++ks) {
      if (ks == KSTEPS - 1) {  // tile i+1 landed; every warp holds tile i's last fragments
        ptx_cp_async_wait<STAGES - 2>();
        __syncthreads();
      }
      if (!FRAGS_AFTER)
        next_frags(af, bf, sA0, sB0, st, st_next, ks, i + 1 < nk, warp_m, warp_n, lane);
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) mma(acc[mi][ni], af[ks % 2][mi], bf[ks % 2][ni]);
      if (FRAGS_AFTER)
        next_frags(af, bf, sA0, sB0, st, st_next, ks, i + 1 < nk, warp_m, warp_n, lane);
    }
    st_fill = st;
    st = st_next;
    st_next = st_next + 1 == STAGES ? 0 : st_next + 1;
  }
  ptx_cp_async_wait<0>();
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_mma(const void *__restrict__ A_, const void *__restrict__ B_, float *__restrict__ C, int M,
             int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;

  int tile_m, tile_n;
  gemm_swizzle(blockIdx.x, gemm_ceil_div(M, BLOCK_M), gemm_ceil_div(N, BLOCK_N), SWIZZLE, &tile_m,
               &tile_n);
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

  if (vec)
    mainloop<true>(acc, A, B, sA0, sB0, m0, n0, kt_begin, nk, M, N, K, tid, warp_m, warp_n, lane);
  else
    mainloop<false>(acc, A, B, sA0, sB0, m0, n0, kt_begin, nk, M, N, K, tid, warp_m, warp_n, lane);

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
