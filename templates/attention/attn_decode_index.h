/* attn_decode_index.h — the index arithmetic and merge rules of attn_decode (split-KV flash-
 * decoding), shared by the template and its host tests.
 *
 * Valid C (tests/unit/test_attn_decode_math.c and test_attn_decode_emulate.c include it) and
 * CUDA C++ (attn_decode.cu includes it through the template folder's include path).  The kernel
 * computes its split ranges, K/V token addresses (contiguous or paged), causal bounds, load lane
 * mapping, shared-memory swizzle, ldmatrix lane addresses, accumulator coordinates, scratch
 * offsets and merge weights only through these functions, so the host tests check the very
 * arithmetic the device runs.
 *
 * Vocabulary.  A block (split s, KV head kvh, sequence b) owns the `rows` = group * SQ
 * (query head, query) pairs of its KV head: row r is query i = r / group of head
 * kvh * group + r % group (for a fixed query the group's heads are adjacent in Q and O).  Rows
 * are padded to Q_ROWS, a multiple of 16 (one mma m16 tile per row warp).  Scores live in the
 * log2 domain: x = scale_log2 * q.k, so exp(scale * q.k) = exp2(x).  A row's state is the
 * running maximum m (-INFINITY while it has seen no key), the sum l of exp2(x - m) and the
 * unnormalised output o = sum exp2(x - m) v.  Two states merge exactly: M = max(m1, m2),
 * weights w_i = exp2(m_i - M) (0 for an empty state, never NaN), l = w1 l1 + w2 l2,
 * o = w1 o1 + w2 o2; the final output is o / l (0 when l == 0) and LSE = ln 2 * (M + log2 l)
 * (-INFINITY when l == 0).
 *
 * mma.m16n8k16 fragment layouts follow the PTX ISA (9.7.14.5.8): groupID = lane / 4,
 * threadID_in_group = lane % 4; ldmatrix (9.7.9.29): lanes 8j..8j+7 address matrix j.
 */
#ifndef ROOFTUNE_ATTN_DECODE_INDEX_H
#define ROOFTUNE_ATTN_DECODE_INDEX_H

#include "../common/rt_ptx.h" /* exp2 and log2 as the device computes them (the MUFU approximations) */

#if defined(__CUDACC__)
#define ATTN_FN static __host__ __device__ __forceinline__
#else
#include <math.h>
#define ATTN_FN static inline
#endif
#define ATTN_NEG_INF PTX_NEG_INF

#define ATTN_LN2 0.69314718055994530942f

ATTN_FN int attn_min(int a, int b) { return a < b ? a : b; }
ATTN_FN int attn_max(int a, int b) { return a > b ? a : b; }
ATTN_FN float attn_fmax(float a, float b) { return a > b ? a : b; } /* -inf safe, no NaN in */

/* ---- sequences and splits ---- */

/* Keys of sequence b: kv_lens[b], or SKV when kv_lens is NULL. */
ATTN_FN int attn_kv_len(const int *kv_lens, int b, int SKV) { return kv_lens ? kv_lens[b] : SKV; }

/* Split s of `splits` over a sequence of kv_len keys, cut in block_n-token tiles: tiles
 * [T*s/splits, T*(s+1)/splits) of the T = ceil(kv_len / block_n) tiles, as tokens
 * [*begin, *end) clipped to kv_len.  Contiguous, balanced to within one tile, covering
 * [0, kv_len) exactly once; a split is empty (begin == end) when T < splits.  Every split
 * starts on a tile boundary, so only the sequence's last tile is partial. */
ATTN_FN void attn_split_range(int kv_len, int block_n, int splits, int s, int *begin, int *end) {
  const long long tiles = (kv_len + (long long)block_n - 1) / block_n;
  const long long tb = tiles * s / splits, te = tiles * (s + 1) / splits;
  *begin = (int)(tb * block_n < kv_len ? tb * block_n : kv_len);
  *end = (int)(te * block_n < kv_len ? te * block_n : kv_len);
}

