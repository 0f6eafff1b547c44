/* test_runtime.c — the public runtime API (rooftune.h) on a database written through db.h:
 * exact and nearest lookups by the documented log-distance, the preference order, refused and
 * flagged provenance mismatches, the answer cache, lookups from several threads, the status
 * table, the version and struct sizes, error codes and messages, and loading without a
 * driver.  The serving rules on real templates' recipes are test_serving.c's. */
/* stages: db runtime */
#include <pthread.h>

#include "runtime/include/rooftune.h"
#include "test.h"
#include "core/version.h"
#include "unit/db_fixture.h"

static char toolkit[96];

/* Stores one winner of TEMPLATE for problem p on DEVICE with time ms (launch variables vars,
 * NULL: fx_winner's); returns nothing. */
static void put_vars(db *d, problem p, const char *device, const char *tmpl, const char *src,
                     double ms, timing_kind timing, const char *tk, const char *vars) {
  rt_error err = {0};
  db_run_spec spec = fx_spec(p, device);
  snprintf(spec.prov.toolkit, sizeof spec.prov.toolkit, "%s", tk ? tk : toolkit);
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  if (!r) return;
  CHECK_INT(db_run_template(r, tmpl, "gemm", src, "man", &err), RT_OK);
  candidate_result c = fx_result(tmpl, 128, 128, ms);
  c.timing = timing;
  c.verified = timing == TIMING_MEASURED; /* a measuring device checked it */
  long long id = 0;
  CHECK_INT(db_run_store(r, &c, &id, &err), RT_OK);
  db_winner w = fx_winner(tmpl, "\177ELF", 4);
  w.grid_v[0] = (unsigned)(((p.dims[0] + 127) / 128) * ((p.dims[1] + 127) / 128));
  if (vars) snprintf(w.vars, sizeof w.vars, "%s", vars);
  CHECK_INT(db_run_set_winner(r, id, &w, NULL, &err), RT_OK);
  db_run_finish(r, "done", &err);
  db_run_free(r);
}
static void put(db *d, problem p, const char *device, const char *tmpl, const char *src, double ms,
                timing_kind timing, const char *tk) {
  put_vars(d, p, device, tmpl, src, ms, timing, tk, NULL);
}

typedef struct thread_arg {
  rooftune_db *db;
  int bad;
} thread_arg;

static void *lookup_thread(void *p) {
  thread_arg *a = p;
  for (int i = 0; i < 2000; i++) {
    char shape[64];
    snprintf(shape, sizeof shape, "%dx4096x4096", 1 << (i % 13));
    rooftune_query q = {
        .family = "gemm", .shape = shape, .dtype = "bf16", .device = "H200", .nearest_max = 100};
    rooftune_match m;
    if (rooftune_lookup(a->db, &q, &m) != ROOFTUNE_OK || m.match == ROOFTUNE_MATCH_NONE) a->bad++;
  }
  return NULL;
}

/* A winner whose stored variables carry its own shape (as an older rooftune, or a caller of
 * db.h, may write them): the queried shape's values win, so a batch of 4 gets 4 grid layers. */
