// attn_mma.cu — prefill attention forward in the manner of FlashAttention-2: mma.sync, ldmatrix, a
// multi-stage cp.async pipeline over the KV tiles and the online softmax in registers.
//
// The attention family's ABI (attn_abi.h): O = softmax(scale * Q K^T) V per query head, the
// bottom-right causal mask when causal == 1, grouped-query heads, LSE written when lse != 0, any
// SQ and SKV, ragged kv_lens; contiguous K and V only (paged KV is the decode template's; the
// manifest says paged == 0).  f16 or bf16 inputs, fp32 accumulation, O in the input dtype.
//
// Block (query tile, head, batch) of the grid (ceil(SQ / BLOCK_M), HQ, B), WARPS warps, each the
// owner of 16 query rows.  The Q tile comes in once by cp.async; the K and V tiles of BLOCK_N keys
// stream through STAGES stage buffers, K and V of a tile in separate cp.async groups so S = Q K^T
// of tile n runs while V of tile n is still in flight.  Per tile and warp:
//   S = Q K^T     mma.m16n8k16 over the head dim, Q fragments by ldmatrix.x4 (re-read from shared
//                 memory every tile, or kept in registers: Q_IN_REGS), K by ldmatrix.x4
//   mask          only on the tiles that need it (the diagonal ones of the causal mask, the one
//                 holding the last key); tiles past the diagonal are not visited
//   softmax       running max and sum per row, O rescaled, p = exp2(s*scale_log2 - max*scale_log2)
//   O += P V      P converted to the input dtype in registers and used as the A fragment directly
//                 (the S accumulators of two key tiles are the A layout of one k16 step), V by
//                 ldmatrix.x4.trans
// At the end each warp normalises its rows, stages them in its own rows of the Q buffer and writes
// 16-byte chunks; rows with no key get O = 0 and LSE = -inf.  Every index comes from attn_index.h,
// which tests/unit/test_attn_emulate.c runs on the host through the same data path.
//
// Parameters (manifest): BLOCK_M, BLOCK_N, WARPS, STAGES, Q_IN_REGS, HEAD_DIM (== D), IS_CAUSAL
// (== causal), THREADS (= 32*WARPS); the prefix's RT_DTYPE_<dtype>.  Dynamic shared memory:
// (BLOCK_M + 2*STAGES*BLOCK_N) * (HEAD_DIM + 8) elements (the manifest's SMEM).
#include "attn_abi.h"
#include "attn_index.h"
#include "rt_ptx.h"

typedef unsigned short elem_t;

#define LD       (HEAD_DIM + 8)             // attn_smem_ld: tile row pitch in elements
#define LDB      (LD * 2)                   // ... in bytes
#define CPR      (HEAD_DIM / 8)             // 16-byte chunks per row
#define KD       (HEAD_DIM / 16)            // k16 steps of S = Q K^T
#define NT       (BLOCK_N / 8)              // n8 key tiles of S
#define DT       (HEAD_DIM / 8)             // n8 head-dim tiles of O
#define Q_ITERS  (BLOCK_M * CPR / THREADS)  // chunks per thread of the Q tile (attn_load_iters)
#define KV_ITERS (BLOCK_N * CPR / THREADS)  // ... of a K or V tile
#define RSTEP    (THREADS / CPR)            // rows between a thread's chunks
#define Q_TILE   (BLOCK_M * LD)             // elements
#define KV_TILE  (BLOCK_N * LD)

static_assert(THREADS == WARPS * 32, "THREADS must be 32*WARPS");
static_assert(BLOCK_M == 16 * WARPS, "each warp owns 16 query rows");
static_assert(BLOCK_N % 16 == 0, "BLOCK_N must be a multiple of 16");
static_assert(HEAD_DIM % 16 == 0, "HEAD_DIM must be a multiple of 16");
static_assert(THREADS % CPR == 0 && (BLOCK_M * CPR) % THREADS == 0 &&
                  (BLOCK_N * CPR) % THREADS == 0,
              "tile chunks must split evenly over the threads");
static_assert(STAGES >= 2, "STAGES must be at least 2");

#if defined(RT_DTYPE_bf16)
#define AM_BF16 1
#else
#define AM_BF16 0
#endif
// rt_ptx.h's mma.m16n8k16 and 16-bit pair (lo in the lower half) for this dtype.
__device__ __forceinline__ void mma(float c[4], const unsigned a[4], const unsigned b0,
                                    const unsigned b1) {
  ptx_mma_m16n8k16<AM_BF16>(c, a, b0, b1);
}
__device__ __forceinline__ unsigned pack2(float lo, float hi) { return ptx_pack2<AM_BF16>(lo, hi); }

