/* test_db_cubin_hash.c — every stored cubin carries the SHA-256 of its bytes (schema 8): the
 * store computes it (whatever the caller's copy says), 64 bytes flipped in the file make
 * db_winner_cubin refuse the cubin naming the winner, db_check report it and db_merge refuse the
 * file; a schema-7 file's cubins are hashed from their bytes when it migrates. */
/* stages: db */
#include <sqlite3.h>

#include "test.h"
#include "core/sha256.h"
#include "unit/db_fixture.h"
#include "unit/db_old_schema.h"

static unsigned char bytes[4096];

/* A database at PATH with one gemm_mma winner holding `bytes` as its cubin. */
static void tuned(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "src1", "man1", &err), RT_OK);
  candidate_result a = fx_result("gemm_mma", 128, 128, 1.0);
  long long id = 0;
  CHECK_INT(db_run_store(r, &a, &id, &err), RT_OK);
  for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(i * 31 + 7);
  db_winner w = fx_winner("gemm_mma_kernel", bytes, sizeof bytes);
  snprintf(w.cubin_sha256, sizeof w.cubin_sha256, "%064d", 0); /* a caller's word counts not */
  CHECK_INT(db_run_set_winner(r, id, &w, NULL, &err), RT_OK);
  CHECK_INT(db_run_finish(r, "done", &err), RT_OK);
  db_run_free(r);
  db_close(d);
}

static void hex_of(const void *b, size_t n, char hex[65]) {
  unsigned char dg[32];
  sha256(b, n, dg);
  sha256_hex(dg, hex);
}

/* 64 bytes of winner 1's cubin flipped in the file, behind rooftune's back. */
static void flip(const char *path) {
  sqlite3 *h = NULL;
  CHECK_INT(sqlite3_open(path, &h), SQLITE_OK);
  sqlite3_blob *b = NULL;
  CHECK_INT(sqlite3_blob_open(h, "main", "winner_cubins", "cubin", 1, 1, &b), SQLITE_OK);
  unsigned char part[64];
  CHECK_INT(sqlite3_blob_read(b, part, 64, 2000), SQLITE_OK);
  for (int i = 0; i < 64; i++) part[i] ^= 0xFF;
  CHECK_INT(sqlite3_blob_write(b, part, 64, 2000), SQLITE_OK);
  sqlite3_blob_close(b);
  sqlite3_close(h);
}

TEST_CASE(stored_with_its_hash) {
  char path[512], want[65];
  fx_tmpname(path, sizeof path, "hash");
  tuned(path);
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  db_entry *e = NULL;
  size_t n = 0;
  CHECK_INT(db_entries(d, 0, &e, &n, &err), RT_OK);
  hex_of(bytes, sizeof bytes, want);
  CHECK_INT(n, 1);
  if (n == 1) CHECK_STR(e[0].launch.cubin_sha256, want);
  free(e);
  void *cubin = NULL;
  size_t size = 0;
  CHECK_INT(db_winner_cubin(d, 1, &cubin, &size, &err), RT_OK);
  CHECK(size == sizeof bytes && cubin && memcmp(cubin, bytes, size) == 0);
  free(cubin);
  int problems = -1;
  CHECK_INT(db_check(d, NULL, 0, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  db_close(d);
  fx_remove(path);
}

TEST_CASE(damaged_refused) {
  char path[512], report[8192];
  fx_tmpname(path, sizeof path, "flip");
  tuned(path);
  flip(path);
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  void *cubin = NULL;
  size_t size = 0;
  CHECK_INT(db_winner_cubin(d, 1, &cubin, &size, &err), RT_ERR_DB);
  CHECK(cubin == NULL && size == 0);
  CHECK_CONTAINS(err.text, "the cubin of winner 1 (gemm_mma BLOCK_M=128,BLOCK_N=128");
  CHECK_CONTAINS(err.text, "on NVIDIA H200) is damaged");
  int problems = 0;
  CHECK_INT(db_check(d, report, sizeof report, &problems, &err), RT_OK);
  CHECK_INT(problems, 1);
  CHECK_CONTAINS(report, "winner 1 (gemm_mma BLOCK_M=128,BLOCK_N=128");
  CHECK_CONTAINS(report, "its cubin is damaged");
  db_close(d);
  /* merging it spreads nothing */
  char into[512];
  fx_tmpname(into, sizeof into, "into");
  CHECK_INT(db_open(into, DB_CREATE, &d, &err), RT_OK);
  long long added = -1;
  CHECK_INT(db_merge(d, path, &added, &err), RT_ERR_DB);
  CHECK_CONTAINS(err.text, "damaged cubin: winner 1 (gemm_mma");
  db_entry *e = NULL;
  size_t n = 9;
  CHECK_INT(db_entries(d, 0, &e, &n, &err), RT_OK);
  CHECK_INT(n, 0);
  free(e);
  db_close(d);
  fx_remove(into);
  fx_remove(path);
}

/* A schema-7 file: its cubin is hashed from the bytes it holds when a writer migrates it. */
TEST_CASE(old_cubins_hashed_at_migration) {
  char path[512], want[65];
  fx_tmpname(path, sizeof path, "v7");
  fx_old_db(path, 7,
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
            "INSERT INTO winners(problem_id,device_id,template_id,toolkit,result_id,cubin_bytes,"
            "entry,updated_at) VALUES(1,1,1,'tk',1,6,'k','2026');"
            "INSERT INTO winner_cubins(winner_id,cubin) VALUES(1,x'7f454c46aabb');");
  db *d = fx_old_db_migrate(path);
  rt_error err = {0};
  db_entry *e = NULL;
  size_t n = 0;
  CHECK_INT(db_entries(d, 0, &e, &n, &err), RT_OK);
  hex_of(
      "\x7f"
      "ELF\xaa\xbb",
      6, want);
  CHECK_INT(n, 1);
  if (n == 1) CHECK_STR(e[0].launch.cubin_sha256, want);
  free(e);
  int problems = -1;
  CHECK_INT(db_check(d, NULL, 0, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  db_close(d);
  fx_remove(path);
}

TEST_LIST(TEST_ENTRY(stored_with_its_hash), TEST_ENTRY(damaged_refused),
          TEST_ENTRY(old_cubins_hashed_at_migration))
