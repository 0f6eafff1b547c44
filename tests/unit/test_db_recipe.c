/* test_db_recipe.c — winners' serving recipes (schema 4): stored with a winner, read back,
 * replaced with it, dropped when a winner without one takes its place, carried by merge; and
 * the migration of a version-3 file, whose winners keep everything and have no recipe, so
 * librooftune serves them for their own shapes only and says why for the others. */
/* stages: db runtime */
#include <sqlite3.h>

#include "db/schema.h"
#include "runtime/include/rooftune.h"
#include "test.h"
#include "unit/db_fixture.h"
#include "unit/db_old_schema.h"

/* Stores one winner for shape MxNxK with recipe env (NULL: none), time ms. */
static void put(db *d, long long m, long long n, long long k, double ms, const char *env,
                const char *cons) {
  rt_error err = {0};
  db_run_spec spec = fx_spec(fx_gemm(m, n, k, "f16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  if (!r) return;
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "s", "m", &err), RT_OK);
  candidate_result c = fx_result("gemm_mma", 128, 128, ms);
  long long id = 0;
  CHECK_INT(db_run_store(r, &c, &id, &err), RT_OK);
  db_winner w = fx_winner("gemm_mma", "\177ELF", 4);
  w.env = env;
  w.constraints = cons;
  CHECK_INT(db_run_set_winner(r, id, &w, NULL, &err), RT_OK);
  db_run_finish(r, "done", &err);
  db_run_free(r);
}

static long long only_winner(db *d) {
  db_entry *e = NULL;
  size_t n = 0;
  rt_error err = {0};
  CHECK_INT(db_entries(d, 0, &e, &n, &err), RT_OK);
  long long id = n ? e[n - 1].winner_id : 0;
  if (e) CHECK(e[0].launch.env == NULL); /* entries do not carry recipes */
  free(e);
  return id;
}

