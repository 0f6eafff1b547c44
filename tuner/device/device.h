/* device.h — where a candidate's time comes from: one interface, three devices.
 *
 *   cuda          measures on the GPU, in a worker process that owns the CUDA context
 *                 (worker.h): the output is poisoned, the kernel run once and verified against
 *                 the family's reference before any timing; then a warm-up apart from timing,
 *                 the L2 flushed before every timed run, CUDA events around each run, and
 *                 repetitions until the spread is small or a time cap is reached.  A crash or
 *                 a hang costs that candidate (RT_ERR_CRASH / RT_ERR_TIMEOUT) and a fresh
 *                 worker carries on.  Timing: measured, on the GPU it names.
 *   model:<gpu>   predicts a time from the FLOPs, modeled DRAM bytes, static occupancy, waves
 *                 and the spec table's ceilings (a roofline with occupancy/latency and
 *                 wave-quantization terms plus the launch overhead).  Deterministic; needs no
 *                 GPU.  Timing: predicted, device "model:h200".
 *   replay:<file> serves the times recorded in a Kernel Tuner / KTT cache file (ktfile.h) or
 *                 in rooftune's own export (the same Kernel Tuner format).  Failures come back
 *                 as the recorded failure; a configuration the file lacks is an error.  Timing:
 *                 replayed.
 *
 * The pipeline (tune.h) compiles and describes a candidate (device_candidate); the device
 * fills a candidate_result: status, time, spread, repetitions, verification error, and the
 * timing kind with the device's name.  Diagnosis is not the device's job (diagnose.h), but the
 * device says which ceilings apply (device_ceilings).
 */
#ifndef ROOFTUNE_DEVICE_H
#define ROOFTUNE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/family.h"
#include "model/diagnose.h"
#include "template/manifest.h"
#include "model/gpu_spec.h"
#include "core/result.h"
#include "core/status.h"
#include "core/vars.h"

typedef struct device device;
struct ktfile;
struct problem;

/* One candidate as the pipeline hands it to a device. */
typedef struct device_candidate {
  const char *template_name;  /* "gemm_mma", or "cublaslt" */
  const candidate_plan *plan; /* its configuration text, values, launch geometry and cost
                                 (manifest_plan; candidate_plan_library for a library one) */
  const char *entry;          /* the kernel's symbol in the cubin */
  const void *cubin;          /* compiled code; NULL for library candidates and non-cuda devices */
  size_t cubin_size;          /* bytes */
  double min_bytes;           /* the problem's compulsory bytes (inputs once, output once);
                                 0 when unknown.  The model lets L2 absorb part of the rest */
  static_facts facts;         /* ptxas and occupancy facts */
  compute_path path;          /* instruction path the template uses */
  int wgmma;                  /* 1 when the template uses wgmma (sm_90a) */
  int library_index;          /* >= 0: the family's library candidate with that index */
  double stop_above_ms;       /* cuda: stop repeating once the first timed runs are all slower
                                 than this (3x the best so far; DEVICE_SLOW_FACTOR); 0: never */
  double dram_calibration;    /* model: measured / modelled DRAM bytes of this template on the
                                 GPU modelled (db_calibration_get); 0 or 1: none */
  const char *precision;      /* what the candidate computes in ("fp32", "tf32", "bf16"...),
                                 copied into the result; NULL: "" */
  double tolerance;           /* cuda: the verification tolerance when the candidate computes in
                                 another precision than the problem's (a tf32 candidate of an
                                 f32 run: tf32's); 0: the family's for the problem */
  const char *source;         /* sim: the configuration's complete source (NVRTC's text); NULL
                                 for library candidates */
  const char *source_name;    /* its file's name, for messages */
  const struct compile_options *copt; /* sim: its target and include folders */
  const candidate_plan *check_plan;   /* sim: the plan for the smaller problem the device was
                                         set up with (source is that plan's); NULL: plan */
  const char *check_why; /* sim, with check_plan and no source: why it cannot be checked */
} device_candidate;

