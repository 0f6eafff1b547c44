/* db_read.c — reading the tuning database (db.h): the winners with their provenance, cubins
 * and serving recipes, the runs, the counts, every stored result, a device's ceilings and a
 * template's calibrations.  What librooftune links of the database, with db_open.c and
 * db_sql.c; nothing here writes. */
#include "db/db_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"

/* ---- provenance --------------------------------------------------------------------- */

rt_status db_ceiling_get(db *d, const db_device *dev, const char *kind, const char *dtype,
                         double *value, char *measured_at, size_t at_size, int *found,
                         rt_error *err) {
  *found = 0;
  sqlite3_stmt *st;
  rt_status s = db_stmt(
      d, &st, err,
      "SELECT c.value, c.measured_at FROM device_ceilings c JOIN devices v ON "
      "v.id=c.device_id WHERE v.name=? AND v.sm_count=? AND v.cc_major=? AND "
      "v.cc_minor=? AND c.kind=? AND c.dtype=? ORDER BY c.measured_at DESC LIMIT 1",
      "tiiitt", dev->name, dev->sm_count, dev->cc_major, dev->cc_minor, kind, dtype ? dtype : "");
  if (s) return s;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *found = 1;
    *value = sqlite3_column_double(st, 0);
    if (measured_at) db_col_text(st, 1, measured_at, at_size);
  }
  return db_stmt_end(d, st, rc, "reading a ceiling", err);
}

rt_status db_calibration_get(db *d, const char *gpu, const char *template_name, const char *kind,
                             double *ratio, int *samples, int *found, rt_error *err) {
  *found = 0;
  if (d->version < 4) return RT_OK; /* an older file read as it is: it has none */
  sqlite3_stmt *st;
  rt_status s = db_stmt(
      d, &st, err, "SELECT ratio, samples FROM calibrations WHERE gpu=? AND template=? AND kind=?",
      "ttt", gpu, template_name, kind);
  if (s) return s;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *found = 1;
    *ratio = sqlite3_column_double(st, 0);
    if (samples) *samples = sqlite3_column_int(st, 1);
  }
  return db_stmt_end(d, st, rc, "reading a calibration", err);
}

void db_dims_text(const problem *p, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < p->ndims && n < size; i++) {
    int w = snprintf(buf + n, size - n, "%s%s=%lld", i ? "," : "", p->dim_names[i], p->dims[i]);
    if (w < 0) break;
    n += (size_t)w;
  }
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

/* Reads a device's columns (name, sm_count, cc_major, cc_minor, driver_version) from column *i. */
static void read_device(sqlite3_stmt *st, int *i, db_device *dev) {
  db_col_text(st, (*i)++, dev->name, sizeof dev->name);
  dev->sm_count = sqlite3_column_int(st, (*i)++);
  dev->cc_major = sqlite3_column_int(st, (*i)++);
  dev->cc_minor = sqlite3_column_int(st, (*i)++);
  dev->driver_version = sqlite3_column_int(st, (*i)++);
}

/* A problem's family, shape, dtype and layout columns from column i on, into x's members of
 * those names (db_entry, db_run_info, problem). */
#define READ_PROBLEM(st, i, x)                             \
  (db_col_text(st, (i)++, (x)->family, sizeof(x)->family), \
   db_col_text(st, (i)++, (x)->shape, sizeof(x)->shape),   \
   db_col_text(st, (i)++, (x)->dtype, sizeof(x)->dtype),   \
   db_col_text(st, (i)++, (x)->layout, sizeof(x)->layout))

/* A timing column: its kind, or FALLBACK when it names none. */
static timing_kind read_timing(sqlite3_stmt *st, int i, timing_kind fallback) {
  char tk[16];
  db_col_text(st, i, tk, sizeof tk);
  int t = timing_kind_parse(tk);
  return t < 0 ? fallback : (timing_kind)t;
}

/* ---- winners ------------------------------------------------------------------------ */

#define ENTRY_SELECT                                                                              \
  "SELECT w.id, r.id, p.family, p.shape, p.dtype, p.layout, p.dims, p.args, v.name, v.sm_count, " \
  "v.cc_major, v.cc_minor, v.driver_version, t.name, t.source_hash, t.manifest_hash, "            \
  "EXISTS(SELECT 1 FROM templates t2 WHERE t2.name=t.name AND t2.id>t.id), w.toolkit, r.config, " \
  "r.timing, r.time_ms, r.spread, r.repetitions, r.verify_error, r.verified, r.checked_on, "      \
  "r.flops, "                                                                                     \
  "r.diag_limit, r.diag_lever, " WINNER_COLS_W                                                    \
  ", w.updated_at, w.cubin_bytes, %s FROM winners w "                                             \
  "JOIN results r ON r.id=w.result_id JOIN problems p ON p.id=w.problem_id "                      \
  "JOIN devices v ON v.id=w.device_id JOIN templates t ON t.id=w.template_id ORDER BY w.id"

