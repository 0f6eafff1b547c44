/* cmd_db.c — `rooftune db VERB`: list, show, export, import, merge and check a tuning
 * database.  Every verb opens the database through db.h, so a damaged, foreign or newer file
 * gets db_open's one clear error. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "db/db.h"
#include "db/export.h"
#include "kernels/family.h"
#include "model/recorded.h"
#include "template/ktfile.h"
#include "core/sha256.h"
#include "core/util.h"

static const char usage[] =
    "usage: rooftune db VERB [options]\n\n"
    "Reads and maintains a tuning database: every candidate rooftune evaluated, the winners\n"
    "with their cubins, and the provenance of each number (device, toolkit, template version;\n"
    "measured, predicted or replayed).\n";

typedef struct db_opts {
  const char *db;     /* --db */
  const char *family; /* --family */
  const char *shape;  /* --shape */
  const char *dtype;  /* --dtype */
  const char *tmpl;   /* --template */
  const char *device; /* --device: a part of the device name */
  const char *format; /* --format */
  const char *output; /* -o */
  int json;           /* --json */
} db_opts;

/* Each option once; a verb's table lists those it takes. */
#define DB_OPT_DB \
  CLI_STRING(db_opts, "db", "FILE", db, "the database (default: " CLI_DEFAULT_DB_TEXT ")")
#define DB_OPT_FAMILY                        \
  CLI_STRING(db_opts, "family", "F", family, \
             "the problem's family (import: default the file's kernel)")
#define DB_OPT_SHAPE                                                     \
  CLI_STRING(db_opts, "shape", "S", shape,                               \
             "the problem's shape (import: default the file's problem\n" \
             "size, e.g. 4096x4096)")
#define DB_OPT_DTYPE \
  CLI_STRING(db_opts, "dtype", "D", dtype, "the input precision (import: default f32)")
#define DB_OPT_TEMPLATE                         \
  CLI_STRING(db_opts, "template", "NAME", tmpl, \
             "the template name (default the file's kernel name)")
#define DB_OPT_DEVICE                                                    \
  CLI_STRING(db_opts, "device", "NAME", device,                          \
             "only results of devices whose name contains NAME\n"        \
             "(\"H100\", \"model:h200\"), e.g. one GPU's results of a\n" \
             "merged database as another GPU's --prior")
#define DB_OPT_FORMAT CLI_STRING(db_opts, "format", "FMT", format, "json, csv or header")
#define DB_OPT_OUTPUT \
  CLI_STRING_SHORT(db_opts, 'o', "output", "FILE", output, "write here instead of stdout")
#define DB_OPT_JSON CLI_FLAG(db_opts, "json", json, "one JSON object instead of text")

static const cli_option db_list_table[] = {DB_OPT_DB, DB_OPT_JSON, CLI_END};
static const cli_option db_show_table[] = {DB_OPT_DB,     DB_OPT_FAMILY, DB_OPT_SHAPE, DB_OPT_DTYPE,
                                           DB_OPT_DEVICE, DB_OPT_JSON,   CLI_END};
static const cli_option db_export_table[] = {DB_OPT_DB,     DB_OPT_FAMILY, DB_OPT_SHAPE,
                                             DB_OPT_DTYPE,  DB_OPT_DEVICE, DB_OPT_FORMAT,
                                             DB_OPT_OUTPUT, CLI_END};
static const cli_option db_import_table[] = {DB_OPT_DB,    DB_OPT_FAMILY,   DB_OPT_SHAPE,
                                             DB_OPT_DTYPE, DB_OPT_TEMPLATE, CLI_END};
static const cli_option db_merge_table[] = {CLI_END};
static const cli_option db_check_table[] = {DB_OPT_DB, DB_OPT_JSON, CLI_END};
static const cli_option db_upgrade_table[] = {DB_OPT_DB, CLI_END};

