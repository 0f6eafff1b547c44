/* test_worker.c — worker isolation without a GPU: `rooftune __worker --test` crashes (abort,
 * SIGSEGV, exit) or hangs on request; each becomes that request's status (RT_ERR_CRASH /
 * RT_ERR_TIMEOUT) and a fresh worker, set up again, carries on. */
/* stages: device */
#include <jansson.h>
#include <unistd.h>

#include "test.h"
#include "tuner/device/worker.h"

static long long echo_pid(worker *w, const char *tag) {
  char json[96], *reply = NULL;
  snprintf(json, sizeof json, "{\"action\":\"%s\"}", tag);
  rt_error err = {0};
  rt_status st = worker_request(w, WORKER_TEST, json, "abc", 3, 10.0, &reply, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "  %s\n", err.text);
    return -1;
  }
  json_t *o = json_loads(reply, 0, NULL);
  CHECK(o != NULL);
  CHECK_STR(json_string_value(json_object_get(o, "status")), "OK");
  CHECK_STR(json_string_value(json_object_get(o, "action")), tag);
  CHECK_INT(json_integer_value(json_object_get(o, "blob_len")), 3);
  long long pid = json_integer_value(json_object_get(o, "pid"));
  json_decref(o);
  free(reply);
  return pid;
}

/* text may list alternatives separated by '|' (AddressSanitizer turns SIGSEGV into exit 1). */
static void expect_failure(worker *w, const char *action, double timeout, rt_status want,
                           const char *text) {
  char json[96], *reply = NULL;
  snprintf(json, sizeof json, "{\"action\":\"%s\"}", action);
  rt_error err = {0};
  rt_status st = worker_request(w, WORKER_TEST, json, NULL, 0, timeout, &reply, &err);
  CHECK_INT(st, want);
  CHECK(reply == NULL);
  char alts[128];
  snprintf(alts, sizeof alts, "%s", text);
  int found = 0;
  for (char *save = NULL, *a = strtok_r(alts, "|", &save); a; a = strtok_r(NULL, "|", &save))
    found |= strstr(err.text, a) != NULL;
  CHECK(found);
  if (!found) fprintf(stderr, "  '%s' has none of '%s'\n", err.text, text);
  CHECK_INT(worker_pid(w), 0); /* the child is gone */
  free(reply);
}

TEST_CASE(children_replaced) {
  const char *bin = getenv("ROOFTUNE_BIN");
  if (!bin) test_skip("ROOFTUNE_BIN is not set (run through ctest)");
  const char *argv[] = {"rooftune", "__worker", "--test", NULL};
  worker *w = NULL;
  rt_error err = {0};
  CHECK_INT(worker_new(bin, argv, &w, &err), RT_OK);
  CHECK_INT(worker_starts(w), 0);

  /* setup is remembered and replayed into every fresh child */
  char *reply = NULL;
  CHECK_INT(worker_request(w, WORKER_SETUP, "{}", NULL, 0, 10.0, &reply, &err), RT_OK);
  CHECK_CONTAINS(reply, "\"OK\"");
  free(reply);
  CHECK_INT(worker_starts(w), 1);

  long long p1 = echo_pid(w, "echo");
  CHECK(p1 > 0);
  CHECK_INT(echo_pid(w, "again"), p1); /* the same child answers while it lives */

  expect_failure(w, "segv", 10.0, RT_ERR_CRASH, "signal 11|exited with status 1");
  long long p2 = echo_pid(w, "after-segv");
  CHECK(p2 > 0 && p2 != p1);
  CHECK_INT(worker_starts(w), 2);

  expect_failure(w, "abort", 10.0, RT_ERR_CRASH, "signal 6");
  long long p3 = echo_pid(w, "after-abort");
  CHECK(p3 > 0 && p3 != p2);

  expect_failure(w, "hang", 0.3, RT_ERR_TIMEOUT, "did not answer within 0.3 s");
  long long p4 = echo_pid(w, "after-hang");
  CHECK(p4 > 0 && p4 != p3);

  expect_failure(w, "exit", 10.0, RT_ERR_CRASH, "exited with status 3");
  CHECK(echo_pid(w, "after-exit") > 0);
  CHECK_INT(worker_starts(w), 5);

  /* the retired child is replaced too */
  worker_retire(w);
  CHECK_INT(worker_pid(w), 0);
  CHECK(echo_pid(w, "after-retire") > 0);
  CHECK_INT(worker_starts(w), 6);

  /* a request the test handler does not know is an answer, not a crash */
  CHECK_INT(worker_request(w, WORKER_EVAL, "{}", NULL, 0, 10.0, &reply, &err), RT_OK);
  CHECK_CONTAINS(reply, "ERR_INVALID");
  free(reply);
  worker_free(w);

  /* a worker that cannot start at all */
  CHECK_INT(worker_new("/nonexistent/rooftune", argv, &w, &err), RT_OK);
  CHECK_INT(worker_request(w, WORKER_TEST, "{\"action\":\"echo\"}", NULL, 0, 10.0, &reply, &err),
            RT_ERR_CRASH);
  CHECK_CONTAINS(err.text, "could not be started");
  worker_free(w);
}

TEST_LIST(TEST_ENTRY(children_replaced))