static void read_entry(sqlite3_stmt *st, db_entry *e) {
  int i = 0;
  e->winner_id = sqlite3_column_int64(st, i++);
  e->result_id = sqlite3_column_int64(st, i++);
  READ_PROBLEM(st, i, e);
  db_col_text(st, i++, e->dims, sizeof e->dims);
  db_col_text(st, i++, e->args, sizeof e->args);
  read_device(st, &i, &e->device);
  db_col_text(st, i++, e->template_name, sizeof e->template_name);
  db_col_text(st, i++, e->source_hash, sizeof e->source_hash);
  db_col_text(st, i++, e->manifest_hash, sizeof e->manifest_hash);
  e->template_stale = sqlite3_column_int(st, i++);
  db_col_text(st, i++, e->toolkit, sizeof e->toolkit);
  db_col_text(st, i++, e->config, sizeof e->config);
  e->timing = read_timing(st, i++, TIMING_REPLAYED);
  e->time_ms = db_col_real(st, i++);
  e->spread = db_col_real(st, i++);
  e->repetitions = sqlite3_column_int(st, i++);
  e->verify_error = db_col_real(st, i++);
  e->verified = sqlite3_column_int(st, i++) != 0;
  db_col_text(st, i++, e->checked_on, sizeof e->checked_on);
  e->flops = db_col_real(st, i++);
  db_col_text(st, i++, e->limit, sizeof e->limit);
  db_col_text(st, i++, e->lever, sizeof e->lever);
  db_winner *w = &e->launch;
#define WREAD_TEXT(member)       db_col_text(st, i++, w->member, sizeof w->member);
#define WREAD_UINT(member)       w->member = (unsigned)sqlite3_column_int64(st, i++);
#define WREAD(col, kind, member) WREAD_##kind(member)
  WINNER_COLUMNS(WREAD, WREAD)
  db_col_text(st, i++, e->created_at, sizeof e->created_at);
  w->cubin_size = (size_t)sqlite3_column_int64(st, i++);
  w->cubin = NULL;
}

