/* test_attention_cudnn_runtime.c — rooftune_attention's cuDNN fallback on a real GPU
 * (runtime/attention_library.c over kernels/attention_sdpa.h), every output against the
 * double-precision CPU reference of attn_runtime_util.h, the output poisoned first:
 *   - no database: cuDNN's own choice serves a grouped-query, bottom-right causal prefill (path
 *     LIBRARY, template "cudnn", the reason); again on the kept plan; again on other O buffers
 *     and without an LSE (the plan rebound, cuDNN's LSE into a scratch); with the caller's scale;
 *     on a second stream (a plan of its own);
 *   - a decode over a paged cache (the caller's pool and shuffled block table) with per-sequence
 *     lengths read on the device, and a contiguous ragged prefill;
 *   - a tuned cuDNN plan (one cuDNN lists for the problem, stored as a library winner) served by
 *     the exact rule, and one from another cuDNN version falling back to cuDNN's own choice;
 *   - a mask cuDNN cannot take (bottom-right causal, more queries than keys, no lengths):
 *     ROOFTUNE_ERR_UNSUPPORTED naming both reasons.
 * Skips (77) without a driver, a GPU of compute capability 8.0 or newer, or cuDNN. */
/* stages: kernels runtime */
#include "kernels/attention.h"
#include "kernels/attention_sdpa.h"
#include "runtime/include/rooftune.h"
#include "test.h"
#include "driver/cuda_driver.h"
#include "driver/cudnn.h"
#include "unit/db_fixture.h"
#include "gpu/attn_runtime_util.h"

static char gpu[128];
static int major, minor, sms, driver;

/* The first configuration cuDNN lists for c's problem whose plan builds, as its identity. */
static int listed_plan(case_t *c, char *text, size_t size) {
  rt_error err = {0};
  char shape[160];
  problem p;
  if (rooftune_attention_shape(&c->a, shape, sizeof shape) ||
      attention_family.parse_shape(&attention_family, shape, c->a.dtype, NULL, &p, &err))
    return 0;
  attn_cudnn_io io = {c->q, c->k, c->v, c->o, c->lse, c->table, 0};
  attn_cudnn *dc = NULL;
  int n = 0, ok = 0;
  if (!attn_cudnn_open(&p, &io, &dc, &err) && !attn_cudnn_list(dc, 8, &n, &err))
    for (int i = 0; i < n && !ok; i++)
      ok = !attn_cudnn_build(dc, i, &err) && !attn_cudnn_describe(dc, i, text, size, &err);
  if (!ok) fprintf(stderr, "no cuDNN plan builds: %s\n", err.text);
  attn_cudnn_close(dc);
  return ok;
}

/* A database at path whose only winner is the cuDNN plan `text` for c's problem on this GPU. */
static int store_plan(const char *path, case_t *c, const char *text) {
  rt_error err = {0};
  char shape[160];
  problem p;
  if (rooftune_attention_shape(&c->a, shape, sizeof shape) ||
      attention_family.parse_shape(&attention_family, shape, c->a.dtype, NULL, &p, &err))
    return 0;
  db_run_spec spec = fx_spec(p, gpu);
  spec.prov.device.cc_major = major;
  spec.prov.device.cc_minor = minor;
  spec.prov.device.sm_count = sms;
  spec.prov.device.driver_version = driver;
  db_toolkit_string(spec.prov.toolkit, sizeof spec.prov.toolkit, &err);
  candidate_result res = fx_result("cudnn", 0, 0, 0.05);
  res.verified = 1; /* as if measured and checked: what the one-call functions launch */
  snprintf(res.config, sizeof res.config, "%s", text);
  db_winner w;
  memset(&w, 0, sizeof w);
  snprintf(w.library_algo, sizeof w.library_algo, "%s", text);
  db *d = NULL;
  db_run *r = NULL;
  long long id = 0;
  int ok = !db_open(path, DB_CREATE, &d, &err) && !db_run_begin(d, &spec, &r, &err) &&
           !db_run_template(r, "cudnn", "attention", "", "", &err) &&
           !db_run_store(r, &res, &id, &err) && !db_run_set_winner(r, id, &w, NULL, &err);
  if (!ok) fprintf(stderr, "storing %s: %s\n", text, err.text);
  db_run_free(r);
  db_close(d);
  return ok;
}

