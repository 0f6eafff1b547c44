/* declared.c — families declared in JSON (see declared.h): the loader, the host side (shapes,
 * names, cost) and the GPU side (argument buffers, seeded inputs, the reference run, poisoning,
 * launch, the check), all driven by the declaration. */
#include "kernels/declared.h"

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/numeric.h"
#include "core/fileio.h"
#include "core/util.h"
#include "driver/cuda_driver.h"
#include "template/expr.h"
#include "template/manifest.h"
#include "template/roles.h"

#define DECL_MAX_DIMS   8
#define DECL_MAX_FACTS  16
#define DECL_MAX_ARGS   32
#define DECL_MAX_DTYPES 8
#define DECL_MAX_CHECKS 10
#define DECL_DIM_MAX    (2147483647LL - 1024)
/* The largest buffer a declared argument may be: more than any GPU's memory, far below where a
 * byte count could wrap. */
#define DECL_BUFFER_MAX_BYTES (1LL << 40)

/* ---- element types ---- */

#define ELEM_TYPES(X)                                                                         \
  X(DTYPE, "dtype", 0, 1) /* the problem's dtype; size and float-ness resolved per problem */ \
  X(F32, "f32", 4, 1)                                                                         \
  X(F16, "f16", 2, 1)                                                                         \
  X(BF16, "bf16", 2, 1)                                                                       \
  X(F64, "f64", 8, 1)                                                                         \
  X(I8, "i8", 1, 0)                                                                           \
  X(U8, "u8", 1, 0)                                                                           \
  X(I32, "i32", 4, 0)                                                                         \
  X(U32, "u32", 4, 0)                                                                         \
  X(I64, "i64", 8, 0)

typedef enum {
#define ELEM_ENUM(id, name, bytes, is_float) ELEM_##id,
  ELEM_TYPES(ELEM_ENUM)
#undef ELEM_ENUM
      ELEM_COUNT
} elem_type;

static const struct {
  const char *name;
  int bytes;
  int is_float;
} elem_info[ELEM_COUNT] = {
#define ELEM_ROW(id, name, bytes, is_float) {name, bytes, is_float},
    ELEM_TYPES(ELEM_ROW)
#undef ELEM_ROW
};

static int elem_parse(const char *s) {
  for (int i = 0; i < ELEM_COUNT; i++)
    if (strcmp(s, elem_info[i].name) == 0) return i;
  return -1;
}

/* The concrete type of t for a problem of dtype (dtype resolved; -1 for a dtype it cannot store). */
static elem_type elem_resolve(elem_type t, const char *dtype) {
  if (t != ELEM_DTYPE) return t;
  int r = elem_parse(dtype);
  return r > ELEM_DTYPE && elem_info[r].is_float ? (elem_type)r : (elem_type)-1;
}

/* ---- the declaration ---- */

enum { DIR_IN, DIR_OUT, DIR_INOUT };
enum { INIT_NONE, INIT_UNIFORM, INIT_INT, INIT_CONST };

typedef struct decl_arg {
  char name[48];
  int is_buffer;  /* 1: device buffer; 0: scalar */
  elem_type type; /* element type (buffer) or scalar type */
  expr *value;    /* buffer: element count; scalar: its value (a real expression for f32) */
  int dir;        /* DIR_* (buffers) */
  int init;       /* INIT_* (in and inout buffers) */
  double lo, hi;  /* uniform/int range, or the constant in lo */
} decl_arg;

typedef struct decl_check {
  char dtype[8];   /* "f32", or "*" */
  double rel, abs; /* bounds; < 0 when not given */
} decl_check;

typedef struct decl {
  family_ops ops; /* first: a decl is its family_ops */
  char path[1024];
  char name[16];
  char shape_help[256];
  char example[64];
  char reference[64];
  char levers[160];
  int ndims;
  char dims[DECL_MAX_DIMS][8];
  long long dim_max[DECL_MAX_DIMS];
  int ndtypes;
  char dtypes[DECL_MAX_DTYPES][8];
  int nfacts;
  char facts[DECL_MAX_FACTS][48];
  expr *fact_expr[DECL_MAX_FACTS];
  int nargs;
  decl_arg args[DECL_MAX_ARGS];
  int nchecks;
  decl_check checks[DECL_MAX_CHECKS];
  expr *flops, *bytes;
  expr_scope *scope; /* dims, dtype facts, facts, in that slot order */
  int first_fact_slot;
} decl;

static int is_ident(const char *s) {
  if (!s || !*s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
  for (; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return 0;
  return 1;
}

static const char *const dtype_names[] = {"f32", "tf32", "f16",  "bf16",
                                          "f64", "e4m3", "e5m2", "i8"};
#define NDTYPE_NAMES (sizeof dtype_names / sizeof dtype_names[0])

/* Parses an expression (a JSON string or integer; a number too when real) against the
 * declaration's scope: an integer expression, or a real one (an f32 scalar's value). */
static rt_status decl_expr_mode(decl *d, json_t *v, const char *field, int real, expr **out,
                                rt_error *err) {
  char text[64];
  const char *t;
  if (json_is_integer(v)) {
    snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
    t = text;
  } else if (json_is_real(v) && real) {
    snprintf(text, sizeof text, "%.17g", json_real_value(v));
    t = text;
  } else if (json_is_string(v) && json_string_length(v) > 0) {
    t = json_string_value(v);
  } else if (json_is_real(v)) {
    return rt_error_at(
        err, RT_ERR_MANIFEST, d->path, field, 0,
        "must be an integer expression (a string or an integer): %g is not an integer "
        "(floating-point values are for f32 scalars)",
        json_real_value(v));
  } else {
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                       real ? "must be an expression (a string or a number)"
                            : "must be an expression (a string or an integer)");
  }
  rt_error e = {0};
  rt_status s = real ? expr_parse_real(t, d->scope, out, &e) : expr_parse(t, d->scope, out, &e);
  if (s) return rt_error_at(err, s, d->path, field, e.column, "%s", e.text);
  return RT_OK;
}

static rt_status decl_expr(decl *d, json_t *v, const char *field, expr **out, rt_error *err) {
  return decl_expr_mode(d, v, field, 0, out, err);
}

static rt_status decl_unknown_fields(decl *d, json_t *obj, const char *where,
                                     const char *const *known, rt_error *err) {
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    int ok = 0;
    for (int i = 0; known[i]; i++) ok |= strcmp(key, known[i]) == 0;
    if (!ok) {
      char field[160], list[400] = "";
      size_t n = 0;
      snprintf(field, sizeof field, "%s%s%s", where, where[0] ? "." : "", key);
      for (int i = 0; known[i]; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", known[i]);
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "unknown field; fields are: %s",
                         list);
    }
  }
  return RT_OK;
}

