/* gemm_harness.h — a direct driver-API harness for the gemm templates, shared by
 * bench/bench_gemm.c and tests/gpu/test_gemm_verify.c: open GPU 0 with its primary context,
 * build a template's space for a problem on this GPU, compile configurations (compile pool,
 * in-process module cache keyed by source text), launch through the gemm family's ABI, verify
 * against the cuBLASLt reference, and time with CUDA events after an L2 flush.  Kept apart
 * from the tuner's cuda device (tuner/device.h) so these checks see the family alone. */
#ifndef ROOFTUNE_GEMM_HARNESS_H
#define ROOFTUNE_GEMM_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm.h"
#include "compile/compile.h"
#include "compile/compile_pool.h"
#include "driver/cuda_driver.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"
#include "search/strategy.h"
#include "tuner/tune.h"

#define GH_MAX_MODULES 512

typedef struct gh_module {
  char *source;  /* the full source text (the key) */
  char arch[16]; /* its target */
  CUmodule mod;  /* loaded module; NULL when it did not compile */
  CUfunction fn; /* the entry */
  int registers; /* ptxas facts */
  int spills;
} gh_module;

typedef struct gh {
  CUdevice dev;       /* GPU 0 */
  CUcontext ctx;      /* its primary context */
  CUstream stream;    /* the stream everything runs on */
  cuda_gpu_info info; /* name, cc, ... */
  CUdeviceptr flush;  /* a buffer larger than L2, memset before each timed run */
  size_t flush_bytes;
  CUevent ev0, ev1;               /* timing events */
  gh_module mods[GH_MAX_MODULES]; /* compiled configurations */
  int nmods;
  char tmpl_dir[1024]; /* templates/gemm */
} gh;

/* Opens GPU 0.  Returns RT_ERR_NO_DRIVER / RT_ERR_NO_GPU (with err) when there is none. */
static inline rt_status gh_open(gh *h, const char *source_dir, rt_error *err) {
  memset(h, 0, sizeof *h);
  rt_status st;
  if ((st = cuda_driver_load(err))) return st;
  int n = 0;
  if ((st = cuda_gpu_count(&n, err))) return st;
  if (n < 1) return rt_error_set(err, RT_ERR_NO_GPU, "no CUDA GPU");
  if ((st = cuda_gpu_query(0, &h->info, err)) ||
      (st = cuda_check(cu.cuDeviceGet(&h->dev, 0), "cuDeviceGet", err)) ||
      (st = cuda_check(cu.cuDevicePrimaryCtxRetain(&h->ctx, h->dev), "cuDevicePrimaryCtxRetain",
                       err)) ||
      (st = cuda_check(cu.cuCtxSetCurrent(h->ctx), "cuCtxSetCurrent", err)) ||
      (st = cuda_check(cu.cuStreamCreate(&h->stream, 0), "cuStreamCreate", err)) ||
      (st = cuda_check(cu.cuEventCreate(&h->ev0, 0), "cuEventCreate", err)) ||
      (st = cuda_check(cu.cuEventCreate(&h->ev1, 0), "cuEventCreate", err)))
    return st;
  h->flush_bytes = (size_t)(h->info.l2_bytes > 0 ? h->info.l2_bytes : 64 << 20) * 4;
  if ((st = cuda_check(cu.cuMemAlloc_v2(&h->flush, h->flush_bytes), "allocate the L2 flush buffer",
                       err)))
    return st;
  snprintf(h->tmpl_dir, sizeof h->tmpl_dir, "%s/templates/gemm", source_dir);
  return RT_OK;
}

static inline void gh_close(gh *h) {
  for (int i = 0; i < h->nmods; i++) {
    if (h->mods[i].mod) cu.cuModuleUnload(h->mods[i].mod);
    free(h->mods[i].source);
  }
  if (h->flush) cu.cuMemFree_v2(h->flush);
  if (h->ev0) cu.cuEventDestroy_v2(h->ev0);
  if (h->ev1) cu.cuEventDestroy_v2(h->ev1);
  if (h->stream) cu.cuStreamDestroy_v2(h->stream);
  if (h->ctx) cu.cuDevicePrimaryCtxRelease_v2(h->dev);
}

/* The architecture to compile template m for on this GPU ("sm_90a" when the manifest asks for
 * it on a cc 9.0 part), or NULL when the manifest does not list this GPU's. */
