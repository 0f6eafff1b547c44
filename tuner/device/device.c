/* device.c — the device interface, the model device, and dispatch to the cuda
 * (device_cuda.c) and replay (device_replay.c) devices. */
#include "tuner/device/device_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the model device ----
 *
 * time = wave_factor * (max(t_compute, t_memory) + MODEL_OVERLAP * min(t_compute, t_memory))
 *        * spill_factor + launch overhead
 *   t_compute = executed flops / (path ceiling * MODEL_COMPUTE_EFF * compute_eff)
 *               executed flops: the problem's plus the padded parts of partial tiles (the
 *               manifest's cost.executed_flops), which the math units do all the same
 *               compute_eff = 1 - exp(-resident warps / warps that keep the path issuing)
 *   t_memory  = dram / (copy bandwidth * memory_eff)
 *               dram = min_bytes + (bytes - min_bytes) / sqrt(concurrent blocks): the manifest's
 *               bytes count every re-read of an input panel, but blocks resident at the same
 *               time form a patch of about sqrt(n) x sqrt(n) output tiles whose shared panels
 *               come from L2, so re-reads reach DRAM about once per patch row or column
 *               memory_eff = min(1, bytes in flight per SM / (per-SM bandwidth * DRAM latency)),
 *               bytes in flight ~ resident blocks * their shared-memory staging (or 16 B/thread;
 *               a streaming template states its own: cost.bytes_in_flight)
 *               and never less than bytes / L2 bandwidth (DIAG_L2_BW_FACTOR x DRAM): every
 *               re-read still passes through L2, which is what makes small tiles slow
 *   wave_factor = full / waves (diag_waves): the last wave's idle SMs cost as much as busy
 *               ones; a persistent grid (launch.work) counts rounds of its resident blocks
 *   spill_factor = 1 + MODEL_SPILL_COST * min(1, spill bytes / 256)
 */
#define MODEL_COMPUTE_EFF 0.80     /* cuBLAS reaches ~80 % of the dense datasheet (790/989 on H200) */
#define MODEL_OVERLAP 0.15         /* compute and memory never overlap perfectly */
#define MODEL_DRAM_LATENCY 700e-9  /* seconds from a global load to its data (HBM, loaded) */
#define MODEL_WARPS_TC 2.5         /* resident warps per SM at which tensor-core issue reaches
                                      1 - 1/e of its rate (4 warps: 80 %, 8 warps: 96 %) */
#define MODEL_WARPS_SIMT 8.0       /* the same for fp32 FMA (16 warps: 86 %, 32 warps: 98 %) */
#define MODEL_SPILL_COST 0.5       /* slowdown at 256 spilled bytes per thread */