static rt_status decl_string(decl *d, json_t *root, const char *key, int required, char *out,
                             size_t size, rt_error *err) {
  json_t *v = json_object_get(root, key);
  out[0] = '\0';
  if (!v)
    return required ? rt_error_at(err, RT_ERR_MANIFEST, d->path, key, 0,
                                  "missing required field \"%s\"", key)
                    : RT_OK;
  if (!json_is_string(v) || (required && json_string_length(v) == 0))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, key, 0, "\"%s\" must be a non-empty string",
                       key);
  if (json_string_length(v) >= size)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, key, 0,
                       "\"%s\" is longer than %zu characters", key, size - 1);
  snprintf(out, size, "%s", json_string_value(v));
  return RT_OK;
}

static rt_status decl_load_dims(decl *d, json_t *root, rt_error *err) {
  json_t *v = json_object_get(root, "dims");
  if (!json_is_array(v) || json_array_size(v) == 0)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "dims", 0,
                       "\"dims\" must be a non-empty list of dimension names");
  if (json_array_size(v) > DECL_MAX_DIMS)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "dims", 0, "at most %d dimensions",
                       DECL_MAX_DIMS);
  size_t i;
  json_t *x;
  json_array_foreach(v, i, x) {
    char field[32];
    snprintf(field, sizeof field, "dims[%zu]", i);
    const char *s = json_string_value(x);
    if (!s || !is_ident(s) || strlen(s) >= sizeof d->dims[0])
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "a dimension is a C identifier of at most %zu characters",
                         sizeof d->dims[0] - 1);
    for (int k = 0; k < d->ndims; k++)
      if (!strcmp(d->dims[k], s))
        return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "\"%s\" listed twice", s);
    snprintf(d->dims[d->ndims], sizeof d->dims[0], "%s", s);
    d->dim_max[d->ndims] = DECL_DIM_MAX;
    if (expr_scope_add(d->scope, s, 0, NULL) < 0)
      return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    d->ndims++;
  }
  json_t *mx = json_object_get(root, "max");
  if (mx && !json_is_object(mx))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "max", 0,
                       "\"max\" maps dimensions to their largest value");
  const char *key;
  json_object_foreach(mx, key, x) {
    char field[64];
    snprintf(field, sizeof field, "max.%s", key);
    int k = 0;
    while (k < d->ndims && strcmp(d->dims[k], key)) k++;
    if (k == d->ndims)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "not one of the dims");
    if (!json_is_integer(x) || json_integer_value(x) < 1 || json_integer_value(x) > DECL_DIM_MAX)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "must be an integer from 1 to %lld", DECL_DIM_MAX);
    d->dim_max[k] = (long long)json_integer_value(x);
  }
  /* the dtype facts come after the dims, then the declared facts */
  if (expr_scope_add(d->scope, "dtype_bytes", 0, NULL) < 0)
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (size_t k = 0; k < NDTYPE_NAMES; k++) {
    char n[32];
    snprintf(n, sizeof n, "dtype_is_%s", dtype_names[k]);
    if (expr_scope_add(d->scope, n, 0, NULL) < 0)
      return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  d->first_fact_slot = expr_scope_count(d->scope);
  return RT_OK;
}

static rt_status decl_load_dtypes(decl *d, json_t *root, rt_error *err) {
  json_t *v = json_object_get(root, "dtypes");
  if (!json_is_array(v) || json_array_size(v) == 0)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "dtypes", 0,
                       "\"dtypes\" must be a non-empty list: f32, f16, bf16, f64");
  size_t i;
  json_t *x;
  json_array_foreach(v, i, x) {
    char field[32];
    snprintf(field, sizeof field, "dtypes[%zu]", i);
    const char *s = json_string_value(x);
    int t = s ? elem_parse(s) : -1;
    if (t <= ELEM_DTYPE || !elem_info[t].is_float)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "\"%s\" is not a dtype a family can take: f32, f16, bf16, f64",
                         s ? s : "");
    if (d->ndtypes == DECL_MAX_DTYPES)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "too many dtypes");
    for (int k = 0; k < d->ndtypes; k++)
      if (!strcmp(d->dtypes[k], s))
        return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "\"%s\" listed twice", s);
    snprintf(d->dtypes[d->ndtypes++], sizeof d->dtypes[0], "%s", s);
  }
  return RT_OK;
}

static rt_status decl_load_facts(decl *d, json_t *root, rt_error *err) {
  json_t *v = json_object_get(root, "facts");
  if (!v) return RT_OK;
  if (!json_is_object(v))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "facts", 0,
                       "\"facts\" maps names to expressions");
  const char *key;
  json_t *x;
  json_object_foreach(v, key, x) {
    char field[96];
    snprintf(field, sizeof field, "facts.%s", key);
    if (!is_ident(key) || strlen(key) >= sizeof d->facts[0] || !strncmp(key, "dtype_", 6) ||
        !strncmp(key, "device", 6))
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "a fact's name is a C identifier of at most %zu characters, not starting "
                         "with dtype_ or device",
                         sizeof d->facts[0] - 1);
    if (expr_scope_find(d->scope, key) >= 0)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "\"%s\" is already a name", key);
    if (d->nfacts == DECL_MAX_FACTS)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "at most %d facts",
                         DECL_MAX_FACTS);
    rt_status s = decl_expr(d, x, field, &d->fact_expr[d->nfacts], err);
    if (s) return s;
    snprintf(d->facts[d->nfacts++], sizeof d->facts[0], "%s", key);
    if (expr_scope_add(d->scope, key, 0, NULL) < 0)
      return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  return RT_OK;
}

static rt_status decl_range(decl *d, json_t *v, const char *field, double *lo, double *hi,
                            rt_error *err) {
  if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_number(json_array_get(v, 0)) ||
      !json_is_number(json_array_get(v, 1)))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "must be [lo, hi]");
  *lo = json_number_value(json_array_get(v, 0));
  *hi = json_number_value(json_array_get(v, 1));
  if (!(*lo < *hi) || !isfinite(*lo) || !isfinite(*hi))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "needs lo < hi, both finite");
  return RT_OK;
}

