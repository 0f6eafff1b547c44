/* test_gemm_verify.c (GPU) — every gemm template, a few configurations each (spread over its
 * space, split-K and both layouts included), and cuBLASLt's heuristic candidates, verified
 * against the cuBLASLt fp32 reference (split-K, and gemm_wgmma's producer warpgroup, persistent
 * grid and two-block cluster, always among them; 1xN makes the second block's A part wholly
 * out of bounds) on 1x4096x4096, 127x255x129, 4096x4096x4096, 3@96x200x136 (each nn and nt:
 * gemm_wgmma reads B K-major for nt, N-major for nn), 16x136x4096 (both) and 7@5x333x1001:nt in
 * f32, f16 and bf16, with the output poisoned before every run.  A cuBLASLt candidate's text is
 * parsed back and run through gemm_lt_matmul (the runtime's replay path) and verified too.
 * Skips (77) without a GPU. */
/* stages: tune */
#include "gemm_verify_util.h"

TEST_CASE(templates_verified) {
  gh h;
  manifest *ms[NTEMPLATES] = {NULL};
  verify_open(&h, ms);
  for (size_t t = 0; t < NTEMPLATES; t++)
    if (!ms[t]) return;
  static const char *const dtypes[] = {"f32", "tf32", "f16", "bf16"};
  /* odd shapes take the element-wise load path, the aligned batched ones cp.async (and TMA);
   * 16x136x4096 (nn) gives gemm_wgmma boxes that lie wholly outside the tensor: B columns past
   * 136 with BLOCK_N 256, and a cluster's second A part past row 16; gemm_skinny (nt, at most 16
   * rows) runs on 1x4096x4096, 16x136x4096 and 7@5x333x1001, whose K takes its element path */
  static const char *const shapes[] = {"1x4096x4096:nt", "1x4096x4096",       "127x255x129",
                                       "127x255x129:nt", "4096x4096x4096:nt", "4096x4096x4096",
                                       "3@96x200x136",   "3@96x200x136:nt",   "16x136x4096",
                                       "16x136x4096:nt", "7@5x333x1001:nt"};
  for (int d = 0; d < 4; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      verify_problem(&h, ms, shapes[s], dtypes[d]);
  for (size_t t = 0; t < NTEMPLATES; t++) manifest_free(ms[t]);
  gh_close(&h);
}

TEST_LIST(TEST_ENTRY(templates_verified))
