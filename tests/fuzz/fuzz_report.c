/* fuzz_report.c — the report's page (job/report_page.h) drawn from data made of the input:
 * every text field (titles, problems, devices, templates, configurations, limits, statuses, run
 * times), every number (times, intensities, rates, roofs: NaN, infinities and negatives
 * included), which roofs are drawn and each candidate's path (-1 and one past the table too)
 * come from it, with up to 3 sections, 8 candidates and 6 runs.  Whatever the input, the writer
 * never fails on data, and the page is valid UTF-8, well-formed XML and, in libxml2's XML and
 * HTML trees, holds only the report's elements, no event handler and no outside link
 * (tests/html_check.h). */
#include <math.h>

#include "fuzz_util.h"
#include "html_check.h"
#include "job/html.h"
#include "job/report_page.h"

typedef struct input {
  const uint8_t *p;
  size_t n;
} input;

static unsigned take_byte(input *in) {
  if (!in->n) return 0;
  in->n--;
  return *in->p++;
}

/* The next string: a length byte, then that many bytes (NULs end it early). */
static void take_text(input *in, char *out, size_t size) {
  size_t len = take_byte(in);
  if (len > in->n) len = in->n;
  size_t k = len < size - 1 ? len : size - 1;
  memcpy(out, in->p, k);
  out[k] = '\0';
  in->p += len;
  in->n -= len;
}

static double take_double(input *in) {
  unsigned kind = take_byte(in) % 8;
  static const double special[] = {NAN, INFINITY, -INFINITY, 0, -1, 1e-300, 1e300};
  if (kind < 7 && take_byte(in) % 2) return special[kind];
  uint64_t bits = 0;
  for (int i = 0; i < 8; i++) bits = bits << 8 | take_byte(in);
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

#define TEXT(field) take_text(in, (field), sizeof(field))

typedef struct page_data {
  report_section sec[3];
  report_cand cand[8];
  const report_cand *order[8];
  size_t start[4];
  db_run_info runs[6];
  char strings[8][5][128];
  char title[128], source[128], generated[64];
  report_page page;
} page_data;

static void make(page_data *x, input *in) {
  size_t nsec = 1 + take_byte(in) % 3, ncand = take_byte(in) % 9, nruns = take_byte(in) % 7;
  TEXT(x->title);
  TEXT(x->source);
  TEXT(x->generated);
  for (size_t s = 0; s < nsec; s++) {
    report_section *S = &x->sec[s];
    TEXT(S->family);
    TEXT(S->shape);
    TEXT(S->dtype);
    TEXT(S->layout);
    TEXT(S->device.name);
    TEXT(S->last_run);
    TEXT(S->roofs.gpu);
    S->have_winner = take_byte(in) % 2;
    TEXT(S->winner.template_name);
    TEXT(S->winner.config);
    TEXT(S->winner.toolkit);
    TEXT(S->winner.limit);
    S->winner.time_ms = take_double(in);
    S->winner.flops = take_double(in);
    S->winner.timing = (timing_kind)(take_byte(in) % 3);
    S->regression = take_byte(in) % 2;
    S->have_verdict = take_byte(in) % 2;
    S->verdict = (recheck_verdict)(take_byte(in) % 4);
    S->recheck_ms = take_double(in);
    S->roofs.bw = take_double(in);
    S->roofs.bw_measured = take_byte(in) % 2;
    for (int k = 0; k < PATH_COUNT; k++) {
      S->roofs.path[k].present = take_byte(in) % 2;
      S->roofs.path[k].peak = take_double(in);
      S->roofs.path[k].measured = take_byte(in) % 2;
    }
    S->nfailed = take_byte(in) % 4;
  }
  for (size_t i = 0; i < ncand; i++) {
    report_cand *c = &x->cand[i];
    c->section = (int)(i * nsec / (ncand ? ncand : 1));
    char **f[5] = {&c->tmpl, &c->config, &c->toolkit, &c->limit, &c->lever};
    for (int j = 0; j < 5; j++) {
      TEXT(x->strings[i][j]);
      *f[j] = x->strings[i][j];
    }
    if (take_byte(in) % 2)
      snprintf(c->status, sizeof c->status, "OK");
    else
      TEXT(c->status);
    c->timing = (timing_kind)(take_byte(in) % 3);
    c->ms = take_double(in);
    c->intensity = take_double(in);
    c->achieved = take_double(in);
    c->path = (int)(take_byte(in) % (PATH_COUNT + 2)) - 1; /* -1 (unknown) .. one past the table */
    x->order[i] = c;
  }
  for (size_t i = 0, s = 0; s <= nsec; s++) { /* the candidates are in section order */
    while (i < ncand && (size_t)x->cand[i].section < s) i++;
    x->start[s] = s == nsec ? ncand : i;
  }
  for (size_t i = 0; i < nruns; i++) { /* in section order, each section's a slice */
    db_run_info *r = &x->runs[i];
    size_t si = i * nsec / nruns;
    const report_section *S = &x->sec[si];
    if (take_byte(in) % 4) { /* a run of its section, or one whose keys differ */
      memcpy(r->family, S->family, sizeof r->family);
      memcpy(r->shape, S->shape, sizeof r->shape);
      memcpy(r->dtype, S->dtype, sizeof r->dtype);
      memcpy(r->layout, S->layout, sizeof r->layout);
      r->device = S->device;
    } else {
      TEXT(r->family);
      TEXT(r->shape);
    }
    TEXT(r->status);
    TEXT(r->started_at);
    TEXT(r->last_status);
    if (take_byte(in) % 2) snprintf(r->command, sizeof r->command, "rooftune recheck (");
    r->id = (long long)take_byte(in) << 8 | take_byte(in);
    r->results = take_byte(in);
    r->best_ms = take_double(in);
    r->last_ms = take_double(in);
    r->last_spread = take_double(in);
    if (!x->sec[si].runs) x->sec[si].runs = r;
    x->sec[si].nruns++;
  }
  x->page = (report_page){.title = x->title,
                          .source = x->source,
                          .generated = x->generated,
                          .sec = x->sec,
                          .nsec = nsec,
                          .order = x->order,
                          .start = x->start,
                          .ncand = ncand,
                          .tol = 0.05,
                          .top = 1 + (int)(take_byte(in) % 10),
                          .regressions = take_byte(in) % 3};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  page_data *x = calloc(1, sizeof *x);
  if (!x) abort();
  make(x, &in);
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f) abort();
  html *h = html_new(f);
  if (!h) abort();
  report_stats st = {0};
  report_page_write(&x->page, h, &st);
  rt_error err = {0};
  rt_status rc = html_finish(h, &err);
  html_free(h);
  fclose(f);
  if (rc) {
    fprintf(stderr, "the writer failed on data: %s\n", err.text);
    abort();
  }
#if RT_HAVE_LIBXML2
  char why[512];
  if (html_check(buf, n, NULL, why, sizeof why)) {
    fprintf(stderr, "unsafe page: %s\n", why);
    abort();
  }
#else
  if (strstr(buf, "<script")) abort();
#endif
  free(buf);
  free(x);
  return 0;
}
