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

#if defined(RT_DTYPE_f16)
#define WGMMA_TYPE "f16"
#define CVT_PACK "cvt.rn.f16x2.f32"
#elif defined(RT_DTYPE_bf16)
#define WGMMA_TYPE "bf16"
#define CVT_PACK "cvt.rn.bf16x2.f32"
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
#define KCH (HEAD_DIM / ATTN_CHUNK)  // 64-column boxes per tile
#define SACC (BLOCK_N / 2)           // S accumulators per thread
#define OACC (HEAD_DIM / 2)          // O accumulators per thread
#define PSLABS (BLOCK_N / 16)        // k16 slabs of O += P V
#define EMPTY_ARRIVALS (4 * CONSUMERS)
#define PRODUCER_REGS 24
#define CONSUMER_REGS 240

static_assert(HEAD_DIM == 64 || HEAD_DIM == 128 || HEAD_DIM == 256, "HEAD_DIM must be 64, 128 or 256");
static_assert(CONSUMERS == 1 || CONSUMERS == 2, "CONSUMERS must be 1 or 2");
static_assert(BLOCK_M == 64 * CONSUMERS && THREADS == 128 * (CONSUMERS + 1), "BLOCK_M, THREADS");
static_assert(BLOCK_N % 16 == 0 && BLOCK_N >= 64 && BLOCK_N <= 256, "BLOCK_N: a multiple of 16 in 64..256");
static_assert(STAGES >= 1, "STAGES");
static_assert(CONSUMERS == 1 || (PRODUCER_REGS * 128 + CONSUMER_REGS * 256 <= 65536), "register split");

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define WGMMA_QK CAT(wgmma_ss_n, BLOCK_N)
#define WGMMA_PV CAT(wgmma_rs_n, HEAD_DIM)

__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// One box of a rank-4 tensor map (D, heads, tokens, B) into shared memory at dst, completing on bar.
__device__ __forceinline__ void tma_load_4d(unsigned dst, const attn_tma_map *map, unsigned bar, int c0, int c1,
                                            int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
      "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of registers a wgmma writes across its wait_group.
template <int N> __device__ __forceinline__ void reg_fence(float *d) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// The same for the P registers a wgmma reads: used after its wait_group, it keeps them live (and
// unwritten) until then, so the compiler cannot put the next tile's P into them while the
// tensor cores still read them (ptxas would then serialise the wgmmas: warning C7513).
template <int N> __device__ __forceinline__ void reg_fence(unsigned *d) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// A register copy the compiler cannot fold away: P_n reaches the registers the PV wgmmas read
// only here, after the previous PV group has completed.  (A folded copy would have the last
// tile's PV read the registers P_n was written into while the tile before's PV was in flight,
// which ptxas counts as a hazard and answers by serialising every wgmma: warning C7513.)
__device__ __forceinline__ unsigned reg_move(unsigned x) {
  unsigned y;
  asm volatile("mov.b32 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

// Two floats as a 16-bit pair (lo in the low half: the lower column / address).
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  unsigned r;
  asm(CVT_PACK " %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// S = A B (first) or S += A B: m64n64k16, A (Q) and B (K) from shared memory, both K-major.  The
// first slab has scale-d 0 and write-only accumulators, so S is no input of a tile's first wgmma
// and its registers are free between the softmax and the next tile.
__device__ __forceinline__ void wgmma_ss_n64(float *d, unsigned long long da, unsigned long long db, bool first) {
  if (first)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
        "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
        "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
        "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31])
        : "l"(da), "l"(db), "r"(0));
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(1));
}

// S = A B (first) or S += A B: m64n80k16, A (Q) and B (K) from shared memory, both K-major.  The
// first slab has scale-d 0 and write-only accumulators, so S is no input of a tile's first wgmma
// and its registers are free between the softmax and the next tile.
__device__ __forceinline__ void wgmma_ss_n80(float *d, unsigned long long da, unsigned long long db, bool first) {
  if (first)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n80k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, %40, %41, p, 1, 1, 0, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
        "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
        "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
        "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]),
        "=f"(d[32]), "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39])
        : "l"(da), "l"(db), "r"(0));
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n80k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, %40, %41, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
        : "l"(da), "l"(db), "r"(1));
}

// S = A B (first) or S += A B: m64n96k16, A (Q) and B (K) from shared memory, both K-major.  The
// first slab has scale-d 0 and write-only accumulators, so S is no input of a tile's first wgmma
// and its registers are free between the softmax and the next tile.
__device__ __forceinline__ void wgmma_ss_n96(float *d, unsigned long long da, unsigned long long db, bool first) {
  if (first)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n96k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, %48, %49, p, 1, 1, 0, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
        "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
        "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
        "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]),
        "=f"(d[32]), "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39]),
        "=f"(d[40]), "=f"(d[41]), "=f"(d[42]), "=f"(d[43]), "=f"(d[44]), "=f"(d[45]), "=f"(d[46]), "=f"(d[47])
        : "l"(da), "l"(db), "r"(0));
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n96k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, %48, %49, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
        : "l"(da), "l"(db), "r"(1));
}

