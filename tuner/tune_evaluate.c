/* tune_evaluate.c — the one evaluate path (tune_impl.h): a search's strategy asks for a batch,
 * its candidates are made from their plans, resumed or claimed, compiled together (a
 * template's), evaluated one by one — an identical cubin once —, diagnosed, stored, told to
 * the strategy and added to the report, whatever their kind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/diagnose.h"
#include "model/occupancy.h"
#include "tuner/tune_impl.h"

/* A cubin already evaluated in this run: a configuration that compiles to the same code with
 * the same launch gets its result instead of a measurement of its own. */
struct seen_cubin {
  unsigned char key[32]; /* tune_cubin_key(): the cubin, the launch geometry, the derived values */
  candidate_result r;    /* its result */
  double seconds;        /* what evaluating it took (GPU time on a measuring device) */
};

static const seen_cubin *seen_find(const tune_ctx *c, const unsigned char key[32]) {
  for (size_t i = 0; i < c->nseen; i++)
    if (!memcmp(c->seen[i].key, key, 32)) return &c->seen[i];
  return NULL;
}

static void seen_add(tune_ctx *c, const unsigned char key[32], const candidate_result *r,
                     double seconds) {
  if (c->nseen == c->seen_cap) {
    size_t cap = c->seen_cap ? 2 * c->seen_cap : 64;
    seen_cubin *n = realloc(c->seen, cap * sizeof *n);
    if (!n) return; /* without the record the next one is measured: nothing lost but time */
    c->seen = n;
    c->seen_cap = cap;
  }
  seen_cubin *e = &c->seen[c->nseen++];
  memcpy(e->key, key, 32);
  e->r = *r;
  e->seconds = seconds;
}

/* ---- the report ---- */

/* Tells the progress callback where the run stands: phase, and the candidate just finished. */
static void tune_progress_say(tune_ctx *c, const char *phase, const candidate_result *last,
                              int resumed) {
  const tune_report *rep = c->rep;
  if (!c->o->progress) return;
  tune_progress p;
  memset(&p, 0, sizeof p);
  p.done = rep->evaluated;
  p.total = (size_t)rep->budget;
  p.resumed = rep->resumed;
  p.last = last;
  p.last_resumed = resumed;
  p.have_best = rep->have_best;
  p.best_ms = rep->best.time_ms;
  snprintf(p.best_template, sizeof p.best_template, "%s", rep->best.template_name);
  p.elapsed_s = rt_now_s() - c->t0;
  p.phase = phase;
  c->o->progress(c->o->progress_ctx, &p);
}

static rt_status add_result(tune_ctx *c, const candidate_result *r, long long id, int resumed,
                            const char *phase, rt_error *err) {
  tune_report *rep = c->rep;
  if (rep->nresults == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 64;
    candidate_result *n = realloc(rep->results, cap * sizeof *n);
    if (n) rep->results = n;
    long long *ids = n ? realloc(c->ids, cap * sizeof *ids) : NULL;
    if (!n || !ids) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    c->ids = ids;
    c->cap = cap;
  }
  c->ids[rep->nresults] = id;
  rep->results[rep->nresults++] = *r;
  if (!resumed && r->shortcut == RESULT_SAME_CUBIN) {
    rep->deduplicated++;
    rep->dedup_saved_s += r->saved_s;
  } else if (!resumed && r->shortcut == RESULT_STOPPED_EARLY) {
    rep->stopped_early++;
    rep->early_saved_s += r->saved_s;
  }
  if (resumed)
    rep->resumed++;
  else
    rep->evaluated++;
  if (r->status != RT_OK) rep->failed++;
  if (r->status == RT_OK && (!rep->have_best || r->time_ms < rep->best.time_ms)) {
    rep->best = *r;
    rep->have_best = 1;
  }
  tune_progress_say(c, phase, r, resumed);
  return RT_OK;
}

/* ---- diagnosis ---- */

/* What a template's diagnosis asks of its search (diag_input.tried, bytes_at). */
typedef struct diag_search {
  const tune_ctx *c;
  const tune_search *s;
} diag_search;

/* 1 when configuration idx of the search's space has a result in this run (evaluated, or told
 * from the database). */
static int diag_tried(void *ctx, size_t idx) {
  const diag_search *d = ctx;
  char cfg[768];
  space_format_config(d->s->sp, idx, cfg, sizeof cfg);
  const tune_report *rep = d->c->rep;
  for (size_t i = 0; i < rep->nresults; i++)
    if (!strcmp(rep->results[i].config, cfg) && !strcmp(rep->results[i].template_name, d->s->name))
      return 1;
  return 0;
}

