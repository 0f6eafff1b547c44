/* roofline.c — roofs, L2-aware DRAM bytes, waves (see roofline.h). */
#include "model/roofline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void roofline_from_spec(const gpu_spec *gpu, roofline_ceilings *out) {
  memset(out, 0, sizeof *out);
  if (!gpu) return;
  out->bw = gpu->dram_bw_achievable;
  for (int p = 0; p < PATH_COUNT; p++) out->flops[p] = gpu->peak_flops[p];
  out->mma_sync_fraction = gpu->mma_sync_fraction;
  out->launch_overhead_s = gpu->launch_overhead_s;
  out->l2_bw = ROOFLINE_L2_BW_FACTOR * gpu->dram_bw_achievable;
  out->sm_count = gpu->sm_count;
  out->measured = 0;
  snprintf(out->gpu, sizeof out->gpu, "%s (spec)", gpu->name);
}

const char *roofline_bw_basis(const roofline_ceilings *c, const gpu_spec *gpu, char *buf,
                              size_t size) {
  if (c->measured)
    snprintf(buf, size, "measured here");
  else if (gpu &&
           fabs(gpu->dram_bw_achievable - 0.9 * gpu->dram_bw_spec) > 1e-3 * gpu->dram_bw_spec)
    snprintf(buf, size, "measured on an %s", gpu->name);
  else
    snprintf(buf, size, "90 %% of the datasheet");
  return buf;
}

void roofline_describe(const roofline_ceilings *c, const gpu_spec *gpu, char *buf, size_t size) {
  char basis[96];
  int name = (int)strcspn(c->gpu, "("); /* "NVIDIA H200 (spec)": the name; the basis follows */
  while (name > 0 && c->gpu[name - 1] == ' ') name--;
  int n = snprintf(buf, size, "%.*s: DRAM %.3g TB/s copy bandwidth (%s), FLOP/s %s", name, c->gpu,
                   c->bw / 1e12, roofline_bw_basis(c, gpu, basis, sizeof basis),
                   c->measured ? "measured here" : "datasheet");
  if (gpu && n > 0 && (size_t)n < size)
    snprintf(buf + n, size - (size_t)n, "; roof bounds on the %.3g TB/s datasheet bandwidth",
             gpu->dram_bw_spec / 1e12);
}

double roofline_dram_bytes(double bytes, double min_bytes, double concurrent) {
  if (!(min_bytes > 0) || min_bytes >= bytes) return bytes;
  return min_bytes + (bytes - min_bytes) / sqrt(concurrent > 1 ? concurrent : 1);
}

double roofline_candidate_dram(double bytes, double scratch_bytes, double min_bytes,
                               double calibration, int sm_count, const static_facts *facts) {
  double concurrent = roofline_concurrent(sm_count, facts->blocks_per_sm, facts->grid_blocks);
  double dram = roofline_dram_bytes(bytes, min_bytes, concurrent);
  if (calibration > 0) dram *= calibration; /* L2's traffic stays the formula's */
  return dram + scratch_bytes;
}

void roofline_waves(long long grid, long long work, double capacity, double *waves, double *full) {
  *waves = *full = 0;
  if (grid <= 0 || !(capacity > 0)) return;
  if (work < grid) work = grid;
  double resident = fmin((double)grid, capacity);
  *waves = (double)work / capacity;
  *full = ceil((double)work / resident);
}

compute_path roofline_path_for_dtype(const char *dtype, int tensor_cores) {
  if (dtype && (strcmp(dtype, "f16") == 0 || strcmp(dtype, "bf16") == 0)) return PATH_TC_F16;
  if (dtype && strcmp(dtype, "tf32") == 0) return PATH_TC_TF32; /* tf32 products: tensor cores */
  if (dtype && (strcmp(dtype, "e4m3") == 0 || strcmp(dtype, "e5m2") == 0)) return PATH_TC_F8;
  return tensor_cores ? PATH_TC_TF32 : PATH_SIMT_F32;
}