// S = A B (first) or S += A B: m64n128k16, A (Q) and B (K) from shared memory, both K-major.  The
// first slab has scale-d 0 and write-only accumulators, so S is no input of a tile's first wgmma
// and its registers are free between the softmax and the next tile.
__device__ __forceinline__ void wgmma_ss_n128(float *d, unsigned long long da, unsigned long long db, bool first) {
  if (first)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
        "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
        "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
        "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]),
        "=f"(d[32]), "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39]),
        "=f"(d[40]), "=f"(d[41]), "=f"(d[42]), "=f"(d[43]), "=f"(d[44]), "=f"(d[45]), "=f"(d[46]), "=f"(d[47]),
        "=f"(d[48]), "=f"(d[49]), "=f"(d[50]), "=f"(d[51]), "=f"(d[52]), "=f"(d[53]), "=f"(d[54]), "=f"(d[55]),
        "=f"(d[56]), "=f"(d[57]), "=f"(d[58]), "=f"(d[59]), "=f"(d[60]), "=f"(d[61]), "=f"(d[62]), "=f"(d[63])
        : "l"(da), "l"(db), "r"(0));
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(1));
}

// S = A B (first) or S += A B: m64n176k16, A (Q) and B (K) from shared memory, both K-major.  The
// first slab has scale-d 0 and write-only accumulators, so S is no input of a tile's first wgmma
// and its registers are free between the softmax and the next tile.
__device__ __forceinline__ void wgmma_ss_n176(float *d, unsigned long long da, unsigned long long db, bool first) {
  if (first)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n176k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}, %88, %89, p, 1, 1, 0, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
        "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
        "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
        "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]),
        "=f"(d[32]), "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39]),
        "=f"(d[40]), "=f"(d[41]), "=f"(d[42]), "=f"(d[43]), "=f"(d[44]), "=f"(d[45]), "=f"(d[46]), "=f"(d[47]),
        "=f"(d[48]), "=f"(d[49]), "=f"(d[50]), "=f"(d[51]), "=f"(d[52]), "=f"(d[53]), "=f"(d[54]), "=f"(d[55]),
        "=f"(d[56]), "=f"(d[57]), "=f"(d[58]), "=f"(d[59]), "=f"(d[60]), "=f"(d[61]), "=f"(d[62]), "=f"(d[63]),
        "=f"(d[64]), "=f"(d[65]), "=f"(d[66]), "=f"(d[67]), "=f"(d[68]), "=f"(d[69]), "=f"(d[70]), "=f"(d[71]),
        "=f"(d[72]), "=f"(d[73]), "=f"(d[74]), "=f"(d[75]), "=f"(d[76]), "=f"(d[77]), "=f"(d[78]), "=f"(d[79]),
        "=f"(d[80]), "=f"(d[81]), "=f"(d[82]), "=f"(d[83]), "=f"(d[84]), "=f"(d[85]), "=f"(d[86]), "=f"(d[87])
        : "l"(da), "l"(db), "r"(0));
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n176k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}, %88, %89, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
        : "l"(da), "l"(db), "r"(1));
}

// O += P V: m64n64k16, A (P) from registers, B (V) from shared memory MN-major (imm-trans-b 1).
__device__ __forceinline__ void wgmma_rs_n64(float *d, const unsigned *p, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred q;\nsetp.ne.b32 q, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, q, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3]), "l"(db), "r"(1));
}

// O += P V: m64n128k16, A (P) from registers, B (V) from shared memory MN-major (imm-trans-b 1).
__device__ __forceinline__ void wgmma_rs_n128(float *d, const unsigned *p, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred q;\nsetp.ne.b32 q, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, q, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3]), "l"(db), "r"(1));
}

// O += P V: m64n256k16, A (P) from registers, B (V) from shared memory MN-major (imm-trans-b 1).
__device__ __forceinline__ void wgmma_rs_n256(float *d, const unsigned *p, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred q;\nsetp.ne.b32 q, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." WGMMA_TYPE "." WGMMA_TYPE " "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, q, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3]), "l"(db), "r"(1));
}

