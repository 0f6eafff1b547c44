/* rt_ptx.h — the PTX every template shares, written once: cp.async, ldmatrix, mma.sync, the
 * 16-bit conversions, cache-hinted loads, mbarriers, cluster ranks and barriers, TMA (bulk tensor
 * copies, multicast), wgmma (fences, groups, the m64nNk16/k32 instructions), and the arithmetic
 * of the layouts they address: the 128-byte swizzle, the wgmma shared-memory descriptor and the
 * phases of a ring of stages guarded by full and empty mbarriers.
 *
 * The arithmetic (ptx_sw128, ptx_desc, ptx_desc_add, ptx_stage, ptx_full_parity,
 * ptx_empty_parity) is valid C: the templates' index headers build on it and the host
 * emulation tests (tests/unit/test_*_emulate.c) include it, so an emulated TMA box, wgmma
 * operand or barrier wait is placed, decoded and timed by the very definitions the kernels
 * run.  The wrappers are CUDA C++ (__CUDACC__), one asm statement each, exactly as the kernels
 * had them; every inline asm of the templates is here (tests/cli/test_templates_asm.sh).  Under
 * RT_SIM (the sim, sim/sim.h: the template compiled as host C++) each wrapper is its host twin
 * from sim/sim_ptx.hpp instead, with the same name and arguments.
 *
 * On NVRTC's include path: manifest_compile_options adds the shipped templates' common/ folder
 * (so a template writes #include "rt_ptx.h"; whichever file an include finds is part of that
 * compile's cache key, compile_key); the index headers, which the host tests include from the repository root, write
 * "../common/rt_ptx.h".
 *
 * wgmma.mma_async: PTX_WGMMA_SS(name, N, AB, K, TAIL) defines name(d, da, db, first), A and B
 * from shared memory (descriptors), first = 1: scale-d 0 and write-only accumulators (the first
 * slab of a product), else D += A B; PTX_WGMMA_RS(name, N, AB, K, TAIL) defines name(d, p, db),
 * A from four registers p[0..3].  AB is the operand types ("bf16.bf16", "e4m3.e5m2"), K "16" or
 * "32", TAIL the instruction's last operands after the predicate (scale-d): "p, 1, 1, 0, 0"
 * (ss: imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b), "p, 1, 1" (fp8), "q, 1, 1, 1" (rs:
 * imm-trans-b 1).  N: 64, 80, 96, 128, 176 or 256 (the accumulator lists below).
 */
#ifndef ROOFTUNE_RT_PTX_H
#define ROOFTUNE_RT_PTX_H

#if defined(__CUDACC__)
#define PTX_FN     static __host__ __device__ __forceinline__
#define PTX_UNROLL _Pragma("unroll") /* loops over a thread's registers: constant trip counts */
#else
#include <math.h>
#define PTX_FN static inline
#define PTX_UNROLL
#endif

/* ------------------------------------------------------------------ special functions */

/* exp2 and log2 as the kernels compute them, ex2.approx.ftz.f32 and lg2.approx.ftz.f32 (PTX ISA
 * 9.7.4: a relative error of about 2^-22, ex2(-inf) = +0); on the host (the emulations)
 * exp2f and log2f.  PTX_NEG_INF is -infinity on both. */
#if defined(RT_SIM)
#include "sim_ptx.hpp" /* every wrapper's host twin: sim/, on the sim's include path only */
#elif defined(__CUDACC__)
#define PTX_NEG_INF (__int_as_float(0xff800000u))
PTX_FN float ptx_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
PTX_FN float ptx_log2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
#else
#define PTX_NEG_INF (-INFINITY)
PTX_FN float ptx_exp2(float x) { return exp2f(x); }
PTX_FN float ptx_log2(float x) { return log2f(x); }
#endif

/* ------------------------------------------------------------------ layouts (C and CUDA) */

/* The 128-byte swizzle TMA writes and wgmma reads (CU_TENSOR_MAP_SWIZZLE_128B; PTX ISA 9.7.15.5.1.2):
 * every box row is 128 bytes, and inside each 1024-byte group the 16-byte chunk index is XOR-ed
 * with the row index mod 8 (the buffers are 1024-byte aligned).  Byte `byte` of row `row` of a
 * box lands at ptx_sw128(row, byte) from the box's start. */
PTX_FN int ptx_sw128(int row, int byte) {
  return row * 128 + ((((byte / 16) ^ (row % 8)) * 16) | (byte % 16));
}

