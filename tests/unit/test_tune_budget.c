/* test_tune_budget.c — tune spends its budget where it can pay (search/budget.h through
 * tuner/tune_budget.c), on the model device:
 *   - `tune attention --shape 1x32:8x1:32768x128`: the prefill templates' roof bounds (a one-row
 *     problem gives them 32 blocks for 132 SMs) cannot come within 5 % of what attn_decode
 *     reaches, so every evaluation goes to attn_decode, and the note and the report say which
 *     were ruled out; attn_decode reaches its roof share and stops, the rest of the budget unspent;
 *   - with the rules off, for brute_force and --config, nothing stops early;
 *   - the same command again searches on past the roof stop, its whole budget new;
 *   - a result faster than its bound (here: a DRAM calibration that makes the model predict
 *     below the compulsory bytes, as wrong ceilings would on a GPU) turns the rules off, and the
 *     templates ruled out before are searched after all. */
/* stages: tune */
#include <unistd.h>

#include "db/db.h"
#include "test.h"
#include "tuner/tune.h"

static const tune_template_report *find(const tune_report *rep, const char *name) {
  for (size_t i = 0; i < rep->ntmpl; i++)
    if (!strcmp(rep->tmpl[i].name, name)) return &rep->tmpl[i];
  return NULL;
}

static size_t count(const tune_report *rep, const char *name) {
  size_t n = 0;
  for (size_t i = 0; i < rep->nresults; i++) n += !strcmp(rep->results[i].template_name, name);
  return n;
}

static void decode_options(tune_options *o) {
  memset(o, 0, sizeof *o);
  o->target = "attention";
  o->shape = "1x32:8x1:32768x128";
  o->dtype = "bf16";
  o->device = "model:h200";
  o->budget = 24;
  o->compile_workers = 2;
  o->seed = 3;
}

TEST_CASE(decode) {
  tune_options o;
  decode_options(&o);
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "  %s\n", err.text);
    return;
  }
  CHECK_INT(rep.roof_rules, 1);
  /* one bandwidth per purpose, each labelled: the copy the diagnosis holds times against, the
   * datasheet's the bounds use */
  CHECK_CONTAINS(rep.ceilings, "DRAM 4.3 TB/s copy bandwidth (measured on an NVIDIA H200)");
  CHECK_CONTAINS(rep.ceilings, "roof bounds on the 4.8 TB/s datasheet bandwidth");
  CHECK_INT(rep.ntmpl, 3);
  CHECK_STR(rep.tmpl[0].name, "attn_decode"); /* the lowest bound first */
  CHECK_INT(count(&rep, "attn_decode"), rep.nresults);
  CHECK_INT(count(&rep, "attn_mma") + count(&rep, "attn_wgmma"), 0);
  CHECK_CONTAINS(rep.note, "attn_mma, attn_wgmma ruled out");
  const tune_template_report *mma = find(&rep, "attn_mma"), *dec = find(&rep, "attn_decode");
  CHECK(mma && dec);
  if (mma && dec) {
    CHECK_STR(mma->outcome, "ruled out");
    CHECK_INT(mma->evaluated, 0);
    CHECK(mma->bound_ms > 1.05 * mma->against_ms); /* what it was ruled out by */
    CHECK(mma->bound_ms > 2 * dec->bound_ms);
    CHECK_INT(mma->bound_by_bytes, 0); /* its FLOPs on a quarter of the SMs */
    CHECK_INT(dec->bound_by_bytes, 1); /* the K/V cache read once */
    /* attn_decode at its roof share: it stops, and what it leaves is not spent */
    CHECK_STR(dec->outcome, "at its roof");
    CHECK(dec->roof_ms / dec->best_ms >= rep.roof_stop);
    CHECK(dec->best_ms >= dec->bound_ms);
    CHECK_INT(dec->evaluated, (long)rep.evaluated);
    CHECK(rep.evaluated < 24);
    CHECK_INT(rep.roof_unspent, 24 - (long)rep.evaluated);
    CHECK_NEAR(rep.roof_unspent_gpu_s, 0, 0); /* predicted: no GPU time */
    CHECK_CONTAINS(rep.note, "stopped at the roof");
    CHECK_CONTAINS(rep.note, "evaluations not spent");
  }
  tune_report_free(&rep);

  /* brute_force: the rules are off, the budget is spent in the lineup's order */
  o.strategy = "brute_force";
  o.budget = 6;
  st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (!st) {
    CHECK_INT(rep.roof_rules, 0);
    CHECK_INT(rep.evaluated, 6);
    CHECK_INT(rep.roof_unspent, 0);
    CHECK(count(&rep, "attn_mma") > 0); /* not ruled out */
    tune_report_free(&rep);
  }
}

