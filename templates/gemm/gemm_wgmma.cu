// gemm_wgmma.cu — Hopper (sm_90a) GEMM: TMA bulk tensor loads into 128-byte-swizzled shared
// memory, an mbarrier-tracked multi-stage pipeline, and warpgroup MMA (wgmma.mma_async).
//
// C[b] = A[b] * B[b], fp32 accumulation and fp32 output (the gemm family ABI, kernels/gemm.h),
// or with EPI 1 the fused epilogue of gemm_epilogue.h on the accumulators in registers (alpha,
// fp8 scales, beta*C, bias, ReLU/GELU/SiLU, residual; the steps are the argument's run-time
// flags) stored as OUT_TYPE (fp32, or f16/bf16 pairs packed by cvt.rn.{f16,bf16}x2.f32).
// A is M x K row-major; B (parameter B_COL) is stored N x K row-major (B_COL 1, layout "nt":
// both operands K-major) or is K x N row-major (B_COL 0, layout "nn": B is N-major and the
// wgmma reads it transposed, imm-trans-b 1); inputs f16 or bf16, or fp8 (e4m3, e5m2; B's type
// B_E5M2) with layout nt only: wgmma k32 on 1-byte elements, which have no transpose operands.
// Either way a K slab is one 128-byte swizzle row (BLOCK_K = 128/dtype_bytes, derived) read by
// four wgmmas of 32 bytes of K each (gemm_wgmma_k_steps), so the stage layout, the TMA boxes
// and the descriptors are the same in bytes for both element sizes.  Operands arrive as two
// CUtensorMap descriptors built by the gemm family from the config's TMA_BOX_* values
// (SWIZZLE_128B, zero fill out of bounds): A over (K, M, batch) with box 64 x BLOCK_M/CLUSTER; B over
// (K, N, batch) with box 64 x BLOCK_N (nt) or over (N, K, batch) with box 64 x BLOCK_K (nn,
// BLOCK_N/64 loads per stage: 64 elements is the most a 128-byte swizzle row holds).  TMA
// needs 16-byte global strides, so K*dtype_bytes (and for nn N*dtype_bytes) must be a
// multiple of 16 (manifest constraints).  The shared-memory placement and the descriptor
// fields come from gemm_index.h, where the host tests check them against each other.
//
// Block: WARPGROUPS consumer warpgroups, each owning BLOCK_M/WARPGROUPS rows as m64 tiles.
// Iteration kt waits for its stage's "full" mbarrier, issues 4 x (m64 tiles) wgmmas over the
// 64-wide K slab, keeps one wgmma group in flight (wait_group 1), then releases the stage that
// the previous group has finished reading.  Who refills it (parameter PRODUCER):
//   0: consumer thread 0 issues the TMA loads, after a __syncthreads that tells it every
//      warpgroup is done with the stage;
//   1: warp specialisation: an extra producer warpgroup, one thread of which streams the K
//      slabs, waiting on each stage's "empty" mbarrier, at which lane 0 of every consumer warp
//      arrives when the warp releases the stage; the consumers never wait for each other.  The barrier
//      phases and parities are rt_ptx.h's ptx_stage / ptx_*_parity and gemm_pipe_release (gemm_index.h;
//      host-tested with a simulation).
//
// SPLIT_K > 1 splits the K slabs over gridDim.z (gemm_split_range) and adds the partial sums
// into C with atomics (the launcher zeroes C first): the lever for skinny shapes such as
// 16 x 4096 x 14336, whose few output tiles would leave most SMs idle.
//
// Work units (gemm_unit_tile): CLUSTER blocks neighbouring along N form a cluster
// (__cluster_dims__, so a plain launch forms it) and compute one unit, CLUSTER tiles in one tile
// row.  They share the A tile: each block loads BLOCK_M/CLUSTER of its rows and multicasts them
// into every block of the cluster, so A crosses L2 once per cluster; every block's empty
// barrier then counts the consumer warps of the whole cluster, since a refill overwrites the
// stage in all of them.  With PERSISTENT 1 the grid holds at most one cluster per SM (pair of
// SMs) and each cluster walks units first, first + clusters, ...; the producer counts slabs on
// across units, so it loads the next tile while the consumers store this one.  The kernel code
// is the same for both: a non-persistent grid simply has one cluster per unit.  A box that
// lies wholly outside the tensor (a second block's A rows past M, the extra tile of a last pair
// past N, nn B columns past N) is not loaded and the stage's expected bytes leave it out
// (gemm_wgmma_stage_bytes): the PTX ISA promises zero fill only for a box's outside part.
// Those rows and columns are never stored, so their stale shared memory is harmless.
//
// Parameters: BLOCK_M, BLOCK_N, BLOCK_K (derived: one 128-byte swizzle row), WARPGROUPS,
// PRODUCER, STAGES, SPLIT_K, SWIZZLE, B_COL, PERSISTENT, CLUSTER (1 or 2; > 1 needs PRODUCER 1),
// SETMAXNREG (producer 40 / consumers 232 registers, a producer and two consumers), B_E5M2,
// EPI, OUT_TYPE (the last three tied to the problem's facts), THREADS
// (128*(WARPGROUPS+PRODUCER)) and the prefix's RT_DTYPE_<f16|bf16|e4m3|e5m2>.  Launch: grid (CLUSTER * clusters, 1, SPLIT_K*BATCH) with clusters = the units
// or, persistent, at most SMs / (CLUSTER*SPLIT_K*BATCH); block THREADS; dynamic shared memory
// SMEM = STAGES*(BLOCK_M+BLOCK_N)*BLOCK_K*dtype_bytes + 1024 (alignment slack) + 16*STAGES
// (mbarriers).
#include "gemm_epilogue.h"
#include "gemm_index.h"
#include "rt_ptx.h"

