/* test_diagnose.c — a crafted candidate for every dominant limit of the design table, the
 * levers each one names (by parameter role), and the error paths. */
/* stages: model */
#include "test.h"
#include "model/diagnose.h"

static const char *const params[] = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "WARPS_M",
                                     "WARPS_N", "STAGES",  "SPLIT_K", "LAYOUT"};
static param_roles roles;
static rt_vars config;
static roofline_ceilings h200;

/* A 4096^3 problem's FLOPs; bytes and time are chosen per case to land at given fractions. */
static diag_input base(void) {
  diag_input in;
  memset(&in, 0, sizeof in);
  in.flops = 2.0 * 4096 * 4096 * 4096;
  in.path = PATH_TC_F16;
  in.wgmma = 1;
  in.roles = &roles;
  in.config = &config;
  in.facts.grid_blocks = 264; /* exactly 2 waves at 1 block/SM on 132 SMs */
  in.facts.blocks_per_sm = 1;
  in.facts.occupancy = 0.125;
  in.facts.threads_per_block = 256;
  in.facts.registers = 128;
  snprintf(in.facts.limiter, sizeof in.facts.limiter, "registers");
  return in;
}

/* Sets time and bytes so that the FLOP and byte fractions of the H200 ceilings are ff and bf. */
static void at(diag_input *in, double ff, double bf) {
  double peak = h200.flops[in->path] * (in->path == PATH_TC_F16 && !in->wgmma ? 0.66 : 1.0);
  in->time_s = in->flops / (ff * peak);
  in->dram_bytes = bf * h200.bw * in->time_s;
}

static diagnosis run(const diag_input *in) {
  diagnosis d;
  rt_error err = {0};
  rt_status st = diagnose(in, &h200, &d, &err);
  CHECK_INT(st, RT_OK);
  if (st) fprintf(stderr, "  %s\n", err.text);
  return d;
}

/* The fixture every case reads: the roles of the GEMM parameters, a 128x64 tile and the H200's
 * spec ceilings. */
static void setup(void) {
  roles_guess(&roles, params, (int)(sizeof params / sizeof params[0]));
  rt_vars_set(&config, "BLOCK_M", 128);
  rt_vars_set(&config, "BLOCK_N", 64);
  roofline_from_spec(gpu_spec_find("h200"), &h200);
}

TEST_CASE(roles_and_spec) {
  CHECK_STR(roles.names[ROLE_TILE_M][0], "BLOCK_M");
  CHECK_STR(roles.names[ROLE_WARPS][0], "WARPS_M");
  CHECK_STR(roles.names[ROLE_WARPS][1], "WARPS_N");
  CHECK_STR(roles.names[ROLE_SPLIT_K][0], "SPLIT_K");
  CHECK_STR(roles.names[ROLE_VECTOR][0], "");
  CHECK_INT(role_parse("stages"), ROLE_STAGES);
  CHECK_INT(role_parse("nope"), -1);
  CHECK_INT(h200.sm_count, 132);
  CHECK_INT(h200.measured, 0);
  CHECK_CONTAINS(h200.gpu, "spec");
}

/* launch overhead: 5 us */
TEST_CASE(launch) {
  diag_input in = base();
  in.flops = 1e6;
  in.dram_bytes = 1e5;
  in.time_s = 5e-6;
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "launch");
  CHECK_STR(d.lever, "");
  CHECK_CONTAINS(d.sentence, "launch-bound");
}

