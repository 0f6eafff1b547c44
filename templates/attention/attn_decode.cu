// attn_decode.cu — decode attention: split-KV flash-decoding over a contiguous or paged KV cache,
// a memory-bound stream of K and V that tensor cores consume on the way.
//
// O = softmax(scale Q K^T) V for SQ <= 8 queries per sequence (speculative decoding; the
// bottom-right causal mask when causal == 1), HQ query heads over HKV KV heads (GQA), ragged
// kv_lens, K and V contiguous [B, SKV, HKV, D] or paged [num_pages, PAGE, HKV, D] through a block
// table (the family ABI, attn_abi.h).  f16 / bf16 inputs, fp32 scores and softmax, O in the input
// dtype, LSE in fp32.
//
// Grid (SPLITS, HKV, B): block (s, kvh, b) takes split s of sequence b's keys (attn_split_range:
// whole BLOCK_N-token tiles, balanced, possibly empty) for every one of the group = HQ/HKV query
// heads of KV head kvh and every query: its rows = group*SQ (head, query) pairs, padded to Q_ROWS,
// share each K and V tile, so K and V are read from DRAM once per group.  Tiles of K and V (BLOCK_N
// tokens x D) come into a shared-memory ring by cp.async (STAGES >= 2: STAGES-1 tiles in flight
// while one is consumed; VEC*2-byte copies) or by direct register loads that bypass L1
// (STAGES == 1: the whole tile is requested, then stored to shared memory; the manifest keeps
// these to 16-byte pieces); rows are stored with a 16-byte-chunk XOR swizzle (attn_swz) so
// ldmatrix and the copies are free of bank conflicts; tokens past the split are zero-filled.
// Paged: the block-table entries of the next tile's rows are read into registers while the
// current tile is issued and consumed, then parked in a two-tile page-id buffer in shared memory,
// so the table's latency never sits in front of a K/V load.
//
// Warps: Q_ROWS/16 row warps (wm) x WNS token-slice warps (wn).  Warp (wm, wn) computes
// S = Q K^T for its 16 rows and its NW = BLOCK_N/WNS tokens of the tile with mma.m16n8k16
// (Q and K by ldmatrix), scales to the log2 domain, masks (kv_len, causal), keeps a running max
// and sum per row (quad shuffles), rescales its O accumulator (16 x D, fp32) and adds P V, P
// rounded to the input dtype and taken from the S accumulators as the A fragment, V by
// ldmatrix.trans.  After the last tile the token slices of a row merge in shared memory
// (attn_merge_weight: exact, -inf safe).  SPLITS == 1: the block writes O and LSE.  SPLITS > 1:
// a non-empty split writes its partial (o unnormalised, m, l) to `work` (attn_work_o/_ml), every
// block fences and draws a ticket on counters[b*HKV + kvh]; the block with the last ticket merges
// the SPLITS partials (empty splits skipped, masked rows weight 0), writes O and LSE and puts the
// counter back to 0 for the next launch.
//
// Parameters (#defines from the manifest): SPLITS, BLOCK_N, WARPS, VEC, STAGES, HEAD_DIM, Q_ROWS,
// PAGE; derived THREADS, WMS, WNS, NW, CPR (loads per row), ITERS (loads per thread and operand
// and tile), SMEM; the prefix's RT_DTYPE_<dtype>.  Launch: grid (SPLITS, HKV, B), block THREADS,
// SMEM bytes of dynamic shared memory.  Every index comes from attn_decode_index.h.
#include "attn_abi.h"
#include "attn_decode_index.h"
#include "rt_ptx.h"

#if defined(RT_DTYPE_f16)
#define AD_BF16 0
#elif defined(RT_DTYPE_bf16)
#define AD_BF16 1
#else
#error "attn_decode is compiled for f16 or bf16"
#endif

