/* test_manifest.c — data-driven manifest tests, like Jansson's test suites.
 *
 * tests/data/manifests/valid/NAME.json load, and the space manifest_build_space builds by
 * backtracking equals a brute-force enumeration of the whole product (every derived value and
 * constraint evaluated for every combination, in lexicographic order); every configuration's
 * vars, launch, cost and source prefix evaluate.  tests/data/manifests/invalid/NAME.json fail
 * with exactly the line in NAME.expected (rt_error_format, the folder stripped from the path),
 * at load or, for errors that need the problem, when the space is built.  Set
 * ROOFTUNE_WRITE_EXPECTED=1 to write missing .expected files (then read them before committing).
 */
/* stages: kernels */
#include <dirent.h>
#include <stdint.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/gemm.h"
#include "test.h"
#include "template/expr.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"

static void make_env(rt_vars *env) {
  rt_vars_clear(env);
  rt_vars_set(env, "M", 512);
  rt_vars_set(env, "N", 512);
  rt_vars_set(env, "K", 512);
  rt_vars_set(env, "BATCH", 1);
  CHECK_INT(manifest_env_dtype("f16", env, NULL), RT_OK);
  CHECK_INT(gpu_spec_env(arch_spec_find("sm_90"), gpu_spec_find("h200"), env, NULL), RT_OK);
}

/* Brute force: the valid configurations in lexicographic order, as value-index tuples. */
static size_t brute_force(const manifest *m, const rt_vars *env, uint16_t **out) {
  int np = manifest_nparams(m), nd = manifest_nderived(m), nc = manifest_nconstraints(m);
  expr_scope *sc = expr_scope_new();
  for (int i = 0; i < np; i++) {
    const space_param *p = manifest_param(m, i);
    expr_scope_add(sc, p->name, p->idents ? p->count : 0, (const char *const *)p->idents);
  }
  expr **dx = calloc((size_t)nd + 1, sizeof *dx), **cx = calloc((size_t)nc + 1, sizeof *cx);
  int *dslot = calloc((size_t)nd + 1, sizeof(int));
  for (int i = 0; i < env->count; i++) expr_scope_add(sc, env->names[i], 0, NULL);
  for (int i = 0; i < nd; i++) {
    CHECK_INT(expr_parse(manifest_derived_text(m, i), sc, &dx[i], NULL), RT_OK);
    dslot[i] = expr_scope_add(sc, manifest_derived_name(m, i), 0, NULL);
  }
  for (int i = 0; i < nc; i++)
    CHECK_INT(expr_parse(manifest_constraint(m, i), sc, &cx[i], NULL), RT_OK);
  long long vals[256] = {0};
  for (int i = 0; i < env->count; i++) vals[expr_scope_find(sc, env->names[i])] = env->values[i];
  double prod = 1;
  for (int i = 0; i < np; i++) prod *= manifest_param(m, i)->count;
  uint16_t *res = malloc((size_t)prod * (size_t)np * sizeof *res);
  uint16_t cfg[64] = {0};
  size_t n = 0;
  for (;;) {
    for (int i = 0; i < np; i++) {
      const space_param *p = manifest_param(m, i);
      vals[i] = p->ints ? p->ints[cfg[i]] : cfg[i];
    }
    int ok = 1;
    for (int i = 0; i < nd; i++) CHECK_INT(expr_eval(dx[i], vals, &vals[dslot[i]], NULL), RT_OK);
    for (int i = 0; i < nc && ok; i++) {
      long long r;
      CHECK_INT(expr_eval(cx[i], vals, &r, NULL), RT_OK);
      ok = r != 0;
    }
    if (ok) memcpy(res + n++ * (size_t)np, cfg, (size_t)np * sizeof *cfg);
    int i = np - 1; /* odometer: the last parameter moves fastest */
    while (i >= 0 && ++cfg[i] == manifest_param(m, i)->count) cfg[i--] = 0;
    if (i < 0) break;
  }
  for (int i = 0; i < nd; i++) expr_free(dx[i]);
  for (int i = 0; i < nc; i++) expr_free(cx[i]);
  free(dx);
  free(cx);
  free(dslot);
  expr_scope_free(sc);
  *out = res;
  return n;
}

