/* test_cover.c — covering sets (template/cover.h).
 *
 *  - A small space with a value no configuration has and a pair that cannot occur: every value
 *    and pair the space has is in the set, nothing else is asked for, the set is deterministic
 *    and no larger than the items force (here the 6 value pairs of the named pair).
 *  - Every shipped template on the problems tier 1 of tests/gpu/run.sh checks it on (the cover
 *    lines of tests/gpu/tiers.txt): for each, the set holds every value of every varying
 *    parameter and every value pair of the manifest's "cover" pairs that the whole space holds,
 *    checked against the space by brute force, and it stays small (at most 24 configurations:
 *    tier 1 evaluates each on the GPU).  The sizes are printed, for --plan to compare. */
/* stages: kernels */
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"
#include "test.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/cover.h"

/* 1 when the configurations idx[0..n-1] hold every value of every parameter with more than one
 * value in s, and every value pair of each pair, that some configuration of s holds. */
static int covers(const space *s, const size_t *idx, size_t n, const char *const (*pairs)[2],
                  int npairs) {
  const int np = space_nparams(s);
  int ok = 1;
  for (int p = 0; p < np; p++) {
    const int count = space_param_at(s, p)->count;
    for (int v = 0; v < count; v++) {
      int in_space = 0, in_set = 0;
      for (size_t c = 0; c < space_size(s); c++) in_space |= space_config(s, c)[p] == v;
      for (size_t i = 0; i < n; i++) in_set |= space_config(s, idx[i])[p] == v;
      if (in_space && !in_set && count > 1) {
        fprintf(stderr, "value %d of %s is in the space, not in the set\n", v,
                space_param_at(s, p)->name);
        ok = 0;
      }
    }
  }
  for (int k = 0; k < npairs; k++) {
    const int a = space_param_index(s, pairs[k][0]), b = space_param_index(s, pairs[k][1]);
    for (int va = 0; va < space_param_at(s, a)->count; va++)
      for (int vb = 0; vb < space_param_at(s, b)->count; vb++) {
        int in_space = 0, in_set = 0;
        for (size_t c = 0; c < space_size(s); c++)
          in_space |= space_config(s, c)[a] == va && space_config(s, c)[b] == vb;
        for (size_t i = 0; i < n; i++)
          in_set |= space_config(s, idx[i])[a] == va && space_config(s, idx[i])[b] == vb;
        if (in_space && !in_set) {
          fprintf(stderr, "pair %s=%d, %s=%d is in the space, not in the set\n", pairs[k][0], va,
                  pairs[k][1], vb);
          ok = 0;
        }
      }
  }
  return ok;
}

