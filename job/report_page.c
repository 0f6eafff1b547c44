/* report_page.c — the report's HTML and SVG, drawn from report_page data through the HTML
 * writer (see report_page.h and report.h). */
#include "job/report_page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"
#include "job/state.h"

int report_plottable(const report_cand *c) {
  return !strcmp(c->status, "OK") && c->ms > 0 && c->intensity > 0 && c->achieved > 0 &&
         isfinite(c->intensity) && isfinite(c->achieved);
}

static void si_unit(double v, const char *unit, char *buf, size_t size) {
  const char *p[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (fabs(v) >= 1000 && i < 6) v /= 1000, i++;
  snprintf(buf, size, "%.3g %s%s", v, p[i], unit);
}

/* ---- markers: each template its own shape and colour, the same on every chart of the page ---- */

enum { NSHAPES = 6, NCOLOURS = 8 };

/* The page's templates, sorted (the legend's order).  A template's marker comes from its name
 * alone (mark_of: a hash of it), so it keeps its shape and colour on every chart of every page,
 * whatever else a database holds: shape k % NSHAPES, colour k / NSHAPES % NCOLOURS, class
 * "mkK". */
typedef struct marks {
  const char **name;
  size_t n;
} marks;

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void marks_make(marks *m, const report_page *p) {
  m->n = 0;
  m->name = malloc((p->ncand ? p->ncand : 1) * sizeof *m->name);
  if (!m->name) return;
  for (size_t i = 0; i < p->ncand; i++) m->name[m->n++] = p->order[i]->tmpl;
  qsort(m->name, m->n, sizeof *m->name, cmp_name);
  size_t k = 0;
  for (size_t i = 0; i < m->n; i++)
    if (!k || strcmp(m->name[k - 1], m->name[i])) m->name[k++] = m->name[i];
  m->n = k;
}

/* Template tmpl's marker: FNV-1a of its name over the NSHAPES x NCOLOURS markers. */
static int mark_of(const marks *m, const char *tmpl) {
  (void)m;
  uint32_t h = 2166136261u;
  for (const unsigned char *c = (const unsigned char *)tmpl; *c; c++) h = (h ^ *c) * 16777619u;
  return (int)(h % (NSHAPES * NCOLOURS));
}

#define MARK_R     4.2 /* a marker's size */
#define POINT_HALF 6.5 /* half the side of the box a marker covers, its stroke included */
#define WIN_R      7.5 /* the winner's ring */

/* Opens marker k at (x, y) with classes "CLS mkK cK"; html_close is the caller's. */
static void marker_open(html *h, int k, const char *cls, double x, double y) {
  char c[64];
  snprintf(c, sizeof c, "%s mk%d c%d", cls, k, k / NSHAPES % NCOLOURS);
  static const struct {
    int sides;      /* 0 circle */
    double turn, r; /* the first vertex's angle from "up" (turns) and the radius, in MARK_R */
  } shape[NSHAPES] = {{0, 0, 1},   {4, 0.125, 1.25}, {3, 0, 1.3},
                      {4, 0, 1.3}, {3, 0.5, 1.3},    {5, 0, 1.15}};
  int s = k % NSHAPES;
  if (!shape[s].sides) {
    svg_circle_open(h, c, x, y, MARK_R);
    return;
  }
  double vx[6], vy[6], steps[10];
  int n = shape[s].sides;
  for (int i = 0; i < n; i++) {
    double a = 2 * M_PI * (shape[s].turn + (double)i / n);
    vx[i] = x + shape[s].r * MARK_R * sin(a);
    vy[i] = y - shape[s].r * MARK_R * cos(a);
  }
  for (int i = 0; i + 1 < n; i++)
    steps[2 * i] = vx[i + 1] - vx[i], steps[2 * i + 1] = vy[i + 1] - vy[i];
  svg_polygon_open(h, c, vx[0], vy[0], steps, (size_t)n - 1);
}

/* ---- the roofline ---- */

#define PW       1000
#define PH       440
#define ML       72
#define MR       16
#define MT       30 /* above the plot: the lane of a label that finds no free place inside */
#define MB       46
#define LABEL_PX 11.0 /* the labels' font size (REPORT_CSS: svg text) */

typedef struct axes {
  double x0, x1, y0, y1; /* log10 bounds */
} axes;

static double ax_x(const axes *a, double x) {
  return ML + (log10(x) - a->x0) / (a->x1 - a->x0) * (PW - ML - MR);
}
static double ax_y(const axes *a, double y) {
  return MT + (a->y1 - log10(y)) / (a->y1 - a->y0) * (PH - MT - MB);
}

/* 1 when path p's roof is drawn: present, with a peak, and a memory slope to meet. */
static int roof_drawn(const report_roofs *rf, int p) {
  return rf->path[p].present && rf->path[p].peak > 0 && isfinite(rf->path[p].peak);
}

/* The plot's log bounds: every point, the roofs and their ridges. */
static axes roofline_axes(const report_roofs *rf, const report_cand *const *cs, size_t n) {
  double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
  for (size_t i = 0; i < n; i++) {
    xmin = fmin(xmin, cs[i]->intensity);
    xmax = fmax(xmax, cs[i]->intensity);
    ymin = fmin(ymin, cs[i]->achieved);
    ymax = fmax(ymax, cs[i]->achieved);
  }
  for (int p = 0; p < PATH_COUNT; p++) {
    if (!roof_drawn(rf, p)) continue;
    double peak = rf->path[p].peak;
    ymax = fmax(ymax, peak);
    if (rf->bw > 0 && isfinite(peak / rf->bw)) {
      xmin = fmin(xmin, peak / rf->bw);
      xmax = fmax(xmax, peak / rf->bw);
    }
  }
  if (!isfinite(xmin) || !isfinite(xmax) || !isfinite(ymin) || !isfinite(ymax) || !(xmax > 0) ||
      !(ymax > 0))
    xmin = 1, xmax = 100, ymin = 1e9, ymax = 1e12;
  axes a = {floor(log10(xmin) - 0.3), ceil(log10(xmax) + 0.3), floor(log10(ymin) - 0.3),
            ceil(log10(ymax) + 0.15)};
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
  svg_text(h, "axis", (ML + PW - MR) / 2.0, PH - 8, "middle",
           "arithmetic intensity (FLOP per modeled DRAM byte)");
  html_open_class(h, "text", "axis");
  html_attrf(h, "transform", "translate(14 %d) rotate(-90)", (MT + PH - MB) / 2);
  html_attr(h, "text-anchor", "middle");
  html_text(h, "achieved FLOP/s");
  html_close(h);
  html_newline(h);
}

/* ---- labels placed where they cover no point ---- */

typedef struct box {
  double x0, y0, x1, y1;
} box;

/* The boxes taken (the points', then each label's as it is placed) and the plot's. */
typedef struct taken {
  box *b;
  size_t n, cap;
  box plot;
  double lane; /* where the next label of the lane above the plot ends */
} taken;

static void take(taken *t, box b) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    box *g = realloc(t->b, cap * sizeof *g);
    if (!g) return; /* then a later label may meet it: nothing worse */
    t->b = g;
    t->cap = cap;
  }
  t->b[t->n++] = b;
}

