/* report.c — the HTML report with inline SVG rooflines (see report.h). */
#include "tuner/job/report.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tuner/job/state.h"
#include "tuner/model/gpu_spec.h"
#include "tuner/model/roofline.h"
#include "tuner/recheck.h"

/* One candidate: a template's configuration on one problem and device, its latest result. */
typedef struct cand {
  int section;
  char *tmpl, *config, *toolkit, *limit, *lever;
  char status[24];
  timing_kind timing;
  double ms, intensity, achieved; /* achieved FLOP/s */
  uint64_t hash;
} cand;

/* One problem on one device. */
typedef struct section {
  char family[16], shape[64], dtype[8], layout[8];
  db_device device;
  size_t ncand, npoints, nfailed;
  int have_winner;
  db_entry winner;       /* the fastest current winner */
  int regression;        /* its latest recheck is SLOWER or FAILS */
  recheck_verdict verdict;
  int have_verdict;
  double recheck_ms;
  char last_run[32];
} section;

typedef struct rep {
  const report_options *o;
  section *sec;
  size_t nsec, seccap;
  cand *cand;
  size_t ncand, candcap;
  size_t *table;         /* open addressing over cand, index + 1 */
  size_t tmask;
  int last;              /* section of the previous row */
  int oom;
} rep;

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return (h ^ 0xff) * 1099511628211ULL;
}

static int section_of(rep *R, const db_run_spec *spec) {
  const problem *p = &spec->prob;
  const char *dev = spec->prov.device.name;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = pass ? 0 : (size_t)(R->last >= 0 ? R->last : 0); i < R->nsec; i++) {
      section *s = &R->sec[i];
      if (!strcmp(s->shape, p->shape) && !strcmp(s->device.name, dev) && !strcmp(s->family, p->family) &&
          !strcmp(s->dtype, p->dtype) && !strcmp(s->layout, p->layout)) {
        s->device = spec->prov.device; /* the latest identity (driver) seen */
        return R->last = (int)i;
      }
      if (!pass) break;
    }
  if (R->o->job) { /* only the job's problems */
    int mine = 0;
    for (size_t k = 0; k < R->o->job->nproblems && !mine; k++) {
      const job_problem *q = &R->o->job->problems[k];
      mine = !strcmp(q->family, p->family) && !strcmp(q->key_shape, p->shape) && !strcmp(q->dtype, p->dtype) &&
             !strcmp(q->layout, p->layout);
    }
    if (!mine) return -1;
  }
  if (R->nsec == R->seccap) {
    size_t cap = R->seccap ? 2 * R->seccap : 32;
    section *g = realloc(R->sec, cap * sizeof *g);
    if (!g) {
      R->oom = 1;
      return -1;
    }
    R->sec = g;
    R->seccap = cap;
  }
  section *s = &R->sec[R->nsec];
  memset(s, 0, sizeof *s);
  snprintf(s->family, sizeof s->family, "%s", p->family);
  snprintf(s->shape, sizeof s->shape, "%s", p->shape);
  snprintf(s->dtype, sizeof s->dtype, "%s", p->dtype);
  snprintf(s->layout, sizeof s->layout, "%s", p->layout);
  s->device = spec->prov.device;
  return R->last = (int)R->nsec++;
}

static rt_status grow_table(rep *R) {
  size_t size = R->tmask ? 2 * (R->tmask + 1) : 1024;
  size_t *t = calloc(size, sizeof *t);
  if (!t) return RT_ERR_NOMEM;
  for (size_t i = 0; i < R->ncand; i++) {
    size_t slot = (size_t)R->cand[i].hash & (size - 1);
    while (t[slot]) slot = (slot + 1) & (size - 1);
    t[slot] = i + 1;
  }
  free(R->table);
  R->table = t;
  R->tmask = size - 1;
  return RT_OK;
}

static char *sdup(const char *s) { return strdup(s ? s : ""); }

