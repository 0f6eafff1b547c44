/* report_page.c — the report's HTML and SVG, drawn from report_page data through the HTML
 * writer (see report_page.h and report.h). */
#include "tuner/job/report_page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/job/state.h"

int report_plottable(const report_cand *c) {
  return !strcmp(c->status, "OK") && c->ms > 0 && c->intensity > 0 && c->achieved > 0 && isfinite(c->intensity) &&
         isfinite(c->achieved);
}

static void si_unit(double v, const char *unit, char *buf, size_t size) {
  const char *p[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (fabs(v) >= 1000 && i < 6) v /= 1000, i++;
  snprintf(buf, size, "%.3g %s%s", v, p[i], unit);
}

/* ---- the roofline ---- */

#define PW 660
#define PH 380
#define ML 70
#define MR 16
#define MT 14
#define MB 46

typedef struct axes {
  double x0, x1, y0, y1; /* log10 bounds */
} axes;

static double ax_x(const axes *a, double x) { return ML + (log10(x) - a->x0) / (a->x1 - a->x0) * (PW - ML - MR); }
static double ax_y(const axes *a, double y) { return MT + (a->y1 - log10(y)) / (a->y1 - a->y0) * (PH - MT - MB); }

/* The plot's log bounds: every point, the roofs and their ridge. */
static axes roofline_axes(const report_roofs *rf, const report_cand *const *cs, size_t n) {
  double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
  for (size_t i = 0; i < n; i++) {
    xmin = fmin(xmin, cs[i]->intensity);
    xmax = fmax(xmax, cs[i]->intensity);
    ymin = fmin(ymin, cs[i]->achieved);
    ymax = fmax(ymax, cs[i]->achieved);
  }
  double peak = 0;
  for (int i = 0; i < rf->npeaks && i < 2; i++) peak = fmax(peak, rf->peak[i]);
  if (peak > 0 && isfinite(peak)) ymax = fmax(ymax, peak);
  if (rf->bw > 0 && peak > 0 && isfinite(peak / rf->bw)) {
    double ridge = peak / rf->bw;
    xmin = fmin(xmin, ridge);
    xmax = fmax(xmax, ridge);
  }
  if (!isfinite(xmin) || !isfinite(xmax) || !isfinite(ymin) || !isfinite(ymax) || !(xmax > 0) || !(ymax > 0))
    xmin = 1, xmax = 100, ymin = 1e9, ymax = 1e12;
  axes a = {floor(log10(xmin) - 0.3), ceil(log10(xmax) + 0.3), floor(log10(ymin) - 0.3), ceil(log10(ymax) + 0.15)};
  if (a.x1 - a.x0 < 2) a.x1 = a.x0 + 2;
  if (a.y1 - a.y0 < 2) a.y0 = a.y1 - 2;
  if (a.x1 - a.x0 > 40) a.x0 = a.x1 - 40; /* at most 40 decades: a grid line each */
  if (a.y1 - a.y0 > 40) a.y0 = a.y1 - 40;
  return a;
}

static void roofline_grid(html *h, const axes *a) {
  for (int e = (int)a->x0; e <= (int)a->x1; e++) {
    double x = ax_x(a, pow(10, e));
    char t[16];
    snprintf(t, sizeof t, "1e%d", e);
    svg_line(h, "grid", x, MT, x, PH - MB);
    svg_text(h, "tick", x, PH - MB + 14, "middle", t);
  }
  for (int e = (int)a->y0; e <= (int)a->y1; e++) {
    double y = ax_y(a, pow(10, e));
    char t[32];
    si_unit(pow(10, e), "", t, sizeof t);
    svg_line(h, "grid", ML, y, PW - MR, y);
    svg_text(h, "tick", ML - 4, y + 4, "end", t);
  }
  svg_text(h, "axis", (ML + PW - MR) / 2.0, PH - 8, "middle", "arithmetic intensity (FLOP per modeled DRAM byte)");
  html_open_class(h, "text", "axis");
  html_attrf(h, "transform", "translate(14 %d) rotate(-90)", (MT + PH - MB) / 2);
  html_attr(h, "text-anchor", "middle");
  html_text(h, "achieved FLOP/s");
  html_close(h);
  html_newline(h);
}

static void roofline_roofs(html *h, const axes *a, size_t si, const report_roofs *rf) {
  double X0 = pow(10, a->x0), X1 = pow(10, a->x1);
  char clip[32];
  snprintf(clip, sizeof clip, "clip%zu", si);
  for (int i = 0; i < rf->npeaks && i < 2 && rf->bw > 0; i++) {
    if (!(rf->peak[i] > 0)) continue;
    double ridge = rf->peak[i] / rf->bw;
    double xy[6] = {ax_x(a, X0), ax_y(a, rf->bw * X0), ax_x(a, ridge), ax_y(a, rf->peak[i]), ax_x(a, X1),
                    ax_y(a, rf->peak[i])};
    svg_polyline(h, i ? "roof second" : "roof", xy, 3, clip);
    char t[32], label[200];
    si_unit(rf->peak[i], "FLOP/s", t, sizeof t);
    snprintf(label, sizeof label, "%s %s (%s)", rf->peak_name[i] ? rf->peak_name[i] : "compute", t,
             rf->peak_measured[i] ? "measured" : "spec");
    svg_text(h, "rooflabel", PW - MR - 4, ax_y(a, rf->peak[i]) - 5, "end", label);
  }
  if (rf->bw > 0) {
    char t[32], label[96];
    si_unit(rf->bw, "B/s", t, sizeof t);
    double lx = pow(10, a->x0 + 0.25), ly = rf->bw * lx;
    if (ly < pow(10, a->y0)) { /* the slope enters the plot further right */
      ly = pow(10, a->y0 + 0.4);
      lx = ly / rf->bw;
    }
    snprintf(label, sizeof label, "DRAM %s (%s)", t, rf->bw_measured ? "measured" : "spec");
    svg_text(h, "rooflabel", ax_x(a, lx) + 6, ax_y(a, ly) - 2, NULL, label);
  }
}

static void roofline_points(html *h, const axes *a, const report_cand *const *cs, size_t n, const report_cand *win) {
  for (size_t i = 0; i < n; i++) {
    const report_cand *c = cs[i];
    double x = ax_x(a, c->intensity), y = ax_y(a, c->achieved);
    const char *kind = timing_kind_name(c->timing);
    char cls[40];
    snprintf(cls, sizeof cls, "pt %s", kind);
    if (c->timing == TIMING_REPLAYED) svg_rect_open(h, cls, x - 3, y - 3, 6, 6);
    else svg_circle_open(h, cls, x, y, 3.2);
    char t[32];
    si_unit(c->achieved, "FLOP/s", t, sizeof t);
    svg_titlef(h, "%s %s: %.4g ms, %s, %s%s%s", c->tmpl, c->config, c->ms, t, kind, c->limit[0] ? ", " : "",
               c->limit);
    html_close(h);
    html_newline(h);
  }
  if (win) {
    svg_circle_open(h, "win", ax_x(a, win->intensity), ax_y(a, win->achieved), 7.5);
    html_close(h);
    svg_text(h, "winlabel", ax_x(a, win->intensity) + 9, ax_y(a, win->achieved) - 8, NULL, "winner");
  }
}

static void roofline_svg(html *h, size_t si, const report_section *s, const report_cand *const *cs, size_t n,
                         const report_cand *win) {
  const report_roofs *rf = &s->roofs;
  axes a = roofline_axes(rf, cs, n);
  svg_open(h, "roofline", PW, PH);
  html_attrf(h, "data-candidates", "%zu", n);
  svg_titlef(h, "roofline of %s %s", s->family, s->shape);
  html_newline(h);
  html_open(h, "defs");
  html_open(h, "clipPath");
  html_attrf(h, "id", "clip%zu", si);
  svg_rect_open(h, NULL, ML, MT, PW - ML - MR, PH - MT - MB);
  html_close(h);
  html_close(h);
  html_close(h);
  svg_rect_open(h, "plot", ML, MT, PW - ML - MR, PH - MT - MB);
  html_close(h);
  html_newline(h);
  roofline_grid(h, &a);
  roofline_roofs(h, &a, si, rf);
  roofline_points(h, &a, cs, n, win);
  html_close(h); /* svg */
  html_newline(h);
}

/* ---- history: the winner's time run after run ---- */

static int run_of(const report_section *s, const db_run_info *r) {
  return !strcmp(r->family, s->family) && !strcmp(r->shape, s->shape) && !strcmp(r->dtype, s->dtype) &&
         !strcmp(r->layout, s->layout) && !strcmp(r->device.name, s->device.name);
}

enum { HW = 660, HH = 170, HL = 70, HR = 16, HT = 12, HB = 34 };

/* The best-so-far line over the runs of section s (k-th run at x HL + 10 + step k). */
static void history_best(html *h, const report_section *s, const db_run_info *runs, size_t nruns, double step,
                         double ymax) {
  double *xy = malloc((nruns ? nruns : 1) * 2 * sizeof *xy);
  if (!xy) return;
  double best = INFINITY;
  size_t k = 0, np = 0;
  for (size_t i = 0; i < nruns; i++) {
    const db_run_info *r = &runs[i];
    if (!run_of(s, r) || r->results == 0) continue;
    if (!job_run_is_recheck(r) && isfinite(r->best_ms)) best = fmin(best, r->best_ms);
    if (isfinite(best)) {
      xy[2 * np] = HL + 10 + step * (double)k;
      xy[2 * np + 1] = HT + (1 - best / ymax) * (HH - HT - HB);
      np++;
    }
    k++;
  }
  svg_polyline(h, "best", xy, np, NULL);
  html_newline(h);
  free(xy);
}

static void history_marks(html *h, const report_section *s, const db_run_info *runs, size_t nruns, double step,
                          double ymax, double tol, char *first, char *last, size_t size) {
  size_t k = 0;
  double best = INFINITY;
  for (size_t i = 0; i < nruns; i++) {
    const db_run_info *r = &runs[i];
    if (!run_of(s, r) || r->results == 0) continue;
    double x = HL + 10 + step * (double)k++;
    if (!first[0]) snprintf(first, size, "%.10s", r->started_at);
    snprintf(last, size, "%.10s", r->started_at);
    if (job_run_is_recheck(r)) {
      int failed = strcmp(r->last_status, "OK") || isnan(r->last_ms);
      int slower = !failed && isfinite(best) &&
                   recheck_compare(best, NAN, r->last_ms, r->last_spread, tol) == RECHECK_SLOWER;
      double v = failed ? ymax : r->last_ms;
      double y = HT + (1 - v / ymax) * (HH - HT - HB);
      static const double diamond[] = {5, 5, -5, 5, -5, -5};
      svg_polygon_open(h, failed || slower ? "recheck regressed" : "recheck", x, y - 5, diamond, 3);
      svg_titlef(h, "recheck %s: %s%s", r->started_at, failed ? "FAILS " : "", failed ? r->last_status : "");
      html_close(h);
      html_newline(h);
    } else if (isfinite(r->best_ms)) {
      best = fmin(best, r->best_ms);
      svg_circle_open(h, "run", x, HT + (1 - r->best_ms / ymax) * (HH - HT - HB), 3);
      svg_titlef(h, "run %lld %s: best %.4g ms, %lld results (%s)", r->id, r->started_at, r->best_ms, r->results,
                 r->status);
      html_close(h);
      html_newline(h);
    }
  }
}

static void history_svg(html *h, const report_section *s, const db_run_info *runs, size_t nruns, double tol) {
  size_t n = 0;
  double ymax = 0;
  for (size_t i = 0; i < nruns; i++)
    if (run_of(s, &runs[i]) && runs[i].results > 0) {
      n++;
      double v = job_run_is_recheck(&runs[i]) ? runs[i].last_ms : runs[i].best_ms;
      if (isfinite(v)) ymax = fmax(ymax, v);
    }
  if (n == 0 || !(ymax > 0) || !isfinite(ymax)) {
    html_elem(h, "p", "muted", "no run with a time yet");
    html_newline(h);
    return;
  }
  ymax *= 1.15;
  svg_open(h, "history", HW, HH);
  html_attrf(h, "data-runs", "%zu", n);
  svg_rect_open(h, "plot", HL, HT, HW - HL - HR, HH - HT - HB);
  html_close(h);
  html_newline(h);
  for (int k = 0; k <= 4; k++) {
    double v = ymax * k / 4, y = HT + (1 - (double)k / 4) * (HH - HT - HB);
    char t[32];
    snprintf(t, sizeof t, "%.3g ms", v);
    svg_line(h, "grid", HL, y, HW - HR, y);
    svg_text(h, "tick", HL - 4, y + 4, "end", t);
  }
  double step = n > 1 ? (double)(HW - HL - HR - 20) / (double)(n - 1) : 0;
  history_best(h, s, runs, nruns, step, ymax);
  char first[32] = "", last[32] = "";
  history_marks(h, s, runs, nruns, step, ymax, tol, first, last, sizeof first);
  svg_text(h, "tick", HL, HH - HB + 14, NULL, first);
  svg_text(h, "tick", HW - HR, HH - HB + 14, "end", last);
  svg_text(h, "axis", (HL + HW - HR) / 2.0, HH - 6, "middle",
           "runs, oldest first (circles: best of a tuning run; line: best so far; diamonds: rechecks)");
  html_close(h); /* svg */
  html_newline(h);
}

/* ---- the page ---- */

/* The style sheet: a literal, as html_style takes it. */
#define REPORT_CSS \
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1f24;background:#fff;max-width:1100px}" \
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-top:1px solid #d0d7de;" \
    "padding-top:14px}table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid " \
    "#eaeef2;text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:" \
    "tabular-nums}code{font-size:12px;word-break:break-all}.muted{color:#57606a}.bad{color:#b42318;font-weight:600}.ok{color:#1a7f37}" \
    "tr.win td{background:#fff8c5}section.regressed h2{color:#b42318}.banner{background:#fdecea;border:1px solid " \
    "#f5c2c0;padding:8px 12px;border-radius:6px}svg text{font:11px system-ui,sans-serif;fill:#57606a}" \
    "svg .axis{font-size:12px;fill:#1b1f24}rect.plot{fill:#fbfcfd;stroke:#d0d7de}line.grid{stroke:#eaeef2}" \
    ".roof{fill:none;stroke:#cf222e;stroke-width:2}.roof.second{stroke:#bc4c00;stroke-dasharray:6 3}" \
    ".rooflabel{fill:#cf222e!important;font-weight:600}.pt.measured{fill:#0969da;fill-opacity:.75}" \
    ".pt.predicted{fill:#fff;stroke:#0969da;stroke-width:1.3}.pt.replayed{fill:#8250df;fill-opacity:.75}" \
    ".win{fill:none;stroke:#1b1f24;stroke-width:2}.winlabel{fill:#1b1f24!important;font-weight:600}" \
    ".best{fill:none;stroke:#1a7f37;stroke-width:2}.run{fill:#1a7f37}.recheck{fill:#0969da}" \
    ".recheck.regressed{fill:#cf222e}.legend span{margin-right:14px}"

/* A link to section i, its text the problem and device. */
static void problem_link(html *h, const report_section *s, size_t i, int with_device) {
  html_open(h, "a");
  html_attrf(h, "href", "#p%zu", i);
  html_textf(h, "%s %s %s%s%s", s->family, s->shape, s->dtype, with_device ? " on " : "",
             with_device ? s->device.name : "");
  html_close(h);
}

static void cell(html *h, const char *cls, const char *text) { html_elem(h, "td", cls, text); }

static void cellf(html *h, const char *cls, const char *fmt, double v) {
  char t[48];
  snprintf(t, sizeof t, fmt, v);
  html_elem(h, "td", cls, t);
}

static void header_row(html *h, const char *const *names, const char *const *classes) {
  html_open(h, "tr");
  for (size_t i = 0; names[i]; i++) html_elem(h, "th", classes ? classes[i] : NULL, names[i]);
  html_close(h);
  html_newline(h);
}

static void page_head(const report_page *p, html *h) {
  html_doctype(h);
  html_open(h, "html");
  html_attr(h, "lang", "en");
  html_open(h, "head");
  html_open(h, "meta");
  html_attr(h, "charset", "utf-8");
  html_close(h);
  html_elem(h, "title", NULL, p->title);
  html_style(h, REPORT_CSS);
  html_close(h); /* head */
  html_open(h, "body");
  html_newline(h);
  html_elem(h, "h1", NULL, p->title);
  html_newline(h);
  html_elemf(h, "p", "muted", "%s \u00b7 generated %s by rooftune \u00b7 %zu problem%s on their devices, %zu candidates",
             p->source, p->generated, p->nsec, p->nsec == 1 ? "" : "s", p->ncand);
  html_newline(h);
  if (p->regressions) {
    html_open_class(h, "p", "banner");
    html_elemf(h, "span", "bad", "%zu regression%s", p->regressions, p->regressions > 1 ? "s" : "");
    html_text(h, ": the latest recheck found a winner slower than when it was tuned, or broken:");
    for (size_t i = 0; i < p->nsec; i++)
      if (p->sec[i].regression) {
        html_text(h, " ");
        problem_link(h, &p->sec[i], i, 1);
      }
    html_close(h);
    html_newline(h);
  }
  html_open_class(h, "p", "legend muted");
  html_elem(h, "span", NULL, "\u25cf measured on the GPU");
  html_elem(h, "span", NULL, "\u25cb predicted by the model device");
  html_elem(h, "span", NULL, "\u25a0 replayed from a file");
  html_elem(h, "span", NULL, "\u25ef winner");
  html_close(h);
  html_newline(h);
}

/* The overview: one row per section, regressions first. */
static void page_overview(const report_page *p, html *h) {
  static const char *const names[] = {"problem", "device", "winner", "time ms", "TFLOP/s", "timing", "limit",
                                      "candidates", "last run", "recheck", NULL};
  static const char *const classes[] = {NULL, NULL, NULL, "num", "num", NULL, NULL, "num", NULL, NULL};
  html_open_class(h, "table", "overview");
  header_row(h, names, classes);
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < p->nsec; i++) {
      const report_section *s = &p->sec[i];
      if (s->regression != !pass) continue;
      html_open(h, "tr");
      html_open(h, "td");
      problem_link(h, s, i, 0);
      html_close(h);
      cell(h, NULL, s->device.name);
      if (s->have_winner) {
        double tf = s->winner.flops > 0 ? s->winner.flops / (s->winner.time_ms * 1e-3) / 1e12 : NAN;
        cell(h, NULL, s->winner.template_name);
        cellf(h, "num", "%.4g", s->winner.time_ms);
        cellf(h, "num", "%.4g", tf);
        cell(h, NULL, timing_kind_name(s->winner.timing));
        cell(h, NULL, s->winner.limit);
      } else {
        cell(h, "bad", "none");
        for (int k = 0; k < 4; k++) cell(h, NULL, "");
      }
      html_elemf(h, "td", "num", "%zu", s->ncand);
      html_elemf(h, "td", NULL, "%.10s", s->last_run);
      cell(h, s->regression ? "bad" : "ok", s->have_verdict ? recheck_verdict_name(s->verdict) : "");
      html_close(h);
      html_newline(h);
    }
  html_close(h);
  html_newline(h);
}

