/* db_run.c — recording a run in the tuning database (db.h): the run and its problem and device
 * rows, the templates it declares, its results (each store its own retried BEGIN IMMEDIATE
 * transaction, durable when it returns), resume queries, winners with their cubins and serving
 * recipes, the end of the run, and a device's ceilings and a template's calibrations.  Who owns
 * a run and the claims between concurrent tuners are db_claim.c's. */
#include "db/db_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sha256.h"
#include "core/version.h"

/* The hot statements, prepared once per connection (db_stmt_cached). */
static const char *const stmt_sql[ST_COUNT] = {
    [ST_INSERT_RESULT] =
        "INSERT INTO "
        "results(run_id,problem_id,device_id,template_id,toolkit,created_at," RESULT_COLS
        ") VALUES(?,?,?,?,?,?," RESULT_QMARKS ")",
    [ST_HAS_RESULT] =
        "SELECT 1 FROM results WHERE problem_id=? AND device_id=? AND template_id=? "
        "AND toolkit=? AND config=? LIMIT 1",
    [ST_PREVIOUS] = "SELECT " RESULT_COLS_R
                    ", r.id FROM results r JOIN templates t ON t.id=r.template_id "
                    "WHERE r.problem_id=? AND r.device_id=? AND r.toolkit=? AND t.name=? AND "
                    "(r.template_id=? OR r.code_hash<>'') ORDER BY r.id",
    [ST_TEMPLATE_INSERT] =
        "INSERT OR IGNORE INTO templates(name,family,source_hash,manifest_hash) "
        "VALUES(?,?,?,?)",
    [ST_TEMPLATE_SELECT] =
        "SELECT id FROM templates WHERE name=? AND source_hash=? AND "
        "manifest_hash=?",
    [ST_CLAIM_RELEASE] =
        "DELETE FROM claims WHERE problem_id=? AND device_id=? AND toolkit=? AND "
        "key=? AND run_id=?",
    [ST_BEAT] = "UPDATE run_owners SET beat_at=? WHERE run_id=?",
};

rt_status db_stmt_cached(db *d, int which, sqlite3_stmt **out, rt_error *err, const char *types,
                         ...) {
  *out = NULL;
  if (!d->st[which]) {
    int rc = sqlite3_prepare_v2(d->h, stmt_sql[which], -1, &d->st[which], NULL);
    if (rc != SQLITE_OK) {
      d->st[which] = NULL;
      return db_fail(d, rc, "preparing a statement", err);
    }
  }
  sqlite3_stmt *st = d->st[which];
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  va_list ap;
  va_start(ap, types);
  rt_status s = db_bindv(st, err, types, ap);
  va_end(ap);
  if (!s) *out = st;
  return s;
}

/* "done", "failed" or "interrupted": what a run may end as. */
static rt_status check_end_status(const char *status, rt_error *err) {
  if (status &&
      (!strcmp(status, "done") || !strcmp(status, "failed") || !strcmp(status, "interrupted")))
    return RT_OK;
  return rt_error_set(err, RT_ERR_INVALID, "run status '%s' is not done, failed or interrupted",
                      status ? status : "");
}

/* ---- provenance --------------------------------------------------------------------- */

/* Steps ST, an upsert whose CHECK constraint guards its kind, and ends it: a violation is
 * RT_ERR_INVALID with the text BAD_KIND. */
static rt_status step_kind_checked(db *d, sqlite3_stmt *st, const char *what, const char *bad_kind,
                                   rt_error *err) {
  int rc = sqlite3_step(st);
  if (rc != SQLITE_CONSTRAINT) return db_stmt_end(d, st, rc, what, err);
  sqlite3_finalize(st);
  return rt_error_set(err, RT_ERR_INVALID, "%s", bad_kind);
}

