/* bench_transfer.c — leave one GPU out: what the same kernel's recordings on the other GPUs give
 * a search of the GPU left out.  For every recording in the spaces folder whose kernel (its
 * kernel_name) was recorded on other GPUs too (the shared convolution and dedispersion, two GPUs
 * each), the strategy runs cold and with every other GPU's recording as its priors (`rooftune
 * replay --prior A --prior B ...`: the configurations by their mean rank over them,
 * replay_rank_priors; the first STRATEGY_PRIOR_FIRST open the search, more while they lead:
 * strategy.h, "How far a prior is trusted"), 0..N-1 seeds each.
 * Figures are `rooftune replay`'s: the median evaluations to within 5 % of the optimum (budget
 * 1000, a miss counts 2000), the score random search's exact expectation over that median, its
 * geometric mean over the held-out files, and each file's ratio warm / cold (the target: no file
 * under 0.9).  CPU per suggestion: the process CPU time of the runs (clock()) over the results
 * told, ask and tell together, the recordings' loading left out.
 *
 * --noise SIGMA: every recording is held out, and its prior is the same recording with each time
 * multiplied by exp(SIGMA x a standard normal draw) (a fixed seed): a prior of known quality, from
 * nearly the truth (0.1) to nearly none (2), on kernels recorded on one GPU only; a way to see
 * what a trust rule costs and gains across prior quality where other GPUs' recordings are few.
 *
 * usage: bench_transfer [--spaces DIR] [--seeds N] [--strategy S] [--noise SIGMA]
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/replay.h"
#include "search/strategy.h"

enum { MAX_FILES = 64 };

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* The recordings in dir (*.json, *.json.gz), loaded, sorted by name; returns how many. */
static int load_dir(const char *dir, ktfile **kf) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  char *names[MAX_FILES];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < MAX_FILES)
    if (strstr(e->d_name, ".json")) {
      size_t len = strlen(dir) + strlen(e->d_name) + 2;
      names[n] = malloc(len);
      snprintf(names[n], len, "%s/%s", dir, e->d_name);
      n++;
    }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  int k = 0;
  for (int i = 0; i < n; i++) {
    rt_error err = {0};
    if (ktfile_load(names[i], &kf[k], &err) == RT_OK)
      k++;
    else
      fprintf(stderr, "bench_transfer: %s\n", err.text);
    free(names[i]);
  }
  return k;
}

/* A standard normal draw (Box-Muller over a 64-bit LCG): the same numbers on every machine. */
static double normal_draw(unsigned long long *state) {
  double u[2];
  for (int i = 0; i < 2; i++) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    u[i] = ((double)(*state >> 11) + 0.5) / 9007199254740992.0;
  }
  return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

/* kf's times, each multiplied by exp(sigma x a normal draw): a prior of known quality. */
static void add_noise(ktfile *kf, double sigma) {
  unsigned long long state = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < kf->configs; i++)
    if (isfinite(kf->time_ms[i])) kf->time_ms[i] *= exp(sigma * normal_draw(&state));
}

/* One run of seeds on kf with npriors priors; the CPU seconds it took into *cpu. */
static int run(const ktfile *kf, const char *strat, int seeds, const ktfile *const *priors,
               int npriors, replay_stats *rs, double *cpu) {
  rt_error err = {0};
  replay_given given = {0};
  clock_t c0 = clock();
  rt_status rc = replay_run_given(kf, strat, seeds, REPLAY_DEFAULT_BUDGET, REPLAY_DEFAULT_EPS,
                                  priors, npriors, &given, rs, &err);
  *cpu += (double)(clock() - c0) / CLOCKS_PER_SEC;
  if (rc) fprintf(stderr, "bench_transfer: %s: %s\n", kf->path, err.text);
  return rc != RT_OK;
}

