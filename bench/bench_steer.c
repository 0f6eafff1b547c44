/* bench_steer.c — does the diagnosis steer the search better than a plain surrogate?  Every
 * strategy on four sets of brute-forced spaces, 30 seeds each:
 *
 *   (a) the recordings that carry hardware counters (KTT results files, ktt_*.json.gz in the
 *       spaces folder): each configuration replays with its measured counters, diagnosed on the
 *       recorded GPU's roofs (recorded.h), and with its compile facts (registers, shared memory,
 *       block, grid: features.h), which the strategy learns once it proposes the configuration
 *       (the strategy core reveals them at ask), as a tune compiling what it proposes would;
 *   (b) rooftune's own templates on the model device (model:h200: predicted times, every
 *       candidate compiled by NVRTC for its ptxas facts and diagnosed): GEMM, prefill attention
 *       and decode problems, each space evaluated whole first, as `rooftune tune TEMPLATE
 *       --strategy brute_force` would (the results are kept in a database in the cache folder,
 *       so a rerun does not compile again);
 *   (c) the public spaces without counters (Kernel Tuner cache files): no diagnosis, no facts;
 *   (f) (b) as a user tunes a family (`rooftune tune FAMILY`, bench/model_cases.h's
 *       family_cases): every template tune lines up, the family's optimum as the target, each
 *       strategy through the budget across templates (search/budget.h) as tune spends it, and
 *       with "-even" through the even split in the lineup's order that tune made before the roof
 *       rules: the evaluations the rules leave unspent at budgets 16 and 32, and the quality.
 *
 * Each strategy is asked for configurations and told each one's time (and, where the set has
 * them, its diagnosis); the figures are those of `rooftune replay`: evaluations until a
 * configuration within 5 % of the space's optimum (median over the seeds; a miss counts as twice
 * the budget of 1000), the score random search's exact expectation (V+1)/(k+1) over that median
 * (higher is better), its geometric mean over a set and its ratio to bayes' — and at users'
 * budgets, the fraction of the optimum reached after 16 and after 32 evaluations (the optimum's
 * time over the best time found, median over the seeds, 0 when nothing ran; geometric mean over
 * a set).  `steer` is also run with its inputs withheld ("steer-blind": no diagnoses, no facts),
 * which separates what the diagnosis brings from what steer's search does on its own.
 *
 * The times of (b) are the model's, not a GPU's, and the model's times are a function of the
 * very facts steer takes as inputs (occupancy, waves, roofline bound): (b) says how well the
 * search uses them when they are the whole truth; (a) says it on real hardware.
 *
 * usage: bench_steer [--spaces DIR] [--seeds N] [--set abcf] [--strategies a,b,...]
 *                    [--family-strategies a,b-even,...] [--stop FRACTION] [--cases K]
 *   DIR: the brute-forced spaces (default ../shared/data/spaces beside the checkout);
 *   FRACTION: the share of its roof at which a template stops in (f) (default: the model
 *   device's, ROOFLINE_STOP_SPEC); K: only the first K problems of (b) (model_cases.h), as
 *   their brute-forced spaces take minutes each to build on a small host.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/family.h"
#include "search/budget.h"
#include "search/replay.h"
#include "search/strategy.h"
#include "model/features.h"
#include "model/recorded.h"
#include "model/roofline.h"
#include "template/catalog.h"
#include "template/ktfile.h"
#include "template/manifest.h"
#include "tuner/tune.h"
#include "model_cases.h"

enum { BUDGET = 1000, MAX_SPACES = 64, MAX_STRATEGIES = 12 };

/* One brute-forced space with everything a strategy may be told. */
typedef struct bench_space {
  char name[96];
  char set;  /* 'a', 'b' or 'c' */
  space *sp; /* owned */
  size_t n;
  rt_status *status; /* per configuration */
  double *time;      /* ms, NAN when failed */
  diagnosis *diag;   /* per configuration; NULL: none */
  double *feat;      /* n x FEATURE_COUNT; NULL: none */
  double optimum;
  size_t valid, within;
} bench_space;