/* Inside a transaction: the id of a device row, created when new. */
static rt_status device_id(db *d, const db_device *dev, long long *id, rt_error *err) {
  rt_status s =
      db_exec(d, err, "storing the device",
              "INSERT OR IGNORE INTO devices(name,sm_count,cc_major,cc_minor,driver_version) "
              "VALUES(?,?,?,?,?)",
              "tiiii", dev->name, dev->sm_count, dev->cc_major, dev->cc_minor, dev->driver_version);
  sqlite3_stmt *st;
  if (s || (s = db_stmt(d, &st, err,
                        "SELECT id FROM devices WHERE name=? AND sm_count=? AND cc_major=? AND "
                        "cc_minor=? AND driver_version=?",
                        "tiiii", dev->name, dev->sm_count, dev->cc_major, dev->cc_minor,
                        dev->driver_version)))
    return s;
  int f = 0;
  s = db_query_int(d, st, id, &f, err);
  if (!s && !f) s = rt_error_set(err, RT_ERR_INTERNAL, "device row vanished");
  return s;
}

static rt_status ceiling_set(db *d, const db_device *dev, const char *kind, const char *dtype,
                             double value, rt_error *err) {
  long long did = 0;
  rt_status s = device_id(d, dev, &did, err);
  if (s) return s;
  char at[32];
  db_now_iso(at, sizeof at);
  sqlite3_stmt *st;
  if ((s = db_stmt(
           d, &st, err,
           "INSERT INTO device_ceilings(device_id,kind,dtype,value,measured_at) VALUES(?,?,?,?,?) "
           "ON CONFLICT(device_id,kind,dtype) DO UPDATE SET value=excluded.value, "
           "measured_at=excluded.measured_at",
           "Ittdt", did, kind, dtype, value, at)))
    return s;
  char bad[160];
  snprintf(bad, sizeof bad, "ceiling kind '%s' is not copy_bw or matmul", kind);
  return step_kind_checked(d, st, "storing a ceiling", bad, err);
}

rt_status db_ceiling_set(db *d, const db_device *dev, const char *kind, const char *dtype,
                         double value, rt_error *err) {
  rt_status s = db_tx_begin(d, err);
  if (s) return s;
  return db_tx_end(d, ceiling_set(d, dev, kind, dtype, value, err), err);
}

static rt_status calibration_set(db *d, const char *gpu, const char *template_name,
                                 const char *kind, double ratio, int samples, rt_error *err) {
  char at[32];
  db_now_iso(at, sizeof at);
  sqlite3_stmt *st;
  rt_status s =
      db_stmt(d, &st, err,
              "INSERT INTO calibrations(gpu,template,kind,ratio,samples,measured_at) "
              "VALUES(?,?,?,?,?,?) ON CONFLICT(gpu,template,kind) DO UPDATE SET "
              "ratio=excluded.ratio, samples=excluded.samples, measured_at=excluded.measured_at",
              "tttdit", gpu, template_name, kind, ratio, samples, at);
  if (s) return s;
  char bad[160];
  snprintf(bad, sizeof bad, "calibration kind '%s' is not dram_bytes", kind);
  return step_kind_checked(d, st, "storing a calibration", bad, err);
}

rt_status db_calibration_set(db *d, const char *gpu, const char *template_name, const char *kind,
                             double ratio, int samples, rt_error *err) {
  if (!(ratio > 0) || !isfinite(ratio) || samples < 1)
    return rt_error_set(err, RT_ERR_INVALID,
                        "a calibration of %s on %s needs a positive ratio and "
                        "samples (got %g from %d)",
                        template_name, gpu, ratio, samples);
  rt_status s = db_tx_begin(d, err);
  if (s) return s;
  return db_tx_end(d, calibration_set(d, gpu, template_name, kind, ratio, samples, err), err);
}

/* ---- starting a run ----------------------------------------------------------------- */

