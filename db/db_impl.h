/* db_impl.h — private to the database's files, not part of db.h's interface: the handles, the
 * column lists generated from the column tables, and the one statement helper every query goes
 * through.
 *
 *   db_sql.c     the statement helper, transactions, SQLite errors as rt_errors, reading a
 *                result row (shared by everything below)
 *   db_open.c    opening and identifying the file, the schema and its migrations
 *   db_read.c    winners with their cubins and recipes, runs, counts, every result, ceilings
 *                and calibrations: what readers and librooftune need
 *   db_run.c     recording a run: templates, results, resume, winners, ceilings, calibrations
 *   db_claim.c   which process owns a run, dead runs, claims between concurrent tuners
 *   db_merge.c   merging another database file
 *   db_check.c   `db check`
 *
 * librooftune links db_sql.c, db_open.c and db_read.c only (CMakeLists.txt, RT_RUNTIME_BELOW).
 *
 * A query: db_stmt() prepares SQL and binds its parameters from a list of types, the caller
 * steps it and reads its columns, db_stmt_end() finalizes it (a cached statement is reset) and
 * turns a failed step into an error that says what was being done.  db_exec() is all three for
 * a statement without rows.  Writers wrap theirs in db_tx_begin() ... db_tx_end(). */
#ifndef ROOFTUNE_DB_IMPL_H
#define ROOFTUNE_DB_IMPL_H

#include <sqlite3.h>
#include <stdarg.h>

#include "db/db.h"
#include "core/util.h"

/* How long a writer keeps retrying a busy database before it reports it (ms).  SQLite's own
 * busy handler waits DB_BUSY_MS per attempt; we retry whole transactions up to DB_RETRY_MS. */
#define DB_BUSY_MS  5000
#define DB_RETRY_MS 120000

/* The hot statements of a run, prepared once per connection (db_run.c). */
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
  sqlite3 *h;                 /* the connection */
  char path[1024];            /* as given */
  int writable;               /* opened with DB_CREATE */
  int version;                /* user_version */
  sqlite3_stmt *st[ST_COUNT]; /* lazily prepared (db_stmt_cached) */
};

typedef struct run_template {
  char name[64]; /* template name */
  long long id;  /* templates.id */
} run_template;

struct db_run {
  db *d;                 /* the database */
  long long id;          /* runs.id */
  long long problem_id;  /* problems.id */
  long long device_id;   /* devices.id */
  db_run_spec spec;      /* as begun */
  run_template tmpl[64]; /* declared templates (and library ones met on the way) */
  int ntmpl;             /* entries used */
};

/* The result columns (RESULT_COLUMNS of core/result.h), in the order db_bind_result()
 * and db_read_result() use: "config,status,...", the same with "r." in front, and the
 * placeholders. */
#define COL_FIRST(col, json, kind, member, group)   #col
#define COL_REST(col, json, kind, member, group)    "," #col
#define COL_R_FIRST(col, json, kind, member, group) "r." #col
#define COL_R_REST(col, json, kind, member, group)  ",r." #col
#define COL_Q_FIRST(col, json, kind, member, group) "?"
#define COL_Q_REST(col, json, kind, member, group)  ",?"
#define RESULT_COLS                                 RESULT_COLUMNS(COL_FIRST, COL_REST)
#define RESULT_COLS_R                               RESULT_COLUMNS(COL_R_FIRST, COL_R_REST)
#define RESULT_QMARKS                               RESULT_COLUMNS(COL_Q_FIRST, COL_Q_REST)

/* The winner's launch columns, each once: SQL column, kind (TEXT or UINT) and the db_winner
 * member it holds.  They generate the column lists of storing, reading and merging a winner,
 * its binding and reading, and db check's list of the columns this rooftune stores. */
#define WINNER_COLUMNS(FIRST, REST)      \
  FIRST(entry, TEXT, entry)              \
  REST(arch, TEXT, arch)                 \
  REST(grid_x, TEXT, grid[0])            \
  REST(grid_y, TEXT, grid[1])            \
  REST(grid_z, TEXT, grid[2])            \
  REST(block_x, TEXT, block[0])          \
  REST(block_y, TEXT, block[1])          \
  REST(block_z, TEXT, block[2])          \
  REST(smem, TEXT, smem)                 \
  REST(grid_vx, UINT, grid_v[0])         \
  REST(grid_vy, UINT, grid_v[1])         \
  REST(grid_vz, UINT, grid_v[2])         \
  REST(block_vx, UINT, block_v[0])       \
  REST(block_vy, UINT, block_v[1])       \
  REST(block_vz, UINT, block_v[2])       \
  REST(smem_v, UINT, smem_v)             \
  REST(vars, TEXT, vars)                 \
  REST(library_algo, TEXT, library_algo) \
  REST(cubin_sha256, TEXT, cubin_sha256)
