/* test_gemm_index.c — the index math of templates/gemm/gemm_index.h, which the kernels use for
 * block placement, split-K and stores: enumerated on the host exactly as the kernels walk it.
 * Every output element must be written exactly once on edge shapes (1x4096x4096,
 * 127x255x129, ...) for several tile configurations, split-K slices must cover K exactly once,
 * the block swizzle must be a bijection, the fragment maps must tile their MMA shapes, and
 * gemm_wgmma's B tile (K-major and N-major) must be read by each wgmma descriptor exactly where
 * TMA's 128-byte swizzle put it, and gemm_mma's cp.async plans must copy every chunk of a stage
 * exactly once. */
/* stages: none */
#include "templates/gemm/gemm_index.h"
#include "test.h"

typedef struct shape {
  int m, n, k;
} shape;
static const shape shapes[] = {{1, 4096, 4096},  {127, 255, 129}, {4096, 1, 64}, {1, 1, 1},
                               {300, 200, 1000}, {64, 64, 64},    {257, 129, 33}};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])

static unsigned char *counts;

/* gemm_mma's epilogue: blocks via the swizzle, warps, mma tiles, accumulator pairs. */
static int mma_coverage(int M, int N, int BM, int BN, int WM, int WN, int swz) {
  const int tiles_m = gemm_ceil_div(M, BM), tiles_n = gemm_ceil_div(N, BN);
  const int WTM = BM / WM, WTN = BN / WN;
  memset(counts, 0, (size_t)M * N);
  for (int pid = 0; pid < tiles_m * tiles_n; pid++) {
    int tm, tn;
    gemm_swizzle(pid, tiles_m, tiles_n, swz, &tm, &tn);
    for (int warp = 0; warp < WM * WN; warp++)
      for (int lane = 0; lane < 32; lane++)
        for (int mi = 0; mi < WTM / 16; mi++)
          for (int ni = 0; ni < WTN / 8; ni++)
            for (int e = 0; e < 4; e++) {
              int row = gemm_mma_out_row(tm, BM, warp / WN, WTM, mi, lane, e);
              int col = gemm_mma_out_col(tn, BN, warp % WN, WTN, ni, lane, e);
              if (row < M && col < N) counts[(size_t)row * N + col]++;
            }
  }
  for (size_t i = 0; i < (size_t)M * N; i++)
    if (counts[i] != 1) {
      fprintf(stderr, "mma %dx%d tile %dx%d warps %dx%d: element %zu written %d times\n", M, N, BM,
              BN, WM, WN, i, counts[i]);
      return 0;
    }
  return 1;
}

/* gemm_wgmma's epilogue: warpgroups, m64 tiles, accumulator elements. */
static int wgmma_coverage(int M, int N, int BM, int BN, int WG, int swz) {
  const int tiles_m = gemm_ceil_div(M, BM), tiles_n = gemm_ceil_div(N, BN);
  memset(counts, 0, (size_t)M * N);
  for (int pid = 0; pid < tiles_m * tiles_n; pid++) {
    int tm, tn;
    gemm_swizzle(pid, tiles_m, tiles_n, swz, &tm, &tn);
    for (int tid = 0; tid < 128 * WG; tid++)
      for (int mt = 0; mt < BM / (64 * WG); mt++)
        for (int i = 0; i < BN / 2; i++) {
          int row =
              tm * BM + (tid / 128 * (BM / (64 * WG)) + mt) * 64 + gemm_wgmma_d_row(tid % 128, i);
          int col = tn * BN + gemm_wgmma_d_col(tid % 128, i);
          if (row < M && col < N) counts[(size_t)row * N + col]++;
        }
  }
  for (size_t i = 0; i < (size_t)M * N; i++)
    if (counts[i] != 1) {
      fprintf(stderr, "wgmma %dx%d tile %dx%d: element %zu written %d times\n", M, N, BM, BN, i,
              counts[i]);
      return 0;
    }
  return 1;
}