/* compute at the roof with wgmma: stop */
TEST_CASE(compute_paths) {
  diag_input in = base();
  at(&in, 0.90, 0.05);
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "compute");
  CHECK_NEAR(d.flops_frac, 0.90, 1e-9);
  CHECK_NEAR(d.bw_frac, 0.05, 1e-9);
  CHECK_STR(d.lever, "");
  CHECK_CONTAINS(d.sentence, "at the roof, stop");
  CHECK_CONTAINS(d.sentence, "90 %");
  CHECK(d.intensity > d.ridge);

  /* compute-bound with mma.sync on sm_90: its ceiling is 66 % of wgmma's; the lever is a path */
  in = base();
  in.wgmma = 0;
  at(&in, 0.70, 0.05);
  d = run(&in);
  CHECK_STR(d.limit, "compute");
  CHECK_NEAR(d.flops_frac, 0.70, 1e-9);
  CHECK_CONTAINS(d.sentence, "wgmma");

  /* compute-bound on fp32 SIMT: tensor cores are the faster path */
  in = base();
  in.path = PATH_SIMT_F32;
  at(&in, 0.70, 0.05);
  d = run(&in);
  CHECK_STR(d.limit, "compute");
  CHECK_CONTAINS(d.sentence, "tensor cores");
}

/* compute-bound on tf32 below the roof: a template lever (deeper, larger tiles) */
TEST_CASE(compute_lever_in_space) {
  diag_input in = base();
  in.path = PATH_TC_TF32;
  at(&in, 0.70, 0.05);
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "compute");
  CHECK_STR(d.lever, "BLOCK_K+,BLOCK_N+,BLOCK_M+");

  /* the same with the template's space: BLOCK_K has only 64 and BLOCK_M is at its largest, so
   * the lever names BLOCK_N alone, and its move skips BLOCK_N=128, which no valid configuration
   * has (a constraint the manifest would state), for 256; from 64x256 only BLOCK_M+ is left;
   * with every tile at its end, none and the sentence says so */
  {
    space *dom = space_new();
    static const long long bm[] = {64, 128}, bn[] = {64, 128, 256}, bk[] = {64};
    rt_error e = {0};
    CHECK_INT(space_add_param(dom, "BLOCK_M", 2, bm, NULL, &e), RT_OK);
    CHECK_INT(space_add_param(dom, "BLOCK_N", 3, bn, NULL, &e), RT_OK);
    CHECK_INT(space_add_param(dom, "BLOCK_K", 1, bk, NULL, &e), RT_OK);
    static const uint16_t cfgs[][3] = {{1, 0, 0}, {1, 2, 0}, {0, 2, 0}};
    for (int k = 0; k < 3; k++) CHECK_INT(space_add_config(dom, cfgs[k], &e), RT_OK);
    CHECK_INT(space_finish(dom, &e), RT_OK);
    rt_vars at_end;
    rt_vars_clear(&at_end);
    rt_vars_set(&at_end, "BLOCK_M", 128);
    rt_vars_set(&at_end, "BLOCK_N", 64);
    rt_vars_set(&at_end, "BLOCK_K", 64);
    in.domains = dom;
    in.config = &at_end;
    d = run(&in);
    CHECK_STR(d.lever, "BLOCK_N+");
    CHECK_STR(d.move, "BLOCK_N=256");
    CHECK_CONTAINS(d.sentence, "a larger BLOCK_N");
    rt_vars_set(&at_end, "BLOCK_M", 64);
    rt_vars_set(&at_end, "BLOCK_N", 256);
    d = run(&in);
    CHECK_STR(d.lever, "BLOCK_M+");
    CHECK_STR(d.move, "BLOCK_M=128");
    rt_vars_set(&at_end, "BLOCK_M", 128);
    d = run(&in);
    CHECK_STR(d.lever, "");
    CHECK_STR(d.move, "");
    CHECK_CONTAINS(d.sentence, "cannot go further");
    space_free(dom);
  }
}

/* memory: 80 % of 4.3 TB/s; the smaller tile side (BLOCK_N = 64) first */
TEST_CASE(memory) {
  diag_input in = base();
  at(&in, 0.20, 0.80);
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "memory");
  CHECK_STR(d.lever, "BLOCK_N+,BLOCK_M+,SPLIT_K-");
  CHECK_CONTAINS(d.sentence, "memory-bound at 80 % of the 4.3 TB/s copy bandwidth");
  CHECK_CONTAINS(d.sentence, "a larger BLOCK_N");
  CHECK(d.intensity < d.ridge);
  CHECK_NEAR(d.achieved_bw, 0.80 * h200.bw, 1e3);
}

