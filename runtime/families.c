/* families.c — the families librooftune serves beyond their tuned shapes (gemm and attention:
 * their own shape parsers and names, linked in), a generic entry for the others (dimensions by
 * position), and the serving coordinates of rooftune.h's "Distance". */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/attention.h"
#include "kernels/gemm.h"
#include "runtime/runtime.h"

/* At most this many queries per sequence make an attention problem a decode problem. */
#define RT_DECODE_MAX_SQ 8

static const rt_family families[] = {
    {"gemm", &gemm_family, "cublaslt", "nn"},
    {"attention", &attention_family, "cudnn", ""},
};

const rt_family *rt_family_get(const char *name) {
  static _Thread_local rt_family generic;
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (name && !strcmp(families[i].name, name)) return &families[i];
  generic.name = name ? name : "";
  generic.ops = NULL;
  generic.library = NULL;
  generic.default_layout = "";
  return &generic;
}

static double ln_dim(const problem *p, const char *name) {
  long long v = problem_dim(p, name);
  return log((double)(v > 0 ? v : 1));
}

void rt_coords_of(const rt_family *f, const problem *p, rt_coords *out) {
  memset(out, 0, sizeof *out);
  if (!strcmp(f->name, "gemm")) {
    out->kind = 1;
    const char *names[] = {"BATCH", "M", "N", "K"};
    for (int i = 0; i < 4; i++) out->x[out->n++] = ln_dim(p, names[i]);
  } else if (!strcmp(f->name, "attention")) {
    const double b = ln_dim(p, "B");
    if (problem_dim(p, "SQ") <= RT_DECODE_MAX_SQ) {
      out->kind = 3; /* decode: the grid's parallelism, the keys a split streams */
      out->x[out->n++] = b + ln_dim(p, "HKV");
      out->x[out->n++] = ln_dim(p, "SKV");
    } else {
      out->kind = 2;
      out->x[out->n++] = b + ln_dim(p, "HQ");
      out->x[out->n++] = ln_dim(p, "SQ");
      out->x[out->n++] = ln_dim(p, "SKV");
    }
  } else { /* the batch, then the dimensions in order */
    out->x[out->n++] = ln_dim(p, "BATCH");
    for (int i = 0; i < p->ndims && out->n < RT_COORDS_MAX; i++)
      if (strcmp(p->dim_names[i], "BATCH")) out->x[out->n++] = log((double)(p->dims[i] > 0 ? p->dims[i] : 1));
    out->kind = 10 + out->n;
  }
}

double rt_coords_distance(const rt_coords *a, const rt_coords *b) {
  if (a->kind != b->kind || a->n != b->n) return -1;
  double sum = 0;
  for (int i = 0; i < a->n; i++) sum += (a->x[i] - b->x[i]) * (a->x[i] - b->x[i]);
  return sqrt(sum);
}

/* "[BATCH@]d1xd2x..." into BATCH and D0, D1, ... */
static rt_status generic_parse(const char *shape, problem *out, rt_error *err) {
  const char *s = shape;
  long long batch = 1;
  int n = 0;
  long long d[PROBLEM_MAX_DIMS];
  for (;;) {
    if (!isdigit((unsigned char)*s)) break;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (v <= 0) break;
    s = end;
    if (*s == '@' && n == 0 && batch == 1 && s != shape) {
      batch = v;
      s++;
      continue;
    }
    if (n == PROBLEM_MAX_DIMS - 1) break;
    d[n++] = v;
    if (*s != 'x' && *s != 'X') break;
    s++;
  }
  if (*s || n == 0)
    return rt_error_set(err, RT_ERR_INVALID,
                        "shape '%s' is not [BATCH@]DIMxDIMx... with positive integers", shape);
  problem_add_dim(out, "BATCH", batch);
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "D%d", i);
    problem_add_dim(out, name, d[i]);
  }
  return RT_OK;
}

rt_status rt_problem_parse(const rt_family *f, const char *shape, const char *dtype,
                           const char *layout, problem *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  if (f->ops) {
    char text[192];
    if (f->default_layout[0]) { /* gemm: the layout travels as the shape's suffix */
      const char *colon = strchr(shape, ':');
      int base = colon ? (int)(colon - shape) : (int)strlen(shape);
      const char *lay = layout && *layout ? layout : colon ? colon + 1 : "";
      snprintf(text, sizeof text, "%.*s%s%s", base, shape, *lay && strcmp(lay, f->default_layout) ? ":" : "",
               *lay && strcmp(lay, f->default_layout) ? lay : "");
    } else {
      snprintf(text, sizeof text, "%s", shape);
    }
    rt_status s = f->ops->parse_shape(f->ops, text, dtype, NULL, out, err);
    if (s == RT_OK && !out->layout[0]) rt_copy(out->layout, sizeof out->layout, f->default_layout);
    return s;
  }
  rt_copy(out->family, sizeof out->family, f->name);
  rt_copy(out->dtype, sizeof out->dtype, dtype);
  rt_copy(out->layout, sizeof out->layout, layout);
  rt_copy(out->shape, sizeof out->shape, shape);
  return generic_parse(shape, out, err);
}

void rt_problem_from_entry(const db_entry *e, problem *out) {
  memset(out, 0, sizeof *out);
  rt_copy(out->family, sizeof out->family, e->family);
  rt_copy(out->dtype, sizeof out->dtype, e->dtype);
  rt_copy(out->layout, sizeof out->layout, e->layout);
  rt_copy(out->shape, sizeof out->shape, e->shape);
  for (const char *s = e->dims; *s;) {
    size_t len = strcspn(s, ",");
    const char *eq = memchr(s, '=', len);
    if (eq && eq > s && eq - s < 8) {
      char name[8];
      memcpy(name, s, (size_t)(eq - s));
      name[eq - s] = '\0';
      problem_add_dim(out, name, strtoll(eq + 1, NULL, 10));
    }
    s += len;
    if (*s == ',') s++;
  }
}