#ifndef B_E5M2
#define B_E5M2 0
#endif
#if DTYPE_CODE == 1
#define WGMMA_AB "f16.f16"
#elif DTYPE_CODE == 2
#define WGMMA_AB "bf16.bf16"
#elif DTYPE_CODE == 4 || DTYPE_CODE == 5
#define FP8     1
#define WGMMA_A (DTYPE_CODE == 4 ? "e4m3" : "e5m2")
#if DTYPE_CODE == 4 && !B_E5M2
#define WGMMA_AB "e4m3.e4m3"
#elif DTYPE_CODE == 4
#define WGMMA_AB "e4m3.e5m2"
#elif !B_E5M2
#define WGMMA_AB "e5m2.e4m3"
#else
#define WGMMA_AB "e5m2.e5m2"
#endif
#else
#error "gemm_wgmma supports f16, bf16, e4m3 and e5m2 only"
#endif
#ifndef FP8
#define FP8 0
#endif

#define WG_TILES      (BLOCK_M / (64 * WARPGROUPS))  // m64 tiles per warpgroup
#define ACC           (BLOCK_N / 2)                  // f32 accumulators per thread per m64 tile
#define A_STAGE_BYTES (BLOCK_M * BLOCK_K * ES)
#define B_STAGE_BYTES (BLOCK_N * BLOCK_K * ES)
// One wgmma reads 32 bytes of K: k16 of 16-bit elements, k32 of fp8 ones.  Its last operands:
// scale-d, imm-scale-a, imm-scale-b and for 16-bit types imm-trans-a, imm-trans-b (fp8 operands
// are K-major only, with no transpose operands).
#if FP8
#define WGMMA_K    "32"
#define WGMMA_TAIL "p, 1, 1"
#elif B_COL
#define WGMMA_K    "16"
#define WGMMA_TAIL "p, 1, 1, 0, 0"  // B K-major
#else
#define WGMMA_K    "16"
#define WGMMA_TAIL "p, 1, 1, 0, 1"  // B N-major: imm-trans-b
#endif
#define K_STEPS gemm_wgmma_k_steps(BLOCK_K, ES)  // wgmmas per m64 tile and K slab

static_assert(BLOCK_K * ES == 128,
              "BLOCK_K must fill one 128-byte swizzle row (64 16-bit or 128 fp8 elements)");
