/* cubin_cache.c — the SQLite cubin cache (see cubin_cache.h). */
#include "compile/cubin_cache.h"
#include "core/util.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/fileio.h"

/* Bump the suffix when the row format changes: old rows are then never read. */
#define CUBIN_TABLE "cubins_v1"

/* The bound when ROOFTUNE_CACHE_MAX_MB does not say (a whole gemm_mma space is ~120 MB). */
#define CUBIN_DEFAULT_MAX_MB 2048
/* A hit refreshes a row's use time at most this often (a rerun need not write every row). */
#define CUBIN_TOUCH_S 3600
/* Bytes a row costs beyond its cubin, log, PTX and message (key, columns, b-tree). */
#define CUBIN_ROW_OVERHEAD 128
/* A row's cubin, log, PTX and message in SQL: what the bound counts, with the overhead. */
#define CUBIN_ROW_BYTES_SQL \
  "coalesce(length(cubin), 0) + length(log) + coalesce(length(ptx), 0) + length(message)"

struct cubin_cache {
  sqlite3 *db;         /* NULL once unusable */
  sqlite3_stmt *get;   /* SELECT by key */
  sqlite3_stmt *put;   /* INSERT OR REPLACE */
  sqlite3_stmt *touch; /* a hit: UPDATE created */
  char path[1024];     /* .../cubins.db */
  char warning[2600];  /* the one warning, "" when none */
  long long max_bytes; /* the bound on the rows' bytes */
  long long bytes;     /* the rows' bytes, once known (bytes_known) */
  int bytes_known;
  long long now; /* tests: the clock; 0: time() */
};

int cubin_cache_dir(char *buf, size_t size) {
  const char *env = getenv("ROOFTUNE_CACHE_DIR");
  if (env && strcmp(env, "off") == 0) {
    if (size) buf[0] = 0;
    return 0;
  }
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    return 1;
  }
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) {
    snprintf(buf, size, "%s/rooftune", xdg);
    return 1;
  }
  const char *home = getenv("HOME");
  snprintf(buf, size, "%s/.cache/rooftune", home && *home ? home : ".");
  return 1;
}

static void cubin_close_db(cubin_cache *c) {
  sqlite3_finalize(c->get);
  sqlite3_finalize(c->put);
  sqlite3_finalize(c->touch);
  sqlite3_close(c->db);
  c->get = c->put = c->touch = NULL;
  c->db = NULL;
}

static long long cubin_now(const cubin_cache *c) { return c->now ? c->now : (long long)time(NULL); }

