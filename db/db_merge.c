/* db_merge.c — merging another rooftune database into this one (db.h): runs, results,
 * winners with their cubins and serving recipes, and ceilings, keyed by the random uids that
 * make merging twice a no-op, in one write transaction. */
#include "db/db_impl.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

/* A result already merged (its uid) is skipped; any other that breaks a constraint fails the
 * merge (OR IGNORE dropped a damaged row without a word), and blame_source names it. */
static const char merge_results_sql[] =
    "INSERT INTO main.results(uid,run_id,problem_id,device_id,template_id,toolkit,"
    "created_at," RESULT_COLS
    ") SELECT r.uid,mr.mid,mp.mid,md.mid,mt.mid,r.toolkit,r.created_at," RESULT_COLS_R
    " FROM src.results r JOIN map_run mr ON mr.sid=r.run_id "
    "JOIN map_prob mp ON mp.sid=r.problem_id JOIN map_dev md ON md.sid=r.device_id "
    "JOIN map_tpl mt ON mt.sid=r.template_id WHERE r.uid NOT IN (SELECT uid FROM main.results) "
    "ORDER BY r.id";

static const char merge_winners_sql[] =
    "CREATE TEMP TABLE map_res AS SELECT s.id AS sid, m.id AS mid FROM src.results s "
    "  JOIN main.results m USING(uid);\n"
    "INSERT INTO "
    "main.winners(problem_id,device_id,template_id,toolkit,result_id,cubin_bytes," WINNER_COLS
    ",updated_at) "
    "  SELECT mp.mid,md.mid,mt.mid,w.toolkit,mr.mid,w.cubin_bytes," WINNER_COLS_W
    ",w.updated_at "
    "  FROM src.winners w "
    "  JOIN map_prob mp ON mp.sid=w.problem_id JOIN map_dev md ON md.sid=w.device_id "
    "  JOIN map_tpl mt ON mt.sid=w.template_id JOIN map_res mr ON mr.sid=w.result_id WHERE 1 "
    "  ON CONFLICT(problem_id,device_id,template_id,toolkit) DO UPDATE SET "
    "  result_id=excluded.result_id,cubin_bytes=excluded.cubin_bytes," WINNER_EXCLUDED
    ","
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

/* A cubin of SRC whose bytes do not have the SHA-256 stored with its winner is refused before
 * anything is merged, naming that winner of the source (a merge would spread it). */
static rt_status check_source_cubins(db *src, const char *src_path, rt_error *err) {
  sqlite3_stmt *st;
  rt_status s = db_stmt(src, &st, err,
                        "SELECT w.id, coalesce(t.name,''), coalesce(r.config,''), "
                        "rooftune_sha256(c.cubin) FROM winners w JOIN winner_cubins c ON "
                        "c.winner_id=w.id LEFT JOIN templates t ON t.id=w.template_id LEFT JOIN "
                        "results r ON r.id=w.result_id WHERE w.cubin_sha256 IS NOT "
                        "rooftune_sha256(c.cubin) ORDER BY w.id LIMIT 1",
                        "");
  if (s) return s;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    s = rt_error_set(err, RT_ERR_DB,
                     "the database to merge holds a damaged cubin: winner %lld (%.64s %.300s) has "
                     "bytes whose SHA-256 (%.12s...) is not the one stored with it; nothing was "
                     "merged: run 'rooftune db check --db %s' and merge a backup instead",
                     (long long)sqlite3_column_int64(st, 0),
                     (const char *)sqlite3_column_text(st, 1),
                     (const char *)sqlite3_column_text(st, 2),
                     (const char *)sqlite3_column_text(st, 3), src_path);
    rt_error_locate(err, src_path, NULL, 0, 0);
    sqlite3_finalize(st);
    return s;
  }
  return db_stmt_end(src, st, rc, "checking the cubins to merge", err);
}

/* Opens SRC_PATH as a database to merge: a foreign or newer file gets its own clear error, and
 * so does a damaged one (found here, a damaged page would be reported against the file merged
 * into). */
static rt_status check_source(const char *src_path, rt_error *err) {
  db *src = NULL;
  rt_status s = db_open(src_path, DB_READONLY, &src, err);
  if (s) return s;
  sqlite3_stmt *qc;
  if (!(s = db_stmt(src, &qc, err, "PRAGMA quick_check(1)", ""))) {
    int rc = sqlite3_step(qc);
    const char *t = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(qc, 0) : NULL;
    if (rc == SQLITE_ROW && t && strcmp(t, "ok") != 0) {
      s = rt_error_set(err, RT_ERR_DB,
                       "the database to merge is damaged (%s); run 'rooftune db "
                       "check --db %s' and merge a backup instead",
                       t, src_path);
      rt_error_locate(err, src_path, NULL, 0, 0);
      sqlite3_finalize(qc);
    } else {
      s = db_stmt_end(src, qc, rc, "checking the database to merge", err);
    }
  }
  if (!s) s = check_source_cubins(src, src_path, err);
  db_close(src);
  return s;
}

