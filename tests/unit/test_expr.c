/* test_expr.c — the manifest expression language: values, precedence, short-circuit,
 * identifier values, slots, and the column of every parse and evaluation error. */
/* stages: template */
#include "test.h"
#include "template/expr.h"

static const char *const names[] = {"M", "N", "K", "BLOCK_M", "ZERO", "device.sm_count", "NEG"};
static const long long values[] = {1000, 64, 4096, 128, 0, 132, -7};
#define NNAMES 7

static long long ev(const char *text) {
  long long v = -999999;
  rt_error err;
  rt_error_clear(&err);
  rt_status s = expr_eval_text(text, NNAMES, names, values, &v, &err);
  if (s) fprintf(stderr, "%s: column %d: %s\n", text, err.column, err.text);
  CHECK_INT(s, RT_OK);
  return v;
}

/* Expects an error at column col whose text contains what. */
static void bad(const char *text, int col, const char *what) {
  long long v;
  rt_error err;
  rt_error_clear(&err);
  rt_status s = expr_eval_text(text, NNAMES, names, values, &v, &err);
  CHECK_INT(s, RT_ERR_EXPR);
  if (err.column != col) fprintf(stderr, "for \"%s\" (%s):\n", text, err.text);
  CHECK_INT(err.column, col);
  CHECK_CONTAINS(err.text, what);
}

TEST_CASE(arithmetic) {
  CHECK_INT(ev("1 + 2 * 3"), 7);
  CHECK_INT(ev("(1 + 2) * 3"), 9);
  CHECK_INT(ev("10 - 4 - 3"), 3);
  CHECK_INT(ev("100 / 10 / 5"), 2);
  CHECK_INT(ev("-7 / 2"), -3);
  CHECK_INT(ev("-7 % 2"), -1);
  CHECK_INT(ev("0x40 + 010"), 74);
  CHECK_INT(ev("- -3"), 3);
  CHECK_INT(ev("+3"), 3);
  CHECK_INT(ev("!0 + !5"), 1);
  CHECK_INT(ev("1 < 2 == 1"), 1);
  CHECK_INT(ev("2 <= 2"), 1);
  CHECK_INT(ev("3 > 2 && 2 >= 3"), 0);
  CHECK_INT(ev("0 || 7"), 1);
  CHECK_INT(ev("5 && 7"), 1);
  CHECK_INT(ev("1 != 1 || 2 == 2 && 0"), 0); /* && binds tighter */
  CHECK_INT(ev("1 + 2 < 4"), 1);
  CHECK_INT(ev("M % BLOCK_M == 0"), 0);
  CHECK_INT(ev("ceil_div(M, BLOCK_M)"), 8);
  CHECK_INT(ev("ceil_div(1024, 128)"), 8);
  CHECK_INT(ev("ceil_div(-7, 2)"), -3);
  CHECK_INT(ev("ceil_div(7, -2)"), -3);
  CHECK_INT(ev("ceil_div(-7, -2)"), 4);
  CHECK_INT(ev("round_up(M, 64)"), 1024);
  CHECK_INT(ev("min(3, 1, 2)"), 1);
  CHECK_INT(ev("max(N, K, M)"), 4096);
  CHECK_INT(ev("abs(NEG)"), 7);
  CHECK_INT(ev("is_pow2(N) + is_pow2(M) + is_pow2(0)"), 1);
  CHECK_INT(ev("log2(4096) + pow2(3)"), 20);
  CHECK_INT(ev("device.sm_count * 2"), 264);
  CHECK_INT(ev("ZERO ? 1 : 2"), 2);
  CHECK_INT(ev("N ? 1 : ZERO ? 2 : 3"), 1);
  CHECK_INT(ev("ZERO ? 1 : ZERO ? 2 : 3"), 3);
  CHECK_INT(ev("2 * M * N * K"), 2LL * 1000 * 64 * 4096);
  CHECK_INT(ev("9223372036854775807"), 9223372036854775807LL);
}

TEST_CASE(short_circuit) {
  /* short-circuit: the side not needed is not evaluated, so no division by zero */
  CHECK_INT(ev("ZERO != 0 && M / ZERO > 1"), 0);
  CHECK_INT(ev("ZERO == 0 || M / ZERO > 1"), 1);
  CHECK_INT(ev("ZERO ? M / ZERO : 5"), 5);
  CHECK_INT(ev("  M\t+\nN "), 1064);
}