/* Checks one manifest against brute force for env; returns the space size (0: empty space,
 * which only `allow_empty` accepts). */
static size_t check_valid_env(const char *path, const rt_vars *env, int allow_empty);

static void check_valid(const char *path, const rt_vars *env) { check_valid_env(path, env, 0); }

static size_t check_valid_env(const char *path, const rt_vars *env, int allow_empty) {
  manifest *m;
  rt_error err;
  rt_error_clear(&err);
  rt_status s = manifest_load(path, &m, &err);
  if (s) {
    char line[1024];
    rt_error_format(&err, line, sizeof line);
    fprintf(stderr, "%s\n", line);
  }
  CHECK_INT(s, RT_OK);
  if (s) return 0;
  space *sp;
  s = manifest_build_space(m, env, &sp, &err);
  if (s == RT_ERR_SPACE_EMPTY && allow_empty) {
    uint16_t *none;
    CHECK_INT(brute_force(m, env, &none), 0);
    free(none);
    manifest_free(m);
    return 0;
  }
  CHECK_INT(s, RT_OK);
  if (s) {
    fprintf(stderr, "%s: %s\n", path, err.text);
    manifest_free(m);
    return 0;
  }
  uint16_t *want;
  size_t n = brute_force(m, env, &want);
  int np = manifest_nparams(m);
  printf("%s: %zu of %.0f configurations valid\n", manifest_name(m), n, space_product(sp));
  CHECK_INT(space_size(sp), n);
  CHECK(n > 0);
  size_t mismatches = 0, bad_index = 0, failures = 0;
  for (size_t i = 0; i < n && i < space_size(sp); i++) {
    if (memcmp(space_config(sp, i), want + i * (size_t)np, (size_t)np * sizeof *want)) mismatches++;
    if (space_index(sp, space_config(sp, i)) != (long)i) bad_index++;
    rt_vars vars;
    unsigned grid[3], block[3], smem;
    double flops, bytes, executed;
    char *prefix = NULL;
    if (manifest_config_vars(m, sp, i, env, &vars, &err) ||
        manifest_launch(m, &vars, grid, block, &smem, &err) ||
        manifest_cost(m, &vars, &flops, &bytes, &executed, &err) ||
        manifest_source_prefix(m, sp, i, &vars, manifest_dtype(m, 0), &prefix, &err)) {
      if (!failures) fprintf(stderr, "%s config %zu: %s: %s\n", path, i, err.field, err.text);
      failures++;
    } else {
      if (executed < flops) failures++; /* a kernel does at least the problem's math */
      char line[64];
      snprintf(line, sizeof line, "#line 1 \"%s\"\n", manifest_source_name(m));
      CHECK(strlen(prefix) > strlen(line) &&
            strcmp(prefix + strlen(prefix) - strlen(line), line) == 0);
      for (int p = 0; p < np; p++) {
        long long v;
        CHECK(rt_vars_get(&vars, manifest_param(m, p)->name, &v) && v == space_value(sp, i, p));
      }
    }
    free(prefix);
  }
  CHECK_INT(mismatches, 0);
  CHECK_INT(bad_index, 0);
  CHECK_INT(failures, 0);
  /* deterministic: a second build is the same space */
  space *sp2;
  CHECK_INT(manifest_build_space(m, env, &sp2, NULL), RT_OK);
  CHECK_INT(space_size(sp2), space_size(sp));
  CHECK(memcmp(space_config(sp2, 0), space_config(sp, 0), (size_t)np * sizeof(uint16_t)) == 0);
  space_free(sp2);
  free(want);
  space_free(sp);
  manifest_free(m);
  return n;
}

/* Every template the project ships, for each of its dtypes, both layouts and a few shapes (one
 * of at most 16 rows, for gemm_skinny), on its first architecture: the backtracking space
 * equals brute force. */