/* gemm_simt's epilogue. */
static int simt_coverage(int M, int N, int BM, int BN, int TM, int TN, int VEC) {
  const int tiles_m = gemm_ceil_div(M, BM), tiles_n = gemm_ceil_div(N, BN), tn_threads = BN / TN;
  memset(counts, 0, (size_t)M * N);
  for (int pid = 0; pid < tiles_m * tiles_n; pid++) {
    int tm, tn;
    gemm_swizzle(pid, tiles_m, tiles_n, 8, &tm, &tn);
    for (int tid = 0; tid < (BM / TM) * tn_threads; tid++)
      for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN / VEC; j++)
          for (int v = 0; v < VEC; v++) {
            int row = gemm_simt_row(tm, BM, tid / tn_threads, TM, i);
            int col = gemm_simt_col(tn, BN, tid % tn_threads, tn_threads, VEC, j, v);
            if (row < M && col < N) counts[(size_t)row * N + col]++;
          }
  }
  for (size_t i = 0; i < (size_t)M * N; i++)
    if (counts[i] != 1) {
      fprintf(stderr, "simt %dx%d tile %dx%d micro %dx%d vec %d: element %zu written %d times\n", M,
              N, BM, BN, TM, TN, VEC, i, counts[i]);
      return 0;
    }
  return 1;
}

/* The address the wgmma reads for element (k, n) of its B operand (16 x N, k < 16), from the
 * descriptor fields, as the PTX ISA defines the 128-byte-swizzled canonical layouts (CUTLASS
 * cute/arch/mma_sm90_desc.hpp writes the same in units of 16 bytes, T = 8 elements):
 *   K-major  ((8,m),(T,2)):((8T,SBO),(1,T))    n = (n%8, n/8), k contiguous in a 128-byte row;
 *   N-major  ((T,8,m),(8,2)):((1,T,LBO),(8T,SBO))  n contiguous in 64-element atoms LBO apart,
 *            k rows 128 bytes apart in 8-row groups SBO apart;
 * then the swizzle XORs address bits 4-6 with bits 7-9 (Swizzle<3,4,3>). */
static int wgmma_b_read(int b_col, int start, int lbo, int sbo, int k, int n) {
  int a = b_col ? start + (n % 8) * 128 + (n / 8) * sbo + 2 * k
                : start + 2 * (n % 64) + (n / 64) * lbo + (k % 8) * 128 + (k / 8) * sbo;
  return a ^ (((a >> 7) & 7) << 4);
}

/* gemm_wgmma's B stage: the TMA placement is a bijection onto the stage's bytes, the kernel's
 * boxes put each tensor element of the tile there, and every wgmma (K slab ks) reads through
 * its descriptor exactly the element TMA put there. */
