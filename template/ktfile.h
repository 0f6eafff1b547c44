/* ktfile.h — brute-forced tuning spaces recorded by other tuners, loaded as a rooftune space
 * with one recorded time (or failure) per configuration, so strategies can be replayed offline
 * and `db import` can take foreign results.
 *
 * Three formats are read, plain or gzipped (zlib reads both transparently):
 *   - Kernel Tuner cache files: `tune_params_keys`, `tune_params` (the declared domains) and
 *     `cache`, whose records carry the parameter values and `time` in ms, or a failure string
 *     ("CompilationFailedConfig", "RuntimeFailedConfig", "InvalidConfig", ...).
 *   - KTT result files: `Results[]` with `Configuration` [{Name, Value}], `Status` and
 *     `ComputationResults[].Duration` in `Metadata.TimeUnit` (microseconds by default); the
 *     domains are the values seen.  A result of one kernel (one ComputationResult) also brings
 *     what the recording measured and compiled: `ProfilingData.Counters[]` {Name, Value}, the
 *     Nsight Compute metrics, mapped onto rooftune's hardware counters by one table
 *     (ktfile_metric_find: DRAM and L2 sectors become bytes, percentages fractions), and
 *     `CompilationData` (RegistersCount, LocalMemorySize: OpenCL's name for CUDA's shared
 *     memory, PrivateMemorySize: local memory per thread), `LocalSize` (the block) and
 *     `GlobalSize` (the grid: blocks when Metadata.GlobalSizeType is "CUDA", threads
 *     otherwise) as static facts.  A metric the table does not name is ignored; a counter
 *     value that is not a finite number >= 0 is refused with the result and metric named.
 *   - rooftune's own export (`rooftune db export`): the rows of one template and problem
 *     (ktfile_load_select), a failed row's text starting with its status name; a row a GPU run
 *     profiled brings its counters (rooftune's own), and every row its static facts, the
 *     problem's FLOPs and the precision it computed in.
 * The space's parameters are the file's, each domain sorted ascending (numeric when every
 * value is an integer, otherwise identifiers holding the values' text); its configurations are
 * every record of the file, the failed ones included: a strategy that picks one pays an
 * evaluation (on a real run it costs a compile) and learns the failure.  `valid` counts the
 * configurations with a time, which is what the published space sizes count.
 *
 * Kernel Tuner writes its cache as results arrive, so the cache of an interrupted run ends
 * without its closing braces (and perhaps with a comma).  Such a file is read as Kernel Tuner
 * reads it (the comma dropped, "}\n}" appended) and `unfinished` says so.
 *
 * What the loader refuses, with the file named (never cut, never silently fixed): more than
 * KTFILE_MAX_BYTES of (decompressed) text; an empty file; a gzip stream that ends early (even
 * inside its CRC trailer); invalid JSON and duplicate keys; a time that is not a number of
 * milliseconds in [KTFILE_MIN_MS, 1e20) (Kernel Tuner's failure marker 1e20 and above is a
 * failure, as is a failure name such as "CompilationFailedConfig"); parameter names and values
 * with control characters, a value longer than KTFILE_VALUE_MAX characters and a configuration
 * text longer than KTFILE_CONFIG_MAX.  Device and kernel names and failure reasons keep their
 * text with every control character replaced by '?', so a file cannot write to a terminal.
 */
#ifndef ROOFTUNE_KTFILE_H
#define ROOFTUNE_KTFILE_H

#include <stddef.h>

#include "core/result.h"
#include "template/space.h"
#include "core/status.h"

typedef enum {
  KTFILE_KERNEL_TUNER = 0, /* Kernel Tuner cache file */
  KTFILE_KTT,              /* KTT tuning results */
  KTFILE_ROOFTUNE          /* rooftune's `db export` (one template and problem of it) */
} ktfile_format;

#define KTFILE_MAX_BYTES  (256u << 20) /* decompressed text of one file */
#define KTFILE_MIN_MS     1e-6         /* the shortest plausible kernel time: one nanosecond */
#define KTFILE_VALUE_MAX  255          /* characters of one parameter value */
#define KTFILE_CONFIG_MAX 767          /* characters of a configuration's text */

