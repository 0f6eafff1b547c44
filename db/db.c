/* db.c — the tuning database (see db.h): opening and identifying the file, migrations, the
 * write path with retried BEGIN IMMEDIATE transactions, resume queries, winners, reading,
 * merging and checking. */
#include "db/db.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "db/check_text.h"
#include "db/schema.h"
#include "tuner/version.h"

/* How long a writer keeps retrying a busy database before it reports it (ms).  SQLite's own
 * busy handler waits DB_BUSY_MS per attempt; we retry whole transactions up to DB_RETRY_MS. */
#define DB_BUSY_MS 5000
#define DB_RETRY_MS 120000

/* The hot statements, prepared once per connection. */
enum {
  ST_INSERT_RESULT,
  ST_HAS_RESULT,
  ST_PREVIOUS,
  ST_TEMPLATE_INSERT,
  ST_TEMPLATE_SELECT,
  ST_CLAIM_RELEASE,
  ST_BEAT,
  ST_COUNT
};

struct db {
  sqlite3 *h;              /* the connection */
  char path[1024];         /* as given */
  int writable;            /* opened with DB_CREATE */
  int version;             /* user_version */
  sqlite3_stmt *st[ST_COUNT]; /* lazily prepared */
};

typedef struct run_template {
  char name[64];     /* template name */
  long long id;      /* templates.id */
} run_template;

struct db_run {
  db *d;                    /* the database */
  long long id;             /* runs.id */
  long long problem_id;     /* problems.id */
  long long device_id;      /* devices.id */
  db_run_spec spec;         /* as begun */
  run_template tmpl[64];    /* declared templates (and library ones met on the way) */
  int ntmpl;                /* entries used */
};

/* The result columns (RESULT_COLUMNS of tuner/core/result.h), in the order bind_result() and
 * read_result() use: "config,status,...", the same with "r." in front, and the placeholders. */
#define COL_FIRST(col, json, kind, member, group) #col
#define COL_REST(col, json, kind, member, group) "," #col
#define COL_R_FIRST(col, json, kind, member, group) "r." #col
#define COL_R_REST(col, json, kind, member, group) ",r." #col
#define COL_Q_FIRST(col, json, kind, member, group) "?"
#define COL_Q_REST(col, json, kind, member, group) ",?"
#define RESULT_COLS RESULT_COLUMNS(COL_FIRST, COL_REST)
#define RESULT_COLS_R RESULT_COLUMNS(COL_R_FIRST, COL_R_REST)
#define RESULT_QMARKS RESULT_COLUMNS(COL_Q_FIRST, COL_Q_REST)

/* The winner's launch columns, each once: SQL column, kind (TEXT or UINT) and the db_winner
 * member it holds.  They generate the column lists of storing, reading and merging a winner,
 * its binding and reading, and db check's list of the columns this rooftune stores. */
#define WINNER_COLUMNS(FIRST, REST)                                              \
  FIRST(entry, TEXT, entry)                                                      \
  REST(arch, TEXT, arch)                                                         \
  REST(grid_x, TEXT, grid[0])                                                    \
  REST(grid_y, TEXT, grid[1])                                                    \
  REST(grid_z, TEXT, grid[2])                                                    \
  REST(block_x, TEXT, block[0])                                                  \
  REST(block_y, TEXT, block[1])                                                  \
  REST(block_z, TEXT, block[2])                                                  \
  REST(smem, TEXT, smem)                                                         \
  REST(grid_vx, UINT, grid_v[0])                                                 \
  REST(grid_vy, UINT, grid_v[1])                                                 \
  REST(grid_vz, UINT, grid_v[2])                                                 \
  REST(block_vx, UINT, block_v[0])                                               \
  REST(block_vy, UINT, block_v[1])                                               \
  REST(block_vz, UINT, block_v[2])                                               \
  REST(smem_v, UINT, smem_v)                                                     \
  REST(vars, TEXT, vars)                                                         \
  REST(library_algo, TEXT, library_algo)
#define WCOL_FIRST(col, kind, member) #col
#define WCOL_REST(col, kind, member) "," #col
#define WCOL_W_FIRST(col, kind, member) "w." #col
#define WCOL_W_REST(col, kind, member) ",w." #col
#define WCOL_Q_FIRST(col, kind, member) "?"
#define WCOL_Q_REST(col, kind, member) ",?"
#define WCOL_X_FIRST(col, kind, member) #col "=excluded." #col
#define WCOL_X_REST(col, kind, member) "," #col "=excluded." #col
#define WINNER_COLS WINNER_COLUMNS(WCOL_FIRST, WCOL_REST)
#define WINNER_COLS_W WINNER_COLUMNS(WCOL_W_FIRST, WCOL_W_REST)
#define WINNER_QMARKS WINNER_COLUMNS(WCOL_Q_FIRST, WCOL_Q_REST)
#define WINNER_EXCLUDED WINNER_COLUMNS(WCOL_X_FIRST, WCOL_X_REST)

static const char *const stmt_sql[ST_COUNT] = {
    [ST_INSERT_RESULT] =
        "INSERT INTO results(run_id,problem_id,device_id,template_id,toolkit,created_at," RESULT_COLS
        ") VALUES(?,?,?,?,?,?," RESULT_QMARKS ")",
    [ST_HAS_RESULT] = "SELECT 1 FROM results WHERE problem_id=? AND device_id=? AND template_id=? "
                      "AND toolkit=? AND config=? LIMIT 1",
    [ST_PREVIOUS] = "SELECT " RESULT_COLS_R ", r.id FROM results r JOIN templates t ON t.id=r.template_id "
                    "WHERE r.problem_id=? AND r.device_id=? AND r.toolkit=? AND t.name=? AND "
                    "(r.template_id=? OR r.code_hash<>'') ORDER BY r.id",
    [ST_TEMPLATE_INSERT] = "INSERT OR IGNORE INTO templates(name,family,source_hash,manifest_hash) "
                           "VALUES(?,?,?,?)",
    [ST_TEMPLATE_SELECT] = "SELECT id FROM templates WHERE name=? AND source_hash=? AND "
                           "manifest_hash=?",
    [ST_CLAIM_RELEASE] = "DELETE FROM claims WHERE problem_id=? AND device_id=? AND toolkit=? AND "
                         "key=? AND run_id=?",
    [ST_BEAT] = "UPDATE run_owners SET beat_at=? WHERE run_id=?",
};

/* ---- small helpers ------------------------------------------------------------------ */

static void copy(char *dst, size_t size, const char *src) {
  if (!size) return;
  size_t n = src ? strlen(src) : 0;
  if (n >= size) n = size - 1;
  if (n) memcpy(dst, src, n);
  dst[n] = '\0';
}

static void now_iso(char *buf, size_t size) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- which process owns a run ---------------------------------------------------------- */

typedef struct proc_id {
  char host[256];   /* gethostname() */
  char boot[64];    /* /proc/sys/kernel/random/boot_id, "" when unknown */
  long long pid;    /* getpid() */
  long long start;  /* start time in clock ticks since boot (/proc/PID/stat), 0 when unknown */
} proc_id;

/* The start time of process PID (field 22 of /proc/PID/stat), 0 when it cannot be read and
 * -1 when there is no such process. */
static long long proc_start_time(long long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%lld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno == ENOENT) return -1;
    return 0;
  }
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
  if (!p) return 0;
  p++;
  for (int field = 3; field < 22 && *p; field++) { /* p is before field 3 (the state) */
    while (*p == ' ') p++;
    while (*p && *p != ' ') p++;
  }
  return strtoll(p, NULL, 10);
}

static void proc_self(proc_id *id) {
  memset(id, 0, sizeof *id);
  if (gethostname(id->host, sizeof id->host - 1) != 0) copy(id->host, sizeof id->host, "?");
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (!fgets(id->boot, sizeof id->boot, f)) id->boot[0] = '\0';
    fclose(f);
    id->boot[strcspn(id->boot, "\n")] = '\0';
  }
  id->pid = (long long)getpid();
  long long st = proc_start_time(id->pid);
  id->start = st > 0 ? st : 0;
}

/* 1 when the owner recorded for a run still runs: on this machine (same host and boot) its
 * process with the same start time exists; elsewhere it wrote within DB_CLAIM_LEASE_S. */
static int owner_alive(const char *host, const char *boot, long long pid, long long start,
                       long long beat_at) {
  proc_id me;
  proc_self(&me);
  if (host && boot && boot[0] && !strcmp(host, me.host) && !strcmp(boot, me.boot)) {
    if (pid == me.pid) return 1;
    long long st = proc_start_time(pid);
    if (st < 0) return 0;
    if (st > 0 && start > 0) return st == start;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
  }
  return (long long)time(NULL) - beat_at < DB_CLAIM_LEASE_S;
}

static int is_busy(int rc) {
  rc &= 0xff;
  return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* Turns an SQLite failure into an rt_error that names the file and says what to do. */
static rt_status db_fail_at(sqlite3 *h, const char *path, int rc, const char *what,
                            rt_error *err) {
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
    s = rt_error_set(err, RT_ERR_IO, "cannot open the database (%s); check the path and its "
                     "permissions", msg);
    break;
  case SQLITE_READONLY:
    s = rt_error_set(err, RT_ERR_IO, "the database is read-only (%s, while %s)", msg, what);
    break;
  case SQLITE_FULL:
  case SQLITE_IOERR:
    s = rt_error_set(err, RT_ERR_IO, "cannot write the database (%s, while %s); check free "
                     "disk space", msg, what);
    break;
  default:
    s = rt_error_set(err, RT_ERR_DB, "%s: %s", what, msg);
  }
  rt_error_locate(err, path, NULL, 0, 0);
  return s;
}

static rt_status db_fail(db *d, int rc, const char *what, rt_error *err) {
  return db_fail_at(d->h, d->path, rc, what, err);
}

/* Runs SQL without results; retries while busy (for statements outside a transaction). */
static int exec_retry(sqlite3 *h, const char *sql) {
  long long deadline = now_ms() + DB_RETRY_MS;
  for (;;) {
    int rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
    if (!is_busy(rc) || now_ms() > deadline) return rc;
    sleep_ms(1 + rand() % 10);
  }
}

static rt_status tx_begin(db *d, rt_error *err) {
  int rc = exec_retry(d->h, "BEGIN IMMEDIATE");
  return rc == SQLITE_OK ? RT_OK : db_fail(d, rc, "starting a write", err);
}

static rt_status tx_commit(db *d, rt_error *err) {
  int rc = exec_retry(d->h, "COMMIT");
  if (rc == SQLITE_OK) return RT_OK;
  rt_status s = db_fail(d, rc, "committing", err);
  sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
  return s;
}

static void tx_rollback(db *d) {
  if (!sqlite3_get_autocommit(d->h)) sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
}

static sqlite3_stmt *cached(db *d, int which, rt_error *err) {
  if (!d->st[which]) {
    int rc = sqlite3_prepare_v2(d->h, stmt_sql[which], -1, &d->st[which], NULL);
    if (rc != SQLITE_OK) {
      db_fail(d, rc, "preparing a statement", err);
      d->st[which] = NULL;
      return NULL;
    }
  }
  sqlite3_reset(d->st[which]);
  sqlite3_clear_bindings(d->st[which]);
  return d->st[which];
}

static sqlite3_stmt *prepare(db *d, const char *sql, rt_error *err) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(d->h, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    db_fail(d, rc, "preparing a statement", err);
    return NULL;
  }
  return st;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
  sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_TRANSIENT);
}

static void bind_real(sqlite3_stmt *st, int i, double v) {
  if (isnan(v) || isinf(v)) sqlite3_bind_null(st, i);
  else sqlite3_bind_double(st, i, v);
}

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t size) {
  const unsigned char *t = sqlite3_column_text(st, i);
  copy(dst, size, (const char *)t);
}

static double col_real(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* Runs a one-row, one-integer query; *found tells whether a row came back. */
static rt_status query_int(db *d, sqlite3_stmt *st, long long *out, int *found, rt_error *err) {
  int rc = sqlite3_step(st);
  if (found) *found = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW) {
    *out = sqlite3_column_int64(st, 0);
    return RT_OK;
  }
  if (rc == SQLITE_DONE) return RT_OK;
  return db_fail(d, rc, "reading", err);
}

/* ---- opening ------------------------------------------------------------------------ */

void db_default_path(char *buf, size_t size) {
  const char *env = getenv("ROOFTUNE_DB");
  if (env && *env) {
    copy(buf, size, env);
    return;
  }
  const char *xdg = getenv("XDG_DATA_HOME");
  if (xdg && *xdg) {
    snprintf(buf, size, "%s/rooftune/tuning.db", xdg);
    return;
  }
  const char *home = getenv("HOME");
  snprintf(buf, size, "%s/.local/share/rooftune/tuning.db", home && *home ? home : ".");
}

