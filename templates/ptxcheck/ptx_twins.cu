// ptx_twins.cu — every rt_ptx.h wrapper on known inputs, for tests/gpu/test_ptx_twins.c (on the
// GPU) and tests/unit/test_ptx_twins.c (on the sim): the same source runs on both and the
// outputs are compared word for word, so each host twin of sim/sim_ptx.hpp is checked against
// silicon.  Not a template of the catalog (no manifest): a test's own kernel.
//
// The test prepends "#define PC_NAME i" for each case of its table (tests/gpu/ptx_twins_util.h)
// and PC_SLOTS; case c of thread t writes its words to out[(c * 128 + t) * PC_SLOTS + k].  One
// block of 128 threads (a warpgroup), PT_SMEM bytes of dynamic shared memory (named smem_raw, as
// the sim expects).  Inputs, PC_IN
// words: [0, 4096) random bits, [4096, 6144) f16 pairs of small integers, [6144, 10240) bf16
// pairs of small integers (products and sums of them are exact in f32, so mma and wgmma
// results do not depend on the order of accumulation).
#include "rt_ptx.h"

#define PC_RB(i)     in[(i)]
#define PC_H16(i)    in[4096 + (i)]
#define PC_B16(i)    in[6144 + (i)]
#define PC_OUT(c, k) out[((c)*128 + t) * PC_SLOTS + (k)]

// a CUtensorMap by value (tests/gpu/ptx_twins_util.h's: in's random words as 64 x 64 uint32,
// boxes of 32 x 16, the 128-byte swizzle)
struct __align__(64) pc_map {
  unsigned long long opaque[16];
};

#if __CUDA_ARCH__ >= 900
PTX_WGMMA_SS(pc_wgmma_ss, 64, "bf16.bf16", "16", "p, 1, 1, 0, 0")
PTX_WGMMA_RS(pc_wgmma_rs, 64, "bf16.bf16", "16", "q, 1, 1, 1")
#endif

__device__ __forceinline__ float pc_f(unsigned u) { return __uint_as_float(u); }
__device__ __forceinline__ float pc_small(unsigned u) { return (float)((int)(u % 7u) - 3); }

// conversions, packing, special functions, fmax, reg_move: 32 inputs per thread each
__device__ void pc_scalar(const unsigned *in, unsigned *out, int t) {
  for (int k = 0; k < PC_SLOTS; k++) {
    const int i = t * PC_SLOTS + k;
    const unsigned x = PC_RB(i), y = PC_RB((i + 1237) % 4096);
    PC_OUT(PC_CVT_BF16, k) = ptx_f32_to_bf16(pc_f(x));
    PC_OUT(PC_CVT_F16, k) = ptx_f32_to_f16(pc_f(x));
    PC_OUT(PC_F16_TO_F32, k) = __float_as_uint(ptx_f16_to_f32((unsigned short)x));
    PC_OUT(PC_PACK2_F16, k) = ptx_pack2<0>(pc_f(x), pc_f(y));
    PC_OUT(PC_PACK2_BF16, k) = ptx_pack2<1>(pc_f(x), pc_f(y));
#if __CUDA_ARCH__ >= 900
    PC_OUT(PC_TF32_RN, k) = ptx_tf32_rn(pc_f(x)); /* cvt.rn.tf32.f32: sm_90 on */
    PC_OUT(PC_E4M3X2, k) = ptx_e4m3x2_to_f16x2((unsigned short)((i & 0xff) | ((x & 0xff) << 8)));
#endif
    PC_OUT(PC_TF32_RNA, k) = ptx_tf32_rna(pc_f(x));
    PC_OUT(PC_FMAX, k) = __float_as_uint(ptx_fmax(pc_f(x), pc_f(y)));
    PC_OUT(PC_REG_MOVE, k) = ptx_reg_move(x);
    const float e = (float)((int)(x % 60001u) - 30000) / 1000.f; /* [-30, 30] */
    PC_OUT(PC_EXP2, k) = __float_as_uint(ptx_exp2(e));
    const float l = ldexpf(1.f + (float)((x >> 8) & 0xffff) / 65536.f, (int)(x % 40u) - 20);
    PC_OUT(PC_LOG2, k) = __float_as_uint(ptx_log2(l));
  }
}