/* What one strategy did on one space. */
typedef struct bench_score {
  double median, score, frac16, frac32;
} bench_score;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void space_stats(bench_space *b) {
  b->optimum = INFINITY;
  b->valid = b->within = 0;
  for (size_t i = 0; i < b->n; i++)
    if (b->status[i] == RT_OK) {
      b->valid++;
      if (b->time[i] < b->optimum) b->optimum = b->time[i];
    }
  for (size_t i = 0; i < b->n; i++)
    b->within += b->status[i] == RT_OK && b->time[i] <= b->optimum * 1.05;
}

static int alloc_space(bench_space *b, size_t n, int with_diag, int with_feat) {
  b->n = n;
  b->status = calloc(n, sizeof *b->status);
  b->time = malloc(n * sizeof *b->time);
  b->diag = with_diag ? calloc(n, sizeof *b->diag) : NULL;
  b->feat = with_feat ? malloc(n * FEATURE_COUNT * sizeof *b->feat) : NULL;
  if (!b->status || !b->time || (with_diag && !b->diag) || (with_feat && !b->feat)) return -1;
  for (size_t i = 0; i < n; i++) {
    b->status[i] = RT_ERR_INVALID;
    b->time[i] = NAN;
    for (int f = 0; with_feat && f < FEATURE_COUNT; f++) b->feat[i * FEATURE_COUNT + f] = NAN;
  }
  return 0;
}

static void free_space(bench_space *b) {
  space_free(b->sp);
  free(b->status);
  free(b->time);
  free(b->diag);
  free(b->feat);
  memset(b, 0, sizeof *b);
}

/* ---- (a) and (c): recorded files ---- */

static int load_recording(const char *path, bench_space *b) {
  ktfile *kf = NULL;
  rt_error err = {0};
  if (ktfile_load(path, &kf, &err)) {
    fprintf(stderr, "%s: %s\n", path, err.text);
    return -1;
  }
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  snprintf(b->name, sizeof b->name, "%.*s", (int)strcspn(base, "."), base);
  const gpu_spec *gpu = gpu_spec_match_name(kf->device_name);
  int counted = kf->counters && gpu;
  b->set = counted ? 'a' : 'c';
  if (alloc_space(b, kf->configs, counted, counted && kf->facts)) return -1;
  for (size_t i = 0; i < kf->configs; i++) {
    candidate_result r;
    ktfile_result(kf, i, &r);
    b->status[i] = ktfile_status(kf, i);
    b->time[i] = kf->time_ms[i];
    if (counted && recorded_diagnose(&r, gpu, NULL, kf->space, i, &err) == RT_OK)
      b->diag[i] = r.diag;
    if (b->feat) recorded_features(&r.facts, gpu, 0, 0, b->feat + i * FEATURE_COUNT);
  }
  b->sp = kf->space;
  kf->space = NULL; /* kept by the bench */
  ktfile_free(kf);
  space_stats(b);
  return 0;
}

/* ---- (b): rooftune's templates on the model device ---- */

/* The peak FLOP/s of the template's compute path on gpu (tune.c's choice of path). */
static double case_peak(const manifest *m, const char *dtype, const gpu_spec *gpu) {
  const char *ins = manifest_instruction(m);
  compute_path path = strcmp(ins, "simt") == 0 ? PATH_SIMT_F32 : roofline_path_for_dtype(dtype, 1);
  roofline_ceilings c;
  roofline_from_spec(gpu, &c);
  return roofline_path_peak(&c, path, strcmp(ins, "wgmma") == 0);
}

