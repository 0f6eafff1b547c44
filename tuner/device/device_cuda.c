/* device_cuda.c — the cuda device: the parent side turns candidates into worker requests; the
 * worker side (in `rooftune __worker`) owns the CUDA context, the family's inputs and
 * reference, and measures.
 *
 * Per candidate, in the worker: load the cubin; poison the output; run once; verify against
 * the reference (a wrong candidate is RT_ERR_WRONG_RESULT and never timed); warm up; then
 * repeat { flush L2 by writing a buffer of twice its size; event; launch; event } until at
 * least min_reps runs and the spread (p90-p10)/median is under the target, or the time cap or
 * max_reps is reached; report the median.  A CUDA error after a launch leaves the context
 * unusable, so the worker answers and then exits ("fatal"), and the next request gets a fresh
 * one. */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/cuda_driver.h"
#include "driver/cupti.h"
#include "tuner/device/device_impl.h"
#include "kernels/family.h"
#include "tuner/device/worker.h"
#include "core/util.h"

#define CUDA_SETUP_TIMEOUT_S    300.0 /* inputs and the reference of a large problem */
#define CUDA_CEILINGS_TIMEOUT_S 300.0
#define CEIL_COPY_BYTES         (512ull << 20) /* each of the two copy buffers */
#define CEIL_GEMM_SHAPE         "8192x8192x8192"

/* ---------------- parent side ---------------- */

/* "" or ":N" with N a GPU index. */
static rt_status cuda_check_arg(const char *arg, rt_error *err) {
  if (!*arg) return RT_OK;
  char *end = NULL;
  long n = strtol(arg + 1, &end, 10);
  if (*arg != ':' || end == arg + 1 || *end || n < 0 || n > INT_MAX ||
      !(arg[1] >= '0' && arg[1] <= '9'))
    return rt_error_set(err, RT_ERR_INVALID, "bad GPU index in 'cuda%s'; use cuda or cuda:N", arg);
  return RT_OK;
}

static rt_status cuda_open(device *d, const char *arg, rt_error *err) {
  if (*arg) d->ordinal = (int)strtol(arg + 1, NULL, 10); /* ":N", checked */
  cuda_gpu_info info;
  rt_status st = cuda_gpu_query(d->ordinal, &info, err);
  if (st) return st;
  snprintf(d->label, sizeof d->label, "%s", info.name);
  snprintf(d->arch, sizeof d->arch, "sm_%d%d", info.cc_major, info.cc_minor);
  d->sm_count = info.sm_count;
  d->l2_bytes = info.l2_bytes;
  d->spec = gpu_spec_match(info.name, info.cc_major * 10 + info.cc_minor);
  if (d->spec) {
    roofline_from_spec(d->spec, &d->ceil);
    d->ceil.sm_count = info.sm_count;
    d->have_ceil = 1;
  }
  if (!d->opt.worker_argv) return RT_OK; /* cuda_call says so when it is asked to measure */
  const char *exe = d->opt.worker_exe ? d->opt.worker_exe : "/proc/self/exe";
  return worker_new(exe, d->opt.worker_argv, &d->worker, err);
}

static void cuda_close(device *d) {
  worker_free(d->worker);
  d->worker = NULL;
}

static int cuda_restarts(const device *d) {
  return d->worker && worker_starts(d->worker) > 0 ? worker_starts(d->worker) - 1 : 0;
}

/* Sends a request; parses the reply; a reply that says "fatal" retires the worker. */
static rt_status cuda_call(device *d, int type, json_t *req, const void *blob, size_t blob_len,
                           double timeout_s, json_t **reply, rt_error *err) {
  *reply = NULL;
  if (!d->worker)
    return rt_error_set(
        err, RT_ERR_USAGE,
        "the cuda device was opened without its worker's command "
        "(device_options.worker_argv), so it cannot measure; the program that opens "
        "it names the command its worker runs");
  char *text = json_dumps(req, JSON_COMPACT);
  if (!text) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  char *rtext = NULL;
  rt_status st = worker_request(d->worker, type, text, blob, blob_len, timeout_s, &rtext, err);
  free(text);
  if (st) return st;
  json_error_t jerr;
  *reply = json_loads(rtext, 0, &jerr);
  free(rtext);
  if (!*reply) return rt_error_set(err, RT_ERR_INTERNAL, "worker reply is not JSON: %s", jerr.text);
  if (json_is_true(json_object_get(*reply, "fatal"))) worker_retire(d->worker);
  return RT_OK;
}

static rt_status reply_status(json_t *reply, rt_error *err) {
  const char *s = json_string_value(json_object_get(reply, "status"));
  int code = s ? rt_status_from_name(s) : -1;
  if (code == RT_OK) return RT_OK;
  const char *e = json_string_value(json_object_get(reply, "error"));
  return rt_error_set(err, code > 0 ? (rt_status)code : RT_ERR_INTERNAL, "%s",
                      e ? e : "worker failed without a message");
}

