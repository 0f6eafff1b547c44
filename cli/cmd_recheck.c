/* cmd_recheck.c — `rooftune recheck`: re-measures the database's winners on this device and
 * flags the ones that got slower or broke: the regression check of a nightly job. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "db/db.h"
#include "tuner/device/device.h"
#include "tuner/recheck.h"
#include "tuner/verdict.h"
#include "tuner/tune.h"
#include "core/util.h"

static const char usage[] =
    "usage: rooftune recheck [--db FILE] [--device DEV] [--family F] [--tolerance PCT]\n"
    "                        [--timeout S] [--json]\n\n"
    "Re-evaluates every template winner the database holds for this device (made on the same\n"
    "GPU, or on the same model device), each afresh as a run of its own, and compares the new\n"
    "time with the stored one.  A winner is SLOWER when the new time exceeds the stored one by\n"
    "more than the tolerance plus both measurements' spreads, and FAILS when it no longer\n"
    "compiles, launches or verifies.  The stored winner stays (the database keeps the fastest);\n"
    "the new measurement is kept beside it as history.  Winners from other devices are left\n"
    "out, cuBLASLt winners and winners of an older template version are listed but not\n"
    "re-measured (retune those).\n";

static const char epilog[] =
    "exit status: 0 no winner got slower or broke, 3 one did (a regression), 1 a recheck could\n"
    "not run, 2 bad usage.\n";

typedef struct verdict {
  const db_entry *e;
  recheck_result r;
} verdict;

typedef struct recheck_cli {
  const char *db, *device, *family; /* --db, --device, --family */
  long tolerance, timeout;          /* --tolerance (percent), --timeout (seconds; 0: the default) */
  int json;                         /* --json */
} recheck_cli;

static const cli_option recheck_table[] = {
    CLI_STRING(recheck_cli, "db", "FILE", db, "database (default: " CLI_DEFAULT_DB_TEXT ")"),
    CLI_STRING(recheck_cli, "device", "DEV", device,
               "{DEVICES_EVALUATING}; default: cuda when a\n"
               "GPU is present, else model:h200 (whose times are predictions)"),
    CLI_STRING(recheck_cli, "family", "F", family,
               "only this family's winners (default: every family)"),
    CLI_COUNT(recheck_cli, "tolerance", "PCT", tolerance, 0,
              "how much slower counts, in percent (default 5)"),
    CLI_COUNT(recheck_cli, "timeout", "S", timeout, 1,
              "per-candidate limit on the GPU, in seconds (default 20)"),
    CLI_FLAG(recheck_cli, "json", json,
             "{\"device\":..,\"rechecked\":N,\"slower\":N,\"failing\":N,\"results\":[{\"family\",\n"
             "\"shape\",\"dtype\",\"template\",\"config\",\"then_ms\",\"now_ms\",\"change\",\n"
             "\"verdict\"}]}"),
    CLI_END,
};