rt_status db_make_parent(const char *path, rt_error *err) {
  char dir[1024];
  copy(dir, sizeof dir, path);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
      rt_error_set(err, RT_ERR_IO, "cannot create folder %s: %s", dir, strerror(errno));
      rt_error_locate(err, path, NULL, 0, 0);
      return RT_ERR_IO;
    }
    *p = '/';
  }
  return RT_OK;
}

/* 1 when a process can create files in the folder that holds PATH (SQLite's journal, WAL and
 * shared-memory files live beside the database). */
static int folder_writable(const char *path) {
  char dir[1024];
  copy(dir, sizeof dir, path);
  char *slash = strrchr(dir, '/');
  if (!slash) copy(dir, sizeof dir, ".");
  else if (slash == dir) dir[1] = '\0';
  else *slash = '\0';
  return access(dir, W_OK) == 0;
}

/* 1 when the folder that holds PATH exists (a missing one is not a read-only one). */
static int folder_exists(const char *path) {
  char dir[1024];
  copy(dir, sizeof dir, path);
  char *slash = strrchr(dir, '/');
  if (!slash) return 1;
  if (slash == dir) dir[1] = '\0';
  else *slash = '\0';
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
    if (*p == '%' || *p == '?' || *p == '#') n += (size_t)snprintf(buf + n, size - n, "%%%02X", (unsigned char)*p);
    else buf[n++] = *p;
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

/* Brings the schema up to DB_SCHEMA_VERSION inside one write transaction. */
static rt_status migrate(db *d, rt_error *err) {
  rt_status s = tx_begin(d, err);
  if (s) return s;
  long long v = 0, app = 0, objects = 0;
  if ((s = pragma_int(d, "PRAGMA user_version", &v, err)) ||
      (s = pragma_int(d, "PRAGMA application_id", &app, err)) ||
      (s = pragma_int(d, "SELECT count(*) FROM sqlite_master", &objects, err))) {
    tx_rollback(d);
    return s;
  }
  if (v < 0 || v > DB_SCHEMA_VERSION) { /* changed under us */
    tx_rollback(d);
    rt_error_set(err, RT_ERR_DB_VERSION, "schema version %lld is not one rooftune writes (0 to %d); "
                 "the file's header is damaged: restore a backup or start a new file", v,
                 DB_SCHEMA_VERSION);
    rt_error_locate(err, d->path, NULL, 0, 0);
    return RT_ERR_DB_VERSION;
  }
  if (app != DB_APPLICATION_ID && objects > 0) { /* changed under us: someone else's file */
    tx_rollback(d);
    rt_error_set(err, RT_ERR_DB_FOREIGN, "an SQLite database of another program; give rooftune a "
                 "new path");
    rt_error_locate(err, d->path, NULL, 0, 0);
    return RT_ERR_DB_FOREIGN;
  }
  for (long long ver = v + 1; ver <= DB_SCHEMA_VERSION; ver++) {
    int rc = sqlite3_exec(d->h, schema_migrations[ver], NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
      char what[160];
      if (v == 0) snprintf(what, sizeof what, "creating the schema");
      else snprintf(what, sizeof what, "migrating schema version %lld to %lld (the tables are not "
                    "the ones that version has: restore a backup or start a new file)", v, ver);
      s = db_fail(d, rc, what, err);
      tx_rollback(d);
      return s;
    }
  }
  if (v < DB_SCHEMA_VERSION) {
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d", DB_APPLICATION_ID,
             DB_SCHEMA_VERSION);
    int rc = sqlite3_exec(d->h, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
      s = db_fail(d, rc, "setting the schema version", err);
      tx_rollback(d);
      return s;
    }
  }
  if ((s = tx_commit(d, err))) return s;
  d->version = DB_SCHEMA_VERSION;
  return RT_OK;
}

/* The file's application id, schema version and schema size, in one read transaction: read
 * one by one, a process creating the file at the same moment could be seen half done (its
 * schema without its application id).  *code: the SQLite code of a failure. */
static rt_status read_header(db *d, long long *app, long long *ver, long long *objects, int *code,
                             rt_error *err) {
  *code = SQLITE_OK;
  int rc = exec_retry(d->h, "BEGIN");
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

static int db_open_handle(db *d, const char *name, int oflags) {
  if (d->h) sqlite3_close_v2(d->h);
  d->h = NULL;
  int rc = sqlite3_open_v2(name, &d->h, oflags | SQLITE_OPEN_FULLMUTEX, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_extended_result_codes(d->h, 0);
    sqlite3_busy_timeout(d->h, DB_BUSY_MS);
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
  copy(d->path, sizeof d->path, path);
  d->writable = (flags & DB_CREATE) != 0;
  int oflags = d->writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  int rc = db_open_handle(d, path, oflags);
  rt_status s = RT_OK;
  if (rc != SQLITE_OK) {
    s = db_fail(d, rc, "opening", err);
    if ((rc & 0xff) == SQLITE_CANTOPEN && d->writable && !folder_writable(path)) goto readonly_folder;
    goto fail;
  }

  long long app = 0, ver = 0, objects = 0;
  int code = SQLITE_OK;
  s = read_header(d, &app, &ver, &objects, &code, err);
  /* a WAL reader must open or create the shared-memory file beside the database: in a folder it
   * cannot write, SQLite says CANTOPEN, or READONLY when the user is not root */
  if (s && ((code & 0xff) == SQLITE_CANTOPEN || (code & 0xff) == SQLITE_READONLY) && !folder_writable(path)) {
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
                     "(rooftune tune ... --db %s)", path);
    rt_error_locate(err, path, NULL, 0, 0);
    goto fail;
  }
  if (ver < 0) { /* no rooftune writes one; the migrations would be indexed below 0 */
    s = rt_error_set(err, RT_ERR_DB_VERSION,
                     "schema version %lld is not one rooftune writes (0 to %d); the file's header "
                     "is damaged: restore a backup or start a new file", ver, DB_SCHEMA_VERSION);
    rt_error_locate(err, path, NULL, 0, 0);
    goto fail;
  }
  if (ver > DB_SCHEMA_VERSION) {
    s = rt_error_set(err, RT_ERR_DB_VERSION,
                     "schema version %lld is newer than this rooftune's %d; use a newer rooftune "
                     "(this is %s)", ver, DB_SCHEMA_VERSION, ROOFTUNE_VERSION);
    rt_error_locate(err, path, NULL, 0, 0);
    goto fail;
  }
  d->version = (int)ver;
  if (d->writable) {
    rc = exec_retry(d->h, "PRAGMA journal_mode=WAL");
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
                       "with 'rooftune db upgrade --db %s'", ver, DB_SCHEMA_VERSION, path);
    else
      s = rt_error_set(err, RT_ERR_DB_VERSION,
                       "schema version %lld is older than this rooftune's %d, and the file or its "
                       "folder cannot be written: copy it somewhere writable and run 'rooftune db "
                       "upgrade --db COPY' on the copy", ver, DB_SCHEMA_VERSION);
    rt_error_locate(err, path, NULL, 0, 0);
    goto fail;
  }
  sqlite3_exec(d->h, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
  *out = d;
  return RT_OK;
readonly_folder:
  if (!folder_exists(path))
    s = rt_error_set(err, RT_ERR_IO, "cannot create the database: its folder does not exist (create it first, "
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

/* ---- provenance --------------------------------------------------------------------- */

/* db_toolkit_string is in db/toolkit.c: it asks NVRTC, which the runtime library does not link. */

void db_device_pseudo(db_device *dev, const char *name) {
  memset(dev, 0, sizeof *dev);
  copy(dev->name, sizeof dev->name, name);
}

/* Inside a transaction: the id of a device row, created when new. */
static rt_status device_id(db *d, const db_device *dev, int create, long long *id, int *found,
                           rt_error *err) {
  sqlite3_stmt *st;
  if (create) {
    st = prepare(d, "INSERT OR IGNORE INTO devices(name,sm_count,cc_major,cc_minor,driver_version) "
                    "VALUES(?,?,?,?,?)", err);
    if (!st) return err ? err->code : RT_ERR_DB;
    bind_text(st, 1, dev->name);
    sqlite3_bind_int(st, 2, dev->sm_count);
    sqlite3_bind_int(st, 3, dev->cc_major);
    sqlite3_bind_int(st, 4, dev->cc_minor);
    sqlite3_bind_int(st, 5, dev->driver_version);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_fail(d, rc, "storing the device", err);
  }
  st = prepare(d, "SELECT id FROM devices WHERE name=? AND sm_count=? AND cc_major=? AND "
                  "cc_minor=? AND driver_version=?", err);
  if (!st) return err ? err->code : RT_ERR_DB;
  bind_text(st, 1, dev->name);
  sqlite3_bind_int(st, 2, dev->sm_count);
  sqlite3_bind_int(st, 3, dev->cc_major);
  sqlite3_bind_int(st, 4, dev->cc_minor);
  sqlite3_bind_int(st, 5, dev->driver_version);
  int f = 0;
  rt_status s = query_int(d, st, id, &f, err);
  sqlite3_finalize(st);
  if (found) *found = f;
  if (!s && !f && create) s = rt_error_set(err, RT_ERR_INTERNAL, "device row vanished");
  return s;
}

rt_status db_ceiling_set(db *d, const db_device *dev, const char *kind, const char *dtype,
                         double value, rt_error *err) {
  rt_status s = tx_begin(d, err);
  if (s) return s;
  long long did = 0;
  if ((s = device_id(d, dev, 1, &did, NULL, err))) goto out;
  sqlite3_stmt *st = prepare(d, "INSERT INTO device_ceilings(device_id,kind,dtype,value,measured_at) "
                                "VALUES(?,?,?,?,?) ON CONFLICT(device_id,kind,dtype) DO UPDATE SET "
                                "value=excluded.value, measured_at=excluded.measured_at", err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto out;
  }
  char at[32];
  now_iso(at, sizeof at);
  sqlite3_bind_int64(st, 1, did);
  bind_text(st, 2, kind);
  bind_text(st, 3, dtype);
  sqlite3_bind_double(st, 4, value);
  bind_text(st, 5, at);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = rc == SQLITE_CONSTRAINT
            ? rt_error_set(err, RT_ERR_INVALID, "ceiling kind '%s' is not copy_bw or matmul", kind)
            : db_fail(d, rc, "storing a ceiling", err);
    goto out;
  }
  return tx_commit(d, err);
out:
  tx_rollback(d);
  return s;
}

rt_status db_ceiling_get(db *d, const db_device *dev, const char *kind, const char *dtype,
                         double *value, char *measured_at, size_t at_size, int *found,
                         rt_error *err) {
  *found = 0;
  sqlite3_stmt *st = prepare(d, "SELECT c.value, c.measured_at FROM device_ceilings c JOIN devices "
                                "v ON v.id=c.device_id WHERE v.name=? AND v.sm_count=? AND "
                                "v.cc_major=? AND v.cc_minor=? AND c.kind=? AND c.dtype=? ORDER BY "
                                "c.measured_at DESC LIMIT 1", err);
  if (!st) return err ? err->code : RT_ERR_DB;
  bind_text(st, 1, dev->name);
  sqlite3_bind_int(st, 2, dev->sm_count);
  sqlite3_bind_int(st, 3, dev->cc_major);
  sqlite3_bind_int(st, 4, dev->cc_minor);
  bind_text(st, 5, kind);
  bind_text(st, 6, dtype ? dtype : "");
  int rc = sqlite3_step(st);
  rt_status s = RT_OK;
  if (rc == SQLITE_ROW) {
    *found = 1;
    *value = sqlite3_column_double(st, 0);
    if (measured_at) col_text(st, 1, measured_at, at_size);
  } else if (rc != SQLITE_DONE) {
    s = db_fail(d, rc, "reading a ceiling", err);
  }
  sqlite3_finalize(st);
  return s;
}

/* ---- runs --------------------------------------------------------------------------- */

void db_dims_text(const problem *p, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < p->ndims && n < size; i++) {
    int w = snprintf(buf + n, size - n, "%s%s=%lld", i ? "," : "", p->dim_names[i], p->dims[i]);
    if (w < 0) break;
    n += (size_t)w;
  }
}

static rt_status problem_id(db *d, const problem *p, long long *id, rt_error *err) {
  char dims[256];
  db_dims_text(p, dims, sizeof dims);
  sqlite3_stmt *st = prepare(d, "INSERT OR IGNORE INTO problems(family,shape,dtype,layout,dims,args) "
                                "VALUES(?,?,?,?,?,?)", err);
  if (!st) return err ? err->code : RT_ERR_DB;
  bind_text(st, 1, p->family);
  bind_text(st, 2, p->shape);
  bind_text(st, 3, p->dtype);
  bind_text(st, 4, p->layout);
  bind_text(st, 5, dims);
  bind_text(st, 6, p->args);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_fail(d, rc, "storing the problem", err);
  st = prepare(d, "SELECT id FROM problems WHERE family=? AND shape=? AND dtype=? AND layout=?",
               err);
  if (!st) return err ? err->code : RT_ERR_DB;
  bind_text(st, 1, p->family);
  bind_text(st, 2, p->shape);
  bind_text(st, 3, p->dtype);
  bind_text(st, 4, p->layout);
  int f = 0;
  rt_status s = query_int(d, st, id, &f, err);
  sqlite3_finalize(st);
  if (!s && !f) s = rt_error_set(err, RT_ERR_INTERNAL, "problem row vanished");
  return s;
}

/* Inside a transaction: this process becomes the owner of run RUN_ID. */
static rt_status run_own(db *d, long long run_id, rt_error *err) {
  proc_id me;
  proc_self(&me);
  sqlite3_stmt *st = prepare(d, "INSERT OR REPLACE INTO run_owners(run_id,host,boot_id,pid,pid_start,"
                                "beat_at) VALUES(?,?,?,?,?,?)", err);
  if (!st) return err ? err->code : RT_ERR_DB;
  sqlite3_bind_int64(st, 1, run_id);
  bind_text(st, 2, me.host);
  bind_text(st, 3, me.boot);
  sqlite3_bind_int64(st, 4, me.pid);
  sqlite3_bind_int64(st, 5, me.start);
  sqlite3_bind_int64(st, 6, (sqlite3_int64)time(NULL));
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? RT_OK : db_fail(d, rc, "recording the run's process", err);
}

/* Inside a transaction: a run still "running" whose owner process is gone was killed; it
 * becomes "interrupted" (its committed results stay) and its claims are released. */
static rt_status mark_interrupted(db *d, long long run_id, rt_error *err) {
  char at[32];
  now_iso(at, sizeof at);
  sqlite3_stmt *st = prepare(d, "UPDATE runs SET status='interrupted', finished_at=? WHERE id=? AND "
                                "status='running'", err);
  if (!st) return err ? err->code : RT_ERR_DB;
  bind_text(st, 1, at);
  sqlite3_bind_int64(st, 2, run_id);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_fail(d, rc, "marking a killed run", err);
  if (!(st = prepare(d, "DELETE FROM claims WHERE run_id=?", err))) return err ? err->code : RT_ERR_DB;
  sqlite3_bind_int64(st, 1, run_id);
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? RT_OK : db_fail(d, rc, "releasing a killed run's claims", err);
}

static rt_status reap_dead_runs(db *d, long long self, rt_error *err) {
  sqlite3_stmt *st = prepare(d, "SELECT r.id, o.host, o.boot_id, o.pid, o.pid_start, o.beat_at FROM "
                                "runs r JOIN run_owners o ON o.run_id=r.id WHERE r.status='running' "
                                "AND r.id<>?", err);
  if (!st) return err ? err->code : RT_ERR_DB;
  sqlite3_bind_int64(st, 1, self);
  long long dead[64];
  int ndead = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && ndead < 64)
    if (!owner_alive((const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2),
                     sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5)))
      dead[ndead++] = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return db_fail(d, rc, "reading running runs", err);
  for (int i = 0; i < ndead; i++) { /* at most 64 a time: the next run takes the rest */
    rt_status s = mark_interrupted(d, dead[i], err);
    if (s) return s;
  }
  return RT_OK;
}

