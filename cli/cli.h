/* cli.h — what every `rooftune` subcommand shares: its table entry and uniform errors.
 *
 * A subcommand is one file cli/cmd_NAME.c that defines
 *     const cli_command cli_cmd_NAME = {.name = "NAME", .summary = "one line", .usage = text,
 *                                       .options = table, .run = cmd_NAME};
 * CMake finds the file and generates the command table, so adding a command touches nothing
 * else.  Its options are one table (options.h) that yields both the parser and the help's
 * "options:" block; main() answers -h/--help for every command from it.  Exit codes: 0
 * success, 1 the work failed, 2 bad usage, 3 a regression found by `recheck`.
 * The engine never sees the command line: commands turn flags into engine calls.
 */
#ifndef ROOFTUNE_CLI_H
#define ROOFTUNE_CLI_H

#include <jansson.h>
#include <signal.h>
#include <stdio.h>

#include "cli/options.h"
#include "core/status.h"

typedef struct cli_command {
  const char *name;          /* what the user types: "info" */
  const char *summary;       /* one line for `rooftune --help` */
  const char *usage;         /* help above the options: synopsis lines, blank line, what it does */
  const cli_option *options; /* its options (options.h); NULL for a command with verbs */
  const cli_verb *verbs;     /* a command with verbs (db, job): each verb's own table */
  const char *epilog;        /* help after the options ("environment:", "exit status:"), or NULL */
  int (*run)(int argc, char **argv); /* argv[0] is the command name; returns the exit code */
  int hidden;                        /* 1 for internal commands (the worker) left out of --help */
} cli_command;

/* 3: `recheck` found a regression (a winner slower or broken), so a nightly job can tell it
 * from a run that failed. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_REGRESSION = 3 };

/* A long run's stop signals: from cli_stop_begin to cli_stop_end, SIGINT and SIGTERM set
 * cli_stop_requested (what a run's `stop` points at: it finishes what it has and says it was
 * interrupted); a second signal acts as usual (SA_RESETHAND). */
extern volatile int cli_stop_requested;
typedef struct cli_stop {
  struct sigaction old_int, old_term; /* what was there before */
} cli_stop;
void cli_stop_begin(cli_stop *s);
void cli_stop_end(const cli_stop *s);

/* Prints "rooftune CMD: MESSAGE" and a usage hint to stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "rooftune CMD: <formatted error>" to stderr; returns CLI_EXIT_FAIL, or
 * CLI_EXIT_USAGE when the error is RT_ERR_USAGE. */
int cli_fail(const char *cmd, const rt_error *err);

/* A list of non-negative integers for flag FLAG: TEXT itself when it is "N,N,...", else the
 * numbers of the file TEXT names (separated by commas, spaces or newlines), written into out as
 * "N,N,...".  On failure prints a usage error and returns -1. */
int cli_read_list(const char *cmd, const char *flag, const char *text, char *out, size_t size);

/* Prints c's help to out: its usage text, its options (or verbs and their options) from its
 * table, its epilog; markers filled in: "{DEVICES}" becomes the device texts --device accepts
 * ("cuda | cuda:N | model:GPU (h200, ...) | replay:FILE", from the device stage's table),
 * "{DEVICES_EVALUATING}" the same without a recorded file's kind. */
void cli_print_usage(const cli_command *c, FILE *out);

/* Where the database is when --db is not given (rt_default_db_path), for the help of --db. */
#define CLI_DEFAULT_DB_TEXT \
  "$ROOFTUNE_DB, else\n$XDG_DATA_HOME/rooftune/tuning.db, else\n~/.local/share/rooftune/tuning.db"

/* --templates DIR (a cli_option callback, repeatable): adds DIR to the template path searched
 * first (catalog_add_dir); CLI_EXIT_FAIL with the catalog's error when DIR is not a folder. */
int cli_add_templates(const char *cmd, const char *dir, void *base);
#define CLI_TEMPLATES_OPTION(HELP) \
  CLI_CALL("templates", "DIR", cli_add_templates, CLI_OPT_REPEAT, HELP)

/* 1 when stdout / stderr is a terminal, for progress bars and colour. */
int cli_stderr_is_tty(void);

/* The command line the cuda device runs its worker with, NULL-ended: this binary's `__worker`
 * subcommand (cmd___worker.c), handed down in tune_options / device_options.worker_argv. */
extern const char *const cli_worker_argv[];

#endif