typedef struct device_options {
  double timeout_s;       /* cuda: a candidate's wall-clock limit in the worker (0: 20 s) */
  double time_cap_s;      /* cuda: seconds of timed repetitions per candidate (0: 0.5 s) */
  double target_spread;   /* cuda: stop repeating when (p90-p10)/median is under this (0: 0.02) */
  int min_reps;           /* cuda: at least this many timed runs (0: 5) */
  int max_reps;           /* cuda: at most this many timed runs (0: 200) */
  uint64_t seed;          /* cuda: seed of the random inputs */
  const char *worker_exe; /* cuda: the binary the worker runs (NULL: this one, /proc/self/exe) */
  const char *const *worker_argv; /* cuda: the worker's command line, argv[0] first, NULL-ended:
                                     what the command that opens the device names (the rooftune
                                     command: cli_worker_argv).  NULL: the device opens, and
                                     measuring says that it has no worker */
  const char *replay_template;    /* replay of a rooftune export: the template (or family) to
                                  serve; NULL: the export's only one */
  const char *replay_shape;       /* replay of a rooftune export: the problem; NULL: the only one */
  const char *replay_dtype;
} device_options;

/* What a device can do, for the pipeline to ask instead of naming device kinds. */
enum {
  DEVICE_CAP_MEASURES = 1, /* times are measurements: re-measure close ones, measure ceilings */
  DEVICE_CAP_RUNS = 2,     /* kernels run: the family's library candidates can compete */
  DEVICE_CAP_RECORDED = 4, /* the space and its times are the device's file (replay) */
  DEVICE_CAP_SOURCE = 8,   /* kernels run from their source on the sim (sim): each candidate's
                              output is checked, the family's reference is compiled for it as a
                              sim image (sim_driver.h), not a cubin */
};

/* --- device kinds: what --device and a job file's "device" accept --------------------- */

/* One kind of device as its text is written; device.c's table holds one per kind (a new kind
 * is one file, device_NAME.c, and its three entries: device_impl.h, that table and its line in
 * the README's list of kinds, which tests/cli/test_help.sh holds to the table). */
typedef struct device_kind {
  const char *prefix;           /* what the text starts with: "cuda", "model:", "replay:" */
  const char *syntax;           /* how it is written, for help: "cuda | cuda:N", "model:GPU" */
  const char *(*choices)(void); /* what may follow the prefix, for help (model: the spec
                                   table's GPUs); NULL: nothing to list */
  int caps;                     /* DEVICE_CAP_* */
  timing_kind timing;           /* what its times are */
} device_kind;

/* The kind of device text SPEC ("cuda", "cuda:1", "model:h200", "replay:FILE"): the kind whose
 * prefix starts it ("cuda" only as itself or "cuda:..."); NULL when none does. */
const device_kind *device_kind_lookup(const char *spec);
/* The kinds in the order help lists them: the i-th, NULL past the last. */
const device_kind *device_kind_at(size_t i);
/* Checks SPEC without opening anything: a known kind, and what follows its prefix (a GPU index,
 * a GPU of the spec table, a file name).  RT_ERR_INVALID saying what is accepted, not located:
 * the caller says where SPEC came from (--device, a job file's field). */
rt_status device_check(const char *spec, rt_error *err);
/* The device texts accepted, generated from the table, kinds with a capability in WITHOUT left
 * out: "cuda | cuda:N | model:GPU (h200, h100, a100, l4) | replay:FILE".  Into buf; returns
 * buf. */
const char *device_kinds_help(int without, char *buf, size_t size);
/* The spec-table GPU a device text stands for without opening it (model:GPU's); NULL for the
 * other kinds, whose GPU is known once opened (device_spec). */
const gpu_spec *device_kind_gpu(const char *spec);

/* Opens a device text device_check accepts.  Errors are located at --device (a caller that got
 * SPEC elsewhere relocates them) and list what is accepted. */
rt_status device_open(const char *spec, const device_options *opt, device **out, rt_error *err);
void device_close(device *d);
/* 1 when the device has every capability in CAPS. */
int device_has(const device *d, int caps);

/* Where results come from, as the database's provenance wants it. */
typedef struct device_identity {
  char name[128];         /* "NVIDIA H200", "model:h200", "replay:FILE" */
  int sm_count;           /* 0 for pseudo devices */
  int cc_major, cc_minor; /* 0 for pseudo devices */
  int driver_version;     /* cuDriverGetVersion(); 0 for pseudo devices */
  int pseudo;             /* 1 for model and replay devices */
} device_identity;
void device_get_identity(const device *d, device_identity *out);