/* TEXT's width at LABEL_PX, no less than DejaVu Sans draws it (system-ui on Debian; the usual
 * sans fonts are narrower): per-character advances in em, rounded up. */
static double text_width(const char *s) {
  double em = 0;
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if ((*c & 0xc0) == 0x80) continue; /* a UTF-8 continuation byte */
    if (*c >= 0x80)
      em += 1.0;
    else if (strchr(" .,:;'|!il", *c))
      em += 0.34;
    else if (strchr("()/-[]fjrtI", *c))
      em += 0.45;
    else if (strchr("mwMW%", *c))
      em += 1.02;
    else if (*c >= 'A' && *c <= 'Z')
      em += 0.8;
    else
      em += 0.66;
  }
  return em * LABEL_PX + 2;
}

/* The box of a label of width w whose baseline is at y, starting at x (end 0) or ending there. */
static box label_box(double x, double y, int end, double w) {
  box b = {end ? x - w : x, y - 0.96 * LABEL_PX - 1, end ? x : x + w, y + 0.26 * LABEL_PX + 1};
  return b;
}

/* 1 when b lies inside the plot and meets no box taken. */
static int box_free(const taken *t, box b) {
  if (b.x0 < t->plot.x0 || b.x1 > t->plot.x1 || b.y0 < t->plot.y0 || b.y1 > t->plot.y1) return 0;
  for (size_t i = 0; i < t->n; i++)
    if (b.x0 < t->b[i].x1 && t->b[i].x0 < b.x1 && b.y0 < t->b[i].y1 && t->b[i].y0 < b.y1) return 0;
  return 1;
}

typedef struct place {
  double x, y;
  int end;
} place;

/* Tries the place; takes its box and returns 1 when it is free. */
static int try_place(taken *t, double x, double y, int end, double w, place *out) {
  box b = label_box(x, y, end, w);
  if (!box_free(t, b)) return 0;
  take(t, b);
  *out = (place){x, y, end};
  return 1;
}

/* The lane above the plot, filled from the right: for a label no free place inside takes. */
static place lane_place(taken *t, double w) {
  place p = {t->lane, MT - 9, 1};
  t->lane -= w + 16;
  return p;
}

/* A compute roof's label: along the roof at height ry, from the plot's right end leftwards,
 * above the line (where the slope left of the ridge rx is lower still) or below it right of the
 * ridge. */
static place roof_label_place(taken *t, double ry, double rx, double w) {
  place p;
  for (double xe = PW - MR - 6; xe - w >= ML + 4; xe -= 12)
    if (try_place(t, xe, ry - 5 - 0.26 * LABEL_PX, 1, w, &p) ||
        (xe - w >= rx + 4 && try_place(t, xe, ry + 5 + 0.96 * LABEL_PX, 1, w, &p)))
      return p;
  return lane_place(t, w);
}

/* The DRAM slope's label: beside the slope, left of the lowest ridge (x at most xr), above-left of
 * the line (where no point under the roofs is) or below-right of it. */
static place dram_label_place(taken *t, const axes *a, double bw, double xr, double w) {
  place p;
  for (double x = ML + 8; x <= fmin(xr, PW - MR); x += 10) {
    double v =
        pow(10, a->x0 + (x - ML) / (PW - ML - MR) * (a->x1 - a->x0)); /* the intensity at x */
    double y = ax_y(a, bw * v);
    if (!(y > MT && y < PH - MB)) continue;
    if (try_place(t, x - 4, y - 4 - 0.26 * LABEL_PX - 1, 1, w, &p) ||
        try_place(t, x + 4, y + 4 + 0.96 * LABEL_PX + 1, 0, w, &p))
      return p;
  }
  return lane_place(t, w);
}

/* The winner's label: beside its ring, nearer places first. */
static place win_label_place(taken *t, double cx, double cy, double w) {
  static const struct {
    double dx, dy;
    int end;
  } at[] = {{1, -1, 0}, {1, 1, 0}, {-1, -1, 1}, {-1, 1, 1}};
  place p;
  for (double d = WIN_R + 3; d < 80; d += 8)
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
      if (try_place(t, cx + at[i].dx * d,
                    cy + (at[i].dy < 0 ? -d + 0.26 * LABEL_PX : d + 0.96 * LABEL_PX), at[i].end, w,
                    &p))
        return p;
  return lane_place(t, w);
}

/* The labels of a chart, placed before they are written (after the points, over them). */
typedef struct labels {
  struct {
    char cls[40], key[16], text[160];
    place at;
  } l[PATH_COUNT + 2];
  int n;
} labels;

static void label_add(labels *L, const char *cls, const char *key, place at, const char *text) {
  if (L->n >= (int)(sizeof L->l / sizeof L->l[0])) return;
  snprintf(L->l[L->n].cls, sizeof L->l[L->n].cls, "%s", cls);
  snprintf(L->l[L->n].key, sizeof L->l[L->n].key, "%s", key ? key : "");
  snprintf(L->l[L->n].text, sizeof L->l[L->n].text, "%s", text);
  L->l[L->n++].at = at;
}