static rt_status on_result(void *ctx, const db_run_spec *spec, const char *template_name, const char *src,
                           const char *man, const candidate_result *r, rt_error *err) {
  rep *R = ctx;
  int si = section_of(R, spec);
  if (R->oom) return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading results");
  if (si < 0) return RT_OK;
  uint64_t h = fnv(fnv(fnv(fnv(1469598103934665603ULL, template_name), r->config), spec->prov.toolkit), "") ^
               (uint64_t)si * 0x9e3779b97f4a7c15ULL;
  if (2 * (R->ncand + 1) > R->tmask + 1 && grow_table(R)) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  size_t slot = (size_t)h & R->tmask;
  cand *c = NULL;
  while (R->table[slot]) {
    cand *x = &R->cand[R->table[slot] - 1];
    if (x->hash == h && x->section == si && !strcmp(x->tmpl, template_name) && !strcmp(x->config, r->config) &&
        !strcmp(x->toolkit, spec->prov.toolkit)) {
      c = x;
      break;
    }
    slot = (slot + 1) & R->tmask;
  }
  if (!c) {
    if (R->ncand == R->candcap) {
      size_t cap = R->candcap ? 2 * R->candcap : 1024;
      cand *g = realloc(R->cand, cap * sizeof *g);
      if (!g) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
      R->cand = g;
      R->candcap = cap;
    }
    c = &R->cand[R->ncand];
    memset(c, 0, sizeof *c);
    c->section = si;
    c->hash = h;
    c->tmpl = sdup(template_name);
    c->config = sdup(r->config);
    c->toolkit = sdup(spec->prov.toolkit);
    R->table[slot] = ++R->ncand;
  } else { /* a later result of the same candidate (a re-measurement, a recheck) */
    free(c->limit);
    free(c->lever);
  }
  c->limit = sdup(r->diag.limit);
  c->lever = sdup(r->diag.lever);
  if (!c->tmpl || !c->config || !c->toolkit || !c->limit || !c->lever)
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  snprintf(c->status, sizeof c->status, "%s", rt_status_name(r->status));
  c->timing = r->timing;
  c->ms = r->status == RT_OK ? r->time_ms : NAN;
  c->intensity = r->diag.intensity > 0 ? r->diag.intensity : r->dram_bytes > 0 ? r->flops / r->dram_bytes : NAN;
  c->achieved = r->diag.achieved_flops > 0 ? r->diag.achieved_flops
                : r->flops > 0 && c->ms > 0 ? r->flops / (c->ms * 1e-3)
                                            : NAN;
  return RT_OK;
}

static int plottable(const cand *c) {
  return !strcmp(c->status, "OK") && c->ms > 0 && c->intensity > 0 && c->achieved > 0 && isfinite(c->intensity) &&
         isfinite(c->achieved);
}

/* ---- output helpers ---- */

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
}