/* One template: no template to rule out, but it stops at its roof; --config measures its one
 * configuration whatever the roof says. */
TEST_CASE(one_template) {
  tune_options o;
  decode_options(&o);
  o.target = "attn_decode";
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (!st) {
    CHECK_INT(rep.ntmpl, 1);
    CHECK_STR(rep.tmpl[0].outcome, "at its roof");
    CHECK(rep.evaluated < 24);
    tune_report_free(&rep);
  }
  o.config = "HEAD_DIM=128,PAGE=0,Q_ROWS=16,SPLITS=32,BLOCK_N=128,WARPS=8,VEC=8,STAGES=1";
  st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (st) fprintf(stderr, "  %s\n", err.text);
  if (!st) {
    CHECK_INT(rep.roof_rules, 0);
    CHECK_INT(rep.evaluated, 1);
    tune_report_free(&rep);
  }
}

/* A model that predicts below the compulsory bytes (a DRAM calibration of 0.3 for attn_decode, as
 * counters would leave it) breaks the bound: the rules turn off and say so. */
static char dir[] =
    "/tmp/rooftune_test_tune_budget_XXXXXX"; /* the fixture: a folder for its files */

TEST_CASE(unsound) {
  char dbp[1200];
  snprintf(dbp, sizeof dbp, "%s/budget.db", dir);
  db *d = NULL;
  rt_error err = {0};
  CHECK_INT(db_open(dbp, DB_CREATE, &d, &err), RT_OK);
  if (!d) return;
  CHECK_INT(db_calibration_set(d, "h200", "attn_decode", "dram_bytes", 0.3, 1, &err), RT_OK);
  db_close(d);
  tune_options o;
  decode_options(&o);
  o.db_path = dbp;
  o.budget = 12;
  tune_report rep;
  rt_status st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "  %s\n", err.text);
    return;
  }
  CHECK_CONTAINS(rep.note, "attn_decode's best");
  CHECK_CONTAINS(rep.note, "beat its roof bound");
  CHECK_INT(rep.evaluated, 12);       /* nothing stopped */
  CHECK(count(&rep, "attn_mma") > 0); /* ruled out, then searched after all */
  CHECK(strstr(rep.note, "ruled out:") == NULL);
  tune_report_free(&rep);
}

/* More budget means more search: the Quick start's "the same command again goes on searching".
 * A first run stops attn_decode at its roof with most of its budget unspent; the same command
 * again (its results in the database) evaluates its whole budget anew, with the ruled-out
 * templates still ruled out, and --budget 40 a third time buys 40 more. */
TEST_CASE(again) {
  char dbp[1200];
  snprintf(dbp, sizeof dbp, "%s/again.db", dir);
  tune_options o;
  decode_options(&o);
  o.db_path = dbp;
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "  %s\n", err.text);
    return;
  }
  long first = (long)rep.evaluated;
  CHECK(first < 24); /* stopped at its roof */
  CHECK_STR(rep.tmpl[0].outcome, "at its roof");
  CHECK_CONTAINS(rep.note, "the same command again searches on");
  tune_report_free(&rep);
  for (int round = 0; round < 2; round++) {
    o.budget = round ? 40 : 24;
    st = tune_run(&o, &rep, &err);
    CHECK_INT(st, RT_OK);
    if (st) return;
    CHECK_INT((long)rep.evaluated, o.budget); /* every one asked for, new */
    CHECK_INT(rep.roof_unspent, 0);
    CHECK_INT(count(&rep, "attn_decode"), rep.nresults);
    CHECK((long)rep.resumed >= first); /* what the first run measured, told */
    CHECK_CONTAINS(rep.note, "attn_mma, attn_wgmma ruled out"); /* the bounds still rule */
    CHECK_CONTAINS(rep.note, "attn_decode was stopped at");
    CHECK_CONTAINS(rep.note, "searched on, as the same command again asks");
    CHECK(strstr(rep.note, "not spent") == NULL);
    tune_report_free(&rep);
  }
}

static void setup(void) {
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(1);
  }
}

static void teardown(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(decode), TEST_ENTRY(one_template),
                  TEST_ENTRY(unsound), TEST_ENTRY(again))
