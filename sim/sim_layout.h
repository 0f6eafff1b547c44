/* sim_layout.h — the layouts the sim's twins use, written from the specifications (PTX ISA
 * 9.7.13.4.8 mma.m16n8k16 / m16n8k8 fragments, 9.7.13.4.15 ldmatrix, 9.7.15.5 wgmma's register
 * fragments, shared-memory matrix layouts and descriptor; CuTe's SM80 MMA traits, GMMA A and C
 * layouts, Swizzle<3,4,3> and make_gmma_desc's canonical forms), never from the kernels' index
 * headers, so a misunderstanding is not shared by a kernel and its check.  Valid C (the layout
 * test, tests/unit/test_sim_layouts.c, evaluates each for every (thread, value) against CuTe's
 * shape:stride definitions) and C++ (sim/sim_ptx.hpp).  Closed forms: lane = 4 * group + quad. */
#ifndef ROOFTUNE_SIM_LAYOUT_H
#define ROOFTUNE_SIM_LAYOUT_H

/* mma.m16n8k16 (f16/bf16): value v (0..7) of lane's A fragment (register v/2, half v%2) is
 * element (m, k) of the 16x16 A; value v (0..3) of B is (k, n) of the 16x8 B; value v (0..3)
 * of C/D is (m, n) of the 16x8 C. */
static inline void sim_mma16816_a(int lane, int v, int *m, int *k) {
  *m = lane / 4 + 8 * ((v >> 1) & 1);
  *k = 2 * (lane % 4) + (v & 1) + 8 * (v >> 2);
}
static inline void sim_mma16816_b(int lane, int v, int *k, int *n) {
  *k = 2 * (lane % 4) + (v & 1) + 8 * (v >> 1);
  *n = lane / 4;
}
static inline void sim_mma_c(int lane, int v, int *m, int *n) {
  *m = lane / 4 + 8 * (v >> 1);
  *n = 2 * (lane % 4) + (v & 1);
}
/* mma.m16n8k8 (tf32): A 16x8 value v (0..3, one register each), B 8x8 value v (0..1); C as
 * above. */
static inline void sim_mma1688_a(int lane, int v, int *m, int *k) {
  *m = lane / 4 + 8 * (v & 1);
  *k = lane % 4 + 4 * (v >> 1);
}
static inline void sim_mma1688_b(int lane, int v, int *k, int *n) {
  *k = lane % 4 + 4 * v;
  *n = lane / 4;
}
/* ldmatrix .m8n8.x4 .b16: half h of register r of lane is element (row, col) of matrix r, whose
 * row `row` starts at the address lane 8r + row gave; .trans swaps row and column. */
static inline void sim_ldsm(int lane, int r, int h, int trans, int *row, int *col) {
  (void)r;
  if (trans) {
    *row = 2 * (lane % 4) + h;
    *col = lane / 4;
  } else {
    *row = lane / 4;
    *col = 2 * (lane % 4) + h;
  }
}
/* wgmma m64nN: value v (0..N/2-1) of thread t (0..127) of the accumulator is (m, n); value v
 * (0..7, register v/2, half v%2) of a 16-bit register A operand (m64k16) is (m, k). */
static inline void sim_gmma_c(int t, int v, int *m, int *n) {
  *m = 16 * (t / 32) + (t % 32) / 4 + 8 * ((v >> 1) & 1);
  *n = 8 * (v >> 2) + 2 * (t % 4) + (v & 1);
}
static inline void sim_gmma_a16(int t, int v, int *m, int *k) {
  *m = 16 * (t / 32) + (t % 32) / 4 + 8 * ((v >> 1) & 1);
  *k = 2 * (t % 4) + (v & 1) + 8 * (v >> 2);
}

/* The 128-byte swizzle on a shared-memory byte address: the 16-byte chunk (bits 4-6) XOR the
 * 128-byte row within its 1024-byte group (bits 7-9). */
static inline unsigned sim_sw128(unsigned addr) { return addr ^ (((addr >> 7) & 7u) << 4); }

/* The fields of a wgmma shared-memory matrix descriptor (PTX ISA 9.7.15.5.1.1). */
typedef struct sim_desc {
  unsigned start, lbo, sbo; /* bytes */
  unsigned base_offset;     /* bits 49-51 */
  unsigned mode;            /* bits 62-63: 0 interleave (none), 1 128B, 2 64B, 3 32B */
} sim_desc;
static inline sim_desc sim_desc_decode(unsigned long long d) {
  sim_desc s;
  s.start = (unsigned)(d & 0x3FFF) << 4;
  s.lbo = (unsigned)((d >> 16) & 0x3FFF) << 4;
  s.sbo = (unsigned)((d >> 32) & 0x3FFF) << 4;
  s.base_offset = (unsigned)((d >> 49) & 7);
  s.mode = (unsigned)(d >> 62);
  return s;
}
/* The byte address (before the swizzle) of element (mn, k) of a 128-byte-swizzled operand with
 * es-byte elements: K-major, rows of 128 bytes along K, 8-row groups SBO apart; MN-major, 128
 * bytes along MN (then the next 128 bytes LBO on), rows of 128 bytes along K, 8-row groups SBO
 * apart. */
static inline unsigned sim_desc_kmajor(const sim_desc *s, int es, int mn, int k) {
  return s->start + (unsigned)(mn >> 3) * s->sbo + (unsigned)(mn & 7) * 128u + (unsigned)(k * es);
}
static inline unsigned sim_desc_mnmajor(const sim_desc *s, int es, int mn, int k) {
  const int per = 128 / es; /* elements in 128 bytes */
  return s->start + (unsigned)(mn / per) * s->lbo + (unsigned)((mn % per) * es) +
         (unsigned)(k >> 3) * s->sbo + (unsigned)(k & 7) * 128u;
}

#endif
