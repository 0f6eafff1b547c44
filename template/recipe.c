/* recipe.c — a winner's serving recipe (recipe.h) from its manifest and plan values. */
#include "template/recipe.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "template/expr.h"

typedef struct sbuf {
  char *s;    /* the text, NUL-terminated */
  size_t n;   /* its length */
  size_t cap; /* bytes allocated */
  int oom;    /* an allocation failed */
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (w < 0) {
      b->oom = 1;
      return;
    }
    if (b->s && b->n + (size_t)w < b->cap) {
      b->n += (size_t)w;
      return;
    }
    size_t cap = (b->cap ? b->cap : 256) * 2 + (size_t)w;
    char *s = realloc(b->s, cap);
    if (!s) {
      b->oom = 1;
      return;
    }
    if (!b->s) s[0] = '\0';
    b->s = s;
    b->cap = cap;
  }
}

/* A text the caller owns: the buffer's, or "" when nothing was added. */
static char *sb_take(sbuf *b) {
  if (b->s) return b->s;
  return calloc(1, 1);
}

static int is_param(const manifest *m, const char *name) {
  for (int i = 0; i < manifest_nparams(m); i++)
    if (!strcmp(manifest_param(m, i)->name, name)) return 1;
  return 0;
}

/* -1 when NAME is no derived value of m, else its index. */
static int derived_index(const manifest *m, const char *name) {
  for (int i = 0; i < manifest_nderived(m); i++)
    if (!strcmp(manifest_derived_name(m, i), name)) return i;
  return -1;
}

/* 1 when NAME has the same value for every shape: a parameter, a derived value the source
 * prefix carries, a dtype or device fact. */
static int shape_free(const manifest *m, const char *name) {
  if (is_param(m, name)) return 1;
  int d = derived_index(m, name);
  if (d >= 0) return manifest_derived_emitted(m, d);
  return !strncmp(name, "device.", 7) || !strncmp(name, "dtype_", 6);
}

/* *reads = 1 when the expression reads a name that depends on the problem. */
static rt_status reads_shape(const manifest *m, const char *text, int *reads, rt_error *err) {
  *reads = 0;
  expr_scope *sc = expr_scope_new();
  if (!sc) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < manifest_nparams(m); i++) {
    const space_param *p = manifest_param(m, i);
    expr_scope_add(sc, p->name, p->idents ? p->count : 0, (const char *const *)p->idents);
  }
  for (int i = 0; i < manifest_nderived(m); i++)
    expr_scope_add(sc, manifest_derived_name(m, i), 0, NULL);
  expr_scope_set_open(sc, 1);
  expr *e = NULL;
  rt_status s = expr_parse(text, sc, &e, err);
  if (!s) {
    int n = 0;
    const int *slots = expr_slots(e, &n);
    for (int k = 0; k < n && !*reads; k++) *reads = !shape_free(m, expr_scope_name(sc, slots[k]));
  }
  expr_free(e);
  expr_scope_free(sc);
  return s;
}

/* The manifest's launch expressions as written, read back from its file (the loaded manifest
 * keeps them parsed). */
static rt_status launch_text(const manifest *m, winner_recipe *out, rt_error *err) {
  json_error_t je;
  char *text = NULL;
  size_t len = 0;
  rt_status rs = fileio_read_max(manifest_path(m), MANIFEST_FILE_MAX, &text, &len, err);
  if (rs) return rs;
  json_t *root = json_loadb(text, len, 0, &je);
  free(text);
  if (!root) {
    rt_error_set(err, RT_ERR_IO, "cannot read its launch expressions again: %s", je.text);
    rt_error_locate(err, manifest_path(m), NULL, je.line, je.column);
    return RT_ERR_IO;
  }
  json_t *launch = json_object_get(root, "launch");
  struct {
    const char *key;
    int i;
    char *out;
  } items[] = {{"grid", 0, out->grid[0]},   {"grid", 1, out->grid[1]},
               {"grid", 2, out->grid[2]},   {"block", 0, out->block[0]},
               {"block", 1, out->block[1]}, {"block", 2, out->block[2]},
               {"smem", -1, out->smem}};
  for (size_t k = 0; k < sizeof items / sizeof items[0]; k++) {
    json_t *v = json_object_get(launch, items[k].key);
    if (items[k].i >= 0) v = json_array_get(v, (size_t)items[k].i);
    const size_t cap = sizeof out->smem;
    if (json_is_string(v) && strlen(json_string_value(v)) >= cap) {
      json_decref(root);
      rt_error_set(err, RT_ERR_INVALID,
                   "its launch expression is longer than the %zu bytes a winner keeps", cap - 1);
      rt_error_locate(err, manifest_path(m), items[k].key, 0, 0);
      return RT_ERR_INVALID;
    }
    if (json_is_string(v))
      snprintf(items[k].out, cap, "%s", json_string_value(v));
    else if (json_is_integer(v))
      snprintf(items[k].out, cap, "%lld", (long long)json_integer_value(v));
    else if (!v && items[k].i < 0)
      snprintf(items[k].out, cap, "0"); /* smem is optional */
  }
  json_decref(root);
  return RT_OK;
}

