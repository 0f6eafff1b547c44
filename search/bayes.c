/* bayes.c — Bayesian optimisation: a Gaussian process (Matern 5/2 over the parameters' domain
 * positions scaled to 0..1, plus the power-of-two alignment of numeric parameters whose values
 * differ in it) on log times; failures enter it as the worst time seen.
 *
 * Candidates each step: the unseen one-parameter neighbours of the best result (of the next
 * best once those are spent), children bred from the best results (uniform crossover, one
 * mutation), and a uniform sample of the unseen.  Steps alternate: exploit (the neighbour or
 * child with the lowest predicted mean) and explore (the highest expected improvement over all
 * candidates).  The alternation is what finds narrow optima such as convolution_A100's single
 * configuration within 5 %: the model finds the region, the neighbours and children the spike.
 * When BO_STALL results bring no new best, or the model is full (BO_MAXOBS), iterated local
 * search from the best takes over (kicks escape a region the model is too sure of) until the
 * best improves.  The Cholesky factor grows one row per result (the kernel does not depend on
 * the times), so a step costs O(n^2) for n results plus O(n) per candidate.
 *
 * The alignment inputs (block_size_x 16, 32, 48, 64 ... has alignments 16, 32, 16, 64 ...) were
 * added after the held-out convolution_A4000 showed the model stuck for 150 evaluations in a
 * region that only power-of-two block sizes escape; on 100 seeds they cut the evaluations to
 * target on every convolution space and gemm_clblast and cost pnpoly (see
 * bench/bench_strategies.c).  Tried and not kept: length scales fitted per input by marginal
 * likelihood (ARD), alone or with the alignments (geometric means over all eight spaces on 100
 * seeds: 3.84 and 4.39 against 4.42 with the alignments alone, 3.91 with neither), and the
 * nugget chosen by the evidence from 1e-3 to 0.3 (3.74).
 *
 * The maximin initial design (bo_design) replaced ten uniform random picks; the pool of 1000
 * candidates per pick was chosen on the development spaces (300 seeds, their geometric mean:
 * random picks 3.68; pools of 20, 100, 1000: 3.84, 4.00, 4.59).
 *
 * The same search is what the steered strategy runs (steer.c, through bayes_internal.h), with
 * three differences set up by bo_setup: mode-like parameters as one input per value, the
 * caller's pre-run features as inputs (never in the design's distance: a design spread over
 * feature space cost the Coulomb recording 4 -> 7 evaluations), and steer's own exploitation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/bayes_internal.h"
#include "search/law_internal.h"

/* Tuned on the development spaces (convolution_A100, dedispersion_A100, pnpoly_RTX_3090;
 * see bench/bench_strategies.c): */
enum {
  BO_INIT = 10,      /* configurations before the model decides: a random one, then the
                       farthest of BO_DESIGN random unseen ones from those chosen (maximin) */
  BO_DESIGN = 1000,  /* candidates per maximin pick */
  BO_SAMPLE = 500,   /* unseen configurations drawn as candidates per step */
  BO_VAR = 100,      /* of the candidates, the best by mean and random ones get a variance */
  BO_MAXOBS = 400,   /* results the model holds; beyond, local search from the best goes on */
  BO_TOP = 4,        /* exploit steps take neighbours of the best results, the best's first */
  BO_POP = 16,       /* children are bred from this many best results */
  BO_CHILDREN = 100, /* children drawn as candidates per step */
  BO_STALL = 100     /* results without a new best before local search takes a turn */
};
#define BO_LENGTH 4.0  /* kernel length scale, in domain widths (a smooth, wide model) */
#define BO_NOISE  1e-3 /* nugget on the diagonal (standardised units) */
#define BO_XI     0.01 /* expected improvement's exploration margin (standardised units) */

