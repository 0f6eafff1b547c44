/* cmd_report.c — `rooftune report`: a tuning database as one self-contained HTML page with
 * inline SVG rooflines (tuner/job/report.h). */
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "tuner/cli/cli.h"
#include "tuner/job/job.h"
#include "tuner/job/report.h"
#include "tuner/job/run.h"
#include "tuner/core/util.h"

static const char usage[] =
    "usage: rooftune report [--db FILE] [--job JOB] -o FILE [--top N] [--title TEXT]\n\n"
    "Writes one HTML file, with no script and nothing fetched from the network: for each problem\n"
    "and device, the roofline of every candidate (arithmetic intensity against achieved FLOP/s,\n"
    "log scales, under the device's memory and compute roofs, measured or from the spec table),\n"
    "measured, predicted and replayed candidates told apart and the winner marked; the fastest\n"
    "candidates with their dominant limit and lever; the winner's time run after run, with\n"
    "rechecks; and regressions first.  `rooftune job run` writes one into its output folder.\n\n"
    "options:\n"
    "  --db FILE      the database (default: the job's, else $ROOFTUNE_DB, else\n"
    "                 $XDG_DATA_HOME/rooftune/tuning.db, else ~/.local/share/rooftune/tuning.db)\n"
    "  --job JOB      only the problems of this job file (and its database and tolerance)\n"
    "  -o, --output FILE  where to write the report (required)\n"
    "  --top N        rows in each problem's table of candidates (default 10)\n"
    "  --title TEXT   the page's title\n";

static int cmd_report(int argc, char **argv) {
  static const struct option opts[] = {{"db", required_argument, 0, 'd'},    {"job", required_argument, 0, 'J'},
                                       {"output", required_argument, 0, 'o'}, {"top", required_argument, 0, 't'},
                                       {"title", required_argument, 0, 'T'},  {0, 0, 0, 0}};
  const char *dbp = NULL, *job_path = NULL, *out = NULL, *title = NULL;
  long top = 0;
  int c;
  while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
    switch (c) {
    case 'd': dbp = optarg; break;
    case 'J': job_path = optarg; break;
    case 'o': out = optarg; break;
    case 'T': title = optarg; break;
    case 't':
      if (cli_parse_count("report", "--top", optarg, &top) < 0) return CLI_EXIT_USAGE;
      if (top < 1) return cli_usage_error("report", "--top must be at least 1");
      break;
    default: return cli_bad_option("report", argc, argv);
    }
  }
  if (optind < argc) return cli_usage_error("report", "unexpected argument '%s'", argv[optind]);
  if (!out) return cli_usage_error("report", "missing -o FILE (where to write the HTML)");
  rt_error err = {0};
  job *j = NULL;
  if (job_path && job_load(job_path, &j, &err)) {
    cli_fail("report", &err);
    return err.code == RT_ERR_IO ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
  }
  char buf[1024];
  if (!dbp) {
    if (j) job_database_path(j, (job_shard){0, 1}, NULL, buf, sizeof buf);
    else rt_default_db_path(buf, sizeof buf);
    dbp = buf;
  }
  db *d = NULL;
  report_options o = {j, title, 0, (int)top};
  report_stats st;
  int rc = CLI_EXIT_OK;
  if (db_open(dbp, DB_READONLY, &d, &err) || report_write(d, &o, out, &st, &err)) rc = cli_fail("report", &err);
  else
    printf("wrote %s: %zu problem%s, %zu candidates (%zu plotted, %zu failed), %zu regression%s, %ld bytes\n", out,
           st.sections, st.sections == 1 ? "" : "s", st.candidates, st.points, st.failed, st.regressions,
           st.regressions == 1 ? "" : "s", st.bytes);
  db_close(d);
  job_free(j);
  return rc;
}

const cli_command cli_cmd_report = {"report", "write an HTML report with rooflines of a tuning database", usage,
                                    cmd_report, 0};
