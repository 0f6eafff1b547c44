/* cmd_report.c — `rooftune report`: a tuning database as one self-contained HTML page with
 * inline SVG rooflines (job/report.h). */
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "cli/cli.h"
#include "job/job.h"
#include "job/report.h"
#include "job/run.h"
#include "core/util.h"

static const char usage[] =
    "usage: rooftune report [--db FILE] [--job JOB] -o FILE [--top N] [--title TEXT]\n\n"
    "Writes one HTML file, with no script and nothing fetched from the network: for each problem\n"
    "and device, the roofline of every candidate (arithmetic intensity against achieved FLOP/s,\n"
    "log scales, under the device's memory and compute roofs, measured or from the spec table),\n"
    "measured, predicted and replayed candidates told apart and the winner marked; the fastest\n"
    "candidates with their dominant limit and lever; the winner's time run after run, with\n"
    "rechecks; and regressions first.  `rooftune job run` writes one into its output folder.\n";

typedef struct report_cli {
  const char *db, *job, *output, *title; /* --db, --job, -o, --title */
  long top;                              /* --top; 0: the default */
} report_cli;

static const cli_option report_table[] = {
    CLI_STRING(report_cli, "db", "FILE", db,
               "the database (default: the job's, else " CLI_DEFAULT_DB_TEXT ")"),
    CLI_STRING(report_cli, "job", "JOB", job,
               "only the problems of this job file (and its database and tolerance)"),
    CLI_STRING_SHORT(report_cli, 'o', "output", "FILE", output,
                     "where to write the report (required)"),
    CLI_COUNT(report_cli, "top", "N", top, 1,
              "rows in each problem's table of candidates (default 10)"),
    CLI_STRING(report_cli, "title", "TEXT", title, "the page's title"),
    CLI_END,
};

static int cmd_report(int argc, char **argv) {
  report_cli cli = {0};
  int arg, bad = cli_options_parse("report", NULL, report_table, argc, argv, &cli, &arg);
  if (bad) return bad;
  const char *dbp = cli.db, *job_path = cli.job, *out = cli.output, *title = cli.title;
  long top = cli.top;
  if (arg < argc) return cli_usage_error("report", "unexpected argument '%s'", argv[arg]);
  if (!out) return cli_usage_error("report", "missing -o FILE (where to write the HTML)");
  rt_error err = {0};
  job *j = NULL;
  if (job_path && job_load(job_path, &j, &err)) {
    cli_fail("report", &err);
    return err.code == RT_ERR_IO ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
  }
  char buf[1024];
  if (!dbp) {
    if (j)
      job_database_path(j, (job_shard){0, 1}, NULL, buf, sizeof buf);
    else
      rt_default_db_path(buf, sizeof buf);
    dbp = buf;
  }
  db *d = NULL;
  report_options o = {j, title, 0, (int)top};
  report_stats st;
  int rc = CLI_EXIT_OK;
  if (db_open(dbp, DB_READONLY, &d, &err) || report_write(d, &o, out, &st, &err))
    rc = cli_fail("report", &err);
  else
    printf(
        "wrote %s: %zu problem%s, %zu candidates (%zu plotted, %zu failed), %zu regression%s, %ld "
        "bytes\n",
        out, st.sections, st.sections == 1 ? "" : "s", st.candidates, st.points, st.failed,
        st.regressions, st.regressions == 1 ? "" : "s", st.bytes);
  db_close(d);
  job_free(j);
  return rc;
}

const cli_command cli_cmd_report = {
    .name = "report",
    .summary = "write an HTML report with rooflines of a tuning database",
    .usage = usage,
    .options = report_table,
    .run = cmd_report};
