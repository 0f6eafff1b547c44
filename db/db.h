/* db.h — the tuning database: one SQLite file that remembers every candidate rooftune has
 * evaluated, the winners with their cubins, and where each number came from.
 *
 * Provenance is part of every key.  A result belongs to a problem (family, shape, dtype,
 * layout), a device (GPU name, SM count, compute capability, driver; or the pseudo devices
 * "model:GPU" and "replay:FILE"), a template version (name plus the hashes of its source and
 * manifest) and a toolkit (CUDA, NVRTC and cuBLASLt versions), and says whether its time was
 * measured, predicted or replayed.  Lookups name the provenance they want and report any
 * mismatch; nothing made on another GPU, toolkit or template version is served silently.
 *
 * The file is opened in WAL mode with a busy timeout; every write is one BEGIN IMMEDIATE
 * transaction, retried while another process holds the write lock, so concurrent tuners lose
 * nothing and never see "database is locked".  A result is durable once db_run_store() has
 * returned: a run killed with SIGKILL keeps every committed row, and the next run can ask which
 * configurations are done (db_run_has_result, db_run_previous) and skip them.  The schema
 * version lives in PRAGMA user_version with migrations; a newer schema is RT_ERR_DB_VERSION,
 * a file that is not a rooftune database is RT_ERR_DB_FOREIGN.  Prepared statements only.
 *
 * Writer's sequence (what `rooftune tune` does):
 *     db_open(path, DB_CREATE, &d, err);
 *     db_run_begin(d, &spec, &run, err);              // problem + provenance + strategy
 *     db_run_template(run, "gemm_mma", "gemm", src_hash, manifest_hash, err);
 *     if (!db_run_has_result(run, "gemm_mma", cfg)) { evaluate; db_run_store(run, &res, &id, err); }
 *     db_run_set_winner(run, best_id, &winner, err);  // per template: cubin + launch geometry
 *     db_run_finish(run, "done", err);  db_close(d);
 */
#ifndef ROOFTUNE_DB_H
#define ROOFTUNE_DB_H

#include <stddef.h>

#include "core/problem.h"
#include "core/result.h"
#include "core/status.h"

/* The schema version this build writes (PRAGMA user_version): its last migration's
 * (DB_SCHEMA_VERSION, db/schema.h). */
int db_schema_written(void);
/* PRAGMA application_id of a rooftune database: "RTDB". */
#define DB_APPLICATION_ID 0x52544442

typedef struct db db;         /* an open database */
typedef struct db_run db_run; /* one tuning run being recorded */

enum {
  DB_READONLY = 0, /* open an existing database for reading */
  DB_CREATE = 1,   /* open for writing, creating the file and schema when absent */
};

/* The default database path is rt_default_db_path() (core/util.h). */

/* Opens PATH.  Errors: RT_ERR_IO (missing, unreadable), RT_ERR_DB_FOREIGN (not SQLite, or an
 * SQLite file of another program), RT_ERR_DB_VERSION (written by a newer rooftune), RT_ERR_DB
 * (damaged).  The message names the path and what to do. */
rt_status db_open(const char *path, int flags, db **out, rt_error *err);
void db_close(db *d);
/* The path given to db_open. */
const char *db_path(const db *d);
/* The schema version found in the file (after migration for writers). */
int db_schema_version(const db *d);

/* --- provenance ---------------------------------------------------------------------- */

typedef struct db_device {
  char name[128]; /* "NVIDIA H200", "model:h200", "replay:FILE" */
  int sm_count;   /* multiprocessors; 0 when unknown (replay) */
  int cc_major;   /* compute capability; 0 when unknown */
  int cc_minor;
  int driver_version; /* cuDriverGetVersion(), e.g. 13000; 0 for pseudo devices */
} db_device;

/* What a run needs to say about where its numbers come from. */
typedef struct db_provenance {
  db_device device; /* what ran (or predicted, or was replayed) */
  char toolkit[96]; /* db_toolkit_string(): "cuda 13.0, nvrtc 13.0, cublaslt 130100" */
  char arch[16];    /* compile target: "sm_90a"; "" for library-only runs */
} db_provenance;

/* Fills buf with this build's toolkit identity (CUDA headers, NVRTC, cuBLASLt versions). */
rt_status db_toolkit_string(char *buf, size_t size, rt_error *err);
/* Fills dev from a pseudo-device name ("model:h200", "replay:FILE"): name only. */
void db_device_pseudo(db_device *dev, const char *name);

/* Records a measured ceiling of a device: kind "copy_bw" (bytes/s) or "matmul" (FLOP/s, per
 * dtype; dtype "" for copy_bw).  The latest measurement replaces an older one. */
rt_status db_ceiling_set(db *d, const db_device *dev, const char *kind, const char *dtype,
                         double value, rt_error *err);
