/* test_status.c — the status table and rt_error formatting. */
/* stages: core */
#include "test.h"
#include "core/status.h"

TEST_CASE(names_and_format) {
  CHECK_INT(RT_OK, 0);
  CHECK_STR(rt_status_name(RT_ERR_MANIFEST), "ERR_MANIFEST");
  CHECK_STR(rt_status_message(RT_OK), "success");
  CHECK_INT(rt_status_from_name("ERR_TIMEOUT"), RT_ERR_TIMEOUT);
  CHECK_INT(rt_status_from_name("nope"), -1);
  CHECK_STR(rt_status_name(-3), "unknown");
  CHECK_STR(rt_status_name(RT_STATUS_COUNT), "unknown");
  for (int i = 0; i < RT_STATUS_COUNT; i++) {
    CHECK(rt_status_message(i)[0] != '\0');
    CHECK_INT(rt_status_from_name(rt_status_name(i)), i);
  }

  rt_error err;
  rt_error_clear(&err);
  char buf[2048];
  CHECK_INT(rt_error_set(&err, RT_ERR_EXPR, "unknown name 'BLOCKM' (names: %s)", "BLOCK_M"),
            RT_ERR_EXPR);
  rt_error_locate(&err, "gemm.json", "constraints[2]", 0, 5);
  rt_error_format(&err, buf, sizeof buf);
  CHECK_STR(buf, "gemm.json: constraints[2]: column 5: unknown name 'BLOCKM' (names: BLOCK_M)");
  rt_error_locate(&err, "job.json", NULL, 3, 7);
  rt_error_format(&err, buf, sizeof buf);
  CHECK_STR(buf,
            "job.json: constraints[2]: line 3, column 7: unknown name 'BLOCKM' (names: BLOCK_M)");
  rt_error_clear(&err);
  err.code = RT_ERR_NO_GPU;
  rt_error_format(&err, buf, sizeof buf);
  CHECK_STR(buf, "no CUDA GPU on this machine");
  CHECK_INT(rt_error_set(NULL, RT_ERR_IO, "ignored"), RT_ERR_IO);
  char small[8];
  rt_error_set(&err, RT_ERR_IO, "a long message that does not fit");
  rt_error_format(&err, small, sizeof small);
  CHECK_INT(strlen(small), 7);
}

TEST_LIST(TEST_ENTRY(names_and_format))
