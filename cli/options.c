/* options.c — a command's option table → getopt_long's table, the parsed fields, the help. */
#include "cli/options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* An option's text in help and errors is at most this wide before its help goes to the next line. */
enum { HELP_LEFT_MAX = 22 };

size_t cli_options_count(const cli_option *table) {
  size_t n = 0;
  while (table && table[n].kind != CLI_OPT_END) n++;
  return n;
}

static int takes_value(const cli_option *o) { return o->kind != CLI_OPT_FLAG; }

int cli_options_getopt(const cli_option *table, struct option *long_opts, char *shorts) {
  size_t n = cli_options_count(table), k = 0;
  if (n > CLI_OPTIONS_MAX) return -1;
  for (size_t i = 0; i < n; i++) {
    const cli_option *o = &table[i];
    long_opts[i] = (struct option){o->name, takes_value(o) ? required_argument : no_argument, NULL,
                                   256 + (int)i};
    if (o->letter) {
      shorts[k++] = o->letter;
      if (takes_value(o)) shorts[k++] = ':';
    }
  }
  long_opts[n] = (struct option){0, 0, 0, 0};
  shorts[k] = 0;
  return (int)n;
}

static int option_of_letter(const cli_option *table, int letter) {
  for (size_t i = 0; table[i].kind != CLI_OPT_END; i++)
    if (letter > 0 && table[i].letter == letter) return (int)i;
  return -1;
}

/* The error for the option getopt_long refused at argv[optind - 1]. */
static int bad_option(const char *cmd, const char *verb, const cli_option *table, int argc,
                      char **argv) {
  const char *arg = optind - 1 < argc && optind > 0 ? argv[optind - 1] : "?";
  const char *in = verb ? " of " : "", *vname = verb ? verb : "";
  const cli_option *o = NULL;
  if (optopt >= 256)
    o = &table[optopt - 256];
  else if (optopt > 0 && option_of_letter(table, optopt) >= 0)
    o = &table[option_of_letter(table, optopt)];
  else if (optopt > 0)
    return cli_usage_error(cmd, "unknown option '-%c'%s%s", optopt, in, vname);
  if (!o) return cli_usage_error(cmd, "unknown option '%s'%s%s", arg, in, vname);
  if (!takes_value(o)) return cli_usage_error(cmd, "--%s takes no value ('%s')", o->name, arg);
  return cli_usage_error(cmd, "option '%s' needs a value (--%s %s)", arg, o->name,
                         o->arg ? o->arg : "VALUE");
}

/* Stores VALUE of option o into the struct at base; 0, or the exit code after the error line. */
static int store(const char *cmd, const cli_option *o, const char *value, void *base) {
  char flag[64];
  snprintf(flag, sizeof flag, "--%s", o->name);
  void *at = (char *)base + o->offset;
  switch (o->kind) {
    case CLI_OPT_FLAG: *(int *)at |= o->min ? (int)o->min : 1; return 0;
    case CLI_OPT_STRING: *(const char **)at = value; return 0;
    case CLI_OPT_COUNT: {
      char *end = NULL;
      errno = 0;
      long v = strtol(value, &end, 10);
      if (errno || end == value || *end || v < o->min || v < 0) {
        if (o->min > 0)
          return cli_usage_error(cmd, "%s takes a count of at least %ld, not '%s'", flag, o->min,
                                 value);
        return cli_usage_error(cmd, "%s takes a whole number >= 0, not '%s'", flag, value);
      }
      *(long *)at = v;
      return 0;
    }
    case CLI_OPT_NUMBER: {
      char *end = NULL;
      errno = 0;
      double v = strtod(value, &end);
      int above = (o->flags & CLI_OPT_ABOVE_ZERO) != 0;
      if (errno || end == value || *end || !isfinite(v) || v < 0 || (above && v == 0))
        return cli_usage_error(cmd, "%s takes a number %s 0, not '%s'", flag,
                               above ? ">" : ">=", value);
      *(double *)at = v;
      return 0;
    }
    case CLI_OPT_LIST: return cli_read_list(cmd, flag, value, at, o->size) < 0 ? CLI_EXIT_USAGE : 0;
    case CLI_OPT_CALLBACK: return o->set(cmd, value, base);
    case CLI_OPT_END: break;
  }
  return CLI_EXIT_USAGE;
}

