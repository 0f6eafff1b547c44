/* test_recorded.c — a recorded configuration diagnosed as a GPU run is (recorded.h), and the
 * pre-run features of a configuration (features.h), on the project's own KTT fixture
 * (tests/data/ktfiles/ktt_counters.json, "recorded" on an RTX 2080 Ti) and on numbers worked by
 * hand. */
/* stages: model */
#include <math.h>

#include "test.h"
#include "model/features.h"
#include "model/recorded.h"
#include "template/ktfile.h"

TEST_CASE(diagnose) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/ktfiles/ktt_counters.json", test_source_dir());
  ktfile *kf = NULL;
  rt_error err = {0};
  CHECK_INT(ktfile_load(path, &kf, &err), RT_OK);
  if (!kf) return;
  const gpu_spec *gpu = gpu_spec_match_name(kf->device_name);
  CHECK(gpu == gpu_spec_find("rtx2080ti"));
  size_t idx;
  /* WG_X=32 (64 threads), 40 registers (1280 per warp: 51 warps, 25 blocks), 1 KiB of shared
   * memory (64 blocks), 2 warps a block (16 blocks by warp slots and by the block limit): 16
   * blocks, 100 % occupancy calculated; 50 % measured; 300 us for 48 kB of DRAM traffic and
   * 2e6 fp32 instructions counted as 4e6 FLOPs: far from both roofs, latency-bound */
  CHECK_INT(ktfile_find(kf, "WG_X=32,UNROLL=2", &idx, &err), RT_OK);
  candidate_result r;
  ktfile_result(kf, idx, &r);
  CHECK_INT(recorded_diagnose(&r, gpu, NULL, kf->space, idx, &err), RT_OK);
  CHECK_INT(r.facts.blocks_per_sm, 16);
  CHECK_NEAR(r.facts.occupancy, 1.0, 1e-12);
  CHECK_NEAR(r.flops, 4e6, 1e-6);
  CHECK_NEAR(r.dram_bytes, 1500 * 32.0, 1e-9);
  CHECK_STR(r.diag.basis, "dram,l2,occupancy");
  CHECK_STR(r.diag.limit, "occupancy");
  CHECK_CONTAINS(r.diag.sentence, "50 % measured occupancy");
  CHECK_NEAR(r.diag.achieved_bw, 1500 * 32.0 / 300e-6, 1e-3);
  /* the waves come from the recorded grid: 128 x 64 blocks over 68 SMs x 16 */
  CHECK_NEAR(r.diag.waves, 8192.0 / (68 * 16), 1e-9);
  /* the spilling one: 255 registers, 2 KiB of local traffic a thread block; diagnosed too */
  CHECK_INT(ktfile_find(kf, "WG_X=64,UNROLL=2", &idx, &err), RT_OK);
  ktfile_result(kf, idx, &r);
  CHECK_INT(recorded_diagnose(&r, gpu, NULL, kf->space, idx, &err), RT_OK);
  CHECK_STR(r.facts.limiter, "registers");
  CHECK(r.diag.limit[0] != 0);
  /* a failed configuration is left alone; no GPU is an error */
  CHECK_INT(ktfile_find(kf, "WG_X=128,UNROLL=2", &idx, &err), RT_OK);
  ktfile_result(kf, idx, &r);
  CHECK_INT(recorded_diagnose(&r, gpu, NULL, kf->space, idx, &err), RT_OK);
  CHECK_STR(r.diag.limit, "");
  CHECK_INT(ktfile_find(kf, "WG_X=32,UNROLL=1", &idx, &err), RT_OK);
  ktfile_result(kf, idx, &r);
  CHECK_INT(recorded_diagnose(&r, NULL, NULL, kf->space, idx, &err), RT_ERR_INVALID);
  /* its features: the compile facts on sm_75, no roofline bound (no cost formula) */
  double f[FEATURE_COUNT];
  ktfile_result(kf, idx, &r);
  recorded_features(&r.facts, gpu, 0, 0, f);
  CHECK_NEAR(f[FEATURE_OCCUPANCY], 1.0, 1e-12);
  CHECK_NEAR(f[FEATURE_REGISTERS], log2(33.0), 1e-12);
  CHECK_NEAR(f[FEATURE_SMEM], log2(1025.0), 1e-12);
  CHECK_NEAR(f[FEATURE_THREADS], 6.0, 1e-12);
  CHECK(isnan(f[FEATURE_ROOF]));
  /* with a manifest's cost: 1e9 FLOPs on the 2080 Ti's 13.4 TFLOP/s fp32 against 1e6 bytes */
  recorded_features(&r.facts, gpu, 1e9, 1e6, f);
  CHECK_NEAR(f[FEATURE_ROOF], log(1e9 / 13.4e12), 1e-9);
  ktfile_free(kf);
}

TEST_CASE(features) {
  /* 256 threads x 64 registers on sm_90's 132 SMs: 4 blocks/SM (from the facts), a grid of 792
   * blocks is 1.5 waves, the second half-empty: 0.75; 1e12 executed FLOPs at 989.5e12 FLOP/s
   * = 1.01 ms against 1e9 bytes at 4.3e12 B/s = 0.23 ms: the bound is the compute one */
  static_facts s = {0};
  s.threads_per_block = 256;
  s.registers = 64;
  s.smem_dynamic = 48 * 1024;
  s.spill_stores = 8;
  s.blocks_per_sm = 4;
  s.occupancy = 0.5;
  s.grid_blocks = 792;
  feature_input in = {.facts = &s,
                      .sm_count = 132,
                      .executed_flops = 1e12,
                      .dram_bytes = 1e9,
                      .peak_flops = 989.5e12,
                      .bw = 4.3e12};
  double f[FEATURE_COUNT];
  features_fill(&in, f);
  CHECK_NEAR(f[FEATURE_OCCUPANCY], 0.5, 0);
  CHECK_NEAR(f[FEATURE_REGISTERS], log2(65.0), 1e-12);
  CHECK_NEAR(f[FEATURE_SMEM], log2(1.0 + 48 * 1024), 1e-12);
  CHECK_NEAR(f[FEATURE_THREADS], 8.0, 0);
  CHECK_NEAR(f[FEATURE_WAVES], 0.75, 1e-12);
  CHECK_NEAR(f[FEATURE_LOCAL], log2(9.0), 1e-12);
  CHECK_NEAR(f[FEATURE_ROOF], log(1e12 / 989.5e12), 1e-12);
  in.dram_bytes = 1e10; /* 2.3 ms: the bound is the bytes' now */
  features_fill(&in, f);
  CHECK_NEAR(f[FEATURE_ROOF], log(1e10 / 4.3e12), 1e-12);
  /* nothing known: NaN everywhere */
  feature_input none = {0};
  features_fill(&none, f);
  for (int i = 0; i < FEATURE_COUNT; i++) CHECK(isnan(f[i]));
  CHECK_CONTAINS(feature_what(FEATURE_WAVES), "waves");
  CHECK_STR(feature_what(FEATURE_COUNT), "");
}

TEST_LIST(TEST_ENTRY(diagnose), TEST_ENTRY(features))
