/* tune_impl.h — what the files of the tuning loop share; tune.h is the loop's public face.
 *
 * A run (tune_ctx) searches a lineup of templates, then the family's vendor library, or, on
 * the replay device, one recorded file.  Each of those is a search (tune_search): a name the
 * results are stored under, a space and a strategy (not the library: its candidates are a
 * list), and its fastest candidates so far (top).  A candidate (tune_cand) is made once from
 * its plan (manifest_plan, candidate_plan_library, a recorded configuration) with everything
 * the device and the diagnosis need, and carried through compile → evaluate → diagnose → store
 * by tune_evaluate(), the one evaluate path for the three kinds.  The files, by what they do:
 *
 *   tune.c            tune_run(): set-up, then the phases in order
 *   tune_budget.c     the budget across templates: by their roof bounds, the roof stop, the report
 *   tune_survey.c     what a space says before it runs: its roof bound, each configuration's features
 *   tune_setup.c      what a target means: its templates, the problem, their spaces, the reference
 *   tune_candidate.c  the candidate: made from a plan, its facts, the one device description
 *   tune_evaluate.c   the evaluate path: ask, compile, evaluate, diagnose, store, tell, report
 *   tune_template.c   one template's search: set-up, search, refinement, its winner
 *   tune_library.c    the family's vendor-library candidates
 *   tune_replay.c     a recorded file's space
 *   tune_refine.c     after a search: re-measure close ones, counters of the best, ties, verdicts
 *   tune_prior.c      priors: another recording's ranking, the model's prediction
 *   tune_transfer.c   a prior from a database: other devices and nearby shapes
 *   tune_store.c      the database, in one place: the run, resume and claims, results,
 *                     winners, ceilings, calibrations
 */
#ifndef ROOFTUNE_TUNE_IMPL_H
#define ROOFTUNE_TUNE_IMPL_H

#include "kernels/family.h"
#include "search/budget.h"
#include "search/strategy.h"
#include "compile/compile.h"
#include "compile/compile_pool.h"
#include "compile/cubin_cache.h"
#include "core/util.h"
#include "tuner/device/device.h"
#include "template/roles.h"
#include "tuner/tune.h"

#define TUNE_MAX_TEMPLATES 32
#define TUNE_MAX_BATCH     16
#define TUNE_MAX_LIBRARY   16
#define TUNE_TOP           6 /* candidates each search keeps: re-measured, profiled, tie-broken */
#define TUNE_PROFILE       3 /* the best of each search whose hardware counters are read */

#define TUNE_STOPPED(c) ((c)->o->stop && *(c)->o->stop)

struct db;
struct db_run;
typedef struct seen_cubin seen_cubin;

/* One run of the loop. */
typedef struct tune_ctx {
  const tune_options *o;
  tune_report *rep;
  device *dev;
  const family_ops *fam; /* NULL on replay without a known family */
  problem prob;
  rt_vars env; /* problem, dtype and device facts for manifest expressions */
  struct db *db;
  struct db_run *run;
  cubin_cache *cache;
  int cache_noted; /* 1: the report's note already says what is wrong with the cache */
  roofline_ceilings ceil;
  int have_ceil;
  double t0;
  size_t cap;            /* capacity of rep->results */
  family_reference ref;  /* the family's compiled reference template (have_ref) */
  compile_result ref_cr; /* its compile, owned */
  int have_ref;
  long budget_left; /* evaluations left in the whole run */
  long long *ids;   /* the database id of each of rep->results (0: not stored by this run) */
  int counters_off; /* hardware counters cannot be read here: not tried again this run */
  seen_cubin *seen; /* every cubin evaluated in this run, by what it runs */
  size_t nseen, seen_cap;
  /* the smaller problem the sim checks outputs on (tune_check.c); have_check 0: the problem */
  problem check_prob;
  rt_vars check_env;
  int have_check;
} tune_ctx;

