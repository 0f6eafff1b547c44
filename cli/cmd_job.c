/* cmd_job.c — `rooftune job run|status|merge`: a job file (job/job.h) → job_run(),
 * job_status(), job_merge(); one line per problem for logs, a progress bar on a terminal,
 * one JSON object with --json. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/util.h"
#include "job/job.h"
#include "job/report.h"
#include "job/run.h"
#include "tuner/verdict.h"

static const char usage[] =
    "usage: rooftune job run JOB [--shard I/N] [--device DEV] [--db FILE] [--json] [--no-report]\n"
    "       rooftune job status JOB [--shard I/N] [--device DEV] [--db FILE] [--json]\n"
    "       rooftune job merge OUT.db SHARD.db...\n"
    "       rooftune job merge --job JOB\n\n"
    "A job file (JSON) lists the problems to keep tuned, the device(s), the database, a time\n"
    "budget and what \"fresh\" means; the README and job/job.h describe the format.\n";

static const char epilog[] =
    "exit status: 0 done (or stopped at the time budget), 1 a problem failed or the run was\n"
    "interrupted, 2 bad usage or job file, 3 a rechecked winner regressed.\n";

typedef struct view {
  int tty;     /* draw the bar on stderr */
  int drawn;   /* the bar is on the line */
  FILE *lines; /* where problem lines go */
} view;

static void clear_bar(view *v) {
  if (v->drawn) fprintf(stderr, "\r\033[K");
  v->drawn = 0;
}

