/* attn_index.h — index, fragment-layout and online-softmax arithmetic of the prefill attention
 * template (attn_mma.cu), shared with its host tests.
 *
 * Valid C (tests/unit/test_attn_emulate.c includes it) and CUDA C++ (attn_mma.cu includes it
 * through the template folder's include path).  The kernel computes its block placement, KV tile
 * range, mask, cp.async chunk placement, ldmatrix lane addresses, fragment positions, the
 * S-accumulator -> P-fragment reuse, the softmax update and the output store coordinates only
 * through these functions, so the host emulation that calls them checks the very arithmetic the
 * device runs.  The family's reference (attn_ref.h) shares none of it on purpose.
 *
 * Fragment layouts follow the PTX ISA (9.7.14.5.8 mma.m16n8k16 with floating point type, 9.7.9.29
 * ldmatrix): groupID g = lane / 4, threadID_in_group t = lane % 4.  Sizes: every index is an int
 * below 2^30 (rows, keys, heads, head dims); global element offsets are long long.
 */
#ifndef ROOFTUNE_ATTN_INDEX_H
#define ROOFTUNE_ATTN_INDEX_H

#include "../common/rt_ptx.h" /* exp2 and log2 as the device computes them */

#if defined(__CUDACC__)
#define ATTN_FN static __host__ __device__ __forceinline__
#else
#include <math.h>
#define ATTN_FN static inline
#endif

ATTN_FN int attn_ceil_div(int a, int b) { return (a + b - 1) / b; }

/* --- blocks, heads, the KV tiles a query tile visits --- */

/* Block (bx, by, bz) of the grid (ceil(SQ / BLOCK_M), HQ, B) computes query tile *tile of head
 * *h of sequence *b.  Under the causal mask later query tiles attend more keys, so the tiles are
 * taken last first: the heaviest blocks of a head start first and the light ones fill the tail. */
ATTN_FN void attn_block(int bx, int by, int bz, int tiles_m, int causal, int *tile, int *h,
                        int *b) {
  *tile = causal ? tiles_m - 1 - bx : bx;
  *h = by;
  *b = bz;
}

/* The KV head query head h reads (grouped-query attention: HQ / HKV query heads per KV head). */
ATTN_FN int attn_kv_head(int h, int HQ, int HKV) { return h / (HQ / HKV); }

/* Keys 0 .. n-1 attended by query row i of a sequence with kv_len keys (attn_abi.h: the causal
 * mask aligned to the bottom right); rows past SQ (a tile's padding rows) follow the same rule. */
ATTN_FN int attn_row_keys(int i, int SQ, int kv_len, int causal) {
  if (!causal) return kv_len;
  const int n = i + kv_len - SQ + 1;
  return n < 0 ? 0 : n > kv_len ? kv_len : n;
}

/* The mask predicate: query row i attends key j. */
ATTN_FN int attn_visible(int i, int j, int SQ, int kv_len, int causal) {
  return j < kv_len && (!causal || j <= i + kv_len - SQ);
}

/* KV tiles (block_n keys each) of the query tile whose first row is m0: tiles [0, *n_end) are
 * visited (past them no real row of the tile attends a key) and tiles [*n_full, *n_end) need the
 * mask (before them every row of the tile, padding rows included, attends every key).  A tile
 * whose rows attend no key has *n_end == 0. */
ATTN_FN void attn_kv_tiles(int m0, int block_m, int block_n, int SQ, int kv_len, int causal,
                           int *n_full, int *n_end) {
  const int last = (m0 + block_m < SQ ? m0 + block_m : SQ) - 1;
  *n_end = attn_ceil_div(attn_row_keys(last, SQ, kv_len, causal), block_n);
  *n_full = attn_row_keys(m0, SQ, kv_len, causal) / block_n;
}

/* --- global element offsets (attn_abi.h layouts) --- */

/* Q and O [B, SQ, HQ, D]: element 0 of row i of head h of sequence b; rows are HQ*D apart. */
ATTN_FN long long attn_q_offset(int b, int i, int h, int SQ, int HQ, int D) {
  return (((long long)b * SQ + i) * HQ + h) * D;
}
/* K and V contiguous [B, SKV, HKV, D]: element 0 of key j of KV head hk; rows are HKV*D apart. */
ATTN_FN long long attn_kv_offset(int b, int j, int hk, int SKV, int HKV, int D) {
  return (((long long)b * SKV + j) * HKV + hk) * D;
}
/* LSE [B, HQ, SQ]. */
ATTN_FN long long attn_lse_offset(int b, int h, int i, int HQ, int SQ) {
  return ((long long)b * HQ + h) * SQ + i;
}

