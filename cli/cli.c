/* cli.c — uniform usage errors, the usage printer, and small parsing helpers for the
 * subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search/strategy.h"
#include "core/fileio.h"
#include "tuner/device/device.h"
#include "template/catalog.h"

/* The lists a usage text names through a marker, generated from their tables: the device
 * stage's kinds (device_kinds_help), every kind or the kinds that evaluate anew (not a recorded
 * file); the search stage's strategies (strategy_list), every one or those a recorded space can
 * score (not ranked by predicted times); the default strategy. */
static const char *usage_default_strategy(int without, char *buf, size_t size) {
  (void)without;
  snprintf(buf, size, "%s", strategy_default());
  return buf;
}

static const struct {
  const char *marker;
  const char *(*list)(int without, char *buf, size_t size);
  int without; /* the entries with one of these flags are left out */
} usage_lists[] = {
    {"{DEVICES}", device_kinds_help, 0},
    {"{DEVICES_EVALUATING}", device_kinds_help, DEVICE_CAP_RECORDED},
    {"{STRATEGIES}", strategy_list, 0},
    {"{STRATEGIES_REPLAYING}", strategy_list, STRATEGY_PREDICTED},
    {"{STRATEGY_DEFAULT}", usage_default_strategy, 0},
};

/* The marker at s (its index, *len its length), -1 when none starts there. */
static int usage_marker(const char *s, size_t *len) {
  for (size_t i = 0; i < sizeof usage_lists / sizeof usage_lists[0]; i++) {
    size_t n = strlen(usage_lists[i].marker);
    if (!strncmp(s, usage_lists[i].marker, n)) {
      *len = n;
      return (int)i;
    }
  }
  return -1;
}

void cli_put_text(const char *text, FILE *out) {
  for (const char *s = text; *s;) {
    size_t n = 0;
    int m = *s == '{' ? usage_marker(s, &n) : -1;
    if (m < 0) {
      fputc(*s++, out);
      continue;
    }
    char list[512];
    fputs(usage_lists[m].list(usage_lists[m].without, list, sizeof list), out);
    s += n;
  }
}

void cli_print_usage(const cli_command *c, FILE *out) {
  cli_put_text(c->usage, out);
  if (c->verbs) {
    fputc('\n', out);
    cli_verbs_print(c->verbs, out);
  } else if (cli_options_count(c->options)) {
    fputs("\noptions:\n", out);
    cli_options_print(c->options, out);
  }
  if (c->epilog) {
    fputc('\n', out);
    cli_put_text(c->epilog, out);
  }
}

volatile int cli_stop_requested;

static void on_stop_signal(int sig) {
  (void)sig;
  cli_stop_requested = 1;
}

void cli_stop_begin(cli_stop *s) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &s->old_int);
  sigaction(SIGTERM, &sa, &s->old_term);
}

void cli_stop_end(const cli_stop *s) {
  sigaction(SIGINT, &s->old_int, NULL);
  sigaction(SIGTERM, &s->old_term, NULL);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "rooftune %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nusage: see 'rooftune %s --help'\n", cmd);
  return CLI_EXIT_USAGE;
}

int cli_fail(const char *cmd, const rt_error *err) {
  char line[2048];
  rt_error_format(err, line, sizeof line);
  fprintf(stderr, "rooftune %s: %s\n", cmd, line);
  if (!err) return CLI_EXIT_FAIL;
  /* a value a flag or an operand was given that the command cannot take (an unknown device,
   * dtype or target, a shape that does not parse) is bad usage, as the README's exit codes say;
   * a file that cannot be read or a run that fails is the work failing */
  int on_input = !strncmp(err->source, "--", 2) || !strcmp(err->source, "FAMILY|TEMPLATE");
  int bad_value = err->code == RT_ERR_INVALID || err->code == RT_ERR_PARSE ||
                  err->code == RT_ERR_NOT_FOUND || err->code == RT_ERR_UNSUPPORTED;
  return err->code == RT_ERR_USAGE || (on_input && bad_value) ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

int cli_add_templates(const char *cmd, const char *dir, void *base) {
  (void)base;
  rt_error err = {0};
  return catalog_add_dir(dir, &err) ? cli_fail(cmd, &err) : 0;
}

int cli_stderr_is_tty(void) { return isatty(STDERR_FILENO); }

int cli_read_list(const char *cmd, const char *flag, const char *text, char *out, size_t size) {
  int inline_list = *text != '\0';
  for (const char *p = text; *p; p++)
    if (!((*p >= '0' && *p <= '9') || *p == ',')) inline_list = 0;
  char *buf = NULL;
  const char *src = text;
  if (!inline_list) { /* a file, read only when it is a regular one (a FIFO would block) */
    rt_error e = {0};
    if (access(text, F_OK) != 0)
      return cli_usage_error(cmd, "%s %s: neither a list of numbers nor a readable file", flag,
                             text),
             -1;
    if (fileio_read_max(text, (size_t)1 << 16, &buf, NULL, &e))
      return cli_usage_error(cmd, "%s %s: %s", flag, text, e.text), -1;
    src = buf;
  }
  size_t w = 0;
  int count = 0, rc = 0;
  for (const char *p = src; *p && !rc;) {
    if (*p == ',' || *p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') {
      p++;
      continue;
    }
    if (*p < '0' || *p > '9') {
      rc = cli_usage_error(cmd, "%s %s: '%c' is not part of a number", flag, text, *p);
      break;
    }
    const char *q = p;
    while (*q >= '0' && *q <= '9') q++;
    int need =
        snprintf(out + w, size > w ? size - w : 0, "%s%.*s", count ? "," : "", (int)(q - p), p);
    if (need < 0 || (size_t)need >= size - w) {
      rc = cli_usage_error(cmd, "%s %s: too many numbers", flag, text);
      break;
    }
    w += (size_t)need;
    count++;
    p = q;
  }
  free(buf);
  if (!rc && count == 0) rc = cli_usage_error(cmd, "%s %s: no numbers", flag, text);
  return rc ? -1 : 0;
}
