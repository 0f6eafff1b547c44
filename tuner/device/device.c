/* device.c — the device interface: --device parsing, defaults, and dispatch through each
 * kind's operations (device_model.c, device_cuda.c, device_replay.c). */
#include "tuner/device/device_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* The device kinds, in the order help lists them. */
static const device_ops *const device_kinds[] = {&device_cuda_ops, &device_model_ops,
                                                 &device_replay_ops, &device_sim_ops};
#define NKINDS (sizeof device_kinds / sizeof device_kinds[0])

/* The kind whose prefix starts SPEC ("cuda" also takes "cuda:N"), NULL when none does. */
static const device_ops *device_ops_of(const char *spec) {
  for (size_t i = 0; spec && i < NKINDS; i++) {
    const char *p = device_kinds[i]->kind.prefix;
    size_t n = strlen(p);
    if (strncmp(spec, p, n) == 0 && (p[n - 1] == ':' || spec[n] == '\0' || spec[n] == ':'))
      return device_kinds[i];
  }
  return NULL;
}

const device_kind *device_kind_lookup(const char *spec) {
  const device_ops *ops = device_ops_of(spec);
  return ops ? &ops->kind : NULL;
}

const device_kind *device_kind_at(size_t i) { return i < NKINDS ? &device_kinds[i]->kind : NULL; }

const char *device_kinds_help(int without, char *buf, size_t size) {
  size_t n = 0;
  if (size) buf[0] = '\0';
  for (size_t i = 0; i < NKINDS && n < size; i++) {
    const device_kind *k = &device_kinds[i]->kind;
    if (k->caps & without) continue;
    char choices[256] = "";
    if (k->choices) snprintf(choices, sizeof choices, " (%s)", k->choices());
    int w = snprintf(buf + n, size - n, "%s%s%s", n ? " | " : "", k->syntax, choices);
    if (w < 0) break;
    n += (size_t)w;
  }
  return buf;
}

rt_status device_check(const char *spec, rt_error *err) {
  const device_ops *ops = device_ops_of(spec);
  if (!ops) {
    char kinds[512];
    return rt_error_set(err, RT_ERR_INVALID, "unknown device '%s'; use %s", spec ? spec : "",
                        device_kinds_help(0, kinds, sizeof kinds));
  }
  return ops->check ? ops->check(spec + strlen(ops->kind.prefix), err) : RT_OK;
}

const gpu_spec *device_kind_gpu(const char *spec) {
  const device_ops *ops = device_ops_of(spec);
  return ops && ops->gpu ? ops->gpu(spec + strlen(ops->kind.prefix)) : NULL;
}

rt_status device_open(const char *spec, const device_options *opt, device **out, rt_error *err) {
  *out = NULL;
  if (!spec || !*spec) spec = "cuda";
  rt_status st = device_check(spec, err);
  if (st) {
    rt_error_locate(err, "--device", NULL, 0, 0);
    return st;
  }
  const device_ops *ops = device_ops_of(spec);
  device *d = calloc(1, sizeof *d);
  if (!d) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  d->ops = ops;
  if (opt) d->opt = *opt;
  if (d->opt.timeout_s <= 0) d->opt.timeout_s = 20;
  if (d->opt.time_cap_s <= 0) d->opt.time_cap_s = 0.5;
  if (d->opt.target_spread <= 0) d->opt.target_spread = 0.02;
  if (d->opt.min_reps <= 0) d->opt.min_reps = 5;
  if (d->opt.max_reps <= 0) d->opt.max_reps = 200;
  if (d->opt.max_reps < d->opt.min_reps) d->opt.max_reps = d->opt.min_reps;
  if ((st = ops->open(d, spec + strlen(ops->kind.prefix), err))) {
    device_close(d);
    return st;
  }
  *out = d;
  return RT_OK;
}

void device_close(device *d) {
  if (!d) return;
  if (d->ops->close) d->ops->close(d);
  free(d);
}