static int wgmma_b_layout(int b_col, int block_n, int block_k) {
  const int bytes = block_n * block_k * 2;
  unsigned char *hit = calloc((size_t)bytes / 2, 1);
  int ok = hit != NULL;
  for (int k = 0; ok && k < block_k; k++)
    for (int n = 0; n < block_n; n++) {
      int off = gemm_wgmma_b_tma_offset(b_col, k, n, block_k);
      if (off < 0 || off >= bytes || off % 2 || hit[off / 2]++) {
        fprintf(stderr, "wgmma B b_col %d n %d: element (%d, %d) placed at %d twice or outside\n",
                b_col, block_n, k, n, off);
        ok = 0;
        break;
      }
    }
  /* the boxes the kernel loads for K slab kt at columns n0: box element (inner i, row r) is
   * tensor element (c0 + i, c1 + r), i.e. (k, n) = (c0 + i, c1 + r) for nt and (c1 + r, c0 + i)
   * for nn; TMA puts it at box offset + the swizzled (r, 2i); that must be its tile place */
  const int kt = 3, n0 = 5 * block_n, rows = b_col ? block_n : block_k;
  int covered = 0;
  for (int j = 0; ok && j < gemm_wgmma_b_boxes(b_col, block_n); j++) {
    int c0, c1;
    gemm_wgmma_b_box(b_col, j, kt, n0, block_k, &c0, &c1);
    for (int r = 0; ok && r < rows; r++)
      for (int i = 0; i < 64; i++) {
        int k = b_col ? c0 + i : c1 + r, n = b_col ? c1 + r : c0 + i;
        int put = gemm_wgmma_b_box_offset(b_col, j, block_k) + ptx_sw128(r, 2 * i);
        if (put != gemm_wgmma_b_tma_offset(b_col, k - kt * block_k, n - n0, block_k)) {
          fprintf(stderr, "wgmma B b_col %d n %d box %d: tensor (%d, %d) lands at %d\n", b_col,
                  block_n, j, c0 + i, c1 + r, put);
          ok = 0;
          break;
        }
        covered++;
      }
  }
  ok &= covered == block_n * block_k;
  const int lbo = gemm_wgmma_b_lbo(b_col, block_k), sbo = gemm_wgmma_b_sbo();
  ok &= lbo % 16 == 0 && sbo % 16 == 0 && lbo >> 4 < (1 << 14) && sbo >> 4 < (1 << 14);
  for (int ks = 0; ok && ks < block_k / 16; ks++)
    for (int k = 0; k < 16; k++)
      for (int n = 0; n < block_n; n++) {
        int read = wgmma_b_read(b_col, gemm_wgmma_b_start(b_col, ks), lbo, sbo, k, n);
        int put = gemm_wgmma_b_tma_offset(b_col, 16 * ks + k, n, block_k);
        if (read != put) {
          fprintf(stderr,
                  "wgmma B b_col %d n %d slab %d: element (%d, %d) read at %d, TMA put it at %d\n",
                  b_col, block_n, ks, 16 * ks + k, n, read, put);
          ok = 0;
          k = 16;
          break;
        }
      }
  free(hit);
  return ok;
}

/* gemm_skinny as the kernel walks it (the vector path when K is a multiple of vec, else lanes
 * striding over single elements): every element of C is written by one lane per K slice, and
 * every k of [0, K) is read exactly once per output column, by whole vec-element chunks that
 * start on a vector boundary and end inside the slice. */
static int skinny_coverage(int M, int N, int K, int rows, int cols, int warps, int unroll,
                           int split, int vec) {
  const int tiles_n = gemm_ceil_div(N, warps * cols), blocks = gemm_ceil_div(M, rows) * tiles_n;
  unsigned char *kc = calloc((size_t)K, 1);
  int ok = kc != NULL;
  memset(counts, 0, (size_t)M * N);
  for (int s = 0; ok && s < split; s++) {
    int k0, k1;
    gemm_skinny_krange(K, vec, split, s, &k0, &k1);
    ok &= k0 % vec == 0 && k0 <= k1 && k1 <= K;
    for (int lane = 0; lane < 32; lane++) {
      if (K % vec)
        for (int k = k0 + lane; k < k1; k += 32) kc[k]++;
      else
        for (int i = 0; gemm_skinny_k(k0, k1, lane, vec, i) < k1; i += unroll)
          for (int u = 0; u < unroll; u++) {
            const int k = gemm_skinny_k(k0, k1, lane, vec, i + u);
            if (k >= k1) break;
            for (int v = 0; v < vec; v++) {
              if (k + v >= k1)
                ok = 0;
              else
                kc[k + v]++;
            }
          }
    }
    for (int bx = 0; bx < blocks; bx++) {
      int rb, cb;
      gemm_skinny_tile(bx, tiles_n, &rb, &cb);
      for (int w = 0; w < warps; w++)
        for (int m = 0; m < rows; m++)
          for (int c = 0; c < cols; c++) {
            const int mm = rb * rows + m, nn = cb * warps * cols + w * cols + c;
            if (mm < M && nn < N) counts[(size_t)mm * N + nn]++;
          }
    }
  }
  for (size_t i = 0; ok && i < (size_t)M * N; i++) ok &= counts[i] == split;
  for (int k = 0; ok && k < K; k++) ok &= kc[k] == 1;
  free(kc);
  if (!ok)
    fprintf(
        stderr,
        "skinny %dx%dx%d rows %d cols %d warps %d unroll %d split %d vec %d: not an exact cover\n",
        M, N, K, rows, cols, warps, unroll, split, vec);
  return ok;
}