/* memory-bound on a 1-row problem: BLOCK_M = 128 already spans M, so a larger one re-reads
   * nothing less and the lever leaves it out; with no tile to raise, the sentence follows the
   * first lever that is left (fewer split-K partial sums) */
TEST_CASE(one_row_and_padding) {
  diag_input in;
  diagnosis d;
  {
    rt_vars decode;
    rt_vars_clear(&decode);
    rt_vars_set(&decode, "M", 1);
    rt_vars_set(&decode, "N", 4096);
    rt_vars_set(&decode, "BLOCK_M", 128);
    rt_vars_set(&decode, "BLOCK_N", 64);
    in = base();
    in.config = &decode;
    at(&in, 0.20, 0.80);
    d = run(&in);
    CHECK_STR(d.limit, "memory");
    CHECK_STR(d.lever, "BLOCK_N+,SPLIT_K-");
    rt_vars_set(&decode, "BLOCK_N", 4096);
    d = run(&in);
    CHECK_STR(d.lever, "SPLIT_K-");
    CHECK_CONTAINS(d.sentence, "a smaller SPLIT_K writes fewer partial sums");

    /* padding: the 128-row tile does 128x the math of the 1-row problem, and at the mma rate
     * that math is what takes the time (70 % of the roof counting it, 0.5 % of the useful;
     * 1x16384x16384, so that the time is well above the launch overhead) */
    rt_vars_set(&decode, "BLOCK_N", 64);
    rt_vars_set(&decode, "N", 16384);
    in = base();
    in.config = &decode;
    in.flops = 2.0 * 1 * 16384 * 16384;
    in.executed_flops = 128 * in.flops;
    in.time_s = in.executed_flops / (0.70 * h200.flops[PATH_TC_F16]);
    in.dram_bytes = 0.30 * h200.bw * in.time_s;
    d = run(&in);
    CHECK_STR(d.limit, "compute");
    CHECK_CONTAINS(d.sentence, "compute-bound on padding");
    CHECK_CONTAINS(d.sentence, "128.0x the problem's math");
    CHECK_CONTAINS(d.sentence, "at 70 % of");
    CHECK_CONTAINS(d.sentence, "1 % without"); /* 0.55 % rounds to 1 */
    CHECK_STR(d.lever, "BLOCK_M-,BLOCK_N-");   /* M pads 128x, N not at all */
    CHECK_CONTAINS(d.sentence, "a smaller BLOCK_M wastes less");
    /* the same time without the padded work counted is nowhere near any roof */
    in.executed_flops = 0;
    d = run(&in);
    CHECK(strcmp(d.limit, "compute") != 0);
    /* padding that does not dominate the time (memory does) is not named */
    in.executed_flops = 128 * in.flops;
    in.dram_bytes = 0.9 * h200.bw * in.time_s;
    d = run(&in);
    CHECK_STR(d.limit, "memory");
  }
}

/* L2: DRAM far from its roof, but the loads through L2 (every re-read) near its bandwidth */
TEST_CASE(l2) {
  diag_input in = base();
  at(&in, 0.30, 0.20);
  in.l2_bytes = 0.80 * h200.l2_bw * in.time_s;
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "memory");
  CHECK_CONTAINS(d.sentence, "L2-bound");
  CHECK_CONTAINS(d.sentence, "80 %");
  CHECK_STR(d.lever, "BLOCK_N+,BLOCK_M+,BLOCK_K+");
  CHECK_NEAR(h200.l2_bw, ROOFLINE_L2_BW_FACTOR * h200.bw, 1.0);
  CHECK_NEAR(roofline_dram_bytes(1000.0, 100.0, 9.0), 100.0 + 900.0 / 3.0, 1e-9);
  CHECK_NEAR(roofline_dram_bytes(1000.0, 0.0, 9.0), 1000.0, 1e-9);
}

