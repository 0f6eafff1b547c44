/* test_gemm_compile.c — a deterministic sample of every gemm template's default space compiles
 * with NVRTC for sm_80 and sm_90 (sm_90a for the wgmma template) without spills, and the PTX
 * holds the template's instruction (mma.sync, wgmma.mma_async, fma; for wgmma also the
 * imm-trans-b that the layout needs, for gemm_skinny the streaming 16-byte loads of B).  Four configurations per template and architecture,
 * spread over the space, cycling through the dtypes and layouts; then named configurations: a
 * wgmma cluster, gemm_wgmma's fp8 shapes (k32, e4m3 x e4m3 and e4m3 x e5m2, no transpose
 * operands) and fused epilogues (bias + GELU to bf16, beta + SiLU + residual to f16, fp8 with
 * bias + ReLU), gemm_skinny's fp8 and epilogue paths, and gemm_mma's register-heaviest tiles
 * (which spill first).
 * The whole spaces are compiled by tests/long/test_gemm_spaces.c. */
/* stages: kernels */
#include "../gemm_compile_util.h"

/* Compiles one named configuration of a variant and checks it (gcu_check: compiled, no spills,
 * the template's instruction in the PTX); on success *r holds the result for more checks. */
static int compile_config(const gcu_variant *v, const char *config, compile_result *r) {
  manifest *m = NULL;
  space *sp = NULL;
  rt_vars env;
  rt_error err;
  rt_error_clear(&err);
  size_t idx = 0;
  int ok = 0;
  memset(r, 0, sizeof *r);
  CHECK_INT(gcu_space(v, &m, &sp, &env, &err), RT_OK);
  CHECK_INT(sp ? space_parse_config(sp, config, &idx, &err) : RT_ERR_INVALID, RT_OK);
  char *text = sp && !err.code ? gcu_source(m, sp, idx, &env, v->dtype, &err) : NULL;
  CHECK(text != NULL);
  if (text) {
    compile_options opt;
    gcu_options(v, m, &opt);
    compile_source(text, manifest_source_name(m), &opt, r, &err);
    ok = gcu_check(v, config, r);
    CHECK(ok);
    printf("%-10s %-6s %-4s %s [%s]: %d registers, %d B spill stores\n", v->tmpl, v->arch, v->dtype,
           v->layout, config, r->report.registers, r->report.spill_stores);
    if (!ok) compile_result_free(r);
  } else {
    fprintf(stderr, "%s %s %s %s [%s]: %s\n", v->tmpl, v->arch, v->dtype, v->layout, config,
            err.text);
  }
  free(text);
  space_free(sp);
  manifest_free(m);
  return ok;
}

