/* tune.h — the whole loop for one problem: space → compile → measure/predict/replay →
 * diagnose → search → store.  `rooftune tune` is a thin command over tune_run(); the engine
 * never sees the command line.
 *
 * A target is a family ("gemm": every template of the family that supports the dtype and the
 * device's architecture, plus the family's library candidates (cuBLASLt for gemm, cuDNN's SDPA
 * for attention) on a real GPU, stored under the library's name (family_ops.library);
 * a library with nothing for the problem leaves a note saying why) or one template by name.  The
 * evaluation budget (new evaluations: what the database already holds is told to the strategy,
 * not counted) is spent where it can pay (search/budget.h): the templates are searched in
 * increasing roof bound, each for an even share of what is left; a template whose bound cannot
 * come within 5 % of the best so far gets none, a template whose best reaches its roof stops,
 * and what they leave goes to those that can still win.  Each
 * template is searched by its own strategy (search/strategy.h) over its manifest's space, in
 * batches that the compile pool builds in parallel through the cubin cache.  Every candidate is
 * diagnosed (diagnose.h) when it has a time and the device has ceilings, stored in the database
 * (db/db.h) as it arrives, and each template's winner is stored with its cubin.  Resume: a
 * configuration the database already holds for the same problem, device, template version and
 * toolkit is not evaluated again; its stored result is told to the strategy instead.
 *
 * On the replay device the space is the file's: the target names the run, the file's
 * parameters are the configuration, and times come from the file (no compile).
 */
#ifndef ROOFTUNE_TUNE_H
#define ROOFTUNE_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "model/gpu_spec.h"
#include "model/roofline.h"
#include "template/catalog.h"
#include "template/manifest.h"
#include "core/result.h"
#include "core/status.h"

/* Evaluations when the caller gives no budget.  On the model device each one is a compile
 * (~0.5-2 s of NVRTC on one core), so this keeps a cold family run within a minute or two on
 * two cores; the cubin cache makes a rerun take seconds. */
#define TUNE_DEFAULT_BUDGET 32

typedef struct tune_progress {
  size_t done;    /* candidates evaluated so far (not those taken from the database) */
  size_t total;   /* the budget: new evaluations this run makes at most */
  size_t resumed; /* candidates taken from the database so far */
  const candidate_result *last; /* the candidate just finished; NULL when a phase starts */
  int last_resumed;             /* 1 when last came from the database instead of being evaluated */
  int have_best;                /* a candidate succeeded */
  double best_ms;               /* the best time so far */
  char best_template[64];       /* and its template */
  double elapsed_s;             /* since tune_run started */
  const char *phase;            /* "compile", "evaluate", "library", "ceilings" */
} tune_progress;

#define TUNE_MAX_PRIORS 16 /* --prior files */

