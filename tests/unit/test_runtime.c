/* test_runtime.c — the public runtime API (rooftune.h) on a database written through db.h:
 * exact and nearest lookups by the documented log-distance, the preference order, refused and
 * flagged provenance mismatches, the answer cache, lookups from several threads, error codes
 * and messages, and loading without a driver. */
#include <pthread.h>

#include "runtime/include/rooftune.h"
#include "kernels/family.h"
#include "test.h"
#include "tuner/model/gpu_spec.h"
#include "tuner/template/catalog.h"
#include "tuner/template/manifest.h"
#include "tuner/core/sha256.h"
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
  long long id = 0;
  CHECK_INT(db_run_store(r, &c, &id, &err), RT_OK);
  db_winner w = fx_winner(tmpl, "\177ELF", 4);
  w.grid_v[0] = (unsigned)(((p.dims[0] + 127) / 128) * ((p.dims[1] + 127) / 128));
  if (vars) snprintf(w.vars, sizeof w.vars, "%s", vars);
  CHECK_INT(db_run_set_winner(r, id, &w, NULL, &err), RT_OK);
  db_run_finish(r, "done", &err);
  db_run_free(r);
}
static void put(db *d, problem p, const char *device, const char *tmpl, const char *src,
                double ms, timing_kind timing, const char *tk) {
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
    rooftune_query q = {"gemm", shape, "bf16", NULL, "H200", 0};
    rooftune_match m;
    if (rooftune_lookup(a->db, &q, &m) != ROOFTUNE_OK || m.match == ROOFTUNE_MATCH_NONE) a->bad++;
  }
  return NULL;
}

/* A model-device winner of the real gemm_mma template (its first configuration for 256^3 f32)
 * stored without launch expressions; manifest_hash is the manifest file's SHA-256, or junk. */
static void put_manifest_winner(const char *path, int good_hash) {
  rt_error err = {0};
  manifest *mf = NULL;
  CHECK_INT(catalog_find(NULL, "gemm_mma", &mf, &err), RT_OK);
  if (!mf) return;
  problem p;
  rt_vars env, vars;
  rt_vars_clear(&env);
  space *sp = NULL;
  const family_ops *fam = family_find("gemm");
  const gpu_spec *gpu = gpu_spec_find("h200");
  CHECK_INT(fam->parse_shape(fam, "256x256x256", "f32", NULL, &p, &err), RT_OK);
  CHECK_INT(problem_env(fam, &p, arch_spec_find(gpu->arch), gpu, &env, &err), RT_OK);
  CHECK_INT(manifest_build_space(mf, &env, &sp, &err), RT_OK);
  CHECK_INT(manifest_config_vars(mf, sp, 0, &env, &vars, &err), RT_OK);
  unsigned grid[3], block[3], smem;
  CHECK_INT(manifest_launch(mf, &vars, grid, block, &smem, &err), RT_OK);
  FILE *f = fopen(manifest_path(mf), "rb");
  static char text[1 << 16];
  size_t n = f ? fread(text, 1, sizeof text, f) : 0;
  if (f) fclose(f);
  unsigned char d[32];
  char hex[65];
  sha256(text, n, d);
  sha256_hex(d, hex);
  if (!good_hash) hex[0] = hex[0] == '0' ? '1' : '0';
  db *dbh = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &dbh, &err), RT_OK);
  db_run_spec spec = fx_spec(p, "model:h200");
  snprintf(spec.prov.toolkit, sizeof spec.prov.toolkit, "%s", toolkit);
  db_run *r = NULL;
  CHECK_INT(db_run_begin(dbh, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "src", hex, &err), RT_OK);
  candidate_result c = fx_result("gemm_mma", 0, 0, 0.01);
  c.timing = TIMING_PREDICTED;
  space_format_config(sp, 0, c.config, sizeof c.config);
  long long id = 0;
  CHECK_INT(db_run_store(r, &c, &id, &err), RT_OK);
  db_winner w;
  memset(&w, 0, sizeof w);
  w.cubin = "\177ELF";
  w.cubin_size = 4;
  snprintf(w.entry, sizeof w.entry, "gemm_mma");
  memcpy(w.grid_v, grid, sizeof grid);
  memcpy(w.block_v, block, sizeof block);
  w.smem_v = smem;
  CHECK_INT(db_run_set_winner(r, id, &w, NULL, &err), RT_OK);
  db_run_free(r);
  db_close(dbh);
  space_free(sp);
  manifest_free(mf);
}