/* A section's table of its fastest candidates. */
static void section_table(const report_page *p, html *h, const report_cand *const *cs, size_t n,
                          const report_cand *win) {
  static const char *const names[] = {"#", "template", "time ms", "TFLOP/s", "timing", "limit", "lever",
                                      "configuration", NULL};
  static const char *const classes[] = {NULL, NULL, "num", "num", NULL, NULL, NULL, NULL};
  html_open_class(h, "table", "top");
  header_row(h, names, classes);
  for (size_t k = 0; k < n && k < (size_t)p->top; k++) {
    const report_cand *c = cs[k];
    html_open_class(h, "tr", c == win ? "win" : NULL);
    html_elemf(h, "td", "num", "%zu", k + 1);
    cell(h, NULL, c->tmpl);
    if (c->ms > 0) {
      cellf(h, "num", "%.4g", c->ms);
      cellf(h, "num", "%.4g", c->achieved > 0 ? c->achieved / 1e12 : NAN);
      cell(h, NULL, timing_kind_name(c->timing));
    } else {
      cell(h, "num bad", c->status);
      cell(h, NULL, "");
      cell(h, NULL, timing_kind_name(c->timing));
    }
    cell(h, NULL, c->limit);
    cell(h, NULL, c->lever);
    html_open(h, "td");
    html_elem(h, "code", NULL, c->config);
    html_close(h);
    html_close(h);
    html_newline(h);
  }
  html_close(h);
  html_newline(h);
}

