/* test_families_compile.c — a sample of every template of the shipped declared families
 * (templates/softmax, templates/transpose: their references and tuned templates) compiles with
 * NVRTC for sm_80 and sm_90 without spills, at the family's example shape, for each dtype: the
 * first, middle and last configuration of each space.  Whole spaces: tests/long/test_compile_templates.c. */
/* stages: kernels */
#include "kernels/family.h"
#include "test.h"
#include "compile/compile.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"

TEST_CASE(declared_families) {
  char dir[1200];
  snprintf(dir, sizeof dir, "%s/templates", test_source_dir());
  rt_error err = {0};
  CHECK_INT(family_load_path(dir, &err), RT_OK);
  char **paths = NULL;
  int n = 0;
  CHECK_INT(catalog_list(dir, &paths, &n, &err), RT_OK);
  int compiled = 0;
  static const char *const archs[] = {"sm_80", "sm_90"};
  for (int i = 0; i < n; i++) {
    manifest *m = NULL;
    if (manifest_load(paths[i], &m, &err) != RT_OK) continue;
    const family_ops *fam = family_find(manifest_family(m));
    if (!fam || !fam->declared_in) { /* the C families have compile tests of their own */
      manifest_free(m);
      continue;
    }
    char *source = NULL;
    CHECK_INT(manifest_read_source(m, &source, &err), RT_OK);
    for (int d = 0; source && d < manifest_ndtypes(m); d++)
      for (int a = 0; a < 2; a++) {
        problem p;
        rt_vars env;
        space *sp = NULL;
        CHECK_INT(fam->parse_shape(fam, fam->example_shape, manifest_dtype(m, d), NULL, &p, &err),
                  RT_OK);
        CHECK_INT(
            problem_env(fam, &p, arch_spec_find(archs[a]), gpu_spec_for_arch(archs[a]), &env, &err),
            RT_OK);
        CHECK_INT(manifest_build_space(m, &env, &sp, &err), RT_OK);
        if (!sp) continue;
        size_t picks[3] = {0, space_size(sp) / 2, space_size(sp) - 1};
        for (int k = 0; k < 3; k++) {
          if (k && picks[k] == picks[k - 1]) continue;
          char *text = NULL, cfg[768];
          space_format_config(sp, picks[k], cfg, sizeof cfg);
          CHECK_INT(manifest_config_source(m, sp, picks[k], &env, manifest_dtype(m, d), source,
                                           &text, &err),
                    RT_OK);
          compile_options opt;
          manifest_compile_options(m, archs[a], &opt);
          compile_result r;
          memset(&r, 0, sizeof r);
          rt_status s = compile_source(text, manifest_source_name(m), &opt, &r, &err);
          int ok = s == RT_OK && r.report.found && r.report.spill_stores == 0 &&
                   r.report.spill_loads == 0;
          CHECK(ok);
          printf("%-20s %-5s %-4s [%s]: %s, %d registers, %d B spills\n", manifest_name(m),
                 archs[a], manifest_dtype(m, d), cfg, s ? r.message : "ok", r.report.registers,
                 r.report.spill_stores + r.report.spill_loads);
          compiled += ok;
          compile_result_free(&r);
          free(text);
        }
        space_free(sp);
      }
    free(source);
    manifest_free(m);
  }
  catalog_list_free(paths, n);
  CHECK(compiled >= 20);
  printf("%d configurations of the declared families compiled without spills\n", compiled);
}

TEST_LIST(TEST_ENTRY(declared_families))
