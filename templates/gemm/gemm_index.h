/* gemm_index.h — index and fragment-layout arithmetic shared by the GEMM templates and the
 * host tests.
 *
 * Every function here is plain integer arithmetic written so the file is valid C (host tests
 * include it) and CUDA C++ (the templates include it through the template folder's include
 * path).  The kernels compute their block placement, split-K ranges, ldmatrix lane addresses
 * and store coordinates only through these functions, so a host test that enumerates them
 * checks the very index math the device runs: every output element written exactly once,
 * split-K slices covering K exactly once, the block swizzle a bijection.
 *
 * Fragment layouts follow the PTX ISA (9.7.14.5.8 mma.m16n8k16 / 9.7.14.5.7 m16n8k8,
 * 9.7.15.5.1 wgmma m64nNk16): groupID = lane / 4, threadID_in_group = lane % 4.
 */
#ifndef ROOFTUNE_GEMM_INDEX_H
#define ROOFTUNE_GEMM_INDEX_H

#include "../common/rt_ptx.h" /* the swizzle, descriptors and stage phases every template shares */

#if defined(__CUDACC__)
#define GEMM_FN static __host__ __device__ __forceinline__
#else
#define GEMM_FN static inline
#endif

/* The templates' input dtype, from the source prefix's RT_DTYPE_<dtype> line: DTYPE_CODE 0 f32
 * (and tf32: fp32 inputs, which the mma template rounds to tf32), 1 f16, 2 bf16, 4 e4m3, 5 e5m2
 * (kernels/gemm.h's gemm_dtype_code). */
#ifndef DTYPE_CODE
#if defined(RT_DTYPE_f16)
#define DTYPE_CODE 1
#elif defined(RT_DTYPE_bf16)
#define DTYPE_CODE 2
#elif defined(RT_DTYPE_e4m3)
#define DTYPE_CODE 4
#elif defined(RT_DTYPE_e5m2)
#define DTYPE_CODE 5
#else
#define DTYPE_CODE 0
#endif
#endif

#if defined(__CUDACC__)
/* In the kernels: the input element's size in bytes (ES) and a raw unsigned type of that size;
 * the templates convert elements themselves (NVRTC finds no CUDA headers on its own). */
#if DTYPE_CODE == 0
#define ES 4
typedef unsigned int elem_t;
#elif DTYPE_CODE == 4 || DTYPE_CODE == 5
#define ES 1
typedef unsigned char elem_t;
#else
#define ES 2
typedef unsigned short elem_t;
#endif
#endif

GEMM_FN int gemm_ceil_div(int a, int b) { return (a + b - 1) / b; }

/* Block swizzle: the linear block id `pid` over a tiles_m x tiles_n grid of output tiles is
 * mapped so that `group` consecutive tile rows are walked column by column (neighbouring
 * blocks share A rows and B columns in L2).  group == 1 is plain row-major order.  The last
 * group may be shorter.  A bijection from [0, tiles_m*tiles_n) onto the tiles. */
GEMM_FN void gemm_swizzle(int pid, int tiles_m, int tiles_n, int group, int *tile_m, int *tile_n) {
  int per_group = group * tiles_n;
  int first_m = (pid / per_group) * group;
  int rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  int in_group = pid % per_group;
  *tile_m = first_m + in_group % rows;
  *tile_n = in_group / rows;
}

/* Work units of gemm_wgmma: a unit is the output tiles that one cluster of `cluster` blocks
 * computes together, `cluster` neighbours along N that share their A tile (tile_n = pair *
 * cluster + rank; where tiles_n is not a multiple of cluster, the last pair's extra block gets a
 * tile past N: it loads and multicasts its part of A and stores nothing).  The units are the
 * tiles_m x ceil(tiles_n / cluster) pairs in gemm_swizzle order.  A cluster takes units first,
 * first + step, ... (a persistent grid has fewer clusters than units; otherwise step == units
 * and each cluster takes one). */