/* Tiles of a split's range [begin, end). */
ATTN_FN int attn_tiles(int begin, int end, int block_n) {
  return (end - begin + block_n - 1) / block_n;
}

/* ---- rows, queries and the mask ---- */

ATTN_FN int attn_row_query(int r, int group) { return r / group; }
ATTN_FN int attn_row_head(int r, int group, int kvh) { return kvh * group + r % group; }

/* Keys [0, bound) that query i (of SQ) of a sequence with kv_len keys attends: all kv_len, or
 * with the bottom-right causal mask keys j <= i + kv_len - SQ, clipped to [0, kv_len]. */
ATTN_FN int attn_key_bound(int kv_len, int SQ, int i, int causal) {
  if (!causal) return kv_len;
  return attn_max(0, attn_min(kv_len, kv_len - SQ + i + 1));
}

/* Element offsets (64-bit) of row r's Q/O vector and of its LSE entry. */
ATTN_FN long long attn_q_offset(int b, int i, int h, int SQ, int HQ, int D) {
  return (((long long)b * SQ + i) * HQ + h) * D;
}
ATTN_FN long long attn_lse_offset(int b, int h, int i, int HQ, int SQ) {
  return ((long long)b * HQ + h) * SQ + i;
}

/* ---- K and V: token -> element offset ---- */

/* Paged (page > 0): token t of sequence b lives in page block_table[attn_table_index(...)],
 * row t % page.  The kernel reads that entry itself (ahead of time) and hands it to
 * attn_kv_offset. */
ATTN_FN long long attn_table_index(int b, int t, int page, int max_pages) {
  return (long long)b * max_pages + t / page;
}
/* Element offset of token t's D-vector of KV head kvh in K (or V): contiguous (page == 0)
 * [B, SKV, HKV, D]; paged [num_pages, page, HKV, D] with the token in page `page_id`. */
ATTN_FN long long attn_kv_offset(int page, int page_id, int b, int t, int SKV, int HKV, int kvh,
                                 int D) {
  const long long row = page ? (long long)page_id * page + t % page : (long long)b * SKV + t;
  return (row * HKV + kvh) * D;
}

/* ---- tile loads: lane mapping and shared-memory placement ---- */

/* A tile is rows of D elements (row_bytes = 2*D bytes), moved in loads of vec_bytes (16 or 8)
 * bytes: cpr = row_bytes / vec_bytes loads per row.  Load i (0 <= i < rows*cpr/threads) of
 * thread t is load e = t + i*threads of the tile, row e / cpr, piece e % cpr: consecutive
 * threads read consecutive pieces of a row (coalesced), and with rows*cpr a multiple of
 * threads every piece is loaded exactly once. */
ATTN_FN int attn_load_row(int t, int i, int threads, int cpr) { return (t + i * threads) / cpr; }
ATTN_FN int attn_load_piece(int t, int i, int threads, int cpr) { return (t + i * threads) % cpr; }

/* Shared-memory tiles (Q, K and V stages) are rows of row_bytes (128, 256 or 512: at least
 * eight 16-byte chunks) whose 16-byte chunk c of row `row` is stored at chunk c ^ (row % 8):
 * the eight rows an ldmatrix matrix reads (same chunk, consecutive rows) fall in eight
 * different bank groups, and so do the eight rows a wave of cp.async writes.  Byte offset of
 * byte `byte` of row `row`: */
ATTN_FN int attn_swz(int row, int byte, int row_bytes) {
  /* == row*row_bytes + (((byte/16) ^ (row%8)) * 16 | byte%16), written so that the part that
   * depends on the lane is (byte/16 % 8) ^ (row % 8): the same for k steps 4 apart, which the
   * compiler then computes once rather than once per step */
  return row * row_bytes + (byte & ~127) + ((((byte >> 4) & 7) ^ (row & 7)) << 4) + (byte & 15);
}