static void check_shipped(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/templates", test_source_dir());
  char **paths;
  int n;
  CHECK_INT(catalog_list(dir, &paths, &n, NULL), RT_OK);
  static const char *const shapes[] = {"1024x1024x1024", "8@128x4096x4096", "100x300x70",
                                       "2@7x300x70"};
  static const char *const layouts[] = {"", ":nt"};
  for (int i = 0; i < n; i++) {
    manifest *m;
    rt_error err = {0};
    CHECK_INT(manifest_load(paths[i], &m, &err), RT_OK);
    if (!m) continue;
    const family_ops *fam = family_find(manifest_family(m));
    CHECK(fam != NULL);
    const arch_spec *arch = arch_spec_find(manifest_arch(m, 0));
    CHECK(arch != NULL);
    size_t total = 0;
    /* gemm: the shapes and layouts above; a declared family: its example shape */
    const int gemm = fam && !strcmp(fam->name, "gemm"), nl = gemm ? 2 : 1;
    const int nsh = gemm ? 4 : fam && fam->example_more ? 2 : 1;
    for (int d = 0; fam && arch && d < manifest_ndtypes(m); d++)
      for (int sh = 0; sh < nsh; sh++)
        for (int l = 0; l < nl; l++) {
          char shape[64];
          snprintf(shape, sizeof shape, "%s%s",
                   gemm ? shapes[sh]
                   : sh ? fam->example_more
                        : fam->example_shape,
                   layouts[l]);
          problem pb;
          rt_vars env;
          rt_vars_clear(&env);
          const char *dt = manifest_dtype(m, d);
          if (gemm && !l && (!strcmp(dt, "e4m3") || !strcmp(dt, "e5m2"))) { /* fp8 is nt only */
            CHECK(fam->parse_shape(fam, shape, dt, NULL, &pb, &err) != RT_OK);
            CHECK_CONTAINS(err.text, "layout nt");
            continue;
          }
          CHECK_INT(fam->parse_shape(fam, shape, dt, NULL, &pb, &err), RT_OK);
          CHECK_INT(problem_env(fam, &pb, arch, gpu_spec_find("h200"), &env, NULL), RT_OK);
          total += check_valid_env(paths[i], &env, 1);
        }
    printf("%s: %zu configurations over its dtypes, layouts and shapes\n", manifest_name(m), total);
    CHECK(total > 0);
    manifest_free(m);
  }
  catalog_list_free(paths, n);
}

/* gemm_wgmma's launch geometry on 4096^3 bf16 nt, h200 (132 SMs), 128x256 tiles (32 x 16):
 * one block per tile, a cluster of two per pair of tiles, or a persistent grid of one block
 * (one cluster) per SM (pair of SMs) whose launch.work is still every tile; a manifest without
 * launch.work does the grid's blocks of work. */
static void check_wgmma_launch(void) {
  char path[1200];
  snprintf(path, sizeof path, "%s/templates/gemm/gemm_wgmma.json", test_source_dir());
  manifest *m = NULL;
  rt_error err = {0};
  CHECK_INT(manifest_load(path, &m, &err), RT_OK);
  if (!m) return;
  problem pb;
  rt_vars env;
  rt_vars_clear(&env);
  space *sp = NULL;
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "4096x4096x4096:nt", "bf16", NULL, &pb, &err),
            RT_OK);
  CHECK_INT(
      problem_env(&gemm_family, &pb, arch_spec_find("sm_90a"), gpu_spec_find("h200"), &env, NULL),
      RT_OK);
  CHECK_INT(manifest_build_space(m, &env, &sp, &err), RT_OK);
  static const struct {
    const char *config;
    unsigned grid_x;
    long long work;
  } want[] = {
      {"BLOCK_M=128,BLOCK_N=256,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,SWIZZLE=8,B_COL=1,"
       "PERSISTENT=0,CLUSTER=1,SETMAXNREG=0,B_E5M2=0,EPI=0,OUT_TYPE=0",
       512, 512},
      {"BLOCK_M=128,BLOCK_N=256,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,SWIZZLE=8,B_COL=1,"
       "PERSISTENT=0,CLUSTER=2,SETMAXNREG=0,B_E5M2=0,EPI=0,OUT_TYPE=0",
       512, 512},
      {"BLOCK_M=128,BLOCK_N=256,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,SWIZZLE=8,B_COL=1,"
       "PERSISTENT=1,CLUSTER=1,SETMAXNREG=0,B_E5M2=0,EPI=0,OUT_TYPE=0",
       132, 512},
      {"BLOCK_M=128,BLOCK_N=256,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,SWIZZLE=8,B_COL=1,"
       "PERSISTENT=1,CLUSTER=2,SETMAXNREG=0,B_E5M2=0,EPI=0,OUT_TYPE=0",
       132, 512},
      {"BLOCK_M=128,BLOCK_N=256,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=4,SWIZZLE=8,B_COL=1,"
       "PERSISTENT=1,CLUSTER=2,SETMAXNREG=0,B_E5M2=0,EPI=0,OUT_TYPE=0",
       32, 2048},
  };
  for (size_t i = 0; sp && i < sizeof want / sizeof want[0]; i++) {
    size_t idx = 0;
    rt_vars v;
    unsigned grid[3], block[3], smem;
    long long work = 0;
    CHECK_INT(space_parse_config(sp, want[i].config, &idx, &err), RT_OK);
    CHECK_INT(manifest_config_vars(m, sp, idx, &env, &v, &err), RT_OK);
    CHECK_INT(manifest_launch(m, &v, grid, block, &smem, &err), RT_OK);
    CHECK_INT(manifest_work(m, &v, grid, &work, &err), RT_OK);
    CHECK_INT(grid[0], want[i].grid_x);
    CHECK_INT(grid[2], strstr(want[i].config, "SPLIT_K=4") ? 4 : 1);
    CHECK_INT(work, want[i].work);
  }
  space_free(sp);
  manifest_free(m);
}

