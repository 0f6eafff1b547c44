/* verdict.c — ties, the tie-break and the "why this wins" sentence (see verdict.h). */
#include "tuner/verdict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "model/diagnose.h"

static int ok(const candidate_result *r) { return r && r->status == RT_OK && r->time_ms > 0; }

int verdict_tied(const candidate_result *a, const candidate_result *b) {
  if (!ok(a) || !ok(b)) return 0;
  double lo = fmin(a->time_ms, b->time_ms), d = fabs(a->time_ms - b->time_ms);
  if (a->timing == TIMING_MEASURED && b->timing == TIMING_MEASURED)
    return d <= fmax(a->spread, b->spread) * lo;
  return d <= VERDICT_EQUAL * lo;
}

static int smem_of(const candidate_result *r) {
  return r->facts.smem_static + r->facts.smem_dynamic;
}

int verdict_tie_cmp(const candidate_result *a, const candidate_result *b) {
  int ka = a->facts.registers > 0, kb = b->facts.registers > 0;
  if (ka != kb) return kb - ka; /* known registers first */
  if (ka && a->facts.registers != b->facts.registers)
    return a->facts.registers - b->facts.registers;
  if (smem_of(a) != smem_of(b)) return smem_of(a) - smem_of(b);
  return (a->time_ms > b->time_ms) - (a->time_ms < b->time_ms);
}

static int in_scope(const candidate_result *r, const char *tmpl) {
  return ok(r) && (!tmpl || !strcmp(r->template_name, tmpl));
}

long verdict_pick(const candidate_result *r, size_t n, const char *tmpl, size_t *tied) {
  long fast = -1;
  for (size_t i = 0; i < n; i++)
    if (in_scope(&r[i], tmpl) && (fast < 0 || r[i].time_ms < r[fast].time_ms)) fast = (long)i;
  if (tied) *tied = 0;
  if (fast < 0) return -1;
  long win = fast;
  size_t t = 0;
  for (size_t i = 0; i < n; i++) {
    if ((long)i == fast || !in_scope(&r[i], tmpl) || !verdict_tied(&r[fast], &r[i])) continue;
    t++;
    if (verdict_tie_cmp(&r[i], &r[win]) < 0) win = (long)i;
  }
  if (tied) *tied = t;
  return win;
}

long verdict_runner_up(const candidate_result *r, size_t n, long win, const char *tmpl,
                       int other_template) {
  /* the tie group is the fastest's: those tied with it are the winner's ties, not runners-up */
  long fast = -1;
  for (size_t i = 0; i < n; i++)
    if (in_scope(&r[i], tmpl) && (fast < 0 || r[i].time_ms < r[fast].time_ms)) fast = (long)i;
  long best = -1;
  for (size_t i = 0; i < n; i++) {
    if ((long)i == win || (long)i == fast || !in_scope(&r[i], tmpl)) continue;
    if (fast >= 0 && verdict_tied(&r[fast], &r[i])) continue;
    if (win >= 0 && other_template && !strcmp(r[i].template_name, r[win].template_name)) continue;
    if (best < 0 || r[i].time_ms < r[best].time_ms) best = (long)i;
  }
  return best;
}

/* ---- the sentence ---- */

typedef struct text {
  char *s;
  size_t size, len;
} text;

static void add(text *t, const char *fmt, ...) {
  if (t->len + 1 >= t->size) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->s + t->len, t->size - t->len, fmt, ap);
  va_end(ap);
  if (n > 0) t->len += (size_t)n < t->size - t->len ? (size_t)n : t->size - t->len - 1;
}

static int pct(double f) { return (int)lround(f * 100.0); }

/* How far r is from its limit's roof, 0..1. */
static double roof_fraction(const candidate_result *r) {
  if (!strcmp(r->diag.limit, "memory")) return r->diag.bw_frac;
  if (!strcmp(r->diag.limit, "compute")) return r->diag.flops_frac;
  return fmax(r->diag.bw_frac, r->diag.flops_frac);
}

const char *verdict_ratio(double time_ms, double other_ms, char *buf, size_t size) {
  double r = other_ms / time_ms; /* > 1: time_ms is the faster */
  if (!(r > 0) || !isfinite(r))
    snprintf(buf, size, "not comparable");
  else if (fabs(r - 1) < 0.0005)
    snprintf(buf, size, "as fast");
  else {
    double x = r > 1 ? r : 1 / r;
    snprintf(buf, size,
             x < 1.1  ? "%.3fx %s"
             : x < 10 ? "%.2fx %s"
                      : "%.1fx %s",
             x, r > 1 ? "faster" : "slower");
  }
  return buf;
}

/* "1.50x faster than LABEL (t ms)", "1.10x slower than ...", or "as fast as ...". */
static void margin(text *t, const candidate_result *win, const candidate_result *other,
                   const char *label) {
  char ratio[32];
  verdict_ratio(win->time_ms, other->time_ms, ratio, sizeof ratio);
  add(t, "%s %s %s (%.4g ms)", ratio, strcmp(ratio, "as fast") ? "than" : "as", label,
      other->time_ms);
}

static double dram_of(const candidate_result *r, int *measured) {
  *measured = r->counters.measured;
  return r->counters.measured ? r->counters.dram_read_bytes + r->counters.dram_write_bytes
                              : r->dram_bytes;
}