static_assert(!FP8 || B_COL == 1, "fp8 operands are read K-major: B stored N x K (layout nt)");
#ifndef EPI
#define EPI 0
#endif
#ifndef OUT_TYPE
#define OUT_TYPE 0
#endif
static_assert(EPI || (!FP8 && OUT_TYPE == 0), "fp8 inputs and a 16-bit output need EPI 1");
static_assert(SPLIT_K == 1 || OUT_TYPE == 0, "split-K adds fp32 partial sums");
#ifndef PRODUCER
#define PRODUCER 0
#endif
#define CONSUMERS (128 * WARPGROUPS)  // consumer threads
#ifndef CLUSTER
#define CLUSTER 1
#endif
#define A_PART_ROWS \
  (BLOCK_M / CLUSTER)  // rows of the shared A tile each block loads (gemm_wgmma_a_part_rows)
#define EMPTY_ARRIVALS (WARPGROUPS * 4 * CLUSTER)  // consumer warps of the cluster, per stage
static_assert(THREADS == 128 * (WARPGROUPS + PRODUCER),
              "THREADS must be 128*(WARPGROUPS+PRODUCER)");
static_assert(BLOCK_M % (64 * WARPGROUPS) == 0, "BLOCK_M must be a multiple of 64*WARPGROUPS");
static_assert(BLOCK_N == 64 || BLOCK_N == 128 || BLOCK_N == 256, "BLOCK_N must be 64, 128 or 256");
static_assert(CLUSTER == 1 || (PRODUCER == 1 && A_PART_ROWS % 8 == 0),
              "a cluster needs the producer warpgroup and A parts of whole 8-row swizzle atoms");
// SETMAXNREG 1 (a producer and two consumer warpgroups, 384 threads: 168 registers each at
// entry): the producer gives registers back and the consumers take them, 40 and 232 a thread
// (40*128 + 232*256 = 64512 of the SM's 65536).
#ifndef SETMAXNREG
#define SETMAXNREG 0
#endif
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232
static_assert(!SETMAXNREG || (PRODUCER == 1 && WARPGROUPS == 2),
              "SETMAXNREG needs a producer and two consumers");
static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 256 <= 65536, "register split");

struct __align__(64) tma_desc {
  unsigned long long opaque[16];  // a CUtensorMap, passed by value as a __grid_constant__
};

// Shared-memory matrix descriptors (rt_ptx.h's ptx_desc) of the operands in the 128-byte swizzle
// layout TMA wrote.  K-major (A, and B for nt): LBO 16 (unused), SBO 1024 between 8-row
// core-matrix groups.  N-major B (nn): LBO between 64-wide N atoms, SBO 1024 between 8-row
// groups of k (gemm_wgmma_b_lbo/_sbo).  Stage buffers are 1024-byte aligned so the base offset is 0.

// The TMA loads of one stage's B tile: K slab kt, N columns n0.. of the block.
// (Boxes wholly past N are skipped: gemm_wgmma_b_box_in.)
__device__ __forceinline__ void load_b(unsigned dst, const tma_desc *map, unsigned bar, int kt,
                                       int n0, int batch, int N) {
#pragma unroll
  for (int j = 0; j < gemm_wgmma_b_boxes(B_COL, BLOCK_N); ++j) {
    int c0, c1;
    gemm_wgmma_b_box(B_COL, j, kt, n0, BLOCK_K, &c0, &c1);
    if (gemm_wgmma_b_box_in(B_COL, j, n0, N))
      ptx_tma_load_3d(dst + gemm_wgmma_b_box_offset(B_COL, j, BLOCK_K), map, bar, c0, c1, batch);
  }
}

