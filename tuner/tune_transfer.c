/* tune_transfer.c — a prior from a database (tune_impl.h): the same template's successful
 * results for the same dtype on other devices (any shape) and on this device at other shapes,
 * grouped by device and shape, the nearest shapes first by the runtime's serving distance
 * (family_coords_distance), each group's configurations by time as one ranking of this space.
 * The target database gives a tune its prior by default; `--prior DB` names another.
 *
 * What counts: results stored as successful with a time > 0 whose configuration is one of this
 * space (another template version's that no longer parses is left out).  A model-predicted time
 * is a weaker source than a measured or replayed one: predicted groups are used only when the
 * database holds no measured or replayed result of the template, and the summary says which
 * were used.  In the target database the rows of this very device and shape are what the
 * search resumes (db_run_previous), not a prior, so they are left out there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "kernels/family.h"
#include "tuner/tune_impl.h"

typedef struct xrow {
  size_t idx;
  double t;
} xrow;

typedef struct xgroup {
  char device[128];
  char shape[64];
  int predicted; /* 1: model-predicted times */
  int replayed;  /* 1: replayed times */
  double dist;   /* to the problem tuned; -1: not comparable */
  xrow *rows;
  size_t n, cap;
} xgroup;

typedef struct xscan {
  const space *sp;
  const problem *prob;
  family_coords at; /* the problem tuned */
  const family_ops *serving;
  const char *device; /* this device's name */
  int same_db;        /* 1: the target database (this device and shape are resumed, not priors) */
  xgroup *g;
  size_t ng, gcap;
} xscan;

static xgroup *group_of(xscan *x, const db_run_spec *spec, const candidate_result *r) {
  int predicted = r->timing == TIMING_PREDICTED;
  for (size_t i = 0; i < x->ng; i++)
    if (x->g[i].predicted == predicted && !strcmp(x->g[i].device, spec->prov.device.name) &&
        !strcmp(x->g[i].shape, spec->prob.shape))
      return &x->g[i];
  if (x->ng == x->gcap) {
    size_t cap = x->gcap ? 2 * x->gcap : 8;
    xgroup *g = realloc(x->g, cap * sizeof *g);
    if (!g) return NULL;
    x->g = g;
    x->gcap = cap;
  }
  xgroup *g = &x->g[x->ng++];
  memset(g, 0, sizeof *g);
  snprintf(g->device, sizeof g->device, "%s", spec->prov.device.name);
  snprintf(g->shape, sizeof g->shape, "%s", spec->prob.shape);
  g->predicted = predicted;
  g->replayed = r->timing == TIMING_REPLAYED;
  /* a replayed or imported row may carry its shape without its dims: read them from it */
  problem p = spec->prob;
  if (p.ndims == 0 && x->serving && x->serving->parse_shape &&
      x->serving->parse_shape(x->serving, spec->prob.shape, spec->prob.dtype, NULL, &p, NULL))
    p = spec->prob;
  family_coords pc;
  family_coords_of(x->serving, &p, &pc);
  g->dist = family_coords_distance(&x->at, &pc);
  return g;
}

/* A problem's layout, "" read as its family's default ("nn" for gemm): rows written without
 * one (a replay, an import) are of the default. */
static const char *layout_of(const xscan *x, const char *layout) {
  return layout[0] || !x->serving || !x->serving->default_layout ? layout
                                                                 : x->serving->default_layout;
}

static rt_status scan_row(void *ctx, const db_run_spec *spec, const char *template_name,
                          const char *source_hash, const char *manifest_hash,
                          const candidate_result *r, rt_error *err) {
  (void)template_name, (void)source_hash, (void)manifest_hash;
  xscan *x = ctx;
  if (r->status != RT_OK || !(r->time_ms > 0) || !isfinite(r->time_ms)) return RT_OK;
  if (strcmp(layout_of(x, spec->prob.layout), layout_of(x, x->prob->layout)))
    return RT_OK; /* never compared (rooftune.h) */
  if (x->same_db && !strcmp(spec->prov.device.name, x->device) &&
      !strcmp(spec->prob.shape, x->prob->shape) && !strcmp(spec->prob.args, x->prob->args))
    return RT_OK;
  size_t idx;
  if (space_parse_config(x->sp, r->config, &idx, NULL) != RT_OK) return RT_OK;
  xgroup *g = group_of(x, spec, r);
  if (g && g->n == g->cap) {
    size_t cap = g->cap ? 2 * g->cap : 32;
    xrow *rows = realloc(g->rows, cap * sizeof *rows);
    if (rows) g->rows = rows, g->cap = cap;
  }
  if (!g || g->n == g->cap) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  g->rows[g->n++] = (xrow){idx, r->time_ms};
  return RT_OK;
}

