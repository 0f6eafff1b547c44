/* test_report_look.c — what the report's page shows a reader, drawn from plain data
 * (report_page.h): a roof per instruction path the plotted candidates ran on and no other
 * (gemm_skinny's CUDA-core points and gemm_mma's tensor-core ones on one chart, no tf32 or fp8
 * roof where no result used them, the CUDA-core roof alone on a declared stencil), each labelled
 * with its path; each template one marker class, the same on every chart, and a legend row with
 * that marker; the page fluid up to 1400 px; a problem with one run says so with its values
 * instead of drawing one dot, and draws the history chart from the second run.  Where labels go
 * and what Chromium draws are tests/cli/test_report_browser.sh's. */
/* stages: job */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_render.h"
#include "test.h"
#include "job/html.h"
#include "job/report_page.h"

#define FILL(field, text) snprintf((field), sizeof(field), "%s", (text))

static size_t occurrences(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* Section i of the page, malloc'ed. */
static char *section(const char *page, int i) {
  char open[32];
  snprintf(open, sizeof open, "<section id=\"p%d\"", i);
  const char *a = strstr(page, open), *b = a ? strstr(a, "</section>") : NULL;
  if (!a || !b) return strdup("");
  return strndup(a, (size_t)(b - a));
}

typedef struct look {
  report_section sec[2];
  report_cand cand[7];
  const report_cand *order[7];
  size_t start[3];
  db_run_info runs[3];
  report_page page;
} look;

static void roofs(report_roofs *r) {
  r->bw = 4.3e12;
  FILL(r->bw_basis, "measured on an NVIDIA H200");
  r->path[PATH_SIMT_F32].peak = 67e12;
  r->path[PATH_TC_TF32].peak = 495e12;
  r->path[PATH_TC_F16].peak = 990e12;
  r->path[PATH_TC_F8].peak = 1979e12;
  FILL(r->gpu, "NVIDIA H200 SXM");
}

static void cand(look *x, int i, int sec, const char *tmpl, compute_path path, double ms,
                 double intensity) {
  report_cand *c = &x->cand[i];
  c->section = sec;
  c->tmpl = (char *)tmpl;
  c->config = (char *)"A=1";
  c->toolkit = (char *)"cuda 13.0";
  c->limit = (char *)"memory";
  c->lever = (char *)"";
  FILL(c->status, "OK");
  c->timing = TIMING_MEASURED;
  c->ms = ms;
  c->intensity = intensity;
  c->achieved = 1e12 / ms;
  c->path = path;
  x->order[i] = c;
}

static void run(db_run_info *r, const report_section *s, long long id, double best) {
  FILL(r->family, s->family);
  FILL(r->shape, s->shape);
  FILL(r->dtype, s->dtype);
  FILL(r->layout, s->layout);
  r->device = s->device;
  FILL(r->status, "done");
  FILL(r->started_at, "2026-12-01T19:00:00Z");
  FILL(r->command, "rooftune tune");
  r->id = id;
  r->results = 3;
  r->best_ms = best;
  r->last_ms = NAN;
}

/* gemm 16x4096x4096:nt bf16 (tensor-core and CUDA-core templates, one run) and a stencil (CUDA
 * cores only, two runs). */
static void make(look *x) {
  memset(x, 0, sizeof *x);
  const char *fam[2] = {"gemm", "stencil3"}, *shape[2] = {"16x4096x4096", "1048576"},
             *dt[2] = {"bf16", "f32"};
  for (int s = 0; s < 2; s++) {
    report_section *S = &x->sec[s];
    FILL(S->family, fam[s]);
    FILL(S->shape, shape[s]);
    FILL(S->dtype, dt[s]);
    FILL(S->layout, s ? "" : "nt");
    FILL(S->device.name, "NVIDIA H200");
    roofs(&S->roofs);
  }
  x->sec[0].roofs.path[PATH_SIMT_F32].present = x->sec[0].roofs.path[PATH_TC_F16].present = 1;
  x->sec[1].roofs.path[PATH_SIMT_F32].present = 1;
  cand(x, 0, 0, "gemm_wgmma", PATH_TC_F16, 0.010, 15);
  cand(x, 1, 0, "gemm_mma", PATH_TC_F16, 0.012, 15);
  cand(x, 2, 0, "gemm_skinny", PATH_SIMT_F32, 0.017, 12);
  cand(x, 3, 0, "gemm_mma", PATH_TC_F16, 0.02, 14);
  cand(x, 4, 0, "gemm_skinny", PATH_SIMT_F32, 0.03, 10);
  cand(x, 5, 1, "stencil3_grid", PATH_SIMT_F32, 0.008, 0.5);
  cand(x, 6, 1, "stencil3_grid", PATH_SIMT_F32, 0.009, 0.5);
  x->start[0] = 0, x->start[1] = 5, x->start[2] = 7;
  run(&x->runs[0], &x->sec[0], 3, 0.010);
  run(&x->runs[1], &x->sec[1], 4, 0.009);
  run(&x->runs[2], &x->sec[1], 5, 0.008);
  x->sec[0].runs = x->runs, x->sec[0].nruns = 1;
  x->sec[1].runs = x->runs + 1, x->sec[1].nruns = 2;
  x->page = (report_page){.title = "look",
                          .source = "t.db",
                          .generated = "now",
                          .sec = x->sec,
                          .nsec = 2,
                          .order = x->order,
                          .start = x->start,
                          .ncand = 7,
                          .tol = 0.05,
                          .top = 10};
}

static char *render(const report_page *p) {
  size_t n = 0;
  report_stats st;
  char *buf = report_render(p, &n, &st);
  CHECK(buf != NULL);
  CHECK_INT(st.points, 7);
  return buf;
}

/* make()'s page rendered (*x holds it; freed when the render fails: NULL). */
static char *made_page(look **x) {
  *x = calloc(1, sizeof **x);
  make(*x);
  char *page = render(&(*x)->page);
  if (!page) {
    free(*x);
    *x = NULL;
  }
  return page;
}

/* the page's width; the GEMM */
TEST_CASE(gemm_section) {
  look *x = NULL;
  char *page = made_page(&x);
  if (!page) return;
  CHECK_CONTAINS(page, "max-width:1400px");
  char *g = section(page, 0);
  /* the GEMM: the CUDA-core and the tensor-core f16 roofs, labelled; no tf32 or fp8 */
  CHECK_INT(occurrences(g, "<polyline class=\"roof "), 2);
  CHECK_CONTAINS(g, "<polyline class=\"roof simt_f32\"");
  CHECK_CONTAINS(g, "<polyline class=\"roof tc_f16\"");
  CHECK_CONTAINS(g, "data-roof=\"simt_f32\">CUDA-core fp32 67 TFLOP/s (datasheet)</text>");
  CHECK_CONTAINS(g, "data-roof=\"tc_f16\">tensor-core f16/bf16 990 TFLOP/s (datasheet)</text>");
  CHECK_CONTAINS(g, "data-roof=\"dram\">DRAM 4.3 TB/s copy (measured on an NVIDIA H200)</text>");
  CHECK(strstr(g, "tf32") == NULL && strstr(g, "fp8") == NULL && strstr(g, "tc_f8") == NULL);
  /* markers: each template's from its name alone (FNV-1a over the 48 markers), so the same on
   * every page whatever else it shows; the legend shows each with it */
  CHECK_INT(occurrences(g, "class=\"pt measured mk25 c4\""), 2); /* gemm_mma */
  CHECK_INT(occurrences(g, "class=\"pt measured mk40 c6\""), 2); /* gemm_skinny */
  CHECK_INT(occurrences(g, "class=\"pt measured mk27 c4\""), 1); /* gemm_wgmma */
  /* every point a link to its numbered row, its rank and configuration in its title */
  CHECK_INT(occurrences(g, "<a href=\"#p0r"), 5);
  CHECK_CONTAINS(g, "<a href=\"#p0r1\">");
  CHECK_CONTAINS(g, " id=\"p0r1\">");
  CHECK_CONTAINS(g, "<title>#1 ");
  /* the table: every candidate, with bandwidth, roof share, registers, occupancy and checking */
  CHECK_CONTAINS(g,
                 "<th class=\"num\"><a class=\"sortlink\" href=\"#p0-by-gbs\" title=\"sort by "
                 "GB/s, largest first\">GB/s</a></th><th class=\"num\"><a class=\"sortlink\" "
                 "href=\"#p0-by-roof\"");
  CHECK_CONTAINS(g, "<th>checked</th>");
  CHECK_INT(occurrences(g, "data-template=\"gemm_skinny\" data-path=\"simt_f32\""), 2);
  CHECK_INT(occurrences(g, "<tr class=\"entry\""), 3);
  const char *e = strstr(g, "<tr class=\"entry\" data-template=\"gemm_skinny\">");
  CHECK(e && strstr(e, "class=\"keymark mk40 c6\"") &&
        strstr(e, "class=\"keymark mk40 c6\"") < strstr(e, "</tr>"));
  CHECK_CONTAINS(g, "<div class=\"chart\">");
  /* one run: said, with its values, not drawn */
  CHECK_CONTAINS(g,
                 "History: one run so far</span> \u2014 run 3, started 2026-12-01T19:00:00Z: best "
                 "0.01 ms over 3 "
                 "results (done).");
  CHECK(strstr(g, "<svg class=\"history\"") == NULL);
  free(g);
  free(page);
  free(x);
}

/* What a performance engineer works from, in the gemm section: the vendor baseline against the
 * winner, each candidate's bandwidth, roof share, registers, occupancy and checking, the best
 * time so far against the evaluations in the order made, and each parameter's values against
 * time. */
TEST_CASE(work_from) {
  look *x = calloc(1, sizeof *x);
  if (!x) return;
  make(x);
  static const char *const cfg[5] = {"VEC=4,WARPS=4", "VEC=2,WARPS=4", "VEC=1,WARPS=2",
                                     "VEC=2,WARPS=2", "VEC=1,WARPS=4"};
  for (int i = 0; i < 5; i++) {
    x->cand[i].config = (char *)cfg[i];
    x->cand[i].seen = (size_t)(4 - i); /* made slowest first: four improvements */
    x->cand[i].bytes_per_s = 2.5e12;
    x->cand[i].roof_frac = 0.58;
    x->cand[i].registers = 64;
    x->cand[i].occupancy = 0.5;
    x->cand[i].verified = 1;
  }
  x->cand[4].tmpl = (char *)"cublaslt"; /* the vendor library, measured: 0.03 ms */
  x->cand[4].config = (char *)"algo 7";
  char *page = render(&x->page);
  if (!page) {
    free(x);
    return;
  }
  char *g = section(page, 0);
  CHECK_CONTAINS(g,
                 "Vendor baseline: cuBLASLt 0.03 ms (algo 7); the fastest gemm_wgmma 0.01 ms is "
                 "3.00x its speed");
  CHECK_CONTAINS(g,
                 "<td class=\"num\">2500</td><td class=\"num\">58</td><td "
                 "class=\"num\">64</td><td class=\"num\">50 % calc</td>");
  CHECK_CONTAINS(g, "<td class=\"ok\">verified</td>");
  CHECK_CONTAINS(g, "The search: the best time so far against 5 evaluations (5 improvements)");
  CHECK_CONTAINS(g, "<svg class=\"progress\"");
  CHECK_CONTAINS(g, "<table class=\"params\">");
  CHECK_CONTAINS(g,
                 "<td>VEC</td><td class=\"num\">4</td><td class=\"num\">1</td><td "
                 "class=\"num\">0.01</td>");
  free(g);
  free(page);
  free(x);
}

TEST_CASE(stencil_section) {
  look *x = NULL;
  char *page = made_page(&x);
  if (!page) return;
  char *st = section(page, 1);
  /* the stencil: the CUDA-core roof alone (the spec table's tf32 peak is there, unused) */
  CHECK_INT(occurrences(st, "<polyline class=\"roof "), 1);
  CHECK_CONTAINS(st, "<polyline class=\"roof simt_f32\"");
  CHECK(strstr(st, "tensor-core") == NULL);
  CHECK_INT(occurrences(st, "class=\"pt measured mk25 c4\""),
            2); /* stencil3_grid: its name's marker, whatever the page's other templates */
  CHECK_INT(occurrences(st, "<tr class=\"entry\""), 1);
  /* two runs: the chart */
  CHECK_CONTAINS(st, "<svg class=\"history\"");
  CHECK_CONTAINS(st, "data-runs=\"2\"");
  CHECK(strstr(st, "one run so far") == NULL);
  free(st);
  free(page);
  free(x);
}

TEST_CASE(no_path) {
  look *x = calloc(1, sizeof *x);
  make(x);
  /* a section that says no path present (nothing plotted) draws no compute roof, only the slope */
  x->sec[1].roofs.path[PATH_SIMT_F32].present = 0;
  char *page = render(&x->page);
  char *st = page ? section(page, 1) : strdup("");
  CHECK_INT(occurrences(st, "<polyline class=\"roof "), 1);
  CHECK_CONTAINS(st, "<polyline class=\"roof dram\"");
  free(st);
  free(page);
  free(x);
}

/* The div of id ID in page (its copy of the table), malloc'ed; "" when there is none. */
static char *copy_of(const char *page, const char *id) {
  char open[64];
  snprintf(open, sizeof open, "<div class=\"sorted\" id=\"%s\">", id);
  const char *a = strstr(page, open), *b = a ? strstr(a, "</table>") : NULL;
  if (!a || !b) return strdup("");
  return strndup(a, (size_t)(b - a));
}

/* The k-th (from 1) rank link of a copy: the candidate's rank by time, -1 when none. */
static int nth_rank(const char *copy, int k) {
  const char *p = copy;
  for (int i = 0; i < k; i++) {
    p = strstr(p, "<a class=\"rank\" href=\"#p");
    if (!p) return -1;
    p += 20;
  }
  const char *r = strchr(p, 'r');
  return r ? atoi(r + 1) : -1;
}

/* The table sorts without script: each sortable header a link to a copy sorted by its column
 * (#pS-by-KEY), written before the table by time so that CSS's :target shows the copy linked
 * to in its place (one at a time); the copies' ranks link to the rows by time. */
TEST_CASE(sortable) {
  look *x = calloc(1, sizeof *x);
  if (!x) return;
  make(x);
  static const int regs[5] = {96, 128, 32, 64, 40};
  for (int i = 0; i < 5; i++) {
    x->cand[i].bytes_per_s = (i + 1) * 1e12; /* the slowest moves the most bytes */
    x->cand[i].roof_frac = 0.1 * (i + 1);
    x->cand[i].registers = regs[i];
    x->cand[i].occupancy = i == 2 ? NAN : 0.25;
  }
  char *page = render(&x->page);
  if (!page) {
    free(x);
    return;
  }
  CHECK(strstr(page, "<script") == NULL);
  CHECK_CONTAINS(page,
                 "div.sorted{display:none}div.sorted:target{display:block}"
                 "div.sorted:target~div.bytime{display:none}");
  char *g = section(page, 0);
  static const char *const keys[] = {"template", "tflops", "gbs", "roof", "registers", "occupancy"};
  const char *bytime = strstr(g, "<div class=\"bytime\" id=\"p0-by-time\">");
  CHECK(bytime != NULL);
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
    char id[32], href[48];
    snprintf(id, sizeof id, "p0-by-%s", keys[k]);
    snprintf(href, sizeof href, "href=\"#%s\"", id);
    char *c = copy_of(g, id);
    CHECK(c[0] != 0);
    CHECK(bytime && strstr(g, id) < bytime); /* before the table it hides */
    /* every table's header links to every order: 7 tables */
    CHECK_INT(occurrences(g, href), 7);
    free(c);
  }
  CHECK_INT(occurrences(g, "href=\"#p0-by-time\""), 7);
  char *gbs = copy_of(g, "p0-by-gbs");
  CHECK_CONTAINS(gbs, "<a class=\"sortlink sorted\" href=\"#p0-by-gbs\"");
  CHECK_INT(nth_rank(gbs, 1), 5); /* 5 TB/s first */
  CHECK_INT(nth_rank(gbs, 2), 4);
  CHECK_INT(nth_rank(gbs, 5), 1);
  char *reg = copy_of(g, "p0-by-registers");
  CHECK_INT(nth_rank(reg, 1), 3); /* 32 registers: the fewest first */
  CHECK_INT(nth_rank(reg, 2), 5);
  CHECK_INT(nth_rank(reg, 5), 2);
  char *occ = copy_of(g, "p0-by-occupancy");
  CHECK_INT(occurrences(occ, "<a class=\"rank\""), 4); /* the candidate without one is left out */
  CHECK_CONTAINS(occ, "4 candidates with a value");
  char *tm = copy_of(g, "p0-by-template");
  CHECK_INT(nth_rank(tm, 1), 2); /* gemm_mma (by time among them), gemm_skinny, gemm_wgmma */
  CHECK_INT(nth_rank(tm, 2), 4);
  CHECK_INT(nth_rank(tm, 5), 1);
  /* the rows by time keep their ids, the copies have none of their own */
  CHECK_INT(occurrences(g, " id=\"p0r"), 5);
  free(gbs);
  free(reg);
  free(occ);
  free(tm);
  free(g);
  free(page);
  free(x);
}

