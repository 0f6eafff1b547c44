/* test_tune.c — the whole loop on the model device into a fresh database: every candidate is
 * predicted and diagnosed, the winner is stored with its cubin, a second run resumes from the
 * database instead of evaluating again; and on the replay device over the fixture file. */
/* stages: tune */
#include <unistd.h>

#include "db/db.h"
#include "test.h"
#include "tuner/tune.h"

static void test_model(const char *dir) {
  char dbp[1200];
  snprintf(dbp, sizeof dbp, "%s/tune.db", dir);
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = "gemm_mma";
  o.shape = "256x256x256";
  o.dtype = "f16";
  o.device = "model:h200";
  o.budget = 3;
  o.db_path = dbp;
  o.compile_workers = 2;
  o.strategy = "random";
  o.seed = 7;
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "  %s (%s)\n", err.text, err.source);
    return;
  }
  CHECK_STR(rep.device, "model:h200");
  CHECK_INT(rep.timing, TIMING_PREDICTED);
  CHECK_INT(rep.budget, 3);
  CHECK_INT(rep.evaluated, 3);
  CHECK_INT(rep.resumed, 0);
  CHECK_INT(rep.nresults, 3);
  CHECK(rep.have_best);
  CHECK_STR(rep.best.template_name, "gemm_mma");
  CHECK_INT(rep.best.timing, TIMING_PREDICTED);
  CHECK(rep.best.time_ms > 0);
  CHECK(rep.best.diag.limit[0] != 0); /* every candidate is diagnosed */
  CHECK(rep.best.diag.sentence[0] != 0);
  CHECK(rep.best.facts.registers > 0);     /* from ptxas */
  CHECK(rep.best.facts.blocks_per_sm > 0); /* from the occupancy calculator */
  for (size_t i = 0; i < rep.nresults; i++)
    CHECK(rep.results[i].status != RT_OK || rep.best.time_ms <= rep.results[i].time_ms);
  char best_config[768];
  snprintf(best_config, sizeof best_config, "%s", rep.best.config);
  tune_report_free(&rep);

  /* the winner is in the database, with its cubin, marked as a prediction */
  db *d = NULL;
  CHECK_INT(db_open(dbp, DB_READONLY, &d, &err), RT_OK);
  db_entry *e = NULL;
  size_t n = 0;
  CHECK_INT(db_entries(d, 1, &e, &n, &err), RT_OK);
  CHECK_INT(n, 1);
  if (n == 1) {
    CHECK_STR(e[0].template_name, "gemm_mma");
    CHECK_STR(e[0].config, best_config);
    CHECK_INT(e[0].timing, TIMING_PREDICTED);
    CHECK_STR(e[0].device.name, "model:h200");
    CHECK(e[0].launch.cubin != NULL && e[0].launch.cubin_size > 0);
    /* the launch as the manifest writes it, for the runtime's nearest-shape geometry */
    CHECK_CONTAINS(e[0].launch.grid[0], "BLOCK_M");
    CHECK_STR(e[0].launch.block[0], "THREADS");
    CHECK_STR(e[0].launch.smem, "SMEM");
    CHECK_CONTAINS(e[0].launch.vars, "THREADS=");
    CHECK(e[0].launch.grid_v[0] > 0 && e[0].launch.block_v[0] > 0);
    CHECK(e[0].limit[0] != 0);
  }
  free(e);
  db_close(d);

  /* the same run again: the three stored configurations are told from the database, nothing is
   * evaluated twice, and the budget buys three new ones */
  st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (!st) {
    CHECK_INT(rep.resumed, 3);
    CHECK_INT(rep.evaluated, 3);
    CHECK(rep.have_best);
    for (size_t i = 0; i < rep.nresults; i++)
      for (size_t j = 0; j < i; j++)
        CHECK(strcmp(rep.results[i].config, rep.results[j].config) != 0);
    CHECK(rep.best.time_ms > 0);
    snprintf(best_config, sizeof best_config, "%s", rep.best.config);
    tune_report_free(&rep);
  }

  /* one configuration by name (what `rooftune recheck` does): evaluated afresh although the
   * database holds it, as a run of its own; the winner stays */
  tune_options one = o;
  one.config = best_config;
  one.budget = 0;
  st = tune_run(&one, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (!st) {
    CHECK_INT(rep.evaluated, 1);
    CHECK_INT(rep.resumed, 0);
    CHECK_INT(rep.budget, 1);
    CHECK_INT(rep.nresults, 1);
    CHECK_STR(rep.results[0].config, best_config);
    CHECK_INT(rep.results[0].status, RT_OK);
    tune_report_free(&rep);
  }
  /* a configuration the template does not have: an error naming it, and no run left running */
  one.config = "BLOCK_M=128";
  st = tune_run(&one, &rep, &err);
  CHECK_INT(st, RT_ERR_PARSE);
  CHECK_STR(err.source, "config");
  rt_error_clear(&err);
  one.target = "gemm";
  one.config = best_config;
  CHECK_INT(tune_run(&one, &rep, &err), RT_ERR_USAGE);
  CHECK_CONTAINS(err.text, "one template");
  rt_error_clear(&err);
  CHECK_INT(db_open(dbp, DB_READONLY, &d, &err), RT_OK);
  char report[2048];
  int problems = -1;
  CHECK_INT(db_check(d, report, sizeof report, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  if (strstr(report, "never finished")) fprintf(stderr, "  %s\n", report);
  CHECK(strstr(report, "never finished") == NULL);
  db_close(d);
}

/* A family: every template that supports the dtype, layout and architecture shares the budget
 * (gemm_simt has no f16; gemm_mma and gemm_wgmma both take f16 with B stored N x K on sm_90). */
static void test_family(void) {
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = "gemm";
  o.shape = "512x512x512:nt";
  o.dtype = "f16";
  o.device = "model:h200";
  o.budget = 2;
  o.strategy = "random";
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "  %s\n", err.text);
    return;
  }
  CHECK_INT(rep.templates, 2);
  CHECK_INT(rep.evaluated, 2);
  int mma = 0, wgmma = 0;
  for (size_t i = 0; i < rep.nresults; i++) {
    mma += !strcmp(rep.results[i].template_name, "gemm_mma");
    wgmma += !strcmp(rep.results[i].template_name, "gemm_wgmma");
  }
  CHECK_INT(mma, 1);
  CHECK_INT(wgmma, 1);
  tune_report_free(&rep);

  /* a K x N B whose rows are not a multiple of 16 bytes (N = 500: TMA cannot stride it) leaves
   * gemm_wgmma out, and the note says why */
  o.shape = "512x500x512";
  st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (!st) {
    CHECK_INT(rep.templates, 1);
    CHECK_INT(rep.evaluated, 2);
    CHECK_CONTAINS(rep.note, "gemm_wgmma skipped");
    tune_report_free(&rep);
  }
}

