// attn_wgmma.cu — Hopper (sm_90a) flash-attention forward in the FlashAttention-3 manner: TMA
// bulk tensor loads into 128-byte-swizzled shared memory, a warp-specialised producer feeding a
// STAGES-deep K/V ring through full/empty mbarriers, and warpgroup MMA (wgmma.mma_async) for
// both products, with the online softmax in registers.
//
// The family ABI (attn_abi.h): O[b, i, h] = softmax_j(scale * q.k_j) v_j over the keys query i
// attends (kv_len(b) keys, causal bottom-right when IS_CAUSAL), LSE when a.lse != 0; Q, K, V, O
// row-major [B, S, H, D], f16 or bf16, fp32 accumulation and softmax.  GQA: query head h reads
// KV head h / (HQ/HKV).  Contiguous K/V only (no block table); ragged kv_lens are honoured.
// Operands arrive as three CUtensorMaps (attn_tma_maps, attn_tma.h: rank 4 (D, heads, tokens,
// B), boxes of 64 head-dim columns x TMA_ROWS rows, 128-byte swizzle, zero fill out of bounds),
// so any SQ and SKV work: rows past the ends read as 0, keys >= kv_len are masked, rows >= SQ
// are not stored.
//
// Block = one query tile of BLOCK_M = 64*CONSUMERS rows of one head of one sequence (grid
// (ceil(SQ/BLOCK_M), HQ, B); no clusters).  Warpgroup 0 is the producer: one thread loads the Q
// tile once and then K and V tile n into stage n % STAGES, each completing on its own full
// barrier, after the consumers have released the stage's previous tile on its empty barrier.
// Warpgroups 1..CONSUMERS each own 64 query rows.  Per KV tile n:
//   S = Q K_n^T   wgmma m64 n BLOCK_N k16 x HEAD_DIM/16, A (Q) and B (K) from shared memory,
//                 both K-major (the head dim contiguous), the first slab with scale-d 0;
//   softmax       row maxima over the quad of the attended scores (tiles from attn_first_masked
//                 on are masked: keys >= kv_len, causal), p = exp2(scale_log2 * (s - m))
//                 (ex2.approx), running sums, the old output scaled by exp2(scale_log2 *
//                 (m_old - m_new)); the scores are read, never overwritten;
//   O += P V_n    wgmma m64 n HEAD_DIM k16 x BLOCK_N/16, A = P from registers (the softmax
//                 output packed to 16-bit pairs where each thread holds it, no shuffles: the
//                 register-A fragment of a k16 slab is the accumulator layout of its 16
//                 columns), B = V from shared memory MN-major with imm-trans-b 1.
// OVERLAP 1 (FA3's intra-warpgroup overlap): iteration n issues S_n = Q K_n^T, then O += P_{n-1}
// V_{n-1}, waits for S_n only (wgmma.wait_group 1) and runs the softmax of tile n while the tensor
// cores do the PV product of tile n-1; then waits for it (wait_group 0) and rescales O (a warp
// whose factors are all 1 skips that).  OVERLAP 0
// runs the two products and the softmax one after another (the simplest pipeline).  A consumer
// warp's lane 0 arrives at a stage's empty barrier once the wgmma group reading it has completed.
// CONSUMERS 2: setmaxnreg moves registers from the producer (down to 24) to the consumers (up to
// 240); with one consumer every thread may have 255 anyway.
//
// Ragged kv_lens: the V rows of the last tile at keys >= kv_len are cleared in shared memory
// before its PV product (clear_v_tail), so nothing the caller keeps past a sequence reaches O.
//
// Epilogue: row sums over the quad, O / l (0 for a row with no key), O stored from the
// accumulator layout as 16-bit pairs, rows < SQ only; LSE = ln2 * (m*scale_log2 + log2 l), -inf
// for a row with no key.  Every index, placement, descriptor field, fragment coordinate, stage
// and parity, and every softmax step comes from attn_wgmma_index.h, which
// tests/unit/test_attn_wgmma_emulate.c runs on the host against a double-precision reference.
//
// Parameters: HEAD_DIM (64, 128, 256; == D), IS_CAUSAL (== causal), CONSUMERS (1, 2), BLOCK_N
// (64, 80, 96, 128, 176), STAGES, OVERLAP, the prefix's RT_DTYPE_f16 / RT_DTYPE_bf16; derived
// BLOCK_M, THREADS = 128*(CONSUMERS+1).  Launch: grid (ceil(SQ/BLOCK_M), HQ, B), block THREADS,
// dynamic shared memory SMEM = attn_smem_bytes (> 48 KB: the host raises the limit).
#include "attn_abi.h"
#include "attn_tma.h"
#include "attn_wgmma_index.h"
#include "rt_ptx.h"

