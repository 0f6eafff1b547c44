/* test_occupancy.c — worked examples for the occupancy calculator, each done by hand below with
 * the formulas of occupancy.h and the arch_spec numbers (regs_per_sm 65536, unit 256 per warp;
 * smem unit 128 + 1024 reserved per block; sm_80 2048 threads/32 blocks/164 KiB, sm_86 1536/16/
 * 100 KiB, sm_89 1536/24/100 KiB, sm_90 2048/32/228 KiB). */
/* stages: model */
#include "test.h"
#include "model/occupancy.h"

static occupancy run(const char *arch, int threads, int regs, int smem_static, int smem_dyn) {
  occupancy o;
  occupancy_input in = {threads, regs, smem_static, smem_dyn};
  rt_error err = {0};
  rt_status s = occupancy_compute(arch_spec_find(arch), &in, &o, &err);
  if (s) fprintf(stderr, "occupancy_compute(%s): %s\n", arch, err.text);
  return o;
}

TEST_CASE(classic) {
  occupancy o;
  /* 1. sm_80, 256 threads x 64 registers, no smem (the Programming Guide / calculator's classic
   *    case): 64*32 = 2048 regs per warp -> 65536/2048 = 32 warps -> 32/8 = 4 blocks;
   *    warps 4*8 = 32 of 64 = 50 %, limited by registers. */
  o = run("sm_80", 256, 64, 0, 0);
  CHECK_INT(o.blocks_per_sm, 4);
  CHECK_INT(o.active_warps, 32);
  CHECK_NEAR(o.fraction, 0.5, 1e-12);
  CHECK_STR(o.limiter, "registers");
  CHECK_INT(o.regs_per_warp, 2048);
}

TEST_CASE(register_rounding) {
  occupancy o;
  /* 2. register rounding, sm_80, 256 threads x 65 registers: 65*32 = 2080 -> 2304 (9 units);
   *    65536/2304 = 28 warps -> 28/8 = 3 blocks; 24 warps = 37.5 %. */
  o = run("sm_80", 256, 65, 0, 0);
  CHECK_INT(o.regs_per_warp, 2304);
  CHECK_INT(o.blocks_per_sm, 3);
  CHECK_NEAR(o.fraction, 0.375, 1e-12);
  CHECK_STR(o.limiter, "registers");
}

TEST_CASE(smem_sm90) {
  occupancy o;
  /* 3. sm_90, 128 threads x 32 regs, 48 KiB dynamic smem: regs 1024/warp -> 64 warps -> 16
   *    blocks; smem 49152 + 1024 = 50176 per block -> 233472/50176 = 4 blocks; threads 64/4 = 16;
   *    so 4 blocks, 16 warps = 25 %, limited by smem. */
  o = run("sm_90", 128, 32, 0, 48 * 1024);
  CHECK_INT(o.smem_per_block, 50176);
  CHECK_INT(o.by_smem, 4);
  CHECK_INT(o.by_registers, 16);
  CHECK_INT(o.blocks_per_sm, 4);
  CHECK_NEAR(o.fraction, 0.25, 1e-12);
  CHECK_STR(o.limiter, "smem");
}

TEST_CASE(smem_rounding) {
  occupancy o;
  /* 4. static + dynamic smem with rounding, sm_80: 100 + 20000 = 20100 -> 20224 (158 units)
   *    + 1024 = 21248 -> 167936/21248 = 7 blocks of 64 threads (2 warps): 14 warps. */
  o = run("sm_80", 64, 16, 100, 20000);
  CHECK_INT(o.smem_per_block, 21248);
  CHECK_INT(o.blocks_per_sm, 7);
  CHECK_INT(o.active_warps, 14);
  CHECK_STR(o.limiter, "smem");
}

TEST_CASE(big_block) {
  occupancy o;
  /* 5. sm_86, 1024 threads x 32 regs: 32 warps per block; warp slots 48/32 = 1 block; regs
   *    1024/warp -> 64 warps -> 2 blocks; 1 block = 32 of 48 warps = 66.7 %, limited by threads. */
  o = run("sm_86", 1024, 32, 0, 0);
  CHECK_INT(o.blocks_per_sm, 1);
  CHECK_NEAR(o.fraction, 32.0 / 48.0, 1e-12);
  CHECK_STR(o.limiter, "threads");
}

TEST_CASE(block_limit) {
  occupancy o;
  /* 6. sm_89, 32 threads x 16 regs: warp slots 48, regs 128 warps, blocks 24 -> 24 blocks,
   *    24 warps = 50 %, limited by the block limit. */
  o = run("sm_89", 32, 16, 0, 0);
  CHECK_INT(o.blocks_per_sm, 24);
  CHECK_NEAR(o.fraction, 0.5, 1e-12);
  CHECK_STR(o.limiter, "blocks");
}

