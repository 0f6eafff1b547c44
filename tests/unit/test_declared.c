/* test_declared.c — families declared in JSON: a valid declaration's shapes, names, cost,
 * checks and levers; every invalid fixture (tests/data/families/invalid/NAME.json) fails to
 * load with exactly the one-line error in NAME.expected (or, where there is none, a located
 * error naming the file); the registry loads a file once and refuses a family name declared
 * twice, naming both files. */
/* stages: kernels */
#include <dirent.h>
#include <sys/stat.h>

#include "kernels/declared.h"
#include "kernels/family.h"
#include "test.h"

static void test_valid(const char *dir) {
  char path[1200];
  snprintf(path, sizeof path, "%s/valid/saxpy.json", dir);
  family_ops *f = NULL;
  rt_error err = {0};
  CHECK_INT(declared_load(path, &f, &err), RT_OK);
  if (!f) {
    fprintf(stderr, "  %s\n", err.text);
    return;
  }
  CHECK_STR(f->name, "saxpy");
  CHECK_STR(f->shape_help, "N");
  CHECK_STR(f->reference, "saxpy_reference");
  CHECK_STR(f->declared_in, path);
  problem p;
  CHECK_INT(f->parse_shape(f, "1048576", "f32", NULL, &p, &err), RT_OK);
  CHECK_STR(p.family, "saxpy");
  CHECK_STR(p.shape, "1048576");
  CHECK_INT(problem_dim(&p, "N"), 1048576);
  rt_vars v;
  rt_vars_clear(&v);
  CHECK_INT(f->bind(f, &p, &v), RT_OK);
  long long x = 0;
  CHECK(rt_vars_get(&v, "HALF", &x) && x == 524288);
  CHECK(rt_vars_get(&v, "BYTES", &x) && x == 4 * 1048576);
  CHECK_NEAR(f->flops(f, &p), 2.0 * 1048576, 0);
  CHECK_NEAR(f->min_bytes(f, &p), 3.0 * 4 * 1048576 + 4.0 * 524288, 0);
  CHECK_NEAR(f->tolerance(f, &p), 1e-6, 0);
  CHECK_INT(f->parse_shape(f, "1024", "f16", NULL, &p, &err), RT_OK);
  CHECK_NEAR(f->tolerance(f, &p), 1e-3, 0); /* "*": the absolute bound */
  CHECK_NEAR(f->min_bytes(f, &p), 3.0 * 2 * 1024 + 4.0 * 512, 0);
  /* the problem env: the family's names, dtype facts and device facts */
  CHECK_INT(problem_env(f, &p, arch_spec_find("sm_90"), gpu_spec_find("h200"), &v, &err), RT_OK);
  CHECK(rt_vars_get(&v, "N", &x) && x == 1024);
  CHECK(rt_vars_get(&v, "dtype_bytes", &x) && x == 2);
  CHECK(rt_vars_get(&v, "device.sm_count", &x) && x == 132);
  /* bad shapes and dtypes, each one clear error */
  const char *bad[] = {"0", "12x3", "abc", "", "268435457", "-5", "12 "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    rt_error_clear(&err);
    CHECK(f->parse_shape(f, bad[i], "f32", NULL, &p, &err) != RT_OK);
    CHECK_CONTAINS(err.text, "saxpy shape");
    CHECK_STR(err.source, "--shape");
  }
  CHECK_CONTAINS(err.text, "expected N");
  rt_error_clear(&err);
  CHECK_INT(f->parse_shape(f, "268435457", "f32", NULL, &p, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "N is larger than 268435456");
  rt_error_clear(&err);
  CHECK_INT(f->parse_shape(f, "1024", "bf16", NULL, &p, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "takes dtype f32, f16, not \"bf16\"");
  CHECK_STR(err.source, "--dtype");
  /* levers: only the roles it lists */
  CHECK(family_allows_lever(f, "vector"));
  CHECK(family_allows_lever(f, "unroll"));
  CHECK(!family_allows_lever(f, "tile_m"));
  CHECK(!family_allows_lever(f, "vec"));
  CHECK(family_allows_lever(family_find("gemm"), "tile_m"));
  declared_free(f);
}

static void test_invalid(const char *dir) {
  char idir[1200];
  snprintf(idir, sizeof idir, "%s/invalid", dir);
  DIR *d = opendir(idir);
  CHECK(d != NULL);
  if (!d) return;
  struct dirent *e;
  int n = 0, exact = 0;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json")) continue;
    char path[2400], exp_path[2400], want[1024] = "";
    snprintf(path, sizeof path, "%s/%s", idir, e->d_name);
    snprintf(exp_path, sizeof exp_path, "%s/%.*s.expected", idir, (int)(len - 5), e->d_name);
    FILE *ef = fopen(exp_path, "r");
    if (ef) {
      if (!fgets(want, sizeof want, ef)) want[0] = 0;
      fclose(ef);
      want[strcspn(want, "\n")] = 0;
    }
    family_ops *f = NULL;
    rt_error err = {0};
    rt_status s = declared_load(path, &f, &err);
    CHECK(s != RT_OK);
    CHECK(f == NULL);
    char got[1600], line[1800];
    rt_error_format(&err, got, sizeof got);
    /* the message names the file by its base name, for fixtures that read the same anywhere */
    snprintf(line, sizeof line, "%s: %s", rt_status_name(s), got);
    char *p = strstr(line, idir);
    if (p) memmove(p, p + strlen(idir) + 1, strlen(p + strlen(idir) + 1) + 1);
    if (want[0]) {
      CHECK_STR(line, want);
      exact++;
    } else {
      CHECK_CONTAINS(line, e->d_name);
    }
    declared_free(f);
    n++;
  }
  closedir(d);
  CHECK(n >= 20);
  printf("%d invalid family declarations refused (%d with their exact message)\n", n, exact);
}

static void test_registry(const char *dir) {
  char tmp[] = "/tmp/rooftune-families-XXXXXX";
  CHECK(mkdtemp(tmp) != NULL);
  char a[200], b[200], cmd[3200];
  snprintf(a, sizeof a, "%s/one", tmp);
  snprintf(b, sizeof b, "%s/two", tmp);
  snprintf(cmd, sizeof cmd,
           "mkdir -p %s %s && cp %s/valid/saxpy.json %s/family.json && cp %s/valid/saxpy.json "
           "%s/family.json",
           a, b, dir, a, dir, b);
  CHECK_INT(system(cmd), 0);
  char fa[300];
  snprintf(fa, sizeof fa, "%s/family.json", a);
  const family_ops *f1 = NULL, *f2 = NULL;
  rt_error err = {0};
  CHECK_INT(family_load_file(fa, &f1, &err), RT_OK);
  CHECK_INT(family_load_file(fa, &f2, &err), RT_OK); /* the same file: the same family */
  CHECK(f1 != NULL && f1 == f2);
  CHECK(family_find("saxpy") == f1);
  CHECK_CONTAINS(family_names(), "saxpy");
  rt_error_clear(&err);
  CHECK_INT(family_load_path(tmp, &err), RT_ERR_MANIFEST);
  CHECK_CONTAINS(err.text, "family saxpy is declared twice");
  CHECK_CONTAINS(err.text, "/one/family.json");
  CHECK_CONTAINS(err.text, "/two/family.json");
  /* a declaration may not take a C family's name */
  snprintf(cmd, sizeof cmd, "sed -i 's/\"saxpy\"/\"gemm\"/' %s/family.json", b);
  CHECK_INT(system(cmd), 0);
  rt_error_clear(&err);
  snprintf(fa, sizeof fa, "%s/family.json", b);
  CHECK_INT(family_load_file(fa, &f2, &err), RT_ERR_MANIFEST);
  CHECK_CONTAINS(err.text, "family gemm is declared twice");
  CHECK_CONTAINS(err.text, "a C family");
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  CHECK_INT(system(cmd), 0);
}

TEST_CASE(declared) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/data/families", test_source_dir());
  test_valid(dir);
  test_invalid(dir);
  test_registry(dir);
}

TEST_LIST(TEST_ENTRY(declared))