static const cli_verb db_verbs[] = {
    {"list", NULL, "row counts and one line per winner", db_list_table},
    {"show", NULL, "every result of the matching problems, with full provenance", db_show_table},
    {"export", NULL,
     "write the database as --format json (default), csv or header\n"
     "(a C header with the tuned configs) to stdout or -o FILE; --family,\n"
     "--shape, --dtype and --device choose its results and winners alike",
     db_export_table},
    {"import", "KTFILE",
     "store a Kernel Tuner cache file (plain or .gz) as replayed results;\n"
     "importing the same file again adds nothing",
     db_import_table},
    {"merge", "A B",
     "merge database B into database A, keeping provenance; merging twice\n"
     "adds nothing",
     db_merge_table},
    {"check", NULL,
     "integrity, schema (no foreign triggers) and value checks (times,\n"
     "statuses, shapes, markup or bytes that are not UTF-8 where rooftune\n"
     "writes none); exit 1 when something is wrong",
     db_check_table},
    {"upgrade", NULL, "migrate a database written by an older rooftune to this schema",
     db_upgrade_table},
    {NULL, NULL, NULL, NULL},
};

static char default_db[1024];

static int fail_msg(const char *fmt, const char *a) {
  fprintf(stderr, "rooftune db: ");
  fprintf(stderr, fmt, a);
  fputc('\n', stderr);
  return CLI_EXIT_FAIL;
}

static const char *opts_db(const db_opts *o) {
  if (o->db) return o->db;
  return rt_default_db_path(default_db, sizeof default_db);
}

static int open_db(const db_opts *o, int flags, db **d) {
  rt_error err = {0};
  const char *path = opts_db(o);
  if ((flags & DB_CREATE) && !o->db && rt_mkdir_parents(path, &err)) return cli_fail("db", &err);
  if (db_open(path, flags, d, &err)) return cli_fail("db", &err);
  return CLI_EXIT_OK;
}

static double num_or_null(double v) { return v; }

/* ---- list ---------------------------------------------------------------------------- */

/* The larger of width and text's length: a column that fits its content. */
static int widest(int width, const char *text) {
  int n = (int)strlen(text);
  return n > width ? n : width;
}

static int verb_list(const db_opts *o) {
  db *d = NULL;
  int rc = open_db(o, DB_READONLY, &d);
  if (rc) return rc;
  rt_error err = {0};
  db_counts c;
  db_entry *e = NULL;
  size_t n = 0;
  if (db_count(d, &c, &err) || db_entries(d, 0, &e, &n, &err)) {
    db_close(d);
    return cli_fail("db", &err);
  }
  if (o->json) {
    json_t *root = json_object(), *w = json_array();
    json_object_set_new(root, "database", json_string(db_path(d)));
    json_object_set_new(root, "schema_version", json_integer(db_schema_version(d)));
    json_t *cnt = json_object();
    json_object_set_new(cnt, "devices", json_integer(c.devices));
    json_object_set_new(cnt, "templates", json_integer(c.templates));
    json_object_set_new(cnt, "problems", json_integer(c.problems));
    json_object_set_new(cnt, "runs", json_integer(c.runs));
    json_object_set_new(cnt, "results", json_integer(c.results));
    json_object_set_new(cnt, "winners", json_integer(c.winners));
    json_object_set_new(root, "counts", cnt);
    for (size_t i = 0; i < n; i++) json_array_append_new(w, db_export_entry_json(&e[i]));
    json_object_set_new(root, "winners", w);
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(root);
  } else {
    printf(
        "%s: schema %d, %lld results in %lld runs, %lld problems, %lld devices, %lld "
        "templates, %lld winners\n",
        db_path(d), db_schema_version(d), c.results, c.runs, c.problems, c.devices, c.templates,
        c.winners);
    /* the columns fit their content: names are never cut, long ones keep the rest in line */
    int wf = 6, ws = 5, wd = 6, wt = 8;
    for (size_t i = 0; i < n; i++) {
      wf = widest(wf, e[i].family);
      ws = widest(ws, e[i].shape);
      wd = widest(wd, e[i].device.name);
      wt = widest(wt, e[i].template_name);
    }
    if (n)
      printf("%-*s %-*s %-5s %-*s %-*s %12s  %-9s %-8s %s\n", wf, "family", ws, "shape", "dtype",
             wd, "device", wt, "template", "time_ms", "timing", "verified", "config");
    for (size_t i = 0; i < n; i++)
      printf("%-*s %-*s %-5s %-*s %-*s %12.5g  %-9s %-8s %s%s\n", wf, e[i].family, ws, e[i].shape,
             e[i].dtype, wd, e[i].device.name, wt, e[i].template_name, num_or_null(e[i].time_ms),
             timing_kind_name(e[i].timing),
             e[i].verified                     ? "yes"
             : !strcmp(e[i].checked_on, "sim") ? "sim"
                                               : "no",
             e[i].config, e[i].template_stale ? "  (older template version)" : "");
  }
  free(e);
  db_close(d);
  return CLI_EXIT_OK;
}