// All TMA loads of K slab kt into stage s, completing on the stage's full barrier.  In a
// cluster, block `rank` loads rows [rank*A_PART_ROWS, (rank+1)*A_PART_ROWS) of the A tile, which
// every block of the cluster shares (gemm_unit_tile), and multicasts them into the same place of
// each block's stage, completing on each block's full barrier; each block loads its own B.
__device__ __forceinline__ void load_stage(unsigned sA, unsigned sB, unsigned full,
                                           const tma_desc *tmA, const tma_desc *tmB, int s, int kt,
                                           int m0, int n0, int batch, int rank, int M, int N) {
  // the bytes of every box that reaches this block's stage (boxes wholly outside are skipped)
  ptx_mbar_expect_tx(
      full, gemm_wgmma_stage_bytes_es(B_COL, BLOCK_M, BLOCK_N, BLOCK_K, ES, CLUSTER, m0, n0, M, N));
#if CLUSTER > 1
  const int row = gemm_wgmma_a_part_row(rank, m0, BLOCK_M, CLUSTER);
  if (row < M)
    ptx_tma_load_3d_multicast(
        sA + s * A_STAGE_BYTES + gemm_wgmma_a_part_offset(rank, BLOCK_M, BLOCK_K, ES, CLUSTER), tmA,
        full, kt * BLOCK_K, row, batch, (unsigned short)((1u << CLUSTER) - 1));
#else
  (void)rank;
  ptx_tma_load_3d(sA + s * A_STAGE_BYTES, tmA, full, kt * BLOCK_K, m0, batch);  // m0 < M: inside
#endif
  load_b(sB + s * B_STAGE_BYTES, tmB, full, kt, n0, batch, N);
}

// This block's rank in its cluster (0 without clusters) and a barrier over every thread of the
// cluster (of the block without clusters).
__device__ __forceinline__ int cluster_rank() {
#if CLUSTER > 1
  return ptx_cluster_rank();
#else
  return 0;
#endif
}
__device__ __forceinline__ void cluster_sync() {
#if CLUSTER > 1
  ptx_cluster_sync();
#else
  __syncthreads();
#endif
}

// A consumer warp is done reading a stage: its lane 0 arrives at that stage's empty barrier in
// every block of the cluster (a multicast refill overwrites the stage in all of them).
__device__ __forceinline__ void release_stage(unsigned bar) {
  __syncwarp();
  if (threadIdx.x % 32 == 0) {
#if CLUSTER > 1
#pragma unroll
    for (int r = 0; r < CLUSTER; ++r) ptx_mbar_arrive_cluster(bar, (unsigned)r);
#else
    ptx_mbar_arrive(bar);
#endif
  }
}

// The m64nNk (16-bit: k16, fp8: k32) wgmma of rt_ptx.h for this block's N, A and B from shared
// memory; the accumulators are zeroed before a tile's first slab, so every slab adds (scale-d 1).
PTX_WGMMA_SS(wgmma_n64, 64, WGMMA_AB, WGMMA_K, WGMMA_TAIL)
PTX_WGMMA_SS(wgmma_n128, 128, WGMMA_AB, WGMMA_K, WGMMA_TAIL)
PTX_WGMMA_SS(wgmma_n256, 256, WGMMA_AB, WGMMA_K, WGMMA_TAIL)
__device__ __forceinline__ void wgmma_tile(float *d, unsigned long long da, unsigned long long db) {
#if BLOCK_N == 64
  wgmma_n64(d, da, db, false);
#elif BLOCK_N == 128
  wgmma_n128(d, da, db, false);
#else
  wgmma_n256(d, da, db, false);
#endif
}

// Output elements: OUT_TYPE 0 fp32, 1 f16, 2 bf16 (gemm_epilogue.h), stored and loaded two
// neighbouring columns at a time (one 8- or 4-byte access) or one by one at an odd edge.
#if OUT_TYPE == 0
typedef float out_t;
#else
typedef unsigned short out_t;
#endif
__device__ __forceinline__ float out_to_f32(unsigned short h) {
#if OUT_TYPE == 2
  return __uint_as_float((unsigned)h << 16);
#else
  return ptx_f16_to_f32(h);
#endif
}
__device__ __forceinline__ float ld_out(const float *p) { return *p; }
__device__ __forceinline__ float ld_out(const unsigned short *p) { return out_to_f32(*p); }
__device__ __forceinline__ float2 ld_out2(const float *p) { return *(const float2 *)p; }
__device__ __forceinline__ float2 ld_out2(const unsigned short *p) {
  const unsigned w = *(const unsigned *)p;
  return make_float2(out_to_f32((unsigned short)(w & 0xffffu)),
                     out_to_f32((unsigned short)(w >> 16)));
}
__device__ __forceinline__ void st_out(float *p, float v) { *p = v; }
__device__ __forceinline__ void st_out(unsigned short *p, float v) {
  *p = OUT_TYPE == 2 ? ptx_f32_to_bf16(v) : ptx_f32_to_f16(v);
}
__device__ __forceinline__ void st_out2(float *p, float a, float b) {
  *(float2 *)p = make_float2(a, b);
}
__device__ __forceinline__ void st_out2(unsigned short *p, float a, float b) {
  *(unsigned *)p = ptx_pack2<OUT_TYPE == 2>(a, b);  // a in the low half
}

