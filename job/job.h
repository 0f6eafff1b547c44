/* job.h — a tuning job: the JSON file that says which problems to keep tuned, on which devices,
 * into which database, within how much time, and what "fresh" means; and how a job's problems
 * are split into shards.  `rooftune job run|status|merge` read it (job/run.h).
 *
 * The format (version 1).  Relative paths are relative to the job file's folder.
 *
 *   {
 *     "rooftune_job": 1,                      required: the format version
 *     "name": "llama3-8b",                    default: the file's name without .json; letters,
 *                                             digits, '.', '_', '-' (at most 48)
 *     "database": "tuning.db",                default: rooftune's default database
 *     "output": "llama3-8b-out",              folder for report.html and summary*.json;
 *                                             default: NAME-out beside the job file
 *     "device": "cuda",                       what --device takes ("cuda", "cuda:N",
 *                                             "model:GPU", "replay:FILE": device_check), or
 *                                             "cuda:all" (one measuring process per GPU of the
 *                                             node), or a list of them (one process each, in
 *                                             parallel);
 *                                             default: cuda when a GPU is present, else
 *                                             model:h200 (whose times are predictions)
 *     "time_budget": "3h",                    a run stops cleanly when it is spent and the next
 *                                             run resumes there; default: none
 *     "timeout": 20,                          per-candidate limit on a GPU, seconds
 *     "templates": ["my-kernels"],            template folders before the shipped ones
 *     "shard_database": "shards/{name}-{i}-of-{n}.db",
 *                                             with --shard I/N, each shard writes this file
 *                                             (seeded from "database") instead of "database";
 *                                             `rooftune job merge --job` merges them back.
 *                                             Without it every shard writes "database" itself
 *                                             (a local disk only: SQLite's WAL needs one host)
 *     "defaults": {"dtype": "bf16", "budget": 32, "strategy": "lever", "seed": 0},
 *     "fresh": {"max_age": "7d", "driver": true, "toolkit": true, "template": true},
 *                                             a problem is fresh when its winners were made on
 *                                             this GPU model (always), driver, toolkit and
 *                                             template version (each rule can be turned off)
 *                                             and its last complete round is younger than
 *                                             max_age (null or 0: no age limit); default 7d
 *     "recheck": {"every": "20h", "tolerance": 5},
 *                                             the winners of fresh problems are re-measured
 *                                             when their last measurement is older than every
 *                                             ("0": every run); a winner slower by more than
 *                                             tolerance % (plus both spreads) or broken is a
 *                                             regression.  false: no rechecks
 *     "problems": [                           required, at least one
 *       {"target": "gemm", "shape": "4096x4096x4096", "dtype": "bf16",
 *        "budget": 64, "strategy": "lever", "seed": 0, "split": false}
 *     ]
 *   }
 *
 * A problem's target is a family (every template of it) or one template; shape and dtype are
 * what `rooftune tune` takes; budget is the new evaluations of one round (default 32);
 * "split": true makes every shard tune this problem on its own share of the candidates (a job
 * of one problem is split by itself).  Durations are seconds as a number, or a text of
 * numbers with units s, m, h, d, w ("90m", "1h30m", "7d").
 *
 * Every error names the file, the field ("problems[3].dtype") and its line, and says what is
 * accepted: unknown fields, wrong types, a target that is neither a family nor a template, a
 * shape its family does not parse, an unknown strategy, the same problem twice.
 *
 * Shards: --shard I/N (0 <= I < N) gives shard I the problems whose position in the file is I
 * modulo N, and every split problem; N processes on N GPUs or nodes thus do disjoint work.
 */
#ifndef ROOFTUNE_JOB_H
#define ROOFTUNE_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define JOB_FORMAT_VERSION          1
#define JOB_MAX_DEVICES             64
#define JOB_DEFAULT_BUDGET          32
#define JOB_DEFAULT_MAX_AGE_S       (7 * 86400.0)
#define JOB_DEFAULT_RECHECK_EVERY_S (20 * 3600.0)

typedef struct job_problem {
  char target[64]; /* family ("gemm") or template ("gemm_mma") */
  char shape[256]; /* as written */
  char dtype[8];
  long budget;       /* new evaluations of one round */
  char strategy[32]; /* "": the default strategy */
  uint64_t seed;
  int split; /* 1: every shard tunes its share of this problem's candidates */
  int line;  /* its line in the job file */
  /* the problem as the database keys it (from the family's parse) */
  char family[16];
  char key_shape[64]; /* canonical shape text */
  char layout[8];
  int is_template; /* target names one template */
} job_problem;

typedef struct job_fresh {
  double max_age_s;     /* 0: no age limit */
  int driver;           /* 1: a new driver makes winners stale */
  int toolkit;          /* 1: a new toolkit does */
  int template_version; /* 1: a changed template does */
} job_fresh;

typedef struct job {
  char path[1024]; /* the job file */
  char dir[1024];  /* its folder */
  char name[64];
  char database[1024];               /* resolved; "" for rooftune's default database */
  char output[1024];                 /* resolved folder */
  char shard_database[1024];         /* resolved pattern with {i} {n} {name}; "" when none */
  char devices[JOB_MAX_DEVICES][64]; /* as written ("cuda:all" expands when run) */
  int ndevices;                      /* 0: the default device */
  double time_budget_s;              /* 0: none */
  double timeout_s;                  /* 0: the device's default */
  char templates[4096];              /* extra template folders, resolved, joined by ':'; "" none */
  job_fresh fresh;
  int recheck;            /* 1: recheck the winners of fresh problems */
  double recheck_every_s; /* re-measure a winner measured longer ago than this */
  double tolerance;       /* a fraction: 0.05 */
  job_problem *problems;  /* in file order */
  size_t nproblems;
} job;

/* Reads and checks PATH (every problem's target and shape are resolved against the template
 * path: the job's "templates" folders, then the usual ones).  Errors as described above. */
rt_status job_load(const char *path, job **out, rt_error *err);
void job_free(job *j);

/* Seconds in a duration text ("90m", "1h30m", "7d", "3600"); -1 when it is not one. */
double job_parse_duration(const char *text);
/* "2.5 h", "3 d", "40 s": for people. */
void job_format_duration(double seconds, char *buf, size_t size);

typedef struct job_shard {
  int index; /* 0-based */
  int count; /* 1: the whole job */
} job_shard;

/* "I/N" with 0 <= I < N; RT_ERR_USAGE naming --shard otherwise. */
rt_status job_shard_parse(const char *text, job_shard *out, rt_error *err);
/* 1 when problem K (0-based position in the file) is shard S's. */
int job_shard_owns(const job *j, size_t k, job_shard s);
/* 1 when problem K is split over the shards (its candidates partitioned) under S. */
int job_problem_split(const job *j, size_t k, job_shard s);
/* Sub-shard G of COUNT inside S (a node's shard split over its GPUs): (I*COUNT+G)/(N*COUNT). */
job_shard job_shard_sub(job_shard s, int g, int count);
/* The tag a shard's runs carry in their command: "[job NAME shard I/N]". */
void job_shard_tag(const job *j, job_shard s, char *buf, size_t size);
/* The database shard S writes: the job's shard_database with {i} {n} {name} filled in, or
 * "" when the job has none (then the shard writes the job's database). */
void job_shard_database(const job *j, job_shard s, char *buf, size_t size);

#endif