static int load_case(const problem_case *pc, const char *db, bench_space *b) {
  manifest *m = NULL;
  rt_vars env;
  space *sp = model_case_space(pc, &m, &env);
  if (!sp) return -1;
  snprintf(b->name, sizeof b->name, "%s %s %s", pc->tmpl, pc->dtype, pc->shape);
  b->set = 'b';
  b->sp = sp;
  size_t n = space_size(sp);
  if (alloc_space(b, n, 1, 1)) return -1;
  tune_report rep;
  rt_error err = {0};
  if (model_case_brute_force(pc, n, db, &rep, &err)) {
    fprintf(stderr, "%s %s: %s\n", pc->tmpl, pc->shape, err.text);
    manifest_free(m);
    return -1;
  }
  const gpu_spec *gpu = gpu_spec_find("h200");
  double peak = case_peak(m, pc->dtype, gpu);
  for (size_t r = 0; r < rep.nresults; r++) {
    const candidate_result *c = &rep.results[r];
    size_t idx;
    if (space_parse_config(sp, c->config, &idx, NULL)) continue;
    b->status[idx] = c->status;
    b->time[idx] = c->status == RT_OK ? c->time_ms : NAN;
    if (c->status == RT_OK) b->diag[idx] = c->diag;
    candidate_plan pl;
    double executed = 0;
    if (manifest_plan(m, sp, idx, &env, &pl, NULL) == RT_OK) executed = pl.executed_flops;
    static_facts f = c->facts;
    f.work_blocks = 0;
    feature_input fi = {.facts = &f,
                        .sm_count = gpu->sm_count,
                        .executed_flops = executed,
                        .dram_bytes = c->dram_bytes,
                        .peak_flops = peak,
                        .bw = gpu->dram_bw_achievable};
    features_fill(&fi, b->feat + idx * FEATURE_COUNT);
  }
  tune_report_free(&rep);
  manifest_free(m);
  space_stats(b);
  return 0;
}

/* ---- running a strategy ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* name "steer-blind": steer told nothing but times. */
static int run_strategy(const bench_space *b, const char *name, int seeds, bench_score *out) {
  int blind = strcmp(name, "steer-blind") == 0;
  const char *kind = blind ? "steer" : name;
  double *need = malloc((size_t)seeds * 3 * sizeof *need), *f16 = need + seeds, *f32 = f16 + seeds;
  if (!need) return -1;
  long budget = (long)b->n < BUDGET ? (long)b->n : BUDGET;
  for (int s = 0; s < seeds; s++) {
    strategy_options o = {.name = kind, .seed = (uint64_t)s, .max_evals = budget};
    if (!blind && b->feat) o.features = b->feat, o.nfeatures = FEATURE_COUNT;
    strategy *st;
    rt_error err = {0};
    if (strategy_new(b->sp, &o, &st, &err)) {
      fprintf(stderr, "%s on %s: %s\n", name, b->name, err.text);
      free(need);
      return -1;
    }
    long hit = -1, k = 0;
    double best = INFINITY;
    size_t idx;
    f16[s] = f32[s] = 0;
    while (strategy_ask(st, &idx, 1) == 1) {
      const diagnosis *d = !blind && b->diag && b->diag[idx].limit[0] ? &b->diag[idx] : NULL;
      strategy_tell(st, idx, b->status[idx], b->time[idx], d, &err);
      k++;
      if (b->status[idx] == RT_OK && b->time[idx] < best) best = b->time[idx];
      if (k == 16) f16[s] = isfinite(best) ? b->optimum / best : 0;
      if (k == 32) f32[s] = isfinite(best) ? b->optimum / best : 0;
      if (hit < 0 && best <= b->optimum * 1.05) hit = k;
      if (hit >= 0 && k >= 32) break;
    }
    if (k < 16) f16[s] = isfinite(best) ? b->optimum / best : 0;
    if (k < 32) f32[s] = isfinite(best) ? b->optimum / best : 0;
    strategy_free(st);
    need[s] = hit >= 0 ? (double)hit : 2.0 * (double)budget;
  }
  out->median = median_of(need, seeds);
  out->frac16 = median_of(f16, seeds);
  out->frac32 = median_of(f32, seeds);
  out->score = ((double)b->valid + 1) / ((double)b->within + 1) / out->median;
  free(need);
  return 0;
}

