/* test_ktfile_spaces.c — the brute-forced spaces in ../shared/data/spaces load with their
 * published sizes ("valid" = configurations with a time; failed ones are in the space too).
 * Skips when the data is absent. */
/* stages: template */
#include <math.h>
#include <unistd.h>

#include "test.h"
#include "shared_spaces_util.h"
#include "template/ktfile.h"

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
    {"ktt_convolution_RTX_2080_Ti.json.gz", 5280, 6768, 9},
};

/* The KTT recordings carry 33 Nsight Compute metrics per configuration: every timed one
 * replays with counters and compile data, mapped by ktfile.h's table (the optimum's raw values,
 * read from the file by hand, times the table's scales). */
static const struct {
  const char *file;
  double dram_read_sectors, dram_write_sectors, l2_sectors, occupancy_pct, fma_pct;
  int registers, smem, threads;
  long long grid;
} counted[] = {
    {"ktt_convolution_RTX_2080_Ti.json.gz", 2111687, 2007612, 5102753 + 2097270, 97.71697439212744,
     72.50716326441112, 62, 15904, 256, 32 * 293},
    {"ktt_coulomb3d_RTX_2080.json.gz", 2098872, 2008367, 2107975 + 2099775, 95.47847221767812,
     80.2790237202475, 44, 0, 64, 8 * 128 * 16},
};

static void check_counted(const char *dir) {
  for (size_t i = 0; i < sizeof counted / sizeof counted[0]; i++) {
    ktfile *kf = test_load_space(dir, counted[i].file);
    if (!kf) continue;
    CHECK(kf->counters != NULL && kf->facts != NULL);
    size_t with = 0;
    for (size_t c = 0; kf->counters && c < kf->configs; c++)
      if (!kf->failure[c]) with += kf->counters[c].measured && kf->facts[c].threads_per_block > 0;
    CHECK_INT(with, kf->valid);
    const hw_counters *h = &kf->counters[kf->optimum_idx];
    const static_facts *f = &kf->facts[kf->optimum_idx];
    CHECK_NEAR(h->dram_read_bytes, 32 * counted[i].dram_read_sectors, 1e-6);
    CHECK_NEAR(h->dram_write_bytes, 32 * counted[i].dram_write_sectors, 1e-6);
    CHECK_NEAR(h->l2_bytes, 32 * counted[i].l2_sectors, 1e-6);
    CHECK_NEAR(h->occupancy, counted[i].occupancy_pct / 100, 1e-12);
    CHECK_NEAR(h->fma_pipe, counted[i].fma_pct / 100, 1e-12);
    CHECK_INT(f->registers, counted[i].registers);
    CHECK_INT(f->smem_static, counted[i].smem);
    CHECK_INT(f->threads_per_block, counted[i].threads);
    CHECK_INT(f->grid_blocks, counted[i].grid);
    printf("%s: %zu configurations with counters; optimum %.3g MB DRAM, %.0f %% occupancy\n",
           counted[i].file, with, (h->dram_read_bytes + h->dram_write_bytes) / 1e6,
           100 * h->occupancy);
    ktfile_free(kf);
  }
}

TEST_CASE(every_space) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/data/spaces", test_shared_dir());
  if (access(dir, R_OK) != 0) test_skip("no brute-forced spaces in ../shared/data/spaces");
  for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++) {
    ktfile *kf = test_load_space(dir, spaces[i].file);
    if (!kf) continue;
    rt_error err = {0};
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
    printf("%s: %zu configurations, %zu valid, optimum %.4g ms (%s)\n", spaces[i].file, kf->configs,
           kf->valid, kf->optimum_ms, cfg);
    ktfile_free(kf);
  }
  check_counted(dir);
}

TEST_LIST(TEST_ENTRY(every_space))
