/* cupti.c — libcupti loaded at run time, rooftune's metric list, configuration images, the range
 * profiler around one launch, and decoding (see cupti.h). */
#include "driver/cupti.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cupti_table cupti;
static rt_status load_status = RT_OK;
static int load_tried;
static char load_text[1024];

/* ---- loading ---- */

static void *cupti_try(const char *path, char *tried, size_t size) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  size_t n = strlen(tried);
  if (!h && n < size) snprintf(tried + n, size - n, "%s%s", n ? ", " : "", path);
  return h;
}

rt_status cupti_load(rt_error *err) {
  if (load_tried) {
    if (load_status != RT_OK) rt_error_set(err, load_status, "%s", load_text);
    return load_status;
  }
  load_tried = 1;
#if defined(__SANITIZE_ADDRESS__)
  /* libcupti opens libnvperf_host with RTLD_DEEPBIND, which the sanitizer runtime aborts on */
  load_status = RT_ERR_UNSUPPORTED;
  snprintf(load_text, sizeof load_text,
           "this rooftune is built with AddressSanitizer, which cannot load libcupti "
           "(its libnvperf_host needs RTLD_DEEPBIND)");
  return rt_error_set(err, load_status, "%s", load_text);
#endif
  char tried[600] = "";
  void *h = NULL;
  const char *env = getenv("ROOFTUNE_LIBCUPTI");
  if (env && *env) {
    h = cupti_try(env, tried, sizeof tried);
    snprintf(cupti.path, sizeof cupti.path, "%s", env);
  } else {
    const char *home = getenv("CUDA_HOME");
    char cand[6][512];
    int nc = 0;
    snprintf(cand[nc++], sizeof cand[0], "libcupti.so.13");
    snprintf(cand[nc++], sizeof cand[0], "libcupti.so");
    if (home && *home) {
      snprintf(cand[nc++], sizeof cand[0], "%s/lib64/libcupti.so", home);
      snprintf(cand[nc++], sizeof cand[0], "%s/extras/CUPTI/lib64/libcupti.so", home);
    }
    snprintf(cand[nc++], sizeof cand[0], "/usr/local/cuda/lib64/libcupti.so");
    snprintf(cand[nc++], sizeof cand[0], "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so");
    for (int i = 0; i < nc && !h; i++) {
      h = cupti_try(cand[i], tried, sizeof tried);
      if (h) snprintf(cupti.path, sizeof cupti.path, "%s", cand[i]);
    }
  }
  if (!h) {
    load_status = RT_ERR_UNSUPPORTED;
    snprintf(load_text, sizeof load_text,
             "no CUPTI: libcupti could not be loaded (tried %s); set ROOFTUNE_LIBCUPTI to the "
             "toolkit's libcupti.so to read hardware counters",
             tried);
    return rt_error_set(err, load_status, "%s", load_text);
  }
#define CUPTI_DLSYM(name, args)                                                            \
  *(void **)(&cupti.name) = dlsym(h, #name);                                               \
  if (!cupti.name) {                                                                       \
    load_status = RT_ERR_UNSUPPORTED;                                                      \
    snprintf(load_text, sizeof load_text,                                                  \
             "the CUPTI in %s lacks %s: it is older than CUDA 13's, whose range profiler " \
             "rooftune uses",                                                              \
             cupti.path, #name);                                                           \
    dlclose(h);                                                                            \
    memset(&cupti, 0, sizeof cupti);                                                       \
    return rt_error_set(err, load_status, "%s", load_text);                                \
  }
  RT_CUPTI_FUNCS(CUPTI_DLSYM)
#undef CUPTI_DLSYM
  cupti.handle = h;
  return RT_OK;
}

rt_status cupti_check(rt_cupti_result r, const char *what, rt_error *err) {
  if (r == RT_CUPTI_SUCCESS) return RT_OK;
  const char *s = NULL;
  if (cupti.cuptiGetResultString) cupti.cuptiGetResultString(r, &s);
  const char *hint = r == RT_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
                         ? " (profiling is restricted to administrators here: run as root or load "
                           "the driver with NVreg_RestrictProfilingToAdminUsers=0)"
                         : "";
  return rt_error_set(err, RT_ERR_UNSUPPORTED, "%s: %s%s", what, s ? s : "CUPTI error", hint);
}

/* ---- the host object ---- */

static rt_status host_open(const char *chip, const uint8_t *availability,
                           rt_cupti_host_object **out, rt_error *err) {
  *out = NULL;
  rt_status st = cupti_load(err);
  if (st) return st;
  rt_cupti_host_init_params p;
  memset(&p, 0, sizeof p);
  p.structSize = RT_CUPTI_HOST_INIT_SIZE;
  p.profilerType = RT_CUPTI_PROFILER_RANGE;
  p.pChipName = chip;
  p.pCounterAvailabilityImage = availability;
  char what[96];
  snprintf(what, sizeof what, "cuptiProfilerHostInitialize for chip %.40s", chip);
  if ((st = cupti_check(cupti.cuptiProfilerHostInitialize(&p), what, err))) return st;
  *out = p.pHostObject;
  return RT_OK;
}

static void host_close(rt_cupti_host_object *h) {
  if (!h) return;
  rt_cupti_host_deinit_params p;
  memset(&p, 0, sizeof p);
  p.structSize = RT_CUPTI_HOST_DEINIT_SIZE;
  p.pHostObject = h;
  cupti.cuptiProfilerHostDeinitialize(&p);
}

rt_status cupti_supported_chips(char *buf, size_t size, rt_error *err) {
  if (size) buf[0] = 0;
  rt_status st = cupti_load(err);
  if (st) return st;
  rt_cupti_chips_params p;
  memset(&p, 0, sizeof p);
  p.structSize = RT_CUPTI_CHIPS_SIZE;
  if ((st = cupti_check(cupti.cuptiProfilerHostGetSupportedChips(&p),
                        "cuptiProfilerHostGetSupportedChips", err)))
    return st;
  size_t n = 0;
  for (size_t i = 0; i < p.numChips && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", p.ppChipNames[i]);
  return RT_OK;
}

/* ---- the metric list ---- */

typedef struct wanted_metric {
  const char *name;  /* what is collected */
  cupti_field field; /* what it feeds */
  int required;      /* 1: the diagnosis cannot do without it */
} wanted_metric;

static const wanted_metric wanted[] = {
    {"gpu__time_duration.sum", CUPTI_F_DURATION, 1},
    {"dram__bytes_read.sum", CUPTI_F_DRAM_READ, 1},
    {"dram__bytes_write.sum", CUPTI_F_DRAM_WRITE, 1},
    {"lts__t_bytes.sum", CUPTI_F_L2, 1},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", CUPTI_F_OCCUPANCY, 1},
    {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", CUPTI_F_TENSOR, 0},
    {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", CUPTI_F_FMA, 0},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", CUPTI_F_SM, 0},
};

/* The warp-stall reasons (smsp__warps_issue_stalled_<reason>), as Nsight Compute's warp state
 * statistics name them; "selected" (the warp issued) is not a stall and is left out. */
static const char *const stall_reasons[] = {
    "long_scoreboard",    "barrier",        "wait",         "short_scoreboard", "mio_throttle",
    "math_pipe_throttle", "lg_throttle",    "not_selected", "membar",           "gmma",
    "branch_resolving",   "dispatch_stall", "drain",        "imc_miss",         "no_instruction",
    "sleeping",           "tex_throttle",   "misc"};

/* The base name of a metric: the text before its first '.'. */
static void base_of(const char *metric, char *out, size_t size) {
  size_t n = strcspn(metric, ".");
  if (n >= size) n = size - 1;
  memcpy(out, metric, n);
  out[n] = 0;
}

typedef struct base_list {
  const char **names[3];
  size_t n[3];
} base_list;

static int base_has(const base_list *b, const char *base) {
  for (int t = 0; t < 3; t++)
    for (size_t i = 0; i < b->n[t]; i++)
      if (!strcmp(b->names[t][i], base)) return 1;
  return 0;
}

static void metric_add(cupti_metrics *m, const char *name, cupti_field f, const char *reason) {
  if (m->count >= CUPTI_MAX_METRICS) return;
  snprintf(m->names[m->count], sizeof m->names[0], "%s", name);
  m->field[m->count] = f;
  snprintf(m->reason[m->count], sizeof m->reason[0], "%s", reason ? reason : "");
  m->ptrs[m->count] = m->names[m->count];
  m->count++;
}

rt_status cupti_metric_list(const char *chip, const uint8_t *availability, cupti_metrics *out,
                            rt_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->chip, sizeof out->chip, "%s", chip ? chip : "");
  rt_cupti_host_object *h = NULL;
  rt_status st = host_open(out->chip, availability, &h, err);
  if (st) return st;
  base_list b;
  memset(&b, 0, sizeof b);
  for (int t = 0; t < 3 && !st; t++) {
    rt_cupti_base_metrics_params p;
    memset(&p, 0, sizeof p);
    p.structSize = RT_CUPTI_BASE_METRICS_SIZE;
    p.pHostObject = h;
    p.metricType = t;
    st = cupti_check(cupti.cuptiProfilerHostGetBaseMetrics(&p), "cuptiProfilerHostGetBaseMetrics",
                     err);
    b.names[t] = p.ppMetricNames;
    b.n[t] = p.numMetrics;
  }
  for (size_t i = 0; !st && i < sizeof wanted / sizeof wanted[0]; i++) {
    char base[96];
    base_of(wanted[i].name, base, sizeof base);
    if (base_has(&b, base))
      metric_add(out, wanted[i].name, wanted[i].field, NULL);
    else if (wanted[i].required)
      st = rt_error_set(err, RT_ERR_UNSUPPORTED, "chip %s offers no %s, which the diagnosis needs",
                        out->chip, base);
  }
  for (size_t i = 0; !st && i < sizeof stall_reasons / sizeof stall_reasons[0]; i++) {
    char name[96];
    snprintf(name, sizeof name, "smsp__warps_issue_stalled_%s", stall_reasons[i]);
    if (!base_has(&b, name)) continue;
    snprintf(name + strlen(name), sizeof name - strlen(name), ".sum");
    metric_add(out, name, CUPTI_F_STALL, stall_reasons[i]);
  }
  host_close(h);
  return st;
}

rt_status cupti_config_image(const cupti_metrics *m, const uint8_t *availability, uint8_t **image,
                             size_t *size, size_t *passes, rt_error *err) {
  *image = NULL;
  *size = 0;
  if (passes) *passes = 0;
  rt_cupti_host_object *h = NULL;
  rt_status st = host_open(m->chip, availability, &h, err);
  if (st) return st;
  rt_cupti_add_metrics_params a;
  memset(&a, 0, sizeof a);
  a.structSize = RT_CUPTI_ADD_METRICS_SIZE;
  a.pHostObject = h;
  a.ppMetricNames = (const char **)m->ptrs;
  a.numMetrics = (size_t)m->count;
  st = cupti_check(cupti.cuptiProfilerHostConfigAddMetrics(&a), "cuptiProfilerHostConfigAddMetrics",
                   err);
  rt_cupti_config_size_params cs;
  memset(&cs, 0, sizeof cs);
  cs.structSize = RT_CUPTI_CONFIG_SIZE_SIZE;
  cs.pHostObject = h;
  if (!st)
    st = cupti_check(cupti.cuptiProfilerHostGetConfigImageSize(&cs),
                     "cuptiProfilerHostGetConfigImageSize", err);
  if (!st && cs.configImageSize == 0)
    st = rt_error_set(err, RT_ERR_UNSUPPORTED, "CUPTI made an empty configuration image for %s",
                      m->chip);
  uint8_t *img = st ? NULL : malloc(cs.configImageSize);
  if (!st && !img) st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for a configuration image");
  if (!st) {
    rt_cupti_config_params c;
    memset(&c, 0, sizeof c);
    c.structSize = RT_CUPTI_CONFIG_SIZE;
    c.pHostObject = h;
    c.configImageSize = cs.configImageSize;
    c.pConfigImage = img;
    st = cupti_check(cupti.cuptiProfilerHostGetConfigImage(&c), "cuptiProfilerHostGetConfigImage",
                     err);
  }
  if (!st && passes) {
    rt_cupti_passes_params p;
    memset(&p, 0, sizeof p);
    p.structSize = RT_CUPTI_PASSES_SIZE;
    p.configImageSize = cs.configImageSize;
    p.pConfigImage = img;
    st = cupti_check(cupti.cuptiProfilerHostGetNumOfPasses(&p), "cuptiProfilerHostGetNumOfPasses",
                     err);
    *passes = p.numOfPasses;
  }
  host_close(h);
  if (st) {
    free(img);
    return st;
  }
  *image = img;
  *size = cs.configImageSize;
  return RT_OK;
}

/* ---- decoding ---- */

typedef struct stall_share {
  const char *reason;
  double cycles;
} stall_share;

static int stall_cmp(const void *a, const void *b) {
  const stall_share *x = a, *y = b;
  return (x->cycles < y->cycles) - (x->cycles > y->cycles);
}

void cupti_counters_from_values(const cupti_metrics *m, const double *values, size_t nranges,
                                hw_counters *out) {
  memset(out, 0, sizeof *out);
  out->measured = 1;
  int dur = -1;
  for (int i = 0; i < m->count; i++)
    if (m->field[i] == CUPTI_F_DURATION) dur = i;
  double total_ns = 0;
  for (size_t r = 0; r < nranges && dur >= 0; r++)
    total_ns += values[r * (size_t)m->count + (size_t)dur];
  stall_share st[CUPTI_MAX_METRICS];
  int ns = 0;
  double stalled = 0;
  for (int i = 0; i < m->count; i++) {
    double sum = 0, weighted = 0;
    for (size_t r = 0; r < nranges; r++) {
      double v = values[r * (size_t)m->count + (size_t)i];
      if (!isfinite(v)) v = 0;
      double w = total_ns > 0 && dur >= 0 ? values[r * (size_t)m->count + (size_t)dur] / total_ns
                                          : 1.0 / (double)nranges;
      sum += v;
      weighted += w * v;
    }
    switch (m->field[i]) {
      case CUPTI_F_DURATION: out->duration_ms = sum * 1e-6; break;
      case CUPTI_F_DRAM_READ: out->dram_read_bytes = sum; break;
      case CUPTI_F_DRAM_WRITE: out->dram_write_bytes = sum; break;
      case CUPTI_F_L2: out->l2_bytes = sum; break;
      case CUPTI_F_OCCUPANCY: out->occupancy = weighted / 100.0; break;
      case CUPTI_F_TENSOR: out->tensor_pipe = weighted / 100.0; break;
      case CUPTI_F_FMA: out->fma_pipe = weighted / 100.0; break;
      case CUPTI_F_SM: out->sm_throughput = weighted / 100.0; break;
      case CUPTI_F_STALL:
        st[ns].reason = m->reason[i];
        st[ns++].cycles = sum;
        stalled += sum;
        break;
    }
  }
  qsort(st, (size_t)ns, sizeof st[0], stall_cmp);
  size_t n = 0;
  for (int i = 0; i < ns && i < 3 && stalled > 0 && st[i].cycles > 0; i++)
    n += (size_t)snprintf(out->stalls + n, sizeof out->stalls - n, "%s%s:%.2f", i ? "," : "",
                          st[i].reason, st[i].cycles / stalled);
}

rt_status cupti_decode(const cupti_metrics *m, const uint8_t *image, size_t size, hw_counters *out,
                       rt_error *err) {
  memset(out, 0, sizeof *out);
  rt_status st = cupti_load(err);
  if (st) return st;
  if (!image || !size) return rt_error_set(err, RT_ERR_INVALID, "an empty counter data image");
  rt_cupti_data_info_params info;
  memset(&info, 0, sizeof info);
  info.structSize = RT_CUPTI_DATA_INFO_SIZE;
  info.pCounterDataImage = image;
  info.counterDataImageSize = size;
  if ((st = cupti_check(cupti.cuptiRangeProfilerGetCounterDataInfo(&info),
                        "cuptiRangeProfilerGetCounterDataInfo", err)))
    return st;
  if (info.numTotalRanges == 0)
    return rt_error_set(err, RT_ERR_NOT_FOUND, "the counter data image holds no profiled range");
  rt_cupti_host_object *h = NULL;
  if ((st = host_open(m->chip, NULL, &h, err))) return st;
  double *values = calloc(info.numTotalRanges * (size_t)m->count, sizeof *values);
  if (!values) st = rt_error_set(err, RT_ERR_NOMEM, "out of memory decoding counters");
  for (size_t r = 0; !st && r < info.numTotalRanges; r++) {
    rt_cupti_evaluate_params e;
    memset(&e, 0, sizeof e);
    e.structSize = RT_CUPTI_EVALUATE_SIZE;
    e.pHostObject = h;
    e.pCounterDataImage = image;
    e.counterDataImageSize = size;
    e.rangeIndex = r;
    e.ppMetricNames = (const char **)m->ptrs;
    e.numMetrics = (size_t)m->count;
    e.pMetricValues = values + r * (size_t)m->count;
    st = cupti_check(cupti.cuptiProfilerHostEvaluateToGpuValues(&e),
                     "cuptiProfilerHostEvaluateToGpuValues", err);
  }
  host_close(h);
  if (!st) cupti_counters_from_values(m, values, info.numTotalRanges, out);
  free(values);
  return st;
}

/* ---- the range profiler around one launch ---- */

/* What stays the same between profiles in one process: the chip, its metrics and image. */
static struct {
  int ordinal;
  int ready;
  cupti_metrics m;
  uint8_t *config;
  size_t config_size;
  size_t passes;
} prof;

static rt_status prof_prepare(void *cuctx, int ordinal, rt_error *err) {
  if (prof.ready && prof.ordinal == ordinal) return RT_OK; /* ready: ordinal is set */
  rt_status st = cupti_load(err);
  if (st) return st;
  static int initialized;
  if (!initialized) {
    rt_cupti_init_params ip;
    memset(&ip, 0, sizeof ip);
    ip.structSize = RT_CUPTI_INIT_SIZE;
    if ((st = cupti_check(cupti.cuptiProfilerInitialize(&ip), "cuptiProfilerInitialize", err)))
      return st;
    initialized = 1;
  }
  rt_cupti_chip_params cp;
  memset(&cp, 0, sizeof cp);
  cp.structSize = RT_CUPTI_CHIP_SIZE;
  cp.deviceIndex = (size_t)ordinal;
  if ((st = cupti_check(cupti.cuptiDeviceGetChipName(&cp), "cuptiDeviceGetChipName", err)))
    return st;
  char chip[32];
  snprintf(chip, sizeof chip, "%s", cp.pChipName ? cp.pChipName : "");
  /* the GPU's counter availability image: which counters this device (and its driver) offers */
  rt_cupti_availability_params ap;
  memset(&ap, 0, sizeof ap);
  ap.structSize = RT_CUPTI_AVAILABILITY_SIZE;
  ap.ctx = cuctx;
  if ((st = cupti_check(cupti.cuptiProfilerGetCounterAvailability(&ap),
                        "cuptiProfilerGetCounterAvailability", err)))
    return st;
  uint8_t *avail = malloc(ap.counterAvailabilityImageSize ? ap.counterAvailabilityImageSize : 1);
  if (!avail) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  ap.pCounterAvailabilityImage = avail;
  st = cupti_check(cupti.cuptiProfilerGetCounterAvailability(&ap),
                   "cuptiProfilerGetCounterAvailability", err);
  free(prof.config);
  prof.config = NULL;
  prof.ready = 0;
  if (!st) st = cupti_metric_list(chip, avail, &prof.m, err);
  if (!st)
    st = cupti_config_image(&prof.m, avail, &prof.config, &prof.config_size, &prof.passes, err);
  free(avail);
  if (st) return st;
  prof.ordinal = ordinal;
  prof.ready = 1;
  return RT_OK;
}

#define CUPTI_MAX_PASSES 64

const cupti_metrics *cupti_profile_metrics(void) { return prof.ready ? &prof.m : NULL; }

rt_status cupti_profile(void *cuctx, int ordinal, cupti_run_fn prepare, cupti_run_fn run,
                        void *run_ctx, hw_counters *out, size_t *passes, uint8_t **image,
                        size_t *image_size, rt_error *err) {
  memset(out, 0, sizeof *out);
  if (passes) *passes = 0;
  if (image) *image = NULL;
  if (image_size) *image_size = 0;
  rt_status st = prof_prepare(cuctx, ordinal, err);
  if (st) return st;
  rt_cupti_enable_params en;
  memset(&en, 0, sizeof en);
  en.structSize = RT_CUPTI_ENABLE_SIZE;
  en.ctx = cuctx;
  if ((st = cupti_check(cupti.cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable", err)))
    return st;
  rt_cupti_range_object *obj = en.pRangeProfilerObject;
  rt_cupti_data_size_params ds;
  memset(&ds, 0, sizeof ds);
  ds.structSize = RT_CUPTI_DATA_SIZE_SIZE;
  ds.pRangeProfilerObject = obj;
  ds.pMetricNames = (const char **)prof.m.ptrs;
  ds.numMetrics = (size_t)prof.m.count;
  ds.maxNumOfRanges = 1;
  ds.maxNumRangeTreeNodes = 1;
  uint8_t *data = NULL;
  st = cupti_check(cupti.cuptiRangeProfilerGetCounterDataSize(&ds),
                   "cuptiRangeProfilerGetCounterDataSize", err);
  if (!st && !(data = calloc(1, ds.counterDataSize ? ds.counterDataSize : 1)))
    st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for a counter data image");
  if (!st) {
    rt_cupti_data_init_params di;
    memset(&di, 0, sizeof di);
    di.structSize = RT_CUPTI_DATA_INIT_SIZE;
    di.pRangeProfilerObject = obj;
    di.counterDataSize = ds.counterDataSize;
    di.pCounterData = data;
    st = cupti_check(cupti.cuptiRangeProfilerCounterDataImageInitialize(&di),
                     "cuptiRangeProfilerCounterDataImageInitialize", err);
  }
  if (!st) {
    rt_cupti_set_config_params sc;
    memset(&sc, 0, sizeof sc);
    sc.structSize = RT_CUPTI_SET_CONFIG_SIZE;
    sc.pRangeProfilerObject = obj;
    sc.configSize = prof.config_size;
    sc.pConfig = prof.config;
    sc.counterDataImageSize = ds.counterDataSize;
    sc.pCounterDataImage = data;
    sc.range = RT_CUPTI_USER_RANGE;
    sc.replayMode = RT_CUPTI_USER_REPLAY;
    sc.maxRangesPerPass = 1;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    st = cupti_check(cupti.cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig", err);
  }
  size_t pass = 0;
  int done = 0;
  while (!st && !done) {
    if (pass >= CUPTI_MAX_PASSES) {
      st = rt_error_set(err, RT_ERR_UNSUPPORTED, "CUPTI still wants passes after %d",
                        CUPTI_MAX_PASSES);
      break;
    }
    rt_cupti_object_params o;
    memset(&o, 0, sizeof o);
    o.structSize = RT_CUPTI_OBJECT_SIZE;
    o.pRangeProfilerObject = obj;
    rt_cupti_push_params pu;
    memset(&pu, 0, sizeof pu);
    pu.structSize = RT_CUPTI_PUSH_SIZE;
    pu.pRangeProfilerObject = obj;
    pu.pRangeName = "candidate";
    if ((st = cupti_check(cupti.cuptiRangeProfilerStart(&o), "cuptiRangeProfilerStart", err)))
      break;
    if (prepare) st = prepare(run_ctx, err); /* outside the range: not counted */
    if (!st)
      st = cupti_check(cupti.cuptiRangeProfilerPushRange(&pu), "cuptiRangeProfilerPushRange", err);
    rt_status rs = st ? st : run(run_ctx, err); /* a failed launch is the caller's error */
    rt_cupti_object_params po = o;
    if (!st)
      st = cupti_check(cupti.cuptiRangeProfilerPopRange(&po), "cuptiRangeProfilerPopRange", err);
    rt_cupti_stop_params sp;
    memset(&sp, 0, sizeof sp);
    sp.structSize = RT_CUPTI_STOP_SIZE;
    sp.pRangeProfilerObject = obj;
    rt_status ss = cupti_check(cupti.cuptiRangeProfilerStop(&sp), "cuptiRangeProfilerStop",
                               rs || st ? NULL : err);
    if (rs) st = rs;
    if (!st) st = ss;
    done = sp.isAllPassSubmitted;
    pass++;
  }
  if (!st) {
    rt_cupti_decode_params dp;
    memset(&dp, 0, sizeof dp);
    dp.structSize = RT_CUPTI_DECODE_SIZE;
    dp.pRangeProfilerObject = obj;
    st = cupti_check(cupti.cuptiRangeProfilerDecodeData(&dp), "cuptiRangeProfilerDecodeData", err);
    if (!st && dp.numOfRangeDropped)
      st = rt_error_set(err, RT_ERR_UNSUPPORTED, "CUPTI dropped %zu profiled ranges",
                        dp.numOfRangeDropped);
  }
  rt_cupti_object_params dis;
  memset(&dis, 0, sizeof dis);
  dis.structSize = RT_CUPTI_OBJECT_SIZE;
  dis.pRangeProfilerObject = obj;
  cupti.cuptiRangeProfilerDisable(&dis);
  if (!st) st = cupti_decode(&prof.m, data, ds.counterDataSize, out, err);
  if (passes) *passes = pass;
  if (!st && image && image_size) {
    *image = data;
    *image_size = ds.counterDataSize;
    data = NULL;
  }
  free(data);
  return st;
}