TEST_CASE(stale_shape_vars) {
  rt_error err = {0};
  char path[512];
  fx_tmpname(path, sizeof path, "stale");
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  put_vars(d, fx_gemm(64, 4096, 4096, "f16"), "NVIDIA H200", "gemm_mma", "src", 0.1,
           TIMING_MEASURED, NULL,
           "M=64,N=4096,K=4096,BATCH=1,BLOCK_M=128,BLOCK_N=128,SPLIT_K=2,THREADS=256,SMEM=65536");
  db_close(d);
  rooftune_db *rt = NULL;
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  rooftune_query q = {.family = "gemm",
                      .shape = "4@300x4096x4096",
                      .dtype = "f16",
                      .layout = "nn",
                      .device = "H200",
                      .nearest_max = 100};
  rooftune_match m;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_INT(m.rule, ROOFTUNE_RULE_NEAREST);
  CHECK_INT(m.geometry_ok, 1);
  CHECK_INT(m.grid[0], 3 * 32);
  CHECK_INT(m.grid[2], 2 * 4);
  /* SPLIT_K 2 over a batch of 4096: grid z 8192 fits; SPLIT_K 32 (below) would be 131072, past
   * CUDA's 65535: that winner does not admit the shape and cuBLASLt serves it */
  q.shape = "4096@300x4096x4096";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.geometry_ok, 1);
  CHECK_INT(m.grid[2], 2 * 4096);
  rooftune_close(rt);
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  put_vars(d, fx_gemm(64, 4096, 4096, "f16"), "NVIDIA H200", "gemm_mma", "src", 0.09,
           TIMING_MEASURED, NULL, "BLOCK_M=128,BLOCK_N=128,SPLIT_K=32,THREADS=256,SMEM=65536");
  db_close(d);
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_STR(m.library, "cublaslt");
  CHECK_CONTAINS(m.passed_over, "grid z would be 131072");
  CHECK_INT(m.passed_count, 1);
  rooftune_close(rt);
  fx_remove(path);
}

/* The one status table: every public code has a name and a meaning, every engine code maps
 * to a public one; the version and the struct sizes the bindings check. */
TEST_CASE(status_table) {
  static const int codes[] = {
#define CODE(name, number, meaning) number,
      ROOFTUNE_STATUS_TABLE(CODE)
#undef CODE
  };
  static const char *const names[] = {
#define NAME(name, number, meaning) #name,
      ROOFTUNE_STATUS_TABLE(NAME)
#undef NAME
  };
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    CHECK_INT(codes[i], (int)i); /* stable and dense */
    CHECK_STR(rooftune_status_name(codes[i]), names[i]);
    CHECK(strcmp(rooftune_strerror(codes[i]), "unknown status code") != 0);
  }
  CHECK_STR(rooftune_status_name(ROOFTUNE_ERR_DB_FOREIGN), "ERR_DB_FOREIGN");
  CHECK_STR(rooftune_status_name(-1), "UNKNOWN");
  CHECK_STR(rooftune_strerror(99), "unknown status code");
  /* the header's version is the build's */
  char v[32];
  snprintf(v, sizeof v, "%d.%d.%d", ROOFTUNE_VERSION_MAJOR, ROOFTUNE_VERSION_MINOR,
           ROOFTUNE_VERSION_PATCH);
  CHECK_STR(v, ROOFTUNE_VERSION);
  CHECK_STR(rooftune_version(), ROOFTUNE_VERSION);
  CHECK_INT(rooftune_version_number(), ROOFTUNE_VERSION_NUMBER);
  CHECK_INT(rooftune_struct_size("rooftune_query"), sizeof(rooftune_query));
  CHECK_INT(rooftune_struct_size("rooftune_match"), sizeof(rooftune_match));
  CHECK_INT(rooftune_struct_size("rooftune_info"), sizeof(rooftune_info));
  CHECK_INT(rooftune_struct_size("rooftune_attention_problem"), sizeof(rooftune_attention_problem));
  CHECK_INT(rooftune_struct_size("rooftune_nothing"), 0);
  CHECK_INT(rooftune_struct_size(NULL), 0);
}

/* The database most cases read: winners on two GPUs, a model device, another toolkit and a
 * fused epilogue. */
static void fill(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  if (!d) return;
  put(d, fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200", "gemm_mma", "s1", 1.0, TIMING_MEASURED,
      NULL);
  put(d, fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200", "gemm_simt", "t1", 3.0, TIMING_MEASURED,
      NULL);
  put(d, fx_gemm(4096, 4096, 4096, "bf16"), "model:h200", "gemm_wgmma", "w1", 0.5, TIMING_PREDICTED,
      NULL); /* faster, but a prediction */
  put(d, fx_gemm(64, 4096, 4096, "bf16"), "NVIDIA H200", "gemm_mma", "s1", 0.1, TIMING_MEASURED,
      NULL);
  put(d, fx_gemm(1024, 1024, 1024, "f16"), "NVIDIA A100-SXM4-80GB", "gemm_mma", "s1", 0.2,
      TIMING_MEASURED, NULL);
  put(d, fx_gemm(2048, 2048, 2048, "f16"), "NVIDIA H200", "gemm_mma", "s1", 0.4, TIMING_MEASURED,
      "cuda 11.0, nvrtc 11.0, cublaslt 110000");
  { /* a fused epilogue's winner (faster than the plain one): it serves its own options only */
    problem pe = fx_gemm(4096, 4096, 4096, "bf16");
    snprintf(pe.shape, sizeof pe.shape, "4096x4096x4096+bias+gelu+out=bf16");
    put(d, pe, "NVIDIA H200", "gemm_wgmma", "w1", 0.2, TIMING_MEASURED, NULL);
  }
  db_close(d);
}