typedef struct tune_options {
  const char *target;        /* family ("gemm") or template name ("gemm_mma") */
  const char *shape;         /* "4096x4096x4096" (the family's syntax) */
  const char *dtype;         /* "bf16" */
  const char *problem_args;  /* the problem's data beyond its shape, as the family parses it
                               (attention: per-sequence KV lengths "5,1000,777"); NULL: none */
  const char *device;        /* "cuda", "model:h200", "replay:FILE"; NULL: cuda when a GPU is
                               present, else model:h200 (tune_report.note says so) */
  const char *strategy;      /* NULL: the default strategy */
  int blind;                 /* 1: the strategy is told only times (strategy_options.blind) */
  long budget;               /* new evaluations: configurations the database already holds
                               are told to the strategy and do not count; 0:
                               TUNE_DEFAULT_BUDGET */
  const char *config;        /* NULL, or one configuration of the template named by target
                               ("BLOCK_M=128,BLOCK_N=64,..."): that configuration alone is
                               evaluated, afresh (a result the database holds for it is not
                               reused); `rooftune recheck` re-measures winners this way */
  int cover;                 /* 1: each template's space is cut to its covering set
                               (template/cover.h), for checking every code path once */
  const char *prior;         /* NULL, or a recording of the same kernel elsewhere (a Kernel
                               Tuner or KTT file, or a rooftune export, e.g. of another GPU's
                               database): each template's search evaluates the fastest of its
                               configurations there first (strategy_options.prior) */
  const char *const *priors; /* with npriors > 1: every --prior given (priors[0] == prior), the
                               configurations by their mean rank over them (replay_rank_priors) */
  int npriors;
  int no_prior;              /* 1: no prior at all, not even the database's own results of the
                               template on other devices and shapes (the default) */
  double max_seconds;        /* wall-clock budget; 0: none */
  int shard_index;           /* with shard_count > 1: only the configurations of shard
                               shard_index (0-based) are searched, so shard_count processes
                               tune one problem's candidates without overlap; a configuration's
                               shard is tune_config_shard() of its text, the same in every
                               process and for every version of a manifest that keeps it */
  int shard_count;           /* 0 or 1: every configuration */
  uint64_t seed;             /* strategy seed (and the GPU inputs' seed) */
  const char *db_path;       /* database to store into; NULL: none */
  const char *template_path; /* folders of templates and family declarations, joined by ':'
                               (template/catalog.h); NULL: catalog_path() */
  int compile_workers;       /* compile processes; 0: one per core */
  int batch;                 /* candidates asked for and compiled together (a sequential
                               strategy gives one at a time); 0: compile_workers, else cores */
  double timeout_s;          /* per-candidate limit on the GPU (0: the device's default) */
  int allow_tf32;            /* an f32 problem (fp32 math) admits tf32 candidates too: templates
                               that take tf32 and not f32 (gemm_mma), cuBLASLt's FAST_TF32
                               algorithms; each result says what it computed in (precision) */
  const char *worker_exe;    /* binary for the cuda worker; NULL: this one */
  const char *const *worker_argv; /* the cuda worker's command line (device_options.worker_argv),
                               given by the command (cli_worker_argv); NULL: cuda cannot measure */
  const char *command;            /* the command line, stored with the run */
  void (*progress)(void *ctx, const tune_progress *p); /* may be NULL */
  void *progress_ctx;
  volatile int *stop; /* may be NULL; a signal handler sets *stop to end the run early:
                               the candidate in flight is dropped (a Ctrl-C also kills the
                               compile and GPU workers), everything finished is kept, and the
                               database run is marked "interrupted" */
} tune_options;

/* What the budget across templates (search/budget.h) did with one template. */
#define TUNE_REPORT_TEMPLATES 32
typedef struct tune_template_report {
  char name[64];
  double bound_ms;    /* its roof bound: no configuration runs faster (datasheet ceilings,
                               no launch); 0: none */
  int bound_by_bytes; /* 1: the compulsory bytes bound it, 0: its FLOPs */
  double roof_ms;     /* its roof on the run's ceilings (what its best stops near); 0: none */
  double best_ms;     /* its fastest result; 0: none */
  long evaluated;     /* new evaluations it got */
  char outcome[24];  /* "searched", "ruled out", "at its roof", "space exhausted", "not searched" */
  double against_ms; /* ruled out: the incumbent its bound could not come within 5 % of */
  double eval_s;     /* what one of its evaluations took on the device, on average; 0: none */
} tune_template_report;

typedef struct tune_report {
  char device[128];          /* "model:h200", "NVIDIA H200", "replay:FILE" */
  timing_kind timing;        /* measured / predicted / replayed */
  char note[1024];           /* e.g. why the device was chosen; "" when nothing to say */
  char checked_shape[64];    /* the smaller shape the sim checked outputs on; "": the problem's */
  char prior[1024];          /* what the prior gave each template ("gemm_wgmma 31 ranked, ..."),
                                 "" without one */
  size_t prior_results;      /* results of the database the default prior was made of */
  int prior_default;         /* 1: the prior is the database's own (no --prior, no --no-prior) */
  char strategy[32];         /* the strategy used */
  long budget;               /* the evaluation budget */
  size_t evaluated;          /* candidates evaluated in this run */
  size_t resumed;            /* candidates taken from the database instead */
  size_t failed;             /* candidates that failed (compile, launch, wrong, crash, ...) */
  size_t templates;          /* templates searched */
  int have_best;             /* 1 when some candidate succeeded */
  candidate_result best;     /* the fastest successful candidate, with its diagnosis */
  candidate_result *results; /* every candidate of this run, in evaluation order (owned) */
  size_t nresults;
  double seconds;         /* wall time */
  double compile_seconds; /* wall time spent compiling */
  size_t cache_hits;      /* compiles served from the cubin cache */
  long long run_id;       /* the database run, 0 without a database */
  char ceilings[256];     /* the roofs diagnosis used, each bandwidth labelled
                             (roofline_describe) */
  int interrupted;        /* *opt->stop ended the run early */
  size_t tied;            /* candidates tied with the best (verdict.h); best.verdict says
                                 why it wins and how the tie broke */
  size_t deduplicated;    /* candidates whose cubin and launch matched one evaluated before:
                                 given its result, not measured */
  double dedup_saved_s;   /* GPU seconds that saved (the first one's evaluation time) */
  size_t stopped_early;   /* candidates stopped after their first timed runs: every one over
                                 3x the best so far */
  double early_saved_s;   /* GPU seconds that saved at least (the runs up to the minimum) */
  size_t profiled;        /* candidates whose hardware counters were read */
  tune_template_report tmpl[TUNE_REPORT_TEMPLATES]; /* each template the run lined up, in
                                 the order searched (by increasing bound) */
  size_t ntmpl;
  int roof_rules;            /* 1: templates were ruled out by their bounds and stopped at their
                                 roofs (off for brute_force, --config and --cover, and from the
                                 moment a result beats its bound) */
  double roof_stop;          /* the share of its roof at which a template stops */
  long roof_unspent;         /* evaluations of the budget not spent because every template left
                                 was ruled out, at its roof or exhausted */
  double roof_unspent_gpu_s; /* their GPU seconds at the mean evaluation time of the templates
                                 that stopped (a measuring device; 0 otherwise) */
  char calibration[256];     /* the DRAM calibrations measured ("gemm_wgmma 0.83x (3)") or
                                 applied by the model ("... (applied)"); "" when none */
} tune_report;

