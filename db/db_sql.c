/* db_sql.c — what every file of the database shares (db_impl.h): the statement helper,
 * transactions retried while another process holds the write lock, SQLite failures as errors
 * that name the file, and reading a result row. */
#include "db/db_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

void db_now_iso(char *buf, size_t size) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int is_busy(int rc) {
  rc &= 0xff;
  return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

rt_status db_fail_at(sqlite3 *h, const char *path, int rc, const char *what, rt_error *err) {
  const char *msg = h ? sqlite3_errmsg(h) : sqlite3_errstr(rc);
  rt_status s;
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      s = rt_error_set(err, RT_ERR_DB_FOREIGN,
                       "not a rooftune database (not an SQLite file: %s); give a rooftune database "
                       "or a new path",
                       msg);
      break;
    case SQLITE_CORRUPT:
      s = rt_error_set(err, RT_ERR_DB,
                       "the database is damaged (%s, while %s); run 'rooftune db check' on it and "
                       "restore a backup or start a new file",
                       msg, what);
      break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      s = rt_error_set(err, RT_ERR_DB,
                       "the database stayed locked by another process for %d s (%s); try again",
                       DB_RETRY_MS / 1000, what);
      break;
    case SQLITE_CANTOPEN:
      s = rt_error_set(err, RT_ERR_IO,
                       "cannot open the database (%s); check the path and its "
                       "permissions",
                       msg);
      break;
    case SQLITE_READONLY:
      s = rt_error_set(err, RT_ERR_IO, "the database is read-only (%s, while %s)", msg, what);
      break;
    case SQLITE_FULL:
    case SQLITE_IOERR:
      s = rt_error_set(err, RT_ERR_IO,
                       "cannot write the database (%s, while %s); check free "
                       "disk space",
                       msg, what);
      break;
    default: s = rt_error_set(err, RT_ERR_DB, "%s: %s", what, msg);
  }
  rt_error_locate(err, path, NULL, 0, 0);
  return s;
}

rt_status db_fail(db *d, int rc, const char *what, rt_error *err) {
  return db_fail_at(d->h, d->path, rc, what, err);
}

/* ---- transactions ------------------------------------------------------------------- */

int db_exec_retry(sqlite3 *h, const char *sql) {
  double deadline = rt_now_s() + DB_RETRY_MS / 1000.0;
  for (;;) {
    int rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
    if (!is_busy(rc) || rt_now_s() > deadline) return rc;
    rt_sleep_ms(1 + rand() % 10);
  }
}

rt_status db_tx_begin(db *d, rt_error *err) {
  int rc = db_exec_retry(d->h, "BEGIN IMMEDIATE");
  return rc == SQLITE_OK ? RT_OK : db_fail(d, rc, "starting a write", err);
}

rt_status db_tx_end(db *d, rt_status s, rt_error *err) {
  if (s) {
    db_tx_rollback(d);
    return s;
  }
  int rc = db_exec_retry(d->h, "COMMIT");
  if (rc == SQLITE_OK) return RT_OK;
  s = db_fail(d, rc, "committing", err);
  sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
  return s;
}

void db_tx_rollback(db *d) {
  if (!sqlite3_get_autocommit(d->h)) sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- the statement helper ----------------------------------------------------------- */

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
  sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_TRANSIENT);
}

rt_status db_bindv(sqlite3_stmt *st, rt_error *err, const char *types, va_list ap) {
  for (int i = 1; types && *types; types++, i++) {
    switch (*types) {
      case 'i': sqlite3_bind_int(st, i, va_arg(ap, int)); break;
      case 'I': sqlite3_bind_int64(st, i, va_arg(ap, long long)); break;
      case 't': bind_text(st, i, va_arg(ap, const char *)); break;
      case 'r': {
        double v = va_arg(ap, double);
        if (isnan(v) || isinf(v))
          sqlite3_bind_null(st, i);
        else
          sqlite3_bind_double(st, i, v);
        break;
      }
      case 'd': sqlite3_bind_double(st, i, va_arg(ap, double)); break;
      case 'n': sqlite3_bind_null(st, i); break;
      case 'b': {
        const void *p = va_arg(ap, const void *);
        size_t n = va_arg(ap, size_t);
        if (p)
          sqlite3_bind_blob64(st, i, p, n, SQLITE_TRANSIENT);
        else
          sqlite3_bind_null(st, i);
        break;
      }
      default:
        return rt_error_set(err, RT_ERR_INTERNAL, "db: parameter type '%c' is not one of iItrdnb",
                            *types);
    }
  }
  return RT_OK;
}