static rt_status cuda_begin(device *d, const family_ops *fam, const struct problem *p,
                            const family_reference *ref, rt_error *err) {
  json_t *req = json_object();
  json_object_set_new(req, "ordinal", json_integer(d->ordinal));
  json_object_set_new(req, "family", json_string(fam->name));
  if (fam->declared_in) json_object_set_new(req, "family_file", json_string(fam->declared_in));
  if (ref) {
    json_t *r = json_object(), *vals = json_object();
    json_object_set_new(r, "entry", json_string(ref->entry ? ref->entry : ""));
    for (int i = 0; i < ref->vars.count; i++)
      json_object_set_new(vals, ref->vars.names[i], json_integer(ref->vars.values[i]));
    json_object_set_new(r, "values", vals);
    json_object_set_new(r, "grid", json_pack("[iii]", ref->grid[0], ref->grid[1], ref->grid[2]));
    json_object_set_new(r, "block",
                        json_pack("[iii]", ref->block[0], ref->block[1], ref->block[2]));
    json_object_set_new(r, "smem", json_integer(ref->smem));
    json_object_set_new(req, "reference", r);
  }
  json_object_set_new(req, "shape", json_string(p->shape));
  json_object_set_new(req, "args", json_string(p->args));
  json_object_set_new(req, "dtype", json_string(p->dtype));
  json_object_set_new(req, "layout", json_string(p->layout));
  json_object_set_new(req, "seed", json_integer((json_int_t)d->opt.seed));
  json_object_set_new(req, "l2_bytes", json_integer(d->l2_bytes));
  json_t *reply = NULL;
  rt_status st = cuda_call(d, WORKER_SETUP, req, ref ? ref->cubin : NULL, ref ? ref->cubin_size : 0,
                           CUDA_SETUP_TIMEOUT_S, &reply, err);
  json_decref(req);
  if (!st) st = reply_status(reply, err);
  json_decref(reply);
  return st;
}

/* The launch of candidate c as a worker request (entry, library, values, geometry). */
static json_t *candidate_request(device *d, const device_candidate *c) {
  const candidate_plan *pl = c->plan;
  json_t *req = json_object();
  json_object_set_new(req, "entry", json_string(c->entry ? c->entry : ""));
  json_object_set_new(req, "library", json_integer(c->library_index));
  if (c->library_index >= 0) {
    json_object_set_new(req, "library_max", json_integer(d->library_max));
    json_object_set_new(req, "library_id", json_string(pl->config));
  }
  json_t *vals = json_object();
  for (int i = 0; i < pl->vars.count; i++)
    json_object_set_new(vals, pl->vars.names[i], json_integer(pl->vars.values[i]));
  json_object_set_new(req, "values", vals);
  json_object_set_new(req, "grid", json_pack("[iii]", pl->grid[0], pl->grid[1], pl->grid[2]));
  json_object_set_new(req, "block", json_pack("[iii]", pl->block[0], pl->block[1], pl->block[2]));
  json_object_set_new(req, "smem", json_integer(pl->smem));
  return req;
}

static rt_status cuda_evaluate(device *d, const device_candidate *c, candidate_result *r,
                               rt_error *err) {
  json_t *req = candidate_request(d, c);
  json_object_set_new(req, "time_cap_s", json_real(d->opt.time_cap_s));
  json_object_set_new(req, "target_spread", json_real(d->opt.target_spread));
  json_object_set_new(req, "min_reps", json_integer(d->opt.min_reps));
  json_object_set_new(req, "max_reps", json_integer(d->opt.max_reps));
  if (c->stop_above_ms > 0) json_object_set_new(req, "stop_above_ms", json_real(c->stop_above_ms));
  if (c->tolerance > 0) json_object_set_new(req, "tolerance", json_real(c->tolerance));
  json_t *reply = NULL;
  rt_error cerr = {0};
  rt_status st =
      cuda_call(d, WORKER_EVAL, req, c->cubin, c->cubin_size, d->opt.timeout_s, &reply, &cerr);
  json_decref(req);
  if (st == RT_ERR_CRASH || st == RT_ERR_TIMEOUT) { /* costs this candidate, not the run */
    r->status = st;
    snprintf(r->detail, sizeof r->detail, "%.255s", cerr.text);
    return RT_OK;
  }
  if (st) {
    if (err) *err = cerr;
    return st;
  }
  const char *s = json_string_value(json_object_get(reply, "status"));
  int code = s ? rt_status_from_name(s) : RT_ERR_INTERNAL;
  r->status = code < 0 ? RT_ERR_INTERNAL : (rt_status)code;
  const char *e = json_string_value(json_object_get(reply, "error"));
  snprintf(r->detail, sizeof r->detail, "%s", e ? e : "");
  r->time_ms = json_number_value(json_object_get(reply, "time_ms"));
  r->spread = json_number_value(json_object_get(reply, "spread"));
  r->repetitions = (int)json_integer_value(json_object_get(reply, "reps"));
  json_t *ve = json_object_get(reply, "verify_error");
  r->verify_error = ve ? json_number_value(ve) : -1;
  r->verified = r->status == RT_OK && json_is_true(json_object_get(reply, "verified")) &&
                r->verify_error >= 0;
  if (r->verified) snprintf(r->checked_on, sizeof r->checked_on, "gpu");
  if (json_is_true(json_object_get(reply, "stopped_early"))) {
    r->saved_s = json_number_value(json_object_get(reply, "saved_s"));
    r->shortcut = RESULT_STOPPED_EARLY;
    snprintf(r->detail, sizeof r->detail,
             "stopped after %d timed runs: every one over %.0fx the best so far (%.4g ms)",
             r->repetitions, DEVICE_SLOW_FACTOR, c->stop_above_ms / DEVICE_SLOW_FACTOR);
  }
  json_decref(reply);
  return RT_OK;
}

