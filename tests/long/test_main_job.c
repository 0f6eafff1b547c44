/* test_main_job.c — the README's main job, `rooftune tune gemm --shape 4096x4096x4096 --dtype
 * bf16`, end to end on the model device with the default budget: every evaluation is a real
 * NVRTC compile, the winner is stored with its cubin, and a second run takes the stored
 * candidates from the database and evaluates as many new ones (--budget counts new evaluations).   Slow on a cold cubin cache (a minute on two cores): label long. */
/* stages: tune */
#include <unistd.h>

#include "db/db.h"
#include "test.h"
#include "tuner/tune.h"

int main(void) {
  char dir[] = "/tmp/rooftune_main_job_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char dbp[128];
  snprintf(dbp, sizeof dbp, "%s/tuning.db", dir);
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = "gemm";
  o.shape = "4096x4096x4096";
  o.dtype = "bf16";
  o.device = "model:h200"; /* the default without a GPU; named so a GPU machine runs it too */
  o.db_path = dbp;
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "  %s\n", err.text);
    return test_done();
  }
  CHECK_INT(rep.budget, TUNE_DEFAULT_BUDGET);
  CHECK_INT(rep.evaluated, TUNE_DEFAULT_BUDGET);
  CHECK_INT(rep.resumed, 0);
  CHECK(rep.have_best);
  CHECK_INT(rep.best.timing, TIMING_PREDICTED);
  CHECK(rep.best.diag.limit[0] != 0);
  double tflops = rep.best.flops / (rep.best.time_ms * 1e-3) / 1e12;
  printf("best %s %s: %.4f ms, %.1f TFLOP/s predicted, %s (%zu compiled in %.1f s, %zu cached)\n",
         rep.best.template_name, rep.best.config, rep.best.time_ms, tflops, rep.best.diag.limit,
         rep.evaluated, rep.compile_seconds, rep.cache_hits);
  CHECK(tflops > 100 && tflops < 989.5);
  tune_report_free(&rep);

  db *d = NULL;
  CHECK_INT(db_open(dbp, DB_READONLY, &d, &err), RT_OK);
  db_entry *e = NULL;
  size_t n = 0;
  CHECK_INT(db_entries(d, 1, &e, &n, &err), RT_OK);
  CHECK(n >= 1);
  for (size_t i = 0; i < n; i++) CHECK(e[i].launch.cubin_size > 0);
  free(e);
  db_close(d);

  st = tune_run(&o, &rep, &err);
  CHECK_INT(st, RT_OK);
  if (!st) {
    CHECK_INT(rep.evaluated, TUNE_DEFAULT_BUDGET);
    CHECK_INT(rep.resumed, TUNE_DEFAULT_BUDGET);
    tune_report_free(&rep);
  }
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}