GEMM_FN int gemm_units(int tiles_m, int tiles_n, int cluster) {
  return tiles_m * gemm_ceil_div(tiles_n, cluster);
}
GEMM_FN void gemm_unit_tile(int unit, int tiles_m, int tiles_n, int cluster, int group, int rank,
                            int *tile_m, int *tile_n) {
  int pair;
  gemm_swizzle(unit, tiles_m, gemm_ceil_div(tiles_n, cluster), group, tile_m, &pair);
  *tile_n = pair * cluster + rank;
}

/* Split-K: slice `s` of `split` gets K tiles [*begin, *end) of `k_tiles`; the slices are
 * contiguous, balanced to within one tile, and cover [0, k_tiles) exactly once (a slice may be
 * empty when k_tiles < split). */
GEMM_FN void gemm_split_range(int k_tiles, int split, int s, int *begin, int *end) {
  *begin = (int)((long long)k_tiles * s / split);
  *end = (int)((long long)k_tiles * (s + 1) / split);
}

/* mma.sync accumulator (m16n8, f32): element i (0..3) of `lane` sits at row
 * groupID + 8*(i/2), column 2*threadID_in_group + i%2 of the 16x8 tile.  The same layout holds
 * for m16n8k16 (f16/bf16) and m16n8k8 (tf32). */
GEMM_FN int gemm_mma_c_row(int lane, int i) { return lane / 4 + 8 * (i / 2); }
GEMM_FN int gemm_mma_c_col(int lane, int i) { return 2 * (lane % 4) + i % 2; }

/* ldmatrix.x4 lane addresses.  Each lane supplies one 16-byte row address; lanes 8j..8j+7
 * address matrix j.  Positions are in rows and 16-byte chunks of a K-contiguous (or, for the
 * transposed load, N-contiguous) shared-memory tile.
 *
 * A (16 rows x 32 bytes of K, row-major): matrices (rows 0-7, chunk 0), (rows 8-15, chunk 0),
 * (rows 0-7, chunk 1), (rows 8-15, chunk 1) land in a0..a3 exactly as m16n8k16 (and, with
 * 32-bit elements, m16n8k8 tf32) expect. */
GEMM_FN int gemm_ldsm_a_row(int lane) { return lane % 16; }
GEMM_FN int gemm_ldsm_a_chunk(int lane) { return lane / 16; }
/* B stored N x K (K contiguous), two n8 tiles x 32 bytes of K: matrices (n 0-7, chunk 0),
 * (n 0-7, chunk 1), (n 8-15, chunk 0), (n 8-15, chunk 1): registers 0,1 are the b fragment of
 * the first n8 tile, 2,3 of the second. */
GEMM_FN int gemm_ldsm_bcol_row(int lane) { return lane % 8 + 8 * (lane / 16); }
GEMM_FN int gemm_ldsm_bcol_chunk(int lane) { return (lane / 8) % 2; }
/* B stored K x N (N contiguous), 16-bit elements, ldmatrix.trans: matrices (k 0-7, n 0-7),
 * (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15); the lane gives the k row and the 16-byte
 * (8-element) chunk along N. */
GEMM_FN int gemm_ldsm_brow_k(int lane) { return lane % 16; }
GEMM_FN int gemm_ldsm_brow_chunk(int lane) { return lane / 16; }

/* Byte offsets into a shared-memory stage that gemm_mma hands ldmatrix, built from the lane
 * maps above.  ld_bytes is the padded row pitch; a K step (ks) is 32 bytes of K (16 f16/bf16
 * or 8 tf32 elements: one mma).  A: the 16-row tile starting at row0.  B stored N x K: the two
 * n8 tiles starting at n0.  B stored K x N (16-bit, .trans): the two n8 tiles at n0, K rows of
 * step ks (kstep elements per step). */