/* ---- (b) families: every template tune lines up, the budget across them ---- */

/* A family problem: each template's brute-forced space, with the features tune hands the
 * strategy (tune_template_survey: the plan's facts before compiling) and its bound and roof. */
typedef struct family_space {
  char name[96];
  int n; /* templates, in the order tune lines them up */
  bench_space arm[BUDGET_MAX_ARMS];
  double bound_s[BUDGET_MAX_ARMS]; /* the survey's, seconds */
  double roof_s[BUDGET_MAX_ARMS];
  double optimum; /* the family's: the fastest of every template, ms */
  size_t valid, within;
} family_space;

/* Template name's share of a family run rep: its space, results and survey. */
static int load_family_arm(const family_case *fc, const char *name, const tune_report *rep,
                           bench_space *b, double *bound_s, double *roof_s) {
  problem_case pc = {fc->what, name, fc->dtype, fc->shape, NULL};
  manifest *m = NULL;
  rt_vars env;
  space *sp = model_case_space(&pc, &m, &env);
  if (!sp) return -1;
  snprintf(b->name, sizeof b->name, "%s", name);
  b->set = 'f';
  b->sp = sp;
  if (alloc_space(b, space_size(sp), 1, 1)) return -1;
  for (size_t r = 0; r < rep->nresults; r++) {
    const candidate_result *c = &rep->results[r];
    size_t idx;
    if (strcmp(c->template_name, name) || space_parse_config(sp, c->config, &idx, NULL)) continue;
    b->status[idx] = c->status;
    b->time[idx] = c->status == RT_OK ? c->time_ms : NAN;
    if (c->status == RT_OK) b->diag[idx] = c->diag;
  }
  const gpu_spec *gpu = gpu_spec_find("h200");
  const family_ops *fam = family_find(manifest_family(m));
  problem p;
  roofline_ceilings ceil;
  roofline_from_spec(gpu, &ceil); /* the model device's ceilings */
  tune_survey sv;
  rt_error err = {0};
  rt_status st = fam->parse_shape(fam, fc->shape, fc->dtype, NULL, &p, &err);
  if (!st)
    st = tune_template_survey(m, sp, &env, fc->dtype, fam->min_bytes(fam, &p), &ceil, gpu, NULL, 0,
                              b->feat, &sv, &err);
  manifest_free(m);
  if (st) {
    fprintf(stderr, "%s %s: %s\n", name, fc->shape, err.text);
    return -1;
  }
  *bound_s = sv.bound.seconds;
  *roof_s = sv.roof.seconds;
  space_stats(b);
  return 0;
}

static int load_family(const family_case *fc, const char *db, family_space *F) {
  memset(F, 0, sizeof *F);
  snprintf(F->name, sizeof F->name, "%s %s %s", fc->family, fc->dtype, fc->shape);
  tune_report rep;
  rt_error err = {0};
  if (family_case_brute_force(fc, db, &rep, &err)) {
    fprintf(stderr, "%s %s: %s\n", fc->family, fc->shape, err.text);
    return -1;
  }
  int rc = 0;
  for (size_t r = 0; r < rep.nresults && !rc; r++) { /* the templates, as the run lined them up */
    const char *name = rep.results[r].template_name;
    int seen = 0;
    for (int k = 0; k < F->n; k++) seen |= !strcmp(F->arm[k].name, name);
    if (seen || F->n == BUDGET_MAX_ARMS) continue;
    rc = load_family_arm(fc, name, &rep, &F->arm[F->n], &F->bound_s[F->n], &F->roof_s[F->n]);
    if (!rc) F->n++;
  }
  tune_report_free(&rep);
  F->optimum = INFINITY;
  for (int k = 0; k < F->n; k++) F->optimum = fmin(F->optimum, F->arm[k].optimum);
  for (int k = 0; k < F->n; k++) {
    const bench_space *b = &F->arm[k];
    F->valid += b->valid;
    for (size_t i = 0; i < b->n; i++)
      F->within += b->status[i] == RT_OK && b->time[i] <= F->optimum * 1.05;
  }
  return rc || !F->n ? -1 : 0;
}

