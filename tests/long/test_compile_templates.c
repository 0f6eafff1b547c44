/* test_compile_templates.c (long) — every installed template compiles in every configuration of
 * its space, for each of its dtypes, on the first architecture it lists, at the default shape of
 * its family (gemm: 4096x4096x4096, else :nt for templates that need B stored N x K, else
 * 16x4096x4096:nt for those of a few rows; the other families: their example shape): no compile error, crash or timeout, a ptxas report
 * for each, and the occupancy calculator accepts each (launchable: at least one block per SM).
 * Uses the cubin cache (ROOFTUNE_CACHE_DIR), so a rerun is quick. */

/* stages: kernels */
#include "kernels/family.h"
#include "test.h"
#include "compile/compile_pool.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"
#include "model/occupancy.h"

/* Builds the space for one shape; NULL (and a note) when the template has no configuration. */
static space *space_for(const manifest *m, const char *dtype, const char *arch, const char *shape,
                        rt_vars *env) {
  const family_ops *fam = family_find(manifest_family(m));
  problem p;
  rt_error err = {0};
  if (!fam || fam->parse_shape(fam, shape, dtype, NULL, &p, &err) ||
      problem_env(fam, &p, arch_spec_find(arch), gpu_spec_for_arch(arch), env, &err))
    return NULL;
  space *sp = NULL;
  if (manifest_build_space(m, env, &sp, &err)) return NULL;
  return sp;
}

int main(void) {
  char **paths = NULL;
  int count = 0;
  rt_error err = {0};
  char dir[1024];
  CHECK_INT(catalog_list(catalog_path(dir, sizeof dir), &paths, &count, &err), RT_OK);
  if (count == 0) test_skip("no templates installed");
  cubin_cache *cache = NULL;
  if (cubin_cache_open_default(&cache, &err)) cache = NULL;
  for (int t = 0; t < count; t++) {
    manifest *m = NULL;
    CHECK_INT(manifest_load(paths[t], &m, &err), RT_OK);
    if (!m) {
      fprintf(stderr, "%s: %s\n", paths[t], err.text);
      continue;
    }
    const char *arch = manifest_arch(m, 0);
    char *source = NULL;
    CHECK_INT(manifest_read_source(m, &source, &err), RT_OK);
    for (int d = 0; source && d < manifest_ndtypes(m); d++) {
      const char *dtype = manifest_dtype(m, d);
      rt_vars env;
      const family_ops *fam = family_find(manifest_family(m));
      space *sp =
          space_for(m, dtype, arch,
                    fam && strcmp(fam->name, "gemm") ? fam->example_shape : "4096x4096x4096", &env);
      if (!sp && fam && fam->example_more) sp = space_for(m, dtype, arch, fam->example_more, &env);
      if (!sp) sp = space_for(m, dtype, arch, "4096x4096x4096:nt", &env);
      if (!sp) sp = space_for(m, dtype, arch, "16x4096x4096:nt", &env);
      CHECK(sp != NULL);
      if (!sp) {
        fprintf(stderr, "%s %s: no space at 4096^3 (nn or nt) or 16x4096x4096:nt\n",
                manifest_name(m), dtype);
        continue;
      }
      size_t n = space_size(sp);
      compile_job *jobs = calloc(n, sizeof *jobs);
      compile_result *res = calloc(n, sizeof *res);
      unsigned *threads = calloc(n, sizeof *threads), *dyn = calloc(n, sizeof *dyn);
      for (size_t i = 0; i < n; i++) {
        char *text = NULL;
        rt_vars cv;
        unsigned grid[3], block[3], smem = 0;
        CHECK_INT(manifest_config_source(m, sp, i, &env, dtype, source, &text, &err), RT_OK);
        CHECK_INT(manifest_config_vars(m, sp, i, &env, &cv, &err), RT_OK);
        CHECK_INT(manifest_launch(m, &cv, grid, block, &smem, &err), RT_OK);
        threads[i] = block[0] * block[1] * block[2];
        dyn[i] = smem;
        jobs[i].source = text;
        jobs[i].name = manifest_source_name(m);
      }
      compile_options opt;
      manifest_compile_options(m, arch, &opt);
      compile_pool_options popt = {0};
      popt.cache = cache;
      popt.timeout_s = 600;
      compile_pool_stats st;
      CHECK_INT(compile_pool_run(jobs, n, &opt, &popt, res, &st, &err), RT_OK);
      printf("%s %s %s: %zu configurations, %zu compiled, %zu cache hits, %.1f s\n",
             manifest_name(m), arch, dtype, n, st.compiled, st.cache_hits, st.seconds);
      CHECK_INT(st.compiled, n);
      for (size_t i = 0; i < n; i++) {
        if (res[i].status != RT_OK) {
          char cfg[512];
          space_format_config(sp, i, cfg, sizeof cfg);
          fprintf(stderr, "%s %s %s: %s\n", manifest_name(m), dtype, cfg, res[i].message);
          continue;
        }
        CHECK(res[i].report.found && res[i].report.registers > 0);
        occupancy o;
        occupancy_input in = {(int)threads[i], res[i].report.registers, res[i].report.smem_static,
                              (int)dyn[i]};
        CHECK_INT(occupancy_compute(arch_spec_find(arch), &in, &o, &err), RT_OK);
        if (o.blocks_per_sm < 1) {
          char cfg[512];
          space_format_config(sp, i, cfg, sizeof cfg);
          fprintf(stderr, "%s %s %s: cannot launch (%s)\n", manifest_name(m), dtype, cfg,
                  o.limiter);
        }
        CHECK(o.blocks_per_sm >= 1);
      }
      for (size_t i = 0; i < n; i++) {
        free((char *)jobs[i].source);
        compile_result_free(&res[i]);
      }
      free(jobs);
      free(res);
      free(threads);
      free(dyn);
      space_free(sp);
    }
    free(source);
    manifest_free(m);
  }
  catalog_list_free(paths, count);
  cubin_cache_close(cache);
  return test_done();
}
