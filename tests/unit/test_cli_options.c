/* test_cli_options.c — the option tables of cli/options.h: table → getopt_long's table and
 * short-option string, parsing into fields with its errors, the generated help; and every
 * command's (and verb's) table: unique names, a help line for each option, help that lists them. */
/* stages: all */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "cli/cli.h"
#include "cli/cli_commands.h"
#include "cli/options.h"

typedef struct demo {
  const char *name, *out;
  long count, least;
  double above, ratio;
  char list[64];
  int json, bits;
  int calls;
} demo;

static int demo_call(const char *cmd, const char *value, void *base) {
  demo *d = base;
  d->calls++;
  if (!strcmp(value, "refuse")) {
    fprintf(stderr, "rooftune %s: refused '%s'\n", cmd, value);
    return CLI_EXIT_FAIL;
  }
  return 0;
}

static const cli_option demo_table[] = {
    CLI_STRING(demo, "name", "NAME", name, "a name"),
    CLI_STRING_SHORT(demo, 'o', "output", "FILE", out, "where to write"),
    CLI_COUNT(demo, "count", "N", count, 0, "a count\nits second line"),
    CLI_COUNT(demo, "least", "N", least, 1, "at least one"),
    CLI_NUMBER(demo, "above", "X", above, CLI_OPT_ABOVE_ZERO, "above zero"),
    CLI_NUMBER(demo, "ratio", "R", ratio, 0, "zero or more"),
    CLI_LIST(demo, "list", "L", list, "numbers"),
    CLI_FLAG(demo, "json", json, "JSON"),
    CLI_BITS(demo, "four", bits, 4, "sets 4"),
    CLI_BITS(demo, "two", bits, 2, "sets 2"),
    CLI_CALL("call", "V", demo_call, CLI_OPT_REPEAT, "calls back"),
    CLI_STRING(demo, "a-very-long-option-name", "VALUE", name, "help on the next line"),
    CLI_END,
};