TEST_CASE(spills) {
  diag_input in = base();
  at(&in, 0.30, 0.30);
  in.facts.spill_stores = 48;
  in.facts.spill_loads = 48;
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "spills");
  CHECK_STR(d.lever, "BLOCK_M-,BLOCK_N-,WARPS_M+,WARPS_N+");
  CHECK_CONTAINS(d.sentence, "96 bytes");
}

/* waves: half the GPU idle (66 blocks, 1 per SM) */
TEST_CASE(waves) {
  diag_input in = base();
  at(&in, 0.30, 0.30);
  in.facts.grid_blocks = 66;
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "waves");
  CHECK_NEAR(d.waves, 0.5, 1e-12);
  CHECK_NEAR(d.tail, 0.5, 1e-12);
  CHECK_STR(d.lever, "SPLIT_K+,BLOCK_M-,BLOCK_N-");
  CHECK_CONTAINS(d.sentence, "raising SPLIT_K");
}

/* a persistent grid: 132 resident blocks doing 512 blocks' worth of work take 4 rounds of
   * 3.88 waves' worth; one of 66 blocks (the rest left idle) doing 512 takes 8 rounds */
TEST_CASE(persistent_grid_and_tail) {
  {
    double waves, full;
    roofline_waves(132, 512, 132, &waves, &full);
    CHECK_NEAR(waves, 512.0 / 132.0, 1e-12);
    CHECK_NEAR(full, 4, 1e-12);
    roofline_waves(66, 512, 132, &waves, &full);
    CHECK_NEAR(full, 8, 1e-12);
    roofline_waves(66, 0, 132, &waves, &full); /* no work given: the grid's blocks, one round */
    CHECK_NEAR(waves, 0.5, 1e-12);
    CHECK_NEAR(full, 1, 1e-12);
    roofline_waves(0, 0, 132, &waves, &full);
    CHECK_NEAR(full, 0, 1e-12);
  }
  diag_input in = base();
  at(&in, 0.30, 0.30);
  in.facts.grid_blocks = 132;
  in.facts.work_blocks = 152;
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "waves");
  CHECK_NEAR(d.waves, 152.0 / 132.0, 1e-12);
  CHECK_NEAR(d.tail, 1.0 - 20.0 / 132.0, 1e-12);

  /* tail: 152 blocks = 1.15 waves */
  in = base();
  at(&in, 0.30, 0.30);
  in.facts.grid_blocks = 152;
  d = run(&in);
  CHECK_STR(d.limit, "waves");
  CHECK_NEAR(d.waves, 152.0 / 132.0, 1e-12);
  CHECK_NEAR(d.tail, 1.0 - 20.0 / 132.0, 1e-12);
  CHECK_STR(d.lever, "BLOCK_M-,BLOCK_N-,SPLIT_K+");
  char idle[64];
  CHECK_STR(diag_idle_words(&d, idle, sizeof idle), "85 % of the last wave");

  /* a persistent grid of 66 blocks on a GPU that holds 132 doing 512 blocks' work: 8 rounds
   * for 3.88 waves, 4.12 waves' worth idle; the words give the GPU's idle share (52 %), never
   * "412 % of the last wave" */
  in = base();
  at(&in, 0.30, 0.30);
  in.facts.grid_blocks = 66;
  in.facts.work_blocks = 512;
  d = run(&in);
  CHECK_STR(d.limit, "waves");
  CHECK_STR(diag_idle_words(&d, idle, sizeof idle), "52 % of the GPU throughout");
  CHECK_CONTAINS(d.sentence, "leave 52 % of the GPU throughout idle");
  CHECK(strstr(d.sentence, "412") == NULL);
}