/* The wgmma shared-memory matrix descriptor of a 128-byte-swizzled operand: start address >> 4
 * in bits 0-13, leading byte offset >> 4 in bits 16-29, stride byte offset >> 4 in bits 32-45,
 * base offset 0 (bits 49-51: 1024-byte aligned buffers), swizzle mode 1 = 128B in bits 62-63. */
PTX_FN unsigned long long ptx_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}
/* The descriptor of addr + off from that of addr (off a multiple of 16): the start field holds
 * addr >> 4 in 14 bits and shared addresses stay below 2^18, so a 32-bit add on the low word
 * never carries into the stride field.  A kernel builds one descriptor per operand region and
 * adds each wgmma's start to it. */
PTX_FN unsigned long long ptx_desc_add(unsigned long long desc, int off) {
  return (desc & 0xFFFFFFFF00000000ull) | (unsigned)((unsigned)desc + (unsigned)(off >> 4));
}

/* A ring of `stages` buffers, each guarded by a "full" mbarrier (the producer's expect_tx
 * arrival plus the copy's bytes complete a phase) and an "empty" one (the consumers' arrivals):
 * item n (a K slab, a KV tile) lives in stage n % stages; its consumer waits for the full
 * barrier's phase n / stages, and the producer refilling the stage with item n >= stages first
 * waits for the empty barrier's phase n / stages - 1.  mbarrier waits take the phase's parity. */
PTX_FN int ptx_stage(int n, int stages) { return n % stages; }
PTX_FN int ptx_full_parity(int n, int stages) { return (n / stages) & 1; }
PTX_FN int ptx_empty_parity(int n, int stages) { return (n / stages + 1) & 1; }

#if defined(RT_SIM)
/* the wrappers below are sim_ptx.hpp's twins (included above) */
#elif defined(__CUDACC__)
/* ------------------------------------------------------------------ shared memory, cp.async */

__device__ __forceinline__ unsigned ptx_smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

/* 16 bytes global -> shared, through L2 only (.cg); pred 0 writes zeros (src-size 0). */
__device__ __forceinline__ void ptx_cp_async16(unsigned dst, const void *src, bool pred) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(pred ? 16 : 0));
}
/* 8 bytes (.ca: .cg takes 16 only). */
__device__ __forceinline__ void ptx_cp_async8(unsigned dst, const void *src, bool pred) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src),
               "r"(pred ? 8 : 0));
}
__device__ __forceinline__ void ptx_cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void ptx_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* ------------------------------------------------------------------ ldmatrix, mma.sync */

