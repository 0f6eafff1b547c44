/* test_db_verified.c — whether a result passed its reference check (results.verified, schema 7)
 * travels everywhere a result does: stored and read back, resumed, merged, exported (a JSON
 * boolean in rows and winners), checked by `db check` (verified only where a measuring device
 * checked), decided for old rows by the migration from a version-6 file, and read by
 * librooftune, which passes an unverified winner over when it would launch it, refuses to load
 * it, and serves it only when the caller allows unverified winners. */
/* stages: template runtime */
#include "db/export.h"
#include "runtime/include/rooftune.h"
#include "test.h"
#include "template/ktfile.h"
#include "unit/db_fixture.h"
#include "unit/db_old_schema.h"

/* Stores one winner of TEMPLATE for 256x256x256 f16 on DEVICE: measured and verified, or
 * predicted (not verified) when the device is model:... */
static void put(db *d, const char *device, const char *tmpl, double ms) {
  rt_error err = {0};
  db_run_spec spec = fx_spec(fx_gemm(256, 256, 256, "f16"), device);
  CHECK_INT(db_toolkit_string(spec.prov.toolkit, sizeof spec.prov.toolkit, &err), RT_OK);
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  if (!r) return;
  CHECK_INT(db_run_template(r, tmpl, "gemm", "s", "m", &err), RT_OK);
  candidate_result c = fx_result(tmpl, 128, 128, ms);
  c.verified = 1;
  if (!strncmp(device, "model:", 6)) {
    c.timing = TIMING_PREDICTED;
    c.verified = 0;
    c.verify_error = -1;
  }
  long long id = 0;
  CHECK_INT(db_run_store(r, &c, &id, &err), RT_OK);
  db_winner w = fx_winner(tmpl, "\177ELF", 4);
  w.grid_v[0] = 4;
  w.block_v[0] = 256;
  CHECK_INT(db_run_set_winner(r, id, &w, NULL, &err), RT_OK);
  db_run_finish(r, "done", &err);
  db_run_free(r);
}

typedef struct seen {
  int verified, unverified;
  json_t *rows;
} seen;

static rt_status each(void *ctx, const db_run_spec *spec, const char *tmpl, const char *src,
                      const char *man, const candidate_result *r, rt_error *err) {
  (void)err;
  seen *s = ctx;
  if (r->verified)
    s->verified++;
  else
    s->unverified++;
  json_array_append_new(s->rows, db_export_row_json(spec, tmpl, src, man, r));
  return RT_OK;
}

/* Stored, read back (results, winners, resume), exported, merged. */
/* The fixture: a database of the two winners put() stores (H200 measured and verified,
 * model:h200 predicted), which the export and serving cases read. */
static char fixture_db[512];

static void fill(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  if (!d) return;
  put(d, "NVIDIA H200", "gemm_mma", 1.0);
  put(d, "model:h200", "gemm_simt", 0.5);
  db_close(d);
}

static void setup(void) {
  fx_tmpname(fixture_db, sizeof fixture_db, "verified");
  fill(fixture_db);
}

static void teardown(void) { fx_remove(fixture_db); }