static rt_status decl_load_arg(decl *d, json_t *a, size_t i, rt_error *err) {
  char where[32], field[96];
  snprintf(where, sizeof where, "args[%zu]", i);
  decl_arg *x = &d->args[d->nargs];
  if (!json_is_object(a))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, where, 0, "an argument is an object");
  static const char *const known[] = {"name",  "buffer", "scalar", "count",
                                      "value", "dir",    "init",   NULL};
  rt_status s = decl_unknown_fields(d, a, where, known, err);
  if (s) return s;
  const char *name = json_string_value(json_object_get(a, "name"));
  snprintf(field, sizeof field, "%s.name", where);
  if (!name || !is_ident(name) || strlen(name) >= sizeof x->name)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                       "every argument needs a \"name\" (a C identifier)");
  for (int k = 0; k < d->nargs; k++)
    if (!strcmp(d->args[k].name, name))
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "\"%s\" is a name twice", name);
  snprintf(x->name, sizeof x->name, "%s", name);
  json_t *buf = json_object_get(a, "buffer"), *sc = json_object_get(a, "scalar");
  if (!!buf == !!sc)
    return rt_error_at(
        err, RT_ERR_MANIFEST, d->path, where, 0,
        "an argument is a \"buffer\" (element type) or a \"scalar\" (type), exactly one");
  x->is_buffer = buf != NULL;
  const char *tn = json_string_value(buf ? buf : sc);
  int t = tn ? elem_parse(tn) : -1;
  snprintf(field, sizeof field, "%s.%s", where, buf ? "buffer" : "scalar");
  if (buf && t < 0)
    return rt_error_at(
        err, RT_ERR_MANIFEST, d->path, field, 0,
        "element type \"%s\" unknown: dtype, f32, f16, bf16, f64, i8, u8, i32, u32, i64",
        tn ? tn : "");
  if (!buf && t != ELEM_I32 && t != ELEM_U32 && t != ELEM_I64 && t != ELEM_F32)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                       "scalar type \"%s\" unknown: i32, u32, i64, f32", tn ? tn : "");
  x->type = (elem_type)t;
  const char *vkey = buf ? "count" : "value";
  snprintf(field, sizeof field, "%s.%s", where, vkey);
  json_t *vv = json_object_get(a, vkey);
  if (!vv)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                       "missing: a %s needs its \"%s\" expression", buf ? "buffer" : "scalar",
                       vkey);
  if (json_object_get(a, buf ? "value" : "count"))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, where, 0, "a %s has \"%s\", not \"%s\"",
                       buf ? "buffer" : "scalar", vkey, buf ? "value" : "count");
  if ((s = decl_expr_mode(d, vv, field, !buf && t == ELEM_F32, &x->value, err))) return s;
  if (!buf) {
    if (json_object_get(a, "dir") || json_object_get(a, "init"))
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, where, 0,
                         "a scalar has no \"dir\" or \"init\"");
    d->nargs++;
    return RT_OK;
  }
  const char *dir = json_string_value(json_object_get(a, "dir"));
  snprintf(field, sizeof field, "%s.dir", where);
  if (!dir)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                       "a buffer needs \"dir\": in, out or inout");
  if (!strcmp(dir, "in"))
    x->dir = DIR_IN;
  else if (!strcmp(dir, "out"))
    x->dir = DIR_OUT;
  else if (!strcmp(dir, "inout"))
    x->dir = DIR_INOUT;
  else
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "\"%s\" is not in, out or inout",
                       dir);
  json_t *init = json_object_get(a, "init");
  snprintf(field, sizeof field, "%s.init", where);
  if (x->dir == DIR_OUT) {
    if (init)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "an out buffer is poisoned, not initialized: leave \"init\" out");
    d->nargs++;
    return RT_OK;
  }
  if (!json_is_object(init) || json_object_size(init) != 1)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                       "an %s buffer needs \"init\": {\"uniform\": [lo, hi]}, {\"int\": [lo, hi]} "
                       "or {\"const\": v}",
                       dir);
  json_t *u;
  char sub[128];
  if ((u = json_object_get(init, "uniform"))) {
    x->init = INIT_UNIFORM;
    snprintf(sub, sizeof sub, "%s.uniform", field);
    if ((s = decl_range(d, u, sub, &x->lo, &x->hi, err))) return s;
  } else if ((u = json_object_get(init, "int"))) {
    x->init = INIT_INT;
    snprintf(sub, sizeof sub, "%s.int", field);
    if ((s = decl_range(d, u, sub, &x->lo, &x->hi, err))) return s;
    if (x->lo != floor(x->lo) || x->hi != floor(x->hi))
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, sub, 0,
                         "an integer range has integer ends");
  } else if ((u = json_object_get(init, "const"))) {
    x->init = INIT_CONST;
    snprintf(sub, sizeof sub, "%s.const", field);
    if (!json_is_number(u) || !isfinite(json_number_value(u)))
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, sub, 0, "must be a finite number");
    x->lo = x->hi = json_number_value(u);
  } else {
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                       "\"init\" is one of uniform, int, const");
  }
  d->nargs++;
  return RT_OK;
}

static rt_status decl_load_args(decl *d, json_t *root, rt_error *err) {
  json_t *v = json_object_get(root, "args");
  if (!json_is_array(v) || json_array_size(v) == 0)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "args", 0,
                       "\"args\" must be the non-empty list of the kernel's arguments");
  if (json_array_size(v) > DECL_MAX_ARGS)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "args", 0, "at most %d arguments",
                       DECL_MAX_ARGS);
  size_t i;
  json_t *a;
  int outs = 0;
  json_array_foreach(v, i, a) {
    rt_status s = decl_load_arg(d, a, i, err);
    if (s) return s;
    const decl_arg *x = &d->args[d->nargs - 1];
    outs += x->is_buffer && x->dir != DIR_IN;
  }
  if (!outs)
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "args", 0,
                       "no out or inout buffer: nothing to check against the reference");
  return RT_OK;
}

static rt_status decl_load_check(decl *d, json_t *root, rt_error *err) {
  json_t *v = json_object_get(root, "check");
  if (!json_is_object(v) || json_object_size(v) == 0)
    return rt_error_at(
        err, RT_ERR_MANIFEST, d->path, "check", 0,
        "\"check\" maps dtypes (or \"*\") to {\"rel\": bound} and/or {\"abs\": bound}");
  const char *key;
  json_t *x;
  json_object_foreach(v, key, x) {
    char field[64];
    snprintf(field, sizeof field, "check.%s", key);
    int known = !strcmp(key, "*");
    for (int k = 0; k < d->ndtypes; k++) known |= !strcmp(d->dtypes[k], key);
    if (!known)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "\"%s\" is not one of the family's dtypes (or \"*\")", key);
    if (!json_is_object(x))
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "must be {\"rel\": bound} and/or {\"abs\": bound}");
    static const char *const fields[] = {"rel", "abs", NULL};
    rt_status s = decl_unknown_fields(d, x, field, fields, err);
    if (s) return s;
    decl_check *c = &d->checks[d->nchecks];
    snprintf(c->dtype, sizeof c->dtype, "%s", key);
    c->rel = c->abs = -1;
    json_t *r = json_object_get(x, "rel"), *a = json_object_get(x, "abs");
    if (!r && !a)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0, "needs \"rel\" or \"abs\"");
    if (r && (!json_is_number(r) || !(json_number_value(r) > 0) || !(json_number_value(r) < 1)))
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "\"rel\" is a bound between 0 and 1");
    if (a &&
        (!json_is_number(a) || !(json_number_value(a) >= 0) || !isfinite(json_number_value(a))))
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "\"abs\" is a finite bound of at least 0");
    if (r) c->rel = json_number_value(r);
    if (a) c->abs = json_number_value(a);
    d->nchecks++;
  }
  for (int k = 0; k < d->ndtypes; k++) {
    int has = 0;
    for (int j = 0; j < d->nchecks; j++)
      has |= !strcmp(d->checks[j].dtype, d->dtypes[k]) || !strcmp(d->checks[j].dtype, "*");
    if (!has)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, "check", 0,
                         "no check for dtype %s (give it, or \"*\")", d->dtypes[k]);
  }
  return RT_OK;
}

