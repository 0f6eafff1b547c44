/* run.c — running a job, its status, merging shards (see run.h). */
#include "job/run.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db/export.h"
#include "core/fileio.h"
#include "driver/cuda_driver.h"
#include "job/report.h"
#include "tuner/recheck.h"
#include "template/catalog.h"
#include "core/util.h"

static void iso_now(char *buf, size_t size) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int file_exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

/* Writes JSON to path (fileio.h: a new file renamed into place, or a device written in place). */
static rt_status write_json(const char *path, const json_t *v, rt_error *err) {
  fileio_out o;
  rt_status rc = fileio_out_open(&o, path, err);
  if (rc) return rc;
  if (json_dumpf(v, o.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
    int e = errno;
    fileio_out_abort(&o);
    rt_error_locate(err, path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_IO, "cannot write the summary: %s",
                        e ? strerror(e) : "a write failed");
  }
  return fileio_out_commit(&o, err);
}

/* ---- devices and paths ---- */

rt_status job_devices(const job *j, const char *spec, char devices[][64], int *n, char *note,
                      size_t note_size, rt_error *err) {
  *n = 0;
  if (note_size) note[0] = 0;
  int nlist = spec ? 1 : j->ndevices;
  for (int i = 0; i < nlist; i++) {
    const char *d = spec ? spec : j->devices[i];
    if (!strcmp(d, "cuda:all")) {
      int g = 0;
      rt_error e = {0};
      if (cuda_driver_load(&e) || cuda_gpu_count(&g, &e) || g < 1) {
        rt_error_locate(err, spec ? "--device" : j->path, spec ? NULL : "device", 0, 0);
        return rt_error_set(err, RT_ERR_NO_GPU, "cuda:all: no CUDA GPU on this node (%.200s)",
                            e.text[0] ? e.text : "none found");
      }
      for (int k = 0; k < g && *n < JOB_MAX_DEVICES; k++)
        snprintf(devices[(*n)++], 64, "cuda:%d", k);
    } else if (*n < JOB_MAX_DEVICES) {
      snprintf(devices[(*n)++], 64, "%s", d);
    }
  }
  if (*n == 0) snprintf(devices[(*n)++], 64, "%s", tune_default_device(note, note_size));
  return RT_OK;
}

void job_database_path(const job *j, job_shard s, const char *db_path, char *buf, size_t size) {
  if (db_path && *db_path) {
    snprintf(buf, size, "%s", db_path);
    return;
  }
  if (s.count > 1 && j->shard_database[0]) {
    job_shard_database(j, s, buf, size);
    return;
  }
  if (j->database[0])
    snprintf(buf, size, "%s", j->database);
  else /* its folder made for the writer (one that cannot be made: db_open names the path) */
    rt_mkdir_parents(rt_default_db_path(buf, size), NULL);
}

/* The job's template folders in the search path of this process (and its workers), once. */
static rt_status use_templates(const job *j, rt_error *err) {
  char dirs[sizeof j->templates];
  snprintf(dirs, sizeof dirs, "%s", j->templates);
  for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    const char *cur = getenv("ROOFTUNE_TEMPLATE_PATH");
    size_t n = strlen(d);
    int have = 0;
    for (const char *p = cur; p && *p;) {
      const char *e = strchr(p, ':');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      if (len == n && !strncmp(p, d, n)) have = 1;
      p = e ? e + 1 : p + len;
    }
    if (!have) {
      rt_status rc = catalog_add_dir(d, err);
      if (rc) return rc;
    }
  }
  return RT_OK;
}

/* ---- locks: one per job and shard, held while the shard runs ---- */

static void lock_path(const job *j, const char *tagshard, char *buf, size_t size) {
  snprintf(buf, size, "%s/.lock-%s-shard-%s", j->output, j->name, tagshard);
}

/* 0 locked (*fd), 1 held by another process, -1 error. */
static int lock_take(const char *path, int *fd) {
  /* O_NOFOLLOW and O_NONBLOCK: a lock file is never a link to elsewhere, nor a FIFO to block on */
  *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (*fd < 0) return -1;
  struct stat sb;
  if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(*fd);
    *fd = -1;
    errno = EINVAL;
    return -1;
  }
  if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno, busy = e == EWOULDBLOCK;
    close(*fd);
    *fd = -1;
    errno = e;
    return busy ? 1 : -1;
  }
  char who[300], host[256] = "?";
  gethostname(host, sizeof host);
  int n = snprintf(who, sizeof who, "pid %ld on %s\n", (long)getpid(), host);
  if (ftruncate(*fd, 0) == 0 && n > 0) {
    ssize_t w = pwrite(*fd, who, (size_t)n, 0);
    (void)w;
  }
  return 0;
}

static void lock_release(int fd) {
  if (fd >= 0) close(fd); /* closing drops the flock */
}

/* The error of lock_take's result l (1 held, -1 with errno): held by another process, or why
 * the lock file could not be taken. */