/* The templates a run searches, and what each computes in, is compiled for and searches. */
typedef struct tune_lineup {
  int n; /* templates */
  manifest *m[TUNE_MAX_TEMPLATES];
  const char *dtype[TUNE_MAX_TEMPLATES]; /* what each computes in (the problem's, or tf32) */
  char arch[TUNE_MAX_TEMPLATES][16];     /* what each is compiled for */
  space *sp[TUNE_MAX_TEMPLATES];         /* each one's space; NULL: skipped (a note says why) */
  size_t *prior[TUNE_MAX_TEMPLATES];     /* --prior FILE's order of each space (owned) */
  size_t nprior[TUNE_MAX_TEMPLATES];
  tune_survey survey[TUNE_MAX_TEMPLATES]; /* each one's roof bound and roof (tune_budget.c) */
  double *features[TUNE_MAX_TEMPLATES];   /* each configuration's pre-run features, for the
                                             strategy (owned; NULL: none) */
  int live;                               /* templates with a space */
  int in_family;                          /* the family's templates in the path, before dtype
                                             and arch choose */
  int whole_family;                       /* the target is the family: its library runs too */
  char **paths;                           /* the catalog's manifests (a family target) */
  int npaths;
} tune_lineup;

typedef enum { TUNE_TEMPLATE, TUNE_LIBRARY, TUNE_RECORDED } tune_kind;

/* Where a candidate stands in its batch. */
typedef enum {
  CAND_NEW = 0, /* to compile (a template's) and evaluate */
  CAND_FAILED,  /* failed before compiling (its plan or source): r says why */
  CAND_RESUMED, /* the database holds its result: r */
  CAND_HELD,    /* another run is evaluating it */
  CAND_TOLD,    /* done: stored, told to the strategy, in the report */
} tune_cand_state;

/* One candidate, made once from its plan.  Everything the device and the diagnosis read is
 * here, so the device's description of it is made in one place (tune_cand_device). */
typedef struct tune_cand {
  const char *name;      /* its template, library or recording (the search's) */
  candidate_plan plan;   /* configuration, values, launch geometry and cost */
  int library_index;     /* the library's candidate number; -1 for the others */
  compute_path path;     /* the instruction path it computes on */
  int wgmma;             /* 1: wgmma (sm_90a) */
  const char *precision; /* what it computes in ("bf16", "tf32", "fp32"); NULL: unknown */
  double tolerance;      /* its verification tolerance; 0: the problem's */
  double min_bytes;      /* the problem's compulsory bytes; 0: unknown */
  double calibration;    /* the model's DRAM calibration of its template; 0: none */
  static_facts facts;    /* the plan's launch facts, with ptxas's and occupancy once compiled */
  char code_hash[65];    /* what it runs (a template's); "" for the others */
  char *source;          /* a template's complete source, owned until compiled */
  /* the sim's check on a smaller problem (tune_ctx.have_check): the plan and source for it
   * (owned like source), or why it has none */
  candidate_plan check_plan;
  char *check_source;
  char check_why[320];
  size_t job; /* its compile job in this pass */
  tune_cand_state state;
  candidate_result r; /* its result (set before evaluation when FAILED or RESUMED) */
} tune_cand;

/* A candidate a search keeps (its fastest few), with its compile. */
typedef struct tune_kept {
  int have;
  tune_cand cand;    /* the candidate, with its result (cand.r); cand.source is NULL */
  compile_result cr; /* its compile, owned (empty for library and recorded ones) */
  long long id;      /* its database row; 0: not stored */
  size_t at;         /* its place in rep->results */
} tune_kept;

