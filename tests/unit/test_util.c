/* test_util.c — core/util: quantiles of sorted samples (the median and spread every
 * timing and replay score reads), mkdir -p and its errors, the bounded copy, the monotonic
 * clock, FNV-1a, and the default database path's order ($ROOFTUNE_DB, $XDG_DATA_HOME, $HOME). */
/* stages: core */
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "core/util.h"

static int is_dir(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

TEST_CASE(quantiles) {
  double v[] = {5, 1, 4, 2, 3};
  rt_sort_doubles(v, 5);
  for (int i = 0; i < 5; i++) CHECK_NEAR(v[i], i + 1, 0);
  CHECK_NEAR(rt_quantile(v, 5, 0.5), 3, 0);
  CHECK_NEAR(rt_quantile(v, 5, 0.9), 4.6, 1e-12);
  CHECK_NEAR(rt_quantile(v, 5, 0.1), 1.4, 1e-12);
  CHECK_NEAR(rt_quantile(v, 5, 0), 1, 0);
  CHECK_NEAR(rt_quantile(v, 5, 1), 5, 0);
  double two[] = {1, 2};
  CHECK_NEAR(rt_quantile(two, 2, 0.5), 1.5, 0); /* of two, their mean */
  double one[] = {7};
  CHECK_NEAR(rt_quantile(one, 1, 0.9), 7, 0);
}

TEST_CASE(mkdir) {
  char root[] = "/tmp/rooftune_util_XXXXXX";
  CHECK(mkdtemp(root) != NULL);
  char p[256];
  rt_error err = {0};
  snprintf(p, sizeof p, "%s/a/b/c/", root);
  CHECK_INT(rt_mkdir_p(p, &err), RT_OK);
  snprintf(p, sizeof p, "%s/a/b/c", root);
  CHECK(is_dir(p));
  CHECK_INT(rt_mkdir_p(p, &err), RT_OK); /* again: nothing to do */
  snprintf(p, sizeof p, "%s/x/y/tuning.db", root);
  CHECK_INT(rt_mkdir_parents(p, &err), RT_OK);
  snprintf(p, sizeof p, "%s/x/y", root);
  CHECK(is_dir(p));
  snprintf(p, sizeof p, "%s/x/y/tuning.db", root);
  CHECK(!is_dir(p));                                     /* the file itself is not made */
  CHECK_INT(rt_mkdir_parents("tuning.db", &err), RT_OK); /* in the working folder */
  /* a file where a folder must go: the error names the path and the folder */
  snprintf(p, sizeof p, "%s/file", root);
  FILE *f = fopen(p, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  snprintf(p, sizeof p, "%s/file/sub/tuning.db", root);
  CHECK_INT(rt_mkdir_parents(p, &err), RT_ERR_IO);
  CHECK_STR(err.source, p);
  CHECK_CONTAINS(err.text, "cannot create the folder");
  CHECK_CONTAINS(err.text, "/file/sub");
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  CHECK_INT(system(cmd), 0);
}

TEST_CASE(copy_clock) {
  char b[4];
  rt_copy(b, sizeof b, "abcdef");
  CHECK_STR(b, "abc");
  rt_copy(b, sizeof b, NULL);
  CHECK_STR(b, "");
  double t0 = rt_now_s();
  rt_sleep_ms(2);
  CHECK(rt_now_s() > t0);
}

TEST_CASE(default_db) {
  char buf[512];
  setenv("HOME", "/home/u", 1);
  unsetenv("XDG_DATA_HOME");
  unsetenv("ROOFTUNE_DB");
  CHECK_STR(rt_default_db_path(buf, sizeof buf), "/home/u/.local/share/rooftune/tuning.db");
  setenv("XDG_DATA_HOME", "/data", 1);
  CHECK_STR(rt_default_db_path(buf, sizeof buf), "/data/rooftune/tuning.db");
  setenv("ROOFTUNE_DB", "/elsewhere/t.db", 1);
  CHECK_STR(rt_default_db_path(buf, sizeof buf), "/elsewhere/t.db");
  setenv("ROOFTUNE_DB", "", 1); /* empty: as unset */
  CHECK_STR(rt_default_db_path(buf, sizeof buf), "/data/rooftune/tuning.db");
}

/* FNV-1a: the published 64-bit values from the published offset basis, rooftune's own start's
 * values (stored digests depend on them), continued hashes, and NULL as "" */
TEST_CASE(fnv1a) {
  CHECK(rt_fnv1a(14695981039346656037ull, "") == 0xcbf29ce484222325ull);
  CHECK(rt_fnv1a(14695981039346656037ull, "a") == 0xaf63dc4c8601ec8cull);
  CHECK(rt_fnv1a(14695981039346656037ull, "foobar") == 0x85944171f73967e8ull);
  CHECK(rt_fnv1a(RT_FNV_START, "a") == 0x44bd8ad473cd9906ull);
  CHECK(rt_fnv1a(RT_FNV_START, "foobar") == 0x88fad7c0a8ff07f2ull);
  CHECK(rt_fnv1a(rt_fnv1a(RT_FNV_START, "foo"), "bar") == rt_fnv1a(RT_FNV_START, "foobar"));
  CHECK(rt_fnv1a(RT_FNV_START, NULL) == RT_FNV_START);
}

TEST_LIST(TEST_ENTRY(quantiles), TEST_ENTRY(mkdir), TEST_ENTRY(copy_clock), TEST_ENTRY(default_db),
          TEST_ENTRY(fnv1a))
