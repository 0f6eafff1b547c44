/* test_expr_limits.c — the expression language's stated limits, enforced where an expression
 * enters (expr_parse), as errors and never a crash:
 *   - a text longer than EXPR_TEXT_MAX characters is refused with its length;
 *   - a syntax tree deeper than EXPR_HEIGHT_MAX operators is refused, whether the depth comes
 *     from parentheses or from a long chain of left-associative operators (a derived value of
 *     ~130k terms once overflowed the stack of the name resolver, which recursed per term);
 *   - the limits themselves are accepted (a limit that refuses what it states is a bug too). */
/* stages: template */
#include "test.h"
#include "template/expr.h"

/* "1+1+...+1" with n terms (malloc'ed). */
static char *chain(size_t n, const char *term, const char *op) {
  size_t lt = strlen(term), lo = strlen(op);
  char *s = malloc(n * (lt + lo) + 1);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (i) memcpy(s + k, op, lo), k += lo;
    memcpy(s + k, term, lt), k += lt;
  }
  s[k] = '\0';
  return s;
}

static rt_status parse(const char *text, rt_error *err) {
  expr_scope *sc = expr_scope_new();
  expr_scope_add(sc, "A", 0, NULL);
  expr *e = NULL;
  rt_error_clear(err);
  rt_status s = expr_parse(text, sc, &e, err);
  expr_free(e);
  expr_scope_free(sc);
  return s;
}

TEST_CASE(huge_chain_refused) {
  rt_error err;
  char *t = chain(130000, "A", "+"); /* what once overflowed the stack */
  CHECK_INT(parse(t, &err), RT_ERR_EXPR);
  CHECK_CONTAINS(err.text, "too long");
  CHECK_CONTAINS(err.text, "259999 characters");
  free(t);
}

TEST_CASE(length_limit) {
  rt_error err;
  /* exactly the limit: "1+1+...+1" of EXPR_TEXT_MAX characters is too deep, so use a number */
  char *t = malloc(EXPR_TEXT_MAX + 2);
  memset(t, ' ', EXPR_TEXT_MAX);
  t[EXPR_TEXT_MAX - 1] = '7';
  t[EXPR_TEXT_MAX] = '\0';
  CHECK_INT(parse(t, &err), RT_OK);
  t[EXPR_TEXT_MAX] = ' ';
  t[EXPR_TEXT_MAX + 1] = '\0';
  CHECK_INT(parse(t, &err), RT_ERR_EXPR);
  CHECK_CONTAINS(err.text, "too long");
  free(t);
}

TEST_CASE(height_limit) {
  rt_error err;
  /* a left-associative chain: each operator is one level of the tree */
  char *ok = chain(EXPR_HEIGHT_MAX, "A", "*"); /* EXPR_HEIGHT_MAX - 1 operators */
  char *deep = chain(EXPR_HEIGHT_MAX + 2, "A", "-");
  CHECK_INT(parse(ok, &err), RT_OK);
  CHECK_INT(parse(deep, &err), RT_ERR_EXPR);
  CHECK_CONTAINS(err.text, "nested too deeply");
  free(ok);
  free(deep);
  /* a call is one level above its deepest argument */
  char *arg = chain(EXPR_HEIGHT_MAX, "A", "+");
  char *call = malloc(strlen(arg) + 16);
  sprintf(call, "max(%s, A)", arg);
  CHECK_INT(parse(call, &err), RT_ERR_EXPR);
  CHECK_CONTAINS(err.text, "nested too deeply");
  free(arg);
  free(call);
  /* conditionals nest to the right */
  char *cond = chain(EXPR_HEIGHT_MAX, "A?1", ":");
  char *c2 = malloc(strlen(cond) + 4);
  sprintf(c2, "%s:0", cond);
  CHECK_INT(parse(c2, &err), RT_ERR_EXPR);
  CHECK_CONTAINS(err.text, "nested too deeply");
  free(cond);
  free(c2);
}

TEST_CASE(evaluates_at_the_limit) {
  /* the deepest accepted tree also evaluates (its stack need stays within the program's) */
  char *t = chain(EXPR_HEIGHT_MAX, "A", "+");
  const char *names[] = {"A"};
  long long v[] = {3}, out = 0;
  rt_error err = {0};
  CHECK_INT(expr_eval_text(t, 1, names, v, &out, &err), RT_OK);
  CHECK_INT(out, 3LL * EXPR_HEIGHT_MAX);
  free(t);
}

TEST_LIST(TEST_ENTRY(huge_chain_refused), TEST_ENTRY(length_limit), TEST_ENTRY(height_limit),
          TEST_ENTRY(evaluates_at_the_limit))