/* One search: a template's space, the library's list, or a recorded file's space. */
typedef struct tune_search {
  tune_kind kind;
  const char *name;        /* what its results are stored under */
  const manifest *m;       /* a template's manifest; NULL for the others */
  const space *sp;         /* the space searched; NULL for the library */
  strategy *st;            /* asks and is told; NULL for the library (owned) */
  const char *phase;       /* its candidates' progress phase: "evaluate", "library" */
  double min_bytes;        /* the problem's compulsory bytes; 0 for a recorded file */
  int resumes;             /* 1: what the database holds is told, the rest claimed */
  long share;              /* new evaluations it may make */
  long fresh;              /* new evaluations made */
  int spent_out;           /* 1: its strategy had nothing more to ask */
  double best_ms;          /* its fastest result told (new or from the database); 0: none */
  double eval_s;           /* what its new evaluations took on the device, in all */
  const budget_plan *plan; /* the budget across templates, whose roof stop it asks (arm);
                               NULL: none */
  int arm;
  size_t batch;            /* candidates asked for together */
  int top_all;             /* top keeps candidates stopped early too (the library's) */
  tune_kept top[TUNE_TOP]; /* its fastest new successful candidates, fastest first */
  candidate_result *prev;  /* what the database held for it when it began (owned) */
  size_t nprev;
  /* a template's */
  const char *dtype; /* what it computes in */
  rt_vars env;       /* the names its expressions see, with its dtype's facts */
  param_roles roles; /* the roles the diagnosis may name as levers */
  compute_path path;
  int wgmma;
  const char *precision;
  double tolerance;
  double calibration;
  const gpu_spec *gpu;     /* the model's figures for ranking it (device_spec); may be NULL */
  const char *arch;        /* compiled for */
  const arch_spec *aspec;  /* its occupancy facts; NULL when unknown */
  const char *source_name; /* its source file's name, for the compiler's messages */
  const char *derived[RT_VARS_MAX]; /* its derived values' names (the cubin key reads them) */
  int nderived;
  char *source; /* the template's source text (owned) */
  char src_hash[65], man_hash[65];
  compile_options copt;
  rt_vars check_env; /* the names its expressions see for the smaller problem (have_check) */
  unsigned char options_digest[32];
  compile_pool_options popt;
  compile_job *jobs; /* TUNE_MAX_BATCH of them (owned) */
  compile_result *crs;
  /* a recorded file's */
  double flops; /* the problem's FLOPs when the family and problem are known */
} tune_search;