/* The cost formula's bytes of configuration idx (as diag_input.l2_bytes); 0 when unknown. */
static double diag_bytes_at(void *ctx, size_t idx) {
  const diag_search *d = ctx;
  candidate_plan pl;
  if (manifest_plan(d->s->m, d->s->sp, idx, &d->s->env, &pl, NULL) != RT_OK) return 0;
  return pl.dram_bytes + pl.scratch_bytes;
}

/* Idempotent: the formula's bytes come from the plan, so a result diagnosed again once its
 * counters are read ends as if diagnosed then. */
void tune_diagnose(tune_ctx *c, const tune_search *s, const tune_cand *k, candidate_result *r) {
  if (r->status != RT_OK || !c->have_ceil || !(r->time_ms > 0)) return; /* 0 FLOPs: data movement */
  const candidate_plan *pl = &k->plan;
  double min_bytes = c->fam ? c->fam->min_bytes(c->fam, &c->prob) : 0;
  /* the bytes that reach DRAM (re-reads by blocks resident together come from L2) and those
   * that pass through L2 (the cost formula's, and split partials whole) */
  r->dram_bytes = roofline_candidate_dram(pl->dram_bytes, pl->scratch_bytes, min_bytes, 0,
                                          c->ceil.sm_count, &r->facts);
  int tmpl = s->kind == TUNE_TEMPLATE;
  diag_input in;
  memset(&in, 0, sizeof in);
  in.flops = r->flops;
  in.executed_flops = pl->vars.count ? pl->executed_flops : 0;
  in.dram_bytes = r->dram_bytes;
  in.l2_bytes = pl->dram_bytes + pl->scratch_bytes;
  in.min_bytes = min_bytes;
  in.time_s = r->time_ms * 1e-3;
  in.facts = r->facts;
  in.path = k->path;
  in.wgmma = k->wgmma;
  in.roles = tmpl ? &s->roles : NULL;
  in.config = pl->vars.count ? &pl->vars : NULL;
  in.domains = tmpl ? s->sp : NULL;
  diag_search ds = {c, s};
  if (tmpl) {
    in.tried = diag_tried;
    in.bytes_at = s->m ? diag_bytes_at : NULL;
    in.ctx = &ds;
  }
  in.measured = r->counters.measured ? &r->counters : NULL;
  in.fused_bytes = c->fam && c->fam->fused_bytes ? c->fam->fused_bytes(c->fam, &c->prob) : 0;
  diagnose(&in, &c->ceil, &r->diag, NULL);
}

/* ---- one candidate ---- */

/* A template candidate whose compile failed. */
static void compile_failed(const tune_ctx *c, const tune_cand *k, const compile_result *cr,
                           candidate_result *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->template_name, sizeof r->template_name, "%s", k->name);
  snprintf(r->config, sizeof r->config, "%s", k->plan.config);
  r->status = cr->status ? (rt_status)cr->status : RT_ERR_COMPILE;
  snprintf(r->detail, sizeof r->detail, "%s", cr->message);
  r->timing = c->rep->timing;
  snprintf(r->device_name, sizeof r->device_name, "%.63s", c->rep->device);
  r->verify_error = -1;
  r->flops = k->plan.flops;
  r->dram_bytes = k->plan.dram_bytes;
  r->facts = k->facts;
  snprintf(r->precision, sizeof r->precision, "%s", k->precision);
}

/* A compiled candidate whose cubin and launch match one this run evaluated: its result. */
static void same_cubin(const tune_ctx *c, const tune_cand *k, const seen_cubin *same,
                       candidate_result *r) {
  *r = same->r;
  snprintf(r->config, sizeof r->config, "%s", k->plan.config);
  snprintf(r->template_name, sizeof r->template_name, "%s", k->name);
  r->facts = k->facts;
  r->diag.move[0] = r->verdict[0] = 0;
  memset(&r->counters, 0, sizeof r->counters);
  r->saved_s = device_has(c->dev, DEVICE_CAP_MEASURES) ? same->seconds : 0;
  r->shortcut = RESULT_SAME_CUBIN;
  snprintf(r->detail, sizeof r->detail, "same cubin and launch as %.40s %.160s: measured once",
           same->r.template_name, same->r.config);
}

/* New candidate k's result into k->r: a compile failure, the result of an identical cubin, or
 * the device's; diagnosed. */