/* The fixture: the toolkit string winners are stored with, and fill()'s database opened
 * through the runtime (the cases only read it; the one that writes has its own copy). */
static char path[512];
static rooftune_db *rt;

static void setup(void) {
  srand((unsigned)getpid());
  rt_error err = {0};
  CHECK_INT(db_toolkit_string(toolkit, sizeof toolkit, &err), RT_OK);
  fx_tmpname(path, sizeof path, "runtime");
  fill(path);
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
}

static void teardown(void) {
  rooftune_close(rt);
  fx_remove(path);
}

/* the runtime states its toolkit without NVRTC, from the CUDA it was built with: the same
 * identity the tuner stores, or no winner would agree with it */
TEST_CASE(toolkit_identity) {
  rt_error err = {0};
  {
    char path0[512];
    fx_tmpname(path0, sizeof path0, "toolkit");
    db *d0 = NULL;
    CHECK_INT(db_open(path0, DB_CREATE, &d0, &err), RT_OK);
    put(d0, fx_gemm(8, 8, 8, "f32"), "NVIDIA H200", "gemm_mma", "s", 1.0, TIMING_MEASURED, NULL);
    db_close(d0);
    rooftune_db *r0 = NULL;
    CHECK_INT(rooftune_open(path0, &r0), ROOFTUNE_OK);
    rooftune_query q0 = {.family = "gemm", .shape = "8x8x8", .dtype = "f32"};
    rooftune_match m0;
    CHECK_INT(rooftune_lookup(r0, &q0, &m0), ROOFTUNE_OK);
    CHECK_INT(m0.match, ROOFTUNE_MATCH_EXACT);
    CHECK_INT(m0.mismatch, 0);
    q0.toolkit = "cuda 99.0, nvrtc 99.0, cublaslt 1"; /* the caller's own identity */
    CHECK_INT(rooftune_lookup(r0, &q0, &m0), ROOFTUNE_OK);
    CHECK_INT(m0.match, ROOFTUNE_MATCH_NONE);
    CHECK_CONTAINS(m0.reason, "1 winner of another device, toolkit or template version refused");
    rooftune_close(r0);
    fx_remove(path0);
  }
}

