/* test_runtime_gpu.c — rooftune_gemm on a real GPU: the cuBLASLt fallback (no database), and a
 * gemm_mma configuration compiled by NVRTC, stored as a winner with its cubin and served back
 * through rooftune.h (lookup → load → launch on the caller's stream), for its own shape and,
 * with geometry from its serving recipe (as the tuner stores it), for a nearest shape with
 * fewer rows; on sm_90 the
 * same for gemm_wgmma, whose TMA tensor maps rooftune_gemm builds from the caller's pointers;
 * rooftune_gemm_batched over a batch of 2 (cuBLASLt's strided batch, and the tuned kernel over
 * gridDim.z).  Inputs are small
 * integers, exact in bf16, so every output element must equal the CPU reference exactly; the
 * output is poisoned with NaN before each run.  Skips (77) without a driver or GPU. */
/* stages: kernels runtime */
#include "runtime/include/rooftune.h"
#include "kernels/gemm.h"
#include "kernels/numeric.h"
#include "test.h"
#include "compile/compile.h"
#include "driver/cuda_driver.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"
#include "template/recipe.h"
#include "core/sha256.h"
#include "unit/db_fixture.h"

enum { M = 200, N = 136, K = 96 }; /* edges on every tile size */

static float ref[M * N], out[2 * M * N];
static char last_template[64]; /* what the last rooftune_gemm ran */

/* Runs rooftune_gemm (batch 1: the first `rows` rows of A and C are a rows x K and a rows x N
 * matrix themselves) or rooftune_gemm_batched (batch 2: A, B and C hold the problem twice, one
 * copy after the other) into C, poisoned first, and compares with ref; returns the path. */
static int run_and_check(rooftune_db *rdb, int batch, int rows, CUdeviceptr A, CUdeviceptr B,
                         CUdeviceptr C, const char *what) {
  const size_t n = (size_t)batch * M * N;
  CHECK_INT(cu.cuMemsetD32Async(C, 0x7fc00000u, n, NULL), CUDA_SUCCESS);
  rooftune_gemm_info info;
  int rc = batch == 1 ? rooftune_gemm(rdb, "bf16", "nn", rows, N, K, (const void *)A,
                                      (const void *)B, (float *)C, NULL, &info)
                      : rooftune_gemm_batched(rdb, "bf16", "nn", batch, M, N, K, (const void *)A,
                                              (const void *)B, (float *)C, NULL, &info);
  if (rc) fprintf(stderr, "%s: %s\n", what, rooftune_last_error());
  CHECK_INT(rc, ROOFTUNE_OK);
  CHECK_INT(cu.cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemcpyDtoH_v2(out, C, n * sizeof *out), CUDA_SUCCESS);
  int wrong = 0;
  for (int h = 0; h < batch; h++) {
    const float *o = out + (size_t)h * M * N;
    for (int i = 0; i < rows * N; i++) wrong += o[i] != ref[i];
    for (int i = rows * N; i < M * N; i++) wrong += o[i] == o[i]; /* rows beyond stay NaN */
  }
  if (wrong)
    fprintf(stderr, "%s: %d of %zu elements wrong (C[0] = %g, expected %g)\n", what, wrong, n,
            out[0], ref[0]);
  CHECK_INT(wrong, 0);
  printf("%s: path %d, %s %s%s%s\n", what, info.path, info.template_name, info.config,
         info.reason[0] ? " — " : "", info.reason);
  snprintf(last_template, sizeof last_template, "%s", info.template_name);
  return info.path;
}

