/* space_compile_util.h — what the long whole-space tests share: every configuration of a
 * template's space for one problem compiled in the compile pool (one worker per core, PTX kept)
 * and each result judged by the caller's check, with the failures and the register range
 * counted.  Each test keeps its own variants, its check and its line of output. */
#ifndef ROOFTUNE_SPACE_COMPILE_UTIL_H
#define ROOFTUNE_SPACE_COMPILE_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "compile/compile_pool.h"
#include "template/manifest.h"

/* 1 when result r of configuration idx (config: its text) passes. */
typedef int (*sc_check_fn)(void *ctx, const manifest *m, const space *sp, size_t idx,
                           const char *config, const compile_result *r);

typedef struct sc_stats {
  size_t n;       /* configurations compiled */
  size_t bad;     /* of them, failed the check */
  int least_regs; /* register range over the results */
  int most_regs;
} sc_stats;

/* Compiles every configuration of sp (manifest m, problem env, dtype) for arch and checks each;
 * CHECKs that the sources are made, the pool runs and nothing fails. */
static inline void sc_compile_space(const manifest *m, const space *sp, const rt_vars *env,
                                    const char *dtype, const char *arch, sc_check_fn check,
                                    void *ctx, sc_stats *out) {
  memset(out, 0, sizeof *out);
  out->least_regs = 1 << 30;
  rt_error err;
  rt_error_clear(&err);
  size_t n = space_size(sp);
  compile_job *jobs = calloc(n ? n : 1, sizeof *jobs);
  compile_result *res = calloc(n ? n : 1, sizeof *res);
  for (size_t i = 0; i < n; i++) {
    char *text = NULL;
    manifest_config_source(m, sp, i, env, dtype, NULL, &text, &err);
    jobs[i].source = text;
    jobs[i].name = manifest_source_name(m);
    CHECK(jobs[i].source != NULL);
  }
  compile_options opt;
  manifest_compile_options(m, arch, &opt);
  opt.want_ptx = 1;
  compile_pool_options po;
  memset(&po, 0, sizeof po);
  CHECK_INT(compile_pool_run(jobs, n, &opt, &po, res, NULL, &err), RT_OK);
  for (size_t i = 0; i < n; i++) {
    char config[512];
    space_format_config(sp, i, config, sizeof config);
    if (!check(ctx, m, sp, i, config, &res[i])) out->bad++;
    if (res[i].report.registers > out->most_regs) out->most_regs = res[i].report.registers;
    if (res[i].report.registers < out->least_regs) out->least_regs = res[i].report.registers;
    compile_result_free(&res[i]);
    free((char *)jobs[i].source);
  }
  CHECK_INT(out->bad, 0);
  out->n = n;
  free(jobs);
  free(res);
}

#endif