static rt_status problem_id(db *d, const problem *p, long long *id, rt_error *err) {
  char dims[256];
  db_dims_text(p, dims, sizeof dims);
  rt_status s = db_exec(
      d, err, "storing the problem",
      "INSERT OR IGNORE INTO problems(family,shape,dtype,layout,dims,args) VALUES(?,?,?,?,?,?)",
      "tttttt", p->family, p->shape, p->dtype, p->layout, dims, p->args);
  sqlite3_stmt *st;
  if (s ||
      (s = db_stmt(d, &st, err,
                   "SELECT id FROM problems WHERE family=? AND shape=? AND dtype=? AND layout=?",
                   "tttt", p->family, p->shape, p->dtype, p->layout)))
    return s;
  int f = 0;
  s = db_query_int(d, st, id, &f, err);
  if (!s && !f) s = rt_error_set(err, RT_ERR_INTERNAL, "problem row vanished");
  return s;
}

/* Inside the transaction: the run's rows, its owner, and the dead runs reaped. */
static rt_status run_begin(db_run *r, rt_error *err) {
  db *d = r->d;
  const db_run_spec *spec = &r->spec;
  rt_status s;
  if ((s = problem_id(d, &spec->prob, &r->problem_id, err)) ||
      (s = device_id(d, &spec->prov.device, &r->device_id, err)))
    return s;
  char at[32];
  db_now_iso(at, sizeof at);
  if ((s = db_exec(d, err, "starting a run",
                   "INSERT INTO "
                   "runs(problem_id,device_id,toolkit,arch,strategy,seed,budget,rooftune_version,"
                   "command,started_at,status) VALUES(?,?,?,?,?,?,?,?,?,?,'running')",
                   "IItttIIttt", r->problem_id, r->device_id, spec->prov.toolkit, spec->prov.arch,
                   spec->strategy, (long long)spec->seed, spec->budget, ROOFTUNE_VERSION,
                   spec->command, at)))
    return s;
  r->id = sqlite3_last_insert_rowid(d->h);
  if ((s = db_run_own(d, r->id, err))) return s;
  return db_reap_dead_runs(d, r->id, err);
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
  rt_status s = db_tx_begin(d, err);
  if (!s) s = db_tx_end(d, run_begin(r, err), err);
  if (s) {
    free(r);
    return s;
  }
  *out = r;
  return RT_OK;
}

long long db_run_id(const db_run *r) { return r->id; }
void db_run_free(db_run *r) { free(r); }

/* ---- templates ---------------------------------------------------------------------- */

/* Inside or outside a transaction: the templates.id of (name, hashes), created when new. */
static rt_status template_id(db *d, const char *name, const char *family, const char *src,
                             const char *man, long long *id, rt_error *err) {
  sqlite3_stmt *st;
  rt_status s = db_stmt_cached(d, ST_TEMPLATE_INSERT, &st, err, "tttt", name, family, src, man);
  if (s || (s = db_stmt_end(d, st, sqlite3_step(st), "storing the template", err)) ||
      (s = db_stmt_cached(d, ST_TEMPLATE_SELECT, &st, err, "ttt", name, src, man)))
    return s;
  int f = 0;
  s = db_query_int(d, st, id, &f, err);
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
    rt_copy(t->name, sizeof t->name, name);
  }
  t->id = id;
  return RT_OK;
}

rt_status db_run_template(db_run *r, const char *name, const char *family, const char *source_hash,
                          const char *manifest_hash, rt_error *err) {
  if (!name || !*name || strlen(name) >= sizeof r->tmpl[0].name)
    return rt_error_set(err, RT_ERR_INVALID, "template name '%s' is empty or too long",
                        name ? name : "");
  rt_status s = db_tx_begin(r->d, err);
  if (s) return s;
  long long id = 0;
  if ((s = db_tx_end(r->d, template_id(r->d, name, family, source_hash, manifest_hash, &id, err),
                     err)))
    return s;
  return run_add_template(r, name, id, err);
}

/* The template id for a result's template name: declared, or a library candidate (created when
 * create is 1; else *id = -1 when there is none). */
