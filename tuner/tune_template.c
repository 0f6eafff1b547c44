/* tune_template.c — one template's search (tune_impl.h): what its candidates share (roles,
 * instruction path, precision, tolerance, calibration, source, compile options), its strategy
 * with the priors and the pre-run features, searched for the shares of the budget it is handed
 * (tune_budget.c), then the re-measurements, the counters of its best few and its winner, stored
 * with its cubin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sha256.h"
#include "model/features.h"
#include "tuner/tune_impl.h"

/* What a candidate computes in, said plainly: "fp32" for fp32 products on the CUDA cores,
 * "tf32" for fp32 inputs rounded to tf32 for tensor-core products, else the input dtype. */
static const char *precision_of(const char *instruction, const char *dtype) {
  if (!strcmp(dtype, "f32")) return !strcmp(instruction, "simt") ? "fp32" : "tf32";
  return dtype;
}

/* What every candidate of template m shares, computing in dtype. */
static rt_status template_begin(tune_ctx *c, tune_search *s, const manifest *m, const space *sp,
                                const char *arch, const char *dtype, rt_error *err) {
  s->kind = TUNE_TEMPLATE;
  s->name = manifest_name(m);
  s->m = m;
  s->sp = sp;
  s->phase = "evaluate";
  s->resumes = !c->o->config; /* a configuration asked for by name is measured afresh */
  s->arch = arch;
  s->dtype = dtype;
  s->min_bytes = c->fam->min_bytes(c->fam, &c->prob);
  manifest_roles(m, &s->roles);
  for (int k = 0; k < ROLE_COUNT; k++) /* the family says which roles may be levers */
    if (!family_allows_lever(c->fam, role_name((param_role)k)))
      memset(s->roles.names[k], 0, sizeof s->roles.names[k]);
  s->path = tune_template_path(m, dtype, &s->wgmma);
  s->precision = precision_of(manifest_instruction(m), dtype);
  s->source_name = manifest_source_name(m);
  s->nderived = manifest_nderived(m) < RT_VARS_MAX ? manifest_nderived(m) : RT_VARS_MAX;
  for (int i = 0; i < s->nderived; i++) s->derived[i] = manifest_derived_name(m, i);
  /* the names the manifest's expressions see, with the dtype facts of what it computes in (an
   * f32 run with --allow-tf32 runs a tf32 template) */
  rt_status rc = tune_template_env(c, dtype, &s->env, err);
  if (!rc && c->have_check) rc = tune_check_env(c, dtype, &s->check_env, err);
  if (rc) return rc;
  s->tolerance = tune_tolerance(c, dtype); /* its own when it computes in another dtype */
  /* the model device scales the formula's DRAM bytes by what counters measured on this GPU */
  if (!device_has(c->dev, DEVICE_CAP_MEASURES) || tune_prior_is_model(c->o)) {
    s->calibration = tune_store_calibration(c, s->name);
    size_t l = strlen(c->rep->calibration);
    if (s->calibration > 0)
      snprintf(c->rep->calibration + l, sizeof c->rep->calibration - l, "%s%s %.2fx (applied)",
               l ? ", " : "", s->name, s->calibration);
  }
  if ((rc = manifest_read_source(m, &s->source, err))) return rc;
  unsigned char dg[32];
  sha256(s->source, strlen(s->source), dg);
  sha256_hex(dg, s->src_hash);
  if (sha256_file(manifest_path(m), s->man_hash)) s->man_hash[0] = 0;
  return tune_store_search(c, s, manifest_family(m), err);
}

/* The template's strategy: the priors first (FILE's order, or the model's), the model's
 * prediction for strategies that rank, each configuration's pre-run features (tune_survey.c) for
 * strategies that weigh them, as a recording's compile facts reach them on replay. */