// The epilogue of gemm_epilogue.h on two neighbouring elements (row, col) and (row, col + 1) of
// this batch's matrices: v = s*acc (+ beta*C) (+ bias) -> act (+ residual), the steps chosen by
// the argument's flags (uniform branches).  With SPLIT_K > 1 (no activation, no beta: the
// manifest's constraints) only slice 0 adds the bias and the residual.
struct epi_ctx {
  float s;  // alpha * scale_a * scale_b (GEMM_EPI_VSCALE: alpha; the scales are per row/column)
  const gemm_epi_args *a;
  unsigned flags;  // a->flags, with bias and residual dropped for slices after the first
  int act;
  long long base;  // this batch's first element of C, D and the residual
};
__device__ __forceinline__ void epi_pair(const epi_ctx &e, int row, long long at, int col, bool two,
                                         float &v0, float &v1) {
  float2 cv = make_float2(0.f, 0.f), rv = cv, bv = cv;
  float s0 = e.s, s1 = e.s;
  if (e.flags & GEMM_EPI_VSCALE) {
    const float sr = e.s * ((const float *)e.a->scale_a)[row],
                *sb = (const float *)e.a->scale_b + col;
    s0 = sr * sb[0];
    s1 = two ? sr * sb[1] : 0.f;
  }
  if (e.flags & GEMM_EPI_BETA) {
    const out_t *c = (const out_t *)e.a->c + e.base + at;
    cv = two ? ld_out2(c) : make_float2(ld_out(c), 0.f);
  }
  if (e.flags & GEMM_EPI_BIAS) {
    const out_t *b = (const out_t *)e.a->bias + col;
    bv = make_float2(ld_out(b), two ? ld_out(b + 1) : 0.f);
  }
  if (e.flags & GEMM_EPI_RES) {
    const out_t *r = (const out_t *)e.a->residual + e.base + at;
    rv = two ? ld_out2(r) : make_float2(ld_out(r), 0.f);
  }
  const float beta = e.a->beta;
  v0 = gemm_epi_apply(e.flags, e.act, s0, beta, v0, cv.x, bv.x, rv.x);
  v1 = gemm_epi_apply(e.flags, e.act, s1, beta, v1, cv.y, bv.y, rv.y);
}

// A finished tile's accumulators into D (this batch's matrix), bounds-checked (edge tiles, and a
// cluster's tile past N, which only shares its A), through the epilogue when EPI.  SPLIT_K > 1
// adds the partial sums with atomics into D (fp32), which the launcher zeroes.
__device__ __forceinline__ void store_tile(float (&acc)[WG_TILES][ACC], out_t *D, const epi_ctx &e,
                                           int m0, int n0, int M, int N, int wg, int t) {
  const bool pair_ok = N % 2 == 0;
#pragma unroll
  for (int mt = 0; mt < WG_TILES; ++mt)
#pragma unroll
    for (int i = 0; i < ACC; i += 2) {
      const int row = m0 + (wg * WG_TILES + mt) * 64 + gemm_wgmma_d_row(t, i);
      const int col = n0 + gemm_wgmma_d_col(t, i);
      if (row >= M || col >= N) continue;
      const long long at = (long long)row * N + col;
      out_t *dst = D + e.base + at;
      const bool two = col + 1 < N;
      float v0 = acc[mt][i], v1 = acc[mt][i + 1];
#if EPI
      epi_pair(e, row, at, col, two && pair_ok, v0, v1);
      if (two && !pair_ok) {  // an odd N: the second element's own loads
        float w0 = acc[mt][i + 1], w1 = 0.f;
        epi_pair(e, row, at + 1, col + 1, false, w0, w1);
        v1 = w0;
      }
#endif
#if SPLIT_K == 1
      if (pair_ok && two) {
        st_out2(dst, v0, v1);
      } else {
        st_out(dst, v0);
        if (two) st_out(dst + 1, v1);
      }
#else
      (void)pair_ok;
      atomicAdd(dst, v0);
      if (two) atomicAdd(dst + 1, v1);
#endif
    }
}