double roofline_concurrent(int sm_count, int blocks_per_sm, long long grid_blocks) {
  double c = (double)sm_count * blocks_per_sm;
  if (grid_blocks > 0 && grid_blocks < c) c = (double)grid_blocks;
  return c;
}

double roofline_path_peak(const roofline_ceilings *c, compute_path path, int wgmma) {
  if (!c || path < 0 || path >= PATH_COUNT) return 0;
  double peak = c->flops[path];
  if (path == PATH_TC_F16 && !wgmma && c->mma_sync_fraction > 0) peak *= c->mma_sync_fraction;
  return peak > 0 ? peak : 0;
}

rt_status roofline_template_roof(double min_executed_flops, double min_bytes, long long max_blocks,
                                 compute_path path, int wgmma, const roofline_ceilings *c,
                                 template_roof *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  if (!(min_executed_flops >= 0) || !(min_bytes >= 0) || !isfinite(min_executed_flops) ||
      !isfinite(min_bytes) || (min_executed_flops == 0 && min_bytes == 0))
    return rt_error_set(err, RT_ERR_INVALID,
                        "a template's roof needs FLOPs or bytes >= 0 (not both "
                        "0), got %g FLOPs and %g bytes",
                        min_executed_flops, min_bytes);
  double peak = roofline_path_peak(c, path, wgmma);
  if (min_executed_flops > 0 && !(peak > 0))
    return rt_error_set(err, RT_ERR_INVALID, "no compute ceiling for path %d on %s", (int)path,
                        c && c->gpu[0] ? c->gpu : "this device");
  if (min_bytes > 0 && !(c && c->bw > 0))
    return rt_error_set(err, RT_ERR_INVALID, "no bandwidth ceiling on %s",
                        c && c->gpu[0] ? c->gpu : "this device");
  double share = 1;
  if (max_blocks > 0 && c->sm_count > 0 && max_blocks < c->sm_count)
    share = (double)max_blocks / c->sm_count;
  out->compute_s = min_executed_flops > 0 ? min_executed_flops / (peak * share) : 0;
  out->memory_s = min_bytes > 0 ? min_bytes / c->bw : 0;
  out->launch_s = c->launch_overhead_s > 0 ? c->launch_overhead_s : 0;
  out->memory_bound = out->memory_s >= out->compute_s;
  out->seconds = fmax(out->compute_s, out->memory_s) + out->launch_s;
  return RT_OK;
}

int roofline_bound_ceilings(const roofline_ceilings *run, const gpu_spec *gpu,
                            roofline_ceilings *out) {
  memset(out, 0, sizeof *out);
  if (!gpu) return 0;
  if (run)
    *out = *run;
  else
    roofline_from_spec(gpu, out);
  out->bw = fmax(out->bw, fmax(gpu->dram_bw_spec, gpu->dram_bw_achievable));
  for (int p = 0; p < PATH_COUNT; p++) out->flops[p] = fmax(out->flops[p], gpu->peak_flops[p]);
  if (!(out->mma_sync_fraction > 0)) out->mma_sync_fraction = gpu->mma_sync_fraction;
  if (!(out->sm_count > 0)) out->sm_count = gpu->sm_count;
  out->launch_overhead_s = 0;
  snprintf(out->gpu, sizeof out->gpu, "%s (datasheet bound)", gpu->name);
  return 1;
}

int roofline_can_win(const template_roof *roof, double incumbent_s, double slack) {
  if (!(incumbent_s > 0)) return 1;
  return roof->seconds <= incumbent_s * (1 + (slack > 0 ? slack : 0));
}

double roofline_stop_fraction(const roofline_ceilings *c) {
  return c && c->measured ? ROOFLINE_STOP_MEASURED : ROOFLINE_STOP_SPEC;
}

int roofline_at_roof(const template_roof *roof, double best_s, double fraction) {
  if (!(best_s > 0) || !(roof->seconds > 0)) return 0;
  return roof->seconds / best_s >= fraction;
}