/* 1,000 candidates: the table by time holds them all (top 1000), each copy its best
 * REPORT_SORT_ROWS (100), so the page grows by 6 x 100 rows, not 6 x 1,000. */
TEST_CASE(sortable_many) {
  enum { N = 1000 };
  look *x = calloc(1, sizeof *x);
  report_cand *cs = calloc(N, sizeof *cs);
  const report_cand **order = calloc(N, sizeof *order);
  if (!x || !cs || !order) goto out;
  make(x);
  for (int i = 0; i < N; i++) {
    cs[i] = x->cand[i % 5];
    cs[i].ms = 0.01 + 1e-5 * i;
    cs[i].achieved = 1e12 / cs[i].ms;
    cs[i].bytes_per_s = 1e12 + 1e9 * ((i * 7) % N);
    cs[i].roof_frac = 0.5;
    cs[i].registers = 32 + i % 200;
    cs[i].occupancy = 0.5;
    order[i] = &cs[i];
  }
  size_t start[2] = {0, N};
  x->page.nsec = 1;
  x->page.order = order;
  x->page.start = start;
  x->page.ncand = N;
  x->page.top = N;
  size_t n = 0;
  report_stats st;
  char *page = report_render(&x->page, &n, &st);
  CHECK(page != NULL);
  if (!page) goto out;
  CHECK_INT(occurrences(page, " id=\"p0r"), N);
  CHECK_INT(occurrences(page, "<a class=\"rank\""), 6 * 100);
  CHECK_CONTAINS(page, "the first 100 of 1000 candidates with a value, by this column");
  char *gbs = copy_of(page, "p0-by-gbs");
  CHECK_INT(nth_rank(gbs, 1), 858); /* 1e12 + 999e9 B/s: i * 7 % 1000 == 999 at i = 857 */
  free(gbs);
  const char *c0 = strstr(page, "<div class=\"sorted\""),
             *c1 = strstr(page, "<div class=\"bytime\"");
  CHECK(c0 && c1 && c0 < c1);
  if (c0 && c1)
    printf("  a 1,000-candidate section: %zu bytes, of which the sorted copies %zu\n", n,
           (size_t)(c1 - c0));
  free(page);
out:
  free(order);
  free(cs);
  free(x);
}

TEST_LIST(TEST_ENTRY(gemm_section), TEST_ENTRY(work_from), TEST_ENTRY(stencil_section),
          TEST_ENTRY(no_path), TEST_ENTRY(sortable), TEST_ENTRY(sortable_many))
