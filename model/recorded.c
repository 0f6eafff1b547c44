/* recorded.c — recorded configurations diagnosed from their counters (see recorded.h). */
#include "model/recorded.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/diagnose.h"
#include "model/features.h"
#include "model/occupancy.h"
#include "model/roofline.h"

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

/* ---- counters a GPU cannot have counted ---- */

/* Appends the KTT metrics that feed hw_counters field FIELD to buf, joined by " + ". */
static void metric_names(const char *field, char *buf, size_t size) {
  size_t n = 0, k;
  const ktfile_metric *t = ktfile_metric_table(&n);
  for (k = 0; k < n; k++)
    if (t[k].field && !strcmp(t[k].field, field)) {
      size_t l = strlen(buf);
      snprintf(buf + l, size - l, "%s%s", l ? " + " : "", t[k].name);
    }
}

/* The rates a configuration's counters say it ran at, each against the fastest GPU of the spec
 * table by RECORDED_RATE_MARGIN: bytes a second through DRAM, L2 and local memory, fp32
 * instructions a second as FLOPs.  Returns the first field over its limit (NULL: none), with
 * its rate and limit. */
static const char *over_peak(const hw_counters *c, double time_s, double *rate, double *limit) {
  size_t n = 0;
  const gpu_spec *all = gpu_spec_all(&n);
  double bw = 0, flops = 0;
  for (size_t i = 0; i < n; i++) {
    roofline_ceilings ceil;
    roofline_from_spec(&all[i], &ceil);
    if (ceil.bw > bw) bw = ceil.bw;
    if (ceil.l2_bw > bw) bw = ceil.l2_bw;
    for (int p = 0; p < PATH_COUNT; p++)
      if (ceil.flops[p] > flops) flops = ceil.flops[p];
  }
  const struct {
    const char *field;
    double value, peak;
  } rates[] = {
      {"dram_read_bytes", c->dram_read_bytes + c->dram_write_bytes, bw},
      {"l2_bytes", c->l2_bytes, bw},
      {"local_bytes", c->local_bytes, bw},
      {"fp32_inst", 2.0 * c->fp32_inst, flops},
  };
  for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
    *rate = rates[i].value / time_s;
    *limit = RECORDED_RATE_MARGIN * rates[i].peak;
    if (!(*rate <= *limit)) return rates[i].field;
  }
  return NULL;
}

rt_status recorded_check_counters(const ktfile *kf, rt_error *err) {
  for (size_t i = 0; kf->counters && i < kf->configs; i++) {
    const hw_counters *c = &kf->counters[i];
    if (!c->measured || kf->failure[i] || !(kf->time_ms[i] > 0)) continue;
    double rate = 0, limit = 0;
    const char *field = over_peak(c, kf->time_ms[i] * 1e-3, &rate, &limit);
    if (!field) continue;
    char names[400] = "", config[200], row[48] = "";
    metric_names(field, names, sizeof names);
    if (!strcmp(field, "dram_read_bytes")) metric_names("dram_write_bytes", names, sizeof names);
    space_format_config(kf->space, i, config, sizeof config);
    if (kf->format == KTFILE_KTT) snprintf(row, sizeof row, "Results[%zu], ", i);
    int bytes = strcmp(field, "fp32_inst") != 0;
    rt_error_set(err, RT_ERR_PARSE,
                 "%sconfiguration %.200s: counter %.300s says %.3g %s in %.3g ms, %.3g %s, over "
                 "%g x the fastest GPU the spec table holds (%.3g %s): not a count a GPU made",
                 row, config, names, rate * kf->time_ms[i] * 1e-3, bytes ? "bytes" : "FLOPs",
                 kf->time_ms[i], bytes ? rate * 1e-9 : rate * 1e-12, bytes ? "GB/s" : "TFLOP/s",
                 (double)RECORDED_RATE_MARGIN, bytes ? limit * 1e-9 : limit * 1e-12,
                 bytes ? "GB/s" : "TFLOP/s");
    rt_error_locate(err, kf->path, NULL, 0, 0);
    return RT_ERR_PARSE;
  }
  return RT_OK;
}