/* *found = 1 and *value (and *measured_at, an ISO time, when not NULL) if measured. */
rt_status db_ceiling_get(db *d, const db_device *dev, const char *kind, const char *dtype,
                         double *value, char *measured_at, size_t at_size, int *found,
                         rt_error *err);

/* --- recording a run ------------------------------------------------------------------ */

typedef struct db_run_spec {
  problem prob;            /* the problem tuned (family, shape, dtype, layout, dims) */
  db_provenance prov;      /* device, toolkit, arch */
  char strategy[32];       /* "random", "lever", "brute", "import" */
  unsigned long long seed; /* the strategy's seed */
  long long budget;        /* evaluations allowed; 0 = unlimited */
  char command[512];       /* the command line, for people */
} db_run_spec;

/* Starts a run (status "running", with this process as its owner); committed at once.  Runs of
 * the problem's database whose owner process is gone are marked "interrupted" on the way. */
rt_status db_run_begin(db *d, const db_run_spec *spec, db_run **out, rt_error *err);
/* Declares a template version used in this run.  Results name their template by
 * candidate_result.template_name; a name never declared is stored as a library candidate
 * (source hash "", e.g. "cublaslt"). */
rt_status db_run_template(db_run *r, const char *name, const char *family, const char *source_hash,
                          const char *manifest_hash, rt_error *err);
/* Stores one candidate (its own transaction: durable when this returns). */
rt_status db_run_store(db_run *r, const candidate_result *res, long long *result_id, rt_error *err);
/* Stores n candidates in one transaction (faster for imports); ids may be NULL. */
rt_status db_run_store_many(db_run *r, const candidate_result *res, size_t n, long long *ids,
                            rt_error *err);

/* Rewrites every RESULT_COLUMNS field of RESULT_ID, a result this run stored, from res: what
 * was learnt about it after it was stored (its hardware counters and the diagnosis made with
 * them, a winner's verdict).  RT_ERR_NOT_FOUND when the result is not this run's. */
rt_status db_run_update_result(db_run *r, long long result_id, const candidate_result *res,
                               rt_error *err);

/* Per-template calibrations of the model, keyed by the spec-table GPU they were measured on
 * ("h200": what model:h200 reads) and kind ("dram_bytes": measured DRAM bytes over the cost
 * formula's, after L2 reuse).  set replaces an older value; get sets *found = 0 when there is
 * none (also for a file older than schema 6).  samples may be NULL. */
rt_status db_calibration_set(db *d, const char *gpu, const char *template_name, const char *kind,
                             double ratio, int samples, rt_error *err);
rt_status db_calibration_get(db *d, const char *gpu, const char *template_name, const char *kind,
                             double *ratio, int *samples, int *found, rt_error *err);

/* Resume: 1 when a result for CONFIG of TEMPLATE already exists for this run's problem,
 * device, template version and toolkit (from this run or any earlier one), else 0. */
int db_run_has_result(db_run *r, const char *template_name, const char *config);
/* Resume: every earlier result of TEMPLATE for this problem/device/toolkit that is of this
 * template version or carries a code_hash (any version: the code says what ran), oldest first;
 * *out is malloc'ed (free it), *n its length. */
rt_status db_run_previous(db_run *r, const char *template_name, candidate_result **out, size_t *n,
                          rt_error *err);

/* --- concurrent tuners of one problem ------------------------------------------------ */

/* A claim keeps two tuners of the same problem, device and toolkit from evaluating the same
 * candidate: before evaluating, a run claims its key; a run that finds the key held by another
 * live run waits for that run's result instead (on a GPU each evaluation costs a compile and a
 * measurement).  Storing the result releases the claim, so does finishing the run; a claim of
 * a run whose process is gone (same machine: its pid and start time; another machine: no write
 * for DB_CLAIM_LEASE_S) has expired and is taken over.  db_run_begin marks such dead runs
 * "interrupted". */
#define DB_CLAIM_LEASE_S 900

/* The key of a candidate: "code:HASH" when its code hash is known (what ran), else
 * "config:TEMPLATE:CONFIG". */
void db_result_key(const char *template_name, const char *config, const char *code_hash, char *buf,
                   size_t size);

enum {
  DB_CLAIM_GRANTED = 0, /* this run holds the claim now: evaluate, then store */
  DB_CLAIM_DONE = 1,    /* a result is stored already (by any run): *done holds it */
  DB_CLAIM_HELD = 2     /* another live run is evaluating it: wait and ask again */
};
/* Claims the candidate (template, config, code_hash as in db_result_key) for this run, in one
 * transaction with the check for a stored result; *state is one of DB_CLAIM_*, *holder the
 * holding run when HELD (may be NULL); done may be NULL. */
