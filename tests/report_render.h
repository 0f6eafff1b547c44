/* report_render.h — a report page drawn from plain data into memory, for the tests of what the
 * page holds (test_report_escaped.c, test_report_look.c). */
#ifndef ROOFTUNE_TEST_REPORT_RENDER_H
#define ROOFTUNE_TEST_REPORT_RENDER_H

#include <stdio.h>
#include <stdlib.h>

#include "job/html.h"
#include "job/report_page.h"

/* The page of p, malloc'ed (*n bytes), what it drew in *st; NULL, with the reason printed, when
 * writing failed. */
static char *report_render(const report_page *p, size_t *n, report_stats *st) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, n);
  if (!f) return NULL;
  html *h = html_new(f);
  *st = (report_stats){0};
  report_page_write(p, h, st);
  rt_error err = {0};
  rt_status rc = html_finish(h, &err);
  html_free(h);
  fclose(f);
  if (rc) {
    fprintf(stderr, "writing the page: %s\n", err.text);
    free(buf);
    return NULL;
  }
  return buf;
}

#endif