/* ldmatrix.x4 lane addresses (row, byte) in the tiles, k step ks (16 elements of D or 16
 * tokens), as swizzled offsets:
 * Q (mma A, rows x D, row-major): matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7,
 *   k 8-15), (rows 8-15, k 8-15) = a0..a3, the m16 tile at row0.
 * K (mma B of S = Q K^T, stored token x D = "N x K"): matrices (tokens 0-7, k 0-7),
 *   (tokens 0-7, k 8-15), (tokens 8-15, k 0-7), (tokens 8-15, k 8-15): registers 0,1 are the b
 *   fragment of the n8 tile at tok0, 2,3 of the one at tok0 + 8.
 * V (mma B of O = P V, stored token x D = "K x N", .trans): lane gives token tok0 + lane % 16
 *   and the 8-element chunk d0/8 + lane/16: matrices (tokens 0-7, d 0-7), (tokens 8-15,
 *   d 0-7), (tokens 0-7, d 8-15), (tokens 8-15, d 8-15): registers 0,1 the b fragment of the n8
 *   tile at d0, 2,3 of the one at d0 + 8. */
ATTN_FN int attn_ldsm_q(int row0, int ks, int lane, int row_bytes) {
  return attn_swz(row0 + lane % 16, (2 * ks + lane / 16) * 16, row_bytes);
}
ATTN_FN int attn_ldsm_k(int tok0, int ks, int lane, int row_bytes) {
  return attn_swz(tok0 + lane % 8 + 8 * (lane / 16), (2 * ks + (lane / 8) % 2) * 16, row_bytes);
}
ATTN_FN int attn_ldsm_v(int tok0, int d0, int lane, int row_bytes) {
  return attn_swz(tok0 + lane % 16, (d0 / 8 + lane / 16) * 16, row_bytes);
}

/* mma.m16n8 f32 accumulator element i (0..3) of `lane`: row groupID + 8*(i/2), column
 * 2*threadID_in_group + i%2 of the 16x8 tile.  For S the column is a token of the warp's
 * slice, for O a column of D. */
ATTN_FN int attn_acc_row(int lane, int i) { return lane / 4 + 8 * (i / 2); }
ATTN_FN int attn_acc_col(int lane, int i) { return 2 * (lane % 4) + i % 2; }

/* P as the A operand of O = P V for token k step kk: register j (0..3) of the a fragment packs
 * S accumulator elements 2*(j%2), 2*(j%2)+1 of S n8 tile attn_p_tile(kk, j) (low half the
 * first): a0 = (row g, tokens 2tig..) of tile 2kk, a1 = (row g+8) of tile 2kk, a2 and a3 the
 * same of tile 2kk+1, which is the accumulator layout of the two S tiles. */
ATTN_FN int attn_p_tile(int kk, int j) { return 2 * kk + j / 2; }
ATTN_FN int attn_p_elem(int j) { return 2 * (j % 2); }

/* ---- the block's warps ---- */

/* Warps are wm (row tile, Q_ROWS/16 of them) fastest, then wn (token slice): warp w owns rows
 * [16*(w % wms), +16) and tokens [(w / wms) * nw, +nw) of every tile (nw = BLOCK_N / warps
 * along tokens). */
ATTN_FN int attn_warp_m(int warp, int wms) { return warp % wms; }
ATTN_FN int attn_warp_n(int warp, int wms) { return warp / wms; }

/* Shared scratch of the block merge (after the tile loop, over the stage buffers): each token
 * slice wn's unnormalised o for row r, column d, in floats at attn_oscr(...) (rows padded by 4
 * floats against bank conflicts), its m and l at attn_mlscr(...) and attn_mlscr(...) + nrows*wns. */
ATTN_FN int attn_oscr(int wn, int r, int d, int q_rows, int D) {
  return (wn * q_rows + r) * (D + 4) + d;
}
ATTN_FN int attn_mlscr(int wn, int r, int q_rows) { return wn * q_rows + r; }

/* ---- split-KV partials in `work` ---- */