static double num(const json_t *o, const char *k) {
  return json_number_value(json_object_get(o, k));
}
static const char *str(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

/* The larger of width and text's length: a column that fits its content. */
static int widest(int width, const char *text) {
  int n = (int)strlen(text);
  return n > width ? n : width;
}

static void problem_line(FILE *out, const job_event *ev) {
  const json_t *it = ev->item;
  const char *action = str(it, "action"), *state = str(it, "state"), *reason = str(it, "reason");
  if (ev->parallel) fprintf(out, "%s ", ev->device);
  fprintf(out, "[%zu/%zu] %s %s %s: ", ev->index, ev->total, ev->problem->target,
          ev->problem->shape, ev->problem->dtype);
  const json_t *best = json_object_get(it, "best");
  if (!strcmp(action, "fresh")) {
    char age[32];
    job_format_duration(num(it, "age_s"), age, sizeof age);
    fprintf(out, "fresh (tuned %s ago)", age);
  } else if (!strcmp(action, "left")) {
    fprintf(out, "left for the next run (%s%s%s; the time budget is spent)", state,
            reason[0] ? ": " : "", reason);
  } else if (!strcmp(action, "failed")) {
    fprintf(out, "FAILED (%s): %s", state, str(it, "error"));
  } else if (!strcmp(action, "empty")) {
    fprintf(out, "not tuned: %s", reason);
  } else if (!strcmp(action, "nothing")) {
    fprintf(out, "nothing to do: %s", str(it, "note"));
  } else {
    fprintf(out, "%s (%s%s%s): %lld evaluated", action, state, reason[0] ? ": " : "", reason,
            (long long)num(it, "evaluated"));
    if (num(it, "resumed") > 0)
      fprintf(out, ", %lld from the database", (long long)num(it, "resumed"));
    if (num(it, "failed") > 0) fprintf(out, ", %lld failed", (long long)num(it, "failed"));
    if (!strcmp(action, "interrupted")) fprintf(out, ", stopped: the rest next run");
  }
  if (json_is_object(best))
    fprintf(out, ", best %.4g ms %s (%s)", num(best, "time_ms"), str(best, "template"),
            str(best, "timing"));
  if (num(it, "seconds") > 0) fprintf(out, " in %.1f s", num(it, "seconds"));
  size_t i;
  const json_t *r;
  json_array_foreach(json_object_get(it, "rechecks"), i, r) {
    const char *v = str(r, "verdict");
    fprintf(out, "; recheck %s %s", str(r, "template"), v);
    char ratio[32];
    if (json_is_number(json_object_get(r, "now_ms")))
      fprintf(out, " %.4g -> %.4g ms (%s)", num(r, "then_ms"), num(r, "now_ms"),
              verdict_ratio(num(r, "now_ms"), num(r, "then_ms"), ratio, sizeof ratio));
    if (str(r, "detail")[0]) fprintf(out, " (%s)", str(r, "detail"));
    if (!strcmp(v, "SLOWER") || !strcmp(v, "FAILS")) fprintf(out, " REGRESSION");
  }
  fputc('\n', out);
}

static void on_event(void *ctx, const job_event *ev) {
  view *v = ctx;
  if (ev->kind == JOB_EV_NOTE) {
    clear_bar(v);
    fprintf(v->lines, "%s%snote: %s\n", ev->parallel ? ev->device : "", ev->parallel ? " " : "",
            ev->text);
  } else if (ev->kind == JOB_EV_DONE) {
    clear_bar(v);
    problem_line(v->lines, ev);
  } else if (ev->kind == JOB_EV_PROGRESS && v->tty && !ev->parallel) {
    const tune_progress *p = ev->progress;
    int width = 20, fill = p->total ? (int)(width * (double)p->done / (double)p->total) : 0;
    if (fill > width) fill = width;
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r\033[K[%zu/%zu] %.40s %.40s [%s] %zu/%zu", ev->index, ev->total,
            ev->problem->target, ev->problem->shape, bar, p->done, p->total);
    if (p->have_best) fprintf(stderr, " best %.4g ms", p->best_ms);
    if (!p->last) fprintf(stderr, " (%s)", p->phase ? p->phase : "");
    v->drawn = 1;
  }
  fflush(NULL);
}

typedef struct common {
  const char *job_path, *device, *db; /* JOB (merge: --job), --device, --db */
  job_shard shard;                    /* --shard */
  int json, no_report;                /* --json, --no-report */
} common;

static int set_shard(const char *cmd, const char *value, void *base) {
  rt_error err = {0};
  return job_shard_parse(value, &((common *)base)->shard, &err) ? cli_fail(cmd, &err) : 0;
}

/* Each option once; a verb's table lists those it takes. */
#define JOB_OPT_SHARD                                                                   \
  CLI_CALL("shard", "I/N", set_shard, 0,                                                \
           "this process's shard: the problems at positions I, I+N, ... of the file,\n" \
           "and a share of the candidates of split problems (0 <= I < N)")
#define JOB_OPT_DEVICE                                                          \
  CLI_STRING(common, "device", "DEV", device,                                   \
             "instead of the job's device: cuda:all (one process per GPU) or\n" \
             "{DEVICES}")
#define JOB_OPT_DB \
  CLI_STRING(common, "db", "FILE", db, "instead of the job's (or the shard's) database")
#define JOB_OPT_JSON             \
  CLI_FLAG(common, "json", json, \
           "one JSON object on stdout (what summary.json holds); lines go to stderr")

static const cli_option job_run_table[] = {
    JOB_OPT_SHARD,
    JOB_OPT_DEVICE,
    JOB_OPT_DB,
    JOB_OPT_JSON,
    CLI_FLAG(common, "no-report", no_report, "do not write report.html"),
    CLI_END};
static const cli_option job_status_table[] = {JOB_OPT_SHARD, JOB_OPT_DEVICE, JOB_OPT_DB,
                                              JOB_OPT_JSON, CLI_END};
static const cli_option job_merge_table[] = {
    CLI_STRING(common, "job", "JOB", job_path,
               "merge the job's shard_database files into its database and write\n"
               "its report"),
    CLI_END};

static const cli_verb job_verbs[] = {
    {"run", "JOB",
     "skips fresh problems and re-measures their winners when due (a winner\n"
     "slower or broken is a regression); retunes stale, failed and never tuned\n"
     "problems with their budget of new evaluations; resumes a round a time\n"
     "budget or a kill cut short.  Stops cleanly when the job's time budget is\n"
     "spent.  Writes summary.json and report.html into the job's output folder.\n"
     "One line per problem; a progress bar on a terminal",
     job_run_table},
    {"status", "JOB",
     "each problem: fresh, stale, never tuned, failed or interrupted, why, its\n"
     "winner and its age; nothing is run",
     job_status_table},
    {"merge", "OUT.db SHARD.db...",
     "merges shard databases into OUT.db (created when missing): winners the\n"
     "fastest across them, results of different GPUs kept apart; idempotent, in\n"
     "any order",
     job_merge_table},
    {NULL, NULL, NULL, NULL},
};

static int parse_common(const char *verb, int argc, char **argv, common *c) {
  memset(c, 0, sizeof *c);
  c->shard.count = 1;
  int arg, bad = cli_options_parse("job", verb, cli_verb_named(job_verbs, verb)->options, argc,
                                   argv, c, &arg);
  if (bad) return bad;
  if (arg >= argc) return cli_usage_error("job", "%s: missing the job file (JOB.json)", verb);
  c->job_path = argv[arg++];
  if (arg < argc) return cli_usage_error("job", "unexpected argument '%s'", argv[arg]);
  return 0;
}

static int load(const common *c, job **j) {
  rt_error err = {0};
  if (job_load(c->job_path, j, &err)) {
    cli_fail("job", &err);
    return err.code == RT_ERR_IO ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
  }
  return 0;
}

static int verb_run(int argc, char **argv) {
  common c;
  int rc = parse_common("run", argc, argv, &c);
  if (rc) return rc;
  job *j = NULL;
  if ((rc = load(&c, &j))) return rc;
  view v = {cli_stderr_is_tty() && !c.json, 0, c.json ? stderr : stdout};
  job_run_options o;
  memset(&o, 0, sizeof o);
  o.shard = c.shard;
  o.device = c.device;
  o.db_path = c.db;
  o.stop = &cli_stop_requested;
  o.on_event = on_event;
  o.ctx = &v;
  o.no_report = c.no_report;
  o.worker_argv = cli_worker_argv;
  cli_stop sig;
  cli_stop_begin(&sig);
  job_outcome out;
  rt_error err = {0};
  rt_status st = job_run(j, &o, &out, &err);
  cli_stop_end(&sig);
  clear_bar(&v);
  if (st) {
    job_free(j);
    return cli_fail("job", &err);
  }
  const json_t *s = out.summary;
  if (c.json) {
    json_dumpf(s, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
  } else {
    const json_t *dev = json_object_get(s, "device");
    char devs[512] = "";
    if (json_is_string(dev))
      snprintf(devs, sizeof devs, "%s", json_string_value(dev));
    else {
      size_t i;
      json_t *d;
      json_array_foreach(dev, i, d) snprintf(devs + strlen(devs), sizeof devs - strlen(devs),
                                             "%s%s", i ? "," : "", json_string_value(d));
    }
    printf("job %s", j->name);
    if (c.shard.count > 1) printf(" shard %d/%d", c.shard.index, c.shard.count);
    printf(" on %s: %zu tuned (%zu evaluated), %zu fresh, %zu failed, %zu left, %zu regression%s",
           devs, out.tuned, out.evaluated, out.fresh, out.failed, out.left, out.regressions,
           out.regressions == 1 ? "" : "s");
    if (json_is_number(json_object_get(s, "seconds"))) printf(" in %.1f s", num(s, "seconds"));
    printf("\n");
    if (out.stopped)
      printf("stopped: the time budget is spent; the next run resumes where this one stopped\n");
    if (out.interrupted)
      printf("interrupted: every finished candidate is kept; the next run resumes\n");
    if (str(s, "report")[0]) printf("report: %s\n", str(s, "report"));
    if (str(s, "report_error")[0]) printf("report not written: %s\n", str(s, "report_error"));
    printf("database: %s\n", str(s, "database"));
  }
  if (out.regressions)
    fprintf(stderr, "rooftune job: %zu rechecked winner(s) slower or failing: a regression\n",
            out.regressions);
  int code = job_outcome_exit(&out);
  job_outcome_free(&out);
  job_free(j);
  return code;
}

static int verb_status(int argc, char **argv) {
  common c;
  int rc = parse_common("status", argc, argv, &c);
  if (rc) return rc;
  job *j = NULL;
  if ((rc = load(&c, &j))) return rc;
  json_t *st = NULL;
  rt_error err = {0};
  if (job_status(j, c.shard, c.device, c.db, &st, &err)) {
    job_free(j);
    return cli_fail("job", &err);
  }
  if (c.json) {
    json_dumpf(st, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
  } else {
    if (str(st, "note")[0]) printf("note: %s\n", str(st, "note"));
    printf("job %s on %s (%s), database %s\n", j->name, str(st, "device"), str(st, "gpu"),
           str(st, "database"));
    size_t i;
    json_t *p;
    /* the columns fit their content: names are never cut, long ones keep the rest in line */
    int wt = 6, ws = 5, ww = 6;
    json_array_foreach(json_object_get(st, "problems"), i, p) {
      const json_t *b = json_object_get(p, "best");
      wt = widest(wt, str(p, "target"));
      ws = widest(ws, str(p, "shape"));
      if (json_is_object(b)) ww = widest(ww, str(b, "template"));
    }
    printf("%-*s %-*s %-5s %-12s %8s  %-*s %10s  %s\n", wt, "target", ws, "shape", "dtype", "state",
           "age", ww, "winner", "time_ms", "why");
    json_array_foreach(json_object_get(st, "problems"), i, p) {
      char age[32];
      job_format_duration(json_is_number(json_object_get(p, "age_s")) ? num(p, "age_s") : NAN, age,
                          sizeof age);
      const json_t *b = json_object_get(p, "best");
      printf("%-*s %-*s %-5s %-12s %8s  %-*s ", wt, str(p, "target"), ws, str(p, "shape"),
             str(p, "dtype"), str(p, "state"), age, ww,
             json_is_object(b) ? str(b, "template") : "-");
      if (json_is_object(b))
        printf("%10.4g", num(b, "time_ms"));
      else
        printf("%10s", "-");
      printf("  %s", str(p, "reason"));
      if (!strcmp(str(p, "state"), "interrupted"))
        printf(" (%lld left)", (long long)num(p, "left"));
      if (str(p, "regression")[0]) printf(" REGRESSION (%s)", str(p, "regression"));
      printf("\n");
    }
  }
  json_decref(st);
  job_free(j);
  return CLI_EXIT_OK;
}

static int verb_merge(int argc, char **argv) {
  common mc = {0};
  int arg, bad = cli_options_parse("job", "merge", job_merge_table, argc, argv, &mc, &arg);
  if (bad) return bad;
  const char *job_path = mc.job_path;
  rt_error err = {0};
  job_merge_stats ms;
  job *j = NULL;
  char **files = NULL;
  size_t nfiles = 0;
  char out[1024];
  if (job_path) {
    if (arg < argc)
      return cli_usage_error("job", "merge --job takes no other argument ('%s')", argv[arg]);
    common c = {.job_path = job_path};
    int rc = load(&c, &j);
    if (rc) return rc;
    if (job_shard_files(j, &files, &nfiles, &err)) {
      job_free(j);
      return cli_fail("job", &err);
    }
    job_database_path(j, (job_shard){0, 1}, NULL, out, sizeof out);
    if (nfiles == 0) {
      fprintf(stderr, "rooftune job: merge: no shard database of job %s exists yet (%s)\n", j->name,
              j->shard_database);
      job_free(j);
      return CLI_EXIT_FAIL;
    }
    /* the report goes into the output folder: made (or refused) before anything is merged, as
     * job run makes it, so a merge never ends failing with the databases already changed */
    if (rt_mkdir_p(j->output, &err)) {
      for (size_t i = 0; i < nfiles; i++) free(files[i]);
      free(files);
      job_free(j);
      return cli_fail("job", &err);
    }
  } else {
    if (argc - arg < 2)
      return cli_usage_error("job", "merge: give OUT.db and at least one SHARD.db (or --job JOB)");
    snprintf(out, sizeof out, "%s", argv[arg]);
    files = argv + arg + 1;
    nfiles = (size_t)(argc - arg - 1);
  }
  rt_status st = job_merge(out, files, nfiles, &ms, &err);
  int code = CLI_EXIT_OK;
  if (st)
    code = cli_fail("job", &err);
  else
    printf("merged %zu database%s into %s: %lld new results, %zu winners\n", ms.files,
           ms.files == 1 ? "" : "s", out, ms.added, ms.winners);
  if (!st && j) {
    char rp[1200];
    snprintf(rp, sizeof rp, "%s/report.html", j->output);
    db *d = NULL;
    report_options ro = {j, NULL, j->tolerance, 0};
    report_stats rs;
    if (db_open(out, DB_READONLY, &d, &err) || report_write(d, &ro, rp, &rs, &err))
      code = cli_fail("job", &err);
    else
      printf("report: %s (%zu problems, %zu candidates, %zu regressions)\n", rp, rs.sections,
             rs.candidates, rs.regressions);
    db_close(d);
  }
  if (j) {
    for (size_t i = 0; i < nfiles; i++) free(files[i]);
    free(files);
    job_free(j);
  }
  return code;
}

static int cmd_job(int argc, char **argv) {
  if (argc < 2) return cli_usage_error("job", "missing the verb: run, status or merge");
  const char *verb = argv[1];
  if (verb[0] == '-')
    return cli_usage_error("job", "unknown option '%s' (the verbs are run, status and merge)",
                           verb);
  if (!strcmp(verb, "run")) return verb_run(argc - 1, argv + 1);
  if (!strcmp(verb, "status")) return verb_status(argc - 1, argv + 1);
  if (!strcmp(verb, "merge")) return verb_merge(argc - 1, argv + 1);
  return cli_usage_error("job", "unknown verb '%s' (run, status or merge)", verb);
}

const cli_command cli_cmd_job = {
    .name = "job",
    .summary = "run a tuning job file: incremental, sharded, with rechecks",
    .usage = usage,
    .verbs = job_verbs,
    .epilog = epilog,
    .run = cmd_job};
