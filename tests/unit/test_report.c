/* test_report.c — the HTML report of a database built here: one roofline per problem and
 * device with one point (class "pt") per candidate that has a time, failures counted and not
 * plotted, measured and predicted points told apart, the device's roofs labelled measured or
 * spec, the winner ringed, the regression of a recheck highlighted first, text escaped, no
 * script; a job limits it to its problems; the file appears only complete. */
/* stages: job */
#include <sys/stat.h>
#include <unistd.h>

#include "db_fixture.h"
#include "test.h"
#include "core/fileio.h"
#include "job/report.h"

static size_t occurrences(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* The text of the SVG roofline of the section whose title contains what. */
static char *section_svg(const char *html, const char *what, char *buf, size_t size) {
  const char *s = strstr(html, what);
  buf[0] = 0;
  if (!s) return buf;
  const char *a = strstr(s, "<svg class=\"roofline\""), *b = a ? strstr(a, "</svg>") : NULL;
  if (a && b && (size_t)(b - a) < size) snprintf(buf, size, "%.*s", (int)(b - a), a);
  return buf;
}

/* The paths store() gives its results, odd and even ones ("" as rows before schema 7 have). */
static const char *store_path[2] = {"", ""};

static long long store(db *d, const char *device, long long m, int n, int nfail, double ms0,
                       long long *best, const char *command) {
  db_run_spec spec = fx_spec(fx_gemm(m, 64, 64, "f16"), device);
  snprintf(spec.command, sizeof spec.command, "%s", command);
  db_run *r = NULL;
  rt_error err = {0};
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  if (!r) return 0;
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "s", "m", &err), RT_OK);
  for (int i = 0; i < n + nfail; i++) {
    candidate_result c = fx_result("gemm_mma", 16 << i, 32, ms0 * (1 + 0.25 * i));
    if (!strncmp(device, "model:", 6)) c.timing = TIMING_PREDICTED;
    if (i == 1) snprintf(c.config, sizeof c.config, "BLOCK_M=32,NAME=<b&c>");
    snprintf(c.path, sizeof c.path, "%s", store_path[i % 2]);
    if (i >= n) {
      c.status = RT_ERR_WRONG_RESULT;
      c.time_ms = NAN;
    }
    long long id = 0;
    CHECK_INT(db_run_store(r, &c, &id, &err), RT_OK);
    if (i == 0 && best) *best = id;
  }
  if (best) {
    db_winner w = fx_winner("k", "cubin", 5);
    CHECK_INT(db_run_set_winner(r, *best, &w, NULL, &err), RT_OK);
  }
  CHECK_INT(db_run_finish(r, "done", &err), RT_OK);
  long long id = db_run_id(r);
  db_run_free(r);
  return id;
}

/* The database every case reads (read-only), and the report written from it. */
static char dbp[256], out[300];
static db *page_db;
static char *page;

static void setup(void) {
  fx_tmpname(dbp, sizeof dbp, "report");
  snprintf(out, sizeof out, "%s.html", dbp);
  db *d = NULL;
  rt_error err = {0};
  CHECK_INT(db_open(dbp, DB_CREATE, &d, &err), RT_OK);
  long long best = 0;
  /* 128x64x64 on the H200: 5 measured, 1 failed; tuned again later (the same 6 configurations:
   * still 6 candidates); then a recheck of the winner 40 % slower */
  store(d, "NVIDIA H200", 128, 5, 1, 1.0, &best, "rooftune tune gemm");
  long long b2 = 0;
  store(d, "NVIDIA H200", 128, 5, 1, 1.0, &b2, "rooftune tune gemm");
  db_device h200;
  db_run_spec hs = fx_spec(fx_gemm(128, 64, 64, "f16"), "NVIDIA H200");
  h200 = hs.prov.device;
  CHECK_INT(db_ceiling_set(d, &h200, "copy_bw", "", 4.3e12, &err), RT_OK);
  CHECK_INT(db_ceiling_set(d, &h200, "matmul", "f16", 7.9e14, &err), RT_OK);
  store(d, "NVIDIA H200", 128, 1, 0, 1.4, NULL,
        "rooftune recheck (gemm_mma 128x64x64 f16 BLOCK_M=16,BLOCK_N=32)");
  /* the same problem predicted on model:h200, and another problem there */
  long long b3 = 0, b4 = 0;
  store(d, "model:h200", 128, 3, 0, 2.0, &b3, "rooftune tune gemm");
  store_path[0] = "tc_f16", store_path[1] = "simt_f32"; /* a tensor-core and a CUDA-core template */
  store(d, "model:h200", 512, 4, 2, 3.0, &b4, "rooftune tune gemm");
  db_close(d);
  CHECK_INT(db_open(dbp, DB_READONLY, &page_db, &err), RT_OK);
  report_options o = {NULL, "test <report>", 0.05, 3};
  report_stats st;
  CHECK_INT(report_write(page_db, &o, out, &st, &err), RT_OK);
  CHECK_INT(st.sections, 3);
  CHECK_INT(st.candidates, 6 + 3 + 6);
  CHECK_INT(st.points, 5 + 3 + 4);
  CHECK_INT(st.failed, 1 + 0 + 2);
  CHECK_INT(st.regressions, 1);
  size_t len = 0;
  CHECK_INT(fileio_read(out, &page, &len, &err), RT_OK);
  if (!page) exit(test_done());
  CHECK_INT((long long)len, st.bytes);
}

static void teardown(void) {
  free(page);
  db_close(page_db);
  unlink(out);
  fx_remove(dbp);
}