rt_status db_run_begin(db *d, const db_run_spec *spec, db_run **out, rt_error *err) {
  *out = NULL;
  if (!d->writable)
    return rt_error_set(err, RT_ERR_USAGE, "%s is open read-only; cannot record a run", d->path);
  if (!spec->prob.family[0] || !spec->prob.shape[0] || !spec->prob.dtype[0])
    return rt_error_set(err, RT_ERR_INVALID, "a run needs a problem with family, shape and dtype");
  if (!spec->prov.device.name[0])
    return rt_error_set(err, RT_ERR_INVALID, "a run needs a device name");
  db_run *r = calloc(1, sizeof *r);
  if (!r) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  r->d = d;
  r->spec = *spec;
  rt_status s = tx_begin(d, err);
  if (s) {
    free(r);
    return s;
  }
  if ((s = problem_id(d, &spec->prob, &r->problem_id, err)) ||
      (s = device_id(d, &spec->prov.device, 1, &r->device_id, NULL, err)))
    goto fail;
  sqlite3_stmt *st = prepare(d, "INSERT INTO runs(problem_id,device_id,toolkit,arch,strategy,seed,"
                                "budget,rooftune_version,command,started_at,status) "
                                "VALUES(?,?,?,?,?,?,?,?,?,?,'running')", err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto fail;
  }
  char at[32];
  now_iso(at, sizeof at);
  sqlite3_bind_int64(st, 1, r->problem_id);
  sqlite3_bind_int64(st, 2, r->device_id);
  bind_text(st, 3, spec->prov.toolkit);
  bind_text(st, 4, spec->prov.arch);
  bind_text(st, 5, spec->strategy);
  sqlite3_bind_int64(st, 6, (sqlite3_int64)spec->seed);
  sqlite3_bind_int64(st, 7, spec->budget);
  bind_text(st, 8, ROOFTUNE_VERSION);
  bind_text(st, 9, spec->command);
  bind_text(st, 10, at);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = db_fail(d, rc, "starting a run", err);
    goto fail;
  }
  r->id = sqlite3_last_insert_rowid(d->h);
  if ((s = run_own(d, r->id, err)) || (s = reap_dead_runs(d, r->id, err))) goto fail;
  if ((s = tx_commit(d, err))) {
    free(r);
    return s;
  }
  *out = r;
  return RT_OK;
fail:
  tx_rollback(d);
  free(r);
  return s;
}

long long db_run_id(const db_run *r) { return r->id; }

/* Inside or outside a transaction: the templates.id of (name, hashes), created when new. */
static rt_status template_id(db *d, const char *name, const char *family, const char *src,
                             const char *man, long long *id, rt_error *err) {
  sqlite3_stmt *st = cached(d, ST_TEMPLATE_INSERT, err);
  if (!st) return err ? err->code : RT_ERR_DB;
  bind_text(st, 1, name);
  bind_text(st, 2, family);
  bind_text(st, 3, src);
  bind_text(st, 4, man);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return db_fail(d, rc, "storing the template", err);
  if (!(st = cached(d, ST_TEMPLATE_SELECT, err))) return err ? err->code : RT_ERR_DB;
  bind_text(st, 1, name);
  bind_text(st, 2, src);
  bind_text(st, 3, man);
  int f = 0;
  rt_status s = query_int(d, st, id, &f, err);
  sqlite3_reset(st);
  if (!s && !f) s = rt_error_set(err, RT_ERR_INTERNAL, "template row vanished");
  return s;
}

static run_template *run_find_template(db_run *r, const char *name) {
  for (int i = 0; i < r->ntmpl; i++)
    if (strcmp(r->tmpl[i].name, name) == 0) return &r->tmpl[i];
  return NULL;
}

static rt_status run_add_template(db_run *r, const char *name, long long id, rt_error *err) {
  run_template *t = run_find_template(r, name);
  if (!t) {
    if (r->ntmpl == (int)(sizeof r->tmpl / sizeof r->tmpl[0]))
      return rt_error_set(err, RT_ERR_INVALID, "too many templates in one run (at most %d)",
                          (int)(sizeof r->tmpl / sizeof r->tmpl[0]));
    t = &r->tmpl[r->ntmpl++];
    copy(t->name, sizeof t->name, name);
  }
  t->id = id;
  return RT_OK;
}

rt_status db_run_template(db_run *r, const char *name, const char *family,
                          const char *source_hash, const char *manifest_hash, rt_error *err) {
  if (!name || !*name || strlen(name) >= sizeof r->tmpl[0].name)
    return rt_error_set(err, RT_ERR_INVALID, "template name '%s' is empty or too long",
                        name ? name : "");
  rt_status s = tx_begin(r->d, err);
  if (s) return s;
  long long id = 0;
  if ((s = template_id(r->d, name, family, source_hash, manifest_hash, &id, err))) {
    tx_rollback(r->d);
    return s;
  }
  if ((s = tx_commit(r->d, err))) return s;
  return run_add_template(r, name, id, err);
}

/* The template id for a result's template name: declared, or a library candidate. */
static rt_status run_template_id(db_run *r, const char *name, int create, long long *id,
                                 rt_error *err) {
  run_template *t = run_find_template(r, name);
  if (t) {
    *id = t->id;
    return RT_OK;
  }
  if (!create) {
    sqlite3_stmt *st = cached(r->d, ST_TEMPLATE_SELECT, err);
    if (!st) return err ? err->code : RT_ERR_DB;
    bind_text(st, 1, name);
    bind_text(st, 2, "");
    bind_text(st, 3, "");
    int f = 0;
    rt_status s = query_int(r->d, st, id, &f, err);
    sqlite3_reset(st);
    if (!s && !f) *id = -1;
    return s;
  }
  rt_status s = template_id(r->d, name, r->spec.prob.family, "", "", id, err);
  if (!s) s = run_add_template(r, name, *id, err);
  return s;
}

/* Binding and reading one field of each kind (RESULT_COLUMNS). */
static void bind_TEXT(sqlite3_stmt *st, int i, const char *v) { bind_text(st, i, v); }
static void bind_REAL(sqlite3_stmt *st, int i, double v) { bind_real(st, i, v); }
static void bind_INT(sqlite3_stmt *st, int i, int v) { sqlite3_bind_int(st, i, v); }
static void bind_INT64(sqlite3_stmt *st, int i, long long v) { sqlite3_bind_int64(st, i, v); }
static void bind_STATUS(sqlite3_stmt *st, int i, rt_status v) { bind_text(st, i, rt_status_name(v)); }
static void bind_TIMING(sqlite3_stmt *st, int i, timing_kind v) { bind_text(st, i, timing_kind_name(v)); }
#define read_TEXT(st, i, p) col_text(st, i, *(p), sizeof *(p))
#define read_REAL(st, i, p) (*(p) = col_real(st, i))
#define read_INT(st, i, p) (*(p) = sqlite3_column_int(st, i))
#define read_INT64(st, i, p) (*(p) = sqlite3_column_int64(st, i))
static void read_STATUS(sqlite3_stmt *st, int i, rt_status *v) {
  char name[64];
  col_text(st, i, name, sizeof name);
  int code = rt_status_from_name(name);
  *v = code < 0 ? RT_ERR_INTERNAL : (rt_status)code;
}
static void read_TIMING(sqlite3_stmt *st, int i, timing_kind *v) {
  char name[64];
  col_text(st, i, name, sizeof name);
  int t = timing_kind_parse(name);
  *v = t < 0 ? TIMING_REPLAYED : (timing_kind)t;
}

static void bind_result(sqlite3_stmt *st, int i, const candidate_result *c) {
#define COL_BIND(col, json, kind, member, group) bind_##kind(st, i++, c->member);
  RESULT_COLUMNS(COL_BIND, COL_BIND)
#undef COL_BIND
}

static void read_result(sqlite3_stmt *st, int i, candidate_result *c) {
#define COL_READ(col, json, kind, member, group) read_##kind(st, i++, &c->member);
  RESULT_COLUMNS(COL_READ, COL_READ)
#undef COL_READ
}

/* Inside a transaction: inserts one result. */
static rt_status insert_result(db_run *r, const candidate_result *c, long long *id,
                               rt_error *err) {
  if (!c->template_name[0])
    return rt_error_set(err, RT_ERR_INVALID, "a result without a template name");
  if (c->timing < TIMING_MEASURED || c->timing > TIMING_REPLAYED)
    return rt_error_set(err, RT_ERR_INVALID, "result of %s: unknown timing kind %d",
                        c->template_name, (int)c->timing);
  long long tid = 0;
  rt_status s = run_template_id(r, c->template_name, 1, &tid, err);
  if (s) return s;
  sqlite3_stmt *st = cached(r->d, ST_INSERT_RESULT, err);
  if (!st) return err ? err->code : RT_ERR_DB;
  char at[32];
  now_iso(at, sizeof at);
  sqlite3_bind_int64(st, 1, r->id);
  sqlite3_bind_int64(st, 2, r->problem_id);
  sqlite3_bind_int64(st, 3, r->device_id);
  sqlite3_bind_int64(st, 4, tid);
  bind_text(st, 5, r->spec.prov.toolkit);
  bind_text(st, 6, at);
  bind_result(st, 7, c);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return db_fail(r->d, rc, "storing a result", err);
  if (id) *id = sqlite3_last_insert_rowid(r->d->h);
  /* the result is there: its claim is released (whoever waits for it reads the result) */
  char key[1024];
  db_result_key(c->template_name, c->config, c->code_hash, key, sizeof key);
  if (!(st = cached(r->d, ST_CLAIM_RELEASE, err))) return err ? err->code : RT_ERR_DB;
  sqlite3_bind_int64(st, 1, r->problem_id);
  sqlite3_bind_int64(st, 2, r->device_id);
  bind_text(st, 3, r->spec.prov.toolkit);
  bind_text(st, 4, key);
  sqlite3_bind_int64(st, 5, r->id);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return db_fail(r->d, rc, "releasing a claim", err);
  return RT_OK;
}

/* Inside a transaction: the run's owner was heard from now (claims of a run on another machine
 * expire DB_CLAIM_LEASE_S after its last write). */