rt_status db_run_claim(db_run *r, const char *template_name, const char *config,
                       const char *code_hash, int *state, candidate_result *done, long long *holder,
                       rt_error *err);
/* Gives up a claim without storing a result (the candidate was dropped). */
rt_status db_run_release(db_run *r, const char *template_name, const char *config,
                         const char *code_hash, rt_error *err);

/* What the runtime needs to launch a winner without NVRTC. */
typedef struct db_winner {
  const void *cubin; /* the compiled module (NULL for library winners) */
  size_t cubin_size; /* bytes */
  char entry[128];   /* kernel name in the cubin */
  char arch[16];     /* "sm_90a" */
  char grid[3][512]; /* launch expressions from the manifest ("ceil_div(N,BLOCK_N)") */
  char block[3][512];
  char smem[512];
  unsigned grid_v[3]; /* their values for this problem */
  unsigned block_v[3];
  unsigned smem_v;         /* dynamic shared memory bytes */
  char vars[1024];         /* config plus derived values "BLOCK_M=128,...,THREADS=256" */
  char library_algo[1024]; /* cuBLASLt algorithm identity for a library winner, else "" */
  char cubin_sha256[65];   /* SHA-256 of the cubin's bytes, hex; "" without a cubin.  The store
                            * computes it from cubin (what a caller puts here is ignored);
                            * reading gives what was stored (schema 8) */
  /* The serving recipe (template/recipe.h): what the runtime evaluates to serve this
   * winner for another shape.  NULL or "" for none (library winners, imports); db_entries
   * leaves them NULL, db_winner_recipe reads them. */
  const char *env;         /* the tuned problem's environment "M=4096,...,device.sm_count=132" */
  const char *derived;     /* derived values that read the shape: "NAME=EXPR" lines, in order */
  const char *constraints; /* constraints that read the shape: one expression a line */
} db_winner;

/* Makes RESULT_ID (a stored, successful result of this run) the winner for its template on
 * this problem/device/toolkit, replacing an older winner only when it is faster (or the old
 * one came from another template version).  *replaced tells (may be NULL). */
rt_status db_run_set_winner(db_run *r, long long result_id, const db_winner *w, int *replaced,
                            rt_error *err);
/* Ends the run: status "done", "failed" or "interrupted"; its claims are released. */
rt_status db_run_finish(db_run *r, const char *status, rt_error *err);
/* Frees the handle (does not change the run's status: a run never finished stays "running"). */
void db_run_free(db_run *r);
long long db_run_id(const db_run *r);

/* --- reading ------------------------------------------------------------------------- */

/* One winner with all its provenance, as lookups and exports see it. */
typedef struct db_entry {
  long long winner_id; /* winners.id */
  long long result_id; /* results.id */
  char family[16];     /* problem */
  char shape[64];
  char dtype[8];
  char layout[8];
  char dims[128];   /* "M=4096,N=4096,K=4096" */
  char args[8192];  /* the problem's data beyond its shape (problem.args), "" when none */
  db_device device; /* where it was made */
  char template_name[64];
  char source_hash[72];
  char manifest_hash[72];
  int template_stale; /* 1 when a newer version of this template is in the database */
  char toolkit[96];
  char config[768];
  timing_kind timing; /* measured / predicted / replayed */
  double time_ms;
  double spread;
  int repetitions;
  double verify_error;
  int verified;       /* 1: its output passed the reference check on the GPU that measured
                               it (candidate_result.verified) */
  char checked_on[4]; /* "gpu", "sim" or "": where its output was checked (candidate_result) */
  double flops;       /* of the problem */
  char limit[24];     /* diagnosis: dominant limit */
  char lever[160];
  db_winner launch; /* cubin points into the entry's own memory (see db_entries) */
  char created_at[32];
} db_entry;

/* Every winner in the database, joined with its provenance; *out is one malloc'ed block that
 * also holds the cubins (free(*out) frees all).  with_cubins = 0 leaves cubin NULL. */
rt_status db_entries(db *d, int with_cubins, db_entry **out, size_t *n, rt_error *err);

/* Every winner as db_entries reads it (without cubins), one at a time: fn is called with each
 * (the entry lives until fn returns) and a status other than RT_OK from it stops the reading
 * and is returned.  Memory stays one entry, whatever the count (job status over 100,000). */
typedef rt_status (*db_entry_fn)(const db_entry *e, void *ctx, rt_error *err);
rt_status db_entries_each(db *d, db_entry_fn fn, void *ctx, rt_error *err);
/* Winner WINNER_ID as db_entries reads it (without its cubin); RT_ERR_NOT_FOUND when none. */
rt_status db_entry_get(db *d, long long winner_id, db_entry *out, rt_error *err);

