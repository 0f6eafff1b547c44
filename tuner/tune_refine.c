/* tune_refine.c — what follows a search (tune_impl.h): its fastest few kept with their compiles,
 * the close ones re-measured, the counters of the best read, the winner among ties, and every
 * winner's "why this wins". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/tune_impl.h"
#include "tuner/verdict.h"

/* ---- the fastest few ---- */

/* Makes kept entry e candidate k just evaluated (with a copy of its compile). */
static void kept_set(tune_kept *e, const tune_cand *k, const compile_result *cr, long long id,
                     size_t at) {
  memset(&e->cr, 0, sizeof e->cr);
  if (cr && compile_result_copy(&e->cr, cr) != RT_OK) {
    e->have = 0;
    return;
  }
  e->have = 1;
  e->cand = *k;
  e->cand.source = NULL; /* the batch owns it */
  e->cand.check_source = NULL;
  e->id = id;
  e->at = at;
}

/* Inserts a successful candidate into the search's top list (fastest first, TUNE_TOP kept with
 * their compiles); the one that falls off is freed. */
void tune_top_insert(tune_search *s, const tune_cand *k, const compile_result *cr, long long id,
                     size_t at) {
  tune_kept *top = s->top;
  int i = 0;
  while (i < TUNE_TOP && top[i].have && top[i].cand.r.time_ms <= k->r.time_ms) i++;
  if (i == TUNE_TOP) return;
  compile_result_free(&top[TUNE_TOP - 1].cr);
  memmove(&top[i + 1], &top[i], (size_t)(TUNE_TOP - 1 - i) * sizeof *top);
  memset(&top[i], 0, sizeof top[i]);
  kept_set(&top[i], k, cr, id, at);
}

/* ---- re-measuring the close ones ---- */

static double median_of(double *v, int n) {
  rt_sort_doubles(v, (size_t)n);
  return rt_quantile(v, (size_t)n, 0.5);
}

/* On a GPU, a search's best and runner-up closer than their spread are measured twice more
 * each, alternately, and ranked by the median of their three medians (design.md: re-measure
 * when two candidates are closer than the spread).  The re-measurements are stored too. */
void tune_remeasure_close(tune_ctx *c, tune_search *s) {
  tune_kept *b1 = &s->top[0], *b2 = &s->top[1];
  if (!device_has(c->dev, DEVICE_CAP_MEASURES) || !b1->have || !b2->have) return;
  double noise = fmax(b1->cand.r.spread, b2->cand.r.spread);
  if (!(b2->cand.r.time_ms - b1->cand.r.time_ms < noise * b1->cand.r.time_ms)) return;
  double t[2][3] = {{b1->cand.r.time_ms}, {b2->cand.r.time_ms}};
  int n[2] = {1, 1};
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 2; i++) {
      tune_kept *b = i ? b2 : b1;
      device_candidate dc;
      tune_cand_device(&b->cand, &b->cr, 0, &dc);
      candidate_result r;
      if (device_evaluate(c->dev, &dc, &r, NULL) != RT_OK || r.status != RT_OK) continue;
      tune_diagnose(c, s, &b->cand, &r);
      snprintf(r.code_hash, sizeof r.code_hash, "%s", b->cand.r.code_hash);
      snprintf(r.detail, sizeof r.detail, "re-measured: within the spread of another candidate");
      long long id = 0;
      tune_store_result(c, &r, &id, NULL);
      t[i][n[i]++] = r.time_ms;
    }
  tune_report *rep = c->rep;
  int was_best = rep->have_best && !strcmp(rep->best.template_name, s->name) &&
                 (!strcmp(rep->best.config, b1->cand.plan.config) ||
                  !strcmp(rep->best.config, b2->cand.plan.config));
  b1->cand.r.time_ms = median_of(t[0], n[0]);
  b2->cand.r.time_ms = median_of(t[1], n[1]);
  /* the verdict reads the report's results: they carry the medians it was decided by */
  rep->results[b1->at].time_ms = b1->cand.r.time_ms;
  rep->results[b2->at].time_ms = b2->cand.r.time_ms;
  if (b2->cand.r.time_ms < b1->cand.r.time_ms) {
    tune_kept tmp = *b1; /* the compile results move with their candidates */
    *b1 = *b2;
    *b2 = tmp;
  }
  if (was_best) rep->best = b1->cand.r;
}

/* ---- hardware counters ---- */

void tune_counters_unavailable(tune_ctx *c, const rt_error *e) {
  c->counters_off = 1;
  tune_note(
      c->rep,
      "hardware counters not read (%.150s): the diagnosis uses the model's bytes and occupancy",
      e->text);
}

/* Reads the counters of kept candidate e and diagnoses it again with them: into the report's
 * entry and its database row.  Returns 1 when counters were read. */
static int profile_one(tune_ctx *c, const tune_search *s, const tune_kept *e) {
  if (c->counters_off || !device_has(c->dev, DEVICE_CAP_MEASURES) || TUNE_STOPPED(c)) return 0;
  device_candidate dc;
  tune_cand_device(&e->cand, e->cr.cubin ? &e->cr : NULL, 0, &dc); /* a library's has no cubin */
  hw_counters ctr;
  rt_error err = {0};
  if (device_profile(c->dev, &dc, &ctr, &err) != RT_OK) {
    tune_counters_unavailable(c, &err);
    return 0;
  }
  candidate_result *r = &c->rep->results[e->at];
  r->counters = ctr;
  tune_diagnose(c, s, &e->cand, r);
  c->rep->profiled++;
  tune_store_update(c, e->at);
  return 1;
}