__device__ void pc_shuffles(const unsigned *in, unsigned *out, int t) {
  const unsigned v = PC_RB(t), lane = t % 32, m = 0xffffffffu;
  PC_OUT(PC_SHFL, 0) = __shfl_sync(m, v, (lane * 7) % 32);
  for (int o = 1, k = 1; o < 32; o *= 2, k++) PC_OUT(PC_SHFL, k) = __shfl_xor_sync(m, v, o);
  PC_OUT(PC_SHFL, 6) = __shfl_down_sync(m, v, 3);
  PC_OUT(PC_SHFL, 7) = __shfl_up_sync(m, v, 2);
  PC_OUT(PC_SHFL, 8) = __float_as_uint(__shfl_xor_sync(m, pc_small(v), 5));
  PC_OUT(PC_SHFL, 9) = __ballot_sync(m, v & 1);
  PC_OUT(PC_SHFL, 10) = __shfl_sync(m, v, lane ^ 3, 8);
}

// ldmatrix: each warp's 512 bytes of random words, lane l addressing row l of the four 8x8
__device__ void pc_ldsm(const unsigned *in, unsigned *out, int t, unsigned *sm, unsigned base) {
  for (int j = 0; j < 4; j++) sm[t * 4 + j] = PC_RB(t * 4 + j);
  __syncthreads();
  unsigned r[4], q[4];
  const unsigned a = base + (t / 32) * 512 + (t % 32) * 16;
  ptx_ldsm_x4(r, a);
  ptx_ldsm_x4_trans(q, a);
  for (int j = 0; j < 4; j++) PC_OUT(PC_LDSM, j) = r[j], PC_OUT(PC_LDSM_TRANS, j) = q[j];
  __syncthreads();
}

__device__ void pc_mma(const unsigned *in, unsigned *out, int t) {
  const int w = t / 32, l = t % 32;
  unsigned a[4], at[4];
  float c[4], d[4], e[4];
  for (int j = 0; j < 4; j++) {
    a[j] = PC_H16(w * 128 + l * 4 + j);
    at[j] = __float_as_uint(pc_small(PC_RB(t * 4 + j)));
    c[j] = d[j] = e[j] = pc_small(PC_RB(2048 + t * 4 + j));
  }
  ptx_mma_m16n8k16<0>(c, a, PC_H16(1024 + t * 2), PC_H16(1024 + t * 2 + 1));
  for (int j = 0; j < 4; j++) a[j] = PC_B16(w * 128 + l * 4 + j);
  ptx_mma_m16n8k16<1>(d, a, PC_B16(1024 + t * 2), PC_B16(1024 + t * 2 + 1));
  ptx_mma_m16n8k8_tf32(e, at, __float_as_uint(pc_small(PC_RB(3000 + t))),
                       __float_as_uint(pc_small(PC_RB(3500 + t))));
  for (int j = 0; j < 4; j++) {
    PC_OUT(PC_MMA_F16, j) = __float_as_uint(c[j]);
    PC_OUT(PC_MMA_BF16, j) = __float_as_uint(d[j]);
    PC_OUT(PC_MMA_TF32, j) = __float_as_uint(e[j]);
  }
}