static rt_status template_strategy(tune_ctx *c, tune_search *s, const size_t *prior, size_t nprior,
                                   const double *features, rt_error *err) {
  const tune_options *o = c->o;
  strategy_options so;
  memset(&so, 0, sizeof so);
  so.name = o->strategy;
  so.seed = o->seed;
  /* the share counts new evaluations (tune_evaluate), not the results told from the database */
  so.max_evals = 0;
  so.max_seconds = o->max_seconds > 0 ? fmax(1e-3, o->max_seconds - (rt_now_s() - c->t0)) : 0;
  so.prior = prior;
  so.nprior = nprior;
  so.features = features;
  so.nfeatures = features ? FEATURE_COUNT : 0;
  /* the plan's facts are known for every configuration without compiling (the compiler's are
   * NaN): a survey at no cost */
  so.survey = 1;
  so.blind = o->blind;
  size_t *model_prior = NULL;
  rt_status rc = tune_prior_model(c, s, &so, &model_prior, err);
  if (!rc) rc = strategy_new(s->sp, &so, &s->st, err);
  free(model_prior);
  if (!rc) snprintf(c->rep->strategy, sizeof c->rep->strategy, "%s", strategy_name(s->st));
  return rc;
}

/* How its candidates are compiled: NVRTC's options, the pool, and how many at once. */
static rt_status template_compiler(tune_ctx *c, tune_search *s, rt_error *err) {
  const tune_options *o = c->o;
  s->jobs = calloc(TUNE_MAX_BATCH, sizeof *s->jobs);
  s->crs = calloc(TUNE_MAX_BATCH, sizeof *s->crs);
  if (!s->jobs || !s->crs) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  manifest_compile_options(s->m, s->arch, &s->copt);
  rt_status rc = compile_options_digest(&s->copt, s->options_digest, err);
  if (rc) return rc;
  s->popt.workers = o->compile_workers;
  s->popt.timeout_s = 120;
  s->popt.cache = c->cache;
  s->aspec = arch_spec_find(s->arch);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int batch = o->batch > 0             ? o->batch
              : o->compile_workers > 0 ? o->compile_workers
                                       : (int)(cores > 1 ? cores : 2);
  s->batch = (size_t)(batch > TUNE_MAX_BATCH ? TUNE_MAX_BATCH : batch);
  return RT_OK;
}

rt_status tune_template_open(tune_ctx *c, const tune_lineup *L, int i, tune_search **out,
                             rt_error *err) {
  tune_search *s = *out = calloc(1, sizeof *s);
  if (!s) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  rt_status rc = template_begin(c, s, L->m[i], L->sp[i], L->arch[i], L->dtype[i], err);
  if (!rc) rc = template_strategy(c, s, L->prior[i], L->nprior[i], L->features[i], err);
  if (!rc) rc = template_compiler(c, s, err);
  return rc;
}

/* The kept candidates diagnosed again once the search is over: a lever then names only moves
 * nothing in the run has measured (diag_input.tried), whatever was measured after them. */
static void rediagnose_top(tune_ctx *c, tune_search *s) {
  for (int i = 0; i < TUNE_TOP && s->top[i].have; i++) {
    candidate_result *r = &c->rep->results[s->top[i].at];
    char move[sizeof r->diag.move], lever[sizeof r->diag.lever];
    snprintf(move, sizeof move, "%s", r->diag.move);
    snprintf(lever, sizeof lever, "%s", r->diag.lever);
    tune_diagnose(c, s, &s->top[i].cand, r);
    if (strcmp(move, r->diag.move) || strcmp(lever, r->diag.lever))
      tune_store_update(c, s->top[i].at);
  }
}

rt_status tune_template_close(tune_ctx *c, tune_search *s, rt_error *err) {
  if (!s) return RT_OK;
  rt_status rc = RT_OK;
  if (!TUNE_STOPPED(c)) tune_remeasure_close(c, s);
  /* the counters of the best few, after every timing of this template */
  if (!TUNE_STOPPED(c)) tune_profile(c, s);
  if (!TUNE_STOPPED(c)) rediagnose_top(c, s);
  rc = tune_store_winner(c, s, tune_winner(c, s), err);
  tune_search_free(s);
  free(s);
  return rc;
}