/* Compiles configuration 0 of template tpl for this problem and stores it as the winner in path. */
static int store_winner(const char *path, const char *tpl, const char *arch, const char *gpu,
                        int cc, int sms, int driver) {
  rt_error err = {0};
  manifest *m = NULL;
  if (catalog_find(NULL, tpl, &m, &err)) {
    fprintf(stderr, "manifest: %s\n", err.text);
    return 0;
  }
  problem p;
  rt_vars env, vars;
  rt_vars_clear(&env);
  space *sp = NULL;
  unsigned grid[3], block[3], smem = 0;
  char *src = NULL;
  rt_status s = gemm_family.parse_shape(&gemm_family, "200x136x96", "bf16", NULL, &p, &err);
  if (!s)
    s = problem_env(&gemm_family, &p, arch_spec_for_cc(cc), gpu_spec_match(gpu, cc), &env, &err);
  if (!s && sms > 0) rt_vars_set(&env, "device.sm_count", sms);
  if (!s) s = manifest_build_space(m, &env, &sp, &err);
  if (!s) s = manifest_config_vars(m, sp, 0, &env, &vars, &err);
  if (!s) s = manifest_launch(m, &vars, grid, block, &smem, &err);
  if (!s) s = manifest_config_source(m, sp, 0, &vars, "bf16", NULL, &src, &err);
  if (s) {
    fprintf(stderr, "%s setup: %s\n", tpl, err.text);
    return 0;
  }
  char man_hash[65] = "";
  if (sha256_file(manifest_path(m), man_hash)) man_hash[0] = '\0';
  compile_options opt;
  manifest_compile_options(m, arch, &opt);
  compile_result cr;
  memset(&cr, 0, sizeof cr);
  s = compile_source(src, manifest_source_name(m), &opt, &cr, &err);
  if (s) fprintf(stderr, "compile: %s\n", err.text);
  CHECK_INT(s, RT_OK);

  db *d = NULL;
  db_run *r = NULL;
  db_run_spec spec = fx_spec(p, gpu);
  spec.prov.device.sm_count = sms;
  spec.prov.device.cc_major = cc / 10;
  spec.prov.device.cc_minor = cc % 10;
  spec.prov.device.driver_version = driver;
  db_toolkit_string(spec.prov.toolkit, sizeof spec.prov.toolkit, &err);
  snprintf(spec.prov.arch, sizeof spec.prov.arch, "%s", arch);
  candidate_result res = fx_result(tpl, 0, 0, 0.01);
  res.verified = 1; /* as if measured and checked: what the one-call functions launch */
  space_format_config(sp, 0, res.config, sizeof res.config);
  long long id = 0;
  db_winner w;
  memset(&w, 0, sizeof w);
  w.cubin = cr.cubin;
  w.cubin_size = cr.cubin_size;
  snprintf(w.entry, sizeof w.entry, "%.127s", cr.lowered_name);
  snprintf(w.arch, sizeof w.arch, "%s", arch);
  for (int k = 0; k < 3; k++) {
    w.grid_v[k] = grid[k];
    w.block_v[k] = block[k];
  }
  w.smem_v = smem;
  winner_recipe rec; /* as the tuner stores it: what serving another shape needs */
  memset(&rec, 0, sizeof rec);
  if (!s) s = winner_recipe_make(m, &vars, &rec, &err);
  if (!s) winner_recipe_apply(&rec, &w);
  int ok = !s && !db_open(path, DB_CREATE, &d, &err) && !db_run_begin(d, &spec, &r, &err) &&
           !db_run_template(r, tpl, "gemm", "src", man_hash, &err) &&
           !db_run_store(r, &res, &id, &err) && !db_run_set_winner(r, id, &w, NULL, &err);
  if (!ok) fprintf(stderr, "storing the winner: %s\n", err.text);
  printf("stored %s %s, grid %u,%u,%u block %u smem %u, %zu-byte cubin\n", tpl, res.config, grid[0],
         grid[1], grid[2], block[0], smem, cr.cubin_size);
  db_run_free(r);
  db_close(d);
  winner_recipe_free(&rec);
  compile_result_free(&cr);
  free(src);
  space_free(sp);
  manifest_free(m);
  return ok;
}

/* The fixture: a context on GPU 0, its identity, and the inputs (once, and twice for the
 * batched call) with room for the outputs on it.  Skips the file without a driver, a GPU or
 * compute capability 8.0. */
static struct {
  CUdeviceptr A, B, C, A2, B2, C2;
  char gpu[128], arch[16];
  int cc, sms, driver;
} fix;

static void setup(void) {
  rt_error err = {0};
  if (cuda_driver_load(&err)) test_skip(err.text);
  CUdevice dev;
  CUcontext ctx;
  int cc_major = 0, cc_minor = 0;
  if (cu.cuDeviceGet(&dev, 0) || cu.cuDevicePrimaryCtxRetain(&ctx, dev) || cu.cuCtxSetCurrent(ctx))
    test_skip("cannot make a context on GPU 0");
  cu.cuDeviceGetName(fix.gpu, sizeof fix.gpu, dev);
  cu.cuDeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cu.cuDeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cu.cuDeviceGetAttribute(&fix.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  cu.cuDriverGetVersion(&fix.driver);
  fix.cc = cc_major * 10 + cc_minor;
  if (fix.cc < 80) test_skip("gemm_mma needs compute capability 8.0 or newer");
  snprintf(fix.arch, sizeof fix.arch, "sm_%d", fix.cc >= 90 ? 90 : fix.cc);

  static uint16_t a[M * K], b[K * N];
  static float af[M * K], bf[K * N];
  for (int i = 0; i < M * K; i++) af[i] = (float)((i * 7 + 3) % 5 - 2);
  for (int i = 0; i < K * N; i++) bf[i] = (float)((i * 11 + 1) % 5 - 2);
  for (int i = 0; i < M * K; i++) a[i] = num_f32_to_bf16(af[i]);
  for (int i = 0; i < K * N; i++) b[i] = num_f32_to_bf16(bf[i]);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += (double)af[i * K + k] * bf[k * N + j];
      ref[i * N + j] = (float)s;
    }
  CHECK_INT(cu.cuMemAlloc_v2(&fix.A, sizeof a), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemAlloc_v2(&fix.B, sizeof b), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemAlloc_v2(&fix.C, sizeof out / 2), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemcpyHtoD_v2(fix.A, a, sizeof a), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemcpyHtoD_v2(fix.B, b, sizeof b), CUDA_SUCCESS);
  /* the problem twice, for the batched call */
  CHECK_INT(cu.cuMemAlloc_v2(&fix.A2, 2 * sizeof a), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemAlloc_v2(&fix.B2, 2 * sizeof b), CUDA_SUCCESS);
  CHECK_INT(cu.cuMemAlloc_v2(&fix.C2, sizeof out), CUDA_SUCCESS);
  for (int h = 0; h < 2; h++) {
    CHECK_INT(cu.cuMemcpyHtoD_v2(fix.A2 + h * sizeof a, a, sizeof a), CUDA_SUCCESS);
    CHECK_INT(cu.cuMemcpyHtoD_v2(fix.B2 + h * sizeof b, b, sizeof b), CUDA_SUCCESS);
  }
}