typedef struct {
  int nobs;          /* results in the model */
  size_t *obs;       /* their configurations */
  double *y;         /* their log times (failures: filled in at fit time) */
  double *L;         /* Cholesky factor, row-major, BO_MAXOBS x BO_MAXOBS, lower */
  double *alpha;     /* K^-1 (y - mean) / sd */
  int nd;            /* model inputs per configuration (positions, alignments, mode values,
                        then features) */
  int ndesign;       /* the first ndesign inputs measure the initial design's spread (all but
                        the features) */
  double *x;         /* model inputs of every configuration, n x nd */
  size_t *cand;      /* candidate configurations */
  double *v;         /* scratch: L^-1 k */
  double ymean, ysd; /* standardisation */
  double ybest;      /* best standardised value */
  int stale;         /* alpha needs recomputing */
  strategy_ls ls;    /* local search: while the model stalls, and after BO_MAXOBS results */
  int ls_on;         /* the local search is running */
  int last_gain;     /* results in the model when the best last improved */
  double seen_best;  /* the best time as of that moment */
  unsigned *mark;    /* per configuration: the step that made it a candidate */
  unsigned stamp;    /* this step */
  bo_hooks hooks;    /* steer's exploitation; exploit NULL for bayes */
  int npred;         /* predicted inputs (bo_setup.predict): the features, then BO_WORK counted
                        work; the last npred inputs; 0: none */
  fact_law law;      /* their laws' terms */
  double *work;      /* per configuration: log FLOPs and log DRAM bytes its diagnosis counted
                        (BO_WORK values, NaN unknown) */
  int next_law;      /* results in the model at which the laws are fitted again */
  int laws_held;     /* predicted inputs whose law held at the last fit */
  double law_weight; /* the weight the evidence gave them then (bo_law_weight) */
} strategy_bo;

enum { BO_WORK = 2 }; /* counted work: log FLOPs, log DRAM bytes */

static double bo_kernel(const strategy_bo *bo, size_t a, size_t b) {
  const double *xa = bo->x + a * (size_t)bo->nd, *xb = bo->x + b * (size_t)bo->nd;
  double d2 = 0;
  for (int p = 0; p < bo->nd; p++) {
    double d = xa[p] - xb[p];
    d2 += d * d;
  }
  double r = sqrt(5 * d2) / BO_LENGTH;
  return (1 + r + r * r / 3) * exp(-r);
}

/* The power of two dividing v (its alignment), capped at 2^16; 0 for v == 0 or odd v. */
static int bo_twos(long long v) {
  int k = 0;
  while (v != 0 && v % 2 == 0 && k < 16) v /= 2, k++;
  return k;
}

/* 1 when parameter sp looks like a choice of modes: 3 or 4 values that are 0, 1, 2 (, 3). */
int bo_is_mode(const space_param *sp) {
  int seq = sp->ints && sp->count >= 3 && sp->count <= 4;
  for (int i = 0; seq && i < sp->count; i++) seq = sp->ints[i] == i;
  return seq;
}

/* Fills bo->x.  Inputs: each parameter's domain position scaled to 0..1, and for numeric
 * parameters whose values differ in their power-of-two alignment (16, 32, 48, 64 ...) that
 * alignment too: on GPUs a block or tile size's divisibility (warps, banks, vector widths, the
 * problem size) often matters more than its magnitude, which a smooth model of positions
 * misses.  With setup->categorical, a mode-like parameter's position is replaced by one input
 * per value (any two modes equally far apart); with setup->features, the caller's features
 * scaled to 0..1 over the space (an unknown value in the middle) come last. */
