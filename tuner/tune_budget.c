/* tune_budget.c — the budget across templates (tune_impl.h): each live template's roof bound and
 * roof from its space (tune_survey.c), then the plan of search/budget.h: the templates in
 * increasing bound, each for an even share of what is left; a template whose bound cannot come
 * within BUDGET_SLACK of the run's best gets no evaluations, a template whose best reaches its
 * roof stops, and what they leave goes, round after round, to those that can still win.  The
 * run says what the rules did: a note, and a line per template in the report (tmpl).
 *
 * The bound is a lower bound on every configuration's time on any GPU of the kind (datasheet
 * peaks, no launch: roofline_bound_ceilings), so a measured time cannot beat it unless the
 * datasheet is wrong, and ruling out by it costs nothing in final quality; the roof is the same
 * arithmetic on the run's ceilings (measured where it measured them), which a template's best
 * can come near.  On the model device a bound and a prediction come from one model, so the
 * benchmark (bench/bench_steer.c) measures the rules' cost there; on a GPU a result that beats
 * its bound turns the rules off for the rest of the run, and the note says so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/features.h"
#include "tuner/tune_impl.h"

/* The rules need a search that may skip configurations: not an exhaustive strategy (brute_force:
 * every configuration asked for), one configuration (--config) or a covering set (--cover: every
 * code path once). */
static int rules_apply(const tune_ctx *c) {
  const char *st = c->o->strategy && *c->o->strategy ? c->o->strategy : strategy_default();
  return !c->o->config && !c->o->cover && !(strategy_flags(st) & STRATEGY_EXHAUSTIVE);
}

/* Each live template's survey (bound, roof) and its configurations' features; a template whose
 * bound cannot be computed is searched without one, and the note says why. */
static rt_status survey_templates(tune_ctx *c, tune_lineup *L, rt_error *err) {
  const gpu_spec *gpu = device_spec(c->dev);
  double min_bytes = c->fam->min_bytes(c->fam, &c->prob);
  for (int i = 0; i < L->n; i++) {
    if (!L->sp[i] || !c->have_ceil) continue;
    rt_vars env;
    rt_status rc = tune_template_env(c, L->dtype[i], &env, err);
    if (rc) return rc;
    size_t n = space_size(L->sp[i]);
    L->features[i] = n ? malloc(n * FEATURE_COUNT * sizeof *L->features[i]) : NULL;
    if (n && !L->features[i]) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    rt_error serr = {0};
    if (tune_template_survey(L->m[i], L->sp[i], &env, L->dtype[i], min_bytes, &c->ceil, gpu,
                             L->arch[i], 0, L->features[i], &L->survey[i], &serr) != RT_OK) {
      memset(&L->survey[i], 0, sizeof L->survey[i]);
      tune_note(c->rep, "%s has no roof bound (%.160s): it is searched without one",
                manifest_name(L->m[i]), serr.text);
    }
  }
  return RT_OK;
}

/* Asked again: a template whose stored results (s->prev) already reach its roof share was
 * stopped there by an earlier run, and the same command again asks for more.  The roof stop
 * is for a first run; for this one it is off (its roof left out of the plan), so the budget
 * buys new evaluations; the order and the ruling out by bounds stand (a ruled-out template
 * cannot win whatever it is given). */
static void search_on_if_asked_again(tune_ctx *c, budget_plan *p, int a, const tune_search *s) {
  double best_ms = 0;
  for (size_t i = 0; i < s->nprev; i++) {
    const candidate_result *r = &s->prev[i];
    if (r->status == RT_OK && r->time_ms > 0 && (!(best_ms > 0) || r->time_ms < best_ms))
      best_ms = r->time_ms;
  }
  if (!budget_stops(p, a, best_ms * 1e-3)) return;
  tune_note(c->rep,
            "%s was stopped at %.0f %% of its %.3g ms roof by an earlier run: searched on, as "
            "the same command again asks",
            s->name, 100 * p->arm[a].roof_s * 1e3 / best_ms, p->arm[a].roof_s * 1e3);
  p->arm[a].roof_s = 0;
}

/* Appends "NAME" to a comma-separated list. */
static void list_add(char *list, size_t size, const char *name) {
  size_t l = strlen(list);
  if (l + 1 < size) snprintf(list + l, size - l, "%s%s", l ? ", " : "", name);
}

