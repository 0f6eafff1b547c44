/* test_attn_wgmma_space.c (long) — EVERY configuration of attn_wgmma's default space, for each
 * head dim, mask and dtype, compiles for sm_90a with NVRTC without spills or a stack frame, with
 * wgmma.mma_async (both forms), cp.async.bulk.tensor and mbarrier waits in the PTX, and without
 * ptxas serialising the wgmmas or ignoring setmaxnreg (awu_check), and with two consumers enough
 * registers at entry for the setmaxnreg hand-over (awu_regs_balance).  Compiles run in the compile
 * pool (one worker per core).  Prints, per variant, the configurations, failures and the
 * register range.  ROOFTUNE_ATTN_SPACE=TEXT keeps only the variants whose "D causal dtype" line
 * contains TEXT (e.g. "256 1 bf16"). */
/* stages: model */
#include "../attn_wgmma_util.h"
#include "../space_compile_util.h"

typedef struct {
  const char *dtype;
  const rt_vars *env;
} wgmma_ctx;

/* awu_check, and with two consumers enough registers at entry for the setmaxnreg hand-over */
static int wgmma_check(void *ctx, const manifest *m, const space *sp, size_t idx,
                       const char *config, const compile_result *r) {
  const wgmma_ctx *c = ctx;
  char what[600];
  snprintf(what, sizeof what, "attn_wgmma %s [%s]", c->dtype, config);
  rt_vars cv;
  long long cons = 0;
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(manifest_config_vars(m, sp, idx, c->env, &cv, &err), RT_OK);
  rt_vars_get(&cv, "CONSUMERS", &cons);
  if (getenv("ROOFTUNE_ATTN_SPACE_VERBOSE"))
    printf("  [%s]: %d registers, %d/%d spills\n", config, r->report.registers,
           r->report.spill_stores, r->report.spill_loads);
  return awu_check(what, r) && awu_regs_balance(cons, r);
}

int main(void) {
  static const int dims[] = {64, 128, 256};
  static const char *const dtypes[] = {"bf16", "f16"};
  size_t total = 0, failed = 0;
  for (int di = 0; di < 3; di++)
    for (int causal = 0; causal < 2; causal++)
      for (int dt = 0; dt < 2; dt++) {
        char line[64];
        snprintf(line, sizeof line, "%d %d %s", dims[di], causal, dtypes[dt]);
        const char *only = getenv("ROOFTUNE_ATTN_SPACE");
        if (only && *only && !strstr(line, only)) continue;
        const awu_problem p = {2, 16, 4, 4096, 4096, dims[di], causal, NULL};
        manifest *m = NULL;
        space *sp = NULL;
        rt_vars env;
        rt_error err;
        rt_error_clear(&err);
        rt_status st = awu_space(&p, dtypes[dt], &m, &sp, &env, &err);
        CHECK_INT(st, RT_OK);
        if (st) {
          fprintf(stderr, "%s: %s\n", line, err.text);
          continue;
        }
        wgmma_ctx c = {dtypes[dt], &env};
        sc_stats r;
        sc_compile_space(m, sp, &env, dtypes[dt], "sm_90a", wgmma_check, &c, &r);
        printf(
            "attn_wgmma D %3d causal %d %-4s: %zu configurations, %zu failed, %d..%d registers\n",
            dims[di], causal, dtypes[dt], r.n, r.bad, r.least_regs, r.most_regs);
        total += r.n;
        failed += r.bad;
        space_free(sp);
        manifest_free(m);
      }
  printf("%zu configurations compiled, %zu failed\n", total, failed);
  return test_done();
}
