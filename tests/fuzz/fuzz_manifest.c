/* fuzz_manifest.c — the manifest loader (template/manifest.h): any file loads or fails
 * with an error naming it; what loads builds its space for a small GEMM on the H200 model and
 * plans, prices and writes the source prefix of its first configurations.  Spaces of more than
 * 10^5 combinations are not built here (each input must stay fast); their refusal above the
 * stated limit is a unit test. */
#include "fuzz_util.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  static const uint8_t src[] = "extern \"C\" __global__ void kernel() {}\n";
  fuzz_write("kernel.cu", src, sizeof src - 1); /* the source most seed manifests name */
  fuzz_write("k.cu", src, sizeof src - 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write("m.json", data, size);
  manifest *m = NULL;
  rt_error err = {0};
  if (manifest_load(path, &m, &err) != RT_OK) {
    if (!err.source[0]) abort(); /* every error names the file */
    return 0;
  }
  double product = 1;
  for (int i = 0; i < manifest_nparams(m); i++) product *= manifest_param(m, i)->count;
  rt_vars env;
  rt_vars_clear(&env);
  rt_vars_set(&env, "M", 64);
  rt_vars_set(&env, "N", 128);
  rt_vars_set(&env, "K", 256);
  rt_vars_set(&env, "BATCH", 1);
  manifest_env_dtype("f16", &env, NULL);
  gpu_spec_env(arch_spec_find("sm_90"), gpu_spec_find("h200"), &env, NULL);
  space *sp = NULL;
  if (product <= 1e5 && manifest_build_space(m, &env, &sp, &err) == RT_OK) {
    for (size_t i = 0; i < space_size(sp) && i < 8; i++) {
      candidate_plan pl;
      manifest_plan(m, sp, i, &env, &pl, &err);
      char *prefix = NULL;
      if (manifest_source_prefix(m, sp, i, &env, manifest_dtype(m, 0), &prefix, &err) == RT_OK) {
        /* the prefix is #define lines and #line: a quote or newline from the file never gets in */
        const char *line = strstr(prefix, "#line 1 \"");
        if (!line || strchr(line + 9, '"') != strrchr(prefix, '"') ||
            strchr(line, '\n') != prefix + strlen(prefix) - 1)
          abort();
      }
      free(prefix);
    }
  }
  space_free(sp);
  manifest_free(m);
  return 0;
}
