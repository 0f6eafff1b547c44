/* db_check.c — `rooftune db check` (db.h): SQLite's integrity checks, the schema this
 * rooftune reads, and what the schema cannot say (winners that did not succeed, cubins that are
 * missing, values that are not numbers, results that say verified without a check, texts longer
 * than what reads them). */
#include "db/db_impl.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "db/check_text.h"
#include "db/schema.h"

typedef struct report {
  char *buf;    /* where lines go (may be NULL) */
  size_t size;  /* its size */
  size_t used;  /* bytes written */
  int problems; /* lines that are problems */
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
  sqlite3_stmt *st;
  rt_status s = db_stmt(d, &st, err, sql, "");
  if (s) return s;
  int rc, rows = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    if (ok && t && strcmp(t, ok) == 0) continue;
    rows++;
    if (rows <= 20)
      report_line(rep, is_problem, "%s", t ? t : "(null)");
    else
      rep->problems += is_problem;
  }
  if ((s = db_stmt_end(d, st, rc, "checking", err))) return s;
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
    while ((*t >= 'A' && *t <= 'Z') || (*t >= 'a' && *t <= 'z') || (*t >= '0' && *t <= '9') ||
           *t == '_')
      t++, len++;
    if (len > 7 || *t++ != '=') return 0;
    if (*t < '0' || *t > '9') return 0;
    long long v = 0;
    while (*t >= '0' && *t <= '9') {
      if (v > (LLONG_MAX - 9) / 10) return 0;
      v = v * 10 + (*t++ - '0');
    }
    if (v < 0 || ++n > PROBLEM_MAX_DIMS) return 0; /* 0 is a flag's value (CAUSAL=0) */
    if (*t == ',')
      t++;
    else if (*t)
      return 0;
  }
  return 1;
}

/* The statuses a result may have: names of rooftune's status table. */
static rt_status check_statuses(db *d, report *rep, rt_error *err) {
  char sql[2048];
  size_t n = (size_t)snprintf(sql, sizeof sql,
                              "SELECT 'result ' || id || ': status ' || "
                              "quote(status) || ' is not a status rooftune writes' FROM results "
                              "WHERE status NOT IN (");
  for (int i = 0; i < RT_STATUS_COUNT && n < sizeof sql; i++)
    n += (size_t)snprintf(sql + n, sizeof sql - n, "%s'%s'", i ? "," : "", rt_status_name(i));
  snprintf(sql + n, n < sizeof sql ? sizeof sql - n : 0, ") ORDER BY id");
  return check_rows(d, rep, 1, sql, NULL, err);
}

/* A problem's dimensions are what a family writes (dims_valid). */
/* Markup, control characters and bytes that are not UTF-8 in stored texts (db/check_text.h). */
static rt_status check_texts(db *d, report *rep, rt_error *err) {
  return db_check_texts(d->h, rep->buf, rep->size, &rep->used, &rep->problems, err);
}

static rt_status check_dims(db *d, report *rep, rt_error *err) {
  sqlite3_stmt *st;
  rt_status s = db_stmt(d, &st, err, "SELECT id, dims FROM problems ORDER BY id", "");
  if (s) return s;
  int rc, bad = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 1);
    if (dims_valid(t)) continue;
    if (++bad <= 20)
      report_line(rep, 1, "problem %lld: dims %.100s are not NAME=N,... with whole N >= 0",
                  (long long)sqlite3_column_int64(st, 0), t ? t : "NULL");
    else
      rep->problems++;
  }
  return db_stmt_end(d, st, rc, "checking", err);
}

/* ---- the schema: every table, view and column the migrations make ---- */

/* The schema this rooftune reads, made from its migrations in a database in memory (so the list
 * of what to expect is schema.h's, not a copy of it).  NULL when SQLite cannot make one. */
static sqlite3 *expected_schema(void) {
  sqlite3 *m = NULL;
  if (sqlite3_open(":memory:", &m) != SQLITE_OK || db_register_functions(m) != SQLITE_OK) {
    sqlite3_close(m);
    return NULL;
  }
  for (size_t v = 1; v < sizeof schema_migrations / sizeof schema_migrations[0]; v++)
    if (sqlite3_exec(m, schema_migrations[v], NULL, NULL, NULL) != SQLITE_OK) {
      sqlite3_close(m);
      return NULL;
    }
  return m;
}