/* ---- tune.c ---- */
/* Appends "; TEXT" (or TEXT) to the report's note. */
void tune_note(tune_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the phases: the templates' searches, the library's candidates, a recorded file's ---- */
/* Every template of the lineup, the budget spent by their roof bounds (tune_budget.c). */
rt_status tune_templates(tune_ctx *c, tune_lineup *L, rt_error *err);
/* Template i of the lineup's search, set up and its strategy made (*out, owned by the caller);
 * then tune_search_run for each share, and tune_template_close. */
rt_status tune_template_open(tune_ctx *c, const tune_lineup *L, int i, tune_search **out,
                             rt_error *err);
/* After its last share: the close ones re-measured, the counters of its best few, its winner
 * stored; s freed. */
rt_status tune_template_close(tune_ctx *c, tune_search *s, rt_error *err);
rt_status tune_library(tune_ctx *c, rt_error *err);
rt_status tune_replay(tune_ctx *c, rt_error *err);

/* ---- tune_setup.c ---- */
rt_status tune_select(tune_ctx *c, const char *tpath, tune_lineup *L, rt_error *err);
rt_status tune_problem(tune_ctx *c, const tune_lineup *L, const char *tpath, int use_library,
                       rt_error *err);
rt_status tune_reference(tune_ctx *c, const char *tpath, rt_error *err);
rt_status tune_spaces(tune_ctx *c, tune_lineup *L, int use_library, rt_error *err);
/* The names a template computing in dtype sees: the run's, with dtype's facts when it is not the
 * problem's (an f32 run with --allow-tf32 runs a tf32 template). */
rt_status tune_template_env(const tune_ctx *c, const char *dtype, rt_vars *env, rt_error *err);

/* ---- tune_check.c: the smaller problem the sim checks on ---- */
/* Sets have_check, check_prob and check_env when the device runs kernels from their source and
 * the problem is too large for the CPU (a note says which shape is checked). */
rt_status tune_check_problem(tune_ctx *c, rt_error *err);
/* The smaller problem's names for a template that computes in dtype. */
rt_status tune_check_env(const tune_ctx *c, const char *dtype, rt_vars *env, rt_error *err);
/* Candidate k's plan and source for the smaller problem, or why it has none (check_why). */
void tune_cand_check(const tune_ctx *c, const tune_search *s, size_t idx, tune_cand *k);
void tune_lineup_free(tune_lineup *L);

/* ---- tune_candidate.c ---- */
/* The compute path of template m computing in dtype, and whether it uses wgmma. */
compute_path tune_template_path(const manifest *m, const char *dtype, int *wgmma);
/* The verification tolerance of a candidate computing in dtype d: 0 (the family's for the
 * problem) unless d is not the problem's dtype (tf32 in an f32 run), then d's own. */
double tune_tolerance(const tune_ctx *c, const char *d);
/* The launch facts of plan pl, with ptxas's (NULL: before compiling). */
void tune_plan_facts(const candidate_plan *pl, const ptxas_report *ptxas, static_facts *f);
/* Configuration idx of template search s, made from its plan and source (state CAND_NEW, or
 * CAND_FAILED when either cannot be made). */
void tune_cand_template(tune_ctx *c, const tune_search *s, size_t idx, tune_cand *k);
/* Library candidate i of identity id (its precision from the identity). */
void tune_cand_library(tune_ctx *c, const tune_search *s, int i, const char *id, tune_cand *k);
/* Configuration idx of a recorded file's space. */
void tune_cand_recorded(const tune_search *s, size_t idx, tune_cand *k);
/* The device's description of candidate k: its compile cr (NULL: none), and the time above
 * which its timing stops early (0: never).  The one place a device_candidate is filled. */
void tune_cand_device(const tune_cand *k, const compile_result *cr, double stop_above_ms,
                      device_candidate *dc);
/* What decides a compiled candidate's outcome besides the code: see tune_candidate.c. */
void tune_cubin_key(const compile_result *cr, const tune_search *s, const candidate_plan *pl,
                    unsigned char out[32]);

/* ---- tune_evaluate.c ---- */
/* The search loop: ask s's strategy for batches until its share is spent, the strategy has
 * nothing more (spent_out), its best reaches its roof (s->plan's stop), or the run stops;
 * every candidate goes through tune_evaluate.  Called again with a larger share, it goes on. */
rt_status tune_search_run(tune_ctx *c, tune_search *s, rt_error *err);
/* Evaluates candidates k[0..n) of s in passes: compile (templates), evaluate, then wait for
 * those another run holds. */
rt_status tune_batch(tune_ctx *c, tune_search *s, tune_cand *k, size_t n, rt_error *err);
/* Diagnoses result r of candidate k, with its measured counters when it has them (idempotent). */
void tune_diagnose(tune_ctx *c, const tune_search *s, const tune_cand *k, candidate_result *r);
void tune_search_free(tune_search *s);

/* ---- tune_refine.c ---- */
void tune_top_insert(tune_search *s, const tune_cand *k, const compile_result *cr, long long id,
                     size_t at);
void tune_remeasure_close(tune_ctx *c, tune_search *s);
void tune_profile(tune_ctx *c, tune_search *s);
/* Counters could not be read: said once, and the model's facts stand for the rest of the run. */
void tune_counters_unavailable(tune_ctx *c, const rt_error *e);
/* The top entry that wins s: the fastest, or among those tied with it the tie-break's first. */
int tune_winner(const tune_ctx *c, const tune_search *s);
void tune_verdicts(tune_ctx *c);

/* ---- tune_prior.c ---- */
int tune_prior_is_model(const tune_options *o);
rt_status tune_priors(tune_ctx *c, tune_lineup *L, rt_error *err);
rt_status tune_prior(tune_ctx *c, const char *name, const space *sp, size_t **order, size_t *n,
                     rt_error *err);
rt_status tune_prior_check(tune_ctx *c, size_t ranked, rt_error *err);
/* The model's ranking of template search s (for --prior model and the model strategy). */
rt_status tune_prior_model(tune_ctx *c, tune_search *s, strategy_options *so, size_t **order,
                           rt_error *err);

/* ---- tune_transfer.c ---- */
#define TUNE_MAX_RANKINGS    32 /* rankings one template's prior merges */
#define TUNE_TRANSFER_GROUPS 8  /* device-and-shape groups one database gives, nearest first */
/* Rankings of one space, to be merged (replay_merge_orders); each order owned. */
typedef struct tune_rankings {
  size_t *order[TUNE_MAX_RANKINGS];
  size_t len[TUNE_MAX_RANKINGS];
  int n;
} tune_rankings;
/* What a database gave one template's prior. */
typedef struct tune_transfer_summary {
  size_t results;        /* results used */
  int groups;            /* device-and-shape groups they came from */
  int predicted;         /* 1: some are model-predicted (no measured or replayed one exists) */
  size_t predicted_left; /* predicted results left out because measured ones exist */
  char from[400];        /* "NVIDIA A100 at 4096x4096x4096; this device at 2048x2048x2048" */
} tune_transfer_summary;
/* Appends to R the rankings database d gives template TEMPLATE_NAME's space sp for problem
 * prob on device DEVICE_NAME (tune_transfer.c's header says which results count); same_db: d
 * is the database this run stores into.  Nothing found: RT_OK, sum->results 0. */
rt_status tune_transfer_collect(struct db *d, int same_db, const char *template_name,
                                const problem *prob, const char *device_name, const space *sp,
                                tune_rankings *R, tune_transfer_summary *sum, rt_error *err);
/* 1 when PATH begins with SQLite's header (a database, whatever its name). */
int tune_path_is_database(const char *path);

/* ---- tune_store.c: the database ---- */
rt_status tune_store_open(tune_ctx *c, rt_error *err);
/* Ends the run: done, interrupted or (rc) failed, and closes the database. */
rt_status tune_store_close(tune_ctx *c, rt_status rc, rt_error *err);
/* Registers search s (family, hashes) and, when it resumes, reads what the database holds. */
rt_status tune_store_search(tune_ctx *c, tune_search *s, const char *family, rt_error *err);
/* A new candidate the database already holds is resumed (CAND_RESUMED); else it is claimed. */
rt_status tune_store_resume(tune_ctx *c, tune_search *s, tune_cand *k, rt_error *err);
/* Waits until no candidate of k[0..n) is held by another run. */
rt_status tune_store_wait_held(tune_ctx *c, tune_search *s, tune_cand *k, size_t n, rt_error *err);
rt_status tune_store_result(tune_ctx *c, const candidate_result *r, long long *id, rt_error *err);
/* Writes rep->results[at] again (counters, verdict) where this run stored it. */
void tune_store_update(tune_ctx *c, size_t at);
/* Stores search s's winner, top[w]: a template's cubin and recipe, the library's algorithm,
 * a recorded file's configuration. */
rt_status tune_store_winner(tune_ctx *c, const tune_search *s, int w, rt_error *err);
/* The DRAM calibration of template NAME on this GPU (0: none), and a new one measured. */
double tune_store_calibration(tune_ctx *c, const char *name);
void tune_store_set_calibration(tune_ctx *c, const char *name, double ratio, int n);
/* Measured ceilings from the database, or measured now and stored (a measuring device only). */
rt_status tune_ceilings(tune_ctx *c, rt_error *err);

#endif