__device__ __forceinline__ void ptx_ldsm_x4(unsigned r[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ptx_ldsm_x4_trans(unsigned r[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
/* c += a b, mma.m16n8k16 with f32 accumulators, f16 (BF16 0) or bf16 (BF16 1) operands. */
template <int BF16>
__device__ __forceinline__ void ptx_mma_m16n8k16(float c[4], const unsigned a[4], unsigned b0,
                                                 unsigned b1) {
  if (BF16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
/* c += a b, mma.m16n8k8 with tf32 operands. */
__device__ __forceinline__ void ptx_mma_m16n8k8_tf32(float c[4], const unsigned a[4], unsigned b0,
                                                     unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* ------------------------------------------------------------------ conversions, loads */

/* Two floats rounded to nearest as an f16 (BF16 0) or bf16 (BF16 1) pair, lo in the low half
 * (cvt puts its first source in the upper half). */
template <int BF16>
__device__ __forceinline__ unsigned ptx_pack2(float lo, float hi) {
  unsigned r;
  if (BF16)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
/* Read from L2, never from a possibly stale L1 line (data other blocks wrote in this launch). */
__device__ __forceinline__ float ptx_ld_cg(const float *p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];\n" : "=f"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ float4 ptx_ld_cg4(const float *p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p));
  return v;
}
/* Read-only data streamed once: through the non-coherent path, not allocated in L1. */
__device__ __forceinline__ uint4 ptx_ld_stream16(const void *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ uint2 ptx_ld_stream8(const void *p) {
  uint2 v;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];\n"
               : "=r"(v.x), "=r"(v.y)
               : "l"(p));
  return v;
}

/* One 16-bit element to float, exactly; a float rounded to nearest as one bf16 / f16. */
__device__ __forceinline__ float ptx_f16_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short ptx_f32_to_bf16(float v) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
}
__device__ __forceinline__ unsigned short ptx_f32_to_f16(float v) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
}
/* Two e4m3 values (the low and high byte of b) as an f16x2 word, the low value in the low half. */
__device__ __forceinline__ unsigned ptx_e4m3x2_to_f16x2(unsigned short b) {
  unsigned r;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"(b));
  return r;
}
/* f32 -> tf32 (the bits of a float with the low 13 mantissa bits zero): rounded to nearest, ties
 * to even (.rn, sm_90 on) or ties away from zero (.rna, every architecture). */
__device__ __forceinline__ unsigned ptx_tf32_rn(float x) {
  unsigned r;
  asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ unsigned ptx_tf32_rna(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
/* max.f32: one FMNMX; a NaN operand yields the other, as fmaxf. */
__device__ __forceinline__ float ptx_fmax(float a, float b) {
  float y;
  asm("max.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
  return y;
}
/* 16 bytes of read-only global data through the non-coherent path. */
__device__ __forceinline__ uint4 ptx_ld_nc16(const void *p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
/* Shared-memory stores of 16 and 8 bytes at a shared address (addr aligned to the size), and 16
 * zero bytes (ordered with the other memory accesses: a clear the async proxy reads next). */
__device__ __forceinline__ void ptx_st_shared_v4(unsigned addr, unsigned w0, unsigned w1,
                                                 unsigned w2, unsigned w3) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(w0), "r"(w1), "r"(w2),
               "r"(w3));
}
__device__ __forceinline__ void ptx_st_shared_v2(unsigned addr, unsigned w0, unsigned w1) {
  asm volatile("st.shared.v2.u32 [%0], {%1, %2};\n" ::"r"(addr), "r"(w0), "r"(w1));
}
__device__ __forceinline__ void ptx_st_shared_zero16(unsigned addr) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(addr), "r"(0) : "memory");
}

/* ------------------------------------------------------------------ mbarriers, clusters */

__device__ __forceinline__ void ptx_mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
/* After the initialisations, by the thread that made them: visible to the cluster and to the
 * async proxy (TMA completes on them) before anyone loads or arrives. */
__device__ __forceinline__ void ptx_mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void ptx_mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void ptx_mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/* Spins until the phase of parity `parity` has completed. */
__device__ __forceinline__ void ptx_mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
/* Arrive at the mbarrier at shared offset `bar` of block `cta` of the cluster.  The default
 * semantics (release at CTA scope), as CUTLASS's ClusterBarrier::arrive: the arrival only says
 * that this warp's wgmmas have finished reading the stage.  `.release.cluster` put a
 * cluster-wide memory barrier before every arrival, which an H200 showed as 41 % of the warps'
 * stall cycles and a two-block cluster at half the speed of a single block (0.36 against
 * 0.19 ms on 4096^3). */
__device__ __forceinline__ void ptx_mbar_arrive_cluster(unsigned bar, unsigned cta) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}
__device__ __forceinline__ int ptx_cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return (int)r;
}
/* Every thread of the cluster. */
__device__ __forceinline__ void ptx_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}
/* Ordinary shared-memory stores made visible to the async proxy (TMA, wgmma) that reads next. */
__device__ __forceinline__ void ptx_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Named barrier 1 for N threads (a multiple of 32: whole warps), the warps of one role (the
 * consumer warpgroups) meeting without the others. */
template <int N>
__device__ __forceinline__ void ptx_bar_sync1() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(N) : "memory");
}
/* A warpgroup's register budget moved: down to N for a producer, up to N for a consumer. */
template <int N>
__device__ __forceinline__ void ptx_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void ptx_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* ------------------------------------------------------------------ TMA */

/* One box of a tensor map (a CUtensorMap by value, as a __grid_constant__ kernel parameter) into
 * shared memory at dst, its bytes completing on the mbarrier bar; coordinates innermost first. */