int main(int argc, char **argv) {
  const char *dir = NULL, *strat = NULL;
  int seeds = 30;
  double noise = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--spaces") && i + 1 < argc)
      dir = argv[++i];
    else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
      seeds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--strategy") && i + 1 < argc)
      strat = argv[++i];
    else if (!strcmp(argv[i], "--noise") && i + 1 < argc)
      noise = atof(argv[++i]);
    else {
      fprintf(stderr,
              "usage: bench_transfer [--spaces DIR] [--seeds N] [--strategy S] [--noise SIGMA]\n");
      return 2;
    }
  }
  char defdir[1200];
  if (!dir) {
    snprintf(defdir, sizeof defdir, "%s/../shared/data/spaces", ROOFTUNE_SOURCE_DIR);
    dir = defdir;
  }
  if (seeds < 1) seeds = 1;
  static ktfile *kf[MAX_FILES];
  int n = load_dir(dir, kf);
  static ktfile *noisy[MAX_FILES];
  if (noise >= 0 && load_dir(dir, noisy) != n) return 1;
  for (int f = 0; f < n && noise >= 0; f++) add_noise(noisy[f], noise);
  printf(
      "bench_transfer: %s, %d seeds, budget %d, leave one GPU out (every other GPU's "
      "recording of the kernel as a prior)\n\n",
      strat ? strat : strategy_default(), seeds, REPLAY_DEFAULT_BUDGET);
  printf(
      "| held out | priors | random | cold median | cold score | with priors median | "
      "score | warm / cold |\n|---|---|---|---|---|---|---|---|\n");
  double lcold = 0, lwarm = 0, worst = INFINITY, cpu = 0;
  size_t steps = 0;
  int held = 0;
  for (int f = 0; f < n; f++) {
    const ktfile *pri[MAX_FILES];
    int np = 0;
    char names[512] = "";
    if (noise >= 0) {
      pri[np++] = noisy[f];
      snprintf(names, sizeof names, "itself x exp(%.2f N(0,1))", noise);
    }
    for (int g = 0; g < n && noise < 0; g++)
      if (g != f && kf[f]->kernel_name[0] && !strcmp(kf[f]->kernel_name, kf[g]->kernel_name)) {
        pri[np++] = kf[g];
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", kf[g]->device_name);
      }
    if (np == 0) continue;
    replay_stats cold, warm;
    if (run(kf[f], strat, seeds, NULL, 0, &cold, &cpu)) return 1;
    if (run(kf[f], strat, seeds, pri, np, &warm, &cpu)) return 1;
    double sc = cold.random_expected / cold.median, sw = warm.random_expected / warm.median;
    printf("| %s | %s | %.1f | %.1f | %.2f | %.1f | %.2f | %.2f |\n", base_name(kf[f]->path), names,
           cold.random_expected, cold.median, sc, warm.median, sw, sw / sc);
    lcold += log(sc), lwarm += log(sw), held++;
    if (sw / sc < worst) worst = sw / sc;
    for (int s = 0; s < seeds; s++) {
      steps += cold.evals[s] > 0 ? (size_t)cold.evals[s] : REPLAY_DEFAULT_BUDGET;
      steps += warm.evals[s] > 0 ? (size_t)warm.evals[s] : REPLAY_DEFAULT_BUDGET;
    }
    replay_stats_free(&cold);
    replay_stats_free(&warm);
  }
  if (held)
    printf(
        "\nover the %d held-out files (geometric mean of the score, random = 1): cold %.2f, "
        "with every other GPU's recording as priors %.2f (%.2fx); the worst file %.2fx its "
        "cold run\n",
        held, exp(lcold / held), exp(lwarm / held), exp((lwarm - lcold) / held), worst);
  printf("CPU per suggestion (ask and tell): %.3f ms over %zu results told\n",
         steps ? 1e3 * cpu / (double)steps : 0.0, steps);
  for (int f = 0; f < n; f++) ktfile_free(kf[f]);
  for (int f = 0; f < n && noise >= 0; f++) ktfile_free(noisy[f]);
  return 0;
}