/* Parses the NULL-ended words with demo_table (argv[0] "demo"); stderr into err. */
static int parse(demo *d, char *err, size_t size, int *operands, const char *const *words) {
  char *argv[32];
  int argc = 0;
  argv[argc++] = (char *)"demo";
  for (; *words; words++) argv[argc++] = (char *)*words;
  argv[argc] = NULL;
  memset(d, 0, sizeof *d);
  fflush(stderr);
  FILE *tmp = tmpfile();
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  int ops = 0;
  int rc = cli_options_parse("demo", NULL, demo_table, argc, argv, d, &ops);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t n = fread(err, 1, size - 1, tmp);
  err[n] = 0;
  fclose(tmp);
  if (operands) *operands = ops;
  return rc;
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

TEST_CASE(getopt_table) {
  struct option lo[CLI_OPTIONS_MAX + 1];
  char shorts[2 * CLI_OPTIONS_MAX + 1];
  int n = cli_options_getopt(demo_table, lo, shorts);
  CHECK_INT(n, (long)cli_options_count(demo_table));
  CHECK_STR(shorts, "o:");
  CHECK_STR(lo[0].name, "name");
  CHECK_INT(lo[0].has_arg, required_argument);
  CHECK_INT(lo[7].has_arg, no_argument); /* --json */
  CHECK_INT(lo[1].val, 257);
  CHECK(lo[n].name == NULL);
}

TEST_CASE(parse_values) {
  demo d;
  char err[1024];
  int ops = 0;
  int rc = parse(&d, err, sizeof err, &ops,
                 WORDS("first", "--name", "n1", "-o", "out.txt", "--count=7", "--least", "3",
                       "--above", "0.5", "--ratio", "0", "--list", "1,2,3", "--json", "--json",
                       "--four", "--two", "--call", "a", "--call", "b", "second"));
  CHECK_INT(rc, 0);
  CHECK_STR(err, "");
  CHECK_STR(d.name, "n1");
  CHECK_STR(d.out, "out.txt");
  CHECK_INT(d.count, 7);
  CHECK_INT(d.least, 3);
  CHECK_NEAR(d.above, 0.5, 0);
  CHECK_STR(d.list, "1,2,3");
  CHECK_INT(d.json, 1);
  CHECK_INT(d.bits, 6);
  CHECK_INT(d.calls, 2); /* a repeatable option */
  CHECK_INT(ops, 22);    /* 23 words, the two operands permuted to the end */
}

TEST_CASE(parse_errors) {
  static const struct {
    const char *words[4];
    int rc;
    const char *message;
  } cases[] = {
      {{"--count", "x"}, 2, "rooftune demo: --count takes a whole number >= 0, not 'x'\n"},
      {{"--count", "-1"}, 2, "--count takes a whole number >= 0, not '-1'"},
      {{"--count", "99999999999999999999"}, 2, "--count takes a whole number >= 0"},
      {{"--least", "0"}, 2, "--least takes a count of at least 1, not '0'"},
      {{"--above", "0"}, 2, "--above takes a number > 0, not '0'"},
      {{"--ratio", "-0.5"}, 2, "--ratio takes a number >= 0, not '-0.5'"},
      {{"--ratio", "inf"}, 2, "--ratio takes a number >= 0, not 'inf'"},
      {{"--ratio", "1e"}, 2, "--ratio takes a number >= 0, not '1e'"},
      {{"--list", "1,x"}, 2, "--list 1,x: neither a list of numbers nor a readable file"},
      {{"--name", "a", "--name", "b"}, 2, "--name given twice ('a', then 'b'); give it once"},
      {{"--nope"}, 2, "unknown option '--nope'"},
      {{"-z"}, 2, "unknown option '-z'"},
      {{"--name"}, 2, "option '--name' needs a value (--name NAME)"},
      {{"-o"}, 2, "option '-o' needs a value (--output FILE)"},
      {{"--json=1"}, 2, "--json takes no value ('--json=1')"},
      {{"--call", "refuse"}, 1, "refused 'refuse'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *w[6] = {0};
    for (int k = 0; k < 4 && cases[i].words[k]; k++) w[k] = cases[i].words[k];
    demo d;
    char err[1024];
    int rc = parse(&d, err, sizeof err, NULL, w);
    CHECK_INT(rc, cases[i].rc);
    CHECK_CONTAINS(err, cases[i].message);
    /* one line, and for bad usage the hint "usage: see 'rooftune demo --help'" */
    int lines = 0;
    for (const char *p = err; *p; p++) lines += *p == '\n';
    CHECK_INT(lines, cases[i].rc == 2 ? 2 : 1);
  }
}

static char *capture(void (*print)(const void *, FILE *), const void *what) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  print(what, f);
  fclose(f);
  return buf;
}

static void print_demo(const void *t, FILE *f) { cli_options_print(t, f); }
static void print_verbs(const void *v, FILE *f) { cli_verbs_print(v, f); }
static void print_command(const void *c, FILE *f) { cli_print_usage(c, f); }

TEST_CASE(help) {
  char *h = capture(print_demo, demo_table);
  CHECK_STR(h,
            "  --name NAME        a name\n"
            "  -o, --output FILE  where to write\n"
            "  --count N          a count\n"
            "                     its second line\n"
            "  --least N          at least one\n"
            "  --above X          above zero\n"
            "  --ratio R          zero or more\n"
            "  --list L           numbers\n"
            "  --json             JSON\n"
            "  --four             sets 4\n"
            "  --two              sets 2\n"
            "  --call V           calls back\n"
            "  --a-very-long-option-name VALUE\n"
            "                     help on the next line\n");
  free(h);
}

typedef struct verb_demo {
  const char *db;
  int json;
} verb_demo;
#define VD_DB CLI_STRING(verb_demo, "db", "FILE", db, "the database")
static const cli_option vd_list[] = {VD_DB, CLI_FLAG(verb_demo, "json", json, "JSON"), CLI_END};
static const cli_option vd_show[] = {VD_DB, CLI_END};
static const cli_option vd_merge[] = {CLI_END};
static const cli_verb vd_verbs[] = {
    {"list", NULL, "lists", vd_list},
    {"show", NULL, "shows\nall", vd_show},
    {"merge", "A B", "merges", vd_merge},
    {"check", NULL, "checks", vd_show},
    {NULL, NULL, NULL, NULL},
};

TEST_CASE(verbs) {
  char *h = capture(print_verbs, vd_verbs);
  CHECK_STR(h,
            "verbs:\n"
            "  list       lists\n"
            "  show       shows\n"
            "             all\n"
            "  merge A B  merges\n"
            "  check      checks\n"
            "\n"
            "options:\n"
            "  --db FILE  all but merge: the database\n"
            "  --json     list: JSON\n");
  free(h);
  h = capture(print_verbs, vd_verbs + 1); /* show, merge, check: the verbs named */
  CHECK_CONTAINS(h, "  --db FILE  show, check: the database\n");
  free(h);
  char *a1[] = {"db", "--db", "x.db", "show", NULL};
  CHECK_INT(cli_verbs_find(vd_verbs, 4, a1), 3);
  char *a2[] = {"db", "--db=x.db", "--json", "list", NULL};
  CHECK_INT(cli_verbs_find(vd_verbs, 4, a2), 3);
  char *a3[] = {"db", "--db", "x.db", NULL};
  CHECK_INT(cli_verbs_find(vd_verbs, 3, a3), -1);
  char *a4[] = {"db", "--db", "--nope", "--json", "-x", NULL};
  CHECK(cli_verbs_stray(vd_verbs, 5, a4) == a4[4]); /* --nope is --db's value */
  char *a5[] = {"db", "--d=x", "--js", NULL};
  CHECK(cli_verbs_stray(vd_verbs, 3, a5) == NULL);
  CHECK(cli_verb_named(vd_verbs, "merge") == &vd_verbs[2]);
  CHECK(cli_verb_named(vd_verbs, "frob") == NULL);
}

/* Every option of TABLE: a long name once, a letter once, a help line, a value name iff a value;
 * and the command's help names it. */
static void check_table(const char *cmd, const char *verb, const cli_option *table,
                        const char *help) {
  size_t n = cli_options_count(table);
  CHECK(n <= CLI_OPTIONS_MAX);
  for (size_t i = 0; i < n; i++) {
    const cli_option *o = &table[i];
    int ok = o->name && o->name[0] && o->help && o->help[0] &&
             (o->kind == CLI_OPT_FLAG) == (o->arg == NULL);
    if (!ok)
      fprintf(stderr, "%s %s: option %zu (--%s) lacks its help or value name\n", cmd,
              verb ? verb : "", i, o->name ? o->name : "?");
    CHECK(ok);
    for (size_t k = 0; k < i; k++) {
      CHECK(strcmp(table[k].name, o->name) != 0);
      CHECK(!o->letter || table[k].letter != o->letter);
    }
    CHECK(o->kind != CLI_OPT_CALLBACK || o->set);
    CHECK(o->kind != CLI_OPT_LIST || o->size > 1);
    char flag[80];
    snprintf(flag, sizeof flag, "--%s", o->name);
    if (!strstr(help, flag)) fprintf(stderr, "%s: help does not list %s\n", cmd, flag);
    CHECK_CONTAINS(help, flag);
  }
}

TEST_CASE(every_command) {
  size_t ncmd = sizeof cli_commands / sizeof cli_commands[0];
  CHECK(ncmd >= 11);
  for (size_t c = 0; c < ncmd; c++) {
    const cli_command *cmd = cli_commands[c];
    char *help = capture(print_command, cmd);
    char want[64];
    snprintf(want, sizeof want, "usage: rooftune %s", cmd->name);
    CHECK(!strncmp(help, want, strlen(want)));
    CHECK(!strstr(help, "{DEVICES"));
    CHECK(!strstr(help, "\n\n\n")); /* the generated blocks join the prose with one blank line */
    CHECK(cmd->options == NULL || cmd->verbs == NULL);
    if (cmd->options) check_table(cmd->name, NULL, cmd->options, help);
    for (const cli_verb *v = cmd->verbs; v && v->name; v++) {
      CHECK(v->help && v->help[0]);
      check_table(cmd->name, v->name, v->options, help);
      /* an option of two verbs is one option: the same kind and help (the help lists it once) */
      for (const cli_verb *w = cmd->verbs; w < v; w++)
        for (size_t i = 0; v->options[i].kind != CLI_OPT_END; i++)
          for (size_t k = 0; w->options[k].kind != CLI_OPT_END; k++)
            if (!strcmp(v->options[i].name, w->options[k].name)) {
              CHECK_INT(v->options[i].kind, w->options[k].kind);
              CHECK_STR(v->options[i].help, w->options[k].help);
            }
    }
    free(help);
  }
}

TEST_LIST(TEST_ENTRY(getopt_table), TEST_ENTRY(parse_values), TEST_ENTRY(parse_errors),
          TEST_ENTRY(help), TEST_ENTRY(verbs), TEST_ENTRY(every_command))
