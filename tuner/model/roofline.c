/* roofline.c — roofs, L2-aware DRAM bytes, waves (see roofline.h). */
#include "tuner/model/roofline.h"

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

double roofline_dram_bytes(double bytes, double min_bytes, double concurrent) {
  if (!(min_bytes > 0) || min_bytes >= bytes) return bytes;
  return min_bytes + (bytes - min_bytes) / sqrt(concurrent > 1 ? concurrent : 1);
}

double roofline_candidate_dram(double bytes, double scratch_bytes, double min_bytes, double calibration,
                               int sm_count, const static_facts *facts) {
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
