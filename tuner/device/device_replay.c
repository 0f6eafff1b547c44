/* device_replay.c — the replay device: times recorded in a Kernel Tuner / KTT cache file or in
 * rooftune's own export (`rooftune db export`; the rows of device_options.replay_template,
 * replay_shape and replay_dtype), loaded by ktfile.c and served as TIMING_REPLAYED results.
 * A failed row of an export keeps its status: the failure text starts with the status name
 * ("ERR_WRONG_RESULT: ..."). A KTT recording's configuration (or a rooftune export's that a GPU
 * run profiled) comes with its counters and compile data, diagnosed here (recorded.h) on the recorded GPU's spec-table roofs: only the
 * device holds the recording these facts come from. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "tuner/device/device_impl.h"
#include "model/recorded.h"
#include "template/ktfile.h"

/* A file's name (whether it reads is open's to say). */
static rt_status replay_check_arg(const char *path, rt_error *err) {
  return *path ? RT_OK : rt_error_set(err, RT_ERR_INVALID, "replay needs a file: replay:FILE");
}

static rt_status replay_open(device *d, const char *path, rt_error *err) {
  ktfile_select sel = {d->opt.replay_template, d->opt.replay_shape, d->opt.replay_dtype};
  rt_status st = ktfile_load_select(path, &sel, &d->kf, err);
  if (!st) st = recorded_check_counters(d->kf, err); /* no count a GPU could not have made */
  if (st) return st;
  snprintf(d->label, sizeof d->label, "replay:%s", path);
  d->arch[0] = 0;
  /* the GPU the file was measured on, when the spec table knows it: its roofs for diagnosis
   * (by its recorded name, else a key in it: a rooftune export of "model:h200") */
  const gpu_spec *all;
  size_t n;
  all = gpu_spec_all(&n);
  d->spec = gpu_spec_match_name(d->kf->device_name);
  for (size_t i = 0; !d->spec && i < n && d->kf->device_name && d->kf->device_name[0]; i++)
    if (strcasestr(d->kf->device_name, all[i].key)) d->spec = &all[i];
  if (d->spec) {
    d->sm_count = d->spec->sm_count;
    roofline_from_spec(d->spec, &d->ceil);
    d->have_ceil = 1;
  }
  return RT_OK;
}

static void replay_close(device *d) {
  ktfile_free(d->kf);
  d->kf = NULL;
}

static rt_status replay_evaluate(device *d, const device_candidate *c, candidate_result *r,
                                 rt_error *err) {
  size_t idx;
  rt_status st = ktfile_find(d->kf, c->plan ? c->plan->config : "", &idx, err);
  if (st) return st;
  candidate_result rec;
  memset(&rec, 0, sizeof rec);
  ktfile_result(d->kf, idx, &rec);
  r->status = rec.status;
  snprintf(r->detail, sizeof r->detail, "%s", rec.detail);
  /* a rooftune export's failure keeps its own status: "ERR_WRONG_RESULT: ..." */
  const char *colon = strchr(rec.detail, ':');
  if (rec.status != RT_OK && colon) {
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(colon - rec.detail), rec.detail);
    int code = rt_status_from_name(name);
    if (code > 0) r->status = (rt_status)code;
  }
  r->time_ms = rec.time_ms;
  r->spread = rec.spread;
  r->repetitions = rec.repetitions;
  if (rec.device_name[0]) snprintf(r->device_name, sizeof r->device_name, "%s", rec.device_name);
  /* a recording's counters and compile data: diagnosed as a GPU run is, with a measured basis */
  r->counters = rec.counters;
  r->facts = rec.facts;
  /* a rooftune export knows the problem's FLOPs and what its template computed in */
  if (d->kf->flops > 0) r->flops = d->kf->flops;
  if (d->kf->precision[0]) snprintf(r->precision, sizeof r->precision, "%s", d->kf->precision);
  if (d->spec) return recorded_diagnose(r, d->spec, NULL, d->kf->space, idx, err);
  return RT_OK;
}

const device_ops device_replay_ops = {
    .kind = {.prefix = "replay:",
             .syntax = "replay:FILE",
             .caps = DEVICE_CAP_RECORDED,
             .timing = TIMING_REPLAYED},
    .check = replay_check_arg,
    .open = replay_open,
    .close = replay_close,
    .evaluate = replay_evaluate,
};