/* cost.executed_flops of the shipped gemm_mma: a 32-row tile over a 1-row problem does 32x its
 * math, over 4096^3 exactly the problem's; a manifest without the field executes its flops.
 * cost.bytes_in_flight: gemm_skinny's, and none where a manifest does not state it. */
static void check_executed(const char *valid_dir) {
  static const struct {
    const char *shape, *config;
    double factor;
  } want[] = {
      {"1x4096x4096:nt",
       "BLOCK_M=32,BLOCK_N=128,BLOCK_K=64,WARPS_M=1,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=8,B_COL=1",
       32},
      {"4096x4096x4096:nt",
       "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,WARPS_M=2,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=8,B_COL="
       "1",
       1},
      {"100x300x70",
       "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,WARPS_M=1,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=8,B_COL=0",
       (128.0 * 320 * 96) / (100.0 * 300 * 70)},
  };
  char path[1200];
  snprintf(path, sizeof path, "%s/templates/gemm/gemm_mma.json", test_source_dir());
  manifest *m = NULL;
  rt_error err = {0};
  CHECK_INT(manifest_load(path, &m, &err), RT_OK);
  for (size_t i = 0; m && i < sizeof want / sizeof want[0]; i++) {
    problem pb;
    rt_vars env, v;
    rt_vars_clear(&env);
    space *sp = NULL;
    size_t idx = 0;
    double flops = 0, bytes = 0, executed = 0;
    CHECK_INT(gemm_family.parse_shape(&gemm_family, want[i].shape, "bf16", NULL, &pb, &err), RT_OK);
    CHECK_INT(
        problem_env(&gemm_family, &pb, arch_spec_find("sm_90"), gpu_spec_find("h200"), &env, NULL),
        RT_OK);
    CHECK_INT(manifest_build_space(m, &env, &sp, &err), RT_OK);
    CHECK_INT(sp ? space_parse_config(sp, want[i].config, &idx, &err) : RT_ERR_INVALID, RT_OK);
    CHECK_INT(manifest_config_vars(m, sp, idx, &env, &v, &err), RT_OK);
    CHECK_INT(manifest_cost(m, &v, &flops, &bytes, &executed, &err), RT_OK);
    CHECK_NEAR(executed / flops, want[i].factor, 1e-12);
    space_free(sp);
  }
  manifest_free(m);
  /* no cost.executed_flops: the problem's flops */
  snprintf(path, sizeof path, "%s/gemm_like.json", valid_dir);
  CHECK_INT(manifest_load(path, &m, &err), RT_OK);
  rt_vars env;
  make_env(&env);
  space *sp = NULL;
  CHECK_INT(m ? manifest_build_space(m, &env, &sp, &err) : RT_ERR_INVALID, RT_OK);
  rt_vars v;
  double flops = 0, bytes = 0, executed = 0;
  CHECK_INT(sp ? manifest_config_vars(m, sp, 0, &env, &v, &err) : RT_ERR_INVALID, RT_OK);
  CHECK_INT(manifest_cost(m, &v, &flops, &bytes, &executed, &err), RT_OK);
  CHECK_NEAR(executed, flops, 0);
  double inflight = -1;
  CHECK_INT(manifest_inflight(m, &v, &inflight, &err), RT_OK);
  CHECK_NEAR(inflight, 0, 0); /* not stated */
  space_free(sp);
  manifest_free(m);

  /* cost.bytes_in_flight of the shipped gemm_skinny: 4 warps, 2 columns of B each, 4 loads of
   * 16 bytes unrolled per column: 128 x 16 x 4 x 2 bytes requested at a time */
  snprintf(path, sizeof path, "%s/templates/gemm/gemm_skinny.json", test_source_dir());
  CHECK_INT(manifest_load(path, &m, &err), RT_OK);
  problem pb;
  rt_vars_clear(&env);
  sp = NULL;
  size_t idx = 0;
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "1x4096x4096:nt", "bf16", NULL, &pb, &err),
            RT_OK);
  CHECK_INT(
      problem_env(&gemm_family, &pb, arch_spec_find("sm_90"), gpu_spec_find("h200"), &env, NULL),
      RT_OK);
  CHECK_INT(m ? manifest_build_space(m, &env, &sp, &err) : RT_ERR_INVALID, RT_OK);
  CHECK_INT(
      sp ? space_parse_config(
               sp, "ROWS=1,COLS=2,WARPS=4,UNROLL=4,SPLIT_K=1,B_COL=1,B_E5M2=0,EPI=0,OUT_TYPE=0",
               &idx, &err)
         : RT_ERR_INVALID,
      RT_OK);
  CHECK_INT(manifest_config_vars(m, sp, idx, &env, &v, &err), RT_OK);
  CHECK_INT(manifest_inflight(m, &v, &inflight, &err), RT_OK);
  CHECK_NEAR(inflight, 128.0 * 16 * 4 * 2, 0);
  space_free(sp);
  manifest_free(m);
}