GEMM_FN int gemm_ldsm_a_offset(int row0, int ks, int lane, int ld_bytes) {
  return (row0 + gemm_ldsm_a_row(lane)) * ld_bytes + (ks * 2 + gemm_ldsm_a_chunk(lane)) * 16;
}
GEMM_FN int gemm_ldsm_bcol_offset(int n0, int ks, int lane, int ld_bytes) {
  return (n0 + gemm_ldsm_bcol_row(lane)) * ld_bytes + (ks * 2 + gemm_ldsm_bcol_chunk(lane)) * 16;
}
GEMM_FN int gemm_ldsm_brow_offset(int n0, int ks, int kstep, int lane, int ld_bytes,
                                  int elem_bytes) {
  return (ks * kstep + gemm_ldsm_brow_k(lane)) * ld_bytes +
         (n0 + 8 * gemm_ldsm_brow_chunk(lane)) * elem_bytes;
}
/* gemm_mma's cp.async loads.  A stage's operand tile is `rows` rows of `cpr` 16-byte chunks (A
 * and B stored N x K: rows of M or N, chunks along K; B stored K x N: rows of K, chunks along
 * N), loaded by `threads` threads: thread t copies chunk column gemm_load_chunk(t, cpr) of rows
 * gemm_load_row(t, cpr, threads, i) for i < gemm_load_iters(rows, cpr, threads).  With threads a
 * multiple of cpr and rows*cpr a multiple of threads (the kernel asserts both) every chunk is
 * copied exactly once and a thread's rows are evenly spaced, so the kernel computes one source
 * address, one row mask and one shared offset per tile before its main loop and steps them. */
GEMM_FN int gemm_load_iters(int rows, int cpr, int threads) { return rows * cpr / threads; }
GEMM_FN int gemm_load_row(int t, int cpr, int threads, int i) {
  return t / cpr + i * (threads / cpr);
}
GEMM_FN int gemm_load_chunk(int t, int cpr) { return t % cpr; }
/* Bit i set when the thread's row i (gemm_load_row) is below `limit` once `first` is added
 * (the tile's first row in the matrix): the rows of A past M or of B past N, whose chunks are
 * zero-filled instead of read. */
GEMM_FN unsigned gemm_load_rows_in(int t, int cpr, int threads, int iters, int first, int limit) {
  unsigned mask = 0;
  for (int i = 0; i < iters && i < 32; i++)
    if (first + gemm_load_row(t, cpr, threads, i) < limit) mask |= 1u << i;
  return mask;
}

/* One thread's plan for an operand's tiles from K tile kt on (gemm_mma sets it up once and steps
 * it one tile per load), in elements from the matrix start: the source of its first chunk, the
 * step between its rows, that chunk's offset in a stage of pitch ld, its rows inside the matrix
 * (bit i: row i), and how much of K is left from its first chunk or row.  K-contiguous operands
 * (A, B stored N x K): rows from r0 of a matrix with `limit` rows and row pitch K, chunks along
 * K.  B stored K x N: rows along K from tile kt, the chunk column at n0 + chunk against N (all
 * rows in or none). */
typedef struct gemm_plan {
  long long src, step;
  int smem;
  unsigned rows_in;
  int k_left;
} gemm_plan;
GEMM_FN gemm_plan gemm_plan_kmajor(int t, int threads, int cpr, int iters, int ch, int block_k,
                                   int kt, int r0, int limit, int K, int ld) {
  const int r = gemm_load_row(t, cpr, threads, 0), k = gemm_load_chunk(t, cpr) * ch + kt * block_k;
  gemm_plan p = {(long long)(r0 + r) * K + k, (long long)(threads / cpr) * K, r * ld + k % block_k,
                 gemm_load_rows_in(t, cpr, threads, iters, r0, limit), K - k};
  return p;
}
GEMM_FN gemm_plan gemm_plan_nmajor(int t, int threads, int cpr, int ch, int block_k, int kt, int n0,
                                   int N, int K, int ld) {
  const int r = gemm_load_row(t, cpr, threads, 0), n = gemm_load_chunk(t, cpr) * ch;
  gemm_plan p = {(long long)(kt * block_k + r) * N + n0 + n, (long long)(threads / cpr) * N,
                 r * ld + n, n0 + n < N ? ~0u : 0u, K - kt * block_k - r};
  return p;
}

