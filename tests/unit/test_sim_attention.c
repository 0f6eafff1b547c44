/* The attention templates' kernel bodies on the sim (sim/sim.h) against a double-precision
 * reference from attn_abi.h's definition, with NaN in every K and V row past a sequence's
 * length: attn_mma (causal SQ < SKV and SQ > SKV, ragged, head dims 64 and 128, f16 and bf16),
 * attn_wgmma (1 and 2 consumers, BLOCK_N 80 and 128, ragged, causal), attn_decode (paged,
 * split-KV, ragged).  And the mutations bench/mutations.sh's kernel-body group counts fail:
 * attn_mma's rescale arguments swapped, attn_wgmma's LSE row + 1, attn_decode's merge weight
 * halved; cp.async waiting one group short, a missing __syncthreads, a V stage released before
 * its wgmma wait, a wrong mbarrier parity (a deadlock). */
/* stages: sim kernels */
#include "sim_attn_util.h"

static void expect_ok(const sau_case *c, sim_schedule s) {
  char msg[1024];
  const long bad = sau_run_case(c, NULL, s, msg, sizeof msg);
  if (bad != 0)
    fprintf(stderr, "%s %s %s [%s] (%s): %ld wrong: %s\n", c->tmpl, c->dtype, c->shape, c->config,
            sim_schedule_name(s), bad, msg);
  CHECK_INT(bad, 0);
}

static void expect_wrong(const sau_case *c, const char *from, const char *to, const char *what,
                         sim_schedule s) {
  char msg[1024];
  const sgu_mutation mu = {NULL, from, to, 0};
  const long bad = sau_run_case(c, &mu, s, msg, sizeof msg);
  fprintf(stderr, "mutation %s: %ld wrong (%s)\n", what, bad, msg);
  CHECK(bad != 0 && !strstr(msg, "not found once"));
}

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

TEST_CASE(attn_mma_cases) {
  static const sau_case cs[] = {
      {"attn_mma", "sm_90", "f16", "1x2:1x200:90x64:causal", NULL,
       "BLOCK_M=64,BLOCK_N=64,WARPS=4,STAGES=3"},
      {"attn_mma", "sm_80", "bf16", "2x2:1x70:130x64", "130,0",
       "BLOCK_M=32,BLOCK_N=32,WARPS=2,STAGES=2"},
  };
  expect_ok(&mma_causal, SIM_SCHED_RANDOM);
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) expect_ok(&cs[i], SIM_SCHED_ROUND_ROBIN);
}

TEST_CASE(attn_wgmma_cases) {
  static const sau_case c1 = {"attn_wgmma", "sm_90a",
                              "f16",        "2x2:2x200:137x64",
                              "137,50",     "CONSUMERS=1,BLOCK_N=80,STAGES=3,OVERLAP=0"};
  expect_ok(&wg2, SIM_SCHED_CONSUMER_FIRST);
  expect_ok(&c1, SIM_SCHED_PRODUCER_FIRST);
}

TEST_CASE(attn_decode_cases) {
  static const sau_case c1 = {"attn_decode", "sm_90",
                              "f16",         "3x4:4x1:300x64",
                              "300,1,129",   "SPLITS=1,BLOCK_N=64,WARPS=4,STAGES=1"};
  expect_ok(&dec, SIM_SCHED_RANDOM);
  expect_ok(&c1, SIM_SCHED_ROUND_ROBIN);
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

TEST_LIST(TEST_ENTRY(attn_mma_cases), TEST_ENTRY(attn_wgmma_cases), TEST_ENTRY(attn_decode_cases),
          TEST_ENTRY(body_mutations_fail), TEST_ENTRY(pipeline_mutations_fail))