static void teardown(void) {
  cu.cuMemFree_v2(fix.A);
  cu.cuMemFree_v2(fix.B);
  cu.cuMemFree_v2(fix.C);
  cu.cuMemFree_v2(fix.A2);
  cu.cuMemFree_v2(fix.B2);
  cu.cuMemFree_v2(fix.C2);
}

/* no database: cuBLASLt, once and over a batch of 2 */
TEST_CASE(cublaslt) {
  CHECK_INT(run_and_check(NULL, 1, M, fix.A, fix.B, fix.C, "no database"), ROOFTUNE_PATH_CUBLASLT);
  CHECK_INT(run_and_check(NULL, 2, M, fix.A2, fix.B2, fix.C2, "batched, no database"),
            ROOFTUNE_PATH_CUBLASLT);
}

TEST_CASE(tuned_mma) {
  char path[512];
  fx_tmpname(path, sizeof path, "gpu");
  if (store_winner(path, "gemm_mma", fix.arch, fix.gpu, fix.cc, fix.sms, fix.driver)) {
    rooftune_db *rdb = NULL;
    CHECK_INT(rooftune_open(path, &rdb), ROOFTUNE_OK);
    CHECK_INT(run_and_check(rdb, 1, M, fix.A, fix.B, fix.C, "tuned"), ROOFTUNE_PATH_TUNED);
    CHECK_INT(run_and_check(rdb, 1, M, fix.A, fix.B, fix.C, "tuned, module cached"),
              ROOFTUNE_PATH_TUNED);
    /* Another M: the same cubin with geometry from its recipe for 120x136x96. */
    CHECK_INT(run_and_check(rdb, 1, 120, fix.A, fix.B, fix.C, "nearest"), ROOFTUNE_PATH_NEAREST);
    /* a batch of 2: the nearest tuned shape is the batch-1 one, launched over gridDim.z = 2 */
    CHECK_INT(run_and_check(rdb, 2, M, fix.A2, fix.B2, fix.C2, "batched, nearest"),
              ROOFTUNE_PATH_NEAREST);
    rooftune_close(rdb);
  } else {
    CHECK(0);
  }
  fx_remove(path);
}

/* gemm_wgmma: rooftune_gemm builds its TMA descriptors over A and B */
TEST_CASE(tuned_wgmma) {
  if (fix.cc != 90) test_skip("gemm_wgmma needs sm_90");
  char path[512];
  fx_tmpname(path, sizeof path, "gpu-wgmma");
  if (store_winner(path, "gemm_wgmma", "sm_90a", fix.gpu, fix.cc, fix.sms, fix.driver)) {
    rooftune_db *rdb = NULL;
    CHECK_INT(rooftune_open(path, &rdb), ROOFTUNE_OK);
    CHECK_INT(run_and_check(rdb, 1, M, fix.A, fix.B, fix.C, "wgmma tuned"), ROOFTUNE_PATH_TUNED);
    CHECK_STR(last_template, "gemm_wgmma");
    CHECK_INT(run_and_check(rdb, 1, 120, fix.A, fix.B, fix.C, "wgmma nearest"),
              ROOFTUNE_PATH_NEAREST);
    CHECK_STR(last_template, "gemm_wgmma");
    rooftune_close(rdb);
  } else {
    CHECK(0);
  }
  fx_remove(path);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(cublaslt), TEST_ENTRY(tuned_mma),
                  TEST_ENTRY(tuned_wgmma))
