/* test_attn_spaces.c (long) — EVERY configuration of the attention templates' default spaces
 * compiles for sm_80 and sm_90 without spills, with the template's instructions in the PTX
 * (acu_check): attn_mma for each head dim (64, 128, 256), mask (0, 1) and dtype, the reference
 * for each dtype.  Compiles run in the compile pool (one worker per core).
 * ROOFTUNE_ATTN_SPACES=TEXT keeps only the variants whose "template arch dtype D=.. causal=.."
 * line contains TEXT (e.g. "attn_mma sm_80 bf16 D=256"). */
/* stages: model */
#include "../attn_compile_util.h"
#include "../space_compile_util.h"

static int attn_check(void *ctx, const manifest *m, const space *sp, size_t idx, const char *config,
                      const compile_result *r) {
  (void)m, (void)sp, (void)idx;
  return acu_check(ctx, config, r);
}

int main(void) {
  acu_variant variants[64];
  int nv = 0;
  static const char *const archs[] = {"sm_80", "sm_90"}, *const dtypes[] = {"f16", "bf16"};
  static const int dims[] = {64, 128, 256};
  for (int a = 0; a < 2; a++)
    for (int d = 0; d < 2; d++) {
      for (int i = 0; i < 3; i++)
        for (int c = 0; c < 2; c++)
          variants[nv++] = (acu_variant){"attn_mma", archs[a], dtypes[d], dims[i], c};
      variants[nv++] = (acu_variant){"attn_reference", archs[a], dtypes[d], 128, 0};
    }
  size_t total = 0, failed = 0;
  for (int k = 0; k < nv; k++) {
    const acu_variant *v = &variants[k];
    const char *only = getenv("ROOFTUNE_ATTN_SPACES");
    char line[128];
    snprintf(line, sizeof line, "%s %s %s D=%d causal=%d", v->tmpl, v->arch, v->dtype, v->D,
             v->causal);
    if (only && *only && !strstr(line, only)) continue;
    manifest *m = NULL;
    space *sp = NULL;
    rt_vars env;
    rt_error err;
    rt_error_clear(&err);
    rt_status st = acu_space(v, &m, &sp, &env, &err);
    CHECK_INT(st, RT_OK);
    if (st) {
      fprintf(stderr, "%s: %s\n", line, err.text);
      continue;
    }
    sc_stats r;
    sc_compile_space(m, sp, &env, v->dtype, v->arch, attn_check, (void *)v, &r);
    printf("%-44s: %3zu configurations, %zu failed, %d to %d registers\n", line, r.n, r.bad,
           r.least_regs, r.most_regs);
    total += r.n;
    failed += r.bad;
    space_free(sp);
    manifest_free(m);
  }
  printf("%zu configurations compiled, %zu failed\n", total, failed);
  return test_done();
}