static void labels_write(html *h, const labels *L) {
  for (int i = 0; i < L->n; i++) {
    place p = L->l[i].at;
    svg_text_open(h, L->l[i].cls, p.x, p.y, p.end ? "end" : NULL);
    if (L->l[i].key[0]) html_attr(h, "data-roof", L->l[i].key);
    html_text(h, L->l[i].text);
    html_close(h);
  }
}

/* The roofs present (gpu_spec.h's paths the candidates ran on, and the DRAM slope), their labels
 * placed off the boxes in t, into L. */
static void roofline_roofs(html *h, const axes *a, size_t si, const report_roofs *rf, taken *t,
                           labels *L) {
  double X0 = pow(10, a->x0), X1 = pow(10, a->x1), ridge_x = PW - MR;
  char clip[32];
  snprintf(clip, sizeof clip, "clip%zu", si);
  int order[PATH_COUNT], n = 0;
  for (int p = 0; p < PATH_COUNT; p++)
    if (roof_drawn(rf, p)) order[n++] = p;
  for (int i = 1; i < n; i++) /* the highest roof first: its label has the most room */
    for (int j = i; j > 0 && rf->path[order[j]].peak > rf->path[order[j - 1]].peak; j--) {
      int x = order[j];
      order[j] = order[j - 1], order[j - 1] = x;
    }
  for (int i = 0; i < n; i++) {
    compute_path p = (compute_path)order[i];
    double peak = rf->path[p].peak, ridge = rf->bw > 0 ? peak / rf->bw : X0;
    double xy[6] = {ax_x(a, X0),   ax_y(a, rf->bw * X0), ax_x(a, ridge),
                    ax_y(a, peak), ax_x(a, X1),          ax_y(a, peak)};
    char cls[40], v[32], text[160];
    snprintf(cls, sizeof cls, "roof %s", compute_path_key(p));
    svg_polyline_open(h, cls, rf->bw > 0 ? xy : xy + 2, rf->bw > 0 ? 3 : 2, clip);
    html_attr(h, "data-roof", compute_path_key(p));
    html_close(h);
    si_unit(peak, "FLOP/s", v, sizeof v);
    snprintf(text, sizeof text, "%s %s (%s)", compute_path_label(p), v,
             rf->path[p].measured ? "measured here" : "datasheet");
    double rx = rf->bw > 0 ? ax_x(a, ridge) : ML;
    snprintf(cls, sizeof cls, "rooflabel %s", compute_path_key(p));
    label_add(L, cls, compute_path_key(p), roof_label_place(t, ax_y(a, peak), rx, text_width(text)),
              text);
    ridge_x = fmin(ridge_x, rx);
  }
  html_newline(h);
  if (!(rf->bw > 0)) return;
  char v[32], dram[160];
  si_unit(rf->bw, "B/s", v, sizeof v);
  snprintf(dram, sizeof dram, "DRAM %s copy (%s)", v,
           rf->bw_basis[0]   ? rf->bw_basis
           : rf->bw_measured ? "measured here"
                             : "basis unknown");
  if (!n) { /* a slope alone, over the whole plot */
    double xy[4] = {ax_x(a, X0), ax_y(a, rf->bw * X0), ax_x(a, X1), ax_y(a, rf->bw * X1)};
    svg_polyline_open(h, "roof dram", xy, 2, clip);
    html_attr(h, "data-roof", "dram");
    html_close(h);
  }
  label_add(L, "rooflabel dram", "dram", dram_label_place(t, a, rf->bw, ridge_x, text_width(dram)),
            dram);
}

/* The boxes the points and the winner's ring cover, into t. */
static void roofline_take_points(const axes *a, const report_cand *const *cs, size_t n,
                                 const report_cand *win, taken *t) {
  for (size_t i = 0; i < n; i++) {
    double x = ax_x(a, cs[i]->intensity), y = ax_y(a, cs[i]->achieved);
    take(t, (box){x - POINT_HALF, y - POINT_HALF, x + POINT_HALF, y + POINT_HALF});
  }
  if (win) {
    double x = ax_x(a, win->intensity), y = ax_y(a, win->achieved), r = WIN_R + 1.5;
    take(t, (box){x - r, y - r, x + r, y + r});
  }
}

/* The points, each a link to its row of the section's table (#pSrK, K its rank there) with its
 * rank and configuration in its title, shown on hover. */
static void roofline_points(html *h, const axes *a, const marks *mk, const report_cand *const *cs,
                            const size_t *rank, size_t n, size_t si, const report_cand *win) {
  for (size_t i = 0; i < n; i++) {
    const report_cand *c = cs[i];
    double x = ax_x(a, c->intensity), y = ax_y(a, c->achieved);
    const char *kind = timing_kind_name(c->timing);
    char cls[40];
    snprintf(cls, sizeof cls, "pt %s", kind);
    size_t r = rank ? rank[i] : i + 1;
    html_open(h, "a");
    html_attrf(h, "href", "#p%zur%zu", si, r);
    marker_open(h, mark_of(mk, c->tmpl), cls, x, y);
    html_attrf(h, "data-rank", "%zu", r);
    html_attr(h, "data-template", c->tmpl);
    const char *path =
        c->path >= 0 && c->path < PATH_COUNT ? compute_path_key((compute_path)c->path) : "";
    if (path[0]) html_attr(h, "data-path", path);
    char v[32];
    si_unit(c->achieved, "FLOP/s", v, sizeof v);
    svg_titlef(h, "#%zu %s %s: %.4g ms, %s, %s%s%s%s%s", r, c->tmpl, c->config, c->ms, v, kind,
               path[0] ? ", " : "", path[0] ? compute_path_label((compute_path)c->path) : "",
               c->limit[0] ? ", " : "", c->limit);
    html_close(h); /* the marker */
    html_close(h); /* a */
    html_newline(h);
  }
  if (win) {
    svg_circle_open(h, "win", ax_x(a, win->intensity), ax_y(a, win->achieved), WIN_R);
    html_close(h);
  }
}

