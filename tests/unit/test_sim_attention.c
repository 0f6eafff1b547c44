/* The attention templates' kernel bodies on the sim (sim/sim.h) against a double-precision
 * reference from attn_abi.h's definition, with NaN in every K and V row past a sequence's
 * length: attn_mma (causal SQ < SKV and SQ > SKV, ragged, head dims 64, 128 and 256, f16 and bf16),
 * attn_wgmma (1 and 2 consumers, BLOCK_N 80 and 128, ragged, causal, D 256), attn_decode (paged,
 * split-KV, ragged).  The mutations it catches: tests/long/test_sim_mutants.c. */
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
      {"attn_mma", "sm_90", "f16", "1x2:1x64:100x256", NULL,
       "BLOCK_M=64,BLOCK_N=32,WARPS=4,STAGES=2,Q_IN_REGS=0"},
  };
  expect_ok(&mma_causal, SIM_SCHED_RANDOM);
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) expect_ok(&cs[i], SIM_SCHED_ROUND_ROBIN);
}

TEST_CASE(attn_wgmma_cases) {
  static const sau_case c1 = {"attn_wgmma", "sm_90a",
                              "f16",        "2x2:2x200:137x64",
                              "137,50",     "CONSUMERS=1,BLOCK_N=80,STAGES=3,OVERLAP=0"};
  static const sau_case d256 = {"attn_wgmma", "sm_90a",
                                "bf16",       "1x2:1x64:100x256:causal",
                                NULL,         "CONSUMERS=1,BLOCK_N=64,STAGES=2,OVERLAP=1"};
  expect_ok(&wg2, SIM_SCHED_CONSUMER_FIRST);
  expect_ok(&d256, SIM_SCHED_RANDOM);
  expect_ok(&c1, SIM_SCHED_PRODUCER_FIRST);
}

TEST_CASE(attn_decode_cases) {
  static const sau_case c1 = {"attn_decode", "sm_90",
                              "f16",         "3x4:4x1:300x64",
                              "300,1,129",   "SPLITS=1,BLOCK_N=64,WARPS=4,STAGES=1"};
  expect_ok(&dec, SIM_SCHED_RANDOM);
  expect_ok(&c1, SIM_SCHED_ROUND_ROBIN);
}

TEST_LIST(TEST_ENTRY(attn_mma_cases), TEST_ENTRY(attn_wgmma_cases), TEST_ENTRY(attn_decode_cases))
