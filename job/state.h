/* state.h — what a job's problem needs: nothing (fresh), a retune (stale, failed, never tuned)
 * or the rest of a round a time budget or a kill cut short (interrupted); and the verdict of a
 * winner's latest recheck.  Everything is read from the database and compared with the device
 * and the template files as they are now, so `job status`, `job run` and the report agree.
 *
 * The rules (job.h's "fresh"):
 *   interrupted  the latest tuning runs of the problem on this device (and toolkit) ended
 *                "interrupted" (a time budget or a signal) or were left "running" by a killed
 *                process: the round goes on with what is left of its budget (budget minus the
 *                results those runs stored)
 *   failed       the latest tuning run failed, or runs exist and no candidate ever succeeded
 *   never tuned  no winner and no run for this GPU model
 *   stale        winners exist for this GPU model, but only from another driver or toolkit, or
 *                one was made by another version of its template than the one in the template
 *                path now, or the last complete round is older than max_age
 *   fresh        otherwise
 * A problem with no winner on this GPU model whose target template (or every template of its
 * family target) has no valid configuration for its shape and dtype on this device keeps its
 * state and says so (job_state.empty, with the reason `tune` would give): the same check once
 * per distinct (target, shape, dtype, layout), stopping at the first valid configuration.
 * A tuning run is any run of the problem that is not a recheck; a split problem in a sharded
 * job (job.h) counts only its own shard's runs.
 */
#ifndef ROOFTUNE_JOB_STATE_H
#define ROOFTUNE_JOB_STATE_H

#include <stddef.h>

#include "db/db.h"
#include "model/gpu_spec.h"
#include "job/job.h"
#include "tuner/recheck.h"

typedef enum {
  JOB_STATE_NEVER = 0,
  JOB_STATE_FRESH,
  JOB_STATE_STALE,
  JOB_STATE_INTERRUPTED,
  JOB_STATE_FAILED,
} job_state_kind;

/* "never tuned", "fresh", "stale", "interrupted", "failed" */
const char *job_state_name(job_state_kind k);

typedef struct job_tversion {
  char name[64];        /* template name */
  int found;            /* 0: not in the template path now */
  char source_hash[65]; /* as tune.c computes them */
  char manifest_hash[65];
} job_tversion;

/* A winner as a job reads it: what states, statuses and rechecks compare (db_entry's 15 kB of
 * launch buffers are read again by id for the few a recheck re-measures: db_entry_get), so a
 * job of 100,000 problems holds 100,000 of these, not 1.5 GB of entries. */
/* A space check met so far: target, shape, dtype and layout joined by '\x1f', and its answer. */
typedef struct job_space_memo {
  char *key; /* owned; NULL for a free slot */
  int empty; /* 1: no valid configuration */
  char *why; /* owned: the reason, when empty */
} job_space_memo;

typedef struct job_winner {
  long long winner_id; /* winners.id */
  char family[16];     /* its problem */
  char shape[64];
  char dtype[8];
  char layout[8];
  char template_name[64];
  char source_hash[72]; /* "" for a library winner */
  char manifest_hash[72];
  int template_stale; /* a newer version of its template has been tuned since */
  int driver_version; /* of the GPU it was made on (this GPU model: others are not kept) */
  char toolkit[96];
  timing_kind timing;
  char checked_on[4]; /* "gpu", "sim" or "": where its output was checked */
  double time_ms;
  double spread;
  int library; /* a library winner (cuBLASLt's algorithm): nothing to recheck by its cubin */
  char created_at[32];
  char *config; /* owned */
} job_winner;

/* A run as a job reads it (db_run_info less its best and budget, texts it does not compare),
 * only those on the job's GPU model: 100,000 runs hold ~50 MB, not 260. */
