/* test_db.c — the tuning database: schema and identity, storing every candidate with its
 * provenance, resume queries, winners (replaced only by faster ones), entries, ceilings, merge,
 * check and the nearest-shape measure. */
/* stages: db */
#include <math.h>
#include <sqlite3.h>

#include "test.h"
#include "unit/db_fixture.h"
#include "unit/db_old_schema.h"

/* Ceilings on dev in d: the latest measurement replaces the older one. */
static void ceilings(db *d, const db_device *dev) {
  rt_error err = {0};
  CHECK_INT(db_ceiling_set(d, dev, "copy_bw", "", 4.1e12, &err), RT_OK);
  CHECK_INT(db_ceiling_set(d, dev, "copy_bw", "", 4.3e12, &err), RT_OK);
  CHECK_INT(db_ceiling_set(d, dev, "matmul", "bf16", 7.9e14, &err), RT_OK);
  CHECK_INT(db_ceiling_set(d, dev, "nonsense", "", 1, &err), RT_ERR_INVALID);
  double v = 0;
  int found = 0;
  char at[32];
  CHECK_INT(db_ceiling_get(d, dev, "copy_bw", "", &v, at, sizeof at, &found, &err), RT_OK);
  CHECK(found);
  CHECK_NEAR(v, 4.3e12, 1);
  CHECK(at[0] == '2');
  CHECK_INT(db_ceiling_get(d, dev, "matmul", "f16", &v, NULL, 0, &found, &err), RT_OK);
  CHECK(!found);
}

