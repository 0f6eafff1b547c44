/* attn_wgmma_index.h — index, fragment-layout, pipeline and softmax arithmetic of the Hopper
 * flash-attention template attn_wgmma, shared by the kernel and its host tests.
 *
 * Valid C (tests/unit/test_attn_wgmma_emulate.c includes it) and CUDA C++ (attn_wgmma.cu
 * includes it through the template folder's include path).  The kernel computes its tile
 * ranges, masks, shared-memory placement, wgmma descriptor fields, fragment coordinates,
 * pipeline stages and parities, and its online-softmax steps only through these functions, so
 * the host emulation that runs them checks the very arithmetic the device runs.
 *
 * Layouts follow the PTX ISA: wgmma m64nNk16 accumulator and register-A fragments (9.7.15.5.1.1,
 * figures "wgmma-64N16-D" and "wgmma-64N16-A"), the 128-byte-swizzled shared-memory layouts and
 * the matrix descriptor (9.7.15.5.1.2); cp.async.bulk.tensor's 128-byte swizzle (5.5.x tensor
 * copies).  Element sizes are 2 bytes (f16, bf16).
 */
#ifndef ROOFTUNE_ATTN_WGMMA_INDEX_H
#define ROOFTUNE_ATTN_WGMMA_INDEX_H

#include "../common/rt_ptx.h" /* swizzle, descriptors, stage phases, exp2 and log2: shared by every template */

#if defined(__CUDACC__)
#define ATTN_FN     static __host__ __device__ __forceinline__
#define ATTN_UNROLL _Pragma("unroll")
#else
#include <math.h>
#define ATTN_FN static inline
#define ATTN_UNROLL
#endif

/* ------------------------------------------------------------------ problem and tiles */

ATTN_FN int attn_ceil_div(int a, int b) { return (a + b - 1) / b; }
ATTN_FN int attn_min(int a, int b) { return a < b ? a : b; }
ATTN_FN int attn_max(int a, int b) { return a > b ? a : b; }

/* Keys of sequence b: kv_lens[b] when the caller gives kv_lens (ragged), else SKV. */
ATTN_FN int attn_kv_len(const int *kv_lens, int b, int skv) { return kv_lens ? kv_lens[b] : skv; }

/* The keys query `row` attends are [0, attn_key_end): every key below kv_len L, and with the
 * causal mask only keys j <= row + L - SQ (attn_abi.h: aligned to the bottom right).  The end may
 * be <= 0 (a query that attends nothing); it never exceeds L. */
ATTN_FN int attn_key_end(int row, int L, int SQ, int causal) {
  return causal ? attn_min(L, row + L - SQ + 1) : L;
}

/* Query tiles: block x of the grid takes query tile attn_m_tile (rows m0 = tile*BLOCK_M ..):
 * with the causal mask the tiles run last to first, so the longest blocks start first. */
ATTN_FN int attn_m_tile(int bx, int tiles_m, int causal) { return causal ? tiles_m - 1 - bx : bx; }

/* KV tiles of BLOCK_N keys that the query tile at row m0 (block_m rows) visits: [0, n) with n =
 * ceil(end / block_n), end the largest key end of its rows (row m0 + block_m - 1).  0 when no
 * row of the tile attends any key. */
ATTN_FN int attn_kv_tiles(int m0, int block_m, int L, int SQ, int causal, int block_n) {
  const int end = attn_key_end(m0 + block_m - 1, L, SQ, causal);
  return end > 0 ? attn_ceil_div(end, block_n) : 0;
}
/* The first of those tiles that needs the mask: tile j is whole (every key attended by every
 * row of the tile) when (j+1)*block_n <= the smallest key end of its rows (row m0's); tiles from
 * the returned index on are masked (n: none). */
ATTN_FN int attn_first_masked(int m0, int L, int SQ, int causal, int block_n, int n) {
  const int end = attn_key_end(m0, L, SQ, causal);
  return end > 0 ? attn_min(n, end / block_n) : 0;
}

/* ------------------------------------------------------------------ shared memory */

/* Every TMA box is ROWS rows of 128 bytes (64 elements of the head dim; one swizzle row),
 * placed by rt_ptx.h's ptx_sw128 (the regions below are 1024-byte aligned). */
#define ATTN_ROW_BYTES 128
#define ATTN_CHUNK     64 /* head-dim elements per box */