/* The cubin of winner WINNER_ID (db_entry.winner_id): *out malloc'ed (free it), *size bytes;
 * RT_ERR_NOT_FOUND when the winner has none (a library winner, an import).  Bytes whose SHA-256
 * is not the one stored with the winner (cubin_sha256) are never handed out: RT_ERR_DB names
 * the winner (id, template, config, problem, device) and says the cubin is damaged. */
rt_status db_winner_cubin(db *d, long long winner_id, void **out, size_t *size, rt_error *err);

/* A winner's serving recipe (db_winner.env, .derived, .constraints), malloc'ed. */
typedef struct db_recipe {
  char *env;
  char *derived;
  char *constraints;
} db_recipe;
/* Reads the recipe of winner WINNER_ID; RT_ERR_NOT_FOUND when it has none (stored before
 * schema 4, a library winner, an import).  Free it with db_recipe_free. */
rt_status db_winner_recipe(db *d, long long winner_id, db_recipe *out, rt_error *err);
void db_recipe_free(db_recipe *r);

/* --- runs ----------------------------------------------------------------------------- */

/* One recorded run with its problem, device and a summary of its results: what a job reads to
 * tell a fresh problem from a stale or interrupted one, and what a report's history plots. */
typedef struct db_run_info {
  long long id;    /* runs.id */
  char family[16]; /* its problem */
  char shape[64];
  char dtype[8];
  char layout[8];
  db_device device; /* where it ran */
  char toolkit[96];
  char status[16];      /* "running", "done", "failed", "interrupted" */
  char started_at[32];  /* ISO 8601, UTC */
  char finished_at[32]; /* "" while running */
  long long budget;     /* as begun */
  char command[512];    /* as begun */
  long long results;    /* results the run stored */
  long long ok;         /* of which succeeded */
  double best_ms;       /* the fastest successful one (NAN when none) */
  double best_spread;
  timing_kind best_timing;
  char best_template[64];
  char best_config[768];
  char last_status[24];   /* the run's last stored result (a recheck's only one): status */
  char last_template[64]; /* "" when the run stored nothing */
  char last_config[768];
  double last_ms; /* NAN when it failed */
  double last_spread;
} db_run_info;

/* Every run, oldest first (by start time); *out malloc'ed (free it), *n entries. */
rt_status db_runs(db *d, db_run_info **out, size_t *n, rt_error *err);
/* The same runs one at a time: fn with each (it lives until fn returns); a status other than
 * RT_OK from fn stops the reading and is returned. */
typedef rt_status (*db_run_fn)(const db_run_info *r, void *ctx, rt_error *err);
rt_status db_runs_each(db *d, db_run_fn fn, void *ctx, rt_error *err);
/* Sets run RUN_ID's status ("done", "failed" or "interrupted"; finished_at set when it had
 * none): a job marks the runs of a killed process interrupted, and a run its time budget cut.
 * RT_ERR_NOT_FOUND when there is no such run. */
rt_status db_run_set_status(db *d, long long run_id, const char *status, rt_error *err);

/* Counts for `db list`/`db check`. */
typedef struct db_counts {
  long long devices, templates, problems, runs, results, winners, ceilings;
} db_counts;
rt_status db_count(db *d, db_counts *c, rt_error *err);

/* Calls fn for every stored result, oldest first, with its provenance (for export and merge);
 * stops and returns fn's status when it is not RT_OK. */
typedef rt_status (*db_result_fn)(void *ctx, const db_run_spec *spec, const char *template_name,
                                  const char *source_hash, const char *manifest_hash,
                                  const candidate_result *res, rt_error *err);
rt_status db_each_result(db *d, db_result_fn fn, void *ctx, rt_error *err);
/* db_each_result over the successful results of template TEMPLATE_NAME for problems of DTYPE
 * alone, every device and shape: what a tune's prior reads from the database
 * (tuner/tune_transfer.c). */
rt_status db_each_result_of(db *d, const char *template_name, const char *dtype, db_result_fn fn,
                            void *ctx, rt_error *err);

/* Merges every row of SRC into D (same provenance kept; duplicates of a result already in D,
 * same key and config and time, are skipped); winners are kept when faster, a tie going to the
 * result with the smaller uid, so merging several files gives the same winners in any order
 * and merging one twice changes nothing.  A run D holds as "running" takes SRC's later status
 * (running < done < failed < interrupted).  *added counts the new results (may be NULL). */
rt_status db_merge(db *d, const char *src_path, long long *added, rt_error *err);

/* PRAGMA integrity_check, foreign_key_check and the schema's own checks (winner results
 * succeeded, timings are known kinds, cubins present for template winners).  Writes one line
 * per problem into report (may be NULL); *problems counts them. */
rt_status db_check(db *d, char *report, size_t size, int *problems, rt_error *err);

/* Writes a problem's dims as "M=4096,N=4096,K=4096". */
void db_dims_text(const problem *p, char *buf, size_t size);

#endif
