/* test_gemm_tma.c — the TMA tensor maps of gemm_wgmma: the runtime (rooftune_gemm), which has
 * only a stored winner's vars text, computes the same cuTensorMapEncodeTiled parameters as the
 * tuning launcher, which has the configuration's rt_vars; both match the ABI in gemm.h; operands
 * TMA cannot address are refused with RT_ERR_UNSUPPORTED (the runtime then uses cuBLASLt). */
/* stages: kernels */
#include <stdio.h>
#include <string.h>

#include "kernels/gemm.h"
#include "test.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"
#include "template/space.h"

/* The configuration vars the tuner hands gemm's gpu_launch for config idx of gemm_wgmma on an
 * H200, and the vars text it stores with the winner (tune.c: config, then derived values). */
static int wgmma_config(manifest *mf, const problem *p, size_t idx, rt_vars *vars, char *text,
                        size_t size) {
  rt_error err = {0};
  rt_vars env;
  const gpu_spec *gpu = gpu_spec_find("h200");
  space *sp = NULL;
  int ok = problem_env(&gemm_family, p, arch_spec_find(gpu->arch), gpu, &env, &err) == RT_OK &&
           manifest_build_space(mf, &env, &sp, &err) == RT_OK && idx < space_size(sp) &&
           manifest_config_vars(mf, sp, idx, &env, vars, &err) == RT_OK;
  if (ok) {
    size_t n = space_format_config(sp, idx, text, size);
    for (int i = 0; i < manifest_nderived(mf) && n < size; i++) {
      long long v;
      const char *name = manifest_derived_name(mf, i);
      if (rt_vars_get(vars, name, &v))
        n += (size_t)snprintf(text + n, size - n, ",%s=%lld", name, v);
    }
  }
  if (!ok && err.text[0]) fprintf(stderr, "wgmma_config: %s\n", err.text);
  space_free(sp);
  return ok;
}