/* ---- show and export (one walk over the results) -------------------------------------- */

typedef struct walk {
  const db_opts *o; /* filters */
  FILE *out;        /* where rows go */
  int format;       /* 0 text, 1 json, 2 csv */
  json_t *rows;     /* json: the array */
  long count;       /* rows written */
} walk;

static int walk_match(const walk *w, const db_run_spec *s) {
  const db_opts *o = w->o;
  if (o->family && strcmp(o->family, s->prob.family)) return 0;
  if (o->dtype && strcmp(o->dtype, s->prob.dtype)) return 0;
  if (o->shape && strcmp(o->shape, s->prob.shape)) return 0;
  if (o->device && !strcasestr(s->prov.device.name, o->device)) return 0;
  return 1;
}

static rt_status walk_row(void *ctx, const db_run_spec *s, const char *tmpl, const char *src,
                          const char *man, const candidate_result *r, rt_error *err) {
  (void)err;
  walk *w = ctx;
  if (!walk_match(w, s)) return RT_OK;
  w->count++;
  if (w->format == 1) {
    json_array_append_new(w->rows, db_export_row_json(s, tmpl, src, man, r));
    return RT_OK;
  }
  fprintf(w->out, "%s %s %s%s%s on %s [%s]: %s %s: %s", s->prob.family, s->prob.shape,
          s->prob.dtype, s->prob.layout[0] ? " " : "", s->prob.layout, s->prov.device.name,
          s->prov.toolkit, tmpl, r->config, rt_status_name(r->status));
  if (r->status == RT_OK)
    fprintf(w->out, " %.5g ms %s, %s (spread %.3g, %d runs)", r->time_ms,
            timing_kind_name(r->timing),
            r->verified                     ? "verified"
            : !strcmp(r->checked_on, "sim") ? "not verified (checked on the sim)"
                                            : "not verified",
            r->spread, r->repetitions);
  else if (r->detail[0])
    fprintf(w->out, " (%s)", r->detail);
  if (r->precision[0]) fprintf(w->out, " in %s", r->precision);
  if (r->diag.limit[0]) fprintf(w->out, "; limit %s, lever %s", r->diag.limit, r->diag.lever);
  if (r->diag.move[0]) fprintf(w->out, " (%s)", r->diag.move);
  if (r->status == RT_OK && r->detail[0]) fprintf(w->out, "; %s", r->detail);
  fputc('\n', w->out);
  if (r->counters.measured)
    fprintf(
        w->out,
        "    measured: DRAM %.4g GB read + %.4g GB written (model %.4g GB), L2 %.4g GB, occupancy "
        "%.0f %% (calculated %.0f %%), tensor pipe %.0f %%, FMA pipe %.0f %%, SM %.0f %%, stalls "
        "%s\n",
        r->counters.dram_read_bytes / 1e9, r->counters.dram_write_bytes / 1e9, r->dram_bytes / 1e9,
        r->counters.l2_bytes / 1e9, 100 * r->counters.occupancy, 100 * r->facts.occupancy,
        100 * r->counters.tensor_pipe, 100 * r->counters.fma_pipe, 100 * r->counters.sm_throughput,
        r->counters.stalls[0] ? r->counters.stalls : "-");
  if (r->verdict[0]) fprintf(w->out, "    winner: %s\n", r->verdict);
  return RT_OK;
}