/* Opens c->path and prepares everything; returns the SQLite code of the first failure. */
static int cubin_try_open(cubin_cache *c) {
  int rc = sqlite3_open_v2(c->path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc != SQLITE_OK) return rc;
  sqlite3_busy_timeout(c->db, 10000);
  static const char schema[] =
      "PRAGMA journal_mode=WAL;"
      "PRAGMA synchronous=NORMAL;"
      "CREATE TABLE IF NOT EXISTS " CUBIN_TABLE
      " ("
      " key BLOB PRIMARY KEY,"    /* compile_key() */
      " status INTEGER NOT NULL," /* RT_OK or RT_ERR_COMPILE */
      " message TEXT NOT NULL,"
      " log TEXT NOT NULL,"
      " cubin BLOB,"
      " ptx TEXT,"
      " lowered_name TEXT NOT NULL,"
      " found INTEGER, registers INTEGER, smem_static INTEGER, spill_stores INTEGER,"
      " spill_loads INTEGER, stack_bytes INTEGER, cmem0 INTEGER, barriers INTEGER,"
      " compile_seconds REAL," /* what the compile cost when it ran */
      " created INTEGER)";     /* unix time of the store, or of the last hit (refreshed
                                       at most every CUBIN_TOUCH_S): the eviction order.  The
                                       name is older than the bound; kept, so that rooftune
                                       versions sharing a cache read and write one format */
  if ((rc = sqlite3_exec(c->db, schema, NULL, NULL, NULL)) != SQLITE_OK) return rc;
  rc = sqlite3_prepare_v2(c->db,
                          "SELECT status, message, log, cubin, ptx, lowered_name, found, "
                          "registers, smem_static, spill_stores, spill_loads, stack_bytes, cmem0, "
                          "barriers FROM " CUBIN_TABLE " WHERE key = ?1",
                          -1, &c->get, NULL);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_prepare_v2(c->db,
                          "INSERT OR REPLACE INTO " CUBIN_TABLE
                          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                          "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                          -1, &c->put, NULL);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_prepare_v2(c->db,
                          "UPDATE " CUBIN_TABLE
                          " SET created = ?2 WHERE key = ?1 AND "
                          "(created IS NULL OR created < ?3)",
                          -1, &c->touch, NULL);
  if (rc != SQLITE_OK) return rc;
  /* read one page of the table so a damaged file shows here, not mid-run */
  sqlite3_stmt *probe = NULL;
  rc = sqlite3_prepare_v2(c->db, "SELECT count(*) FROM " CUBIN_TABLE, -1, &probe, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(probe) == SQLITE_ROW ? SQLITE_OK : sqlite3_errcode(c->db);
  sqlite3_finalize(probe);
  return rc;
}

rt_status cubin_cache_open(const char *dir, cubin_cache **out, rt_error *err) {
  *out = NULL;
  if (rt_mkdir_p(dir, NULL))
    return rt_error_set(err, RT_ERR_IO, "cannot create the cache folder %s: %s", dir,
                        strerror(errno));
  cubin_cache *c = calloc(1, sizeof *c);
  if (!c) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  snprintf(c->path, sizeof c->path, "%s/cubins.db", dir);
  rt_error terr = {0};
  if (fileio_check_target(
          c->path, &terr)) { /* a FIFO would block, and "damaged" would move a device aside */
    rt_error_set(err, RT_ERR_IO, "cannot use the cubin cache %s: %s", c->path, terr.text);
    free(c);
    return RT_ERR_IO;
  }
  c->max_bytes = (long long)CUBIN_DEFAULT_MAX_MB << 20;
  const char *max = getenv("ROOFTUNE_CACHE_MAX_MB");
  if (max && *max) {
    char *end;
    errno = 0;
    long long mb = strtoll(max, &end, 10);
    if (errno || *end || mb <= 0 || mb > (1LL << 40))
      snprintf(c->warning, sizeof c->warning,
               "ROOFTUNE_CACHE_MAX_MB=%.64s is not a positive whole number of megabytes; the "
               "cubin cache keeps to %d MB",
               max, CUBIN_DEFAULT_MAX_MB);
    else
      c->max_bytes = mb << 20;
  }
  int rc = cubin_try_open(c);
  if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) {
    /* damaged: move it (and its WAL) aside and start over */
    cubin_close_db(c);
    char aside[1100], side[1100];
    snprintf(aside, sizeof aside, "%s.damaged", c->path);
    if (rename(c->path, aside) != 0) unlink(c->path);
    snprintf(side, sizeof side, "%s-wal", c->path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", c->path);
    unlink(side);
    snprintf(c->warning, sizeof c->warning,
             "cubin cache %s was damaged (%s); moved it to %s and started a new one", c->path,
             sqlite3_errstr(rc), aside);
    rc = cubin_try_open(c);
  }
  if (rc != SQLITE_OK) {
    rt_error_set(err, RT_ERR_DB, "cannot use the cubin cache %s: %s", c->path,
                 c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
    cubin_close_db(c);
    free(c);
    return RT_ERR_DB;
  }
  *out = c;
  return RT_OK;
}

rt_status cubin_cache_open_default(cubin_cache **out, rt_error *err) {
  char dir[1024];
  *out = NULL;
  if (!cubin_cache_dir(dir, sizeof dir)) return RT_OK;
  return cubin_cache_open(dir, out, err);
}

void cubin_cache_close(cubin_cache *c) {
  if (!c) return;
  cubin_close_db(c);
  free(c);
}

const char *cubin_cache_path(const cubin_cache *c) { return c ? c->path : ""; }
const char *cubin_cache_warning(const cubin_cache *c) { return c ? c->warning : ""; }
int cubin_cache_usable(const cubin_cache *c) { return c && c->db; }

/* A SQLite failure mid-run: keep the first warning, stop using the cache. */
static void cubin_disable(cubin_cache *c, const char *what) {
  if (!c->warning[0])
    snprintf(c->warning, sizeof c->warning, "cubin cache %s failed (%s: %s); continuing without it",
             c->path, what, c->db ? sqlite3_errmsg(c->db) : "closed");
  cubin_close_db(c);
}

static char *cubin_dup_text(sqlite3_stmt *st, int col) {
  const unsigned char *t = sqlite3_column_text(st, col);
  if (!t) return NULL;
  return strdup((const char *)t);
}

int cubin_cache_get(cubin_cache *c, const unsigned char key[32], compile_result *out) {
  memset(out, 0, sizeof *out);
  if (!cubin_cache_usable(c)) return 0;
  sqlite3_stmt *st = c->get;
  sqlite3_reset(st);
  sqlite3_bind_blob(st, 1, key, 32, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_DONE) {
    sqlite3_reset(st);
    return 0;
  }
  if (rc != SQLITE_ROW) {
    cubin_disable(c, "read");
    return 0;
  }
  out->status = sqlite3_column_int(st, 0);
  const unsigned char *msg = sqlite3_column_text(st, 1);
  snprintf(out->message, sizeof out->message, "%s", msg ? (const char *)msg : "");
  out->log = cubin_dup_text(st, 2);
  int n = sqlite3_column_bytes(st, 3);
  const void *blob = sqlite3_column_blob(st, 3);
  if (blob && n > 0 && (out->cubin = malloc((size_t)n))) {
    memcpy(out->cubin, blob, (size_t)n);
    out->cubin_size = (size_t)n;
  }
  out->ptx = cubin_dup_text(st, 4);
  const unsigned char *ln = sqlite3_column_text(st, 5);
  snprintf(out->lowered_name, sizeof out->lowered_name, "%s", ln ? (const char *)ln : "");
  out->report.found = sqlite3_column_int(st, 6);
  out->report.registers = sqlite3_column_int(st, 7);
  out->report.smem_static = sqlite3_column_int(st, 8);
  out->report.spill_stores = sqlite3_column_int(st, 9);
  out->report.spill_loads = sqlite3_column_int(st, 10);
  out->report.stack_bytes = sqlite3_column_int(st, 11);
  out->report.cmem0 = sqlite3_column_int(st, 12);
  out->report.barriers = sqlite3_column_int(st, 13);
  sqlite3_reset(st);
  out->cache_hit = 1;
  out->seconds = 0;
  /* the hit keeps this row from eviction; a failure here costs only that */
  long long now = cubin_now(c);
  sqlite3_reset(c->touch);
  sqlite3_bind_blob(c->touch, 1, key, 32, SQLITE_STATIC);
  sqlite3_bind_int64(c->touch, 2, now);
  sqlite3_bind_int64(c->touch, 3, now - CUBIN_TOUCH_S);
  sqlite3_step(c->touch);
  sqlite3_reset(c->touch);
  /* a row that cannot be right (compiled without a cubin) is a miss */
  if (!out->log || (out->status == RT_OK && !out->cubin) ||
      (out->status != RT_OK && out->status != RT_ERR_COMPILE)) {
    compile_result_free(out);
    return 0;
  }
  return 1;
}

static int cubin_evict(cubin_cache *c);

rt_status cubin_cache_put(cubin_cache *c, const unsigned char key[32], const compile_result *r,
                          rt_error *err) {
  if (!cubin_cache_usable(c)) return RT_OK;
  if (r->status != RT_OK && r->status != RT_ERR_COMPILE) return RT_OK;
  sqlite3_stmt *st = c->put;
  sqlite3_reset(st);
  sqlite3_bind_blob(st, 1, key, 32, SQLITE_STATIC);
  sqlite3_bind_int(st, 2, r->status);
  sqlite3_bind_text(st, 3, r->message, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, r->log ? r->log : "", -1, SQLITE_STATIC);
  if (r->cubin)
    sqlite3_bind_blob(st, 5, r->cubin, (int)r->cubin_size, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 5);
  if (r->ptx)
    sqlite3_bind_text(st, 6, r->ptx, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 6);
  sqlite3_bind_text(st, 7, r->lowered_name, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 8, r->report.found);
  sqlite3_bind_int(st, 9, r->report.registers);
  sqlite3_bind_int(st, 10, r->report.smem_static);
  sqlite3_bind_int(st, 11, r->report.spill_stores);
  sqlite3_bind_int(st, 12, r->report.spill_loads);
  sqlite3_bind_int(st, 13, r->report.stack_bytes);
  sqlite3_bind_int(st, 14, r->report.cmem0);
  sqlite3_bind_int(st, 15, r->report.barriers);
  sqlite3_bind_double(st, 16, r->seconds);
  sqlite3_bind_int64(st, 17, (sqlite3_int64)cubin_now(c));
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (rc != SQLITE_DONE) {
    rt_error_set(err, RT_ERR_DB, "cubin cache %s: %s", c->path, sqlite3_errmsg(c->db));
    cubin_disable(c, "write");
    return RT_ERR_DB;
  }
  if (c->bytes_known)
    c->bytes += (long long)r->cubin_size + (r->log ? (long long)strlen(r->log) : 0) +
                (r->ptx ? (long long)strlen(r->ptx) : 0) + (long long)strlen(r->message) +
                CUBIN_ROW_OVERHEAD;
  if (cubin_cache_bytes(c) > c->max_bytes && cubin_evict(c) != 0) {
    rt_error_set(err, RT_ERR_DB, "cubin cache %s: %s", c->path, sqlite3_errmsg(c->db));
    cubin_disable(c, "evict");
    return RT_ERR_DB;
  }
  return RT_OK;
}

long long cubin_cache_bytes(cubin_cache *c) {
  if (!cubin_cache_usable(c)) return -1;
  if (c->bytes_known) return c->bytes;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(c->db,
                         "SELECT coalesce(sum(" CUBIN_ROW_BYTES_SQL
                         "), 0) + ?1 * count(*) FROM " CUBIN_TABLE,
                         -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_int(st, 1, CUBIN_ROW_OVERHEAD);
    if (sqlite3_step(st) == SQLITE_ROW) {
      c->bytes = (long long)sqlite3_column_int64(st, 0);
      c->bytes_known = 1;
    }
  }
  sqlite3_finalize(st);
  return c->bytes_known ? c->bytes : -1;
}

long long cubin_cache_limit(const cubin_cache *c) { return c ? c->max_bytes : 0; }

void cubin_cache_set_limit(cubin_cache *c, long long max_bytes) {
  if (c && max_bytes > 0) c->max_bytes = max_bytes;
}

void cubin_cache_set_clock(cubin_cache *c, long long unix_seconds) {
  if (c) c->now = unix_seconds;
}

/* Deletes the least recently used rows (stored or hit longest ago) until the rows take at most
 * 90 % of the bound; the file keeps its size, and SQLite reuses the freed pages.  Returns 0, or
 * -1 on a SQLite failure. */
static int cubin_evict(cubin_cache *c) {
  long long target = c->max_bytes / 10 * 9, excess = c->bytes - target;
  sqlite3_stmt *scan = NULL, *del = NULL;
  unsigned char(*keys)[32] = NULL;
  size_t n = 0, cap = 0;
  int rc = -1;
  if (sqlite3_prepare_v2(
          c->db, "SELECT key, " CUBIN_ROW_BYTES_SQL " FROM " CUBIN_TABLE " ORDER BY created, rowid",
          -1, &scan, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(c->db, "DELETE FROM " CUBIN_TABLE " WHERE key = ?1", -1, &del, NULL) !=
          SQLITE_OK)
    goto done;
  /* the oldest rows that free enough, then one transaction deleting them */
  while (excess > 0 && sqlite3_step(scan) == SQLITE_ROW) {
    if (sqlite3_column_bytes(scan, 0) != 32) continue;
    if (n == cap) {
      size_t ncap = cap ? 2 * cap : 64;
      void *grown = realloc(keys, ncap * sizeof *keys);
      if (!grown) goto done;
      keys = grown;
      cap = ncap;
    }
    memcpy(keys[n++], sqlite3_column_blob(scan, 0), 32);
    excess -= sqlite3_column_int64(scan, 1) + CUBIN_ROW_OVERHEAD;
  }
  sqlite3_finalize(scan);
  scan = NULL;
  if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) goto done;
  for (size_t i = 0; i < n; i++) {
    sqlite3_bind_blob(del, 1, keys[i], 32, SQLITE_STATIC);
    int d = sqlite3_step(del);
    sqlite3_reset(del);
    if (d != SQLITE_DONE) {
      sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
      goto done;
    }
  }
  if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) goto done;
  c->bytes_known = 0; /* counted again: other processes may have stored too */
  rc = cubin_cache_bytes(c) < 0 ? -1 : 0;
done:
  sqlite3_finalize(scan);
  sqlite3_finalize(del);
  free(keys);
  return rc;
}

long cubin_cache_count(cubin_cache *c) {
  if (!cubin_cache_usable(c)) return -1;
  sqlite3_stmt *st = NULL;
  long n = -1;
  if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM " CUBIN_TABLE, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = (long)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}