rt_status device_model_predict(const gpu_spec *gpu, const device_candidate *c, double *seconds,
                               rt_error *err) {
  *seconds = 0;
  const static_facts *f = &c->facts;
  if (f->blocks_per_sm <= 0)
    return rt_error_set(err, RT_ERR_LAUNCH,
                        "no block fits on an SM (%d registers/thread, %d + %d bytes of shared "
                        "memory, %d threads)",
                        f->registers, f->smem_static, f->smem_dynamic, f->threads_per_block);
  if (c->path < 0 || c->path >= PATH_COUNT)
    return rt_error_set(err, RT_ERR_INVALID, "unknown compute path %d", (int)c->path);
  const arch_spec *arch = arch_spec_find(gpu->arch);
  double peak = gpu->peak_flops[c->path] * MODEL_COMPUTE_EFF;
  if (c->path == PATH_TC_F16 && !c->wgmma && arch && arch->cc >= 90) peak *= gpu->mma_sync_fraction;
  int threads = f->threads_per_block > 0 ? f->threads_per_block : 128;
  double warps = (double)f->blocks_per_sm * ((threads + 31) / 32);
  double compute_eff = 1.0 - exp(-warps / (c->path == PATH_SIMT_F32 ? MODEL_WARPS_SIMT : MODEL_WARPS_TC));
  double staging = c->inflight_bytes > 0 ? c->inflight_bytes
                                         : fmax((double)f->smem_static + f->smem_dynamic, 16.0 * threads);
  double inflight = f->blocks_per_sm * staging;
  double needed = gpu->dram_bw_achievable / gpu->sm_count * MODEL_DRAM_LATENCY;
  double memory_eff = fmin(1.0, inflight / needed);
  double concurrent = (double)gpu->sm_count * f->blocks_per_sm;
  if (f->grid_blocks > 0 && f->grid_blocks < concurrent) concurrent = (double)f->grid_blocks;
  double dram = diag_dram_bytes(c->dram_bytes, c->min_bytes, concurrent);
  double tc = fmax(c->flops, c->executed_flops) / (peak * compute_eff);
  double tm = fmax(dram / gpu->dram_bw_achievable,
                   c->dram_bytes / (DIAG_L2_BW_FACTOR * gpu->dram_bw_achievable)) / memory_eff;
  double wave_factor = 1.0, waves, full;
  diag_waves(f->grid_blocks, f->work_blocks, (double)gpu->sm_count * f->blocks_per_sm, &waves, &full);
  if (waves > 0) wave_factor = full / waves;
  double spill = f->spill_stores + f->spill_loads;
  double t = wave_factor * (fmax(tc, tm) + MODEL_OVERLAP * fmin(tc, tm));
  t *= 1.0 + MODEL_SPILL_COST * fmin(1.0, spill / 256.0);
  *seconds = t + gpu->launch_overhead_s;
  if (!isfinite(*seconds) || *seconds <= 0)
    return rt_error_set(err, RT_ERR_INVALID, "model: no time for %s (flops %g, bytes %g)",
                        c->config_text ? c->config_text : "candidate", c->flops, c->dram_bytes);
  return RT_OK;
}

static rt_status model_evaluate(device *d, const device_candidate *c, candidate_result *r,
                                rt_error *err) {
  double s = 0;
  rt_error perr = {0};
  rt_status st = device_model_predict(d->spec, c, &s, &perr);
  (void)err;
  if (st) {
    r->status = st;
    snprintf(r->detail, sizeof r->detail, "%.255s", perr.text);
    return RT_OK;
  }
  r->status = RT_OK;
  r->time_ms = s * 1e3;
  r->spread = 0;
  r->repetitions = 0;
  return RT_OK;
}

/* ---- dispatch ---- */

rt_status device_open(const char *spec, const device_options *opt, device **out, rt_error *err) {
  *out = NULL;
  if (!spec || !*spec) spec = "cuda";
  device *d = calloc(1, sizeof *d);
  if (!d) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  if (opt) d->opt = *opt;
  if (d->opt.timeout_s <= 0) d->opt.timeout_s = 20;
  if (d->opt.time_cap_s <= 0) d->opt.time_cap_s = 0.5;
  if (d->opt.target_spread <= 0) d->opt.target_spread = 0.02;
  if (d->opt.min_reps <= 0) d->opt.min_reps = 5;
  if (d->opt.max_reps <= 0) d->opt.max_reps = 200;
  if (d->opt.max_reps < d->opt.min_reps) d->opt.max_reps = d->opt.min_reps;
  rt_status st;
  if (strncmp(spec, "model:", 6) == 0) {
    d->kind = DEVICE_MODEL;
    d->spec = gpu_spec_find(spec + 6);
    if (!d->spec) {
      free(d);
      rt_error_locate(err, "--device", NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID, "unknown GPU '%s' for the model device; known: %s",
                          spec + 6, gpu_spec_keys());
    }
    snprintf(d->label, sizeof d->label, "model:%s", d->spec->key);
    snprintf(d->arch, sizeof d->arch, "%s", d->spec->arch);
    d->sm_count = d->spec->sm_count;
    diag_ceilings_from_spec(d->spec, &d->ceil);
    d->have_ceil = 1;
    d->timing = TIMING_PREDICTED;
    st = RT_OK;
  } else if (strncmp(spec, "replay:", 7) == 0) {
    d->kind = DEVICE_REPLAY;
    d->timing = TIMING_REPLAYED;
    st = device_replay_open(d, spec + 7, err);
  } else if (strcmp(spec, "cuda") == 0 || strncmp(spec, "cuda:", 5) == 0) {
    d->kind = DEVICE_CUDA;
    d->timing = TIMING_MEASURED;
    char *end = NULL;
    d->ordinal = spec[4] ? (int)strtol(spec + 5, &end, 10) : 0;
    if (spec[4] && (end == spec + 5 || *end || d->ordinal < 0)) {
      free(d);
      rt_error_locate(err, "--device", NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID, "bad GPU index in '%s'; use cuda or cuda:N", spec);
    }
    st = device_cuda_open(d, err);
  } else {
    free(d);
    rt_error_locate(err, "--device", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_INVALID,
                        "unknown device '%s'; use cuda, cuda:N, model:GPU (%s) or replay:FILE",
                        spec, gpu_spec_keys());
  }
  if (st) {
    device_close(d);
    return st;
  }
  *out = d;
  return RT_OK;
}

