/* gemm_compile_util.h — shared by the gemm compile tests (tests/unit, tests/long): the space of
 * a gemm template for one arch, dtype and layout, and the complete source of one configuration
 * (manifest_source_prefix + the template text), compiled with the project's compile module. */
#ifndef ROOFTUNE_GEMM_COMPILE_UTIL_H
#define ROOFTUNE_GEMM_COMPILE_UTIL_H

#include "kernels/gemm.h"
#include "compile/compile.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"
#include "test.h"

/* One (template, arch, dtype, layout) combination. */
typedef struct gcu_variant {
  const char *tmpl;   /* "gemm_mma" */
  const char *arch;   /* "sm_80", "sm_90", "sm_90a" */
  const char *dtype;  /* "f32", "f16", "bf16" */
  const char *layout; /* "nn" or "nt" */
  const char *opts;   /* the shape's options ("+bias+gelu+out=bf16", "+b=e5m2"); NULL: none */
} gcu_variant;

static inline const char *gcu_dir(char *buf, size_t size) {
  snprintf(buf, size, "%s/templates/gemm", test_source_dir());
  return buf;
}

/* Loads the manifest and builds the space for a 4096^3 problem (16x4096x4096 for gemm_skinny,
 * whose space is for at most 16 rows) of the variant's dtype, layout and options on the variant's
 * architecture (the compiled source does not depend on the shape). */
static inline rt_status gcu_space(const gcu_variant *v, manifest **m, space **sp, rt_vars *env,
                                  rt_error *err) {
  char path[1024], dir[900], shape[64];
  snprintf(path, sizeof path, "%s/%s.json", gcu_dir(dir, sizeof dir), v->tmpl);
  rt_status st = manifest_load(path, m, err);
  if (st) return st;
  problem p;
  snprintf(shape, sizeof shape, "%sx4096x4096:%s%s", strcmp(v->tmpl, "gemm_skinny") ? "4096" : "16",
           v->layout, v->opts ? v->opts : "");
  if ((st = gemm_family.parse_shape(&gemm_family, shape, v->dtype, NULL, &p, err)) ||
      (st = problem_env(&gemm_family, &p, arch_spec_find(v->arch), gpu_spec_for_arch(v->arch), env,
                        err)) ||
      (st = manifest_build_space(*m, env, sp, err))) {
    manifest_free(*m);
    *m = NULL;
    return st;
  }
  return RT_OK;
}

/* The complete source text of configuration idx (malloc'ed). */
static inline char *gcu_source(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                               const char *dtype, rt_error *err) {
  char *text = NULL;
  manifest_config_source(m, sp, idx, env, dtype, NULL, &text, err);
  return text;
}

static inline void gcu_options(const gcu_variant *v, const manifest *m, compile_options *opt) {
  manifest_compile_options(m, v->arch, opt);
  opt->want_ptx = 1;
}

/* Checks one compile result: compiled, ptxas report found, no spills, the right instruction in
 * the PTX.  Returns 1 when all hold. */
static inline int gcu_check(const gcu_variant *v, const char *config, const compile_result *r) {
  int ok = r->status == RT_OK && r->report.found && r->report.spill_stores == 0 &&
           r->report.spill_loads == 0 && r->report.registers <= 255;
  const char *need = !strcmp(v->tmpl, "gemm_wgmma") ? "wgmma.mma_async"
                     : !strcmp(v->tmpl, "gemm_mma") ? "mma.sync.aligned"
                                                    : "fma.rn.f32";
  if (ok && (!r->ptx || !strstr(r->ptx, need))) ok = 0;
  if (!ok)
    fprintf(stderr, "%s %s %s %s [%s]: status %d %s, %d registers, spills %d/%d, %s %s\n", v->tmpl,
            v->arch, v->dtype, v->layout, config, r->status, r->message, r->report.registers,
            r->report.spill_stores, r->report.spill_loads, need,
            r->ptx && strstr(r->ptx, need) ? "present" : "missing");
  return ok;
}

#endif