static rt_status bo_inputs(strategy *st, strategy_bo *bo, const bo_setup *setup, rt_error *err) {
  int np = st->np;
  int *align = calloc((size_t)np * 4, sizeof *align), *lo = align + np, *hi = lo + np,
      *mode = hi + np;
  if (!align) return rt_error_set(err, RT_ERR_NOMEM, "out of memory for the Bayesian model");
  bo->nd = np;
  for (int p = 0; p < np; p++) {
    const space_param *sp = space_param_at(st->sp, p);
    if (!sp->ints || sp->count < 3) continue;
    lo[p] = 99;
    hi[p] = -1;
    for (int i = 0; i < sp->count; i++) {
      int v2 = bo_twos(sp->ints[i]);
      if (v2 < lo[p]) lo[p] = v2;
      if (v2 > hi[p]) hi[p] = v2;
    }
    if (hi[p] > lo[p]) align[p] = bo->nd++;
  }
  for (int p = 0; setup->categorical && p < np; p++)
    if (bo_is_mode(space_param_at(st->sp, p))) {
      mode[p] = bo->nd;
      bo->nd += space_param_at(st->sp, p)->count;
    }
  bo->ndesign = bo->nd;
  /* the features are inputs only when every configuration's are known (a survey): a row known
   * only once evaluated says nothing of the candidates */
  int nf = setup->features && st->opt.survey && st->feat ? st->nfeat : 0;
  bo->nd += nf;
  /* without a survey, the features and the counted work as their laws predict them (bo_laws);
   * until a law holds its input is the same for every configuration: no input at all */
  bo->npred = setup->predict && !st->opt.survey && st->feat ? st->nfeat + BO_WORK : 0;
  bo->nd += bo->npred;
  bo->x = calloc(st->n * (size_t)bo->nd, sizeof *bo->x);
  if (!bo->x) {
    free(align);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory for the Bayesian model");
  }
  for (size_t i = 0; i < st->n; i++) {
    const uint16_t *c = space_config(st->sp, i);
    double *xi = bo->x + i * (size_t)bo->nd;
    for (int p = 0; p < np; p++) {
      const space_param *sp = space_param_at(st->sp, p);
      xi[p] = sp->count > 1 && !mode[p] ? (double)c[p] / (sp->count - 1) : 0;
      if (align[p]) xi[align[p]] = (double)(bo_twos(sp->ints[c[p]]) - lo[p]) / (hi[p] - lo[p]);
      if (mode[p]) xi[mode[p] + c[p]] = sqrt(0.5); /* two modes: a squared distance of 1 */
    }
  }
  for (size_t i = 0; bo->npred && i < st->n; i++)
    for (int f = 0; f < bo->npred; f++)
      bo->x[i * (size_t)bo->nd + (size_t)(bo->nd - bo->npred + f)] = 0.5;
  for (int f = 0; f < nf; f++) {
    const double *fv = st->feat;
    double fl = INFINITY, fh = -INFINITY;
    for (size_t i = 0; i < st->n; i++) {
      double v = fv[i * (size_t)nf + (size_t)f];
      if (isfinite(v)) fl = v < fl ? v : fl, fh = v > fh ? v : fh;
    }
    for (size_t i = 0; i < st->n; i++) {
      double v = fv[i * (size_t)nf + (size_t)f];
      bo->x[i * (size_t)bo->nd + (size_t)(bo->ndesign + f)] =
          !isfinite(v) || !(fh > fl) ? 0.5 : (v - fl) / (fh - fl);
    }
  }
  free(align);
  return RT_OK;
}

rt_status bo_init(strategy *st, const bo_setup *setup, rt_error *err) {
  strategy_bo *bo = calloc(1, sizeof *bo);
  st->impl = bo;
  if (!bo) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  bo->hooks = setup->hooks;
  size_t m = (size_t)BO_MAXOBS;
  bo->obs = malloc(m * sizeof *bo->obs);
  bo->y = malloc(m * sizeof *bo->y);
  bo->L = calloc(m * m, sizeof *bo->L);
  bo->alpha = malloc(m * sizeof *bo->alpha);
  bo->cand = malloc((2 * (size_t)BO_SAMPLE + (size_t)BO_CHILDREN + 2 * strategy_moves_cap(st) + 1) *
                    sizeof *bo->cand);
  bo->v = malloc(m * sizeof *bo->v);
  bo->mark = calloc(st->n, sizeof *bo->mark);
  bo->seen_best = INFINITY;
  rt_status rc = strategy_ls_init(st, &bo->ls, err);
  if (rc) return rc;
  if (!bo->obs || !bo->y || !bo->L || !bo->alpha || !bo->cand || !bo->v || !bo->mark)
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory for the Bayesian model");
  if ((rc = bo_inputs(st, bo, setup, err)) || !bo->npred) return rc;
  bo->next_law = BO_INIT;
  bo->work = malloc(st->n * BO_WORK * sizeof *bo->work);
  if (!bo->work) return rt_error_set(err, RT_ERR_NOMEM, "out of memory for the Bayesian model");
  for (size_t i = 0; i < st->n * BO_WORK; i++) bo->work[i] = NAN;
  return law_init(st, &bo->law, err);
}

