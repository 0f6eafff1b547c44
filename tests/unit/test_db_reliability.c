/* test_db_reliability.c — the database's promises under stress, with real processes:
 *   - two processes writing into one (new) database at once lose nothing and never fail with
 *     "database is locked";
 *   - a writer killed with SIGKILL loses no committed result, and a resumed run skips what is
 *     done and ends with each configuration stored once;
 *   - a damaged file (random bytes, a truncated database), a foreign SQLite file, an empty file
 *     and a newer schema get a clear error naming the file, never a crash. */
/* stages: db */
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"
#include "unit/db_fixture.h"

#define WRITER_RESULTS 150

/* One writer process: stores WRITER_RESULTS results, one transaction each; exit 0 when all
 * stored, else prints the error and exits 1. */
static int writer(const char *path, int who) {
  rt_error err = {0};
  db *d = NULL;
  if (db_open(path, DB_CREATE, &d, &err)) {
    fprintf(stderr, "writer %d: open: %s\n", who, err.text);
    return 1;
  }
  db_run_spec spec = fx_spec(fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200");
  db_run *r = NULL;
  if (db_run_begin(d, &spec, &r, &err) ||
      db_run_template(r, "gemm_mma", "gemm", "src", "man", &err)) {
    fprintf(stderr, "writer %d: begin: %s\n", who, err.text);
    return 1;
  }
  for (int i = 0; i < WRITER_RESULTS; i++) {
    candidate_result c = fx_result("gemm_mma", who, i, 1.0 + i);
    if (db_run_store(r, &c, NULL, &err)) {
      fprintf(stderr, "writer %d: store %d: %s\n", who, i, err.text);
      return 1;
    }
    (void)db_run_has_result(r, "gemm_mma", c.config); /* readers interleave with writers */
  }
  rt_status s = db_run_finish(r, "done", &err);
  db_run_free(r);
  db_close(d);
  if (s) fprintf(stderr, "writer %d: finish: %s\n", who, err.text);
  return s ? 1 : 0;
}

TEST_CASE(concurrent_writers) {
  char path[512];
  fx_tmpname(path, sizeof path, "concurrent");
  pid_t pids[2];
  for (int w = 0; w < 2; w++) {
    pids[w] = fork();
    if (pids[w] == 0) _exit(writer(path, w + 1));
  }
  for (int w = 0; w < 2; w++) {
    int st = 0;
    waitpid(pids[w], &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  db_counts c;
  CHECK_INT(db_count(d, &c, &err), RT_OK);
  CHECK_INT(c.results, 2 * WRITER_RESULTS);
  CHECK_INT(c.runs, 2);
  CHECK_INT(c.templates, 1);
  CHECK_INT(c.problems, 1);
  db_close(d);
  fx_remove(path);
}

/* The resumable "tuning" loop: every config 0..total-1 not yet stored gets stored; after each
 * commit it writes the config's number to fd (if >= 0). */
static int tune_loop(const char *path, int total, int fd, int *skipped) {
  rt_error err = {0};
  db *d = NULL;
  if (db_open(path, DB_CREATE, &d, &err)) return 1;
  db_run_spec spec = fx_spec(fx_gemm(1024, 1024, 1024, "f16"), "NVIDIA H200");
  db_run *r = NULL;
  if (db_run_begin(d, &spec, &r, &err) ||
      db_run_template(r, "gemm_mma", "gemm", "src", "man", &err))
    return 1;
  if (skipped) *skipped = 0;
  for (int i = 0; i < total; i++) {
    candidate_result c = fx_result("gemm_mma", 64, i, 2.0 + i);
    if (db_run_has_result(r, "gemm_mma", c.config)) {
      if (skipped) (*skipped)++;
      continue;
    }
    if (db_run_store(r, &c, NULL, &err)) return 1;
    if (fd >= 0 && write(fd, &i, sizeof i) != (ssize_t)sizeof i) return 1;
  }
  db_run_finish(r, "done", &err);
  db_run_free(r);
  db_close(d);
  return 0;
}

TEST_CASE(sigkill_and_resume) {
  char path[512];
  fx_tmpname(path, sizeof path, "sigkill");
  enum { TOTAL = 100000 }; /* more than the child can finish before it is killed */
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    _exit(tune_loop(path, TOTAL, fds[1], NULL));
  }
  close(fds[1]);
  int acked = 0, last = -1, i;
  while (acked < 40 && read(fds[0], &i, sizeof i) == (ssize_t)sizeof i) {
    acked++;
    last = i;
  }
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  while (read(fds[0], &i, sizeof i) == (ssize_t)sizeof i) {
    acked++;
    last = i;
  }
  close(fds[0]);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  CHECK(acked >= 40);

  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  db_counts c;
  CHECK_INT(db_count(d, &c, &err), RT_OK);
  CHECK(c.results >= acked);     /* nothing acknowledged was lost */
  CHECK(c.results <= acked + 1); /* at most the one committed before its ack */
  CHECK(last == acked - 1);
  char report[2048];
  int problems = -1;
  CHECK_INT(db_check(d, report, sizeof report, &problems, &err), RT_OK);
  CHECK_INT(problems, 0);
  CHECK_CONTAINS(report, "never finished");
  long long stored = c.results;
  db_close(d);

  /* Resume with a smaller total so the test stays fast: everything stored is skipped. */
  int total = (int)stored + 30, skipped = -1;
  CHECK_INT(tune_loop(path, total, -1, &skipped), 0);
  CHECK_INT(skipped, stored);
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_OK);
  CHECK_INT(db_count(d, &c, &err), RT_OK);
  CHECK_INT(c.results, total); /* each configuration once */
  db_close(d);
  fx_remove(path);
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(data, 1, n, f);
  fclose(f);
}

/* Opens PATH both ways; expects `code` (or any failure when code < 0) with the path named. */
static void expect_open_error(const char *path, int code, const char *text) {
  for (int mode = 0; mode < 2; mode++) {
    rt_error err = {0};
    db *d = NULL;
    rt_status s = db_open(path, mode ? DB_CREATE : DB_READONLY, &d, &err);
    if (code >= 0)
      CHECK_INT(s, code);
    else
      CHECK(s != RT_OK);
    CHECK(d == NULL);
    CHECK_STR(err.source, path);
    if (text) CHECK_CONTAINS(err.text, text);
    db_close(d);
  }
}

/* Uses a damaged database as far as it goes: every call either works or returns an error. */
static int use_damaged(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  int errors = 0;
  if (db_open(path, DB_READONLY, &d, &err)) return 1;
  db_counts c;
  if (db_count(d, &c, &err)) errors++;
  db_entry *e = NULL;
  size_t n = 0;
  if (db_entries(d, 1, &e, &n, &err)) errors++;
  free(e);
  int problems = 0;
  if (db_check(d, NULL, 0, &problems, &err)) errors++;
  errors += problems;
  db_close(d);
  return errors;
}

TEST_CASE(damaged_files) {
  char path[512];
  fx_tmpname(path, sizeof path, "damaged");
  /* Random bytes. */
  unsigned char junk[8192];
  srand(42);
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rand();
  write_file(path, junk, sizeof junk);
  expect_open_error(path, RT_ERR_DB_FOREIGN, "not a rooftune database");
  /* A file that starts like SQLite but is junk after the magic. */
  memcpy(junk, "SQLite format 3", 16);
  write_file(path, junk, sizeof junk);
  expect_open_error(path, -1, NULL);
  fx_remove(path);

  /* A foreign SQLite file: opened both ways, refused both ways, left unchanged. */
  sqlite3 *h = NULL;
  sqlite3_open(path, &h);
  sqlite3_exec(h,
               "CREATE TABLE moz_places(id INTEGER PRIMARY KEY, url TEXT);"
               "INSERT INTO moz_places(url) VALUES('https://example.org')",
               NULL, NULL, NULL);
  sqlite3_close(h);
  expect_open_error(path, RT_ERR_DB_FOREIGN, "another program");
  h = NULL;
  sqlite3_open(path, &h);
  sqlite3_stmt *st = NULL;
  sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
  sqlite3_step(st);
  CHECK_INT(sqlite3_column_int(st, 0), 1);
  sqlite3_finalize(st);
  sqlite3_close(h);
  fx_remove(path);

  /* An empty file: not a database to a reader, a fresh one to a writer. */
  write_file(path, "", 0);
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_ERR_DB_FOREIGN);
  CHECK_CONTAINS(err.text, "empty");
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_close(d);

  /* A newer schema. */
  h = NULL;
  sqlite3_open(path, &h);
  sqlite3_exec(h, "PRAGMA user_version=99", NULL, NULL, NULL);
  sqlite3_close(h);
  expect_open_error(path, RT_ERR_DB_VERSION, "newer");
  fx_remove(path);

  /* A truncated database: a real one with enough rows for many pages, cut at several points. */
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  enum { N = 600 };
  candidate_result *many = calloc(N, sizeof *many);
  for (int i = 0; i < N; i++) {
    many[i] = fx_result("gemm_mma", i, i, 1.0 + i);
    snprintf(many[i].diag.sentence, sizeof many[i].diag.sentence,
             "candidate %d is limited by compute at 70 %% of the tensor-core ceiling", i);
  }
  long long ids[N];
  CHECK_INT(db_run_store_many(r, many, N, ids, &err), RT_OK);
  unsigned char big[20000];
  memset(big, 0xab, sizeof big);
  db_winner w;
  memset(&w, 0, sizeof w);
  w.cubin = big;
  w.cubin_size = sizeof big;
  CHECK_INT(db_run_set_winner(r, ids[0], &w, NULL, &err), RT_OK);
  db_run_free(r);
  free(many);
  db_close(d); /* the last connection checkpoints: everything is in the main file now */
  struct stat sb;
  CHECK(stat(path, &sb) == 0);
  long full = (long)sb.st_size;
  CHECK(full > 100000);
  FILE *f = fopen(path, "rb");
  unsigned char *orig = malloc((size_t)full);
  CHECK(fread(orig, 1, (size_t)full, f) == (size_t)full);
  fclose(f);
  const double cuts[] = {0.02, 0.25, 0.5, 0.75, 0.97};
  int failures_seen = 0;
  for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
    fx_remove(path);
    write_file(path, orig, (size_t)(full * cuts[k]) | 1); /* odd: never a page boundary */
    failures_seen += use_damaged(path) > 0;
  }
  CHECK_INT(failures_seen, (int)(sizeof cuts / sizeof cuts[0])); /* each cut is noticed */
  /* Damage inside instead of at the end: overwrite pages in the middle with junk. */
  fx_remove(path);
  for (long i = full / 3; i < full / 3 + 8192 && i < full; i++) orig[i] = (unsigned char)(i * 7);
  write_file(path, orig, (size_t)full);
  CHECK(use_damaged(path) > 0);
  free(orig);
  fx_remove(path);
}

static void setup(void) { srand((unsigned)getpid()); }

TEST_LIST_FIXTURE(setup, NULL, TEST_ENTRY(concurrent_writers), TEST_ENTRY(sigkill_and_resume),
                  TEST_ENTRY(damaged_files))