/* The report's line for arm a (template lineup index i), its search s (NULL: never searched). */
static void report_template(tune_ctx *c, const budget_plan *p, int a, const tune_lineup *L, int i,
                            const tune_search *s) {
  tune_report *rep = c->rep;
  if (rep->ntmpl >= TUNE_REPORT_TEMPLATES) return;
  tune_template_report *t = &rep->tmpl[rep->ntmpl++];
  const budget_arm *arm = &p->arm[a];
  snprintf(t->name, sizeof t->name, "%s", manifest_name(L->m[i]));
  t->bound_ms = L->survey[i].bound.seconds * 1e3;
  t->bound_by_bytes = L->survey[i].bound.memory_bound;
  t->roof_ms = L->survey[i].roof.seconds * 1e3;
  t->best_ms = s ? s->best_ms : 0;
  t->evaluated = arm->spent;
  snprintf(t->outcome, sizeof t->outcome, "%s", budget_state_name(arm->state));
  t->against_ms = arm->state == ARM_RULED_OUT ? arm->ruled_against_s * 1e3 : 0;
  t->eval_s = s && s->fresh > 0 && device_has(c->dev, DEVICE_CAP_MEASURES)
                  ? s->eval_s / (double)s->fresh
                  : 0;
}

/* The one line on a budget left unspent: why (the spaces exhausted, the rest unable to win or
 * gain), and how to go further. */
static void say_unspent(tune_report *rep, long left, const char *done, int roofed, int ruled) {
  char gpu[64] = "";
  if (rep->roof_unspent_gpu_s > 0)
    snprintf(gpu, sizeof gpu, " (about %.1f s of GPU time)", rep->roof_unspent_gpu_s);
  if (done[0])
    tune_note(rep,
              "%ld of the budget's %ld evaluations not spent%s: every configuration of %s is "
              "measured (its space is exhausted: more values for its parameters, in its "
              "manifest, search further)%s",
              left, rep->budget, gpu, done,
              ruled ? "; the templates ruled out cannot win by their roof bounds (--strategy "
                      "brute_force searches them anyway)"
                    : "");
  else
    tune_note(
        rep,
        "%ld of the budget's %ld evaluations not spent%s: no template left could win or gain%s",
        left, rep->budget, gpu,
        roofed ? " (the same command again searches on past the roof stop)" : "");
}

/* What the rules did, in the note: the templates ruled out, those stopped at their roofs, the
 * budget they left unspent, and a bound a result beat. */
static void say_rules(tune_ctx *c, const budget_plan *p, const char *const *names, int ended) {
  tune_report *rep = c->rep;
  char out[256] = "", bounds[192] = "", at[256] = "", done[192] = "";
  double against = 0, gpu_s = 0, stopped_s = 0;
  long stopped_n = 0, all_n = 0;
  int ruled = 0, roofed = 0, exhausted = 0;
  for (size_t k = 0; k < rep->ntmpl; k++) {
    const tune_template_report *t = &rep->tmpl[k];
    all_n += t->evaluated;
    gpu_s += t->eval_s * (double)t->evaluated;
    if (!strcmp(t->outcome, budget_state_name(ARM_RULED_OUT))) {
      char b[32];
      snprintf(b, sizeof b, "%.3g", t->bound_ms);
      list_add(out, sizeof out, t->name);
      list_add(bounds, sizeof bounds, b);
      if (t->against_ms > against) against = t->against_ms;
      ruled++;
    } else if (!strcmp(t->outcome, budget_state_name(ARM_AT_ROOF))) {
      char b[128];
      snprintf(b, sizeof b, "%s at %.0f %% of its %.3g ms roof after %ld", t->name,
               100 * t->roof_ms / t->best_ms, t->roof_ms, t->evaluated);
      list_add(at, sizeof at, b);
      stopped_n += t->evaluated;
      stopped_s += t->eval_s * (double)t->evaluated;
      roofed++;
    } else if (!strcmp(t->outcome, budget_state_name(ARM_SPENT))) {
      list_add(done, sizeof done, t->name);
      exhausted++;
    }
  }
  if (ruled)
    tune_note(rep,
              "%s ruled out: %s roof bound%s (%s ms) cannot come within %.0f %% of the best so far "
              "(%.3g ms), so %s share went to the templates that can win",
              out, ruled > 1 ? "their" : "its", ruled > 1 ? "s" : "", bounds, 100 * BUDGET_SLACK,
              against, ruled > 1 ? "their" : "its");
  if (roofed)
    tune_note(rep, "stopped at the roof (%.0f %% of it): %s evaluations", 100 * p->stop, at);
  if (p->unsound) {
    const budget_arm *u = &p->arm[p->unsound_arm];
    tune_note(
        rep,
        "%s's best (%.3g ms) beat its roof bound (%.3g ms): bounds on these ceilings (%s) do not "
        "hold here, so no template was ruled out or stopped by its bound from then on",
        names[p->unsound_arm], u->best_s * 1e3, u->bound_s * 1e3, c->ceil.gpu);
  }
  if (ended && p->left > 0 && (ruled || roofed)) {
    rep->roof_unspent = p->left;
    /* at the mean evaluation time of the templates that stopped, else of all searched */
    double mean = stopped_n ? stopped_s / (double)stopped_n : all_n ? gpu_s / (double)all_n : 0;
    rep->roof_unspent_gpu_s = mean * (double)p->left;
  }
  if (ended && p->left > 0 && (ruled || roofed || exhausted))
    say_unspent(rep, p->left, done, roofed, ruled);
}