// One thread's chunks of a tile (its plan p, attn_index.h) into the stage at byte address
// `stage`; chunks on rows past the matrix are zero-filled, their source pointed at the base.
// The source pointer is stepped from row to row rather than computed per chunk: ITERS 64-bit
// offsets kept live across the loop cost two registers each.
template <int ITERS>
__device__ __forceinline__ void copy_tile(unsigned stage, const elem_t *base, const attn_plan &p) {
  const elem_t *src = base + p.src;
  stage += p.smem * 2;
#pragma unroll
  for (int i = 0; i < ITERS; ++i) {
    const bool ok = attn_plan_in(p, i, THREADS, CPR);
    ptx_cp_async16(stage + i * RSTEP * LDB, ok ? src : base, ok);
    src += p.step;
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) attn_mma(const attn_args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned sQ = ptx_smem_u32(smem), sK = sQ + Q_TILE * 2, sV = sK + STAGES * KV_TILE * 2;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;

  int tile, h, b;
  attn_block(blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, IS_CAUSAL, &tile, &h, &b);
  const int SQ = a.SQ, hk = attn_kv_head(h, a.HQ, a.HKV);
  const int kv_len = a.kv_lens ? ((const int *)a.kv_lens)[b] : a.SKV;
  const int m0 = tile * BLOCK_M;
  int n_full, n_end;
  attn_kv_tiles(m0, BLOCK_M, BLOCK_N, SQ, kv_len, IS_CAUSAL, &n_full, &n_end);

  const long long q_pitch = (long long)a.HQ * HEAD_DIM, kv_pitch = (long long)a.HKV * HEAD_DIM;
  const elem_t *Qg = (const elem_t *)a.q + attn_q_offset(b, 0, h, SQ, a.HQ, HEAD_DIM);
  const elem_t *Kg = (const elem_t *)a.k + attn_kv_offset(b, 0, hk, a.SKV, a.HKV, HEAD_DIM);
  const elem_t *Vg = (const elem_t *)a.v + attn_kv_offset(b, 0, hk, a.SKV, a.HKV, HEAD_DIM);
  attn_plan pkv = attn_plan_rows(tid, THREADS, CPR, 0, kv_len, kv_pitch, LD);

  // Prologue: Q with K of tile 0 in group 0, V of tile 0 in group 1, then K and V of the tiles up
  // to STAGES-2, two groups per tile (empty ones past the last tile), so that before tile n's
  // first wait 2*(STAGES-1) + 2n groups are committed: K of tile n is group 2n, V 2n+1.
  if (n_end > 0) copy_tile<Q_ITERS>(sQ, Qg, attn_plan_rows(tid, THREADS, CPR, m0, SQ, q_pitch, LD));
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < n_end) copy_tile<KV_ITERS>(sK + s * KV_TILE * 2, Kg, pkv);
    ptx_cp_async_commit();
    if (s < n_end) copy_tile<KV_ITERS>(sV + s * KV_TILE * 2, Vg, pkv);
    ptx_cp_async_commit();
    attn_plan_next(&pkv, BLOCK_N, kv_pitch);
  }

  const float sl2 = a.scale_log2;
  float o[DT][4];
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[dt][e] = 0.f;
  float m[2] = {attn_neg_inf(), attn_neg_inf()}, l[2] = {0.f, 0.f};
#if Q_IN_REGS
  unsigned qf[KD][4];  // the warp's Q fragments, read once