typedef struct ktfile {
  char *path;            /* the file as given */
  int unfinished;        /* 1: a Kernel Tuner cache an interrupted run left without its end */
  ktfile_format format;  /* which tuner wrote it */
  char *device_name;     /* GPU the times were measured on ("" when the file does not say) */
  char *kernel_name;     /* "" when the file does not say */
  space *space;          /* parameters and every recorded configuration (owned) */
  double *time_ms;       /* per configuration: the recorded time in ms, or NAN when it failed */
  const char **failure;  /* per configuration: NULL when timed, else the reason (interned) */
  size_t configs;        /* configurations in the space (timed + failed) */
  size_t valid;          /* configurations with a time */
  size_t optimum_idx;    /* the fastest configuration */
  double optimum_ms;     /* its time */
  char **reasons;        /* the distinct failure reasons (owned; failure[] points into them) */
  int nreasons;          /* entries in reasons */
  hw_counters *counters; /* per configuration: its recorded hardware counters, measured = 1
                            where the recording profiled it (KTT); NULL when no configuration
                            carries counters */
  static_facts *facts;   /* per configuration: registers, shared memory, local memory per thread
                           (stack_bytes), block and grid as recorded (KTT), threads_per_block 0
                           where unknown; occupancy is left to the caller, who knows the
                           architecture.  NULL when the file records none */
  double flops;          /* the problem's FLOPs a rooftune export's rows carry; 0: unknown */
  char precision[8];     /* what its template computed in ("bf16", "tf32", "fp32"); "" unknown */
} ktfile;

/* One row of the table that maps a recording's metric names onto rooftune's counters. */
typedef struct ktfile_metric {
  const char *name;  /* Nsight Compute's metric name, as KTT writes it */
  const char *field; /* the hw_counters field it feeds ("dram_read_bytes"), NULL: not used */
  double scale;      /* value x scale is added to the field (32: sectors to bytes; 0.01:
                         percent to a fraction) */
  const char *why;   /* for a metric not used: what stands for it, or why it is left out */
} ktfile_metric;

/* The table row for metric NAME, NULL when the table does not list it. */
const ktfile_metric *ktfile_metric_find(const char *name);
/* The whole table: *count rows. */
const ktfile_metric *ktfile_metric_table(size_t *count);
/* Adds a recorded metric's value to the counters its table row names (measured set to 1);
 * returns 0 when the table lists no field for it (nothing changed). */
int ktfile_metric_apply(const ktfile_metric *m, double value, hw_counters *out);

/* Loads PATH; on error *out is NULL and err names the file and what is wrong with it. */
rt_status ktfile_load(const char *path, ktfile **out, rt_error *err);

/* Which rows of a rooftune export to load: one template (or family) and one problem; a NULL
 * field: the only one the file holds (two or more is an error asking for it).  The other
 * formats record one kernel and problem and ignore it. */
typedef struct ktfile_select {
  const char *template_name; /* "gemm_mma", or a family "gemm" when one template has rows */
  const char *shape;         /* "4096x4096x4096" as the export writes it */
  const char *dtype;         /* "bf16" */
} ktfile_select;

/* ktfile_load, choosing the rows of an export by sel (NULL: as ktfile_load).  An export with no
 * row for sel is RT_ERR_NOT_FOUND naming the file. */
rt_status ktfile_load_select(const char *path, const ktfile_select *sel, ktfile **out,
                             rt_error *err);
/* ktfile_load_select on text already in memory (len bytes, decompressed); name stands for the
 * file in errors and results.  What the fuzzer and the file loader share. */
rt_status ktfile_load_buffer(const char *name, const char *data, size_t len,
                             const ktfile_select *sel, ktfile **out, rt_error *err);
void ktfile_free(ktfile *kf);

/* The configuration written "NAME=V,NAME=V,..." (space_parse_config's format): its number, or
 * RT_ERR_NOT_FOUND naming the file when the file does not record it. */
rt_status ktfile_find(const ktfile *kf, const char *config, size_t *idx, rt_error *err);

/* The status a failed configuration maps to: RT_ERR_COMPILE for compilation failures,
 * RT_ERR_LAUNCH for runtime failures, RT_ERR_INVALID for any other reason; RT_OK when timed. */
rt_status ktfile_status(const ktfile *kf, size_t idx);

/* Fills r with configuration idx's recorded result: timing TIMING_REPLAYED, device_name
 * "replay:FILE", the time or the failure with its reason, and its counters and static facts
 * when the file records them.  Diagnosis fields stay empty. */
void ktfile_result(const ktfile *kf, size_t idx, candidate_result *r);

/* Configurations within eps of the optimum (time <= optimum * (1 + eps)). */
size_t ktfile_count_within(const ktfile *kf, double eps);

/* kf's timed configurations, fastest first, as configurations of another space s (the same
 * kernel's space on this GPU, or a file recorded on another): a prior for a search of s
 * (strategy_options.prior).  Parameters are matched by name and values by their text; a
 * parameter s has and kf lacks leaves every value open (the record stands for each
 * configuration of s that agrees on the others, in s's order), one kf has and s lacks is
 * ignored, and a record with a value outside s's domains, or no configuration of s, is
 * skipped.  *order (malloc'ed, each configuration once) may hold fewer than space_size(s)
 * entries; RT_ERR_INVALID naming kf's file when the two share no parameter. */
rt_status ktfile_rank_in(const ktfile *kf, const space *s, size_t **order, size_t *n,
                         rt_error *err);

#endif
