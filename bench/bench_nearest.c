/* bench_nearest.c — the figures behind ROOFTUNE_NEAREST_MAX: how much slower a shape runs with
 * the winner of a shape of the shipped benchmark suite (bench_gemm's: 4096^3, the skinny LLM
 * shapes, the squares 1024..8192 in bf16, f16 and f32, layout nt) than with its own, as a
 * function of the log-distance between the two (rooftune.h, "Distance").  The shapes served are
 * the suite's own and its neighbours: each suite shape with one dimension scaled by 2^-1,
 * 2^-1/2, 2^-1/4, 2^1/4, 2^1/2 or 2, so that short distances have pairs too.
 *
 * Every time here is PREDICTED by the model device (model:h200: no GPU on the machine these
 * figures were made on), over whole spaces: each shape's winner per template is its best
 * predicted configuration, as `rooftune tune --strategy brute_force --device model:h200` would
 * store it.  Serving shape B with shape A's winners follows the runtime's rules: A's winners in
 * order of their time, the first whose configuration B's space holds (its constraints admit B).
 * The loss is that configuration's predicted time on B over the best of B's own winners; a pair
 * where none of A's winners admits B is counted apart (the runtime passes it over).
 *
 *     bench_nearest [--gpu h200] [--max-configs N]      prints the table; checks nothing
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"
#include "tuner/tune.h"

#define NT          4
#define MAX_SHAPES  32
#define MAX_QUERIES (MAX_SHAPES * 19)

static const char *const templates[NT] = {"gemm_simt", "gemm_mma", "gemm_wgmma", "gemm_skinny"};

typedef struct winner {
  int have;         /* the template's space for the shape is not empty */
  char config[768]; /* its best configuration */
  double ms;        /* predicted */
} winner;

typedef struct shape_row {
  char shape[48], dtype[8];
  problem p;
  rt_vars env;
  space *sp[NT]; /* each template's space for it (NULL when empty) */
  winner w[NT];
  double best; /* the best of its winners */
} shape_row;

static manifest *ms[NT];
static const gpu_spec *gpu;
static size_t max_configs = 0; /* 0: whole spaces */

static double predict(int t, shape_row *r, size_t idx) {
  return tune_predict_config(ms[t], r->sp[t], idx, &r->env, gpu, r->dtype,
                             gemm_family.min_bytes(&gemm_family, &r->p));
}

/* The predicted time on r of template t's configuration text cfg; HUGE_VAL when r's space does
 * not hold it. */
static double time_of(int t, shape_row *r, const char *cfg) {
  if (!r->sp[t]) return HUGE_VAL;
  char text[768];
  for (size_t i = 0; i < space_size(r->sp[t]); i++) {
    space_format_config(r->sp[t], i, text, sizeof text);
    if (!strcmp(text, cfg)) return predict(t, r, i);
  }
  return HUGE_VAL;
}

