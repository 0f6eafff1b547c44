/* test_attn_compile.c — a deterministic sample of the attention templates' default spaces compiles
 * with NVRTC for sm_80 and sm_90 without spills, with the template's instructions in the PTX
 * (attn_mma: mma.sync m16n8k16 of the dtype, ldmatrix .x4 and .x4.trans, cp.async, ex2.approx,
 * the cvt that packs P; the reference: fp32 fma and no mma): for attn_mma three configurations
 * per architecture and dtype (one per head dim, the mask alternating, spread over the space),
 * then its register-heaviest configurations by name; the reference for each architecture and
 * dtype.  Prints registers, shared memory (dynamic, from the manifest) and spills of each.
 * The whole spaces are compiled by tests/long/test_attn_spaces.c. */
/* stages: model */
#include "../attn_compile_util.h"

#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Compiles configuration idx of the variant's space (or the one named `config` when non-NULL),
 * checks it and prints its figures. */
static void compile_one(const acu_variant *v, long long pick, const char *config) {
  manifest *m = NULL;
  space *sp = NULL;
  rt_vars env;
  rt_error err;
  rt_error_clear(&err);
  rt_status st = acu_space(v, &m, &sp, &env, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "%s %s %s D=%d causal=%d: %s\n", v->tmpl, v->arch, v->dtype, v->D, v->causal,
            err.text);
    return;
  }
  const size_t n = space_size(sp);
  size_t idx = 0;
  if (config) {
    st = space_parse_config(sp, config, &idx, &err);
    CHECK_INT(st, RT_OK);
    if (st)
      fprintf(stderr, "%s %s D=%d: [%s] not in the space: %s\n", v->tmpl, v->arch, v->D, config,
              err.text);
  } else {
    idx = (size_t)(pick % (long long)n);
  }
  char name[512];
  space_format_config(sp, idx, name, sizeof name);
  char *text = st ? NULL : acu_source(m, sp, idx, &env, v->dtype, &err);
  rt_vars cv;
  unsigned grid[3], block[3], smem = 0;
  if (text) {
    CHECK_INT(manifest_config_vars(m, sp, idx, &env, &cv, &err), RT_OK);
    CHECK_INT(manifest_launch(m, &cv, grid, block, &smem, &err), RT_OK);
    /* the reference says it is one (its O is fp32); no candidate does */
    long long is_ref = 0;
    CHECK_INT(rt_vars_get(&cv, "ATTN_REFERENCE", &is_ref) ? is_ref : 0,
              !strcmp(v->tmpl, "attn_reference"));
    compile_options opt;
    compile_result r;
    memset(&r, 0, sizeof r);
    acu_options(v, m, &opt);
    compile_source(text, manifest_source_name(m), &opt, &r, &err);
    CHECK(acu_check(v, name, &r));
    printf(
        "%-14s %-5s %-4s D=%-3d causal=%d (%3zu of %3zu) [%s]: %3d registers, %6u B dynamic + %4d "
        "B static smem, "
        "%d B spill stores, %.1f s\n",
        v->tmpl, v->arch, v->dtype, v->D, v->causal, idx, n, name, r.report.registers, smem,
        r.report.smem_static, r.report.spill_stores, r.seconds);
    compile_result_free(&r);
  }
  free(text);
  space_free(sp);
  manifest_free(m);
}

TEST_CASE(samples) {
  const double t0 = now();
  static const char *const archs[] = {"sm_80", "sm_90"}, *const dtypes[] = {"f16", "bf16"};
  static const int dims[] = {64, 128, 256};
  for (int a = 0; a < 2; a++)
    for (int d = 0; d < 2; d++)
      for (int i = 0; i < 3; i++) {
        const acu_variant v = {"attn_mma", archs[a], dtypes[d], dims[i], (i + a + d) % 2};
        compile_one(&v, 7 * i + 5 * a + 11 * d + 3, NULL);
      }
  /* the register-heaviest of the space (240-250 registers; the constraints keep out the tiles that
   * spilled), where a change to the kernel or the compiler spills first */
  static const struct {
    const char *arch, *dtype;
    int D, causal;
    const char *config;
  } heavy[] = {
      {"sm_80", "bf16", 128, 1,
       "HEAD_DIM=128,IS_CAUSAL=1,BLOCK_M=64,BLOCK_N=64,WARPS=4,STAGES=3,Q_IN_REGS=1"},
      {"sm_80", "f16", 128, 0,
       "HEAD_DIM=128,IS_CAUSAL=0,BLOCK_M=64,BLOCK_N=64,WARPS=4,STAGES=3,Q_IN_REGS=1"},
      {"sm_90", "f16", 256, 1,
       "HEAD_DIM=256,IS_CAUSAL=1,BLOCK_M=64,BLOCK_N=64,WARPS=4,STAGES=2,Q_IN_REGS=0"},
      {"sm_90", "bf16", 64, 0,
       "HEAD_DIM=64,IS_CAUSAL=0,BLOCK_M=64,BLOCK_N=128,WARPS=4,STAGES=3,Q_IN_REGS=1"},
  };
  for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++) {
    const acu_variant v = {"attn_mma", heavy[i].arch, heavy[i].dtype, heavy[i].D, heavy[i].causal};
    compile_one(&v, 0, heavy[i].config);
  }
  for (int a = 0; a < 2; a++)
    for (int d = 0; d < 2; d++) {
      const acu_variant v = {"attn_reference", archs[a], dtypes[d], 128, (a + d) % 2};
      compile_one(&v, a + d, NULL);
    }
  printf("compile sample: %.0f s\n", now() - t0);
}

TEST_LIST(TEST_ENTRY(samples))