// S = Q K^T for the K tile in stage `stage`: HEAD_DIM/16 wgmmas, one group.
__device__ __forceinline__ void issue_qk(float *s, unsigned sQ, unsigned sK, int c, int stage) {
  const unsigned long long dq = attn_desc(sQ, ATTN_LBO_KMAJOR, ATTN_SBO), dk = attn_desc(sK, ATTN_LBO_KMAJOR, ATTN_SBO);
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < HEAD_DIM / 16; ++ks)
    WGMMA_QK(s, attn_desc_add(dq, attn_q_desc_start(c, ks, BLOCK_M)),
             attn_desc_add(dk, attn_k_desc_start(stage, ks, BLOCK_N, HEAD_DIM)), ks == 0);
  wgmma_commit();
}

// O += P V for the V tile in stage `stage`: BLOCK_N/16 wgmmas with P's slab kk from registers.
__device__ __forceinline__ void issue_pv(float *o, const unsigned *p, unsigned sV, int stage) {
  const unsigned long long dv = attn_desc(sV, attn_v_lbo(BLOCK_N), ATTN_SBO);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < PSLABS; ++kk)
    WGMMA_PV(o, p + 4 * kk, attn_desc_add(dv, attn_v_desc_start(stage, kk, BLOCK_N, HEAD_DIM)));
  wgmma_commit();
}

// The softmax of a finished score tile s (the columns each of the thread's rows attends below
// e0 and e1): the quad's row maxima, the running maxima and partial sums, the factor for O, and
// p packed to 16-bit pairs as the A operand of O += P V.  s is only read (attn_softmax_step).
__device__ __forceinline__ void softmax_core(const float *s, unsigned *p, float *m, float *l, float *factor, int t,
                                             int e0, int e1, float scale_log2) {
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
    for (int q = 0; q < 4; ++q) p[4 * kk + q] = pack2(pf[attn_p_acc(kk, 2 * q)], pf[attn_p_acc(kk, 2 * q + 1)]);
}
// Tiles from attn_first_masked on are masked; the others take the mask-free copy.
__device__ __forceinline__ void softmax_tile(const float *s, unsigned *p, float *m, float *l, float *factor,
                                             bool masked, int t, int row0, int n0, int L, int SQ, float scale_log2) {
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
      asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(sV + attn_v_clear_offset(stage, j, r, tc % 8, BLOCK_N, HEAD_DIM)),
                   "r"(0)
                   : "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("bar.sync 1, %0;\n" ::"n"(128 * CONSUMERS) : "memory");
}

