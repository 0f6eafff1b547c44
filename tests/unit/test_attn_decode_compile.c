/* test_attn_decode_compile.c — a small deterministic sample of attn_decode's default space
 * compiles with NVRTC for sm_80 and sm_90 without spills, with mma.sync m16n8k16 in the PTX and
 * the configuration's loads (cp.async for STAGES >= 2, ld.global.nc.L1::no_allocate for the
 * direct loads of STAGES 1); registers, shared memory and spills are printed.  The problems:
 * the brief's 64x32:8x1:8192x128 (GQA 4:1, D 128) contiguous and paged (PAGE 16), and two that
 * reach the other head dims and row tiles (D 256 with GQA 8:1 and SQ 4 causal, paged by 32:
 * Q_ROWS 32; D 64 with GQA 8:1).  Configurations are spread over each space, shifted by arch,
 * cycling through f16 and bf16; then named ones at the edges (the register-heaviest: D 256 with
 * the deepest ring; the largest direct-load staging; configurations that once
 * spilled).  Every configuration of the spaces is compiled by tests/long/test_attn_decode_space.c. */
/* stages: model */
#include "../attn_decode_util.h"

static int compile_one(const char *arch, const char *dtype, const char *shape,
                       const char *config_or_null, size_t pick, int npick) {
  manifest *m = NULL;
  space *sp = NULL;
  rt_vars env;
  rt_error err;
  rt_error_clear(&err);
  rt_status st = adu_space(arch, dtype, shape, &m, &sp, &env, &err);
  CHECK_INT(st, RT_OK);
  if (st) {
    fprintf(stderr, "%s %s %s: %s\n", arch, dtype, shape, err.text);
    return 0;
  }
  size_t n = space_size(sp), idx = 0;
  if (config_or_null) {
    st = space_parse_config(sp, config_or_null, &idx, &err);
    CHECK_INT(st, RT_OK);
    if (st) {
      fprintf(stderr, "%s %s %s [%s]: %s\n", arch, dtype, shape, config_or_null, err.text);
      space_free(sp);
      manifest_free(m);
      return 0;
    }
  } else {
    idx = (size_t)(((double)pick + 0.5) * (double)n / npick);
    if (idx >= n) idx = n - 1;
  }
  char config[512];
  space_format_config(sp, idx, config, sizeof config);
  char *text = adu_source(m, sp, idx, &env, dtype, &err);
  CHECK(text != NULL);
  int ok = 0;
  if (text) {
    compile_options opt;
    compile_result r;
    memset(&r, 0, sizeof r);
    adu_options(m, arch, &opt);
    compile_source(text, manifest_source_name(m), &opt, &r, &err);
    ok = adu_check(arch, dtype, config, &r);
    CHECK(ok);
    rt_vars vars;
    unsigned grid[3], block[3], smem = 0;
    CHECK_INT(manifest_config_vars(m, sp, idx, &env, &vars, &err), RT_OK);
    CHECK_INT(manifest_launch(m, &vars, grid, block, &smem, &err), RT_OK);
    double inflight = 0;
    CHECK_INT(manifest_inflight(m, &vars, &inflight, &err), RT_OK);
    printf(
        "%-5s %-4s %-22s (%4zu of %4zu) [%s]: %3d registers, %6u B smem, spills %d/%d, %6.0f B in "
        "flight, %.1f s\n",
        arch, dtype, shape, idx, n, config, r.report.registers, smem + r.report.smem_static,
        r.report.spill_stores, r.report.spill_loads, inflight, r.seconds);
    compile_result_free(&r);
  }
  free(text);
  space_free(sp);
  manifest_free(m);
  return ok;
}

TEST_CASE(samples) {
  static const char *const archs[] = {"sm_80", "sm_90"}, *const dtypes[] = {"f16", "bf16"};
  static const struct {
    const char *shape;
    int picks;
  } shapes[] = {
      {"64x32:8x1:8192x128", 3},
      {"64x32:8x1:8192x128:p16", 2},
      {"4x64:8x4:4096x256:p32:c", 1},
      {"8x8:1x1:2048x64", 1},
  };
  int k = 0;
  for (int a = 0; a < 2; a++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int i = 0; i < shapes[s].picks; i++, k++) {
        /* spread over the space: pick i of picks, shifted by half a step on sm_90 */
        const int npick = 2 * shapes[s].picks;
        compile_one(archs[a], dtypes[k % 2], shapes[s].shape, NULL, (size_t)(2 * i + a), npick);
      }
}

TEST_CASE(edges) {
  /* edges: the register-heaviest ring (D 256, four stages), the largest direct-load
   * staging (8 loads of 16 bytes per operand and thread beside a 16 x 128 accumulator) */
  compile_one("sm_80", "bf16", "4x64:8x4:4096x256:p32:c",
              "HEAD_DIM=256,PAGE=32,Q_ROWS=32,SPLITS=4,BLOCK_N=32,WARPS=4,VEC=8,STAGES=4", 0, 1);
  compile_one("sm_90", "f16", "64x32:8x1:8192x128",
              "HEAD_DIM=128,PAGE=0,Q_ROWS=16,SPLITS=1,BLOCK_N=64,WARPS=4,VEC=8,STAGES=1", 0, 1);
}

TEST_CASE(once_spilled) {
  /* configurations that once spilled a few bytes under ptxas's register target: the merge
   * loops unrolled fully (sm_80, SPLITS 16, one warp), 64-row blocks with SPLITS > 1 under
   * __launch_bounds__(THREADS) */
  compile_one("sm_80", "bf16", "64x32:8x1:8192x128:p16",
              "HEAD_DIM=128,PAGE=16,Q_ROWS=16,SPLITS=16,BLOCK_N=64,WARPS=1,VEC=8,STAGES=2", 0, 1);
  compile_one("sm_80", "f16", "2x16:2x8:4096x128:p16",
              "HEAD_DIM=128,PAGE=16,Q_ROWS=64,SPLITS=8,BLOCK_N=32,WARPS=8,VEC=8,STAGES=2", 0, 1);
}

TEST_LIST(TEST_ENTRY(samples), TEST_ENTRY(edges), TEST_ENTRY(once_spilled))
