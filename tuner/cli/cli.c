/* cli.c — uniform usage errors and small parsing helpers for the subcommands. */
#include "tuner/cli/cli.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "rooftune %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nusage: see 'rooftune %s --help'\n", cmd);
  return CLI_EXIT_USAGE;
}

int cli_bad_option(const char *cmd, int argc, char **argv) {
  const char *opt = (optind - 1 < argc && optind > 0) ? argv[optind - 1] : "?";
  if (optopt && strchr(opt, '=') == NULL && opt[0] == '-' && opt[1] != '-' && opt[1] != optopt)
    return cli_usage_error(cmd, "unknown option '-%c'", optopt);
  /* getopt sets optopt for a known option missing its value, 0 for an unknown long one */
  const char *why = "unknown option";
  if (optopt) why = "option needs a value";
  return cli_usage_error(cmd, "%s '%s'", why, opt);
}

int cli_fail(const char *cmd, const rt_error *err) {
  char line[2048];
  rt_error_format(err, line, sizeof line);
  fprintf(stderr, "rooftune %s: %s\n", cmd, line);
  return err && err->code == RT_ERR_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

int cli_parse_count(const char *cmd, const char *flag, const char *text, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || !end || *end || end == text || v < 0) {
    cli_usage_error(cmd, "%s takes a whole number >= 0, not '%s'", flag, text);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_stderr_is_tty(void) { return isatty(STDERR_FILENO); }