/* on its own pair of files: it writes a resume run and merges */
TEST_CASE(round_trip) {
  char a[512], b[512];
  fx_tmpname(a, sizeof a, "verified-a");
  fx_tmpname(b, sizeof b, "verified-b");
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(a, DB_CREATE, &d, &err), RT_OK);
  put(d, "NVIDIA H200", "gemm_mma", 1.0);
  put(d, "model:h200", "gemm_simt", 0.5);
  seen s = {0, 0, json_array()};
  CHECK_INT(db_each_result(d, each, &s, &err), RT_OK);
  CHECK_INT(s.verified, 1);
  CHECK_INT(s.unverified, 1);
  /* the export's rows carry it as a JSON boolean */
  CHECK(json_is_true(json_object_get(json_array_get(s.rows, 0), "verified")));
  CHECK(json_is_false(json_object_get(json_array_get(s.rows, 1), "verified")));
  json_decref(s.rows);
  db_entry *e = NULL;
  size_t n = 0;
  CHECK_INT(db_entries(d, 0, &e, &n, &err), RT_OK);
  CHECK_INT(n, 2);
  for (size_t i = 0; i < n; i++) {
    int measured = e[i].timing == TIMING_MEASURED;
    CHECK_INT(e[i].verified, measured);
    json_t *j = db_export_entry_json(&e[i]);
    CHECK(json_is_boolean(json_object_get(j, "verified")) &&
          json_is_true(json_object_get(j, "verified")) == measured);
    json_decref(j);
  }
  free(e);
  /* resume reads it back */
  db_run_spec spec = fx_spec(fx_gemm(256, 256, 256, "f16"), "NVIDIA H200");
  CHECK_INT(db_toolkit_string(spec.prov.toolkit, sizeof spec.prov.toolkit, &err), RT_OK);
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "s", "m", &err), RT_OK);
  candidate_result *prev = NULL;
  size_t np = 0;
  CHECK_INT(db_run_previous(r, "gemm_mma", &prev, &np, &err), RT_OK);
  CHECK_INT(np, 1);
  if (np) CHECK_INT(prev[0].verified, 1);
  free(prev);
  /* a writer cannot say verified for what no check ran on */
  candidate_result bad = fx_result("gemm_mma", 64, 64, 1.0);
  bad.verified = 1;
  bad.timing = TIMING_PREDICTED;
  CHECK_INT(db_run_store(r, &bad, NULL, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "says verified, but it is predicted, OK");
  bad.timing = TIMING_MEASURED;
  bad.verify_error = -1;
  CHECK_INT(db_run_store(r, &bad, NULL, &err), RT_ERR_INVALID);
  bad.verify_error = 1e-3;
  bad.status = RT_ERR_WRONG_RESULT;
  CHECK_INT(db_run_store(r, &bad, NULL, &err), RT_ERR_INVALID);
  db_run_finish(r, "done", &err);
  db_run_free(r);
  db_close(d);
  /* a merge keeps it */
  CHECK_INT(db_open(b, DB_CREATE, &d, &err), RT_OK);
  CHECK_INT(db_merge(d, a, NULL, &err), RT_OK);
  CHECK_INT(db_entries(d, 0, &e, &n, &err), RT_OK);
  CHECK_INT(n, 2);
  for (size_t i = 0; i < n; i++) CHECK_INT(e[i].verified, e[i].timing == TIMING_MEASURED);
  free(e);
  int problems = -1;
  char rep[4096];
  CHECK_INT(db_check(d, rep, sizeof rep, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  CHECK_CONTAINS(rep, "note: winner 2 (gemm_simt, predicted) is not verified");
  db_close(d);
  fx_remove(a);
  fx_remove(b);
}

/* The export read back (what --device replay:FILE, --prior FILE and db import read): the rows'
 * times come back replayed, so never verified, whatever the file says. */
TEST_CASE(export_read_back) {
  const char *path = fixture_db;
  char out[520];
  snprintf(out, sizeof out, "%s.json", path);
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  CHECK_INT(db_export_write(d, DB_EXPORT_JSON, NULL, out, &err), RT_OK);
  db_close(d);
  ktfile_select sel = {"gemm_mma", "256x256x256", "f16"};
  ktfile *kf = NULL;
  CHECK_INT(ktfile_load_select(out, &sel, &kf, &err), RT_OK);
  unlink(out);
  if (!kf) return;
  CHECK_INT(kf->valid, 1);
  candidate_result r;
  ktfile_result(kf, 0, &r);
  CHECK_INT(r.timing, TIMING_REPLAYED);
  CHECK_INT(r.verified, 0);
  ktfile_free(kf);
}

/* librooftune: an unverified winner is shown, not launched; passed over when the query wants
 * what it can launch; served with ROOFTUNE_ALLOW_UNVERIFIED. */
TEST_CASE(serving) {
  const char *path = fixture_db;
  rooftune_db *r = NULL;
  CHECK_INT(rooftune_open(path, &r), ROOFTUNE_OK);
  if (!r) return;
  rooftune_query q = {
      .family = "gemm", .shape = "256x256x256", .dtype = "f16", .device = "model:h200"};
  rooftune_match m;
  CHECK_INT(rooftune_lookup(r, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_EXACT);
  CHECK_STR(m.template_name, "gemm_simt");
  CHECK_INT(m.verified, 0);
  CHECK_INT(m.runnable, 0);
  rooftune_kernel *k = NULL;
  CHECK_INT(rooftune_kernel_load(r, &m, &k), ROOFTUNE_ERR_UNVERIFIED);
  CHECK(k == NULL);
  CHECK_CONTAINS(
      rooftune_last_error(),
      "winner gemm_simt BLOCK_M=128,BLOCK_N=128 (predicted on model:h200) is not verified");
  CHECK_CONTAINS(rooftune_last_error(), "ROOFTUNE_ALLOW_UNVERIFIED");
  CHECK_STR(rooftune_status_name(ROOFTUNE_ERR_UNVERIFIED), "ERR_UNVERIFIED");
  /* what rooftune_gemm asks: the unverified one is passed over, cuBLASLt serves */
  q.flags = ROOFTUNE_RUNNABLE;
  CHECK_INT(rooftune_lookup(r, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_INT(m.passed_count, 1);
  CHECK_CONTAINS(m.passed_over,
                 "gemm_simt 256x256x256 (distance 0): not verified: predicted on model:h200");
  CHECK_CONTAINS(m.reason, "no verified tuned winner admits gemm 256x256x256 f16 on model:h200");
  CHECK_CONTAINS(m.reason, "1 unverified winner passed over");
  /* any device: the verified H200 winner is next, after the faster unverified one */
  q.device = NULL;
  CHECK_INT(rooftune_lookup(r, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_EXACT);
  CHECK_STR(m.template_name, "gemm_mma");
  CHECK_INT(m.verified, 1);
  CHECK_INT(m.runnable, 1);
  /* allowed: served, and loading goes past the check (to the driver, absent on a host) */
  q.device = "model:h200";
  q.flags = ROOFTUNE_RUNNABLE | ROOFTUNE_ALLOW_UNVERIFIED;
  CHECK_INT(rooftune_lookup(r, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_EXACT);
  CHECK_STR(m.template_name, "gemm_simt");
  CHECK_INT(m.verified, 0);
  CHECK_INT(m.runnable, 1);
  int rc = rooftune_kernel_load(r, &m, &k);
  CHECK(rc != ROOFTUNE_ERR_UNVERIFIED);
  rooftune_kernel_free(k);
  /* the one-call functions' flag: only ROOFTUNE_ALLOW_UNVERIFIED */
  CHECK_INT(rooftune_set_flags(r, ROOFTUNE_ALLOW_UNVERIFIED), ROOFTUNE_OK);
  CHECK_INT(rooftune_set_flags(r, ROOFTUNE_ALLOW_MISMATCH), ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "only ROOFTUNE_ALLOW_UNVERIFIED");
  CHECK_INT(rooftune_set_flags(NULL, 0), ROOFTUNE_ERR_INVALID);
  CHECK_INT(rooftune_set_flags(r, 0), ROOFTUNE_OK);
  rooftune_close(r);
}

/* A version-6 file: what its rows record decides verified. */
static void write_v6(const char *path) {
  static const char rows[] =
      "INSERT INTO devices(name,sm_count,cc_major,cc_minor) VALUES('NVIDIA "
      "H200',132,9,0),('model:h200',0,0,0);"
      "INSERT INTO templates(name,family,source_hash,manifest_hash) "
      "VALUES('gemm_mma','gemm','s','m'),"
      "('gemm_simt','gemm','s2','m2');"
      "INSERT INTO problems(family,shape,dtype,layout,dims) VALUES('gemm','256x256x256','f16','nn',"
      "'M=256,N=256,K=256,BATCH=1');"
      "INSERT INTO runs(problem_id,device_id,toolkit,rooftune_version,started_at,status) VALUES"
      "(1,1,'tk','0.2.0','2026-01-01T00:00:00Z','done'),(1,2,'tk','0.2.0','2026-01-01T00:00:00Z','"
      "done');"
      /* 1: measured, OK, checked: verified */
      "INSERT INTO "
      "results(run_id,problem_id,device_id,template_id,toolkit,config,status,timing,time_ms,"
      "verify_error,created_at) VALUES(1,1,1,1,'tk','A=1','OK','measured',0.01,1e-5,'2026'),"
      /* 2: measured, OK, an exact match (error 0): verified */
      "(1,1,1,1,'tk','A=2','OK','measured',0.02,0,'2026'),"
      /* 3: measured, OK, no check's error (NULL): not verified */
      "(1,1,1,1,'tk','A=3','OK','measured',0.03,NULL,'2026'),"
      /* 4: measured, OK, -1 (not checked): not verified */
      "(1,1,1,1,'tk','A=4','OK','measured',0.04,-1,'2026'),"
      /* 5: measured, the check failed: not verified */
      "(1,1,1,1,'tk','A=5','ERR_WRONG_RESULT','measured',NULL,0.5,'2026'),"
      /* 6: predicted: not verified */
      "(2,1,2,2,'tk','A=6','OK','predicted',0.005,-1,'2026'),"
      /* 7: replayed (an import), with an error from elsewhere: not verified */
      "(1,1,1,1,'tk','A=7','OK','replayed',0.07,1e-6,'2026');"
      "INSERT INTO "
      "winners(problem_id,device_id,template_id,toolkit,result_id,entry,updated_at,cubin_bytes,"
      "grid_vx,block_vx) "
      "VALUES(1,1,1,'tk',1,'k','2026',4,1,256),(1,2,2,'tk',6,'k2','2026',4,1,256);"
      "INSERT INTO winner_cubins(winner_id,cubin) VALUES(1,x'7f454c46'),(2,x'7f454c46');";
  fx_old_db(path, 6, rows);
}

TEST_CASE(migration_v6) {
  char path[512];
  fx_tmpname(path, sizeof path, "v6");
  write_v6(path);
  rt_error err = {0};
  db *d = fx_old_db_migrate(path);
  db_close(d);
  sqlite3 *h = NULL;
  sqlite3_open(path, &h);
  sqlite3_stmt *st = NULL;
  CHECK_INT(
      sqlite3_prepare_v2(
          h, "SELECT group_concat(verified, '') FROM (SELECT verified FROM results ORDER BY id)",
          -1, &st, NULL),
      SQLITE_OK);
  CHECK_INT(sqlite3_step(st), SQLITE_ROW);
  CHECK_STR((const char *)sqlite3_column_text(st, 0), "1100000");
  sqlite3_finalize(st);
  /* the column refuses what is not 0 or 1 */
  CHECK(sqlite3_exec(h, "UPDATE results SET verified = 2 WHERE id = 1", NULL, NULL, NULL) !=
        SQLITE_OK);
  sqlite3_close(h);
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_entry *e = NULL;
  size_t n = 0;
  CHECK_INT(db_entries(d, 0, &e, &n, &err), RT_OK);
  CHECK_INT(n, 2);
  if (n == 2) {
    CHECK_INT(e[0].verified, 1); /* measured with a check */
    CHECK_INT(e[1].verified, 0); /* predicted */
  }
  free(e);
  int problems = -1;
  char rep[4096];
  CHECK_INT(db_check(d, rep, sizeof rep, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  db_close(d);
  /* a row that says verified without a check is a problem db check names */
  sqlite3_open(path, &h);
  CHECK_INT(sqlite3_exec(h, "UPDATE results SET verified = 1 WHERE id IN (4, 6)", NULL, NULL, NULL),
            SQLITE_OK);
  sqlite3_close(h);
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  CHECK_INT(db_check(d, rep, sizeof rep, &problems, &err), RT_OK);
  CHECK_INT(problems, 2);
  CHECK_CONTAINS(rep,
                 "result 4 (measured, OK): says verified, but only a measured OK result with a "
                 "reference check's "
                 "error is");
  CHECK_CONTAINS(rep, "result 6 (predicted, OK): says verified");
  db_close(d);
  fx_remove(path);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(round_trip), TEST_ENTRY(export_read_back),
                  TEST_ENTRY(serving), TEST_ENTRY(migration_v6))