static int verb_show(const db_opts *o) {
  db *d = NULL;
  int rc = open_db(o, DB_READONLY, &d);
  if (rc) return rc;
  walk w = {o, stdout, o->json ? 1 : 0, o->json ? json_array() : NULL, 0};
  rt_error err = {0};
  rt_status s = db_each_result(d, walk_row, &w, &err);
  db_close(d);
  if (s) {
    json_decref(w.rows);
    return cli_fail("db", &err);
  }
  if (o->json) {
    json_t *root = json_object();
    json_object_set_new(root, "results", w.rows);
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(root);
  } else if (!w.count) {
    printf("no results%s\n", o->family || o->shape || o->dtype ? " match" : "");
  }
  return CLI_EXIT_OK;
}

static int verb_export(const db_opts *o) {
  const char *fmt = o->format ? o->format : "json";
  int kind = !strcmp(fmt, "json")     ? DB_EXPORT_JSON
             : !strcmp(fmt, "csv")    ? DB_EXPORT_CSV
             : !strcmp(fmt, "header") ? DB_EXPORT_HEADER
                                      : 0;
  if (!kind) return cli_usage_error("db", "--format must be json, csv or header, not '%s'", fmt);
  db *d = NULL;
  int rc = open_db(o, DB_READONLY, &d);
  if (rc) return rc;
  db_export_filter f = {o->family, o->shape, o->dtype, o->device};
  rt_error err = {0};
  rt_status s = db_export_write(d, kind, &f, o->output, &err);
  db_close(d);
  return s ? cli_fail("db", &err) : CLI_EXIT_OK;
}

/* ---- import --------------------------------------------------------------------------- */

/* The problem an imported file measured: a registered family parses the shape; any other
 * family gets dimensions D1, D2, ... from "AxBxC". */
static int import_problem(const char *family, const char *shape, const char *dtype, problem *p) {
  rt_error err = {0};
  memset(p, 0, sizeof *p);
  const family_ops *f = family_find(family);
  if (f) {
    if (f->parse_shape(f, shape, dtype, NULL, p, &err)) return cli_fail("db", &err);
    return CLI_EXIT_OK;
  }
  /* the problem's texts are stored as they are: too long is an error, never a cut (two
   * families cut to one name would merge into one problem) */
  if (strlen(family) >= sizeof p->family)
    return cli_usage_error("db",
                           "the family name '%s' is longer than %zu characters; give a "
                           "shorter one with --family",
                           family, sizeof p->family - 1);
  if (strlen(dtype) >= sizeof p->dtype)
    return cli_usage_error("db", "--dtype '%s' is longer than %zu characters", dtype,
                           sizeof p->dtype - 1);
  if (strlen(shape) >= sizeof p->shape)
    return cli_usage_error("db", "--shape is longer than %zu characters", sizeof p->shape - 1);
  snprintf(p->family, sizeof p->family, "%s", family);
  snprintf(p->dtype, sizeof p->dtype, "%s", dtype);
  snprintf(p->shape, sizeof p->shape, "%s", shape);
  const char *s = shape;
  while (*s && p->ndims < PROBLEM_MAX_DIMS) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v <= 0 || (*end && *end != 'x'))
      return cli_usage_error("db", "--shape '%s' is not AxBx... with positive integers", shape);
    p->dim_names[p->ndims][0] = 'D';
    p->dim_names[p->ndims][1] = (char)('1' + p->ndims);
    p->dim_names[p->ndims][2] = '\0';
    p->dims[p->ndims++] = v;
    s = *end ? end + 1 : end;
  }
  return CLI_EXIT_OK;
}