static void check_invalid(const char *dir, const char *name, const rt_vars *env) {
  char path[1200], expected_path[1200], got[1600];
  snprintf(path, sizeof path, "%s/%s.json", dir, name);
  snprintf(expected_path, sizeof expected_path, "%s/%s.expected", dir, name);
  rt_error err;
  rt_error_clear(&err);
  manifest *m = NULL;
  rt_status s = manifest_load(path, &m, &err);
  if (s == RT_OK) {
    space *sp = NULL;
    s = manifest_build_space(m, env, &sp, &err);
    space_free(sp);
    manifest_free(m);
  }
  if (s == RT_OK) {
    fprintf(stderr, "%s: expected an error, got none\n", path);
    CHECK(s != RT_OK);
    return;
  }
  CHECK(err.code == s);
  CHECK(strcmp(err.source, path) == 0);
  char line[1500];
  rt_error_format(&err, line, sizeof line);
  size_t dl = strlen(dir) + 1;
  snprintf(got, sizeof got, "%s: %s", rt_status_name(s),
           strncmp(line, path, dl) == 0 ? line + dl : line);
  char want[1600] = "";
  FILE *f = fopen(expected_path, "r");
  if (!f && getenv("ROOFTUNE_WRITE_EXPECTED")) {
    f = fopen(expected_path, "w");
    if (f) {
      fprintf(f, "%s\n", got);
      fclose(f);
    }
    printf("wrote %s: %s\n", expected_path, got);
    return;
  }
  if (!f) {
    fprintf(stderr, "%s missing; the error was:\n%s\n", expected_path, got);
    CHECK(f != NULL);
    return;
  }
  if (!fgets(want, sizeof want, f)) want[0] = '\0';
  fclose(f);
  want[strcspn(want, "\n")] = '\0';
  if (strcmp(got, want) != 0) fprintf(stderr, "%s:\n  got:  %s\n  want: %s\n", name, got, want);
  CHECK_STR(got, want);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* NAME for every NAME.json in dir, sorted. */
static int list_json(const char *dir, char names[][128], int cap) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL && n < cap) {
    size_t l = strlen(de->d_name);
    if (l > 5 && strcmp(de->d_name + l - 5, ".json") == 0 && l - 5 < 128) {
      memcpy(names[n], de->d_name, l - 5);
      names[n++][l - 5] = '\0';
    }
  }
  closedir(d);
  char *ptrs[256];
  for (int i = 0; i < n; i++) ptrs[i] = names[i];
  qsort(ptrs, (size_t)n, sizeof *ptrs, cmp_str);
  char tmp[256][128];
  for (int i = 0; i < n; i++) strcpy(tmp[i], ptrs[i]);
  for (int i = 0; i < n; i++) strcpy(names[i], tmp[i]);
  return n;
}