/* The partial of row r (of rows = group*SQ) of split s of group bg = b*HKV + kvh: its o (D
 * floats) at attn_work_o, its (m, l) at attn_work_ml and + 1.  total_rows = B*HQ*SQ (= B*HKV*
 * rows); everything lies within total_rows * splits * (D + 2) floats (attn_abi.h's bound). */
ATTN_FN long long attn_work_o(int bg, int s, int r, int splits, int rows, int D) {
  return (((long long)bg * splits + s) * rows + r) * D;
}
ATTN_FN long long attn_work_ml(int bg, int s, int r, int splits, int rows, int D,
                               long long total_rows) {
  return total_rows * splits * D + (((long long)bg * splits + s) * rows + r) * 2;
}

/* ---- merging ---- */

/* The exponent base of a state with maximum m: m, or 0 while m is -INFINITY, so that
 * exp2(x - base) is 0 for a masked score (x == -INFINITY) and never NaN. */
ATTN_FN float attn_exp_base(float m) { return m == ATTN_NEG_INF ? 0.f : m; }
/* Weight of a state with maximum m inside a merge whose maximum is M (M >= m): exp2(m - M), 0
 * when m is -INFINITY (an empty split, a masked row). */
ATTN_FN float attn_merge_weight(float m, float M) { return ptx_exp2(m - attn_exp_base(M)); }
/* The final output's factor 1/l (0 for a row with no key) and its natural-log LSE. */
ATTN_FN float attn_out_scale(float l) { return l > 0.f ? 1.f / l : 0.f; }
ATTN_FN float attn_lse(float M, float l) {
  return l > 0.f ? (M + ptx_log2(l)) * ATTN_LN2 : ATTN_NEG_INF;
}

/* ---- one thread's registers (the kernel's body only calls these; the host emulation runs
 * them per lane, with the quad's shuffles in between) ---- */

/* The two rows h = 0, 1 of lane `lane` of row warp wm (groupID and groupID + 8 of its m16 tile),
 * and the keys such a row attends: [0, attn_row_bound), kv_len for padding rows past `rows`. */
ATTN_FN int attn_thread_row(int wm, int lane, int h) { return 16 * wm + attn_acc_row(lane, 2 * h); }
ATTN_FN int attn_row_bound(int r, int rows, int kv_len, int SQ, int group, int causal) {
  return r < rows ? attn_key_bound(kv_len, SQ, attn_row_query(r, group), causal) : kv_len;
}
/* A score tile s[nj][4] (the warp's tokens from key0, n8 tiles of the m16n8 accumulator) into
 * the log2 domain, -inf where the token is at or past its row's bound (when the tile needs the
 * mask), and the thread's maximum of each row into mx. */
ATTN_FN void attn_decode_scores(float (*s)[4], int nj, float scale_log2, int need_mask, int key0,
                                int lane, const int bnd[2], float mx[2]) {
  mx[0] = mx[1] = ATTN_NEG_INF;
  PTX_UNROLL
  for (int j = 0; j < nj; j++) PTX_UNROLL
  for (int i = 0; i < 4; i++) {
    float x = s[j][i] * scale_log2;
    if (need_mask && key0 + 8 * j + attn_acc_col(lane, i) >= bnd[i / 2]) x = ATTN_NEG_INF;
    s[j][i] = x;
    mx[i / 2] = attn_fmax(mx[i / 2], x);
  }
}
/* With the quad's row maxima mx: the running maxima m move on, the row sums l and the O
 * accumulators o[nd][4] are rescaled from the old ones, the scores become p (in place) and are
 * added to l. */