static rt_status run_beat(db_run *r, rt_error *err) {
  sqlite3_stmt *st = cached(r->d, ST_BEAT, err);
  if (!st) return err ? err->code : RT_ERR_DB;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)time(NULL));
  sqlite3_bind_int64(st, 2, r->id);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? RT_OK : db_fail(r->d, rc, "recording the run's progress", err);
}

rt_status db_run_store_many(db_run *r, const candidate_result *res, size_t n, long long *ids,
                            rt_error *err) {
  rt_status s = tx_begin(r->d, err);
  if (s) return s;
  /* Templates created inside a rolled-back transaction must not stay in the map. */
  int ntmpl = r->ntmpl;
  for (size_t i = 0; i <= n; i++) {
    if ((s = i < n ? insert_result(r, &res[i], ids ? &ids[i] : NULL, err) : run_beat(r, err))) {
      tx_rollback(r->d);
      r->ntmpl = ntmpl;
      return s;
    }
  }
  s = tx_commit(r->d, err);
  if (s) r->ntmpl = ntmpl;
  return s;
}

rt_status db_run_store(db_run *r, const candidate_result *res, long long *result_id,
                       rt_error *err) {
  return db_run_store_many(r, res, 1, result_id, err);
}

#define COL_SET_FIRST(col, json, kind, member, group) #col "=?"
#define COL_SET_REST(col, json, kind, member, group) "," #col "=?"

rt_status db_run_update_result(db_run *r, long long result_id, const candidate_result *res,
                               rt_error *err) {
  rt_status s = tx_begin(r->d, err);
  if (s) return s;
  sqlite3_stmt *st = prepare(r->d, "UPDATE results SET " RESULT_COLUMNS(COL_SET_FIRST, COL_SET_REST)
                                   " WHERE id=? AND run_id=?", err);
  if (!st) {
    tx_rollback(r->d);
    return err ? err->code : RT_ERR_DB;
  }
  int i = 1;
  bind_result(st, i, res);
#define COL_COUNT(col, json, kind, member, group) i++;
  RESULT_COLUMNS(COL_COUNT, COL_COUNT)
#undef COL_COUNT
  sqlite3_bind_int64(st, i++, result_id);
  sqlite3_bind_int64(st, i, r->id);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = db_fail(r->d, rc, "updating a result", err);
  } else if (sqlite3_changes(r->d->h) != 1) {
    s = rt_error_set(err, RT_ERR_NOT_FOUND, "result %lld is not one of run %lld's", result_id, r->id);
  }
  if (s) {
    tx_rollback(r->d);
    return s;
  }
  return tx_commit(r->d, err);
}

rt_status db_calibration_set(db *d, const char *gpu, const char *template_name, const char *kind,
                             double ratio, int samples, rt_error *err) {
  if (!(ratio > 0) || !isfinite(ratio) || samples < 1)
    return rt_error_set(err, RT_ERR_INVALID, "a calibration of %s on %s needs a positive ratio and "
                        "samples (got %g from %d)", template_name, gpu, ratio, samples);
  rt_status s = tx_begin(d, err);
  if (s) return s;
  sqlite3_stmt *st = prepare(d, "INSERT INTO calibrations(gpu,template,kind,ratio,samples,measured_at) "
                                "VALUES(?,?,?,?,?,?) ON CONFLICT(gpu,template,kind) DO UPDATE SET "
                                "ratio=excluded.ratio, samples=excluded.samples, "
                                "measured_at=excluded.measured_at", err);
  if (!st) {
    tx_rollback(d);
    return err ? err->code : RT_ERR_DB;
  }
  char at[32];
  now_iso(at, sizeof at);
  bind_text(st, 1, gpu);
  bind_text(st, 2, template_name);
  bind_text(st, 3, kind);
  sqlite3_bind_double(st, 4, ratio);
  sqlite3_bind_int(st, 5, samples);
  bind_text(st, 6, at);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = rc == SQLITE_CONSTRAINT ? rt_error_set(err, RT_ERR_INVALID, "calibration kind '%s' is not dram_bytes", kind)
                                : db_fail(d, rc, "storing a calibration", err);
    tx_rollback(d);
    return s;
  }
  return tx_commit(d, err);
}

rt_status db_calibration_get(db *d, const char *gpu, const char *template_name, const char *kind,
                             double *ratio, int *samples, int *found, rt_error *err) {
  *found = 0;
  if (d->version < 4) return RT_OK; /* an older file read as it is: it has none */
  sqlite3_stmt *st = prepare(d, "SELECT ratio, samples FROM calibrations WHERE gpu=? AND template=? AND kind=?",
                             err);
  if (!st) return err ? err->code : RT_ERR_DB;
  bind_text(st, 1, gpu);
  bind_text(st, 2, template_name);
  bind_text(st, 3, kind);
  int rc = sqlite3_step(st);
  rt_status s = RT_OK;
  if (rc == SQLITE_ROW) {
    *found = 1;
    *ratio = sqlite3_column_double(st, 0);
    if (samples) *samples = sqlite3_column_int(st, 1);
  } else if (rc != SQLITE_DONE) {
    s = db_fail(d, rc, "reading a calibration", err);
  }
  sqlite3_finalize(st);
  return s;
}

int db_run_has_result(db_run *r, const char *template_name, const char *config) {
  long long tid = -1;
  if (run_template_id(r, template_name, 0, &tid, NULL) || tid < 0) return 0;
  sqlite3_stmt *st = cached(r->d, ST_HAS_RESULT, NULL);
  if (!st) return 0;
  sqlite3_bind_int64(st, 1, r->problem_id);
  sqlite3_bind_int64(st, 2, r->device_id);
  sqlite3_bind_int64(st, 3, tid);
  bind_text(st, 4, r->spec.prov.toolkit);
  bind_text(st, 5, config);
  int found = sqlite3_step(st) == SQLITE_ROW;
  sqlite3_reset(st);
  return found;
}

/* A stored result that resuming would tell as data, checked as it was read (st on its row,
 * results.id in the last column): an unknown status or timing, or a success without a time,
 * is a damaged row, an error naming the file and the row (read_STATUS and read_TIMING would
 * make it a failure or a replay without a word). */
static rt_status check_stored(db *d, sqlite3_stmt *st, const candidate_result *c, rt_error *err) {
  int n = sqlite3_column_count(st);
  char what[200] = "";
  for (int i = 0; i < n - 1 && !what[0]; i++) {
    const char *col = sqlite3_column_name(st, i), *v = (const char *)sqlite3_column_text(st, i);
    int type = sqlite3_column_type(st, i);
    if (!strcmp(col, "status") && rt_status_from_name(v ? v : "") < 0)
      snprintf(what, sizeof what, "status '%.40s' is not one rooftune writes", v ? v : "NULL");
    else if (!strcmp(col, "timing") && timing_kind_parse(v ? v : "") < 0)
      snprintf(what, sizeof what, "timing '%.40s' is not measured, predicted or replayed", v ? v : "NULL");
    else if (!strcmp(col, "time_ms") && c->status == RT_OK) {
      if (type == SQLITE_FLOAT || type == SQLITE_INTEGER) {
        if (!(c->time_ms > 0) || !(c->time_ms < 1e20))
          snprintf(what, sizeof what, "a successful result with time_ms %g, not a time", c->time_ms);
      } else {
        snprintf(what, sizeof what, "a successful result with time_ms %s%.40s%s, not a time", v ? "'" : "",
                 v ? v : "NULL", v ? "'" : "");
      }
    }
  }
  if (!what[0]) return RT_OK;
  rt_error_locate(err, d->path, NULL, 0, 0);
  return rt_error_set(err, RT_ERR_DB, "results row %lld (%.60s %.200s): %s: the row is damaged; "
                      "'rooftune db check --db %s' lists what is wrong", (long long)sqlite3_column_int64(st, n - 1),
                      c->template_name, c->config, what, d->path);
}

rt_status db_run_previous(db_run *r, const char *template_name, candidate_result **out,
                          size_t *n, rt_error *err) {
  *out = NULL;
  *n = 0;
  long long tid = -1;
  rt_status s = run_template_id(r, template_name, 0, &tid, err);
  if (s || tid < 0) return s;
  sqlite3_stmt *st = cached(r->d, ST_PREVIOUS, err);
  if (!st) return err ? err->code : RT_ERR_DB;
  sqlite3_bind_int64(st, 1, r->problem_id);
  sqlite3_bind_int64(st, 2, r->device_id);
  bind_text(st, 3, r->spec.prov.toolkit);
  bind_text(st, 4, template_name);
  sqlite3_bind_int64(st, 5, tid);
  size_t cap = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 64;
      candidate_result *p = realloc(*out, cap * sizeof *p);
      if (!p) {
        s = rt_error_set(err, RT_ERR_NOMEM, "out of memory reading earlier results");
        break;
      }
      *out = p;
    }
    candidate_result *c = &(*out)[(*n)++];
    memset(c, 0, sizeof *c);
    copy(c->template_name, sizeof c->template_name, template_name);
    copy(c->device_name, sizeof c->device_name, r->spec.prov.device.name);
    read_result(st, 0, c);
    if ((s = check_stored(r->d, st, c, err))) break;
  }
  if (!s && rc != SQLITE_DONE) s = db_fail(r->d, rc, "reading earlier results", err);
  sqlite3_reset(st);
  if (s) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return s;
}

rt_status db_run_set_winner(db_run *r, long long result_id, const db_winner *w, int *replaced,
                            rt_error *err) {
  if (replaced) *replaced = 0;
  db *d = r->d;
  rt_status s = tx_begin(d, err);
  if (s) return s;
  sqlite3_stmt *st = prepare(d, "SELECT template_id, status, time_ms, toolkit FROM results WHERE "
                                "id=? AND problem_id=? AND device_id=?", err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto out;
  }
  sqlite3_bind_int64(st, 1, result_id);
  sqlite3_bind_int64(st, 2, r->problem_id);
  sqlite3_bind_int64(st, 3, r->device_id);
  int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(st);
    s = rc == SQLITE_DONE ? rt_error_set(err, RT_ERR_INVALID, "result %lld is not a result of this "
                                         "run's problem and device", result_id)
                          : db_fail(d, rc, "reading the winner", err);
    goto out;
  }
  long long tid = sqlite3_column_int64(st, 0);
  char status[32], toolkit[96];
  col_text(st, 1, status, sizeof status);
  double t = col_real(st, 2);
  col_text(st, 3, toolkit, sizeof toolkit);
  sqlite3_finalize(st);
  if (strcmp(status, "OK") != 0 || isnan(t)) {
    s = rt_error_set(err, RT_ERR_INVALID, "result %lld failed (%s) and cannot win", result_id,
                     status);
    goto out;
  }
  st = prepare(d, "SELECT r.time_ms FROM winners w JOIN results r ON r.id=w.result_id WHERE "
                  "w.problem_id=? AND w.device_id=? AND w.template_id=? AND w.toolkit=?", err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto out;
  }
  sqlite3_bind_int64(st, 1, r->problem_id);
  sqlite3_bind_int64(st, 2, r->device_id);
  sqlite3_bind_int64(st, 3, tid);
  bind_text(st, 4, toolkit);
  rc = sqlite3_step(st);
  int have = rc == SQLITE_ROW;
  double old = have ? col_real(st, 0) : NAN;
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    s = db_fail(d, rc, "reading the old winner", err);
    goto out;
  }
  if (have && !isnan(old) && old <= t) { /* the stored winner is at least as fast */
    sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
    return RT_OK;
  }
  st = prepare(d,
               "INSERT INTO winners(problem_id,device_id,template_id,toolkit,result_id,cubin_bytes,"
               WINNER_COLS ",updated_at) VALUES(?,?,?,?,?,?," WINNER_QMARKS ",?) ON CONFLICT("
               "problem_id,device_id,template_id,toolkit) DO UPDATE SET result_id=excluded.result_id,"
               "cubin_bytes=excluded.cubin_bytes," WINNER_EXCLUDED ",updated_at=excluded.updated_at",
               err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto out;
  }
  char at[32];
  now_iso(at, sizeof at);
  int i = 1;
  sqlite3_bind_int64(st, i++, r->problem_id);
  sqlite3_bind_int64(st, i++, r->device_id);
  sqlite3_bind_int64(st, i++, tid);
  bind_text(st, i++, toolkit);
  sqlite3_bind_int64(st, i++, result_id);
  int has_cubin = w && w->cubin && w->cubin_size;
  sqlite3_bind_int64(st, i++, has_cubin ? (sqlite3_int64)w->cubin_size : 0);
  db_winner none;
  memset(&none, 0, sizeof none);
  if (!w) w = &none;