// cp.async (two groups, a predicated-off copy writing zeros), shared stores, cache-hinted loads
__device__ void pc_memory(const unsigned *in, unsigned *out, int t, unsigned *sm, unsigned base) {
  for (int j = 0; j < 16; j++) sm[t * 16 + j] = 0xdeadbeefu;
  __syncthreads();
  ptx_cp_async16(base + t * 16, in + 512 + t * 4, true);
  ptx_cp_async_commit();
  ptx_cp_async8(base + 2048 + t * 8, in + 1024 + t * 2, t % 3 != 0);
  ptx_cp_async16(base + 3072 + t * 16, in + 2048 + t * 4, t % 5 != 0);
  ptx_cp_async_commit();
  ptx_cp_async_wait<0>();
  __syncthreads();
  for (int k = 0; k < 8; k++) PC_OUT(PC_CP_ASYNC, k) = sm[(t * 13 + k * 131) % 1280];
  __syncthreads();
  ptx_st_shared_v4(base + t * 16, PC_RB(t), PC_RB(t + 128), PC_RB(t + 256), PC_RB(t + 384));
  ptx_st_shared_v2(base + 2048 + t * 8, PC_RB(t + 512), PC_RB(t + 640));
  if (t % 2) ptx_st_shared_zero16(base + 3072 + t * 16);
  __syncthreads();
  for (int k = 0; k < 8; k++) PC_OUT(PC_ST_SHARED, k) = sm[(t * 11 + k * 157) % 1280];
  __syncthreads();
  const float4 f = ptx_ld_cg4((const float *)in + 4 * t);
  const uint4 s16 = ptx_ld_stream16(in + 4 * ((t + 7) % 128)), n16 = ptx_ld_nc16(in + 600 + 4 * t);
  const uint2 s8 = ptx_ld_stream8(in + 2 * t + 1);
  const unsigned v[] = {__float_as_uint(ptx_ld_cg((const float *)in + 3 * t)),
                        __float_as_uint(f.x),
                        __float_as_uint(f.w),
                        s16.x,
                        s16.y,
                        s16.z,
                        s16.w,
                        n16.x,
                        n16.w,
                        s8.x,
                        s8.y};
  for (int k = 0; k < 11; k++) PC_OUT(PC_LD, k) = v[k];
}

// bar.sync 1, 128: every thread's write before it is seen after it
__device__ void pc_bar1(const unsigned *in, unsigned *out, int t, unsigned *sm) {
  sm[t] = PC_RB(t) ^ 0x5a5a5a5au;
  ptx_bar_sync1<128>();
  PC_OUT(PC_BAR_SYNC1, 0) = sm[(t + 37) % 128];
  ptx_bar_sync1<128>();
}

#if __CUDA_ARCH__ >= 900
// an mbarrier of 128 arrivals through two phases: the waits with parity 0 then 1
__device__ void pc_mbar(const unsigned *in, unsigned *out, int t, unsigned *sm, unsigned base) {
  const unsigned bar = base + 16384;
  if (t == 0) ptx_mbar_init(bar, 128);
  ptx_mbar_init_fence();
  __syncthreads();
  for (int ph = 0; ph < 2; ph++) {
    sm[ph * 128 + t] = PC_RB(t + ph * 128) + 1u;
    ptx_mbar_arrive(bar);
    ptx_mbar_wait(bar, ph);
    PC_OUT(PC_MBAR, ph) = sm[ph * 128 + (t + 37 + ph) % 128];
  }
  __syncthreads();
}

// TMA: two boxes of 32 x 16 words, swizzled, completing on one mbarrier; the second box's rows
// 64..71 outside the tensor (zeros)
__device__ void pc_tma(unsigned *out, int t, unsigned *sm, unsigned base, const void *map) {
  const unsigned bar = base + 16384 + 64;
  if (t == 0) ptx_mbar_init(bar, 1);
  ptx_mbar_init_fence();
  __syncthreads();
  if (t == 0) {
    ptx_fence_proxy_async();
    ptx_mbar_expect_tx(bar, 2 * 2048);
    ptx_tma_load_3d(base, map, bar, 32, 40, 0);
    ptx_tma_load_3d(base + 2048, map, bar, 0, 56, 0);
  }
  ptx_mbar_wait(bar, 0);
  for (int k = 0; k < 8; k++) PC_OUT(PC_TMA, k) = sm[t * 8 + k];
  __syncthreads();
}