static void si_unit(double v, const char *unit, char *buf, size_t size) {
  const char *p[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (fabs(v) >= 1000 && i < 6) v /= 1000, i++;
  snprintf(buf, size, "%.3g %s%s", v, p[i], unit);
}

static const gpu_spec *spec_for(const db_device *d) {
  if (!strncmp(d->name, "model:", 6)) return gpu_spec_find(d->name + 6);
  const gpu_spec *g = gpu_spec_match(d->name, d->cc_major * 10 + d->cc_minor);
  if (g) return g;
  size_t n = 0;
  const gpu_spec *all = gpu_spec_all(&n);
  for (size_t i = 0; i < n; i++) { /* "NVIDIA H200" is the table's "h200" */
    char key[16];
    snprintf(key, sizeof key, "%s", all[i].key);
    for (char *c = key; *c; c++) *c = (char)toupper((unsigned char)*c);
    if (strstr(d->name, key)) return &all[i];
  }
  return NULL;
}

typedef struct roofs {
  double bw;             /* bytes/s; 0 unknown */
  int bw_measured;
  double peak[2];        /* FLOP/s of the dtype's paths */
  const char *peak_name[2];
  int peak_measured[2];
  int npeaks;
  char gpu[128];         /* db_device.name fits */
} roofs;

static void section_roofs(db *d, const section *s, roofs *r) {
  memset(r, 0, sizeof *r);
  const gpu_spec *g = spec_for(&s->device);
  roofline_ceilings c;
  roofline_from_spec(g, &c);
  snprintf(r->gpu, sizeof r->gpu, "%s", g ? g->name : s->device.name);
  r->bw = c.bw;
  int f32 = !strcmp(s->dtype, "f32");
  r->npeaks = f32 ? 2 : 1;
  r->peak[0] = c.flops[f32 ? PATH_SIMT_F32 : PATH_TC_F16];
  r->peak_name[0] = f32 ? "fp32 CUDA cores" : "f16/bf16 tensor cores";
  if (f32) {
    r->peak[1] = c.flops[PATH_TC_TF32];
    r->peak_name[1] = "tf32 tensor cores";
  }
  double v = 0;
  int found = 0;
  if (db_ceiling_get(d, &s->device, "copy_bw", "", &v, NULL, 0, &found, NULL) == RT_OK && found && v > 0) {
    r->bw = v;
    r->bw_measured = 1;
  }
  found = 0;
  if (db_ceiling_get(d, &s->device, "matmul", s->dtype, &v, NULL, 0, &found, NULL) == RT_OK && found && v > 0) {
    /* the library matmul's rate: the dtype's tensor path (tf32 for f32) */
    int i = f32 ? 1 : 0;
    r->peak[i] = v;
    r->peak_measured[i] = 1;
  }
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

static void roofline_svg(FILE *f, const rep *R, size_t si, const section *s, const roofs *rf, const cand **cs,
                         size_t n, const cand *win) {
  double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
  for (size_t i = 0; i < n; i++) {
    xmin = fmin(xmin, cs[i]->intensity);
    xmax = fmax(xmax, cs[i]->intensity);
    ymin = fmin(ymin, cs[i]->achieved);
    ymax = fmax(ymax, cs[i]->achieved);
  }
  double peak = 0;
  for (int i = 0; i < rf->npeaks; i++) peak = fmax(peak, rf->peak[i]);
  if (peak > 0) ymax = fmax(ymax, peak);
  if (rf->bw > 0 && peak > 0) {
    double ridge = peak / rf->bw;
    xmin = fmin(xmin, ridge);
    xmax = fmax(xmax, ridge);
  }
  if (!isfinite(xmin)) xmin = 1, xmax = 100, ymin = 1e9, ymax = 1e12;
  axes a = {floor(log10(xmin) - 0.3), ceil(log10(xmax) + 0.3), floor(log10(ymin) - 0.3), ceil(log10(ymax) + 0.15)};
  if (a.x1 - a.x0 < 2) a.x1 = a.x0 + 2;
  if (a.y1 - a.y0 < 2) a.y0 = a.y1 - 2;
  fprintf(f, "<svg class=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
             "viewBox=\"0 0 %d %d\" data-candidates=\"%zu\" role=\"img\"><title>roofline of ",
          PW, PH, PW, PH, n);
  esc(f, s->family);
  fputc(' ', f);
  esc(f, s->shape);
  fprintf(f, "</title>\n<defs><clipPath id=\"clip%zu\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath>"
             "</defs>\n<rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
          si, ML, MT, PW - ML - MR, PH - MT - MB, ML, MT, PW - ML - MR, PH - MT - MB);
  /* decades */
  for (int e = (int)a.x0; e <= (int)a.x1; e++) {
    double x = ax_x(&a, pow(10, e));
    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/><text class=\"tick\" x=\"%.1f\" "
               "y=\"%d\" text-anchor=\"middle\">1e%d</text>\n", x, MT, x, PH - MB, x, PH - MB + 14, e);
  }
  for (int e = (int)a.y0; e <= (int)a.y1; e++) {
    double y = ax_y(&a, pow(10, e));
    char t[32];
    si_unit(pow(10, e), "", t, sizeof t);
    fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/><text class=\"tick\" x=\"%d\" "
               "y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML, y, PW - MR, y, ML - 4, y + 4, t);
  }
  fprintf(f, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic intensity (FLOP per modeled "
             "DRAM byte)</text>\n<text class=\"axis\" transform=\"translate(14 %d) rotate(-90)\" "
             "text-anchor=\"middle\">achieved FLOP/s</text>\n", (ML + PW - MR) / 2, PH - 8, (MT + PH - MB) / 2);
  /* roofs */
  double X0 = pow(10, a.x0), X1 = pow(10, a.x1);
  for (int i = 0; i < rf->npeaks && rf->bw > 0; i++) {
    if (!(rf->peak[i] > 0)) continue;
    double ridge = rf->peak[i] / rf->bw;
    fprintf(f, "<polyline class=\"roof%s\" clip-path=\"url(#clip%zu)\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
            i ? " second" : "", si, ax_x(&a, X0), ax_y(&a, rf->bw * X0), ax_x(&a, ridge), ax_y(&a, rf->peak[i]),
            ax_x(&a, X1), ax_y(&a, rf->peak[i]));
    char t[32];
    si_unit(rf->peak[i], "FLOP/s", t, sizeof t);
    fprintf(f, "<text class=\"rooflabel\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s %s (%s)</text>\n", PW - MR - 4,
            ax_y(&a, rf->peak[i]) - 5, rf->peak_name[i], t, rf->peak_measured[i] ? "measured" : "spec");
  }
  if (rf->bw > 0) {
    char t[32];
    si_unit(rf->bw, "B/s", t, sizeof t);
    double lx = pow(10, a.x0 + 0.25), ly = rf->bw * lx;
    if (ly < pow(10, a.y0)) { /* the slope enters the plot further right */
      ly = pow(10, a.y0 + 0.4);
      lx = ly / rf->bw;
    }
    fprintf(f, "<text class=\"rooflabel\" x=\"%.1f\" y=\"%.1f\">DRAM %s (%s)</text>\n", ax_x(&a, lx) + 6,
            ax_y(&a, ly) - 2, t, rf->bw_measured ? "measured" : "spec");
  }
  /* the candidates */
  for (size_t i = 0; i < n; i++) {
    const cand *c = cs[i];
    double x = ax_x(&a, c->intensity), y = ax_y(&a, c->achieved);
    const char *kind = timing_kind_name(c->timing);
    if (c->timing == TIMING_REPLAYED)
      fprintf(f, "<rect class=\"pt %s\" x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\">", kind, x - 3, y - 3);
    else fprintf(f, "<circle class=\"pt %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.2\">", kind, x, y);
    fputs("<title>", f);
    esc(f, c->tmpl);
    fputc(' ', f);
    esc(f, c->config);
    char t[32];
    si_unit(c->achieved, "FLOP/s", t, sizeof t);
    fprintf(f, ": %.4g ms, %s, %s", c->ms, t, kind);
    if (c->limit[0]) fprintf(f, ", %s", c->limit);
    fputs(c->timing == TIMING_REPLAYED ? "</title></rect>\n" : "</title></circle>\n", f);
  }
  if (win)
    fprintf(f, "<circle class=\"win\" cx=\"%.1f\" cy=\"%.1f\" r=\"7.5\"/><text class=\"winlabel\" x=\"%.1f\" "
               "y=\"%.1f\">winner</text>\n", ax_x(&a, win->intensity), ax_y(&a, win->achieved),
            ax_x(&a, win->intensity) + 9, ax_y(&a, win->achieved) - 8);
  fputs("</svg>\n", f);
  (void)R;
}

/* ---- history: the winner's time run after run ---- */

static int run_of(const section *s, const db_run_info *r) {
  return !strcmp(r->family, s->family) && !strcmp(r->shape, s->shape) && !strcmp(r->dtype, s->dtype) &&
         !strcmp(r->layout, s->layout) && !strcmp(r->device.name, s->device.name);
}

static void history_svg(FILE *f, const section *s, const db_run_info *runs, size_t nruns, double tol) {
  enum { HW = 660, HH = 170, HL = 70, HR = 16, HT = 12, HB = 34 };
  size_t n = 0;
  double ymax = 0;
  for (size_t i = 0; i < nruns; i++)
    if (run_of(s, &runs[i]) && runs[i].results > 0) {
      n++;
      double v = job_run_is_recheck(&runs[i]) ? runs[i].last_ms : runs[i].best_ms;
      if (isfinite(v)) ymax = fmax(ymax, v);
    }
  if (n == 0 || !(ymax > 0)) {
    fputs("<p class=\"muted\">no run with a time yet</p>\n", f);
    return;
  }
  ymax *= 1.15;
  fprintf(f, "<svg class=\"history\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 "
             "%d %d\" data-runs=\"%zu\"><rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
          HW, HH, HW, HH, n, HL, HT, HW - HL - HR, HH - HT - HB);
  for (int k = 0; k <= 4; k++) {
    double v = ymax * k / 4, y = HT + (1 - (double)k / 4) * (HH - HT - HB);
    fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/><text class=\"tick\" x=\"%d\" "
               "y=\"%.1f\" text-anchor=\"end\">%.3g ms</text>\n", HL, y, HW - HR, y, HL - 4, y + 4, v);
  }
  double step = n > 1 ? (double)(HW - HL - HR - 20) / (double)(n - 1) : 0;
  double best = INFINITY;
  size_t k = 0;
  char first[32] = "", last[32] = "";
  fputs("<polyline class=\"best\" points=\"", f);
  for (size_t i = 0; i < nruns; i++) {
    const db_run_info *r = &runs[i];
    if (!run_of(s, r) || r->results == 0) continue;
    if (!job_run_is_recheck(r) && isfinite(r->best_ms)) best = fmin(best, r->best_ms);
    if (isfinite(best))
      fprintf(f, "%.1f,%.1f ", HL + 10 + step * (double)k, HT + (1 - best / ymax) * (HH - HT - HB));
    k++;
  }
  fputs("\"/>\n", f);
  k = 0;
  best = INFINITY;
  for (size_t i = 0; i < nruns; i++) {
    const db_run_info *r = &runs[i];
    if (!run_of(s, r) || r->results == 0) continue;
    double x = HL + 10 + step * (double)k++;
    if (!first[0]) snprintf(first, sizeof first, "%.10s", r->started_at);
    snprintf(last, sizeof last, "%.10s", r->started_at);
    if (job_run_is_recheck(r)) {
      int failed = strcmp(r->last_status, "OK") || isnan(r->last_ms);
      int slower = !failed && isfinite(best) &&
                   recheck_compare(best, NAN, r->last_ms, r->last_spread, tol) == RECHECK_SLOWER;
      double v = failed ? ymax : r->last_ms;
      double y = HT + (1 - v / ymax) * (HH - HT - HB);
      fprintf(f, "<path class=\"recheck%s\" d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\"><title>recheck %s: %s%s</title></path>\n",
              failed || slower ? " regressed" : "", x, y - 5, r->started_at, failed ? "FAILS " : "",
              failed ? r->last_status : "");
    } else if (isfinite(r->best_ms)) {
      best = fmin(best, r->best_ms);
      fprintf(f, "<circle class=\"run\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>run %lld %s: best %.4g ms, %lld "
                 "results (%s)</title></circle>\n", x, HT + (1 - r->best_ms / ymax) * (HH - HT - HB), r->id,
              r->started_at, r->best_ms, r->results, r->status);
    }
  }
  fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\">%s</text><text class=\"tick\" x=\"%d\" y=\"%d\" "
             "text-anchor=\"end\">%s</text><text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">runs, "
             "oldest first (circles: best of a tuning run; line: best so far; diamonds: rechecks)</text></svg>\n",
          HL, HH - HB + 14, first, HW - HR, HH - HB + 14, last, (HL + HW - HR) / 2, HH - 6);
}