#define ROW_BYTES     (HEAD_DIM * 2)             // one token's (or row's) D elements
#define TILE_BYTES    (BLOCK_N * ROW_BYTES)      // one operand's tile
#define VB            (VEC * 2)                  // bytes per load
#define NSTAGE        (STAGES > 1 ? STAGES : 1)  // stage buffers
#define Q_BYTES       (Q_ROWS * ROW_BYTES)
#define KV_BYTES      (NSTAGE * 2 * TILE_BYTES)
#define OSCR_BYTES    (4 * WNS * Q_ROWS * (HEAD_DIM + 4))
#define ML_OFF        (Q_BYTES + (KV_BYTES > OSCR_BYTES ? KV_BYTES : OSCR_BYTES))
#define W_OFF         (ML_OFF + 4 * 2 * WNS * Q_ROWS)
#define PG_OFF        (W_OFF + 4 * (SPLITS + 2) * Q_ROWS)
#define TK_OFF        (PG_OFF + 8 * BLOCK_N)
#define PG_PER_THREAD ((BLOCK_N + THREADS - 1) / THREADS)

static_assert(THREADS == 32 * WARPS, "THREADS must be 32*WARPS");
static_assert(Q_ROWS % 16 == 0 && WMS == Q_ROWS / 16 && WARPS % WMS == 0 && WNS == WARPS / WMS,
              "warps: Q_ROWS/16 row warps times WNS token slices");
static_assert(NW == BLOCK_N / WNS && NW % 16 == 0, "each warp's token slice is whole k16 steps");
static_assert(HEAD_DIM % 64 == 0, "rows are at least eight 16-byte chunks (the swizzle)");
static_assert(VB == 16 || VB == 8, "loads are 16 or 8 bytes");
static_assert(CPR == ROW_BYTES / VB && ITERS * THREADS == BLOCK_N * CPR,
              "a tile's loads split evenly");
static_assert(SMEM == TK_OFF + 16, "SMEM (manifest) must match the layout");

// One load's worth of bytes.
struct piece_t {
  unsigned w[VB / 4];
};

// A 16- (cp.async.cg) or 8-byte (.ca) copy into shared memory, zeros when !ok (rt_ptx.h).
__device__ __forceinline__ void cp_async(unsigned dst, const void *src, bool ok) {
#if VB == 16
  ptx_cp_async16(dst, src, ok);
#else
  ptx_cp_async8(dst, src, ok);
#endif
}

// K and V are read once: kept out of L1.
__device__ __forceinline__ piece_t load_stream(const unsigned short *p) {
  piece_t v;
#if VB == 16
  const uint4 x = ptx_ld_stream16(p);
  v.w[0] = x.x, v.w[1] = x.y, v.w[2] = x.z, v.w[3] = x.w;
#else
  const uint2 x = ptx_ld_stream8(p);
  v.w[0] = x.x, v.w[1] = x.y;
#endif
  return v;
}
__device__ __forceinline__ void store_shared(unsigned addr, const piece_t &v) {
#if VB == 16
  ptx_st_shared_v4(addr, v.w[0], v.w[1], v.w[2], v.w[3]);
#else
  ptx_st_shared_v2(addr, v.w[0], v.w[1]);
#endif
}
__device__ __forceinline__ uint4 load_q(const unsigned short *p) { return ptx_ld_nc16(p); }
__device__ __forceinline__ void mma(float c[4], const unsigned a[4], const unsigned *b) {
  ptx_mma_m16n8k16<AD_BF16>(c, a, b[0], b[1]);
}
// Two floats to the input dtype, rounded to nearest: lo in the low half.
__device__ __forceinline__ unsigned pack2(float lo, float hi) { return ptx_pack2<AD_BF16>(lo, hi); }