/* Appends configuration idx to the model: one new row of the Cholesky factor. */
static void bo_add(strategy *st, strategy_bo *bo, size_t idx, double t) {
  if (bo->nobs >= BO_MAXOBS) return;
  int n = bo->nobs, m = BO_MAXOBS;
  double *row = bo->L + (size_t)n * (size_t)m;
  for (int j = 0; j < n; j++) {
    double s = bo_kernel(bo, idx, bo->obs[j]);
    const double *lj = bo->L + (size_t)j * (size_t)m;
    for (int k = 0; k < j; k++) s -= row[k] * lj[k];
    row[j] = s / lj[j];
  }
  double d = 1 + BO_NOISE;
  for (int k = 0; k < n; k++) d -= row[k] * row[k];
  row[n] = sqrt(d > 1e-9 ? d : 1e-9);
  bo->obs[n] = idx;
  bo->y[n] = isfinite(t) ? log(t) : NAN;
  bo->nobs++;
  bo->stale = 1;
}

/* The results' log times standardised into z (failures as the worst time seen), with the mean
 * and the spread they were standardised by. */
static void bo_standard(const strategy_bo *bo, double *z, double *mean_out, double *sd_out) {
  int n = bo->nobs;
  double sum = 0, worst = -INFINITY;
  int ok = 0;
  for (int i = 0; i < n; i++)
    if (!isnan(bo->y[i])) {
      sum += bo->y[i];
      ok++;
      if (bo->y[i] > worst) worst = bo->y[i];
    }
  double mean = ok ? sum / ok : 0, ss = 0;
  for (int i = 0; i < n; i++) {
    z[i] = isnan(bo->y[i]) ? (ok ? worst : 0) : bo->y[i];
    ss += (z[i] - mean) * (z[i] - mean);
  }
  double sd = n > 1 ? sqrt(ss / (n - 1)) : 1;
  if (!(sd > 1e-12)) sd = 1;
  for (int i = 0; i < n; i++) z[i] = (z[i] - mean) / sd;
  *mean_out = mean;
  *sd_out = sd;
}

static void bo_fit(strategy_bo *bo) {
  int n = bo->nobs, m = BO_MAXOBS;
  double *z = bo->alpha;
  bo_standard(bo, z, &bo->ymean, &bo->ysd);
  bo->ybest = INFINITY;
  for (int i = 0; i < n; i++)
    if (z[i] < bo->ybest) bo->ybest = z[i];
  /* alpha = L^-T L^-1 z */
  for (int i = 0; i < n; i++) {
    const double *li = bo->L + (size_t)i * (size_t)m;
    double s = z[i];
    for (int k = 0; k < i; k++) s -= li[k] * z[k];
    z[i] = s / li[i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = z[i];
    for (int k = i + 1; k < n; k++) s -= bo->L[(size_t)k * (size_t)m + (size_t)i] * z[k];
    z[i] = s / bo->L[(size_t)i * (size_t)m + (size_t)i];
  }
  bo->stale = 0;
}

/* The Cholesky factor anew, every result's row, after the inputs changed (bo_laws). */
static void bo_refactor(strategy_bo *bo) {
  int n = bo->nobs;
  bo->nobs = 0;
  for (int i = 0; i < n; i++) {
    double y = bo->y[i];
    bo_add(NULL, bo, bo->obs[i], 1);
    bo->y[i] = y;
  }
}

/* What configuration i's predicted input f is known to be: its feature once handed out, its
 * counted work once told; NaN before. */
static double bo_known(const strategy *st, const strategy_bo *bo, size_t i, int f) {
  return f < st->nfeat ? st->feat[i * (size_t)st->nfeat + (size_t)f]
                       : bo->work[i * BO_WORK + (size_t)(f - st->nfeat)];
}

/* The weights a held law's input may get, chosen by the evidence (bo_law_weight): 0 leaves it
 * out (the time does not follow it), 1 counts its range as a parameter's, 2 and 4 as a fact
 * that moves the time more than one parameter's whole domain does. */
static const double bo_law_weights[] = {0, 1, 2, 4};
enum { BO_NWEIGHTS = sizeof bo_law_weights / sizeof bo_law_weights[0] };

/* The log marginal likelihood of the results' standardised times z under the kernel with squared
 * distances d2a + w^2 d2f between results (n x n each); k: n x n scratch. */
static double bo_evidence(const double *d2a, const double *d2f, double w, const double *z, int n,
                          double *k) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double r = sqrt(5 * (d2a[i * n + j] + w * w * d2f[i * n + j])) / BO_LENGTH;
      k[i * n + j] = (1 + r + r * r / 3) * exp(-r) + (i == j ? BO_NOISE : 0);
    }
  double logdet = 0, quad = 0;
  for (int j = 0; j < n; j++) { /* Cholesky in place, lower */
    double d = k[j * n + j];
    for (int q = 0; q < j; q++) d -= k[j * n + q] * k[j * n + q];
    d = sqrt(d > 1e-9 ? d : 1e-9);
    k[j * n + j] = d;
    logdet += 2 * log(d);
    for (int i = j + 1; i < n; i++) {
      double s = k[i * n + j];
      for (int q = 0; q < j; q++) s -= k[i * n + q] * k[j * n + q];
      k[i * n + j] = s / d;
    }
  }
  double v[BO_MAXOBS];
  for (int i = 0; i < n; i++) {
    double s = z[i];
    for (int q = 0; q < i; q++) s -= k[i * n + q] * v[q];
    v[i] = s / k[i * n + i];
    quad += v[i] * v[i];
  }
  return -0.5 * quad - 0.5 * logdet;
}

