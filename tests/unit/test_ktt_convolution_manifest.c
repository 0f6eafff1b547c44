/* test_ktt_convolution_manifest.c — examples/ktt_convolution/convolution_ktt.json describes the
 * recorded convolution (../shared/data/spaces/ktt_convolution_RTX_2080_Ti.json.gz): every
 * recorded configuration is in its space, its launch is the recorded one (grid = GlobalSize,
 * block = LocalSize, for every configuration that ran), its cost formulas give the problem's
 * 2*4096^2*15^2 FLOPs, and its roles are the ones its README states.  The kernel's source is
 * third-party and not in the project, so a stub stands in for it here (nothing is compiled; with
 * the real file, `rooftune replay --manifest` found the compiled register counts equal to the
 * recorded ones).  Skips without the data. */
/* stages: model */
#include <unistd.h>

#include "test.h"
#include "model/gpu_spec.h"
#include "template/ktfile.h"
#include "template/manifest.h"

static int lookup_rec(void *ctx, const char *name, long long *v) {
  const ktfile *kf = ((const void **)ctx)[0];
  size_t idx = *(const size_t *)((const void **)ctx)[1];
  int p = space_param_index(kf->space, name);
  if (p < 0) return 0;
  *v = space_value(kf->space, idx, p);
  return 1;
}

TEST_CASE(recorded_space) {
  char rec[1200];
  snprintf(rec, sizeof rec, "%s/data/spaces/ktt_convolution_RTX_2080_Ti.json.gz",
           test_shared_dir());
  if (access(rec, R_OK) != 0)
    test_skip("no ktt_convolution_RTX_2080_Ti.json.gz in ../shared/data/spaces");
  char tmp[64] = "/tmp/rt_ktt_conv_XXXXXX", man[1200], src[1200], stub[200];
  CHECK(mkdtemp(tmp) != NULL);
  snprintf(man, sizeof man, "%s/examples/ktt_convolution/convolution_ktt.json", test_source_dir());
  snprintf(stub, sizeof stub, "%s/convolution_ktt.json", tmp);
  snprintf(src, sizeof src, "%s/convolution.cu", tmp);
  FILE *in = fopen(man, "r"), *out = fopen(stub, "w"), *cu = fopen(src, "w");
  CHECK(in && out && cu);
  char buf[8192];
  size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
  if (out) fwrite(buf, 1, n, out);
  if (cu) fputs("// stand-in: the real kernel is benchmark_hub's convolution.cu\n", cu);
  if (in) fclose(in);
  if (out) fclose(out);
  if (cu) fclose(cu);

  ktfile *kf = NULL;
  manifest *m = NULL;
  rt_error err = {0};
  CHECK_INT(ktfile_load(rec, &kf, &err), RT_OK);
  CHECK_INT(manifest_load(stub, &m, &err), RT_OK);
  if (!err.text[0] && kf && m) {
    const gpu_spec *gpu = gpu_spec_match_name(kf->device_name);
    rt_vars env;
    rt_vars_clear(&env);
    CHECK_INT(gpu_spec_env(arch_spec_find(gpu->arch), gpu, &env, &err), RT_OK);
    CHECK_INT(manifest_env_dtype("f32", &env, &err), RT_OK);
    space *sp = NULL;
    CHECK_INT(manifest_build_space(m, &env, &sp, &err), RT_OK);
    size_t mapped = 0, launches = 0, same = 0;
    for (size_t i = 0; sp && i < kf->configs; i++) {
      uint16_t cfg[16];
      const void *ctx[2] = {kf, &i};
      if (!space_values_to_config(sp, lookup_rec, (void *)ctx, cfg)) continue;
      long j = space_index(sp, cfg);
      if (j < 0) continue;
      mapped++;
      candidate_plan pl;
      CHECK_INT(manifest_plan(m, sp, (size_t)j, &env, &pl, &err), RT_OK);
      CHECK_NEAR(pl.flops, 2.0 * 4096 * 4096 * 225, 0);
      CHECK(pl.executed_flops >= pl.flops && pl.dram_bytes > 4.0 * 2 * 4096 * 4096);
      if (kf->failure[i] || !kf->facts[i].threads_per_block) continue;
      launches++;
      same += (long long)pl.grid[0] * pl.grid[1] * pl.grid[2] == kf->facts[i].grid_blocks &&
              (int)(pl.block[0] * pl.block[1] * pl.block[2]) == kf->facts[i].threads_per_block;
    }
    printf(
        "%zu of %zu recorded configurations in the manifest's space; launch equal to the "
        "recorded one for %zu of %zu\n",
        mapped, kf->configs, same, launches);
    CHECK_INT(mapped, kf->configs);
    CHECK_INT(launches, kf->valid);
    CHECK_INT(same, launches);
    param_roles roles;
    manifest_roles(m, &roles);
    CHECK_STR(roles.names[ROLE_TILE_M][0], "TILE_SIZE_Y");
    CHECK_STR(roles.names[ROLE_TILE_N][0], "TILE_SIZE_X");
    CHECK_STR(roles.names[ROLE_WARPS][0], "BLOCK_SIZE_Y");
    space_free(sp);
  } else {
    fprintf(stderr, "%s\n", err.text);
  }
  manifest_free(m);
  ktfile_free(kf);
  unlink(stub);
  unlink(src);
  rmdir(tmp);
}

TEST_LIST(TEST_ENTRY(recorded_space))
