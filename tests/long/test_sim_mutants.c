/* Deliberate errors in the kernels fail on the sim (sim/sim.h), each with the count of wrong
 * outputs or the fault it causes: gemm_wgmma's layout errors (the A descriptor's LBO and SBO
 * swapped, B's too (nn), the transpose bit flipped, the tensor maps' 128-byte swizzle dropped),
 * the four kernel-body mutations bench/mutations.sh counts (gemm_wgmma's fp8 A part offset with
 * 2-byte elements, attn_mma's rescale arguments swapped, attn_wgmma's LSE row + 1, attn_decode's
 * merge weight halved) and four pipeline mutations (cp.async waiting one group short, a missing
 * __syncthreads, a V stage released before its wgmma wait, a wrong mbarrier parity).  Long (one
 * host compile each); bench/mutations.sh applies the same ones to the files and runs the
 * default sim tests. */
/* stages: sim kernels */
#include "sim_attn_util.h"

static void expect_wrong_gemm(const sgu_case *c, const sgu_mutation *mu, const char *what) {
  char msg[1024];
  const long bad = sgu_run_case(c, mu, SIM_SCHED_ROUND_ROBIN, msg, sizeof msg);
  fprintf(stderr, "mutation %s: %ld wrong (%s)\n", what, bad, msg);
  CHECK(bad != 0 && !strstr(msg, "not found once"));
}

static void expect_wrong(const sau_case *c, const char *from, const char *to, const char *what,
                         sim_schedule s) {
  char msg[1024];
  const sgu_mutation mu = {NULL, from, to, 0};
  const long bad = sau_run_case(c, &mu, s, msg, sizeof msg);
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

static const sau_case mma_causal = {
    "attn_mma", "sm_90",
    "bf16",     "2x4:2x100:150x128:causal",
    "150,77",   "BLOCK_M=64,BLOCK_N=64,WARPS=4,STAGES=2,Q_IN_REGS=1"};
static const sau_case wg2 = {"attn_wgmma", "sm_90a",
                             "bf16",       "1x2:1x300:700x128:causal",
                             NULL,         "CONSUMERS=2,BLOCK_N=128,STAGES=2,OVERLAP=1"};
static const sau_case dec = {"attn_decode", "sm_90",
                             "bf16",        "2x8:2x1:2048x128:paged16",
                             "2048,777",    "SPLITS=4,BLOCK_N=32,WARPS=2,VEC=8,STAGES=2"};

TEST_CASE(layout_errors_fail) {
  const sgu_mutation a_lbo_sbo = {NULL, "ptx_desc(a, 16, 1024)", "ptx_desc(a, 1024, 16)", 0};
  expect_wrong_gemm(&nt_small, &a_lbo_sbo, "A descriptor LBO/SBO swapped");
  const sgu_mutation b_lbo_sbo = {NULL, "gemm_wgmma_b_lbo(B_COL, BLOCK_K), gemm_wgmma_b_sbo()",
                                  "gemm_wgmma_b_sbo(), gemm_wgmma_b_lbo(B_COL, BLOCK_K)", 0};
  expect_wrong_gemm(&nn_small, &b_lbo_sbo, "B descriptor LBO/SBO swapped (nn)");
  const sgu_mutation trans = {NULL, "\"p, 1, 1, 0, 1\"", "\"p, 1, 1, 0, 0\"", 0};
  expect_wrong_gemm(&nn_small, &trans, "transpose bit flipped");
  const sgu_mutation swz = {NULL, NULL, NULL, 1};
  expect_wrong_gemm(&nt_small, &swz, "swizzle dropped from the tensor maps");
}

TEST_CASE(fp8_a_offset_mutation_fails) {
  const sgu_mutation mu = {NULL, "gemm_wgmma_a_part_offset(rank, BLOCK_M, BLOCK_K, ES, CLUSTER)",
                           "gemm_wgmma_a_part_offset(rank, BLOCK_M, BLOCK_K, 2, CLUSTER)", 0};
  expect_wrong_gemm(&fp8_cluster, &mu, "fp8 A part offset with 2-byte elements");
}

TEST_CASE(body_mutations_fail) {
  expect_wrong(&mma_causal, "attn_mma_softmax_row(s, NT, o, DT, r, mx, &m[r], &l[r], sl2);",
               "attn_mma_softmax_row(s, NT, o, DT, r, mx, &l[r], &m[r], sl2);",
               "attn_mma rescale arguments swapped", SIM_SCHED_ROUND_ROBIN);
  expect_wrong(&wg2, "lse[attn_lse_offset(b, h, row, a.SQ, a.HQ)]",
               "lse[attn_lse_offset(b, h, row + 1, a.SQ, a.HQ)]", "attn_wgmma LSE row + 1",
               SIM_SCHED_ROUND_ROBIN);
  expect_wrong(&dec, "      row_l[r] = L;", "      row_l[r] = 0.5f * L;",
               "attn_decode merge weight halved", SIM_SCHED_ROUND_ROBIN);
}

TEST_CASE(pipeline_mutations_fail) {
  expect_wrong(&mma_causal, "ptx_cp_async_wait<2 * STAGES - 2>();\n    __syncthreads();",
               "ptx_cp_async_wait<2 * STAGES - 1>();\n    __syncthreads();",
               "cp.async waiting one group short", SIM_SCHED_ROUND_ROBIN);
  expect_wrong(&mma_causal, "ptx_cp_async_wait<2 * STAGES - 2>();\n    __syncthreads();",
               "ptx_cp_async_wait<2 * STAGES - 2>();", "a missing __syncthreads",
               SIM_SCHED_ROUND_ROBIN);
  expect_wrong(&wg2,
               "        ptx_wgmma_wait<0>();  // O += P_{n-1} V_{n-1} is done\n"
               "        ptx_reg_fence<OACC>(o);\n"
               "        ptx_reg_fence<SACC / 2>(p);\n"
               "        release(BAR(attn_bar_vempty(sp)));",
               "        release(BAR(attn_bar_vempty(sp)));\n"
               "        ptx_wgmma_wait<0>();  // O += P_{n-1} V_{n-1} is done\n"
               "        ptx_reg_fence<OACC>(o);\n"
               "        ptx_reg_fence<SACC / 2>(p);",
               "a V stage released before its wgmma wait", SIM_SCHED_ROUND_ROBIN);
  expect_wrong(&wg2, "ptx_mbar_wait(BAR(attn_bar_kempty(s)), ptx_empty_parity(n, STAGES));",
               "ptx_mbar_wait(BAR(attn_bar_kempty(s)), ptx_full_parity(n, STAGES));",
               "a wrong mbarrier parity", SIM_SCHED_ROUND_ROBIN);
}

TEST_LIST(TEST_ENTRY(layout_errors_fail), TEST_ENTRY(fp8_a_offset_mutation_fails),
          TEST_ENTRY(body_mutations_fail), TEST_ENTRY(pipeline_mutations_fail))
