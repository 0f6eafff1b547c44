/* Ground truth for the sim (sim/sim.h): every gemm configuration that verified on the H200 on
 * 2026-11-30 (the "]: ok" lines of bench/results/h200-2026-11-30/run*.txt: gemm_mma and
 * gemm_wgmma on 16x136x4096 and 3@96x200x136:nt, bf16) runs on the sim and passes against a
 * double-precision product (tests/unit/test_sim_gemm.c runs a sample). */
/* stages: sim kernels */
#include "sim_gemm_util.h"

TEST_CASE(every_verified_configuration) {
  char path[1200], line[1024], seen[64][700];
  int nseen = 0, ran = 0;
  for (int run = 1; run <= 4; run++) {
    snprintf(path, sizeof path, "%s/bench/results/h200-2026-11-30/run%d.txt", ROOFTUNE_SOURCE_DIR,
             run);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) continue;
    while (fgets(line, sizeof line, f)) {
      char tmpl[32], shape[64], dtype[16], config[512];
      if (sscanf(line, " %31s %63s %15s [%511[^]]]: ok", tmpl, shape, dtype, config) != 4 ||
          strncmp(tmpl, "gemm_", 5) || !strstr(line, "]: ok"))
        continue;
      char key[700];
      snprintf(key, sizeof key, "%s %s %s", tmpl, shape, config);
      int dup = 0;
      for (int i = 0; i < nseen; i++) dup |= !strcmp(seen[i], key);
      if (dup || nseen == 64) continue;
      snprintf(seen[nseen++], sizeof seen[0], "%s", key);
      const sgu_case c = {tmpl, strcmp(tmpl, "gemm_wgmma") ? "sm_90" : "sm_90a", dtype, shape,
                          config};
      char msg[1024];
      const long bad = sgu_run_case(&c, NULL, SIM_SCHED_RANDOM, msg, sizeof msg);
      printf("%s %s %s [%s]: %s%s\n", tmpl, shape, dtype, config, bad ? "WRONG " : "ok",
             bad ? msg : "");
      CHECK_INT(bad, 0);
      ran++;
    }
    fclose(f);
  }
  printf("%d configurations verified on the H200 ran on the sim\n", ran);
  CHECK(ran >= 26);
}

TEST_LIST(TEST_ENTRY(every_verified_configuration))