static void check_layout(manifest *mf, const char *shape) {
  rt_error err = {0};
  problem p;
  CHECK_INT(gemm_family.parse_shape(&gemm_family, shape, "bf16", NULL, &p, &err), RT_OK);
  const int nt = strstr(shape, ":nt") != NULL;
  const long long M = 256, N = 512, K = 1024, B = 2; /* the shapes below */
  const CUdeviceptr A = 0x7f0000000000ull, Bp = 0x7f0010000000ull;
  for (size_t idx = 0; idx < 6; idx++) {
    rt_vars vars;
    char text[1024];
    const int ok = wgmma_config(mf, &p, idx, &vars, text, sizeof text);
    CHECK(ok);
    if (!ok) return;
    gemm_tma_params tune[2], run[2];
    CHECK_INT(gemm_tma_plan(&p, &vars, A, Bp, tune, &err), RT_OK);
    /* the runtime's preparation: the stored vars text → rt_vars → the same builder */
    rt_vars stored;
    rt_vars_clear(&stored);
    CHECK_INT(rt_vars_parse(&stored, text, &err), RT_OK);
    memset(run, 0xa5, sizeof run);
    CHECK_INT(gemm_tma_plan(&p, &stored, A, Bp, run, &err), RT_OK);
    CHECK(memcmp(tune, run, sizeof tune) == 0);

    long long bm = 0, bn = 0, bk = 0, bcol = -1;
    CHECK(rt_vars_get(&stored, "BLOCK_M", &bm) && rt_vars_get(&stored, "BLOCK_N", &bn) &&
          rt_vars_get(&stored, "BLOCK_K", &bk) && rt_vars_get(&stored, "B_COL", &bcol));
    CHECK_INT(bcol, nt);
    for (int o = 0; o < 2; o++) {
      const gemm_tma_params *t = &run[o];
      CHECK_INT(t->type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
      CHECK_INT(t->rank, 3);
      CHECK_INT(t->swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
      CHECK_INT(t->interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
      CHECK_INT(t->dims[2], B);
      CHECK_INT(t->box[2], 1);
      CHECK_INT(t->strides[0], (long long)t->dims[0] * 2);
      CHECK_INT(t->strides[1], (long long)(t->dims[0] * t->dims[1]) * 2);
      CHECK_INT(t->elem_strides[0] + t->elem_strides[1] + t->elem_strides[2], 3);
      CHECK(t->box[0] * 2 <= 128);
    }
    CHECK_INT(run[0].base, (long long)A);
    CHECK_INT(run[1].base, (long long)Bp);
    /* A: (K, M) with box (BLOCK_K, BLOCK_M) */
    CHECK_INT(run[0].dims[0], K);
    CHECK_INT(run[0].dims[1], M);
    CHECK_INT(run[0].box[0], bk);
    CHECK_INT(run[0].box[1], bm);
    if (nt) { /* B stored N x K: (K, N), box (BLOCK_K, BLOCK_N) */
      CHECK_INT(run[1].dims[0], K);
      CHECK_INT(run[1].dims[1], N);
      CHECK_INT(run[1].box[0], bk);
      CHECK_INT(run[1].box[1], bn);
    } else { /* B stored K x N: (N, K), box (64, BLOCK_K) */
      CHECK_INT(run[1].dims[0], N);
      CHECK_INT(run[1].dims[1], K);
      CHECK_INT(run[1].box[0], 64);
      CHECK_INT(run[1].box[1], bk);
    }
  }
}

/* Operands TMA cannot address: RT_ERR_UNSUPPORTED naming what is wrong. */
TEST_CASE(refusals) {
  rt_error err = {0};
  rt_vars v;
  rt_vars_clear(&v);
  CHECK_INT(rt_vars_parse(&v, "BLOCK_M=128,TMA_BOX_M=128,TMA_BOX_N=64,TMA_BOX_K=64,NAME=abc", &err),
            RT_OK);
  CHECK(!rt_vars_get(&v, "NAME", NULL));
  gemm_tma_params prm[2];
  problem p;
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "256x512x1024", "bf16", NULL, &p, &err), RT_OK);
  CHECK_INT(gemm_tma_plan(&p, &v, 0x1000, 0x2000, prm, &err), RT_OK);
  CHECK_INT(gemm_tma_plan(&p, &v, 0x1002, 0x2000, prm, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "A's address");
  CHECK_INT(gemm_tma_plan(&p, &v, 0x1000, 0x2008, prm, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "B's address");
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "256x512x1004:nt", "bf16", NULL, &p, &err),
            RT_OK);
  CHECK_INT(gemm_tma_plan(&p, &v, 0x1000, 0x2000, prm, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "K*dtype_bytes");
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "256x500x1024", "f16", NULL, &p, &err), RT_OK);
  CHECK_INT(gemm_tma_plan(&p, &v, 0x1000, 0x2000, prm, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "N*dtype_bytes");
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "256x512x1024", "f32", NULL, &p, &err), RT_OK);
  CHECK_INT(gemm_tma_plan(&p, &v, 0x1000, 0x2000, prm, &err), RT_ERR_UNSUPPORTED);
  rt_vars none;
  rt_vars_clear(&none);
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "256x512x1024", "bf16", NULL, &p, &err), RT_OK);
  CHECK_INT(gemm_tma_plan(&p, &none, 0x1000, 0x2000, prm, &err), RT_ERR_INVALID);
  CHECK_INT(rt_vars_parse(&none, "BLOCK_M", &err), RT_ERR_INVALID);
}

TEST_CASE(layouts) {
  rt_error err = {0};
  manifest *mf = NULL;
  CHECK_INT(catalog_find(NULL, "gemm_wgmma", &mf, &err), RT_OK);
  if (mf) {
    check_layout(mf, "2@256x512x1024");
    check_layout(mf, "2@256x512x1024:nt");
    manifest_free(mf);
  }
}

TEST_LIST(TEST_ENTRY(layouts), TEST_ENTRY(refusals))