int device_has(const device *d, int caps) { return (d->ops->kind.caps & caps) == caps; }
const char *device_label(const device *d) { return d->label; }
timing_kind device_timing(const device *d) { return d->ops->kind.timing; }
const char *device_arch(const device *d) { return d->arch[0] ? d->arch : NULL; }
const gpu_spec *device_spec(const device *d) { return d->spec; }
int device_sm_count(const device *d) { return d->sm_count; }
int device_ordinal(const device *d) { return d->ordinal; }
const struct ktfile *device_replay_file(const device *d) { return d->kf; }

void device_get_identity(const device *d, device_identity *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%.127s", d->label);
  if (d->ops->identity)
    d->ops->identity(d, out);
  else
    out->pseudo = 1;
}

int device_ceilings(const device *d, roofline_ceilings *out) {
  if (!d->have_ceil) {
    memset(out, 0, sizeof *out);
    return 0;
  }
  *out = d->ceil;
  return 1;
}

void device_set_ceilings(device *d, const roofline_ceilings *measured) {
  d->ceil = *measured;
  d->have_ceil = 1;
}

rt_status device_begin(device *d, const family_ops *fam, const struct problem *p,
                       const family_reference *ref, rt_error *err) {
  snprintf(d->family, sizeof d->family, "%s", fam ? fam->name : "");
  return d->ops->begin ? d->ops->begin(d, fam, p, ref, err) : RT_OK;
}

rt_status device_evaluate(device *d, const device_candidate *c, candidate_result *out,
                          rt_error *err) {
  const candidate_plan *pl = c->plan;
  memset(out, 0, sizeof *out);
  snprintf(out->template_name, sizeof out->template_name, "%s",
           c->template_name ? c->template_name : "");
  snprintf(out->config, sizeof out->config, "%s", pl ? pl->config : "");
  out->timing = d->ops->kind.timing;
  snprintf(out->device_name, sizeof out->device_name, "%.63s", d->label);
  out->verify_error = -1;
  out->flops = pl ? pl->flops : 0;
  out->dram_bytes = pl ? pl->dram_bytes : 0;
  out->facts = c->facts;
  snprintf(out->precision, sizeof out->precision, "%s", c->precision ? c->precision : "");
  snprintf(out->path, sizeof out->path, "%s", compute_path_key(c->path));
  return d->ops->evaluate(d, c, out, err);
}

rt_status device_profile(device *d, const device_candidate *c, hw_counters *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  if (!d->ops->profile)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "%s reads no hardware counters (only a GPU does)",
                        d->label);
  return d->ops->profile(d, c, out, err);
}

int device_timing_next(const double *sorted_ms, int n, int min_reps, int max_reps, double target,
                       double elapsed_s, double cap_s, double stop_above_ms, double *spread) {
  if (n <= 0) return DEVICE_TIMING_MORE;
  double med = rt_quantile(sorted_ms, (size_t)n, 0.5);
  *spread =
      n > 1 && med > 0
          ? (rt_quantile(sorted_ms, (size_t)n, 0.9) - rt_quantile(sorted_ms, (size_t)n, 0.1)) / med
          : 0;
  if (stop_above_ms > 0 && n == DEVICE_SLOW_RUNS && sorted_ms[0] > stop_above_ms)
    return DEVICE_TIMING_SLOW;
  if (n >= max_reps) return DEVICE_TIMING_STEADY;
  if (n >= min_reps && (*spread <= target || elapsed_s >= cap_s)) return DEVICE_TIMING_STEADY;
  return DEVICE_TIMING_MORE;
}

rt_status device_library_list(device *d, int max, char ids[][256], int *count, rt_error *err) {
  *count = 0;
  return d->ops->library_list ? d->ops->library_list(d, max, ids, count, err) : RT_OK;
}

rt_status device_measure_ceilings(device *d, const char *dtype, roofline_ceilings *out,
                                  rt_error *err) {
  if (!d->ops->measure_ceilings)
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "only a device that measures has ceilings to measure");
  return d->ops->measure_ceilings(d, dtype, out, err);
}

int device_worker_restarts(const device *d) { return d->ops->restarts ? d->ops->restarts(d) : 0; }