/* Exact: measured beats predicted even when slower; geometry is the stored one. */
TEST_CASE(exact) {
  rooftune_match m;
  rooftune_query q = {.family = "gemm", .shape = "4096x4096x4096", .dtype = "bf16"};
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_EXACT);
  CHECK_INT(m.rule, ROOFTUNE_RULE_EXACT);
  CHECK_INT(m.runnable, 1);
  CHECK_INT(m.passed_count, 0);
  CHECK_NEAR(m.nearest_max, ROOFTUNE_NEAREST_MAX_DEFAULT, 0);
  CHECK_STR(m.template_name, "gemm_mma");
  CHECK_STR(m.timing, "measured");
  CHECK_STR(m.device, "NVIDIA H200");
  CHECK_INT(m.mismatch, 0);
  CHECK_NEAR(m.time_ms, 1.0, 1e-12);
  CHECK_INT(m.geometry_ok, 1);
  CHECK_INT(m.grid[0], 32 * 32);
  CHECK_INT(m.block[0], 256);
  CHECK_INT(m.smem, 65536);
  CHECK_STR(m.layout, "nn");
  CHECK_INT(m.cubin_size, 4);
  /* The same again comes from the cache, identical. */
  rooftune_match m2;
  CHECK_INT(rooftune_lookup(rt, &q, &m2), ROOFTUNE_OK);
  CHECK(memcmp(&m, &m2, sizeof m) == 0);
  /* The epilogue's winner: exact for its options, nearest for other dims with the same options,
   * never for a query without them or with other ones. */
  {
    rooftune_query qe = {.family = "gemm",
                         .shape = "4096x4096x4096+bias+gelu+out=bf16",
                         .dtype = "bf16",
                         .device = "H200"};
    CHECK_INT(rooftune_lookup(rt, &qe, &m), ROOFTUNE_OK);
    CHECK_INT(m.match, ROOFTUNE_MATCH_EXACT);
    CHECK_STR(m.template_name, "gemm_wgmma");
    CHECK_STR(m.shape, "4096x4096x4096+bias+gelu+out=bf16");
    CHECK_STR(m.layout, "nn");
    qe.shape = "2048x4096x4096:nn+bias+gelu+out=bf16";
    CHECK_INT(rooftune_lookup(rt, &qe, &m), ROOFTUNE_OK);
    CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
    CHECK_STR(m.template_name, "gemm_wgmma");
    qe.shape = "4096x4096x4096+bias+out=bf16";
    CHECK_INT(rooftune_lookup(rt, &qe, &m), ROOFTUNE_OK);
    CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
    qe.shape = "4096x4096x4096:nt+bias+gelu+out=bf16";
    CHECK_INT(rooftune_lookup(rt, &qe, &m), ROOFTUNE_OK);
    CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
    qe.shape = "4096x4096x4096";
    CHECK_INT(rooftune_lookup(rt, &qe, &m), ROOFTUNE_OK);
    CHECK_STR(m.template_name, "gemm_mma"); /* not the faster epilogue kernel */
  }
  /* Only the model device: its prediction, marked as one. */
  q.device = "model:h200";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_STR(m.template_name, "gemm_wgmma");
  CHECK_STR(m.timing, "predicted");
}