static rt_status cand_run(tune_ctx *c, tune_search *s, tune_cand *k, const compile_result *cr,
                          rt_error *err) {
  candidate_result *r = &k->r;
  if (cr) { /* a template's: ptxas's facts, and occupancy once it compiled */
    tune_plan_facts(&k->plan, &cr->report, &k->facts);
    if (cr->status == RT_OK && s->aspec) occupancy_fill_facts(s->aspec, &k->facts, NULL);
    if (cr->status != RT_OK) {
      compile_failed(c, k, cr, r);
      snprintf(r->code_hash, sizeof r->code_hash, "%s", k->code_hash);
      return RT_OK;
    }
  }
  unsigned char key[32];
  const seen_cubin *same = NULL;
  if (cr) { /* a cubin this run evaluated already, with the same launch, runs the same */
    tune_cubin_key(cr, s, &k->plan, key);
    same = seen_find(c, key);
  }
  if (same) {
    same_cubin(c, k, same, r);
  } else {
    /* a candidate that cannot win stops repeating: 3x the best so far */
    double stop = device_has(c->dev, DEVICE_CAP_MEASURES) && c->rep->have_best
                      ? DEVICE_SLOW_FACTOR * c->rep->best.time_ms
                      : 0;
    device_candidate dc;
    tune_cand_device(k, cr, stop, &dc);
    dc.source = k->source; /* the sim runs it from its source */
    dc.source_name = s->source_name;
    dc.copt = &s->copt;
    if (c->have_check) { /* on the smaller problem the device was set up with */
      dc.source = k->check_source;
      dc.check_plan = &k->check_plan;
      dc.check_why = k->check_why;
    }
    double t0 = rt_now_s();
    rt_status rc = device_evaluate(c->dev, &dc, r, err);
    if (rc) return rc;
    double took = rt_now_s() - t0;
    s->eval_s += took;
    if (cr) seen_add(c, key, r, took);
  }
  if (k->code_hash[0]) snprintf(r->code_hash, sizeof r->code_hash, "%s", k->code_hash);
  if (s->kind != TUNE_RECORDED) tune_diagnose(c, s, k, r);
  return RT_OK;
}

/* The one evaluate path: candidate k of search s (cr: its compile, a template's) gets its
 * result — taken when it failed before compiling or was resumed —, then is stored, told to the
 * strategy, added to the report and, among the fastest, kept.  A run stopped meanwhile drops
 * it (its worker may have died with us): the caller stops too. */
static rt_status tune_evaluate(tune_ctx *c, tune_search *s, tune_cand *k, const compile_result *cr,
                               rt_error *err) {
  candidate_result *r = &k->r;
  rt_status rc;
  if (k->state == CAND_NEW && (rc = cand_run(c, s, k, cr, err))) return rc;
  if (s->kind == TUNE_TEMPLATE && !r->precision[0])
    snprintf(r->precision, sizeof r->precision, "%s", s->precision);
  if (TUNE_STOPPED(c)) return RT_OK;
  int resumed = k->state == CAND_RESUMED;
  k->state = CAND_TOLD;
  long long id = 0;
  if (!resumed && (rc = tune_store_result(c, r, &id, err))) return rc;
  if (!resumed) s->fresh++;
  /* a recording's candidate comes diagnosed from its counters by the replay device (recorded.h) */
  if (s->st &&
      (rc = strategy_tell(s->st, k->plan.idx, r->status, r->time_ms,
                          s->kind == TUNE_RECORDED && !r->diag.limit[0] ? NULL : &r->diag, err)))
    return rc;
  if ((rc = add_result(c, r, id, resumed, s->phase, err))) return rc;
  if (r->status == RT_OK && r->time_ms > 0 && (!(s->best_ms > 0) || r->time_ms < s->best_ms))
    s->best_ms = r->time_ms;
  if (!resumed && r->status == RT_OK && (s->top_all || r->shortcut != RESULT_STOPPED_EARLY))
    tune_top_insert(s, k, cr, id, c->rep->nresults - 1);
  return RT_OK;
}

/* ---- a batch ---- */

/* Compiles the new candidates of a template's batch together (through the cubin cache); their
 * results land in s->crs.  *njobs: how many.  A run stopped meanwhile keeps none of them. */
