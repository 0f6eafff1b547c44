/* options.h — one table per command (and per verb) that is the whole truth about its options.
 *
 * A command lists its options once, as an array of cli_option ended by CLI_END: the long name,
 * an optional short letter, the kind of value (none, text, whole number, number, list of
 * numbers, or a callback for the few special ones), the value's name in help ("FILE"), one line
 * of help, and where the value goes (a field of the command's own options struct, by offset, so
 * the table can be static and the unit test can read every command's table).  From that one
 * table this module
 *   - builds getopt_long's table and short-option string (cli_options_getopt),
 *   - parses argv into the struct with the checks every command used to write by hand
 *     (cli_options_parse): a number that is not one or is out of range, a value option given
 *     twice where that is refused, an unknown option or one missing its value: one line naming
 *     the flag, the value and what is accepted, exit status 2,
 *   - prints the "options:" block of the help, aligned (cli_options_print), from which
 *     cli_print_usage (cli.h) writes a command's whole help.
 * The shape follows git's parse-options (parse-options.h): a table of descriptors, each naming
 * its destination, with help generated from it.  Commands with verbs (`db`, `job`) give each
 * verb its own table (cli_verb); the help lists every verb's options once, each marked with the
 * verbs that take it.
 */
#ifndef ROOFTUNE_CLI_OPTIONS_H
#define ROOFTUNE_CLI_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

typedef enum cli_opt_kind {
  CLI_OPT_END = 0, /* ends a table */
  CLI_OPT_FLAG,    /* no value: int field |= bits (1 when bits is 0); may be repeated */
  CLI_OPT_STRING,  /* const char * field = the argument */
  CLI_OPT_COUNT,   /* long field = a whole decimal number >= min */
  CLI_OPT_NUMBER,  /* double field = a finite number >= 0 (> 0 with CLI_OPT_ABOVE_ZERO) */
  CLI_OPT_LIST, /* char[size] field = "N,N,..." from the text or the file it names (cli_read_list) */
  CLI_OPT_CALLBACK, /* set(cmd, value, base): what the value means is the command's */
} cli_opt_kind;

enum {
  CLI_OPT_REPEAT = 1u << 0,     /* a value option that may be given more than once (--templates) */
  CLI_OPT_ABOVE_ZERO = 1u << 1, /* CLI_OPT_NUMBER: 0 is refused too */
};

typedef struct cli_option {
  const char *name;  /* long name without "--"; NULL in CLI_END */
  char letter;       /* short name ('o' for -o), 0 for none */
  cli_opt_kind kind; /* what the value is */
  const char *arg;   /* the value's name in help and errors ("FILE"); NULL for a flag */
  const char *help;  /* help; each '\n' starts a line indented under the first */
  size_t offset;     /* the field, in the struct cli_options_parse fills */
  long min;          /* CLI_OPT_COUNT: the least value accepted; CLI_OPT_FLAG: the bits set */
  size_t size;       /* CLI_OPT_LIST: the char array's size */
  int (*set)(const char *cmd, const char *value,
             void *base); /* CLI_OPT_CALLBACK: 0 or an exit code */
  unsigned flags;         /* CLI_OPT_REPEAT, CLI_OPT_ABOVE_ZERO */
} cli_option;

/* Table entries; T is the command's options struct, F the field the value goes to. */
#define CLI_FIELD(T, F) offsetof(T, F)
#define CLI_FLAG(T, NAME, F, HELP) \
  { NAME, 0, CLI_OPT_FLAG, NULL, HELP, offsetof(T, F), 0, 0, NULL, 0 }
#define CLI_BITS(T, NAME, F, BITS, HELP) \
  { NAME, 0, CLI_OPT_FLAG, NULL, HELP, offsetof(T, F), BITS, 0, NULL, 0 }
#define CLI_STRING(T, NAME, ARG, F, HELP) \
  { NAME, 0, CLI_OPT_STRING, ARG, HELP, offsetof(T, F), 0, 0, NULL, 0 }