/* Exact checks on one manifest: accessors, the prefix text, launch and cost values. */
static void check_idents(const char *dir, const rt_vars *env) {
  char path[1100];
  snprintf(path, sizeof path, "%s/idents.json", dir);
  manifest *m;
  CHECK_INT(manifest_load(path, &m, NULL), RT_OK);
  CHECK_STR(manifest_name(m), "idents");
  CHECK_STR(manifest_family(m), "gemm");
  CHECK_STR(manifest_entry(m), "kernel");
  CHECK_STR(manifest_source_name(m), "kernel.cu");
  CHECK_CONTAINS(manifest_source(m), "/valid/kernel.cu");
  CHECK_STR(manifest_instruction(m), "simt");
  CHECK_INT(manifest_noptions(m), 1);
  CHECK_STR(manifest_option(m, 0), "-use_fast_math");
  CHECK(manifest_has_dtype(m, "bf16") && !manifest_has_dtype(m, "f32"));
  CHECK(manifest_has_arch(m, "sm_90") && !manifest_has_arch(m, "sm_86"));
  CHECK_INT(manifest_nparams(m), 4);
  CHECK_STR(manifest_param(m, 1)->idents[0], "col");
  CHECK_INT(manifest_nderived(m), 2);
  param_roles roles;
  manifest_roles(m, &roles);
  CHECK_STR(roles.names[ROLE_TILE_M][0], "TILE");
  CHECK_STR(roles.names[ROLE_VECTOR][0], "VEC");
  CHECK_STR(roles.names[ROLE_TILE_N][0], "");
  space *sp;
  CHECK_INT(manifest_build_space(m, env, &sp, NULL), RT_OK);
  size_t idx;
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(space_parse_config(sp, "LAYOUT_A=col,LAYOUT_B=col,VEC=2,TILE=32", &idx, &err), RT_OK);
  char *prefix;
  CHECK_INT(manifest_source_prefix(m, sp, idx, env, "bf16", &prefix, NULL), RT_OK);
  CHECK_STR(prefix,
            "#define RT_DTYPE_bf16 1\n#define RT_DTYPE_BYTES 2\n"
            "#define LAYOUT_A col\n#define LAYOUT_A_col 1\n"
            "#define LAYOUT_B col\n#define LAYOUT_B_col 1\n"
            "#define VEC 2\n#define TILE 32\n#define LOADS 16\n#define COLS 32\n"
            "#line 1 \"kernel.cu\"\n");
  free(prefix);
  CHECK_INT(manifest_source_prefix(m, sp, idx, env, NULL, &prefix, NULL), RT_OK);
  CHECK(strncmp(prefix, "#define LAYOUT_A col\n", 21) == 0);
  free(prefix);
  rt_error_clear(&err);
  CHECK_INT(manifest_source_prefix(m, sp, idx, env, "f32", &prefix, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "supports: f16, bf16");
  rt_vars vars;
  CHECK_INT(manifest_config_vars(m, sp, idx, env, &vars, NULL), RT_OK);
  long long v;
  CHECK(rt_vars_get(&vars, "LAYOUT_B", &v) && v == 0); /* col is position 0 of LAYOUT_B */
  CHECK(rt_vars_get(&vars, "COLS", &v) && v == 32);
  CHECK(rt_vars_get(&vars, "device.sm_count", &v) && v == 132);
  unsigned grid[3], block[3], smem = 99;
  CHECK_INT(manifest_launch(m, &vars, grid, block, &smem, NULL), RT_OK);
  CHECK(grid[0] == 16 && grid[1] == 1 && grid[2] == 1);
  CHECK(block[0] == 64 && block[1] == 1 && block[2] == 1);
  CHECK_INT(smem, 0);
  double flops, bytes;
  CHECK_INT(manifest_cost(m, &vars, &flops, &bytes, NULL, NULL), RT_OK);
  CHECK_NEAR(flops, 2.0 * 512 * 512 * 512, 0);
  /* launch from the env alone: the parameters are unknown names */
  rt_error_clear(&err);
  CHECK_INT(manifest_launch(m, env, grid, block, &smem, &err), RT_ERR_EXPR);
  CHECK_STR(err.field, "launch.grid[0]");
  CHECK_INT(err.column, 13);
  CHECK_CONTAINS(err.text, "unknown name TILE");
  CHECK_INT(manifest_config_vars(m, sp, space_size(sp), env, &vars, &err), RT_ERR_INVALID);
  space_free(sp);
  manifest_free(m);

  /* derived values that read problem dimensions stay out of the source */
  snprintf(path, sizeof path, "%s/chain.json", dir);
  CHECK_INT(manifest_load(path, &m, NULL), RT_OK);
  CHECK(manifest_derived_emitted(m, 0) && manifest_derived_emitted(m, 1));
  CHECK(!manifest_derived_emitted(m, 2)); /* TOTAL reads M */
  CHECK_INT(manifest_build_space(m, env, &sp, NULL), RT_OK);
  CHECK_INT(manifest_source_prefix(m, sp, 0, env, "f16", &prefix, NULL), RT_OK);
  CHECK(strstr(prefix, "#define ABC ") != NULL);
  CHECK(strstr(prefix, "TOTAL") == NULL);
  CHECK(strstr(prefix, "#define C (-") != NULL || strstr(prefix, "#define C 0") != NULL ||
        strstr(prefix, "#define C 1") != NULL || strstr(prefix, "#define C 2") != NULL);
  free(prefix);
  space_free(sp);
  /* the space depends on the problem: K % 8 != 0 leaves nothing */
  rt_vars env2 = *env;
  rt_vars_set(&env2, "K", 500);
  rt_error_clear(&err);
  CHECK_INT(manifest_build_space(m, &env2, &sp, &err), RT_ERR_SPACE_EMPTY);
  CHECK_STR(err.field, "constraints[0]");
  /* the check job status makes: the same answer and message, and OK where a space exists */
  rt_error err2 = {0};
  CHECK_INT(manifest_space_check(m, &env2, &err2), RT_ERR_SPACE_EMPTY);
  CHECK_STR(err2.text, err.text);
  CHECK_STR(err2.field, "constraints[0]");
  CHECK_INT(manifest_space_check(m, env, NULL), RT_OK);
  /* a missing problem dimension is an unknown name with the names that exist */
  rt_vars env3;
  rt_vars_clear(&env3);
  rt_vars_set(&env3, "K", 512);
  rt_error_clear(&err);
  CHECK_INT(manifest_build_space(m, &env3, &sp, &err), RT_ERR_EXPR);
  CHECK_STR(err.field, "derived.TOTAL");
  CHECK_INT(err.column, 11);
  CHECK_CONTAINS(err.text, "unknown name M; names are: A, B, C, D, AB, ABC, TOTAL, K");
  manifest_free(m);
}

static void check_discovery(const char *valid_dir, const char *invalid_dir) {
  setenv("ROOFTUNE_TEMPLATE_DIR", valid_dir, 1);
  char buf[1024];
  CHECK_STR(catalog_path(buf, sizeof buf), valid_dir);
  char **paths;
  int n;
  CHECK_INT(catalog_list(NULL, &paths, &n, NULL), RT_OK);
  CHECK_INT(n, 5);
  if (n == 5) {
    CHECK_CONTAINS(paths[0], "/chain.json");
    CHECK_CONTAINS(paths[4], "/late.json");
  }
  catalog_list_free(paths, n);
  manifest *m;
  CHECK_INT(catalog_find(NULL, "late", &m, NULL), RT_OK);
  CHECK_STR(manifest_name(m), "late");
  manifest_free(m);
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(catalog_find(NULL, "nope", &m, &err), RT_ERR_NOT_FOUND);
  CHECK_CONTAINS(err.text, "templates are: chain, full, gemm_like, idents, late");
  /* a broken NAME.json is reported, not skipped */
  rt_error_clear(&err);
  CHECK_INT(catalog_find(invalid_dir, "bad_arch", &m, &err), RT_ERR_MANIFEST);
  CHECK_STR(err.field, "archs[1]");
  /* subfolders are searched too (a manifest and its source in tmp/sub/); the same name in two
   * folders of the path is an error naming both; a missing folder has no templates */
  char tmp[] = "/tmp/rooftune-catalog-XXXXXX", sub[600], cmd[4200], two[1300];
  CHECK(mkdtemp(tmp) != NULL);
  snprintf(sub, sizeof sub, "%s/sub", tmp);
  snprintf(cmd, sizeof cmd, "mkdir -p %s && cp %s/late.json %s/kernel.cu %s/", sub, valid_dir,
           valid_dir, sub);
  CHECK_INT(system(cmd), 0);
  CHECK_INT(catalog_find(tmp, "late", &m, NULL), RT_OK);
  manifest_free(m);
  snprintf(two, sizeof two, "%s:%s", tmp, valid_dir);
  rt_error_clear(&err);
  CHECK_INT(catalog_find(two, "late", &m, &err), RT_ERR_MANIFEST);
  CHECK_CONTAINS(err.text, "template late is defined twice");
  CHECK_CONTAINS(err.text, "/sub/late.json");
  CHECK_CONTAINS(err.text, "/valid/late.json");
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  CHECK_INT(system(cmd), 0);
  CHECK_INT(catalog_list("/nonexistent/rooftune", &paths, &n, NULL), RT_OK);
  CHECK_INT(n, 0);
  catalog_list_free(paths, n);
  unsetenv("ROOFTUNE_TEMPLATE_DIR");
  CHECK(catalog_path(buf, sizeof buf)[0] == '/');
  /* env helpers */
  rt_vars env;
  rt_vars_clear(&env);
  CHECK_INT(manifest_env_dtype("fp16", &env, &err), RT_ERR_INVALID);
  CHECK_INT(manifest_env_dtype("bf16", &env, NULL), RT_OK);
  long long v;
  CHECK(rt_vars_get(&env, "dtype_bytes", &v) && v == 2);
  CHECK(rt_vars_get(&env, "dtype_is_bf16", &v) && v == 1);
  CHECK(rt_vars_get(&env, "dtype_is_f16", &v) && v == 0);
  CHECK_INT(gpu_spec_env(arch_spec_find("sm_80"), NULL, &env, NULL), RT_OK);
  CHECK(rt_vars_get(&env, "device.smem_per_block_optin", &v) && v == 163 * 1024);
  CHECK(!rt_vars_get(&env, "device.sm_count", &v));
  CHECK_INT(manifest_dtype_bytes("e4m3"), 1);
  manifest *none;
  CHECK_INT(manifest_load("/nonexistent/x.json", &none, &err), RT_ERR_IO);
}

TEST_CASE(manifests) {
  char valid[1024], invalid[1024];
  snprintf(valid, sizeof valid, "%s/tests/data/manifests/valid", test_source_dir());
  snprintf(invalid, sizeof invalid, "%s/tests/data/manifests/invalid", test_source_dir());
  rt_vars env;
  make_env(&env);
  static char names[256][128];
  int n = list_json(valid, names, 256);
  CHECK(n >= 5);
  for (int i = 0; i < n; i++) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.json", valid, names[i]);
    check_valid(path, &env);
  }
  n = list_json(invalid, names, 256);
  CHECK(n >= 30);
  for (int i = 0; i < n; i++) check_invalid(invalid, names[i], &env);
  printf("%d invalid manifests checked\n", n);
  check_idents(valid, &env);
  check_shipped();
  check_wgmma_launch();
  check_executed(valid);
  check_discovery(valid, invalid);
}

TEST_LIST(TEST_ENTRY(manifests))
