/* tune_prior.c — priors (tune_impl.h): the same kernel's results elsewhere (--prior FILE) rank a
 * space before anything is evaluated, and the model device's prediction ranks it for the model
 * strategy and --prior model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "model/occupancy.h"
#include "search/replay.h"
#include "template/ktfile.h"
#include "tuner/tune_impl.h"

/* ---- the model's prediction ---- */

static double predict_config(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                             const gpu_spec *gpu, const char *dtype, double min_bytes,
                             double calibration) {
  const arch_spec *arch = gpu ? arch_spec_find(gpu->arch) : NULL;
  tune_cand k;
  memset(&k, 0, sizeof k);
  if (!arch || manifest_plan(m, sp, idx, env, &k.plan, NULL)) return HUGE_VAL;
  k.name = manifest_name(m);
  k.library_index = -1;
  k.path = tune_template_path(m, dtype, &k.wgmma);
  k.min_bytes = min_bytes;
  k.calibration = calibration;
  /* before ptxas runs: occupancy without the register count */
  tune_plan_facts(&k.plan, NULL, &k.facts);
  device_candidate dc;
  tune_cand_device(&k, NULL, 0, &dc);
  double t;
  if (occupancy_fill_facts(arch, &dc.facts, NULL) || device_model_predict(gpu, &dc, &t, NULL))
    return HUGE_VAL;
  return t * 1e3;
}

double tune_predict_config(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                           const gpu_spec *gpu, const char *dtype, double min_bytes) {
  return predict_config(m, sp, idx, env, gpu, dtype, min_bytes, 0);
}

/* strategy_predict_fn over a template search: the model device's time for a configuration
 * before it is compiled.  Strategies rank candidates with it (the model strategy measures in
 * this order). */
static double tune_predict(void *ctx, size_t idx) {
  const tune_search *s = ctx;
  return predict_config(s->m, s->sp, idx, &s->env, s->gpu, s->dtype, s->min_bytes, s->calibration);
}

rt_status tune_prior_model(tune_ctx *c, tune_search *s, strategy_options *so, size_t **order,
                           rt_error *err) {
  s->gpu = device_spec(c->dev);
  if (s->gpu && arch_spec_find(s->gpu->arch)) {
    so->predict = tune_predict;
    so->predict_ctx = s;
  }
  if (!tune_prior_is_model(c->o) || c->o->config) return RT_OK;
  /* --prior model: the model device's ranking of this GPU */
  if (!so->predict) {
    rt_error_locate(err, "--prior", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "the model has no figures for %s (%s) to rank %s with", c->rep->device,
                        s->arch, s->name);
  }
  rt_status rc = strategy_rank_predicted(s->sp, tune_predict, s, order, err);
  if (rc) return rc;
  so->prior = *order;
  so->nprior = space_size(s->sp);
  size_t l = strlen(c->rep->prior);
  snprintf(c->rep->prior + l, sizeof c->rep->prior - l, "%s%s %zu ranked by the model",
           l ? ", " : "", s->name, space_size(s->sp));
  return RT_OK;
}

/* ---- a recording of the same kernel elsewhere ---- */

/* --prior model: the model device ranks each template's space for the GPU tuned on. */
int tune_prior_is_model(const tune_options *o) {
  return o->prior && strcmp(o->prior, "model") == 0;
}

/* One --prior FILE's rankings of sp into R: a database (by its header, tune_transfer.c) gives
 * its device-and-shape groups, a recording or export (ktfile_load_select) its times.  *none
 * says why nothing was ranked when nothing was.  Errors: a file that cannot be read. */
static rt_status prior_file(tune_ctx *c, const char *path, const char *name, const space *sp,
                            tune_rankings *R, const char **none, rt_error *err) {
  if (tune_path_is_database(path)) {
    db *d = NULL;
    rt_status rc = db_open(path, DB_READONLY, &d, err);
    if (rc) return rc;
    device_identity id;
    device_get_identity(c->dev, &id);
    tune_transfer_summary sum;
    rc = tune_transfer_collect(d, 0, name, &c->prob, id.name, sp, R, &sum, err);
    db_close(d);
    if (!rc && sum.results) *none = NULL;
    return rc;
  }
  /* the problem as given (a replay without --shape/--dtype: the file's only one) */
  ktfile_select sel = {name, c->o->shape ? c->prob.shape : NULL,
                       c->o->dtype ? c->prob.dtype : NULL};
  ktfile *kf = NULL;
  rt_status rc = ktfile_load_select(path, &sel, &kf, err);
  if (rc == RT_ERR_NOT_FOUND) return RT_OK;
  if (rc) return rc;
  size_t *o = NULL, m = 0;
  rc = ktfile_rank_in(kf, sp, &o, &m, err);
  ktfile_free(kf);
  if (rc == RT_ERR_INVALID) {
    if (*none) *none = "no parameter in common";
    return RT_OK;
  }
  if (rc) return rc;
  if (R->n >= TUNE_MAX_RANKINGS) {
    free(o);
    return RT_OK;
  }
  R->order[R->n] = o;
  R->len[R->n++] = m;
  *none = NULL;
  return RT_OK;
}