static rt_status compile_batch(tune_ctx *c, tune_search *s, tune_cand *k, size_t n, size_t *njobs,
                               rt_error *err) {
  *njobs = 0;
  for (size_t i = 0; i < n; i++) {
    if (k[i].state != CAND_NEW) continue;
    s->jobs[*njobs].source = k[i].source;
    s->jobs[*njobs].name = s->source_name;
    k[i].job = (*njobs)++;
  }
  if (!*njobs) return RT_OK;
  tune_progress_say(c, "compile", NULL, 0); /* compiling takes a while: say so before it starts */
  compile_pool_stats stats;
  memset(&stats, 0, sizeof stats);
  memset(s->crs, 0, sizeof *s->crs * *njobs);
  double tc = rt_now_s();
  rt_status rc = compile_pool_run(s->jobs, *njobs, &s->copt, &s->popt, s->crs, &stats, err);
  c->rep->compile_seconds += rt_now_s() - tc;
  c->rep->cache_hits += stats.cache_hits;
  if (rc) return rc;
  if (TUNE_STOPPED(c)) { /* the compile workers died with us: nothing of this batch counts */
    for (size_t j = 0; j < *njobs; j++) compile_result_free(&s->crs[j]);
    *njobs = 0;
  }
  return RT_OK;
}

static void free_sources(tune_cand *k, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(k[i].source);
    k[i].source = NULL;
    free(k[i].check_source);
    k[i].check_source = NULL;
  }
}

/* Passes: compile and evaluate what this run holds; then wait for what other runs hold (their
 * results are told as resumed; a claim that expires becomes this run's). */
rt_status tune_batch(tune_ctx *c, tune_search *s, tune_cand *k, size_t n, rt_error *err) {
  rt_status rc = RT_OK;
  for (int pass = 0;; pass++) {
    if (pass && TUNE_STOPPED(c)) break;
    size_t njobs = 0;
    if (s->kind == TUNE_TEMPLATE) {
      if ((rc = compile_batch(c, s, k, n, &njobs, err))) return rc;
      if (TUNE_STOPPED(c)) {
        free_sources(k, n);
        break;
      }
    }
    for (size_t i = 0; i < n && !rc; i++) {
      if (k[i].state == CAND_TOLD || k[i].state == CAND_HELD) continue;
      const compile_result *cr =
          s->kind == TUNE_TEMPLATE && k[i].state == CAND_NEW ? &s->crs[k[i].job] : NULL;
      rc = tune_evaluate(c, s, &k[i], cr, err);
      if (TUNE_STOPPED(c)) break;
    }
    for (size_t j = 0; j < njobs; j++) compile_result_free(&s->crs[j]);
    if (rc || TUNE_STOPPED(c)) break;
    if ((rc = tune_store_wait_held(c, s, k, n, err))) break;
    int more = 0;
    for (size_t i = 0; i < n; i++) more |= k[i].state != CAND_TOLD;
    if (!more) break;
  }
  return rc;
}

/* ---- the search ---- */

/* Whether search s asks for more: its share not spent, the run not stopped, and its best not
 * yet at its roof (the budget's stop, search/budget.h). */
static int search_goes_on(const tune_ctx *c, const tune_search *s) {
  return !TUNE_STOPPED(c) && s->fresh < s->share &&
         !(s->plan && budget_stops(s->plan, s->arm, s->best_ms * 1e-3));
}

rt_status tune_search_run(tune_ctx *c, tune_search *s, rt_error *err) {
  tune_cand *k = calloc(TUNE_MAX_BATCH, sizeof *k);
  if (!k) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  rt_status rc = RT_OK;
  while (!rc && search_goes_on(c, s)) {
    size_t idx[TUNE_MAX_BATCH];
    size_t left = (size_t)(s->share - s->fresh);
    size_t n = strategy_ask(s->st, idx, s->batch < left ? s->batch : left);
    if (n == 0) {
      s->spent_out = 1;
      break;
    }
    for (size_t i = 0; i < n && !rc; i++) {
      if (s->kind == TUNE_TEMPLATE)
        tune_cand_template(c, s, idx[i], &k[i]);
      else
        tune_cand_recorded(s, idx[i], &k[i]);
      if (s->resumes) rc = tune_store_resume(c, s, &k[i], err);
    }
    if (!rc) rc = tune_batch(c, s, k, n, err);
    free_sources(k, n);
  }
  free(k);
  return rc;
}

void tune_search_free(tune_search *s) {
  for (int i = 0; i < TUNE_TOP; i++) compile_result_free(&s->top[i].cr);
  strategy_free(s->st);
  free(s->prev);
  free(s->source);
  free(s->jobs);
  free(s->crs);
  memset(s, 0, sizeof *s);
}