#if defined(RT_DTYPE_f16)
#define WGMMA_TYPE "f16"
#define AW_BF16    0
#elif defined(RT_DTYPE_bf16)
#define WGMMA_TYPE "bf16"
#define AW_BF16    1
#else
#error "attn_wgmma supports f16 and bf16 only"
#endif

#ifndef BLOCK_M
#define BLOCK_M (64 * CONSUMERS)
#endif
#ifndef THREADS
#define THREADS (128 * (CONSUMERS + 1))
#endif
#ifndef OVERLAP
#define OVERLAP 1
#endif
#define KCH            (HEAD_DIM / ATTN_CHUNK)  // 64-column boxes per tile
#define SACC           (BLOCK_N / 2)            // S accumulators per thread
#define OACC           (HEAD_DIM / 2)           // O accumulators per thread
#define PSLABS         (BLOCK_N / 16)           // k16 slabs of O += P V
#define EMPTY_ARRIVALS (4 * CONSUMERS)
#define PRODUCER_REGS  24
#define CONSUMER_REGS  240

static_assert(HEAD_DIM == 64 || HEAD_DIM == 128 || HEAD_DIM == 256,
              "HEAD_DIM must be 64, 128 or 256");
static_assert(CONSUMERS == 1 || CONSUMERS == 2, "CONSUMERS must be 1 or 2");
static_assert(BLOCK_M == 64 * CONSUMERS && THREADS == 128 * (CONSUMERS + 1), "BLOCK_M, THREADS");
static_assert(BLOCK_N % 16 == 0 && BLOCK_N >= 64 && BLOCK_N <= 256,
              "BLOCK_N: a multiple of 16 in 64..256");
static_assert(STAGES >= 1, "STAGES");
static_assert(CONSUMERS == 1 || (PRODUCER_REGS * 128 + CONSUMER_REGS * 256 <= 65536),
              "register split");

#define CAT_(a, b) a##b
#define CAT(a, b)  CAT_(a, b)
#define WGMMA_QK   CAT(wgmma_ss_n, BLOCK_N)
#define WGMMA_PV   CAT(wgmma_rs_n, HEAD_DIM)

// Two floats as a 16-bit pair (lo in the low half: the lower column / address).
__device__ __forceinline__ unsigned pack2(float lo, float hi) { return ptx_pack2<AW_BF16>(lo, hi); }

// S = A B (first: scale-d 0, write-only accumulators, so S is no input of a tile's first wgmma
// and its registers are free between the softmax and the next tile) or S += A B, A (Q) and B
// (K) from shared memory, both K-major; O += P V with A (P) from registers and B (V) from shared
// memory MN-major (imm-trans-b 1): rt_ptx.h's instructions for the N of each product.
#define AW_TYPES WGMMA_TYPE "." WGMMA_TYPE
#if BLOCK_N == 64 || BLOCK_N == 80 || BLOCK_N == 96 || BLOCK_N == 128 || BLOCK_N == 176
PTX_WGMMA_SS(WGMMA_QK, BLOCK_N, AW_TYPES, "16", "p, 1, 1, 0, 0")
#else
#error "attn_wgmma: BLOCK_N must be 64, 80, 96, 128 or 176 (the m64nNk16 shapes rt_ptx.h lists)"
#endif
PTX_WGMMA_RS(WGMMA_PV, HEAD_DIM, AW_TYPES, "16", "q, 1, 1, 1")

// S = Q K^T for the K tile in stage `stage`: HEAD_DIM/16 wgmmas, one group.
__device__ __forceinline__ void issue_qk(float *s, unsigned sQ, unsigned sK, int c, int stage) {
  const unsigned long long dq = ptx_desc(sQ, ATTN_LBO_KMAJOR, ATTN_SBO),
                           dk = ptx_desc(sK, ATTN_LBO_KMAJOR, ATTN_SBO);
  ptx_wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < HEAD_DIM / 16; ++ks)
    WGMMA_QK(s, ptx_desc_add(dq, attn_q_desc_start(c, ks, BLOCK_M)),
             ptx_desc_add(dk, attn_k_desc_start(stage, ks, BLOCK_N, HEAD_DIM)), ks == 0);
  ptx_wgmma_commit();
}