/* --- cp.async loads of the Q tile and of the K and V tiles --- */

/* Shared memory pitch of a Q, K or V tile row, in elements: the head dimension plus one 16-byte
 * chunk, so the 8 rows an ldmatrix phase reads (and the 8 rows of a staged output fragment) fall
 * into distinct banks ((2*D + 16) bytes is 16 mod 128). */
ATTN_FN int attn_smem_ld(int head_dim) { return head_dim + 8; }

/* A tile is `rows` rows of cpr = D/8 16-byte chunks, copied by `threads` threads: thread t copies
 * chunk column attn_load_chunk(t, cpr) of rows attn_load_row(t, cpr, threads, i) for
 * i < attn_load_iters(rows, cpr, threads).  With threads a multiple of cpr and rows*cpr a multiple
 * of threads (the kernel asserts both) every chunk is copied exactly once. */
ATTN_FN int attn_load_iters(int rows, int cpr, int threads) { return rows * cpr / threads; }
ATTN_FN int attn_load_row(int t, int cpr, int threads, int i) {
  return t / cpr + i * (threads / cpr);
}
ATTN_FN int attn_load_chunk(int t, int cpr) { return t % cpr; }

/* One thread's plan for a tile whose first row is r0 of a matrix of `limit` rows (Q: SQ; K, V:
 * kv_len), rows `pitch` elements apart in global memory, into a stage of pitch ld: src, the
 * element offset of its first chunk from row 0 of the matrix; step, between its rows; smem, its
 * first chunk's element offset in the stage; left, rows from its first row to the end of the
 * matrix.  Its chunk i is inside the matrix when i * (threads / cpr) < left, else zero-filled.
 * The next tile of K or V is the same plan with src + block_n*pitch and left - block_n. */
typedef struct attn_plan {
  long long src;  /* first chunk, elements from row 0 */
  long long step; /* between the thread's rows, elements */
  int smem;       /* first chunk in the stage, elements */
  int left;       /* rows of the matrix from the thread's first row on */
} attn_plan;
ATTN_FN attn_plan attn_plan_rows(int t, int threads, int cpr, int r0, int limit, long long pitch,
                                 int ld) {
  const int r = attn_load_row(t, cpr, threads, 0), c = attn_load_chunk(t, cpr) * 8;
  attn_plan p;
  p.src = (long long)(r0 + r) * pitch + c;
  p.step = (long long)(threads / cpr) * pitch;
  p.smem = r * ld + c;
  p.left = limit - r0 - r;
  return p;
}
ATTN_FN int attn_plan_in(attn_plan p, int i, int threads, int cpr) {
  return i * (threads / cpr) < p.left;
}
ATTN_FN void attn_plan_next(attn_plan *p, int block_n, long long pitch) {
  p->src += (long long)block_n * pitch;
  p->left -= block_n;
}

/* --- ldmatrix lane addresses (bytes from a tile's start, pitch ld_bytes) --- */

/* Q, the A operand of S = Q K^T (.x4): the warp's 16 rows from row0, head-dim step kd (16
 * elements).  Matrices (rows 0-7, chunk 0), (rows 8-15, chunk 0), (rows 0-7, chunk 1),
 * (rows 8-15, chunk 1) are a0..a3 of m16n8k16. */
ATTN_FN int attn_ldsm_q_offset(int row0, int kd, int lane, int ld_bytes) {
  return (row0 + lane % 16) * ld_bytes + (2 * kd + lane / 16) * 16;
}
/* K, the B operand of S = Q K^T stored key x d (d contiguous: "col" B), two n8 tiles of keys from
 * n0 at step kd (.x4): matrices (keys 0-7, chunk 0), (keys 0-7, chunk 1), (keys 8-15, chunk 0),
 * (keys 8-15, chunk 1): registers 0, 1 are b0, b1 of key tile n0/8, registers 2, 3 of the next. */
