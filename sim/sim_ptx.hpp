// sim_ptx.hpp — the host twin of every templates/common/rt_ptx.h wrapper, for the sim (rt_ptx.h
// includes it under RT_SIM, after sim_cuda.hpp).  Each twin does what its wrapper's PTX does by
// the PTX ISA and the CUDA driver's tensor-map rules; the layouts are sim_layout.h's (from the
// specifications, never the kernels' index headers).  Asynchronous operations are as late as
// is legal and their destinations read as NaN until they complete: a cp.async lands at its
// wait_group, a TMA box and a wgmma group once no thread can move without them.  A mode the
// templates do not use (a swizzle other than 128 bytes, a transposed A, fp8 from registers, ...)
// fails with its name rather than being guessed.  A twin that waits records the caller's source
// line (the default arguments), which a deadlock report names.
#pragma once
#include <unordered_map>

#include "sim_cuda.hpp"
#include "sim_layout.h"

#define SIM_AT     const char *file = __builtin_FILE(), int line = __builtin_LINE()
#define SIM_AT_ARG file, line

// ------------------------------------------------------------------ numbers
#define PTX_NEG_INF (-INFINITY)
// ex2.approx.ftz / lg2.approx.ftz: within 2^-22 relative of these
static inline float ptx_exp2(float x) { return exp2f(x); }
static inline float ptx_log2(float x) { return log2f(x); }

