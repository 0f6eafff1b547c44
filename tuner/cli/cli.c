/* cli.c — uniform usage errors, the usage printer, and small parsing helpers for the
 * subcommands. */
#include "tuner/cli/cli.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuner/core/fileio.h"
#include "tuner/device/device.h"
#include "tuner/template/catalog.h"

/* The device texts a usage text names through a marker, generated from the device stage's
 * table (device_kinds_help): every kind, or the kinds that evaluate anew (not a recorded file). */
static const struct {
  const char *marker;
  int without; /* the kinds with one of these capabilities are left out */
} usage_devices[] = {
    {"{DEVICES}", 0},
    {"{DEVICES_EVALUATING}", DEVICE_CAP_RECORDED},
};

/* The marker at s (its index, *len its length), -1 when none starts there. */
static int usage_marker(const char *s, size_t *len) {
  for (size_t i = 0; i < sizeof usage_devices / sizeof usage_devices[0]; i++) {
    size_t n = strlen(usage_devices[i].marker);
    if (!strncmp(s, usage_devices[i].marker, n)) {
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
    char kinds[512];
    fputs(device_kinds_help(usage_devices[m].without, kinds, sizeof kinds), out);
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
