/* device_model.c — the model device: predicts a candidate's time from its plan and static
 * facts with the roofline arithmetic the diagnosis uses (model/roofline.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tuner/device/device_impl.h"

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
 *               and never less than bytes / L2 bandwidth (ROOFLINE_L2_BW_FACTOR x DRAM): every
 *               re-read still passes through L2, which is what makes small tiles slow
 *   wave_factor = full / waves (roofline_waves): the last wave's idle SMs cost as much as busy
 *               ones; a persistent grid (launch.work) counts rounds of its resident blocks
 *   spill_factor = 1 + MODEL_SPILL_COST * min(1, spill bytes / 256)
 *   dram is multiplied by the template's calibration on this GPU when one was measured
 *   (device_candidate.dram_calibration: measured DRAM bytes / these bytes, from CUPTI)
 */
#define MODEL_COMPUTE_EFF  0.80 /* cuBLAS reaches ~80 % of the dense datasheet (790/989 on H200) */
#define MODEL_OVERLAP      0.15 /* compute and memory never overlap perfectly */
#define MODEL_DRAM_LATENCY 700e-9 /* seconds from a global load to its data (HBM, loaded) */
#define MODEL_WARPS_TC \
  2.5                        /* resident warps per SM at which tensor-core issue reaches
                                      1 - 1/e of its rate (4 warps: 80 %, 8 warps: 96 %) */
#define MODEL_WARPS_SIMT 8.0 /* the same for fp32 FMA (16 warps: 86 %, 32 warps: 98 %) */
#define MODEL_SPILL_COST 0.5 /* slowdown at 256 spilled bytes per thread */

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
  double compute_eff =
      1.0 - exp(-warps / (c->path == PATH_SIMT_F32 ? MODEL_WARPS_SIMT : MODEL_WARPS_TC));
  const candidate_plan *pl = c->plan;
  double staging = pl->inflight_bytes > 0
                       ? pl->inflight_bytes
                       : fmax((double)f->smem_static + f->smem_dynamic, 16.0 * threads);
  double inflight = f->blocks_per_sm * staging;
  double needed = gpu->dram_bw_achievable / gpu->sm_count * MODEL_DRAM_LATENCY;
  double memory_eff = fmin(1.0, inflight / needed);
  /* a calibration measured on this GPU scales the formula's DRAM bytes (the L2 traffic is the
   * formula's: a re-read that L2 serves is still a load through L2); scratch (split partials)
   * is written and read back whole: no shared re-read L2 absorbs */
  double dram = roofline_candidate_dram(pl->dram_bytes, pl->scratch_bytes, c->min_bytes,
                                        c->dram_calibration, gpu->sm_count, f);
  double tc = fmax(pl->flops, pl->executed_flops) / (peak * compute_eff);
  double tm =
      fmax(dram / gpu->dram_bw_achievable, (pl->dram_bytes + pl->scratch_bytes) /
                                               (ROOFLINE_L2_BW_FACTOR * gpu->dram_bw_achievable)) /
      memory_eff;
  double wave_factor = 1.0, waves, full;
  roofline_waves(f->grid_blocks, f->work_blocks, (double)gpu->sm_count * f->blocks_per_sm, &waves,
                 &full);
  if (waves > 0) wave_factor = full / waves;
  double spill = f->spill_stores + f->spill_loads;
  double t = wave_factor * (fmax(tc, tm) + MODEL_OVERLAP * fmin(tc, tm));
  t *= 1.0 + MODEL_SPILL_COST * fmin(1.0, spill / 256.0);
  *seconds = t + gpu->launch_overhead_s;
  if (!isfinite(*seconds) || *seconds <= 0)
    return rt_error_set(err, RT_ERR_INVALID, "model: no time for %s (flops %g, bytes %g)",
                        pl->config[0] ? pl->config : "candidate", pl->flops, pl->dram_bytes);
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

/* A GPU of the spec table. */
static rt_status model_check_arg(const char *gpu, rt_error *err) {
  if (gpu_spec_find(gpu)) return RT_OK;
  return rt_error_set(err, RT_ERR_INVALID, "unknown GPU '%s' for the model device; known: %s", gpu,
                      gpu_spec_keys());
}

static rt_status model_open(device *d, const char *gpu, rt_error *err) {
  d->spec = gpu_spec_find(gpu); /* checked */
  snprintf(d->label, sizeof d->label, "model:%s", d->spec->key);
  snprintf(d->arch, sizeof d->arch, "%s", d->spec->arch);
  d->sm_count = d->spec->sm_count;
  roofline_from_spec(d->spec, &d->ceil);
  d->have_ceil = 1;
  return RT_OK;
}

const device_ops device_model_ops = {
    .kind = {.prefix = "model:",
             .syntax = "model:GPU",
             .choices = gpu_spec_keys,
             .caps = 0,
             .timing = TIMING_PREDICTED},
    .check = model_check_arg,
    .gpu = gpu_spec_find,
    .open = model_open,
    .evaluate = model_evaluate,
};