/* The weight of bo_law_weights under which the results' times are likeliest (type-II maximum
 * likelihood over one number, not per input: ARD over every input overfitted, bayes.c's head),
 * the predicted inputs being set at weight 1; 1 when out of memory. */
static double bo_law_weight(strategy_bo *bo) {
  int n = bo->nobs, base = bo->nd - bo->npred;
  double *d2a = malloc(3 * (size_t)n * (size_t)n * sizeof *d2a), z[BO_MAXOBS], mean, sd;
  if (!d2a) return 1;
  double *d2f = d2a + (size_t)n * (size_t)n, *k = d2f + (size_t)n * (size_t)n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      const double *xi = bo->x + bo->obs[i] * (size_t)bo->nd,
                   *xj = bo->x + bo->obs[j] * (size_t)bo->nd;
      double a = 0, f = 0;
      for (int p = 0; p < bo->nd; p++) {
        double d = xi[p] - xj[p];
        if (p < base)
          a += d * d;
        else
          f += d * d;
      }
      d2a[i * n + j] = a, d2f[i * n + j] = f;
    }
  bo_standard(bo, z, &mean, &sd);
  double best = 1, top = -INFINITY;
  for (int w = 0; w < BO_NWEIGHTS; w++) {
    double e = bo_evidence(d2a, d2f, bo_law_weights[w], z, n, k);
    if (e > top) top = e, best = bo_law_weights[w];
  }
  free(d2a);
  return best;
}

/* Fits each predicted input's law to the results in the model and, where it holds (law.c), sets
 * the input: the known value where there is one, else the law's, scaled to 0..1 over the known
 * values (a prediction beyond them clipped half a range out), times the weight the evidence
 * gives the held inputs together; where it does not hold, the same value for every
 * configuration.  Then the factor anew.  Run at BO_INIT results and each time they grow by an
 * eighth: the laws settle as results come, and a refit costs O(n^3). */