#endif
  const int row0 = warp * 16;  // the warp's rows in the tile

  int st = 0, st_fill = STAGES - 1;  // the stage of tile n; the stage tile n+STAGES-1 goes to
  for (int n = 0; n < n_end; ++n) {
    // K of tile n landed (this thread's copies), then visible to all; every warp is past tile
    // n-1, so its stage (st_fill) may be refilled.
    ptx_cp_async_wait<2 * STAGES - 3>();
    __syncthreads();
    if (n + STAGES - 1 < n_end) copy_tile<KV_ITERS>(sK + st_fill * KV_TILE * 2, Kg, pkv);
    ptx_cp_async_commit();
    if (n + STAGES - 1 < n_end) copy_tile<KV_ITERS>(sV + st_fill * KV_TILE * 2, Vg, pkv);
    ptx_cp_async_commit();
    attn_plan_next(&pkv, BLOCK_N, kv_pitch);
#if Q_IN_REGS
    if (n == 0) {
#pragma unroll
      for (int kd = 0; kd < KD; ++kd)
        ptx_ldsm_x4(qf[kd], sQ + attn_ldsm_q_offset(row0, kd, lane, LDB));
    }
#endif

    // S = Q K^T
    float s[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[nt][e] = 0.f;
    const unsigned kst = sK + st * KV_TILE * 2;
#pragma unroll
    for (int kd = 0; kd < KD; ++kd) {
#if Q_IN_REGS
      const unsigned *qa = qf[kd];
#else
      unsigned qa[4];
      ptx_ldsm_x4(qa, sQ + attn_ldsm_q_offset(row0, kd, lane, LDB));
#endif
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {
        unsigned kb[4];
        ptx_ldsm_x4(kb, kst + attn_ldsm_k_offset(np * 16, kd, lane, LDB));
        mma(s[2 * np], qa, kb[0], kb[1]);
        mma(s[2 * np + 1], qa, kb[2], kb[3]);
      }
    }

    // The mask, on the tiles that need it.
    if (n >= n_full) attn_mma_mask(s, NT, lane, m0 + row0, n * BLOCK_N, SQ, kv_len, IS_CAUSAL);

      // Online softmax: row r of the lane's two (g, g+8) holds elements 2r, 2r+1 of each key tile;
      // the quad's four lanes hold the rest of the row.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = attn_mma_row_max(s, NT, r);
      mx = attn_softmax_max(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = attn_softmax_max(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      attn_mma_softmax_row(s, NT, o, DT, r, mx, &m[r], &l[r], sl2);
    }

    // V of tile n landed and is visible to all.
    ptx_cp_async_wait<2 * STAGES - 2>();
    __syncthreads();

    // O += P V, P straight from the S registers.
    const unsigned vst = sV + st * KV_TILE * 2;
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
      unsigned pa[4];
#pragma unroll
      for (int r = 0; r < 4; ++r)
        pa[r] = pack2(s[attn_p_tile(kk, r)][attn_p_elem(r, 0)],
                      s[attn_p_tile(kk, r)][attn_p_elem(r, 1)]);
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
        unsigned vb[4];
        ptx_ldsm_x4_trans(vb, vst + attn_ldsm_v_offset(kk * 16, dp * 16, lane, LDB));
        mma(o[2 * dp], pa, vb[0], vb[1]);
        mma(o[2 * dp + 1], pa, vb[2], vb[3]);
      }
    }
    st = st + 1 == STAGES ? 0 : st + 1;
    st_fill = st_fill + 1 == STAGES ? 0 : st_fill + 1;
  }
  ptx_cp_async_wait<0>();  // only empty groups are left

  // Epilogue: the rows' sums over the quad, normalisation, O staged in the warp's own Q rows (no
  // other warp reads them; with no tile visited Q was never loaded) and stored in 16-byte chunks.
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    inv[r] = attn_softmax_inv(l[r]);
  }
  elem_t *stage = (elem_t *)smem;
  __syncwarp();
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int e = 0; e < 4; e += 2)
      *(unsigned *)(stage + attn_o_stage_offset(row0, dt, lane, e, LD)) =
          pack2(o[dt][e] * inv[attn_mma_c_half(e)], o[dt][e + 1] * inv[attn_mma_c_half(e)]);
  __syncwarp();
  elem_t *Og = (elem_t *)a.o;
#pragma unroll
  for (int i = 0; i < attn_store_iters(CPR); ++i) {
    const int r = attn_store_row(lane, i, CPR), c = attn_store_chunk(lane, i, CPR),
              row = m0 + row0 + r;
    if (row < SQ)
      *(uint4 *)(Og + attn_q_offset(b, row, h, SQ, a.HQ, HEAD_DIM) + c * 8) =
          *(const uint4 *)(stage + (row0 + r) * LD + c * 8);
  }
  if (a.lse && lane % 4 == 0) {
    float *lse = (float *)a.lse;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = attn_mma_lse_row(m0, row0, lane, r);
      if (row < SQ) lse[attn_lse_offset(b, h, row, a.HQ, SQ)] = attn_softmax_lse(m[r], l[r], sl2);
    }
  }
}