static rt_status run_template_id(db_run *r, const char *name, int create, long long *id,
                                 rt_error *err) {
  run_template *t = run_find_template(r, name);
  if (t) {
    *id = t->id;
    return RT_OK;
  }
  if (!create) {
    sqlite3_stmt *st;
    rt_status s = db_stmt_cached(r->d, ST_TEMPLATE_SELECT, &st, err, "ttt", name, "", "");
    int f = 0;
    if (!s) s = db_query_int(r->d, st, id, &f, err);
    if (!s && !f) *id = -1;
    return s;
  }
  rt_status s = template_id(r->d, name, r->spec.prob.family, "", "", id, err);
  if (!s) s = run_add_template(r, name, *id, err);
  return s;
}

/* ---- results ------------------------------------------------------------------------ */

/* Binding one field of each kind (RESULT_COLUMNS). */
static void bind_TEXT(sqlite3_stmt *st, int i, const char *v) {
  sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_TRANSIENT);
}
static void bind_REAL(sqlite3_stmt *st, int i, double v) {
  if (isnan(v) || isinf(v))
    sqlite3_bind_null(st, i);
  else
    sqlite3_bind_double(st, i, v);
}
static void bind_INT(sqlite3_stmt *st, int i, int v) { sqlite3_bind_int(st, i, v); }
static void bind_INT64(sqlite3_stmt *st, int i, long long v) { sqlite3_bind_int64(st, i, v); }
static void bind_BOOL(sqlite3_stmt *st, int i, int v) { sqlite3_bind_int(st, i, v != 0); }
static void bind_STATUS(sqlite3_stmt *st, int i, rt_status v) {
  bind_TEXT(st, i, rt_status_name(v));
}
static void bind_TIMING(sqlite3_stmt *st, int i, timing_kind v) {
  bind_TEXT(st, i, timing_kind_name(v));
}

/* Binds the RESULT_COLUMNS of c from parameter i on; returns the parameter after them. */
static int bind_result(sqlite3_stmt *st, int i, const candidate_result *c) {
#define COL_BIND(col, json, kind, member, group) bind_##kind(st, i++, c->member);
  RESULT_COLUMNS(COL_BIND, COL_BIND)
#undef COL_BIND
  return i;
}

/* A result's fields the schema cannot hold to: a known timing kind, and verified only where a
 * measuring device checked (measured, OK, with the check's error: what db check holds too). */
static rt_status check_result(const candidate_result *c, rt_error *err) {
  if (!c->template_name[0])
    return rt_error_set(err, RT_ERR_INVALID, "a result without a template name");
  if (c->timing < TIMING_MEASURED || c->timing > TIMING_REPLAYED)
    return rt_error_set(err, RT_ERR_INVALID, "result of %s: unknown timing kind %d",
                        c->template_name, (int)c->timing);
  if (c->verified &&
      (c->timing != TIMING_MEASURED || c->status != RT_OK || !(c->verify_error >= 0)))
    return rt_error_set(err, RT_ERR_INVALID,
                        "result of %s %s says verified, but it is %s, %s, with check "
                        "error %g: only a measured OK result whose reference check ran is verified",
                        c->template_name, c->config, timing_kind_name(c->timing),
                        rt_status_name(c->status), c->verify_error);
  return RT_OK;
}

/* Inside a transaction: inserts one result and releases its claim (whoever waits for it reads
 * the result). */