ATTN_FN int attn_ldsm_k_offset(int n0, int kd, int lane, int ld_bytes) {
  return (n0 + lane % 8 + 8 * (lane / 16)) * ld_bytes + (2 * kd + (lane / 8) % 2) * 16;
}
/* V, the B operand of O += P V stored key x d (the k dimension is keys, rows of the tile), read
 * with .x4.trans: keys k0..k0+15, d columns d0..d0+15; matrices (keys 0-7, d 0-7), (keys 8-15,
 * d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 8-15): registers 0, 1 are b0, b1 of d tile d0/8,
 * registers 2, 3 of the next.  16-bit elements. */
ATTN_FN int attn_ldsm_v_offset(int k0, int d0, int lane, int ld_bytes) {
  return (k0 + lane % 16) * ld_bytes + (d0 + 8 * (lane / 16)) * 2;
}

/* --- mma.m16n8k16 fragments (positions inside the 16x16 A, 16x8 B and 16x8 C tiles) --- */

/* A: element e (0..7; register e/2, half e%2, the lower half first) of `lane`. */
ATTN_FN int attn_mma_a_row(int lane, int e) { return lane / 4 + 8 * ((e / 2) % 2); }
ATTN_FN int attn_mma_a_col(int lane, int e) { return 2 * (lane % 4) + e % 2 + 8 * (e / 4); }
/* B: element e (0..3) at k row attn_mma_b_k, column n = groupID. */
ATTN_FN int attn_mma_b_k(int lane, int e) { return 2 * (lane % 4) + e % 2 + 8 * (e / 2); }
ATTN_FN int attn_mma_b_n(int lane) { return lane / 4; }
/* C/D (f32): element e (0..3) at row g + 8*(e/2), column 2t + e%2. */
ATTN_FN int attn_mma_c_row(int lane, int e) { return lane / 4 + 8 * (e / 2); }
ATTN_FN int attn_mma_c_col(int lane, int e) { return 2 * (lane % 4) + e % 2; }

/* The FA2 register reuse: register r (0..3) of the P A-fragment of key step kk (keys 16kk ..
 * 16kk+15 of the tile) packs S accumulator elements (tile attn_p_tile(kk, r), elements
 * attn_p_elem(r, 0) in the lower half and attn_p_elem(r, 1) in the upper) of the same lane: the
 * m16n8 accumulator layout of two neighbouring key tiles is the m16n8k16 A layout, pairwise. */
ATTN_FN int attn_p_tile(int kk, int r) { return 2 * kk + r / 2; }
ATTN_FN int attn_p_elem(int r, int half) { return 2 * (r % 2) + half; }

/* --- online softmax (one query row; a lane holds two: g and g+8) --- */

ATTN_FN float attn_neg_inf(void) { return PTX_NEG_INF; }

/* The running max m is kept in raw score units (s = q.k, before the scale), -inf before any key
 * was seen; l is the thread's part of the row sum (the four lanes of a quad add theirs at the
 * end).  A tile: m_new = attn_softmax_max(m, the row's max over the tile, masked scores -inf);
 * O and l are multiplied by attn_softmax_alpha(m, m_new); each score becomes
 * p = attn_softmax_p(s, attn_softmax_base(m_new)), p added to l and fed to P V. */
ATTN_FN float attn_softmax_max(float m, float tile_max) { return m > tile_max ? m : tile_max; }
/* exp2 subtracts this: the scaled max, 0 while the row has seen no key (so -inf - -inf never
 * happens: a masked score gives exp2(-inf) = 0). */
ATTN_FN float attn_softmax_base(float m, float scale_log2) {
  return m == attn_neg_inf() ? 0.f : m * scale_log2;
}
ATTN_FN float attn_softmax_p(float s, float base, float scale_log2) {
  return ptx_exp2(fmaf(s, scale_log2, -base));
}
/* Rescale of what was accumulated under m: 0 when nothing was (m == -inf; O and l are 0). */
ATTN_FN float attn_softmax_alpha(float m, float m_new, float scale_log2) {
  return m == attn_neg_inf() ? 0.f : ptx_exp2((m - m_new) * scale_log2);
}
/* Final normalisation with the row's whole sum l: O *= attn_softmax_inv(l), and the natural log
 * LSE = scale*m + ln(l); a row that attended no key (l == 0) gets O = 0 and LSE = -inf. */
ATTN_FN float attn_softmax_inv(float l) { return l > 0.f ? 1.f / l : 0.f; }
ATTN_FN float attn_softmax_lse(float m, float l, float scale_log2) {
  return l > 0.f ? (m * scale_log2 + ptx_log2(l)) * 0.693147180559945309f : attn_neg_inf();
}

