/* db_claim.c — concurrent tuners of one database (db.h): which process owns a run (host, boot,
 * pid and its start time), runs whose owner is gone marked "interrupted", and the claims that
 * keep two tuners of a problem from evaluating the same candidate. */
#include "db/db_impl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* ---- which process owns a run ------------------------------------------------------- */

typedef struct proc_id {
  char host[256];  /* gethostname() */
  char boot[64];   /* /proc/sys/kernel/random/boot_id, "" when unknown */
  long long pid;   /* getpid() */
  long long start; /* start time in clock ticks since boot (/proc/PID/stat), 0 when unknown */
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
  if (gethostname(id->host, sizeof id->host - 1) != 0) rt_copy(id->host, sizeof id->host, "?");
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

rt_status db_run_own(db *d, long long run_id, rt_error *err) {
  proc_id me;
  proc_self(&me);
  return db_exec(d, err, "recording the run's process",
                 "INSERT OR REPLACE INTO run_owners(run_id,host,boot_id,pid,pid_start,beat_at) "
                 "VALUES(?,?,?,?,?,?)",
                 "IttIII", run_id, me.host, me.boot, me.pid, me.start, (long long)time(NULL));
}

/* Inside a transaction: a run still "running" whose owner process is gone was killed; it
 * becomes "interrupted" (its committed results stay) and its claims are released. */
static rt_status mark_interrupted(db *d, long long run_id, rt_error *err) {
  char at[32];
  db_now_iso(at, sizeof at);
  rt_status s =
      db_exec(d, err, "marking a killed run",
              "UPDATE runs SET status='interrupted', finished_at=? WHERE id=? AND status='running'",
              "tI", at, run_id);
  if (s) return s;
  return db_exec(d, err, "releasing a killed run's claims", "DELETE FROM claims WHERE run_id=?",
                 "I", run_id);
}

rt_status db_reap_dead_runs(db *d, long long self, rt_error *err) {
  sqlite3_stmt *st;
  rt_status s =
      db_stmt(d, &st, err,
              "SELECT r.id, o.host, o.boot_id, o.pid, o.pid_start, o.beat_at FROM runs r JOIN "
              "run_owners o ON o.run_id=r.id WHERE r.status='running' AND r.id<>?",
              "I", self);
  if (s) return s;
  long long dead[64];
  int ndead = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && ndead < 64)
    if (!owner_alive((const char *)sqlite3_column_text(st, 1),
                     (const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 3),
                     sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5)))
      dead[ndead++] = sqlite3_column_int64(st, 0);
  if ((s = db_stmt_end(d, st, rc, "reading running runs", err))) return s;
  for (int i = 0; i < ndead && !s; i++)
    s = mark_interrupted(d, dead[i], err); /* the next run takes the rest */
  return s;
}

/* ---- claims ------------------------------------------------------------------------- */

void db_result_key(const char *template_name, const char *config, const char *code_hash, char *buf,
                   size_t size) {
  if (code_hash && *code_hash)
    snprintf(buf, size, "code:%s", code_hash);
  else
    snprintf(buf, size, "config:%s:%s", template_name ? template_name : "", config ? config : "");
}

/* Inside a transaction: the oldest stored result of the candidate for this run's problem,
 * device and toolkit (by code hash when known, else by template name and configuration). */
static rt_status find_result(db_run *r, const char *template_name, const char *config,
                             const char *code_hash, candidate_result *out, int *found,
                             rt_error *err) {
  *found = 0;
  sqlite3_stmt *st;
  rt_status s = code_hash && *code_hash
                    ? db_stmt(r->d, &st, err,
                              "SELECT t.name, " RESULT_COLS_R
                              " FROM results r JOIN templates t ON t.id=r.template_id "
                              "WHERE r.problem_id=? AND r.device_id=? AND r.toolkit=? AND "
                              "r.code_hash=? ORDER BY r.id LIMIT 1",
                              "IItt", r->problem_id, r->device_id, r->spec.prov.toolkit, code_hash)
                    : db_stmt(r->d, &st, err,
                              "SELECT t.name, " RESULT_COLS_R
                              " FROM results r JOIN templates t ON t.id=r.template_id "
                              "WHERE r.problem_id=? AND r.device_id=? AND r.toolkit=? AND t.name=? "
                              "AND r.config=? "
                              "ORDER BY r.id LIMIT 1",
                              "IIttt", r->problem_id, r->device_id, r->spec.prov.toolkit,
                              template_name, config);
  if (s) return s;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *found = 1;
    if (out) {
      memset(out, 0, sizeof *out);
      db_col_text(st, 0, out->template_name, sizeof out->template_name);
      rt_copy(out->device_name, sizeof out->device_name, r->spec.prov.device.name);
      db_read_result(st, 1, out);
    }
  }
  return db_stmt_end(r->d, st, rc, "reading a stored result", err);
}