static void roofline_svg(html *h, size_t si, const report_section *s, const marks *mk,
                         const report_cand *const *cs, const size_t *rank, size_t n,
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
  taken t = {.plot = {ML + 2, MT + 2, PW - MR - 2, PH - MB - 2}, .lane = PW - MR};
  labels L = {.n = 0};
  roofline_take_points(&a, cs, n, win, &t);
  roofline_roofs(h, &a, si, rf, &t, &L);
  roofline_points(h, &a, mk, cs, rank, n, si, win);
  if (win)
    label_add(&L, "winlabel", NULL,
              win_label_place(&t, ax_x(&a, win->intensity), ax_y(&a, win->achieved),
                              text_width("winner")),
              "winner");
  labels_write(h, &L);
  free(t.b);
  html_close(h); /* svg */
  html_newline(h);
}

/* The chart's legend: a row per template plotted, its marker and count. */
static void roofline_legend(html *h, const marks *mk, const report_cand *const *cs, size_t n) {
  html_open_class(h, "table", "legend");
  html_open(h, "tr");
  html_elem(h, "th", NULL, "");
  html_elem(h, "th", NULL, "template");
  html_elem(h, "th", "num", "points");
  html_close(h);
  for (size_t k = 0; k < mk->n; k++) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += !strcmp(cs[i]->tmpl, mk->name[k]);
    if (!count) continue;
    html_open_class(h, "tr", "entry");
    html_attr(h, "data-template", mk->name[k]);
    html_open(h, "td");
    svg_open(h, "key", 16, 16);
    marker_open(h, mark_of(mk, mk->name[k]), "keymark", 8, 8);
    html_close(h);
    html_close(h); /* svg */
    html_close(h); /* td */
    html_elem(h, "td", NULL, mk->name[k]);
    html_elemf(h, "td", "num", "%zu", count);
    html_close(h);
    html_newline(h);
  }
  html_close(h);
  html_newline(h);
}

/* ---- history: the winner's time run after run ---- */

static int run_of(const report_section *s, const db_run_info *r) {
  return !strcmp(r->family, s->family) && !strcmp(r->shape, s->shape) &&
         !strcmp(r->dtype, s->dtype) && !strcmp(r->layout, s->layout) &&
         !strcmp(r->device.name, s->device.name);
}

enum { HW = 1000, HH = 190, HL = 72, HR = 16, HT = 12, HB = 34 };

/* The best-so-far line over the runs of section s (k-th run at x HL + 10 + step k). */
static void history_best(html *h, const report_section *s, const db_run_info *runs, size_t nruns,
                         double step, double ymax) {
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

static void history_marks(html *h, const report_section *s, const db_run_info *runs, size_t nruns,
                          double step, double ymax, double tol, char *first, char *last,
                          size_t size) {
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
      svg_titlef(h, "recheck %s: %s%s", r->started_at, failed ? "FAILS " : "",
                 failed ? r->last_status : "");
      html_close(h);
      html_newline(h);
    } else if (isfinite(r->best_ms)) {
      best = fmin(best, r->best_ms);
      svg_circle_open(h, "run", x, HT + (1 - r->best_ms / ymax) * (HH - HT - HB), 3);
      svg_titlef(h, "run %lld %s: best %.4g ms, %lld results (%s)", r->id, r->started_at,
                 r->best_ms, r->results, r->status);
      html_close(h);
      html_newline(h);
    }
  }
}

/* A section with a single run: its values in a line (a chart of one dot says less). */
static void history_one(html *h, const report_section *s, const db_run_info *runs, size_t nruns) {
  for (size_t i = 0; i < nruns; i++) {
    const db_run_info *r = &runs[i];
    if (!run_of(s, r) || r->results == 0) continue;
    html_open_class(h, "p", "history-one");
    html_elem(h, "span", "lead", "History: one run so far");
    if (job_run_is_recheck(r))
      html_textf(h, " \u2014 a recheck, started %s: %s, %.4g ms (%s).", r->started_at,
                 r->last_status, r->last_ms, r->status);
    else
      html_textf(h,
                 " \u2014 run %lld, started %s: best %.4g ms over %lld result%s (%s). The chart of "
                 "the best "
                 "time run after run starts with the second run.",
                 r->id, r->started_at, r->best_ms, r->results, r->results == 1 ? "" : "s",
                 r->status);
    html_close(h);
    html_newline(h);
    return;
  }
}

