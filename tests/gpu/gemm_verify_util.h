/* gemm_verify_util.h — shared by the gemm GPU verification tests (test_gemm_verify.c,
 * test_gemm_fp8_verify.c): every gemm template, a few configurations each (spread over its
 * space, with split-K, gemm_wgmma's producer warpgroup, persistent grid and cluster among them),
 * and cuBLASLt's candidates for one problem, each verified against the family's reference with
 * the output poisoned first; a cuBLASLt candidate's text is parsed back and replayed through
 * gemm_lt_matmul_epi (the runtime's path) and verified too.  Prints one line per check with its
 * relative error. */
#ifndef ROOFTUNE_GEMM_VERIFY_UTIL_H
#define ROOFTUNE_GEMM_VERIFY_UTIL_H

#include "../../bench/gemm_harness.h"
#include "templates/gemm/gemm_epilogue.h"
#include "test.h"

static const char *const templates[] = {"gemm_simt", "gemm_mma", "gemm_wgmma", "gemm_skinny"};
#define NTEMPLATES (sizeof templates / sizeof templates[0])

/* When none of idx[0..n) has parameter NAME above its smallest value, puts a configuration
 * that has into idx[slot] (one from the middle of the space on). */
static void ensure_on(const space *sp, size_t *idx, int n, const char *name, int slot) {
  int p = space_param_index(sp, name);
  if (p < 0 || slot >= n) return;
  long long lo = space_param_at(sp, p)->ints ? space_param_at(sp, p)->ints[0] : 0;
  for (int i = 0; i < n; i++)
    if (space_value(sp, idx[i], p) > lo) return;
  for (size_t j = space_size(sp) / 2; j < space_size(sp); j++)
    if (space_value(sp, j, p) > lo) {
      idx[slot] = j;
      return;
    }
}

/* Verifies every applicable template and cuBLASLt's candidates on one problem; lt_min is the
 * fewest cuBLASLt candidates it must list (0 where cuBLASLt has no form of the problem). */