void device_close(device *d) {
  if (!d) return;
  if (d->kind == DEVICE_CUDA) device_cuda_close(d);
  if (d->kind == DEVICE_REPLAY) device_replay_close(d);
  free(d);
}

device_kind device_get_kind(const device *d) { return d->kind; }
const char *device_label(const device *d) { return d->label; }
timing_kind device_timing(const device *d) { return d->timing; }
const char *device_arch(const device *d) { return d->arch[0] ? d->arch : NULL; }
const gpu_spec *device_spec(const device *d) { return d->spec; }
int device_sm_count(const device *d) { return d->sm_count; }
int device_ordinal(const device *d) { return d->kind == DEVICE_CUDA ? d->ordinal : 0; }

int device_ceilings(const device *d, diag_ceilings *out) {
  if (!d->have_ceil) {
    memset(out, 0, sizeof *out);
    return 0;
  }
  *out = d->ceil;
  return 1;
}

void device_set_ceilings(device *d, const diag_ceilings *measured) {
  d->ceil = *measured;
  d->have_ceil = 1;
}

rt_status device_begin(device *d, const char *family, const struct problem *p, rt_error *err) {
  snprintf(d->family, sizeof d->family, "%s", family ? family : "");
  if (d->kind == DEVICE_CUDA) return device_cuda_begin(d, family, p, err);
  return RT_OK;
}

rt_status device_evaluate(device *d, const device_candidate *c, candidate_result *out,
                          rt_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->template_name, sizeof out->template_name, "%s",
           c->template_name ? c->template_name : "");
  snprintf(out->config, sizeof out->config, "%s", c->config_text ? c->config_text : "");
  out->timing = d->timing;
  snprintf(out->device_name, sizeof out->device_name, "%.63s", d->label);
  out->verify_error = -1;
  out->flops = c->flops;
  out->dram_bytes = c->dram_bytes;
  out->facts = c->facts;
  switch (d->kind) {
  case DEVICE_MODEL: return model_evaluate(d, c, out, err);
  case DEVICE_REPLAY: return device_replay_evaluate(d, c, out, err);
  default: return device_cuda_evaluate(d, c, out, err);
  }
}

rt_status device_library_list(device *d, int max, char ids[][256], int *count, rt_error *err) {
  *count = 0;
  if (d->kind != DEVICE_CUDA) return RT_OK;
  return device_cuda_library_list(d, max, ids, count, err);
}

rt_status device_measure_ceilings(device *d, const char *dtype, diag_ceilings *out,
                                  rt_error *err) {
  if (d->kind != DEVICE_CUDA)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "only the cuda device measures ceilings");
  return device_cuda_measure_ceilings(d, dtype, out, err);
}

int device_worker_restarts(const device *d) {
  return d->kind == DEVICE_CUDA ? device_cuda_restarts(d) : 0;
}