typedef struct job_run_rec {
  long long id;    /* runs.id */
  char family[16]; /* its problem */
  char shape[64];
  char dtype[8];
  char layout[8];
  int driver_version;
  char toolkit[96];
  char status[16]; /* "running", "done", "failed", "interrupted" */
  char started_at[32];
  char finished_at[32];
  long long results;      /* results the run stored */
  int recheck;            /* job_run_is_recheck() */
  char *command;          /* as begun (owned): a shard's tag is looked for in it */
  char last_status[24];   /* its last stored result (a recheck's only one) */
  char last_template[64]; /* "" when it stored nothing */
  char *last_config;      /* (owned) */
  double last_ms;         /* NAN when it failed */
  double last_spread;
} job_run_rec;

/* The device and the database as they are now, read once for all problems. */
typedef struct job_env {
  db_device device;    /* as the database records it */
  char toolkit[96];    /* db_toolkit_string() */
  double now;          /* seconds since the epoch */
  job_winner *winners; /* the winners made on this GPU model (owned) */
  size_t nwinners, wincap;
  job_run_rec *runs; /* the runs on this GPU model, oldest first (owned) */
  size_t nruns, runcap;
  job_tversion *tv; /* template versions met so far (owned) */
  size_t ntv, tvcap;
  size_t *run_by_problem; /* indices into runs, by problem (family, shape, dtype, layout), then
                             oldest first: a problem's runs in one binary search (owned) */
  size_t *win_by_problem; /* the same into winners (owned) */
  /* what the space checks read, once: the device's facts and the template path's manifests */
  char arch[16];          /* "sm_90" */
  gpu_spec gpu;           /* the device's specification */
  int have_gpu, sm_count; /* gpu is known; its SM count (0 unknown) */
  int runs_kernels;       /* the device runs kernels: a family's library serves too */
  struct manifest **mans; /* every manifest of the template path (owned), read lazily */
  int nmans, mans_read;   /* how many; 1 once read */
  job_space_memo *memo;   /* open addressing over the checks made (owned) */
  size_t nmemo, memocap;
} job_env;

/* Fills env for the device DEVICE_SPEC ("cuda:0", "model:h200") and database d (NULL: an
 * empty one).  Errors: the device cannot be opened, the database cannot be read. */
rt_status job_env_open(job_env *env, const char *device_spec, db *d, rt_error *err);
/* Reads the database again (after a run changed it). */
rt_status job_env_reload(job_env *env, db *d, rt_error *err);
void job_env_free(job_env *env);

typedef struct job_state {
  job_state_kind kind;
  int empty;              /* no winner, and the target's space is empty (reason says why) */
  char reason[320];       /* why (stale, failed, interrupted), for people */
  const job_winner *best; /* the fastest current winner on this device (into env); NULL */
  double age_s;           /* since the last complete round; NAN when there was none */
  long budget;            /* the round's budget for this shard (split problems: a share) */
  long left;              /* new evaluations the round still has (interrupted: the rest) */
} job_state;

/* The state of problem K of job J for shard S. */
void job_state_of(const job *j, size_t k, job_shard s, job_env *env, job_state *out);

/* The winners of problem K made on this device, driver and toolkit (as the fresh rules ask):
 * up to cap pointers into env, returns how many there are. */
size_t job_current_winners(const job *j, size_t k, const job_env *env, const job_winner **out,
                           size_t cap);

/* Seconds since the epoch of an ISO 8601 UTC time ("2026-12-01T02:30:00Z"); NAN when not one. */
double job_iso_time(const char *iso);

/* The latest recheck of winner e among runs (a run whose last result is e's configuration on
 * e's device and toolkit, stored by `rooftune recheck` or a job), or NULL; *verdict is SAME,
 * FASTER or SLOWER against e's time (tolerance tol plus both spreads), or FAILS. */
const db_run_info *job_last_recheck(const db_entry *e, const db_run_info *runs, size_t nruns,
                                    double tol, recheck_verdict *verdict);

/* job_last_recheck over the runs of e's problem only (env's index): what job status and job run
 * ask for every winner of every problem, in time linear in the runs. */
const job_run_rec *job_env_last_recheck(const job_env *env, const job_winner *e, double tol,
                                        recheck_verdict *verdict);

/* 1 when run R is a recheck (its command is recheck.c's). */
int job_run_is_recheck(const db_run_info *r);

#endif