/* Nearest: 100x4096x4096 is closer to 64x... than to 4096x... (log distance). */
TEST_CASE(nearest) {
  rooftune_match m;
  rooftune_query qn = {.family = "gemm",
                       .shape = "100x4096x4096",
                       .dtype = "bf16",
                       .layout = "nn",
                       .device = "H200"};
  CHECK_INT(rooftune_lookup(rt, &qn, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_INT(m.rule, ROOFTUNE_RULE_NEAREST);
  CHECK_STR(m.shape, "64x4096x4096");
  CHECK_NEAR(m.distance, log(100.0 / 64.0), 1e-9);
  /* The launch expressions are evaluated for the queried shape, not the tuned one. */
  CHECK_INT(m.geometry_ok, 1);
  CHECK_INT(m.grid[0], 1 * 32);
  CHECK_INT(m.grid[1], 1);
  CHECK_INT(m.grid[2], 1);
  CHECK_INT(m.block[0], 256);
  CHECK_INT(m.smem, 65536);
  rooftune_query qb = {.family = "gemm",
                       .shape = "4@100x4096x4096",
                       .dtype = "bf16",
                       .layout = "nn",
                       .device = "H200",
                       .nearest_max = 2}; /* 1.45 away: past the default cap */
  CHECK_INT(rooftune_lookup(rt, &qb, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_INT(m.grid[2], 4); /* SPLIT_K*BATCH */
  qn.flags = ROOFTUNE_EXACT_ONLY;
  CHECK_INT(rooftune_lookup(rt, &qn, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
}

/* Other dtype, layout, family or rank: nothing. */
TEST_CASE(other_keys) {
  rooftune_match m;
  rooftune_query qx = {.family = "gemm", .shape = "4096x4096x4096", .dtype = "f32"};
  CHECK_INT(rooftune_lookup(rt, &qx, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
  qx.dtype = "bf16";
  qx.layout = "nt";
  CHECK_INT(rooftune_lookup(rt, &qx, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
  qx.shape = "4096x4096x4096:nt";
  qx.layout = NULL;
  CHECK_INT(rooftune_lookup(rt, &qx, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
  qx.shape = "4096x4096"; /* not a gemm shape at all */
  CHECK_INT(rooftune_lookup(rt, &qx, &m), ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "4096x4096");
}

/* Another GPU: refused for a device that names H200, served with the bit when allowed. */
TEST_CASE(other_gpu_and_toolkit) {
  rooftune_match m;
  rooftune_query qd = {
      .family = "gemm", .shape = "1024x1024x1024", .dtype = "f16", .device = "H200"};
  CHECK_INT(rooftune_lookup(rt, &qd, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
  /* ... the H200's 2048 winner has another toolkit, so it is refused too */
  qd.flags = ROOFTUNE_ALLOW_MISMATCH;
  CHECK_INT(rooftune_lookup(rt, &qd, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_EXACT);
  CHECK_STR(m.device, "NVIDIA A100-SXM4-80GB");
  CHECK_INT(m.mismatch, ROOFTUNE_MISMATCH_DEVICE);
  qd.shape = "2048x2048x2048";
  CHECK_INT(rooftune_lookup(rt, &qd, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_EXACT);
  CHECK_INT(m.mismatch, ROOFTUNE_MISMATCH_TOOLKIT);
  CHECK_STR(m.toolkit, "cuda 11.0, nvrtc 11.0, cublaslt 110000");
  qd.flags = 0;
  qd.device = NULL;
  CHECK_INT(rooftune_lookup(rt, &qd, &m), ROOFTUNE_OK);
  CHECK_STR(m.shape, "1024x1024x1024"); /* nearest with the right toolkit, any device */
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_INT(m.mismatch, 0);
}

/* Threads share one handle. */
TEST_CASE(threads) {
  pthread_t th[4];
  thread_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i].db = rt;
    args[i].bad = 0;
    pthread_create(&th[i], NULL, lookup_thread, &args[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK_INT(args[i].bad, 0);
  }
}

/* A newer template version flags (and without ALLOW refuses) the old winner after reload (on
 * its own copy of the database: the fixture's stays as the other cases read it). */
TEST_CASE(reload) {
  rt_error err = {0};
  char own[512];
  fx_tmpname(own, sizeof own, "reload");
  fill(own);
  rooftune_db *own_rt = NULL;
  CHECK_INT(rooftune_open(own, &own_rt), ROOFTUNE_OK);
  rooftune_match m;
  rooftune_query q = {
      .family = "gemm", .shape = "4096x4096x4096", .dtype = "bf16", .device = "H200"};
  rooftune_query qn = {.family = "gemm",
                       .shape = "100x4096x4096",
                       .dtype = "bf16",
                       .layout = "nn",
                       .device = "H200"};
  CHECK_INT(rooftune_lookup(own_rt, &q, &m),
            ROOFTUNE_OK); /* builds the index (on the first lookup) */
  db *d = NULL;
  CHECK_INT(db_open(own, DB_CREATE, &d, &err), RT_OK);
  put(d, fx_gemm(64, 4096, 4096, "bf16"), "NVIDIA H200", "gemm_mma", "s2", 0.3, TIMING_MEASURED,
      NULL);
  db_close(d);
  CHECK_INT(rooftune_lookup(own_rt, &q, &m), ROOFTUNE_OK); /* the index is from before */
  CHECK_STR(m.template_name, "gemm_mma");
  CHECK_INT(rooftune_reload(own_rt), ROOFTUNE_OK);
  CHECK_INT(rooftune_lookup(own_rt, &q, &m), ROOFTUNE_OK);
  CHECK_STR(m.template_name, "gemm_simt"); /* gemm_mma s1 is stale now */
  q.flags = ROOFTUNE_ALLOW_MISMATCH;
  CHECK_INT(rooftune_lookup(own_rt, &q, &m), ROOFTUNE_OK);
  CHECK_STR(m.template_name, "gemm_simt"); /* no mismatch still beats a faster stale one */
  qn.flags = 0;
  CHECK_INT(rooftune_lookup(own_rt, &qn, &m), ROOFTUNE_OK);
  CHECK_STR(m.template_hash, "s2");
  rooftune_close(own_rt);
  fx_remove(own);
}

/* Errors: codes, messages, never a crash. */
TEST_CASE(errors) {
  rooftune_match m;
  rooftune_query q = {
      .family = "gemm", .shape = "4096x4096x4096", .dtype = "bf16", .device = "H200"};
  rooftune_query bad = {.family = "gemm", .shape = "40x96x", .dtype = "bf16"};
  CHECK_INT(rooftune_lookup(rt, &bad, &m), ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "40x96x");
  bad.shape = NULL;
  CHECK_INT(rooftune_lookup(rt, &bad, &m), ROOFTUNE_ERR_INVALID);
  CHECK_INT(rooftune_lookup(NULL, &q, &m), ROOFTUNE_ERR_INVALID);
  rooftune_kernel *k = NULL;
  rooftune_match none;
  memset(&none, 0, sizeof none);
  CHECK_INT(rooftune_kernel_load(rt, &none, &k), ROOFTUNE_ERR_NOT_FOUND);
  q.flags = 0;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  int rc = rooftune_kernel_load(rt, &m, &k);
  if (rc == ROOFTUNE_ERR_NO_DRIVER || rc == ROOFTUNE_ERR_NO_GPU) {
    CHECK(k == NULL);
    CHECK(rooftune_last_error()[0] != '\0');
  } else {
    CHECK(rc != ROOFTUNE_OK); /* with a driver: the fake cubin does not load */
  }
  float *c = (float *)16;
  rooftune_gemm_info info;
  CHECK_INT(rooftune_gemm(rt, "f64", NULL, 8, 8, 8, c, c, c, NULL, &info), ROOFTUNE_ERR_INVALID);
  CHECK_INT(rooftune_gemm(rt, "bf16", "tt", 8, 8, 8, c, c, c, NULL, &info), ROOFTUNE_ERR_INVALID);
  CHECK_INT(rooftune_gemm(rt, "bf16", "nn", 0, 8, 8, c, c, c, NULL, &info), ROOFTUNE_ERR_INVALID);
  CHECK_INT(rooftune_gemm(rt, "bf16", "nn", 8, 8, 8, NULL, c, c, NULL, &info),
            ROOFTUNE_ERR_INVALID);
  CHECK_INT(rooftune_gemm_batched(rt, "bf16", "nn", 0, 8, 8, 8, c, c, c, NULL, &info),
            ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "batch 0");
  CHECK_INT(rooftune_gemm_batched(rt, "bf16", "nn", 5000, 8, 8, 8, c, c, c, NULL, &info),
            ROOFTUNE_ERR_INVALID);
}

/* Opening what is not there or not a rooftune database; the fixed strings. */
TEST_CASE(open_errors) {
  rooftune_db *h = NULL;
  char foreign[512];
  fx_tmpname(foreign, sizeof foreign, "foreign");
  CHECK_INT(rooftune_open("/nonexistent.db", &h), ROOFTUNE_ERR_IO);
  CHECK_CONTAINS(rooftune_last_error(), "/nonexistent.db");
  CHECK_STR(rooftune_strerror(ROOFTUNE_ERR_DB_FOREIGN), "the file is not a rooftune database");
  CHECK_STR(rooftune_strerror(12345), "unknown status code");
  CHECK(rooftune_version()[0] >= '0');
  FILE *f = fopen(foreign, "wb");
  fputs("definitely not SQLite", f);
  fclose(f);
  CHECK_INT(rooftune_open(foreign, &h), ROOFTUNE_ERR_DB_FOREIGN);
  fx_remove(foreign);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(toolkit_identity), TEST_ENTRY(exact),
                  TEST_ENTRY(nearest), TEST_ENTRY(other_keys), TEST_ENTRY(other_gpu_and_toolkit),
                  TEST_ENTRY(threads), TEST_ENTRY(reload), TEST_ENTRY(errors),
                  TEST_ENTRY(open_errors), TEST_ENTRY(stale_shape_vars), TEST_ENTRY(status_table))
