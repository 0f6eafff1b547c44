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

/* Checks of the schema this rooftune reads: when one finds a problem, the value checks do not
 * run (they read those tables). */
static const char *const schema_checks[] = {
    "SELECT 'schema: table ' || column1 || ' is missing' FROM (VALUES "
    "('devices'),('device_ceilings'),('templates'),('problems'),('runs'),"
    "('results'),('winners'),('winner_cubins'),('run_owners'),('claims')) WHERE column1 NOT IN "
    "(SELECT name FROM "
    "sqlite_master WHERE type='table')",
    "SELECT 'schema: results has no column ' || value || ' (the columns this "
    "rooftune stores)' FROM json_each('[\"' || replace('" RESULT_COLS
    "', ',', "
    "'\",\"') || '\"]') WHERE value NOT IN (SELECT name FROM "
    "pragma_table_info('results'))",
    "SELECT 'schema: winners has no column ' || value || ' (the columns this "
    "rooftune stores)' FROM json_each('[\"' || replace('" WINNER_COLS
    "', ',', "
    "'\",\"') || '\"]') WHERE value NOT IN (SELECT name FROM "
    "pragma_table_info('winners'))",
};

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
  for (size_t i = 0; !s && i < sizeof schema_checks / sizeof schema_checks[0]; i++)
    if (i == 0 || !rep.problems) s = check_rows(d, &rep, 1, schema_checks[i], NULL, err);
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
