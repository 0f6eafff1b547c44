/* test_gemm_fp8_epi.c (GPU) — fp8 inputs and fused epilogues, verified like test_gemm_verify.c
 * (every applicable template, a few configurations each with split-K, the producer warpgroup, a
 * persistent grid and a cluster among them, and cuBLASLt's candidates with their replay through
 * gemm_lt_matmul_epi) against the family's reference: cuBLASLt's fp32-output matmul (of bf16
 * copies for fp8 inputs) and the epilogue on the host in double precision, within the
 * tolerances of kernels/gemm.h.  fp8: e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3 and e5m2 x e5m2 with
 * per-tensor scales and per-row / per-column ones (+vscale), fp32 and bf16 outputs, edge shapes (a K whose last 128-element slab is
 * partly outside, M and N off the tiles, batches, one row).  Epilogues: bias + GELU to bf16 (the
 * issue's 4096x14336x4096 among them), beta + SiLU + residual to f16 (nn), bias + residual
 * with split-K, bias + ReLU, alpha alone; gemm_skinny's fp8 paths (vector and element-wise) and
 * epilogue at M <= 16.  The relative errors it prints for cuBLASLt's fp8
 * candidates with and without fast accumulation are what the fp8 tolerance rests on.  Skips
 * (77) without a GPU. */
/* stages: tune */
#include "gemm_verify_util.h"

TEST_CASE(fp8_epilogues) {
  gh h;
  manifest *ms[NTEMPLATES] = {NULL};
  verify_open(&h, ms);
  for (size_t t = 0; t < NTEMPLATES; t++)
    if (!ms[t]) return;
  if (h.info.cc_major < 9) test_skip("fp8 wgmma needs sm_90 (Hopper)");
  static const struct {
    const char *shape, *dtype;
    int lt_min;
  } probs[] = {
      {"4096x4096x4096:nt", "e4m3", 1},
      {"127x255x160:nt", "e4m3", 0},
      {"4096x4096x4096:nt+b=e5m2+out=bf16", "e4m3", 1},
      {"16x4096x4096:nt+b=e4m3", "e5m2", 1},
      {"3@96x200x256:nt+bias+gelu+out=bf16", "e4m3", 0},
      {"1x4096x4096:nt", "e4m3", 0},
      {"256x256x256:nt", "e5m2", 0},
      /* per-row / per-column scales (cuBLASLt's OUTER_VEC_32F, where this GPU has it) */
      {"4096x4096x4096:nt+vscale+out=bf16", "e4m3", 0},
      {"16x4096x4096:nt+vscale", "e4m3", 0},
      {"4096x14336x4096:nt+bias+gelu+out=bf16", "bf16", 1},
      {"127x255x136:nt+bias+gelu+out=bf16", "bf16", 0},
      {"3@96x200x136+beta+silu+residual+out=f16", "f16", 0},
      {"16x136x4096:nt+bias+residual", "bf16", 1},
      {"256x512x1024+bias+relu", "bf16", 1},
      {"64x64x64:nt+alpha", "f16", 1},
      /* gemm_skinny: a batch with N off its tiles and the epilogue; fp8 with a K off the vector
       * (its element path) */
      {"7@5x333x1008:nt+bias+silu+out=bf16", "bf16", 0},
      {"3x100x1000:nt+out=bf16", "e4m3", 0},
  };
  for (size_t i = 0; i < sizeof probs / sizeof probs[0]; i++)
    verify_problem_lt(&h, ms, probs[i].shape, probs[i].dtype, probs[i].lt_min);
  for (size_t t = 0; t < NTEMPLATES; t++) manifest_free(ms[t]);
  gh_close(&h);
}

TEST_LIST(TEST_ENTRY(fp8_epilogues))