static void history_svg(html *h, const report_section *s, const db_run_info *runs, size_t nruns,
                        double tol) {
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
  if (n == 1) {
    history_one(h, s, runs, nruns);
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
  double step = (double)(HW - HL - HR - 20) / (double)(n - 1);
  history_best(h, s, runs, nruns, step, ymax);
  char first[32] = "", last[32] = "";
  history_marks(h, s, runs, nruns, step, ymax, tol, first, last, sizeof first);
  svg_text(h, "tick", HL, HH - HB + 14, NULL, first);
  svg_text(h, "tick", HW - HR, HH - HB + 14, "end", last);
  svg_text(
      h, "axis", (HL + HW - HR) / 2.0, HH - 6, "middle",
      "runs, oldest first (circles: best of a tuning run; line: best so far; diamonds: rechecks)");
  html_close(h); /* svg */
  html_newline(h);
}

/* ---- the page ---- */

/* The style sheet: a literal, as html_style takes it. */
#define REPORT_CSS                                                                                 \
  "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;padding:0 "                           \
  "24px;color:#1b1f24;background:#fff;"                                                            \
  "max-width:1400px}"                                                                              \
  "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-top:1px solid "     \
  "#d0d7de;"                                                                                       \
  "padding-top:14px}table{border-collapse:collapse;margin:8px 0}td,th{padding:3px "                \
  "8px;border-bottom:1px solid "                                                                   \
  "#eaeef2;text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;font-" \
  "variant-numeric:"                                                                               \
  "tabular-nums}code{font-size:12px;word-break:break-all}.muted{color:#57606a}.bad{color:#b42318;" \
  "font-weight:600}.ok{color:#1a7f37}"                                                             \
  "tr.win td{background:#fff8c5}section.regressed "                                                \
  "h2{color:#b42318}.banner{background:#fdecea;border:1px solid "                                  \
  "#f5c2c0;padding:8px 12px;border-radius:6px}svg text{font:11px "                                 \
  "system-ui,sans-serif;fill:#57606a}"                                                             \
  "svg "                                                                                           \
  ".axis{font-size:12px;fill:#1b1f24}rect.plot{fill:#fbfcfd;stroke:#d0d7de}line.grid{stroke:#"     \
  "eaeef2}"                                                                                        \
  "table.overview,table.top{display:block;overflow-x:auto;max-width:100%}"                         \
  "div.chart{display:flex;flex-wrap:wrap;align-items:flex-start;gap:8px 24px}"                     \
  "svg.roofline{flex:1 1 "                                                                         \
  "640px;min-width:0;max-width:1100px;height:auto}svg.history{width:100%;max-width:1100px;"        \
  "height:auto}table.legend{flex:0 1 260px;margin:0}table.legend td{border:0;padding:1px "         \
  "6px;word-break:break-all}"                                                                      \
  ".roof{fill:none;stroke-width:2}.roof.tc_f16{stroke:#cf222e}.roof.tc_tf32{stroke:#953800;"       \
  "stroke-dasharray:8 3}"                                                                          \
  ".roof.simt_f32{stroke:#bc4c00;stroke-dasharray:3 "                                              \
  "3}.roof.tc_f8{stroke:#a0111f;stroke-dasharray:10 3 2 3}"                                        \
  ".roof.dram{stroke:#cf222e}.rooflabel{fill:#cf222e!important}.rooflabel.tc_tf32{fill:#953800!"   \
  "important}"                                                                                     \
  ".rooflabel.simt_f32{fill:#bc4c00!important}.rooflabel.tc_f8{fill:#a0111f!important}"            \
  ".pt,.keymark{stroke-width:1.3}.c0{fill:#0969da;stroke:#0969da}.c1{fill:#bf8700;stroke:#bf8700}" \
  ".c2{fill:#1a7f37;stroke:#1a7f37}.c3{fill:#8250df;stroke:#8250df}.c4{fill:#e16f24;stroke:#"      \
  "e16f24}"                                                                                        \
  ".c5{fill:#1b7c83;stroke:#1b7c83}.c6{fill:#bf3989;stroke:#bf3989}.c7{fill:#57606a;stroke:#"      \
  "57606a}"                                                                                        \
  ".pt.measured,.keymark{fill-opacity:.8}.pt.predicted{fill:#fff}.pt.replayed{fill-opacity:.3}"    \
  ".win{fill:none;stroke:#1b1f24;stroke-width:2}.winlabel{fill:#1b1f24!important;font-weight:600}" \
  ".best{fill:none;stroke:#1a7f37;stroke-width:2}.run{fill:#1a7f37}.recheck{fill:#0969da}"         \
  ".recheck.regressed{fill:#cf222e}.legend span{margin-right:14px}.lead{font-weight:600}"          \
  "rect.bar{fill:#8c959f}rect.bar.top{fill:#1a7f37}svg.bar{vertical-align:middle}"                 \
  "svg.progress{max-width:100%;height:auto}tr:target{outline:2px solid #0969da}"                   \
  "div.sorted{display:none}div.sorted:target{display:block}div.sorted:target~div.bytime{display:"  \
  "none}a.sortlink{color:inherit;text-decoration:none}a.sortlink:hover{text-decoration:underline}" \
  "a.sorted{color:#0969da}"

/* A link to section i, its text the problem and device. */
static void problem_link(html *h, const report_section *s, size_t i, int with_device) {
  html_open(h, "a");
  html_attrf(h, "href", "#p%zu", i);
  html_textf(h, "%s %s %s%s%s", s->family, s->shape, s->dtype, with_device ? " on " : "",
             with_device ? s->device.name : "");
  html_close(h);
}

static void cell(html *h, const char *cls, const char *text) { html_elem(h, "td", cls, text); }

/* A timing cell: "predicted", and where the output was checked ("predicted, checked on the sim"). */
static void timing_cell(html *h, timing_kind t, const char *checked_on) {
  char text[64];
  const char *where = !strcmp(checked_on, "sim") ? "sim" : !strcmp(checked_on, "gpu") ? "GPU" : "";
  snprintf(text, sizeof text, "%s%s%s", timing_kind_name(t), where[0] ? ", checked on the " : "",
           where);
  cell(h, NULL, text);
}

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
  html_elemf(
      h, "p", "muted",
      "%s \u00b7 generated %s by rooftune \u00b7 %zu problem%s on their devices, %zu candidates",
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
  html_elem(h, "span", NULL, "each template its own marker (the legend beside each chart)");
  html_elem(h, "span", NULL, "filled: measured on the GPU");
  html_elem(h, "span", NULL, "open: predicted by the model device");
  html_elem(h, "span", NULL, "pale: replayed from a file");
  html_elem(h, "span", NULL, "\u25ef winner");
  html_elem(h, "span", NULL, "a roof per instruction path the candidates ran on");
  html_close(h);
  html_newline(h);
}

/* The overview: one row per section, regressions first. */
static void page_overview(const report_page *p, html *h) {
  static const char *const names[] = {"problem",  "device",  "winner", "time ms",
                                      "TFLOP/s",  "timing",  "limit",  "candidates",
                                      "last run", "recheck", NULL};
  static const char *const classes[] = {NULL, NULL, NULL,  "num", "num",
                                        NULL, NULL, "num", NULL,  NULL};
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
        timing_cell(h, s->winner.timing, s->winner.checked_on);
        cell(h, NULL, s->winner.limit);
      } else {
        cell(h, "bad", "none");
        for (int k = 0; k < 4; k++) cell(h, NULL, "");
      }
      html_elemf(h, "td", "num", "%zu", s->ncand);
      html_elemf(h, "td", NULL, "%.10s", s->last_run);
      cell(h, s->regression ? "bad" : "ok",
           s->have_verdict ? recheck_verdict_name(s->verdict) : "");
      html_close(h);
      html_newline(h);
    }
  html_close(h);
  html_newline(h);
}

/* How candidate c's output was checked, in words. */
static const char *checked_words(const report_cand *c) {
  if (c->verified) return "verified";
  if (!strcmp(c->checked_on, "sim")) return "checked on the sim";
  if (c->timing == TIMING_MEASURED) return "not checked";
  return c->timing == TIMING_PREDICTED ? "never ran (predicted)" : "not here (replayed)";
}