/* What tells the winner's diagnosis from the other's: the limits, then one distinguishing fact. */
static void differences(text *t, const candidate_result *w, const candidate_result *o,
                        const char *who) {
  if (!w->diag.limit[0] || !o->diag.limit[0]) return;
  int roofed = !strcmp(w->diag.limit, "memory") || !strcmp(w->diag.limit, "compute");
  if (!strcmp(w->diag.limit, o->diag.limit) && roofed)
    add(t, "; both %s-bound, at %d %% and %d %% of the roof", w->diag.limit, pct(roof_fraction(w)),
        pct(roof_fraction(o)));
  else if (!strcmp(w->diag.limit, o->diag.limit))
    add(t, "; both %s-bound", w->diag.limit);
  else {
    add(t, "; it is %s-bound", w->diag.limit);
    if (roofed) add(t, " at %d %% of its roof", pct(roof_fraction(w)));
    add(t, " where %s is %s-bound", who, o->diag.limit);
    if (!strcmp(o->diag.limit, "memory") || !strcmp(o->diag.limit, "compute"))
      add(t, " at %d %%", pct(roof_fraction(o)));
  }
  long long blocks =
      w->facts.work_blocks > w->facts.grid_blocks ? w->facts.work_blocks : w->facts.grid_blocks;
  int wm, om;
  double wb = dram_of(w, &wm), ob = dram_of(o, &om);
  if (w->diag.waves > 0 && o->diag.waves > 0 && w->diag.tail + 0.05 < o->diag.tail) {
    if (w->diag.tail < 0.01)
      add(t, "; wins on the tail: %lld blocks fill %.0f wave%s exactly", blocks, w->diag.waves,
          fabs(w->diag.waves - 1) < 0.01 ? "" : "s");
    else {
      char wi[64], oi[64];
      add(t, "; wins on the tail: %.2f waves leave %s idle against %s", w->diag.waves,
          diag_idle_words(&w->diag, wi, sizeof wi), diag_idle_words(&o->diag, oi, sizeof oi));
    }
  } else if (w->facts.spill_stores + w->facts.spill_loads == 0 &&
             o->facts.spill_stores + o->facts.spill_loads > 0) {
    add(t, "; no spills where %s spills %d bytes", who,
        o->facts.spill_stores + o->facts.spill_loads);
  } else if (wb > 0 && ob > 0 && wb < 0.9 * ob) {
    add(t, "; moves %d %% fewer DRAM bytes (%s)", pct(1 - wb / ob),
        wm && om ? "measured" : "modelled");
  } else {
    double wo = w->counters.measured ? w->counters.occupancy : w->facts.occupancy;
    double oo = o->counters.measured ? o->counters.occupancy : o->facts.occupancy;
    if (wo > 0 && oo > 0 && fabs(wo - oo) >= 0.1)
      add(t, "; %d %% occupancy against %d %% (%s)", pct(wo), pct(oo),
          w->counters.measured && o->counters.measured ? "measured" : "calculated");
  }
}

/* The vendor library's pick, named: the first algorithm its heuristic returned. */
static const char *vendor_label(const candidate_result *v, char *buf, size_t size) {
  snprintf(buf, size, "%s's default", v ? family_library_label(v->template_name) : "the library");
  return buf;
}

void verdict_sentence(const candidate_result *win, size_t tied, const candidate_result *tie_other,
                      const candidate_result *runner_up, const char *runner_label,
                      const candidate_result *vendor, char *out, size_t size) {
  text t = {out, size, 0};
  char vlabel[64];
  vendor_label(vendor, vlabel, sizeof vlabel);
  if (size) out[0] = 0;
  if (!ok(win)) return;
  if (tied) {
    int measured = win->timing == TIMING_MEASURED;
    if (measured)
      add(&t, "tied with %zu other%s within the %.1f %% spread", tied, tied == 1 ? "" : "s",
          100.0 * fmax(win->spread, tie_other ? tie_other->spread : 0));
    else
      add(&t, "tied with %zu other%s at %.4g ms (equal %s)", tied, tied == 1 ? "" : "s",
          win->time_ms,
          win->timing == TIMING_PREDICTED ? "on the model device" : "in the recording");
    add(&t, "; ties break on fewer registers, then less shared memory");
    if (tie_other) {
      if (win->facts.registers > 0 && win->facts.registers != tie_other->facts.registers)
        add(&t, ": %d registers against %d", win->facts.registers, tie_other->facts.registers);
      else if (smem_of(win) != smem_of(tie_other))
        add(&t, ": %d bytes of shared memory against %d", smem_of(win), smem_of(tie_other));
      else
        add(&t, ": equal in both, the first evaluated");
    }
  }
  size_t tie_end = t.len;
  if (tied) add(&t, ". ");
  size_t before = t.len;
  if (runner_up) margin(&t, win, runner_up, runner_label ? runner_label : "the runner-up");
  if (vendor && vendor != win && !(runner_up && vendor == runner_up)) {
    if (t.len > before) add(&t, " and ");
    margin(&t, win, vendor, vlabel);
  }
  if (t.len == before && !tied) add(&t, "the only successful candidate");
  if (t.len == before && tied) { /* nothing but the tie to say */
    t.len = tie_end;
    out[t.len] = 0;
    return;
  }
  const candidate_result *o = runner_up ? runner_up : vendor && vendor != win ? vendor : NULL;
  if (o) differences(&t, win, o, runner_up ? "the runner-up" : vlabel);
}