static rt_status decl_load_cost(decl *d, json_t *root, rt_error *err) {
  json_t *v = json_object_get(root, "cost");
  if (!json_is_object(v))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "cost", 0,
                       "\"cost\" needs \"flops\" and \"bytes\" expressions");
  static const char *const known[] = {"flops", "bytes", NULL};
  rt_status s = decl_unknown_fields(d, v, "cost", known, err);
  if (s) return s;
  if (!json_object_get(v, "flops"))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "cost.flops", 0, "missing");
  if (!json_object_get(v, "bytes"))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "cost.bytes", 0, "missing");
  if ((s = decl_expr(d, json_object_get(v, "flops"), "cost.flops", &d->flops, err))) return s;
  return decl_expr(d, json_object_get(v, "bytes"), "cost.bytes", &d->bytes, err);
}

static rt_status decl_load_levers(decl *d, json_t *root, rt_error *err) {
  json_t *v = json_object_get(root, "levers");
  if (!v) return RT_OK;
  if (!json_is_array(v))
    return rt_error_at(err, RT_ERR_MANIFEST, d->path, "levers", 0, "\"levers\" lists roles: %s",
                       role_names_list());
  size_t i, n = 0;
  json_t *x;
  json_array_foreach(v, i, x) {
    char field[32];
    snprintf(field, sizeof field, "levers[%zu]", i);
    const char *s = json_string_value(x);
    if (!s || role_parse(s) < 0)
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                         "\"%s\" is not a role; roles are: %s", s ? s : "", role_names_list());
    for (size_t k = 0; k < i; k++)
      if (!strcmp(json_string_value(json_array_get(v, k)), s))
        return rt_error_at(err, RT_ERR_MANIFEST, d->path, field, 0,
                           "\"%s\" is listed twice (levers[%zu])", s, k);
    int w = snprintf(d->levers + n, sizeof d->levers - n, "%s%s", n ? "," : "", s);
    if (w < 0 || (size_t)w >= sizeof d->levers - n) /* every role once fits; guard anyway */
      return rt_error_at(err, RT_ERR_MANIFEST, d->path, "levers", 0, "too many levers");
    n += (size_t)w;
  }
  if (n == 0) snprintf(d->levers, sizeof d->levers, "none");
  return RT_OK;
}

/* Values of every scope slot for problem p: dims, dtype facts, facts (evaluated in order). */
static rt_status decl_values(const decl *d, const problem *p, long long *vals, rt_error *err) {
  int n = expr_scope_count(d->scope);
  for (int i = 0; i < n; i++) vals[i] = 0;
  for (int i = 0; i < d->ndims; i++) vals[i] = problem_dim(p, d->dims[i]);
  vals[d->ndims] = manifest_dtype_bytes(p->dtype);
  for (size_t k = 0; k < NDTYPE_NAMES; k++)
    vals[d->ndims + 1 + (int)k] = strcmp(p->dtype, dtype_names[k]) == 0;
  for (int i = 0; i < d->nfacts; i++) {
    rt_error e = {0};
    rt_status s = expr_eval(d->fact_expr[i], vals, &vals[d->first_fact_slot + i], &e);
    if (s) {
      char field[64];
      snprintf(field, sizeof field, "facts.%s", d->facts[i]);
      return rt_error_at(err, s, d->path, field, e.column, "for %s: %s", p->shape, e.text);
    }
  }
  return RT_OK;
}

/* An argument's value for a problem: a buffer's element type, count and bytes, or a scalar. */
typedef struct arg_value {
  elem_type type;  /* a buffer's, resolved for the dtype */
  long long count; /* a buffer's elements */
  size_t bytes;    /* a buffer's bytes */
  long long i;     /* an integer scalar */
  double r;        /* an f32 scalar */
} arg_value;

/* Evaluates argument i of d for problem p (vals: decl_values) and checks it: a buffer has at
 * least one element and at most DECL_BUFFER_MAX_BYTES bytes (its byte count computed without
 * wrapping), a scalar fits its type.  Errors name the file, the field (args[i].count or .value),
 * the argument, the problem and the value. */