static inline const char *gh_arch(const gh *h, const manifest *m, char *buf, size_t size) {
  int cc = h->info.cc_major * 10 + h->info.cc_minor;
  snprintf(buf, size, "sm_%da", cc);
  if (manifest_has_arch(m, buf)) return buf;
  snprintf(buf, size, "sm_%d", cc);
  return manifest_has_arch(m, buf) ? buf : NULL;
}

/* Problem + dtype + device facts for template m. */
static inline rt_status gh_env(const gh *h, const problem *p, rt_vars *env, rt_error *err) {
  int cc = h->info.cc_major * 10 + h->info.cc_minor;
  const arch_spec *as = arch_spec_for_cc(cc);
  if (!as)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "no architecture table entry for cc %d", cc);
  rt_status st;
  if ((st = problem_env(&gemm_family, p, as, gpu_spec_match(h->info.name, cc), env, err)))
    return st;
  rt_vars_set(env, "device.smem_per_block_optin", h->info.smem_per_block_optin);
  rt_vars_set(env, "device.sm_count", h->info.sm_count);
  return RT_OK;
}

static inline char *gh_source(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                              const char *dtype, rt_error *err) {
  char *text = NULL;
  manifest_config_source(m, sp, idx, env, dtype, NULL, &text, err);
  return text;
}

static inline gh_module *gh_find(gh *h, const char *source, const char *arch) {
  for (int i = 0; i < h->nmods; i++)
    if (!strcmp(h->mods[i].arch, arch) && !strcmp(h->mods[i].source, source)) return &h->mods[i];
  return NULL;
}

/* Compiles (in the compile pool) and loads configurations idx[0..n) of sp; afterwards
 * gh_find(source) gives each one's function (fn NULL when it failed, with a message printed). */
static inline void gh_compile(gh *h, const manifest *m, const space *sp, const size_t *idx, int n,
                              const rt_vars *env, const char *dtype, const char *arch) {
  compile_job *jobs = calloc((size_t)n, sizeof *jobs);
  compile_result *res = calloc((size_t)n, sizeof *res);
  char **texts = calloc((size_t)n, sizeof *texts);
  int nj = 0;
  for (int i = 0; i < n; i++) {
    char *t = gh_source(m, sp, idx[i], env, dtype, NULL);
    if (!t || gh_find(h, t, arch)) {
      free(t);
      continue;
    }
    int dup = 0;
    for (int j = 0; j < nj; j++) dup |= !strcmp(texts[j], t);
    if (dup) {
      free(t);
      continue;
    }
    texts[nj] = t;
    jobs[nj].source = t;
    jobs[nj].name = manifest_source_name(m);
    nj++;
  }
  compile_options opt;
  manifest_compile_options(m, arch, &opt);
  compile_pool_options po;
  memset(&po, 0, sizeof po);
  rt_error err;
  if (nj && compile_pool_run(jobs, (size_t)nj, &opt, &po, res, NULL, &err) != RT_OK)
    fprintf(stderr, "compile pool: %s\n", err.text);
  for (int j = 0; j < nj; j++) {
    if (h->nmods == GH_MAX_MODULES) {
      free(texts[j]);
      compile_result_free(&res[j]);
      continue;
    }
    gh_module *g = &h->mods[h->nmods++];
    g->source = texts[j];
    snprintf(g->arch, sizeof g->arch, "%s", arch);
    if (res[j].status == RT_OK) {
      g->registers = res[j].report.registers;
      g->spills = res[j].report.spill_stores;
      if (cu.cuModuleLoadData(&g->mod, res[j].cubin) != CUDA_SUCCESS ||
          cu.cuModuleGetFunction(&g->fn, g->mod, res[j].lowered_name) != CUDA_SUCCESS) {
        fprintf(stderr, "%s: module load failed\n", manifest_name(m));
        g->fn = NULL;
      }
    } else {
      fprintf(stderr, "%s: compile failed: %s\n", manifest_name(m), res[j].message);
    }
    compile_result_free(&res[j]);
  }
  free(texts);
  free(jobs);
  free(res);
}

