/* bench_roof.c — what the roof rules did on one tune (`rooftune tune FAMILY` on the model device,
 * the default strategy and budget, the rules on as tune applies them: search/budget.h).  Per
 * template: its bound (no configuration of it runs faster: its fewest executed FLOPs over its
 * space on its path's peak, on the SMs its largest grid can fill, the problem's compulsory bytes
 * on the copy bandwidth, datasheet ceilings, no launch) and its roof (the same with a launch, the
 * time its search stops near), set against the incumbent the run ended with: the evaluations the
 * run still spent on templates whose bound cannot come within 5 % of it (roofline_can_win; the
 * first pass's share, spent before a faster template was known), and those after a template's
 * best reached its roof share (roofline_at_roof).  bench_steer's family set measures, over seeds,
 * what the rules save against the even split and what that costs in final quality.
 *
 * usage: bench_roof FAMILY SHAPE DTYPE [--budget N] [--device model:GPU] [--stop FRACTION]
 *   FRACTION: the share of its roof at which a template's search stops (default: the spec
 *   ceilings' ROOFLINE_STOP_SPEC)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/budget.h"
#include "model/roofline.h"
#include "tuner/tune.h"

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: bench_roof FAMILY SHAPE DTYPE [--budget N] [--device model:GPU] [--stop "
            "FRACTION]\n");
    return 2;
  }
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = argv[1];
  o.shape = argv[2];
  o.dtype = argv[3];
  o.device = "model:h200";
  for (int i = 4; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--budget"))
      o.budget = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--device"))
      o.device = argv[i + 1];
  }
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
  printf(
      "| template | roof bound | roof | bound by | its best | evaluations | outcome | can win "
      "(within 5 %%) | "
      "evaluations past its roof share |\n|---|---|---|---|---|---|---|---|---|\n");
  long total = 0, pruned = 0, past_roof = 0;
  double worst_loss = 0; /* how much slower a template's best was where its search would stop */
  double frac =
      rep.roof_rules ? rep.roof_stop : roofline_stop_fraction(&(roofline_ceilings){.measured = 0});
  for (int i = 4; i + 1 < argc; i += 2)
    if (!strcmp(argv[i], "--stop")) frac = atof(argv[i + 1]);
  for (size_t t = 0; t < rep.ntmpl; t++) { /* tune's line per template, in the order searched */
    const tune_template_report *tr = &rep.tmpl[t];
    template_roof bound = {.seconds = tr->bound_ms * 1e-3}, roof = {.seconds = tr->roof_ms * 1e-3};
    long after = 0;
    double best = INFINITY, at_stop = 0;
    for (size_t j = 0; j < rep.nresults; j++) {
      const candidate_result *r = &rep.results[j];
      if (strcmp(r->template_name, tr->name)) continue;
      if (roofline_at_roof(&roof, best, frac) && !after++) at_stop = best;
      if (r->status == RT_OK && r->time_ms * 1e-3 < best) best = r->time_ms * 1e-3;
    }
    int win = !(tr->bound_ms > 0) || roofline_can_win(&bound, incumbent, BUDGET_SLACK);
    total += tr->evaluated;
    pruned += win ? 0 : tr->evaluated;
    past_roof += win ? after : 0;
    if (win && after && at_stop > best * (1 + 1e-12) && at_stop / best - 1 > worst_loss)
      worst_loss = at_stop / best - 1;
    printf("| %s | %.4g ms | %.4g ms | %s | ", tr->name, tr->bound_ms, tr->roof_ms,
           tr->bound_ms > 0 ? (tr->bound_by_bytes ? "bytes" : "FLOPs") : "-");
    if (tr->best_ms > 0)
      printf("%.4g ms", tr->best_ms);
    else
      printf("-");
    printf(" | %ld | %s | %s | %ld |\n", tr->evaluated, tr->outcome, win ? "yes" : "no", after);
  }
  printf(
      "\nroof rules %s; %ld of %ld evaluations went to templates whose bound cannot come within 5 "
      "%% of the "
      "incumbent; %ld more came after a template's best reached %.0f %% of its roof; stopping "
      "there would have "
      "left the best %.1f %% slower than the run's; %ld of the budget's %ld evaluations not "
      "spent\n",
      rep.roof_rules ? "on" : "off", pruned, total, past_roof, 100 * frac, 100 * worst_loss,
      rep.roof_unspent, rep.budget);
  tune_report_free(&rep);
  return 0;
}