static rt_status decl_arg_eval(const decl *d, int i, const problem *p, const long long *vals,
                               arg_value *out, rt_error *err) {
  const decl_arg *a = &d->args[i];
  char field[96];
  snprintf(field, sizeof field, "args[%d].%s", i, a->is_buffer ? "count" : "value");
  memset(out, 0, sizeof *out);
  rt_error e = {0};
  rt_status s = !a->is_buffer && a->type == ELEM_F32 ? expr_eval_real(a->value, vals, &out->r, &e)
                                                     : expr_eval(a->value, vals, &out->i, &e);
  if (s)
    return rt_error_at(err, s, d->path, field, e.column, "%s %s for %s: %s",
                       a->is_buffer ? "buffer" : "scalar", a->name, p->shape, e.text);
  if (!a->is_buffer) {
    long long v = out->i;
    switch (a->type) {
      case ELEM_I32:
        if (v < INT_MIN || v > INT_MAX)
          return rt_error_at(err, RT_ERR_INVALID, d->path, field, 0,
                             "scalar %s = %lld for %s does not fit an i32 "
                             "(%d to %d)",
                             a->name, v, p->shape, INT_MIN, INT_MAX);
        break;
      case ELEM_U32:
        if (v < 0 || v > (long long)UINT_MAX)
          return rt_error_at(err, RT_ERR_INVALID, d->path, field, 0,
                             "scalar %s = %lld for %s does not fit a u32 "
                             "(0 to %u)",
                             a->name, v, p->shape, UINT_MAX);
        break;
      case ELEM_F32:
        if (!(fabs(out->r) <= FLT_MAX))
          return rt_error_at(err, RT_ERR_INVALID, d->path, field, 0,
                             "scalar %s = %g for %s does not fit an f32 "
                             "(at most %g in magnitude)",
                             a->name, out->r, p->shape, (double)FLT_MAX);
        break;
      default: break; /* an i64 holds every value an expression has */
    }
    return RT_OK;
  }
  out->type = elem_resolve(a->type, p->dtype);
  if ((int)out->type < 0)
    return rt_error_at(err, RT_ERR_UNSUPPORTED, d->path, field, 0,
                       "buffer %s: dtype %s has no element type", a->name, p->dtype);
  out->count = out->i;
  if (out->count < 1)
    return rt_error_at(err, RT_ERR_INVALID, d->path, field, 0,
                       "buffer %s has %lld elements for %s; a buffer needs at "
                       "least one",
                       a->name, out->count, p->shape);
  long long bytes;
  if (__builtin_mul_overflow(out->count, (long long)elem_info[out->type].bytes, &bytes) ||
      bytes > DECL_BUFFER_MAX_BYTES)
    return rt_error_at(err, RT_ERR_INVALID, d->path, field, 0,
                       "buffer %s has %lld elements of %d bytes for %s: more "
                       "than the %lld bytes (1 TiB) a buffer may hold",
                       a->name, out->count, elem_info[out->type].bytes, p->shape,
                       DECL_BUFFER_MAX_BYTES);
  out->bytes = (size_t)bytes;
  return RT_OK;
}

/* ---- host side ---- */

static rt_status decl_parse_shape(const family_ops *self, const char *shape, const char *dtype,
                                  const char *args, problem *out, rt_error *err) {
  const decl *d = (const decl *)self;
  if (args && *args) {
    rt_error_locate(err, "--kv-lens", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_USAGE, "the %s family takes no per-sequence lengths", d->name);
  }
  rt_error_locate(err, "--shape", NULL, 0, 0);
  int known = 0;
  for (int k = 0; k < d->ndtypes; k++) known |= dtype && !strcmp(d->dtypes[k], dtype);
  if (!known) {
    char list[96] = "";
    for (int k = 0, n = 0; k < d->ndtypes; k++)
      n += snprintf(list + n, sizeof list - (size_t)n, "%s%s", k ? ", " : "", d->dtypes[k]);
    rt_error_locate(err, "--dtype", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_INVALID, "the %s family takes dtype %s, not \"%s\"", d->name,
                        list, dtype ? dtype : "");
  }
  memset(out, 0, sizeof *out);
  const char *s = shape ? shape : "";
  for (int i = 0; i < d->ndims; i++) {
    char *end;
    if (*s < '0' || *s > '9') goto bad;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || v < 1) goto bad;
    if (v > d->dim_max[i])
      return rt_error_set(err, RT_ERR_PARSE, "bad %s shape \"%s\": %s is larger than %lld", d->name,
                          shape, d->dims[i], d->dim_max[i]);
    problem_add_dim(out, d->dims[i], v);
    s = end;
    if (i + 1 < d->ndims) {
      if (*s != 'x') goto bad;
      s++;
    }
  }
  if (*s) goto bad;
  snprintf(out->family, sizeof out->family, "%s", d->name);
  snprintf(out->dtype, sizeof out->dtype, "%s", dtype);
  /* the canonical text ("064x8" and "64x8" are one problem): at most 8 dims of 10 digits */
  for (int i = 0, n = 0; i < out->ndims; i++)
    n += snprintf(out->shape + n, sizeof out->shape - (size_t)n, "%s%lld", i ? "x" : "",
                  out->dims[i]);
  /* the facts must evaluate for this problem (no division by zero, no overflow), and so must
   * the cost, which counts FLOPs and bytes: never negative */
  long long vals[64];
  rt_status st = decl_values(d, out, vals, err);
  const expr *cost[2] = {d->flops, d->bytes};
  static const char *const cost_field[2] = {"cost.flops", "cost.bytes"};
  for (int k = 0; !st && k < 2; k++) {
    long long v = 0;
    rt_error e = {0};
    if ((st = expr_eval(cost[k], vals, &v, &e)))
      return rt_error_at(err, st, d->path, cost_field[k], e.column, "for %s: %s", out->shape,
                         e.text);
    if (v < 0)
      return rt_error_at(err, RT_ERR_INVALID, d->path, cost_field[k], 0,
                         "is negative (%lld) for %s: a cost counts FLOPs or bytes", v, out->shape);
  }
  /* and every argument: a buffer's count and bytes, a scalar's value in its type, before
   * anything runs on any device (the model device allocates nothing, so it would never know) */
  for (int i = 0; !st && i < d->nargs; i++) {
    arg_value av;
    st = decl_arg_eval(d, i, out, vals, &av, err);
  }
  return st;
bad:
  return rt_error_set(err, RT_ERR_PARSE, "bad %s shape \"%s\"; expected %s", d->name,
                      shape ? shape : "", d->shape_help);
}

static rt_status decl_bind(const family_ops *self, const problem *p, rt_vars *vars) {
  const decl *d = (const decl *)self;
  long long vals[64];
  rt_status s = decl_values(d, p, vals, NULL);
  for (int i = 0; !s && i < d->ndims; i++) s = rt_vars_set(vars, d->dims[i], vals[i]);
  for (int i = 0; !s && i < d->nfacts; i++)
    s = rt_vars_set(vars, d->facts[i], vals[d->first_fact_slot + i]);
  return s;
}

static double decl_eval_cost(const decl *d, const expr *e, const problem *p) {
  long long vals[64], v = 0;
  if (decl_values(d, p, vals, NULL) || expr_eval(e, vals, &v, NULL)) return 0;
  return v > 0 ? (double)v : 0;
}

static double decl_flops(const family_ops *self, const problem *p) {
  return decl_eval_cost((const decl *)self, ((const decl *)self)->flops, p);
}

static double decl_min_bytes(const family_ops *self, const problem *p) {
  return decl_eval_cost((const decl *)self, ((const decl *)self)->bytes, p);
}

static const decl_check *decl_check_for(const decl *d, const char *dtype) {
  for (int j = 0; j < d->nchecks; j++)
    if (!strcmp(d->checks[j].dtype, dtype)) return &d->checks[j];
  for (int j = 0; j < d->nchecks; j++)
    if (!strcmp(d->checks[j].dtype, "*")) return &d->checks[j];
  return NULL;
}

/* The bound gpu_verify's error is held to: the relative bound when the check has one, else
 * the absolute one. */