/* Launches configuration idx through the family (vars, geometry from the manifest). */
static inline rt_status gh_launch(gh *h, family_gpu *g, const manifest *m, const space *sp,
                                  size_t idx, const rt_vars *env, CUfunction fn, rt_error *err) {
  candidate_plan pl;
  rt_status st = manifest_plan(m, sp, idx, env, &pl, err);
  if (st) return st;
  return gemm_family.gpu_launch(g, fn, &pl.vars, pl.grid, pl.block, pl.smem, h->stream, err);
}

/* Median milliseconds of `reps` runs of launch(ctx), each after an L2 flush. */
static inline double gh_time(gh *h, rt_status (*launch)(void *ctx, rt_error *err), void *ctx,
                             int reps) {
  double t[64];
  if (reps > 64) reps = 64;
  rt_error err;
  if (launch(ctx, &err) != RT_OK) return NAN; /* warm-up */
  for (int r = 0; r < reps; r++) {
    cu.cuMemsetD8Async(h->flush, (unsigned char)r, h->flush_bytes, h->stream);
    cu.cuEventRecord(h->ev0, h->stream);
    if (launch(ctx, &err) != RT_OK) return NAN;
    cu.cuEventRecord(h->ev1, h->stream);
    if (cu.cuEventSynchronize(h->ev1) != CUDA_SUCCESS) return NAN;
    float ms = 0;
    cu.cuEventElapsedTime(&ms, h->ev0, h->ev1);
    t[r] = ms;
  }
  for (int i = 1; i < reps; i++) /* insertion sort */
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  return reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
}

/* n indices spread evenly over [0, size) (first and last included), deduplicated. */
static inline int gh_spread(size_t size, int n, size_t *out) {
  int k = 0;
  if (size == 0) return 0;
  for (int i = 0; i < n; i++) {
    size_t idx = n == 1 ? 0 : (size_t)((double)i * (double)(size - 1) / (double)(n - 1) + 0.5);
    if (k == 0 || out[k - 1] != idx) out[k++] = idx;
  }
  return k;
}

typedef struct gh_predict_ctx {
  const manifest *m;
  const space *sp;
  const rt_vars *env;
  const gpu_spec *gpu;
  const problem *p;
  double min_bytes;
} gh_predict_ctx;
static inline double gh_predict(void *ctx, size_t idx) {
  const gh_predict_ctx *c = ctx;
  return tune_predict_config(c->m, c->sp, idx, c->env, c->gpu, c->p->dtype, c->min_bytes);
}

/* Up to n configurations of sp worth measuring for problem p: the n/2 the model device ranks
 * fastest on gpu (NULL: none; the tuner's own ranking, strategy_rank_predicted), then the rest
 * spread over the space as gh_spread does, without repeats.  Returns how many. */
static inline int gh_pick_for(const gpu_spec *gpu, const manifest *m, const space *sp,
                              const rt_vars *env, const problem *p, int n, size_t *out) {
  const size_t size = space_size(sp);
  int k = 0;
  gh_predict_ctx c = {m, sp, env, gpu, p, gemm_family.min_bytes(&gemm_family, p)};
  size_t *order = NULL;
  if (gpu && size && strategy_rank_predicted(sp, gh_predict, &c, &order, NULL) == RT_OK) {
    for (size_t i = 0; i < size && k < n / 2 && isfinite(gh_predict(&c, order[i])); i++)
      out[k++] = order[i];
    free(order);
  }
  size_t *spread = malloc((size_t)(n > 0 ? n : 1) * sizeof *spread);
  int ns = spread ? gh_spread(size, n, spread) : 0;
  for (int i = 0; i < ns && k < n; i++) {
    int dup = 0;
    for (int j = 0; j < k; j++) dup |= out[j] == spread[i];
    if (!dup) out[k++] = spread[i];
  }
  free(spread);
  return k;
}

/* gh_pick_for on this GPU's model: its table entry, else the first of its architecture. */
static inline int gh_pick(const gh *h, const manifest *m, const space *sp, const rt_vars *env,
                          const problem *p, int n, size_t *out) {
  const int cc = h->info.cc_major * 10 + h->info.cc_minor;
  const gpu_spec *gpu = gpu_spec_match(h->info.name, cc);
  if (!gpu) gpu = gpu_spec_for_arch(arch_spec_for_cc(cc) ? arch_spec_for_cc(cc)->name : NULL);
  return gh_pick_for(gpu, m, sp, env, p, n, out);
}

#endif