#define WBIND_TEXT(member) bind_text(st, i++, w->member);
#define WBIND_UINT(member) sqlite3_bind_int64(st, i++, w->member);
#define WBIND(col, kind, member) WBIND_##kind(member)
  WINNER_COLUMNS(WBIND, WBIND)
  bind_text(st, i++, at);
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = db_fail(d, rc, "storing the winner", err);
    goto out;
  }
  /* The cubin lives in its own table, keyed by the winner's row. */
  st = prepare(d, has_cubin ? "INSERT INTO winner_cubins(winner_id,cubin) SELECT id, ? FROM winners "
                              "WHERE problem_id=? AND device_id=? AND template_id=? AND toolkit=? "
                              "ON CONFLICT(winner_id) DO UPDATE SET cubin=excluded.cubin"
                            : "DELETE FROM winner_cubins WHERE ?1 IS NULL AND winner_id IN (SELECT "
                              "id FROM winners WHERE problem_id=? AND device_id=? AND "
                              "template_id=? AND toolkit=?)",
               err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto out;
  }
  if (has_cubin) sqlite3_bind_blob64(st, 1, w->cubin, w->cubin_size, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, 1);
  sqlite3_bind_int64(st, 2, r->problem_id);
  sqlite3_bind_int64(st, 3, r->device_id);
  sqlite3_bind_int64(st, 4, tid);
  bind_text(st, 5, toolkit);
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = db_fail(d, rc, "storing the cubin", err);
    goto out;
  }
  /* The serving recipe, also in a table of its own (schema 4). */
  int has_recipe = w->env && *w->env;
  st = prepare(d, has_recipe ? "INSERT INTO winner_recipes(winner_id,env,derived,constraints) "
                               "SELECT id, ?, ?, ? FROM winners WHERE problem_id=? AND device_id=? "
                               "AND template_id=? AND toolkit=? ON CONFLICT(winner_id) DO UPDATE "
                               "SET env=excluded.env, derived=excluded.derived, "
                               "constraints=excluded.constraints"
                             : "DELETE FROM winner_recipes WHERE ?1 IS NULL AND ?2 IS NULL AND ?3 "
                               "IS NULL AND winner_id IN (SELECT id FROM winners WHERE "
                               "problem_id=? AND device_id=? AND template_id=? AND toolkit=?)",
               err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto out;
  }
  if (has_recipe) {
    bind_text(st, 1, w->env);
    bind_text(st, 2, w->derived ? w->derived : "");
    bind_text(st, 3, w->constraints ? w->constraints : "");
  } else {
    for (int k = 1; k <= 3; k++) sqlite3_bind_null(st, k);
  }
  sqlite3_bind_int64(st, 4, r->problem_id);
  sqlite3_bind_int64(st, 5, r->device_id);
  sqlite3_bind_int64(st, 6, tid);
  bind_text(st, 7, toolkit);
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = db_fail(d, rc, "storing the serving recipe", err);
    goto out;
  }
  if ((s = tx_commit(d, err))) return s;
  if (replaced) *replaced = 1;
  return RT_OK;
out:
  tx_rollback(d);
  return s;
}

rt_status db_run_finish(db_run *r, const char *status, rt_error *err) {
  if (!status || (strcmp(status, "done") && strcmp(status, "failed") && strcmp(status, "interrupted")))
    return rt_error_set(err, RT_ERR_INVALID, "run status '%s' is not done, failed or interrupted",
                        status ? status : "");
  rt_status s = tx_begin(r->d, err);
  if (s) return s;
  sqlite3_stmt *st = prepare(r->d, "UPDATE runs SET status=?, finished_at=? WHERE id=?", err);
  if (!st) {
    tx_rollback(r->d);
    return err ? err->code : RT_ERR_DB;
  }
  char at[32];
  now_iso(at, sizeof at);
  bind_text(st, 1, status);
  bind_text(st, 2, at);
  sqlite3_bind_int64(st, 3, r->id);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE && (st = prepare(r->d, "DELETE FROM claims WHERE run_id=?", err))) {
    sqlite3_bind_int64(st, 1, r->id);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
  } else if (rc == SQLITE_DONE) {
    tx_rollback(r->d);
    return err ? err->code : RT_ERR_DB;
  }
  if (rc != SQLITE_DONE) {
    s = db_fail(r->d, rc, "finishing the run", err);
    tx_rollback(r->d);
    return s;
  }
  return tx_commit(r->d, err);
}

/* ---- claims --------------------------------------------------------------------------- */

void db_result_key(const char *template_name, const char *config, const char *code_hash,
                   char *buf, size_t size) {
  if (code_hash && *code_hash) snprintf(buf, size, "code:%s", code_hash);
  else snprintf(buf, size, "config:%s:%s", template_name ? template_name : "", config ? config : "");
}

/* Inside a transaction: the oldest stored result of the candidate for this run's problem,
 * device and toolkit (by code hash when known, else by template name and configuration). */
static rt_status find_result(db_run *r, const char *template_name, const char *config,
                             const char *code_hash, candidate_result *out, int *found,
                             rt_error *err) {
  *found = 0;
  int by_code = code_hash && *code_hash;
  sqlite3_stmt *st = prepare(r->d, by_code
                                       ? "SELECT t.name, " RESULT_COLS_R " FROM results r JOIN templates "
                                         "t ON t.id=r.template_id WHERE r.problem_id=? AND "
                                         "r.device_id=? AND r.toolkit=? AND r.code_hash=? ORDER BY "
                                         "r.id LIMIT 1"
                                       : "SELECT t.name, " RESULT_COLS_R " FROM results r JOIN templates "
                                         "t ON t.id=r.template_id WHERE r.problem_id=? AND "
                                         "r.device_id=? AND r.toolkit=? AND t.name=? AND r.config=? "
                                         "ORDER BY r.id LIMIT 1",
                             err);
  if (!st) return err ? err->code : RT_ERR_DB;
  sqlite3_bind_int64(st, 1, r->problem_id);
  sqlite3_bind_int64(st, 2, r->device_id);
  bind_text(st, 3, r->spec.prov.toolkit);
  if (by_code) {
    bind_text(st, 4, code_hash);
  } else {
    bind_text(st, 4, template_name);
    bind_text(st, 5, config);
  }
  int rc = sqlite3_step(st);
  rt_status s = RT_OK;
  if (rc == SQLITE_ROW) {
    *found = 1;
    if (out) {
      memset(out, 0, sizeof *out);
      col_text(st, 0, out->template_name, sizeof out->template_name);
      copy(out->device_name, sizeof out->device_name, r->spec.prov.device.name);
      read_result(st, 1, out);
    }
  } else if (rc != SQLITE_DONE) {
    s = db_fail(r->d, rc, "reading a stored result", err);
  }
  sqlite3_finalize(st);
  return s;
}

rt_status db_run_claim(db_run *r, const char *template_name, const char *config,
                       const char *code_hash, int *state, candidate_result *done,
                       long long *holder, rt_error *err) {
  *state = DB_CLAIM_HELD;
  if (holder) *holder = 0;
  db *d = r->d;
  char key[1024];
  db_result_key(template_name, config, code_hash, key, sizeof key);
  rt_status s = tx_begin(d, err);
  if (s) return s;
  int found = 0;
  if ((s = find_result(r, template_name, config, code_hash, done, &found, err))) goto out;
  if (found) {
    *state = DB_CLAIM_DONE;
    tx_rollback(d);
    return RT_OK;
  }
  sqlite3_stmt *st = prepare(d, "SELECT c.run_id, c.claimed_at, u.status, o.host, o.boot_id, o.pid, "
                                "o.pid_start, o.beat_at FROM claims c LEFT JOIN runs u ON "
                                "u.id=c.run_id LEFT JOIN run_owners o ON o.run_id=c.run_id WHERE "
                                "c.problem_id=? AND c.device_id=? AND c.toolkit=? AND c.key=?",
                             err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto out;
  }
  sqlite3_bind_int64(st, 1, r->problem_id);
  sqlite3_bind_int64(st, 2, r->device_id);
  bind_text(st, 3, r->spec.prov.toolkit);
  bind_text(st, 4, key);
  int rc = sqlite3_step(st);
  long long owner = 0;
  int live = 0, exists = rc == SQLITE_ROW;
  if (exists) {
    owner = sqlite3_column_int64(st, 0);
    const char *status = (const char *)sqlite3_column_text(st, 2);
    if (owner == r->id) live = 0;
    else if (!status || strcmp(status, "running")) live = 0; /* finished, or gone from runs */
    else if (sqlite3_column_type(st, 3) == SQLITE_NULL) /* no owner recorded: the claim's age */
      live = (long long)time(NULL) - sqlite3_column_int64(st, 1) < DB_CLAIM_LEASE_S;
    else
      live = owner_alive((const char *)sqlite3_column_text(st, 3), (const char *)sqlite3_column_text(st, 4),
                         sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 6),
                         sqlite3_column_int64(st, 7));
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    s = db_fail(d, rc, "reading a claim", err);
    goto out;
  }
  if (live) {
    if (holder) *holder = owner;
    tx_rollback(d);
    return RT_OK; /* HELD */
  }
  if (exists && owner != r->id && (s = mark_interrupted(d, owner, err))) goto out; /* its run is dead */
  st = prepare(d, "INSERT INTO claims(problem_id,device_id,toolkit,key,run_id,claimed_at) "
                  "VALUES(?,?,?,?,?,?) ON CONFLICT(problem_id,device_id,toolkit,key) DO UPDATE SET "
                  "run_id=excluded.run_id, claimed_at=excluded.claimed_at", err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto out;
  }
  sqlite3_bind_int64(st, 1, r->problem_id);
  sqlite3_bind_int64(st, 2, r->device_id);
  bind_text(st, 3, r->spec.prov.toolkit);
  bind_text(st, 4, key);
  sqlite3_bind_int64(st, 5, r->id);
  sqlite3_bind_int64(st, 6, (sqlite3_int64)time(NULL));
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = db_fail(d, rc, "claiming a candidate", err);
    goto out;
  }
  if ((s = tx_commit(d, err))) return s; /* the run's next store is its sign of life */
  *state = DB_CLAIM_GRANTED;
  return RT_OK;
out:
  tx_rollback(d);
  return s;
}

rt_status db_run_release(db_run *r, const char *template_name, const char *config,
                         const char *code_hash, rt_error *err) {
  char key[1024];
  db_result_key(template_name, config, code_hash, key, sizeof key);
  rt_status s = tx_begin(r->d, err);
  if (s) return s;
  sqlite3_stmt *st = cached(r->d, ST_CLAIM_RELEASE, err);
  if (!st) {
    tx_rollback(r->d);
    return err ? err->code : RT_ERR_DB;
  }
  sqlite3_bind_int64(st, 1, r->problem_id);
  sqlite3_bind_int64(st, 2, r->device_id);
  bind_text(st, 3, r->spec.prov.toolkit);
  bind_text(st, 4, key);
  sqlite3_bind_int64(st, 5, r->id);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    s = db_fail(r->d, rc, "releasing a claim", err);
    tx_rollback(r->d);
    return s;
  }
  return tx_commit(r->d, err);
}

void db_run_free(db_run *r) { free(r); }

/* ---- reading ------------------------------------------------------------------------ */

#define ENTRY_SELECT                                                                              \
  "SELECT w.id, r.id, p.family, p.shape, p.dtype, p.layout, p.dims, p.args, v.name, v.sm_count, " \
  "v.cc_major, v.cc_minor, v.driver_version, t.name, t.source_hash, t.manifest_hash, "           \
  "EXISTS(SELECT 1 FROM templates t2 WHERE t2.name=t.name AND t2.id>t.id), w.toolkit, r.config, " \
  "r.timing, r.time_ms, r.spread, r.repetitions, r.verify_error, r.flops, r.diag_limit, "         \
  "r.diag_lever, " WINNER_COLS_W ", w.updated_at, w.cubin_bytes, %s FROM winners w "            \
  "JOIN results r ON r.id=w.result_id JOIN problems p ON p.id=w.problem_id "                     \
  "JOIN devices v ON v.id=w.device_id JOIN templates t ON t.id=w.template_id ORDER BY w.id"

static void read_entry(sqlite3_stmt *st, db_entry *e) {
  int i = 0;
  e->winner_id = sqlite3_column_int64(st, i++);
  e->result_id = sqlite3_column_int64(st, i++);
  col_text(st, i++, e->family, sizeof e->family);
  col_text(st, i++, e->shape, sizeof e->shape);
  col_text(st, i++, e->dtype, sizeof e->dtype);
  col_text(st, i++, e->layout, sizeof e->layout);
  col_text(st, i++, e->dims, sizeof e->dims);
  col_text(st, i++, e->args, sizeof e->args);
  col_text(st, i++, e->device.name, sizeof e->device.name);
  e->device.sm_count = sqlite3_column_int(st, i++);
  e->device.cc_major = sqlite3_column_int(st, i++);
  e->device.cc_minor = sqlite3_column_int(st, i++);
  e->device.driver_version = sqlite3_column_int(st, i++);
  col_text(st, i++, e->template_name, sizeof e->template_name);
  col_text(st, i++, e->source_hash, sizeof e->source_hash);
  col_text(st, i++, e->manifest_hash, sizeof e->manifest_hash);
  e->template_stale = sqlite3_column_int(st, i++);
  col_text(st, i++, e->toolkit, sizeof e->toolkit);
  col_text(st, i++, e->config, sizeof e->config);
  char tk[16];
  col_text(st, i++, tk, sizeof tk);
  int t = timing_kind_parse(tk);
  e->timing = t < 0 ? TIMING_REPLAYED : (timing_kind)t;
  e->time_ms = col_real(st, i++);
  e->spread = col_real(st, i++);
  e->repetitions = sqlite3_column_int(st, i++);
  e->verify_error = col_real(st, i++);
  e->flops = col_real(st, i++);
  col_text(st, i++, e->limit, sizeof e->limit);
  col_text(st, i++, e->lever, sizeof e->lever);
  db_winner *w = &e->launch;
#define WREAD_TEXT(member) col_text(st, i++, w->member, sizeof w->member);
#define WREAD_UINT(member) w->member = (unsigned)sqlite3_column_int64(st, i++);
#define WREAD(col, kind, member) WREAD_##kind(member)
  WINNER_COLUMNS(WREAD, WREAD)
  col_text(st, i++, e->created_at, sizeof e->created_at);
  w->cubin_size = (size_t)sqlite3_column_int64(st, i++);
  w->cubin = NULL;
}