static rt_status insert_result(db_run *r, const candidate_result *c, long long *id, rt_error *err) {
  long long tid = 0;
  rt_status s = check_result(c, err);
  if (!s) s = run_template_id(r, c->template_name, 1, &tid, err);
  if (s) return s;
  char at[32];
  db_now_iso(at, sizeof at);
  sqlite3_stmt *st;
  if ((s = db_stmt_cached(r->d, ST_INSERT_RESULT, &st, err, "IIIItt", r->id, r->problem_id,
                          r->device_id, tid, r->spec.prov.toolkit, at)))
    return s;
  bind_result(st, 7, c);
  if ((s = db_stmt_end(r->d, st, sqlite3_step(st), "storing a result", err))) return s;
  if (id) *id = sqlite3_last_insert_rowid(r->d->h);
  char key[1024];
  db_result_key(c->template_name, c->config, c->code_hash, key, sizeof key);
  if ((s = db_stmt_cached(r->d, ST_CLAIM_RELEASE, &st, err, "IIttI", r->problem_id, r->device_id,
                          r->spec.prov.toolkit, key, r->id)))
    return s;
  return db_stmt_end(r->d, st, sqlite3_step(st), "releasing a claim", err);
}

/* Inside a transaction: the run's owner was heard from now (claims of a run on another machine
 * expire DB_CLAIM_LEASE_S after its last write). */
static rt_status run_beat(db_run *r, rt_error *err) {
  sqlite3_stmt *st;
  rt_status s = db_stmt_cached(r->d, ST_BEAT, &st, err, "II", (long long)time(NULL), r->id);
  return s ? s : db_stmt_end(r->d, st, sqlite3_step(st), "recording the run's progress", err);
}

rt_status db_run_store_many(db_run *r, const candidate_result *res, size_t n, long long *ids,
                            rt_error *err) {
  rt_status s = db_tx_begin(r->d, err);
  if (s) return s;
  /* Templates created inside a rolled-back transaction must not stay in the map. */
  int ntmpl = r->ntmpl;
  for (size_t i = 0; i < n && !s; i++) s = insert_result(r, &res[i], ids ? &ids[i] : NULL, err);
  if (!s) s = run_beat(r, err);
  if ((s = db_tx_end(r->d, s, err))) r->ntmpl = ntmpl;
  return s;
}

rt_status db_run_store(db_run *r, const candidate_result *res, long long *result_id,
                       rt_error *err) {
  return db_run_store_many(r, res, 1, result_id, err);
}

#define COL_SET_FIRST(col, json, kind, member, group) #col "=?"
#define COL_SET_REST(col, json, kind, member, group)  "," #col "=?"

static rt_status update_result(db_run *r, long long result_id, const candidate_result *res,
                               rt_error *err) {
  sqlite3_stmt *st;
  rt_status s = check_result(res, err);
  if (s) return s;
  s = db_stmt(
      r->d, &st, err,
      "UPDATE results SET " RESULT_COLUMNS(COL_SET_FIRST, COL_SET_REST) " WHERE id=? AND run_id=?",
      "");
  if (s) return s;
  int i = bind_result(st, 1, res);
  sqlite3_bind_int64(st, i++, result_id);
  sqlite3_bind_int64(st, i, r->id);
  if ((s = db_stmt_end(r->d, st, sqlite3_step(st), "updating a result", err))) return s;
  if (sqlite3_changes(r->d->h) != 1)
    return rt_error_set(err, RT_ERR_NOT_FOUND, "result %lld is not one of run %lld's", result_id,
                        r->id);
  return RT_OK;
}

rt_status db_run_update_result(db_run *r, long long result_id, const candidate_result *res,
                               rt_error *err) {
  rt_status s = db_tx_begin(r->d, err);
  if (s) return s;
  return db_tx_end(r->d, update_result(r, result_id, res, err), err);
}

/* ---- resume ------------------------------------------------------------------------- */

int db_run_has_result(db_run *r, const char *template_name, const char *config) {
  long long tid = -1;
  if (run_template_id(r, template_name, 0, &tid, NULL) || tid < 0) return 0;
  sqlite3_stmt *st;
  if (db_stmt_cached(r->d, ST_HAS_RESULT, &st, NULL, "IIItt", r->problem_id, r->device_id, tid,
                     r->spec.prov.toolkit, config))
    return 0;
  int found = sqlite3_step(st) == SQLITE_ROW;
  sqlite3_reset(st);
  return found;
}