int cli_options_parse(const char *cmd, const char *verb, const cli_option *table, int argc,
                      char **argv, void *base, int *operands) {
  struct option long_opts[CLI_OPTIONS_MAX + 1];
  char shorts[2 * CLI_OPTIONS_MAX + 1];
  int n = cli_options_getopt(table, long_opts, shorts);
  if (n < 0) {
    fprintf(stderr, "rooftune %s: more than %d options in one table\n", cmd, CLI_OPTIONS_MAX);
    return CLI_EXIT_FAIL;
  }
  const char *seen[CLI_OPTIONS_MAX] = {0};
#ifdef __GLIBC__
  optind = 0; /* glibc: start afresh, also after a parse that stopped inside "-xyz" */
#else
  optind = 1;
#endif
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
    int i = c >= 256 ? c - 256 : option_of_letter(table, c);
    if (c == '?' || i < 0) return bad_option(cmd, verb, table, argc, argv);
    const cli_option *o = &table[i];
    if (takes_value(o) && seen[i] && !(o->flags & CLI_OPT_REPEAT))
      return cli_usage_error(cmd, "--%s given twice ('%s', then '%s'); give it once", o->name,
                             seen[i], optarg);
    seen[i] = optarg ? optarg : "";
    int rc = store(cmd, o, optarg, base);
    if (rc) return rc;
  }
  *operands = optind;
  return 0;
}

/* "-o, --output FILE" into buf; its length. */
static int option_left(const cli_option *o, char *buf, size_t size) {
  char letter[8] = "";
  if (o->letter) snprintf(letter, sizeof letter, "-%c, ", o->letter);
  return snprintf(buf, size, "%s--%s%s%s", letter, o->name, o->arg ? " " : "",
                  o->arg ? o->arg : "");
}

/* One help row: "  LEFT" then the help at column 2 + width + 2, each of its lines under the first. */
static void print_row(const char *left, const char *prefix, const char *help, int width,
                      FILE *out) {
  int len = (int)strlen(left), col = 2 + width + 2;
  fprintf(out, "  %s", left);
  if (len > width)
    fprintf(out, "\n%*s", col, "");
  else
    fprintf(out, "%*s", col - 2 - len, "");
  if (prefix) fputs(prefix, out);
  for (const char *s = help; *s;) {
    size_t n = strcspn(s, "\n");
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)n, s);
    cli_put_text(line, out);
    s += n;
    if (*s == '\n' && *++s) fprintf(out, "\n%*s", col, "");
  }
  fputc('\n', out);
}

/* The help column follows the widest option text that fits; a wider one has its help below it. */
static void widen(int *width, int len) {
  if (len > *width && len <= HELP_LEFT_MAX) *width = len;
}

void cli_options_print(const cli_option *table, FILE *out) {
  char left[128];
  int width = 0;
  for (size_t i = 0; table && table[i].kind != CLI_OPT_END; i++) {
    widen(&width, option_left(&table[i], left, sizeof left));
  }
  for (size_t i = 0; table && table[i].kind != CLI_OPT_END; i++) {
    option_left(&table[i], left, sizeof left);
    print_row(left, NULL, table[i].help, width, out);
  }
}

static const cli_option *verb_option(const cli_verb *v, const char *name) {
  for (size_t i = 0; v->options && v->options[i].kind != CLI_OPT_END; i++)
    if (!strcmp(v->options[i].name, name)) return &v->options[i];
  return NULL;
}

/* The first verb before index `before` that has an option NAME, or NULL. */
static const cli_verb *earlier_with(const cli_verb *verbs, size_t before, const char *name) {
  for (size_t k = 0; k < before; k++)
    if (verb_option(&verbs[k], name)) return &verbs[k];
  return NULL;
}

