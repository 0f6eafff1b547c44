/* The gemm templates' kernel bodies on the sim (sim/sim.h), against a double-precision product:
 * gemm_simt, gemm_mma, gemm_skinny and gemm_wgmma on ragged shapes; the gemm_wgmma
 * configurations that verified on the H200 on 2026-11-30 (bench/results/h200-2026-11-30/run1.txt,
 * a sample: the long test runs them all) pass; fp8 with CLUSTER 2 and the epilogue argument
 * passes; and deliberate layout errors fail: the A descriptor's LBO and SBO swapped, B's too
 * (nn), the transpose bit flipped, the tensor maps' 128-byte swizzle dropped, and the fp8 A
 * part offset computed with 2-byte elements (bench/mutations.sh's kernel-body mutation). */
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

static void expect_wrong(const sgu_case *c, const sgu_mutation *mu, const char *what) {
  char msg[1024];
  const long bad = sgu_run_case(c, mu, SIM_SCHED_ROUND_ROBIN, msg, sizeof msg);
  fprintf(stderr, "mutation %s: %ld wrong (%s)\n", what, bad, msg);
  CHECK(bad != 0 && !strstr(msg, "not found once"));
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

TEST_CASE(layout_errors_fail) {
  const sgu_mutation a_lbo_sbo = {NULL, "ptx_desc(a, 16, 1024)", "ptx_desc(a, 1024, 16)", 0};
  expect_wrong(&nt_small, &a_lbo_sbo, "A descriptor LBO/SBO swapped");
  const sgu_mutation b_lbo_sbo = {NULL, "gemm_wgmma_b_lbo(B_COL, BLOCK_K), gemm_wgmma_b_sbo()",
                                  "gemm_wgmma_b_sbo(), gemm_wgmma_b_lbo(B_COL, BLOCK_K)", 0};
  expect_wrong(&nn_small, &b_lbo_sbo, "B descriptor LBO/SBO swapped (nn)");
  const sgu_mutation trans = {NULL, "\"p, 1, 1, 0, 1\"", "\"p, 1, 1, 0, 0\"", 0};
  expect_wrong(&nn_small, &trans, "transpose bit flipped");
  const sgu_mutation swz = {NULL, NULL, NULL, 1};
  expect_wrong(&nt_small, &swz, "swizzle dropped from the tensor maps");
}

TEST_CASE(fp8_a_offset_mutation_fails) {
  const sgu_mutation mu = {NULL, "gemm_wgmma_a_part_offset(rank, BLOCK_M, BLOCK_K, ES, CLUSTER)",
                           "gemm_wgmma_a_part_offset(rank, BLOCK_M, BLOCK_K, 2, CLUSTER)", 0};
  expect_wrong(&fp8_cluster, &mu, "fp8 A part offset with 2-byte elements");
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
          TEST_ENTRY(fp8_cluster_epilogue), TEST_ENTRY(layout_errors_fail),
          TEST_ENTRY(fp8_a_offset_mutation_fails), TEST_ENTRY(other_gemm_templates))