/* The block's shared memory, from a 1024-byte aligned base:
 *   Q      d/64 boxes of block_m rows                       (loaded once)
 *   K      stages x d/64 boxes of block_n rows               (ring of KV tiles)
 *   V      the same
 *   bars   mbarriers, 8 bytes each: Q full, then per stage K full, K empty, V full, V empty
 * Box j of Q (head-dim columns 64j..64j+63) sits at attn_q_box(j); box j of stage s of K (or V)
 * at attn_kv_box(s, j) from the K (or V) region. */
ATTN_FN int attn_q_box(int j, int block_m) { return j * block_m * ATTN_ROW_BYTES; }
ATTN_FN int attn_kv_box(int s, int j, int block_n, int d) {
  return (s * (d / ATTN_CHUNK) + j) * block_n * ATTN_ROW_BYTES;
}
ATTN_FN int attn_smem_k(int block_m, int d) { return block_m * d * 2; }
ATTN_FN int attn_smem_v(int block_m, int block_n, int d, int stages) {
  return attn_smem_k(block_m, d) + stages * block_n * d * 2;
}
ATTN_FN int attn_smem_bars(int block_m, int block_n, int d, int stages) {
  return attn_smem_v(block_m, block_n, d, stages) + stages * block_n * d * 2;
}
/* mbarrier indices (x8 bytes from the bars region) */
ATTN_FN int attn_bar_q(void) { return 0; }
ATTN_FN int attn_bar_kfull(int s) { return 1 + 4 * s; }
ATTN_FN int attn_bar_kempty(int s) { return 2 + 4 * s; }
ATTN_FN int attn_bar_vfull(int s) { return 3 + 4 * s; }
ATTN_FN int attn_bar_vempty(int s) { return 4 + 4 * s; }
/* the dynamic shared memory a launch needs: the regions, the barriers, and 1024 bytes of slack
 * to align the base (the manifest's SMEM says the same) */
ATTN_FN int attn_smem_bytes(int block_m, int block_n, int d, int stages) {
  return 1024 + attn_smem_bars(block_m, block_n, d, stages) + 8 * (1 + 4 * stages);
}

/* The TMA loads of a tile: box j of a Q tile is tensor coordinates (64j, h, m0, b), innermost
 * first; box j of KV tile n (keys n*block_n ..) is (64j, hkv, n*block_n, b). */
ATTN_FN int attn_box_col(int j) { return j * ATTN_CHUNK; }
/* bytes a full barrier expects for one tile (TMA counts the zero-filled part of a box too) */
ATTN_FN int attn_tile_bytes(int rows, int d) { return rows * d * 2; }

/* Ragged inputs: the rows of a KV tile at keys >= L hold the caller's data past the sequence
 * (TMA zero-fills only past SKV), where the masked P is 0 but 0 * NaN is NaN.  Before the PV
 * product of such a tile the consumers clear those rows of its V stage: rows
 * [attn_v_clear_from, block_n) of tile n (block_n: nothing to clear, every tile but the last).
 * Consumer thread tc (0 .. 128*consumers-1) clears 16-byte chunk tc % 8 of rows
 * from + tc/8 + i*16*consumers in every box j, at byte attn_v_clear_offset of the V region; a
 * whole 128-byte row is cleared, so the swizzle does not matter. */
ATTN_FN int attn_v_clear_from(int n, int block_n, int L) {
  return attn_max(0, attn_min(block_n, L - n * block_n));
}
ATTN_FN int attn_v_clear_offset(int s, int j, int row, int chunk, int block_n, int d) {
  return attn_kv_box(s, j, block_n, d) + row * ATTN_ROW_BYTES + chunk * 16;
}

/* ------------------------------------------------------------------ wgmma descriptors */

/* The wgmma descriptors are rt_ptx.h's ptx_desc, one per operand region, with each wgmma's
 * start added by ptx_desc_add. */
#define ATTN_SBO        1024 /* between 8-row core-matrix groups: 8 rows of 128 bytes */
#define ATTN_LBO_KMAJOR 16   /* unused by a swizzled K-major operand; 16 as CUTLASS writes it */

/* S = Q K^T, slab ks of 16 head-dim elements (ks < d/16): both operands K-major (the head dim
 * contiguous in a swizzled row).  A: consumer warpgroup c's 64 query rows of Q, starting in box
 * ks/4 at row 64c, 32 bytes per slab inside the row.  B: the block_n key rows of a K stage. */