// O += P V for the V tile in stage `stage`: BLOCK_N/16 wgmmas with P's slab kk from registers.
__device__ __forceinline__ void issue_pv(float *o, const unsigned *p, unsigned sV, int stage) {
  const unsigned long long dv = ptx_desc(sV, attn_v_lbo(BLOCK_N), ATTN_SBO);
  ptx_wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < PSLABS; ++kk)
    WGMMA_PV(o, p + 4 * kk, ptx_desc_add(dv, attn_v_desc_start(stage, kk, BLOCK_N, HEAD_DIM)));
  ptx_wgmma_commit();
}

// The softmax of a finished score tile s (the columns each of the thread's rows attends below
// e0 and e1): the quad's row maxima, the running maxima and partial sums, the factor for O, and
// p packed to 16-bit pairs as the A operand of O += P V.  s is only read (attn_softmax_step).
__device__ __forceinline__ void softmax_core(const float *s, unsigned *p, float *m, float *l,
                                             float *factor, int t, int e0, int e1,
                                             float scale_log2) {
  float mx[2], pf[SACC];
  attn_masked_scores(s, SACC, e0, e1, pf);
  attn_row_max(pf, SACC, mx);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    mx[r] = attn_fmax(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
    mx[r] = attn_fmax(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
  }
  attn_softmax_step(pf, SACC, mx, m, l, factor, scale_log2);
#pragma unroll
  for (int kk = 0; kk < PSLABS; ++kk)
#pragma unroll
    for (int q = 0; q < 4; ++q)
      p[4 * kk + q] = pack2(pf[attn_p_acc(kk, 2 * q)], pf[attn_p_acc(kk, 2 * q + 1)]);
}
// Tiles from attn_first_masked on are masked; the others take the mask-free copy.
__device__ __forceinline__ void softmax_tile(const float *s, unsigned *p, float *m, float *l,
                                             float *factor, bool masked, int t, int row0, int n0,
                                             int L, int SQ, float scale_log2) {
  if (masked) {
    int e0, e1;
    attn_tile_ends(t, row0, n0, L, SQ, IS_CAUSAL, &e0, &e1);
    softmax_core(s, p, m, l, factor, t, e0, e1, scale_log2);
  } else {
    softmax_core(s, p, m, l, factor, t, ATTN_NO_MASK, ATTN_NO_MASK, scale_log2);
  }
}

// O *= factor, skipped by a warp whose rows all kept their running maxima (every factor exactly
// 1, the usual case once a row's maximum has settled: the HEAD_DIM/2 multiplies would change
// nothing).  A warp vote keeps the branch uniform.
__device__ __forceinline__ void rescale(float *o, const float *factor) {
  if (__any_sync(0xffffffffu, factor[0] != 1.f || factor[1] != 1.f)) attn_rescale(o, OACC, factor);
}

// Ragged inputs: rows of the V stage at keys >= L (the caller's data past the sequence, which
// TMA loads since they lie inside SKV) are cleared before the PV product reads them, by every
// consumer thread, each with its share of the 16-byte chunks; the generic-proxy stores are
// fenced for the tensor cores (async proxy) and the consumers meet at named barrier 1 before
// any of them issues the product.  Uniform: every consumer thread has the same n, L, kv_lens.
__device__ __forceinline__ void clear_v_tail(unsigned sV, int stage, int n, int L, bool ragged) {
  const int from = attn_v_clear_from(n, BLOCK_N, L), tc = threadIdx.x - 128;
  if (!ragged || from == BLOCK_N) return;
  for (int r = from + tc / 8; r < BLOCK_N; r += 16 * CONSUMERS)
#pragma unroll
    for (int j = 0; j < KCH; ++j)
      ptx_st_shared_zero16(sV + attn_v_clear_offset(stage, j, r, tc % 8, BLOCK_N, HEAD_DIM));
  ptx_fence_proxy_async();
  ptx_bar_sync1<128 * CONSUMERS>();
}

// A consumer warp is done with a stage: its lane 0 arrives at the stage's empty barrier.
__device__ __forceinline__ void release(unsigned bar) {
  __syncwarp();
  if (threadIdx.x % 32 == 0) ptx_mbar_arrive(bar);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    attn_wgmma(const __grid_constant__ attn_tma_maps maps, const attn_args a) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned base =
      (ptx_smem_u32(smem_raw) + 1023u) & ~1023u;  // the 128-byte swizzle wants 1024
  const unsigned sQ = base;
  const unsigned sK = base + attn_smem_k(BLOCK_M, HEAD_DIM);
  const unsigned sV = base + attn_smem_v(BLOCK_M, BLOCK_N, HEAD_DIM, STAGES);
  const unsigned bars = base + attn_smem_bars(BLOCK_M, BLOCK_N, HEAD_DIM, STAGES);
#define BAR(i) (bars + 8u * (unsigned)(i))

  const int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  const int tiles_m = attn_ceil_div(a.SQ, BLOCK_M);
  const int m0 = attn_m_tile(blockIdx.x, tiles_m, IS_CAUSAL) * BLOCK_M;
  const int h = blockIdx.y, b = blockIdx.z, hkv = h / (a.HQ / a.HKV);
  const int L = attn_kv_len((const int *)a.kv_lens, b, a.SKV);
  const int n_tiles = attn_kv_tiles(m0, BLOCK_M, L, a.SQ, IS_CAUSAL, BLOCK_N);

  if (tid == 0) {
    ptx_mbar_init(BAR(attn_bar_q()), 1);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      ptx_mbar_init(BAR(attn_bar_kfull(s)), 1);
      ptx_mbar_init(BAR(attn_bar_kempty(s)), EMPTY_ARRIVALS);
      ptx_mbar_init(BAR(attn_bar_vfull(s)), 1);
      ptx_mbar_init(BAR(attn_bar_vempty(s)), EMPTY_ARRIVALS);
    }
    ptx_mbar_init_fence();
  }
  __syncthreads();  // barriers initialised before anyone loads or waits

  if (wg == 0) {
    // The producer: one thread streams Q once, then K and V of every KV tile through the ring.
#if CONSUMERS == 2
    ptx_setmaxnreg_dec<PRODUCER_REGS>();
#endif
    if (t == 0 && n_tiles > 0) {
      ptx_mbar_expect_tx(BAR(attn_bar_q()), attn_tile_bytes(BLOCK_M, HEAD_DIM));
#pragma unroll
      for (int j = 0; j < KCH; ++j)
        ptx_tma_load_4d(sQ + attn_q_box(j, BLOCK_M), &maps.q, BAR(attn_bar_q()), attn_box_col(j), h,
                        m0, b);
      for (int n = 0; n < n_tiles; ++n) {
        const int s = ptx_stage(n, STAGES);
        if (n >= STAGES) ptx_mbar_wait(BAR(attn_bar_kempty(s)), ptx_empty_parity(n, STAGES));
        ptx_mbar_expect_tx(BAR(attn_bar_kfull(s)), attn_tile_bytes(BLOCK_N, HEAD_DIM));
#pragma unroll
        for (int j = 0; j < KCH; ++j)
          ptx_tma_load_4d(sK + attn_kv_box(s, j, BLOCK_N, HEAD_DIM), &maps.k,
                          BAR(attn_bar_kfull(s)), attn_box_col(j), hkv, n * BLOCK_N, b);
        if (n >= STAGES) ptx_mbar_wait(BAR(attn_bar_vempty(s)), ptx_empty_parity(n, STAGES));
        ptx_mbar_expect_tx(BAR(attn_bar_vfull(s)), attn_tile_bytes(BLOCK_N, HEAD_DIM));
#pragma unroll
        for (int j = 0; j < KCH; ++j)
          ptx_tma_load_4d(sV + attn_kv_box(s, j, BLOCK_N, HEAD_DIM), &maps.v,
                          BAR(attn_bar_vfull(s)), attn_box_col(j), hkv, n * BLOCK_N, b);
      }
    }
  } else {
#if CONSUMERS == 2
    ptx_setmaxnreg_inc<CONSUMER_REGS>();
#endif
    const int c = wg - 1;                        // this consumer's 64 rows: m0 + 64c ..
    const int row0 = attn_thread_row(m0, c, t);  // the thread's rows: row0, row0 + 8
    const int first_masked = attn_first_masked(m0, L, a.SQ, IS_CAUSAL, BLOCK_N, n_tiles);
    float o[OACC], m[2] = {ATTN_NEG_INF, ATTN_NEG_INF}, l[2] = {0.f, 0.f}, factor[2];
#pragma unroll
    for (int i = 0; i < OACC; ++i) o[i] = 0.f;

    if (n_tiles > 0) {
      float s[SACC];
      unsigned p[SACC / 2];
      ptx_mbar_wait(BAR(attn_bar_q()), 0);
#if OVERLAP
      // tile 0: S_0 and its softmax; O is still zero
      ptx_mbar_wait(BAR(attn_bar_kfull(0)), 0);
      issue_qk(s, sQ, sK, c, 0);
      ptx_wgmma_wait<0>();
      ptx_reg_fence<SACC>(s);
      release(BAR(attn_bar_kempty(0)));
      softmax_tile(s, p, m, l, factor, first_masked == 0, t, row0, 0, L, a.SQ, a.scale_log2);
      for (int n = 1; n < n_tiles; ++n) {
        const int sn = ptx_stage(n, STAGES), sp = ptx_stage(n - 1, STAGES);
        ptx_mbar_wait(BAR(attn_bar_kfull(sn)), ptx_full_parity(n, STAGES));
        issue_qk(s, sQ, sK, c, sn);  // S_n = Q K_n^T ...
        ptx_mbar_wait(BAR(attn_bar_vfull(sp)), ptx_full_parity(n - 1, STAGES));
        issue_pv(o, p, sV, sp);  // ... and O += P_{n-1} V_{n-1} behind it
        ptx_wgmma_wait<1>();     // S_n is done (groups complete in order)
        ptx_reg_fence<SACC>(s);
        release(BAR(attn_bar_kempty(sn)));
        unsigned pn[SACC / 2];
        softmax_tile(s, pn, m, l, factor, n >= first_masked, t, row0, n * BLOCK_N, L, a.SQ,
                     a.scale_log2);
        ptx_wgmma_wait<0>();  // O += P_{n-1} V_{n-1} is done
        ptx_reg_fence<OACC>(o);
        ptx_reg_fence<SACC / 2>(p);
        release(BAR(attn_bar_vempty(sp)));
        rescale(o, factor);
#pragma unroll
        for (int i = 0; i < SACC / 2; ++i) p[i] = ptx_reg_move(pn[i]);
      }
      const int sl = ptx_stage(n_tiles - 1, STAGES);
      ptx_mbar_wait(BAR(attn_bar_vfull(sl)), ptx_full_parity(n_tiles - 1, STAGES));
      clear_v_tail(sV, sl, n_tiles - 1, L, a.kv_lens != 0);
      issue_pv(o, p, sV, sl);
      ptx_wgmma_wait<0>();
      ptx_reg_fence<OACC>(o);
      release(BAR(attn_bar_vempty(sl)));
#else
      for (int n = 0; n < n_tiles; ++n) {
        const int sn = ptx_stage(n, STAGES);
        ptx_mbar_wait(BAR(attn_bar_kfull(sn)), ptx_full_parity(n, STAGES));
        issue_qk(s, sQ, sK, c, sn);
        ptx_wgmma_wait<0>();
        ptx_reg_fence<SACC>(s);
        release(BAR(attn_bar_kempty(sn)));
        softmax_tile(s, p, m, l, factor, n >= first_masked, t, row0, n * BLOCK_N, L, a.SQ,
                     a.scale_log2);
        rescale(o, factor);
        ptx_mbar_wait(BAR(attn_bar_vfull(sn)), ptx_full_parity(n, STAGES));
        clear_v_tail(sV, sn, n, L, a.kv_lens != 0);  // only the last tile has rows past L
        issue_pv(o, p, sV, sn);
        ptx_wgmma_wait<0>();
        ptx_reg_fence<OACC>(o);
        release(BAR(attn_bar_vempty(sn)));
      }
#endif
    }

    // Epilogue: the quad's row sums, O / l, the 16-bit stores of rows < SQ, the LSE.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    }
    attn_normalise(o, OACC, l);
    unsigned short *O = (unsigned short *)a.o;
#pragma unroll
    for (int i = 0; i < OACC; i += 2) {
      const int row = attn_o_row(row0, i);
      if (row < a.SQ)
        *(unsigned *)(O + attn_o_offset(b, row, h, attn_acc_col(t, i), a.SQ, a.HQ, HEAD_DIM)) =
            pack2(o[i], o[i + 1]);
    }
    if (a.lse && attn_lse_writer(t)) {
      float *lse = (float *)a.lse;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = attn_lse_row(row0, r);
        if (row < a.SQ)
          lse[attn_lse_offset(b, h, row, a.SQ, a.HQ)] = attn_lse(m[r], l[r], a.scale_log2);
      }
    }
  }
#undef BAR
}