TEST_CASE(max_registers) {
  occupancy o;
  /* 7. sm_90, 256 threads x 255 regs: 8160 -> 8192 per warp -> 8 warps -> 1 block = 12.5 %. */
  o = run("sm_90", 256, 255, 0, 0);
  CHECK_INT(o.blocks_per_sm, 1);
  CHECK_NEAR(o.fraction, 0.125, 1e-12);
  CHECK_STR(o.limiter, "registers");
}

TEST_CASE(cannot_launch) {
  occupancy o;
  /* 8. cannot launch: more smem than the opt-in maximum, more threads than 1024, > 255 regs */
  o = run("sm_90", 128, 32, 0, 232448 + 1);
  CHECK_INT(o.blocks_per_sm, 0);
  CHECK_STR(o.limiter, "smem");
  o = run("sm_80", 1056, 32, 0, 0);
  CHECK_INT(o.blocks_per_sm, 0);
  CHECK_STR(o.limiter, "threads");
  o = run("sm_80", 128, 256, 0, 0);
  CHECK_INT(o.blocks_per_sm, 0);
  CHECK_STR(o.limiter, "registers");
  /* exactly the opt-in maximum still fits once: 232448 + 1024 = 233472 = the SM's 228 KiB */
  o = run("sm_90", 128, 32, 0, 232448);
  CHECK_INT(o.blocks_per_sm, 1);
}

TEST_CASE(unknown_registers) {
  occupancy o;
  /* 9. registers 0 (unknown) never limits; sm_90 1 warp per block hits the 32-block limit */
  o = run("sm_90", 32, 0, 0, 0);
  CHECK_INT(o.blocks_per_sm, 32);
  CHECK_STR(o.limiter, "blocks");
}

TEST_CASE(ties) {
  occupancy o;
  /* ties: sm_80, 256 threads x 32 regs fills the warp slots (8 blocks) and the register file
   *    (1024/warp -> 64 warps -> 8 blocks) at once: 100 %, named after the warp slots */
  o = run("sm_80", 256, 32, 0, 0);
  CHECK_INT(o.blocks_per_sm, 8);
  CHECK_NEAR(o.fraction, 1.0, 1e-12);
  CHECK_STR(o.limiter, "threads");
  CHECK_INT(o.by_registers, 8);
}

TEST_CASE(turing) {
  occupancy o;
  /* sm_75 (Turing: 1024 threads, 16 blocks, 64 KiB, smem unit 256, none reserved), the recorded
   * convolution's best: 256 threads x 62 regs (-> 64: 2048 per warp -> 32 warps -> 4 blocks),
   * 15904 B smem (-> 16128: 65536/16128 = 4 blocks), threads 32/8 = 4: 4 blocks, 100 %, named
   * after the warp slots */
  o = run("sm_75", 256, 62, 15904, 0);
  CHECK_INT(o.smem_per_block, 16128);
  CHECK_INT(o.blocks_per_sm, 4);
  CHECK_NEAR(o.fraction, 1.0, 1e-12);
  CHECK_STR(o.limiter, "threads");
}

TEST_CASE(coulomb) {
  occupancy o;
  /* the recorded Coulomb sum: 64 threads, 44 regs (-> 48: 1536 per warp -> 42 warps -> 21
   * blocks), no shared memory at all (no limit from it), threads 32/2 = 16: 16 blocks by the
   * per-SM block limit, 32 warps = 100 % */
  o = run("sm_75", 64, 44, 0, 0);
  CHECK_INT(o.blocks_per_sm, 16);
  CHECK_NEAR(o.fraction, 1.0, 1e-12);
  CHECK(o.by_smem >= 16);
}

TEST_CASE(bad_input) {
  occupancy o;
  /* bad input is an error, not a crash */
  occupancy_input bad = {0, 32, 0, 0};
  rt_error err = {0};
  CHECK_INT(occupancy_compute(arch_spec_find("sm_90"), &bad, &o, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "threads");
  CHECK_INT(occupancy_compute(NULL, &bad, &o, NULL), RT_ERR_INVALID);
}

TEST_CASE(facts) {
  /* facts in, facts out */
  static_facts f = {0};
  f.threads_per_block = 256;
  f.registers = 64;
  CHECK_INT(occupancy_fill_facts(arch_spec_find("sm_80"), &f, NULL), RT_OK);
  CHECK_INT(f.blocks_per_sm, 4);
  CHECK_NEAR(f.occupancy, 0.5, 1e-12);
  CHECK_STR(f.limiter, "registers");
}

TEST_LIST(TEST_ENTRY(classic), TEST_ENTRY(register_rounding), TEST_ENTRY(smem_sm90),
          TEST_ENTRY(smem_rounding), TEST_ENTRY(big_block), TEST_ENTRY(block_limit),
          TEST_ENTRY(max_registers), TEST_ENTRY(cannot_launch), TEST_ENTRY(unknown_registers),
          TEST_ENTRY(ties), TEST_ENTRY(turing), TEST_ENTRY(coulomb), TEST_ENTRY(bad_input),
          TEST_ENTRY(facts))