/* occupancy limited by each limiter */
TEST_CASE(occupancy) {
  diag_input in = base();
  at(&in, 0.20, 0.20);
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "occupancy");
  CHECK_STR(d.lever, "BLOCK_M-,BLOCK_N-,WARPS_M+,WARPS_N+");
  CHECK_CONTAINS(d.sentence, "limited by registers");
  snprintf(in.facts.limiter, sizeof in.facts.limiter, "smem");
  d = run(&in);
  CHECK_STR(d.limit, "occupancy");
  CHECK_STR(d.lever, "STAGES-,BLOCK_K-,BLOCK_M-,BLOCK_N-");
  snprintf(in.facts.limiter, sizeof in.facts.limiter, "threads");
  d = run(&in);
  CHECK_STR(d.lever, "WARPS_M-,WARPS_N-");
  snprintf(in.facts.limiter, sizeof in.facts.limiter, "blocks");
  d = run(&in);
  CHECK_STR(d.lever, "BLOCK_N+,BLOCK_M+,WARPS_M+,WARPS_N+");
}

/* latency: occupancy already high, both roofs far: more pipeline stages */
TEST_CASE(latency_and_streaming) {
  diag_input in = base();
  at(&in, 0.20, 0.20);
  in.facts.occupancy = 0.75;
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "occupancy");
  CHECK_STR(d.lever, "STAGES+");
  CHECK_CONTAINS(d.sentence, "latency-bound");
  /* a streaming template without stages (gemm_skinny): more unrolled loads in flight */
  {
    static const char *const skinny[] = {"ROWS", "COLS", "WARPS", "UNROLL", "SPLIT_K"};
    param_roles sr;
    memset(&sr, 0, sizeof sr);
    roles_add(&sr, ROLE_TILE_M, "ROWS");
    roles_add(&sr, ROLE_TILE_N, "COLS");
    roles_guess(&sr, skinny, 5);
    in.roles = &sr;
    d = run(&in);
    CHECK_STR(d.lever, "UNROLL+");
    CHECK_CONTAINS(d.sentence, "raising UNROLL hides more latency");

    /* memory-bound at 70 % with every input read once (the cost formula's bytes are the
     * compulsory ones): no tile to raise; more loads in flight is the lever */
    rt_vars sk;
    rt_vars_clear(&sk);
    rt_vars_set(&sk, "ROWS", 1);
    rt_vars_set(&sk, "COLS", 4);
    rt_vars_set(&sk, "M", 1);
    rt_vars_set(&sk, "N", 14336);
    in = base();
    in.roles = &sr;
    in.config = &sk;
    at(&in, 0.01, 0.70);
    in.l2_bytes = in.dram_bytes;
    in.min_bytes = in.dram_bytes;
    d = run(&in);
    CHECK_STR(d.limit, "memory");
    CHECK_STR(d.lever, "SPLIT_K-,UNROLL+");
    CHECK_CONTAINS(d.sentence, "every input is read about once; a smaller SPLIT_K");
    /* with re-reads in the cost formula, a larger COLS is proposed first as before */
    in.l2_bytes = 2 * in.min_bytes;
    d = run(&in);
    CHECK_STR(d.lever, "COLS+,SPLIT_K-,UNROLL+");
    CHECK_CONTAINS(d.sentence, "a larger COLS reuses loaded data more");
    /* at 90 % of the bandwidth, unrolling has nothing left to hide */
    in.l2_bytes = in.min_bytes;
    at(&in, 0.01, 0.90);
    in.l2_bytes = in.min_bytes = in.dram_bytes;
    d = run(&in);
    CHECK_STR(d.lever, "SPLIT_K-");
    /* between the thresholds, closest to the memory roof: unrolling, said as such */
    at(&in, 0.01, 0.55);
    in.l2_bytes = in.min_bytes = in.dram_bytes;
    d = run(&in);
    CHECK_STR(d.lever, "UNROLL+");
    CHECK_CONTAINS(d.sentence, "raising UNROLL keeps more loads in flight");
  }
}

/* A row softmax's space (ROW_THREADS a tile_n, VEC, UNROLL), the configuration 64/1/1. */
static const long long sm_rt[] = {32, 64, 128, 256}, sm_vec[] = {1, 2, 4}, sm_unroll[] = {1, 2};
static int tried_mask; /* configuration i of the softmax space is measured when bit i is set */
static int mask_tried(void *ctx, size_t idx) {
  (void)ctx;
  return (tried_mask >> idx) & 1;
}
/* the cost formula of a row softmax: three passes over the row whatever ROW_THREADS is */
static double same_bytes(void *ctx, size_t idx) {
  (void)idx;
  return *(const double *)ctx;
}