#if CLUSTER > 1
#define CLUSTER_ATTR __cluster_dims__(CLUSTER, 1, 1)
#else
#define CLUSTER_ATTR
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1) CLUSTER_ATTR
    gemm_wgmma(const __grid_constant__ tma_desc tmA, const __grid_constant__ tma_desc tmB,
               out_t *__restrict__ C, int M, int N, int K
#if EPI
               ,
               const gemm_epi_args epi
#endif
    ) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned raw = ptx_smem_u32(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;  // 128B swizzle wants 1024-byte alignment
  const unsigned sA = base;
  const unsigned sB = base + STAGES * A_STAGE_BYTES;
  const unsigned full = sB + STAGES * B_STAGE_BYTES;  // STAGES full barriers, then
  const unsigned empty = full + 8 * STAGES;           // STAGES empty ones (PRODUCER 1)

  const int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  const int tiles_m = gemm_ceil_div(M, BLOCK_M), tiles_n = gemm_ceil_div(N, BLOCK_N);
  const int units = gemm_units(tiles_m, tiles_n, CLUSTER);
  const int rank = cluster_rank();
  const int first = blockIdx.x / CLUSTER, step = gridDim.x / CLUSTER;  // this cluster's units
  const int batch = blockIdx.z / SPLIT_K, slice = blockIdx.z % SPLIT_K;
  int k0, k1;  // this block's K slabs [k0, k1); slab kt of a unit is k0 + kt
  gemm_split_range(gemm_ceil_div(K, BLOCK_K), SPLIT_K, slice, &k0, &k1);
  const int nk = k1 - k0;
#if SPLIT_K > 1
  if (nk <= 0) return;  // an empty slice adds nothing (its whole cluster shares blockIdx.z)
#endif

  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      ptx_mbar_init(full + 8 * s, 1);
      if (PRODUCER) ptx_mbar_init(empty + 8 * s, EMPTY_ARRIVALS);
    }
    ptx_mbar_init_fence();
  }
  cluster_sync();  // every barrier of the cluster is initialised before anyone loads or arrives