static void setup(void) {
  size_t most = 0;
  for (int s = 0; s < NSHAPES; s++)
    if ((size_t)shapes[s].m * shapes[s].n > most) most = (size_t)shapes[s].m * shapes[s].n;
  counts = malloc(most);
  CHECK(counts != NULL);
  if (!counts) exit(test_done());
}

TEST_CASE(swizzle) {
  /* swizzle: a bijection onto the tiles for every group size, including ragged last groups */
  for (int tiles_m = 1; tiles_m <= 23; tiles_m += 2)
    for (int tiles_n = 1; tiles_n <= 19; tiles_n += 3)
      for (int group = 1; group <= 16; group *= 2) {
        unsigned char seen[23 * 19] = {0};
        int ok = 1;
        for (int pid = 0; pid < tiles_m * tiles_n; pid++) {
          int tm, tn;
          gemm_swizzle(pid, tiles_m, tiles_n, group, &tm, &tn);
          if (tm < 0 || tm >= tiles_m || tn < 0 || tn >= tiles_n || seen[tm * tiles_n + tn]++)
            ok = 0;
        }
        CHECK(ok);
      }
  { /* group 1 is plain row-major order */
    int tm, tn;
    gemm_swizzle(7, 3, 5, 1, &tm, &tn);
    CHECK_INT(tm, 1);
    CHECK_INT(tn, 2);
  }
}

TEST_CASE(wgmma_work_units) {
  /* gemm_wgmma's work units: for one block or a cluster of two along N, and any number of
   * (persistent) clusters walking the units, every tile is computed exactly once, the blocks of
   * a cluster always share their tile row (their A tile), and the only tiles past N are a last
   * pair's second block where tiles_n is odd */
  for (int cluster = 1; cluster <= 2; cluster++)
    for (int tiles_m = 1; tiles_m <= 9; tiles_m += 2)
      for (int tiles_n = 1; tiles_n <= 8; tiles_n++)
        for (int group = 1; group <= 8; group *= 8) {
          const int units = gemm_units(tiles_m, tiles_n, cluster);
          for (int clusters = 1; clusters <= units; clusters += (clusters < 4 ? 1 : 3)) {
            static int seen[128];
            memset(seen, 0, sizeof seen);
            int ok = 1, phantoms = 0;
            for (int c = 0; c < clusters; c++)
              for (int u = c; u < units; u += clusters) {
                int tm0 = -1;
                for (int rank = 0; rank < cluster; rank++) {
                  int tm, tn;
                  gemm_unit_tile(u, tiles_m, tiles_n, cluster, group, rank, &tm, &tn);
                  if (rank == 0) tm0 = tm;
                  if (tm != tm0 || tm < 0 || tm >= tiles_m || tn < 0)
                    ok = 0;
                  else if (tn >= tiles_n)
                    phantoms += rank == 1 && tn == tiles_n;
                  else
                    seen[tm * tiles_n + tn]++;
                }
              }
            for (int i = 0; i < tiles_m * tiles_n; i++) ok &= seen[i] == 1;
            CHECK(ok);
            CHECK_INT(phantoms, cluster == 2 && tiles_n % 2 ? tiles_m : 0);
          }
        }
}

