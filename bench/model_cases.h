/* model_cases.h — the problems bench_lever and bench_steer tune on the model device (model:h200),
 * and each one's space built as `rooftune tune` builds it there.  Header-only: each bench is one
 * program. */
#ifndef ROOFTUNE_BENCH_MODEL_CASES_H
#define ROOFTUNE_BENCH_MODEL_CASES_H

#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"
#include "tuner/tune.h"

typedef struct problem_case {
  const char *what, *tmpl, *dtype, *shape, *arch;
} problem_case;

/* GEMM first (bench_lever's five), then prefill attention and decode. */
static const problem_case model_cases[] = {
    {"GEMM", "gemm_wgmma", "bf16", "4096x4096x4096:nt", "sm_90a"},
    {"GEMM", "gemm_wgmma", "bf16", "16x4096x14336:nt", "sm_90a"},
    {"GEMM", "gemm_mma", "bf16", "4096x4096x4096", "sm_90"},
    {"GEMM", "gemm_mma", "f16", "64x14336x4096:nt", "sm_90"},
    {"GEMM", "gemm_simt", "f32", "2048x2048x2048", "sm_90"},
    {"prefill", "attn_mma", "bf16", "4x32x4096x128:causal", "sm_90"},
    {"prefill", "attn_wgmma", "bf16", "4x32x4096x128:causal", "sm_90a"},
    {"prefill", "attn_wgmma", "f16", "8x16:4x512:2048x64", "sm_90a"},
    {"decode", "attn_decode", "bf16", "1x32:8x1:32768x128", "sm_90"},
    {"decode", "attn_decode", "bf16", "64x32:8x1:8192x128:paged16", "sm_90"},
};
#define MODEL_CASES (sizeof model_cases / sizeof model_cases[0])

/* The problems a user tunes a family for (`rooftune tune gemm ...`): the target is the family's
 * optimum over every template tune lines up, and the budget across templates takes part.  The
 * same problems as the per-template cases above, where they fit a family run. */
typedef struct family_case {
  const char *what, *family, *dtype, *shape;
} family_case;

static const family_case family_cases[] = {
    {"GEMM", "gemm", "bf16", "4096x4096x4096:nt"},
    {"GEMM", "gemm", "bf16", "16x4096x14336:nt"},
    {"GEMM", "gemm", "f16", "64x14336x4096:nt"},
    {"prefill", "attention", "bf16", "4x32x4096x128:causal"},
    {"prefill", "attention", "f16", "8x16:4x512:2048x64"},
    {"decode", "attention", "bf16", "1x32:8x1:32768x128"},
    {"decode", "attention", "bf16", "64x32:8x1:8192x128:paged16"},
};
#define FAMILY_CASES (sizeof family_cases / sizeof family_cases[0])

/* `rooftune tune TARGET --strategy brute_force --budget BUDGET` on model:h200: every configuration
 * evaluated (the roof rules are off for brute_force); db: the database that keeps them for a rerun,
 * NULL: none.  The report is the caller's (tune_report_free). */
static inline rt_status model_brute_force(const char *target, const char *shape, const char *dtype,
                                          long budget, const char *db, tune_report *rep,
                                          rt_error *err) {
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = target;
  o.shape = shape;
  o.dtype = dtype;
  o.device = "model:h200";
  o.strategy = "brute_force";
  o.budget = budget;
  o.db_path = db;
  return tune_run(&o, rep, err);
}

/* Every configuration of every template tune lines up for the family case (`rooftune tune
 * FAMILY`), db as for model_case_brute_force. */
static inline rt_status family_case_brute_force(const family_case *fc, const char *db,
                                                tune_report *rep, rt_error *err) {
  return model_brute_force(fc->family, fc->shape, fc->dtype, 1000000, db, rep, err);
}

/* The template's space for the problem, built as tune builds it on model:h200; with mo non-NULL
 * the manifest (*mo, the caller frees it) and env the names its plans read. */
static inline space *model_case_space(const problem_case *pc, manifest **mo, rt_vars *env) {
  rt_error err = {0};
  manifest *m = NULL;
  if (catalog_find(NULL, pc->tmpl, &m, &err)) {
    fprintf(stderr, "%s: %s\n", pc->tmpl, err.text);
    return NULL;
  }
  const family_ops *fam = family_find(manifest_family(m));
  problem p;
  rt_vars_clear(env);
  space *sp = NULL;
  const gpu_spec *gpu = gpu_spec_find("h200");
  rt_status s = fam->parse_shape(fam, pc->shape, pc->dtype, NULL, &p, &err);
  if (!s) s = problem_env(fam, &p, arch_spec_find("sm_90"), gpu, env, &err);
  if (!s) s = rt_vars_set(env, "device.sm_count", gpu->sm_count);
  if (!s) s = manifest_build_space(m, env, &sp, &err);
  if (s) fprintf(stderr, "%s %s: %s\n", pc->tmpl, pc->shape, err.text);
  if (s || !mo)
    manifest_free(m);
  else
    *mo = m;
  return s ? NULL : sp;
}

/* Every configuration of the case's space (n of them), as `rooftune tune TEMPLATE` would. */
static inline rt_status model_case_brute_force(const problem_case *pc, size_t n, const char *db,
                                               tune_report *rep, rt_error *err) {
  return model_brute_force(pc->tmpl, pc->shape, pc->dtype, (long)n, db, rep, err);
}

#endif
