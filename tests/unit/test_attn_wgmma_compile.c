/* test_attn_wgmma_compile.c — a small deterministic sample of attn_wgmma's default space compiles
 * for sm_90a with NVRTC and passes awu_check (no spills, no stack frame, wgmma.mma_async in both
 * forms, cp.async.bulk.tensor and mbarrier waits in the PTX, ptxas neither serialising the
 * wgmmas nor ignoring setmaxnreg); the PTX also holds the shapes the configuration needs
 * (m64n<BLOCK_N>k16 for S, m64n<HEAD_DIM>k16 for O), the register hand-over of two consumers
 * (setmaxnreg 24 / 240, and enough registers at entry for it: awu_regs_balance) and, with OVERLAP 1, the wait_group 1 that lets the softmax run beside
 * the PV product.  Two configurations per head dim (the mask alternating, the dtype too), spread
 * over the space, then the register-heaviest ones.  Prints registers, dynamic shared memory and
 * spills per configuration.  ROOFTUNE_ATTN_CUBIN_DIR=DIR writes each cubin there (for
 * cuobjdump -sass / nvdisasm).  The whole space: tests/long/test_attn_wgmma_space.c. */
/* stages: model */
#include "../attn_wgmma_util.h"

static void compile_one(const awu_problem *p, const char *dtype, const char *config, size_t pick,
                        int per) {
  manifest *m = NULL;
  space *sp = NULL;
  rt_vars env;
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(awu_space(p, dtype, &m, &sp, &env, &err), RT_OK);
  if (!m) {
    fprintf(stderr, "D %d causal %d %s: %s\n", p->D, p->causal, dtype, err.text);
    return;
  }
  const size_t n = space_size(sp);
  size_t idx = 0;
  if (config) {
    CHECK_INT(space_parse_config(sp, config, &idx, &err), RT_OK);
    if (err.code) fprintf(stderr, "%s\n", err.text);
  } else {
    idx = per > 1 ? (size_t)((double)pick * (double)(n - 1) / (per - 1)) : n / 2;
  }
  char cfg[512];
  space_format_config(sp, idx, cfg, sizeof cfg);
  rt_vars cv;
  long long bn = 0, cons = 0, overlap = 0, smem = 0;
  CHECK_INT(manifest_config_vars(m, sp, idx, &env, &cv, &err), RT_OK);
  rt_vars_get(&cv, "BLOCK_N", &bn), rt_vars_get(&cv, "CONSUMERS", &cons),
      rt_vars_get(&cv, "OVERLAP", &overlap);
  rt_vars_get(&cv, "SMEM", &smem);
  char *text = awu_source(m, sp, idx, &env, dtype, &err);
  CHECK(text != NULL);
  if (text) {
    compile_options opt;
    compile_result r;
    memset(&r, 0, sizeof r);
    awu_options(m, &opt);
    compile_source(text, manifest_source_name(m), &opt, &r, &err);
    char what[600], shape[64];
    snprintf(what, sizeof what, "attn_wgmma %s [%s]", dtype, cfg);
    CHECK(awu_check(what, &r));
    snprintf(shape, sizeof shape, ".m64n%lldk16.f32.%s.%s", bn, dtype, dtype);
    CHECK(r.ptx && strstr(r.ptx, shape));
    snprintf(shape, sizeof shape, ".m64n%dk16.f32.%s.%s", p->D, dtype, dtype);
    CHECK(r.ptx && strstr(r.ptx, shape));
    CHECK(awu_regs_balance(cons, &r));
    if (cons == 2) {
      CHECK(r.ptx && strstr(r.ptx, "setmaxnreg.dec.sync.aligned.u32 24;"));
      CHECK(r.ptx && strstr(r.ptx, "setmaxnreg.inc.sync.aligned.u32 240;"));
    }
    if (overlap) CHECK(r.ptx && strstr(r.ptx, "wgmma.wait_group.sync.aligned 1;"));
    printf("%-4s (%3zu of %3zu) [%s]: %d registers, %lld B dynamic smem, %d/%d B spilled, %.1f s\n",
           dtype, idx, n, cfg, r.report.registers, smem, r.report.spill_stores,
           r.report.spill_loads, r.seconds);
    const char *dir = getenv("ROOFTUNE_ATTN_CUBIN_DIR");
    if (dir && *dir && r.cubin) {
      char path[1024];
      snprintf(path, sizeof path, "%s/attn_wgmma_%s_%zu_d%d_c%d.cubin", dir, dtype, idx, p->D,
               p->causal);
      FILE *f = fopen(path, "wb");
      if (f) {
        fwrite(r.cubin, 1, r.cubin_size, f);
        fclose(f);
      }
    }
    compile_result_free(&r);
  }
  free(text);
  space_free(sp);
  manifest_free(m);
}

TEST_CASE(samples) {
  static const int dims[] = {64, 128, 256};
  const int per = 2;
  for (int di = 0; di < 3; di++)
    for (int i = 0; i < per; i++) {
      const awu_problem p = {2, 16, 4, 4096, 4096, dims[di], (di + i) % 2, NULL};
      compile_one(&p, (di + i) % 2 ? "f16" : "bf16", NULL, (size_t)i, per);
    }
  /* the register-heaviest configurations (two consumers at 240 registers after setmaxnreg, one
   * at 255), overlapped */
  static const struct {
    int d, causal;
    const char *config;
  } heavy[] = {
      {256, 1, "HEAD_DIM=256,IS_CAUSAL=1,CONSUMERS=1,BLOCK_N=96,STAGES=2,OVERLAP=1"},
      {256, 0, "HEAD_DIM=256,IS_CAUSAL=0,CONSUMERS=2,BLOCK_N=64,STAGES=2,OVERLAP=1"},
      {128, 1, "HEAD_DIM=128,IS_CAUSAL=1,CONSUMERS=2,BLOCK_N=176,STAGES=2,OVERLAP=1"},
  };
  for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++) {
    const awu_problem p = {2, 16, 4, 4096, 4096, heavy[i].d, heavy[i].causal, NULL};
    compile_one(&p, "bf16", heavy[i].config, 0, 1);
  }
}

TEST_LIST(TEST_ENTRY(samples))