/* The counters of the search's best few; for a template, then its calibration on this GPU: the
 * geometric mean of measured over modelled DRAM bytes, stored for the model device. */
void tune_profile(tune_ctx *c, tune_search *s) {
  double logsum = 0;
  int n = 0;
  for (int i = 0; i < TUNE_PROFILE && i < TUNE_TOP && s->top[i].have; i++) {
    if (!profile_one(c, s, &s->top[i])) break;
    const candidate_result *r = &c->rep->results[s->top[i].at];
    double measured = r->counters.dram_read_bytes + r->counters.dram_write_bytes;
    if (measured > 0 && r->dram_bytes > 0) {
      logsum += log(measured / r->dram_bytes);
      n++;
    }
  }
  const gpu_spec *gpu = device_spec(c->dev);
  if (s->kind != TUNE_TEMPLATE || n == 0 || !gpu) return;
  double ratio = exp(logsum / n);
  tune_store_set_calibration(c, s->name, ratio, n);
  size_t l = strlen(c->rep->calibration);
  snprintf(c->rep->calibration + l, sizeof c->rep->calibration - l, "%s%s %.2fx (%d)",
           l ? ", " : "", s->name, ratio, n);
}

/* ---- the winner ---- */

int tune_winner(const tune_ctx *c, const tune_search *s) {
  const tune_kept *top = s->top;
  const candidate_result *all = c->rep->results;
  int w = 0;
  if (s->kind != TUNE_TEMPLATE) return 0; /* the library's and a recording's: the fastest */
  for (int i = 1; i < TUNE_TOP && top[0].have && top[i].have; i++) {
    const candidate_result *ri = &all[top[i].at], *rw = &all[top[w].at];
    if (verdict_tied(&all[top[0].at], ri) && verdict_tie_cmp(ri, rw) < 0) w = i;
  }
  return w;
}

/* The fastest of the tie group other than the winner w (of template tmpl, or any when NULL):
 * what the tie-break decided against; -1 without a tie. */
static long tie_other(const candidate_result *all, size_t n, long w, const char *tmpl,
                      size_t tied) {
  if (!tied) return -1;
  long fast = -1, to = -1;
  for (size_t k = 0; k < n; k++)
    if (all[k].status == RT_OK && (!tmpl || !strcmp(all[k].template_name, tmpl)) &&
        (fast < 0 || all[k].time_ms < all[fast].time_ms))
      fast = (long)k;
  for (size_t k = 0; k < n; k++)
    if ((long)k != w && all[k].status == RT_OK && (!tmpl || !strcmp(all[k].template_name, tmpl)) &&
        verdict_tied(&all[fast], &all[k]) && (to < 0 || all[k].time_ms < all[to].time_ms))
      to = (long)k;
  return to;
}

/* Every template's winner (and the library's) gets its "why this wins" sentence, stored with its
 * result; the run's best is the overall winner, ties broken by the stated rule, with a sentence
 * of its own against the best of the other templates and the library's default. */
void tune_verdicts(tune_ctx *c) {
  tune_report *rep = c->rep;
  const candidate_result *all = rep->results;
  size_t n = rep->nresults;
  /* the library's default (cuBLASLt, cuDNN): the first its heuristic returned */
  const char *library = c->fam ? c->fam->library : NULL;
  long vendor = -1;
  for (size_t i = 0; i < n && vendor < 0 && library; i++)
    if (!strcmp(all[i].template_name, library) && all[i].status == RT_OK) vendor = (long)i;
  for (size_t i = 0; i < n; i++) {
    const char *name = all[i].template_name;
    int first = 1; /* each template once */
    for (size_t j = 0; j < i && first; j++) first = strcmp(all[j].template_name, name) != 0;
    if (!first) continue;
    size_t tied = 0;
    long w = verdict_pick(all, n, name, &tied);
    if (w < 0) continue;
    long ru = verdict_runner_up(all, n, w, name, 0);
    long to = tie_other(all, n, w, name, tied); /* for the tie-break's words */
    verdict_sentence(&all[w], tied, to >= 0 ? &all[to] : NULL, ru >= 0 ? &all[ru] : NULL,
                     "this template's runner-up", vendor >= 0 && vendor != w ? &all[vendor] : NULL,
                     rep->results[w].verdict, sizeof rep->results[w].verdict);
    tune_store_update(c, (size_t)w);
  }
  size_t tied = 0;
  long w = verdict_pick(all, n, NULL, &tied);
  if (w < 0) return;
  long ru = verdict_runner_up(all, n, w, NULL, 1);
  int same = ru < 0; /* one template: its own runner-up */
  if (same) ru = verdict_runner_up(all, n, w, NULL, 0);
  long to = tie_other(all, n, w, NULL, tied);
  char label[96];
  snprintf(label, sizeof label, same ? "the runner-up" : "the best of %s",
           ru >= 0 ? all[ru].template_name : "");
  rep->best = all[w];
  rep->have_best = 1;
  rep->tied = tied;
  verdict_sentence(&all[w], tied, to >= 0 ? &all[to] : NULL, ru >= 0 ? &all[ru] : NULL, label,
                   vendor >= 0 && vendor != w ? &all[vendor] : NULL, rep->best.verdict,
                   sizeof rep->best.verdict);
}