/* Inside the read transaction: reads every winner into one block (entries, then cubins). */
static rt_status read_entries(db *d, int with_cubins, db_entry **out, size_t *n, rt_error *err) {
  sqlite3_stmt *st;
  rt_status s =
      db_stmt(d, &st, err, "SELECT count(*), coalesce(sum(cubin_bytes),0) FROM winners", "");
  if (s) return s;
  int rc = sqlite3_step(st);
  long long count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  long long bytes = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
  if ((s = db_stmt_end(d, st, rc, "counting winners", err))) return s;
  if (!with_cubins) bytes = 0;
  size_t head = (size_t)count * sizeof(db_entry);
  char *block = malloc(head + (size_t)bytes + 1);
  if (!block) return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading %lld winners", count);
  char sql[2048];
  snprintf(sql, sizeof sql, ENTRY_SELECT,
           with_cubins ? "(SELECT c.cubin FROM winner_cubins c WHERE c.winner_id=w.id)" : "NULL");
  if ((s = db_stmt(d, &st, err, sql, ""))) {
    free(block);
    return s;
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
  if ((s = db_stmt_end(d, st, rc, "reading winners", err))) {
    free(block);
    return s;
  }
  *out = e;
  *n = k;
  return RT_OK;
}

rt_status db_entries(db *d, int with_cubins, db_entry **out, size_t *n, rt_error *err) {
  *out = NULL;
  *n = 0;
  /* One read transaction: the count and the rows come from the same snapshot. */
  int rc = db_exec_retry(d->h, "BEGIN");
  if (rc != SQLITE_OK) return db_fail(d, rc, "reading winners", err);
  rt_status s = read_entries(d, with_cubins, out, n, err);
  sqlite3_exec(d->h, "COMMIT", NULL, NULL, NULL);
  return s;
}

/* ENTRY_SELECT without cubins, for the winner ids WHERE picks (NULL: all), in id order. */
static void entry_sql(char *sql, size_t size, const char *where) {
  snprintf(sql, size, ENTRY_SELECT, "NULL");
  char *order = strstr(sql, " ORDER BY w.id");
  if (where && order) {
    size_t at = (size_t)(order - sql);
    snprintf(sql + at, size - at, " WHERE %s ORDER BY w.id", where);
  }
}

rt_status db_entries_each(db *d, db_entry_fn fn, void *ctx, rt_error *err) {
  int rc = db_exec_retry(d->h, "BEGIN");
  if (rc != SQLITE_OK) return db_fail(d, rc, "reading winners", err);
  char sql[2048];
  entry_sql(sql, sizeof sql, NULL);
  sqlite3_stmt *st;
  db_entry *e = malloc(sizeof *e); /* one row at a time: a winner is 15 kB of buffers */
  rt_status s = e ? db_stmt(d, &st, err, sql, "")
                  : rt_error_set(err, RT_ERR_NOMEM, "out of memory reading winners");
  if (!s) {
    while (!s && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      memset(e, 0, sizeof *e);
      read_entry(st, e);
      s = fn(e, ctx, err);
    }
    rt_status e2 = db_stmt_end(d, st, s ? SQLITE_DONE : rc, "reading winners", err);
    if (!s) s = e2;
  }
  free(e);
  sqlite3_exec(d->h, "COMMIT", NULL, NULL, NULL);
  return s;
}

rt_status db_entry_get(db *d, long long winner_id, db_entry *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  char sql[2048];
  entry_sql(sql, sizeof sql, "w.id=?");
  sqlite3_stmt *st;
  rt_status s = db_stmt(d, &st, err, sql, "I", winner_id);
  if (s) return s;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    read_entry(st, out);
  else if (rc == SQLITE_DONE)
    s = rt_error_set(err, RT_ERR_NOT_FOUND, "%s holds no winner %lld", d->path, winner_id);
  rt_status e = db_stmt_end(d, st, rc == SQLITE_ROW ? SQLITE_DONE : rc, "reading a winner", err);
  return s ? s : e;
}

rt_status db_winner_cubin(db *d, long long winner_id, void **out, size_t *size, rt_error *err) {
  *out = NULL;
  *size = 0;
  sqlite3_stmt *st;
  rt_status s = db_stmt(d, &st, err,
                        "SELECT c.cubin, w.cubin_sha256, coalesce(t.name,''), "
                        "coalesce(r.config,''), coalesce(p.family,''), coalesce(p.shape,''), "
                        "coalesce(p.dtype,''), coalesce(v.name,'') FROM winners w JOIN "
                        "winner_cubins c ON c.winner_id=w.id LEFT JOIN templates t ON "
                        "t.id=w.template_id LEFT JOIN results r ON r.id=w.result_id LEFT JOIN "
                        "problems p ON p.id=w.problem_id LEFT JOIN devices v ON v.id=w.device_id "
                        "WHERE w.id=?",
                        "I", winner_id);
  if (s) return s;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW && sqlite3_column_bytes(st, 0) > 0) {
    size_t n = (size_t)sqlite3_column_bytes(st, 0);
    const void *b = sqlite3_column_blob(st, 0);
    char stored[65], got[65];
    db_col_text(st, 1, stored, sizeof stored);
    unsigned char dg[32];
    sha256(b, n, dg);
    sha256_hex(dg, got);
    if (strcmp(stored, got) != 0) {
      /* damaged (or written around rooftune): never handed on to be loaded */
      s = rt_error_set(
          err, RT_ERR_DB,
          "the cubin of winner %lld (%.64s %.300s, %.16s %.64s %.8s on %.64s) is "
          "damaged: its bytes' SHA-256 is %.12s..., not the %.12s%s stored with it; "
          "tune the problem again or restore the database from a backup",
          winner_id, (const char *)sqlite3_column_text(st, 2),
          (const char *)sqlite3_column_text(st, 3), (const char *)sqlite3_column_text(st, 4),
          (const char *)sqlite3_column_text(st, 5), (const char *)sqlite3_column_text(st, 6),
          (const char *)sqlite3_column_text(st, 7), got, stored[0] ? stored : "(none)",
          stored[0] ? "..." : "");
      rt_error_locate(err, d->path, NULL, 0, 0);
    } else if (!(*out = malloc(n))) {
      s = rt_error_set(err, RT_ERR_NOMEM, "out of memory reading a cubin");
    } else {
      memcpy(*out, b, n);
      *size = n;
    }
  } else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
    s = rt_error_set(err, RT_ERR_NOT_FOUND, "winner %lld has no cubin", winner_id);
    rt_error_locate(err, d->path, NULL, 0, 0);
  }
  rt_status e = db_stmt_end(d, st, rc, "reading a cubin", err);
  return s ? s : e;
}

