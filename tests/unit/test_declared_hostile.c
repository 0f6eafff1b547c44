/* test_declared_hostile.c — family declarations and shapes that once got through:
 *   - a negative cost formula (clamped to 0 without a word: a problem with "no traffic");
 *   - a shape written with leading zeros ("0064x8") stored as another problem than "64x8";
 *   - a "levers" list of repeated roles, which wrote past the levers text (found by fuzzing);
 *   - a declaration file larger than a declaration may be, or not a regular file. */
/* stages: kernels */
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/declared.h"
#include "kernels/family.h"
#include "test.h"

static char dir[256];

static const char *write_decl(const char *name, const char *cost, const char *levers) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s.json", dir, name);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return path;
  fprintf(f,
          "{\"family\": \"%s\", \"dims\": [\"ROWS\", \"COLS\"], \"dtypes\": [\"f32\"],\n"
          " \"args\": [{\"name\": \"x\", \"buffer\": \"dtype\", \"count\": \"ROWS*COLS\", \"dir\": "
          "\"out\"}],\n"
          " \"reference\": \"%s_reference\", \"check\": {\"*\": {\"abs\": 0}},\n"
          " \"cost\": %s%s%s}\n",
          name, name, cost, levers ? ", \"levers\": " : "", levers ? levers : "");
  fclose(f);
  return path;
}

static void test_negative_cost(void) {
  const char *path =
      write_decl("negcost", "{\"flops\": \"ROWS - 100\", \"bytes\": \"4*ROWS*COLS\"}", NULL);
  family_ops *f = NULL;
  rt_error err = {0};
  CHECK_INT(declared_load(path, &f, &err), RT_OK);
  if (!f) return;
  problem p;
  CHECK_INT(f->parse_shape(f, "128x4", "f32", NULL, &p, &err), RT_OK);
  CHECK_NEAR(f->flops(f, &p), 28, 0);
  rt_error_clear(&err);
  CHECK_INT(f->parse_shape(f, "50x4", "f32", NULL, &p, &err), RT_ERR_INVALID);
  CHECK_STR(err.source, path);
  CHECK_STR(err.field, "cost.flops");
  CHECK_CONTAINS(err.text, "negative (-50)");
  declared_free(f);
}

static void test_canonical_shape(void) {
  const char *path = write_decl("canon", "{\"flops\": \"ROWS\", \"bytes\": \"4*ROWS*COLS\"}", NULL);
  family_ops *f = NULL;
  rt_error err = {0};
  CHECK_INT(declared_load(path, &f, &err), RT_OK);
  if (!f) return;
  problem p;
  CHECK_INT(f->parse_shape(f, "0064x008", "f32", NULL, &p, &err), RT_OK);
  CHECK_STR(p.shape, "64x8");
  declared_free(f);
}

static void test_repeated_levers(void) {
  char levers[2048];
  size_t n = (size_t)snprintf(levers, sizeof levers, "[");
  for (int i = 0; i < 40; i++)
    n += (size_t)snprintf(levers + n, sizeof levers - n, "%s\"vector\"", i ? "," : "");
  snprintf(levers + n, sizeof levers - n, "]");
  const char *path = write_decl("levers", "{\"flops\": \"ROWS\", \"bytes\": \"ROWS\"}", levers);
  family_ops *f = NULL;
  rt_error err = {0};
  CHECK_INT(declared_load(path, &f, &err), RT_ERR_MANIFEST);
  CHECK_STR(err.field, "levers[1]");
  CHECK_CONTAINS(err.text, "listed twice");
  declared_free(f);
}

static void test_file_limits(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/huge.json", dir);
  FILE *f = fopen(path, "w");
  fputs("{\"family\": \"huge\", \"description\": \"", f);
  for (int i = 0; i < (1 << 20); i++) fputc('x', f);
  fputs("\"}\n", f);
  fclose(f);
  family_ops *fam = NULL;
  rt_error err = {0};
  CHECK_INT(declared_load(path, &fam, &err), RT_ERR_IO);
  CHECK_CONTAINS(err.text, "larger than");
  declared_free(fam);
  rt_error_clear(&err);
  CHECK_INT(declared_load(dir, &fam, &err), RT_ERR_IO); /* a folder */
  CHECK_CONTAINS(err.text, "not a regular file");
  declared_free(fam);
}

TEST_CASE(hostile_declared) {
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/rooftune-decl-XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(dir)) test_skip("cannot create a temporary folder");
  test_negative_cost();
  test_canonical_shape();
  test_repeated_levers();
  test_file_limits();
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

TEST_LIST(TEST_ENTRY(hostile_declared))