static int cmd_recheck(int argc, char **argv) {
  recheck_cli cli = {.tolerance = 5};
  int arg, bad = cli_options_parse("recheck", NULL, recheck_table, argc, argv, &cli, &arg);
  if (bad) return bad;
  const char *dbp = cli.db, *devspec = cli.device, *family = cli.family;
  double tol = (double)cli.tolerance / 100, timeout_s = (double)cli.timeout;
  int json = cli.json;
  if (arg < argc) return cli_usage_error("recheck", "unexpected argument '%s'", argv[arg]);
  const device_kind *kind = devspec ? device_kind_lookup(devspec) : NULL;
  if (kind && (kind->caps & DEVICE_CAP_RECORDED))
    return cli_usage_error("recheck", "--device %s: a recorded file has nothing to re-measure",
                           devspec);
  char dbbuf[1024], note[256] = "";
  if (!dbp) { /* the default database, its folder made for the runs a recheck stores (a folder
               * that cannot be made: db_open says so, naming the path) */
    dbp = rt_default_db_path(dbbuf, sizeof dbbuf);
    rt_mkdir_parents(dbp, NULL);
  }
  const char *spec = devspec ? devspec : tune_default_device(note, sizeof note);

  /* the device's name, which the winners made on it carry */
  rt_error err = {0};
  device *dev = NULL;
  device_options dopt;
  memset(&dopt, 0, sizeof dopt);
  if (device_open(spec, &dopt, &dev, &err)) return cli_fail("recheck", &err);
  char label[128];
  snprintf(label, sizeof label, "%s", device_label(dev));
  device_close(dev);

  db *d = NULL;
  db_entry *es = NULL;
  size_t n = 0;
  if (db_open(dbp, DB_READONLY, &d, &err) || db_entries(d, 0, &es, &n, &err)) {
    db_close(d);
    return cli_fail("recheck", &err);
  }
  db_close(d);
  verdict *vs = calloc(n ? n : 1, sizeof *vs);
  if (!vs) {
    free(es);
    fprintf(stderr, "rooftune recheck: out of memory\n");
    return CLI_EXIT_FAIL;
  }
  size_t nv = 0, slower = 0, failing = 0, errors = 0, measured = 0;
  if (note[0] && !json) printf("note: %s\n", note);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(es[i].device.name, label) != 0) continue;
    if (family && strcmp(es[i].family, family) != 0) continue;
    verdict *r = &vs[nv++];
    if (!json)
      fprintf(stderr, "rechecking %s %s %s %s ...\n", es[i].family, es[i].shape, es[i].dtype,
              es[i].template_name);
    r->e = &es[i];
    recheck_winner(&es[i], spec, dbp, tol, timeout_s, cli_worker_argv, &r->r);
    slower += r->r.verdict == RECHECK_SLOWER;
    failing += r->r.verdict == RECHECK_FAILS;
    errors += r->r.verdict == RECHECK_ERROR;
    measured += isfinite(r->r.now_ms);
  }

  if (json) {
    json_t *root =
        json_pack("{ss ss sI sI sI}", "device", label, "db", dbp, "rechecked", (json_int_t)measured,
                  "slower", (json_int_t)slower, "failing", (json_int_t)failing);
    if (note[0]) json_object_set_new(root, "note", json_string(note));
    json_t *arr = json_array();
    for (size_t i = 0; i < nv; i++) {
      const verdict *r = &vs[i];
      json_t *o =
          json_pack("{ss ss ss ss ss sf ss}", "family", r->e->family, "shape", r->e->shape, "dtype",
                    r->e->dtype, "template", r->e->template_name, "config", r->e->config, "then_ms",
                    r->e->time_ms, "verdict", recheck_verdict_name(r->r.verdict));
      if (isfinite(r->r.now_ms)) {
        json_object_set_new(o, "now_ms", json_real(r->r.now_ms));
        json_object_set_new(o, "change", json_real(r->r.now_ms / r->e->time_ms - 1));
      }
      if (r->r.detail[0]) json_object_set_new(o, "detail", json_string(r->r.detail));
      json_array_append_new(arr, o);
    }
    json_object_set_new(root, "results", arr);
    char *text = json_dumps(root, JSON_INDENT(2));
    if (text) puts(text);
    free(text);
    json_decref(root);
  } else {
    printf(
        "recheck on %s of %s: %zu winners for this device, %zu re-measured, %zu slower, %zu "
        "failing "
        "(tolerance %.0f %%)\n",
        label, dbp, nv, measured, slower, failing, tol * 100);
    if (nv)
      printf("%-6s %-22s %-5s %-12s %10s %10s %14s  %s\n", "family", "shape", "dtype", "template",
             "then_ms", "now_ms", "now", "verdict");
    for (size_t i = 0; i < nv; i++) {
      const verdict *r = &vs[i];
      printf("%-6s %-22s %-5s %-12s %10.5g ", r->e->family, r->e->shape, r->e->dtype,
             r->e->template_name, r->e->time_ms);
      char ratio[32];
      if (isfinite(r->r.now_ms))
        printf("%10.5g %14s", r->r.now_ms,
               verdict_ratio(r->r.now_ms, r->e->time_ms, ratio, sizeof ratio));
      else
        printf("%10s %14s", "-", "-");
      printf("  %s%s%s\n", recheck_verdict_name(r->r.verdict), r->r.detail[0] ? ": " : "",
             r->r.detail);
    }
  }
  free(vs);
  free(es);
  if (slower || failing) {
    fprintf(stderr, "rooftune recheck: %zu winner(s) slower and %zu failing on %s: a regression\n",
            slower, failing, label);
    return CLI_EXIT_REGRESSION;
  }
  return errors ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

const cli_command cli_cmd_recheck = {
    .name = "recheck",
    .summary = "re-measure the stored winners and flag regressions",
    .usage = usage,
    .options = recheck_table,
    .epilog = epilog,
    .run = cmd_recheck};