/* A stored result that resuming would tell as data, checked as it was read (st on its row,
 * results.id in the last column): an unknown status or timing, or a success without a time,
 * is a damaged row, an error naming the file and the row (db_read_result would make it a
 * failure or a replay without a word). */
static rt_status check_stored(db *d, sqlite3_stmt *st, const candidate_result *c, rt_error *err) {
  int n = sqlite3_column_count(st);
  char what[200] = "";
  for (int i = 0; i < n - 1 && !what[0]; i++) {
    const char *col = sqlite3_column_name(st, i), *v = (const char *)sqlite3_column_text(st, i);
    int type = sqlite3_column_type(st, i);
    if (!strcmp(col, "status") && rt_status_from_name(v ? v : "") < 0) {
      snprintf(what, sizeof what, "status '%.40s' is not one rooftune writes", v ? v : "NULL");
    } else if (!strcmp(col, "timing") && timing_kind_parse(v ? v : "") < 0) {
      snprintf(what, sizeof what, "timing '%.40s' is not measured, predicted or replayed",
               v ? v : "NULL");
    } else if (!strcmp(col, "time_ms") && c->status == RT_OK) {
      if (type == SQLITE_FLOAT || type == SQLITE_INTEGER) {
        if (!(c->time_ms > 0) || !(c->time_ms < 1e20))
          snprintf(what, sizeof what, "a successful result with time_ms %g, not a time",
                   c->time_ms);
      } else {
        snprintf(what, sizeof what, "a successful result with time_ms %s%.40s%s, not a time",
                 v ? "'" : "", v ? v : "NULL", v ? "'" : "");
      }
    }
  }
  if (!what[0]) return RT_OK;
  rt_error_locate(err, d->path, NULL, 0, 0);
  return rt_error_set(err, RT_ERR_DB,
                      "results row %lld (%.60s %.200s): %s: the row is damaged; "
                      "'rooftune db check --db %s' lists what is wrong",
                      (long long)sqlite3_column_int64(st, n - 1), c->template_name, c->config, what,
                      d->path);
}

rt_status db_run_previous(db_run *r, const char *template_name, candidate_result **out, size_t *n,
                          rt_error *err) {
  *out = NULL;
  *n = 0;
  long long tid = -1;
  rt_status s = run_template_id(r, template_name, 0, &tid, err);
  if (s || tid < 0) return s;
  sqlite3_stmt *st;
  if ((s = db_stmt_cached(r->d, ST_PREVIOUS, &st, err, "IIttI", r->problem_id, r->device_id,
                          r->spec.prov.toolkit, template_name, tid)))
    return s;
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
    rt_copy(c->template_name, sizeof c->template_name, template_name);
    rt_copy(c->device_name, sizeof c->device_name, r->spec.prov.device.name);
    db_read_result(st, 0, c);
    if ((s = check_stored(r->d, st, c, err))) break;
  }
  rt_status e = db_stmt_end(r->d, st, s ? SQLITE_DONE : rc, "reading earlier results", err);
  if (!s) s = e;
  if (s) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return s;
}

/* ---- winners ------------------------------------------------------------------------ */

/* The winner's key in the statements below: problem, device, template, toolkit (in this order
 * from the parameter the SQL starts them at). */
#define WINNER_KEY "problem_id=? AND device_id=? AND template_id=? AND toolkit=?"

