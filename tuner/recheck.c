/* recheck.c — a winner re-measured and judged (see recheck.h). */
#include "tuner/recheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tuner/tune.h"

static const struct {
  const char *name;
  int regression;
} recheck_table[] = {
#define RECHECK_ROW(id, name, regression) {name, regression},
    RECHECK_VERDICTS(RECHECK_ROW)
#undef RECHECK_ROW
};

const char *recheck_verdict_name(recheck_verdict v) {
  return v >= 0 && (size_t)v < sizeof recheck_table / sizeof recheck_table[0]
             ? recheck_table[v].name
             : "?";
}

int recheck_is_regression(recheck_verdict v) {
  return v >= 0 && (size_t)v < sizeof recheck_table / sizeof recheck_table[0] &&
         recheck_table[v].regression;
}

recheck_verdict recheck_compare(double then_ms, double then_spread, double now_ms,
                                double now_spread, double tol) {
  double margin =
      tol + (isfinite(then_spread) ? then_spread : 0) + (isfinite(now_spread) ? now_spread : 0);
  if (now_ms > then_ms * (1 + margin)) return RECHECK_SLOWER;
  if (now_ms * (1 + margin) < then_ms) return RECHECK_FASTER;
  return RECHECK_SAME;
}

void recheck_winner(const db_entry *e, const char *spec, const char *dbp, double tol,
                    double timeout_s, const char *const *worker_argv, recheck_result *v) {
  recheck_winner_tagged(e, spec, dbp, tol, timeout_s, worker_argv, NULL, NULL, v);
}

void recheck_winner_tagged(const db_entry *e, const char *spec, const char *dbp, double tol,
                           double timeout_s, const char *const *worker_argv, const char *tag,
                           volatile int *stop, recheck_result *v) {
  memset(v, 0, sizeof *v);
  v->now_ms = NAN;
  if (e->launch.library_algo[0]) {
    v->verdict = RECHECK_LIBRARY;
    snprintf(v->detail, sizeof v->detail, "a library candidate (%.40s): not re-measured here",
             e->template_name);
    return;
  }
  if (e->template_stale) {
    v->verdict = RECHECK_STALE;
    snprintf(v->detail, sizeof v->detail, "a newer version of %s is in the database: retune",
             e->template_name);
    return;
  }
  char command[1200];
  snprintf(command, sizeof command, "rooftune recheck (%s %s %s %s)%s%s", e->template_name,
           e->shape, e->dtype, e->config, tag ? " " : "", tag ? tag : "");
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = e->template_name;
  o.shape = e->shape;
  o.problem_args = e->args[0] ? e->args : NULL;
  o.dtype = e->dtype;
  o.device = spec;
  o.config = e->config;
  o.db_path = dbp;
  o.timeout_s = timeout_s;
  o.command = command;
  o.stop = stop;
  o.worker_argv = worker_argv;
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  if (st) {
    /* a configuration the template no longer has (parameters or constraints changed) */
    v->verdict = st == RT_ERR_PARSE || st == RT_ERR_NOT_FOUND ? RECHECK_STALE : RECHECK_ERROR;
    rt_error_format(&err, v->detail, sizeof v->detail);
    return;
  }
  if (rep.interrupted) {
    v->verdict = RECHECK_ERROR;
    snprintf(v->detail, sizeof v->detail, "interrupted");
  } else if (rep.nresults == 0) {
    v->verdict = RECHECK_ERROR;
    snprintf(v->detail, sizeof v->detail, "nothing was evaluated");
  } else if (rep.results[0].status != RT_OK) {
    v->verdict = RECHECK_FAILS;
    snprintf(v->detail, sizeof v->detail, "%s: %.250s", rt_status_name(rep.results[0].status),
             rep.results[0].detail);
  } else {
    const candidate_result *r = &rep.results[0];
    v->now_ms = r->time_ms;
    v->verdict = recheck_compare(e->time_ms, e->spread, r->time_ms, r->spread, tol);
  }
  tune_report_free(&rep);
}