static void bo_laws(strategy *st, strategy_bo *bo) {
  double y[BO_MAXOBS], beta[LAW_MAX_TERMS];
  int base = bo->nd - bo->npred;
  bo->laws_held = 0;
  for (int f = 0; f < bo->npred; f++) {
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < bo->nobs; j++) {
      y[j] = bo_known(st, bo, bo->obs[j], f);
      if (isfinite(y[j])) lo = y[j] < lo ? y[j] : lo, hi = y[j] > hi ? y[j] : hi;
    }
    int held = law_fit(&bo->law, bo->obs, y, (size_t)bo->nobs, beta) >= LAW_MIN_R2 && hi > lo;
    bo->laws_held += held;
    for (size_t i = 0; i < st->n; i++) {
      double v = held ? bo_known(st, bo, i, f) : NAN;
      if (held && !isfinite(v)) v = law_predict(&bo->law, i, beta);
      v = held ? (v - lo) / (hi - lo) : 0.5;
      bo->x[i * (size_t)bo->nd + (size_t)(base + f)] = v < -0.5 ? -0.5 : v > 1.5 ? 1.5 : v;
    }
  }
  bo->law_weight = bo->laws_held ? bo_law_weight(bo) : 1;
  if (bo->law_weight != 1)
    for (size_t i = 0; i < st->n; i++)
      for (int f = 0; f < bo->npred; f++)
        bo->x[i * (size_t)bo->nd + (size_t)(base + f)] *= bo->law_weight;
  bo_refactor(bo);
  bo->next_law = bo->nobs + (bo->nobs / 8 > 1 ? bo->nobs / 8 : 1);
}

static double bo_normal_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* The k fastest successful results in the model, fastest first (ties in the order told), into
 * out; returns how many. */
static int bo_best(const strategy *st, const strategy_bo *bo, long *out, int k) {
  int nb = 0;
  for (int i = 0; i < bo->nobs; i++) {
    size_t o = bo->obs[i];
    if (!isfinite(st->time[o])) continue;
    int at = nb < k ? nb++ : k;
    if (at == k && st->time[o] >= st->time[out[k - 1]]) continue;
    if (at == k) at = k - 1;
    while (at > 0 && st->time[out[at - 1]] > st->time[o]) {
      out[at] = out[at - 1];
      at--;
    }
    out[at] = (long)o;
  }
  return nb;
}

/* The initial design: a random configuration first, then of BO_DESIGN random unseen ones the
 * farthest (in the model's inputs but the features) from its nearest result, so the model's first view covers
 * the space instead of a random clump.  -1 (the core's random pick) for the first. */
static long bo_design(strategy *st, const strategy_bo *bo) {
  if (bo->nobs == 0) return -1;
  long pick = -1;
  double far = -1;
  for (int t = 0; t < BO_DESIGN; t++) {
    size_t j = strategy_rand_below(st, st->n);
    if (st->state[j] != ST_UNSEEN) continue;
    const double *xj = bo->x + j * (size_t)bo->nd;
    double near = INFINITY;
    for (int o = 0; o < bo->nobs && near > far; o++) {
      const double *xo = bo->x + bo->obs[o] * (size_t)bo->nd;
      double d2 = 0;
      for (int p = 0; p < bo->ndesign; p++) d2 += (xj[p] - xo[p]) * (xj[p] - xo[p]);
      if (d2 < near) near = d2;
    }
    if (near > far) far = near, pick = (long)j;
  }
  return pick;
}

/* This step's candidates into bo->cand: the one-parameter neighbours of the BO_TOP best results
 * (the best's first, the next best's once those are spent; *base: whose), children of the best
 * results (*nneigh counts both, *nmoves the neighbours), then a uniform sample of the unseen.
 * Returns how many. */