rt_status db_entries(db *d, int with_cubins, db_entry **out, size_t *n, rt_error *err) {
  *out = NULL;
  *n = 0;
  /* One read transaction: the count and the rows come from the same snapshot. */
  int rc = exec_retry(d->h, "BEGIN");
  if (rc != SQLITE_OK) return db_fail(d, rc, "reading winners", err);
  rt_status s = RT_OK;
  sqlite3_stmt *st = prepare(d, "SELECT count(*), coalesce(sum(cubin_bytes),0) FROM winners", err);
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto done;
  }
  rc = sqlite3_step(st);
  long long count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  long long bytes = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW) {
    s = db_fail(d, rc, "counting winners", err);
    goto done;
  }
  if (!with_cubins) bytes = 0;
  size_t head = (size_t)count * sizeof(db_entry);
  char *block = malloc(head + (size_t)bytes + 1);
  if (!block) {
    s = rt_error_set(err, RT_ERR_NOMEM, "out of memory reading %lld winners", count);
    goto done;
  }
  char sql[2048];
  snprintf(sql, sizeof sql, ENTRY_SELECT,
           with_cubins ? "(SELECT c.cubin FROM winner_cubins c WHERE c.winner_id=w.id)" : "NULL");
  if (!(st = prepare(d, sql, err))) {
    free(block);
    s = err ? err->code : RT_ERR_DB;
    goto done;
  }
  db_entry *e = (db_entry *)block;
  char *blobs = block + head;
  size_t used = 0, k = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && k < (size_t)count) {
    memset(&e[k], 0, sizeof e[k]);
    read_entry(st, &e[k]);
    if (with_cubins && e[k].launch.cubin_size) {
      int last = sqlite3_column_count(st) - 1; /* the cubin is the last column */
      const void *b = sqlite3_column_blob(st, last);
      size_t sz = (size_t)sqlite3_column_bytes(st, last);
      if (b && used + sz <= (size_t)bytes) {
        memcpy(blobs + used, b, sz);
        e[k].launch.cubin = blobs + used;
        e[k].launch.cubin_size = sz;
        used += sz;
      }
    }
    k++;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) s = db_fail(d, rc, "reading winners", err);
  sqlite3_finalize(st);
  if (s) {
    free(block);
    goto done;
  }
  *out = e;
  *n = k;
done:
  sqlite3_exec(d->h, "COMMIT", NULL, NULL, NULL);
  return s;
}

rt_status db_winner_cubin(db *d, long long winner_id, void **out, size_t *size, rt_error *err) {
  *out = NULL;
  *size = 0;
  sqlite3_stmt *st = prepare(d, "SELECT cubin FROM winner_cubins WHERE winner_id=?", err);
  if (!st) return err ? err->code : RT_ERR_DB;
  sqlite3_bind_int64(st, 1, winner_id);
  int rc = sqlite3_step(st);
  rt_status s = RT_OK;
  if (rc == SQLITE_ROW && sqlite3_column_bytes(st, 0) > 0) {
    size_t n = (size_t)sqlite3_column_bytes(st, 0);
    const void *b = sqlite3_column_blob(st, 0);
    *out = malloc(n);
    if (!*out) s = rt_error_set(err, RT_ERR_NOMEM, "out of memory reading a cubin");
    else {
      memcpy(*out, b, n);
      *size = n;
    }
  } else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
    s = rt_error_set(err, RT_ERR_NOT_FOUND, "winner %lld has no cubin", winner_id);
    rt_error_locate(err, d->path, NULL, 0, 0);
  } else {
    s = db_fail(d, rc, "reading a cubin", err);
  }
  sqlite3_finalize(st);
  return s;
}

rt_status db_winner_recipe(db *d, long long winner_id, db_recipe *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  sqlite3_stmt *st = prepare(d, "SELECT env, derived, constraints FROM winner_recipes WHERE "
                                "winner_id=?", err);
  if (!st) return err ? err->code : RT_ERR_DB;
  sqlite3_bind_int64(st, 1, winner_id);
  int rc = sqlite3_step(st);
  rt_status s = RT_OK;
  if (rc == SQLITE_ROW) {
    size_t n[3], total = 0;
    for (int i = 0; i < 3; i++) total += (n[i] = (size_t)sqlite3_column_bytes(st, i)) + 1;
    char *block = malloc(total);
    if (!block) {
      s = rt_error_set(err, RT_ERR_NOMEM, "out of memory reading a serving recipe");
    } else {
      char **dst[3] = {&out->env, &out->derived, &out->constraints};
      for (int i = 0; i < 3; i++) {
        const unsigned char *t = sqlite3_column_text(st, i);
        if (n[i]) memcpy(block, t, n[i]);
        block[n[i]] = '\0';
        *dst[i] = block;
        block += n[i] + 1;
      }
    }
  } else if (rc == SQLITE_DONE) {
    s = rt_error_set(err, RT_ERR_NOT_FOUND, "winner %lld has no serving recipe", winner_id);
    rt_error_locate(err, d->path, NULL, 0, 0);
  } else {
    s = db_fail(d, rc, "reading a serving recipe", err);
  }
  sqlite3_finalize(st);
  return s;
}

void db_recipe_free(db_recipe *r) {
  if (!r) return;
  free(r->env); /* one block: env comes first */
  memset(r, 0, sizeof *r);
}

rt_status db_count(db *d, db_counts *c, rt_error *err) {
  memset(c, 0, sizeof *c);
  static const char sql[] =
      "SELECT (SELECT count(*) FROM devices), (SELECT count(*) FROM templates), "
      "(SELECT count(*) FROM problems), (SELECT count(*) FROM runs), "
      "(SELECT count(*) FROM results), (SELECT count(*) FROM winners), "
      "(SELECT count(*) FROM device_ceilings)";
  sqlite3_stmt *st = prepare(d, sql, err);
  if (!st) return err ? err->code : RT_ERR_DB;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    c->devices = sqlite3_column_int64(st, 0);
    c->templates = sqlite3_column_int64(st, 1);
    c->problems = sqlite3_column_int64(st, 2);
    c->runs = sqlite3_column_int64(st, 3);
    c->results = sqlite3_column_int64(st, 4);
    c->winners = sqlite3_column_int64(st, 5);
    c->ceilings = sqlite3_column_int64(st, 6);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? RT_OK : db_fail(d, rc, "counting rows", err);
}

/* ---- runs --------------------------------------------------------------------------- */

rt_status db_runs(db *d, db_run_info **out, size_t *n, rt_error *err) {
  *out = NULL;
  *n = 0;
  static const char sql[] =
      "SELECT u.id, p.family, p.shape, p.dtype, p.layout, v.name, v.sm_count, v.cc_major, "
      "v.cc_minor, v.driver_version, u.toolkit, u.status, u.started_at, coalesce(u.finished_at,''), "
      "u.budget, u.command, "
      "(SELECT count(*) FROM results r WHERE r.run_id=u.id), "
      "(SELECT count(*) FROM results r WHERE r.run_id=u.id AND r.status='OK'), "
      "b.time_ms, b.spread, b.timing, bt.name, b.config, "
      "l.status, lt.name, l.config, l.time_ms, l.spread "
      "FROM runs u JOIN problems p ON p.id=u.problem_id JOIN devices v ON v.id=u.device_id "
      "LEFT JOIN results b ON b.id=(SELECT r.id FROM results r WHERE r.run_id=u.id AND "
      "  r.status='OK' AND r.time_ms IS NOT NULL ORDER BY r.time_ms, r.id LIMIT 1) "
      "LEFT JOIN templates bt ON bt.id=b.template_id "
      "LEFT JOIN results l ON l.id=(SELECT max(r.id) FROM results r WHERE r.run_id=u.id) "
      "LEFT JOIN templates lt ON lt.id=l.template_id "
      "ORDER BY u.started_at, u.id";
  int rc = exec_retry(d->h, "BEGIN");
  if (rc != SQLITE_OK) return db_fail(d, rc, "reading runs", err);
  rt_status s = RT_OK;
  sqlite3_stmt *st = prepare(d, sql, err);
  size_t cap = 0;
  db_run_info *v = NULL;
  if (!st) {
    s = err ? err->code : RT_ERR_DB;
    goto done;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 64;
      db_run_info *g = realloc(v, cap * sizeof *g);
      if (!g) {
        s = rt_error_set(err, RT_ERR_NOMEM, "out of memory reading runs");
        break;
      }
      v = g;
    }
    db_run_info *u = &v[(*n)++];
    memset(u, 0, sizeof *u);
    int i = 0;
    u->id = sqlite3_column_int64(st, i++);
    col_text(st, i++, u->family, sizeof u->family);
    col_text(st, i++, u->shape, sizeof u->shape);
    col_text(st, i++, u->dtype, sizeof u->dtype);
    col_text(st, i++, u->layout, sizeof u->layout);
    col_text(st, i++, u->device.name, sizeof u->device.name);
    u->device.sm_count = sqlite3_column_int(st, i++);
    u->device.cc_major = sqlite3_column_int(st, i++);
    u->device.cc_minor = sqlite3_column_int(st, i++);
    u->device.driver_version = sqlite3_column_int(st, i++);
    col_text(st, i++, u->toolkit, sizeof u->toolkit);
    col_text(st, i++, u->status, sizeof u->status);
    col_text(st, i++, u->started_at, sizeof u->started_at);
    col_text(st, i++, u->finished_at, sizeof u->finished_at);
    u->budget = sqlite3_column_int64(st, i++);
    col_text(st, i++, u->command, sizeof u->command);
    u->results = sqlite3_column_int64(st, i++);
    u->ok = sqlite3_column_int64(st, i++);
    u->best_ms = col_real(st, i++);
    u->best_spread = col_real(st, i++);
    char tk[16];
    col_text(st, i++, tk, sizeof tk);
    int t = timing_kind_parse(tk);
    u->best_timing = t < 0 ? TIMING_PREDICTED : (timing_kind)t;
    col_text(st, i++, u->best_template, sizeof u->best_template);
    col_text(st, i++, u->best_config, sizeof u->best_config);
    col_text(st, i++, u->last_status, sizeof u->last_status);
    col_text(st, i++, u->last_template, sizeof u->last_template);
    col_text(st, i++, u->last_config, sizeof u->last_config);
    u->last_ms = col_real(st, i++);
    u->last_spread = col_real(st, i++);
  }
  if (!s && rc != SQLITE_DONE) s = db_fail(d, rc, "reading runs", err);
  sqlite3_finalize(st);
done:
  sqlite3_exec(d->h, "COMMIT", NULL, NULL, NULL);
  if (s) {
    free(v);
    *n = 0;
    return s;
  }
  *out = v;
  return RT_OK;
}

rt_status db_run_set_status(db *d, long long run_id, const char *status, rt_error *err) {
  if (!status || (strcmp(status, "done") && strcmp(status, "failed") && strcmp(status, "interrupted")))
    return rt_error_set(err, RT_ERR_INVALID, "run status '%s' is not done, failed or interrupted",
                        status ? status : "");
  if (!d->writable)
    return rt_error_set(err, RT_ERR_USAGE, "%s is open read-only; cannot change run %lld", d->path,
                        run_id);
  rt_status s = tx_begin(d, err);
  if (s) return s;
  sqlite3_stmt *st = prepare(d, "UPDATE runs SET status=?, finished_at=coalesce(finished_at,?) "
                                "WHERE id=?", err);
  if (!st) {
    tx_rollback(d);
    return err ? err->code : RT_ERR_DB;
  }
  char at[32];
  now_iso(at, sizeof at);
  bind_text(st, 1, status);
  bind_text(st, 2, at);
  sqlite3_bind_int64(st, 3, run_id);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = db_fail(d, rc, "changing a run's status", err);
    tx_rollback(d);
    return s;
  }
  if (sqlite3_changes(d->h) != 1) {
    tx_rollback(d);
    rt_error_locate(err, d->path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_NOT_FOUND, "no run %lld in the database", run_id);
  }
  return tx_commit(d, err);
}