/* Stopping (what Ctrl-C does): the progress callback raises the flag after the first finished
 * candidate; the run ends there, keeps it, and the database marks the run interrupted. */
static volatile int stop_flag;
static void stop_after_first(void *ctx, const tune_progress *p) {
  (void)ctx;
  if (p->last) stop_flag = 1;
}

static void test_interrupt(const char *dir) {
  char dbp[1200];
  snprintf(dbp, sizeof dbp, "%s/interrupt.db", dir);
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = "gemm_mma";
  o.shape = "256x256x256";
  o.dtype = "f16";
  o.device = "model:h200";
  o.budget = 4;
  o.strategy = "random";
  o.batch = 1;
  o.db_path = dbp;
  o.progress = stop_after_first;
  o.stop = &stop_flag;
  tune_report rep;
  rt_error err = {0};
  CHECK_INT(tune_run(&o, &rep, &err), RT_OK);
  CHECK_INT(rep.interrupted, 1);
  CHECK_INT(rep.evaluated, 1);
  tune_report_free(&rep);
  db *d = NULL;
  CHECK_INT(db_open(dbp, DB_READONLY, &d, &err), RT_OK);
  db_counts counts;
  CHECK_INT(db_count(d, &counts, &err), RT_OK);
  CHECK_INT(counts.results, 1);
  db_close(d);
}

static void test_errors(void) {
  tune_options o;
  memset(&o, 0, sizeof o);
  o.shape = "256x256x256";
  o.dtype = "f16";
  o.device = "model:h200";
  o.budget = 1;
  tune_report rep;
  rt_error err = {0};
  o.target = "no_such_kernel";
  CHECK(tune_run(&o, &rep, &err) != RT_OK);
  CHECK_CONTAINS(err.text, "neither a kernel family");
  rt_error_clear(&err);
  o.target = "gemm";
  o.shape = "256xbanana";
  CHECK(tune_run(&o, &rep, &err) != RT_OK);
  CHECK(err.text[0] != 0);
  rt_error_clear(&err);
  o.shape = "256x256x256";
  o.dtype = "f8";
  CHECK(tune_run(&o, &rep, &err) != RT_OK);
  CHECK(err.text[0] != 0);
  rt_error_clear(&err);
  o.dtype = "f16";
  o.device = "model:v100";
  CHECK_INT(tune_run(&o, &rep, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "v100");
}

static void test_replay(const char *dir) {
  const char *src = getenv("ROOFTUNE_SOURCE_DIR");
  if (!src) return;
  char dev[1200], dbp[1200];
  snprintf(dev, sizeof dev, "replay:%s/tests/data/replay/small.json", src);
  snprintf(dbp, sizeof dbp, "%s/replay.db", dir);
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = "vector_add";
  o.device = dev;
  o.budget = 10;
  o.strategy = "brute_force";
  o.db_path = dbp;
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "  %s\n", err.text);
    return;
  }
  CHECK_INT(rep.timing, TIMING_REPLAYED);
  CHECK_INT(rep.evaluated, 3); /* the whole recorded space */
  CHECK_INT(rep.failed, 1);    /* the compile failure comes back as one */
  CHECK(rep.have_best);
  CHECK_NEAR(rep.best.time_ms, 0.4, 1e-12);
  CHECK_STR(rep.best.config, "block_size_x=64,tile=2");
  tune_report_free(&rep);
}

TEST_CASE(end_to_end) {
  char dir[] = "/tmp/rooftune_test_tune_XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(1);
  }
  test_model(dir);
  test_family();
  test_interrupt(dir);
  test_errors();
  test_replay(dir);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TEST_LIST(TEST_ENTRY(end_to_end))
