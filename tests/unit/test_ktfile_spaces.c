/* test_ktfile_spaces.c — the brute-forced spaces in ../shared/data/spaces load with their
 * published sizes ("valid" = configurations with a time; failed ones are in the space too).
 * Skips when the data is absent. */
#include <math.h>
#include <unistd.h>

#include "test.h"
#include "tuner/template/ktfile.h"

static const struct {
  const char *file;
  size_t valid;   /* published valid configurations */
  size_t configs; /* records in the file, failures included */
  int params;
} spaces[] = {
    {"convolution_A100.json.gz", 4201, 4362, 10},
    {"convolution_A4000.json.gz", 4201, 4362, 10},
    {"dedispersion_A100.json.gz", 11130, 11130, 8},
    {"dedispersion_A4000.json.gz", 11130, 11130, 8},
    {"gemm_clblast_RTX_3090.json.gz", 17956, 17956, 15},
    {"pnpoly_RTX_3090.json.gz", 3774, 4092, 4},
    {"ktt_coulomb3d_RTX_2080.json.gz", 210, 210, 8},
};

int main(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/data/spaces", test_shared_dir());
  if (access(dir, R_OK) != 0) test_skip("no brute-forced spaces in ../shared/data/spaces");
  for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, spaces[i].file);
    ktfile *kf = NULL;
    rt_error err = {0};
    CHECK_INT(ktfile_load(path, &kf, &err), RT_OK);
    if (!kf) {
      fprintf(stderr, "%s: %s\n", spaces[i].file, err.text);
      continue;
    }
    CHECK_INT(kf->valid, spaces[i].valid);
    CHECK_INT(kf->configs, spaces[i].configs);
    CHECK_INT(space_size(kf->space), spaces[i].configs);
    CHECK_INT(space_nparams(kf->space), spaces[i].params);
    CHECK(kf->optimum_ms > 0 && isfinite(kf->optimum_ms));
    CHECK(ktfile_count_within(kf, 0.05) >= 1);
    /* every configuration finds itself through its text form */
    char cfg[768];
    size_t idx = 0;
    space_format_config(kf->space, kf->optimum_idx, cfg, sizeof cfg);
    CHECK_INT(ktfile_find(kf, cfg, &idx, &err), RT_OK);
    CHECK_INT(idx, kf->optimum_idx);
    printf("%s: %zu configurations, %zu valid, optimum %.4g ms (%s)\n", spaces[i].file,
           kf->configs, kf->valid, kf->optimum_ms, cfg);
    ktfile_free(kf);
  }
  return test_done();
}