TEST_CASE(full_barrier) {
  /* what a stage's full barrier expects: everything inside a big problem; a cluster's second
   * A part past M=16 and a pair's extra tile past N are left out, as are nn B boxes past N */
  CHECK_INT(gemm_wgmma_stage_bytes(1, 128, 256, 64, 1, 0, 0, 4096, 4096), (128 + 256) * 64 * 2);
  CHECK_INT(gemm_wgmma_stage_bytes(1, 128, 256, 64, 2, 0, 256, 4096, 4096), (128 + 256) * 64 * 2);
  CHECK_INT(gemm_wgmma_stage_bytes(1, 128, 256, 64, 2, 0, 0, 16, 4096), (64 + 256) * 64 * 2);
  CHECK_INT(gemm_wgmma_stage_bytes(1, 128, 256, 64, 2, 0, 256, 16, 136), 64 * 64 * 2);
  CHECK_INT(gemm_wgmma_stage_bytes(0, 128, 256, 64, 1, 0, 0, 4096, 136), (128 + 3 * 64) * 64 * 2);
  CHECK_INT(gemm_wgmma_stage_bytes(0, 128, 256, 64, 1, 128, 0, 129, 4096), (128 + 256) * 64 * 2);
}

TEST_CASE(skinny) {
  /* gemm_skinny: rows and columns past the edges, K not a multiple of the vector, more slices
   * than chunks */
  {
    static const shape sk[] = {{1, 4096, 4096}, {16, 255, 129}, {3, 1, 8},  {16, 136, 4096},
                               {5, 33, 1000},   {1, 1, 1},      {2, 64, 24}};
    for (size_t i = 0; i < sizeof sk / sizeof sk[0]; i++)
      for (int rows = 1; rows <= 16; rows *= 4)
        for (int cols = 1; cols <= 8; cols *= 2)
          for (int split = 1; split <= 16; split *= 4)
            for (int vec = 4; vec <= 8; vec *= 2)
              CHECK(skinny_coverage(sk[i].m, sk[i].n, sk[i].k, rows, cols, 1 + (cols % 3) * 3,
                                    1 + (rows % 3), split, vec));
    /* a K near INT_MAX: a lane's next chunk past k1 is k1, not a wrapped negative index */
    CHECK_INT(gemm_skinny_k(2147482600 - 16, 2147482600, 31, 8, 4), 2147482600);
    CHECK_INT(gemm_skinny_k(0, 4096, 31, 8, 0), 248);
  }
}

TEST_CASE(split_k) {
  /* split-K: contiguous, balanced, exact cover (empty slices allowed when K is short) */
  for (int k_tiles = 1; k_tiles <= 300; k_tiles += 7)
    for (int split = 1; split <= 16; split++) {
      int next = 0, ok = 1;
      for (int s = 0; s < split; s++) {
        int b, e;
        gemm_split_range(k_tiles, split, s, &b, &e);
        if (b != next || e < b || e - b > k_tiles / split + 1) ok = 0;
        next = e;
      }
      CHECK(ok && next == k_tiles);
    }
}

TEST_CASE(mma_fragment) {
  /* mma.sync accumulator fragment: the 32 lanes x 4 elements tile 16x8 exactly */
  {
    int seen[16][8] = {{0}};
    for (int lane = 0; lane < 32; lane++)
      for (int i = 0; i < 4; i++) seen[gemm_mma_c_row(lane, i)][gemm_mma_c_col(lane, i)]++;
    int ok = 1;
    for (int r = 0; r < 16; r++)
      for (int c = 0; c < 8; c++) ok &= seen[r][c] == 1;
    CHECK(ok);
    /* PTX ISA: c0,c1 at (groupID, 2*tig + {0,1}), c2,c3 eight rows down */
    CHECK_INT(gemm_mma_c_row(5, 0), 1);
    CHECK_INT(gemm_mma_c_col(5, 1), 3);
    CHECK_INT(gemm_mma_c_row(5, 2), 9);
  }
}

