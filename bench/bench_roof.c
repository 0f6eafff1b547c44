/* bench_roof.c — what "spend the budget where it can pay" would save on one tune: each template's
 * roofline bound (roofline_template_roof: its fewest executed FLOPs over its space on its path's
 * peak on the SMs its largest grid can fill, the problem's compulsory bytes on the bandwidth, one
 * launch), set against the incumbent
 * the run ended with, and the evaluations the run spent on templates whose bound cannot come
 * within 5 % of it (roofline_can_win), and on templates after their best reached its roof share
 * (roofline_at_roof).  The tune is `rooftune tune FAMILY` on the model device with the default
 * strategy and budget; the bound is computed from the manifests alone (no compile).  Those
 * evaluations are an upper bound on what the rule saves: in a run the incumbent is only known
 * once some template has been evaluated.
 *
 * usage: bench_roof FAMILY SHAPE DTYPE [--budget N] [--device model:GPU] [--stop FRACTION]
 *   FRACTION: the share of the bound at which a template's search stops (default: the spec
 *   ceilings' ROOFLINE_STOP_SPEC)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"
#include "tuner/model/roofline.h"
#include "tuner/template/catalog.h"
#include "tuner/template/manifest.h"
#include "tuner/tune.h"

/* The template's roof for the problem on gpu's spec-table ceilings, from its space's plans
 * (tune_template_survey, as tune computes it). */
static int template_bound(const char *name, const char *shape, const char *dtype, const gpu_spec *gpu,
                          template_roof *roof) {
  rt_error err = {0};
  manifest *m = NULL;
  if (catalog_find(NULL, name, &m, &err)) return -1;
  const family_ops *fam = family_find(manifest_family(m));
  problem p;
  rt_vars env;
  space *sp = NULL;
  tune_survey sv;
  rt_status s = fam ? fam->parse_shape(fam, shape, dtype, NULL, &p, &err) : RT_ERR_NOT_FOUND;
  if (!s) s = problem_env(fam, &p, arch_spec_find(gpu->arch), gpu, &env, &err);
  if (!s) s = manifest_build_space(m, &env, &sp, &err);
  roofline_ceilings c;
  roofline_from_spec(gpu, &c);
  if (!s) s = tune_template_survey(m, sp, &env, dtype, fam->min_bytes(fam, &p), &c, gpu, NULL, 0, NULL, &sv, &err);
  if (!s && !sv.planned) s = rt_error_set(&err, RT_ERR_INVALID, "no configuration could be planned");
  if (!s) *roof = sv.roof;
  if (s) fprintf(stderr, "%s: %s\n", name, err.text);
  space_free(sp);
  manifest_free(m);
  return s ? -1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: bench_roof FAMILY SHAPE DTYPE [--budget N] [--device model:GPU]\n");
    return 2;
  }
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = argv[1];
  o.shape = argv[2];
  o.dtype = argv[3];
  o.device = "model:h200";
  for (int i = 4; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--budget")) o.budget = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--device")) o.device = argv[i + 1];
  }
  const gpu_spec *gpu = gpu_spec_find(strchr(o.device, ':') ? strchr(o.device, ':') + 1 : "h200");
  if (!gpu) return 2;
  tune_report rep;
  rt_error err = {0};
  if (tune_run(&o, &rep, &err)) {
    fprintf(stderr, "%s\n", err.text);
    return 1;
  }
  double incumbent = rep.have_best ? rep.best.time_ms * 1e-3 : 0;
  printf("tune %s --shape %s --dtype %s on %s (%s), budget %ld: best %s at %.4g ms\n\n", o.target,
         o.shape, o.dtype, rep.device, timing_kind_name(rep.timing), rep.budget,
         rep.best.template_name, rep.best.time_ms);
  printf("| template | roof bound | bound by | its best | evaluations | can win (within 5 %%) | "
         "evaluations past its roof share |\n|---|---|---|---|---|---|---|\n");
  size_t total = 0, pruned = 0, past_roof = 0;
  double worst_loss = 0; /* how much slower a template's best was where its search would stop */
  double frac = roofline_stop_fraction(&(roofline_ceilings){.measured = 0});
  for (int i = 4; i + 1 < argc; i += 2)
    if (!strcmp(argv[i], "--stop")) frac = atof(argv[i + 1]);
  for (size_t i = 0; i < rep.nresults; i++) {
    const char *name = rep.results[i].template_name;
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++) seen = !strcmp(rep.results[j].template_name, name);
    if (seen) continue;
    template_roof roof;
    if (template_bound(name, o.shape, o.dtype, gpu, &roof)) continue;
    size_t evals = 0, after = 0;
    double best = INFINITY, at_stop = 0;
    for (size_t j = 0; j < rep.nresults; j++) {
      const candidate_result *r = &rep.results[j];
      if (strcmp(r->template_name, name)) continue;
      evals++;
      if (roofline_at_roof(&roof, best, frac)) {
        if (!after++) at_stop = best;
      }
      if (r->status == RT_OK && r->time_ms * 1e-3 < best) best = r->time_ms * 1e-3;
    }
    int win = roofline_can_win(&roof, incumbent, 0.05);
    total += evals;
    pruned += win ? 0 : evals;
    past_roof += win ? after : 0;
    if (win && after && at_stop > best * (1 + 1e-12) && at_stop / best - 1 > worst_loss)
      worst_loss = at_stop / best - 1;
    printf("| %s | %.4g ms | %s | %.4g ms | %zu | %s | %zu |\n", name, roof.seconds * 1e3,
           roof.memory_bound ? "bytes" : "FLOPs", best * 1e3, evals, win ? "yes" : "no", after);
  }
  printf("\n%zu of %zu evaluations went to templates whose bound cannot come within 5 %% of the "
         "incumbent; %zu more came after a template's best reached %.0f %% of its bound; stopping "
         "there would have left the best %.1f %% slower than the run's\n", pruned, total, past_roof,
         100 * frac, 100 * worst_loss);
  tune_report_free(&rep);
  return 0;
}