/* Parses "M=4096,N=4096,K=4096" into a problem's dims. */
static void dims_parse(const char *text, problem *p) {
  p->ndims = 0;
  const char *s = text;
  while (*s && p->ndims < PROBLEM_MAX_DIMS) {
    const char *eq = strchr(s, '=');
    if (!eq) break;
    size_t len = (size_t)(eq - s);
    if (len >= sizeof p->dim_names[0]) len = sizeof p->dim_names[0] - 1;
    memcpy(p->dim_names[p->ndims], s, len);
    p->dim_names[p->ndims][len] = '\0';
    char *end;
    p->dims[p->ndims++] = strtoll(eq + 1, &end, 10);
    s = *end == ',' ? end + 1 : end;
    if (end == eq + 1) break;
  }
}

rt_status db_each_result(db *d, db_result_fn fn, void *ctx, rt_error *err) {
  sqlite3_stmt *st = prepare(
      d,
      "SELECT p.family, p.shape, p.dtype, p.layout, p.dims, p.args, v.name, v.sm_count, v.cc_major, "
      "v.cc_minor, v.driver_version, r.toolkit, u.arch, u.strategy, u.seed, u.budget, u.command, "
      "t.name, t.source_hash, t.manifest_hash, " RESULT_COLS_R " FROM results r "
      "JOIN problems p ON p.id=r.problem_id JOIN devices v ON v.id=r.device_id "
      "JOIN templates t ON t.id=r.template_id JOIN runs u ON u.id=r.run_id ORDER BY r.id",
      err);
  if (!st) return err ? err->code : RT_ERR_DB;
  rt_status s = RT_OK;
  int rc;
  db_run_spec spec;
  candidate_result c;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    memset(&spec, 0, sizeof spec);
    memset(&c, 0, sizeof c);
    int i = 0;
    col_text(st, i++, spec.prob.family, sizeof spec.prob.family);
    col_text(st, i++, spec.prob.shape, sizeof spec.prob.shape);
    col_text(st, i++, spec.prob.dtype, sizeof spec.prob.dtype);
    col_text(st, i++, spec.prob.layout, sizeof spec.prob.layout);
    char dims[256];
    col_text(st, i++, dims, sizeof dims);
    dims_parse(dims, &spec.prob);
    col_text(st, i++, spec.prob.args, sizeof spec.prob.args);
    col_text(st, i++, spec.prov.device.name, sizeof spec.prov.device.name);
    spec.prov.device.sm_count = sqlite3_column_int(st, i++);
    spec.prov.device.cc_major = sqlite3_column_int(st, i++);
    spec.prov.device.cc_minor = sqlite3_column_int(st, i++);
    spec.prov.device.driver_version = sqlite3_column_int(st, i++);
    col_text(st, i++, spec.prov.toolkit, sizeof spec.prov.toolkit);
    col_text(st, i++, spec.prov.arch, sizeof spec.prov.arch);
    col_text(st, i++, spec.strategy, sizeof spec.strategy);
    spec.seed = (unsigned long long)sqlite3_column_int64(st, i++);
    spec.budget = sqlite3_column_int64(st, i++);
    col_text(st, i++, spec.command, sizeof spec.command);
    char src[72], man[72];
    col_text(st, i++, c.template_name, sizeof c.template_name);
    col_text(st, i++, src, sizeof src);
    col_text(st, i++, man, sizeof man);
    read_result(st, i, &c);
    copy(c.device_name, sizeof c.device_name, spec.prov.device.name);
    if ((s = fn(ctx, &spec, c.template_name, src, man, &c, err))) break;
  }
  if (!s && rc != SQLITE_DONE) s = db_fail(d, rc, "reading results", err);
  sqlite3_finalize(st);
  return s;
}

/* ---- merge -------------------------------------------------------------------------- */

/* A run's statuses in the order they can follow each other: a merge keeps the later one, so
 * the order files are merged in does not matter. */
#define MERGE_STATUS_RANK(col) \
  "(CASE " col " WHEN 'running' THEN 0 WHEN 'done' THEN 1 WHEN 'failed' THEN 2 ELSE 3 END)"

static const char merge_sql[] =
    "INSERT OR IGNORE INTO main.devices(name,sm_count,cc_major,cc_minor,driver_version) "
    "  SELECT name,sm_count,cc_major,cc_minor,driver_version FROM src.devices;\n"
    "INSERT OR IGNORE INTO main.templates(name,family,source_hash,manifest_hash) "
    "  SELECT name,family,source_hash,manifest_hash FROM src.templates ORDER BY id;\n"
    "INSERT OR IGNORE INTO main.problems(family,shape,dtype,layout,dims,args) "
    "  SELECT family,shape,dtype,layout,dims,args FROM src.problems;\n"
    "DROP TABLE IF EXISTS temp.map_dev; DROP TABLE IF EXISTS temp.map_tpl;\n"
    "DROP TABLE IF EXISTS temp.map_prob; DROP TABLE IF EXISTS temp.map_run;\n"
    "DROP TABLE IF EXISTS temp.map_res;\n"
    "CREATE TEMP TABLE map_dev AS SELECT s.id AS sid, m.id AS mid FROM src.devices s "
    "  JOIN main.devices m USING(name,sm_count,cc_major,cc_minor,driver_version);\n"
    "CREATE TEMP TABLE map_tpl AS SELECT s.id AS sid, m.id AS mid FROM src.templates s "
    "  JOIN main.templates m USING(name,source_hash,manifest_hash);\n"
    "CREATE TEMP TABLE map_prob AS SELECT s.id AS sid, m.id AS mid FROM src.problems s "
    "  JOIN main.problems m USING(family,shape,dtype,layout);\n"
    "INSERT INTO main.runs(uid,problem_id,device_id,toolkit,arch,strategy,seed,budget,"
    "  rooftune_version,command,started_at,finished_at,status) "
    "  SELECT r.uid,mp.mid,md.mid,r.toolkit,r.arch,r.strategy,r.seed,r.budget,r.rooftune_version,"
    "  r.command,r.started_at,r.finished_at,r.status FROM src.runs r "
    "  JOIN map_prob mp ON mp.sid=r.problem_id JOIN map_dev md ON md.sid=r.device_id WHERE 1 "
    "  ORDER BY r.id ON CONFLICT(uid) DO UPDATE SET status=excluded.status,"
    "  finished_at=excluded.finished_at WHERE " MERGE_STATUS_RANK("excluded.status") " > "
    MERGE_STATUS_RANK("runs.status") ";\n"
    "CREATE TEMP TABLE map_run AS SELECT s.id AS sid, m.id AS mid FROM src.runs s "
    "  JOIN main.runs m USING(uid);\n";

static const char merge_results_sql[] =
    "INSERT OR IGNORE INTO main.results(uid,run_id,problem_id,device_id,template_id,toolkit,"
    "created_at," RESULT_COLS ") SELECT r.uid,mr.mid,mp.mid,md.mid,mt.mid,r.toolkit,r.created_at,"
    RESULT_COLS_R " FROM src.results r JOIN map_run mr ON mr.sid=r.run_id "
    "JOIN map_prob mp ON mp.sid=r.problem_id JOIN map_dev md ON md.sid=r.device_id "
    "JOIN map_tpl mt ON mt.sid=r.template_id ORDER BY r.id";

static const char merge_winners_sql[] =
    "CREATE TEMP TABLE map_res AS SELECT s.id AS sid, m.id AS mid FROM src.results s "
    "  JOIN main.results m USING(uid);\n"
    "INSERT INTO main.winners(problem_id,device_id,template_id,toolkit,result_id,cubin_bytes,"
    WINNER_COLS ",updated_at) "
    "  SELECT mp.mid,md.mid,mt.mid,w.toolkit,mr.mid,w.cubin_bytes," WINNER_COLS_W ",w.updated_at "
    "  FROM src.winners w "
    "  JOIN map_prob mp ON mp.sid=w.problem_id JOIN map_dev md ON md.sid=w.device_id "
    "  JOIN map_tpl mt ON mt.sid=w.template_id JOIN map_res mr ON mr.sid=w.result_id WHERE 1 "
    "  ON CONFLICT(problem_id,device_id,template_id,toolkit) DO UPDATE SET "
    "  result_id=excluded.result_id,cubin_bytes=excluded.cubin_bytes," WINNER_EXCLUDED ","
    "  updated_at=excluded.updated_at "
    "  WHERE (SELECT time_ms, uid FROM main.results WHERE id=excluded.result_id) < "
    "        (SELECT time_ms, uid FROM main.results WHERE id=winners.result_id);\n"
    /* the winners that now hold a result from src take src's cubin (or none) */
    "DELETE FROM main.winner_cubins WHERE winner_id IN (SELECT mw.id FROM main.winners mw "
    "  JOIN map_res mr ON mr.mid=mw.result_id JOIN src.winners sw ON sw.result_id=mr.sid);\n"
    "INSERT INTO main.winner_cubins(winner_id,cubin) SELECT mw.id, c.cubin FROM main.winners mw "
    "  JOIN map_res mr ON mr.mid=mw.result_id JOIN src.winners sw ON sw.result_id=mr.sid "
    "  JOIN src.winner_cubins c ON c.winner_id=sw.id;\n"
    /* and src's serving recipe (or none) */
    "DELETE FROM main.winner_recipes WHERE winner_id IN (SELECT mw.id FROM main.winners mw "
    "  JOIN map_res mr ON mr.mid=mw.result_id JOIN src.winners sw ON sw.result_id=mr.sid);\n"
    "INSERT INTO main.winner_recipes(winner_id,env,derived,constraints) SELECT mw.id, c.env, "
    "  c.derived, c.constraints FROM main.winners mw JOIN map_res mr ON mr.mid=mw.result_id "
    "  JOIN src.winners sw ON sw.result_id=mr.sid JOIN src.winner_recipes c ON c.winner_id=sw.id;\n"
    "INSERT INTO main.device_ceilings(device_id,kind,dtype,value,measured_at) "
    "  SELECT md.mid,c.kind,c.dtype,c.value,c.measured_at FROM src.device_ceilings c "
    "  JOIN map_dev md ON md.sid=c.device_id WHERE 1 "
    "  ON CONFLICT(device_id,kind,dtype) DO UPDATE SET value=excluded.value,"
    "  measured_at=excluded.measured_at WHERE excluded.measured_at > device_ceilings.measured_at;\n"
    "DROP TABLE temp.map_dev; DROP TABLE temp.map_tpl; DROP TABLE temp.map_prob;\n"
    "DROP TABLE temp.map_run; DROP TABLE temp.map_res;\n";

rt_status db_merge(db *d, const char *src_path, long long *added, rt_error *err) {
  if (added) *added = 0;
  if (!d->writable)
    return rt_error_set(err, RT_ERR_USAGE, "%s is open read-only; cannot merge into it", d->path);
  /* The same file under any name: attached to itself the merge would wait for its own lock. */
  struct stat sa, sb;
  if (src_path && stat(src_path, &sb) == 0 && stat(d->path, &sa) == 0 && sa.st_dev == sb.st_dev &&
      sa.st_ino == sb.st_ino) {
    rt_error_locate(err, src_path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_USAGE, "is the database being merged into (%s): a database "
                        "cannot be merged into itself", d->path);
  }
  /* Identify the source first: a foreign or newer file gets its own clear error, and so does a
   * damaged one (found here, a damaged page would be reported against the file merged into). */
  db *src = NULL;
  rt_status s = db_open(src_path, DB_READONLY, &src, err);
  if (s) return s;
  {
    sqlite3_stmt *qc = prepare(src, "PRAGMA quick_check(1)", err);
    if (!qc) s = err ? err->code : RT_ERR_DB;
    else {
      int rc = sqlite3_step(qc);
      const char *t = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(qc, 0) : NULL;
      if (rc == SQLITE_ROW && t && strcmp(t, "ok") != 0) {
        s = rt_error_set(err, RT_ERR_DB, "the database to merge is damaged (%s); run 'rooftune db "
                         "check --db %s' and merge a backup instead", t, src_path);
        rt_error_locate(err, src_path, NULL, 0, 0);
      } else if (rc != SQLITE_ROW) {
        s = db_fail(src, rc, "checking the database to merge", err);
      }
      sqlite3_finalize(qc);
    }
  }
  db_close(src);
  if (s) return s;
  sqlite3_stmt *st = prepare(d, "ATTACH DATABASE ? AS src", err);
  if (!st) return err ? err->code : RT_ERR_DB;
  bind_text(st, 1, src_path);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_fail_at(d->h, src_path, rc, "attaching", err);
  if ((s = tx_begin(d, err))) goto detach;
  rc = sqlite3_exec(d->h, merge_sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    s = db_fail(d, rc, "merging runs", err);
    goto rollback;
  }
  rc = sqlite3_exec(d->h, merge_results_sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    s = db_fail(d, rc, "merging results", err);
    goto rollback;
  }
  if (added) *added = sqlite3_changes(d->h);
  rc = sqlite3_exec(d->h, merge_winners_sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    s = db_fail(d, rc, "merging winners", err);
    goto rollback;
  }
  s = tx_commit(d, err);
  goto detach;
rollback:
  tx_rollback(d);
detach:
  exec_retry(d->h, "DETACH DATABASE src");
  return s;
}