TEST_CASE(wgmma_fragment) {
  /* wgmma m64nNk16 accumulator: 128 threads x N/2 elements tile 64xN exactly */
  for (int n = 64; n <= 256; n *= 2) {
    static int seen[64][256];
    memset(seen, 0, sizeof seen);
    for (int t = 0; t < 128; t++)
      for (int i = 0; i < n / 2; i++) seen[gemm_wgmma_d_row(t, i)][gemm_wgmma_d_col(t, i)]++;
    int ok = 1;
    for (int r = 0; r < 64; r++)
      for (int c = 0; c < n; c++) ok &= seen[r][c] == 1;
    CHECK(ok);
  }
  /* ... and in the PTX ISA's own places (its m64nNk16 D figure: warp w's rows 16w.., lane
   * groupID + 8 for d[2,3] of each 8-column block, columns 8*(i/4) + 2*threadID_in_group):
   * a one-to-one map that put elements elsewhere would pass the coverage check above */
  {
    static const int pin[][4] = {{0, 0, 0, 0},       {0, 2, 8, 0},   {0, 4, 0, 8},
                                 {37, 0, 17, 2},     {37, 3, 25, 3}, {37, 5, 17, 11},
                                 {127, 127, 63, 255}};
    for (size_t k = 0; k < sizeof pin / sizeof pin[0]; k++) {
      CHECK_INT(gemm_wgmma_d_row(pin[k][0], pin[k][1]), pin[k][2]);
      CHECK_INT(gemm_wgmma_d_col(pin[k][0], pin[k][1]), pin[k][3]);
    }
  }
}

TEST_CASE(wgmma_b_smem) {
  /* gemm_wgmma's B operand in shared memory, K-major (nt) and N-major (nn) */
  for (int n = 64; n <= 256; n *= 2) {
    CHECK(wgmma_b_layout(1, n, 64));
    CHECK(wgmma_b_layout(0, n, 64));
  }
  /* the 128-byte swizzle by hand: row 3, bytes 0 and 41 go to chunks 0^3 = 3 and 2^3 = 1 */
  CHECK_INT(ptx_sw128(3, 0), 3 * 128 + 48);
  CHECK_INT(ptx_sw128(3, 41), 3 * 128 + 16 + 9);
}

TEST_CASE(ldmatrix) {
  /* ldmatrix x4 lane addresses: each of the four 8x8 matrices gets 8 distinct rows */
  {
    int a[16][2] = {{0}}, bc[16][2] = {{0}}, br[16][2] = {{0}}, ok = 1;
    for (int lane = 0; lane < 32; lane++) {
      a[gemm_ldsm_a_row(lane)][gemm_ldsm_a_chunk(lane)]++;
      bc[gemm_ldsm_bcol_row(lane)][gemm_ldsm_bcol_chunk(lane)]++;
      br[gemm_ldsm_brow_k(lane)][gemm_ldsm_brow_chunk(lane)]++;
      /* matrix j = lane/8 must be: A (rows 0-7|8-15, chunk 0|1) in order m0..m3 = (0,0),(8,0),(0,1),(8,1) */
      int j = lane / 8;
      ok &= gemm_ldsm_a_row(lane) / 8 == j % 2 && gemm_ldsm_a_chunk(lane) == j / 2;
      /* B (N x K): m0..m3 = (n0-7,c0),(n0-7,c1),(n8-15,c0),(n8-15,c1) */
      ok &= gemm_ldsm_bcol_row(lane) / 8 == j / 2 && gemm_ldsm_bcol_chunk(lane) == j % 2;
      /* B (K x N, .trans): m0..m3 = (k0-7,n0-7),(k8-15,n0-7),(k0-7,n8-15),(k8-15,n8-15) */
      ok &= gemm_ldsm_brow_k(lane) / 8 == j % 2 && gemm_ldsm_brow_chunk(lane) == j / 2;
    }
    for (int r = 0; r < 16; r++)
      for (int c = 0; c < 2; c++) ok &= a[r][c] == 1 && bc[r][c] == 1 && br[r][c] == 1;
    CHECK(ok);
  }
}