#define CLI_STRING_SHORT(T, LETTER, NAME, ARG, F, HELP) \
  { NAME, LETTER, CLI_OPT_STRING, ARG, HELP, offsetof(T, F), 0, 0, NULL, 0 }
#define CLI_COUNT(T, NAME, ARG, F, MIN, HELP) \
  { NAME, 0, CLI_OPT_COUNT, ARG, HELP, offsetof(T, F), MIN, 0, NULL, 0 }
#define CLI_NUMBER(T, NAME, ARG, F, FLAGS, HELP) \
  { NAME, 0, CLI_OPT_NUMBER, ARG, HELP, offsetof(T, F), 0, 0, NULL, FLAGS }
#define CLI_LIST(T, NAME, ARG, F, HELP) \
  { NAME, 0, CLI_OPT_LIST, ARG, HELP, offsetof(T, F), 0, sizeof(((T *)0)->F), NULL, 0 }
#define CLI_CALL(NAME, ARG, FN, FLAGS, HELP) \
  { NAME, 0, CLI_OPT_CALLBACK, ARG, HELP, 0, 0, 0, FN, FLAGS }
#define CLI_END \
  { NULL, 0, CLI_OPT_END, NULL, NULL, 0, 0, 0, NULL, 0 }

/* A verb of a command with verbs (`db show`): its operands' names, its help, its options. */
typedef struct cli_verb {
  const char *name;          /* "show"; NULL ends a list of verbs */
  const char *args;          /* its operands in help ("A B"), NULL when none */
  const char *help;          /* help; '\n' as in cli_option */
  const cli_option *options; /* its table */
} cli_verb;

/* The most options one table holds (the parser keeps a count per option). */
#define CLI_OPTIONS_MAX 48

/* Options in a table. */
size_t cli_options_count(const cli_option *table);

/* getopt_long's table (each val is 256 + the option's index, so it is never a letter; ended by
 * a zero entry) and short-option string ("o:") for TABLE.  long_opts holds CLI_OPTIONS_MAX + 1
 * entries, shorts at least 2 * CLI_OPTIONS_MAX + 1 chars.  Returns the number of options, or
 * -1 when TABLE has more than CLI_OPTIONS_MAX. */
int cli_options_getopt(const cli_option *table, struct option *long_opts, char *shorts);

/* Parses the options of argv (argv[0] is the command's or the verb's name) into the struct at
 * BASE with getopt_long, operands permuted to the end; *operands is then the index of the first
 * operand.  CMD names the command in errors ("db"), VERB the verb (NULL when none).  Returns 0,
 * or the exit code after one error line on stderr: CLI_EXIT_USAGE for bad usage, or what a
 * callback returned. */
int cli_options_parse(const char *cmd, const char *verb, const cli_option *table, int argc,
                      char **argv, void *base, int *operands);

/* Prints the help of TABLE's options, one per line: "  -o, --output FILE  help", the help
 * aligned in one column (a longer option puts its help on the next line), continuation lines
 * under the first. */
void cli_options_print(const cli_option *table, FILE *out);

/* Prints VERBS ("  name args  help") and then the options of all of them once each, every
 * option's help opened by the verbs that take it when not all do ("show, import: ..."). */
void cli_verbs_print(const cli_verb *verbs, FILE *out);

/* The verb in argv[1..argc-1]: the first operand (an argument that is neither an option nor an
 * option's value, by the verbs' tables), or -1 when there is none. */
int cli_verbs_find(const cli_verb *verbs, int argc, char **argv);

/* The first argument of argv[1..argc-1] that looks like an option no verb takes ("--nope"), or
 * NULL: what to report when cli_verbs_find finds no verb. */
const char *cli_verbs_stray(const cli_verb *verbs, int argc, char **argv);

/* The verb named NAME, or NULL. */
const cli_verb *cli_verb_named(const cli_verb *verbs, const char *name);

/* Writes s to out with the usage markers ("{DEVICES}") filled in (cli.c). */
void cli_put_text(const char *s, FILE *out);

#endif