static double decl_tolerance(const family_ops *self, const problem *p) {
  const decl_check *c = decl_check_for((const decl *)self, p->dtype);
  if (!c) return 0;
  return c->rel >= 0 ? c->rel : c->abs;
}

/* ---- GPU side ---- */

typedef struct gbuf {
  const decl_arg *a;
  elem_type type; /* resolved */
  size_t count, bytes;
  CUdeviceptr dev; /* the candidates' buffer */
  CUdeviceptr ref; /* the reference's (out and inout) */
  void *init;      /* in and inout: the initial contents (host) */
  void *host;      /* out and inout: a download buffer */
  double *want;    /* out and inout: the reference's values */
} gbuf;

struct family_gpu {
  const decl *d;
  problem p;
  int n;                 /* arguments */
  gbuf b[DECL_MAX_ARGS]; /* per argument (buffers) */
  union {
    int i32;
    unsigned u32;
    long long i64;
    float f32;
  } scalar[DECL_MAX_ARGS]; /* per argument (scalars) */
};

static double elem_get(elem_type t, const void *base, size_t i) {
  const unsigned char *p = (const unsigned char *)base + i * (size_t)elem_info[t].bytes;
  switch (t) {
    case ELEM_F32: {
      float v;
      memcpy(&v, p, 4);
      return v;
    }
    case ELEM_F16: {
      uint16_t h;
      memcpy(&h, p, 2);
      return num_f16_to_f32(h);
    }
    case ELEM_BF16: {
      uint16_t h;
      memcpy(&h, p, 2);
      return num_bf16_to_f32(h);
    }
    case ELEM_F64: {
      double v;
      memcpy(&v, p, 8);
      return v;
    }
    case ELEM_I8: return (double)*(const int8_t *)p;
    case ELEM_U8: return (double)*p;
    case ELEM_I32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case ELEM_U32: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case ELEM_I64: {
      int64_t v;
      memcpy(&v, p, 8);
      return (double)v;
    }
    default: return NAN;
  }
}

static void elem_set(elem_type t, void *base, size_t i, double v) {
  unsigned char *p = (unsigned char *)base + i * (size_t)elem_info[t].bytes;
  switch (t) {
    case ELEM_F32: {
      float f = (float)v;
      memcpy(p, &f, 4);
      break;
    }
    case ELEM_F16: {
      uint16_t h = num_f32_to_f16((float)v);
      memcpy(p, &h, 2);
      break;
    }
    case ELEM_BF16: {
      uint16_t h = num_f32_to_bf16((float)v);
      memcpy(p, &h, 2);
      break;
    }
    case ELEM_F64: memcpy(p, &v, 8); break;
    case ELEM_I8: *(int8_t *)p = (int8_t)v; break;
    case ELEM_U8: *p = (unsigned char)v; break;
    case ELEM_I32: {
      int32_t x = (int32_t)v;
      memcpy(p, &x, 4);
      break;
    }
    case ELEM_U32: {
      uint32_t x = (uint32_t)v;
      memcpy(p, &x, 4);
      break;
    }
    case ELEM_I64: {
      int64_t x = (int64_t)v;
      memcpy(p, &x, 8);
      break;
    }
    default: break;
  }
}

static void fill_init(gbuf *b, uint64_t seed) {
  uint64_t s = seed ^ rt_fnv1a(RT_FNV_START, b->a->name); /* each buffer its own stream */
  const decl_arg *a = b->a;
  for (size_t i = 0; i < b->count; i++) {
    double v;
    if (a->init == INIT_CONST)
      v = a->lo;
    else if (a->init == INIT_INT || !elem_info[b->type].is_float)
      v = floor(num_uniform(&s, ceil(a->lo), floor(a->hi) + 1));
    else
      v = num_uniform(&s, a->lo, a->hi);
    elem_set(b->type, b->init, i, v);
  }
}

static void decl_gpu_teardown(family_gpu *g) {
  if (!g) return;
  for (int i = 0; i < g->n; i++) {
    gbuf *b = &g->b[i];
    if (b->dev) cu.cuMemFree_v2(b->dev);
    if (b->ref) cu.cuMemFree_v2(b->ref);
    free(b->init);
    free(b->host);
    free(b->want);
  }
  free(g);
}

/* Fills out buffers with NaN (floats) or 0xa5 bytes (integers) and resets inout buffers to
 * their initial contents, on buffer `ref` (1) or the candidates' (0). */
static rt_status poison_all(family_gpu *g, int ref, CUstream stream, rt_error *err) {
  for (int i = 0; i < g->n; i++) {
    gbuf *b = &g->b[i];
    if (!b->a->is_buffer || b->a->dir == DIR_IN) continue;
    CUdeviceptr p = ref ? b->ref : b->dev;
    rt_status s;
    if (b->a->dir == DIR_INOUT) {
      s = cuda_check(cu.cuMemcpyHtoD_v2(p, b->init, b->bytes), "reset an inout buffer", err);
    } else {
      switch (b->type) {
        case ELEM_F32:
          s = cuda_check(cu.cuMemsetD32Async(p, 0x7fc00000u, b->count, stream), "poison", err);
          break;
        case ELEM_F64:
          s = cuda_check(cu.cuMemsetD32Async(p, 0xffffffffu, b->count * 2, stream), "poison", err);
          break;
        case ELEM_F16:
          s = cuda_check(cu.cuMemsetD16Async(p, 0x7e00u, b->count, stream), "poison", err);
          break;
        case ELEM_BF16:
          s = cuda_check(cu.cuMemsetD16Async(p, 0x7fc0u, b->count, stream), "poison", err);
          break;
        default:
          s = cuda_check(cu.cuMemsetD8Async(p, 0xa5, b->bytes, stream), "poison", err);
          break;
      }
    }
    if (s) return s;
  }
  return RT_OK;
}

static rt_status launch_args(family_gpu *g, int ref, CUfunction fn, const unsigned grid[3],
                             const unsigned block[3], unsigned smem, CUstream stream,
                             rt_error *err) {
  void *args[DECL_MAX_ARGS];
  CUdeviceptr ptrs[DECL_MAX_ARGS];
  for (int i = 0; i < g->n; i++) {
    if (g->b[i].a->is_buffer) {
      ptrs[i] = ref && g->b[i].a->dir != DIR_IN ? g->b[i].ref : g->b[i].dev;
      args[i] = &ptrs[i];
    } else {
      args[i] = &g->scalar[i];
    }
  }
  rt_status s = family_allow_smem(fn, smem, err);
  if (s) return s;
  return cuda_check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                      smem, stream, args, NULL),
                    ref ? "launch the reference" : "launch the candidate", err);
}