static int verb_import(const db_opts *o, const char *file) {
  rt_error err = {0};
  ktfile *kf = NULL;
  if (ktfile_load(file, &kf, &err)) return cli_fail("db", &err);
  if (recorded_check_counters(kf, &err)) {
    ktfile_free(kf);
    return cli_fail("db", &err);
  }
  const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
  const char *family = o->family ? o->family : kf->kernel_name[0] ? kf->kernel_name : "kernel";
  const char *tmpl = o->tmpl ? o->tmpl : kf->kernel_name[0] ? kf->kernel_name : base;
  if (!o->shape) {
    ktfile_free(kf);
    return cli_usage_error("db",
                           "import needs --shape (the problem the file measured, e.g. "
                           "4096x4096)");
  }
  db_run_spec spec;
  memset(&spec, 0, sizeof spec);
  int rc = import_problem(family, o->shape, o->dtype ? o->dtype : "f32", &spec.prob);
  if (rc) {
    ktfile_free(kf);
    return rc;
  }
  char dev[sizeof spec.prov.device.name + 1];
  if ((size_t)snprintf(dev, sizeof dev, "replay:%s", kf->device_name[0] ? kf->device_name : base) >=
      sizeof spec.prov.device.name) {
    ktfile_free(kf);
    return fail_msg(
        "%s: the device name it records is too long to store (at most 120 "
        "characters)",
        file);
  }
  if (strlen(tmpl) >= sizeof((candidate_result *)0)->template_name) {
    rc = cli_usage_error("db",
                         "the template name '%.80s...' is longer than %zu characters; give "
                         "a shorter one with --template",
                         tmpl, sizeof((candidate_result *)0)->template_name - 1);
    ktfile_free(kf);
    return rc;
  }
  db_device_pseudo(&spec.prov.device, dev);
  /* The toolkit that compiled the recorded kernels is unknown: lookups flag it. */
  snprintf(spec.prov.toolkit, sizeof spec.prov.toolkit, "unknown (imported)");
  snprintf(spec.strategy, sizeof spec.strategy, "import");
  snprintf(spec.command, sizeof spec.command, "rooftune db import %s", file);
  char hash[65];
  if (sha256_file(file, hash)) {
    ktfile_free(kf);
    return fail_msg("cannot read %s", file);
  }
  db *d = NULL;
  if ((rc = open_db(o, DB_CREATE, &d))) {
    ktfile_free(kf);
    return rc;
  }
  db_run *r = NULL;
  candidate_result *batch = calloc(kf->configs ? kf->configs : 1, sizeof *batch);
  size_t nb = 0, skipped = 0, best = (size_t)-1;
  rt_status s = batch ? RT_OK : rt_error_set(&err, RT_ERR_NOMEM, "out of memory");
  if (!s) s = db_run_begin(d, &spec, &r, &err);
  if (!s) s = db_run_template(r, tmpl, family, "replay", hash, &err);
  for (size_t i = 0; !s && i < kf->configs; i++) {
    candidate_result *c = &batch[nb];
    ktfile_result(kf, i, c);
    snprintf(c->template_name, sizeof c->template_name, "%s", tmpl);
    if (db_run_has_result(r, tmpl, c->config)) {
      skipped++;
      continue;
    }
    if (c->status == RT_OK && (best == (size_t)-1 || c->time_ms < batch[best].time_ms)) best = nb;
    nb++;
  }
  long long *ids = calloc(nb ? nb : 1, sizeof *ids);
  if (!s && !ids) s = rt_error_set(&err, RT_ERR_NOMEM, "out of memory");
  if (!s && nb) s = db_run_store_many(r, batch, nb, ids, &err);
  int replaced = 0;
  if (!s && best != (size_t)-1) s = db_run_set_winner(r, ids[best], NULL, &replaced, &err);
  if (!s) s = db_run_finish(r, "done", &err);
  if (!s)
    printf("imported %zu results from %s (%zu already there) as %s %s %s on %s, replayed%s\n", nb,
           file, skipped, spec.prob.family, spec.prob.shape, spec.prob.dtype, dev,
           best != (size_t)-1 ? "; the fastest is the winner" : "");
  if (!s && kf->unfinished)
    printf(
        "note: %s is an unfinished Kernel Tuner cache (its run was interrupted before the "
        "closing braces); read as Kernel Tuner reads it\n",
        file);
  free(ids);
  free(batch);
  db_run_free(r);
  db_close(d);
  ktfile_free(kf);
  return s ? cli_fail("db", &err) : CLI_EXIT_OK;
}

/* ---- merge and check ------------------------------------------------------------------- */

static int verb_merge(const char *a, const char *b) {
  rt_error err = {0};
  db *d = NULL;
  if (db_open(a, DB_CREATE, &d, &err)) return cli_fail("db", &err);
  long long added = 0;
  rt_status s = db_merge(d, b, &added, &err);
  db_close(d);
  if (s) return cli_fail("db", &err);
  printf("merged %s into %s: %lld new results\n", b, a, added);
  return CLI_EXIT_OK;
}

