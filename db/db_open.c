/* db_open.c — opening the tuning database (db.h): identifying the file (a rooftune database,
 * another program's, a newer or older schema, a folder nobody can write), WAL mode, the schema
 * and its migrations (db/schema.h), and closing. */
#include "db/db_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "db/schema.h"
#include "core/sha256.h"
#include "core/version.h"

/* 1 when a process can create files in the folder that holds PATH (SQLite's journal, WAL and
 * shared-memory files live beside the database). */
static int folder_writable(const char *path) {
  char dir[1024];
  rt_copy(dir, sizeof dir, path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    rt_copy(dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = '\0';
  else
    *slash = '\0';
  return access(dir, W_OK) == 0;
}

/* 1 when the folder that holds PATH exists (a missing one is not a read-only one). */
static int folder_exists(const char *path) {
  char dir[1024];
  rt_copy(dir, sizeof dir, path);
  char *slash = strrchr(dir, '/');
  if (!slash) return 1;
  if (slash == dir)
    dir[1] = '\0';
  else
    *slash = '\0';
  struct stat sb;
  return stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* What a path that is not a regular file is, for the message. */
static const char *file_kind(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

/* PATH as a read-only, immutable SQLite URI ("file:PATH?immutable=1", '%', '?' and '#'
 * escaped): what opens a WAL database in a folder nobody can write, where SQLite cannot create
 * the shared-memory file it otherwise needs even to read. */
static void immutable_uri(const char *path, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "file:");
  for (const char *p = path; *p && n + 4 < size; p++) {
    if (*p == '%' || *p == '?' || *p == '#')
      n += (size_t)snprintf(buf + n, size - n, "%%%02X", (unsigned char)*p);
    else
      buf[n++] = *p;
  }
  snprintf(buf + n, size > n ? size - n : 0, "?immutable=1");
}

/* 1 when PATH has a write-ahead log with content beside it (unapplied commits an immutable
 * open would not see). */
static int has_wal(const char *path) {
  char wal[1100];
  snprintf(wal, sizeof wal, "%s-wal", path);
  struct stat sb;
  return stat(wal, &sb) == 0 && sb.st_size > 0;
}

static rt_status pragma_int(db *d, const char *sql, long long *out, rt_error *err) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(d->h, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) return db_fail(d, rc, "reading the file header", err);
  rc = sqlite3_step(st);
  *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_fail(d, rc, "reading the file header", err);
  return RT_OK;
}

/* Inside the write transaction: the schema from the file's version up to DB_SCHEMA_VERSION. */
static rt_status migrate_steps(db *d, rt_error *err) {
  long long v = 0, app = 0, objects = 0;
  rt_status s;
  if ((s = pragma_int(d, "PRAGMA user_version", &v, err)) ||
      (s = pragma_int(d, "PRAGMA application_id", &app, err)) ||
      (s = pragma_int(d, "SELECT count(*) FROM sqlite_master", &objects, err)))
    return s;
  if (v < 0 || v > DB_SCHEMA_VERSION) { /* changed under us */
    rt_error_set(err, RT_ERR_DB_VERSION,
                 "schema version %lld is not one rooftune writes (0 to %d); "
                 "the file's header is damaged: restore a backup or start a new file",
                 v, DB_SCHEMA_VERSION);
    rt_error_locate(err, d->path, NULL, 0, 0);
    return RT_ERR_DB_VERSION;
  }
  if (app != DB_APPLICATION_ID && objects > 0) { /* changed under us: someone else's file */
    rt_error_set(err, RT_ERR_DB_FOREIGN,
                 "an SQLite database of another program; give rooftune a "
                 "new path");
    rt_error_locate(err, d->path, NULL, 0, 0);
    return RT_ERR_DB_FOREIGN;
  }
  for (long long ver = v + 1; ver <= DB_SCHEMA_VERSION; ver++) {
    int rc = sqlite3_exec(d->h, schema_migrations[ver], NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
      char what[160];
      if (v == 0)
        snprintf(what, sizeof what, "creating the schema");
      else
        snprintf(what, sizeof what,
                 "migrating schema version %lld to %lld (the tables are not "
                 "the ones that version has: restore a backup or start a new file)",
                 v, ver);
      return db_fail(d, rc, what, err);
    }
  }
  if (v < DB_SCHEMA_VERSION) {
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d", DB_APPLICATION_ID,
             DB_SCHEMA_VERSION);
    int rc = sqlite3_exec(d->h, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) return db_fail(d, rc, "setting the schema version", err);
  }
  return RT_OK;
}

/* Brings the schema up to DB_SCHEMA_VERSION inside one write transaction. */
static rt_status migrate(db *d, rt_error *err) {
  rt_status s = db_tx_begin(d, err);
  if (s) return s;
  if ((s = db_tx_end(d, migrate_steps(d, err), err))) return s;
  d->version = DB_SCHEMA_VERSION;
  return RT_OK;
}

/* The file's application id, schema version and schema size, in one read transaction: read
 * one by one, a process creating the file at the same moment could be seen half done (its
 * schema without its application id).  *code: the SQLite code of a failure. */
static rt_status read_header(db *d, long long *app, long long *ver, long long *objects, int *code,
                             rt_error *err) {
  *code = SQLITE_OK;
  int rc = db_exec_retry(d->h, "BEGIN");
  rt_status s = RT_OK;
  if (rc != SQLITE_OK) {
    *code = rc;
    return db_fail(d, rc, "reading the file header", err);
  }
  if ((s = pragma_int(d, "PRAGMA application_id", app, err)) ||
      (s = pragma_int(d, "PRAGMA user_version", ver, err)) ||
      (s = pragma_int(d, "SELECT count(*) FROM sqlite_master", objects, err)))
    *code = sqlite3_errcode(d->h);
  sqlite3_exec(d->h, s ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
  return s;
}

/* rooftune_sha256(BLOB): the SHA-256 of its bytes as lowercase hex ('' for NULL), what
 * winners.cubin_sha256 holds: the migration to schema 8 fills it, `db check` and merge compare. */
static void sql_sha256(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
    return;
  }
  const void *b = sqlite3_value_blob(argv[0]);
  int n = sqlite3_value_bytes(argv[0]);
  unsigned char dg[32];
  char hex[65];
  sha256(b ? b : "", b ? (size_t)n : 0, dg);
  sha256_hex(dg, hex);
  sqlite3_result_text(ctx, hex, 64, SQLITE_TRANSIENT);
}

int db_register_functions(sqlite3 *h) {
  return sqlite3_create_function(h, "rooftune_sha256", 1,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL,
                                 sql_sha256, NULL, NULL);
}

static int db_open_handle(db *d, const char *name, int oflags) {
  if (d->h) sqlite3_close_v2(d->h);
  d->h = NULL;
  int rc = sqlite3_open_v2(name, &d->h, oflags | SQLITE_OPEN_FULLMUTEX, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_extended_result_codes(d->h, 0);
    sqlite3_busy_timeout(d->h, DB_BUSY_MS);
    rc = db_register_functions(d->h);
  }
  return rc;
}

rt_status db_open(const char *path, int flags, db **out, rt_error *err) {
  *out = NULL;
  if (!path || !*path) return rt_error_set(err, RT_ERR_USAGE, "no database path given");
  struct stat sb;
  int exists = stat(path, &sb) == 0;
  if (!exists && !(flags & DB_CREATE)) {
    rt_error_set(err, RT_ERR_IO, "no such database (tune into it first: rooftune tune ... --db %s)",
                 path);
    rt_error_locate(err, path, NULL, 0, 0);
    return RT_ERR_IO;
  }
  if (exists && S_ISDIR(sb.st_mode)) {
    rt_error_set(err, RT_ERR_IO, "is a directory, not a database file");
    rt_error_locate(err, path, NULL, 0, 0);
    return RT_ERR_IO;
  }
  if (exists && !S_ISREG(sb.st_mode)) { /* a FIFO would block every reader, a device worse */
    rt_error_set(err, RT_ERR_IO, "is %s, not a database file; give the path of a regular file",
                 file_kind(sb.st_mode));
    rt_error_locate(err, path, NULL, 0, 0);
    return RT_ERR_IO;
  }
  db *d = calloc(1, sizeof *d);
  if (!d) return rt_error_set(err, RT_ERR_NOMEM, "out of memory opening %s", path);
  rt_copy(d->path, sizeof d->path, path);
  d->writable = (flags & DB_CREATE) != 0;
  int oflags = d->writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  int rc = db_open_handle(d, path, oflags);
  rt_status s = RT_OK;
  if (rc != SQLITE_OK) {
    s = db_fail(d, rc, "opening", err);
    if ((rc & 0xff) == SQLITE_CANTOPEN && d->writable && !folder_writable(path))
      goto readonly_folder;
    goto fail;
  }

  long long app = 0, ver = 0, objects = 0;
  int code = SQLITE_OK;
  s = read_header(d, &app, &ver, &objects, &code, err);
  /* a WAL reader must open or create the shared-memory file beside the database: in a folder it
   * cannot write, SQLite says CANTOPEN, or READONLY when the user is not root */
  if (s && ((code & 0xff) == SQLITE_CANTOPEN || (code & 0xff) == SQLITE_READONLY) &&
      !folder_writable(path)) {
    if (d->writable) goto readonly_folder;
    if (!has_wal(path)) {
      /* a WAL database in a folder nobody can write: nothing can change it, so it can be read
       * as immutable (SQLite cannot create the shared-memory file a WAL reader needs) */
      char uri[2200];
      immutable_uri(path, uri, sizeof uri);
      rt_error_clear(err);
      rc = db_open_handle(d, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
      s = rc == SQLITE_OK ? read_header(d, &app, &ver, &objects, &code, err)
                          : db_fail(d, rc, "opening", err);
    }
  }
  if (s) goto fail;
  if (app != DB_APPLICATION_ID && (objects > 0 || app != 0)) {
    s = rt_error_set(err, RT_ERR_DB_FOREIGN,
                     "an SQLite database of another program (application_id %#llx, %lld schema "
                     "objects), not a rooftune database; give rooftune a new path",
                     app, objects);
    rt_error_locate(err, path, NULL, 0, 0);
    goto fail;
  }
  if (app == 0 && objects == 0 && !d->writable) {
    s = rt_error_set(err, RT_ERR_DB_FOREIGN,
                     "an empty file, not a rooftune database; tune into it first "
                     "(rooftune tune ... --db %s)",
                     path);
    rt_error_locate(err, path, NULL, 0, 0);
    goto fail;
  }
  if (ver < 0) { /* no rooftune writes one; the migrations would be indexed below 0 */
    s = rt_error_set(err, RT_ERR_DB_VERSION,
                     "schema version %lld is not one rooftune writes (0 to %d); the file's header "
                     "is damaged: restore a backup or start a new file",
                     ver, DB_SCHEMA_VERSION);
    rt_error_locate(err, path, NULL, 0, 0);
    goto fail;
  }
  if (ver > DB_SCHEMA_VERSION) {
    s = rt_error_set(err, RT_ERR_DB_VERSION,
                     "schema version %lld is newer than this rooftune's %d; use a newer rooftune "
                     "(this is %s)",
                     ver, DB_SCHEMA_VERSION, ROOFTUNE_VERSION);
    rt_error_locate(err, path, NULL, 0, 0);
    goto fail;
  }
  d->version = (int)ver;
  if (d->writable) {
    rc = db_exec_retry(d->h, "PRAGMA journal_mode=WAL");
    if (rc != SQLITE_OK) {
      s = db_fail(d, rc, "switching to WAL mode", err);
      goto fail;
    }
    /* In WAL mode NORMAL keeps every committed transaction across a process crash or kill;
     * only a power loss may take back the last few. */
    sqlite3_exec(d->h, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    if (ver < DB_SCHEMA_VERSION && (s = migrate(d, err))) goto fail;
  } else if (ver < DB_SCHEMA_VERSION) {
    if (access(path, W_OK) == 0 && folder_writable(path))
      s = rt_error_set(err, RT_ERR_DB_VERSION,
                       "schema version %lld is older than this rooftune's %d; migrate it once "
                       "with 'rooftune db upgrade --db %s'",
                       ver, DB_SCHEMA_VERSION, path);
    else
      s = rt_error_set(err, RT_ERR_DB_VERSION,
                       "schema version %lld is older than this rooftune's %d, and the file or its "
                       "folder cannot be written: copy it somewhere writable and run 'rooftune db "
                       "upgrade --db COPY' on the copy",
                       ver, DB_SCHEMA_VERSION);
    rt_error_locate(err, path, NULL, 0, 0);
    goto fail;
  }
  sqlite3_exec(d->h, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
  *out = d;
  return RT_OK;
readonly_folder:
  if (!folder_exists(path))
    s = rt_error_set(err, RT_ERR_IO,
                     "cannot create the database: its folder does not exist (create it first, "
                     "or give a path in a folder that does)");
  else
    s = rt_error_set(err, RT_ERR_IO,
                     "cannot write the database: its folder is read-only, and a writer creates its "
                     "journal files beside it; reading it still works (db list, show, lookup), "
                     "writing needs a writable copy");
  rt_error_locate(err, path, NULL, 0, 0);
fail:
  db_close(d);
  return s;
}

void db_close(db *d) {
  if (!d) return;
  for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(d->st[i]);
  if (d->h) sqlite3_close_v2(d->h);
  free(d);
}

const char *db_path(const db *d) { return d->path; }
int db_schema_version(const db *d) { return d->version; }
int db_schema_written(void) { return DB_SCHEMA_VERSION; }

void db_device_pseudo(db_device *dev, const char *name) {
  memset(dev, 0, sizeof *dev);
  rt_copy(dev->name, sizeof dev->name, name);
}