/* The reference's launch (family_reference_run): its outputs poisoned, then run into the
 * reference buffers. */
static rt_status decl_reference_launch(family_gpu *g, const family_reference *ref, CUfunction fn,
                                       CUstream stream, rt_error *err) {
  rt_status s = poison_all(g, 1, stream, err);
  return s ? s : launch_args(g, 1, fn, ref->grid, ref->block, ref->smem, stream, err);
}

static rt_status decl_gpu_setup(const family_ops *self, const problem *p, uint64_t seed,
                                const family_reference *ref, CUstream stream, family_gpu **out,
                                rt_error *err) {
  const decl *d = (const decl *)self;
  *out = NULL;
  if (!cu.handle)
    return rt_error_set(err, RT_ERR_NO_DRIVER,
                        "%s needs a loaded CUDA driver and a current context", d->name);
  if (!ref || !ref->cubin)
    return rt_error_set(
        err, RT_ERR_INVALID,
        "the %s family checks against its reference template %s, which was not given", d->name,
        d->reference);
  family_gpu *g = calloc(1, sizeof *g);
  if (!g) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  g->d = d;
  g->p = *p;
  g->n = d->nargs;
  long long vals[64];
  rt_status s = decl_values(d, p, vals, err);
  for (int i = 0; !s && i < d->nargs; i++) {
    const decl_arg *a = &d->args[i];
    gbuf *b = &g->b[i];
    b->a = a;
    arg_value av;
    if ((s = decl_arg_eval(d, i, p, vals, &av, err))) break;
    if (!a->is_buffer) {
      switch (a->type) {
        case ELEM_I32: g->scalar[i].i32 = (int)av.i; break;
        case ELEM_U32: g->scalar[i].u32 = (unsigned)av.i; break;
        case ELEM_F32: g->scalar[i].f32 = (float)av.r; break;
        default: g->scalar[i].i64 = av.i; break;
      }
      continue;
    }
    b->type = av.type;
    b->count = (size_t)av.count;
    b->bytes = av.bytes;
    CUresult r = cu.cuMemAlloc_v2(&b->dev, b->bytes);
    if (r == CUDA_SUCCESS && a->dir != DIR_IN) r = cu.cuMemAlloc_v2(&b->ref, b->bytes);
    if (r != CUDA_SUCCESS) {
      char what[160];
      snprintf(what, sizeof what, "allocate %zu bytes for %s", b->bytes, a->name);
      s = cuda_check(r, what, err);
      break;
    }
    if (a->dir != DIR_OUT) {
      if (!(b->init = malloc(b->bytes))) {
        s = rt_error_set(err, RT_ERR_NOMEM, "out of memory for %s", a->name);
        break;
      }
      fill_init(b, seed);
      if ((s = cuda_check(cu.cuMemcpyHtoD_v2(b->dev, b->init, b->bytes), "upload an input", err)))
        break;
    }
    if (a->dir != DIR_IN &&
        (!(b->host = malloc(b->bytes)) || !(b->want = malloc(b->count * sizeof(double))))) {
      s = rt_error_set(err, RT_ERR_NOMEM, "out of memory for %s", a->name);
      break;
    }
  }
  /* the reference, once: its outputs are what every candidate must reproduce */
  if (!s) s = family_reference_run(g, ref, stream, decl_reference_launch, err);
  for (int i = 0; !s && i < g->n; i++) {
    gbuf *b = &g->b[i];
    if (!b->a->is_buffer || b->a->dir == DIR_IN) continue;
    if ((s = cuda_check(cu.cuMemcpyDtoH_v2(b->host, b->ref, b->bytes),
                        "download the reference output", err)))
      break;
    for (size_t k = 0; k < b->count; k++) {
      b->want[k] = elem_get(b->type, b->host, k);
      if (elem_info[b->type].is_float && !isfinite(b->want[k])) {
        s = rt_error_set(err, RT_ERR_INTERNAL,
                         "the reference %s left %s[%zu] = %g (not finite): a reference must write "
                         "every output element",
                         d->reference, b->a->name, k, b->want[k]);
        break;
      }
    }
  }
  if (s) {
    decl_gpu_teardown(g);
    return s;
  }
  *out = g;
  return RT_OK;
}

static rt_status decl_gpu_poison(family_gpu *g, CUstream stream, rt_error *err) {
  return poison_all(g, 0, stream, err);
}

static rt_status decl_gpu_launch(family_gpu *g, CUfunction fn, const rt_vars *config,
                                 const unsigned grid[3], const unsigned block[3], unsigned smem,
                                 CUstream stream, rt_error *err) {
  (void)config;
  return launch_args(g, 0, fn, grid, block, smem, stream, err);
}

static rt_status decl_gpu_verify(family_gpu *g, double *measure, rt_error *err) {
  const decl_check *c = decl_check_for(g->d, g->p.dtype);
  *measure = NAN;
  rt_status s = cuda_check(cu.cuCtxSynchronize(), "finish the candidate", err);
  if (s) return s;
  double worst_rel = 0, worst_abs = 0;
  for (int i = 0; i < g->n; i++) {
    gbuf *b = &g->b[i];
    if (!b->a->is_buffer || b->a->dir == DIR_IN) continue;
    if ((s = cuda_check(cu.cuMemcpyDtoH_v2(b->host, b->dev, b->bytes),
                        "download the candidate's output", err)))
      return s;
    double diff_sq = 0, ref_sq = 0, max_abs = 0;
    size_t bad = 0, first = 0;
    for (size_t k = 0; k < b->count; k++) {
      double got = elem_get(b->type, b->host, k), want = b->want[k], dd = got - want;
      if (!elem_info[b->type].is_float) {
        if (got != want && !bad++) first = k;
        continue;
      }
      if (!isfinite(got)) {
        if (!bad++) first = k;
        continue;
      }
      diff_sq += dd * dd;
      ref_sq += want * want;
      if (fabs(dd) > max_abs) max_abs = fabs(dd);
    }
    if (bad) {
      *measure = INFINITY;
      return rt_error_set(err, RT_ERR_WRONG_RESULT,
                          "%s differs from the reference %s: %zu of %zu elements %s, first at %zu "
                          "(%g, expected %g)",
                          b->a->name, g->d->reference, bad, b->count,
                          elem_info[b->type].is_float ? "NaN or infinite" : "differ", first,
                          elem_get(b->type, b->host, first), b->want[first]);
    }
    if (!elem_info[b->type].is_float) continue;
    double rel = ref_sq > 0 ? sqrt(diff_sq / ref_sq) : sqrt(diff_sq);
    if (rel > worst_rel) worst_rel = rel;
    if (max_abs > worst_abs) worst_abs = max_abs;
    if (c && c->rel >= 0 && !(rel <= c->rel)) {
      *measure = rel;
      return rt_error_set(
          err, RT_ERR_WRONG_RESULT,
          "%s differs from the reference %s: relative error %.3g over the bound %.3g for %s",
          b->a->name, g->d->reference, rel, c->rel, g->p.dtype);
    }
    if (c && c->abs >= 0 && !(max_abs <= c->abs)) {
      *measure = c->rel >= 0 ? rel : max_abs;
      if (c->rel >= 0 && !(*measure > c->rel))
        *measure = nextafter(c->rel, INFINITY); /* never passes */
      return rt_error_set(err, RT_ERR_WRONG_RESULT,
                          "%s differs from the reference %s: largest absolute difference %.3g over "
                          "the bound %.3g for %s",
                          b->a->name, g->d->reference, max_abs, c->abs, g->p.dtype);
    }
  }
  *measure = c && c->rel >= 0 ? worst_rel : worst_abs;
  return RT_OK;
}