/* Levers against what is measured, and words from the limit found: a memory-bound row softmax
 * (three passes: the cost formula's bytes are twice the compulsory ones, but no tile changes
 * them) is not told that a larger ROW_THREADS reuses loaded data; a move already measured is
 * skipped for the next untried one that way, and with every move measured the lever is empty
 * and the sentence says the neighbourhood is exhausted. */
TEST_CASE(levers_against_measured) {
  space *dom = space_new();
  rt_error e = {0};
  CHECK_INT(space_add_param(dom, "ROW_THREADS", 4, sm_rt, NULL, &e), RT_OK);
  CHECK_INT(space_add_param(dom, "VEC", 3, sm_vec, NULL, &e), RT_OK);
  CHECK_INT(space_add_param(dom, "UNROLL", 2, sm_unroll, NULL, &e), RT_OK);
  for (uint16_t a = 0; a < 4; a++)
    for (uint16_t b = 0; b < 3; b++)
      for (uint16_t u = 0; u < 2; u++) {
        uint16_t cfg[3] = {a, b, u};
        CHECK_INT(space_add_config(dom, cfg, &e), RT_OK);
      }
  CHECK_INT(space_finish(dom, &e), RT_OK);
  param_roles sr;
  memset(&sr, 0, sizeof sr);
  roles_add(&sr, ROLE_TILE_N, "ROW_THREADS");
  roles_add(&sr, ROLE_VECTOR, "VEC");
  roles_add(&sr, ROLE_UNROLL, "UNROLL");
  rt_vars cv;
  rt_vars_clear(&cv);
  rt_vars_set(&cv, "ROW_THREADS", 64);
  rt_vars_set(&cv, "VEC", 1);
  rt_vars_set(&cv, "UNROLL", 1);
  diag_input in = base();
  in.roles = &sr;
  in.config = &cv;
  in.domains = dom;
  at(&in, 0.01, 0.70);
  in.min_bytes = in.dram_bytes;
  in.l2_bytes = 2 * in.dram_bytes;
  double bytes = in.l2_bytes;
  /* without the cost formula to ask, a tile is a reuse lever as before */
  diagnosis d = run(&in);
  CHECK_STR(d.lever, "ROW_THREADS+,VEC+,UNROLL+");
  /* with it: ROW_THREADS moves no fewer bytes, so the lever starts at VEC, said as such */
  in.bytes_at = same_bytes;
  in.ctx = &bytes;
  d = run(&in);
  CHECK_STR(d.lever, "VEC+,UNROLL+");
  CHECK(strstr(d.sentence, "reuses") == NULL);
  CHECK_CONTAINS(d.sentence, "a larger VEC moves the bytes in fewer, wider loads");
  /* VEC=2 measured: VEC+ moves on to VEC=4 */
  in.tried = mask_tried;
  size_t vec2 = 0, vec4 = 0, unroll2 = 0;
  CHECK_INT(space_parse_config(dom, "ROW_THREADS=64,VEC=2,UNROLL=1", &vec2, &e), RT_OK);
  CHECK_INT(space_parse_config(dom, "ROW_THREADS=64,VEC=4,UNROLL=1", &vec4, &e), RT_OK);
  CHECK_INT(space_parse_config(dom, "ROW_THREADS=64,VEC=1,UNROLL=2", &unroll2, &e), RT_OK);
  tried_mask = 1 << vec2;
  d = run(&in);
  CHECK_STR(d.lever, "VEC+,UNROLL+");
  CHECK_STR(d.move, "VEC=4,UNROLL=2");
  /* every move measured: no lever, and the sentence says why */
  tried_mask = 1 << vec2 | 1 << vec4 | 1 << unroll2;
  d = run(&in);
  CHECK_STR(d.lever, "");
  CHECK_STR(d.move, "");
  CHECK_CONTAINS(d.sentence, "this neighbourhood is exhausted");
  tried_mask = 0;
  space_free(dom);
}