ATTN_FN int attn_q_desc_start(int c, int ks, int block_m) {
  return attn_q_box(ks / 4, block_m) + c * 64 * ATTN_ROW_BYTES + (ks % 4) * 32;
}
ATTN_FN int attn_k_desc_start(int s, int ks, int block_n, int d) {
  return attn_kv_box(s, ks / 4, block_n, d) + (ks % 4) * 32;
}
/* O += P V, slab kk of 16 keys (kk < block_n/16): B = V (keys x head dim) is MN-major (the head
 * dim, wgmma's N, contiguous) and read with imm-trans-b 1: start at key row 16kk of the stage's
 * first box, LBO = the step between 64-column boxes along N, SBO = 1024 between 8-key groups. */
ATTN_FN int attn_v_desc_start(int s, int kk, int block_n, int d) {
  return attn_kv_box(s, 0, block_n, d) + kk * 16 * ATTN_ROW_BYTES;
}
ATTN_FN int attn_v_lbo(int block_n) { return block_n * ATTN_ROW_BYTES; }

/* ------------------------------------------------------------------ fragments */

/* wgmma m64nNk16 f32 accumulator: element i (0 .. N/2-1) of thread t (0..127) of a warpgroup
 * is at row 16*(t/32) + (t%32)/4 + 8*((i/2)%2), column 8*(i/4) + 2*(t%4) + i%2.  A thread holds
 * two rows, attn_acc_row(t, 0) and that + 8; attn_acc_half(i) says which one element i is in. */
ATTN_FN int attn_acc_row(int t, int i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2); }
ATTN_FN int attn_acc_col(int t, int i) { return 8 * (i / 4) + 2 * (t % 4) + i % 2; }
ATTN_FN int attn_acc_half(int i) { return (i / 2) % 2; }
/* P as the register A operand of O += P V: for key slab kk, A element a_i (i = 0..7; register
 * i/2, low half for even i) is S accumulator element attn_p_acc(kk, i): the A fragment of a
 * 64x16 slab has the accumulator's layout restricted to columns 16kk..16kk+15, so the softmax
 * output is packed in place, without shuffles. */
ATTN_FN int attn_p_acc(int kk, int i) { return 8 * kk + i; }

/* ------------------------------------------------------------------ pipeline */

/* KV tile n lives in stage ptx_stage(n, stages); its consumers wait for the K (V) full barrier's
 * ptx_full_parity, the producer refilling the stage with tile n >= stages for the empty
 * barrier's ptx_empty_parity (rt_ptx.h). */

/* ------------------------------------------------------------------ online softmax */

#define ATTN_NEG_INF PTX_NEG_INF
#if defined(__CUDACC__)
/* max.f32 (one FMNMX; a NaN operand yields the other, as fmaxf) */
ATTN_FN float attn_fmax(float a, float b) { return ptx_fmax(a, b); }
#else
ATTN_FN float attn_fmax(float a, float b) { return fmaxf(a, b); }
#endif
#define ATTN_LN2 0.69314718055994530942f

/* One thread's part of the softmax of a score tile s (its n = BLOCK_N/2 accumulator elements of
 * a 64 x BLOCK_N tile, raw q.k scores; its two rows r = 0, 1 are attn_acc_row(t, 0) + 8r).  The
 * scores are only read, never written: they are the accumulators of the next tile's S = Q K^T,
 * and writing them while the PV product is in flight would make ptxas serialise the wgmmas.
 *
 * attn_tile_ends: thread t's element i of the tile of keys n0.. is attended when its column
 * attn_acc_col(t, i) lies below its row's key end (rows row0, the thread's first query row, and
 * row0 + 8), i.e. when 8*(i/4) + i%2 < *e0 (or *e1): the ends less n0 and the thread's column
 * offset 2*(t%4), so the kernel compares a constant per element.  ATTN_NO_MASK for both on tiles
 * before attn_first_masked, which need no mask.  attn_keep: element i is attended. */
#define ATTN_NO_MASK (1 << 30)
ATTN_FN void attn_tile_ends(int t, int row0, int n0, int L, int SQ, int causal, int *e0, int *e1) {
  *e0 = attn_key_end(row0, L, SQ, causal) - n0 - 2 * (t % 4);
  *e1 = attn_key_end(row0 + 8, L, SQ, causal) - n0 - 2 * (t % 4);
}
ATTN_FN int attn_keep(int i, int e0, int e1) {
  return 8 * (i / 4) + i % 2 < (attn_acc_half(i) ? e1 : e0);
}
/* x = the scores, -inf where not attended (with ATTN_NO_MASK a plain copy the compiler folds). */
ATTN_FN void attn_masked_scores(const float *s, int n, int e0, int e1, float *x) {
  ATTN_UNROLL
  for (int i = 0; i < n; i++) x[i] = attn_keep(i, e0, e1) ? s[i] : ATTN_NEG_INF;
}
/* The thread's maximum of each row over its elements; the kernel then takes the maximum over
 * the 4 threads of a quad (t ^ 1, t ^ 2 hold the same rows). */