static int row_by_idx(const void *a, const void *b) {
  const xrow *x = a, *y = b;
  if (x->idx != y->idx) return x->idx < y->idx ? -1 : 1;
  return (x->t > y->t) - (x->t < y->t);
}

static int row_by_time(const void *a, const void *b) {
  const xrow *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Nearest first; at one distance the group with more results, then by name (repeatable). */
static int group_cmp(const void *a, const void *b) {
  const xgroup *x = a, *y = b;
  if (x->dist != y->dist) return x->dist < y->dist ? -1 : 1;
  if (x->n != y->n) return x->n > y->n ? -1 : 1;
  int c = strcmp(x->device, y->device);
  return c ? c : strcmp(x->shape, y->shape);
}

/* Each configuration once (its fastest time), then fastest first. */
static void group_sort(xgroup *g) {
  qsort(g->rows, g->n, sizeof *g->rows, row_by_idx);
  size_t k = 0;
  for (size_t i = 0; i < g->n; i++)
    if (k == 0 || g->rows[k - 1].idx != g->rows[i].idx) g->rows[k++] = g->rows[i];
  g->n = k;
  qsort(g->rows, g->n, sizeof *g->rows, row_by_time);
}

/* One group's words in the summary: "NVIDIA A100 at 4096x4096x4096", "this GPU at ...". */
static void group_words(const xscan *x, const xgroup *g, char *buf, size_t size) {
  snprintf(buf, size, "%s at %s%s", strcmp(g->device, x->device) ? g->device : "this device",
           g->shape,
           g->predicted  ? ", predicted"
           : g->replayed ? ", replayed"
                         : "");
}

rt_status tune_transfer_collect(struct db *d, int same_db, const char *template_name,
                                const problem *prob, const char *device_name, const space *sp,
                                tune_rankings *R, tune_transfer_summary *sum, rt_error *err) {
  memset(sum, 0, sizeof *sum);
  xscan x = {.sp = sp, .prob = prob, .device = device_name, .same_db = same_db};
  x.serving = family_serving_find(prob->family);
  family_coords_of(x.serving, prob, &x.at);
  rt_status rc = db_each_result_of(d, template_name, prob->dtype, scan_row, &x, err);
  int measured = 0;
  for (size_t i = 0; !rc && i < x.ng; i++) measured |= !x.g[i].predicted && x.g[i].dist >= 0;
  /* predicted times only where nothing measured or replayed exists; groups of another kind
   * (rooftune.h: prefill against decode) never */
  size_t k = 0;
  for (size_t i = 0; !rc && i < x.ng; i++) {
    xgroup *g = &x.g[i];
    if (g->dist < 0 || (measured && g->predicted)) {
      if (g->predicted && g->dist >= 0) sum->predicted_left += g->n;
      free(g->rows);
      continue;
    }
    group_sort(g);
    x.g[k++] = *g;
  }
  if (!rc && k > 1) qsort(x.g, k, sizeof *x.g, group_cmp);
  size_t used = 0;
  for (size_t i = 0; !rc && i < k; i++) {
    xgroup *g = &x.g[i];
    if (used < TUNE_TRANSFER_GROUPS && R->n < TUNE_MAX_RANKINGS) {
      size_t *o = malloc((g->n ? g->n : 1) * sizeof *o);
      if (!o) {
        rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
        break;
      }
      for (size_t r = 0; r < g->n; r++) o[r] = g->rows[r].idx;
      R->order[R->n] = o;
      R->len[R->n++] = g->n;
      sum->results += g->n;
      sum->groups++;
      sum->predicted |= g->predicted;
      char w[256];
      group_words(&x, g, w, sizeof w);
      size_t l = strlen(sum->from);
      if (used < 4)
        snprintf(sum->from + l, sizeof sum->from - l, "%s%s", used ? "; " : "", w);
      else if (used == 4)
        snprintf(sum->from + l, sizeof sum->from - l, "; ...");
      used++;
    }
  }
  for (size_t i = 0; i < k; i++) free(x.g[i].rows);
  free(x.g);
  return rc;
}

int tune_path_is_database(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char head[16];
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  return n == sizeof head && !memcmp(head, "SQLite format 3", 16);
}