static void store_and_resume(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  CHECK_INT(db_schema_version(d), DB_SCHEMA_VERSION);
  db_run_spec spec = fx_spec(fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "src1", "man1", &err), RT_OK);
  CHECK(!db_run_has_result(r, "gemm_mma", "BLOCK_M=64,BLOCK_N=64"));

  candidate_result a = fx_result("gemm_mma", 64, 64, 2.0);
  candidate_result b = fx_result("gemm_mma", 128, 64, 1.5);
  candidate_result bad = fx_result("gemm_mma", 256, 256, NAN);
  bad.status = RT_ERR_COMPILE;
  snprintf(bad.detail, sizeof bad.detail, "too much shared memory");
  long long ida = 0, idb = 0, idbad = 0;
  CHECK_INT(db_run_store(r, &a, &ida, &err), RT_OK);
  CHECK_INT(db_run_store(r, &b, &idb, &err), RT_OK);
  CHECK_INT(db_run_store(r, &bad, &idbad, &err), RT_OK);
  CHECK(ida > 0 && idb > ida && idbad > idb);
  candidate_result lib = fx_result("cublaslt", 0, 0, 1.2);
  snprintf(lib.config, sizeof lib.config, "algo=23,tile=18,stages=8");
  long long idlib = 0;
  CHECK_INT(db_run_store(r, &lib, &idlib, &err), RT_OK); /* library: never declared */

  CHECK(db_run_has_result(r, "gemm_mma", "BLOCK_M=64,BLOCK_N=64"));
  CHECK(db_run_has_result(r, "gemm_mma", "BLOCK_M=256,BLOCK_N=256")); /* failures count as done */
  CHECK(!db_run_has_result(r, "gemm_mma", "BLOCK_M=32,BLOCK_N=32"));
  CHECK(db_run_has_result(r, "cublaslt", "algo=23,tile=18,stages=8"));
  CHECK(!db_run_has_result(r, "other", "BLOCK_M=64,BLOCK_N=64"));

  /* A failed result cannot win; a good one can, and a slower one does not replace it. */
  db_winner w;
  memset(&w, 0, sizeof w);
  static const unsigned char cubin[] = {0x7f, 'E', 'L', 'F', 1, 2, 3, 4};
  w.cubin = cubin;
  w.cubin_size = sizeof cubin;
  snprintf(w.entry, sizeof w.entry, "gemm_mma_kernel");
  snprintf(w.arch, sizeof w.arch, "sm_90");
  snprintf(w.grid[0], sizeof w.grid[0], "ceil_div(N,BLOCK_N)");
  w.grid_v[0] = 64;
  w.grid_v[1] = 32;
  w.grid_v[2] = 1;
  w.block_v[0] = 256;
  w.block_v[1] = w.block_v[2] = 1;
  w.smem_v = 49152;
  int replaced = -1;
  CHECK_INT(db_run_set_winner(r, idbad, &w, &replaced, &err), RT_ERR_INVALID);
  CHECK_INT(db_run_set_winner(r, idb, &w, &replaced, &err), RT_OK);
  CHECK_INT(replaced, 1);
  CHECK_INT(db_run_set_winner(r, ida, &w, &replaced, &err), RT_OK);
  CHECK_INT(replaced, 0);
  db_winner lw;
  memset(&lw, 0, sizeof lw);
  snprintf(lw.library_algo, sizeof lw.library_algo, "cublaslt:algo=23,tile=18,stages=8");
  CHECK_INT(db_run_set_winner(r, idlib, &lw, &replaced, &err), RT_OK);
  CHECK_INT(db_run_finish(r, "done", &err), RT_OK);
  db_run_free(r);

  /* A second run resumes: earlier results are visible, the new run adds to them. */
  db_run *r2 = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r2, &err), RT_OK);
  CHECK_INT(db_run_template(r2, "gemm_mma", "gemm", "src1", "man1", &err), RT_OK);
  CHECK(db_run_has_result(r2, "gemm_mma", "BLOCK_M=128,BLOCK_N=64"));
  candidate_result *prev = NULL;
  size_t np = 0;
  CHECK_INT(db_run_previous(r2, "gemm_mma", &prev, &np, &err), RT_OK);
  CHECK_INT(np, 3);
  if (np == 3) {
    CHECK_STR(prev[1].config, "BLOCK_M=128,BLOCK_N=64");
    CHECK_NEAR(prev[1].time_ms, 1.5, 1e-12);
    CHECK_INT(prev[1].timing, TIMING_MEASURED);
    CHECK_INT(prev[1].facts.registers, 128);
    CHECK_STR(prev[1].facts.limiter, "registers");
    CHECK_STR(prev[1].diag.lever, "BLOCK_N+");
    CHECK_INT(prev[2].status, RT_ERR_COMPILE);
    CHECK_STR(prev[2].detail, "too much shared memory");
    CHECK(isnan(prev[2].time_ms));
  }
  free(prev);
  /* A new template version does not see the old version's results. */
  CHECK_INT(db_run_template(r2, "gemm_mma", "gemm", "src2", "man1", &err), RT_OK);
  CHECK(!db_run_has_result(r2, "gemm_mma", "BLOCK_M=128,BLOCK_N=64"));
  CHECK_INT(db_run_finish(r2, "bogus", &err), RT_ERR_INVALID);
  db_run_free(r2); /* left "running", as a killed run would be */

  /* Another toolkit does not see them either. */
  db_run_spec other = spec;
  snprintf(other.prov.toolkit, sizeof other.prov.toolkit, "cuda 12.8, nvrtc 12.8, cublaslt 120800");
  db_run *r3 = NULL;
  CHECK_INT(db_run_begin(d, &other, &r3, &err), RT_OK);
  CHECK_INT(db_run_template(r3, "gemm_mma", "gemm", "src1", "man1", &err), RT_OK);
  CHECK(!db_run_has_result(r3, "gemm_mma", "BLOCK_M=128,BLOCK_N=64"));
  db_run_free(r3);

  db_counts c;
  CHECK_INT(db_count(d, &c, &err), RT_OK);
  CHECK_INT(c.results, 4);
  CHECK_INT(c.winners, 2);
  CHECK_INT(c.runs, 3);
  CHECK_INT(c.problems, 1);
  CHECK_INT(c.devices, 1);
  CHECK_INT(c.templates, 3); /* gemm_mma v1, v2, cublaslt */

  db_entry *e = NULL;
  size_t ne = 0;
  CHECK_INT(db_entries(d, 1, &e, &ne, &err), RT_OK);
  CHECK_INT(ne, 2);
  if (ne == 2) {
    CHECK_STR(e[0].template_name, "gemm_mma");
    CHECK_STR(e[0].config, "BLOCK_M=128,BLOCK_N=64");
    CHECK_NEAR(e[0].time_ms, 1.5, 1e-12);
    CHECK_STR(e[0].shape, "4096x4096x4096");
    CHECK_STR(e[0].dims, "M=4096,N=4096,K=4096");
    CHECK_STR(e[0].device.name, "NVIDIA H200");
    CHECK_INT(e[0].device.cc_major, 9);
    CHECK_INT(e[0].template_stale, 1); /* src2 was declared later */
    CHECK_INT(e[0].launch.cubin_size, sizeof cubin);
    CHECK(e[0].launch.cubin && memcmp(e[0].launch.cubin, cubin, sizeof cubin) == 0);
    CHECK_STR(e[0].launch.entry, "gemm_mma_kernel");
    CHECK_STR(e[0].launch.grid[0], "ceil_div(N,BLOCK_N)");
    CHECK_INT(e[0].launch.grid_v[1], 32);
    CHECK_INT(e[0].launch.smem_v, 49152);
    CHECK_STR(e[1].template_name, "cublaslt");
    CHECK_STR(e[1].launch.library_algo, "cublaslt:algo=23,tile=18,stages=8");
    CHECK(e[1].launch.cubin == NULL);
    CHECK_INT(e[1].template_stale, 0);
  }
  free(e);

  ceilings(d, &spec.prov.device);

  char report[4096];
  int problems = -1;
  CHECK_INT(db_check(d, report, sizeof report, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  CHECK_CONTAINS(report, "never finished");
  db_close(d);

  /* Read-only: reads work, writes are refused with a clear error. */
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  CHECK_INT(db_count(d, &c, &err), RT_OK);
  CHECK_INT(c.results, 4);
  db_run *rr = NULL;
  CHECK_INT(db_run_begin(d, &spec, &rr, &err), RT_ERR_USAGE);
  CHECK_CONTAINS(err.text, "read-only");
  db_close(d);
}

/* Counts results through each_result. */
static rt_status count_fn(void *ctx, const db_run_spec *spec, const char *tmpl, const char *src,
                          const char *man, const candidate_result *res, rt_error *err) {
  (void)tmpl, (void)src, (void)man, (void)err;
  long *n = ctx;
  if (strcmp(spec->prob.family, "gemm") == 0 && spec->prob.ndims == 3 && res->config[0]) (*n)++;
  return RT_OK;
}

/* Merges into a_path, the database store_and_resume wrote. */
static void merge_into(const char *a_path) {
  rt_error err = {0};
  char b_path[512];
  fx_tmpname(b_path, sizeof b_path, "merge-b");
  db *b = NULL;
  CHECK_INT(db_open(b_path, DB_CREATE, &b, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(b, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "src1", "man1", &err), RT_OK);
  candidate_result fast = fx_result("gemm_mma", 256, 128, 1.0);
  long long id = 0;
  CHECK_INT(db_run_store(r, &fast, &id, &err), RT_OK);
  db_winner w;
  memset(&w, 0, sizeof w);
  w.cubin = "\177ELF-fake";
  w.cubin_size = 9;
  CHECK_INT(db_run_set_winner(r, id, &w, NULL, &err), RT_OK);
  db_run_finish(r, "done", &err);
  db_run_free(r);
  db_run_spec spec2 = fx_spec(fx_gemm(1024, 1024, 1024, "f16"), "model:h200");
  CHECK_INT(db_run_begin(b, &spec2, &r, &err), RT_OK);
  candidate_result pred = fx_result("gemm_mma", 64, 64, 0.05);
  pred.timing = TIMING_PREDICTED;
  CHECK_INT(db_run_store(r, &pred, &id, &err), RT_OK);
  CHECK_INT(db_run_set_winner(r, id, NULL, NULL, &err), RT_OK);
  db_run_free(r);
  CHECK_INT(db_ceiling_set(b, &spec.prov.device, "matmul", "f16", 7.5e14, &err), RT_OK);
  db_close(b);

  db *a = NULL;
  CHECK_INT(db_open(a_path, DB_CREATE, &a, &err), RT_OK);
  db_counts before, after;
  db_count(a, &before, &err);
  long long added = -1;
  CHECK_INT(db_merge(a, b_path, &added, &err), RT_OK);
  CHECK_INT(added, 2);
  db_count(a, &after, &err);
  CHECK_INT(after.results, before.results + 2);
  CHECK_INT(after.runs, before.runs + 2);
  CHECK_INT(after.problems, before.problems + 1);
  CHECK_INT(after.devices, before.devices + 1); /* model:h200 */
  CHECK_INT(after.winners, before.winners + 1); /* the 4096 gemm_mma winner was replaced */
  CHECK_INT(after.ceilings, before.ceilings + 1);
  /* Merging again adds nothing. */
  CHECK_INT(db_merge(a, b_path, &added, &err), RT_OK);
  CHECK_INT(added, 0);
  db_count(a, &after, &err);
  CHECK_INT(after.results, before.results + 2);
  db_entry *e = NULL;
  size_t ne = 0;
  CHECK_INT(db_entries(a, 0, &e, &ne, &err), RT_OK);
  int saw_fast = 0, saw_pred = 0;
  for (size_t i = 0; i < ne; i++) {
    if (strcmp(e[i].config, "BLOCK_M=256,BLOCK_N=128") == 0 && e[i].time_ms == 1.0) saw_fast = 1;
    if (strcmp(e[i].device.name, "model:h200") == 0 && e[i].timing == TIMING_PREDICTED)
      saw_pred = 1;
  }
  CHECK(saw_fast);
  CHECK(saw_pred);
  free(e);
  long n = 0;
  CHECK_INT(db_each_result(a, count_fn, &n, &err), RT_OK);
  CHECK_INT(n, after.results); /* every result is a 3-dim gemm with a config */
  int problems = -1;
  CHECK_INT(db_check(a, NULL, 0, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  /* Merging a file that is not a database names it. */
  FILE *f = fopen(b_path, "wb");
  fputs(
      "not a database at all, just some text that is long enough to look like a header......"
      "..............................................................................",
      f);
  fclose(f);
  fx_remove(b_path);
  f = fopen(b_path, "wb");
  fputs("SQLite format 2 junk", f);
  fclose(f);
  CHECK(db_merge(a, b_path, &added, &err) != RT_OK);
  CHECK_STR(err.source, b_path);
  db_close(a);
  fx_remove(b_path);

  /* A rooftune file whose schema was tampered with: check names the missing table. */
  sqlite3 *h = NULL;
  sqlite3_open(a_path, &h);
  sqlite3_exec(h, "PRAGMA foreign_keys=OFF; DROP TABLE winners", NULL, NULL, NULL);
  sqlite3_close(h);
  CHECK_INT(db_open(a_path, DB_READONLY, &a, &err), RT_OK);
  char report[1024];
  problems = 0;
  CHECK_INT(db_check(a, report, sizeof report, &problems, &err), RT_OK);
  CHECK_INT(problems, 1);
  CHECK_CONTAINS(report, "table winners is missing");
  db_close(a);

  /* A results table without a column this rooftune stores (RESULT_COLUMNS): check names it. */
  fx_remove(a_path);
  CHECK_INT(db_open(a_path, DB_CREATE, &a, &err), RT_OK);
  db_close(a);
  sqlite3_open(a_path, &h);
  CHECK_INT(sqlite3_exec(h, "ALTER TABLE results DROP COLUMN tail", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  CHECK_INT(db_open(a_path, DB_READONLY, &a, &err), RT_OK);
  problems = 0;
  CHECK_INT(db_check(a, report, sizeof report, &problems, &err), RT_OK);
  CHECK(problems >= 1);
  CHECK_CONTAINS(report, "results has no column tail");
  db_close(a);

  /* The same for the winners' launch columns (WINNER_COLUMNS of db.c). */
  fx_remove(a_path);
  CHECK_INT(db_open(a_path, DB_CREATE, &a, &err), RT_OK);
  db_close(a);
  sqlite3_open(a_path, &h);
  CHECK_INT(sqlite3_exec(h, "ALTER TABLE winners DROP COLUMN library_algo", NULL, NULL, NULL),
            SQLITE_OK);
  sqlite3_close(h);
  CHECK_INT(db_open(a_path, DB_READONLY, &a, &err), RT_OK);
  problems = 0;
  CHECK_INT(db_check(a, report, sizeof report, &problems, &err), RT_OK);
  CHECK(problems >= 1);
  CHECK_CONTAINS(report, "winners has no column library_algo");
  db_close(a);
}

TEST_CASE(dims_text) {
  problem p = fx_gemm(7, 8, 9, "f32");
  char buf[64];
  db_dims_text(&p, buf, sizeof buf);
  CHECK_STR(buf, "M=7,N=8,K=9");
}

TEST_CASE(open_errors) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open("/nonexistent/dir/x.db", DB_READONLY, &d, &err), RT_ERR_IO);
  CHECK_CONTAINS(err.text, "no such database");
  CHECK_STR(err.source, "/nonexistent/dir/x.db");
  CHECK(d == NULL);
  CHECK_INT(db_open("/nonexistent/dir/x.db", DB_CREATE, &d, &err), RT_ERR_IO);
  CHECK_INT(db_open("/tmp", DB_READONLY, &d, &err), RT_ERR_IO);
  CHECK_CONTAINS(err.text, "directory");
  CHECK_INT(db_open("", DB_READONLY, &d, &err), RT_ERR_USAGE);
}

/* A version-1 file (cubins inside winners) migrates to the current schema on a writer's open,
 * keeping its cubin; a reader gets RT_ERR_DB_VERSION naming the upgrade command. */
TEST_CASE(migration) {
  char path[512];
  fx_tmpname(path, sizeof path, "v1");
  fx_old_db(path, 1,
            "INSERT INTO devices(name) VALUES('NVIDIA H200');"
            "INSERT INTO templates(name,family,source_hash,manifest_hash) "
            "VALUES('gemm_mma','gemm','s','m');"
            "INSERT INTO problems(family,shape,dtype,dims) "
            "VALUES('gemm','8x8x8','f32','M=8,N=8,K=8');"
            "INSERT INTO runs(problem_id,device_id,toolkit,rooftune_version,started_at,"
            "status) VALUES(1,1,'tk','0.1.0','2026-01-01T00:00:00Z','done');"
            "INSERT INTO results(run_id,problem_id,device_id,template_id,toolkit,config,"
            "status,timing,time_ms,created_at) VALUES(1,1,1,1,'tk','BLOCK_M=8','OK',"
            "'measured',0.5,'2026-01-01T00:00:00Z');"
            "INSERT INTO winners(problem_id,device_id,template_id,toolkit,result_id,cubin,"
            "entry,updated_at) VALUES(1,1,1,'tk',1,x'7f454c46aabb','k','2026');");
  rt_error err = {0};
  db *d = fx_old_db_migrate(path);
  db_entry *e = NULL;
  size_t n = 0;
  CHECK_INT(db_entries(d, 1, &e, &n, &err), RT_OK);
  CHECK_INT(n, 1);
  if (n == 1) {
    CHECK_INT(e[0].launch.cubin_size, 6);
    CHECK(e[0].launch.cubin && memcmp(e[0].launch.cubin,
                                      "\x7f"
                                      "ELF\xaa\xbb",
                                      6) == 0);
    CHECK_STR(e[0].config, "BLOCK_M=8");
  }
  free(e);
  void *cubin = NULL;
  size_t size = 0;
  CHECK_INT(db_winner_cubin(d, 1, &cubin, &size, &err), RT_OK);
  CHECK_INT(size, 6);
  free(cubin);
  int problems = -1;
  CHECK_INT(db_check(d, NULL, 0, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  db_close(d);
  fx_remove(path);
}

/* store, resume, then a merge into what was stored: one sequence, the merge counts what the
 * first part wrote */
TEST_CASE(store_resume_and_merge) {
  char path[512];
  fx_tmpname(path, sizeof path, "unit");
  store_and_resume(path);
  merge_into(path);
  fx_remove(path);
}

static void setup(void) { srand((unsigned)getpid()); }

TEST_LIST_FIXTURE(setup, NULL, TEST_ENTRY(store_resume_and_merge), TEST_ENTRY(dims_text),
                  TEST_ENTRY(open_errors), TEST_ENTRY(migration))