ATTN_FN void attn_row_max(const float *x, int n, float mx[2]) {
  mx[0] = mx[1] = ATTN_NEG_INF;
  ATTN_UNROLL
  for (int i = 0; i < n; i++) mx[attn_acc_half(i)] = attn_fmax(mx[attn_acc_half(i)], x[i]);
}
/* With the quad's row maxima mx: the new running maxima m (raw scores), the factor each row's
 * old sums and outputs are scaled by, x turned into p = exp2(scale_log2 * (x - m)) in place (0
 * where x is -inf), and the thread's partial row sums l (scaled, plus its p; the quad's partial
 * sums are added once, at the end, since the 4 threads scale theirs alike).  A row whose maximum
 * is still -inf (no key attended yet) uses 0 as its maximum, so its p and factor are 0, never
 * NaN. */
ATTN_FN void attn_softmax_step(float *x, int n, const float mx[2], float m[2], float l[2],
                               float factor[2], float scale_log2) {
  float base[2];
  ATTN_UNROLL
  for (int r = 0; r < 2; r++) {
    const float mnew = attn_fmax(m[r], mx[r]);
    const float muse = mnew == ATTN_NEG_INF ? 0.f : mnew;
    factor[r] = ptx_exp2((m[r] - muse) * scale_log2);
    m[r] = mnew;
    base[r] = muse * scale_log2;
    l[r] *= factor[r];
  }
  ATTN_UNROLL
  for (int i = 0; i < n; i++) {
    const int r = attn_acc_half(i);
    x[i] = ptx_exp2(x[i] * scale_log2 - base[r]);
    l[r] += x[i];
  }
}
/* The output accumulators (n = HEAD_DIM/2, the accumulator layout) times their row's factor. */
ATTN_FN void attn_rescale(float *o, int n, const float factor[2]) {
  ATTN_UNROLL
  for (int i = 0; i < n; i++) o[i] *= factor[attn_acc_half(i)];
}
/* The end: with the quad's full row sums l, O = o / l, 0 for a row that attended no key. */
ATTN_FN void attn_normalise(float *o, int n, const float l[2]) {
  const float inv0 = l[0] > 0.f ? 1.f / l[0] : 0.f, inv1 = l[1] > 0.f ? 1.f / l[1] : 0.f;
  ATTN_UNROLL
  for (int i = 0; i < n; i++) o[i] *= attn_acc_half(i) ? inv1 : inv0;
}
/* The row's natural-log log-sum-exp of the scaled scores: ln(sum_j exp(scale*s_j)) =
 * ln 2 * (m*scale_log2 + log2 l); -inf for a row that attended no key. */
ATTN_FN float attn_lse(float m, float l, float scale_log2) {
  return l > 0.f ? (m * scale_log2 + ptx_log2(l)) * ATTN_LN2 : ATTN_NEG_INF;
}

/* ------------------------------------------------------------------ output */

/* The query rows of thread t of consumer warpgroup c in the tile at row m0: attn_thread_row and
 * that + 8 (accumulator element i is in row attn_o_row); the LSE of the thread's row r
 * (attn_lse_row) is written by the first thread of each quad (attn_lse_writer), which holds the
 * quad's full row sums. */
ATTN_FN int attn_thread_row(int m0, int c, int t) { return m0 + c * 64 + attn_acc_row(t, 0); }
ATTN_FN int attn_o_row(int row0, int i) { return row0 + 8 * attn_acc_half(i); }
ATTN_FN int attn_lse_row(int row0, int r) { return row0 + 8 * r; }
ATTN_FN int attn_lse_writer(int t) { return t % 4 == 0; }

/* Element offsets (64-bit) of O[b, row, h, col] and LSE[b, h, row]. */
ATTN_FN long long attn_o_offset(int b, int row, int h, int col, int SQ, int HQ, int D) {
  return (((long long)b * SQ + row) * HQ + h) * D + col;
}
ATTN_FN long long attn_lse_offset(int b, int h, int row, int SQ, int HQ) {
  return ((long long)b * HQ + h) * SQ + row;
}

#endif