/* Runs the loop; on RT_OK the report holds the results (free with tune_report_free).  A
 * candidate's failure is data in the report, never an error; errors are about the inputs
 * (unknown target, bad shape or dtype, no template for the dtype/arch, unreadable database)
 * or a device that cannot go on. */
rt_status tune_run(const tune_options *opt, tune_report *out, rt_error *err);
void tune_report_free(tune_report *r);

/* The model device's time in ms for configuration idx of template m's space sp (env: the
 * problem's, dtype and device names) on gpu, before any compile: launch geometry, cost and
 * shared memory from the manifest, occupancy without the register count, on the compute path
 * the template's instruction takes for dtype.  min_bytes is the
 * family's compulsory traffic for the problem.  HUGE_VAL when it cannot be predicted.  The
 * tuner ranks candidates with it (strategy model, --prior model); benchmarks pick likely
 * winners with it. */
double tune_predict_config(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                           const gpu_spec *gpu, const char *dtype, double min_bytes);

/* What a template's space says before anything runs (tune_template_survey). */
typedef struct tune_survey {
  template_roof bound; /* on the datasheet's ceilings, no launch (roofline_bound_ceilings): a time
                          no configuration beats, what a template is ruled out by; seconds 0:
                          none (no datasheet for the GPU, or no configuration planned) */
  template_roof roof;  /* on the run's ceilings (measured where the run has them): the roof a
                          template's best stops near; seconds 0: none */
  size_t planned;      /* configurations whose plan could be made */
} tune_survey;

/* Template m's space sp for a problem (env: the names its expressions see; dtype: what it
 * computes in; min_bytes: the family's compulsory bytes) on the run's ceilings `run` and the
 * GPU's datasheet `gpu` (NULL: no bound), its configurations' occupancy on architecture arch
 * (NULL: gpu's), the model's DRAM calibration of the template (0: none): its bound and roof from
 * the fewest FLOPs any configuration executes and the largest grid any launches, and, with
 * features non-NULL (space_size x FEATURE_COUNT, model/features.h), each configuration's
 * pre-run features (threads, dynamic shared memory, waves, its roofline bound; the compiler's
 * facts NaN).  What the tune loop spends its budget by and hands to the steer strategy, and what
 * the benchmarks compute bounds with. */
rt_status tune_template_survey(const manifest *m, const space *sp, const rt_vars *env,
                               const char *dtype, double min_bytes, const roofline_ceilings *run,
                               const gpu_spec *gpu, const char *arch, double calibration,
                               double *features, tune_survey *out, rt_error *err);

/* The shard (0 .. count-1) that configuration text CONFIG ("BLOCK_M=128,...") belongs to: a
 * hash of the text, so the partition depends on nothing but the configuration. */
int tune_config_shard(const char *config, int count);

/* The device used when none is named: "cuda" when a driver and a GPU are present, else
 * "model:h200" with a note (into note, "" otherwise) saying that times will be predictions. */
const char *tune_default_device(char *note, size_t size);

#endif