TEST_CASE(prefill) {
  case_t c;
  memset(&c, 0, sizeof c);
  c.a = (rooftune_attention_problem){.dtype = "bf16",
                                     .batch = 2,
                                     .heads_q = 4,
                                     .heads_kv = 2,
                                     .seq_q = 100,
                                     .seq_kv = 160,
                                     .head_dim = 64,
                                     .causal = 1};
  setup(&c, 31);
  rooftune_info info;
  CHECK_INT(run_on(NULL, &c, NULL, "cuDNN's own choice, causal bottom right, grouped heads", &info),
            ROOFTUNE_PATH_LIBRARY);
  CHECK_STR(info.template_name, "cudnn");
  CHECK_STR(info.config, "");
  CHECK_CONTAINS(info.reason, "no tuning database given");
  CHECK_INT(run_on(NULL, &c, NULL, "the kept plan", NULL), ROOFTUNE_PATH_LIBRARY);
  /* other buffers for O and no LSE: the plan is rebound, cuDNN writes its LSE into a scratch */
  CUdeviceptr o2 = 0;
  CHECK_INT(cu.cuMemAlloc_v2(&o2, (size_t)(2 * 100 * 4 * 64) * 2), CUDA_SUCCESS);
  c.a.o = (void *)o2;
  c.a.lse = NULL;
  CHECK_INT(run_on(NULL, &c, NULL, "other O, no LSE", NULL), ROOFTUNE_PATH_LIBRARY);
  c.a.scale = 0.05f;
  CHECK_INT(run_on(NULL, &c, NULL, "the caller's scale 0.05", NULL), ROOFTUNE_PATH_LIBRARY);
  c.a.scale = 0;
  c.a.o = (void *)c.o;
  c.a.lse = (float *)c.lse;
  CUstream s2 = NULL;
  CHECK_INT(cu.cuStreamCreate(&s2, 0), CUDA_SUCCESS);
  CHECK_INT(run_on(NULL, &c, s2, "on a second stream", NULL), ROOFTUNE_PATH_LIBRARY);
  CHECK_INT(cu.cuStreamSynchronize(s2), CUDA_SUCCESS);

  /* a tuned cuDNN plan: served by the exact rule; one of another cuDNN version is not */
  char text[256], path[512];
  fx_tmpname(path, sizeof path, "gpu-cudnn-plan");
  if (listed_plan(&c, text, sizeof text) && store_plan(path, &c, text)) {
    rooftune_db *rdb = NULL;
    CHECK_INT(rooftune_open(path, &rdb), ROOFTUNE_OK);
    CHECK_INT(run_on(rdb, &c, NULL, "a tuned cuDNN plan", &info), ROOFTUNE_PATH_TUNED);
    CHECK_STR(info.template_name, "cudnn");
    CHECK_STR(info.config, text);
    rooftune_close(rdb);
  } else {
    CHECK(0);
  }
  fx_remove(path);
  fx_tmpname(path, sizeof path, "gpu-cudnn-old");
  if (store_plan(path, &c, "cudnn sdpa engine=0 knobs=- version=90000")) {
    rooftune_db *rdb = NULL;
    CHECK_INT(rooftune_open(path, &rdb), ROOFTUNE_OK);
    CHECK_INT(run_on(rdb, &c, NULL, "a plan of another cuDNN", &info), ROOFTUNE_PATH_LIBRARY);
    CHECK_CONTAINS(info.reason, "the tuned cuDNN plan cannot run here");
    rooftune_close(rdb);
  }
  fx_remove(path);
  cu.cuStreamDestroy_v2(s2);
  cu.cuMemFree_v2(o2);
  teardown(&c);
}

/* Problem a (per-sequence lengths lens, or NULL) served by cuDNN's own choice, checked. */
static void own_choice(rooftune_attention_problem a, int *lens, uint64_t seed, const char *what) {
  case_t c;
  memset(&c, 0, sizeof c);
  c.len = lens;
  c.a = a;
  setup(&c, seed);
  CHECK_INT(run_on(NULL, &c, NULL, what, NULL), ROOFTUNE_PATH_LIBRARY);
  teardown(&c);
}

TEST_CASE(ragged) {
  static int lens[4] = {1000, 37, 640, 1024}, rlens[3] = {256, 70, 129};
  own_choice((rooftune_attention_problem){.dtype = "bf16",
                                          .batch = 4,
                                          .heads_q = 8,
                                          .heads_kv = 2,
                                          .seq_q = 1,
                                          .seq_kv = 1024,
                                          .head_dim = 128,
                                          .page_size = 16},
             lens, 37, "cuDNN: paged decode, lengths on the device");
  /* causal from the bottom right of each sequence */
  own_choice((rooftune_attention_problem){.dtype = "bf16",
                                          .batch = 3,
                                          .heads_q = 8,
                                          .heads_kv = 8,
                                          .seq_q = 64,
                                          .seq_kv = 256,
                                          .head_dim = 64,
                                          .causal = 1},
             rlens, 41, "cuDNN: ragged causal prefill");
  /* more queries than keys under the bottom-right mask, no lengths: cuDNN cannot */
  case_t bad;
  memset(&bad, 0, sizeof bad);
  bad.a = (rooftune_attention_problem){.dtype = "bf16",
                                       .batch = 1,
                                       .heads_q = 2,
                                       .seq_q = 64,
                                       .seq_kv = 32,
                                       .head_dim = 64,
                                       .causal = 1};
  setup(&bad, 43);
  rooftune_info info;
  CHECK_INT(rooftune_attention(NULL, &bad.a, NULL, &info), ROOFTUNE_ERR_UNSUPPORTED);
  CHECK_CONTAINS(rooftune_last_error(),
                 "no tuned kernel serves attention 1x2x64:32x64:causal bf16");
  CHECK_CONTAINS(rooftune_last_error(), "cuDNN, the fallback, cannot run it");
  CHECK_CONTAINS(info.reason, "no tuning database given");
  teardown(&bad);
}

/* The fixture: a context on GPU 0 and cuDNN.  Skips the file without a driver, a GPU of
 * compute capability 8.0 or newer, or cuDNN. */
static void file_setup(void) {
  rt_error err = {0};
  if (cuda_driver_load(&err) != RT_OK) test_skip(err.text);
  CUdevice dev;
  CUcontext ctx;
  if (cu.cuDeviceGet(&dev, 0) || cu.cuDevicePrimaryCtxRetain(&ctx, dev) || cu.cuCtxSetCurrent(ctx))
    test_skip("cannot make a context on GPU 0");
  cu.cuDeviceGetName(gpu, sizeof gpu, dev);
  cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  cu.cuDriverGetVersion(&driver);
  if (major < 8) test_skip("cuDNN's SDPA for bf16 needs compute capability 8.0 or newer");
  if (cudnn_load(&err) != RT_OK) test_skip(err.text);
  char v[32];
  cudnn_version_text(dnn.version, v, sizeof v);
  printf("%s, cuDNN %s at %s\n", gpu, v, dnn.path);
}

TEST_LIST_FIXTURE(file_setup, NULL, TEST_ENTRY(prefill), TEST_ENTRY(ragged))