/* The first row of src.TABLE that breaks the constraint SQLite's message MSG names ("CHECK
 * constraint failed: EXPR", "NOT NULL constraint failed: T.C"); 0 when none is found. */
static long long bad_source_row(db *d, const char *table, const char *msg) {
  char sql[1024];
  const char *check = "CHECK constraint failed: ", *notnull = "NOT NULL constraint failed: ";
  if (!strncmp(msg, check, strlen(check))) {
    snprintf(sql, sizeof sql, "SELECT rowid FROM src.\"%s\" WHERE NOT (%s) ORDER BY rowid LIMIT 1",
             table, msg + strlen(check));
  } else if (!strncmp(msg, notnull, strlen(notnull))) {
    const char *tc = msg + strlen(notnull), *dot = strchr(tc, '.');
    if (!dot || (size_t)(dot - tc) != strlen(table) || strncmp(tc, table, strlen(table))) return 0;
    snprintf(sql, sizeof sql,
             "SELECT rowid FROM src.\"%s\" WHERE \"%.100s\" IS NULL ORDER BY rowid LIMIT 1", table,
             dot + 1);
  } else {
    return 0;
  }
  sqlite3_stmt *st = NULL;
  long long row = 0;
  if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    row = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return row;
}

/* A step of the merge failed (rc): when a row of the source breaks a constraint of the schema
 * (a file damaged or written by something else), the error names the source file and the row,
 * not the database merged into; otherwise db_fail's. */
static rt_status blame_source(db *d, int rc, const char *src_path, const char *step,
                              const char *const *tables, rt_error *err) {
  char msg[400];
  snprintf(msg, sizeof msg, "%s", sqlite3_errmsg(d->h));
  for (size_t i = 0; (rc & 0xff) == SQLITE_CONSTRAINT && tables[i]; i++) {
    long long row = bad_source_row(d, tables[i], msg);
    if (!row) continue;
    rt_error_locate(err, src_path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_DB,
                        "%s row %lld: %s: the row is damaged and nothing was merged into %s; "
                        "'rooftune db check --db %s' lists what is wrong",
                        tables[i], row, msg, d->path, src_path);
  }
  return db_fail(d, rc, step, err);
}

/* Inside the transaction, with SRC attached: every row of it. */
static rt_status merge_rows(db *d, const char *src_path, long long *added, rt_error *err) {
  static const char *const runs[] = {"runs", "problems", "devices", "templates", NULL};
  static const char *const results[] = {"results", NULL};
  static const char *const winners[] = {"winners", "winner_cubins", "winner_recipes",
                                        "device_ceilings", NULL};
  int rc = sqlite3_exec(d->h, merge_sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK) return blame_source(d, rc, src_path, "merging runs", runs, err);
  rc = sqlite3_exec(d->h, merge_results_sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK) return blame_source(d, rc, src_path, "merging results", results, err);
  if (added) *added = sqlite3_changes(d->h);
  rc = sqlite3_exec(d->h, merge_winners_sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? RT_OK : blame_source(d, rc, src_path, "merging winners", winners, err);
}

rt_status db_merge(db *d, const char *src_path, long long *added, rt_error *err) {
  if (added) *added = 0;
  if (!d->writable)
    return rt_error_set(err, RT_ERR_USAGE, "%s is open read-only; cannot merge into it", d->path);
  /* The same file under any name: attached to itself the merge would wait for its own lock. */
  struct stat sa, sb;
  if (src_path && stat(src_path, &sb) == 0 && stat(d->path, &sa) == 0 && sa.st_dev == sb.st_dev &&
      sa.st_ino == sb.st_ino) {
    rt_error_locate(err, src_path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_USAGE,
                        "is the database being merged into (%s): a database "
                        "cannot be merged into itself",
                        d->path);
  }
  rt_status s = check_source(src_path, err);
  sqlite3_stmt *st;
  if (s || (s = db_stmt(d, &st, err, "ATTACH DATABASE ? AS src", "t", src_path))) return s;
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_fail_at(d->h, src_path, rc, "attaching", err);
  if (!(s = db_tx_begin(d, err))) s = db_tx_end(d, merge_rows(d, src_path, added, err), err);
  db_exec_retry(d->h, "DETACH DATABASE src");
  return s;
}
