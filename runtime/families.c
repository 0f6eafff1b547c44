/* families.c — the families librooftune serves beyond their tuned shapes: the C families'
 * serving halves (kernels/served.c: their shape parsers, names, coordinates, vendor library and
 * default layout), and a generic entry for the others (dimensions by position), with the
 * serving distance of rooftune.h's "Distance". */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

rt_family rt_family_get(const char *name) {
  rt_family f;
  f.ops = family_serving_find(name);
  f.name = f.ops ? f.ops->name : name ? name : "";
  f.library = f.ops ? f.ops->library : NULL;
  f.default_layout = f.ops && f.ops->default_layout ? f.ops->default_layout : "";
  return f;
}

void rt_coords_of(const rt_family *f, const problem *p, family_coords *out) {
  family_coords_of(f->ops, p, out);
}

double rt_coords_distance(const family_coords *a, const family_coords *b) {
  return family_coords_distance(a, b);
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
    /* the whole text, however long: a shape cut short would be another problem's */
    size_t len = strlen(shape) + (layout ? strlen(layout) : 0) + 2;
    char *text = malloc(len);
    if (!text) return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading shape '%.60s'", shape);
    if (f->default_layout[0]) { /* gemm: the layout travels as the shape's suffix */
      const char *colon = strchr(shape, ':');
      int base = colon ? (int)(colon - shape) : (int)strlen(shape);
      const char *lay = layout && *layout ? layout : colon ? colon + 1 : "";
      snprintf(text, len, "%.*s%s%s", base, shape,
               *lay && strcmp(lay, f->default_layout) ? ":" : "",
               *lay && strcmp(lay, f->default_layout) ? lay : "");
    } else {
      snprintf(text, len, "%s", shape);
    }
    rt_status s = f->ops->parse_shape(f->ops, text, dtype, NULL, out, err);
    free(text);
    if (s == RT_OK && !out->layout[0]) rt_copy(out->layout, sizeof out->layout, f->default_layout);
    return s;
  }
  /* a declared family's shape is its key as written: one that does not fit is refused */
  if (strlen(shape) >= sizeof out->shape || (layout && strlen(layout) >= sizeof out->layout) ||
      strlen(f->name) >= sizeof out->family || strlen(dtype) >= sizeof out->dtype)
    return rt_error_set(err, RT_ERR_INVALID,
                        "shape '%.60s...' (%zu characters), its layout, family or dtype is longer "
                        "than a tuned problem's key holds (shape %zu characters)",
                        shape, strlen(shape), sizeof out->shape - 1);
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