/* ---- check -------------------------------------------------------------------------- */

typedef struct report {
  char *buf;     /* where lines go (may be NULL) */
  size_t size;   /* its size */
  size_t used;   /* bytes written */
  int problems;  /* lines that are problems */
} report;

static void report_line(report *r, int is_problem, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report_line(report *r, int is_problem, const char *fmt, ...) {
  if (is_problem) r->problems++;
  if (!r->buf || r->used + 1 >= r->size) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(r->buf + r->used, r->size - r->used, fmt, ap);
  va_end(ap);
  if (w < 0) return;
  r->used += (size_t)w;
  if (r->used >= r->size) r->used = r->size - 1;
  if (r->used + 1 < r->size) {
    r->buf[r->used++] = '\n';
    r->buf[r->used] = '\0';
  }
}

/* Runs a query whose rows are problems; each row's first column is the text of one. */
static rt_status check_rows(db *d, report *rep, int is_problem, const char *sql, const char *ok,
                            rt_error *err) {
  sqlite3_stmt *st = prepare(d, sql, err);
  if (!st) return err ? err->code : RT_ERR_DB;
  int rc, rows = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    if (ok && t && strcmp(t, ok) == 0) continue;
    rows++;
    if (rows <= 20) report_line(rep, is_problem, "%s", t ? t : "(null)");
    else rep->problems += is_problem;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_fail(d, rc, "checking", err);
  if (rows > 20) report_line(rep, 0, "... and %d more like it", rows - 20);
  return RT_OK;
}

/* 1 when text is "NAME=N,NAME=N,..." with identifier names of at most 7 characters,
 * non-negative N (flags such as CAUSAL=0) and at most PROBLEM_MAX_DIMS of them, or "" (a
 * replayed file's problem): what db_dims_text writes. */
static int dims_valid(const char *t) {
  if (!t) return 0;
  int n = 0;
  while (*t) {
    int len = 0;
    if (!((*t >= 'A' && *t <= 'Z') || (*t >= 'a' && *t <= 'z') || *t == '_')) return 0;
    while ((*t >= 'A' && *t <= 'Z') || (*t >= 'a' && *t <= 'z') || (*t >= '0' && *t <= '9') || *t == '_') t++, len++;
    if (len > 7 || *t++ != '=') return 0;
    if (*t < '0' || *t > '9') return 0;
    long long v = 0;
    while (*t >= '0' && *t <= '9') {
      if (v > (LLONG_MAX - 9) / 10) return 0;
      v = v * 10 + (*t++ - '0');
    }
    if (v < 0 || ++n > PROBLEM_MAX_DIMS) return 0; /* 0 is a flag's value (CAUSAL=0) */
    if (*t == ',') t++;
    else if (*t) return 0;
  }
  return 1;
}

rt_status db_check(db *d, char *out, size_t size, int *problems, rt_error *err) {
  report rep = {out, size, 0, 0};
  if (out && size) out[0] = '\0';
  *problems = 0;
  rt_status s;
  if ((s = check_rows(d, &rep, 1, "PRAGMA integrity_check", "ok", err))) return s;
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'schema: table ' || column1 || ' is missing' FROM (VALUES "
                      "('devices'),('device_ceilings'),('templates'),('problems'),('runs'),"
                      "('results'),('winners'),('winner_cubins'),('run_owners'),('claims')) WHERE column1 NOT IN (SELECT name FROM "
                      "sqlite_master WHERE type='table')", NULL, err)))
    return s;
  if (!rep.problems &&
      (s = check_rows(d, &rep, 1,
                      "SELECT 'schema: results has no column ' || value || ' (the columns this "
                      "rooftune stores)' FROM json_each('[\"' || replace('" RESULT_COLS "', ',', "
                      "'\",\"') || '\"]') WHERE value NOT IN (SELECT name FROM "
                      "pragma_table_info('results'))",
                      NULL, err)))
    return s;
  if (!rep.problems &&
      (s = check_rows(d, &rep, 1,
                      "SELECT 'schema: winners has no column ' || value || ' (the columns this "
                      "rooftune stores)' FROM json_each('[\"' || replace('" WINNER_COLS "', ',', "
                      "'\",\"') || '\"]') WHERE value NOT IN (SELECT name FROM "
                      "pragma_table_info('winners'))",
                      NULL, err)))
    return s;
  if (rep.problems) { /* the other checks read those tables */
    *problems = rep.problems;
    return RT_OK;
  }
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'foreign key: ' || \"table\" || ' row ' || rowid || ' points at a "
                      "missing ' || parent FROM pragma_foreign_key_check", NULL, err)))
    return s;
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'winner ' || w.id || ': its result ' || w.result_id || ' did not "
                      "succeed (' || r.status || ')' FROM winners w JOIN results r ON "
                      "r.id=w.result_id WHERE r.status<>'OK' OR r.time_ms IS NULL", NULL, err)))
    return s;
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'winner ' || w.id || ': its result ' || r.id || ' belongs to "
                      "another problem, device, template or toolkit' FROM winners w JOIN results "
                      "r ON r.id=w.result_id WHERE r.problem_id<>w.problem_id OR "
                      "r.device_id<>w.device_id OR r.template_id<>w.template_id OR "
                      "r.toolkit<>w.toolkit", NULL, err)))
    return s;
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'winner ' || w.id || ' (' || t.name || ', measured): no cubin and "
                      "no library algorithm, so the runtime cannot launch it' FROM winners w JOIN "
                      "results r ON r.id=w.result_id JOIN templates t ON t.id=w.template_id WHERE "
                      "r.timing='measured' AND w.cubin_bytes=0 AND w.library_algo=''", NULL,
                      err)))
    return s;
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'winner ' || w.id || ': says ' || w.cubin_bytes || ' cubin bytes, "
                      "holds ' || coalesce(length(c.cubin),0) FROM winners w LEFT JOIN "
                      "winner_cubins c ON c.winner_id=w.id WHERE w.cubin_bytes <> "
                      "coalesce(length(c.cubin),0)", NULL, err)))
    return s;
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'cubin of a missing winner ' || winner_id FROM winner_cubins WHERE "
                      "winner_id NOT IN (SELECT id FROM winners)", NULL, err)))
    return s;
  /* foreign triggers: rooftune creates none, and one can change or delete every new result */
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'schema: trigger ' || name || ' on ' || tbl_name || ' is not one "
                      "rooftune creates (it can change or delete what is stored); remove it with "
                      "DROP TRIGGER \"' || replace(name, '\"', '\"\"') || '\"' FROM sqlite_master "
                      "WHERE type='trigger'", NULL, err)))
    return s;
  /* the values: times are numbers of milliseconds, a success has a positive one */
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'result ' || id || ': ' || c || ' is ' || typeof(v) || ' ' || "
                      "quote(v) || ', not a number' FROM (SELECT id, 'time_ms' c, time_ms v FROM "
                      "results UNION ALL SELECT id, 'spread', spread FROM results UNION ALL SELECT "
                      "id, 'flops', flops FROM results UNION ALL SELECT id, 'dram_bytes', dram_bytes "
                      "FROM results) WHERE typeof(v) NOT IN ('real', 'integer', 'null') ORDER BY id",
                      NULL, err)))
    return s;
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'result ' || id || ' (' || status || '): time ' || coalesce(time_ms, "
                      "'NULL') || ' ms is not a time (a positive number of milliseconds)' FROM "
                      "results WHERE typeof(time_ms) IN ('real', 'integer') AND (time_ms <= 0 OR "
                      "time_ms >= 1e20) OR (status = 'OK' AND typeof(time_ms) = 'null') ORDER BY id",
                      NULL, err)))
    return s;
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'result ' || id || ': ' || c || ' ' || v || ' is negative' FROM (SELECT "
                      "id, 'spread' c, spread v FROM results UNION ALL SELECT id, 'repetitions', "
                      "repetitions FROM results UNION ALL SELECT id, 'flops', flops FROM results "
                      "UNION ALL SELECT id, 'dram_bytes', dram_bytes FROM results) WHERE "
                      "typeof(v) IN ('real', 'integer') AND v < 0 ORDER BY id", NULL, err)))
    return s;
  {
    /* statuses are names of rooftune's status table */
    char sql[2048];
    size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT 'result ' || id || ': status ' || "
                                "quote(status) || ' is not a status rooftune writes' FROM results "
                                "WHERE status NOT IN (");
    for (int i = 0; i < RT_STATUS_COUNT && n < sizeof sql; i++)
      n += (size_t)snprintf(sql + n, sizeof sql - n, "%s'%s'", i ? "," : "", rt_status_name(i));
    snprintf(sql + n, n < sizeof sql ? sizeof sql - n : 0, ") ORDER BY id");
    if ((s = check_rows(d, &rep, 1, sql, NULL, err))) return s;
  }
  /* the texts fit what rooftune reads them into (a longer one would be cut on reading), and a
   * problem's shape and dimensions are what a family writes */
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'problem ' || id || ': ' || what FROM (SELECT id, CASE WHEN "
                      "length(family) NOT BETWEEN 1 AND 15 THEN 'family ' || quote(family) || ' is "
                      "empty or longer than 15 characters' WHEN length(dtype) NOT BETWEEN 1 AND 7 THEN "
                      "'dtype ' || quote(dtype) || ' is empty or longer than 7 characters' WHEN "
                      "length(layout) > 7 THEN 'layout ' || quote(layout) || ' is longer than 7 "
                      "characters' WHEN length(shape) NOT BETWEEN 1 AND 63 THEN 'shape ' || "
                      "quote(shape) || ' is empty or longer than 63 characters' WHEN length(dims) > "
                      "255 THEN 'dims are longer than 255 characters' END AS what FROM problems) "
                      "WHERE what IS NOT NULL ORDER BY id", NULL, err)))
    return s;
  {
    sqlite3_stmt *st = prepare(d, "SELECT id, dims FROM problems ORDER BY id", err);
    if (!st) return err ? err->code : RT_ERR_DB;
    int rc, bad = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      const char *t = (const char *)sqlite3_column_text(st, 1);
      if (dims_valid(t)) continue;
      if (++bad <= 20)
        report_line(&rep, 1, "problem %lld: dims %.100s are not NAME=N,... with whole N >= 0",
                    (long long)sqlite3_column_int64(st, 0), t ? t : "NULL");
      else
        rep.problems++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_fail(d, rc, "checking", err);
  }
  if ((s = check_rows(d, &rep, 1,
                      "SELECT 'result ' || id || ': its configuration is ' || length(config) || ' "
                      "characters, more than the 767 rooftune reads' FROM results WHERE "
                      "length(config) > 767 UNION ALL SELECT 'template ' || id || ': its name is "
                      "empty or longer than 63 characters' FROM templates WHERE length(name) NOT "
                      "BETWEEN 1 AND 63 UNION ALL SELECT 'device ' || id || ': its name is empty or "
                      "longer than 127 characters' FROM devices WHERE length(name) NOT BETWEEN 1 AND "
                      "127", NULL, err)))
    return s;
  if ((s = db_check_texts(d->h, rep.buf, rep.size, &rep.used, &rep.problems, err))) return s;
  if ((s = check_rows(d, &rep, 0,
                      "SELECT 'note: run ' || id || ' (started ' || started_at || ') never "
                      "finished: killed or still running; its committed results are kept' FROM "
                      "runs WHERE status='running'", NULL, err)))
    return s;
  *problems = rep.problems;
  return RT_OK;
}

/* ---- nearest shape ------------------------------------------------------------------ */

double db_shape_distance(const char *dims_a, const char *dims_b) {
  problem a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  dims_parse(dims_a, &a);
  dims_parse(dims_b, &b);
  if (a.ndims == 0 || b.ndims == 0) return -1;
  double sum = 0;
  /* Every name of a, then the names only b has; a missing dimension counts as 1. */
  for (int i = 0; i < a.ndims; i++) {
    double vb = 1;
    for (int j = 0; j < b.ndims; j++)
      if (strcmp(a.dim_names[i], b.dim_names[j]) == 0) vb = (double)b.dims[j];
    double va = (double)a.dims[i];
    if (va < 1) va = 1;
    if (vb < 1) vb = 1;
    double dl = log(va) - log(vb);
    sum += dl * dl;
  }
  for (int j = 0; j < b.ndims; j++) {
    int in_a = 0;
    for (int i = 0; i < a.ndims; i++)
      if (strcmp(a.dim_names[i], b.dim_names[j]) == 0) in_a = 1;
    if (!in_a && b.dims[j] > 1) {
      double dl = log((double)b.dims[j]);
      sum += dl * dl;
    }
  }
  return sqrt(sum);
}