/* One family run as tune makes it: the budget plan over the templates (rules: as tune spends its
 * budget; 0: the even split in the lineup's order of before), each template's strategy seeded
 * alike and told its times, diagnoses and features (none when blind).  *hit: the evaluation that
 * first came within 5 % of the family's optimum (-1: none), *best its best time (ms), *spent
 * the evaluations made. */
static int family_run(const family_space *F, const char *kind, int blind, int rules, double stop,
                      long budget, uint64_t seed, long *hit, double *best, long *spent) {
  budget_plan plan;
  budget_init(&plan, F->n, F->bound_s, F->roof_s, budget, rules ? BUDGET_SLACK : 0,
              rules ? stop : 0);
  strategy *st[BUDGET_MAX_ARMS] = {0};
  double arm_best[BUDGET_MAX_ARMS] = {0};
  *hit = -1;
  *best = INFINITY;
  *spent = 0;
  int a, rc = 0;
  long share;
  while (!rc && (a = budget_next(&plan, isfinite(*best) ? *best * 1e-3 : 0, &share)) >= 0) {
    const bench_space *b = &F->arm[a];
    rt_error err = {0};
    if (!st[a]) {
      strategy_options o = {.name = kind, .seed = seed};
      if (!blind && b->feat) o.features = b->feat, o.nfeatures = FEATURE_COUNT;
      if (strategy_new(b->sp, &o, &st[a], &err)) {
        fprintf(stderr, "%s on %s: %s\n", kind, b->name, err.text);
        rc = -1;
        break;
      }
    }
    long made = 0;
    int out = 0;
    while (made < share && !budget_stops(&plan, a, arm_best[a] * 1e-3)) {
      size_t idx;
      if (strategy_ask(st[a], &idx, 1) != 1) {
        out = 1;
        break;
      }
      const diagnosis *d = !blind && b->diag[idx].limit[0] ? &b->diag[idx] : NULL;
      strategy_tell(st[a], idx, b->status[idx], b->time[idx], d, &err);
      made++;
      ++*spent;
      if (b->status[idx] != RT_OK) continue;
      if (!(arm_best[a] > 0) || b->time[idx] < arm_best[a]) arm_best[a] = b->time[idx];
      if (b->time[idx] < *best) *best = b->time[idx];
      if (*hit < 0 && *best <= F->optimum * 1.05) *hit = *spent;
    }
    budget_told(&plan, a, made, arm_best[a] * 1e-3, out);
    if (*hit >= 0 && budget >= BUDGET) break; /* the score needs no more */
  }
  for (int k = 0; k < F->n; k++) strategy_free(st[k]);
  return rc;
}

/* name: a strategy, "steer-blind", or either with "-even" (the rules off: tune's budget before). */
static int run_family_strategy(const family_space *F, const char *name, int seeds, double stop,
                               bench_score *out, double *spent16, double *spent32) {
  char kind[32];
  snprintf(kind, sizeof kind, "%s", name);
  char *even = strstr(kind, "-even");
  if (even) *even = 0;
  int blind = strcmp(kind, "steer-blind") == 0;
  if (blind) snprintf(kind, sizeof kind, "steer");
  double *need = malloc((size_t)seeds * 5 * sizeof *need), *f16 = need + seeds, *f32 = f16 + seeds,
         *s16 = f32 + seeds, *s32 = s16 + seeds;
  if (!need) return -1;
  for (int s = 0; s < seeds; s++) {
    long hit, spent;
    double best;
    if (family_run(F, kind, blind, !even, stop, BUDGET, (uint64_t)s, &hit, &best, &spent)) {
      free(need);
      return -1;
    }
    need[s] = hit >= 0 ? (double)hit : 2.0 * BUDGET;
    family_run(F, kind, blind, !even, stop, 16, (uint64_t)s, &hit, &best, &spent);
    f16[s] = isfinite(best) ? F->optimum / best : 0;
    s16[s] = (double)spent;
    family_run(F, kind, blind, !even, stop, 32, (uint64_t)s, &hit, &best, &spent);
    f32[s] = isfinite(best) ? F->optimum / best : 0;
    s32[s] = (double)spent;
  }
  out->median = median_of(need, seeds);
  out->frac16 = median_of(f16, seeds);
  out->frac32 = median_of(f32, seeds);
  out->score = ((double)F->valid + 1) / ((double)F->within + 1) / out->median;
  double m16 = 0, m32 = 0;
  for (int s = 0; s < seeds; s++) m16 += s16[s], m32 += s32[s];
  *spent16 = m16 / seeds;
  *spent32 = m32 / seeds;
  free(need);
  return 0;
}