TEST_CASE(samples) {
  static const char *const archs_mma[] = {"sm_80", "sm_90"}, *const archs_wg[] = {"sm_90a"};
  static const struct {
    const char *tmpl;
    const char *const *archs;
    int narchs;
    const char *dtypes[3];
    int ndtypes;
    const char *layouts[2];
    int nlayouts;
  } tmpls[] = {
      {"gemm_mma", archs_mma, 2, {"bf16", "f16", "tf32"}, 3, {"nt", "nn"}, 2},
      {"gemm_simt", archs_mma, 2, {"f32"}, 1, {"nn", "nt"}, 2},
      {"gemm_wgmma", archs_wg, 1, {"bf16", "f16"}, 2, {"nn", "nt"}, 2},
      {"gemm_skinny", archs_mma, 2, {"bf16", "f16", "f32"}, 3, {"nt", "nt"}, 1},
  };
  const int per_arch = 4;
  for (size_t t = 0; t < sizeof tmpls / sizeof tmpls[0]; t++)
    for (int a = 0; a < tmpls[t].narchs; a++)
      for (int i = 0; i < per_arch; i++) {
        gcu_variant v = {tmpls[t].tmpl, tmpls[t].archs[a], tmpls[t].dtypes[i % tmpls[t].ndtypes],
                         tmpls[t].layouts[(i + i / 2) % tmpls[t].nlayouts], NULL};
        manifest *m = NULL;
        space *sp = NULL;
        rt_vars env;
        rt_error err;
        rt_error_clear(&err);
        rt_status st = gcu_space(&v, &m, &sp, &env, &err);
        CHECK_INT(st, RT_OK);
        if (st) {
          fprintf(stderr, "%s %s %s: %s\n", v.tmpl, v.arch, v.dtype, err.text);
          continue;
        }
        size_t n = space_size(sp);
        CHECK(n >= 8);
        size_t idx =
            n <= 1 ? 0 : (size_t)(((double)i + 0.5 * a) * (double)(n - 1) / (per_arch - 0.5));
        if (idx >= n) idx = n - 1;
        char config[512];
        space_format_config(sp, idx, config, sizeof config);
        char *text = gcu_source(m, sp, idx, &env, v.dtype, &err);
        CHECK(text != NULL);
        compile_options opt;
        compile_result r;
        memset(&r, 0, sizeof r);
        gcu_options(&v, m, &opt);
        if (text) {
          compile_source(text, manifest_source_name(m), &opt, &r, &err);
          CHECK(gcu_check(&v, config, &r));
          /* wgmma reads a K x N B (nn) N-major: imm-trans-b 1; an N x K B (nt) K-major: 0 */
          if (!strcmp(v.tmpl, "gemm_wgmma"))
            CHECK(r.ptx &&
                  strstr(r.ptx, !strcmp(v.layout, "nn") ? "p, 1, 1, 0, 1;" : "p, 1, 1, 0, 0;"));
          /* gemm_skinny streams B in 16-byte loads that leave L1 to A */
          if (!strcmp(v.tmpl, "gemm_skinny"))
            CHECK(r.ptx && strstr(r.ptx, "ld.global.nc.L1::no_allocate.v4.u32"));
          printf("%-10s %-6s %-4s %s (%zu of %zu) [%s]: %d registers, %d B spill stores, %.2f s\n",
                 v.tmpl, v.arch, v.dtype, v.layout, idx, n, config, r.report.registers,
                 r.report.spill_stores, r.seconds);
          compile_result_free(&r);
        }
        free(text);
        space_free(sp);
        manifest_free(m);
      }
}

TEST_CASE(persistent_cluster) {
  /* gemm_wgmma with a persistent grid and a two-block cluster: the PTX declares the cluster
   * shape (a plain launch forms it), multicasts A and arrives at the peer's barriers */
  {
    gcu_variant v = {"gemm_wgmma", "sm_90a", "bf16", "nt", NULL};
    compile_result r;
    if (compile_config(
            &v,
            "BLOCK_M=128,BLOCK_N=256,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,"
            "SWIZZLE=8,B_COL=1,PERSISTENT=1,CLUSTER=2,SETMAXNREG=0,B_E5M2=0,EPI=0,OUT_TYPE=0",
            &r)) {
      CHECK(r.ptx && strstr(r.ptx, ".reqnctapercluster 2, 1, 1"));
      CHECK(r.ptx && strstr(r.ptx, ".multicast::cluster"));
      CHECK(r.ptx && strstr(r.ptx, "mapa.shared::cluster"));
      CHECK(r.ptx && strstr(r.ptx, "barrier.cluster.arrive"));
      compile_result_free(&r);
    }
  }
}