/* Inside the transaction: the winner row, its cubin and its serving recipe. */
static rt_status store_winner(db_run *r, long long result_id, long long tid, const char *toolkit,
                              const db_winner *w, rt_error *err) {
  db *d = r->d;
  char at[32];
  db_now_iso(at, sizeof at);
  int has_cubin = w && w->cubin && w->cubin_size;
  sqlite3_stmt *st;
  rt_status s = db_stmt(
      d, &st, err,
      "INSERT INTO "
      "winners(problem_id,device_id,template_id,toolkit,result_id,cubin_bytes," WINNER_COLS
      ",updated_at) VALUES(?,?,?,?,?,?," WINNER_QMARKS
      ",?) ON CONFLICT("
      "problem_id,device_id,template_id,toolkit) DO UPDATE SET result_id=excluded.result_id,"
      "cubin_bytes=excluded.cubin_bytes," WINNER_EXCLUDED ",updated_at=excluded.updated_at",
      "IIItII", r->problem_id, r->device_id, tid, toolkit, result_id,
      has_cubin ? (long long)w->cubin_size : 0LL);
  if (s) return s;
  /* the hash is of the bytes stored here, whatever the caller's copy says */
  db_winner hashed;
  if (w)
    hashed = *w;
  else
    memset(&hashed, 0, sizeof hashed);
  hashed.cubin_sha256[0] = 0;
  if (has_cubin) {
    unsigned char dg[32];
    sha256(w->cubin, w->cubin_size, dg);
    sha256_hex(dg, hashed.cubin_sha256);
  }
  w = &hashed;
  int i = 7;
#define WBIND_TEXT(member)       sqlite3_bind_text(st, i++, w->member, -1, SQLITE_TRANSIENT);
#define WBIND_UINT(member)       sqlite3_bind_int64(st, i++, w->member);
#define WBIND(col, kind, member) WBIND_##kind(member)
  WINNER_COLUMNS(WBIND, WBIND)
  sqlite3_bind_text(st, i++, at, -1, SQLITE_TRANSIENT);
  if ((s = db_stmt_end(d, st, sqlite3_step(st), "storing the winner", err))) return s;
  /* The cubin lives in its own table, keyed by the winner's row. */
  if (has_cubin)
    s = db_exec(
        d, err, "storing the cubin",
        "INSERT INTO winner_cubins(winner_id,cubin) SELECT id, ? FROM winners WHERE " WINNER_KEY
        " ON CONFLICT(winner_id) DO UPDATE SET cubin=excluded.cubin",
        "bIIIt", w->cubin, w->cubin_size, r->problem_id, r->device_id, tid, toolkit);
  else
    s = db_exec(
        d, err, "storing the cubin",
        "DELETE FROM winner_cubins WHERE winner_id IN (SELECT id FROM winners WHERE " WINNER_KEY
        ")",
        "IIIt", r->problem_id, r->device_id, tid, toolkit);
  if (s) return s;
  /* The serving recipe, also in a table of its own (schema 4). */
  if (w->env && *w->env)
    return db_exec(
        d, err, "storing the serving recipe",
        "INSERT INTO winner_recipes(winner_id,env,derived,constraints) SELECT id, ?, ?, ? FROM "
        "winners WHERE " WINNER_KEY
        " ON CONFLICT(winner_id) DO UPDATE SET env=excluded.env, "
        "derived=excluded.derived, constraints=excluded.constraints",
        "tttIIIt", w->env, w->derived ? w->derived : "", w->constraints ? w->constraints : "",
        r->problem_id, r->device_id, tid, toolkit);
  return db_exec(
      d, err, "storing the serving recipe",
      "DELETE FROM winner_recipes WHERE winner_id IN (SELECT id FROM winners WHERE " WINNER_KEY ")",
      "IIIt", r->problem_id, r->device_id, tid, toolkit);
}

/* Inside the transaction: stores the winner unless the stored one is at least as fast
 * (*replaced says which). */