rt_status tune_templates(tune_ctx *c, tune_lineup *L, rt_error *err) {
  const tune_options *o = c->o;
  rt_status rc = survey_templates(c, L, err);
  if (rc) return rc;
  int idx[TUNE_MAX_TEMPLATES], n = 0; /* arm -> the lineup's template */
  double bound[TUNE_MAX_TEMPLATES], roof[TUNE_MAX_TEMPLATES];
  for (int i = 0; i < L->n && n < TUNE_MAX_TEMPLATES; i++) {
    if (!L->sp[i]) continue;
    idx[n] = i;
    bound[n] = L->survey[i].bound.seconds;
    roof[n++] = L->survey[i].roof.seconds;
  }
  int rules = rules_apply(c);
  c->rep->roof_rules = rules;
  c->rep->roof_stop = rules && c->have_ceil ? roofline_stop_fraction(&c->ceil) : 0;
  budget_plan plan;
  budget_init(&plan, n, bound, roof, c->budget_left, rules ? BUDGET_SLACK : 0, c->rep->roof_stop);
  tune_search *S[TUNE_MAX_TEMPLATES] = {0};
  int late = 0, ended = 0;
  while (!rc && !TUNE_STOPPED(c)) {
    long share = 0;
    double incumbent = c->rep->have_best ? c->rep->best.time_ms * 1e-3 : 0;
    int a = budget_next(&plan, incumbent, &share);
    if (a < 0) {
      ended = 1;
      break;
    }
    if (o->max_seconds > 0 && rt_now_s() - c->t0 >= o->max_seconds) {
      late = 1;
      break;
    }
    if (!S[a]) {
      rc = tune_template_open(c, L, idx[a], &S[a], err);
      if (rc) break;
      S[a]->plan = &plan;
      S[a]->arm = a;
      search_on_if_asked_again(c, &plan, a, S[a]);
    }
    tune_search *s = S[a];
    long before = s->fresh;
    s->share += share;
    rc = tune_search_run(c, s, err);
    long spent = s->fresh - before;
    c->budget_left -= spent;
    budget_told(&plan, a, spent, s->best_ms * 1e-3, s->spent_out);
  }
  /* each searched template's winner, in the order searched; a line each for the report */
  char waiting[192] = "";
  for (int k = 0; k < plan.n; k++) {
    int a = plan.order[k];
    report_template(c, &plan, a, L, idx[a], S[a]);
    if (!S[a] && plan.arm[a].state == ARM_WAITING)
      list_add(waiting, sizeof waiting, manifest_name(L->m[idx[a]]));
    if (rc && S[a]) { /* the run failed (rc and err keep its first error): nothing more is stored */
      tune_search_free(S[a]);
      free(S[a]);
    } else if (!rc) {
      rc = tune_template_close(c, S[a], err);
    }
    S[a] = NULL;
  }
  if (rc) return rc;
  if (waiting[0] && !TUNE_STOPPED(c))
    tune_note(
        c->rep, "%s not searched: the %s", waiting,
        late ? "time budget (--seconds) was spent" : "evaluation budget (--budget) was spent");
  const char *names[TUNE_MAX_TEMPLATES];
  for (int a = 0; a < n; a++) names[a] = manifest_name(L->m[idx[a]]);
  say_rules(c, &plan, names, ended);
  return RT_OK;
}