TEST_CASE(eval_errors) {
  /* evaluation errors point at the operator */
  bad("M / ZERO", 3, "division by zero");
  bad("1 + M % ZERO", 7, "remainder by zero");
  bad("ceil_div(M, ZERO)", 1, "division by zero");
  bad("9223372036854775807 + 1", 21, "overflow");
  bad("-9223372036854775807 - 2", 22, "overflow");
  bad("M * 9223372036854775807", 3, "overflow");
  bad("log2(ZERO)", 1, "log2");
  bad("pow2(63)", 1, "pow2");
}

TEST_CASE(parse_errors) {
  /* parse errors */
  bad("M +", 4, "expected a value at the end");
  bad("M + * N", 5, "expected a value");
  bad("(M + N", 7, "expected ')' to close the '(' at column 1");
  bad("M N", 3, "unexpected 'N'");
  bad("M = N", 3, "'=' is not an operator");
  bad("BLOCK_MM > 1", 1,
      "unknown name BLOCK_MM; names are: M, N, K, BLOCK_M, ZERO, device.sm_count, NEG");
  bad("1 + device.smem", 5, "unknown name device.smem");
  bad("floor(M)", 1, "unknown function floor; functions are: min, max, ceil_div");
  bad("M + ceil_div(M)", 5, "ceil_div takes 2 arguments, got 1");
  bad("min(M)", 1, "min takes at least 2 arguments, got 1");
  bad("min(M N)", 7, "expected ',' or ')'");
  bad("12ab", 1, "bad number");
  bad("99999999999999999999", 1, "too large");
  bad("M $ N", 3, "unexpected '$'");
  bad("M ? N", 6, "expected ':' for the '?' at column 3");
  bad("", 1, "expected a value");
  char deep[400];
  memset(deep, '(', 300);
  strcpy(deep + 300, "1");
  bad(deep, 101, "nested too deeply");
}

TEST_CASE(scopes) {
  /* identifier values, slots, open scopes */
  expr_scope *sc = expr_scope_new();
  const char *const lay_b[] = {"row", "col"}, *const lay_a[] = {"col", "row"};
  const char *const modes[] = {"plain", "col"};
  CHECK_INT(expr_scope_add(sc, "BM", 0, NULL), 0);
  CHECK_INT(expr_scope_add(sc, "LAYOUT_B", 2, lay_b), 1);
  CHECK_INT(expr_scope_add(sc, "LAYOUT_A", 2, lay_a), 2);
  CHECK_INT(expr_scope_add(sc, "BM", 0, NULL), -1);
  CHECK_INT(expr_scope_find(sc, "LAYOUT_A"), 2);
  long long slots[8] = {64, 1, 1, 0, 0, 0, 0, 0}; /* BM=64, LAYOUT_B=col, LAYOUT_A=row */
  expr *e;
  long long v;
  rt_error err;
  CHECK_INT(expr_parse("LAYOUT_B == col && col == LAYOUT_B", sc, &e, NULL), RT_OK);
  CHECK_INT(expr_eval(e, slots, &v, NULL), RT_OK);
  CHECK_INT(v, 1);
  expr_free(e);
  /* col is position 1 of LAYOUT_B but position 0 of LAYOUT_A: each comparison uses its own */
  CHECK_INT(expr_parse("LAYOUT_A == row && LAYOUT_A != col", sc, &e, NULL), RT_OK);
  CHECK_INT(expr_eval(e, slots, &v, NULL), RT_OK);
  CHECK_INT(v, 1);
  int n;
  const int *used = expr_slots(e, &n);
  CHECK_INT(n, 1);
  CHECK_INT(used[0], 2);
  expr_free(e);
  rt_error_clear(&err);
  CHECK_INT(expr_parse("BM + col", sc, &e, &err), RT_ERR_EXPR);
  CHECK_INT(err.column, 6);
  CHECK_CONTAINS(err.text, "ambiguous");
  rt_error_clear(&err);
  CHECK_INT(expr_parse("LAYOUT_B == diag", sc, &e, &err), RT_ERR_EXPR);
  CHECK_INT(err.column, 13);
  CHECK_CONTAINS(err.text, "diag is not a value of LAYOUT_B; values are: row, col");
  CHECK_INT(expr_scope_add(sc, "MODE", 2, modes), 3);
  rt_error_clear(&err);
  CHECK_INT(expr_parse("LAYOUT_B == plain", sc, &e, &err), RT_ERR_EXPR);
  CHECK_CONTAINS(err.text, "plain is not a value of LAYOUT_B");
  CHECK_INT(expr_parse("plain + 1", sc, &e, NULL), RT_OK); /* unambiguous: position 0 */
  CHECK_INT(expr_constant(e, &v), 1);
  CHECK_INT(v, 1);
  expr_free(e);
  /* an open scope learns external names after the declared ones */
  expr_scope_set_open(sc, 1);
  CHECK_INT(expr_parse("BM * dtype_bytes <= device.smem_per_block_optin + BM", sc, &e, NULL),
            RT_OK);
  CHECK_INT(expr_scope_count(sc), 6);
  CHECK_STR(expr_scope_name(sc, 4), "dtype_bytes");
  CHECK_STR(expr_scope_name(sc, 5), "device.smem_per_block_optin");
  used = expr_slots(e, &n);
  CHECK_INT(n, 3);
  CHECK(used[0] == 0 && used[1] == 4 && used[2] == 5);
  CHECK_INT(expr_constant(e, &v), 0);
  slots[4] = 2;
  slots[5] = 100;
  CHECK_INT(expr_eval(e, slots, &v, NULL), RT_OK);
  CHECK_INT(v, 1); /* 128 <= 164 */
  slots[5] = 10;
  CHECK_INT(expr_eval(e, slots, &v, NULL), RT_OK);
  CHECK_INT(v, 0); /* 128 <= 74 */
  CHECK_STR(expr_text(e), "BM * dtype_bytes <= device.smem_per_block_optin + BM");
  expr_free(e);
  char list[64];
  expr_scope_list(sc, 4, list, sizeof list);
  CHECK_STR(list, "dtype_bytes, device.smem_per_block_optin");
  expr_scope_free(sc);
}