/* between the thresholds: the closer roof */
TEST_CASE(between_thresholds) {
  diag_input in = base();
  at(&in, 0.30, 0.55);
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "memory");
  CHECK_CONTAINS(d.sentence, "closest to the memory roof");
  in = base();
  at(&in, 0.55, 0.20);
  d = run(&in);
  CHECK_STR(d.limit, "compute");
  CHECK_STR(d.lever, "STAGES+,BLOCK_N+,BLOCK_M+");
}

/* no roles (a replayed foreign kernel): the limit is still named, the lever is empty */
TEST_CASE(no_roles) {
  diag_input in = base();
  in.roles = NULL;
  at(&in, 0.20, 0.80);
  diagnosis d = run(&in);
  CHECK_STR(d.limit, "memory");
  CHECK_STR(d.lever, "");
  CHECK_CONTAINS(d.sentence, "more reuse");
}

/* measured ceilings replace the spec */
TEST_CASE(measured_ceilings) {
  roofline_ceilings measured = h200;
  measured.bw = 2.0e12;
  measured.measured = 1;
  diag_input in = base();
  diagnosis d;
  in.time_s = 1e-3;
  in.dram_bytes = 1.8e9; /* 1.8 TB/s: 90 % of the measured, 42 % of the spec ceiling */
  in.flops = 1e9;
  rt_error err = {0};
  CHECK_INT(diagnose(&in, &measured, &d, &err), RT_OK);
  CHECK_STR(d.limit, "memory");
  CHECK_NEAR(d.bw_frac, 0.9, 1e-9);
}

/* a fused epilogue: the sentence says what it saves against a separate pass (4096 x 14336
 * bf16 written and read once more: 235 MB, 55 us at 4.3 TB/s) */
TEST_CASE(fused_epilogue) {
  diag_input in = base();
  at(&in, 0.70, 0.10);
  in.fused_bytes = 2.0 * 2 * 4096 * 14336;
  diagnosis d = run(&in);
  CHECK_CONTAINS(d.sentence,
                 "the fused epilogue saves 235 MB of DRAM traffic against a separate pass (55 us");
  in.fused_bytes = 0;
  d = run(&in);
  CHECK(!strstr(d.sentence, "fused"));
}

