/* run.h — running a job (`rooftune job run`), its status (`job status`) and merging shards'
 * databases (`job merge`).
 *
 * A run, for the problems its shard owns (job.h): reads each problem's state (state.h);
 * re-measures the winners of fresh problems whose last measurement is older than the job's
 * recheck interval (recheck.h: a winner SLOWER or FAILS is a regression); then tunes the others
 * in file order: a stale, failed or never tuned problem gets a new round of its budget in new
 * evaluations (configurations already in the database are told to the search, not evaluated
 * again), an interrupted one the rest of its round.  The time budget ends the run cleanly: the
 * candidate in flight is dropped, every finished one is kept, the run is marked interrupted,
 * and the next run resumes there.  A run of a killed process is left "running" in the
 * database; the next run of the same job and shard marks it interrupted (a lock file in the
 * output folder, held while a shard runs, tells a dead process from a live one).
 *
 * Several devices ("cuda:all", a list) run as one process each, in parallel, each a sub-shard
 * of the shard (job_shard_sub): the same path as --shard on several nodes.
 *
 * Outputs, in the job's output folder: summary.json (summary-shard-I-of-N.json for a shard):
 * what `job run --json` prints; report.html (report.h) after a run that wrote the job's own
 * database (a shard with its own database leaves the report to `job merge --job`).
 *
 * summary: {"job", "file", "database", "device", "timing", "shard", "started_at", "seconds",
 * "complete" (false when the time budget or a signal stopped it), "stopped" ("time budget",
 * "signal" or null), "evaluated", "resumed", "tuned", "fresh", "failed", "left", "regressions",
 * "problems": [{"target", "shape", "dtype", "state", "reason", "action" ("tuned", "resumed",
 * "fresh", "failed", "left"), "budget", "evaluated", "resumed", "failed", "seconds", "run_id",
 * "best": {"template", "config", "time_ms", "timing", "checked_on"} or null, "error", "rechecks": [{"template",
 * "config", "then_ms", "now_ms", "verdict", "detail"}]}], "report", "shards" (the processes of a
 * parallel run, each its own summary)}.
 */
#ifndef ROOFTUNE_JOB_RUN_H
#define ROOFTUNE_JOB_RUN_H

#include <jansson.h>

#include "db/db.h"
#include "job/job.h"
#include "job/state.h"
#include "tuner/tune.h"

typedef enum {
  JOB_EV_NOTE,     /* text: something to say first (the device's times are predictions) */
  JOB_EV_PROGRESS, /* progress: a candidate of the problem being tuned */
  JOB_EV_DONE,     /* item: a problem finished (tuned, resumed, failed), found fresh, or left */
} job_event_kind;

typedef struct job_event {
  job_event_kind kind;
  const char *device; /* the device of the reporting process */
  int parallel;       /* several processes report at once */
  size_t index;       /* 1-based: the problem's place in the order the run says them (the fresh
                         ones first, then those it tunes), so [1/N], [2/N], ... come in order */
  size_t total;       /* the shard's problems */
  const job_problem *problem;
  const tune_progress *progress;
  const json_t *item; /* the problem's summary entry */
  const char *text;
} job_event;

typedef struct job_run_options {
  job_shard shard;     /* {0, 1}: the whole job */
  const char *device;  /* overrides the job's device(s); NULL: the job's */
  const char *db_path; /* overrides the job's (or the shard's) database; NULL */
  volatile int *stop;  /* a signal handler sets it: stop cleanly (may be NULL) */
  void (*on_event)(void *ctx, const job_event *ev); /* may be NULL */
  void *ctx;
  const char *worker_exe;         /* the binary the cuda worker runs (NULL: this one) */
  const char *const *worker_argv; /* its command line (tune_options.worker_argv) */
  int compile_workers;            /* 0: one per core */
  int no_report;                  /* 1: write no report.html */
} job_run_options;

typedef struct job_outcome {
  size_t tuned;       /* problems tuned (a round begun or resumed) */
  size_t fresh;       /* found fresh */
  size_t failed;      /* problems that failed, rechecks that could not run */
  size_t left;        /* not reached before the time budget ran out */
  size_t evaluated;   /* new evaluations */
  size_t regressions; /* rechecked winners SLOWER or FAILS */
  int stopped;        /* the time budget ran out */
  int interrupted;    /* the stop flag (a signal) ended it */
  json_t *summary;    /* owned */
} job_outcome;

rt_status job_run(const job *j, const job_run_options *o, job_outcome *out, rt_error *err);
void job_outcome_free(job_outcome *o);
/* 1 (a problem failed, or a signal stopped the run), else 3 (a regression), else 0. */
int job_outcome_exit(const job_outcome *o);

/* The state of every problem shard s owns: {"job", "database", "output", "device", "gpu",
 * "problems": [{"target", "shape", "dtype", "state", "reason", "age_s", "budget", "left",
 * "best": {...} or null, "regression"}]}.  Nothing is run or written. */
rt_status job_status(const job *j, job_shard s, const char *device, const char *db_path,
                     json_t **out, rt_error *err);

/* The database a run of shard s writes: db_path when given, else the shard's own
 * (job_shard_database), else the job's, else rooftune's default. */
void job_database_path(const job *j, job_shard s, const char *db_path, char *buf, size_t size);

typedef struct job_merge_stats {
  size_t files;    /* merged */
  long long added; /* new results */
  size_t winners;  /* winners in the merged database */
} job_merge_stats;

/* Merges every file of srcs into out_path (created when missing): db_merge for each, so
 * winners across files are the fastest by time (ties by result uid), results made on different
 * GPUs stay apart (they have different devices), and merging is idempotent and
 * order-independent. */
rt_status job_merge(const char *out_path, char *const *srcs, size_t n, job_merge_stats *st,
                    rt_error *err);
/* The shard databases of job j that exist now ({i} and {n} of shard_database as wildcards),
 * sorted; *paths malloc'ed (free each and the array). */
rt_status job_shard_files(const job *j, char ***paths, size_t *n, rt_error *err);

/* The devices a job runs on: spec (or the job's list; NULL and empty: the default device),
 * with cuda:all expanded to the node's GPUs.  note gets what the default device says. */
rt_status job_devices(const job *j, const char *spec, char devices[][64], int *n, char *note,
                      size_t note_size, rt_error *err);

#endif