#define WCOL_FIRST(col, kind, member)   #col
#define WCOL_REST(col, kind, member)    "," #col
#define WCOL_W_FIRST(col, kind, member) "w." #col
#define WCOL_W_REST(col, kind, member)  ",w." #col
#define WCOL_Q_FIRST(col, kind, member) "?"
#define WCOL_Q_REST(col, kind, member)  ",?"
#define WCOL_X_FIRST(col, kind, member) #col "=excluded." #col
#define WCOL_X_REST(col, kind, member)  "," #col "=excluded." #col
#define WINNER_COLS                     WINNER_COLUMNS(WCOL_FIRST, WCOL_REST)
#define WINNER_COLS_W                   WINNER_COLUMNS(WCOL_W_FIRST, WCOL_W_REST)
#define WINNER_QMARKS                   WINNER_COLUMNS(WCOL_Q_FIRST, WCOL_Q_REST)
#define WINNER_EXCLUDED                 WINNER_COLUMNS(WCOL_X_FIRST, WCOL_X_REST)

/* ---- db_sql.c: the statement helper ------------------------------------------------- */

/* Prepares SQL into *out and binds its parameters 1, 2, ... from the arguments after TYPES, one
 * letter each: i int, I long long, t text (const char *, NULL binds ""), r double (NaN and
 * infinities bind NULL), d double as it is, n NULL (no argument), b blob (const void *, then
 * size_t; NULL binds NULL).  A statement that does not prepare is "preparing a statement". */
rt_status db_stmt(db *d, sqlite3_stmt **out, rt_error *err, const char *sql, const char *types,
                  ...);
/* The same for cached statement WHICH (ST_*, db_run.c), prepared once per connection. */
rt_status db_stmt_cached(db *d, int which, sqlite3_stmt **out, rt_error *err, const char *types,
                         ...);
/* Binds parameters 1, 2, ... of ST from AP as TYPES says (what db_stmt does after preparing);
 * RT_ERR_INTERNAL for a letter it does not know. */
rt_status db_bindv(sqlite3_stmt *st, rt_error *err, const char *types, va_list ap);
/* Ends a statement: finalizes it (resets a cached one) and returns RT_OK when its last step,
 * rc, was SQLITE_DONE or SQLITE_ROW, else the failure said as "WHAT". */
rt_status db_stmt_end(db *d, sqlite3_stmt *st, int rc, const char *what, rt_error *err);
/* db_stmt, one step, db_stmt_end: a statement without rows. */
rt_status db_exec(db *d, rt_error *err, const char *what, const char *sql, const char *types, ...);
/* Steps ST (db_stmt) once and ends it: *out the first column of its row; *found (may be NULL)
 * tells whether a row came back.  A failure is "reading". */
rt_status db_query_int(db *d, sqlite3_stmt *st, long long *out, int *found, rt_error *err);

/* Runs SQL without results, retrying while the database is busy (for statements outside a
 * transaction); SQLite's code. */
int db_exec_retry(sqlite3 *h, const char *sql);
/* Registers rooftune's SQL functions on h (rooftune_sha256(BLOB), which the schema's migrations
 * and the checks use): every handle rooftune opens, the expected schema's too.  A SQLite code. */
int db_register_functions(sqlite3 *h);
/* BEGIN IMMEDIATE (retried while busy). */
rt_status db_tx_begin(db *d, rt_error *err);
/* Ends what db_tx_begin began: COMMIT when s is RT_OK, else ROLLBACK; returns s, or the
 * commit's failure. */
rt_status db_tx_end(db *d, rt_status s, rt_error *err);
/* ROLLBACK when a transaction is open. */
void db_tx_rollback(db *d);

/* An SQLite failure as an rt_error that names the file and says what to do. */
rt_status db_fail_at(sqlite3 *h, const char *path, int rc, const char *what, rt_error *err);
rt_status db_fail(db *d, int rc, const char *what, rt_error *err);

/* Now as ISO 8601 UTC ("2025-01-31T12:00:00Z"). */
void db_now_iso(char *buf, size_t size);
/* Column i as text into dst (NULL = ""), and as a double (NULL = NaN). */
void db_col_text(sqlite3_stmt *st, int i, char *dst, size_t size);
double db_col_real(sqlite3_stmt *st, int i);
/* Reads the RESULT_COLUMNS of a row into c, starting at column i. */
void db_read_result(sqlite3_stmt *st, int i, candidate_result *c);

/* ---- db_claim.c: what starting a run needs of the owners ------------------------------ */

/* Inside a transaction: this process becomes the owner of run RUN_ID. */
rt_status db_run_own(db *d, long long run_id, rt_error *err);
/* Inside a transaction: runs still "running" whose owner process is gone become "interrupted"
 * (all but SELF). */
rt_status db_reap_dead_runs(db *d, long long self, rt_error *err);

#endif