/* "model:h200", "replay:FILE", or the GPU's name ("NVIDIA H200") for cuda. */
const char *device_label(const device *d);
timing_kind device_timing(const device *d);
/* The architecture candidates are compiled for ("sm_90"); NULL for replay. */
const char *device_arch(const device *d);
/* The spec-table entry the device is (model) or matches (cuda); may be NULL. */
const gpu_spec *device_spec(const device *d);
/* The GPU's index for cuda ("cuda:N"); 0 for the other devices. */
int device_ordinal(const device *d);
/* SM count, for waves (0 when unknown). */
int device_sm_count(const device *d);
/* The roofs diagnosis holds candidates against: measured ones once device_set_ceilings was
 * called, else the spec table's.  0 when the device has none (replay of a foreign GPU). */
int device_ceilings(const device *d, roofline_ceilings *out);
/* Replaces the ceilings by measured ones (from the database or device_measure_ceilings). */
void device_set_ceilings(device *d, const roofline_ceilings *measured);
/* The replay file (NULL for other devices): its space, times and failures. */
const struct ktfile *device_replay_file(const device *d);

/* cuda: sets up family fam's inputs and reference for problem P in the worker (again after a
 * worker restart): a declared family's declaration file and the compiled reference template
 * (ref; NULL when the family names none) travel with the request.  model and replay: remembers
 * the problem.  Call before evaluating. */
rt_status device_begin(device *d, const family_ops *fam, const struct problem *p,
                       const family_reference *ref, rt_error *err);

/* Evaluates one candidate into out (status, time, timing, device name, ...).  The return value
 * is RT_OK when the candidate got a result, failed or not (its failure is out->status); an
 * error return means the device itself cannot go on. */
rt_status device_evaluate(device *d, const device_candidate *c, candidate_result *out,
                          rt_error *err);

/* cuda: the family's library candidates for the current problem (cuBLASLt algorithms): their
 * count (at most max) and identities (the family's library_describe text, which the
 * runtime can use again). */
rt_status device_library_list(device *d, int max, char ids[][256], int *count, rt_error *err);

/* cuda: measures the ceilings once: a large device-to-device copy, and the library matmul
 * rate for dtype (8192^3); fills out (measured = 1). */
rt_status device_measure_ceilings(device *d, const char *dtype, roofline_ceilings *out,
                                  rt_error *err);

/* The model device's prediction for one candidate, in seconds (also used to rank candidates
 * before measuring).  RT_ERR_LAUNCH when the candidate cannot be resident on an SM. */
rt_status device_model_predict(const gpu_spec *gpu, const device_candidate *c, double *seconds,
                               rt_error *err);

/* cuda: hardware counters of one more run of candidate c (after its timing, never inside it):
 * CUPTI's range profiler around the launch, one pass per replay (driver/cupti.h).
 * RT_ERR_UNSUPPORTED (with CUPTI's reason) where counters cannot be read: no CUPTI, an unknown
 * chip, no permission, a device that does not run kernels. */
rt_status device_profile(device *d, const device_candidate *c, hw_counters *out, rt_error *err);

/* The cuda device's repetition rule, one decision after each timed run: times[0..n) the runs
 * so far, sorted ascending.  DEVICE_TIMING_MORE: run again; DEVICE_TIMING_STEADY: stop, the
 * spread ((p90-p10)/median, into *spread) is at most target after at least min_reps runs, or
 * max_reps runs or cap_s seconds (elapsed_s) were reached; DEVICE_TIMING_SLOW: stop, every one
 * of the first DEVICE_SLOW_RUNS runs is slower than stop_above_ms (> 0), so a candidate that
 * cannot win spends no more GPU time (tinygrad's early stop). */
enum { DEVICE_TIMING_MORE = 0, DEVICE_TIMING_STEADY = 1, DEVICE_TIMING_SLOW = 2 };
#define DEVICE_SLOW_FACTOR 3.0 /* a candidate this many times slower than the best stops early */
#define DEVICE_SLOW_RUNS   2   /* after this many timed runs */
int device_timing_next(const double *sorted_ms, int n, int min_reps, int max_reps, double target,
                       double elapsed_s, double cap_s, double stop_above_ms, double *spread);

/* Worker restarts so far (cuda). */
int device_worker_restarts(const device *d);

/* --- the cuda device's worker side (`rooftune __worker`), see worker.h --- */
void *device_cuda_worker_new(void);
void device_cuda_worker_free(void *ctx);
int device_cuda_worker_handler(void *ctx, int type, const char *json, const void *blob,
                               size_t blob_len, char **reply_json, void **reply_blob,
                               size_t *reply_blob_len);

#endif