TEST_CASE(wgmma_fp8_epilogues) {
  /* gemm_wgmma with fp8 inputs and with fused epilogues: the k32 instruction of the operand
   * types, the epilogue's stores (packed bf16/f16 pairs), the heaviest tiles (128x256 with two
   * consumer warpgroups, 128 accumulators a thread) */
  {
    static const struct {
      const char *dtype, *opts, *config, *need[3];
    } epi[] = {
        {"e4m3",
         "",
         "BLOCK_M=128,BLOCK_N=256,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,SWIZZLE=8,B_COL=1,"
         "PERSISTENT=1,CLUSTER=1,SETMAXNREG=1,B_E5M2=0,EPI=1,OUT_TYPE=0",
         {"wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", "p, 1, 1;", "st.global.v2.f32"}},
        {"e4m3",
         "+b=e5m2+out=bf16",
         "BLOCK_M=128,BLOCK_N=128,WARPGROUPS=1,PRODUCER=1,STAGES=5,SPLIT_K=1,"
         "SWIZZLE=8,B_COL=1,PERSISTENT=0,CLUSTER=2,SETMAXNREG=0,B_E5M2=1,EPI=1,OUT_TYPE=2",
         {"wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2", "cvt.rn.bf16x2.f32",
          ".multicast::cluster"}},
        /* two consumers of 256x128 with the epilogue need the register hand-over: without it
         * (SETMAXNREG=0) the 168 registers 384 threads get spill 8 bytes since +vscale */
        {"e5m2",
         "+b=e4m3+bias+relu+out=bf16",
         "BLOCK_M=256,BLOCK_N=128,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,"
         "SWIZZLE=8,B_COL=1,PERSISTENT=1,CLUSTER=1,SETMAXNREG=1,B_E5M2=0,EPI=1,OUT_TYPE=2",
         {"wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e4m3", "cvt.rn.bf16x2.f32", "max.f32"}},
        {"bf16",
         "+bias+gelu+out=bf16",
         "BLOCK_M=128,BLOCK_N=256,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,"
         "SWIZZLE=8,B_COL=1,PERSISTENT=1,CLUSTER=1,SETMAXNREG=1,B_E5M2=0,EPI=1,OUT_TYPE=2",
         {"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "cvt.rn.bf16x2.f32",
          "ex2.approx"}},
        {"f16",
         "+beta+silu+residual+out=f16",
         "BLOCK_M=128,BLOCK_N=128,WARPGROUPS=1,PRODUCER=0,STAGES=4,SPLIT_K=1,"
         "SWIZZLE=1,B_COL=1,PERSISTENT=0,CLUSTER=1,SETMAXNREG=0,B_E5M2=0,EPI=1,OUT_TYPE=1",
         {"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "cvt.rn.f16x2.f32", "ex2.approx"}},
        {"bf16",
         "+bias+residual",
         "BLOCK_M=128,BLOCK_N=128,WARPGROUPS=1,PRODUCER=1,STAGES=4,SPLIT_K=4,"
         "SWIZZLE=8,B_COL=1,PERSISTENT=0,CLUSTER=1,SETMAXNREG=0,B_E5M2=0,EPI=1,OUT_TYPE=0",
         {"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "atom.global.add.f32",
          "p, 1, 1, 0, 0;"}},
    };
    for (size_t i = 0; i < sizeof epi / sizeof epi[0]; i++) {
      gcu_variant v = {"gemm_wgmma", "sm_90a", epi[i].dtype, "nt", epi[i].opts};
      compile_result r;
      if (compile_config(&v, epi[i].config, &r)) {
        /* the register hand-over: the producer gives back, the consumers take */
        if (strstr(epi[i].config, "SETMAXNREG=1")) {
          CHECK(r.ptx && strstr(r.ptx, "setmaxnreg.dec.sync.aligned.u32 40"));
          CHECK(r.ptx && strstr(r.ptx, "setmaxnreg.inc.sync.aligned.u32 232"));
          CHECK(r.report.registers <= 168); /* what 384 threads get at entry */
        }
        for (int k = 0; k < 3; k++) {
          CHECK(r.ptx && strstr(r.ptx, epi[i].need[k]));
          if (!r.ptx || !strstr(r.ptx, epi[i].need[k]))
            fprintf(stderr, "  %s %s: no %s in the PTX\n", epi[i].dtype, epi[i].opts,
                    epi[i].need[k]);
        }
        compile_result_free(&r);
      }
    }
  }
}

TEST_CASE(skinny_fp8) {
  /* gemm_skinny with fp8 inputs (sm_90: e4m3 pairs through cvt.rn.f16x2.e4m3x2, e5m2 by a byte
   * shift) and with the fused epilogue, its widest tiles */
  {
    static const struct {
      const char *dtype, *opts, *config, *need;
    } sk[] = {
        {"e4m3", "+out=bf16",
         "ROWS=16,COLS=4,WARPS=4,UNROLL=2,SPLIT_K=1,B_COL=1,B_E5M2=0,EPI=1,OUT_TYPE=2",
         "cvt.rn.f16x2.e4m3x2"},
        {"e4m3", "+b=e5m2",
         "ROWS=1,COLS=4,WARPS=4,UNROLL=4,SPLIT_K=4,B_COL=1,B_E5M2=1,EPI=1,OUT_TYPE=0",
         "atom.global.add.f32"},
        {"e5m2", "+b=e4m3+bias+gelu+out=f16",
         "ROWS=8,COLS=2,WARPS=8,UNROLL=4,SPLIT_K=1,B_COL=1,B_E5M2=0,EPI=1,OUT_TYPE=1",
         "cvt.rn.f16.f32"},
        {"bf16", "+bias+silu+out=bf16",
         "ROWS=16,COLS=4,WARPS=8,UNROLL=2,SPLIT_K=1,B_COL=1,B_E5M2=0,EPI=1,OUT_TYPE=2",
         "cvt.rn.bf16.f32"},
    };
    for (size_t i = 0; i < sizeof sk / sizeof sk[0]; i++) {
      gcu_variant v = {"gemm_skinny", "sm_90", sk[i].dtype, "nt", sk[i].opts};
      compile_result r;
      if (compile_config(&v, sk[i].config, &r)) {
        CHECK(r.ptx && strstr(r.ptx, sk[i].need));
        CHECK(r.ptx && strstr(r.ptx, "ld.global.nc.L1::no_allocate.v4.u32"));
        compile_result_free(&r);
      }
    }
  }
}

TEST_CASE(heavy_tiles) {
  /* gemm_mma's register-heaviest tiles (64x64 warp tiles, 230-255 registers), the ones that
   * spilled while its main loop was rewritten: tf32 on sm_80 (three instructions per rounding)
   * and sm_90, split-K on sm_80, few threads per tile, and the H200's 256x128 winner */
  {
    static const struct {
      const char *arch, *dtype, *layout, *config;
    } heavy[] = {
        {"sm_80", "tf32", "nt",
         "BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,WARPS_M=2,WARPS_N=4,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_"
         "COL=1"},
        {"sm_80", "tf32", "nn",
         "BLOCK_M=64,BLOCK_N=128,BLOCK_K=64,WARPS_M=1,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_COL="
         "0"},
        {"sm_80", "bf16", "nn",
         "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,WARPS_M=2,WARPS_N=2,STAGES=3,SPLIT_K=4,SWIZZLE=1,B_"
         "COL=0"},
        {"sm_80", "f16", "nt",
         "BLOCK_M=64,BLOCK_N=256,BLOCK_K=32,WARPS_M=1,WARPS_N=4,STAGES=3,SPLIT_K=16,SWIZZLE=1,B_"
         "COL=1"},
        {"sm_90", "tf32", "nt",
         "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,WARPS_M=2,WARPS_N=2,STAGES=4,SPLIT_K=1,SWIZZLE=1,B_"
         "COL=1"},
        {"sm_90", "tf32", "nt",
         "BLOCK_M=64,BLOCK_N=128,BLOCK_K=32,WARPS_M=1,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_COL="
         "1"},
        {"sm_90", "tf32", "nt",
         "BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,WARPS_M=2,WARPS_N=4,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_"
         "COL=1"},
        {"sm_90", "tf32", "nn",
         "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,WARPS_M=2,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_"
         "COL=0"},
        {"sm_90", "tf32", "nn",
         "BLOCK_M=64,BLOCK_N=128,BLOCK_K=64,WARPS_M=1,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_COL="
         "0"},
        {"sm_90", "bf16", "nn",
         "BLOCK_M=64,BLOCK_N=128,BLOCK_K=64,WARPS_M=1,WARPS_N=2,STAGES=4,SPLIT_K=16,SWIZZLE=1,B_"
         "COL=0"},
        {"sm_90", "bf16", "nn",
         "BLOCK_M=256,BLOCK_N=128,BLOCK_K=64,WARPS_M=4,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_"
         "COL=0"},
    };
    for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++) {
      gcu_variant v = {"gemm_mma", heavy[i].arch, heavy[i].dtype, heavy[i].layout, NULL};
      compile_result r;
      if (compile_config(&v, heavy[i].config, &r)) compile_result_free(&r);
    }
  }
}

TEST_LIST(TEST_ENTRY(samples), TEST_ENTRY(persistent_cluster), TEST_ENTRY(wgmma_fp8_epilogues),
          TEST_ENTRY(skinny_fp8), TEST_ENTRY(heavy_tiles))