static rt_status cuda_profile(device *d, const device_candidate *c, hw_counters *out,
                              rt_error *err) {
  json_t *req = candidate_request(d, c);
  json_object_set_new(req, "ordinal", json_integer(d->ordinal));
  json_t *reply = NULL;
  rt_error cerr = {0};
  /* up to ~40 passes of the kernel plus CUPTI's setup */
  rt_status st = cuda_call(d, WORKER_PROFILE, req, c->cubin, c->cubin_size, d->opt.timeout_s + 60,
                           &reply, &cerr);
  json_decref(req);
  if (st) { /* a crash or hang under the profiler: no counters, the run goes on */
    rt_error_set(err, RT_ERR_UNSUPPORTED, "profiling failed: %.200s", cerr.text);
    return RT_ERR_UNSUPPORTED;
  }
  const char *s = json_string_value(json_object_get(reply, "status"));
  if (!s || strcmp(s, "OK")) {
    const char *e = json_string_value(json_object_get(reply, "error"));
    int code = s ? rt_status_from_name(s) : RT_ERR_INTERNAL;
    rt_error_set(err, code > 0 ? (rt_status)code : RT_ERR_INTERNAL, "%s",
                 e ? e : "profiling failed");
    json_decref(reply);
    return code > 0 ? (rt_status)code : RT_ERR_INTERNAL;
  }
  out->measured = 1;
  out->dram_read_bytes = json_number_value(json_object_get(reply, "dram_read_bytes"));
  out->dram_write_bytes = json_number_value(json_object_get(reply, "dram_write_bytes"));
  out->l2_bytes = json_number_value(json_object_get(reply, "l2_bytes"));
  out->occupancy = json_number_value(json_object_get(reply, "occupancy"));
  out->tensor_pipe = json_number_value(json_object_get(reply, "tensor_pipe"));
  out->fma_pipe = json_number_value(json_object_get(reply, "fma_pipe"));
  out->sm_throughput = json_number_value(json_object_get(reply, "sm_throughput"));
  out->duration_ms = json_number_value(json_object_get(reply, "duration_ms"));
  const char *stalls = json_string_value(json_object_get(reply, "stalls"));
  snprintf(out->stalls, sizeof out->stalls, "%s", stalls ? stalls : "");
  json_decref(reply);
  return RT_OK;
}

static rt_status cuda_library_list(device *d, int max, char ids[][256], int *count, rt_error *err) {
  json_t *req = json_pack("{si}", "max", max);
  json_t *reply = NULL;
  d->library_max = max;
  rt_status st = cuda_call(d, WORKER_LIBRARY, req, NULL, 0, d->opt.timeout_s, &reply, err);
  json_decref(req);
  if (!st) st = reply_status(reply, err);
  if (!st) {
    json_t *arr = json_object_get(reply, "ids");
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
      if ((int)i >= max) break;
      snprintf(ids[i], 256, "%s", json_string_value(v) ? json_string_value(v) : "");
      *count = (int)i + 1;
    }
  }
  json_decref(reply);
  return st;
}

static rt_status cuda_measure_ceilings(device *d, const char *dtype, roofline_ceilings *out,
                                       rt_error *err) {
  json_t *req = json_pack("{sssi}", "dtype", dtype, "ordinal", d->ordinal);
  json_t *reply = NULL;
  rt_status st = cuda_call(d, WORKER_CEILINGS, req, NULL, 0, CUDA_CEILINGS_TIMEOUT_S, &reply, err);
  json_decref(req);
  if (!st) st = reply_status(reply, err);
  if (!st) {
    if (d->have_ceil)
      *out = d->ceil;
    else
      memset(out, 0, sizeof *out);
    out->bw = json_number_value(json_object_get(reply, "bw"));
    out->l2_bw = ROOFLINE_L2_BW_FACTOR * out->bw;
    double flops = json_number_value(json_object_get(reply, "flops"));
    compute_path path = roofline_path_for_dtype(dtype, 0);
    out->flops[path] = flops;
    if (!d->spec) { /* no spec: the measured rate is the only roof, for every path */
      for (int p = 0; p < PATH_COUNT; p++)
        if (out->flops[p] <= 0) out->flops[p] = flops;
      out->mma_sync_fraction = 1;
      out->launch_overhead_s = 4e-6;
    }
    out->sm_count = d->sm_count;
    out->measured = 1;
    snprintf(out->gpu, sizeof out->gpu, "%.50s (measured)", d->label);
  }
  json_decref(reply);
  return st;
}

static void cuda_identity(const device *d, device_identity *out) {
  cuda_gpu_info info;
  int dv = 0;
  if (cuda_gpu_query(d->ordinal, &info, NULL) == RT_OK) {
    out->sm_count = info.sm_count;
    out->cc_major = info.cc_major;
    out->cc_minor = info.cc_minor;
  }
  if (cuda_driver_version(&dv, NULL) == RT_OK) out->driver_version = dv;
}

const device_ops device_cuda_ops = {
    .kind = {.prefix = "cuda",
             .syntax = "cuda | cuda:N",
             .caps = DEVICE_CAP_MEASURES | DEVICE_CAP_RUNS,
             .timing = TIMING_MEASURED},
    .check = cuda_check_arg,
    .open = cuda_open,
    .close = cuda_close,
    .begin = cuda_begin,
    .evaluate = cuda_evaluate,
    .library_list = cuda_library_list,
    .measure_ceilings = cuda_measure_ceilings,
    .identity = cuda_identity,
    .restarts = cuda_restarts,
    .profile = cuda_profile,
};

/* ---------------- worker side ---------------- */

