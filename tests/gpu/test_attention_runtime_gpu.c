/* test_attention_runtime_gpu.c — rooftune_attention on a real GPU: a configuration of each
 * attention template compiled by NVRTC, stored as a winner with its serving recipe (as the
 * tuner stores it) and served back through rooftune.h on the caller's Q, K, V and O:
 *   - attn_mma (sm_80+) on a grouped-query prefill problem, for its own shape and a nearest one
 *     (fewer queries), causal;
 *   - attn_wgmma (sm_90), whose TMA maps rooftune_attention encodes over the caller's pointers;
 *   - attn_decode when the template is installed: a split-KV configuration (SPLITS > 1, scratch
 *     the library allocates) over a paged KV cache with ragged lengths, twice (the scratch and
 *     its tickets are reused);
 * every output against a double-precision CPU reference (O within 1e-2 relative Frobenius for
 * bf16, the LSE within 1e-3), the output poisoned first; without a database cuDNN's own
 * choice serves the call (ROOFTUNE_ERR_NOT_FOUND naming cuDNN where it does not load).  Skips
 * (77) without a driver or GPU. */
/* stages: kernels runtime */
#include <math.h>

#include "kernels/attention.h"
#include "kernels/numeric.h"
#include "runtime/include/rooftune.h"
#include "test.h"
#include "compile/compile.h"
#include "driver/cuda_driver.h"
#include "driver/cudnn.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"
#include "template/recipe.h"
#include "unit/db_fixture.h"
#include "gpu/attn_runtime_util.h"

static int cc, sms, driver;
static char gpu[128];

/* Compiles the first configuration of tpl for shape (where pick says yes) and stores it as the
 * only winner in path; 0 when the template is not there or nothing fits. */
static int store_winner(const char *path, const char *tpl, const char *shape, const char *arch,
                        int (*pick)(const rt_vars *)) {
  rt_error err = {0};
  manifest *m = NULL;
  if (catalog_find(NULL, tpl, &m, &err)) return 0;
  static problem p;
  rt_vars env, vars;
  space *sp = NULL;
  char *src = NULL;
  rt_status s = attention_family.parse_shape(&attention_family, shape, "bf16", NULL, &p, &err);
  if (!s)
    s = problem_env(&attention_family, &p, arch_spec_for_cc(cc), gpu_spec_match(gpu, cc), &env,
                    &err);
  if (!s && sms > 0) rt_vars_set(&env, "device.sm_count", sms);
  if (!s) s = manifest_build_space(m, &env, &sp, &err);
  size_t idx = 0;
  for (; !s && idx < space_size(sp); idx++)
    if (!manifest_config_vars(m, sp, idx, &env, &vars, &err) && (!pick || pick(&vars))) break;
  if (!s && idx == space_size(sp))
    s = rt_error_set(&err, RT_ERR_NOT_FOUND, "no configuration fits the test");
  candidate_plan pl;
  if (!s) s = manifest_plan(m, sp, idx, &env, &pl, &err);
  if (!s) s = manifest_config_source(m, sp, idx, &pl.vars, "bf16", NULL, &src, &err);
  compile_options opt;
  compile_result cr;
  memset(&cr, 0, sizeof cr);
  if (!s) {
    manifest_compile_options(m, arch, &opt);
    s = compile_source(src, manifest_source_name(m), &opt, &cr, &err);
  }
  winner_recipe rec;
  memset(&rec, 0, sizeof rec);
  if (!s) s = winner_recipe_make(m, &pl.vars, &rec, &err);
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
  snprintf(res.config, sizeof res.config, "%s", pl.config);
  db_winner w;
  memset(&w, 0, sizeof w);
  long long id = 0;
  if (!s) {
    winner_recipe_apply(&rec, &w);
    w.cubin = cr.cubin;
    w.cubin_size = cr.cubin_size;
    snprintf(w.entry, sizeof w.entry, "%.127s", cr.lowered_name);
    snprintf(w.arch, sizeof w.arch, "%s", arch);
    memcpy(w.grid_v, pl.grid, sizeof w.grid_v);
    memcpy(w.block_v, pl.block, sizeof w.block_v);
    w.smem_v = pl.smem;
  }
  int ok = !s && !db_open(path, DB_CREATE, &d, &err) && !db_run_begin(d, &spec, &r, &err) &&
           !db_run_template(r, tpl, "attention", "src", "man", &err) &&
           !db_run_store(r, &res, &id, &err) && !db_run_set_winner(r, id, &w, NULL, &err);
  if (!ok)
    fprintf(stderr, "%s %s: %s\n", tpl, shape, err.text);
  else
    printf("stored %s %s for %s, grid %u,%u,%u block %u smem %u\n", tpl, pl.config, shape,
           pl.grid[0], pl.grid[1], pl.grid[2], pl.block[0], pl.smem);
  db_run_free(r);
  db_close(d);
  winner_recipe_free(&rec);
  compile_result_free(&cr);
  free(src);
  space_free(sp);
  manifest_free(m);
  return ok;
}

static int splits_over_one(const rt_vars *v) {
  long long s = 1;
  rt_vars_get(v, "SPLITS", &s);
  return s > 1;
}

static char own_arch[16]; /* sm_90 on Hopper, else the device's own */

/* The fixture: a context on GPU 0 and its identity.  Skips the file without a driver, a GPU or
 * compute capability 8.0. */
