/* test_attn_roles.c — the attention templates' roles: their output tile is BLOCK_M query rows by
 * the head dimension, and BLOCK_N is the key tile one main-loop step streams, so a larger
 * BLOCK_N re-reads nothing less (K and V are read once per query tile) and pads the causal
 * diagonal more: no lever may name it.  A memory- or compute-bound candidate's lever raises the
 * query rows first (attn_wgmma: CONSUMERS, 64 rows each: K and V are read once per 64 more rows).
 * Failing before: attn_wgmma's BLOCK_N was "tile_n", and both levers began with BLOCK_N+. */
/* stages: model */
#include "test.h"
#include "model/diagnose.h"
#include "template/catalog.h"
#include "template/manifest.h"

static diagnosis diagnose_at(const param_roles *roles, const rt_vars *config, double ff,
                             double bf) {
  roofline_ceilings h200;
  roofline_from_spec(gpu_spec_find("h200"), &h200);
  diag_input in;
  memset(&in, 0, sizeof in);
  in.flops = 4.0 * 32 * 128 * 4096.0 * 4096 / 2 * 4; /* 4x32x4096x128 causal */
  in.path = PATH_TC_F16;
  in.wgmma = 1;
  in.roles = roles;
  in.config = config;
  in.facts.grid_blocks = 4 * 32 * 64;
  in.facts.blocks_per_sm = 1;
  in.facts.occupancy = 0.125;
  in.facts.threads_per_block = 256;
  in.time_s = in.flops / (ff * h200.flops[PATH_TC_F16]);
  in.dram_bytes = bf * h200.bw * in.time_s;
  diagnosis d;
  rt_error err = {0};
  CHECK_INT(diagnose(&in, &h200, &d, &err), RT_OK);
  return d;
}

TEST_CASE(roles) {
  static const struct {
    const char *tmpl, *rows; /* the parameter that sets the query rows */
  } t[] = {{"attn_wgmma", "CONSUMERS"}, {"attn_mma", "BLOCK_M"}, {"attn_decode", "Q_ROWS"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    manifest *m = NULL;
    rt_error err = {0};
    CHECK_INT(catalog_find(NULL, t[i].tmpl, &m, &err), RT_OK);
    if (!m) continue;
    param_roles roles;
    manifest_roles(m, &roles);
    CHECK_STR(roles.names[ROLE_TILE_M][0], t[i].rows);
    for (int r = 0; r < ROLE_COUNT; r++)
      for (int k = 0; k < ROLE_MAX_PARAMS; k++) CHECK(strcmp(roles.names[r][k], "BLOCK_N") != 0);
    rt_vars config;
    rt_vars_clear(&config);
    rt_vars_set(&config, t[i].rows, 1);
    rt_vars_set(&config, "BLOCK_N", 128);
    diagnosis mem = diagnose_at(&roles, &config, 0.20, 0.80);
    CHECK_STR(mem.limit, "memory");
    diagnosis cmp = diagnose_at(&roles, &config, 0.70, 0.20);
    CHECK_STR(cmp.limit, "compute");
    char first[64];
    snprintf(first, sizeof first, "%s+", t[i].rows);
    CHECK(strncmp(mem.lever, first, strlen(first)) == 0);
    CHECK(strncmp(cmp.lever, first, strlen(first)) == 0);
    CHECK(strstr(mem.lever, "BLOCK_N") == NULL && strstr(cmp.lever, "BLOCK_N") == NULL);
    printf("%s: memory-bound lever %s, compute-bound lever %s\n", t[i].tmpl, mem.lever, cmp.lever);
    manifest_free(m);
  }
}

TEST_LIST(TEST_ENTRY(roles))