static void verify_problem_lt(gh *h, manifest *const *ms, const char *shape, const char *dtype,
                              int lt_min) {
  problem p;
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(gemm_family.parse_shape(&gemm_family, shape, dtype, NULL, &p, &err), RT_OK);
  family_gpu *g = NULL;
  rt_status st = gemm_family.gpu_setup(&gemm_family, &p, 42, NULL, h->stream, &g, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "%s %s: setup: %s\n", shape, dtype, err.text);
    return;
  }
  rt_vars env;
  CHECK_INT(gh_env(h, &p, &env, &err), RT_OK);
  for (size_t t = 0; t < sizeof templates / sizeof templates[0]; t++) {
    manifest *m = ms[t];
    char archbuf[16];
    const char *arch = gh_arch(h, m, archbuf, sizeof archbuf);
    if (!arch || !manifest_has_dtype(m, dtype)) continue;
    space *sp = NULL;
    rt_error serr;
    if (manifest_build_space(m, &env, &sp, &serr) != RT_OK) {
      printf("%-10s %-16s %-4s: not applicable (%s)\n", manifest_name(m), shape, dtype, serr.text);
      continue;
    }
    size_t idx[6];
    int n = gh_spread(space_size(sp), 6, idx);
    /* the first configuration has every switch off; make sure split-K (slot 1), the
     * warp-specialised producer (slot 2), a persistent grid (slot 3) and a cluster sharing A by
     * multicast (slot 4) are among the others */
    ensure_on(sp, idx, n, "SPLIT_K", 1);
    ensure_on(sp, idx, n, "PRODUCER", 2);
    ensure_on(sp, idx, n, "PERSISTENT", 3);
    ensure_on(sp, idx, n, "CLUSTER", 4);
    gh_compile(h, m, sp, idx, n, &env, dtype, arch);
    for (int i = 0; i < n; i++) {
      char config[512];
      space_format_config(sp, idx[i], config, sizeof config);
      char *src = gh_source(m, sp, idx[i], &env, dtype, NULL);
      gh_module *mod = src ? gh_find(h, src, arch) : NULL;
      free(src);
      CHECK(mod && mod->fn);
      if (!mod || !mod->fn) continue;
      double rel = NAN;
      rt_error_clear(&err);
      st = gemm_family.gpu_poison(g, h->stream, &err);
      if (!st) st = gh_launch(h, g, m, sp, idx[i], &env, mod->fn, &err);
      if (!st) st = gemm_family.gpu_verify(g, &rel, &err);
      CHECK_INT(st, RT_OK);
      printf("%-10s %-16s %-4s [%s]: %s, relative error %.2e\n", manifest_name(m), shape, dtype,
             config, st ? "FAIL" : "ok", rel);
      if (st) fprintf(stderr, "  %s\n", err.text);
    }
    space_free(sp);
  }
  /* cuBLASLt candidates, and the replay of their texts */
  int count = 0;
  CHECK_INT(gemm_family.library_list(g, 4, &count, &err), RT_OK);
  CHECK(count >= lt_min);
  if (count < lt_min)
    fprintf(stderr, "%s %s: %d cuBLASLt candidates, %d expected\n", shape, dtype, count, lt_min);
  gemm_epi_args epi_args;
  gemm_gpu_epi_args(g, &epi_args);
  for (int i = 0; i < count; i++) {
    char text[256];
    double rel = NAN;
    gemm_lt_algo a;
    CHECK_INT(gemm_family.library_describe(g, i, text, sizeof text, &err), RT_OK);
    st = gemm_family.gpu_poison(g, h->stream, &err);
    if (!st) st = gemm_family.library_launch(g, i, h->stream, &err);
    if (!st) st = gemm_family.gpu_verify(g, &rel, &err);
    CHECK_INT(st, RT_OK);
    printf("cublaslt   %-16s %-4s [%s]: %s, relative error %.2e\n", shape, dtype, text,
           st ? "FAIL" : "ok", rel);
    if (st) fprintf(stderr, "  %s\n", err.text);
    CHECK_INT(gemm_lt_algo_parse(text, &a, &err), RT_OK);
    cublasLtHandle_t lt = NULL;
    CHECK_INT(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
    CUdeviceptr ws = 0;
    cu.cuMemAlloc_v2(&ws, gemm_gpu_workspace_bytes(g));
    CUdeviceptr A, B, C;
    gemm_gpu_buffers(g, &A, &B, &C);
    st = gemm_family.gpu_poison(g, h->stream, &err);
    if (!st)
      st = gemm_lt_matmul_epi(lt, &p, &a, A, B, C, &epi_args, ws, gemm_gpu_workspace_bytes(g),
                              h->stream, &err);
    if (!st) st = gemm_family.gpu_verify(g, &rel, &err);
    CHECK_INT(st, RT_OK);
    if (st) fprintf(stderr, "  replay of \"%s\": %s\n", text, err.text);
    cu.cuMemFree_v2(ws);
    cublasLtDestroy(lt);
  }
  gemm_family.gpu_teardown(g);
}

static void verify_problem(gh *h, manifest *const *ms, const char *shape, const char *dtype) {
  verify_problem_lt(h, ms, shape, dtype, 1);
}

/* Opens the GPU (or skips) and loads the templates' manifests. */
static void verify_open(gh *h, manifest **ms) {
  rt_error err;
  rt_error_clear(&err);
  if (gh_open(h, test_source_dir(), &err) != RT_OK) {
    char why[900];
    snprintf(why, sizeof why, "no GPU: %s", err.text);
    test_skip(why);
  }
  printf("GPU: %s (cc %d.%d)\n", h->info.name, h->info.cc_major, h->info.cc_minor);
  for (size_t t = 0; t < NTEMPLATES; t++) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.json", h->tmpl_dir, templates[t]);
    CHECK_INT(manifest_load(path, &ms[t], &err), RT_OK);
  }
}

#endif