/* The default prior: the target database's results of template NAME on other devices and
 * shapes (tune_transfer.c), with its words in rep->prior. */
static rt_status prior_default(tune_ctx *c, const char *name, const space *sp, tune_rankings *R,
                               rt_error *err) {
  if (!c->db) return RT_OK; /* --no-db: no database, no prior from it, nothing to say */
  tune_transfer_summary sum;
  memset(&sum, 0, sizeof sum);
  device_identity id;
  device_get_identity(c->dev, &id);
  rt_status rc = tune_transfer_collect(c->db, 1, name, &c->prob, id.name, sp, R, &sum, err);
  if (rc) return rc;
  char *p = c->rep->prior;
  size_t l = strlen(p);
  c->rep->prior_default = 1;
  c->rep->prior_results += sum.results;
  if (!sum.results)
    snprintf(p + l, sizeof c->rep->prior - l,
             "%snone for %s in the database (no result of it for %s on another device or "
             "shape)",
             l ? "; " : "", name, c->prob.dtype);
  else {
    char left[96] = "";
    if (sum.predicted_left)
      snprintf(left, sizeof left, ", %zu model-predicted left out (measured or replayed exist)",
               sum.predicted_left);
    snprintf(p + l, sizeof c->rep->prior - l, "%s%zu results of %s from the database (%s)%s%s",
             l ? "; " : "", sum.results, name, sum.from,
             sum.predicted ? ", model-predicted: no measured or replayed result exists" : "", left);
  }
  return RT_OK;
}

/* The configurations of sp (template NAME) by what the priors say: the --prior files' rankings
 * (recordings, exports, databases) or, without any, the target database's results on other
 * devices and shapes, merged by mean rank (replay_merge_orders) into *order; none (and RT_OK)
 * when nothing ranks this template; either way rep->prior says what they gave.  --no-prior:
 * none, silently.  Errors: a file that cannot be read, named. */
rt_status tune_prior(tune_ctx *c, const char *name, const space *sp, size_t **order, size_t *n,
                     rt_error *err) {
  *order = NULL;
  *n = 0;
  if (c->o->no_prior) return RT_OK;
  tune_rankings R;
  memset(&R, 0, sizeof R);
  const char *none = "no results for this problem"; /* why nothing is ranked, when it is not */
  rt_status rc = RT_OK;
  int explicit = c->o->prior != NULL;
  int nf = c->o->npriors > 1 ? c->o->npriors : 1;
  for (int f = 0; explicit && f < nf && f < TUNE_MAX_PRIORS && !rc; f++)
    rc = prior_file(c, nf > 1 ? c->o->priors[f] : c->o->prior, name, sp, &R, &none, err);
  if (!explicit && !rc) rc = prior_default(c, name, sp, &R, err);
  if (!rc && R.n)
    rc = replay_merge_orders((const size_t *const *)R.order, R.len, R.n, space_size(sp), order, n,
                             err);
  for (int i = 0; i < R.n; i++) free(R.order[i]);
  if (rc || !explicit) return rc;
  char *p = c->rep->prior;
  size_t l = strlen(p);
  if (!*n)
    snprintf(p + l, sizeof c->rep->prior - l, "%s%s none (%s)", l ? ", " : "", name, none);
  else
    snprintf(p + l, sizeof c->rep->prior - l, "%s%s %zu ranked", l ? ", " : "", name, *n);
  return RT_OK;
}

/* After every template's prior: an error when none ranked anything (a wrong file or problem). */
rt_status tune_prior_check(tune_ctx *c, size_t ranked, rt_error *err) {
  if (!c->o->prior || tune_prior_is_model(c->o) || ranked > 0) return RT_OK;
  rt_error_locate(err, c->o->prior, NULL, 0, 0);
  return rt_error_set(err, RT_ERR_NOT_FOUND,
                      "the --prior file ranks no configuration of %s for %s %s (%s): give "
                      "results of the same kernel and problem",
                      c->o->target ? c->o->target : "the target", c->prob.shape, c->prob.dtype,
                      c->rep->prior);
}

/* The prior's ranking of every template's space, before any candidate is evaluated. */
rt_status tune_priors(tune_ctx *c, tune_lineup *L, rt_error *err) {
  const tune_options *o = c->o;
  size_t ranked = 0;
  for (int i = 0; i < L->n && !o->no_prior && !tune_prior_is_model(o) && !o->config; i++) {
    if (!L->sp[i]) continue;
    rt_status rc =
        tune_prior(c, manifest_name(L->m[i]), L->sp[i], &L->prior[i], &L->nprior[i], err);
    if (rc) return rc;
    ranked += L->nprior[i];
  }
  return o->config ? RT_OK : tune_prior_check(c, ranked, err);
}