// wgmma m64n64k16 bf16: A (64 x 64) and B (64 x 64) K-major, 128-byte swizzled, from
// descriptors over four K slabs (SS); then A from registers, B MN-major (RS, imm-trans-b 1)
__device__ void pc_wgmma(const unsigned *in, unsigned *out, int t, unsigned *sm, unsigned base) {
  for (int j = 0; j < 32; j++) sm[t * 32 + j] = PC_B16(t * 32 + j);
  __syncthreads();
  ptx_fence_proxy_async();
  float d[32];
  const unsigned long long da = ptx_desc(base, 16, 1024), db = ptx_desc(base + 8192, 16, 1024);
  ptx_wgmma_fence();
  for (int k = 0; k < 4; k++)
    pc_wgmma_ss(d, ptx_desc_add(da, 32 * k), ptx_desc_add(db, 32 * k), k == 0);
  ptx_wgmma_commit();
  ptx_wgmma_wait<0>();
  ptx_reg_fence<32>(d);
  for (int k = 0; k < 32; k++) PC_OUT(PC_WGMMA_SS, k) = __float_as_uint(d[k]);
  unsigned p[4];
  for (int j = 0; j < 4; j++) p[j] = PC_B16(2048 + t * 4 + j);
  for (int k = 0; k < 32; k++) d[k] = pc_small(PC_RB(t * 32 + k));
  const unsigned long long dv = ptx_desc(base + 8192, 64 * 128, 1024);
  ptx_wgmma_fence();
  pc_wgmma_rs(d, p, dv);
  pc_wgmma_rs(d, p, ptx_desc_add(dv, 16 * 128));
  ptx_wgmma_commit();
  ptx_wgmma_wait<0>();
  ptx_reg_fence<32>(d);
  for (int k = 0; k < 32; k++) PC_OUT(PC_WGMMA_RS, k) = __float_as_uint(d[k]);
  __syncthreads();
}
#endif

extern "C" __global__ void __launch_bounds__(128)
    ptx_twins(const unsigned *in, unsigned *out, const __grid_constant__ pc_map tm) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const int t = threadIdx.x;
  const unsigned s0 = ptx_smem_u32(smem_raw), base = (s0 + 1023u) & ~1023u;
  unsigned *sm = (unsigned *)(smem_raw + (base - s0));
  pc_scalar(in, out, t);
  pc_shuffles(in, out, t);
  pc_ldsm(in, out, t, sm, base);
  pc_mma(in, out, t);
  pc_memory(in, out, t, sm, base);
  pc_bar1(in, out, t, sm);
#if __CUDA_ARCH__ >= 900
  pc_mbar(in, out, t, sm, base);
  pc_tma(out, t, sm, base, &tm);
  pc_wgmma(in, out, t, sm, base);
#endif
}

#if __CUDA_ARCH__ >= 900
// A cluster of two blocks (grid 2; sm_90 on): the ranks, cluster barriers, a box multicast by rank 0 into
// both blocks' shared memory completing on each block's mbarrier, and mbarrier arrivals of all
// 128 threads of each block at the other block's barrier.  Block r writes case PC_CLUSTER0 + r.
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
    ptx_twins_cluster(const unsigned *in, unsigned *out, const __grid_constant__ pc_map tm) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const int t = threadIdx.x, r = ptx_cluster_rank();
  const unsigned s0 = ptx_smem_u32(smem_raw), base = (s0 + 1023u) & ~1023u;
  unsigned *sm = (unsigned *)(smem_raw + (base - s0));
  const unsigned full = base + 16384 + 128, remote = base + 16384 + 192;
  if (t == 0) ptx_mbar_init(full, 1), ptx_mbar_init(remote, 128);
  ptx_mbar_init_fence();
  ptx_cluster_sync();
  if (t == 0) ptx_mbar_expect_tx(full, 2048);
  ptx_cluster_sync();
  if (r == 0 && t == 0) ptx_tma_load_3d_multicast(base, &tm, full, 0, 8, 0, 3);
  ptx_mbar_wait(full, 0);
  for (int k = 0; k < 8; k++) PC_OUT(PC_CLUSTER0 + r, k) = sm[t * 8 + k];
  PC_OUT(PC_CLUSTER0 + r, 8) = (unsigned)r;
  ptx_mbar_arrive_cluster(remote, (unsigned)(r ^ 1));
  ptx_mbar_wait(remote, 0);
  PC_OUT(PC_CLUSTER0 + r, 9) = 1u + (unsigned)r;
  ptx_cluster_sync();  // neither block leaves while the other may still reach its barrier
}
#endif
