/* fuzz_db_open.c — opening a database file (db/db.h): any file opens or fails with an error
 * naming it, for a reader and for a writer (which migrates old schemas); what opens is read the
 * way `db list`, `db show`, `db export` and `db check` read it. */
#include "db/db.h"
#include "fuzz_util.h"

static rt_status each(void *ctx, const db_run_spec *spec, const char *t, const char *src,
                      const char *man, const candidate_result *r, rt_error *err) {
  (void)spec, (void)t, (void)src, (void)man, (void)r, (void)err;
  (*(long *)ctx)++;
  return RT_OK;
}

static void use(db *d) {
  rt_error err = {0};
  db_counts c;
  db_count(d, &c, &err);
  db_entry *e = NULL;
  size_t n = 0;
  if (db_entries(d, 1, &e, &n, &err) == RT_OK) free(e);
  long rows = 0;
  db_each_result(d, each, &rows, &err);
  static char report[16384];
  int problems = 0;
  db_check(d, report, sizeof report, &problems, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write("t.db", data, size);
  char side[600];
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
  for (int mode = 0; mode < 2; mode++) {
    db *d = NULL;
    rt_error err = {0};
    if (db_open(path, mode ? DB_CREATE : DB_READONLY, &d, &err) != RT_OK) {
      if (!err.source[0]) abort();
      continue;
    }
    use(d);
    db_close(d);
  }
  return 0;
}
