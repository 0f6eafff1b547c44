/* recorded.c — recorded configurations diagnosed from their counters (see recorded.h). */
#include "tuner/model/recorded.h"

#include <math.h>
#include <string.h>

#include "tuner/model/diagnose.h"
#include "tuner/model/features.h"
#include "tuner/model/occupancy.h"
#include "tuner/model/roofline.h"

rt_status recorded_diagnose(candidate_result *r, const gpu_spec *gpu, const param_roles *roles,
                            const space *sp, size_t idx, rt_error *err) {
  if (r->status != RT_OK || !r->counters.measured || !(r->time_ms > 0)) return RT_OK;
  const arch_spec *arch = gpu ? arch_spec_find(gpu->arch) : NULL;
  if (!arch)
    return rt_error_set(err, RT_ERR_INVALID, "no spec-table GPU to hold the recording against");
  if (r->facts.threads_per_block > 0 && r->facts.blocks_per_sm == 0) {
    rt_status rc = occupancy_fill_facts(arch, &r->facts, err);
    if (rc) return rc;
  }
  /* the configuration's values, for levers that stay inside the recorded space */
  rt_vars config;
  rt_vars_clear(&config);
  int ok = sp && idx < space_size(sp);
  for (int p = 0; ok && p < space_nparams(sp); p++)
    ok = rt_vars_set(&config, space_param_at(sp, p)->name, space_value(sp, idx, p)) == RT_OK;
  param_roles guessed;
  if (!roles && sp) {
    const char *names[64];
    int np = space_nparams(sp) < 64 ? space_nparams(sp) : 64;
    for (int p = 0; p < np; p++) names[p] = space_param_at(sp, p)->name;
    memset(&guessed, 0, sizeof guessed);
    roles_guess(&guessed, names, np);
    roles = &guessed;
  }
  roofline_ceilings ceil;
  roofline_from_spec(gpu, &ceil);
  if (!(r->flops > 0)) r->flops = 2.0 * r->counters.fp32_inst;
  r->dram_bytes = r->counters.dram_read_bytes + r->counters.dram_write_bytes;
  diag_input in;
  memset(&in, 0, sizeof in);
  in.flops = r->flops;
  in.dram_bytes = r->dram_bytes;
  in.l2_bytes = r->counters.l2_bytes;
  in.time_s = r->time_ms * 1e-3;
  in.facts = r->facts;
  /* a foreign kernel on the fp32 SIMT roof; a rooftune export's on its precision's path, at the
   * full tensor rate (whether it used wgmma the recording does not say: the higher roof) */
  in.path = !r->precision[0] || !strcmp(r->precision, "fp32")
                ? PATH_SIMT_F32
                : roofline_path_for_dtype(r->precision, 1);
  in.wgmma = in.path == PATH_TC_F16;
  in.roles = roles;
  in.config = ok ? &config : NULL;
  in.domains = ok ? sp : NULL;
  in.measured = &r->counters;
  return diagnose(&in, &ceil, &r->diag, err);
}

void recorded_features(const static_facts *facts, const gpu_spec *gpu, double executed_flops,
                       double dram_bytes, double *out) {
  static_facts f = *facts;
  const arch_spec *arch = gpu ? arch_spec_find(gpu->arch) : NULL;
  if (arch && f.threads_per_block > 0 && f.blocks_per_sm == 0 &&
      occupancy_fill_facts(arch, &f, NULL) != RT_OK)
    f.threads_per_block = 0;
  roofline_ceilings c;
  roofline_from_spec(gpu, &c);
  feature_input in = {.facts = &f,
                      .sm_count = gpu ? gpu->sm_count : 0,
                      .executed_flops = executed_flops,
                      .dram_bytes = dram_bytes,
                      .peak_flops = roofline_path_peak(&c, PATH_SIMT_F32, 0),
                      .bw = c.bw};
  features_fill(&in, out);
}