/* The orders a section's table can be read in, without script (the page has none): each a
 * pre-sorted copy of the table, its column header a link to it (#pS-by-KEY) and CSS's :target
 * showing the one linked to in place of the table by time.  KEY, the column it sorts, and
 * whether more is better. */
#define REPORT_SORTS(X) \
  X(time, 2, 0)         \
  X(template, 1, 0) X(tflops, 3, 1) X(gbs, 4, 1) X(roof, 5, 1) X(registers, 6, 0) X(occupancy, 7, 1)

typedef struct sort_order {
  const char *key;
  int col;  /* into the table's columns */
  int desc; /* 1: the largest first */
} sort_order;

#define SORT_ORDER(k, c, d) {#k, c, d},
static const sort_order sort_orders[] = {REPORT_SORTS(SORT_ORDER)};
#undef SORT_ORDER
#define NSORTS (sizeof sort_orders / sizeof sort_orders[0])

/* Rows of each copy sorted otherwise than by time (at most --top): its best, not every candidate
 * again. */
#define REPORT_SORT_ROWS 100

/* Candidate c's value in column col (NAN: none, sorted last and left out of a copy). */
static double sort_value(const report_cand *c, int col) {
  switch (col) {
    case 2: return c->ms > 0 ? c->ms : NAN;
    case 3: return c->ms > 0 && c->achieved > 0 ? c->achieved : NAN;
    case 4: return c->ms > 0 && c->bytes_per_s > 0 ? c->bytes_per_s : NAN;
    case 5: return c->ms > 0 ? c->roof_frac : NAN;
    case 6: return c->registers > 0 ? c->registers : NAN;
    case 7: return c->occupancy > 0 ? c->occupancy : NAN;
    default: return 0;
  }
}

typedef struct sort_ctx {
  const report_cand *const *cs;
  const sort_order *o;
} sort_ctx;

/* Ranks (indices into cs, which is by time) in order o, ties by time. */
static int cmp_rank(const void *a, const void *b, void *ctx) {
  const sort_ctx *x = ctx;
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  int c = 0;
  if (x->o->col == 1) {
    c = strcmp(x->cs[i]->tmpl, x->cs[j]->tmpl);
  } else {
    double u = sort_value(x->cs[i], x->o->col), v = sort_value(x->cs[j], x->o->col);
    if (isnan(u) || isnan(v))
      c = isnan(u) - isnan(v);
    else
      c = x->o->desc ? (u < v) - (u > v) : (u > v) - (u < v);
  }
  return c ? c : (i > j) - (i < j);
}

/* The header row of a copy sorted by order `by`: every sortable column a link to its copy. */
static void sort_header(html *h, size_t si, const sort_order *by) {
  static const char *const names[] = {
      "#",         "template", "time ms", "TFLOP/s", "GB/s",  "% of roof",     "registers",
      "occupancy", "timing",   "checked", "limit",   "lever", "configuration", NULL};
  static const char *const classes[] = {"num", NULL, "num", "num", "num", "num", "num",
                                        "num", NULL, NULL,  NULL,  NULL,  NULL};
  html_open(h, "tr");
  for (int col = 0; names[col]; col++) {
    const sort_order *o = NULL;
    for (size_t k = 0; k < NSORTS; k++)
      if (sort_orders[k].col == col) o = &sort_orders[k];
    html_open_class(h, "th", classes[col]);
    if (!o) {
      html_text(h, names[col]);
    } else {
      html_open_class(h, "a", o == by ? "sortlink sorted" : "sortlink");
      html_attrf(h, "href", "#p%zu-by-%s", si, o->key);
      html_attrf(h, "title", "sort by %s%s", names[col], o->desc ? ", largest first" : "");
      html_textf(h, "%s%s", names[col], o == by ? (o->desc ? " \u25bc" : " \u25b2") : "");
      html_close(h);
    }
    html_close(h);
  }
  html_close(h);
  html_newline(h);
}

/* Candidate cs[k]'s row (its rank k + 1 by time); the table by time's rows are #pSrK, the
 * chart's points' targets, and the copies' ranks link there. */
static void cand_row(html *h, size_t si, const report_cand *const *cs, size_t k,
                     const report_cand *win, int by_time) {
  const report_cand *c = cs[k];
  html_open_class(h, "tr", c == win ? "win" : NULL);
  if (by_time) {
    html_attrf(h, "id", "p%zur%zu", si, k + 1);
    html_elemf(h, "td", "num", "%zu", k + 1);
  } else {
    html_open_class(h, "td", "num");
    html_open_class(h, "a", "rank");
    html_attrf(h, "href", "#p%zur%zu", si, k + 1);
    html_textf(h, "%zu", k + 1);
    html_close(h);
    html_close(h);
  }
  cell(h, NULL, c->tmpl);
  if (c->ms > 0) {
    cellf(h, "num", "%.4g", c->ms);
    cellf(h, "num", "%.4g", c->achieved > 0 ? c->achieved / 1e12 : NAN);
  } else {
    cell(h, "num bad", c->status);
    cell(h, NULL, "");
  }
  cellf(h, "num", "%.4g", c->ms > 0 ? c->bytes_per_s / 1e9 : NAN);
  cellf(h, "num", "%.0f", c->roof_frac * 100);
  if (c->registers > 0)
    html_elemf(h, "td", "num", "%d", c->registers);
  else
    cell(h, "num", "");
  if (c->occupancy > 0)
    html_elemf(h, "td", "num", "%.0f %%%s", 100 * c->occupancy, c->counters ? "" : " calc");
  else
    cell(h, "num", "");
  cell(h, NULL, timing_kind_name(c->timing));
  cell(h, c->verified ? "ok" : NULL, checked_words(c));
  cell(h, NULL, c->limit);
  cell(h, NULL, c->lever);
  html_open(h, "td");
  html_elem(h, "code", NULL, c->config);
  html_close(h);
  html_close(h);
  html_newline(h);
}

/* The copy of the table in order o (not time): the candidates with a value, the best `rows`
 * of them. */