/* The type ("table", "view", "index") of the object called NAME in h, "" when there is none. */
static void object_type(sqlite3 *h, const char *name, char *type, size_t size) {
  sqlite3_stmt *st = NULL;
  type[0] = '\0';
  if (sqlite3_prepare_v2(h, "SELECT type FROM sqlite_master WHERE name=?", -1, &st, NULL) ==
      SQLITE_OK) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
      snprintf(type, size, "%s", (const char *)sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
}

/* The columns of table T in h that the expected schema m has and h lacks, each a line. */
static void missing_columns(sqlite3 *m, sqlite3 *h, const char *t, report *rep) {
  sqlite3_stmt *e = NULL, *a = NULL;
  if (sqlite3_prepare_v2(m, "SELECT name FROM pragma_table_info(?)", -1, &e, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(h, "SELECT 1 FROM pragma_table_info(?) WHERE name=?", -1, &a, NULL) !=
          SQLITE_OK) {
    sqlite3_finalize(e);
    sqlite3_finalize(a);
    return;
  }
  sqlite3_bind_text(e, 1, t, -1, SQLITE_STATIC);
  while (sqlite3_step(e) == SQLITE_ROW) {
    const char *col = (const char *)sqlite3_column_text(e, 0);
    sqlite3_reset(a);
    sqlite3_bind_text(a, 1, t, -1, SQLITE_STATIC);
    sqlite3_bind_text(a, 2, col, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(a) != SQLITE_ROW)
      report_line(rep, 1, "schema: %s has no column %s (the columns this rooftune stores)", t, col);
  }
  sqlite3_finalize(e);
  sqlite3_finalize(a);
}

/* Every table and view the migrations make is in the file as what it should be (a view in place
 * of a table reads, and takes no writes), with its columns; a missing index is a note (reads
 * are slower, not wrong). */
static rt_status check_schema(db *d, report *rep, rt_error *err) {
  sqlite3 *m = expected_schema();
  if (!m)
    return rt_error_set(err, RT_ERR_NOMEM, "cannot make the expected schema to check against");
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(
      m, "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY rowid", -1,
      &st, NULL);
  while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *type = (const char *)sqlite3_column_text(st, 0);
    const char *name = (const char *)sqlite3_column_text(st, 1);
    char have[16];
    object_type(d->h, name, have, sizeof have);
    int is_index = !strcmp(type, "index");
    if (!have[0])
      report_line(rep, !is_index, "%sschema: %s %s is missing", is_index ? "note: " : "", type,
                  name);
    else if (strcmp(have, type))
      report_line(rep, 1, "schema: %s is a %s, not the %s rooftune makes", name, have, type);
    else if (!strcmp(type, "table"))
      missing_columns(m, d->h, name, rep);
  }
  sqlite3_finalize(st);
  sqlite3_close(m);
  return RT_OK;
}

/* ---- texts longer than what reads them, and dimensions that are missing ---- */

/* The longest text any column may hold (a recipe, a command): past it a row is damage, not
 * data, whatever reads it. */
#define CHECK_TEXT_CAP (1 << 20)

typedef struct text_limit {
  const char *table, *column; /* where */
  size_t max;                 /* characters the reader's buffer takes */
} text_limit;

#define RESULT_TEXT_LIMIT(col, name, kind, member, group) \
  {"results", #col, !strcmp(#kind, "TEXT") ? sizeof(((candidate_result *)0)->member) - 1 : 0},
#define WINNER_TEXT_LIMIT(col, kind, member) \
  {"winners", #col, !strcmp(#kind, "TEXT") ? sizeof(((db_winner *)0)->member) - 1 : 0},
#define ENTRY_MAX(member) (sizeof(((db_entry *)0)->member) - 1)
#define RUN_MAX(member)   (sizeof(((db_run_info *)0)->member) - 1)

/* One row a line for each text of table.column longer than max (the cap when max is 0). */
static rt_status text_over(db *d, report *rep, const char *table, const char *column, size_t max,
                           rt_error *err) {
  char sql[512];
  size_t lim = max ? max : CHECK_TEXT_CAP;
  snprintf(sql, sizeof sql,
           "SELECT '%s row ' || rowid || ': %s is ' || length(\"%s\") || ' characters, more than "
           "the %zu %s' FROM \"%s\" WHERE length(\"%s\") > %zu ORDER BY rowid",
           table, column, column, lim, max ? "rooftune reads (it would be cut)" : "any text holds",
           table, column, lim);
  return check_rows(d, rep, 1, sql, NULL, err);
}

/* Every text column of the schema against the buffer that reads it (results' and winners' from
 * their column tables, the rest listed), and against CHECK_TEXT_CAP. */
static rt_status check_text_sizes(db *d, report *rep, rt_error *err) {
  const text_limit read_into[] = {
      /* not static: the sizes are chosen by kind at run time */
      RESULT_COLUMNS(RESULT_TEXT_LIMIT, RESULT_TEXT_LIMIT) WINNER_COLUMNS(
          WINNER_TEXT_LIMIT, WINNER_TEXT_LIMIT){"results", "toolkit", ENTRY_MAX(toolkit)},
      {"winners", "toolkit", ENTRY_MAX(toolkit)},
      {"problems", "args", ENTRY_MAX(args)},
      {"templates", "source_hash", ENTRY_MAX(source_hash)},
      {"templates", "manifest_hash", ENTRY_MAX(manifest_hash)},
      {"runs", "command", RUN_MAX(command)},
      {"runs", "toolkit", RUN_MAX(toolkit)},
      {"runs", "status", RUN_MAX(status)},
  };
  rt_status s = RT_OK;
  for (size_t i = 0; !s && i < sizeof read_into / sizeof read_into[0]; i++)
    if (read_into[i].max && strcmp(read_into[i].column, "config")) /* config: checked above */
      s = text_over(d, rep, read_into[i].table, read_into[i].column, read_into[i].max, err);
  /* every other text of every table, against the cap */
  sqlite3_stmt *st;
  if (s || (s = db_stmt(d, &st, err,
                        "SELECT m.name, c.name FROM sqlite_master m, pragma_table_info(m.name) c "
                        "WHERE m.type='table' AND m.name NOT LIKE 'sqlite_%' AND c.type='TEXT' "
                        "ORDER BY m.rowid, c.cid",
                        "")))
    return s;
  int rc;
  while (!s && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    const char *c = (const char *)sqlite3_column_text(st, 1);
    int listed = 0;
    for (size_t i = 0; i < sizeof read_into / sizeof read_into[0]; i++)
      listed |=
          read_into[i].max && !strcmp(read_into[i].table, t) && !strcmp(read_into[i].column, c);
    if (!listed) s = text_over(d, rep, t, c, 0, err);
  }
  rt_status e = db_stmt_end(d, st, s ? SQLITE_DONE : rc, "checking", err);
  return s ? s : e;
}

/* A problem without dimensions is only a replayed file's (`tune --device replay:FILE` parses no
 * shape): one with a result that ran or was predicted, or a winner the runtime can launch (a
 * cubin, a library algorithm), has them, and a lookup serves it by them. */
static rt_status check_empty_dims(db *d, report *rep, rt_error *err) {
  return check_rows(d, rep, 1,
                    "SELECT 'problem ' || p.id || ' (' || p.family || ' ' || p.shape || '): its "
                    "dims are empty, yet ' || CASE WHEN EXISTS (SELECT 1 FROM results r WHERE "
                    "r.problem_id = p.id AND r.timing <> 'replayed') THEN 'results of it ran or "
                    "were predicted' ELSE 'a winner of it can be launched' END || ': a family''s "
                    "problem has its dimensions' FROM problems p WHERE p.dims = '' AND (EXISTS "
                    "(SELECT 1 FROM results r WHERE r.problem_id = p.id AND r.timing <> "
                    "'replayed') OR EXISTS (SELECT 1 FROM winners w WHERE w.problem_id = p.id AND "
                    "(w.cubin_bytes > 0 OR w.library_algo <> ''))) ORDER BY p.id",
                    NULL, err);
}

/* The checks of the values, in the order their lines come: a query whose rows are problems (or
 * notes, is_problem 0), or a check of its own. */
typedef struct value_check {
  const char *sql;                                    /* the query, or NULL: */
  rt_status (*fn)(db *d, report *rep, rt_error *err); /* the check */
  int is_problem;                                     /* 0: the rows are notes */
} value_check;

static const value_check value_checks[] = {
    {"SELECT 'foreign key: ' || \"table\" || ' row ' || rowid || ' points at a "
     "missing ' || parent FROM pragma_foreign_key_check",
     NULL, 1},
    {"SELECT 'winner ' || w.id || ': its result ' || w.result_id || ' did not "
     "succeed (' || r.status || ')' FROM winners w JOIN results r ON "
     "r.id=w.result_id WHERE r.status<>'OK' OR r.time_ms IS NULL",
     NULL, 1},
    {"SELECT 'winner ' || w.id || ': its result ' || r.id || ' belongs to "
     "another problem, device, template or toolkit' FROM winners w JOIN results "
     "r ON r.id=w.result_id WHERE r.problem_id<>w.problem_id OR "
     "r.device_id<>w.device_id OR r.template_id<>w.template_id OR "
     "r.toolkit<>w.toolkit",
     NULL, 1},
    {"SELECT 'winner ' || w.id || ' (' || t.name || ', measured): no cubin and "
     "no library algorithm, so the runtime cannot launch it' FROM winners w JOIN "
     "results r ON r.id=w.result_id JOIN templates t ON t.id=w.template_id WHERE "
     "r.timing='measured' AND w.cubin_bytes=0 AND w.library_algo=''",
     NULL, 1},
    {"SELECT 'winner ' || w.id || ': says ' || w.cubin_bytes || ' cubin bytes, "
     "holds ' || coalesce(length(c.cubin),0) FROM winners w LEFT JOIN "
     "winner_cubins c ON c.winner_id=w.id WHERE w.cubin_bytes <> "
     "coalesce(length(c.cubin),0)",
     NULL, 1},
    {"SELECT 'cubin of a missing winner ' || winner_id FROM winner_cubins WHERE "
     "winner_id NOT IN (SELECT id FROM winners)",
     NULL, 1},
    /* a cubin's bytes against the SHA-256 stored with its winner (schema 8): a damaged cubin
     * would be loaded and run */
    {"SELECT 'winner ' || w.id || ' (' || coalesce(t.name, '?') || ' ' || coalesce(r.config, "
     "'?') || ', ' || coalesce(p.family || ' ' || p.shape || ' ' || p.dtype, '?') || ' on ' || "
     "coalesce(v.name, '?') || '): its cubin is damaged: the SHA-256 of its bytes is ' || "
     "rooftune_sha256(c.cubin) || ', not the ' || CASE w.cubin_sha256 WHEN '' THEN '(none)' "
     "ELSE w.cubin_sha256 END || ' stored with it (librooftune refuses it; tune it again or "
     "restore a backup)' FROM winners w JOIN winner_cubins c ON c.winner_id=w.id LEFT JOIN "
     "templates t ON t.id=w.template_id LEFT JOIN results r ON r.id=w.result_id LEFT JOIN "
     "problems p ON p.id=w.problem_id LEFT JOIN devices v ON v.id=w.device_id WHERE "
     "w.cubin_sha256 IS NOT rooftune_sha256(c.cubin) ORDER BY w.id",
     NULL, 1},
    {"SELECT 'winner ' || id || ': a cubin hash (' || substr(cubin_sha256, 1, 16) || "
     "') without a cubin' FROM winners WHERE cubin_sha256 <> '' AND id NOT IN (SELECT "
     "winner_id FROM winner_cubins) ORDER BY id",
     NULL, 1},
    /* foreign triggers: rooftune creates none, and one can change or delete every new result */
    {"SELECT 'schema: trigger ' || name || ' on ' || tbl_name || ' is not one "
     "rooftune creates (it can change or delete what is stored); remove it with "
     "DROP TRIGGER \"' || replace(name, '\"', '\"\"') || '\"' FROM sqlite_master "
     "WHERE type='trigger'",
     NULL, 1},
    /* the values: times are numbers of milliseconds, a success has a positive one */
    {"SELECT 'result ' || id || ': ' || c || ' is ' || typeof(v) || ' ' || "
     "quote(v) || ', not a number' FROM (SELECT id, 'time_ms' c, time_ms v FROM "
     "results UNION ALL SELECT id, 'spread', spread FROM results UNION ALL SELECT "
     "id, 'flops', flops FROM results UNION ALL SELECT id, 'dram_bytes', dram_bytes "
     "FROM results) WHERE typeof(v) NOT IN ('real', 'integer', 'null') ORDER BY id",
     NULL, 1},
    {"SELECT 'result ' || id || ' (' || status || '): time ' || coalesce(time_ms, "
     "'NULL') || ' ms is not a time (a positive number of milliseconds)' FROM "
     "results WHERE typeof(time_ms) IN ('real', 'integer') AND (time_ms <= 0 OR "
     "time_ms >= 1e20) OR (status = 'OK' AND typeof(time_ms) = 'null') ORDER BY id",
     NULL, 1},
    {"SELECT 'result ' || id || ': ' || c || ' ' || v || ' is negative' FROM (SELECT "
     "id, 'spread' c, spread v FROM results UNION ALL SELECT id, 'repetitions', "
     "repetitions FROM results UNION ALL SELECT id, 'flops', flops FROM results "
     "UNION ALL SELECT id, 'dram_bytes', dram_bytes FROM results) WHERE "
     "typeof(v) IN ('real', 'integer') AND v < 0 ORDER BY id",
     NULL, 1},
    {NULL, check_statuses, 1},
    /* verified: 0 or 1, and 1 only where a measuring device ran the reference check and stored
     * an OK result with its error (what rooftune writes, and what the migration to schema 7
     * decided for older rows) */
    {"SELECT 'result ' || id || ': verified is ' || quote(verified) || ', not 0 or 1' FROM "
     "results WHERE verified IS NULL OR verified NOT IN (0, 1) UNION ALL SELECT 'result ' || id "
     "|| ' (' || timing || ', ' || status || '): says verified, but only a measured OK result "
     "with a reference check''s error is' FROM results WHERE verified = 1 AND (timing <> "
     "'measured' OR status <> 'OK' OR verify_error IS NULL OR verify_error < 0) ORDER BY 1",
     NULL, 1},
    /* the texts fit what rooftune reads them into (a longer one would be cut on reading), and a
     * problem's shape and dimensions are what a family writes */
    {"SELECT 'problem ' || id || ': ' || what FROM (SELECT id, CASE WHEN "
     "length(family) NOT BETWEEN 1 AND 15 THEN 'family ' || quote(family) || ' is "
     "empty or longer than 15 characters' WHEN length(dtype) NOT BETWEEN 1 AND 7 THEN "
     "'dtype ' || quote(dtype) || ' is empty or longer than 7 characters' WHEN "
     "length(layout) > 7 THEN 'layout ' || quote(layout) || ' is longer than 7 "
     "characters' WHEN length(shape) NOT BETWEEN 1 AND 63 THEN 'shape ' || "
     "quote(shape) || ' is empty or longer than 63 characters' WHEN length(dims) > "
     "255 THEN 'dims are longer than 255 characters' END AS what FROM problems) "
     "WHERE what IS NOT NULL ORDER BY id",
     NULL, 1},
    {NULL, check_dims, 1},
    {NULL, check_empty_dims, 1},
    {NULL, check_text_sizes, 1},
    {"SELECT 'result ' || id || ': its configuration is ' || length(config) || ' "
     "characters, more than the 767 rooftune reads' FROM results WHERE "
     "length(config) > 767 UNION ALL SELECT 'template ' || id || ': its name is "
     "empty or longer than 63 characters' FROM templates WHERE length(name) NOT "
     "BETWEEN 1 AND 63 UNION ALL SELECT 'device ' || id || ': its name is empty or "
     "longer than 127 characters' FROM devices WHERE length(name) NOT BETWEEN 1 AND "
     "127",
     NULL, 1},
    {"SELECT 'note: winner ' || w.id || ' (' || t.name || ', ' || r.timing || ') is not "
     "verified: librooftune launches it only when a caller allows unverified winners' FROM "
     "winners w JOIN results r ON r.id=w.result_id JOIN templates t ON t.id=w.template_id "
     "WHERE r.verified = 0 AND (w.cubin_bytes > 0 OR w.library_algo <> '') ORDER BY w.id",
     NULL, 0},
    {NULL, check_texts, 1},
    {"SELECT 'note: run ' || id || ' (started ' || started_at || ') never "
     "finished: killed or still running; its committed results are kept' FROM "
     "runs WHERE status='running'",
     NULL, 0},
};

rt_status db_check(db *d, char *out, size_t size, int *problems, rt_error *err) {
  report rep = {out, size, 0, 0};
  if (out && size) out[0] = '\0';
  *problems = 0;
  rt_status s = check_rows(d, &rep, 1, "PRAGMA integrity_check", "ok", err);
  if (!s && !rep.problems) s = check_schema(d, &rep, err);
  if (s) return s;
  if (rep.problems) { /* the other checks read those tables */
    *problems = rep.problems;
    return RT_OK;
  }
  for (size_t i = 0; !s && i < sizeof value_checks / sizeof value_checks[0]; i++) {
    const value_check *c = &value_checks[i];
    s = c->sql ? check_rows(d, &rep, c->is_problem, c->sql, NULL, err) : c->fn(d, &rep, err);
  }
  if (s) return s;
  *problems = rep.problems;
  return RT_OK;
}
