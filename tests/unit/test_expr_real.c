/* test_expr_real.c — real expressions (expr_parse_real), what a declared family's float
 * scalars are written in: fractions and exponents, exact division, sqrt, names as their
 * integer values, short-circuit and the conditional; division by zero, sqrt of a negative
 * value and a result that is not finite are evaluation errors with the column; % and the
 * integer functions are refused in them, and a fraction, an exponent or sqrt in an integer
 * expression is refused with a message that says where floating point belongs. */
/* stages: template */
#include "test.h"
#include "template/expr.h"

static expr_scope *scope(void) {
  expr_scope *sc = expr_scope_new();
  expr_scope_add(sc, "COLS", 0, NULL);
  expr_scope_add(sc, "ROWS", 0, NULL);
  return sc;
}

static double real(const char *text, rt_status *st, rt_error *err) {
  expr_scope *sc = scope();
  expr *e = NULL;
  double v = NAN;
  long long slots[2] = {1024, 3};
  rt_error_clear(err);
  *st = expr_parse_real(text, sc, &e, err);
  if (!*st) *st = expr_eval_real(e, slots, &v, err);
  expr_free(e);
  expr_scope_free(sc);
  return v;
}

TEST_CASE(valid) {
  static const struct {
    const char *text;
    double want;
  } ok[] = {
      {"0.25", 0.25},
      {".5", 0.5},
      {"1e-3", 1e-3},
      {"2.5E2", 250},
      {"1/3", 1.0 / 3}, /* exact division */
      {"1/COLS", 1.0 / 1024},
      {"0.5*COLS + ROWS", 515},
      {"sqrt(2)/2", 0.70710678118654752},
      {"-0.044715 * 2", -0.08943},
      {"min(0.5, 1, ROWS)", 0.5},
      {"max(abs(-1.5), 1)", 1.5},
      {"ROWS > 2 ? 0.1 : 0.2", 0.1},
      {"ROWS > 2 && 1/COLS > 0", 1},
      {"0 && 1/0", 0}, /* short-circuit */
      {"7", 7},
  };
  rt_error err = {0};
  rt_status st;
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    double v = real(ok[i].text, &st, &err);
    if (st) fprintf(stderr, "%s: %s\n", ok[i].text, err.text);
    CHECK_INT(st, RT_OK);
    CHECK_NEAR(v, ok[i].want, 1e-12 * fabs(ok[i].want) + 1e-15);
  }
}

TEST_CASE(invalid) {
  rt_status st;
  rt_error err = {0};
  static const struct {
    const char *text, *want;
    int column;
  } bad[] = {
      {"1/0", "division by zero", 2},
      {"1/(COLS-1024)", "division by zero", 2},
      {"sqrt(-1)", "sqrt of a negative", 1},
      {"1e308*10", "not a finite number", 6},
      {"1e400", "too large", 1},
      {"5 % 2", "% takes integers", 3},
      {"ceil_div(5, 2)", "ceil_div takes integers", 1},
      {"pow2(3)", "pow2 takes integers", 1},
      {"0.25.5", "bad number", 1},
      {"2x", "bad number", 1},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    real(bad[i].text, &st, &err);
    CHECK_INT(st, RT_ERR_EXPR);
    CHECK_CONTAINS(err.text, bad[i].want);
    CHECK_INT(err.column, bad[i].column);
  }
}

TEST_CASE(integer_errors) {
  rt_error err = {0};
  /* in an integer expression */
  const char *int_bad[][2] = {{"0.25", "0.25 is not an integer"},
                              {"COLS*1e3", "1e3 is not an integer"},
                              {"sqrt(4)", "sqrt is for a float scalar"},
                              {".5", ".5 is not an integer"}};
  for (size_t i = 0; i < sizeof int_bad / sizeof int_bad[0]; i++) {
    expr_scope *sc = scope();
    expr *e = NULL;
    rt_error_clear(&err);
    CHECK_INT(expr_parse(int_bad[i][0], sc, &e, &err), RT_ERR_EXPR);
    CHECK_CONTAINS(err.text, int_bad[i][1]);
    expr_free(e);
    expr_scope_free(sc);
  }
}

TEST_CASE(integer_stays) {
  rt_error err = {0};
  /* an integer expression still is one, and a real one is not evaluated as an integer */
  long long v = 0;
  CHECK_INT(expr_eval_text("7/2", 0, NULL, NULL, &v, &err), RT_OK);
  CHECK_INT(v, 3);
  expr_scope *sc = scope();
  expr *e = NULL;
  CHECK_INT(expr_parse_real("0.5", sc, &e, &err), RT_OK);
  CHECK_INT(expr_eval(e, NULL, &v, &err), RT_ERR_EXPR);
  CHECK_INT(expr_constant(e, &v), 0);
  expr_free(e);
  expr_scope_free(sc);
}

TEST_LIST(TEST_ENTRY(valid), TEST_ENTRY(invalid), TEST_ENTRY(integer_errors),
          TEST_ENTRY(integer_stays))