/* tf32 with B stored K x N: ldmatrix cannot transpose 32-bit elements, so b0 (h = 0) and b1
 * (h = 1) of the n8 tile at n0 are read directly: element (k tig + 4h, n groupID), as an
 * index in elements with row pitch ld. */
GEMM_FN int gemm_tf32_brow_index(int n0, int ks, int lane, int h, int ld) {
  return (ks * 8 + lane % 4 + 4 * h) * ld + n0 + lane / 4;
}

/* Output coordinates of mma.sync accumulator element (mi, ni, i) held by `lane` of warp
 * (warp_m, warp_n) in the block tile (tile_m, tile_n).  Rows and columns may fall outside the
 * matrix on edge tiles; the kernel stores only those inside. */
GEMM_FN int gemm_mma_out_row(int tile_m, int block_m, int warp_m, int warp_tile_m, int mi, int lane,
                             int i) {
  return tile_m * block_m + warp_m * warp_tile_m + mi * 16 + gemm_mma_c_row(lane, i);
}
GEMM_FN int gemm_mma_out_col(int tile_n, int block_n, int warp_n, int warp_tile_n, int ni, int lane,
                             int i) {
  return tile_n * block_n + warp_n * warp_tile_n + ni * 8 + gemm_mma_c_col(lane, i);
}

/* wgmma m64nNk16 f32 accumulator: element i (0 .. N/2-1) of thread t (0..127) of a warpgroup
 * sits at row 16*(t/32) + groupID + 8*((i/2)%2), column 8*(i/4) + 2*threadID_in_group + i%2. */
GEMM_FN int gemm_wgmma_d_row(int t, int i) {
  return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
}
GEMM_FN int gemm_wgmma_d_col(int t, int i) { return 8 * (i / 4) + 2 * (t % 4) + i % 2; }

/* gemm_wgmma's shared-memory operand layout (PTX ISA 9.7.15.5.1.2, 128-byte swizzle): TMA
 * writes every box as rows of 128 bytes (64 elements of the box's inner dimension) under
 * rt_ptx.h's ptx_sw128; stage buffers are 1024-byte aligned. */
/* B tile in a stage, BLOCK_N x BLOCK_K (BLOCK_K == 64).  b_col 1 (nt, K-major): one box of
 * BLOCK_N rows of 64 K elements.  b_col 0 (nn, N-major): BLOCK_N/64 boxes, box j holding N
 * columns 64j..64j+63 as BLOCK_K rows of k, at byte gemm_wgmma_b_box_offset(j) of the stage.
 * Where element (k, n) of the tile lands, in bytes from the stage start: */
GEMM_FN int gemm_wgmma_b_box_offset(int b_col, int j, int block_k) {
  return b_col ? 0 : j * block_k * 128;
}
GEMM_FN int gemm_wgmma_b_tma_offset(int b_col, int k, int n, int block_k) {
  return b_col ? ptx_sw128(n, 2 * k)
               : gemm_wgmma_b_box_offset(0, n / 64, block_k) + ptx_sw128(k, 2 * (n % 64));
}
/* The TMA loads of a stage's B tile (K slab kt, columns n0..): gemm_wgmma_b_boxes boxes, box j
 * at tensor coordinates (*c0, *c1) innermost first, written gemm_wgmma_b_box_offset(j) bytes
 * into the stage.  nt: tensor (K, N), one box (64 x BLOCK_N rows); nn: tensor (N, K), boxes of
 * 64 columns x BLOCK_K rows. */
GEMM_FN int gemm_wgmma_b_boxes(int b_col, int block_n) { return b_col ? 1 : block_n / 64; }
GEMM_FN void gemm_wgmma_b_box(int b_col, int j, int kt, int n0, int block_k, int *c0, int *c1) {
  *c0 = b_col ? kt * block_k : n0 + 64 * j;
  *c1 = b_col ? n0 : kt * block_k;
}
/* Boxes that lie wholly outside the tensor are not loaded (the PTX ISA promises zero fill for
 * the outside part of a box, not what a box with no inside part does): only rows past M or
 * columns past N, whose outputs are never stored, so their stale shared memory is harmless;
 * the K tail is always partly inside and zero-filled.  B box j of a stage (columns n0.. of
 * the tile) is inside when its first column is; of the cluster's A parts (part_rows rows each,
 * the tile at row m0) gemm_wgmma_a_parts_in are.  gemm_wgmma_stage_bytes is what a block's
 * full barrier expects for a stage: every A part inside (each block multicasts its own), its own
 * B boxes inside. */