// A consumer warp is done with a stage: its lane 0 arrives at the stage's empty barrier.
__device__ __forceinline__ void release(unsigned bar) {
  __syncwarp();
  if (threadIdx.x % 32 == 0) mbar_arrive(bar);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
attn_wgmma(const __grid_constant__ attn_tma_maps maps, const attn_args a) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;  // the 128-byte swizzle wants 1024
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
    mbar_init(BAR(attn_bar_q()), 1);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(BAR(attn_bar_kfull(s)), 1);
      mbar_init(BAR(attn_bar_kempty(s)), EMPTY_ARRIVALS);
      mbar_init(BAR(attn_bar_vfull(s)), 1);
      mbar_init(BAR(attn_bar_vempty(s)), EMPTY_ARRIVALS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();  // barriers initialised before anyone loads or waits

  if (wg == 0) {
    // The producer: one thread streams Q once, then K and V of every KV tile through the ring.
#if CONSUMERS == 2
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
#endif
    if (t == 0 && n_tiles > 0) {
      mbar_expect_tx(BAR(attn_bar_q()), attn_tile_bytes(BLOCK_M, HEAD_DIM));
#pragma unroll
      for (int j = 0; j < KCH; ++j)
        tma_load_4d(sQ + attn_q_box(j, BLOCK_M), &maps.q, BAR(attn_bar_q()), attn_box_col(j), h, m0, b);
      for (int n = 0; n < n_tiles; ++n) {
        const int s = attn_stage(n, STAGES);
        if (n >= STAGES) mbar_wait(BAR(attn_bar_kempty(s)), attn_empty_parity(n, STAGES));
        mbar_expect_tx(BAR(attn_bar_kfull(s)), attn_tile_bytes(BLOCK_N, HEAD_DIM));
#pragma unroll
        for (int j = 0; j < KCH; ++j)
          tma_load_4d(sK + attn_kv_box(s, j, BLOCK_N, HEAD_DIM), &maps.k, BAR(attn_bar_kfull(s)), attn_box_col(j),
                      hkv, n * BLOCK_N, b);
        if (n >= STAGES) mbar_wait(BAR(attn_bar_vempty(s)), attn_empty_parity(n, STAGES));
        mbar_expect_tx(BAR(attn_bar_vfull(s)), attn_tile_bytes(BLOCK_N, HEAD_DIM));
#pragma unroll
        for (int j = 0; j < KCH; ++j)
          tma_load_4d(sV + attn_kv_box(s, j, BLOCK_N, HEAD_DIM), &maps.v, BAR(attn_bar_vfull(s)), attn_box_col(j),
                      hkv, n * BLOCK_N, b);
      }
    }
  } else {
#if CONSUMERS == 2
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
#endif
    const int c = wg - 1;                             // this consumer's 64 rows: m0 + 64c ..
    const int row0 = m0 + c * 64 + attn_acc_row(t, 0);  // the thread's rows: row0, row0 + 8
    const int first_masked = attn_first_masked(m0, L, a.SQ, IS_CAUSAL, BLOCK_N, n_tiles);
    float o[OACC], m[2] = {ATTN_NEG_INF, ATTN_NEG_INF}, l[2] = {0.f, 0.f}, factor[2];
#pragma unroll
    for (int i = 0; i < OACC; ++i) o[i] = 0.f;

    if (n_tiles > 0) {
      float s[SACC];
      unsigned p[SACC / 2];
      mbar_wait(BAR(attn_bar_q()), 0);
#if OVERLAP
      // tile 0: S_0 and its softmax; O is still zero
      mbar_wait(BAR(attn_bar_kfull(0)), 0);
      issue_qk(s, sQ, sK, c, 0);
      wgmma_wait<0>();
      reg_fence<SACC>(s);
      release(BAR(attn_bar_kempty(0)));
      softmax_tile(s, p, m, l, factor, first_masked == 0, t, row0, 0, L, a.SQ, a.scale_log2);
      for (int n = 1; n < n_tiles; ++n) {
        const int sn = attn_stage(n, STAGES), sp = attn_stage(n - 1, STAGES);
        mbar_wait(BAR(attn_bar_kfull(sn)), attn_full_parity(n, STAGES));
        issue_qk(s, sQ, sK, c, sn);  // S_n = Q K_n^T ...
        mbar_wait(BAR(attn_bar_vfull(sp)), attn_full_parity(n - 1, STAGES));
        issue_pv(o, p, sV, sp);      // ... and O += P_{n-1} V_{n-1} behind it
        wgmma_wait<1>();             // S_n is done (groups complete in order)
        reg_fence<SACC>(s);
        release(BAR(attn_bar_kempty(sn)));
        unsigned pn[SACC / 2];
        softmax_tile(s, pn, m, l, factor, n >= first_masked, t, row0, n * BLOCK_N, L, a.SQ, a.scale_log2);
        wgmma_wait<0>();             // O += P_{n-1} V_{n-1} is done
        reg_fence<OACC>(o);
        reg_fence<SACC / 2>(p);
        release(BAR(attn_bar_vempty(sp)));
        rescale(o, factor);
#pragma unroll
        for (int i = 0; i < SACC / 2; ++i) p[i] = reg_move(pn[i]);
      }
      const int sl = attn_stage(n_tiles - 1, STAGES);
      mbar_wait(BAR(attn_bar_vfull(sl)), attn_full_parity(n_tiles - 1, STAGES));
      clear_v_tail(sV, sl, n_tiles - 1, L, a.kv_lens != 0);
      issue_pv(o, p, sV, sl);
      wgmma_wait<0>();
      reg_fence<OACC>(o);
      release(BAR(attn_bar_vempty(sl)));
#else
      for (int n = 0; n < n_tiles; ++n) {
        const int sn = attn_stage(n, STAGES);
        mbar_wait(BAR(attn_bar_kfull(sn)), attn_full_parity(n, STAGES));
        issue_qk(s, sQ, sK, c, sn);
        wgmma_wait<0>();
        reg_fence<SACC>(s);
        release(BAR(attn_bar_kempty(sn)));
        softmax_tile(s, p, m, l, factor, n >= first_masked, t, row0, n * BLOCK_N, L, a.SQ, a.scale_log2);
        rescale(o, factor);
        mbar_wait(BAR(attn_bar_vfull(sn)), attn_full_parity(n, STAGES));
        clear_v_tail(sV, sn, n, L, a.kv_lens != 0);  // only the last tile has rows past L
        issue_pv(o, p, sV, sn);
        wgmma_wait<0>();
        reg_fence<OACC>(o);
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
      const int row = row0 + 8 * attn_acc_half(i);
      if (row < a.SQ)
        *(unsigned *)(O + attn_o_offset(b, row, h, attn_acc_col(t, i), a.SQ, a.HQ, HEAD_DIM)) = pack2(o[i], o[i + 1]);
    }
    if (a.lse && t % 4 == 0) {
      float *lse = (float *)a.lse;
#pragma unroll
      for (int r = 0; r < 2; ++r)
        if (row0 + 8 * r < a.SQ) lse[attn_lse_offset(b, h, row0 + 8 * r, a.SQ, a.HQ)] = attn_lse(m[r], l[r], a.scale_log2);
    }
  }
#undef BAR
}
