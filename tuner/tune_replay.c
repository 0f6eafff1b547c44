/* tune_replay.c — a recorded file's space (tune_impl.h): on the replay device the file's
 * parameters are the configurations and its times the results; the target names the run and
 * the search goes through the same evaluate path as a template's, without compiling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/ktfile.h"
#include "tuner/tune_impl.h"

/* The recorded search: its name, the problem's FLOPs where they are known, and its strategy
 * (with --prior FILE's ranking). */
static rt_status replay_begin(tune_ctx *c, tune_search *s, const ktfile *kf, rt_error *err) {
  const tune_options *o = c->o;
  s->kind = TUNE_RECORDED;
  /* a family names no template: the file's kernel (a rooftune export's template) does */
  s->name = o->target && *o->target && !(c->fam && kf->kernel_name[0]) ? o->target
            : kf->kernel_name[0]                                       ? kf->kernel_name
                                                                       : "replay";
  s->sp = kf->space;
  s->phase = "evaluate";
  s->resumes = 1;
  s->share = c->budget_left;
  s->batch = TUNE_MAX_BATCH;
  s->top_all = 1;
  /* with a known family and problem, times become FLOP/s */
  problem p;
  if (c->fam && o->shape && o->dtype &&
      c->fam->parse_shape(c->fam, o->shape, o->dtype, NULL, &p, NULL) == RT_OK)
    s->flops = c->fam->flops(c->fam, &p);
  strategy_options so;
  memset(&so, 0, sizeof so);
  so.name = o->strategy;
  so.seed = o->seed;
  so.max_evals = 0; /* the budget counts new evaluations, as a template's share does */
  so.max_seconds = o->max_seconds;
  so.blind = o->blind;
  if (tune_prior_is_model(o)) {
    rt_error_locate(err, "--prior", NULL, 0, 0);
    return rt_error_set(
        err, RT_ERR_USAGE,
        "a replayed file has no model to rank it: give another recording as --prior");
  }
  size_t *prior = NULL;
  rt_status rc = RT_OK;
  if (!o->no_prior) {
    if ((rc = tune_prior(c, s->name, kf->space, &prior, &so.nprior, err)) ||
        (rc = tune_prior_check(c, so.nprior, err)))
      return rc;
    so.prior = prior;
  }
  rc = strategy_new(kf->space, &so, &s->st, err);
  free(prior);
  if (rc) return rc;
  snprintf(c->rep->strategy, sizeof c->rep->strategy, "%s", strategy_name(s->st));
  return RT_OK;
}

rt_status tune_replay(tune_ctx *c, rt_error *err) {
  const ktfile *kf = device_replay_file(c->dev);
  if (kf->unfinished)
    tune_note(c->rep, "%s is an unfinished Kernel Tuner cache, read as Kernel Tuner reads it",
              kf->path);
  tune_search *s = calloc(1, sizeof *s);
  if (!s) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  rt_status rc = replay_begin(c, s, kf, err);
  /* resume: a configuration of this file the database holds for this run's problem and device
   * is told, not evaluated and stored again; another replay of it into the database shares
   * the work by claims */
  if (!rc) rc = tune_store_search(c, s, c->o->target ? c->o->target : "", err);
  if (!rc) rc = tune_search_run(c, s, err);
  c->rep->templates = 1;
  if (!rc) rc = tune_store_winner(c, s, 0, err);
  tune_search_free(s);
  free(s);
  return rc;
}