static size_t bo_candidates(strategy *st, strategy_bo *bo, size_t *nneigh, size_t *nmoves,
                            long *base) {
  size_t nc = 0, cap = strategy_moves_cap(st);
  long pop[BO_POP]; /* the best results, fastest first; the first BO_TOP lend neighbours */
  int npop = bo_best(st, bo, pop, BO_POP);
  int ntop = npop < BO_TOP ? npop : BO_TOP;
  *base = -1;
  bo->stamp++;
  for (int t = 0; t < ntop && nc < (size_t)BO_SAMPLE; t++) {
    size_t from = nc;
    size_t got = strategy_moves(st, (size_t)pop[t], 0, bo->cand + from, cap);
    for (size_t i = 0; i < got; i++) {
      size_t c = bo->cand[from + i];
      if (st->state[c] == ST_UNSEEN && bo->mark[c] != bo->stamp) {
        bo->mark[c] = bo->stamp;
        bo->cand[nc++] = c;
      }
    }
    if (nc > 0) {
      *base = pop[t];
      break;
    }
  }
  *nmoves = nc;
  /* children of the best results: uniform crossover of two of the BO_POP best, one mutation */
  uint16_t *cfg = st->cfg;
  for (int k = 0; npop >= 2 && k < BO_CHILDREN; k++) {
    const uint16_t *a = space_config(st->sp, (size_t)pop[strategy_rand_below(st, (size_t)npop)]);
    const uint16_t *b = space_config(st->sp, (size_t)pop[strategy_rand_below(st, (size_t)npop)]);
    for (int p = 0; p < st->np; p++) cfg[p] = strategy_rand_below(st, 2) ? a[p] : b[p];
    int q = (int)strategy_rand_below(st, (size_t)st->np);
    int count = space_param_at(st->sp, q)->count;
    if (count > 1 && strategy_rand_below(st, 2))
      cfg[q] = (uint16_t)strategy_rand_below(st, (size_t)count);
    long j = space_index(st->sp, cfg);
    if (j >= 0 && st->state[j] == ST_UNSEEN && bo->mark[j] != bo->stamp) {
      bo->mark[j] = bo->stamp;
      bo->cand[nc++] = (size_t)j;
    }
  }
  *nneigh = nc;
  size_t unseen = st->n - st->handed;
  if (unseen <= (size_t)BO_SAMPLE) {
    for (size_t i = 0; i < st->n; i++)
      if (st->state[i] == ST_UNSEEN) bo->cand[nc++] = i;
  } else {
    for (int s = 0; s < BO_SAMPLE; s++) {
      size_t j = strategy_rand_below(st, st->n);
      if (st->state[j] == ST_UNSEEN) bo->cand[nc++] = j;
    }
  }
  return nc;
}

/* Explore: the highest expected improvement among the best means and a random share of the
 * rest (rank is sorted here). */
static long bo_explore(strategy *st, strategy_bo *bo, strategy_rank_key *rank, size_t nc) {
  int n = bo->nobs, m = BO_MAXOBS;
  qsort(rank, nc, sizeof *rank, strategy_rank_cmp);
  size_t nv = nc < (size_t)BO_VAR ? nc : (size_t)BO_VAR;
  size_t half = nv / 2;
  for (size_t i = half; i < nv; i++) { /* random picks into the second half */
    size_t j = i + strategy_rand_below(st, nc - i);
    strategy_rank_key t = rank[i];
    rank[i] = rank[j];
    rank[j] = t;
  }
  long best = -1;
  double best_ei = -1;
  for (size_t r = 0; r < nv; r++) {
    size_t c = bo->cand[rank[r].idx];
    for (int j = 0; j < n; j++) {
      const double *lj = bo->L + (size_t)j * (size_t)m;
      double s = bo_kernel(bo, c, bo->obs[j]);
      for (int k = 0; k < j; k++) s -= lj[k] * bo->v[k];
      bo->v[j] = s / lj[j];
    }
    double var = 1;
    for (int j = 0; j < n; j++) var -= bo->v[j] * bo->v[j];
    double sd = var > 1e-12 ? sqrt(var) : 1e-6;
    double imp = bo->ybest - rank[r].key - BO_XI;
    double z = imp / sd;
    double ei = imp * bo_normal_cdf(z) + sd * exp(-0.5 * z * z) / sqrt(2 * M_PI);
    if (ei > best_ei) {
      best_ei = ei;
      best = (long)c;
    }
  }
  return best;
}