static rt_status set_winner(db_run *r, long long result_id, const db_winner *w, int *replaced,
                            rt_error *err) {
  db *d = r->d;
  sqlite3_stmt *st;
  rt_status s = db_stmt(d, &st, err,
                        "SELECT template_id, status, time_ms, toolkit FROM results WHERE id=? AND "
                        "problem_id=? AND device_id=?",
                        "III", result_id, r->problem_id, r->device_id);
  if (s) return s;
  int rc = sqlite3_step(st);
  long long tid = 0;
  char status[32] = "", toolkit[96] = "";
  double t = NAN;
  if (rc == SQLITE_ROW) {
    tid = sqlite3_column_int64(st, 0);
    db_col_text(st, 1, status, sizeof status);
    t = db_col_real(st, 2);
    db_col_text(st, 3, toolkit, sizeof toolkit);
  } else if (rc == SQLITE_DONE) {
    sqlite3_finalize(st);
    return rt_error_set(err, RT_ERR_INVALID,
                        "result %lld is not a result of this run's problem and device", result_id);
  }
  if ((s = db_stmt_end(d, st, rc, "reading the winner", err))) return s;
  if (strcmp(status, "OK") != 0 || isnan(t))
    return rt_error_set(err, RT_ERR_INVALID, "result %lld failed (%s) and cannot win", result_id,
                        status);
  if ((s = db_stmt(d, &st, err,
                   "SELECT r.time_ms FROM winners w JOIN results r ON r.id=w.result_id WHERE "
                   "w.problem_id=? AND "
                   "w.device_id=? AND w.template_id=? AND w.toolkit=?",
                   "IIIt", r->problem_id, r->device_id, tid, toolkit)))
    return s;
  rc = sqlite3_step(st);
  int have = rc == SQLITE_ROW;
  double old = have ? db_col_real(st, 0) : NAN;
  if ((s = db_stmt_end(d, st, rc, "reading the old winner", err))) return s;
  if (have && !isnan(old) && old <= t) return RT_OK; /* the stored winner is at least as fast */
  if ((s = store_winner(r, result_id, tid, toolkit, w, err))) return s;
  *replaced = 1;
  return RT_OK;
}

rt_status db_run_set_winner(db_run *r, long long result_id, const db_winner *w, int *replaced,
                            rt_error *err) {
  int done = 0;
  if (replaced) *replaced = 0;
  rt_status s = db_tx_begin(r->d, err);
  if (s) return s;
  s = set_winner(r, result_id, w, &done, err);
  if (!s && !done) { /* nothing written */
    db_tx_rollback(r->d);
    return RT_OK;
  }
  if ((s = db_tx_end(r->d, s, err))) return s;
  if (replaced) *replaced = 1;
  return RT_OK;
}

/* ---- the end of a run --------------------------------------------------------------- */

static rt_status run_finish(db_run *r, const char *status, rt_error *err) {
  char at[32];
  db_now_iso(at, sizeof at);
  rt_status s =
      db_exec(r->d, err, "finishing the run", "UPDATE runs SET status=?, finished_at=? WHERE id=?",
              "ttI", status, at, r->id);
  if (s) return s;
  return db_exec(r->d, err, "finishing the run", "DELETE FROM claims WHERE run_id=?", "I", r->id);
}

rt_status db_run_finish(db_run *r, const char *status, rt_error *err) {
  rt_status s = check_end_status(status, err);
  if (s || (s = db_tx_begin(r->d, err))) return s;
  return db_tx_end(r->d, run_finish(r, status, err), err);
}

static rt_status run_set_status(db *d, long long run_id, const char *status, rt_error *err) {
  char at[32];
  db_now_iso(at, sizeof at);
  rt_status s = db_exec(d, err, "changing a run's status",
                        "UPDATE runs SET status=?, finished_at=coalesce(finished_at,?) WHERE id=?",
                        "ttI", status, at, run_id);
  if (s) return s;
  if (sqlite3_changes(d->h) != 1) {
    rt_error_locate(err, d->path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_NOT_FOUND, "no run %lld in the database", run_id);
  }
  return RT_OK;
}

rt_status db_run_set_status(db *d, long long run_id, const char *status, rt_error *err) {
  rt_status s = check_end_status(status, err);
  if (s) return s;
  if (!d->writable)
    return rt_error_set(err, RT_ERR_USAGE, "%s is open read-only; cannot change run %lld", d->path,
                        run_id);
  if ((s = db_tx_begin(d, err))) return s;
  return db_tx_end(d, run_set_status(d, run_id, status, err), err);
}