TEST_CASE(store_read_merge) {
  char a[512], b[512];
  fx_tmpname(a, sizeof a, "recipe-a");
  fx_tmpname(b, sizeof b, "recipe-b");
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(a, DB_CREATE, &d, &err), RT_OK);
  put(d, 64, 64, 64, 2.0, "M=64,N=64,K=64,BATCH=1", "M % 64 == 0\nN >= 64\n");
  long long id = only_winner(d);
  db_recipe rc;
  CHECK_INT(db_winner_recipe(d, id, &rc, &err), RT_OK);
  CHECK_STR(rc.env, "M=64,N=64,K=64,BATCH=1");
  CHECK_STR(rc.derived, "");
  CHECK_STR(rc.constraints, "M % 64 == 0\nN >= 64\n");
  db_recipe_free(&rc);
  /* a faster winner replaces the recipe with its own; a slower one changes nothing */
  put(d, 64, 64, 64, 1.0, "M=64,N=64,K=64,BATCH=1,X=1", "");
  put(d, 64, 64, 64, 5.0, "slower", "");
  CHECK_INT(db_winner_recipe(d, id, &rc, &err), RT_OK);
  CHECK_STR(rc.env, "M=64,N=64,K=64,BATCH=1,X=1");
  CHECK_STR(rc.constraints, "");
  db_recipe_free(&rc);
  /* a faster winner without one (an import) leaves none */
  put(d, 64, 64, 64, 0.5, NULL, NULL);
  CHECK_INT(db_winner_recipe(d, id, &rc, &err), RT_ERR_NOT_FOUND);
  CHECK_CONTAINS(err.text, "no serving recipe");
  CHECK_INT(db_winner_recipe(d, 12345, &rc, &err), RT_ERR_NOT_FOUND);
  db_close(d);

  /* merge: the winner that comes over brings its recipe */
  CHECK_INT(db_open(b, DB_CREATE, &d, &err), RT_OK);
  put(d, 64, 64, 64, 0.1, "FROM=b", "K > 0\n");
  put(d, 128, 128, 128, 0.2, "FROM=b2", "");
  db_close(d);
  CHECK_INT(db_open(a, DB_CREATE, &d, &err), RT_OK);
  long long added = 0;
  CHECK_INT(db_merge(d, b, &added, &err), RT_OK);
  db_entry *e = NULL;
  size_t n = 0;
  CHECK_INT(db_entries(d, 0, &e, &n, &err), RT_OK);
  CHECK_INT(n, 2);
  for (size_t i = 0; i < n; i++) {
    CHECK_INT(db_winner_recipe(d, e[i].winner_id, &rc, &err), RT_OK);
    CHECK_STR(rc.env, strcmp(e[i].shape, "64x64x64") ? "FROM=b2" : "FROM=b");
    db_recipe_free(&rc);
  }
  free(e);
  int problems = -1;
  char report[2048];
  CHECK_INT(db_check(d, report, sizeof report, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  db_close(d);
  fx_remove(a);
  fx_remove(b);
}

/* A version-3 file (what rooftune 0.1 wrote) with one winner and its cubin. */
static void write_v3(const char *path) {
  char tk[96], ins[4096];
  rt_error err = {0};
  CHECK_INT(db_toolkit_string(tk, sizeof tk, &err), RT_OK);
  snprintf(
      ins, sizeof ins,
      "INSERT INTO devices(name,sm_count,cc_major,cc_minor) VALUES('NVIDIA H200',132,9,0);"
      "INSERT INTO templates(name,family,source_hash,manifest_hash) "
      "VALUES('gemm_mma','gemm','s','m');"
      "INSERT INTO problems(family,shape,dtype,layout,dims) VALUES('gemm','256x256x256','f16','nn',"
      "'M=256,N=256,K=256,BATCH=1');"
      "INSERT INTO runs(problem_id,device_id,toolkit,rooftune_version,started_at,status) "
      "VALUES(1,1,'%s','0.1.0','2026-01-01T00:00:00Z','done');"
      "INSERT INTO "
      "results(run_id,problem_id,device_id,template_id,toolkit,config,status,timing,time_ms,"
      "created_at) VALUES(1,1,1,1,'%s','BLOCK_M=128,BLOCK_N=128','OK','measured',0.01,'2026');"
      "INSERT INTO "
      "winners(problem_id,device_id,template_id,toolkit,result_id,entry,grid_x,grid_y,grid_z,"
      "block_x,block_y,block_z,smem,grid_vx,grid_vy,grid_vz,block_vx,block_vy,block_vz,smem_v,vars,"
      "updated_at,cubin_bytes) "
      "VALUES(1,1,1,'%s',1,'gemm_mma','ceil_div(M,BLOCK_M)*ceil_div(N,BLOCK_N)',"
      "'1','SPLIT_K*BATCH','THREADS','1','1','SMEM',4,1,1,256,1,1,65536,"
      "'BLOCK_M=128,BLOCK_N=128,SPLIT_K=1,THREADS=256,SMEM=65536','2026',4);"
      "INSERT INTO winner_cubins(winner_id,cubin) VALUES(1,x'7f454c46');",
      tk, tk, tk);
  fx_old_db(path, 3, ins);
}

TEST_CASE(migration_v3) {
  char path[512];
  fx_tmpname(path, sizeof path, "v3");
  write_v3(path);
  rt_error err = {0};
  db *d = NULL;
  /* a reader (the runtime) is told to upgrade it */
  rooftune_db *rt = NULL;
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_ERR_DB_VERSION);
  CHECK_CONTAINS(rooftune_last_error(), "rooftune db upgrade");
  /* a writer migrates it: everything stays, the new table is there and empty */
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  CHECK_INT(db_schema_version(d), DB_SCHEMA_VERSION);
  db_entry *e = NULL;
  size_t n = 0;
  CHECK_INT(db_entries(d, 1, &e, &n, &err), RT_OK);
  CHECK_INT(n, 1);
  if (n == 1) {
    CHECK_STR(e[0].template_name, "gemm_mma");
    CHECK_INT(e[0].launch.cubin_size, 4);
    CHECK_INT(e[0].launch.grid_v[0], 4);
    CHECK_STR(e[0].launch.grid[2], "SPLIT_K*BATCH");
    db_recipe rc;
    CHECK_INT(db_winner_recipe(d, e[0].winner_id, &rc, &err), RT_ERR_NOT_FOUND);
  }
  free(e);
  db_counts c;
  CHECK_INT(db_count(d, &c, &err), RT_OK);
  CHECK_INT(c.results, 1);
  CHECK_INT(c.winners, 1);
  db_close(d);
  /* the runtime serves the old winner for its own shape, and says why not for another */
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  rooftune_query q = {.family = "gemm", .shape = "256x256x256", .dtype = "f16"};
  rooftune_match m;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_EXACT);
  CHECK_INT(m.geometry_ok, 1);
  CHECK_INT(m.grid[0], 4);
  q.shape = "256x256x200";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_CONTAINS(m.passed_over, "stored without constraints (before schema 4, or an import)");
  rooftune_close(rt);
  /* migrating twice is a no-op */
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  CHECK_INT(db_schema_version(d), DB_SCHEMA_VERSION);
  db_close(d);
  fx_remove(path);
}

static void setup(void) { srand((unsigned)getpid()); }

TEST_LIST_FIXTURE(setup, NULL, TEST_ENTRY(store_read_merge), TEST_ENTRY(migration_v3))