static rt_status lock_error(const job *j, job_shard s, const char *path, int l, rt_error *err) {
  int e = errno;
  rt_error_locate(err, path, NULL, 0, 0);
  if (l > 0)
    return rt_error_set(err, RT_ERR_INVALID,
                        "job %s shard %d/%d is already running (this lock is held by another "
                        "process): wait for it or stop it",
                        j->name, s.index, s.count);
  return rt_error_set(err, RT_ERR_IO, "cannot take the lock of job %s shard %d/%d: %s", j->name,
                      s.index, s.count,
                      e == EINVAL ? "the lock's path is not a regular file" : strerror(e));
}

/* "I-of-N" for file names, from a shard. */
static void shard_file_part(job_shard s, char *buf, size_t size) {
  snprintf(buf, size, "%d-of-%d", s.index, s.count);
}

/* The job's output folder, then shard s's lock (*fd, for lock_release) and its file-name part
 * (part: "0-of-1"); an error when another process holds it or it cannot be taken. */
static rt_status shard_lock(const job *j, job_shard s, char *part, size_t size, int *fd,
                            rt_error *err) {
  rt_status rc = rt_mkdir_p(j->output, err);
  if (rc) return rc;
  char lp[1200];
  shard_file_part(s, part, size);
  lock_path(j, part, lp, sizeof lp);
  int l = lock_take(lp, fd);
  return l ? lock_error(j, s, lp, l, err) : RT_OK;
}

/* Marks "running" runs of this job that no live process holds interrupted: those of shard s
 * (whose lock we hold) and, unless only_mine, those of any other shard whose lock is free.  A
 * shard's own database holds other shards' runs only as copies of the job's database (their
 * own shards mark them), so there only_mine is set. */
static rt_status mark_dead_runs(const job *j, job_shard s, db *d, int only_mine, size_t *marked,
                                rt_error *err) {
  *marked = 0;
  db_run_info *runs = NULL;
  size_t n = 0;
  rt_status rc = db_runs(d, &runs, &n, err);
  if (rc) return rc;
  char prefix[96];
  snprintf(prefix, sizeof prefix, "[job %s shard ", j->name);
  for (size_t i = 0; i < n && !rc; i++) {
    if (strcmp(runs[i].status, "running")) continue;
    const char *t = strstr(runs[i].command, prefix);
    int a, b;
    if (!t || sscanf(t + strlen(prefix), "%d/%d]", &a, &b) != 2) continue;
    int mine = a == s.index && b == s.count, fd = -1;
    if (!mine && only_mine) continue;
    if (!mine) {
      char part[48], lp[1200];
      job_shard other = {a, b};
      shard_file_part(other, part, sizeof part);
      lock_path(j, part, lp, sizeof lp);
      if (lock_take(lp, &fd) != 0) continue; /* its process is alive (or the lock unreadable) */
    }
    rc = db_run_set_status(d, runs[i].id, "interrupted", err);
    if (!rc) (*marked)++;
    lock_release(fd);
  }
  free(runs);
  return rc;
}

/* ---- one process: one device, one shard ---- */

typedef struct run_ctx {
  const job *j;
  const job_run_options *o;
  job_shard shard;
  const char *device;    /* this process's device */
  int parallel;          /* one of several processes */
  double deadline;       /* monotonic seconds; 0: none */
  volatile int stopflag; /* what tune_run and recheck watch */
  volatile int quit;     /* ends the watchdog */
  int why;               /* 1 time budget, 2 signal */
  size_t index, total;   /* the problem being tuned */
  const job_problem *problem;
  const char *db_path; /* the database to write, chosen by the parent of a parallel run;
                              NULL: job_database_path() */
  int seeded;          /* the parent seeded it already */
} run_ctx;

static void *watchdog(void *arg) {
  run_ctx *c = arg;
  while (!c->quit) {
    if (c->o->stop && *c->o->stop) {
      if (!c->why) c->why = 2;
      c->stopflag = 1;
    } else if (c->deadline > 0 && rt_now_s() >= c->deadline) {
      if (!c->why) c->why = 1;
      c->stopflag = 1;
    }
    rt_sleep_ms(20);
  }
  return NULL;
}

static void emit(run_ctx *c, job_event *ev) {
  ev->device = c->device;
  ev->parallel = c->parallel;
  if (c->o->on_event) c->o->on_event(c->o->ctx, ev);
}

static void on_tune_progress(void *ctx, const tune_progress *p) {
  run_ctx *c = ctx;
  job_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = JOB_EV_PROGRESS;
  ev.index = c->index;
  ev.total = c->total;
  ev.problem = c->problem;
  ev.progress = p;
  emit(c, &ev);
}

/* A problem's winner in the summary; checked_on: where its output was checked ("gpu", "sim";
 * "" null). */