/* Nearest-shape geometry from the installed manifest when the winner has no expressions. */
static void test_manifest_geometry(void) {
  for (int good = 1; good >= 0; good--) {
    char path[512];
    fx_tmpname(path, sizeof path, "manifest");
    put_manifest_winner(path, good);
    rooftune_db *rt = NULL;
    CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
    rooftune_query q = {"gemm", "256x256x256", "f32", NULL, "model:h200", 0};
    rooftune_match exact, near;
    CHECK_INT(rooftune_lookup(rt, &q, &exact), ROOFTUNE_OK);
    CHECK_INT(exact.match, ROOFTUNE_MATCH_EXACT);
    CHECK_INT(exact.geometry_ok, 1);
    q.shape = "4@512x256x256"; /* twice M, a batch of 4 */
    CHECK_INT(rooftune_lookup(rt, &q, &near), ROOFTUNE_OK);
    CHECK_INT(near.match, ROOFTUNE_MATCH_NEAREST);
    CHECK_INT(near.geometry_ok, good); /* another manifest version: no geometry */
    if (good && near.geometry_ok) {
      long long bm = 0, sk = 0;
      sscanf(strstr(near.config, "BLOCK_M=") + 8, "%lld", &bm);
      sscanf(strstr(near.config, "SPLIT_K=") + 8, "%lld", &sk);
      CHECK_INT(near.grid[0], exact.grid[0] * ((512 + bm - 1) / bm) / ((256 + bm - 1) / bm));
      CHECK_INT(near.grid[2], sk * 4);
      CHECK_INT(near.block[0], exact.block[0]);
      CHECK_INT(near.smem, exact.smem);
    }
    rooftune_close(rt);
    fx_remove(path);
  }
}

/* A winner whose stored variables carry its own shape (as an older rooftune, or a caller of
 * db.h, may write them): the queried shape's values win, so a batch of 4 gets 4 grid layers. */
static void test_stale_shape_vars(void) {
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
  rooftune_query q = {"gemm", "4@300x4096x4096", "f16", "nn", "H200", 0};
  rooftune_match m;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_INT(m.geometry_ok, 1);
  CHECK_INT(m.grid[0], 3 * 32);
  CHECK_INT(m.grid[2], 2 * 4);
  /* SPLIT_K 2 over a batch of 40000: grid z 80000 is past CUDA's 65535, so no geometry */
  q.shape = "40000@300x4096x4096";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_INT(m.geometry_ok, 0);
  rooftune_close(rt);
  fx_remove(path);
}