rt_status db_winner_recipe(db *d, long long winner_id, db_recipe *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  sqlite3_stmt *st;
  rt_status s =
      db_stmt(d, &st, err, "SELECT env, derived, constraints FROM winner_recipes WHERE winner_id=?",
              "I", winner_id);
  if (s) return s;
  int rc = sqlite3_step(st);
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
  }
  rt_status e = db_stmt_end(d, st, rc, "reading a serving recipe", err);
  return s ? s : e;
}

void db_recipe_free(db_recipe *r) {
  if (!r) return;
  free(r->env); /* one block: env comes first */
  memset(r, 0, sizeof *r);
}

rt_status db_count(db *d, db_counts *c, rt_error *err) {
  memset(c, 0, sizeof *c);
  sqlite3_stmt *st;
  rt_status s = db_stmt(d, &st, err,
                        "SELECT (SELECT count(*) FROM devices), (SELECT count(*) FROM templates), "
                        "(SELECT count(*) FROM problems), (SELECT count(*) FROM runs), "
                        "(SELECT count(*) FROM results), (SELECT count(*) FROM winners), "
                        "(SELECT count(*) FROM device_ceilings)",
                        "");
  if (s) return s;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    long long *v[] = {&c->devices, &c->templates, &c->problems, &c->runs,
                      &c->results, &c->winners,   &c->ceilings};
    for (int i = 0; i < 7; i++) *v[i] = sqlite3_column_int64(st, i);
  }
  return db_stmt_end(d, st, rc, "counting rows", err);
}

/* ---- runs --------------------------------------------------------------------------- */

static void read_run_info(sqlite3_stmt *st, db_run_info *u) {
  memset(u, 0, sizeof *u);
  int i = 0;
  u->id = sqlite3_column_int64(st, i++);
  READ_PROBLEM(st, i, u);
  read_device(st, &i, &u->device);
  db_col_text(st, i++, u->toolkit, sizeof u->toolkit);
  db_col_text(st, i++, u->status, sizeof u->status);
  db_col_text(st, i++, u->started_at, sizeof u->started_at);
  db_col_text(st, i++, u->finished_at, sizeof u->finished_at);
  u->budget = sqlite3_column_int64(st, i++);
  db_col_text(st, i++, u->command, sizeof u->command);
  u->results = sqlite3_column_int64(st, i++);
  u->ok = sqlite3_column_int64(st, i++);
  u->best_ms = db_col_real(st, i++);
  u->best_spread = db_col_real(st, i++);
  u->best_timing = read_timing(st, i++, TIMING_PREDICTED);
  db_col_text(st, i++, u->best_template, sizeof u->best_template);
  db_col_text(st, i++, u->best_config, sizeof u->best_config);
  db_col_text(st, i++, u->last_status, sizeof u->last_status);
  db_col_text(st, i++, u->last_template, sizeof u->last_template);
  db_col_text(st, i++, u->last_config, sizeof u->last_config);
  u->last_ms = db_col_real(st, i++);
  u->last_spread = db_col_real(st, i++);
}

/* Every run, oldest first, with its problem, device and results' summary. */
static const char runs_sql[] =
    "SELECT u.id, p.family, p.shape, p.dtype, p.layout, v.name, v.sm_count, v.cc_major, "
    "v.cc_minor, v.driver_version, u.toolkit, u.status, u.started_at, "
    "coalesce(u.finished_at,''), "
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

/* Inside the read transaction: every run into *out (malloc'ed, grown as rows come). */
static rt_status read_runs(db *d, db_run_info **out, size_t *n, rt_error *err) {
  sqlite3_stmt *st;
  rt_status s = db_stmt(d, &st, err, runs_sql, "");
  if (s) return s;
  size_t cap = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 64;
      db_run_info *g = realloc(*out, cap * sizeof *g);
      if (!g) {
        s = rt_error_set(err, RT_ERR_NOMEM, "out of memory reading runs");
        break;
      }
      *out = g;
    }
    read_run_info(st, &(*out)[(*n)++]);
  }
  rt_status e = db_stmt_end(d, st, s ? SQLITE_DONE : rc, "reading runs", err);
  return s ? s : e;
}