GEMM_FN int gemm_wgmma_b_box_in(int b_col, int j, int n0, int N) {
  return (b_col ? n0 : n0 + 64 * j) < N;
}
GEMM_FN int gemm_wgmma_a_parts_in(int m0, int M, int part_rows, int cluster) {
  int in = 0;
  for (int r = 0; r < cluster; r++) in += m0 + r * part_rows < M;
  return in;
}
/* gemm_wgmma_stage_bytes_es for elements of es bytes (fp8: 1, with block_k 128; a K row of a
 * stage is 128 bytes either way); gemm_wgmma_stage_bytes for 16-bit elements. */
GEMM_FN int gemm_wgmma_stage_bytes_es(int b_col, int block_m, int block_n, int block_k, int es,
                                      int cluster, int m0, int n0, int M, int N) {
  int bytes =
      gemm_wgmma_a_parts_in(m0, M, block_m / cluster, cluster) * (block_m / cluster) * block_k * es;
  const int box_bytes = (b_col ? block_n : 64) * block_k * es;
  for (int j = 0; j < gemm_wgmma_b_boxes(b_col, block_n); j++)
    bytes += gemm_wgmma_b_box_in(b_col, j, n0, N) * box_bytes;
  return bytes;
}
/* A cluster's shared A tile: block `rank` of `cluster` loads tile rows [rank*part_rows, +part_rows)
 * (part_rows = block_m / cluster) from tensor row gemm_wgmma_a_part_row and multicasts them to
 * byte gemm_wgmma_a_part_offset of the A stage in every block of the cluster: each tile row is one
 * 128-byte swizzle row of K (block_k elements of es bytes), so the part starts part_rows rows in. */
GEMM_FN int gemm_wgmma_a_part_rows(int block_m, int cluster) { return block_m / cluster; }
GEMM_FN int gemm_wgmma_a_part_row(int rank, int m0, int block_m, int cluster) {
  return m0 + rank * gemm_wgmma_a_part_rows(block_m, cluster);
}
GEMM_FN int gemm_wgmma_a_part_offset(int rank, int block_m, int block_k, int es, int cluster) {
  return rank * gemm_wgmma_a_part_rows(block_m, cluster) * block_k * es;
}
GEMM_FN int gemm_wgmma_stage_bytes(int b_col, int block_m, int block_n, int block_k, int cluster,
                                   int m0, int n0, int M, int N) {
  return gemm_wgmma_stage_bytes_es(b_col, block_m, block_n, block_k, 2, cluster, m0, n0, M, N);
}

/* The B matrix descriptor of the wgmma for K slab ks (16 K elements): start byte offset from
 * the stage start, leading and stride byte offsets.  K-major: start 32*ks (inside the swizzled
 * row), LBO unused (16), SBO 1024 between 8-row groups of n.  N-major (imm-trans-b 1): start
 * 2048*ks (16 rows of k), LBO = the stride between 64-element N atoms (one box, BLOCK_K*128
 * bytes), SBO 1024 between 8-row groups of k. */
GEMM_FN int gemm_wgmma_b_start(int b_col, int ks) { return b_col ? 32 * ks : 16 * 128 * ks; }
/* The wgmma K steps of a slab: each instruction reads 32 bytes of K (k16 of 16-bit elements,
 * k32 of fp8), so a 128-byte swizzle row (BLOCK_K elements of es bytes) takes 4.  A (K-major,
 * like an nt B) for m64 tile `tile` of the stage (64 rows of 128 bytes each) and K step ks
 * starts at gemm_wgmma_a_start, with LBO 16 (unused) and SBO 1024. */