// No __launch_bounds__: given only the block size, ptxas aimed at about 12 resident warps and
// spilled a few bytes under that register target (64-row blocks with SPLITS > 1, one-warp blocks
// with SPLITS 16); without it the same code needs no more than the default limit (255 registers
// a thread, which fits every THREADS <= 256), and in the configurations tried it used no more
// registers than with __launch_bounds__(THREADS, 1).
extern "C" __global__ void attn_decode(const attn_args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = attn_warp_m(warp, WMS), wn = attn_warp_n(warp, WMS);
  const int group = a.HQ / a.HKV, rows = group * a.SQ, bg = b * a.HKV + kvh;
  if (rows > Q_ROWS) return;  // excluded by the manifest's constraints
  const int *kv_lens = (const int *)a.kv_lens;
  const int kv_len = attn_kv_len(kv_lens, b, a.SKV);
  int t0, t1;
  attn_split_range(kv_len, BLOCK_N, SPLITS, split, &t0, &t1);

  const unsigned q_s = ptx_smem_u32(smem), kv_s = q_s + Q_BYTES;
  float *oscr = (float *)(smem + Q_BYTES);  // the block merge, over the stage buffers
  float *mls = (float *)(smem + ML_OFF);    // [2][WNS*Q_ROWS]: m (then weight), l of each slice
  float *wsm = (float *)(smem + W_OFF);     // [SPLITS][Q_ROWS] split weights, then row M, row L
  float *row_m = wsm + SPLITS * Q_ROWS, *row_l = row_m + Q_ROWS;
  int *ticket = (int *)(smem + TK_OFF);

  if (SPLITS == 1 || t0 < t1) {
    // Q rows of the group (zero rows past `rows`) into shared memory.
    const unsigned short *Q = (const unsigned short *)a.q;
    for (int e = tid; e < Q_ROWS * (ROW_BYTES / 16); e += THREADS) {
      const int r = e / (ROW_BYTES / 16), c = e % (ROW_BYTES / 16);
      uint4 v = make_uint4(0, 0, 0, 0);
      if (r < rows)
        v = load_q(Q +
                   attn_q_offset(b, attn_row_query(r, group), attn_row_head(r, group, kvh), a.SQ,
                                 a.HQ, HEAD_DIM) +
                   c * 8);
      ptx_st_shared_v4(q_s + attn_swz(r, c * 16, ROW_BYTES), v.x, v.y, v.z, v.w);
    }

    // This thread's two rows (g and g+8 of its row warp): their key bounds.
    int bnd[2];
#pragma unroll
    for (int h = 0; h < 2; h++)
      bnd[h] = attn_row_bound(attn_thread_row(wm, lane, h), rows, kv_len, a.SQ, group, a.causal);
    const int mask_from = attn_key_bound(kv_len, a.SQ, 0, a.causal);  // no row is masked below it
    const float scale_log2 = a.scale_log2;
    float m[2] = {ATTN_NEG_INF, ATTN_NEG_INF}, l[2] = {0.f, 0.f};
    float o[HEAD_DIM / 8][4];
#pragma unroll
    for (int nt = 0; nt < HEAD_DIM / 8; nt++)
#pragma unroll
      for (int i = 0; i < 4; i++) o[nt][i] = 0.f;

    const unsigned short *K = (const unsigned short *)a.k, *V = (const unsigned short *)a.v;
#if PAGE
    // Page ids of the tile rows, in shared memory (two tiles: the one being loaded and the next),
    // read from the block table one tile ahead: table_load issues the reads for a tile into
    // registers, table_store puts them into the tile's half after other work hid their latency.
    const int *table = (const int *)a.block_table;
    int *spg = (int *)(smem + PG_OFF);
    int nxt[PG_PER_THREAD];
    auto table_load = [&](int kt) {
#pragma unroll
      for (int p = 0; p < PG_PER_THREAD; p++) {
        const int row = tid + p * THREADS, tok = t0 + kt * BLOCK_N + row;
        nxt[p] = row < BLOCK_N && tok < t1
                     ? __ldg(table + attn_table_index(b, tok, PAGE, a.max_pages))
                     : 0;
      }
    };
    auto table_store = [&](int kt) {
#pragma unroll
      for (int p = 0; p < PG_PER_THREAD; p++)
        if (tid + p * THREADS < BLOCK_N) spg[(kt & 1) * BLOCK_N + tid + p * THREADS] = nxt[p];
    };
#else
    auto table_load = [&](int) {};
    auto table_store = [&](int) {};
#endif
    // Element offset of load i's piece of tile kt (token tok of row `row`).
    auto src_offset = [&](int kt, int i, int row, int tok) {
#if PAGE
      const int page_id = spg[(kt & 1) * BLOCK_N + row];
#else
      const int page_id = 0;
#endif
      return attn_kv_offset(PAGE, page_id, b, tok, a.SKV, a.HKV, kvh, HEAD_DIM) +
             attn_load_piece(tid, i, THREADS, CPR) * VEC;
    };

    // One tile: S = Q K^T, the online softmax, O += P V.
    auto consume = [&](int stage, int base) {
      const unsigned sk = kv_s + stage * 2 * TILE_BYTES, sv = sk + TILE_BYTES;
      float s[NW / 8][4];
#pragma unroll
      for (int j = 0; j < NW / 8; j++)
#pragma unroll
        for (int i = 0; i < 4; i++) s[j][i] = 0.f;
#pragma unroll
      for (int ks = 0; ks < HEAD_DIM / 16; ks++) {
        unsigned qa[4];
        ptx_ldsm_x4(qa, q_s + attn_ldsm_q(16 * wm, ks, lane, ROW_BYTES));
#pragma unroll
        for (int jp = 0; jp < NW / 16; jp++) {
          unsigned kb[4];
          ptx_ldsm_x4(kb, sk + attn_ldsm_k(wn * NW + 16 * jp, ks, lane, ROW_BYTES));
          mma(s[2 * jp], qa, kb);
          mma(s[2 * jp + 1], qa, kb + 2);
        }
      }
      float mx[2];
      attn_decode_scores(s, NW / 8, scale_log2, base + BLOCK_N > mask_from, base + wn * NW, lane,
                         bnd, mx);
#pragma unroll
      for (int h = 0; h < 2; h++) {
        mx[h] = attn_fmax(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
        mx[h] = attn_fmax(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      }
      attn_decode_softmax(s, NW / 8, o, HEAD_DIM / 8, m, l, mx);
#pragma unroll
      for (int kk = 0; kk < NW / 16; kk++) {
        unsigned pa[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
          const float *t = s[attn_p_tile(kk, j)] + attn_p_elem(j);
          pa[j] = pack2(t[0], t[1]);
        }
#pragma unroll
        for (int dp = 0; dp < HEAD_DIM / 16; dp++) {
          unsigned vb[4];
          ptx_ldsm_x4_trans(vb, sv + attn_ldsm_v(wn * NW + 16 * kk, 16 * dp, lane, ROW_BYTES));
          mma(o[2 * dp], pa, vb);
          mma(o[2 * dp + 1], pa, vb + 2);
        }
      }
    };

    const int ntiles = attn_tiles(t0, t1, BLOCK_N);
    table_load(0);
    table_store(0);
#if STAGES > 1
    // cp.async ring: tiles kt+1 .. kt+STAGES-1 in flight while tile kt is consumed.  The loop
    // over a thread's loads is not unrolled: unrolled, the compiler keeps every load's address
    // live across the tile loop (40 registers for 8 loads).
    auto issue = [&](int kt, int stage) {
      const int base = t0 + kt * BLOCK_N;
      const unsigned sk = kv_s + stage * 2 * TILE_BYTES, sv = sk + TILE_BYTES;
#pragma unroll 1
      for (int i = 0; i < ITERS; i++) {
        const int row = attn_load_row(tid, i, THREADS, CPR), tok = base + row;
        const bool ok = tok < t1;
        const long long off = ok ? src_offset(kt, i, row, tok) : 0;
        const unsigned so = attn_swz(row, attn_load_piece(tid, i, THREADS, CPR) * VB, ROW_BYTES);
        cp_async(sk + so, K + off, ok);
        cp_async(sv + so, V + off, ok);
      }
    };
#if PAGE
    __syncthreads();  // page ids of tile 0
#endif
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
      if (st < ntiles) {
        issue(st, st);
#if PAGE
        table_load(st + 1);
        table_store(st + 1);
        __syncthreads();  // page ids of tile st+1, and every thread is done with tile st-1's
#endif
      }
      ptx_cp_async_commit();
    }
    for (int kt = 0; kt < ntiles; kt++) {
      ptx_cp_async_wait<STAGES - 2>();
      __syncthreads();  // tile kt landed for every thread; tile kt-1's stage is free
      const int kn = kt + STAGES - 1;
      if (kn < ntiles) {
        issue(kn, kn % STAGES);
        table_load(kn + 1);
      }
      ptx_cp_async_commit();
      consume(kt % STAGES, t0 + kt * BLOCK_N);
      if (kn < ntiles) table_store(kn + 1);  // read after the next barrier
    }
    ptx_cp_async_wait<0>();
#else
    // Direct loads: the tile's pieces into registers, then into the one stage.
    __syncthreads();  // page ids of tile 0
    for (int kt = 0; kt < ntiles; kt++) {
      const int base = t0 + kt * BLOCK_N;
      piece_t kr[ITERS], vr[ITERS];
#pragma unroll
      for (int i = 0; i < ITERS; i++) {
        const int row = attn_load_row(tid, i, THREADS, CPR), tok = base + row;
        if (tok < t1) {
          const long long off = src_offset(kt, i, row, tok);
          kr[i] = load_stream(K + off);
          vr[i] = load_stream(V + off);
        } else {
#pragma unroll
          for (int w = 0; w < VB / 4; w++) kr[i].w[w] = vr[i].w[w] = 0u;
        }
      }
      table_load(kt + 1);
      __syncthreads();  // tile kt-1 consumed by every warp
#pragma unroll
      for (int i = 0; i < ITERS; i++) {
        const unsigned so = attn_swz(attn_load_row(tid, i, THREADS, CPR),
                                     attn_load_piece(tid, i, THREADS, CPR) * VB, ROW_BYTES);
        store_shared(kv_s + so, kr[i]);
        store_shared(kv_s + TILE_BYTES + so, vr[i]);
      }
      table_store(kt + 1);
      __syncthreads();
      consume(0, base);
    }
#endif
    __syncthreads();  // every warp is done with the stages: they become the merge scratch

    // The token slices of each row merge: o, m and the quad-summed l into shared memory.
#pragma unroll
    for (int h = 0; h < 2; h++) {
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    }
#pragma unroll
    for (int nt = 0; nt < HEAD_DIM / 8; nt++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int r = attn_thread_row(wm, lane, h), d = 8 * nt + attn_acc_col(lane, 2 * h);
        *(float2 *)(oscr + attn_oscr(wn, r, d, Q_ROWS, HEAD_DIM)) =
            make_float2(o[nt][2 * h], o[nt][2 * h + 1]);
      }
    if (lane % 4 == 0)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int r = attn_thread_row(wm, lane, h);
        mls[attn_mlscr(wn, r, Q_ROWS)] = m[h];
        mls[WNS * Q_ROWS + attn_mlscr(wn, r, Q_ROWS)] = l[h];
      }
    __syncthreads();
    for (int r = tid; r < Q_ROWS; r += THREADS)
      attn_merge_slices(mls, r, Q_ROWS, WNS, &row_m[r], &row_l[r]);
    __syncthreads();

#if SPLITS == 1
    unsigned short *O = (unsigned short *)a.o;
    for (int e = tid; e < rows * (HEAD_DIM / 8); e += THREADS) {
      const int r = e / (HEAD_DIM / 8), c = e % (HEAD_DIM / 8);
      float acc[8];
#pragma unroll
      for (int x = 0; x < 8; x++) acc[x] = 0.f;
#pragma unroll
      for (int w = 0; w < WNS; w++) {
        const float wt = mls[attn_mlscr(w, r, Q_ROWS)];
        const float *src = oscr + attn_oscr(w, r, 8 * c, Q_ROWS, HEAD_DIM);
        const float4 x0 = *(const float4 *)src, x1 = *(const float4 *)(src + 4);
        acc[0] += wt * x0.x, acc[1] += wt * x0.y, acc[2] += wt * x0.z, acc[3] += wt * x0.w;
        acc[4] += wt * x1.x, acc[5] += wt * x1.y, acc[6] += wt * x1.z, acc[7] += wt * x1.w;
      }
      const float sc = attn_out_scale(row_l[r]);
      const uint4 v = make_uint4(pack2(acc[0] * sc, acc[1] * sc), pack2(acc[2] * sc, acc[3] * sc),
                                 pack2(acc[4] * sc, acc[5] * sc), pack2(acc[6] * sc, acc[7] * sc));
      *(uint4 *)(O +
                 attn_q_offset(b, attn_row_query(r, group), attn_row_head(r, group, kvh), a.SQ,
                               a.HQ, HEAD_DIM) +
                 8 * c) = v;
    }
    if (a.lse)
      for (int r = tid; r < rows; r += THREADS)
        ((float *)a.lse)[attn_lse_offset(b, attn_row_head(r, group, kvh), attn_row_query(r, group),
                                         a.HQ, a.SQ)] = attn_lse(row_m[r], row_l[r]);
    return;
#else
    // This split's partial: o merged over the slices (relative to the block's M), M and L.
    float *work = (float *)a.work;
    for (int e = tid; e < rows * (HEAD_DIM / 4); e += THREADS) {
      const int r = e / (HEAD_DIM / 4), c = e % (HEAD_DIM / 4);
      float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int w = 0; w < WNS; w++) {
        const float wt = mls[attn_mlscr(w, r, Q_ROWS)];
        const float4 x = *(const float4 *)(oscr + attn_oscr(w, r, 4 * c, Q_ROWS, HEAD_DIM));
        acc.x += wt * x.x, acc.y += wt * x.y, acc.z += wt * x.z, acc.w += wt * x.w;
      }
      *(float4 *)(work + attn_work_o(bg, split, r, SPLITS, rows, HEAD_DIM) + 4 * c) = acc;
    }
    const long long total_rows = (long long)a.B * a.HQ * a.SQ;
    for (int r = tid; r < rows; r += THREADS) {
      float *ml = work + attn_work_ml(bg, split, r, SPLITS, rows, HEAD_DIM, total_rows);
      ml[0] = row_m[r];
      ml[1] = row_l[r];
    }
#endif
  }