rt_status db_runs(db *d, db_run_info **out, size_t *n, rt_error *err) {
  *out = NULL;
  *n = 0;
  int rc = db_exec_retry(d->h, "BEGIN");
  if (rc != SQLITE_OK) return db_fail(d, rc, "reading runs", err);
  rt_status s = read_runs(d, out, n, err);
  sqlite3_exec(d->h, "COMMIT", NULL, NULL, NULL);
  if (s) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return s;
}

rt_status db_runs_each(db *d, db_run_fn fn, void *ctx, rt_error *err) {
  int rc = db_exec_retry(d->h, "BEGIN");
  if (rc != SQLITE_OK) return db_fail(d, rc, "reading runs", err);
  sqlite3_stmt *st;
  db_run_info u;
  rt_status s = db_stmt(d, &st, err, runs_sql, "");
  if (!s) {
    while (!s && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      read_run_info(st, &u);
      s = fn(&u, ctx, err);
    }
    rt_status e = db_stmt_end(d, st, s ? SQLITE_DONE : rc, "reading runs", err);
    if (!s) s = e;
  }
  sqlite3_exec(d->h, "COMMIT", NULL, NULL, NULL);
  return s;
}

/* ---- every result ------------------------------------------------------------------- */

#define EACH_RESULT_SQL(WHERE)                                                                 \
  "SELECT p.family, p.shape, p.dtype, p.layout, p.dims, p.args, v.name, v.sm_count, "          \
  "v.cc_major, "                                                                               \
  "v.cc_minor, v.driver_version, r.toolkit, u.arch, u.strategy, u.seed, u.budget, u.command, " \
  "t.name, t.source_hash, t.manifest_hash, " RESULT_COLS_R                                     \
  " FROM results r "                                                                           \
  "JOIN problems p ON p.id=r.problem_id JOIN devices v ON v.id=r.device_id "                   \
  "JOIN templates t ON t.id=r.template_id JOIN runs u ON u.id=r.run_id " WHERE " ORDER BY r.id"

static rt_status each_result_rows(db *d, sqlite3_stmt *st, db_result_fn fn, void *ctx,
                                  rt_error *err);

rt_status db_each_result(db *d, db_result_fn fn, void *ctx, rt_error *err) {
  sqlite3_stmt *st;
  rt_status s = db_stmt(d, &st, err, EACH_RESULT_SQL(""), "");
  if (s) return s;
  return each_result_rows(d, st, fn, ctx, err);
}

rt_status db_each_result_of(db *d, const char *template_name, const char *dtype, db_result_fn fn,
                            void *ctx, rt_error *err) {
  sqlite3_stmt *st;
  rt_status s =
      db_stmt(d, &st, err, EACH_RESULT_SQL("WHERE t.name=?1 AND p.dtype=?2 AND r.status=?3"), "ttt",
              template_name, dtype, rt_status_name(RT_OK));
  if (s) return s;
  return each_result_rows(d, st, fn, ctx, err);
}

/* The rows of st (EACH_RESULT_SQL) to fn, then st ended. */
static rt_status each_result_rows(db *d, sqlite3_stmt *st, db_result_fn fn, void *ctx,
                                  rt_error *err) {
  rt_status s = RT_OK;
  int rc;
  db_run_spec spec;
  candidate_result c;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    memset(&spec, 0, sizeof spec);
    memset(&c, 0, sizeof c);
    int i = 0;
    READ_PROBLEM(st, i, &spec.prob);
    char dims[256];
    db_col_text(st, i++, dims, sizeof dims);
    dims_parse(dims, &spec.prob);
    db_col_text(st, i++, spec.prob.args, sizeof spec.prob.args);
    read_device(st, &i, &spec.prov.device);
    db_col_text(st, i++, spec.prov.toolkit, sizeof spec.prov.toolkit);
    db_col_text(st, i++, spec.prov.arch, sizeof spec.prov.arch);
    db_col_text(st, i++, spec.strategy, sizeof spec.strategy);
    spec.seed = (unsigned long long)sqlite3_column_int64(st, i++);
    spec.budget = sqlite3_column_int64(st, i++);
    db_col_text(st, i++, spec.command, sizeof spec.command);
    char src[72], man[72];
    db_col_text(st, i++, c.template_name, sizeof c.template_name);
    db_col_text(st, i++, src, sizeof src);
    db_col_text(st, i++, man, sizeof man);
    db_read_result(st, i, &c);
    rt_copy(c.device_name, sizeof c.device_name, spec.prov.device.name);
    if ((s = fn(ctx, &spec, c.template_name, src, man, &c, err))) break;
  }
  rt_status e = db_stmt_end(d, st, s ? SQLITE_DONE : rc, "reading results", err);
  return s ? s : e;
}