static json_t *best_json(const char *tmpl, const char *config, double ms, timing_kind t,
                         const char *checked_on) {
  return json_pack("{ss ss sf ss so}", "template", tmpl, "config", config, "time_ms", ms, "timing",
                   timing_kind_name(t), "checked_on",
                   checked_on[0] ? json_string(checked_on) : json_null());
}

static json_t *problem_item(const job_problem *q, const job_state *st) {
  json_t *it = json_pack("{ss ss ss ss ss sI}", "target", q->target, "shape", q->shape, "dtype",
                         q->dtype, "state", st->empty ? "empty space" : job_state_name(st->kind),
                         "reason", st->reason, "budget", (json_int_t)st->left);
  if (isfinite(st->age_s)) json_object_set_new(it, "age_s", json_real(st->age_s));
  return it;
}

static void set_count(json_t *o, const char *k, size_t v) {
  json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* A summary's counts, the job_outcome fields of the same names, in the order they are written. */
#define OUTCOME_COUNTS(X) X(evaluated) X(tuned) X(fresh) X(failed) X(left) X(regressions)

static void set_counts(json_t *s, const job_outcome *out) {
#define SET_COUNT(f) set_count(s, #f, out->f);
  OUTCOME_COUNTS(SET_COUNT)
#undef SET_COUNT
}

/* A child's summary CS's counts added to OUT. */
static void add_counts(job_outcome *out, const json_t *cs) {
#define ADD_COUNT(f) out->f += (size_t)json_integer_value(json_object_get(cs, #f));
  OUTCOME_COUNTS(ADD_COUNT)
#undef ADD_COUNT
}

/* The folder of database path DBP made (nothing to make for a name without one). */
static rt_status make_db_folder(const char *dbp, rt_error *err) {
  const char *slash = strrchr(dbp, '/');
  if (!slash || slash == dbp) return RT_OK;
  char dir[1024];
  snprintf(dir, sizeof dir, "%.*s", (int)(slash - dbp), dbp);
  return rt_mkdir_p(dir, err);
}

/* Whether a run of SHARD writes the job's report: one with the whole job's database in sight. */
static int writes_report(const job *j, const job_run_options *o, job_shard shard) {
  return !o->no_report &&
         (shard.count == 1 || !j->shard_database[0] || (o->db_path && *o->db_path));
}

/* report.html of database D into the job's output, named in summary S ("report"); RT_OK, or the
 * error in *rerr for the caller to judge. */
static rt_status attach_report(const job *j, db *d, json_t *s, rt_error *rerr) {
  char rp[1200];
  snprintf(rp, sizeof rp, "%s/report.html", j->output);
  report_options ro = {j, NULL, j->tolerance, 0};
  rt_status st = report_write(d, &ro, rp, NULL, rerr);
  if (st == RT_OK) json_object_set_new(s, "report", json_string(rp));
  return st;
}

static void set_report_error(json_t *s, const rt_error *rerr) {
  char line[1024];
  rt_error_format(rerr, line, sizeof line);
  json_object_set_new(s, "report_error", json_string(line));
}

/* summary.json, or summary-shard-PART.json for one shard of several, in the job's output. */
static rt_status write_summary(const job *j, job_shard shard, const char *part, json_t *s,
                               rt_error *err) {
  char sp[1200];
  if (shard.count > 1)
    snprintf(sp, sizeof sp, "%s/summary-shard-%s.json", j->output, part);
  else
    snprintf(sp, sizeof sp, "%s/summary.json", j->output);
  return write_json(sp, s, err);
}

/* Winner WINNER_ID of database DBP as a recheck needs it (malloc'ed), or NULL with r filled as
 * an error naming why. */
static db_entry *winner_entry(const char *dbp, long long winner_id, recheck_result *r) {
  db_entry *e = malloc(sizeof *e);
  db *d = NULL;
  rt_error err = {0};
  rt_status s = e ? db_open(dbp, DB_READONLY, &d, &err)
                  : rt_error_set(&err, RT_ERR_NOMEM, "out of memory reading a winner");
  if (!s) s = db_entry_get(d, winner_id, e, &err);
  db_close(d);
  if (!s) return e;
  free(e);
  memset(r, 0, sizeof *r);
  r->verdict = RECHECK_ERROR;
  r->now_ms = NAN;
  rt_copy(r->detail, sizeof r->detail, err.text);
  return NULL;
}

/* Re-measures the current winners of fresh problem k that are due; appends their verdicts to
 * item's "rechecks". */
static void recheck_problem(run_ctx *c, job_env *env, size_t k, const char *dbp, json_t *item,
                            job_outcome *out) {
  const job *j = c->j;
  const job_winner *w[64];
  size_t nw = job_current_winners(j, k, env, w, 64);
  if (nw > 64) nw = 64;
  char tag[160];
  job_shard_tag(j, c->shard, tag, sizeof tag);
  json_t *arr = json_array();
  for (size_t i = 0; i < nw && !c->stopflag; i++) {
    const job_winner *e = w[i];
    if (e->library || e->template_stale) continue;
    if (job_problem_split(j, k, c->shard) &&
        tune_config_shard(e->config, c->shard.count) != c->shard.index)
      continue; /* another shard rechecks it */
    recheck_verdict last_v;
    const job_run_rec *last = job_env_last_recheck(env, e, j->tolerance, &last_v);
    double measured = job_iso_time(e->created_at);
    if (last) {
      double t = job_iso_time(last->finished_at[0] ? last->finished_at : last->started_at);
      if (!(t <= measured)) measured = t;
    }
    if (isfinite(measured) && env->now - measured < j->recheck_every_s) continue;
    recheck_result r;
    db_entry *full = winner_entry(dbp, e->winner_id, &r); /* its launch, read for this recheck */
    if (full)
      recheck_winner_tagged(full, c->device, dbp, j->tolerance, j->timeout_s, c->o->worker_argv,
                            tag, &c->stopflag, &r);
    free(full);
    json_t *o = json_pack("{ss ss sf ss}", "template", e->template_name, "config", e->config,
                          "then_ms", e->time_ms, "verdict", recheck_verdict_name(r.verdict));
    if (isfinite(r.now_ms)) json_object_set_new(o, "now_ms", json_real(r.now_ms));
    if (r.detail[0]) json_object_set_new(o, "detail", json_string(r.detail));
    json_array_append_new(arr, o);
    if (recheck_is_regression(r.verdict)) out->regressions++;
    if (r.verdict == RECHECK_ERROR && !c->stopflag) out->failed++;
  }
  json_object_set_new(item, "rechecks", arr);
}

/* Tunes problem k (state st) into dbp; fills item; returns 1 when the stop flag cut it. */
static int tune_problem(run_ctx *c, size_t k, const job_state *st, const char *dbp, json_t *item,
                        job_outcome *out) {
  const job *j = c->j;
  const job_problem *q = &j->problems[k];
  char tag[160], command[512];
  job_shard_tag(j, c->shard, tag, sizeof tag);
  int cn = snprintf(command, sizeof command, "rooftune job run %.200s %s: %s %.60s %s", j->path,
                    tag, q->target, q->shape, q->dtype);
  if (cn < 0 ||
      (size_t)cn >= sizeof command) /* a long path: the tag must survive, it finds the run again */
    snprintf(command, sizeof command, "rooftune job run %s: %s %.60s %s", tag, q->target, q->shape,
             q->dtype);
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = q->target;
  o.shape = q->shape;
  o.dtype = q->dtype;
  o.device = c->device;
  o.strategy = q->strategy[0] ? q->strategy : NULL;
  o.budget = st->left;
  o.seed = q->seed;
  o.db_path = dbp;
  o.timeout_s = j->timeout_s;
  o.worker_exe = c->o->worker_exe;
  o.worker_argv = c->o->worker_argv;
  o.compile_workers = c->o->compile_workers;
  o.command = command;
  o.progress = on_tune_progress;
  o.progress_ctx = c;
  o.stop = &c->stopflag;
  if (job_problem_split(j, k, c->shard)) {
    o.shard_index = c->shard.index;
    o.shard_count = c->shard.count;
  }
  tune_report rep;
  rt_error err = {0};
  double t0 = rt_now_s();
  rt_status rc = tune_run(&o, &rep, &err);
  json_object_set_new(item, "seconds", json_real(rt_now_s() - t0));
  if (rc) {
    char line[1024];
    rt_error_format(&err, line, sizeof line);
    json_object_set_new(item, "action", json_string("failed"));
    json_object_set_new(item, "error", json_string(line));
    out->failed++;
    return 0;
  }
  int cut = rep.interrupted;
  json_object_set_new(item, "action",
                      json_string(cut                                 ? "interrupted"
                                  : st->kind == JOB_STATE_INTERRUPTED ? "resumed"
                                  : rep.have_best                     ? "tuned"
                                                                      : "failed"));
  set_count(item, "evaluated", rep.evaluated);
  set_count(item, "resumed", rep.resumed);
  set_count(item, "failed", rep.failed);
  json_object_set_new(item, "run_id", json_integer(rep.run_id));
  json_object_set_new(item, "device", json_string(rep.device));
  if (rep.note[0]) json_object_set_new(item, "note", json_string(rep.note));
  json_object_set_new(item, "best",
                      rep.have_best
                          ? best_json(rep.best.template_name, rep.best.config, rep.best.time_ms,
                                      rep.best.timing, rep.best.checked_on)
                          : json_null());
  out->evaluated += rep.evaluated;
  /* a split problem's space with fewer configurations than there are shards: this one holds
   * none, which is nothing to do, not a failure */
  int nothing = !cut && !rep.have_best && rep.nresults == 0 && job_problem_split(j, k, c->shard);
  if (!cut && !nothing) out->tuned++;
  if (nothing) {
    json_object_set_new(item, "action", json_string("nothing"));
    char why[200];
    snprintf(why, sizeof why,
             "shard %d/%d holds no configuration of this problem's space (the other shards "
             "cover it)",
             c->shard.index, c->shard.count);
    json_object_set_new(item, "note", json_string(why));
  } else if (!cut && !rep.have_best) {
    out->failed++;
    json_object_set_new(item, "error",
                        json_string(rep.nresults ? "no candidate succeeded"
                                                 : "nothing was evaluated (no configuration)"));
  }
  tune_report_free(&rep);
  return cut;
}

/* One process's whole run: shard c->shard on device c->device. */
/* The run's summary.json object: what ran where, its counts and each problem's item (PROBLEMS,
 * taken). */
static json_t *run_summary(const run_ctx *c, const job_env *env, const char *dbp,
                           const char *started, double t0, size_t marked, json_t *problems,
                           const job_outcome *out) {
  const job *j = c->j;
  json_t *s = json_object();
  json_object_set_new(s, "job", json_string(j->name));
  json_object_set_new(s, "file", json_string(j->path));
  json_object_set_new(s, "database", json_string(dbp));
  json_object_set_new(s, "device", json_string(c->device));
  json_object_set_new(s, "gpu", json_string(env->device.name));
  char sh[32];
  snprintf(sh, sizeof sh, "%d/%d", c->shard.index, c->shard.count);
  json_object_set_new(s, "shard", json_string(sh));
  json_object_set_new(s, "started_at", json_string(started));
  json_object_set_new(s, "seconds", json_real(rt_now_s() - t0));
  json_object_set_new(s, "complete", json_boolean(!c->why));
  json_object_set_new(s, "stopped",
                      c->why == 1   ? json_string("time budget")
                      : c->why == 2 ? json_string("signal")
                                    : json_null());
  set_counts(s, out);
  if (marked) set_count(s, "marked_interrupted", marked);
  json_object_set_new(s, "problems", problems);
  return s;
}

static rt_status run_one(run_ctx *c, const char *note, job_outcome *out, rt_error *err) {
  const job *j = c->j;
  const job_run_options *o = c->o;
  memset(out, 0, sizeof *out);
  char part[48];
  int lockfd = -1;
  rt_status rc = shard_lock(j, c->shard, part, sizeof part, &lockfd, err);
  if (rc) return rc;
  char dbp[1024], main_db[1024];
  job_database_path(j, c->shard, c->db_path ? c->db_path : o->db_path, dbp, sizeof dbp);
  job_database_path(j, (job_shard){0, 1}, o->db_path, main_db, sizeof main_db);
  db *d = NULL;
  job_env env;
  memset(&env, 0, sizeof env);
  pthread_t th;
  int have_thread = 0;
  json_t *problems = json_array();
  char started[32];
  iso_now(started, sizeof started);
  double t0 = rt_now_s();
  if ((rc = make_db_folder(dbp, err))) goto done;
  if ((rc = db_open(dbp, DB_CREATE, &d, err))) goto done;
  if (!c->seeded && strcmp(dbp, main_db) && file_exists(main_db)) {
    /* a shard's own database starts from everything the job's database knows */
    if ((rc = db_merge(d, main_db, NULL, err))) goto done;
  }
  size_t marked = 0;
  if ((rc = mark_dead_runs(j, c->shard, d, strcmp(dbp, main_db) != 0, &marked, err))) goto done;
  if (marked && o->on_event) {
    char text[200];
    snprintf(text, sizeof text, "%zu run%s of a killed %s process marked interrupted", marked,
             marked > 1 ? "s" : "", j->name);
    job_event ev = {.kind = JOB_EV_NOTE, .text = text};
    emit(c, &ev);
  }
  if (note && note[0]) {
    job_event ev = {.kind = JOB_EV_NOTE, .text = note};
    emit(c, &ev);
  }
  if ((rc = job_env_open(&env, c->device, d, err))) {
    /* a device the job file names is the file's field, not the --device flag's */
    if (!c->o->device && err && !strcmp(err->source, "--device"))
      rt_error_locate(err, j->path, "device", 0, 0);
    goto done;
  }
  if (pthread_create(&th, NULL, watchdog, c) == 0) have_thread = 1;

  /* the states, then the rechecks of fresh problems, then the tuning */
  size_t total = 0;
  for (size_t k = 0; k < j->nproblems; k++) total += job_shard_owns(j, k, c->shard);
  job_state *st = calloc(j->nproblems, sizeof *st);
  json_t **items = calloc(j->nproblems, sizeof *items);
  if (!st || !items) {
    free(st);
    free(items);
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (size_t k = 0; k < j->nproblems; k++)
    if (job_shard_owns(j, k, c->shard)) {
      job_state_of(j, k, c->shard, &env, &st[k]);
      items[k] = problem_item(&j->problems[k], &st[k]);
    }
  size_t place = 0; /* the problems said so far: [1/N], [2/N], ... in the order said */
  for (size_t k = 0; k < j->nproblems; k++) {
    if (!items[k]) continue;
    if (st[k].kind != JOB_STATE_FRESH) continue;
    place++;
    out->fresh++;
    json_object_set_new(items[k], "action", json_string("fresh"));
    if (st[k].best)
      json_object_set_new(
          items[k], "best",
          best_json(st[k].best->template_name, st[k].best->config, st[k].best->time_ms,
                    st[k].best->timing, st[k].best->checked_on));
    if (j->recheck && !c->stopflag) recheck_problem(c, &env, k, dbp, items[k], out);
    job_event ev = {.kind = JOB_EV_DONE,
                    .index = place,
                    .total = total,
                    .problem = &j->problems[k],
                    .item = items[k]};
    emit(c, &ev);
  }
  for (size_t k = 0; k < j->nproblems; k++) {
    if (!items[k]) continue;
    if (st[k].kind == JOB_STATE_FRESH) continue;
    place++;
    if (st[k].empty) { /* nothing to tune: said, not run (tune would fail the same way) */
      json_object_set_new(items[k], "action", json_string("empty"));
      out->failed++;
    } else if (c->stopflag) {
      json_object_set_new(items[k], "action", json_string("left"));
      out->left++;
    } else {
      c->index = place;
      c->total = total;
      c->problem = &j->problems[k];
      if (tune_problem(c, k, &st[k], dbp, items[k], out)) out->left++;
    }
    job_event ev = {.kind = JOB_EV_DONE,
                    .index = place,
                    .total = total,
                    .problem = &j->problems[k],
                    .item = items[k]};
    emit(c, &ev);
  }
  for (size_t k = 0; k < j->nproblems; k++)
    if (items[k]) json_array_append_new(problems, items[k]);
  free(items);
  free(st);
  out->stopped = c->why == 1;
  out->interrupted = c->why == 2;

  /* the summary, and the report of the database written */
  json_t *s = run_summary(c, &env, dbp, started, t0, marked, problems, out);
  problems = NULL;
  out->summary = s;
  rt_error rerr = {0};
  if (!c->parallel && writes_report(j, o, c->shard) && attach_report(j, d, s, &rerr)) {
    set_report_error(s, &rerr);
    out->failed++;
  }
  rc = write_summary(j, c->shard, part, s, err);
done:
  if (have_thread) {
    c->quit = 1;
    pthread_join(th, NULL);
  }
  json_decref(problems);
  job_env_free(&env);
  db_close(d);
  lock_release(lockfd);
  if (rc) {
    json_decref(out->summary);
    out->summary = NULL;
  }
  return rc;
}

/* ---- several devices: one process each ---- */

/* In a forked process: one device's share of a parallel run (run_one over sub-shard SHARD of
 * the database DBP its parent seeded); the process's exit code. */
static int run_child(const job *j, const job_run_options *o, job_shard shard, const char *device,
                     double deadline, const char *dbp, const char *note) {
  run_ctx c;
  memset(&c, 0, sizeof c);
  c.j = j;
  c.o = o;
  c.shard = shard;
  c.device = device;
  c.parallel = 1;
  c.deadline = deadline;
  c.db_path = dbp;
  c.seeded = 1;
  job_outcome co;
  rt_error e = {0};
  int code;
  if (run_one(&c, note, &co, &e)) {
    char line[1024];
    rt_error_format(&e, line, sizeof line);
    fprintf(stderr, "rooftune job: %s: %s\n", device, line);
    code = 1;
  } else {
    code = job_outcome_exit(&co);
  }
  json_decref(co.summary);
  fflush(NULL);
  return code;
}

static rt_status run_parallel(const job *j, const job_run_options *o, char devices[][64], int nd,
                              double deadline, const char *note, job_outcome *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  /* this shard's lock, and the runs dead processes left behind, before the children start */
  char part[48];
  int lockfd = -1;
  rt_status rc = shard_lock(j, o->shard, part, sizeof part, &lockfd, err);
  if (rc) return rc;
  /* every process of the node writes the database this shard writes (one host: WAL is safe),
   * seeded once from the job's database when it is a shard's own */
  char dbp[1024], main_db[1024];
  job_database_path(j, o->shard, o->db_path, dbp, sizeof dbp);
  job_database_path(j, (job_shard){0, 1}, o->db_path, main_db, sizeof main_db);
  if (strcmp(dbp, main_db) && file_exists(main_db)) {
    db *d = NULL;
    rc = make_db_folder(dbp, err);
    if (!rc) rc = db_open(dbp, DB_CREATE, &d, err);
    if (!rc) rc = db_merge(d, main_db, NULL, err);
    db_close(d);
    if (rc) {
      lock_release(lockfd);
      return rc;
    }
  }
  pid_t pids[JOB_MAX_DEVICES];
  job_shard subs[JOB_MAX_DEVICES];
  fflush(NULL);
  for (int g = 0; g < nd; g++) {
    subs[g] = job_shard_sub(o->shard, g, nd);
    pids[g] = fork();
    if (pids[g] == 0)
      _exit(run_child(j, o, subs[g], devices[g], deadline, dbp, g == 0 ? note : NULL));
    if (pids[g] < 0) {
      rc = rt_error_set(err, RT_ERR_INTERNAL, "cannot start a process for %s: %s", devices[g],
                        strerror(errno));
      nd = g;
      break;
    }
  }
  json_t *s = json_object(), *shards = json_array(), *problems = json_array();
  size_t worst = 0;
  for (int g = 0; g < nd; g++) {
    int status = 0;
    while (waitpid(pids[g], &status, 0) < 0 && errno == EINTR) {}
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (code == 1)
      worst = 1;
    else if (code == 3 && worst != 1)
      worst = 3;
    char sp[1200], sub[48];
    shard_file_part(subs[g], sub, sizeof sub);
    snprintf(sp, sizeof sp, "%s/summary-shard-%s.json", j->output, sub);
    json_t *cs = json_load_file(sp, 0, NULL);
    if (!cs) {
      out->failed++;
      json_array_append_new(shards, json_pack("{ss ss si}", "device", devices[g], "error",
                                              "no summary", "exit", code));
      continue;
    }
    json_object_set_new(cs, "exit", json_integer(code));
    add_counts(out, cs);
    if (json_is_string(json_object_get(cs, "stopped"))) {
      if (!strcmp(json_string_value(json_object_get(cs, "stopped")), "signal"))
        out->interrupted = 1;
      else
        out->stopped = 1;
    }
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(cs, "problems"), i, p) json_array_append(problems, p);
    json_array_append_new(shards, cs);
  }
  if (worst == 1 && !out->failed && !out->interrupted) out->failed = 1; /* a child that died */
  if (worst == 3 && !out->regressions) out->regressions = 1;
  json_object_set_new(s, "job", json_string(j->name));
  json_object_set_new(s, "file", json_string(j->path));
  json_t *devs = json_array();
  for (int g = 0; g < nd; g++) json_array_append_new(devs, json_string(devices[g]));
  json_object_set_new(s, "device", devs);
  char sh[32];
  snprintf(sh, sizeof sh, "%d/%d", o->shard.index, o->shard.count);
  json_object_set_new(s, "shard", json_string(sh));
  json_object_set_new(s, "complete", json_boolean(!out->stopped && !out->interrupted));
  json_object_set_new(s, "stopped",
                      out->stopped       ? json_string("time budget")
                      : out->interrupted ? json_string("signal")
                                         : json_null());
  set_counts(s, out);
  json_object_set_new(s, "problems", problems);
  json_object_set_new(s, "shards", shards);
  out->summary = s;
  json_object_set_new(s, "database", json_string(dbp));
  if (!rc && writes_report(j, o, o->shard)) {
    db *d = NULL;
    rt_error rerr = {0};
    rt_status st = db_open(dbp, DB_READONLY, &d, &rerr);
    if (!st) st = attach_report(j, d, s, &rerr);
    if (st && (rerr.code != RT_ERR_IO || file_exists(dbp))) set_report_error(s, &rerr);
    db_close(d);
  }
  if (!rc) rc = write_summary(j, o->shard, part, s, err);
  lock_release(lockfd);
  return rc;
}

rt_status job_run(const job *j, const job_run_options *o, job_outcome *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  rt_status rc = use_templates(j, err);
  if (rc) return rc;
  char devices[JOB_MAX_DEVICES][64], note[256];
  int nd = 0;
  if ((rc = job_devices(j, o->device, devices, &nd, note, sizeof note, err))) return rc;
  double deadline = j->time_budget_s > 0 ? rt_now_s() + j->time_budget_s : 0;
  if (nd > 1) return run_parallel(j, o, devices, nd, deadline, note, out, err);
  run_ctx c;
  memset(&c, 0, sizeof c);
  c.j = j;
  c.o = o;
  c.shard = o->shard.count >= 1 ? o->shard : (job_shard){0, 1};
  c.device = devices[0];
  c.deadline = deadline;
  return run_one(&c, note, out, err);
}

void job_outcome_free(job_outcome *o) {
  if (!o) return;
  json_decref(o->summary);
  o->summary = NULL;
}

int job_outcome_exit(const job_outcome *o) {
  if (o->failed || o->interrupted) return 1;
  if (o->regressions) return 3;
  return 0;
}

/* ---- status ---- */

rt_status job_status(const job *j, job_shard s, const char *device, const char *db_path,
                     json_t **out, rt_error *err) {
  *out = NULL;
  rt_status rc = use_templates(j, err);
  if (rc) return rc;
  char devices[JOB_MAX_DEVICES][64], note[256];
  int nd = 0;
  if ((rc = job_devices(j, device, devices, &nd, note, sizeof note, err))) return rc;
  char dbp[1024];
  job_database_path(j, s, db_path, dbp, sizeof dbp);
  db *d = NULL;
  if (file_exists(dbp) && (rc = db_open(dbp, DB_READONLY, &d, err))) return rc;
  job_env env;
  if ((rc = job_env_open(&env, devices[0], d, err))) {
    db_close(d);
    return rc;
  }
  json_t *arr = json_array();
  for (size_t k = 0; k < j->nproblems; k++) {
    if (!job_shard_owns(j, k, s)) continue;
    job_state st;
    job_state_of(j, k, s, &env, &st);
    json_t *it = problem_item(&j->problems[k], &st);
    json_object_set_new(it, "left", json_integer(st.left));
    json_object_set_new(it, "budget", json_integer(st.budget));
    if (st.best) {
      json_t *b = best_json(st.best->template_name, st.best->config, st.best->time_ms,
                            st.best->timing, st.best->checked_on);
      json_object_set_new(b, "made_at", json_string(st.best->created_at));
      json_object_set_new(it, "best", b);
    } else {
      json_object_set_new(it, "best", json_null());
    }
    /* the latest recheck verdict of any current winner */
    const job_winner *w[64];
    size_t nw = job_current_winners(j, k, &env, w, 64);
    const char *worst = NULL;
    for (size_t i = 0; i < nw && i < 64; i++) {
      recheck_verdict v;
      if (job_env_last_recheck(&env, w[i], j->tolerance, &v) && recheck_is_regression(v))
        worst = recheck_verdict_name(v);
    }
    json_object_set_new(it, "regression", worst ? json_string(worst) : json_null());
    json_array_append_new(arr, it);
  }
  json_t *root =
      json_pack("{ss ss ss ss ss so}", "job", j->name, "database", dbp, "output", j->output,
                "device", devices[0], "gpu", env.device.name, "problems", arr);
  if (note[0]) json_object_set_new(root, "note", json_string(note));
  job_env_free(&env);
  db_close(d);
  *out = root;
  return RT_OK;
}

/* ---- merge ---- */

rt_status job_merge(const char *out_path, char *const *srcs, size_t n, job_merge_stats *st,
                    rt_error *err) {
  memset(st, 0, sizeof *st);
  db *d = NULL;
  rt_status rc = db_open(out_path, DB_CREATE, &d, err);
  if (rc) return rc;
  for (size_t i = 0; i < n && !rc; i++) {
    if (!strcmp(srcs[i], out_path)) continue;
    long long added = 0;
    rc = db_merge(d, srcs[i], &added, err);
    if (!rc) {
      st->files++;
      st->added += added;
    }
  }
  db_counts cnt;
  if (!rc && (rc = db_count(d, &cnt, err)) == RT_OK) st->winners = (size_t)cnt.winners;
  db_close(d);
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

rt_status job_shard_files(const job *j, char ***paths, size_t *n, rt_error *err) {
  *paths = NULL;
  *n = 0;
  if (!j->shard_database[0]) {
    rt_error_locate(err, j->path, "shard_database", 0, 0);
    return rt_error_set(err, RT_ERR_INVALID,
                        "the job has no shard_database: its shards write its database "
                        "directly and there is nothing to merge");
  }
  char pat[2200];
  size_t m = 0;
  for (const char *p = j->shard_database; *p && m + 8 < sizeof pat;) {
    if (!strncmp(p, "{i}", 3) || !strncmp(p, "{n}", 3)) {
      pat[m++] = '*';
      p += 3;
    } else if (!strncmp(p, "{name}", 6)) {
      m += (size_t)snprintf(pat + m, sizeof pat - m, "%s", j->name);
      p += 6;
    } else {
      if (strchr("*?[", *p)) pat[m++] = '\\';
      pat[m++] = *p++;
    }
  }
  pat[m] = 0;
  glob_t g;
  int r = glob(pat, 0, NULL, &g);
  if (r == GLOB_NOMATCH) return RT_OK;
  if (r) return rt_error_set(err, RT_ERR_IO, "cannot list %s", pat);
  char **v = calloc(g.gl_pathc ? g.gl_pathc : 1, sizeof *v);
  size_t k = 0;
  for (size_t i = 0; v && i < g.gl_pathc; i++) {
    size_t len = strlen(g.gl_pathv[i]);
    /* the database files, not their -wal / -shm / .tmp companions */
    if ((len > 4 && !strcmp(g.gl_pathv[i] + len - 4, "-wal")) ||
        (len > 4 && !strcmp(g.gl_pathv[i] + len - 4, "-shm")))
      continue;
    v[k++] = strdup(g.gl_pathv[i]);
  }
  globfree(&g);
  if (!v) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  qsort(v, k, sizeof *v, cmp_str);
  *paths = v;
  *n = k;
  return RT_OK;
}