static rt_status prepare_bind(db *d, sqlite3_stmt **out, const char *sql, const char *types,
                              va_list ap, rt_error *err) {
  *out = NULL;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(d->h, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) return db_fail(d, rc, "preparing a statement", err);
  rt_status s = db_bindv(st, err, types, ap);
  if (s) {
    sqlite3_finalize(st);
    return s;
  }
  *out = st;
  return RT_OK;
}

rt_status db_stmt(db *d, sqlite3_stmt **out, rt_error *err, const char *sql, const char *types,
                  ...) {
  va_list ap;
  va_start(ap, types);
  rt_status s = prepare_bind(d, out, sql, types, ap, err);
  va_end(ap);
  return s;
}

rt_status db_stmt_end(db *d, sqlite3_stmt *st, int rc, const char *what, rt_error *err) {
  int cached = 0;
  for (int i = 0; i < ST_COUNT; i++) cached |= st && d->st[i] == st;
  if (cached)
    sqlite3_reset(st);
  else
    sqlite3_finalize(st);
  return rc == SQLITE_DONE || rc == SQLITE_ROW ? RT_OK : db_fail(d, rc, what, err);
}

rt_status db_exec(db *d, rt_error *err, const char *what, const char *sql, const char *types, ...) {
  sqlite3_stmt *st;
  va_list ap;
  va_start(ap, types);
  rt_status s = prepare_bind(d, &st, sql, types, ap, err);
  va_end(ap);
  if (s) return s;
  int rc = sqlite3_step(st);
  return db_stmt_end(d, st, rc, what, err);
}

rt_status db_query_int(db *d, sqlite3_stmt *st, long long *out, int *found, rt_error *err) {
  int rc = sqlite3_step(st);
  if (found) *found = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
  return db_stmt_end(d, st, rc, "reading", err);
}

/* ---- reading a result row ----------------------------------------------------------- */

void db_col_text(sqlite3_stmt *st, int i, char *dst, size_t size) {
  const unsigned char *t = sqlite3_column_text(st, i);
  rt_copy(dst, size, (const char *)t);
}

double db_col_real(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* Reading one field of each kind (RESULT_COLUMNS). */
#define read_TEXT(st, i, p)  db_col_text(st, i, *(p), sizeof *(p))
#define read_REAL(st, i, p)  (*(p) = db_col_real(st, i))
#define read_INT(st, i, p)   (*(p) = sqlite3_column_int(st, i))
#define read_INT64(st, i, p) (*(p) = sqlite3_column_int64(st, i))
#define read_BOOL(st, i, p)  (*(p) = sqlite3_column_int(st, i) != 0)
static void read_STATUS(sqlite3_stmt *st, int i, rt_status *v) {
  char name[64];
  db_col_text(st, i, name, sizeof name);
  int code = rt_status_from_name(name);
  *v = code < 0 ? RT_ERR_INTERNAL : (rt_status)code;
}
static void read_TIMING(sqlite3_stmt *st, int i, timing_kind *v) {
  char name[64];
  db_col_text(st, i, name, sizeof name);
  int t = timing_kind_parse(name);
  *v = t < 0 ? TIMING_REPLAYED : (timing_kind)t;
}

void db_read_result(sqlite3_stmt *st, int i, candidate_result *c) {
#define COL_READ(col, json, kind, member, group) read_##kind(st, i++, &c->member);
  RESULT_COLUMNS(COL_READ, COL_READ)
#undef COL_READ
}
