/* tune.c — the tuning loop (tune.h): tune_run() sets a run up and runs its phases in order;
 * the phases live in the files tune_impl.h lists. */
#include "tuner/tune.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "driver/cuda_driver.h"
#include "template/catalog.h"
#include "tuner/tune_impl.h"

void tune_note(tune_report *rep, const char *fmt, ...) {
  size_t l = strlen(rep->note);
  if (l + 3 >= sizeof rep->note) return;
  if (l) l += (size_t)snprintf(rep->note + l, sizeof rep->note - l, "; ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rep->note + l, sizeof rep->note - l, fmt, ap);
  va_end(ap);
}

const char *tune_default_device(char *note, size_t size) {
  int n = 0;
  rt_error e = {0};
  if (size) note[0] = 0;
  if (cuda_driver_load(&e) == RT_OK && cuda_gpu_count(&n, &e) == RT_OK && n > 0) return "cuda";
  snprintf(note, size,
           "no CUDA GPU here (%.120s): times are predictions of the model:h200 device, not "
           "measurements",
           e.text[0] ? e.text : "no device");
  return "model:h200";
}

void tune_report_free(tune_report *r) {
  if (!r) return;
  free(r->results);
  r->results = NULL;
  r->nresults = 0;
}

/* ---- phases ---- */

/* The device the run evaluates on (o->device, or the default one with a note why). */
static rt_status open_device(tune_ctx *c, rt_error *err) {
  const tune_options *o = c->o;
  const char *spec =
      o->device && *o->device ? o->device : tune_default_device(c->rep->note, sizeof c->rep->note);
  device_options dopt;
  memset(&dopt, 0, sizeof dopt);
  dopt.timeout_s = o->timeout_s;
  dopt.seed = o->seed;
  dopt.worker_exe = o->worker_exe;
  dopt.worker_argv = o->worker_argv;
  dopt.replay_template = o->target;
  dopt.replay_shape = o->shape;
  dopt.replay_dtype = o->dtype;
  rt_status rc = device_open(spec, &dopt, &c->dev, err);
  if (rc) return rc;
  snprintf(c->rep->device, sizeof c->rep->device, "%s", device_label(c->dev));
  c->rep->timing = device_timing(c->dev);
  c->have_ceil = device_ceilings(c->dev, &c->ceil);
  return RT_OK;
}

/* On the replay device the recorded file is the space; the shape and dtype only label the run. */
static rt_status run_replay(tune_ctx *c, const char *tpath, rt_error *err) {
  const tune_options *o = c->o;
  if (o->config)
    return rt_error_set(err, RT_ERR_USAGE,
                        "a replayed file has no template configuration to re-evaluate");
  c->fam = o->target ? family_find(o->target) : NULL;
  manifest *rm = NULL;
  if (!c->fam && o->target && catalog_find(tpath, o->target, &rm, NULL) == RT_OK)
    c->fam = family_find(manifest_family(rm)); /* a template's family */
  manifest_free(rm);
  snprintf(c->prob.family, sizeof c->prob.family, "%s", o->target ? o->target : "replay");
  /* without --shape/--dtype the run is labelled as the file's recorded problem */
  snprintf(c->prob.dtype, sizeof c->prob.dtype, "%s", o->dtype ? o->dtype : "-");
  snprintf(c->prob.shape, sizeof c->prob.shape, "%s", o->shape ? o->shape : "recorded");
  rt_status rc = tune_store_open(c, err);
  if (!rc) rc = tune_replay(c, err);
  if (!rc) tune_verdicts(c);
  return rc;
}

/* What the device needs before evaluating: the run in the database, the family's inputs and
 * reference in the worker, measured ceilings, whether counters are read, the cubin cache. */
static rt_status begin_device(tune_ctx *c, rt_error *err) {
  rt_status rc;
  if ((rc = tune_store_open(c, err))) return rc;
  if ((rc = device_begin(c->dev, c->fam, c->have_check ? &c->check_prob : &c->prob,
                         c->have_ref ? &c->ref : NULL, err)))
    return rc;
  if ((rc = tune_ceilings(c, err))) return rc;
  const char *ctr_env = getenv("ROOFTUNE_COUNTERS");
  if (device_has(c->dev, DEVICE_CAP_MEASURES) && ctr_env && !strcmp(ctr_env, "0")) {
    rt_error off = {0};
    rt_error_set(&off, RT_ERR_UNSUPPORTED, "ROOFTUNE_COUNTERS=0");
    tune_counters_unavailable(c, &off);
  }
  c->have_ceil = device_ceilings(c->dev, &c->ceil);
  if (c->have_ceil)
    roofline_describe(&c->ceil, device_spec(c->dev), c->rep->ceilings, sizeof c->rep->ceilings);
  rt_error cerr = {0};
  if (cubin_cache_open_default(&c->cache, &cerr) != RT_OK) { /* compile without it, and say so */
    c->cache = NULL;
    tune_note(c->rep, "%.160s; compiling without the cubin cache", cerr.text);
  } else if (c->cache && cubin_cache_warning(c->cache)[0]) {
    tune_note(c->rep, "%.160s", cubin_cache_warning(c->cache));
    c->cache_noted = 1;
  }
  return RT_OK;
}

/* A family or template target: its templates, the problem, the reference, the device's set-up,
 * the spaces and priors; then each template's search, the library's candidates, the verdicts. */
static rt_status run_target(tune_ctx *c, tune_lineup *L, const char *tpath, rt_error *err) {
  rt_status rc;
  if ((rc = tune_select(c, tpath, L, err))) return rc;
  int use_library = L->whole_family && device_has(c->dev, DEVICE_CAP_RUNS) && c->fam->library_list;
  if ((rc = tune_problem(c, L, tpath, use_library, err))) return rc;
  if ((rc = tune_check_problem(c, err))) return rc; /* the sim's, when the problem is large */
  /* the family's reference template: in the path always, compiled where kernels run */
  if ((rc = tune_reference(c, tpath, err))) return rc;
  if ((rc = begin_device(c, err))) return rc;
  if ((rc = tune_spaces(c, L, use_library, err))) return rc;
  if ((rc = tune_priors(c, L, err))) return rc;
  if ((rc = tune_templates(c, L, err))) return rc;
  if (use_library && !TUNE_STOPPED(c) && (rc = tune_library(c, err))) return rc;
  tune_verdicts(c);
  return RT_OK;
}

/* A strategy named (NULL: the default) is one the search has, whatever the target: a family's
 * lineup, one template, a replay. */
static rt_status known_strategy(const char *name, rt_error *err) {
  if (!name) return RT_OK;
  char list[256] = "";
  for (const char *const *s = strategy_names(); *s; s++) {
    if (!strcmp(*s, name)) return RT_OK;
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", *s);
  }
  rt_error_locate(err, "--strategy", NULL, 0, 0);
  return rt_error_set(err, RT_ERR_USAGE, "unknown strategy '%.60s' (the strategies are %s)", name,
                      list);
}

rt_status tune_run(const tune_options *o, tune_report *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  tune_ctx c;
  memset(&c, 0, sizeof c);
  c.o = o;
  c.rep = out;
  c.t0 = rt_now_s();
  out->budget = o->budget > 0 ? o->budget : TUNE_DEFAULT_BUDGET;
  c.budget_left = out->budget;
  tune_lineup *L = calloc(1, sizeof *L);
  rt_status rc = L ? RT_OK : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  char tbuf[8192];
  const char *tpath = o->template_path ? o->template_path : catalog_path(tbuf, sizeof tbuf);
  if (!rc && o->config && family_find(o->target ? o->target : "")) {
    rt_error_locate(err, "FAMILY|TEMPLATE", NULL, 0, 0);
    rc = rt_error_set(err, RT_ERR_USAGE,
                      "one configuration needs one template as the target, not the family %s",
                      o->target);
  }
  if (!rc) rc = known_strategy(o->strategy, err);
  if (!rc) rc = open_device(&c, err);
  /* the template path and the families declared in it */
  if (!rc) rc = family_load_path(tpath, err);
  if (!rc)
    rc = device_has(c.dev, DEVICE_CAP_RECORDED) ? run_replay(&c, tpath, err)
                                                : run_target(&c, L, tpath, err);
  if (!rc) {
    if (c.cache && !cubin_cache_usable(c.cache) && !c.cache_noted)
      tune_note(out, "%.160s", cubin_cache_warning(c.cache)); /* it failed during the run */
    out->interrupted = TUNE_STOPPED(&c);
  }
  rc = tune_store_close(&c, rc, err);
  out->seconds = rt_now_s() - c.t0;
  cubin_cache_close(c.cache);
  if (L) tune_lineup_free(L);
  free(L);
  device_close(c.dev);
  compile_result_free(&c.ref_cr);
  free(c.ids);
  free(c.seen);
  if (rc) {
    tune_report_free(out);
    memset(out, 0, sizeof *out);
  }
  return rc;
}
