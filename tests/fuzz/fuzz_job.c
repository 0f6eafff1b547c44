/* fuzz_job.c — the job file loader (job/job.h): any job file loads or fails with an error
 * naming it; a job that loads has every problem's target, shape and dtype filled, its shard
 * tags formatted and its durations non-negative. */
#include "fuzz_util.h"
#include "job/job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write("j.json", data, size);
  job *j = NULL;
  rt_error err = {0};
  if (job_load(path, &j, &err) != RT_OK) {
    if (!err.source[0]) abort(); /* every error names the file */
    return 0;
  }
  if (j->time_budget_s < 0 || j->timeout_s < 0 || j->tolerance < 0) abort();
  for (size_t i = 0; i < j->nproblems; i++) {
    const job_problem *q = &j->problems[i];
    if (!q->target[0] || !q->shape[0] || !q->dtype[0]) abort();
  }
  char tag[160];
  job_shard sh = {0, 1};
  job_shard_tag(j, sh, tag, sizeof tag);
  job_free(j);
  return 0;
}