static void sorted_copy(html *h, size_t si, const report_cand *const *cs, size_t n,
                        const report_cand *win, const sort_order *o, size_t rows, size_t *idx) {
  size_t m = 0;
  for (size_t k = 0; k < n; k++)
    if (o->col == 1 || !isnan(sort_value(cs[k], o->col))) idx[m++] = k;
  sort_ctx ctx = {cs, o};
  qsort_r(idx, m, sizeof *idx, cmp_rank, &ctx);
  html_open_class(h, "div", "sorted");
  html_attrf(h, "id", "p%zu-by-%s", si, o->key);
  html_newline(h);
  html_open_class(h, "p", "muted");
  if (m > REPORT_SORT_ROWS)
    html_textf(h,
               "the first %d of %zu candidates with a value, by this column; # links to the "
               "candidate's row in the table by time",
               REPORT_SORT_ROWS, m);
  else
    html_textf(h,
               "%zu candidates with a value, by this column; # links to the candidate's row "
               "in the table by time",
               m);
  html_close(h);
  html_open_class(h, "table", "top");
  sort_header(h, si, o);
  for (size_t r = 0; r < m && r < rows; r++) cand_row(h, si, cs, idx[r], win, 0);
  html_close(h);
  html_close(h); /* div.sorted */
  html_newline(h);
}

/* A section's table: every candidate (up to p->top), fastest first, each row #pSrK for the
 * chart's points to link to, with what a performance engineer compares: time, FLOP/s, DRAM
 * bandwidth, the share of the nearer roof, registers, occupancy and how it was checked.  Its
 * sortable headers link to the copies sorted otherwise (REPORT_SORTS), written before it so
 * that a targeted copy hides it (CSS's ~). */
static void section_table(const report_page *p, html *h, size_t si, const report_cand *const *cs,
                          size_t n, const report_cand *win) {
  html_open_class(h, "div", "sorts");
  html_newline(h);
  size_t *idx = malloc((n ? n : 1) * sizeof *idx);
  size_t rows = p->top > 0 && (size_t)p->top < REPORT_SORT_ROWS ? (size_t)p->top : REPORT_SORT_ROWS;
  for (size_t k = 1; idx && k < NSORTS; k++)
    sorted_copy(h, si, cs, n, win, &sort_orders[k], rows, idx);
  free(idx);
  html_open_class(h, "div", "bytime");
  html_attrf(h, "id", "p%zu-by-time", si);
  html_open_class(h, "table", "top");
  sort_header(h, si, &sort_orders[0]);
  for (size_t k = 0; k < n && k < (size_t)p->top; k++) cand_row(h, si, cs, k, win, 1);
  html_close(h);
  html_close(h); /* div.bytime */
  html_close(h); /* div.sorts */
  html_newline(h);
}

/* ---- the search's progress, the vendor baseline, each parameter's effect ---- */

static int cmp_seen(const void *a, const void *b) {
  const report_cand *x = *(const report_cand *const *)a, *y = *(const report_cand *const *)b;
  return (x->seen > y->seen) - (x->seen < y->seen);
}

/* The best time so far against the evaluations, in the order they were made (step line). */
static void progress_svg(html *h, const report_cand *const *cs, size_t n) {
  const report_cand **by = malloc((n ? n : 1) * sizeof *by);
  double *xy = malloc((4 * n + 2) * sizeof *xy);
  if (!by || !xy || n < 2) {
    free(by);
    free(xy);
    return;
  }
  memcpy(by, cs, n * sizeof *by);
  qsort(by, n, sizeof *by, cmp_seen);
  double best = INFINITY, first = NAN;
  for (size_t i = 0; i < n; i++)
    if (by[i]->ms > 0 && isnan(first)) first = by[i]->ms;
  if (isnan(first)) {
    free(by);
    free(xy);
    return;
  }
  double ymax = first * 1.1, w = HW - HL - HR, ht = HH - HT - HB;
  size_t k = 0, m = 0;
  for (size_t i = 0; i < n; i++) {
    if (!(by[i]->ms > 0)) continue;
    double x = HL + w * (double)i / (double)(n - 1);
    if (by[i]->ms < best) {
      if (k) xy[2 * k] = x, xy[2 * k + 1] = HT + ht * (1 - best / ymax), k++; /* the step */
      best = by[i]->ms;
      m++;
    }
    xy[2 * k] = x, xy[2 * k + 1] = HT + ht * (1 - best / ymax), k++;
    if (k + 2 > 2 * n) break;
  }
  html_open_class(h, "p", "lead");
  html_textf(h, "The search: the best time so far against %zu evaluations (%zu improvements)", n,
             m);
  html_close(h);
  svg_open(h, "progress", HW, HH);
  svg_rect_open(h, "plot", HL, HT, w, ht);
  html_close(h);
  for (int t = 0; t <= 4; t++) {
    double v = ymax * t / 4, y = HT + (1 - (double)t / 4) * ht;
    char lab[32];
    snprintf(lab, sizeof lab, "%.3g ms", v);
    svg_line(h, "grid", HL, y, HW - HR, y);
    svg_text(h, "tick", HL - 4, y + 4, "end", lab);
  }
  svg_polyline(h, "best", xy, k, NULL);
  svg_text(h, "tick", HL, HH - HB + 14, NULL, "1");
  char last[32];
  snprintf(last, sizeof last, "%zu", n);
  svg_text(h, "tick", HW - HR, HH - HB + 14, "end", last);
  svg_text(h, "axis", (HL + HW - HR) / 2.0, HH - 6, "middle",
           "evaluations, in the order made (line: the best time so far)");
  html_close(h); /* svg */
  html_newline(h);
  free(by);
  free(xy);
}

/* The vendor library's fastest candidate (cuBLASLt, cuDNN: the family's "library") against the
 * winner, where one was measured. */