/* ---- main ---- */

static int add_dir(const char *dir, char **files, int *nf) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d)) && *nf < MAX_SPACES)
    if (strstr(e->d_name, ".json")) {
      size_t len = strlen(dir) + strlen(e->d_name) + 2;
      files[*nf] = malloc(len);
      snprintf(files[*nf], len, "%s/%s", dir, e->d_name);
      (*nf)++;
    }
  closedir(d);
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The set's geometric means per strategy, and each against bayes'. */
static void print_sets(const bench_space *sp, int ns, bench_score (*sc)[MAX_STRATEGIES],
                       const char *const *names, int nstrat) {
  static const char *const set_names[] = {"(a) counter recordings",
                                          "(b) rooftune templates, model:h200",
                                          "(c) public spaces without counters"};
  int bayes = 0;
  for (int k = 0; k < nstrat; k++)
    if (!strcmp(names[k], "bayes")) bayes = k;
  printf("\n| set | strategy | score (geo. mean) | x bayes | frac. of optimum @16 | @32 |\n");
  printf("|---|---|---|---|---|---|\n");
  for (int set = 0; set < 3; set++) {
    bench_score mean[MAX_STRATEGIES];
    int n = 0;
    for (int k = 0; k < nstrat; k++) {
      double ls = 0, l16 = 0, l32 = 0;
      n = 0;
      for (int i = 0; i < ns; i++)
        if (sp[i].set == 'a' + set) {
          ls += log(sc[i][k].score);
          l16 += log(sc[i][k].frac16 > 0 ? sc[i][k].frac16 : 1e-9);
          l32 += log(sc[i][k].frac32 > 0 ? sc[i][k].frac32 : 1e-9);
          n++;
        }
      if (n) mean[k] = (bench_score){0, exp(ls / n), exp(l16 / n), exp(l32 / n)};
    }
    for (int k = 0; n && k < nstrat; k++)
      printf("| %s (%d) | %s | %.2f | %.2f | %.3f | %.3f |\n", set_names[set], n, names[k],
             mean[k].score, mean[k].score / mean[bayes].score, mean[k].frac16, mean[k].frac32);
  }
}

