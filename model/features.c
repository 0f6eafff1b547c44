/* features.c — a configuration's pre-run facts as surrogate inputs (see features.h). */
#include "model/features.h"

#include <math.h>

#include "model/roofline.h"

void features_fill(const feature_input *in, double out[FEATURE_COUNT]) {
  for (int f = 0; f < FEATURE_COUNT; f++) out[f] = NAN;
  const static_facts *s = in->facts;
  if (s && s->threads_per_block > 0) {
    out[FEATURE_OCCUPANCY] = s->occupancy;
    out[FEATURE_REGISTERS] = log2(1.0 + s->registers);
    out[FEATURE_SMEM] = log2(1.0 + s->smem_static + s->smem_dynamic);
    out[FEATURE_THREADS] = log2((double)s->threads_per_block);
    out[FEATURE_LOCAL] = log2(1.0 + s->stack_bytes + s->spill_stores + s->spill_loads);
    if (in->sm_count > 0 && s->blocks_per_sm > 0 && s->grid_blocks > 0) {
      double waves, full;
      long long work = s->work_blocks > s->grid_blocks ? s->work_blocks : s->grid_blocks;
      roofline_waves(s->grid_blocks, work, (double)in->sm_count * s->blocks_per_sm, &waves, &full);
      if (full > 0) out[FEATURE_WAVES] = waves / full;
    }
  }
  double t = 0;
  if (in->executed_flops > 0 && in->peak_flops > 0) t = in->executed_flops / in->peak_flops;
  if (in->dram_bytes > 0 && in->bw > 0 && in->dram_bytes / in->bw > t) t = in->dram_bytes / in->bw;
  if (t > 0) out[FEATURE_ROOF] = log(t);
}

const char *feature_what(feature_id f) {
  static const char *const what[] = {
#define FEATURE_WHAT(id, w) w,
      FEATURE_TABLE(FEATURE_WHAT)
#undef FEATURE_WHAT
  };
  return f >= 0 && f < FEATURE_COUNT ? what[f] : "";
}
