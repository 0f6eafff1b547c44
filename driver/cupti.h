/* cupti.h — hardware counters through CUPTI's range profiler, loaded at run time.
 *
 * Like the driver (cuda_driver.h), libcupti is never linked: cupti_load() dlopen()s it
 * ($ROOFTUNE_LIBCUPTI, else libcupti.so.13 / libcupti.so on the library path, else the
 * toolkit's lib64 and extras/CUPTI/lib64 folders), so rooftune runs without it and a machine
 * without CUPTI just has no counters.
 *
 * Two halves, as CUPTI has them:
 *   host   (no GPU needed): which metrics a chip offers, rooftune's metric list for it
 *          (cupti_metric_list: the DRAM, L2, occupancy, pipe, throughput and warp-stall metrics
 *          the diagnosis reads, each checked against the chip's base metrics), the
 *          configuration image that schedules them (cupti_config_image, with its number of
 *          passes), and the decoding of a counter data image into hw_counters
 *          (cupti_decode; cupti_counters_from_values is its arithmetic);
 *   target (a CUDA context): cupti_profile() runs a caller's launch once per pass inside one
 *          user range (user replay: the launch is repeated by rooftune, so no device memory
 *          is saved and restored, and a library call of several kernels is one range), then
 *          decodes.  The range profiler is enabled only for that call and disabled after it:
 *          the timed runs never run under the profiler.
 * Errors are RT_ERR_UNSUPPORTED with CUPTI's own words when counters cannot be read here (no
 * library, a chip CUPTI does not know, no permission to profile: CUPTI_ERROR_INSUFFICIENT_
 * PRIVILEGES), so the caller can fall back to the model with one note.
 */
#ifndef ROOFTUNE_CUPTI_H
#define ROOFTUNE_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "core/status.h"
#include "driver/cupti_api.h"

typedef struct cupti_table {
#define CUPTI_FIELD(name, args) rt_cupti_result(*name) args;
  RT_CUPTI_FUNCS(CUPTI_FIELD)
#undef CUPTI_FIELD
  void *handle;   /* dlopen handle; NULL until loaded */
  char path[512]; /* the library loaded */
} cupti_table;

/* The loaded table; valid after cupti_load() returned RT_OK. */
extern cupti_table cupti;

/* Loads libcupti once.  RT_ERR_UNSUPPORTED naming the places looked in when it is absent or
 * lacks an entry point. */
rt_status cupti_load(rt_error *err);

/* Sets err from a CUPTI result: "WHAT: CUPTI_ERROR_NAME"; returns RT_ERR_UNSUPPORTED (a
 * failure to read counters is never a failure of the candidate). */
rt_status cupti_check(rt_cupti_result r, const char *what, rt_error *err);

/* What a metric feeds. */
typedef enum {
  CUPTI_F_DURATION = 0, /* gpu__time_duration.sum (ns) */
  CUPTI_F_DRAM_READ,    /* dram__bytes_read.sum */
  CUPTI_F_DRAM_WRITE,   /* dram__bytes_write.sum */
  CUPTI_F_L2,           /* lts__t_bytes.sum */
  CUPTI_F_OCCUPANCY,    /* sm__warps_active.avg.pct_of_peak_sustained_active (%) */
  CUPTI_F_TENSOR,       /* sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active (%) */
  CUPTI_F_FMA,          /* sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active (%) */
  CUPTI_F_SM,           /* sm__throughput.avg.pct_of_peak_sustained_elapsed (%) */
  CUPTI_F_STALL,        /* smsp__warps_issue_stalled_<reason>.sum (warp cycles) */
} cupti_field;

#define CUPTI_MAX_METRICS 40

/* rooftune's metrics for one chip, in the order they are collected and evaluated. */
typedef struct cupti_metrics {
  char chip[32]; /* "GH100" */
  int count;
  char names[CUPTI_MAX_METRICS][96]; /* "dram__bytes_read.sum", ... */
  cupti_field field[CUPTI_MAX_METRICS];
  char reason[CUPTI_MAX_METRICS][32];  /* the stall reason of a CUPTI_F_STALL metric: "barrier" */
  const char *ptrs[CUPTI_MAX_METRICS]; /* names[i], as CUPTI takes them */
} cupti_metrics;

/* The chips this CUPTI's host API knows ("GA100, GH100, AD102, ..."), into buf. */
rt_status cupti_supported_chips(char *buf, size_t size, rt_error *err);

/* Builds the metric list for CHIP: every metric above whose base metric the chip offers (the
 * stall reasons differ: gmma exists from GH100 on), RT_ERR_UNSUPPORTED when the chip is unknown
 * or lacks one of the metrics the diagnosis cannot do without (duration, DRAM read and write,
 * L2 bytes, active warps).  availability: the GPU's counter availability image, or NULL. */
rt_status cupti_metric_list(const char *chip, const uint8_t *availability, cupti_metrics *out,
                            rt_error *err);

/* The configuration image that schedules m on its chip (malloc'ed into *image, *size bytes)
 * and the passes one collection takes (*passes; may be NULL). */
rt_status cupti_config_image(const cupti_metrics *m, const uint8_t *availability, uint8_t **image,
                             size_t *size, size_t *passes, rt_error *err);

/* hw_counters from evaluated metric values: values[r * m->count + i] is metric i of range r
 * (nranges >= 1).  Bytes and durations add over ranges; percentages are averaged weighted by
 * each range's duration; stall reasons add, and the top three are written with their share of
 * all stalled warp cycles.  Sets out->measured = 1. */
void cupti_counters_from_values(const cupti_metrics *m, const double *values, size_t nranges,
                                hw_counters *out);

/* Decodes a counter data image of m's metrics (from cupti_profile): every range evaluated
 * with CUPTI's host API, then cupti_counters_from_values.  RT_ERR_NOT_FOUND when the image
 * holds no range, RT_ERR_UNSUPPORTED when CUPTI refuses it. */
rt_status cupti_decode(const cupti_metrics *m, const uint8_t *image, size_t size, hw_counters *out,
                       rt_error *err);

/* One launch of what is profiled; returns RT_OK when it was launched and finished. */
typedef rt_status (*cupti_run_fn)(void *ctx, rt_error *err);

/* On the current CUDA context `cuctx` (a CUcontext) of GPU `ordinal`: enables the range
 * profiler, runs `run` once per pass inside one user range, decodes, disables the profiler.
 * `prepare` (may be NULL) runs before each pass outside the range: an L2 flush, so every pass
 * starts as cold as a timed run (and as Nsight Compute's --cache-control all).  *passes (may be
 * NULL) gets the passes it took.  When image/image_size are not NULL the counter data image is
 * handed over (malloc'ed) as well, for tests. */
rt_status cupti_profile(void *cuctx, int ordinal, cupti_run_fn prepare, cupti_run_fn run,
                        void *run_ctx, hw_counters *out, size_t *passes, uint8_t **image,
                        size_t *image_size, rt_error *err);

/* The metric list cupti_profile collects with on GPU `ordinal` (after a successful profile),
 * or NULL: what its counter data image decodes with. */
const cupti_metrics *cupti_profile_metrics(void);

#endif
