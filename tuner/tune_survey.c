/* tune_survey.c — what a template's space says before anything is compiled or run (tune.h):
 * one pass over its configurations' plans (manifest_plan) gives its roof bound and its roof
 * (the fewest FLOPs any configuration executes, the largest grid any launches, the problem's
 * compulsory bytes, its compute path: roofline_template_roof) for the budget across templates
 * (search/budget.h), and each configuration's pre-run features (threads, dynamic shared memory,
 * waves, roofline bound: model/features.h) for strategies that weigh them (steer). */
#include <math.h>
#include <string.h>

#include "model/features.h"
#include "model/occupancy.h"
#include "tuner/tune_impl.h"

/* Configuration pl's pre-run features: what its plan says (threads, dynamic shared memory, the
 * grid) with the occupancy the block and shared memory allow on arch (registers unknown until it
 * compiles), its waves, and its own roofline bound; registers, occupancy and local memory NaN. */
static void plan_features(const candidate_plan *pl, const arch_spec *arch,
                          const roofline_ceilings *c, compute_path path, int wgmma,
                          double min_bytes, double calibration, double *row) {
  static_facts f;
  tune_plan_facts(pl, NULL, &f);
  if (arch && occupancy_fill_facts(arch, &f, NULL) != RT_OK) f.blocks_per_sm = 0;
  double dram = roofline_candidate_dram(pl->dram_bytes, pl->scratch_bytes, min_bytes, calibration,
                                        c->sm_count, &f);
  feature_input in = {.facts = &f,
                      .sm_count = c->sm_count,
                      .executed_flops = pl->executed_flops,
                      .dram_bytes = dram,
                      .peak_flops = roofline_path_peak(c, path, wgmma),
                      .bw = c->bw};
  features_fill(&in, row);
  row[FEATURE_OCCUPANCY] = row[FEATURE_REGISTERS] = row[FEATURE_LOCAL] = NAN; /* the compiler's */
}

rt_status tune_template_survey(const manifest *m, const space *sp, const rt_vars *env,
                               const char *dtype, double min_bytes, const roofline_ceilings *run,
                               const gpu_spec *gpu, const char *arch, double calibration,
                               double *features, tune_survey *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  int wgmma = 0;
  compute_path path = tune_template_path(m, dtype, &wgmma);
  const arch_spec *as = arch_spec_find(arch ? arch : gpu ? gpu->arch : "");
  double least = INFINITY;
  long long most = 0;
  size_t n = space_size(sp);
  for (size_t i = 0; i < n; i++) {
    double *row = features ? features + i * FEATURE_COUNT : NULL;
    candidate_plan pl;
    if (manifest_plan(m, sp, i, env, &pl, NULL) !=
        RT_OK) { /* it fails when evaluated, and says why */
      for (int f = 0; row && f < FEATURE_COUNT; f++) row[f] = NAN;
      continue;
    }
    out->planned++;
    if (pl.executed_flops < least) least = pl.executed_flops;
    long long g = (long long)pl.grid[0] * pl.grid[1] * pl.grid[2];
    if (g > most) most = g;
    if (row) plan_features(&pl, as, run, path, wgmma, min_bytes, calibration, row);
  }
  if (!out->planned) return RT_OK; /* no plan: no bound (every configuration fails) */
  if (!(least >= 0)) least = 0;
  /* the roof on the run's ceilings: what its configurations can come near */
  rt_status rc = roofline_template_roof(least, min_bytes, most, path, wgmma, run, &out->roof, err);
  if (rc) return rc;
  /* the bound on the datasheet's: what none of them beats */
  roofline_ceilings hard;
  if (roofline_bound_ceilings(run, gpu, &hard) &&
      (rc = roofline_template_roof(least, min_bytes, most, path, wgmma, &hard, &out->bound, err)))
    return rc;
  return RT_OK;
}
