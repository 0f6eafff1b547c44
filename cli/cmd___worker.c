/* cmd___worker.c — `rooftune __worker`: the child process the cuda device runs candidates in
 * (worker.h).  Hidden from --help; never typed by people.  --test serves the crash/hang test
 * handler instead of the GPU one. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "tuner/device/device.h"
#include "tuner/device/worker.h"

static const char usage[] =
    "usage: rooftune __worker [--test]\n\n"
    "Internal: the worker process that owns the CUDA context while `rooftune tune` measures.\n"
    "It reads framed requests on stdin and answers on stdout (see tuner/worker.h).\n";

typedef struct worker_cli {
  int test; /* --test */
} worker_cli;

static const cli_option worker_table[] = {
    CLI_FLAG(worker_cli, "test", test,
             "serve the test handler (echo, abort, segv, hang, exit) instead of the GPU"),
    CLI_END,
};

static int cmd_worker(int argc, char **argv) {
  worker_cli cli = {0};
  int arg, bad = cli_options_parse("__worker", NULL, worker_table, argc, argv, &cli, &arg);
  if (bad) return bad;
  int test = cli.test;
  if (arg < argc) return cli_usage_error("__worker", "unexpected argument '%s'", argv[arg]);
  /* Replies go on a private copy of stdout; anything a library prints lands on stderr. */
  int out = dup(1);
  if (out < 0 || dup2(2, 1) < 0) {
    perror("rooftune __worker: dup");
    return CLI_EXIT_FAIL;
  }
  void *ctx = test ? NULL : device_cuda_worker_new();
  int rc = worker_serve(0, out, test ? worker_test_handler : device_cuda_worker_handler, ctx);
  if (!test) device_cuda_worker_free(ctx);
  return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

const char *const cli_worker_argv[] = {"rooftune", "__worker", NULL};

const cli_command cli_cmd___worker = {.name = "__worker",
                                      .summary = "internal: the measuring worker process",
                                      .usage = usage,
                                      .options = worker_table,
                                      .run = cmd_worker,
                                      .hidden = 1};