static int verb_check(const db_opts *o) {
  db *d = NULL;
  rt_error err = {0};
  const char *path = opts_db(o);
  if (db_open(path, DB_READONLY, &d, &err)) return cli_fail("db", &err);
  static char report[65536];
  int problems = 0;
  rt_status s = db_check(d, report, sizeof report, &problems, &err);
  db_counts c;
  if (!s) s = db_count(d, &c, &err);
  db_close(d);
  if (s) return cli_fail("db", &err);
  if (o->json) {
    json_t *root = json_object(), *lines = json_array();
    json_object_set_new(root, "database", json_string(path));
    json_object_set_new(root, "ok", json_boolean(problems == 0));
    json_object_set_new(root, "problems", json_integer(problems));
    for (char *save = NULL, *t = strtok_r(report, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
      json_array_append_new(lines, json_string(t));
    json_object_set_new(root, "report", lines);
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(root);
  } else {
    fputs(report, stdout);
    printf("%s: %s (%lld results, %lld winners)\n", path,
           problems ? "PROBLEMS FOUND" : "ok: integrity, foreign keys and winners check out",
           c.results, c.winners);
  }
  return problems ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static int verb_upgrade(const db_opts *o) {
  rt_error err = {0};
  const char *path = opts_db(o);
  db *d = NULL;
  if (db_open(path, DB_READONLY, &d, &err) == RT_OK) {
    printf("%s: schema %d already, nothing to do\n", path, db_schema_version(d));
    db_close(d);
    return CLI_EXIT_OK;
  }
  if (err.code != RT_ERR_DB_VERSION) return cli_fail("db", &err);
  if (db_open(path, DB_CREATE, &d, &err)) return cli_fail("db", &err); /* migrates */
  printf("%s: migrated to schema %d\n", path, db_schema_version(d));
  db_close(d);
  return CLI_EXIT_OK;
}

static int cmd_db(int argc, char **argv) {
  db_opts o;
  memset(&o, 0, sizeof o);
  int at = cli_verbs_find(db_verbs, argc, argv);
  const char *stray = at < 0 ? cli_verbs_stray(db_verbs, argc, argv) : NULL;
  if (stray) return cli_usage_error("db", "unknown option '%s'", stray);
  if (at < 0)
    return cli_usage_error("db", "which verb? list, show, export, import, merge, check or upgrade");
  const char *verb = argv[at];
  const cli_verb *v = cli_verb_named(db_verbs, verb);
  if (!v)
    return cli_usage_error("db",
                           "'%s' is not a verb: list, show, export, import, merge, check or "
                           "upgrade",
                           verb);
  /* the verb's own options: argv without the verb, parsed with its table */
  char *vargv[argc + 1];
  int vargc = 0;
  for (int i = 0; i < argc; i++)
    if (i != at) vargv[vargc++] = argv[i];
  vargv[vargc] = NULL;
  int arg, bad = cli_options_parse("db", verb, v->options, vargc, vargv, &o, &arg);
  if (bad) return bad;
  int nargs = vargc - arg;
  char **args = vargv + arg;
  int want = !strcmp(verb, "merge") ? 2 : !strcmp(verb, "import") ? 1 : 0;
  if (nargs != want)
    return cli_usage_error("db", "%s takes %d file argument%s, got %d", verb, want,
                           want == 1 ? "" : "s", nargs);
  if (!strcmp(verb, "list")) return verb_list(&o);
  if (!strcmp(verb, "show")) return verb_show(&o);
  if (!strcmp(verb, "export")) return verb_export(&o);
  if (!strcmp(verb, "import")) return verb_import(&o, args[0]);
  if (!strcmp(verb, "merge")) return verb_merge(args[0], args[1]);
  if (!strcmp(verb, "upgrade")) return verb_upgrade(&o);
  return verb_check(&o);
}

const cli_command cli_cmd_db = {
    .name = "db",
    .summary = "list, show, export, import, merge, check, upgrade a tuning database",
    .usage = usage,
    .verbs = db_verbs,
    .run = cmd_db};
