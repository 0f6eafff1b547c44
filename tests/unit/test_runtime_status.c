/* test_runtime_status.c — the mapping from the engine's status codes to the public ones, which
 * runtime/status.c generates from rooftune.h's one table: every engine code lands on a public
 * code of the table, a code of the same name on itself, the caller's input errors on
 * ERR_INVALID and the tuner's own on ERR_INTERNAL.  (status.c is compiled in here: the library
 * does not export its internals.) */
/* stages: core runtime */
#include "runtime/status.c"

#include "test.h"

TEST_CASE(statuses) {
  for (int s = 0; s < RT_STATUS_COUNT; s++) {
    int c = rt_public_code((rt_status)s);
    CHECK(strcmp(rooftune_status_name(c), "UNKNOWN") != 0);
    const char *name = rt_status_name(s);
    if (strcmp(rooftune_status_name(c), name) != 0) /* no public twin: invalid input or internal */
      CHECK(c == ROOFTUNE_ERR_INVALID || c == ROOFTUNE_ERR_INTERNAL);
  }
  CHECK_INT(rt_public_code(RT_OK), ROOFTUNE_OK);
  CHECK_INT(rt_public_code(RT_ERR_DB_FOREIGN), ROOFTUNE_ERR_DB_FOREIGN);
  CHECK_INT(rt_public_code(RT_ERR_UNSUPPORTED), ROOFTUNE_ERR_UNSUPPORTED);
  CHECK_INT(rt_public_code(RT_ERR_USAGE), ROOFTUNE_ERR_INVALID);
  CHECK_INT(rt_public_code(RT_ERR_PARSE), ROOFTUNE_ERR_INVALID);
  CHECK_INT(rt_public_code(RT_ERR_NVRTC), ROOFTUNE_ERR_INTERNAL);
  CHECK_INT(rt_public_code(RT_ERR_WRONG_RESULT), ROOFTUNE_ERR_INTERNAL);
  rt_error err = {0};
  rt_error_set(&err, RT_ERR_DB, "a damaged page");
  rt_error_locate(&err, "x.db", NULL, 0, 0);
  CHECK_INT(rt_fail_err(&err), ROOFTUNE_ERR_DB);
  CHECK_STR(rooftune_last_error(), "x.db: a damaged page");
}

TEST_LIST(TEST_ENTRY(statuses))