#if PRODUCER
  if (wg == WARPGROUPS) {
#if SETMAXNREG
    ptx_setmaxnreg_dec<PRODUCER_REGS>();
#endif
    // The producer warpgroup: one thread streams the K slabs of every unit of this cluster;
    // g counts slabs over the units, so the pipeline runs on across tile boundaries and the
    // next tile's loads overlap this tile's epilogue.
    if (t == 0) {
      int g = 0;
      for (int u = first; u < units; u += step) {
        int tile_m, tile_n;
        gemm_unit_tile(u, tiles_m, tiles_n, CLUSTER, SWIZZLE, rank, &tile_m, &tile_n);
        for (int kt = 0; kt < nk; ++kt, ++g) {
          const int s = ptx_stage(g, STAGES);
          if (g >= STAGES) ptx_mbar_wait(empty + 8 * s, ptx_empty_parity(g, STAGES));
          load_stage(sA, sB, full + 8 * s, &tmA, &tmB, s, k0 + kt, tile_m * BLOCK_M,
                     tile_n * BLOCK_N, batch, rank, M, N);
        }
      }
    }
    __syncwarp();
  } else {
#if SETMAXNREG
    ptx_setmaxnreg_inc<CONSUMER_REGS>();
#endif
#else
  {
#endif
    float acc[WG_TILES][ACC];
    epi_ctx ectx;
    ectx.base = (long long)batch * M * N;
#if EPI
    ectx.a = &epi;
    ectx.s = (epi.flags & GEMM_EPI_VSCALE)
                 ? epi.alpha
                 : epi.alpha * (epi.scale_a ? *(const float *)epi.scale_a : 1.f) *
                       (epi.scale_b ? *(const float *)epi.scale_b : 1.f);
    ectx.flags = slice == 0 ? epi.flags : epi.flags & ~(unsigned)(GEMM_EPI_BIAS | GEMM_EPI_RES);
    ectx.act = (int)(epi.flags >> GEMM_EPI_ACT_SHIFT) & 3;
#else
    ectx.a = nullptr;
    ectx.s = 1.f;
    ectx.flags = 0;
    ectx.act = 0;
#endif
    int g = 0;  // slabs consumed so far, over the units
    for (int u = first; u < units; u += step, g += nk) {
      int tile_m, tile_n;
      gemm_unit_tile(u, tiles_m, tiles_n, CLUSTER, SWIZZLE, rank, &tile_m, &tile_n);
      const int m0 = tile_m * BLOCK_M, n0 = tile_n * BLOCK_N;
#if !PRODUCER
      __syncthreads();  // every thread is past the last unit's wait_group 0: its stages are free
      if (tid == 0)
        for (int s = 0; s < STAGES && s < nk; ++s)
          load_stage(sA, sB, full + 8 * ptx_stage(g + s, STAGES), &tmA, &tmB,
                     ptx_stage(g + s, STAGES), k0 + s, m0, n0, batch, 0, M, N);
#endif
#pragma unroll
      for (int i = 0; i < WG_TILES; ++i)
#pragma unroll
        for (int j = 0; j < ACC; ++j) acc[i][j] = 0.f;

      for (int kt = 0; kt < nk; ++kt) {
        const int s = ptx_stage(g + kt, STAGES);
        ptx_mbar_wait(full + 8 * s, ptx_full_parity(g + kt, STAGES));
        ptx_wgmma_fence();
#pragma unroll
        for (int k = 0; k < K_STEPS; ++k) {
          const unsigned long long db =
              ptx_desc(sB + s * B_STAGE_BYTES + gemm_wgmma_b_start(B_COL, k),
                       gemm_wgmma_b_lbo(B_COL, BLOCK_K), gemm_wgmma_b_sbo());
#pragma unroll
          for (int mt = 0; mt < WG_TILES; ++mt) {
            const unsigned a = sA + s * A_STAGE_BYTES + gemm_wgmma_a_start(wg * WG_TILES + mt, k);
            wgmma_tile(acc[mt], ptx_desc(a, 16, 1024), db);
          }
        }
        ptx_wgmma_commit();
        ptx_wgmma_wait<1>();  // the group of slab g+kt-1 is done: its stage may be refilled
        const int done = gemm_pipe_release(g, kt);
#if PRODUCER
        if (done >= 0) release_stage(empty + 8 * ptx_stage(done, STAGES));
#else
        __syncthreads();
        if (tid == 0 && done >= 0 && kt - 1 + STAGES < nk)
          load_stage(sA, sB, full + 8 * ptx_stage(done, STAGES), &tmA, &tmB,
                     ptx_stage(done, STAGES), k0 + kt - 1 + STAGES, m0, n0, batch, 0, M, N);
#endif
      }
      ptx_wgmma_wait<0>();
#pragma unroll
      for (int mt = 0; mt < WG_TILES; ++mt) ptx_reg_fence<ACC>(acc[mt]);
#if PRODUCER
      if (nk > 0) release_stage(empty + 8 * ptx_stage(g + nk - 1, STAGES));  // the unit's last slab
#endif
      store_tile(acc, C, ectx, m0, n0, M, N, wg, t);
    }
  }
  cluster_sync();  // no block leaves while a peer may still arrive at its barriers
}