static void baseline_line(html *h, const report_section *s, const report_cand *const *cs, size_t n,
                          const report_cand *win) {
  const family_ops *fam = family_serving_find(s->family);
  const char *lib = fam ? fam->library : NULL;
  const report_cand *b = NULL;
  for (size_t k = 0; lib && k < n && !b; k++)
    if (!strcmp(cs[k]->tmpl, lib) && cs[k]->ms > 0) b = cs[k]; /* cs is fastest first */
  html_open_class(h, "p", "baseline");
  if (!b) {
    html_textf(h, "Vendor baseline: %s",
               lib ? "none measured here (the library runs on a GPU)"
                   : "this family has no vendor library");
  } else {
    html_textf(h, "Vendor baseline: %s %.4g ms (%s)", family_library_label(lib), b->ms, b->config);
    const report_cand *f = win ? win : cs[0]; /* the winner, else the fastest */
    if (f->ms > 0 && f != b)
      html_textf(h, "; the %s %s %.4g ms is %.2fx its speed", win ? "winner" : "fastest", f->tmpl,
                 f->ms, b->ms / f->ms);
  }
  html_close(h);
  html_newline(h);
}

enum { PARAM_MAX = 16, VALUE_MAX = 24 };

typedef struct param_view {
  char name[48];
  int nv;
  char value[VALUE_MAX][48];
  size_t count[VALUE_MAX];
  double best[VALUE_MAX]; /* the fastest time with that value */
} param_view;

/* Adds configuration text cfg ("A=1,B=2") at time ms to the views. */
static void params_add(param_view *pv, int *np, const char *cfg, double ms) {
  char buf[800];
  snprintf(buf, sizeof buf, "%s", cfg);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '=');
    if (!eq) return; /* not NAME=VALUE pairs: a library's algorithm */
    *eq = 0;
    int i = 0;
    while (i < *np && strcmp(pv[i].name, t)) i++;
    if (i == *np) {
      if (*np == PARAM_MAX) continue;
      memset(&pv[i], 0, sizeof pv[i]);
      snprintf(pv[i].name, sizeof pv[i].name, "%s", t);
      (*np)++;
    }
    param_view *v = &pv[i];
    int j = 0;
    while (j < v->nv && strcmp(v->value[j], eq + 1)) j++;
    if (j == v->nv) {
      if (v->nv == VALUE_MAX) continue;
      snprintf(v->value[v->nv], sizeof v->value[0], "%s", eq + 1);
      v->best[v->nv++] = INFINITY;
    }
    v->count[j]++;
    if (ms < v->best[j]) v->best[j] = ms;
  }
}

/* Each parameter's effect: per value, how many candidates had it and the fastest of them, with
 * a bar of its speed against the section's best. */
static void param_views(html *h, const report_cand *const *cs, size_t n) {
  param_view *pv = calloc(PARAM_MAX, sizeof *pv);
  int np = 0;
  double best = INFINITY;
  for (size_t k = 0; pv && k < n; k++)
    if (cs[k]->ms > 0) {
      params_add(pv, &np, cs[k]->config, cs[k]->ms);
      best = fmin(best, cs[k]->ms);
    }
  if (!pv || !np) {
    free(pv);
    return;
  }
  html_open_class(h, "p", "lead");
  html_text(h, "Each parameter's effect: the fastest candidate with each of its values");
  html_close(h);
  html_open_class(h, "table", "params");
  static const char *const names[] = {"parameter", "value", "candidates", "best ms", "speed", NULL};
  static const char *const classes[] = {NULL, "num", "num", "num", NULL, NULL};
  header_row(h, names, classes);
  for (int i = 0; i < np; i++) {
    if (pv[i].nv < 2) continue; /* a parameter the space does not vary shows nothing */
    for (int j = 0; j < pv[i].nv; j++) {
      html_open_class(h, "tr", j ? NULL : "first");
      cell(h, NULL, j ? "" : pv[i].name);
      cell(h, "num", pv[i].value[j]);
      html_elemf(h, "td", "num", "%zu", pv[i].count[j]);
      cellf(h, "num", "%.4g", pv[i].best[j]);
      html_open(h, "td");
      svg_open(h, "bar", 120, 10);
      svg_rect_open(h, pv[i].best[j] <= best ? "bar top" : "bar", 0, 1, 120 * best / pv[i].best[j],
                    8);
      html_close(h);
      html_close(h); /* svg */
      html_close(h); /* td */
      html_close(h); /* tr */
      html_newline(h);
    }
  }
  html_close(h);
  html_newline(h);
  free(pv);
}

static void page_section(const report_page *p, const marks *mk, html *h, size_t i,
                         report_stats *st) {
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
  size_t *rank = malloc((n ? n : 1) * sizeof *rank); /* each point's row in the table */
  size_t np = 0;
  const report_cand *win = NULL;
  for (size_t k = 0; pts && rank && k < n; k++) {
    if (!report_plottable(cs[k])) continue;
    rank[np] = k + 1;
    pts[np++] = cs[k];
    if (s->have_winner && !win && !strcmp(cs[k]->tmpl, s->winner.template_name) &&
        !strcmp(cs[k]->config, s->winner.config) && !strcmp(cs[k]->toolkit, s->winner.toolkit))
      win = cs[k];
  }
  html_open_class(h, "p", "muted");
  html_textf(h, "%zu candidates, %zu plotted", n, np);
  if (s->nfailed) html_textf(h, ", %zu failed (no time, not plotted)", s->nfailed);
  if (n > np + s->nfailed)
    html_textf(h, ", %zu without a FLOP count (not plotted)", n - np - s->nfailed);
  html_textf(h, "; roofs of %s", s->roofs.gpu);
  html_close(h);
  html_newline(h);
  html_open_class(h, "div", "chart");
  roofline_svg(h, i, s, mk, pts ? (const report_cand *const *)pts : cs, rank, pts ? np : 0, win);
  roofline_legend(h, mk, pts ? (const report_cand *const *)pts : cs, pts ? np : 0);
  html_close(h); /* div.chart */
  html_newline(h);
  free(pts);
  free(rank);
  st->points += np;
  st->candidates += n;
  st->failed += s->nfailed;
  baseline_line(h, s, cs, n, win);
  section_table(p, h, i, cs, n, win);
  progress_svg(h, cs, n);
  param_views(h, cs, n);
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
  marks mk;
  marks_make(&mk, p);
  page_head(p, h);
  page_overview(p, h);
  for (size_t i = 0; i < p->nsec; i++) page_section(p, &mk, h, i, st);
  free(mk.name);
  html_close(h); /* body */
  html_close(h); /* html */
  html_newline(h);
}
