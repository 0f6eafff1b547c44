/* fuzz_expr.c — the expression parser and evaluator (template/expr.h): any text parses or
 * fails with an error, and what parses evaluates or fails with an error, in an open scope (a
 * manifest's: unknown names become slots) and a closed one. */
#include "fuzz_util.h"
#include "template/expr.h"

static void run(const char *text, int open) {
  expr_scope *sc = expr_scope_new();
  const char *layouts[] = {"row", "col"}, *kinds[] = {"col", "tile", "row"};
  expr_scope_add(sc, "BLOCK_M", 0, NULL);
  expr_scope_add(sc, "LAYOUT", 2, layouts);
  expr_scope_add(sc, "KIND", 3, kinds);
  expr_scope_add(sc, "M", 0, NULL);
  expr_scope_add(sc, "device.sm_count", 0, NULL);
  expr_scope_set_open(sc, open);
  expr *e = NULL;
  rt_error err = {0};
  if (expr_parse(text, sc, &e, &err) == RT_OK) {
    int n = expr_scope_count(sc);
    long long *slots = calloc((size_t)n + 1, sizeof *slots);
    for (int i = 0; i < n; i++) slots[i] = (i % 3 == 0) ? 0 : (i % 3 == 1) ? 128 : -7;
    long long out = 0;
    expr_eval(e, slots, &out, &err);
    for (int i = 0; i < n; i++) slots[i] = i == 0 ? 9223372036854775807LL : 1;
    expr_eval(e, slots, &out, &err);
    int count = 0;
    expr_slots(e, &count);
    expr_constant(e, &out);
    free(slots);
  }
  expr_free(e);
  expr_scope_free(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  run(text, 1);
  run(text, 0);
  free(text);
  return 0;
}
