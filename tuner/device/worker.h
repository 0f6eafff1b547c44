/* worker.h — run work in a child process so a crash or a hang costs one request, not the run.
 *
 * The parent starts `rooftune __worker` (fork + exec) with two pipes on the child's stdin and
 * stdout, and talks to it in frames:
 *
 *     u32 type | u32 json_len | u32 blob_len | json_len bytes of JSON | blob_len bytes
 *
 * (little-endian host order; both ends are the same binary on the same machine).  A request
 * is answered by exactly one reply frame of type WORKER_REPLY whose JSON carries "status" (an
 * rt_status name) and, on failure, "error".  When the child dies (a signal, an exit) the
 * request ends with RT_ERR_CRASH and the signal's name; when it does not answer within the
 * request's timeout it is killed and the request ends with RT_ERR_TIMEOUT.  Either way the
 * next request starts a fresh child, which first gets the remembered setup request again, with
 * the setup's own timeout (so the worker's state, e.g. the problem's inputs on the GPU, is
 * rebuilt).
 *
 * The child side is worker_serve(): a loop that reads requests and calls a handler.  The
 * `__worker --test` mode serves WORKER_TEST requests that echo, crash (abort, SIGSEGV) or hang
 * on request, so the mechanism is tested without a GPU.  The parent ignores SIGPIPE while it
 * writes to a child that may have died.
 */
#ifndef ROOFTUNE_WORKER_H
#define ROOFTUNE_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

enum {
  WORKER_REPLY = 1, /* child → parent: the answer to one request */
  WORKER_SETUP,     /* remembered and replayed into every fresh child */
  WORKER_EVAL,      /* evaluate one candidate */
  WORKER_LIBRARY,   /* list library candidates */
  WORKER_CEILINGS,  /* measure the device's ceilings */
  WORKER_TEST,      /* --test mode: {"action":"echo"|"abort"|"segv"|"hang"|"exit"} */
  WORKER_PROFILE,   /* hardware counters of one candidate (CUPTI), after its timing */
  WORKER_QUIT       /* ends the child's loop */
};

typedef struct worker worker;

/* Prepares a worker running EXE with ARGV (argv[0] is the program name, NULL-terminated; both
 * copied).  The child starts on the first request. */
rt_status worker_new(const char *exe, const char *const *argv, worker **out, rt_error *err);
/* Stops the child (WORKER_QUIT, then SIGKILL if it lingers) and frees w. */
void worker_free(worker *w);

/* Sends one request and waits up to timeout_s seconds (<= 0: no limit) for the reply.
 * On RT_OK *reply is the reply's JSON text (caller frees), and *blob / *blob_len the reply's
 * binary part when blob is not NULL.  RT_ERR_CRASH / RT_ERR_TIMEOUT: the child is gone (err
 * says how); the next request starts a fresh one.  A type of WORKER_SETUP is remembered. */
rt_status worker_request(worker *w, int type, const char *json, const void *blob, size_t blob_len,
                         double timeout_s, char **reply, rt_error *err);

/* Ends the running child (it said its state is broken); the next request starts a fresh one. */
void worker_retire(worker *w);

/* Children started so far (1 after the first request; each crash or timeout adds one more on
 * the next request). */
int worker_starts(const worker *w);
/* The running child's process id, or 0. */
int worker_pid(const worker *w);

/* --- the child side --- */

/* Handles one request: fills *reply_json (malloc'd JSON object text with "status") and
 * optionally a reply blob.  Returns non-zero to end the loop. */
typedef int (*worker_handler)(void *ctx, int type, const char *json, const void *blob,
                              size_t blob_len, char **reply_json, void **reply_blob,
                              size_t *reply_blob_len);

/* Serves requests from in_fd, answering on out_fd, until WORKER_QUIT, end of input or the
 * handler asks to stop.  Returns 0 on a clean end. */
int worker_serve(int in_fd, int out_fd, worker_handler handler, void *ctx);

/* The --test mode's handler (echo, abort, segv, hang, exit). */
int worker_test_handler(void *ctx, int type, const char *json, const void *blob, size_t blob_len,
                        char **reply_json, void **reply_blob, size_t *reply_blob_len);

/* Frame I/O, shared by both sides: write / read one whole frame (RT_ERR_IO on a short read or
 * write, RT_ERR_CRASH on end of input). */
rt_status worker_write_frame(int fd, int type, const char *json, const void *blob, size_t blob_len,
                             rt_error *err);
rt_status worker_read_frame(int fd, int *type, char **json, void **blob, size_t *blob_len,
                            rt_error *err);

#endif