#if SPLITS > 1
  // The ticket: every block's partial is visible before its ticket is drawn; the last merges.
  __threadfence();
  __syncthreads();
  if (tid == 0) *ticket = atomicAdd((int *)a.counters + bg, 1);
  __syncthreads();
  if (!attn_ticket_is_last(*ticket, SPLITS)) return;
  __threadfence();
  {
    const float *work = (const float *)a.work;
    const long long total_rows = (long long)a.B * a.HQ * a.SQ;
    for (int r = tid; r < rows; r += THREADS) {
      float M, L;
      attn_merge_splits(work, bg, r, SPLITS, rows, HEAD_DIM, total_rows, kv_len, BLOCK_N, wsm,
                        Q_ROWS, &M, &L);
      row_l[r] = L;
      if (a.lse)
        ((float *)a.lse)[attn_lse_offset(b, attn_row_head(r, group, kvh), attn_row_query(r, group),
                                         a.HQ, a.SQ)] = attn_lse(M, L);
    }
    __syncthreads();
    unsigned short *O = (unsigned short *)a.o;
    for (int e = tid; e < rows * (HEAD_DIM / 8); e += THREADS) {
      const int r = e / (HEAD_DIM / 8), c = e % (HEAD_DIM / 8);
      float acc[8];
#pragma unroll
      for (int x = 0; x < 8; x++) acc[x] = 0.f;
#pragma unroll 4  // a few partials in flight; unrolled fully, SPLITS 16 spilled on sm_80
      for (int s = 0; s < SPLITS; s++) {
        const float wt = wsm[attn_wsm(s, r, Q_ROWS)];
        if (wt != 0.f) {  // empty splits wrote nothing; a masked row's weight is 0
          const float *src = work + attn_work_o(bg, s, r, SPLITS, rows, HEAD_DIM) + 8 * c;
          const float4 x0 = ptx_ld_cg4(src), x1 = ptx_ld_cg4(src + 4);
          acc[0] += wt * x0.x, acc[1] += wt * x0.y, acc[2] += wt * x0.z, acc[3] += wt * x0.w;
          acc[4] += wt * x1.x, acc[5] += wt * x1.y, acc[6] += wt * x1.z, acc[7] += wt * x1.w;
        }
      }
      const float sc = attn_out_scale(row_l[r]);
      const uint4 v = make_uint4(pack2(acc[0] * sc, acc[1] * sc), pack2(acc[2] * sc, acc[3] * sc),
                                 pack2(acc[4] * sc, acc[5] * sc), pack2(acc[6] * sc, acc[7] * sc));
      *(uint4 *)(O +
                 attn_q_offset(b, attn_row_query(r, group), attn_row_head(r, group, kvh), a.SQ,
                               a.HQ, HEAD_DIM) +
                 8 * c) = v;
    }
    if (tid == 0) ((int *)a.counters)[bg] = 0;  // every block of the group has drawn its ticket
  }
#else
  (void)ticket;
  (void)wsm;
#endif
}