namespace sim {
static inline float f16_value(unsigned short h) {
  _Float16 x;
  memcpy(&x, &h, 2);
  return (float)x;
}
static inline float bf16_value(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
static inline unsigned short f16_bits(float f) {
  _Float16 x = (_Float16)f;  // round to nearest even
  unsigned short h;
  memcpy(&h, &x, 2);
  return h;
}
static inline unsigned short bf16_bits(float f) {  // cvt.rn.bf16.f32: nearest even, NaN 0x7fff
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}
static inline float e4m3_value(unsigned char b) {  // OCP FP8 E4M3: bias 7, S.1111.111 NaN
  const int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  const float v = e ? ldexpf(1.f + (float)m / 8.f, e - 7) : ldexpf((float)m / 8.f, -6);
  return s ? -v : v;
}
static inline float e5m2_value(unsigned char b) { return f16_value((unsigned short)(b << 8)); }
}  // namespace sim

static inline float ptx_f16_to_f32(unsigned short h) { return sim::f16_value(h); }
static inline unsigned short ptx_f32_to_bf16(float v) { return sim::bf16_bits(v); }
static inline unsigned short ptx_f32_to_f16(float v) { return sim::f16_bits(v); }
template <int BF16>
static inline unsigned ptx_pack2(float lo, float hi) {
  return BF16 ? (sim::bf16_bits(lo) | (unsigned)sim::bf16_bits(hi) << 16)
              : (sim::f16_bits(lo) | (unsigned)sim::f16_bits(hi) << 16);
}
static inline unsigned ptx_e4m3x2_to_f16x2(unsigned short b) {
  const float lo = sim::e4m3_value((unsigned char)(b & 0xff)),
              hi = sim::e4m3_value((unsigned char)(b >> 8));
  return sim::f16_bits(lo) | (unsigned)sim::f16_bits(hi) << 16;  // exact: e4m3 fits in f16
}
static inline unsigned ptx_tf32_rna(float x) {  // nearest, ties away from zero
  const unsigned u = __float_as_uint(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return u;
  return (u + 0x1000u) & 0xffffe000u;
}
static inline unsigned ptx_tf32_rn(float x) {  // nearest, ties to even
  const unsigned u = __float_as_uint(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return u;
  return (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
}
static inline float ptx_fmax(float a, float b) { return fmaxf(a, b); }

// ------------------------------------------------------------------ memory
static inline unsigned ptx_smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
template <class T>
static inline T sim_load(const void *p) {
  T v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline float ptx_ld_cg(const float *p) { return *p; }
static inline float4 ptx_ld_cg4(const float *p) { return sim_load<float4>(p); }
static inline uint4 ptx_ld_stream16(const void *p) { return sim_load<uint4>(p); }
static inline uint2 ptx_ld_stream8(const void *p) { return sim_load<uint2>(p); }
static inline uint4 ptx_ld_nc16(const void *p) { return sim_load<uint4>(p); }
static inline void ptx_st_shared_v4(unsigned addr, unsigned w0, unsigned w1, unsigned w2,
                                    unsigned w3) {
  const unsigned w[4] = {w0, w1, w2, w3};
  if (unsigned char *d = sim::my_shared(addr, 16, 16, "st.shared.v4")) memcpy(d, w, 16);
}
static inline void ptx_st_shared_v2(unsigned addr, unsigned w0, unsigned w1) {
  const unsigned w[2] = {w0, w1};
  if (unsigned char *d = sim::my_shared(addr, 8, 8, "st.shared.v2")) memcpy(d, w, 8);
}
static inline void ptx_st_shared_zero16(unsigned addr) {
  if (unsigned char *d = sim::my_shared(addr, 16, 16, "st.shared.v4")) memset(d, 0, 16);
}

// cp.async: the destination reads NaN from the issue until the wait_group that completes it;
// the source is read then (the latest legal moment); pred 0 writes zeros
static inline void sim_cp_async(unsigned dst, const void *src, bool pred, int n, SIM_AT) {
  sim::W.cur->at.file = file, sim::W.cur->at.line = line;
  if (pred && (uintptr_t)src % (unsigned)n) sim_fail("cp.async: global source %p not aligned to %d bytes", src, n);
  unsigned char *d = sim::my_shared(dst, n, n, "cp.async");
  if (!d) return;
  memset(d, 0xff, (size_t)n);
  sim::W.cur->cp.push_back({dst, pred ? (const unsigned char *)src : nullptr, n, sim::W.cur->committed});
}
static inline void ptx_cp_async16(unsigned dst, const void *src, bool pred, SIM_AT) {
  sim_cp_async(dst, src, pred, 16, SIM_AT_ARG);
}
static inline void ptx_cp_async8(unsigned dst, const void *src, bool pred, SIM_AT) {
  sim_cp_async(dst, src, pred, 8, SIM_AT_ARG);
}
static inline void ptx_cp_async_commit() { sim::W.cur->committed++; }
// groups older than the N most recent committed ones complete; uncommitted copies do not
template <int N>
static inline void ptx_cp_async_wait(SIM_AT) {
  sim::thread_t *t = sim::W.cur;
  size_t keep = 0;
  for (size_t i = 0; i < t->cp.size(); i++) {
    sim::cp_copy c = t->cp[i];
    if (c.group < t->committed - N) {
      unsigned char *d = sim::shared_at(t->b, c.dst, c.n, "cp.async");
      if (!d) return;
      if (c.src)
        memcpy(d, c.src, (size_t)c.n);
      else
        memset(d, 0, (size_t)c.n);
    } else {
      t->cp[keep++] = c;
    }
  }
  t->cp.resize(keep);
  sim::event();
  (void)file, (void)line;  // the thread goes on at once: the others' copies have not landed
}

// ------------------------------------------------------------------ ldmatrix, mma.sync
static inline void sim_ldsm(unsigned r[4], unsigned addr, bool trans, const char *file, int line) {
  sim::lane_in in{};
  in.addr = addr;
  in.i0 = trans;
  sim::lane_out o = sim::rendezvous(
      sim::W.cur->b->warps, 32, trans ? SIM_C_LDSM_T : SIM_C_LDSM, "ldmatrix", in, file, line,
      [](sim::group_t &g) {
        for (int l = 0; l < 32; l++)
          if (g.in[l].addr % 16)
            sim_fail("ldmatrix: lane %d's row address 0x%x is not 16-byte aligned", l, g.in[l].addr);
        for (int l = 0; l < 32; l++)
          for (int j = 0; j < 4; j++) {
            unsigned short e[2] = {0, 0};
            for (int h = 0; h < 2; h++) {
              int row, col;
              sim_ldsm(l, j, h, g.in[l].i0, &row, &col);
              const unsigned char *p = sim::shared_at(sim::W.cur->b, g.in[8 * j + row].addr + 2u * (unsigned)col, 2, "ldmatrix");
              if (p) memcpy(&e[h], p, 2);
            }
            g.out[l].r[j] = e[0] | (unsigned)e[1] << 16;
          }
      });
  memcpy(r, o.r, sizeof o.r);
}
static inline void ptx_ldsm_x4(unsigned r[4], unsigned addr, SIM_AT) {
  sim_ldsm(r, addr, false, SIM_AT_ARG);
}
static inline void ptx_ldsm_x4_trans(unsigned r[4], unsigned addr, SIM_AT) {
  sim_ldsm(r, addr, true, SIM_AT_ARG);
}
// kind: 0 f16, 1 bf16 (m16n8k16), 2 tf32 (m16n8k8)
static inline void sim_mma(float c[4], const unsigned a[4], unsigned b0, unsigned b1, int kind,
                           const char *file, int line) {
  sim::lane_in in{};
  memcpy(in.a, a, sizeof in.a);
  in.b[0] = b0, in.b[1] = b1;
  memcpy(in.c, c, sizeof in.c);
  in.i0 = kind;
  sim::lane_out o = sim::rendezvous(
      sim::W.cur->b->warps, 32, SIM_C_MMA * 8 + kind, "mma.sync", in, file, line,
      [](sim::group_t &g) {
        const int kind = g.in[0].i0, K = kind == 2 ? 8 : 16;
        float A[16][16], B[16][8];
        for (int l = 0; l < 32; l++) {
          int m, k, n;
          if (kind == 2) {  // tf32: the top 19 bits of each register
            for (int v = 0; v < 4; v++)
              sim_mma1688_a(l, v, &m, &k), A[m][k] = __uint_as_float(g.in[l].a[v] & 0xffffe000u);
            for (int v = 0; v < 2; v++)
              sim_mma1688_b(l, v, &k, &n), B[k][n] = __uint_as_float(g.in[l].b[v] & 0xffffe000u);
          } else {
            for (int v = 0; v < 8; v++) {
              const unsigned short h = (unsigned short)(g.in[l].a[v / 2] >> (16 * (v % 2)));
              sim_mma16816_a(l, v, &m, &k);
              A[m][k] = kind ? sim::bf16_value(h) : sim::f16_value(h);
            }
            for (int v = 0; v < 4; v++) {
              const unsigned short h = (unsigned short)(g.in[l].b[v / 2] >> (16 * (v % 2)));
              sim_mma16816_b(l, v, &k, &n);
              B[k][n] = kind ? sim::bf16_value(h) : sim::f16_value(h);
            }
          }
        }
        for (int l = 0; l < 32; l++)
          for (int v = 0; v < 4; v++) {
            int m, n;
            sim_mma_c(l, v, &m, &n);
            float s = g.in[l].c[v];
            for (int k = 0; k < K; k++) s = fmaf(A[m][k], B[k][n], s);
            g.out[l].c[v] = s;
          }
      });
  memcpy(c, o.c, sizeof o.c);
}
template <int BF16>
static inline void ptx_mma_m16n8k16(float c[4], const unsigned a[4], unsigned b0, unsigned b1,
                                    SIM_AT) {
  sim_mma(c, a, b0, b1, BF16 ? 1 : 0, SIM_AT_ARG);
}
static inline void ptx_mma_m16n8k8_tf32(float c[4], const unsigned a[4], unsigned b0, unsigned b1,
                                        SIM_AT) {
  sim_mma(c, a, b0, b1, 2, SIM_AT_ARG);
}

// ------------------------------------------------------------------ mbarriers, clusters
namespace sim {
static inline mbar_t *bar_in(block_t *b, unsigned addr) {
  for (auto &m : b->bars)
    if (m.addr == addr) return &m;
  return nullptr;
}
static inline mbar_t *bar_of(block_t *b, unsigned addr, const char *what) {
  mbar_t *m = bar_in(b, addr);
  if (!m) sim_fail("%s: no mbarrier.init at shared address 0x%x in block rank %d", what, addr, b->rank);
  return m;
}
// a phase completes when every expected arrival came and every expected byte landed
static inline void bar_settle(mbar_t *m) {
  if (m->pending < 0) sim_fail("mbarrier 0x%x: more arrivals than its count %d", m->addr, m->count);
  if (m->pending == 0 && m->tx == 0) m->phase++, m->pending = m->count;
  event();
}
}  // namespace sim
static inline void ptx_mbar_init(unsigned bar, unsigned count, SIM_AT) {
  sim::block_t *b = sim::W.cur->b;
  if (bar % 8) sim_fail("mbarrier.init: address 0x%x not 8-byte aligned", bar);
  if (!sim::my_shared(bar, 8, 8, "mbarrier.init")) return;
  if (count < 1 || count > (1u << 20) - 1) sim_fail("mbarrier.init: count %u outside 1..2^20-1", count);
  sim::mbar_t *m = sim::bar_in(b, bar);
  if (!m) b->bars.push_back(sim::mbar_t()), m = &b->bars.back();
  m->addr = bar, m->count = m->pending = (int)count, m->tx = 0, m->phase = 0;
  sim::event();
}
static inline void ptx_mbar_init_fence() {}
static inline void ptx_fence_proxy_async() {}
static inline void ptx_mbar_expect_tx(unsigned bar, unsigned bytes, SIM_AT) {
  sim::W.cur->at.file = file, sim::W.cur->at.line = line;
  if (sim::mbar_t *m = sim::bar_of(sim::W.cur->b, bar, "mbarrier.arrive.expect_tx")) {
    m->tx += bytes, m->pending--;
    sim::bar_settle(m);
  }
}
static inline void ptx_mbar_arrive(unsigned bar, SIM_AT) {
  sim::W.cur->at.file = file, sim::W.cur->at.line = line;
  if (sim::mbar_t *m = sim::bar_of(sim::W.cur->b, bar, "mbarrier.arrive")) {
    m->pending--;
    sim::bar_settle(m);
  }
}
// spins (others run) until the phase of this parity has completed
static inline void ptx_mbar_wait(unsigned bar, unsigned parity, SIM_AT) {
  for (;;) {
    sim::mbar_t *m = sim::bar_of(sim::W.cur->b, bar, "mbarrier.try_wait.parity");
    if (!m || (m->phase & 1u) != parity) return;
    sim::wait_here(sim::T_SPIN, "mbarrier.try_wait.parity", file, line, (long long)bar * 2 + parity);
  }
}
static inline int ptx_cluster_rank() { return sim::W.cur->b->rank; }
static inline void ptx_mbar_arrive_cluster(unsigned bar, unsigned cta, SIM_AT) {
  sim::W.cur->at.file = file, sim::W.cur->at.line = line;
  if (cta >= sim::W.cl.size()) {
    sim_fail("mapa: block rank %u is not in the cluster of %zu blocks", cta, sim::W.cl.size());
    return;
  }
  if (sim::mbar_t *m = sim::bar_of(&sim::W.cl[cta], bar, "mbarrier.arrive.shared::cluster")) {
    m->pending--;
    sim::bar_settle(m);
  }
}
static inline void ptx_cluster_sync(SIM_AT) {
  int live = 0;
  for (auto &b : sim::W.cl) live += b.live;
  sim::event();
  if (++sim::W.cluster_arrived >= live) {
    sim::W.cluster_arrived = 0, sim::W.cluster_gen++;
    for (auto &b : sim::W.cl)
      for (auto &t : b.th)
        if (t.state == sim::T_BLOCKED && !strcmp(t.at.what, "barrier.cluster")) sim::wake(t);
    return;
  }
  const int gen = sim::W.cluster_gen;
  while (sim::W.cluster_gen == gen) sim::wait_here(sim::T_BLOCKED, "barrier.cluster", file, line);
}
// bar.sync 1, N: N threads of the block (whole warps)
template <int N>
static inline void ptx_bar_sync1(SIM_AT) {
  static_assert(N % 32 == 0, "bar.sync counts whole warps");
  sim::block_t *b = sim::W.cur->b;
  sim::named_t *nb = nullptr;
  for (auto &x : b->named)
    if (x.id == 1) nb = &x;
  if (!nb) b->named.push_back({1, 0, N, 0}), nb = &b->named.back();
  if (nb->expected != N) sim_fail("bar.sync 1 with %d threads while others wait for %d", N, nb->expected);
  sim::event();
  if (++nb->arrived == N) {
    nb->arrived = 0, nb->gen++;
    for (auto &t : b->th)
      if (t.state == sim::T_BLOCKED && !strcmp(t.at.what, "bar.sync")) sim::wake(t);
    return;
  }
  const int gen = nb->gen;
  while (nb->gen == gen) {
    sim::wait_here(sim::T_BLOCKED, "bar.sync", file, line, 1);
    for (auto &x : b->named)
      if (x.id == 1) nb = &x;
  }
}
// setmaxnreg: every thread of the warpgroup, N a multiple of 8 in 24..256
static inline void sim_setmaxnreg(int n, const char *file, int line) {
  if (n < 24 || n > 256 || n % 8) sim_fail("setmaxnreg %d: must be a multiple of 8 in 24..256", n);
  sim::lane_in in{};
  sim::rendezvous(sim::W.cur->b->wgs, 128, 1000 + n, "setmaxnreg", in, file, line,
                  [](sim::group_t &) {});
}
template <int N>
static inline void ptx_setmaxnreg_dec(SIM_AT) {
  sim_setmaxnreg(N, SIM_AT_ARG);
}
template <int N>
static inline void ptx_setmaxnreg_inc(SIM_AT) {
  sim_setmaxnreg(N, SIM_AT_ARG);
}

// ------------------------------------------------------------------ TMA
namespace sim {
struct tma_op {
  block_t *b;
  unsigned dst, bar, bytes;
  sim_tensor_map m;
  int c[5];
};
static inline int tma_elem_bytes(int t) {
  static const int es[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};  // CUtensorMapDataType
  return t >= 0 && t < 13 ? es[t] : 0;
}
static void tma_land(void *arg) {
  tma_op *o = (tma_op *)arg;
  const sim_tensor_map &m = o->m;
  const int es = tma_elem_bytes(m.data_type), r = m.rank;
  unsigned box[5] = {1, 1, 1, 1, 1};
  for (int i = 0; i < r; i++) box[i] = m.box[i];
  unsigned lin = 0;
  for (unsigned e4 = 0; e4 < box[4]; e4++)
    for (unsigned e3 = 0; e3 < box[3]; e3++)
      for (unsigned e2 = 0; e2 < box[2]; e2++)
        for (unsigned e1 = 0; e1 < box[1]; e1++)
          for (unsigned e0 = 0; e0 < box[0]; e0++, lin += (unsigned)es) {
            const unsigned e[5] = {e0, e1, e2, e3, e4};
            bool in = true;
            long long off = 0;
            for (int i = 0; i < r; i++) {
              const long long c = (long long)o->c[i] + e[i];
              in = in && c >= 0 && c < (long long)m.dims[i];
              off += i ? c * (long long)m.strides[i - 1] : c * es;
            }
            const unsigned a = o->dst + lin;
            unsigned char *d = shared_at(o->b, m.swizzle == 3 ? sim_sw128(a) : a, es, "TMA box");
            if (!d) goto out;
            if (in)
              memcpy(d, (const unsigned char *)(uintptr_t)m.base + off, (size_t)es);
            else
              memset(d, 0, (size_t)es);
          }
  if (mbar_t *mb = bar_of(o->b, o->bar, "cp.async.bulk.tensor (complete_tx)")) {
    mb->tx -= o->bytes;
    bar_settle(mb);
  }
out:
  delete o;
}
static inline void tma_issue(unsigned dst, const void *map, unsigned bar, const int *c, int dims,
                             unsigned mask, const char *file, int line) {
  W.cur->at.file = file, W.cur->at.line = line;
  sim_tensor_map m;
  memcpy(&m, map, sizeof m);
  static const char *swz[] = {"none", "32B", "64B", "128B"};
  if (m.magic != SIM_TENSOR_MAP_MAGIC)
    return sim_fail("cp.async.bulk.tensor: the tensor map at %p was not encoded by the sim "
                    "(sim_tensor_map_encode)",
                    map);
  if (m.rank != dims)
    return sim_fail("cp.async.bulk.tensor.%dd with a tensor map of rank %d", dims, m.rank);
  if (m.interleave) return sim_unsupported("TMA interleave mode %d is not emulated", m.interleave);
  if (m.swizzle != 0 && m.swizzle != 3)
    return sim_unsupported("TMA swizzle %s is not emulated", swz[m.swizzle & 3]);
  if (m.oob_fill) return sim_unsupported("TMA oobFill NAN_REQUEST_ZERO_FMA is not emulated");
  const int es = tma_elem_bytes(m.data_type);
  unsigned bytes = (unsigned)es;
  for (int i = 0; i < dims; i++) {
    if (m.elem_strides[i] != 1)
      return sim_unsupported("TMA element strides other than 1 are not emulated");
    bytes *= m.box[i];
  }
  if (m.swizzle == 3 && m.box[0] * (unsigned)es > 128)
    return sim_fail("TMA: an inner box of %u bytes exceeds the 128-byte swizzle span",
                    m.box[0] * (unsigned)es);
  if (dst % 128) return sim_fail("TMA destination 0x%x is not 128-byte aligned", dst);
  for (size_t r = 0; r < W.cl.size(); r++) {
    if (!(mask >> r & 1)) continue;
    block_t *b = &W.cl[r];
    if (!bar_of(b, bar, "cp.async.bulk.tensor")) return;
    unsigned char *d = shared_at(b, dst, (int)bytes, "TMA box");
    if (!d) return;
    memset(d, 0xff, bytes);  // NaN until it lands
    tma_op *o = new tma_op{b, dst, bar, bytes, m, {0, 0, 0, 0, 0}};
    for (int i = 0; i < dims; i++) o->c[i] = c[i];
    defer(tma_land, o, [](void *a) { delete (tma_op *)a; });
  }
  event();
}
}  // namespace sim
static inline void ptx_tma_load_3d(unsigned dst, const void *map, unsigned bar, int c0, int c1,
                                   int c2, SIM_AT) {
  const int c[3] = {c0, c1, c2};
  sim::tma_issue(dst, map, bar, c, 3, 1u << sim::W.cur->b->rank, SIM_AT_ARG);
}
static inline void ptx_tma_load_3d_multicast(unsigned dst, const void *map, unsigned bar, int c0,
                                             int c1, int c2, unsigned short mask, SIM_AT) {
  const int c[3] = {c0, c1, c2};
  sim::tma_issue(dst, map, bar, c, 3, mask, SIM_AT_ARG);
}
static inline void ptx_tma_load_4d(unsigned dst, const void *map, unsigned bar, int c0, int c1,
                                   int c2, int c3, SIM_AT) {
  const int c[4] = {c0, c1, c2, c3};
  sim::tma_issue(dst, map, bar, c, 4, 1u << sim::W.cur->b->rank, SIM_AT_ARG);
}

// ------------------------------------------------------------------ wgmma
namespace sim {
enum { E_F16 = 1, E_BF16, E_E4M3, E_E5M2 };
struct wg_op {
  block_t *b;
  int n, k, rs, type_a, type_b, es_a, es_b, trans_b, scale_d;
  float sa, sb;
  unsigned long long da, db;
  float *d[128];
  const unsigned *p[128];
};
struct wg_accs {
  std::unordered_map<float *, std::vector<float>> shadow;  // accumulators in flight
};
inline std::vector<wg_accs> accs;  // per warpgroup of the running cluster (block-major)
static inline wg_accs &accs_of(block_t *b, int g) {
  const size_t per = b->wg.size(), i = (size_t)b->rank * per + (size_t)g;
  if (accs.size() < W.cl.size() * per) accs.resize(W.cl.size() * per);
  return accs[i];
}
static inline int type_code(const char *s) {
  if (!strncmp(s, "f16", 3)) return E_F16;
  if (!strncmp(s, "bf16", 4)) return E_BF16;
  if (!strncmp(s, "e4m3", 4)) return E_E4M3;
  if (!strncmp(s, "e5m2", 4)) return E_E5M2;
  return 0;
}
static inline float decode(const unsigned char *p, int type) {
  unsigned short h;
  switch (type) {
    case E_F16: memcpy(&h, p, 2); return f16_value(h);
    case E_BF16: memcpy(&h, p, 2); return bf16_value(h);
    case E_E4M3: return e4m3_value(p[0]);
    case E_E5M2: return e5m2_value(p[0]);
  }
  return NAN;
}
static inline bool desc_ok(const sim_desc &s, const char *which) {
  static const char *mode[] = {"interleave (no swizzle)", "128-byte swizzle", "64-byte swizzle",
                               "32-byte swizzle"};
  if (s.mode != 1) {
    sim_unsupported("wgmma %s descriptor with the %s layout is not emulated", which, mode[s.mode & 3]);
    return false;
  }
  if (s.base_offset) {
    sim_unsupported("wgmma %s descriptor with base offset %u is not emulated", which, s.base_offset);
    return false;
  }
  return true;
}
static void wg_execute(wg_op &op, wg_accs &acc) {
  static float A[64][32], B[256][32];
  const sim_desc sa = sim_desc_decode(op.da), sb = sim_desc_decode(op.db);
  if ((!op.rs && !desc_ok(sa, "A")) || !desc_ok(sb, "B")) return;
  if (op.rs) {
    for (int t = 0; t < 128; t++)
      for (int v = 0; v < 8; v++) {
        int m, k;
        sim_gmma_a16(t, v, &m, &k);
        const unsigned short h = (unsigned short)(op.p[t][v / 2] >> (16 * (v % 2)));
        A[m][k] = decode((const unsigned char *)&h, op.type_a);
      }
  } else {
    for (int m = 0; m < 64; m++)
      for (int k = 0; k < op.k; k++) {
        const unsigned char *p = shared_at(op.b, sim_sw128(sim_desc_kmajor(&sa, op.es_a, m, k)), op.es_a, "wgmma A");
        if (!p) return;
        A[m][k] = decode(p, op.type_a);
      }
  }
  for (int n = 0; n < op.n; n++)
    for (int k = 0; k < op.k; k++) {
      const unsigned a = op.trans_b ? sim_desc_mnmajor(&sb, op.es_b, n, k) : sim_desc_kmajor(&sb, op.es_b, n, k);
      const unsigned char *p = shared_at(op.b, sim_sw128(a), op.es_b, "wgmma B");
      if (!p) return;
      B[n][k] = decode(p, op.type_b);
    }
  for (int t = 0; t < 128; t++) {
    std::vector<float> &c = acc.shadow[op.d[t]];
    for (int v = 0; v < op.n / 2; v++) {
      int m, n;
      sim_gmma_c(t, v, &m, &n);
      float s = op.scale_d ? c[(size_t)v] : 0.f;
      for (int k = 0; k < op.k; k++) s = fmaf(op.sa * A[m][k], op.sb * B[n][k], s);
      c[(size_t)v] = s;
    }
  }
}
struct wg_wait {
  block_t *b;
  int g, n;
};
// wait_group N completes: groups older than the N newest execute, accumulators no pending
// wgmma writes get their values, the warpgroup goes on
static void wg_complete(void *arg) {
  wg_wait *w = (wg_wait *)arg;
  wg_state &s = w->b->wg[(size_t)w->g];
  wg_accs &acc = accs_of(w->b, w->g);
  while ((int)s.groups.size() > w->n && !W.failed) {
    for (wg_op *op : s.groups.front()) {
      wg_execute(*op, acc);
      delete op;
    }
    s.groups.erase(s.groups.begin());
  }
  for (auto it = acc.shadow.begin(); it != acc.shadow.end();) {
    bool busy = false;
    for (auto &gr : s.groups)
      for (wg_op *op : gr)
        for (int t = 0; t < 128 && !busy; t++) busy = op->d[t] == it->first;
    for (wg_op *op : s.open)
      for (int t = 0; t < 128 && !busy; t++) busy = op->d[t] == it->first;
    if (busy) {
      ++it;
      continue;
    }
    memcpy(it->first, it->second.data(), it->second.size() * sizeof(float));
    it = acc.shadow.erase(it);
  }
  w->b->wgs[(size_t)w->g].gen++;
  for (int l = 0; l < 128; l++) wake(w->b->th[(size_t)(w->g * 128 + l)]);
  delete w;
}
static inline void wg_parse(wg_op &op, const char *ab, const char *ks, const char *tail) {
  op.type_a = type_code(ab);
  const char *dot = strchr(ab, '.');
  op.type_b = dot ? type_code(dot + 1) : 0;
  if (!op.type_a || !op.type_b) return sim_unsupported("wgmma with operand types %s is not emulated", ab);
  op.es_a = op.type_a <= E_BF16 ? 2 : 1, op.es_b = op.type_b <= E_BF16 ? 2 : 1;
  op.k = atoi(ks);
  if (op.k != (op.es_a == 2 ? 16 : 32)) return sim_fail("wgmma .k%d with %s operands", op.k, ab);
  int f[6] = {0}, nf = 0;  // the tail: scale-d predicate, imm-scale-a, imm-scale-b, trans
  for (const char *c = tail; *c && nf < 6;) {
    while (*c == ' ' || *c == ',') c++;
    if (!*c) break;
    f[nf++] = (*c == 'p' || *c == 'q') ? 1 : atoi(c);
    while (*c && *c != ',') c++;
  }
  op.sa = (float)f[1], op.sb = (float)f[2];
  if ((op.sa != 1 && op.sa != -1) || (op.sb != 1 && op.sb != -1))
    return sim_fail("wgmma imm-scale-a/b must be 1 or -1 (tail \"%s\")", tail);
  const int sixteen = op.es_a == 2;
  if (op.rs && !sixteen) return sim_unsupported("wgmma with fp8 A from registers is not emulated");
  if (!op.rs && sixteen && nf != 5) return sim_fail("wgmma tail \"%s\": 16-bit SS takes 5 operands", tail);
  if (op.rs && nf != 4) return sim_fail("wgmma tail \"%s\": 16-bit RS takes 4 operands", tail);
  if (!sixteen && nf != 3) return sim_fail("wgmma tail \"%s\": fp8 takes 3 operands", tail);
  if (!op.rs && sixteen && f[3]) return sim_unsupported("wgmma imm-trans-a 1 (an M-major A) is not emulated");
  op.trans_b = sixteen ? f[nf - 1] : 0;
}
static inline void wgmma(int n, const char *ab, const char *ks, const char *tail, float *d,
                         unsigned long long da, unsigned long long db, int first, const unsigned *p,
                         const char *file, int line) {
  lane_in in{};
  in.x = da, in.i0 = first, in.q = d, in.p = p;
  in.addr = (unsigned)(db & 0xffffffffu), in.i1 = (int)(db >> 32);
  struct args {
    int n;
    const char *ab, *ks, *tail;
  };
  static thread_local args A;
  A = {n, ab, ks, tail};
  rendezvous(W.cur->b->wgs, 128, 3000 + n, "wgmma.mma_async", in, file, line, [](group_t &g) {
    wg_op *op = new wg_op();
    op->b = W.cur->b;
    op->n = A.n, op->rs = g.in[0].p != nullptr;
    op->da = g.in[0].x, op->db = (unsigned long long)(unsigned)g.in[0].i1 << 32 | g.in[0].addr;
    op->scale_d = op->rs ? 1 : !g.in[0].i0;
    for (int t = 1; t < 128; t++)
      if (g.in[t].x != g.in[0].x || g.in[t].addr != g.in[0].addr || g.in[t].i1 != g.in[0].i1 ||
          g.in[t].i0 != g.in[0].i0 || (g.in[t].p != nullptr) != op->rs) {
        delete op;
        return sim_fail("wgmma.mma_async: thread %d of the warpgroup has other descriptors or "
                        "scale-d than thread 0",
                        t);
      }
    wg_parse(*op, A.ab, A.ks, A.tail);
    if (W.failed) return delete op;
    const int g_ = W.cur->tid / 128;
    wg_accs &acc = accs_of(op->b, g_);
    for (int t = 0; t < 128; t++) {
      op->d[t] = (float *)g.in[t].q, op->p[t] = (const unsigned *)g.in[t].p;
      if (!acc.shadow.count(op->d[t]))
        acc.shadow[op->d[t]] = std::vector<float>(op->d[t], op->d[t] + op->n / 2);
      for (int v = 0; v < op->n / 2; v++) op->d[t][v] = NAN;  // in flight until its wait
    }
    op->b->wg[(size_t)g_].open.push_back(op);
  });
}
}  // namespace sim
static inline void ptx_wgmma_fence() {}
static inline void ptx_wgmma_commit(SIM_AT) {
  sim::lane_in in{};
  sim::rendezvous(sim::W.cur->b->wgs, 128, 2000, "wgmma.commit_group", in, file, line,
                  [](sim::group_t &) {
                    sim::wg_state &s = sim::W.cur->b->wg[(size_t)(sim::W.cur->tid / 128)];
                    s.groups.push_back(s.open);
                    s.open.clear();
                  });
}
template <int N>
static inline void ptx_wgmma_wait(SIM_AT) {
  sim::lane_in in{};
  sim::thread_t *t = sim::W.cur;
  // every thread of the warpgroup arrives; the last defers the completion and all wait for it
  sim::group_t &g = t->b->wgs[(size_t)(t->tid / 128)];
  const int gen = g.gen;
  (void)in;
  if (g.arrived == 0) {
    g.kind = 2100 + N, g.file = file, g.line = line;
  } else if (g.kind != 2100 + N) {
    sim_fail("wgmma.wait_group: the threads of a warpgroup are at different instructions (%s:%d "
             "and %s:%d)",
             g.file, g.line, file, line);
  }
  sim::event();
  if (++g.arrived == 128) {
    g.arrived = 0;
    sim::defer(sim::wg_complete, new sim::wg_wait{t->b, t->tid / 128, N},
               [](void *a) { delete (sim::wg_wait *)a; });
  }
  while (g.gen == gen && !sim::W.failed) sim::wait_here(sim::T_BLOCKED, "wgmma.wait_group", file, line, N);
}
template <int N>
static inline void ptx_reg_fence(float *) {}
template <int N>
static inline void ptx_reg_fence(unsigned *) {}
static inline unsigned ptx_reg_move(unsigned x) { return x; }
#define PTX_WGMMA_SS_(name, N, AB, K, TAIL)                                              \
  static inline void name(float *d, unsigned long long da, unsigned long long db, bool first, \
                          SIM_AT) {                                                      \
    sim::wgmma(N, AB, K, TAIL, d, da, db, first, nullptr, SIM_AT_ARG);                   \
  }
#define PTX_WGMMA_RS_(name, N, AB, K, TAIL)                                                  \
  static inline void name(float *d, const unsigned *p, unsigned long long db, SIM_AT) {      \
    sim::wgmma(N, AB, K, TAIL, d, 0, db, 0, p, SIM_AT_ARG);                                  \
  }
#define PTX_WGMMA_SS(name, N, AB, K, TAIL) PTX_WGMMA_SS_(name, N, AB, K, TAIL)
#define PTX_WGMMA_RS(name, N, AB, K, TAIL) PTX_WGMMA_RS_(name, N, AB, K, TAIL)

namespace sim {
// at a block's end nothing may be in flight
void hopper_block_end(block_t &b) {
  for (size_t g = 0; g < b.wg.size(); g++)
    if (!b.wg[g].groups.empty() || !b.wg[g].open.empty())
      return sim_fail("block (%u,%u,%u) ended with wgmma groups of warpgroup %zu never waited for",
                      b.bid3.x, b.bid3.y, b.bid3.z, g);
  accs.clear();
}
void hopper_reset() { accs.clear(); }
void hopper_drop(block_t &b) {
  for (auto &w : b.wg) {
    for (auto &g : w.groups)
      for (wg_op *op : g) delete op;
    for (wg_op *op : w.open) delete op;
    w.groups.clear(), w.open.clear();
  }
}
}  // namespace sim