long bo_next(strategy *st) {
  strategy_bo *bo = st->impl;
  if (bo->nobs < BO_INIT) return bo_design(st, bo);
  if (st->best_time < bo->seen_best) {
    bo->seen_best = st->best_time;
    bo->last_gain = bo->nobs;
    if (bo->nobs < BO_MAXOBS) bo->ls_on = 0; /* progress: the model leads again */
  }
  if (bo->nobs >= BO_MAXOBS || bo->nobs - bo->last_gain >= BO_STALL) {
    /* the model is full, or stalled: iterated local search from the best (kicks from it,
     * random restarts) until the best improves */
    if (!bo->ls_on && st->best >= 0) {
      bo->ls_on = 1;
      strategy_ls_move(st, &bo->ls, (size_t)st->best);
    }
    return bo->ls_on ? strategy_ls_next(st, &bo->ls) : -1;
  }
  if (bo->npred && bo->nobs >= bo->next_law) bo_laws(st, bo);
  if (bo->stale) bo_fit(bo);
  size_t nneigh, nmoves;
  long base;
  size_t nc = bo_candidates(st, bo, &nneigh, &nmoves, &base);
  if (nc == 0) return -1;
  strategy_rank_key *rank = malloc(nc * sizeof *rank);
  if (!rank) return -1;
  for (size_t c = 0; c < nc; c++) {
    double mu = 0;
    for (int j = 0; j < bo->nobs; j++) mu += bo_kernel(bo, bo->cand[c], bo->obs[j]) * bo->alpha[j];
    rank[c].key = mu;
    rank[c].idx = c;
  }
  long pick = -1;
  size_t best_c = nc;
  if (nneigh > 0 && bo->nobs % 2 == 1) {
    /* exploit: steer's choice, or the lowest mean among the best's unseen neighbours */
    bo_step step = {rank, bo->cand, nneigh, nmoves, base};
    if (bo->hooks.exploit) pick = bo->hooks.exploit(st, bo->hooks.state, &step);
    double lo = INFINITY;
    for (size_t c = 0; pick < 0 && c < nc; c++)
      if (rank[c].idx < nneigh && rank[c].key < lo) lo = rank[c].key, best_c = c;
    if (pick < 0 && best_c < nc) pick = (long)bo->cand[rank[best_c].idx];
  } else {
    pick = bo_explore(st, bo, rank, nc);
  }
  free(rank);
  return pick;
}

/* 1 when idx is one of the prior's configurations, handed out as the prior's. */
static int bo_is_seed(const strategy *st, size_t idx) { return strategy_is_seed(st, idx); }

void bo_told(strategy *st, size_t idx, double t) {
  strategy_bo *bo = st->impl;
  /* the prior's seeds are tried and kept out of the model: one that reaches the target ends the
   * search at once, and one that misleads (another GPU's best, good here but in the wrong
   * region) costs its own evaluation and no more, the search going on as a cold one would.
   * Measured on the shared recordings (bench/bench_transfer.c, 30 seeds): seeds in the model, or
   * in place of the design, took convolution_A4000 with the A100's as prior from 23 to 45-60
   * evaluations; kept out, 26. */
  const diagnosis *d = st->told;
  if (bo->npred && d && isfinite(t)) { /* the work its counters counted: no time in it */
    double s = t * 1e-3;
    bo->work[idx * BO_WORK] = d->achieved_flops > 0 ? log(d->achieved_flops * s) : NAN;
    bo->work[idx * BO_WORK + 1] = d->achieved_bw > 0 ? log(d->achieved_bw * s) : NAN;
  }
  if (!bo_is_seed(st, idx)) bo_add(st, bo, idx, t);
  if (bo->ls_on) strategy_ls_told(st, &bo->ls, idx, t);
  if (bo->hooks.told) bo->hooks.told(st, bo->hooks.state, idx, t);
}

void bo_free(strategy *st) {
  strategy_bo *bo = st->impl;
  if (!bo) return;
  free(bo->obs);
  free(bo->y);
  free(bo->L);
  free(bo->alpha);
  free(bo->x);
  free(bo->cand);
  free(bo->v);
  free(bo->mark);
  free(bo->work);
  law_free(&bo->law);
  strategy_ls_free(&bo->ls);
  free(bo->hooks.state);
  free(bo);
}

static rt_status strategy_bayes_init(strategy *st, rt_error *err) {
  bo_setup plain = {0, 0, 0, {NULL, NULL, NULL}};
  return bo_init(st, &plain, err);
}

const strategy_kind strategy_kind_bayes = {"bayes", 0,       strategy_bayes_init,
                                           bo_next, bo_told, bo_free};