/* Inside a transaction: *live = 1 when the claim on KEY is held by another live run (*holder
 * that run); a claim of a dead run marks that run interrupted. */
static rt_status claim_holder(db_run *r, const char *key, int *live, long long *holder,
                              rt_error *err) {
  *live = 0;
  sqlite3_stmt *st;
  rt_status s = db_stmt(
      r->d, &st, err,
      "SELECT c.run_id, c.claimed_at, u.status, o.host, o.boot_id, o.pid, o.pid_start, "
      "o.beat_at FROM claims c LEFT JOIN runs u ON u.id=c.run_id LEFT JOIN run_owners o ON "
      "o.run_id=c.run_id WHERE c.problem_id=? AND c.device_id=? AND c.toolkit=? AND c.key=?",
      "IItt", r->problem_id, r->device_id, r->spec.prov.toolkit, key);
  if (s) return s;
  int rc = sqlite3_step(st);
  long long owner = 0;
  int exists = rc == SQLITE_ROW;
  if (exists) {
    owner = sqlite3_column_int64(st, 0);
    const char *status = (const char *)sqlite3_column_text(st, 2);
    if (owner == r->id)
      *live = 0;
    else if (!status || strcmp(status, "running"))
      *live = 0;                                        /* finished, or gone from runs */
    else if (sqlite3_column_type(st, 3) == SQLITE_NULL) /* no owner recorded: the claim's age */
      *live = (long long)time(NULL) - sqlite3_column_int64(st, 1) < DB_CLAIM_LEASE_S;
    else
      *live = owner_alive((const char *)sqlite3_column_text(st, 3),
                          (const char *)sqlite3_column_text(st, 4), sqlite3_column_int64(st, 5),
                          sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 7));
  }
  if ((s = db_stmt_end(r->d, st, rc, "reading a claim", err))) return s;
  if (*live) {
    *holder = owner;
    return RT_OK;
  }
  if (exists && owner != r->id) return mark_interrupted(r->d, owner, err); /* its run is dead */
  return RT_OK;
}

/* Inside the transaction: DB_CLAIM_DONE, _HELD (by *holder) or _GRANTED (the claim written). */
static rt_status claim(db_run *r, const char *template_name, const char *config,
                       const char *code_hash, int *state, candidate_result *done, long long *holder,
                       rt_error *err) {
  char key[1024];
  db_result_key(template_name, config, code_hash, key, sizeof key);
  int found = 0;
  rt_status s = find_result(r, template_name, config, code_hash, done, &found, err);
  if (s) return s;
  if (found) {
    *state = DB_CLAIM_DONE;
    return RT_OK;
  }
  int live = 0;
  if ((s = claim_holder(r, key, &live, holder, err)) || live) return s; /* HELD */
  if ((s = db_exec(
           r->d, err, "claiming a candidate",
           "INSERT INTO claims(problem_id,device_id,toolkit,key,run_id,claimed_at) "
           "VALUES(?,?,?,?,?,?) "
           "ON CONFLICT(problem_id,device_id,toolkit,key) DO UPDATE SET run_id=excluded.run_id, "
           "claimed_at=excluded.claimed_at",
           "IIttII", r->problem_id, r->device_id, r->spec.prov.toolkit, key, r->id,
           (long long)time(NULL))))
    return s;
  *state = DB_CLAIM_GRANTED;
  return RT_OK;
}

rt_status db_run_claim(db_run *r, const char *template_name, const char *config,
                       const char *code_hash, int *state, candidate_result *done, long long *holder,
                       rt_error *err) {
  *state = DB_CLAIM_HELD;
  long long h = 0;
  rt_status s = db_tx_begin(r->d, err);
  if (s) return s;
  s = claim(r, template_name, config, code_hash, state, done, &h, err);
  if (holder) *holder = h;
  if (!s && *state != DB_CLAIM_GRANTED) { /* nothing to keep */
    db_tx_rollback(r->d);
    return RT_OK;
  }
  if ((s = db_tx_end(r->d, s, err)))
    *state = DB_CLAIM_HELD; /* the run's next store is its sign of life */
  return s;
}

rt_status db_run_release(db_run *r, const char *template_name, const char *config,
                         const char *code_hash, rt_error *err) {
  char key[1024];
  db_result_key(template_name, config, code_hash, key, sizeof key);
  rt_status s = db_tx_begin(r->d, err);
  if (s) return s;
  sqlite3_stmt *st;
  if (!(s = db_stmt_cached(r->d, ST_CLAIM_RELEASE, &st, err, "IIttI", r->problem_id, r->device_id,
                           r->spec.prov.toolkit, key, r->id)))
    s = db_stmt_end(r->d, st, sqlite3_step(st), "releasing a claim", err);
  return db_tx_end(r->d, s, err);
}
