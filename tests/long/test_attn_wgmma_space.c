/* test_attn_wgmma_space.c (long) — EVERY configuration of attn_wgmma's default space, for each
 * head dim, mask and dtype, compiles for sm_90a with NVRTC without spills or a stack frame, with
 * wgmma.mma_async (both forms), cp.async.bulk.tensor and mbarrier waits in the PTX, and without
 * ptxas serialising the wgmmas or ignoring setmaxnreg (awu_check), and with two consumers enough
 * registers at entry for the setmaxnreg hand-over (awu_regs_balance).  Compiles run in the compile
 * pool (one worker per core).  Prints, per variant, the configurations, failures and the
 * register range.  ROOFTUNE_ATTN_SPACE=TEXT keeps only the variants whose "D causal dtype" line
 * contains TEXT (e.g. "256 1 bf16"). */
#include "../attn_wgmma_util.h"
#include "tuner/compile/compile_pool.h"

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
        const size_t n = space_size(sp);
        compile_job *jobs = calloc(n, sizeof *jobs);
        compile_result *res = calloc(n, sizeof *res);
        for (size_t i = 0; i < n; i++) {
          jobs[i].source = awu_source(m, sp, i, &env, dtypes[dt], &err);
          jobs[i].name = manifest_source_name(m);
          CHECK(jobs[i].source != NULL);
        }
        compile_options opt;
        compile_pool_options po;
        memset(&po, 0, sizeof po);
        awu_options(m, &opt);
        CHECK_INT(compile_pool_run(jobs, n, &opt, &po, res, NULL, &err), RT_OK);
        int lo = 1 << 30, hi = 0;
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
          char config[512], what[600];
          space_format_config(sp, i, config, sizeof config);
          snprintf(what, sizeof what, "attn_wgmma %s [%s]", dtypes[dt], config);
          rt_vars cv;
          long long cons = 0;
          CHECK_INT(manifest_config_vars(m, sp, i, &env, &cv, &err), RT_OK);
          rt_vars_get(&cv, "CONSUMERS", &cons);
          if (!awu_check(what, &res[i]) || !awu_regs_balance(cons, &res[i])) bad++;
          if (getenv("ROOFTUNE_ATTN_SPACE_VERBOSE"))
            printf("  [%s]: %d registers, %d/%d spills\n", config, res[i].report.registers, res[i].report.spill_stores,
                   res[i].report.spill_loads);
          if (res[i].report.registers < lo) lo = res[i].report.registers;
          if (res[i].report.registers > hi) hi = res[i].report.registers;
          compile_result_free(&res[i]);
          free((char *)jobs[i].source);
        }
        CHECK_INT(bad, 0);
        printf("attn_wgmma D %3d causal %d %-4s: %zu configurations, %zu failed, %d..%d registers\n", dims[di], causal,
               dtypes[dt], n, bad, lo, hi);
        total += n;
        failed += bad;
        free(jobs);
        free(res);
        space_free(sp);
        manifest_free(m);
      }
  printf("%zu configurations compiled, %zu failed\n", total, failed);
  return test_done();
}
