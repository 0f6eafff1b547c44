/* The covering sets (`rooftune tune --cover`, template/cover.h: every value of every
 * parameter and every named pair at least once) of the own templates, each configuration run on
 * the sim (sim/sim.h) against the double-precision references of tests/sim_gemm_util.h and
 * tests/sim_attn_util.h, on shapes that leave partial tiles: gemm_simt, gemm_mma (bf16, tf32),
 * gemm_skinny, gemm_wgmma (bf16 nn and nt, e4m3), attn_mma (causal SQ < SKV and not), attn_wgmma
 * (causal, ragged), attn_decode (paged and contiguous, ragged).  One host compile a
 * configuration; a configuration the shape's space lacks is skipped. */
/* stages: sim kernels */
#include "sim_attn_util.h"
#include "template/cover.h"

/* the cover of template `tmpl` for the problem of c (c->config unused): wrong outputs summed */
static int cover_of(const char *folder, const char *tmpl, const char *arch, const char *dtype,
                    const char *shape, const char *kv_lens) {
  char path[1024];
  rt_error err;
  rt_error_clear(&err);
  snprintf(path, sizeof path, "%s/templates/%s/%s.json", ROOFTUNE_SOURCE_DIR, folder, tmpl);
  const family_ops *fam = strcmp(folder, "gemm") ? &attention_family : &gemm_family;
  manifest *m = NULL;
  space *sp = NULL, *cov = NULL;
  problem p;
  rt_vars env;
  int failed = 0;
  if (manifest_load(path, &m, &err) || fam->parse_shape(fam, shape, dtype, kv_lens, &p, &err) ||
      problem_env(fam, &p, arch_spec_find(arch), gpu_spec_for_arch(arch), &env, &err) ||
      manifest_build_space(m, &env, &sp, &err) || manifest_cover_space(m, sp, &cov, &err)) {
    fprintf(stderr, "%s %s %s: %s\n", tmpl, dtype, shape, err.text);
    CHECK(0);
    if (sp) space_free(sp);
    if (m) manifest_free(m);
    return 1;
  }
  for (size_t i = 0; i < space_size(cov); i++) {
    candidate_plan plan;
    if (manifest_plan(m, cov, i, &env, &plan, &err)) continue;
    char msg[1024];
    long bad;
    if (fam == &gemm_family) {
      const sgu_case c = {tmpl, arch, dtype, shape, plan.config};
      bad = sgu_run_case(&c, NULL, SIM_SCHED_RANDOM, msg, sizeof msg);
    } else {
      const sau_case c = {tmpl, arch, dtype, shape, kv_lens, plan.config};
      bad = sau_run_case(&c, NULL, SIM_SCHED_RANDOM, msg, sizeof msg);
    }
    printf("%s %s %s [%s]: %s %s\n", tmpl, dtype, shape, plan.config, bad ? "WRONG" : "ok",
           bad ? msg : "");
    fflush(stdout);
    failed += bad != 0;
  }
  printf("%s %s %s: %zu configurations of the cover, %d wrong\n", tmpl, dtype, shape,
         space_size(cov), failed);
  CHECK_INT(failed, 0);
  space_free(cov);
  space_free(sp);
  manifest_free(m);
  return failed;
}

TEST_CASE(gemm_covers) {
  cover_of("gemm", "gemm_simt", "sm_90", "f32", "67x45x37", NULL);
  cover_of("gemm", "gemm_mma", "sm_90", "bf16", "2@70x72x96:nt", NULL);
  cover_of("gemm", "gemm_mma", "sm_80", "tf32", "40x72x40", NULL);
  cover_of("gemm", "gemm_skinny", "sm_90", "f16", "5x72x256:nt", NULL);
  cover_of("gemm", "gemm_wgmma", "sm_90a", "bf16", "3@96x200x136:nt", NULL);
  cover_of("gemm", "gemm_wgmma", "sm_90a", "bf16", "70x136x256", NULL);
  cover_of("gemm", "gemm_wgmma", "sm_90a", "e4m3", "200x300x512:nt", NULL);
}

TEST_CASE(attention_covers) {
  cover_of("attention", "attn_mma", "sm_90", "bf16", "2x4:2x100:150x128:causal", "150,77");
  cover_of("attention", "attn_mma", "sm_90", "f16", "1x2:1x70:90x64", NULL);
  cover_of("attention", "attn_wgmma", "sm_90a", "bf16", "1x2:1x300:400x128:causal", "400");
  cover_of("attention", "attn_decode", "sm_90", "bf16", "2x8:2x1:2048x128:paged16", "2048,777");
  cover_of("attention", "attn_decode", "sm_90", "f16", "3x4:4x1:300x64", "300,1,129");
}

TEST_LIST(TEST_ENTRY(gemm_covers), TEST_ENTRY(attention_covers))