/* The family problems: each strategy through the budget plan, per problem and over the set. */
static int bench_families(const char *db, const char *list, int seeds, double stop) {
  static family_space F[FAMILY_CASES];
  int nfam = 0;
  for (size_t c = 0; c < FAMILY_CASES; c++)
    if (!load_family(&family_cases[c], db, &F[nfam])) nfam++;
  char *buf = strdup(list);
  const char *names[MAX_STRATEGIES];
  int nstrat = 0;
  for (char *t = strtok(buf, ","); t && nstrat < MAX_STRATEGIES; t = strtok(NULL, ","))
    names[nstrat++] = t;
  static bench_score sc[FAMILY_CASES][MAX_STRATEGIES];
  static double s16[FAMILY_CASES][MAX_STRATEGIES], s32[FAMILY_CASES][MAX_STRATEGIES];
  printf(
      "\n(b) families: the family's optimum over its templates, the budget across them as tune "
      "spends "
      "it (-even: the even split in the lineup's order, tune before the roof rules); stop at %.2f "
      "of the "
      "roof\n\n",
      stop);
  printf(
      "| family problem | templates (bound, roof, optimum ms) | valid | k | strategy | median | "
      "score | @16 | @32 "
      "| evaluations made of 16 | of 32 |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int f = 0; f < nfam; f++) {
    char arms[512] = "";
    size_t l = 0;
    for (int k = 0; k < F[f].n && l < sizeof arms; k++)
      l += (size_t)snprintf(arms + l, sizeof arms - l, "%s%s (%.4g, %.4g, %.4g)", k ? ", " : "",
                            F[f].arm[k].name, F[f].bound_s[k] * 1e3, F[f].roof_s[k] * 1e3,
                            F[f].arm[k].optimum);
    for (int k = 0; k < nstrat; k++) {
      if (run_family_strategy(&F[f], names[k], seeds, stop, &sc[f][k], &s16[f][k], &s32[f][k]))
        return -1;
      printf("| %s | %s | %zu | %zu | %s | %.1f | %.2f | %.3f | %.3f | %.1f | %.1f |\n", F[f].name,
             arms, F[f].valid, F[f].within, names[k], sc[f][k].median, sc[f][k].score,
             sc[f][k].frac16, sc[f][k].frac32, s16[f][k], s32[f][k]);
      fflush(stdout);
    }
  }
  int bayes = 0, even = -1;
  for (int k = 0; k < nstrat; k++) {
    if (!strcmp(names[k], "bayes")) bayes = k;
    if (!strcmp(names[k], "bayes-even")) even = k;
  }
  printf(
      "\n| set | strategy | score (geo. mean) | x bayes | x bayes-even | @16 | @32 | evaluations "
      "made of 16 | of 32 "
      "|\n|---|---|---|---|---|---|---|---|---|\n");
  double ls[MAX_STRATEGIES] = {0};
  for (int k = 0; k < nstrat; k++)
    for (int f = 0; f < nfam; f++) ls[k] += log(sc[f][k].score);
  for (int k = 0; k < nstrat && nfam; k++) {
    double l16 = 0, l32 = 0, m16 = 0, m32 = 0;
    for (int f = 0; f < nfam; f++) {
      l16 += log(sc[f][k].frac16 > 0 ? sc[f][k].frac16 : 1e-9);
      l32 += log(sc[f][k].frac32 > 0 ? sc[f][k].frac32 : 1e-9);
      m16 += s16[f][k] / nfam;
      m32 += s32[f][k] / nfam;
    }
    char xe[16] = "-";
    if (even >= 0) snprintf(xe, sizeof xe, "%.2f", exp((ls[k] - ls[even]) / nfam));
    printf(
        "| (b) families, model:h200 (%d) | %s | %.2f | %.2f | %s | %.3f | %.3f | %.1f | %.1f |\n",
        nfam, names[k], exp(ls[k] / nfam), exp((ls[k] - ls[bayes]) / nfam), xe, exp(l16 / nfam),
        exp(l32 / nfam), m16, m32);
  }
  for (int f = 0; f < nfam; f++)
    for (int k = 0; k < F[f].n; k++) free_space(&F[f].arm[k]);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int seeds = 30;
  size_t ncases = MODEL_CASES;
  const char *dir = NULL, *sets = "abcf",
             *list = "random,ils,annealing,genetic,lever,bayes,steer,steer-blind,steer_turns";
  const char *flist = "random,bayes,steer,steer-blind,bayes-even,steer-even";
  double stop =
      roofline_stop_fraction(&(roofline_ceilings){.measured = 0}); /* the model device's */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
      seeds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--spaces") && i + 1 < argc)
      dir = argv[++i];
    else if (!strcmp(argv[i], "--set") && i + 1 < argc)
      sets = argv[++i];
    else if (!strcmp(argv[i], "--strategies") && i + 1 < argc)
      list = argv[++i];
    else if (!strcmp(argv[i], "--family-strategies") && i + 1 < argc)
      flist = argv[++i];
    else if (!strcmp(argv[i], "--stop") && i + 1 < argc)
      stop = atof(argv[++i]);
    else if (!strcmp(argv[i], "--cases") && i + 1 < argc && atoi(argv[i + 1]) > 0)
      ncases = (size_t)atoi(argv[++i]);
    else {
      fprintf(stderr,
              "usage: bench_steer [--spaces DIR] [--seeds N] [--set abcf] [--strategies a,b,...] "
              "[--family-strategies a,b-even,...] [--stop FRACTION] [--cases K]\n");
      return 2;
    }
  }
  if (seeds < 1) seeds = 1;
  char defdir[1200];
  if (!dir) {
    snprintf(defdir, sizeof defdir, "%s/../shared/data/spaces", ROOFTUNE_SOURCE_DIR);
    dir = defdir;
  }
  char *names_buf = strdup(list);
  const char *names[MAX_STRATEGIES];
  int nstrat = 0;
  for (char *t = strtok(names_buf, ","); t && nstrat < MAX_STRATEGIES; t = strtok(NULL, ","))
    names[nstrat++] = t;
  double t0 = now();
  static bench_space sp[MAX_SPACES];
  static bench_score sc[MAX_SPACES][MAX_STRATEGIES];
  int ns = 0;
  char *files[MAX_SPACES];
  int nf = 0;
  if ((strchr(sets, 'a') || strchr(sets, 'c')) && add_dir(dir, files, &nf))
    fprintf(stderr, "bench_steer: no spaces folder %s: sets (a) and (c) skipped\n", dir);
  qsort(files, (size_t)nf, sizeof *files, cmp_str);
  for (int f = 0; f < nf; f++) {
    if (ns < MAX_SPACES - 1 && !load_recording(files[f], &sp[ns])) {
      if (strchr(sets, sp[ns].set))
        ns++;
      else
        free_space(&sp[ns]);
    }
    free(files[f]);
  }
  double t_load = now();
  char db[1200];
  const char *cache = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  snprintf(db, sizeof db, "%s%s/rooftune/bench_steer.db",
           cache  ? cache
           : home ? home
                  : "/tmp",
           cache ? "" : "/.cache");
  if (strchr(sets, 'b')) {
    for (size_t c = 0; c < MODEL_CASES && c < ncases && ns < MAX_SPACES - 1; c++)
      if (!load_case(&model_cases[c], db, &sp[ns])) ns++;
  }
  double t_cases = now();
  printf("bench_steer: %d seeds, budget %d, target within 5 %% of each space's optimum\n\n", seeds,
         BUDGET);
  printf("| set | space | valid | k | random | strategy | median | score | @16 | @32 |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < ns; i++) {
    double rnd = ((double)sp[i].valid + 1) / ((double)sp[i].within + 1);
    for (int k = 0; k < nstrat; k++) {
      if (run_strategy(&sp[i], names[k], seeds, &sc[i][k])) return 1;
      printf("| %c | %s | %zu | %zu | %.1f | %s | %.1f | %.2f | %.3f | %.3f |\n", sp[i].set,
             sp[i].name, sp[i].valid, sp[i].within, rnd, names[k], sc[i][k].median, sc[i][k].score,
             sc[i][k].frac16, sc[i][k].frac32);
      fflush(stdout);
    }
  }
  if (ns) print_sets(sp, ns, sc, names, nstrat);
  if (strchr(sets, 'f') && bench_families(db, flist, seeds, stop)) return 1;
  double t1 = now();
  printf(
      "\ntime: %.1f s in all (loading the recordings %.1f s, the model device's spaces %.1f s, "
      "the strategies %.1f s)\n",
      t1 - t0, t_load - t0, t_cases - t_load, t1 - t_cases);
  for (int i = 0; i < ns; i++) free_space(&sp[i]);
  free(names_buf);
  return 0;
}