TEST_CASE(small) {
  rt_error err = {0};
  space *s = space_new();
  const long long a[] = {0, 1, 2}, b[] = {0, 1}, c[] = {0, 1, 2, 3}, d[] = {7, 8};
  CHECK_INT(space_add_param(s, "A", 3, a, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "B", 2, b, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "C", 4, c, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "D", 2, d, NULL, &err), RT_OK);
  /* (A=2, B=1) never occurs, C=3 only with A=0, D=8 never */
  for (uint16_t i = 0; i < 3; i++)
    for (uint16_t j = 0; j < 2; j++)
      for (uint16_t k = 0; k < 4; k++) {
        if ((i == 2 && j == 1) || (k == 3 && i != 0)) continue;
        const uint16_t cfg[4] = {i, j, k, 0};
        CHECK_INT(space_add_config(s, cfg, &err), RT_OK);
      }
  CHECK_INT(space_finish(s, &err), RT_OK);
  static const char *const pairs[][2] = {{"A", "B"}};
  size_t *idx = NULL, n = 0, items = 0, *again = NULL, n2 = 0;
  CHECK_INT(space_cover(s, pairs, 1, &idx, &n, &items, &err), RT_OK);
  CHECK(covers(s, idx, n, pairs, 1));
  /* values A 3, B 2, C 4, D 1 (its one value in the space) and 5 (A, B) pairs */
  CHECK_INT(items, 3 + 2 + 4 + 1 + 5);
  CHECK(n >= 5 && n <= 6);
  CHECK_INT(space_cover(s, pairs, 1, &again, &n2, NULL, &err), RT_OK);
  CHECK(n2 == n && !memcmp(idx, again, n * sizeof *idx));
  /* a pair naming no parameter */
  static const char *const wrong[][2] = {{"A", "E"}};
  size_t *none = NULL, n3 = 7;
  CHECK_INT(space_cover(s, wrong, 1, &none, &n3, NULL, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "E");
  CHECK(none == NULL && n3 == 0);
  free(idx);
  free(again);
  space_free(s);
}

/* Tier 1's covering runs: the "cover" lines of tests/gpu/tiers.txt (TIER STEP TARGET SHAPE
 * DTYPE KV_LENS cover), each template compiled for the arch an H200 takes it in (sm_90a when
 * the template lists it, else sm_90). */
TEST_CASE(templates) {
  rt_error err = {0};
  char buf[4096], path[1024], line[1024];
  const char *tpath = catalog_path(buf, sizeof buf);
  CHECK_INT(family_load_path(tpath, &err), RT_OK);
  snprintf(path, sizeof path, "%s/tests/gpu/tiers.txt", test_source_dir());
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  int lines = 0;
  while (f && fgets(line, sizeof line, f)) {
    char tier[8], step[32], tmpl[64], shape[128], dtype[16], lens[256], budget[16];
    if (line[0] == '#' ||
        sscanf(line, "%7s %31s %63s %127s %15s %255s %15s", tier, step, tmpl, shape, dtype, lens,
               budget) != 7 ||
        strcmp(budget, "cover"))
      continue;
    lines++;
    manifest *m = NULL;
    if (catalog_find(tpath, tmpl, &m, &err)) {
      fprintf(stderr, "%s: %s\n", tmpl, err.text);
      CHECK(0);
      continue;
    }
    const char *arch = manifest_has_arch(m, "sm_90a") ? "sm_90a" : "sm_90";
    const family_ops *fam = family_find(manifest_family(m));
    problem p;
    rt_vars env;
    space *s = NULL;
    CHECK(fam != NULL);
    if (!fam || fam->parse_shape(fam, shape, dtype, strcmp(lens, "-") ? lens : NULL, &p, &err) ||
        problem_env(fam, &p, arch_spec_find(arch), gpu_spec_find("h200"), &env, &err) ||
        manifest_build_space(m, &env, &s, &err)) {
      fprintf(stderr, "%s %s %s: %s\n", tmpl, shape, dtype, err.text);
      CHECK(0);
      manifest_free(m);
      continue;
    }
    const int np = manifest_ncover(m);
    const char *pairs[16][2];
    for (int k = 0; k < np && k < 16; k++) manifest_cover_pair(m, k, &pairs[k][0], &pairs[k][1]);
    size_t *idx = NULL, n = 0, items = 0;
    CHECK_INT(space_cover(s, (const char *const(*)[2])pairs, np, &idx, &n, &items, &err), RT_OK);
    CHECK(covers(s, idx, n, (const char *const(*)[2])pairs, np));
    CHECK(n >= 1 && n <= 24);
    /* the cover space holds exactly the chosen configurations */
    space *sub = NULL;
    CHECK_INT(manifest_cover_space(m, s, &sub, &err), RT_OK);
    CHECK(sub && space_size(sub) == n);
    for (size_t i = 0; sub && i < n; i++) CHECK(space_index(sub, space_config(s, idx[i])) >= 0);
    printf("%-16s %-46s %-5s %4zu of %5zu configurations cover %3zu values and pairs\n", tmpl,
           shape, dtype, n, space_size(s), items);
    space_free(sub);
    free(idx);
    space_free(s);
    manifest_free(m);
  }
  if (f) fclose(f);
  CHECK(lines >= 20);
}

TEST_LIST(TEST_ENTRY(small), TEST_ENTRY(templates))