/* ---- the page ---- */

static const char css[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1f24;background:#fff;max-width:1100px}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-top:1px solid #d0d7de;"
    "padding-top:14px}table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid "
    "#eaeef2;text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:"
    "tabular-nums}code{font-size:12px;word-break:break-all}.muted{color:#57606a}.bad{color:#b42318;font-weight:600}.ok{color:#1a7f37}"
    "tr.win td{background:#fff8c5}section.regressed h2{color:#b42318}.banner{background:#fdecea;border:1px solid "
    "#f5c2c0;padding:8px 12px;border-radius:6px}svg text{font:11px system-ui,sans-serif;fill:#57606a}"
    "svg .axis{font-size:12px;fill:#1b1f24}rect.plot{fill:#fbfcfd;stroke:#d0d7de}line.grid{stroke:#eaeef2}"
    ".roof{fill:none;stroke:#cf222e;stroke-width:2}.roof.second{stroke:#bc4c00;stroke-dasharray:6 3}"
    ".rooflabel{fill:#cf222e!important;font-weight:600}.pt.measured{fill:#0969da;fill-opacity:.75}"
    ".pt.predicted{fill:#fff;stroke:#0969da;stroke-width:1.3}.pt.replayed{fill:#8250df;fill-opacity:.75}"
    ".win{fill:none;stroke:#1b1f24;stroke-width:2}.winlabel{fill:#1b1f24!important;font-weight:600}"
    ".best{fill:none;stroke:#1a7f37;stroke-width:2}.run{fill:#1a7f37}.recheck{fill:#0969da}"
    ".recheck.regressed{fill:#cf222e}.legend span{margin-right:14px}";

static int cmp_time(const void *a, const void *b) {
  const cand *x = *(const cand *const *)a, *y = *(const cand *const *)b;
  int fx = !(x->ms > 0), fy = !(y->ms > 0);
  if (fx != fy) return fx - fy;
  if (fx) return 0;
  return (x->ms > y->ms) - (x->ms < y->ms);
}

static void problem_title(FILE *f, const section *s) {
  esc(f, s->family);
  fputc(' ', f);
  esc(f, s->shape);
  fputc(' ', f);
  esc(f, s->dtype);
  fputs(" on ", f);
  esc(f, s->device.name);
}

static void anchor(FILE *f, size_t i) { fprintf(f, "p%zu", i); }

rt_status report_write(db *d, const report_options *o, const char *path, report_stats *st, rt_error *err) {
  report_stats local;
  if (!st) st = &local;
  memset(st, 0, sizeof *st);
  rep R;
  memset(&R, 0, sizeof R);
  R.o = o;
  R.last = -1;
  db_entry *w = NULL;
  db_run_info *runs = NULL;
  size_t nw = 0, nruns = 0;
  const cand **order = NULL;
  FILE *f = NULL;
  char tmp[1200];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  double tol = o->tolerance > 0 ? o->tolerance : o->job ? o->job->tolerance : 0.05;
  int top = o->top > 0 ? o->top : 10;
  rt_status rc = db_each_result(d, on_result, &R, err);
  if (!rc) rc = db_entries(d, 0, &w, &nw, err);
  if (!rc) rc = db_runs(d, &runs, &nruns, err);
  if (rc) goto done;

  /* each section's winner (the fastest current one), its latest recheck, its last run */
  for (size_t i = 0; i < R.nsec; i++) {
    section *s = &R.sec[i];
    for (size_t k = 0; k < nw; k++) {
      const db_entry *e = &w[k];
      if (strcmp(e->shape, s->shape) || strcmp(e->device.name, s->device.name) || strcmp(e->family, s->family) ||
          strcmp(e->dtype, s->dtype) || strcmp(e->layout, s->layout) || e->template_stale)
        continue;
      if (!s->have_winner || e->time_ms < s->winner.time_ms) {
        s->winner = *e;
        s->have_winner = 1;
      }
    }
    for (size_t k = 0; k < nruns; k++)
      if (run_of(s, &runs[k])) snprintf(s->last_run, sizeof s->last_run, "%s", runs[k].started_at);
    /* any current winner regressed */
    for (size_t k = 0; k < nw; k++) {
      const db_entry *e = &w[k];
      if (strcmp(e->shape, s->shape) || strcmp(e->device.name, s->device.name) || strcmp(e->family, s->family) ||
          strcmp(e->dtype, s->dtype) || strcmp(e->layout, s->layout) || e->template_stale)
        continue;
      recheck_verdict v;
      const db_run_info *r = job_last_recheck(e, runs, nruns, tol, &v);
      if (!r) continue;
      if (recheck_is_regression(v) || !s->have_verdict) {
        s->verdict = v;
        s->have_verdict = 1;
        s->recheck_ms = r->last_ms;
      }
      if (recheck_is_regression(v)) s->regression = 1;
    }
    st->regressions += (size_t)s->regression;
  }
  for (size_t i = 0; i < R.ncand; i++) {
    section *s = &R.sec[R.cand[i].section];
    s->ncand++;
    if (plottable(&R.cand[i])) s->npoints++;
    else if (strcmp(R.cand[i].status, "OK")) s->nfailed++;
  }
  order = malloc((R.ncand ? R.ncand : 1) * sizeof *order);
  size_t *start = calloc(R.nsec + 1, sizeof *start);
  if (!order || !start) {
    free(start);
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  /* candidates grouped by section (counting sort), each group by time */
  for (size_t i = 0; i < R.ncand; i++) start[R.cand[i].section + 1]++;
  for (size_t i = 0; i < R.nsec; i++) start[i + 1] += start[i];
  {
    size_t *fill = calloc(R.nsec ? R.nsec : 1, sizeof *fill);
    if (!fill) {
      free(start);
      rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
      goto done;
    }
    for (size_t i = 0; i < R.ncand; i++) {
      int s = R.cand[i].section;
      order[start[s] + fill[s]++] = &R.cand[i];
    }
    free(fill);
  }
  for (size_t i = 0; i < R.nsec; i++) qsort(order + start[i], start[i + 1] - start[i], sizeof *order, cmp_time);

  f = fopen(tmp, "w");
  if (!f) {
    free(start);
    rt_error_locate(err, path, NULL, 0, 0);
    rc = rt_error_set(err, RT_ERR_IO, "cannot write the report: %s", strerror(errno));
    goto done;
  }
  char now[32];
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", &tm);
  const char *title = o->title ? o->title : o->job ? o->job->name : "rooftune report";
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
  esc(f, title);
  fprintf(f, "</title><style>%s</style></head><body>\n<h1>", css);
  esc(f, title);
  fputs("</h1>\n<p class=\"muted\">", f);
  esc(f, db_path(d));
  fprintf(f, " &middot; generated %s by rooftune &middot; %zu problem%s on their devices, %zu candidates</p>\n", now,
          R.nsec, R.nsec == 1 ? "" : "s", R.ncand);
  if (st->regressions) {
    fprintf(f, "<p class=\"banner\"><span class=\"bad\">%zu regression%s</span>: the latest recheck found a winner "
               "slower than when it was tuned, or broken:", st->regressions, st->regressions > 1 ? "s" : "");
    for (size_t i = 0; i < R.nsec; i++)
      if (R.sec[i].regression) {
        fputs(" <a href=\"#", f);
        anchor(f, i);
        fputs("\">", f);
        problem_title(f, &R.sec[i]);
        fputs("</a>", f);
      }
    fputs("</p>\n", f);
  }
  fputs("<p class=\"legend muted\"><span>&#9679; measured on the GPU</span><span>&#9675; predicted by the model "
        "device</span><span>&#9632; replayed from a file</span><span>&#9711; winner</span></p>\n", f);
  /* the overview, regressions first */
  fputs("<table class=\"overview\"><tr><th>problem</th><th>device</th><th>winner</th><th class=\"num\">time ms</th>"
        "<th class=\"num\">TFLOP/s</th><th>timing</th><th>limit</th><th class=\"num\">candidates</th><th>last run</th>"
        "<th>recheck</th></tr>\n", f);
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < R.nsec; i++) {
      const section *s = &R.sec[i];
      if (s->regression != !pass) continue;
      fputs("<tr><td><a href=\"#", f);
      anchor(f, i);
      fputs("\">", f);
      esc(f, s->family);
      fputc(' ', f);
      esc(f, s->shape);
      fputc(' ', f);
      esc(f, s->dtype);
      fputs("</a></td><td>", f);
      esc(f, s->device.name);
      fputs("</td>", f);
      if (s->have_winner) {
        fputs("<td>", f);
        esc(f, s->winner.template_name);
        double tf = s->winner.flops > 0 ? s->winner.flops / (s->winner.time_ms * 1e-3) / 1e12 : NAN;
        fprintf(f, "</td><td class=\"num\">%.4g</td><td class=\"num\">%.4g</td><td>%s</td><td>", s->winner.time_ms, tf,
                timing_kind_name(s->winner.timing));
        esc(f, s->winner.limit);
        fputs("</td>", f);
      } else {
        fputs("<td class=\"bad\">none</td><td></td><td></td><td></td><td></td>", f);
      }
      fprintf(f, "<td class=\"num\">%zu</td><td>%.10s</td><td class=\"%s\">%s</td></tr>\n", s->ncand, s->last_run,
              s->regression ? "bad" : "ok", s->have_verdict ? recheck_verdict_name(s->verdict) : "");
    }
  fputs("</table>\n", f);

  for (size_t i = 0; i < R.nsec; i++) {
    const section *s = &R.sec[i];
    const cand **cs = order + start[i];
    size_t n = start[i + 1] - start[i];
    fprintf(f, "<section id=\"");
    anchor(f, i);
    fprintf(f, "\"%s><h2>", s->regression ? " class=\"regressed\"" : "");
    problem_title(f, s);
    if (s->regression) fprintf(f, " &mdash; regression (%s)", recheck_verdict_name(s->verdict));
    fputs("</h2>\n", f);
    roofs rf;
    section_roofs(d, s, &rf);
    /* the plottable candidates first in cs (they are sorted by time, failures last) */
    const cand **pts = malloc((n ? n : 1) * sizeof *pts);
    size_t np = 0;
    const cand *win = NULL;
    for (size_t k = 0; pts && k < n; k++) {
      if (!plottable(cs[k])) continue;
      pts[np++] = cs[k];
      if (s->have_winner && !win && !strcmp(cs[k]->tmpl, s->winner.template_name) &&
          !strcmp(cs[k]->config, s->winner.config) && !strcmp(cs[k]->toolkit, s->winner.toolkit))
        win = cs[k];
    }
    fprintf(f, "<p class=\"muted\">%zu candidates, %zu plotted", n, np);
    if (s->nfailed) fprintf(f, ", %zu failed (no time, not plotted)", s->nfailed);
    if (n - np - s->nfailed) fprintf(f, ", %zu without a FLOP count (not plotted)", n - np - s->nfailed);
    fputs("; roofs of ", f);
    esc(f, rf.gpu);
    fputs("</p>\n", f);
    roofline_svg(f, &R, i, s, &rf, pts ? pts : cs, pts ? np : 0, win);
    free(pts);
    st->points += np;
    st->candidates += n;
    st->failed += s->nfailed;
    /* the table */
    fputs("<table class=\"top\"><tr><th>#</th><th>template</th><th class=\"num\">time ms</th><th class=\"num\">"
          "TFLOP/s</th><th>timing</th><th>limit</th><th>lever</th><th>configuration</th></tr>\n", f);
    for (size_t k = 0; k < n && k < (size_t)top; k++) {
      const cand *c = cs[k];
      int is_win = c == win;
      fprintf(f, "<tr%s><td class=\"num\">%zu</td><td>", is_win ? " class=\"win\"" : "", k + 1);
      esc(f, c->tmpl);
      if (c->ms > 0)
        fprintf(f, "</td><td class=\"num\">%.4g</td><td class=\"num\">%.4g</td><td>%s</td><td>", c->ms,
                c->achieved > 0 ? c->achieved / 1e12 : NAN, timing_kind_name(c->timing));
      else fprintf(f, "</td><td class=\"num bad\">%s</td><td></td><td>%s</td><td>", c->status, timing_kind_name(c->timing));
      esc(f, c->limit);
      fputs("</td><td>", f);
      esc(f, c->lever);
      fputs("</td><td><code>", f);
      esc(f, c->config);
      fputs("</code></td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (s->have_verdict)
      fprintf(f, "<p>latest recheck: <span class=\"%s\">%s</span>, %.4g ms against %.4g ms when tuned</p>\n",
              s->regression ? "bad" : "ok", recheck_verdict_name(s->verdict), s->recheck_ms, s->winner.time_ms);
    history_svg(f, s, runs, nruns, tol);
    fputs("</section>\n", f);
  }
  free(start);
  fputs("</body></html>\n", f);
  st->sections = R.nsec;
  if (ferror(f) | fflush(f)) {
    rt_error_locate(err, path, NULL, 0, 0);
    rc = rt_error_set(err, RT_ERR_IO, "cannot write the report completely: %s", strerror(errno));
    goto done;
  }
  st->bytes = ftell(f);
  if (fclose(f) != 0) {
    f = NULL;
    rt_error_locate(err, path, NULL, 0, 0);
    rc = rt_error_set(err, RT_ERR_IO, "cannot write the report completely: %s", strerror(errno));
    goto done;
  }
  f = NULL;
  if (rename(tmp, path) != 0) {
    rt_error_locate(err, path, NULL, 0, 0);
    rc = rt_error_set(err, RT_ERR_IO, "cannot put the report in place: %s", strerror(errno));
  }
done:
  if (f) fclose(f);
  if (rc) unlink(tmp);
  for (size_t i = 0; i < R.ncand; i++) {
    free(R.cand[i].tmpl);
    free(R.cand[i].config);
    free(R.cand[i].toolkit);
    free(R.cand[i].limit);
    free(R.cand[i].lever);
  }
  free(R.cand);
  free(R.table);
  free(R.sec);
  free(order);
  free(w);
  free(runs);
  return rc;
}