static double distance(const problem *a, const problem *b) {
  const char *n[] = {"BATCH", "M", "N", "K"};
  double s = 0;
  for (int i = 0; i < 4; i++) {
    double x = log((double)problem_dim(a, n[i])) - log((double)problem_dim(b, n[i]));
    s += x * x;
  }
  return sqrt(s);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Every template's space for shape X predicted (sampled to max_configs): each template's
 * winner in x->w and the fastest in x->best; the count of configurations predicted. */
static size_t predict_all(shape_row *x) {
  size_t evaluated = 0;
  x->best = HUGE_VAL;
  for (int t = 0; t < NT; t++) {
    if (manifest_build_space(ms[t], &x->env, &x->sp[t], NULL)) {
      x->sp[t] = NULL;
      continue;
    }
    size_t size = space_size(x->sp[t]),
           step = max_configs && size > max_configs ? size / max_configs : 1;
    for (size_t i = 0; i < size; i += step) {
      double ms_ = predict(t, x, i);
      evaluated++;
      if (ms_ < HUGE_VAL && (!x->w[t].have || ms_ < x->w[t].ms)) {
        x->w[t].have = 1;
        x->w[t].ms = ms_;
        space_format_config(x->sp[t], i, x->w[t].config, sizeof x->w[t].config);
      }
    }
    if (x->w[t].have && x->w[t].ms < x->best) x->best = x->w[t].ms;
  }
  return evaluated;
}

int main(int argc, char **argv) {
  const char *gpu_name = "h200";
  static const struct option opts[] = {
      {"gpu", required_argument, 0, 'g'}, {"max-configs", required_argument, 0, 'm'}, {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == 'g')
      gpu_name = optarg;
    else if (c == 'm')
      max_configs = (size_t)atol(optarg);
    else {
      fprintf(stderr, "usage: bench_nearest [--gpu h200] [--max-configs N]\n");
      return 2;
    }
  }
  gpu = gpu_spec_find(gpu_name);
  if (!gpu) {
    fprintf(stderr, "bench_nearest: no model GPU '%s'\n", gpu_name);
    return 2;
  }
  const arch_spec *arch = arch_spec_find(gpu->arch);
  rt_error err = {0};
  for (int t = 0; t < NT; t++)
    if (catalog_find(NULL, templates[t], &ms[t], &err)) {
      fprintf(stderr, "bench_nearest: %s\n", err.text);
      return 1;
    }
  /* bench_gemm's suite */
  static shape_row rows[MAX_SHAPES];
  int n = 0;
  snprintf(rows[n].shape, 48, "4096x4096x4096:nt");
  snprintf(rows[n++].dtype, 8, "bf16");
  static const int mm[] = {1, 16, 64, 256}, nk[][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) {
      snprintf(rows[n].shape, 48, "%dx%dx%d:nt", mm[i], nk[j][0], nk[j][1]);
      snprintf(rows[n++].dtype, 8, "bf16");
    }
  static const char *const dts[] = {"bf16", "f16", "f32"};
  for (int d = 0; d < 3; d++)
    for (int s = 1024; s <= 8192; s *= 2) {
      if (d == 0 && s == 4096) continue;
      snprintf(rows[n].shape, 48, "%dx%dx%d:nt", s, s, s);
      snprintf(rows[n++].dtype, 8, "%s", dts[d]);
    }
  size_t evaluated = 0;
  for (int r = 0; r < n; r++) {
    shape_row *x = &rows[r];
    if (gemm_family.parse_shape(&gemm_family, x->shape, x->dtype, NULL, &x->p, &err) ||
        problem_env(&gemm_family, &x->p, arch, gpu, &x->env, &err)) {
      fprintf(stderr, "bench_nearest: %s: %s\n", x->shape, err.text);
      return 1;
    }
    evaluated += predict_all(x);
  }
  /* the shapes served: the suite and its neighbours */
  static shape_row qs[MAX_QUERIES];
  int nq = 0;
  static const double factors[] = {0.5, 0.70710678, 0.84089642, 1.18920712, 1.41421356, 2.0};
  for (int r = 0; r < n; r++) {
    qs[nq++] = rows[r];
    for (int dim = 0; dim < 3; dim++)
      for (int f = 0; f < 6; f++) {
        long long v[3] = {problem_dim(&rows[r].p, "M"), problem_dim(&rows[r].p, "N"),
                          problem_dim(&rows[r].p, "K")};
        long long nv = llround((double)v[dim] * factors[f]);
        if (nv < 1 || nv == v[dim]) continue;
        v[dim] = nv;
        shape_row *x = &qs[nq];
        memset(x, 0, sizeof *x);
        snprintf(x->shape, sizeof x->shape, "%lldx%lldx%lld:nt", v[0], v[1], v[2]);
        snprintf(x->dtype, sizeof x->dtype, "%s", rows[r].dtype);
        if (gemm_family.parse_shape(&gemm_family, x->shape, x->dtype, NULL, &x->p, &err) ||
            problem_env(&gemm_family, &x->p, arch, gpu, &x->env, &err))
          continue;
        evaluated += predict_all(x);
        nq++;
      }
  }
  /* every pair of one dtype: query B served with suite shape A's winners */
  enum { NB = 10 };
  static const double edges[NB + 1] = {0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.5, 100};
  static double loss[NB][MAX_SHAPES * MAX_QUERIES];
  int count[NB] = {0}, refused[NB] = {0};
  for (int b = 0; b < nq; b++)
    for (int a = 0; a < n; a++) {
      if (!strcmp(rows[a].shape, qs[b].shape) || strcmp(rows[a].dtype, qs[b].dtype)) continue;
      double d = distance(&rows[a].p, &qs[b].p);
      int bin = 0;
      while (bin < NB - 1 && d >= edges[bin + 1]) bin++;
      int order[NT], k = 0; /* A's winners, fastest first */
      for (int t = 0; t < NT; t++)
        if (rows[a].w[t].have) order[k++] = t;
      for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && rows[a].w[order[j]].ms < rows[a].w[order[j - 1]].ms; j--) {
          int tmp = order[j];
          order[j] = order[j - 1];
          order[j - 1] = tmp;
        }
      double served = HUGE_VAL;
      for (int i = 0; i < k && served == HUGE_VAL; i++)
        served = time_of(order[i], &qs[b], rows[a].w[order[i]].config);
      if (served == HUGE_VAL || qs[b].best == HUGE_VAL) {
        refused[bin]++;
        continue;
      }
      loss[bin][count[bin]++] = served / qs[b].best;
    }
  printf(
      "serving a shape with a suite shape's winner, predicted on model:%s (%d suite shapes, %d "
      "shapes served, "
      "%zu configurations predicted%s)\n",
      gpu->key, n, nq, evaluated, max_configs ? ", spaces sampled" : ", whole spaces");
  printf("loss = predicted time with the other shape's winner / with its own best winner\n");
  printf("%-12s %6s %8s %8s %8s %8s %10s\n", "distance", "pairs", "median", "p90", "max", "<=1.10",
         "not admit");
  for (int i = 0; i < NB; i++) {
    qsort(loss[i], (size_t)count[i], sizeof(double), cmp_double);
    int within = 0;
    for (int j = 0; j < count[i]; j++) within += loss[i][j] <= 1.10;
    char range[32];
    snprintf(range, sizeof range, i == NB - 1 ? "%.2f+" : "%.2f-%.2f", edges[i], edges[i + 1]);
    if (!count[i]) {
      printf("%-12s %6d %8s %8s %8s %8s %10d\n", range, 0, "-", "-", "-", "-", refused[i]);
      continue;
    }
    printf("%-12s %6d %8.3f %8.3f %8.3f %7.0f%% %10d\n", range, count[i], loss[i][count[i] / 2],
           loss[i][(int)(0.9 * (count[i] - 1))], loss[i][count[i] - 1], 100.0 * within / count[i],
           refused[i]);
  }
  /* each shape's own winners, for reading the table */
  printf("\nwinners (predicted ms):\n");
  for (int r = 0; r < n; r++) {
    printf("  %-20s %-5s", rows[r].shape, rows[r].dtype);
    for (int t = 0; t < NT; t++)
      if (rows[r].w[t].have) printf("  %s %.4g", templates[t] + 5, rows[r].w[t].ms);
    printf("\n");
  }
  for (int r = 0; r < nq; r++)
    for (int t = 0; t < NT; t++)
      space_free(qs[r].sp[t]); /* the suite's rows are the first of these */
  for (int t = 0; t < NT; t++) manifest_free(ms[t]);
  return 0;
}
