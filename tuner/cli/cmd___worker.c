/* cmd___worker.c — `rooftune __worker`: the child process the cuda device runs candidates in
 * (worker.h).  Hidden from --help; never typed by people.  --test serves the crash/hang test
 * handler instead of the GPU one. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tuner/cli/cli.h"
#include "tuner/device/device.h"
#include "tuner/device/worker.h"

static const char usage[] =
    "usage: rooftune __worker [--test]\n\n"
    "Internal: the worker process that owns the CUDA context while `rooftune tune` measures.\n"
    "It reads framed requests on stdin and answers on stdout (see tuner/worker.h).\n\n"
    "options:\n"
    "  --test     serve the test handler (echo, abort, segv, hang, exit) instead of the GPU\n";

static int cmd_worker(int argc, char **argv) {
  int test = 0;
  static const struct option opts[] = {{"test", no_argument, 0, 't'}, {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == 't') test = 1;
    else return cli_bad_option("__worker", argc, argv);
  }
  if (optind < argc) return cli_usage_error("__worker", "unexpected argument '%s'", argv[optind]);
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

const cli_command cli_cmd___worker = {"__worker", "internal: the measuring worker process",
                                      usage, cmd_worker, 1};