rt_status winner_recipe_make(const manifest *m, const rt_vars *plan_vars, winner_recipe *out,
                             rt_error *err) {
  memset(out, 0, sizeof *out);
  rt_status ls = launch_text(m, out, err);
  if (ls) return ls;
  /* vars: parameters, then the shape-free derived values, in manifest order */
  size_t used = 0;
  for (int pass = 0; pass < 2; pass++) {
    int n = pass ? manifest_nderived(m) : manifest_nparams(m);
    for (int i = 0; i < n; i++) {
      if (pass && !manifest_derived_emitted(m, i)) continue;
      const char *name = pass ? manifest_derived_name(m, i) : manifest_param(m, i)->name;
      long long v = 0;
      if (!rt_vars_get(plan_vars, name, &v))
        return rt_error_set(err, RT_ERR_INVALID, "the plan of %s has no value for %s",
                            manifest_name(m), name);
      int w = snprintf(out->vars + used, sizeof out->vars - used, "%s%s=%lld", used ? "," : "",
                       name, v);
      if (w < 0 || (size_t)w >= sizeof out->vars - used)
        return rt_error_set(err, RT_ERR_INVALID,
                            "the values of a %s configuration do not fit the "
                            "%zu bytes a winner keeps",
                            manifest_name(m), sizeof out->vars);
      used += (size_t)w;
    }
  }
  sbuf env = {0}, der = {0}, con = {0};
  rt_status s = RT_OK;
  /* env: what the plan holds beside the parameters and derived values */
  for (int i = 0; i < plan_vars->count; i++) {
    const char *name = plan_vars->names[i];
    if (is_param(m, name) || derived_index(m, name) >= 0) continue;
    sb_add(&env, "%s%s=%lld", env.n ? "," : "", name, plan_vars->values[i]);
  }
  for (int i = 0; i < manifest_nderived(m) && !s; i++)
    if (!manifest_derived_emitted(m, i))
      sb_add(&der, "%s=%s\n", manifest_derived_name(m, i), manifest_derived_text(m, i));
  for (int i = 0; i < manifest_nconstraints(m) && !s; i++) {
    int reads = 0;
    s = reads_shape(m, manifest_constraint(m, i), &reads, err);
    if (!s && reads) sb_add(&con, "%s\n", manifest_constraint(m, i));
  }
  out->env = sb_take(&env);
  out->derived = sb_take(&der);
  out->constraints = sb_take(&con);
  if (!s && (env.oom || der.oom || con.oom || !out->env || !out->derived || !out->constraints))
    s = rt_error_set(err, RT_ERR_NOMEM, "out of memory writing a serving recipe");
  if (s) winner_recipe_free(out);
  return s;
}

void winner_recipe_free(winner_recipe *r) {
  if (!r) return;
  free(r->env);
  free(r->derived);
  free(r->constraints);
  r->env = r->derived = r->constraints = NULL;
}

void winner_recipe_apply(const winner_recipe *r, db_winner *w) {
  for (int k = 0; k < 3; k++) {
    snprintf(w->grid[k], sizeof w->grid[k], "%s", r->grid[k]);
    snprintf(w->block[k], sizeof w->block[k], "%s", r->block[k]);
  }
  snprintf(w->smem, sizeof w->smem, "%s", r->smem);
  snprintf(w->vars, sizeof w->vars, "%s", r->vars);
  w->env = r->env;
  w->derived = r->derived;
  w->constraints = r->constraints;
}