int main(void) {
  srand((unsigned)getpid());
  rt_error err = {0};
  CHECK_INT(db_toolkit_string(toolkit, sizeof toolkit, &err), RT_OK);
  char path[512];
  fx_tmpname(path, sizeof path, "runtime");
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  put(d, fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200", "gemm_mma", "s1", 1.0, TIMING_MEASURED,
      NULL);
  put(d, fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200", "gemm_simt", "t1", 3.0,
      TIMING_MEASURED, NULL);
  put(d, fx_gemm(4096, 4096, 4096, "bf16"), "model:h200", "gemm_wgmma", "w1", 0.5,
      TIMING_PREDICTED, NULL); /* faster, but a prediction */
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

  rooftune_db *rt = NULL;
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  rooftune_match m;

  /* Exact: measured beats predicted even when slower; geometry is the stored one. */
  rooftune_query q = {"gemm", "4096x4096x4096", "bf16", NULL, NULL, 0};
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_EXACT);
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
    rooftune_query qe = {"gemm", "4096x4096x4096+bias+gelu+out=bf16", "bf16", NULL, "H200", 0};
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

  /* Nearest: 100x4096x4096 is closer to 64x... than to 4096x... (log distance). */
  rooftune_query qn = {"gemm", "100x4096x4096", "bf16", "nn", "H200", 0};
  CHECK_INT(rooftune_lookup(rt, &qn, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_STR(m.shape, "64x4096x4096");
  CHECK_NEAR(m.distance, log(100.0 / 64.0), 1e-9);
  /* The launch expressions are evaluated for the queried shape, not the tuned one. */
  CHECK_INT(m.geometry_ok, 1);
  CHECK_INT(m.grid[0], 1 * 32);
  CHECK_INT(m.grid[1], 1);
  CHECK_INT(m.grid[2], 1);
  CHECK_INT(m.block[0], 256);
  CHECK_INT(m.smem, 65536);
  rooftune_query qb = {"gemm", "4@100x4096x4096", "bf16", "nn", "H200", 0};
  CHECK_INT(rooftune_lookup(rt, &qb, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_INT(m.grid[2], 4); /* SPLIT_K*BATCH */
  qn.flags = ROOFTUNE_EXACT_ONLY;
  CHECK_INT(rooftune_lookup(rt, &qn, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
  /* Other dtype, layout, family or rank: nothing. */
  rooftune_query qx = {"gemm", "4096x4096x4096", "f32", NULL, NULL, 0};
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
  qx.shape = "4096x4096";
  CHECK_INT(rooftune_lookup(rt, &qx, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);

  /* Another GPU: refused for a device that names H200, served with the bit when allowed. */
  rooftune_query qd = {"gemm", "1024x1024x1024", "f16", NULL, "H200", 0};
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

  /* Threads share one handle. */
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

  /* A newer template version flags (and without ALLOW refuses) the old winner after reload. */
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  put(d, fx_gemm(64, 4096, 4096, "bf16"), "NVIDIA H200", "gemm_mma", "s2", 0.3, TIMING_MEASURED,
      NULL);
  db_close(d);
  q.device = "H200";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK); /* the index is from before */
  CHECK_STR(m.template_name, "gemm_mma");
  CHECK_INT(rooftune_reload(rt), ROOFTUNE_OK);
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_STR(m.template_name, "gemm_simt"); /* gemm_mma s1 is stale now */
  q.flags = ROOFTUNE_ALLOW_MISMATCH;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_STR(m.template_name, "gemm_simt"); /* no mismatch still beats a faster stale one */
  qn.flags = 0;
  CHECK_INT(rooftune_lookup(rt, &qn, &m), ROOFTUNE_OK);
  CHECK_STR(m.template_hash, "s2");

  /* Errors: codes, messages, never a crash. */
  rooftune_query bad = {"gemm", "40x96x", "bf16", NULL, NULL, 0};
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
  rooftune_close(rt);

  CHECK_INT(rooftune_open("/nonexistent.db", &rt), ROOFTUNE_ERR_IO);
  CHECK_CONTAINS(rooftune_last_error(), "/nonexistent.db");
  CHECK_STR(rooftune_strerror(ROOFTUNE_ERR_DB_FOREIGN), "the file is not a rooftune database");
  CHECK_STR(rooftune_strerror(12345), "unknown status code");
  CHECK(rooftune_version()[0] >= '0');
  FILE *f = fopen(path, "wb");
  fputs("definitely not SQLite", f);
  fclose(f);
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_ERR_DB_FOREIGN);
  fx_remove(path);
  test_manifest_geometry();
  test_stale_shape_vars();
  return test_done();
}
