/* test_registry.c — the test registry of tests/test.h, on itself: the fixture runs once around
 * the cases, each case runs in the order listed and knows its name.  Run plainly every case
 * passes; tests/cli/test_registry.sh runs it by name, with --list and with an unknown name, and
 * with ROOFTUNE_REGISTRY_DEMO=fail|skip|skip_all|skip_file to see a failing case named, a case
 * that skips, every case skipping (77) and a setup that skips the file (77). */
/* stages: none */
#include "test.h"

static int setups, ran;

static int demo(const char *what) {
  const char *d = getenv("ROOFTUNE_REGISTRY_DEMO");
  return d && strcmp(d, what) == 0;
}

static void setup(void) {
  setups++;
  if (demo("skip_file")) test_skip("the whole file skips in its setup");
}

static void teardown(void) { printf("teardown after %d case(s), %d setup\n", ran, setups); }

TEST_CASE(first) {
  ran++;
  CHECK_INT(setups, 1);
  CHECK_STR(test_now_case, "first");
  CHECK(!demo("fail"));
}

TEST_CASE(skipping) {
  ran++;
  if (demo("skip") || demo("skip_all")) test_skip("ROOFTUNE_REGISTRY_DEMO asked this case to skip");
  CHECK_STR(test_now_case, "skipping");
}

TEST_CASE(last) {
  ran++;
  if (demo("skip_all")) test_skip("ROOFTUNE_REGISTRY_DEMO asked every case to skip");
  CHECK_STR(test_now_case, "last");
  CHECK_INT(setups, 1);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(first), TEST_ENTRY(skipping), TEST_ENTRY(last))