/* errors, and the instruction path of each dtype */
TEST_CASE(errors_and_paths) {
  diag_input in = base();
  diagnosis d;
  rt_error err = {0};
  in.time_s = 0;
  CHECK_INT(diagnose(&in, &h200, &d, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "positive time");
  in.time_s = 1e-3;
  roofline_ceilings none;
  memset(&none, 0, sizeof none);
  CHECK_INT(diagnose(&in, &none, &d, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "ceilings");
  CHECK_INT(roofline_path_for_dtype("bf16", 0), PATH_TC_F16);
  CHECK_INT(roofline_path_for_dtype("f32", 0), PATH_SIMT_F32);
  CHECK_INT(roofline_path_for_dtype("f32", 1), PATH_TC_TF32);
  CHECK_INT(roofline_path_for_dtype("e4m3", 0), PATH_TC_F8);
  CHECK_INT(roofline_path_for_dtype("e5m2", 1), PATH_TC_F8);
}

/* measured counters: the roofline position from measured DRAM bytes (here 3x the formula's:
   * memory-bound where the model said latency), occupancy from the measured warps, the top stall
   * named, and the facts that were measured listed */
TEST_CASE(measured_counters) {
  diag_input in;
  diagnosis d;
  {
    in = base();
    at(&in, 0.20, 0.20);
    in.facts.occupancy = 0.75;
    hw_counters hw;
    memset(&hw, 0, sizeof hw);
    hw.measured = 1;
    hw.dram_read_bytes = 2.5 * in.dram_bytes;
    hw.dram_write_bytes = 0.5 * in.dram_bytes;
    hw.l2_bytes = 4 * in.dram_bytes;
    hw.occupancy = 0.31;
    snprintf(hw.stalls, sizeof hw.stalls, "long_scoreboard:0.41,barrier:0.22,wait:0.11");
    in.measured = &hw;
    d = run(&in);
    CHECK_STR(d.basis, "dram,l2,occupancy,stalls");
    CHECK_STR(d.limit, "memory");
    CHECK_NEAR(d.bw_frac, 0.60, 1e-9);
    CHECK_CONTAINS(d.sentence, "memory-bound at 60 %");
    CHECK_CONTAINS(d.sentence,
                   "; measured: 41 % of stalls wait on global or local memory (long scoreboard)");
    /* the same bytes as the formula, stalled at barriers, 31 % measured occupancy against 75 %
     * calculated: occupancy-limited by its limiter, with the stall said */
    hw.dram_read_bytes = in.dram_bytes;
    hw.dram_write_bytes = 0;
    snprintf(hw.stalls, sizeof hw.stalls, "membar:0.41,wait:0.30");
    d = run(&in);
    CHECK_STR(d.limit, "occupancy");
    CHECK_CONTAINS(d.sentence, "31 % occupancy");
    CHECK_CONTAINS(d.sentence, "41 % of stalls wait on a memory barrier");
    /* measured occupancy at or above one half: latency-bound, the stall first */
    hw.occupancy = 0.62;
    d = run(&in);
    CHECK_CONTAINS(d.sentence,
                   "latency-bound: 41 % of stalls wait on a memory barrier; 20 % of compute");
    CHECK_CONTAINS(d.sentence, "at 62 % measured occupancy");
    CHECK(!strstr(d.sentence, "; measured: ")); /* said once */
    /* the special-function pipe busy at 97 % (a Coulomb sum of rsqrt), the FMA pipe at 80 % and
     * the fp32 roof at 70 %: bound by the XU, not "compute-bound at the roof" */
    in = base();
    at(&in, 0.70, 0.10);
    memset(&hw, 0, sizeof hw);
    hw.measured = 1;
    hw.dram_read_bytes = in.dram_bytes;
    hw.xu_pipe = 0.97;
    hw.fma_pipe = 0.80;
    in.measured = &hw;
    d = run(&in);
    CHECK_STR(d.limit, "xu");
    CHECK_CONTAINS(d.sentence, "special-function unit (XU: rsqrt, exp, sin ...) at 97 %");
    CHECK_STR(d.lever, "");
    hw.xu_pipe = 0.55; /* under the near-roof share: the fp32 roof decides */
    d = run(&in);
    CHECK_STR(d.limit, "compute");
    hw.xu_pipe = 0.75; /* near its roof but below the FMA pipe: the FMA pipe is the limit */
    d = run(&in);
    CHECK_STR(d.limit, "compute");
    /* no counters: nothing is said to be measured */
    in.measured = NULL;
    d = run(&in);
    CHECK_STR(d.basis, "");
    CHECK(!strstr(d.sentence, "stalls"));
  }
}

TEST_LIST_FIXTURE(setup, NULL, TEST_ENTRY(roles_and_spec), TEST_ENTRY(launch),
                  TEST_ENTRY(compute_paths), TEST_ENTRY(compute_lever_in_space), TEST_ENTRY(memory),
                  TEST_ENTRY(one_row_and_padding), TEST_ENTRY(l2), TEST_ENTRY(spills),
                  TEST_ENTRY(waves), TEST_ENTRY(persistent_grid_and_tail), TEST_ENTRY(occupancy),
                  TEST_ENTRY(latency_and_streaming), TEST_ENTRY(between_thresholds),
                  TEST_ENTRY(no_roles), TEST_ENTRY(measured_ceilings), TEST_ENTRY(fused_epilogue),
                  TEST_ENTRY(errors_and_paths), TEST_ENTRY(measured_counters),
                  TEST_ENTRY(levers_against_measured))
