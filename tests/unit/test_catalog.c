/* test_catalog.c — what the template path's .json files are read as (catalog_classify, the
 * fixtures of tests/data/catalog/ and their README): family.json by its name, a manifest beside
 * its .cu or by the fields every manifest has (also when it is not valid JSON, so that a
 * manifest with a syntax error is still reported), any other JSON file skipped with the reason;
 * catalog_list, catalog_families and catalog_skipped over the same folder. */
/* stages: template */
#include "test.h"
#include "template/catalog.h"

static void kind(const char *name, catalog_kind want, const char *why_has) {
  char path[1024], why[400];
  snprintf(path, sizeof path, "%s/tests/data/catalog/own/%s", test_source_dir(), name);
  catalog_kind k = catalog_classify(path, why, sizeof why);
  if (k != want)
    fprintf(stderr, "%s: read as %d, expected %d (%s)\n", name, (int)k, (int)want, why);
  CHECK_INT(k, want);
  if (why_has)
    CHECK_CONTAINS(why, why_has);
  else
    CHECK_STR(why, "");
  CHECK_INT(catalog_classify(path, NULL, 0), want); /* why is optional */
}

static const char *base(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

TEST_CASE(kinds) {
  kind("family.json", CATALOG_FAMILY, NULL);
  kind("beside.json", CATALOG_MANIFEST, NULL);
  kind("fields.json", CATALOG_MANIFEST, NULL);
  kind("broken.json", CATALOG_MANIFEST, NULL);
  kind("settings.json", CATALOG_OTHER,
       "a JSON object without the \"family\" and \"source\" fields a manifest has");
  kind("result.json", CATALOG_OTHER, "a JSON object without");
  kind("list.json", CATALOG_OTHER, "JSON but not an object");
  kind("notes.json", CATALOG_OTHER, "not valid JSON (line 1: ");
  kind("notes.json", CATALOG_OTHER, "and no .cu beside it");
  kind("missing.json", CATALOG_MANIFEST, NULL); /* loading it says what is wrong */
}

TEST_CASE(listing) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/data/catalog", test_source_dir());
  char **v = NULL;
  int n = 0;
  rt_error err = {0};
  CHECK_INT(catalog_list(dir, &v, &n, &err), RT_OK);
  CHECK_INT(n, 3);
  if (n == 3) {
    CHECK_STR(base(v[0]), "beside.json");
    CHECK_STR(base(v[1]), "broken.json");
    CHECK_STR(base(v[2]), "fields.json");
  }
  catalog_list_free(v, n);
  CHECK_INT(catalog_families(dir, &v, &n, &err), RT_OK);
  CHECK_INT(n, 1);
  if (n == 1) CHECK_STR(base(v[0]), "family.json");
  catalog_list_free(v, n);
  CHECK_INT(catalog_skipped(dir, &v, &n, &err), RT_OK);
  CHECK_INT(n, 4);
  if (n == 4) {
    CHECK_CONTAINS(v[0], "/own/list.json: JSON but not an object");
    CHECK_CONTAINS(v[1], "/own/notes.json: not valid JSON");
    CHECK_CONTAINS(v[2], "/own/result.json: a JSON object without");
    CHECK_CONTAINS(v[3], "/own/settings.json: a JSON object without");
  }
  catalog_list_free(v, n);
}

TEST_CASE(find_by_name) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/data/catalog", test_source_dir());
  rt_error err = {0};
  /* finding a template by name passes over the skipped files instead of failing on them */
  manifest *m = NULL;
  CHECK_INT(catalog_find(dir, "nothing_here", &m, &err), RT_ERR_NOT_FOUND);
  CHECK_CONTAINS(err.text, "no template named nothing_here");
}

TEST_LIST(TEST_ENTRY(kinds), TEST_ENTRY(listing), TEST_ENTRY(find_by_name))