ATTN_FN void attn_decode_softmax(float (*s)[4], int nj, float (*o)[4], int nd, float m[2],
                                 float l[2], const float mx[2]) {
  float alpha[2], eb[2], rs[2] = {0.f, 0.f};
  PTX_UNROLL
  for (int h = 0; h < 2; h++) {
    const float mn = attn_fmax(m[h], mx[h]);
    eb[h] = attn_exp_base(mn);
    alpha[h] = ptx_exp2(m[h] - eb[h]);
    m[h] = mn;
  }
  PTX_UNROLL
  for (int j = 0; j < nj; j++) PTX_UNROLL
  for (int i = 0; i < 4; i++) {
    const float p = ptx_exp2(s[j][i] - eb[i / 2]);
    s[j][i] = p;
    rs[i / 2] += p;
  }
  PTX_UNROLL
  for (int h = 0; h < 2; h++) l[h] = l[h] * alpha[h] + rs[h];
  PTX_UNROLL
  for (int d = 0; d < nd; d++) PTX_UNROLL
  for (int i = 0; i < 4; i++) o[d][i] *= alpha[i / 2];
}

/* ---- the merges ---- */

/* Row r's token slices (m at attn_mlscr, l wns*q_rows further, in shared scratch): the row's
 * maximum *M and sum *L, each slice's weight written over its m. */
ATTN_FN void attn_merge_slices(float *mls, int r, int q_rows, int wns, float *M, float *L) {
  float mx = ATTN_NEG_INF, sum = 0.f;
  PTX_UNROLL
  for (int w = 0; w < wns; w++) mx = attn_fmax(mx, mls[attn_mlscr(w, r, q_rows)]);
  PTX_UNROLL
  for (int w = 0; w < wns; w++) {
    const float wt = attn_merge_weight(mls[attn_mlscr(w, r, q_rows)], mx);
    sum += wt * mls[wns * q_rows + attn_mlscr(w, r, q_rows)];
    mls[attn_mlscr(w, r, q_rows)] = wt;
  }
  *M = mx;
  *L = sum;
}
/* The weight of split s for row r in the merging block's shared scratch. */
ATTN_FN int attn_wsm(int s, int r, int q_rows) { return s * q_rows + r; }
/* Row r's split partials in `work` (group bg, sequence length kv_len): the maximum *M over the
 * non-empty splits (empty ones wrote nothing), the sum *L, and each split's weight into
 * wsm[s*q_rows + r] (0 for an empty split, or a row none of its keys reached).  The partials are
 * read from L2 (other blocks wrote them). */
#if defined(__CUDACC__)
#define ATTN_LD_PARTIAL(p) ptx_ld_cg(p)
#define ATTN_UNROLL4 \
  _Pragma("unroll 4") /* a few partials in flight; fully unrolled, SPLITS 16 spilled on sm_80 */
#else
#define ATTN_LD_PARTIAL(p) (*(p))
#define ATTN_UNROLL4
#endif
ATTN_FN void attn_merge_splits(const float *work, int bg, int r, int splits, int rows, int D,
                               long long total_rows, int kv_len, int block_n, float *wsm,
                               int q_rows, float *M, float *L) {
  float mx = ATTN_NEG_INF, sum = 0.f;
  ATTN_UNROLL4
  for (int s = 0; s < splits; s++) {
    int sb, se;
    attn_split_range(kv_len, block_n, splits, s, &sb, &se);
    if (sb < se)
      mx = attn_fmax(mx,
                     ATTN_LD_PARTIAL(work + attn_work_ml(bg, s, r, splits, rows, D, total_rows)));
  }
  ATTN_UNROLL4
  for (int s = 0; s < splits; s++) {
    int sb, se;
    attn_split_range(kv_len, block_n, splits, s, &sb, &se);
    float wt = 0.f;
    if (sb < se) {
      const float *ml = work + attn_work_ml(bg, s, r, splits, rows, D, total_rows);
      wt = attn_merge_weight(ATTN_LD_PARTIAL(ml), mx);
      sum += wt * ATTN_LD_PARTIAL(ml + 1);
    }
    wsm[attn_wsm(s, r, q_rows)] = wt;
  }
  *M = mx;
  *L = sum;
}

/* The split-KV ticket: the block that draws ticket splits-1 (the last) merges. */
ATTN_FN int attn_ticket_is_last(int ticket, int splits) { return ticket == splits - 1; }

#endif