/* no script, nothing fetched, the names escaped, every point and chart */
TEST_CASE(page) {
  const char *html = page;
  CHECK(strstr(html, "<script") == NULL);
  CHECK(strstr(html, "http://") == NULL ||
        strstr(html, "http://") == strstr(html, "http://www.w3.org/2000/svg"));
  CHECK_CONTAINS(html, "<title>test &lt;report&gt;</title>");
  CHECK_CONTAINS(html, "BLOCK_M=32,NAME=&lt;b&amp;c&gt;");
  CHECK(strstr(html, "NAME=<b") == NULL);
  CHECK_INT(occurrences(html, "class=\"pt "), 5 + 3 + 4);
  CHECK_INT(occurrences(html, "<svg class=\"roofline\""), 3);
}

/* each section's chart: measured or predicted points, the roofs said as measured here or datasheet */
TEST_CASE(charts) {
  const char *html = page;
  char svg[200000];
  section_svg(html, "<h2>gemm 128x64x64 f16 on NVIDIA H200", svg, sizeof svg);
  CHECK_INT(occurrences(svg, "class=\"pt measured "), 5);
  CHECK_CONTAINS(svg, "data-candidates=\"5\"");
  CHECK_CONTAINS(svg, "DRAM 4.3 TB/s copy (measured here)");
  CHECK_CONTAINS(svg, "tensor-core f16/bf16 790 TFLOP/s (measured here)");
  CHECK(strstr(svg, "CUDA-core") == NULL); /* rows without a path: the dtype's, tensor cores */
  CHECK_INT(occurrences(svg, "class=\"win\""), 1);
  section_svg(html, "<h2>gemm 128x64x64 f16 on model:h200", svg, sizeof svg);
  CHECK_INT(occurrences(svg, "class=\"pt predicted "), 3);
  CHECK_CONTAINS(svg, "(datasheet)");
  section_svg(html, "<h2>gemm 512x64x64 f16 on model:h200", svg, sizeof svg);
  CHECK_INT(occurrences(svg, "class=\"pt predicted "), 4);
  /* results that say their path: a roof for each, the point on it saying which */
  CHECK_INT(occurrences(svg, "<polyline class=\"roof "), 2);
  CHECK_CONTAINS(svg, ">CUDA-core fp32 67 TFLOP/s (datasheet)</text>");
  CHECK_CONTAINS(svg, ">tensor-core f16/bf16 990 TFLOP/s (datasheet)</text>");
  CHECK(strstr(svg, "tf32") == NULL);
  CHECK_INT(occurrences(svg, "data-path=\"simt_f32\""), 2);
  CHECK_INT(occurrences(svg, "data-path=\"tc_f16\""), 2);
  CHECK_CONTAINS(html, "4 plotted, 2 failed (no time, not plotted)");
}

/* the regression: the banner, first in the overview, the section marked; rechecks in the
 * history */
TEST_CASE(regression) {
  const char *html = page;
  CHECK_CONTAINS(html, "1 regression</span>");
  const char *ov = strstr(html, "<table class=\"overview\">");
  CHECK(ov && strstr(ov, "SLOWER") && strstr(ov, "SLOWER") < strstr(ov, "model:h200"));
  CHECK_CONTAINS(
      html,
      "<section id=\"p0\" class=\"regressed\"><h2>gemm 128x64x64 f16 on NVIDIA H200 \u2014 "
      "regression (SLOWER)");
  CHECK_CONTAINS(html, "class=\"recheck regressed\"");
  CHECK_CONTAINS(html, "data-runs=\"3\"");
}

/* the table shows --top rows, and so does each of its sorted copies */
TEST_CASE(top_rows) {
  const char *html = page;
  const char *sec = strstr(html, "<section id=\"p2\"");
  const char *bytime = sec ? strstr(sec, "<div class=\"bytime\"") : NULL;
  const char *tab = bytime ? strstr(bytime, "<table class=\"top\">") : NULL;
  const char *gbs = sec ? strstr(sec, "<div class=\"sorted\" id=\"p2-by-gbs\">") : NULL;
  const char *gtab = gbs ? strstr(gbs, "<table class=\"top\">") : NULL;
  const char *gend = gtab ? strstr(gtab, "</table>") : NULL;
  CHECK(tab != NULL && gend != NULL);
  if (gtab && gend) {
    char t[20000];
    snprintf(t, sizeof t, "%.*s", (int)(gend - gtab), gtab);
    CHECK(occurrences(t, "<tr") <= 1 + 3);
  }
  const char *end = tab ? strstr(tab, "</table>") : NULL;
  if (tab && end) {
    char t[20000];
    snprintf(t, sizeof t, "%.*s", (int)(end - tab), tab);
    CHECK_INT(occurrences(t, "<tr"), 1 + 3);
  }
}

/* nothing left but the report */
TEST_CASE(no_temporary_left) {
  char tmp[400];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", out, (long)getpid());
  CHECK(access(tmp, F_OK) != 0);
}

/* a folder that does not exist: an error naming the file */
TEST_CASE(missing_folder) {
  rt_error err = {0};
  report_options o = {NULL, "test <report>", 0.05, 3};
  report_stats st;
  CHECK_INT(report_write(page_db, &o, "/nonexistent/dir/r.html", &st, &err), RT_ERR_IO);
  char line[1600];
  rt_error_format(&err, line, sizeof line);
  CHECK_CONTAINS(line, "/nonexistent/dir/r.html");
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(page), TEST_ENTRY(charts), TEST_ENTRY(regression),
                  TEST_ENTRY(top_rows), TEST_ENTRY(no_temporary_left), TEST_ENTRY(missing_folder))