static void page_section(const report_page *p, html *h, size_t i, report_stats *st) {
  const report_section *s = &p->sec[i];
  const report_cand *const *cs = p->order + p->start[i];
  size_t n = p->start[i + 1] - p->start[i];
  html_open(h, "section");
  html_attrf(h, "id", "p%zu", i);
  if (s->regression) html_attr(h, "class", "regressed");
  html_open(h, "h2");
  html_textf(h, "%s %s %s on %s", s->family, s->shape, s->dtype, s->device.name);
  if (s->regression) html_textf(h, " \u2014 regression (%s)", recheck_verdict_name(s->verdict));
  html_close(h);
  html_newline(h);
  /* the plottable candidates, in time order (failures sort last) */
  const report_cand **pts = malloc((n ? n : 1) * sizeof *pts);
  size_t np = 0;
  const report_cand *win = NULL;
  for (size_t k = 0; pts && k < n; k++) {
    if (!report_plottable(cs[k])) continue;
    pts[np++] = cs[k];
    if (s->have_winner && !win && !strcmp(cs[k]->tmpl, s->winner.template_name) &&
        !strcmp(cs[k]->config, s->winner.config) && !strcmp(cs[k]->toolkit, s->winner.toolkit))
      win = cs[k];
  }
  html_open_class(h, "p", "muted");
  html_textf(h, "%zu candidates, %zu plotted", n, np);
  if (s->nfailed) html_textf(h, ", %zu failed (no time, not plotted)", s->nfailed);
  if (n > np + s->nfailed) html_textf(h, ", %zu without a FLOP count (not plotted)", n - np - s->nfailed);
  html_textf(h, "; roofs of %s", s->roofs.gpu);
  html_close(h);
  html_newline(h);
  roofline_svg(h, i, s, pts ? (const report_cand *const *)pts : cs, pts ? np : 0, win);
  free(pts);
  st->points += np;
  st->candidates += n;
  st->failed += s->nfailed;
  section_table(p, h, cs, n, win);
  if (s->have_verdict) {
    html_open(h, "p");
    html_text(h, "latest recheck: ");
    html_elem(h, "span", s->regression ? "bad" : "ok", recheck_verdict_name(s->verdict));
    html_textf(h, ", %.4g ms against %.4g ms when tuned", s->recheck_ms, s->winner.time_ms);
    html_close(h);
    html_newline(h);
  }
  history_svg(h, s, s->runs, s->nruns, p->tol);
  html_close(h); /* section */
  html_newline(h);
}

void report_page_write(const report_page *p, html *h, report_stats *st) {
  page_head(p, h);
  page_overview(p, h);
  for (size_t i = 0; i < p->nsec; i++) page_section(p, h, i, st);
  html_close(h); /* body */
  html_close(h); /* html */
  html_newline(h);
}