/* --- one tile of the thread's S and O registers (attn_mma: s[nt][4], o[dt][4], the m16n8
 * accumulator layout; the thread's two rows r = 0 (groupID) and 1 (groupID + 8) hold elements
 * 2r and 2r+1 of each n8 tile).  The kernel's body only calls these; the host emulation runs
 * them per lane, with the quad's shuffles in between. --- */

/* The mask of a tile that needs it: element e of key tile j becomes -inf unless query
 * row0 + attn_mma_c_row(lane, e) attends key key0 + 8j + attn_mma_c_col(lane, e). */
ATTN_FN void attn_mma_mask(float (*s)[4], int nt, int lane, int row0, int key0, int SQ, int kv_len,
                           int causal) {
  PTX_UNROLL
  for (int j = 0; j < nt; j++) PTX_UNROLL
  for (int e = 0; e < 4; e++)
    if (!attn_visible(row0 + attn_mma_c_row(lane, e), key0 + 8 * j + attn_mma_c_col(lane, e), SQ,
                      kv_len, causal))
      s[j][e] = attn_neg_inf();
}
/* The thread's maximum of row r over the tile (masked scores are -inf). */
ATTN_FN float attn_mma_row_max(const float (*s)[4], int nt, int r) {
  float mx = attn_neg_inf();
  PTX_UNROLL
  for (int j = 0; j < nt; j++)
    mx = attn_softmax_max(mx, attn_softmax_max(s[j][2 * r], s[j][2 * r + 1]));
  return mx;
}
/* Row r's online-softmax step, mx its maximum over the quad: the running max *m moves to the
 * new maximum, *l and the row's O accumulators are rescaled from the old one, and the row's
 * scores become p (in place), added to *l. */
ATTN_FN void attn_mma_softmax_row(float (*s)[4], int nt, float (*o)[4], int dt, int r, float mx,
                                  float *m, float *l, float scale_log2) {
  const float m_new = attn_softmax_max(*m, mx);
  const float alpha = attn_softmax_alpha(*m, m_new, scale_log2),
              base = attn_softmax_base(m_new, scale_log2);
  *m = m_new;
  *l *= alpha;
  PTX_UNROLL
  for (int d = 0; d < dt; d++) {
    o[d][2 * r] *= alpha;
    o[d][2 * r + 1] *= alpha;
  }
  PTX_UNROLL
  for (int j = 0; j < nt; j++) PTX_UNROLL
  for (int x = 0; x < 2; x++) {
    const float p = attn_softmax_p(s[j][2 * r + x], base, scale_log2);
    s[j][2 * r + x] = p;
    *l += p;
  }
}

/* --- output --- */

/* Accumulator element e of an O tile belongs to the thread's row attn_mma_c_half(e): it is
 * normalised by that row's 1/l. */
ATTN_FN int attn_mma_c_half(int e) { return e / 2; }
/* The query row (of the sequence) whose LSE the thread's row r holds: tile row m0, warp rows
 * row0 .., lane row attn_mma_c_row(lane, 2r). */
ATTN_FN int attn_mma_lse_row(int m0, int row0, int lane, int r) {
  return m0 + row0 + attn_mma_c_row(lane, 2 * r);
}

/* The warp stages its 16 x D output tile in its own 16 rows of the Q tile (row0 = 16*warp; only
 * this warp ever read them): accumulator element e of O tile dt (d columns 8dt..8dt+7) at element
 * attn_o_stage_offset(...) of the Q buffer, stored as the pair (e, e+1) for even e. */
ATTN_FN int attn_o_stage_offset(int row0, int dt, int lane, int e, int ld) {
  return (row0 + attn_mma_c_row(lane, e)) * ld + dt * 8 + attn_mma_c_col(lane, e);
}
/* Then each lane stores 16-byte chunks of those rows: chunk i (i < 16*cpr/32) of `lane` is row
 * attn_store_row of the warp's 16, chunk column attn_store_chunk; rows past SQ are not stored. */
ATTN_FN int attn_store_iters(int cpr) { return 16 * cpr / 32; }
ATTN_FN int attn_store_row(int lane, int i, int cpr) { return (lane + 32 * i) / cpr; }
ATTN_FN int attn_store_chunk(int lane, int i, int cpr) { return (lane + 32 * i) % cpr; }

#endif
