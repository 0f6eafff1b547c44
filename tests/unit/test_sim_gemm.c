/* The gemm templates' kernel bodies on the sim (sim/sim.h), against a double-precision product:
 * gemm_simt, gemm_mma, gemm_skinny and gemm_wgmma on ragged shapes, with fused epilogues (bias,
 * GELU, SiLU, ReLU, beta, residual, 16-bit outputs); the gemm_wgmma
 * configurations that verified on the H200 on 2026-11-30 (bench/results/h200-2026-11-30/run1.txt,
 * a sample: the long test runs them all) pass; fp8 with CLUSTER 2 and the epilogue argument
 * passes (deliberate layout errors fail: tests/long/test_sim_mutants.c). */
/* stages: sim kernels */
#include "sim_gemm_util.h"

static void expect_ok(const sgu_case *c, sim_schedule s) {
  char msg[1024];
  const long bad = sgu_run_case(c, NULL, s, msg, sizeof msg);
  if (bad != 0)
    fprintf(stderr, "%s %s %s [%s] (%s): %ld wrong: %s\n", c->tmpl, c->dtype, c->shape, c->config,
            sim_schedule_name(s), bad, msg);
  CHECK_INT(bad, 0);
}

static const sgu_case nt_small = {"gemm_wgmma", "sm_90a", "bf16", "3@96x200x136:nt",
                                  "BLOCK_M=128,BLOCK_N=64,BLOCK_K=64,WARPGROUPS=2,PRODUCER=0,"
                                  "STAGES=5,SPLIT_K=1,SWIZZLE=1,B_COL=1,"
                                  "PERSISTENT=0,CLUSTER=1,SETMAXNREG=0"};
static const sgu_case nn_small = {
    "gemm_wgmma", "sm_90a", "bf16", "16x136x256",
    "BLOCK_M=64,BLOCK_N=64,BLOCK_K=64,WARPGROUPS=1,PRODUCER=0,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_COL=0,"
    "PERSISTENT=0,CLUSTER=1"};
static const sgu_case fp8_cluster = {
    "gemm_wgmma", "sm_90a", "e4m3", "200x300x512:nt",
    "BLOCK_M=128,BLOCK_N=128,WARPGROUPS=2,PRODUCER=1,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_COL=1,"
    "PERSISTENT=0,CLUSTER=2,SETMAXNREG=1"};

TEST_CASE(h200_configurations) {
  /* run1.txt lines 41-43: split-K with an empty split, the persistent clusters */
  static const sgu_case cs[] = {
      {"gemm_wgmma", "sm_90a", "bf16", "3@96x200x136:nt",
       "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,WARPGROUPS=2,PRODUCER=0,STAGES=5,SPLIT_K=4,SWIZZLE=8,"
       "B_COL=1,PERSISTENT=0,CLUSTER=1,SETMAXNREG=0"},
      {"gemm_wgmma", "sm_90a", "bf16", "3@96x200x136:nt",
       "BLOCK_M=256,BLOCK_N=64,BLOCK_K=64,WARPGROUPS=1,PRODUCER=1,STAGES=4,SPLIT_K=1,SWIZZLE=8,"
       "B_COL=1,PERSISTENT=1,CLUSTER=2,SETMAXNREG=0"},
  };
  expect_ok(&nt_small, SIM_SCHED_ROUND_ROBIN);
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) expect_ok(&cs[i], SIM_SCHED_RANDOM);
}

TEST_CASE(every_schedule) {
  for (int s = 0; s < SIM_SCHED_COUNT; s++) expect_ok(&nn_small, (sim_schedule)s);
}

TEST_CASE(fp8_cluster_epilogue) { expect_ok(&fp8_cluster, SIM_SCHED_PRODUCER_FIRST); }

TEST_CASE(epilogues) {
  static const sgu_case cs[] = {
      {"gemm_wgmma", "sm_90a", "bf16", "96x200x136:nt+bias+gelu+out=bf16",
       "BLOCK_M=128,BLOCK_N=64,WARPGROUPS=2,PRODUCER=0,STAGES=3,SWIZZLE=1,PERSISTENT=0,CLUSTER=1"},
      {"gemm_wgmma", "sm_90a", "f16", "70x136x128+beta+residual+silu",
       "BLOCK_M=64,BLOCK_N=128,WARPGROUPS=1,PERSISTENT=0,CLUSTER=1"},
      {"gemm_skinny", "sm_90", "bf16", "3x72x256:nt+alpha+relu+out=bf16", "SPLIT_K=1"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) expect_ok(&cs[i], SIM_SCHED_RANDOM);
}

TEST_CASE(other_gemm_templates) {
  static const sgu_case cs[] = {
      {"gemm_simt", "sm_90", "f32", "67x45x37", "BLOCK_M=64,BLOCK_N=64"},
      {"gemm_mma", "sm_90", "bf16", "2@70x72x96:nt", "BLOCK_M=64,BLOCK_N=64,STAGES=3,SPLIT_K=1"},
      {"gemm_mma", "sm_80", "tf32", "40x72x40", "BLOCK_M=64,BLOCK_N=64,SPLIT_K=1"},
      {"gemm_skinny", "sm_90", "f16", "5x72x256:nt", "SPLIT_K=1"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) expect_ok(&cs[i], SIM_SCHED_RANDOM);
}

TEST_LIST(TEST_ENTRY(h200_configurations), TEST_ENTRY(every_schedule),
          TEST_ENTRY(fp8_cluster_epilogue), TEST_ENTRY(epilogues), TEST_ENTRY(other_gemm_templates))
