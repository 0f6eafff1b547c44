/* test_space_large.c — the benchmark's large manifest (a product of 1.06e8) built by
 * backtracking equals a brute-force walk over the whole product: same count, same order.
 *
 * The brute force shares nothing with manifest_build_space but the expression evaluator: it
 * compiles the manifest's texts in its own scope and evaluates every derived value and every
 * constraint (stopping at the first false one) for every combination, last parameter fastest.
 */
/* stages: model */
#include <stdint.h>

#include "test.h"
#include "template/expr.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"

int main(void) {
  char path[1100];
  snprintf(path, sizeof path, "%s/tests/data/manifests/large/bench_gemm.json", test_source_dir());
  manifest *m;
  rt_error err = {0};
  CHECK_INT(manifest_load(path, &m, &err), RT_OK);
  if (!m) return test_done();
  rt_vars env;
  rt_vars_clear(&env);
  rt_vars_set(&env, "M", 4096);
  rt_vars_set(&env, "N", 4096);
  rt_vars_set(&env, "K", 4096);
  manifest_env_dtype("f16", &env, NULL);
  gpu_spec_env(arch_spec_find("sm_90"), gpu_spec_find("h200"), &env, NULL);
  space *sp;
  CHECK_INT(manifest_build_space(m, &env, &sp, &err), RT_OK);
  if (!sp) return test_done();

  int np = manifest_nparams(m), nd = manifest_nderived(m), nc = manifest_nconstraints(m);
  expr_scope *sc = expr_scope_new();
  for (int i = 0; i < np; i++) {
    const space_param *p = manifest_param(m, i);
    expr_scope_add(sc, p->name, p->idents ? p->count : 0, (const char *const *)p->idents);
  }
  for (int i = 0; i < env.count; i++) expr_scope_add(sc, env.names[i], 0, NULL);
  expr *dx[16], *cx[64];
  int dslot[16];
  for (int i = 0; i < nd; i++) {
    CHECK_INT(expr_parse(manifest_derived_text(m, i), sc, &dx[i], NULL), RT_OK);
    dslot[i] = expr_scope_add(sc, manifest_derived_name(m, i), 0, NULL);
  }
  for (int i = 0; i < nc; i++)
    CHECK_INT(expr_parse(manifest_constraint(m, i), sc, &cx[i], NULL), RT_OK);
  long long vals[256] = {0};
  for (int i = 0; i < env.count; i++) vals[expr_scope_find(sc, env.names[i])] = env.values[i];

  uint16_t cfg[64] = {0};
  size_t found = 0, out_of_order = 0;
  double product = 0;
  for (;;) {
    product++;
    for (int i = 0; i < np; i++) {
      const space_param *p = manifest_param(m, i);
      vals[i] = p->ints ? p->ints[cfg[i]] : cfg[i];
    }
    for (int i = 0; i < nd; i++) expr_eval(dx[i], vals, &vals[dslot[i]], NULL);
    int ok = 1;
    for (int i = 0; i < nc && ok; i++) {
      long long r = 0;
      if (expr_eval(cx[i], vals, &r, NULL)) r = 0;
      ok = r != 0;
    }
    if (ok) {
      const uint16_t *got = space_config(sp, found);
      if (!got || memcmp(got, cfg, (size_t)np * sizeof *cfg) != 0) out_of_order++;
      found++;
    }
    int i = np - 1;
    while (i >= 0 && ++cfg[i] == manifest_param(m, i)->count) cfg[i--] = 0;
    if (i < 0) break;
  }
  printf("brute force: %zu valid of %.0f; backtracking: %zu\n", found, product, space_size(sp));
  CHECK_NEAR(product, space_product(sp), 0);
  CHECK(product >= 1e8);
  CHECK_INT(found, space_size(sp));
  CHECK(found >= 1000000);
  CHECK_INT(out_of_order, 0);
  for (int i = 0; i < nd; i++) expr_free(dx[i]);
  for (int i = 0; i < nc; i++) expr_free(cx[i]);
  expr_scope_free(sc);
  space_free(sp);
  manifest_free(m);
  return test_done();
}
