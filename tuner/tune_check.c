/* tune_check.c — the problem a device that runs kernels from their source (the sim) checks
 * candidates on: the problem itself, or, when it is too large for the CPU, a smaller one that
 * keeps what a configuration depends on.  Each dimension over TUNE_CHECK_DIM becomes
 * TUNE_CHECK_DIM/2 plus its remainder mod 256 (so every tile of up to 256 that divides 256 has
 * the same remainder: partial tiles stay partial, whole ones whole), raised by 256 where needed
 * to keep the dimensions' order (SQ < SKV stays so); the rest of the shape (batch, heads, head
 * dimension, layout, causal, pages, the epilogue) and each sequence's KV length (by the same
 * map) are kept.  Each candidate is planned again for it (its grid, splits and derived values)
 * and its source made for that plan; a configuration the smaller problem does not admit is not
 * checked and so cannot win. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/expr.h"
#include "tuner/tune_impl.h"

#define TUNE_CHECK_FLOPS 4e7          /* more than this is too much for the sim's CPU */
#define TUNE_CHECK_BYTES (64.0 * 1e6) /* compulsory bytes likewise */
#define TUNE_CHECK_DIM   512          /* dimensions over this shrink */

/* The numbers over TUNE_CHECK_DIM of both texts, shrunk together (the order kept). */
typedef struct check_map {
  long long from[256], to[256];
  int n;
} check_map;

static int cmp_ll(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return x < y ? -1 : x > y;
}

static void map_collect(check_map *m, const char *t) {
  for (const char *p = t; *p;) {
    if (!isdigit((unsigned char)*p)) {
      p++;
      continue;
    }
    char *end;
    long long v = strtoll(p, &end, 10);
    p = end;
    if (v <= TUNE_CHECK_DIM || m->n >= 256) continue;
    int seen = 0;
    for (int i = 0; i < m->n; i++) seen |= m->from[i] == v;
    if (!seen) m->from[m->n++] = v;
  }
}

static void map_make(check_map *m) {
  qsort(m->from, (size_t)m->n, sizeof m->from[0], cmp_ll);
  for (int i = 0; i < m->n; i++) {
    long long v = TUNE_CHECK_DIM / 2 + m->from[i] % 256;
    while (i > 0 && v <= m->to[i - 1]) v += 256;
    m->to[i] = v;
  }
}

/* T with every mapped number replaced, into out; 0 when it does not fit. */
static int map_apply(const check_map *m, const char *t, char *out, size_t size) {
  size_t n = 0;
  for (const char *p = t; *p;) {
    if (!isdigit((unsigned char)*p)) {
      if (n + 1 >= size) return 0;
      out[n++] = *p++;
      continue;
    }
    char *end;
    long long v = strtoll(p, &end, 10);
    for (int i = 0; i < m->n; i++)
      if (m->from[i] == v) v = m->to[i];
    int w = snprintf(out + n, size - n, "%lld", v);
    if (w < 0 || (size_t)w >= size - n) return 0;
    n += (size_t)w;
    p = end;
  }
  out[n] = '\0';
  return 1;
}

rt_status tune_check_problem(tune_ctx *c, rt_error *err) {
  c->have_check = 0;
  if (!c->fam || !device_has(c->dev, DEVICE_CAP_SOURCE)) return RT_OK;
  const problem *p = &c->prob;
  if (c->fam->flops(c->fam, p) <= TUNE_CHECK_FLOPS &&
      c->fam->min_bytes(c->fam, p) <= TUNE_CHECK_BYTES)
    return RT_OK;
  check_map m = {0};
  map_collect(&m, p->shape);
  map_collect(&m, p->args);
  if (!m.n) return RT_OK; /* nothing to shrink: checked as it is */
  map_make(&m);
  char shape[sizeof p->shape], *args = malloc(sizeof p->args);
  if (!args) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  rt_error perr = {0};
  rt_status rc = RT_ERR_INVALID;
  if (map_apply(&m, p->shape, shape, sizeof shape) && map_apply(&m, p->args, args, sizeof p->args))
    rc = c->fam->parse_shape(c->fam, shape, p->dtype, args[0] ? args : NULL, &c->check_prob, &perr);
  free(args);
  if (rc) { /* checked at full size: slow, but checked */
    tune_note(c->rep, "the sim checks the full problem (no smaller one parses: %.120s)", perr.text);
    return RT_OK;
  }
  snprintf(c->check_prob.layout, sizeof c->check_prob.layout, "%s", p->layout);
  if ((rc = problem_env(c->fam, &c->check_prob, arch_spec_find(device_arch(c->dev)),
                        device_spec(c->dev), &c->check_env, err)))
    return rc;
  if (device_sm_count(c->dev) > 0)
    rt_vars_set(&c->check_env, "device.sm_count", device_sm_count(c->dev));
  c->have_check = 1;
  snprintf(c->rep->checked_shape, sizeof c->rep->checked_shape, "%s", c->check_prob.shape);
  tune_note(c->rep,
            "outputs checked on the sim at %s, a smaller problem with the same tile remainders "
            "(mod 256), options and layout: %s is too large for the CPU",
            c->check_prob.shape, p->shape);
  return RT_OK;
}

rt_status tune_check_env(const tune_ctx *c, const char *dtype, rt_vars *env, rt_error *err) {
  *env = c->check_env;
  return strcmp(dtype, c->prob.dtype) ? manifest_env_dtype(dtype, env, err) : RT_OK;
}

/* RT_ERR_SPACE_EMPTY naming the first of m's constraints that VARS (with ENV) violates. */
static rt_status constraints_hold(const manifest *m, const rt_vars *env, const rt_vars *vars,
                                  rt_error *err) {
  static const char *names[2 * RT_VARS_MAX];
  static long long values[2 * RT_VARS_MAX];
  int n = 0;
  for (int i = 0; i < env->count; i++) names[n] = env->names[i], values[n++] = env->values[i];
  for (int i = 0; i < vars->count; i++) names[n] = vars->names[i], values[n++] = vars->values[i];
  for (int i = 0; i < manifest_nconstraints(m); i++) {
    long long ok = 0;
    rt_error e = {0};
    if (expr_eval_text(manifest_constraint(m, i), n, names, values, &ok, &e) == RT_OK && !ok)
      return rt_error_set(err, RT_ERR_SPACE_EMPTY, "\"%s\" is false", manifest_constraint(m, i));
  }
  return RT_OK;
}

void tune_cand_check(const tune_ctx *c, const tune_search *s, size_t idx, tune_cand *k) {
  if (!c->have_check) return;
  rt_error e = {0};
  rt_status st = manifest_plan(s->m, s->sp, idx, &s->check_env, &k->check_plan, &e);
  if (!st) st = constraints_hold(s->m, &s->check_env, &k->check_plan.vars, &e);
  if (!st)
    st = manifest_config_source(s->m, s->sp, idx, &k->check_plan.vars, s->dtype, s->source,
                                &k->check_source, &e);
  if (st)
    snprintf(k->check_why, sizeof k->check_why,
             "not checked: the configuration does not admit %s, "
             "the shape the sim checks on (%.100s)",
             c->check_prob.shape, e.text);
}
