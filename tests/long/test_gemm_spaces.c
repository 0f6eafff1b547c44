/* test_gemm_spaces.c (long) — EVERY configuration of each gemm template's default space, for
 * every dtype and layout the template supports, compiles for sm_80 and sm_90 (sm_90a for the
 * wgmma template, also with fp8 inputs and fused epilogues) without spills, with the template's
 * instruction in the PTX.  Compiles run in
 * the compile pool (one worker per core).  ROOFTUNE_GEMM_SPACES=TEXT keeps only the variants
 * whose "template arch dtype layout" line contains TEXT (e.g. "gemm_simt sm_80"). */
/* stages: kernels */
#include "../gemm_compile_util.h"
#include "../space_compile_util.h"

static int gemm_check(void *ctx, const manifest *m, const space *sp, size_t idx, const char *config,
                      const compile_result *r) {
  (void)m, (void)sp, (void)idx;
  return gcu_check(ctx, config, r);
}

int main(void) {
  static const gcu_variant variants[] = {
      {"gemm_mma", "sm_80", "tf32", "nn", NULL},
      {"gemm_mma", "sm_80", "tf32", "nt", NULL},
      {"gemm_mma", "sm_80", "f16", "nn", NULL},
      {"gemm_mma", "sm_80", "f16", "nt", NULL},
      {"gemm_mma", "sm_80", "bf16", "nn", NULL},
      {"gemm_mma", "sm_80", "bf16", "nt", NULL},
      {"gemm_mma", "sm_90", "tf32", "nn", NULL},
      {"gemm_mma", "sm_90", "tf32", "nt", NULL},
      {"gemm_mma", "sm_90", "f16", "nn", NULL},
      {"gemm_mma", "sm_90", "f16", "nt", NULL},
      {"gemm_mma", "sm_90", "bf16", "nn", NULL},
      {"gemm_mma", "sm_90", "bf16", "nt", NULL},
      {"gemm_simt", "sm_80", "f32", "nn", NULL},
      {"gemm_simt", "sm_80", "f32", "nt", NULL},
      {"gemm_simt", "sm_90", "f32", "nn", NULL},
      {"gemm_simt", "sm_90", "f32", "nt", NULL},
      {"gemm_wgmma", "sm_90a", "f16", "nt", NULL},
      {"gemm_wgmma", "sm_90a", "bf16", "nt", NULL},
      {"gemm_wgmma", "sm_90a", "f16", "nn", NULL},
      {"gemm_wgmma", "sm_90a", "bf16", "nn", NULL},
      {"gemm_skinny", "sm_80", "f32", "nt", NULL},
      {"gemm_skinny", "sm_80", "f16", "nt", NULL},
      {"gemm_skinny", "sm_80", "bf16", "nt", NULL},
      {"gemm_skinny", "sm_90", "f32", "nt", NULL},
      {"gemm_skinny", "sm_90", "f16", "nt", NULL},
      {"gemm_skinny", "sm_90", "bf16", "nt", NULL},
      /* fp8 (k32 wgmma, each A x B type pair) and the fused epilogue (one kernel per output type:
       * the steps are run-time flags), split-K with a linear epilogue */
      {"gemm_wgmma", "sm_90a", "e4m3", "nt", NULL},
      {"gemm_wgmma", "sm_90a", "e4m3", "nt", "+b=e5m2+out=bf16"},
      {"gemm_wgmma", "sm_90a", "e5m2", "nt", "+b=e4m3+out=f16"},
      {"gemm_wgmma", "sm_90a", "e5m2", "nt", NULL},
      {"gemm_wgmma", "sm_90a", "bf16", "nt", "+bias+gelu+out=bf16"},
      {"gemm_wgmma", "sm_90a", "f16", "nn", "+beta+silu+residual+out=f16"},
      {"gemm_wgmma", "sm_90a", "bf16", "nt", "+bias+residual"},
      {"gemm_skinny", "sm_90", "e4m3", "nt", NULL},
      {"gemm_skinny", "sm_90", "e4m3", "nt", "+b=e5m2+out=bf16"},
      {"gemm_skinny", "sm_90", "bf16", "nt", "+bias+gelu+out=bf16"},
  };
  size_t total = 0, failed = 0;
  for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
    const gcu_variant *v = &variants[k];
    const char *only = getenv("ROOFTUNE_GEMM_SPACES");
    char line[160];
    snprintf(line, sizeof line, "%s %s %s %s%s", v->tmpl, v->arch, v->dtype, v->layout,
             v->opts ? v->opts : "");
    if (only && *only && !strstr(line, only)) continue;
    manifest *m = NULL;
    space *sp = NULL;
    rt_vars env;
    rt_error err;
    rt_error_clear(&err);
    rt_status st = gcu_space(v, &m, &sp, &env, &err);
    CHECK_INT(st, RT_OK);
    if (st) continue;
    sc_stats r;
    sc_compile_space(m, sp, &env, v->dtype, v->arch, gemm_check, (void *)v, &r);
    printf("%-10s %-6s %-4s %s%s: %zu configurations, %zu failed, at most %d registers\n", v->tmpl,
           v->arch, v->dtype, v->layout, v->opts ? v->opts : "", r.n, r.bad, r.most_regs);
    total += r.n;
    failed += r.bad;
    space_free(sp);
    manifest_free(m);
  }
  printf("%zu configurations compiled, %zu failed\n", total, failed);
  return test_done();
}