/* "show, import: " or "all but merge: " for the verbs that take NAME; "" when all do. */
static void takers(const cli_verb *verbs, const char *name, char *buf, size_t size) {
  size_t nverbs = 0, count = 0, w = 0;
  const char *missing = NULL;
  for (; verbs[nverbs].name; nverbs++) {
    if (verb_option(&verbs[nverbs], name))
      count++;
    else
      missing = verbs[nverbs].name;
  }
  buf[0] = 0;
  if (count == nverbs) return;
  if (count + 1 == nverbs && nverbs > 3) { /* shorter than naming three or more */
    snprintf(buf, size, "all but %s: ", missing);
    return;
  }
  for (size_t k = 0; k < nverbs; k++)
    if (verb_option(&verbs[k], name) && w < size)
      w += (size_t)snprintf(buf + w, size - w, "%s%s", w ? ", " : "", verbs[k].name);
  if (w < size) snprintf(buf + w, size - w, ": ");
}

void cli_verbs_print(const cli_verb *verbs, FILE *out) {
  char left[128], prefix[160];
  int width = 0;
  for (size_t k = 0; verbs[k].name; k++) {
    widen(&width, snprintf(left, sizeof left, "%s%s%s", verbs[k].name, verbs[k].args ? " " : "",
                           verbs[k].args ? verbs[k].args : ""));
    for (size_t i = 0; verbs[k].options && verbs[k].options[i].kind != CLI_OPT_END; i++)
      widen(&width, option_left(&verbs[k].options[i], left, sizeof left));
  }
  fputs("verbs:\n", out);
  for (size_t k = 0; verbs[k].name; k++) {
    snprintf(left, sizeof left, "%s%s%s", verbs[k].name, verbs[k].args ? " " : "",
             verbs[k].args ? verbs[k].args : "");
    print_row(left, NULL, verbs[k].help, width, out);
  }
  int any = 0;
  for (size_t k = 0; verbs[k].name; k++)
    for (size_t i = 0; verbs[k].options && verbs[k].options[i].kind != CLI_OPT_END; i++) {
      const cli_option *o = &verbs[k].options[i];
      if (earlier_with(verbs, k, o->name)) continue;
      if (!any++) fputs("\noptions:\n", out);
      option_left(o, left, sizeof left);
      takers(verbs, o->name, prefix, sizeof prefix);
      print_row(left, prefix, o->help, width, out);
    }
}

const cli_verb *cli_verb_named(const cli_verb *verbs, const char *name) {
  for (size_t k = 0; verbs[k].name; k++)
    if (!strcmp(verbs[k].name, name)) return &verbs[k];
  return NULL;
}

/* The option of a verb that ARG ("--db", "--db=F", "--d", "-o", "-oF") names (a long name may be
 * abbreviated, as getopt_long allows), or NULL. */
static const cli_option *verbs_option(const cli_verb *verbs, const char *arg) {
  size_t n = strcspn(arg + 2, "=");
  for (size_t k = 0; verbs[k].name; k++)
    for (size_t i = 0; verbs[k].options && verbs[k].options[i].kind != CLI_OPT_END; i++) {
      const cli_option *o = &verbs[k].options[i];
      if (arg[1] == '-' && n && !strncmp(o->name, arg + 2, n)) return o;
      if (arg[1] != '-' && o->letter == arg[1]) return o;
    }
  return NULL;
}

/* Whether the option ARG is followed by its value as the next argument. */
static int value_follows(const cli_verb *verbs, const char *arg) {
  const cli_option *o = verbs_option(verbs, arg);
  if (!o || !takes_value(o)) return 0;
  return arg[1] == '-' ? !strchr(arg, '=') : !arg[2];
}

const char *cli_verbs_stray(const cli_verb *verbs, int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
    if (argv[i][0] != '-' || !argv[i][1]) continue;
    if (!verbs_option(verbs, argv[i])) return argv[i];
    if (value_follows(verbs, argv[i])) i++;
  }
  return NULL;
}

int cli_verbs_find(const cli_verb *verbs, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) return i + 1 < argc ? i + 1 : -1;
    if (a[0] != '-' || !a[1]) return i;
    if (value_follows(verbs, a)) i++;
  }
  return -1;
}