static void file_setup(void) {
  rt_error err = {0};
  if (cuda_driver_load(&err)) test_skip(err.text);
  CUdevice dev;
  CUcontext ctx;
  int cc_major = 0, cc_minor = 0;
  if (cu.cuDeviceGet(&dev, 0) || cu.cuDevicePrimaryCtxRetain(&ctx, dev) || cu.cuCtxSetCurrent(ctx))
    test_skip("cannot make a context on GPU 0");
  cu.cuDeviceGetName(gpu, sizeof gpu, dev);
  cu.cuDeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cu.cuDeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  cu.cuDriverGetVersion(&driver);
  cc = cc_major * 10 + cc_minor;
  if (cc < 80) test_skip("the attention templates need compute capability 8.0 or newer");
  snprintf(own_arch, sizeof own_arch, "sm_%d", cc >= 90 ? 90 : cc);
  srand((unsigned)getpid());
}

/* prefill, grouped heads, causal (its inputs from seed 11) */
static void prefill_problem(case_t *c) {
  memset(c, 0, sizeof *c);
  c->a.dtype = "bf16";
  c->a.batch = 2;
  c->a.heads_q = 4;
  c->a.heads_kv = 2;
  c->a.seq_q = 100;
  c->a.seq_kv = 160;
  c->a.head_dim = 64;
  c->a.causal = 1;
  setup(c, 11);
}

/* prefill: cuDNN without a database, attn_mma for its shape and for fewer queries */
TEST_CASE(prefill_mma) {
  rt_error err = {0};
  case_t c;
  prefill_problem(&c);
  char shape[160];
  CHECK_INT(rooftune_attention_shape(&c.a, shape, sizeof shape), ROOFTUNE_OK);
  /* no database: cuDNN's own choice where it loads (test_attention_cudnn_runtime.c has the rest) */
  if (cudnn_load(&err) == RT_OK) {
    CHECK_INT(run_and_check(NULL, &c, "no database: cuDNN's own choice"), ROOFTUNE_PATH_LIBRARY);
  } else {
    rooftune_info info;
    CHECK_INT(rooftune_attention(NULL, &c.a, NULL, &info), ROOFTUNE_ERR_NOT_FOUND);
    CHECK_CONTAINS(rooftune_last_error(), "cuDNN, the fallback, is not available");
  }
  char path[512];
  fx_tmpname(path, sizeof path, "gpu-attn");
  if (store_winner(path, "attn_mma", shape, own_arch, NULL)) {
    rooftune_db *rdb = NULL;
    CHECK_INT(rooftune_open(path, &rdb), ROOFTUNE_OK);
    CHECK_INT(run_and_check(rdb, &c, "attn_mma tuned"), ROOFTUNE_PATH_TUNED);
    CHECK_INT(run_and_check(rdb, &c, "attn_mma tuned, module cached"), ROOFTUNE_PATH_TUNED);
    c.a.seq_q = 80; /* the same buffers hold fewer queries */
    CHECK_INT(run_and_check(rdb, &c, "attn_mma nearest"), ROOFTUNE_PATH_NEAREST);
    c.a.seq_q = 100;
    rooftune_close(rdb);
  } else {
    CHECK(0);
  }
  fx_remove(path);
  teardown(&c);
}

/* attn_wgmma: the TMA maps over the caller's Q, K and V (the prefill problem, not causal) */
TEST_CASE(prefill_wgmma) {
  if (cc != 90) test_skip("attn_wgmma needs sm_90");
  case_t c;
  prefill_problem(&c);
  c.a.causal = 0;
  char shape[160];
  CHECK_INT(rooftune_attention_shape(&c.a, shape, sizeof shape), ROOFTUNE_OK);
  char path[512];
  fx_tmpname(path, sizeof path, "gpu-attn-wgmma");
  if (store_winner(path, "attn_wgmma", shape, "sm_90a", NULL)) {
    rooftune_db *rdb = NULL;
    CHECK_INT(rooftune_open(path, &rdb), ROOFTUNE_OK);
    CHECK_INT(run_and_check(rdb, &c, "attn_wgmma tuned"), ROOFTUNE_PATH_TUNED);
    rooftune_close(rdb);
  } else {
    CHECK(0);
  }
  fx_remove(path);
  teardown(&c);
}

/* decode: split-KV over a paged cache with ragged lengths, when attn_decode is installed */
TEST_CASE(decode) {
  case_t dc;
  memset(&dc, 0, sizeof dc);
  static int lens[4] = {1000, 37, 640, 1024};
  dc.len = lens;
  dc.a.dtype = "bf16";
  dc.a.batch = 4;
  dc.a.heads_q = 8;
  dc.a.heads_kv = 2;
  dc.a.seq_q = 1;
  dc.a.seq_kv = 1024;
  dc.a.head_dim = 128;
  dc.a.page_size = 16;
  setup(&dc, 23);
  char shape[160], path[512];
  CHECK_INT(rooftune_attention_shape(&dc.a, shape, sizeof shape), ROOFTUNE_OK);
  fx_tmpname(path, sizeof path, "gpu-decode");
  if (store_winner(path, "attn_decode", shape, own_arch, splits_over_one)) {
    rooftune_db *rdb = NULL;
    CHECK_INT(rooftune_open(path, &rdb), ROOFTUNE_OK);
    CHECK_INT(run_and_check(rdb, &dc, "attn_decode split-KV, paged, ragged"), ROOFTUNE_PATH_TUNED);
    CHECK_INT(run_and_check(rdb, &dc, "attn_decode again (scratch and tickets reused)"),
              ROOFTUNE_PATH_TUNED);
    rooftune_close(rdb);
  } else {
    printf("attn_decode: not installed here, its split-KV call not tested\n");
  }
  fx_remove(path);
  teardown(&dc);
}

TEST_LIST_FIXTURE(file_setup, NULL, TEST_ENTRY(prefill_mma), TEST_ENTRY(prefill_wgmma),
                  TEST_ENTRY(decode))