typedef struct cuda_worker {
  int ready; /* context, stream, events and flush buffer exist */
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  CUevent ev0, ev1;
  CUdeviceptr flush; /* written before every timed run to evict L2 */
  size_t flush_bytes;
  const family_ops *fam; /* the problem's family */
  problem prob;
  family_gpu *g;  /* its inputs and reference */
  double tol;     /* verification tolerance */
  int lib_listed; /* library candidates listed for this problem (a fresh worker: 0) */
} cuda_worker;

void *device_cuda_worker_new(void) { return calloc(1, sizeof(cuda_worker)); }

void device_cuda_worker_free(void *ctx) {
  cuda_worker *w = ctx;
  if (!w) return;
  if (w->g && w->fam) w->fam->gpu_teardown(w->g);
  if (w->ready) {
    cu.cuMemFree_v2(w->flush);
    cu.cuEventDestroy_v2(w->ev0);
    cu.cuEventDestroy_v2(w->ev1);
    cu.cuStreamDestroy_v2(w->stream);
    cu.cuDevicePrimaryCtxRelease_v2(w->dev);
  }
  free(w);
}

static rt_status worker_init(cuda_worker *w, int ordinal, size_t l2_bytes, rt_error *err) {
  if (w->ready) return RT_OK;
  rt_status st = cuda_driver_load(err);
  if (!st) st = cuda_check(cu.cuDeviceGet(&w->dev, ordinal), "cuDeviceGet", err);
  if (!st)
    st = cuda_check(cu.cuDevicePrimaryCtxRetain(&w->ctx, w->dev), "cuDevicePrimaryCtxRetain", err);
  if (!st) st = cuda_check(cu.cuCtxSetCurrent(w->ctx), "cuCtxSetCurrent", err);
  if (!st)
    st = cuda_check(cu.cuStreamCreate(&w->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", err);
  if (!st) st = cuda_check(cu.cuEventCreate(&w->ev0, CU_EVENT_DEFAULT), "cuEventCreate", err);
  if (!st) st = cuda_check(cu.cuEventCreate(&w->ev1, CU_EVENT_DEFAULT), "cuEventCreate", err);
  w->flush_bytes = l2_bytes > 0 ? 2 * l2_bytes : (size_t)256 << 20;
  if (!st)
    st = cuda_check(cu.cuMemAlloc_v2(&w->flush, w->flush_bytes), "cuMemAlloc (L2 flush)", err);
  if (!st) w->ready = 1;
  return st;
}

static json_t *fail_reply(rt_status st, const rt_error *err, int fatal) {
  json_t *r = json_object();
  json_object_set_new(r, "status", json_string(rt_status_name(st)));
  json_object_set_new(r, "error",
                      json_string(err && err->text[0] ? err->text : rt_status_message(st)));
  if (fatal) json_object_set_new(r, "fatal", json_true());
  return r;
}

/* The launch of a family's reference from a setup request ("reference" and the blob). */
static void reference_from(json_t *r, const void *blob, size_t blob_len, family_reference *ref) {
  memset(ref, 0, sizeof *ref);
  ref->cubin = blob;
  ref->cubin_size = blob_len;
  ref->entry = json_string_value(json_object_get(r, "entry"));
  const char *key;
  json_t *v;
  json_object_foreach(json_object_get(r, "values"), key, v)
      rt_vars_set(&ref->vars, key, (long long)json_integer_value(v));
  for (int i = 0; i < 3; i++) {
    ref->grid[i] =
        (unsigned)json_integer_value(json_array_get(json_object_get(r, "grid"), (size_t)i));
    ref->block[i] =
        (unsigned)json_integer_value(json_array_get(json_object_get(r, "block"), (size_t)i));
  }
  ref->smem = (unsigned)json_integer_value(json_object_get(r, "smem"));
}

static json_t *handle_setup(cuda_worker *w, json_t *req, const void *blob, size_t blob_len) {
  rt_error err = {0};
  rt_status st = worker_init(w, (int)json_integer_value(json_object_get(req, "ordinal")),
                             (size_t)json_integer_value(json_object_get(req, "l2_bytes")), &err);
  if (st) return fail_reply(st, &err, 1);
  if (w->g) {
    w->fam->gpu_teardown(w->g);
    w->g = NULL;
  }
  w->lib_listed = 0;
  const char *fname = json_string_value(json_object_get(req, "family"));
  const char *ffile = json_string_value(json_object_get(req, "family_file"));
  if (ffile) {
    const family_ops *f = NULL;
    if ((st = family_load_file(ffile, &f, &err))) return fail_reply(st, &err, 0);
    w->fam = f;
  } else {
    w->fam = family_find(fname ? fname : "");
  }
  if (!w->fam) {
    rt_error_set(&err, RT_ERR_NOT_FOUND, "unknown kernel family '%s'", fname ? fname : "");
    return fail_reply(RT_ERR_NOT_FOUND, &err, 0);
  }
  const char *shape = json_string_value(json_object_get(req, "shape"));
  const char *dtype = json_string_value(json_object_get(req, "dtype"));
  st = w->fam->parse_shape(w->fam, shape ? shape : "", dtype ? dtype : "",
                           json_string_value(json_object_get(req, "args")), &w->prob, &err);
  if (st) return fail_reply(st, &err, 0);
  const char *layout = json_string_value(json_object_get(req, "layout"));
  if (layout) snprintf(w->prob.layout, sizeof w->prob.layout, "%s", layout);
  w->tol = w->fam->tolerance(w->fam, &w->prob);
  uint64_t seed = (uint64_t)json_integer_value(json_object_get(req, "seed"));
  family_reference ref;
  json_t *rj = json_object_get(req, "reference");
  if (rj) reference_from(rj, blob, blob_len, &ref);
  st = w->fam->gpu_setup(w->fam, &w->prob, seed, rj ? &ref : NULL, w->stream, &w->g, &err);
  if (st) return fail_reply(st, &err, 1);
  return json_pack("{ss}", "status", "OK");
}

/* One run of the candidate: the template kernel, or library candidate `lib`. */
typedef struct run_ctx {
  cuda_worker *w;
  CUfunction fn;
  int lib;
  rt_vars values;
  unsigned grid[3], block[3], smem;
} run_ctx;

static rt_status run_once(run_ctx *rc, rt_error *err) {
  cuda_worker *w = rc->w;
  if (rc->lib >= 0) return w->fam->library_launch(w->g, rc->lib, w->stream, err);
  return w->fam->gpu_launch(w->g, rc->fn, &rc->values, rc->grid, rc->block, rc->smem, w->stream,
                            err);
}

/* Waits for the stream.  A kernel that faults (illegal address, misaligned access, illegal
 * instruction, trap, ...) leaves a sticky error: the candidate crashed and the context is
 * unusable, so *fatal is set and the status is RT_ERR_CRASH. */
static rt_status sync_check(cuda_worker *w, const char *what, int *fatal, rt_error *err) {
  CUresult r = cu.cuStreamSynchronize(w->stream);
  if (r == CUDA_SUCCESS) return RT_OK;
  cuda_check(r, what, err);
  *fatal = 1;
  return RT_ERR_CRASH;
}

/* The candidate a request names, ready to run: its launch (values, grid, block, shared memory)
 * and its module loaded from the blob, or library candidate `library` (listed again and checked
 * by identity when this worker is fresh).  RT_ERR_LAUNCH when the module does not load. */
static rt_status candidate_load(cuda_worker *w, json_t *req, const void *blob, size_t blob_len,
                                run_ctx *rc, CUmodule *mod, rt_error *err) {
  memset(rc, 0, sizeof *rc);
  *mod = NULL;
  rc->w = w;
  rc->lib = (int)json_integer_value(json_object_get(req, "library"));
  if (!json_object_get(req, "library")) rc->lib = -1;
  const char *key;
  json_t *v;
  json_object_foreach(json_object_get(req, "values"), key, v) {
    rt_vars_set(&rc->values, key, (long long)json_integer_value(v));
  }
  for (int i = 0; i < 3; i++) {
    rc->grid[i] = (unsigned)json_integer_value(json_array_get(json_object_get(req, "grid"), i));
    rc->block[i] = (unsigned)json_integer_value(json_array_get(json_object_get(req, "block"), i));
  }
  rc->smem = (unsigned)json_integer_value(json_object_get(req, "smem"));
  rt_status st = RT_OK;
  if (rc->lib >= 0 && rc->lib >= w->lib_listed) {
    /* a fresh worker has not listed the library candidates yet: list them as the parent did
     * and check that candidate `lib` is still the one it names */
    int max = (int)json_integer_value(json_object_get(req, "library_max")), count = 0;
    const char *want = json_string_value(json_object_get(req, "library_id"));
    char got[256] = "";
    if (!w->fam->library_list)
      st = rt_error_set(err, RT_ERR_UNSUPPORTED, "the family has no library candidates");
    if (!st) st = w->fam->library_list(w->g, max > rc->lib ? max : rc->lib + 1, &count, err);
    if (!st) w->lib_listed = count;
    if (!st && rc->lib >= count)
      st = rt_error_set(err, RT_ERR_NOT_FOUND, "library candidate %d is gone (%d listed)", rc->lib,
                        count);
    if (!st) st = w->fam->library_describe(w->g, rc->lib, got, sizeof got, err);
    if (!st && want && strcmp(want, got))
      st = rt_error_set(err, RT_ERR_NOT_FOUND, "library candidate %d is now %s, not %s", rc->lib,
                        got, want);
    if (st) return st;
  }
  if (rc->lib < 0) {
    const char *entry = json_string_value(json_object_get(req, "entry"));
    if (!blob || !blob_len) return rt_error_set(err, RT_ERR_INVALID, "candidate has no cubin");
    st = cuda_check(cu.cuModuleLoadData(mod, blob), "cuModuleLoadData", err);
    if (!st)
      st = cuda_check(cu.cuModuleGetFunction(&rc->fn, *mod, entry ? entry : ""),
                      "cuModuleGetFunction", err);
    if (!st && rc->smem > 48 * 1024)
      st = cuda_check(cu.cuFuncSetAttribute(rc->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            (int)rc->smem),
                      "cuFuncSetAttribute(max dynamic shared memory)", err);
    if (st) {
      if (*mod) cu.cuModuleUnload(*mod);
      *mod = NULL;
      return RT_ERR_LAUNCH;
    }
  }
  return RT_OK;
}

static json_t *handle_eval(cuda_worker *w, json_t *req, const void *blob, size_t blob_len) {
  rt_error err = {0};
  if (!w->ready || !w->g) {
    rt_error_set(&err, RT_ERR_INTERNAL, "worker has no problem set up");
    return fail_reply(RT_ERR_INTERNAL, &err, 0);
  }
  run_ctx rc;
  CUmodule mod = NULL;
  rt_status st = candidate_load(w, req, blob, blob_len, &rc, &mod, &err);
  if (st) return fail_reply(st, &err, 0);
  double cap = json_number_value(json_object_get(req, "time_cap_s"));
  double target = json_number_value(json_object_get(req, "target_spread"));
  int min_reps = (int)json_integer_value(json_object_get(req, "min_reps"));
  int max_reps = (int)json_integer_value(json_object_get(req, "max_reps"));
  if (min_reps < 1) min_reps = 1;
  if (max_reps < min_reps) max_reps = min_reps;
  json_t *reply = NULL;
  /* 1. poison, run once, verify: a wrong candidate is never timed */
  double rel = -1;
  int fatal = 0;
  st = w->fam->gpu_poison(w->g, w->stream, &err);
  if (!st) st = cuda_check(cu.cuStreamSynchronize(w->stream), "poison", &err);
  if (st) { /* nothing of the candidate ran yet: the context itself is broken; a fresh worker */
    reply = fail_reply(st, &err, 1);
    goto out;
  }
  double t_first = rt_now_s();
  st = run_once(&rc, &err);
  if (st) { /* the launch itself was refused (resources, geometry): not sticky */
    reply = fail_reply(RT_ERR_LAUNCH, &err, 0);
    goto out;
  }
  if ((st = sync_check(w, "kernel run", &fatal, &err))) {
    reply = fail_reply(st, &err, fatal);
    goto out;
  }
  t_first = rt_now_s() - t_first; /* one run's wall time, launch included */
  /* a candidate of another precision than the problem's (tf32 in an f32 run) has its own
   * tolerance, when the family can hold it to one */
  double tol = json_number_value(json_object_get(req, "tolerance")) > 0
                   ? json_number_value(json_object_get(req, "tolerance"))
                   : w->tol;
  if (tol != w->tol && !w->fam->gpu_tolerance) {
    rt_error_set(&err, RT_ERR_UNSUPPORTED,
                 "the %s family cannot verify a candidate to another tolerance (%.3g)",
                 w->fam->name, tol);
    reply = fail_reply(RT_ERR_UNSUPPORTED, &err, 0);
    goto out;
  }
  if (w->fam->gpu_tolerance) w->fam->gpu_tolerance(w->g, tol != w->tol ? tol : 0);
  st = w->fam->gpu_verify(w->g, &rel, &err);
  if (w->fam->gpu_tolerance) w->fam->gpu_tolerance(w->g, 0);
  if (st) { /* RT_ERR_WRONG_RESULT with the family's account of it, or a CUDA failure */
    reply = fail_reply(st, &err, st == RT_ERR_CUDA);
    if (st == RT_ERR_WRONG_RESULT)
      json_object_set_new(reply, "verify_error", json_real(isfinite(rel) ? rel : 1e300));
    goto out;
  }
  if (!(rel <= tol)) {
    rt_error_set(&err, RT_ERR_WRONG_RESULT, "relative error %.3g exceeds the tolerance %.3g", rel,
                 tol);
    reply = fail_reply(RT_ERR_WRONG_RESULT, &err, 0);
    json_object_set_new(reply, "verify_error", json_real(isfinite(rel) ? rel : 1e300));
    goto out;
  }
  /* 2. warm-up, apart from timing */
  /* a slow candidate (a run over a tenth of the cap) gets one warm-up and fewer runs, so the
   * per-candidate timeout is not spent on repetitions */
  int warmups = 2;
  if (t_first > 0.1 * cap) {
    warmups = 1;
    if (min_reps > 3) min_reps = 3;
  }
  for (int i = 0; i < warmups && !st; i++) st = run_once(&rc, &err);
  if (!st) st = sync_check(w, "warm-up", &fatal, &err);
  /* 3. timed runs, each after an L2 flush, until device_timing_next says enough (steady, capped,
   * or too slow to win: then the runs it did not do are GPU time saved) */
  double *times = calloc((size_t)max_reps, sizeof *times),
         *sorted = calloc((size_t)max_reps, sizeof *sorted);
  double stop_above = json_number_value(json_object_get(req, "stop_above_ms"));
  int n = 0, verdict = DEVICE_TIMING_MORE;
  double spread = 0, t_start = rt_now_s();
  if (!times || !sorted)
    st = rt_error_set(&err, RT_ERR_NOMEM, "out of memory for %d timings", max_reps);
  while (!st && verdict == DEVICE_TIMING_MORE) {
    st = cuda_check(cu.cuMemsetD32Async(w->flush, (unsigned)n, w->flush_bytes / 4, w->stream),
                    "L2 flush", &err);
    if (!st) st = cuda_check(cu.cuEventRecord(w->ev0, w->stream), "cuEventRecord", &err);
    if (!st) st = run_once(&rc, &err);
    if (!st) st = cuda_check(cu.cuEventRecord(w->ev1, w->stream), "cuEventRecord", &err);
    if (!st) st = cuda_check(cu.cuEventSynchronize(w->ev1), "timed run", &err);
    float ms = 0;
    if (!st)
      st = cuda_check(cu.cuEventElapsedTime(&ms, w->ev0, w->ev1), "cuEventElapsedTime", &err);
    if (st) break;
    times[n++] = ms;
    memcpy(sorted, times, (size_t)n * sizeof *sorted);
    rt_sort_doubles(sorted, (size_t)n);
    verdict = device_timing_next(sorted, n, min_reps, max_reps, target, rt_now_s() - t_start, cap,
                                 stop_above, &spread);
  }
  if (st) {
    free(times);
    free(sorted);
    reply = fail_reply(st == RT_ERR_CUDA ? RT_ERR_CRASH : st, &err, 1);
    goto out;
  }
  double median = rt_quantile(sorted, (size_t)n, 0.5);
  /* every OK reply passed the check above: verified */
  reply = json_pack("{ss sf sf si sf sb}", "status", "OK", "time_ms", median, "spread", spread,
                    "reps", n, "verify_error", rel, "verified", 1);
  if (verdict == DEVICE_TIMING_SLOW) {
    /* the runs up to min_reps that were not done, each a flush and a run, are saved at least */
    double per_run = (rt_now_s() - t_start) / n;
    json_object_set_new(reply, "stopped_early", json_true());
    json_object_set_new(reply, "saved_s", json_real(min_reps > n ? (min_reps - n) * per_run : 0));
  }
  free(times);
  free(sorted);
out:
  if (mod && !fatal) cu.cuModuleUnload(mod);
  return reply;
}

/* Hardware counters of one more run of a candidate that was timed already: its module loaded
 * again, one untimed run (caches and clocks as after the warm-up), then CUPTI's range profiler
 * with one launch per pass.  Nothing here is timed. */
static rt_status profile_run(void *ctx, rt_error *err) {
  run_ctx *rc = ctx;
  rt_status st = run_once(rc, err);
  if (!st) st = cuda_check(cu.cuStreamSynchronize(rc->w->stream), "profiled run", err);
  return st;
}

/* Before each profiled pass: the L2 flushed as before every timed run. */
static rt_status profile_flush(void *ctx, rt_error *err) {
  run_ctx *rc = ctx;
  cuda_worker *w = rc->w;
  rt_status st = cuda_check(
      cu.cuMemsetD32Async(w->flush, 0x5a5a5a5au, w->flush_bytes / 4, w->stream), "L2 flush", err);
  if (!st) st = cuda_check(cu.cuStreamSynchronize(w->stream), "L2 flush", err);
  return st;
}

static json_t *handle_profile(cuda_worker *w, json_t *req, const void *blob, size_t blob_len) {
  rt_error err = {0};
  if (!w->ready || !w->g) {
    rt_error_set(&err, RT_ERR_INTERNAL, "worker has no problem set up");
    return fail_reply(RT_ERR_INTERNAL, &err, 0);
  }
  run_ctx rc;
  CUmodule mod = NULL;
  rt_status st = candidate_load(w, req, blob, blob_len, &rc, &mod, &err);
  if (st) return fail_reply(st, &err, 0);
  json_t *reply = NULL;
  hw_counters c;
  size_t passes = 0;
  st = profile_run(&rc, &err); /* warm: the profiled passes see what the timed runs saw */
  if (st) {
    reply = fail_reply(st, &err, 1);
  } else {
    st = cupti_profile(w->ctx, (int)json_integer_value(json_object_get(req, "ordinal")),
                       profile_flush, profile_run, &rc, &c, &passes, NULL, NULL, &err);
    if (st) {
      /* a failure to read counters is the profiler's, not the candidate's; a launch that failed
       * under it left the context unusable */
      CUresult sticky = cu.cuStreamSynchronize(w->stream);
      reply = fail_reply(st, &err, sticky != CUDA_SUCCESS);
    } else {
      reply = json_pack("{ss si sf sf sf sf sf sf sf sf ss}", "status", "OK", "passes", (int)passes,
                        "dram_read_bytes", c.dram_read_bytes, "dram_write_bytes",
                        c.dram_write_bytes, "l2_bytes", c.l2_bytes, "occupancy", c.occupancy,
                        "tensor_pipe", c.tensor_pipe, "fma_pipe", c.fma_pipe, "sm_throughput",
                        c.sm_throughput, "duration_ms", c.duration_ms, "stalls", c.stalls);
    }
  }
  if (mod && !json_is_true(json_object_get(reply, "fatal"))) cu.cuModuleUnload(mod);
  return reply;
}

static json_t *handle_library(cuda_worker *w, json_t *req) {
  rt_error err = {0};
  if (!w->ready || !w->g) {
    rt_error_set(&err, RT_ERR_INTERNAL, "worker has no problem set up");
    return fail_reply(RT_ERR_INTERNAL, &err, 0);
  }
  json_t *ids = json_array();
  int max = (int)json_integer_value(json_object_get(req, "max")), count = 0;
  if (w->fam->library_list && max > 0) {
    rt_status st = w->fam->library_list(w->g, max, &count, &err);
    if (st) {
      json_decref(ids);
      return fail_reply(st, &err, 0);
    }
    w->lib_listed = count;
    for (int i = 0; i < count; i++) {
      char buf[256];
      if (w->fam->library_describe(w->g, i, buf, sizeof buf, &err))
        snprintf(buf, sizeof buf, "%d", i);
      json_array_append_new(ids, json_string(buf));
    }
  }
  return json_pack("{ss so}", "status", "OK", "ids", ids);
}

/* Median seconds of `reps` timed runs of a copy or of library candidate `lib`. */
static rt_status time_median(cuda_worker *w, int reps, CUdeviceptr dst, CUdeviceptr src,
                             size_t bytes, family_gpu *g, int lib, double *median_s,
                             rt_error *err) {
  double t[32];
  if (reps > 32) reps = 32;
  rt_status st = RT_OK;
  for (int i = -2; i < reps && !st; i++) { /* two warm-up runs */
    st = cuda_check(cu.cuEventRecord(w->ev0, w->stream), "cuEventRecord", err);
    if (!st)
      st = g ? w->fam->library_launch(g, lib, w->stream, err)
             : cuda_check(cu.cuMemcpyDtoDAsync_v2(dst, src, bytes, w->stream), "copy", err);
    if (!st) st = cuda_check(cu.cuEventRecord(w->ev1, w->stream), "cuEventRecord", err);
    if (!st) st = cuda_check(cu.cuEventSynchronize(w->ev1), "timed run", err);
    float ms = 0;
    if (!st) st = cuda_check(cu.cuEventElapsedTime(&ms, w->ev0, w->ev1), "cuEventElapsedTime", err);
    if (!st && i >= 0) t[i] = ms * 1e-3;
  }
  if (st) return st;
  rt_sort_doubles(t, (size_t)reps);
  *median_s = rt_quantile(t, (size_t)reps, 0.5);
  return RT_OK;
}

static json_t *handle_ceilings(cuda_worker *w, json_t *req) {
  rt_error err = {0};
  /* the GPU the device was opened on (a worker that ran setup already holds it) */
  rt_status st = worker_init(w, (int)json_integer_value(json_object_get(req, "ordinal")), 0, &err);
  if (st) return fail_reply(st, &err, 1);
  CUdeviceptr a = 0, b = 0;
  double copy_s = 0, mm_s = 0;
  st = cuda_check(cu.cuMemAlloc_v2(&a, CEIL_COPY_BYTES), "cuMemAlloc", &err);
  if (!st) st = cuda_check(cu.cuMemAlloc_v2(&b, CEIL_COPY_BYTES), "cuMemAlloc", &err);
  if (!st) st = cuda_check(cu.cuMemsetD8Async(a, 1, CEIL_COPY_BYTES, w->stream), "memset", &err);
  if (!st) st = time_median(w, 20, b, a, CEIL_COPY_BYTES, NULL, 0, &copy_s, &err);
  if (a) cu.cuMemFree_v2(a);
  if (b) cu.cuMemFree_v2(b);
  if (st) return fail_reply(st, &err, 1);
  const char *dtype = json_string_value(json_object_get(req, "dtype"));
  const family_ops *gemm = family_find("gemm");
  problem p;
  family_gpu *g = NULL;
  int count = 0;
  if (!gemm) st = rt_error_set(&err, RT_ERR_NOT_FOUND, "no gemm family to measure a matmul with");
  /* fp8 operands are K-major only: the weight layout nt */
  const int fp8 = dtype && (!strcmp(dtype, "e4m3") || !strcmp(dtype, "e5m2"));
  if (!st)
    st = gemm->parse_shape(gemm, fp8 ? CEIL_GEMM_SHAPE ":nt" : CEIL_GEMM_SHAPE,
                           dtype ? dtype : "bf16", NULL, &p, &err);
  if (!st) st = gemm->gpu_setup(gemm, &p, 1, NULL, w->stream, &g, &err);
  if (!st) st = gemm->library_list(g, 4, &count, &err);
  if (!st && count < 1)
    st = rt_error_set(&err, RT_ERR_CUBLAS, "cuBLASLt offers no algorithm for %s %s",
                      CEIL_GEMM_SHAPE, dtype ? dtype : "bf16");
  /* The f32 roof is that of fp32 arithmetic: skip tf32 algorithms (listed first for f32), whose
   * tensor-core rate is another path's ceiling. */
  int lib = 0;
  for (int i = 0; !st && dtype && strcmp(dtype, "f32") == 0 && i < count; i++) {
    char desc[256];
    if (gemm->library_describe(g, i, desc, sizeof desc, &err) == RT_OK && !strstr(desc, "TF32")) {
      lib = i;
      break;
    }
  }
  const family_ops *saved = w->fam;
  w->fam = gemm;
  if (!st) st = time_median(w, 10, 0, 0, 0, g, lib, &mm_s, &err);
  w->fam = saved;
  if (g) gemm->gpu_teardown(g);
  if (st) return fail_reply(st, &err, 1);
  return json_pack("{ss sf sf}", "status", "OK", "bw", 2.0 * CEIL_COPY_BYTES / copy_s, "flops",
                   gemm->flops(gemm, &p) / mm_s);
}

int device_cuda_worker_handler(void *ctx, int type, const char *json, const void *blob,
                               size_t blob_len, char **reply_json, void **reply_blob,
                               size_t *reply_blob_len) {
  cuda_worker *w = ctx;
  json_error_t jerr;
  json_t *req = json_loads(json ? json : "{}", 0, &jerr);
  json_t *reply;
  rt_error err = {0};
  if (!req || !w) {
    rt_error_set(&err, RT_ERR_PARSE, "worker request is not JSON: %s", jerr.text);
    reply = fail_reply(RT_ERR_PARSE, &err, 0);
  } else if (type == WORKER_SETUP)
    reply = handle_setup(w, req, blob, blob_len);
  else if (type == WORKER_EVAL)
    reply = handle_eval(w, req, blob, blob_len);
  else if (type == WORKER_LIBRARY)
    reply = handle_library(w, req);
  else if (type == WORKER_CEILINGS)
    reply = handle_ceilings(w, req);
  else if (type == WORKER_PROFILE)
    reply = handle_profile(w, req, blob, blob_len);
  else {
    rt_error_set(&err, RT_ERR_INVALID, "unknown worker request type %d", type);
    reply = fail_reply(RT_ERR_INVALID, &err, 0);
  }
  int fatal = json_is_true(json_object_get(reply, "fatal"));
  *reply_json = json_dumps(reply, JSON_COMPACT);
  json_decref(reply);
  json_decref(req);
  return fatal; /* a broken context: answer, then end so the parent starts a fresh worker */
}
