/* test_db_open_hostile.c — database files and paths that once crashed or hung rooftune:
 *   - a negative PRAGMA user_version (the migration table was indexed out of bounds);
 *   - a FIFO, a character device or a socket as the database path (a reader blocked forever);
 *   - `db merge X X` (the merge waited 120 s for a lock it held itself);
 *   - a merge from a damaged file (the error named the healthy file);
 *   - an older schema in a file that cannot be written (advice to upgrade that then fails).
 * Every case must end at once with one error naming the file.  An alarm turns a hang into a
 * failure instead of a stalled suite. */
/* stages: db */
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "test.h"
#include "unit/db_fixture.h"

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_db_open_hostile: hung (alarm after 20 s)\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(2);
  _exit(1);
}

/* A rooftune database with one stored result. */
static void make_db(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(512, 512, 512, "f16"), "model:h200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  candidate_result c = fx_result("gemm_mma", 64, 64, 1.5);
  c.timing = TIMING_PREDICTED;
  CHECK_INT(db_run_store(r, &c, NULL, &err), RT_OK);
  CHECK_INT(db_run_finish(r, "done", &err), RT_OK);
  db_run_free(r);
  db_close(d);
}

static void set_user_version(const char *path, int v) {
  sqlite3 *h = NULL;
  CHECK(sqlite3_open(path, &h) == SQLITE_OK);
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA user_version=%d", v);
  CHECK(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK);
  sqlite3_close(h);
}

TEST_CASE(negative_schema_version) {
  char path[512];
  fx_tmpname(path, sizeof path, "negver");
  make_db(path);
  const int versions[] = {-1, -1000, -2147483647};
  for (size_t k = 0; k < sizeof versions / sizeof versions[0]; k++) {
    set_user_version(path, versions[k]);
    for (int mode = 0; mode < 2; mode++) { /* a reader, and a writer that would migrate */
      rt_error err = {0};
      db *d = NULL;
      rt_status s = db_open(path, mode ? DB_CREATE : DB_READONLY, &d, &err);
      CHECK_INT(s, RT_ERR_DB_VERSION);
      CHECK(d == NULL);
      CHECK_STR(err.source, path);
      CHECK_CONTAINS(err.text, "not one rooftune writes");
      db_close(d);
    }
  }
  fx_remove(path);
}

static void expect_not_regular(const char *path, const char *kind) {
  for (int mode = 0; mode < 2; mode++) {
    rt_error err = {0};
    db *d = NULL;
    CHECK_INT(db_open(path, mode ? DB_CREATE : DB_READONLY, &d, &err), RT_ERR_IO);
    CHECK(d == NULL);
    CHECK_STR(err.source, path);
    CHECK_CONTAINS(err.text, kind);
    db_close(d);
  }
}

TEST_CASE(special_files_refused) {
  char path[512];
  fx_tmpname(path, sizeof path, "fifo");
  CHECK(mkfifo(path, 0600) == 0);
  expect_not_regular(path, "a FIFO");
  unlink(path);
  expect_not_regular("/dev/null", "a device");
  /* a socket */
  fx_tmpname(path, sizeof path, "sock");
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  size_t len = strlen(path);
  if (len < sizeof sa.sun_path) memcpy(sa.sun_path, path, len + 1);
  if (fd >= 0 && len < sizeof sa.sun_path && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
    expect_not_regular(path, "a socket");
  if (fd >= 0) close(fd);
  unlink(path);
}

TEST_CASE(merge_into_itself) {
  char path[512], link[600];
  fx_tmpname(path, sizeof path, "self");
  make_db(path);
  snprintf(link, sizeof link, "%s.link", path);
  unlink(link);
  CHECK(symlink(path, link) == 0);
  const char *names[] = {path, link}; /* the same file under its own name and another */
  for (int k = 0; k < 2; k++) {
    rt_error err = {0};
    db *d = NULL;
    CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
    long long added = -1;
    CHECK_INT(db_merge(d, names[k], &added, &err), RT_ERR_USAGE);
    CHECK_CONTAINS(err.text, "into itself");
    CHECK_INT(added, 0);
    db_close(d);
  }
  unlink(link);
  fx_remove(path);
}

TEST_CASE(merge_names_damaged_source) {
  char a[512], b[512];
  fx_tmpname(a, sizeof a, "healthy");
  fx_tmpname(b, sizeof b, "damaged");
  make_db(a);
  /* b: a real database with many pages, then junk over its middle pages */
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(b, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  enum { N = 400 };
  candidate_result *many = calloc(N, sizeof *many);
  for (int i = 0; i < N; i++) {
    many[i] = fx_result("gemm_mma", i, i, 1.0 + i);
    snprintf(many[i].diag.sentence, sizeof many[i].diag.sentence,
             "candidate %d, a long sentence "
             "to fill the pages of the results table with text",
             i);
  }
  CHECK_INT(db_run_store_many(r, many, N, NULL, &err), RT_OK);
  free(many);
  db_run_free(r);
  db_close(d);
  struct stat sb;
  CHECK(stat(b, &sb) == 0);
  FILE *f = fopen(b, "r+b");
  CHECK(f != NULL);
  if (f) {
    fseek(f, (long)(sb.st_size / 2) & ~4095L, SEEK_SET);
    unsigned char junk[8192];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(i * 131 + 7);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
  }
  CHECK_INT(db_open(a, DB_CREATE, &d, &err), RT_OK);
  rt_error_clear(&err);
  rt_status s = db_merge(d, b, NULL, &err);
  CHECK(s != RT_OK);
  CHECK_STR(err.source, b); /* the damaged file, not the one merged into */
  db_counts c;
  rt_error e2 = {0};
  CHECK_INT(db_count(d, &c, &e2), RT_OK);
  CHECK_INT(c.results, 1); /* nothing half merged */
  db_close(d);
  fx_remove(a);
  fx_remove(b);
}

TEST_CASE(old_schema_unwritable_advice) {
  char path[512];
  fx_tmpname(path, sizeof path, "oldro");
  make_db(path);
  set_user_version(path, 2);
  /* a file this user can write: the advice is to upgrade it */
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_ERR_DB_VERSION);
  CHECK_CONTAINS(err.text, "rooftune db upgrade");
  if (geteuid() !=
      0) { /* root writes read-only files anyway; the CLI test covers a read-only folder */
    CHECK(chmod(path, 0444) == 0);
    rt_error_clear(&err);
    CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_ERR_DB_VERSION);
    CHECK_CONTAINS(err.text, "copy it");
    chmod(path, 0644);
  }
  fx_remove(path);
}

static void setup(void) {
  signal(SIGALRM, on_alarm);
  alarm(20);
  srand((unsigned)getpid());
}

TEST_LIST_FIXTURE(setup, NULL, TEST_ENTRY(negative_schema_version),
                  TEST_ENTRY(special_files_refused), TEST_ENTRY(merge_into_itself),
                  TEST_ENTRY(merge_names_damaged_source), TEST_ENTRY(old_schema_unwritable_advice))