TEST_CASE(cp_async_plans) {
  /* gemm_mma's cp.async plans: for every tile the manifest allows (rows of 32..256 and 4..64
   * chunks per row, 64..256 threads, dividing evenly as the kernel asserts), each chunk of a
   * stage is copied by exactly one thread, and a thread's row mask marks exactly its rows
   * inside the matrix, for tiles that start anywhere against the limit */
  {
    int ok = 1, tried = 0;
    for (int rows = 32; rows <= 256; rows *= 2)
      for (int cpr = 4; cpr <= 64; cpr *= 2)
        for (int threads = 64; threads <= 256; threads *= 2) {
          if (threads % cpr || rows * cpr % threads) continue;
          const int iters = gemm_load_iters(rows, cpr, threads);
          if (iters > 32) continue;
          tried++;
          static unsigned char seen[256 * 64];
          memset(seen, 0, sizeof seen);
          for (int t = 0; t < threads; t++)
            for (int i = 0; i < iters; i++) {
              int r = gemm_load_row(t, cpr, threads, i), c = gemm_load_chunk(t, cpr);
              if (r < 0 || r >= rows || c < 0 || c >= cpr)
                ok = 0;
              else
                seen[r * cpr + c]++;
              /* evenly spaced: the kernel steps one pointer by threads/cpr rows */
              if (r != gemm_load_row(t, cpr, threads, 0) + i * (threads / cpr)) ok = 0;
            }
          for (int x = 0; x < rows * cpr; x++) ok &= seen[x] == 1;
          for (int first = -rows; first <= 2 * rows; first += rows / 4 + 1)
            for (int t = 0; t < threads; t++) {
              unsigned mask = gemm_load_rows_in(t, cpr, threads, iters, first, rows);
              for (int i = 0; i < iters; i++)
                ok &= (int)(mask >> i & 1u) == (first + gemm_load_row(t, cpr, threads, i) < rows);
              ok &= iters == 32 || mask >> iters == 0;
            }
        }
    CHECK(tried >= 20);
    CHECK(ok);
  }
}

TEST_CASE(coverage) {
  /* every output element written exactly once, on edge shapes, for several configurations */
  static const int mma_cfgs[][5] = {{128, 128, 2, 2, 8}, {64, 64, 2, 2, 1},  {32, 64, 1, 2, 8},
                                    {256, 128, 4, 2, 8}, {64, 256, 1, 4, 1}, {128, 64, 4, 2, 8}};
  static const int wg_cfgs[][4] = {
      {128, 128, 1, 8}, {128, 256, 2, 1}, {64, 64, 1, 8}, {256, 128, 2, 8}};
  static const int simt_cfgs[][5] = {
      {128, 128, 8, 8, 4}, {64, 64, 4, 4, 2}, {32, 32, 4, 4, 4}, {128, 64, 8, 4, 2}};
  for (int s = 0; s < NSHAPES; s++) {
    const int M = shapes[s].m, N = shapes[s].n;
    for (size_t c = 0; c < sizeof mma_cfgs / sizeof mma_cfgs[0]; c++)
      CHECK(mma_coverage(M, N, mma_cfgs[c][0], mma_cfgs[c][1], mma_cfgs[c][2], mma_cfgs[c][3],
                         mma_cfgs[c][4]));
    for (size_t c = 0; c < sizeof wg_cfgs / sizeof wg_cfgs[0]; c++)
      CHECK(wgmma_coverage(M, N, wg_cfgs[c][0], wg_cfgs[c][1], wg_cfgs[c][2], wg_cfgs[c][3]));
    for (size_t c = 0; c < sizeof simt_cfgs / sizeof simt_cfgs[0]; c++)
      CHECK(simt_coverage(M, N, simt_cfgs[c][0], simt_cfgs[c][1], simt_cfgs[c][2], simt_cfgs[c][3],
                          simt_cfgs[c][4]));
  }
}

static void teardown(void) { free(counts); }

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(swizzle), TEST_ENTRY(wgmma_work_units),
                  TEST_ENTRY(full_barrier), TEST_ENTRY(skinny), TEST_ENTRY(split_k),
                  TEST_ENTRY(mma_fragment), TEST_ENTRY(wgmma_fragment), TEST_ENTRY(wgmma_b_smem),
                  TEST_ENTRY(ldmatrix), TEST_ENTRY(cp_async_plans), TEST_ENTRY(coverage))