__device__ __forceinline__ void ptx_tma_load_3d(unsigned dst, const void *map, unsigned bar, int c0,
                                                int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
      "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
/* The same box into the same offset of every block of the cluster in `mask`, completing on each
 * block's barrier at the same offset. */
__device__ __forceinline__ void ptx_tma_load_3d_multicast(unsigned dst, const void *map,
                                                          unsigned bar, int c0, int c1, int c2,
                                                          unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
      "cluster"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void ptx_tma_load_4d(unsigned dst, const void *map, unsigned bar, int c0,
                                                int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
      "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}

/* ------------------------------------------------------------------ wgmma */

__device__ __forceinline__ void ptx_wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void ptx_wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void ptx_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* Keeps the compiler from moving accesses of registers a wgmma writes across its wait_group.
 * For the registers a wgmma reads (a register A operand), used after its wait_group: they stay
 * live and unwritten until then, so the compiler cannot put the next value into them while the
 * tensor cores still read them (ptxas would then serialise every wgmma: warning C7513). */
template <int N>
__device__ __forceinline__ void ptx_reg_fence(float *d) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void ptx_reg_fence(unsigned *d) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(d[i])::"memory");
}
/* A register copy the compiler cannot fold away: a value reaches the registers a wgmma reads
 * only here, after the group that read the previous value completed (a folded copy would have
 * the next wgmma read registers written while the last one was in flight: warning C7513). */
__device__ __forceinline__ unsigned ptx_reg_move(unsigned x) {
  unsigned y;
  asm volatile("mov.b32 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

/* The operand lists of the m64nNk instructions: "%0, ..." for the N/2 accumulators of a thread
 * (PTX_REGS_N), the accumulators as C(d[i]) constraints (PTX_ACC_N), and the inputs that follow
 * them (PTX_IN_N_i is "%(N/2 + i)"). */
#define PTX_PLUS_F(x) "+f"(x)
#define PTX_OUT_F(x)  "=f"(x)
#define PTX_R0_7      "%0, %1, %2, %3, %4, %5, %6, %7"
#define PTX_R8_15     "%8, %9, %10, %11, %12, %13, %14, %15"
#define PTX_R16_23    "%16, %17, %18, %19, %20, %21, %22, %23"
#define PTX_R24_31    "%24, %25, %26, %27, %28, %29, %30, %31"
#define PTX_R32_39    "%32, %33, %34, %35, %36, %37, %38, %39"
#define PTX_R40_47    "%40, %41, %42, %43, %44, %45, %46, %47"
#define PTX_R48_55    "%48, %49, %50, %51, %52, %53, %54, %55"
#define PTX_R56_63    "%56, %57, %58, %59, %60, %61, %62, %63"
#define PTX_R64_71    "%64, %65, %66, %67, %68, %69, %70, %71"
#define PTX_R72_79    "%72, %73, %74, %75, %76, %77, %78, %79"
#define PTX_R80_87    "%80, %81, %82, %83, %84, %85, %86, %87"
#define PTX_R88_95    "%88, %89, %90, %91, %92, %93, %94, %95"
#define PTX_R96_103   "%96, %97, %98, %99, %100, %101, %102, %103"
#define PTX_R104_111  "%104, %105, %106, %107, %108, %109, %110, %111"
#define PTX_R112_119  "%112, %113, %114, %115, %116, %117, %118, %119"
#define PTX_R120_127  "%120, %121, %122, %123, %124, %125, %126, %127"

#define PTX_D0_7(C)   C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7])
#define PTX_D8_15(C)  C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), C(d[14]), C(d[15])
#define PTX_D16_23(C) C(d[16]), C(d[17]), C(d[18]), C(d[19]), C(d[20]), C(d[21]), C(d[22]), C(d[23])
#define PTX_D24_31(C) C(d[24]), C(d[25]), C(d[26]), C(d[27]), C(d[28]), C(d[29]), C(d[30]), C(d[31])
#define PTX_D32_39(C) C(d[32]), C(d[33]), C(d[34]), C(d[35]), C(d[36]), C(d[37]), C(d[38]), C(d[39])
#define PTX_D40_47(C) C(d[40]), C(d[41]), C(d[42]), C(d[43]), C(d[44]), C(d[45]), C(d[46]), C(d[47])
#define PTX_D48_55(C) C(d[48]), C(d[49]), C(d[50]), C(d[51]), C(d[52]), C(d[53]), C(d[54]), C(d[55])
#define PTX_D56_63(C) C(d[56]), C(d[57]), C(d[58]), C(d[59]), C(d[60]), C(d[61]), C(d[62]), C(d[63])
#define PTX_D64_71(C) C(d[64]), C(d[65]), C(d[66]), C(d[67]), C(d[68]), C(d[69]), C(d[70]), C(d[71])
#define PTX_D72_79(C) C(d[72]), C(d[73]), C(d[74]), C(d[75]), C(d[76]), C(d[77]), C(d[78]), C(d[79])
#define PTX_D80_87(C) C(d[80]), C(d[81]), C(d[82]), C(d[83]), C(d[84]), C(d[85]), C(d[86]), C(d[87])
#define PTX_D88_95(C) C(d[88]), C(d[89]), C(d[90]), C(d[91]), C(d[92]), C(d[93]), C(d[94]), C(d[95])
#define PTX_D96_103(C) \
  C(d[96]), C(d[97]), C(d[98]), C(d[99]), C(d[100]), C(d[101]), C(d[102]), C(d[103])
#define PTX_D104_111(C) \
  C(d[104]), C(d[105]), C(d[106]), C(d[107]), C(d[108]), C(d[109]), C(d[110]), C(d[111])
#define PTX_D112_119(C) \
  C(d[112]), C(d[113]), C(d[114]), C(d[115]), C(d[116]), C(d[117]), C(d[118]), C(d[119])
#define PTX_D120_127(C) \
  C(d[120]), C(d[121]), C(d[122]), C(d[123]), C(d[124]), C(d[125]), C(d[126]), C(d[127])

#define PTX_REGS_64 "{" PTX_R0_7 ", " PTX_R8_15 ", " PTX_R16_23 ", " PTX_R24_31 "}"
#define PTX_REGS_80 "{" PTX_R0_7 ", " PTX_R8_15 ", " PTX_R16_23 ", " PTX_R24_31 ", " PTX_R32_39 "}"
#define PTX_REGS_96 \
  "{" PTX_R0_7 ", " PTX_R8_15 ", " PTX_R16_23 ", " PTX_R24_31 ", " PTX_R32_39 ", " PTX_R40_47 "}"
#define PTX_REGS_128                                                                          \
  "{" PTX_R0_7 ", " PTX_R8_15 ", " PTX_R16_23 ", " PTX_R24_31 ", " PTX_R32_39 ", " PTX_R40_47 \
  ", " PTX_R48_55 ", " PTX_R56_63 "}"
#define PTX_REGS_176                                                                          \
  "{" PTX_R0_7 ", " PTX_R8_15 ", " PTX_R16_23 ", " PTX_R24_31 ", " PTX_R32_39 ", " PTX_R40_47 \
  ", " PTX_R48_55 ", " PTX_R56_63 ", " PTX_R64_71 ", " PTX_R72_79 ", " PTX_R80_87 "}"
#define PTX_REGS_256                                                                              \
  "{" PTX_R0_7 ", " PTX_R8_15 ", " PTX_R16_23 ", " PTX_R24_31 ", " PTX_R32_39 ", " PTX_R40_47     \
  ", " PTX_R48_55 ", " PTX_R56_63 ", " PTX_R64_71 ", " PTX_R72_79 ", " PTX_R80_87 ", " PTX_R88_95 \
  ", " PTX_R96_103 ", " PTX_R104_111 ", " PTX_R112_119 ", " PTX_R120_127 "}"

#define PTX_ACC_64(C) PTX_D0_7(C), PTX_D8_15(C), PTX_D16_23(C), PTX_D24_31(C)
#define PTX_ACC_80(C) PTX_D0_7(C), PTX_D8_15(C), PTX_D16_23(C), PTX_D24_31(C), PTX_D32_39(C)
#define PTX_ACC_96(C) \
  PTX_D0_7(C), PTX_D8_15(C), PTX_D16_23(C), PTX_D24_31(C), PTX_D32_39(C), PTX_D40_47(C)
#define PTX_ACC_128(C)                                                                   \
  PTX_D0_7(C), PTX_D8_15(C), PTX_D16_23(C), PTX_D24_31(C), PTX_D32_39(C), PTX_D40_47(C), \
      PTX_D48_55(C), PTX_D56_63(C)
#define PTX_ACC_176(C)                                                                   \
  PTX_D0_7(C), PTX_D8_15(C), PTX_D16_23(C), PTX_D24_31(C), PTX_D32_39(C), PTX_D40_47(C), \
      PTX_D48_55(C), PTX_D56_63(C), PTX_D64_71(C), PTX_D72_79(C), PTX_D80_87(C)
#define PTX_ACC_256(C)                                                                          \
  PTX_D0_7(C), PTX_D8_15(C), PTX_D16_23(C), PTX_D24_31(C), PTX_D32_39(C), PTX_D40_47(C),        \
      PTX_D48_55(C), PTX_D56_63(C), PTX_D64_71(C), PTX_D72_79(C), PTX_D80_87(C), PTX_D88_95(C), \
      PTX_D96_103(C), PTX_D104_111(C), PTX_D112_119(C), PTX_D120_127(C)

#define PTX_IN_64_0  "%32"
#define PTX_IN_64_1  "%33"
#define PTX_IN_64_2  "%34"
#define PTX_IN_64_3  "%35"
#define PTX_IN_64_4  "%36"
#define PTX_IN_64_5  "%37"
#define PTX_IN_80_0  "%40"
#define PTX_IN_80_1  "%41"
#define PTX_IN_80_2  "%42"
#define PTX_IN_80_3  "%43"
#define PTX_IN_80_4  "%44"
#define PTX_IN_80_5  "%45"
#define PTX_IN_96_0  "%48"
#define PTX_IN_96_1  "%49"
#define PTX_IN_96_2  "%50"
#define PTX_IN_96_3  "%51"
#define PTX_IN_96_4  "%52"
#define PTX_IN_96_5  "%53"
#define PTX_IN_128_0 "%64"
#define PTX_IN_128_1 "%65"
#define PTX_IN_128_2 "%66"
#define PTX_IN_128_3 "%67"
#define PTX_IN_128_4 "%68"
#define PTX_IN_128_5 "%69"
#define PTX_IN_176_0 "%88"
#define PTX_IN_176_1 "%89"
#define PTX_IN_176_2 "%90"
#define PTX_IN_176_3 "%91"
#define PTX_IN_176_4 "%92"
#define PTX_IN_176_5 "%93"
#define PTX_IN_256_0 "%128"
#define PTX_IN_256_1 "%129"
#define PTX_IN_256_2 "%130"
#define PTX_IN_256_3 "%131"
#define PTX_IN_256_4 "%132"
#define PTX_IN_256_5 "%133"

#define PTX_WGMMA_SS_(name, N, AB, K, TAIL)                                                    \
  __device__ __forceinline__ void name(float *d, unsigned long long da, unsigned long long db, \
                                       bool first) {                                           \
    if (first)                                                                                 \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PTX_IN_##N##_2                          \
                   ", 0;\n"                                                                    \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k" K ".f32." AB " " PTX_REGS_##N    \
                   ", " PTX_IN_##N##_0 ", " PTX_IN_##N##_1 ", " TAIL ";\n}\n"                  \
                   : PTX_ACC_##N(PTX_OUT_F)                                                    \
                   : "l"(da), "l"(db), "r"(0));                                                \
    else                                                                                       \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PTX_IN_##N##_2                          \
                   ", 0;\n"                                                                    \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k" K ".f32." AB " " PTX_REGS_##N    \
                   ", " PTX_IN_##N##_0 ", " PTX_IN_##N##_1 ", " TAIL ";\n}\n"                  \
                   : PTX_ACC_##N(PTX_PLUS_F)                                                   \
                   : "l"(da), "l"(db), "r"(1));                                                \
  }
#define PTX_WGMMA_RS_(name, N, AB, K, TAIL)                                                       \
  __device__ __forceinline__ void name(float *d, const unsigned *p, unsigned long long db) {      \
    asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, " PTX_IN_##N##_5                               \
                 ", 0;\n"                                                                         \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k" K ".f32." AB " " PTX_REGS_##N         \
                 ", {" PTX_IN_##N##_0 ", " PTX_IN_##N##_1 ", " PTX_IN_##N##_2 ", " PTX_IN_##N##_3 \
                 "}, " PTX_IN_##N##_4 ", " TAIL ";\n}\n"                                          \
                 : PTX_ACC_##N(PTX_PLUS_F)                                                        \
                 : "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3]), "l"(db), "r"(1));                  \
  }
/* (the arguments expanded first: N may be a macro such as BLOCK_N) */
#define PTX_WGMMA_SS(name, N, AB, K, TAIL) PTX_WGMMA_SS_(name, N, AB, K, TAIL)
#define PTX_WGMMA_RS(name, N, AB, K, TAIL) PTX_WGMMA_RS_(name, N, AB, K, TAIL)
#endif /* RT_SIM, __CUDACC__ */

#endif