TEST_CASE(token_soup) {
  long long v;
  rt_error err;
  /* random token soup never crashes: every text parses or fails with a column inside it, and
   * every parsed program evaluates or fails with a column inside it */
  static const char *const toks[] = {"M",
                                     "N",
                                     "ZERO",
                                     "NEG",
                                     "device.sm_count",
                                     "0",
                                     "1",
                                     "7",
                                     "9223372036854775807",
                                     "+",
                                     "-",
                                     "*",
                                     "/",
                                     "%",
                                     "==",
                                     "!=",
                                     "<",
                                     "<=",
                                     ">",
                                     ">=",
                                     "&&",
                                     "||",
                                     "!",
                                     "?",
                                     ":",
                                     "(",
                                     ")",
                                     ",",
                                     "min(",
                                     "max(",
                                     "ceil_div(",
                                     "log2(",
                                     "pow2(",
                                     "abs(",
                                     " ",
                                     "=",
                                     "$",
                                     "x.",
                                     "0x",
                                     "Q"};
  unsigned seed = 12345;
  int parsed = 0, evaluated = 0, bad_col = 0;
  for (int i = 0; i < 20000; i++) {
    char text[256] = "";
    int ntok = 1 + i % 12;
    for (int t = 0; t < ntok; t++) {
      seed = seed * 1103515245u + 12345u;
      strcat(text, toks[(seed >> 16) % (sizeof toks / sizeof toks[0])]);
    }
    int len = (int)strlen(text);
    rt_error_clear(&err);
    rt_status s = expr_eval_text(text, NNAMES, names, values, &v, &err);
    if (s == RT_OK) {
      parsed++;
      evaluated++;
    } else {
      CHECK_INT(s, RT_ERR_EXPR);
      if (err.column < 1 || err.column > len + 1) bad_col++;
      if (strstr(err.text, "by zero") || strstr(err.text, "overflow") ||
          strstr(err.text, "log2 ") || strstr(err.text, "pow2 needs"))
        parsed++;
    }
  }
  CHECK_INT(bad_col, 0);
  CHECK(evaluated > 100); /* the soup is not all syntax errors */
  printf("random expressions: %d of 20000 parsed, %d evaluated\n", parsed, evaluated);
}

TEST_LIST(TEST_ENTRY(arithmetic), TEST_ENTRY(short_circuit), TEST_ENTRY(eval_errors),
          TEST_ENTRY(parse_errors), TEST_ENTRY(scopes), TEST_ENTRY(token_soup))