GEMM_FN int gemm_wgmma_k_steps(int block_k, int es) { return block_k * es / 32; }
GEMM_FN int gemm_wgmma_instr_k(int es) { return 32 / es; }
GEMM_FN int gemm_wgmma_a_start(int tile, int ks) { return tile * 64 * 128 + 32 * ks; }
GEMM_FN int gemm_wgmma_b_lbo(int b_col, int block_k) { return b_col ? 16 : block_k * 128; }
GEMM_FN int gemm_wgmma_b_sbo(void) { return 1024; }

/* SIMT micro-tile: thread (tx, ty) of a (BLOCK_N/THREAD_N) x (BLOCK_M/THREAD_M) block owns
 * rows ty*THREAD_M + i and columns tx*VEC + j*(BLOCK_N/THREAD_N*VEC) + v: columns are dealt
 * out in VEC-wide strips so neighbouring threads read neighbouring shared-memory words.
 * Element (i, j, v) with j < THREAD_N/VEC, v < VEC. */
GEMM_FN int gemm_simt_row(int tile_m, int block_m, int ty, int thread_m, int i) {
  return tile_m * block_m + ty * thread_m + i;
}
GEMM_FN int gemm_simt_col(int tile_n, int block_n, int tx, int threads_n, int vec, int j, int v) {
  return tile_n * block_n + j * threads_n * vec + tx * vec + v;
}

/* gemm_wgmma's warp-specialised pipeline (PRODUCER 1): STAGES stage buffers, each with a
 * "full" mbarrier and an "empty" one (lane 0 of every consumer warp of the cluster arrives once
 * the warp's wgmma reads of the stage are done: in a cluster a refill of A is multicast into
 * every block).  K slab kt lives in stage ptx_stage(kt, STAGES); its consumer waits for
 * ptx_full_parity, its producer (kt >= STAGES) for ptx_empty_parity (rt_ptx.h). */
/* Slabs are counted over all the units a block computes (g is the count before this unit), so
 * the pipeline runs on from one tile to the next.  After issuing slab g + kt's wgmmas and
 * waiting for all but the newest group, the consumers release slab g + kt - 1, which belongs to
 * this unit when kt > 0 (-1: none); a unit's last slab is released after its wait_group 0. */
GEMM_FN int gemm_pipe_release(int g, int kt) { return kt > 0 ? g + kt - 1 : -1; }

/* gemm_skinny: block bx of a grid of ceil(M/rows) x tiles_n blocks computes rows
 * row_block*rows .. +rows of C and columns col_block*(warps*cols) .. +warps*cols; warp w of it
 * owns columns col_block*warps*cols + w*cols + c, c < cols.  Column blocks are the fast index,
 * so neighbouring blocks read the same rows of A. */
GEMM_FN void gemm_skinny_tile(int bx, int tiles_n, int *row_block, int *col_block) {
  *row_block = bx / tiles_n;
  *col_block = bx % tiles_n;
}
/* Slice `s` of `split` takes K elements [*k0, *k1): whole `vec`-element (16-byte) chunks, so
 * every slice starts on a vector boundary; the slices cover [0, K) exactly once. */
GEMM_FN void gemm_skinny_krange(int K, int vec, int split, int s, int *k0, int *k1) {
  int c0, c1;
  gemm_split_range(gemm_ceil_div(K, vec), split, s, &c0, &c1);
  *k0 = c0 * vec < K ? c0 * vec : K;
  *k1 = c1 * vec < K ? c1 * vec : K;
}
/* Lane `lane` of a warp reads the chunks starting at k0 + (lane + 32*i)*vec, i = 0, 1, ...,
 * while they lie below k1 (a step of UNROLL takes i = step*UNROLL + u); past k1 the answer is
 * k1 itself, so a K near INT_MAX cannot wrap. */
GEMM_FN int gemm_skinny_k(int k0, int k1, int lane, int vec, int i) {
  long long k = k0 + (long long)(lane + 32 * i) * vec;
  return k < k1 ? (int)k : k1;
}

#endif