/* ---- loading ---- */

void declared_free(family_ops *f) {
  decl *d = (decl *)f;
  if (!d) return;
  /* every slot, not only the counted ones: a declaration refused halfway through an argument
   * or fact has compiled its expression already */
  for (int i = 0; i < DECL_MAX_FACTS; i++) expr_free(d->fact_expr[i]);
  for (int i = 0; i < DECL_MAX_ARGS; i++) expr_free(d->args[i].value);
  expr_free(d->flops);
  expr_free(d->bytes);
  expr_scope_free(d->scope);
  free(d);
}

/* The largest family declaration read (bytes): a declaration is a page of JSON. */
#define DECL_FILE_MAX (1 << 20)

rt_status declared_load(const char *path, family_ops **out, rt_error *err) {
  *out = NULL;
  struct stat fst;
  if (strlen(path) >= sizeof((decl *)0)->path)
    return rt_error_at(err, RT_ERR_IO, path, NULL, 0, "the path is longer than %zu characters",
                       sizeof((decl *)0)->path - 1);
  if (stat(path, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_size > DECL_FILE_MAX)
    return rt_error_at(err, RT_ERR_IO, path, NULL, 0,
                       "the family declaration is larger than %d bytes", DECL_FILE_MAX);
  /* a FIFO, a device or a link to one is refused by name, never opened (fileio.h) */
  char *text = NULL;
  size_t len = 0;
  rt_status rs = fileio_read_max(path, DECL_FILE_MAX, &text, &len, err);
  if (rs) return rs;
  json_error_t jerr;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  free(text);
  if (!root) {
    rt_status s = rt_error_at(err, RT_ERR_PARSE, path, NULL, 0, "invalid JSON: %s", jerr.text);
    if (err) err->line = jerr.line, err->column = jerr.column;
    return s;
  }
  decl *d = calloc(1, sizeof *d);
  rt_status s = RT_OK;
  if (!d || !(d->scope = expr_scope_new())) {
    json_decref(root);
    free(d);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory loading %s", path);
  }
  snprintf(d->path, sizeof d->path, "%s", path);
  static const char *const known[] = {"family", "description", "dims", "max",       "example",
                                      "dtypes", "facts",       "args", "reference", "check",
                                      "cost",   "levers",      NULL};
  char description[256];
  if (!json_is_object(root)) {
    s = rt_error_at(err, RT_ERR_MANIFEST, path, NULL, 0,
                    "a family declaration is a JSON object (see kernels/declared.h)");
    goto done;
  }
  if ((s = decl_unknown_fields(d, root, "", known, err)) ||
      (s = decl_string(d, root, "family", 1, d->name, sizeof d->name, err)) ||
      (s = decl_string(d, root, "description", 0, description, sizeof description, err)) ||
      (s = decl_string(d, root, "reference", 1, d->reference, sizeof d->reference, err)) ||
      (s = decl_string(d, root, "example", 0, d->example, sizeof d->example, err)))
    goto done;
  if (!is_ident(d->name)) {
    s = rt_error_at(err, RT_ERR_MANIFEST, path, "family", 0, "\"%s\" is not a C identifier",
                    d->name);
    goto done;
  }
  if (!is_ident(d->reference)) {
    s = rt_error_at(err, RT_ERR_MANIFEST, path, "reference", 0,
                    "\"%s\" is not a template name (a C identifier)", d->reference);
    goto done;
  }
  if ((s = decl_load_dims(d, root, err)) || (s = decl_load_dtypes(d, root, err)) ||
      (s = decl_load_facts(d, root, err)) || (s = decl_load_args(d, root, err)) ||
      (s = decl_load_check(d, root, err)) || (s = decl_load_cost(d, root, err)) ||
      (s = decl_load_levers(d, root, err)))
    goto done;
  {
    size_t n = 0;
    for (int i = 0; i < d->ndims; i++)
      n += (size_t)snprintf(d->shape_help + n, sizeof d->shape_help - n, "%s%s", i ? "x" : "",
                            d->dims[i]);
    if (!d->example[0])
      for (int i = 0, k = 0; i < d->ndims; i++)
        k += snprintf(d->example + k, sizeof d->example - (size_t)k, "%s%d", i ? "x" : "", 256);
    problem p;
    rt_error e = {0};
    if (decl_parse_shape(&d->ops, d->example, d->dtypes[0], NULL, &p, &e)) {
      if (!strcmp(e.source, path) &&
          e.field[0]) { /* a fact, a cost or an argument that fails for it */
        if (err) *err = e;
        s = e.code;
      } else {
        s = rt_error_at(err, RT_ERR_MANIFEST, path, "example", 0,
                        "the example shape does not parse: %s", e.text);
      }
      goto done;
    }
  }
  d->ops.name = d->name;
  d->ops.shape_help = d->shape_help;
  d->ops.example_shape = d->example;
  d->ops.reference = d->reference;
  d->ops.declared_in = d->path;
  d->ops.levers = d->levers[0] ? d->levers : NULL;
  d->ops.parse_shape = decl_parse_shape;
  d->ops.bind = decl_bind;
  d->ops.flops = decl_flops;
  d->ops.min_bytes = decl_min_bytes;
  d->ops.tolerance = decl_tolerance;
  d->ops.gpu_setup = decl_gpu_setup;
  d->ops.gpu_teardown = decl_gpu_teardown;
  d->ops.gpu_poison = decl_gpu_poison;
  d->ops.gpu_launch = decl_gpu_launch;
  d->ops.gpu_verify = decl_gpu_verify;
done:
  json_decref(root);
  if (s) {
    declared_free(&d->ops);
    return s;
  }
  *out = &d->ops;
  return RT_OK;
}
