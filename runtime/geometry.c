/* geometry.c — the one geometry path: a stored winner's serving recipe (template/recipe.h)
 * evaluated and checked for a queried shape, with no manifest: the environment, the values,
 * the shape-dependent derived values, the shape-dependent constraints, the launch. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"
#include "template/expr.h"

/* Evaluates text over v. */
static rt_status eval(const char *text, const rt_vars *v, long long *out, rt_error *err) {
  const char *names[RT_VARS_MAX];
  for (int i = 0; i < v->count; i++) names[i] = v->names[i];
  return expr_eval_text(text, v->count, names, v->values, out, err);
}

/* Next line of a recipe text into buf; 0 at the end, -1 for a line longer than buf holds (cut,
 * it would be another expression). */
static int next_line(const char **s, char *buf, size_t size) {
  while (**s == '\n') (*s)++;
  if (!**s) return 0;
  size_t n = strcspn(*s, "\n");
  snprintf(buf, size, "%.*s", (int)n, *s);
  *s += n;
  return n < size ? 1 : -1;
}

static int refuse(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
  return 0;
}

/* The values and environment for q: the stored ones, with the names the family computes from
 * the shape recomputed for q.  0 with why when that cannot be done. */
static int environment(const rt_family *f, const db_entry *e, const db_recipe *r, const problem *q,
                       rt_vars *v, char *why, size_t size) {
  rt_error err = {0};
  rt_vars_clear(v);
  /* the stored values first: a winner an older rooftune stored with its own shape's dimensions
   * among them gets the queried shape's below */
  if (rt_vars_parse(v, e->launch.vars, &err))
    return refuse(why, size, "its stored values do not read back: %s", err.text);
  if (rt_vars_parse(v, r->env, &err))
    return refuse(why, size, "its stored environment does not read back: %s", err.text);
  if (f->ops) {
    if (f->ops->bind(f->ops, q, v))
      return refuse(why, size, "the %s family cannot describe %s", f->name, q->shape);
  } else {
    problem tuned;
    rt_problem_from_entry(e, &tuned);
    int pos = 0, dims = 0;
    for (int i = 0; i < q->ndims; i++) dims += strcmp(q->dim_names[i], "BATCH") != 0;
    for (int i = 0; i < tuned.ndims; i++) {
      long long value;
      if (!strcmp(tuned.dim_names[i], "BATCH")) {
        value = problem_dim(q, "BATCH");
      } else {
        char name[16];
        snprintf(name, sizeof name, "D%d", pos++);
        value = problem_dim(q, name);
      }
      rt_vars_set(v, tuned.dim_names[i], value);
    }
    if (pos != dims) return refuse(why, size, "it has %d dimensions, the shape %d", pos, dims);
    rt_vars env;
    rt_vars_clear(&env);
    rt_vars_parse(&env, r->env, NULL);
    for (int i = 0; i < env.count; i++) {
      const char *n = env.names[i];
      if (problem_dim(&tuned, n) || !strcmp(n, "BATCH") || !strncmp(n, "device.", 7) ||
          !strncmp(n, "dtype_", 6))
        continue;
      return refuse(why, size,
                    "the %s family computes %s from the shape in its family.json, which "
                    "librooftune does not read: served for its own shape only",
                    f->name, n);
    }
  }
  if (e->device.sm_count > 0 && rt_vars_find(v, "device.sm_count") < 0)
    rt_vars_set(v, "device.sm_count", e->device.sm_count);
  return 1;
}

int rt_geometry(const rt_family *f, const db_entry *e, const db_recipe *r, const problem *q,
                unsigned grid[3], unsigned block[3], unsigned *smem, char *why, size_t why_size) {
  rt_vars v;
  rt_error err = {0};
  if (!environment(f, e, r, q, &v, why, why_size)) return 0;
  char line[1024];
  int got;
  for (const char *s = r->derived; (got = next_line(&s, line, sizeof line)) != 0;) {
    if (got < 0)
      return refuse(why, why_size, "a derived value of its recipe is longer than %zu characters",
                    sizeof line - 1);
    char *eq = strchr(line, '=');
    if (!eq) return refuse(why, why_size, "its derived value '%.200s' is not NAME=EXPR", line);
    *eq = '\0';
    long long x = 0;
    if (eval(eq + 1, &v, &x, &err))
      return refuse(why, why_size, "derived %s = %.200s cannot be evaluated for %s: %.200s", line,
                    eq + 1, q->shape, err.text);
    if (rt_vars_set(&v, line, x)) return refuse(why, why_size, "too many values (at %s)", line);
  }
  for (const char *s = r->constraints; (got = next_line(&s, line, sizeof line)) != 0;) {
    if (got < 0)
      return refuse(why, why_size, "a constraint of its recipe is longer than %zu characters",
                    sizeof line - 1);
    long long holds = 0;
    if (eval(line, &v, &holds, &err))
      return refuse(why, why_size, "constraint %.300s cannot be evaluated for %s: %.200s", line,
                    q->shape, err.text);
    if (!holds) return refuse(why, why_size, "constraint %.300s fails for %s", line, q->shape);
  }
  const db_winner *w = &e->launch;
  const char *exprs[7] = {w->grid[0],  w->grid[1],  w->grid[2], w->block[0],
                          w->block[1], w->block[2], w->smem};
  static const char *const what[7] = {"grid x",  "grid y",  "grid z",       "block x",
                                      "block y", "block z", "shared memory"};
  /* CUDA's limits (manifest_launch holds tuned geometry to the same) */
  static const long long most[7] = {0x7fffffffLL, 65535, 65535, 1024, 1024, 64, 0xffffffffLL};
  long long out[7];
  for (int i = 0; i < 7; i++) {
    if (!exprs[i][0]) return refuse(why, why_size, "no launch expressions are stored with it");
    if (eval(exprs[i], &v, &out[i], &err))
      return refuse(why, why_size, "its %s %.200s cannot be evaluated for %s: %.200s", what[i],
                    exprs[i], q->shape, err.text);
    if (out[i] < (i < 6 ? 1 : 0) || out[i] > most[i])
      return refuse(why, why_size, "its %s would be %lld for %s, outside CUDA's 1..%lld", what[i],
                    out[i], q->shape, most[i]);
  }
  if (out[3] * out[4] * out[5] > 1024)
    return refuse(why, why_size, "its block of %lld threads is over CUDA's 1024",
                  out[3] * out[4] * out[5]);
  for (int k = 0; k < 3; k++) {
    grid[k] = (unsigned)out[k];
    block[k] = (unsigned)out[3 + k];
  }
  *smem = (unsigned)out[6];
  return 1;
}
