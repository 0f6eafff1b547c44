/* compile_pool.c — forked compile workers, pipes, crash and timeout handling (see compile_pool.h). */
#include "compile/compile_pool.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

typedef struct pool_worker {
  pid_t pid;      /* 0 when no process */
  int job_fd;     /* parent writes job numbers here */
  int result_fd;  /* parent reads results here */
  long job;       /* the job it holds, -1 when idle */
  double started; /* when that job was sent */
} pool_worker;

/* What precedes the variable parts of a result on the pipe. */
typedef struct pool_header {
  int32_t status;
  char message[256];
  char lowered_name[256];
  ptxas_report report;
  double seconds;
  uint64_t log_len, cubin_len, ptx_len; /* UINT64_MAX: absent */
} pool_header;

static int pool_write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int pool_read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int pool_send_result(int fd, const compile_result *r) {
  pool_header h;
  memset(&h, 0, sizeof h);
  h.status = r->status;
  memcpy(h.message, r->message, sizeof h.message);
  memcpy(h.lowered_name, r->lowered_name, sizeof h.lowered_name);
  h.report = r->report;
  h.seconds = r->seconds;
  h.log_len = r->log ? strlen(r->log) : UINT64_MAX;
  h.cubin_len = r->cubin ? r->cubin_size : UINT64_MAX;
  h.ptx_len = r->ptx ? strlen(r->ptx) : UINT64_MAX;
  if (pool_write_all(fd, &h, sizeof h)) return -1;
  if (r->log && pool_write_all(fd, r->log, h.log_len)) return -1;
  if (r->cubin && pool_write_all(fd, r->cubin, h.cubin_len)) return -1;
  if (r->ptx && pool_write_all(fd, r->ptx, h.ptx_len)) return -1;
  return 0;
}

/* Reads one variable part: len bytes (+ NUL) into *out; UINT64_MAX leaves *out NULL. */
static int pool_read_part(int fd, uint64_t len, void **out) {
  *out = NULL;
  if (len == UINT64_MAX) return 0;
  if (len > ((uint64_t)1 << 34)) return -1;
  char *p = malloc((size_t)len + 1);
  if (!p) return -1;
  if (pool_read_all(fd, p, (size_t)len)) {
    free(p);
    return -1;
  }
  p[len] = 0;
  *out = p;
  return 0;
}

static int pool_recv_result(int fd, compile_result *r) {
  pool_header h;
  memset(r, 0, sizeof *r);
  if (pool_read_all(fd, &h, sizeof h)) return -1;
  void *log, *cubin, *ptx;
  if (pool_read_part(fd, h.log_len, &log)) return -1;
  if (pool_read_part(fd, h.cubin_len, &cubin)) {
    free(log);
    return -1;
  }
  if (pool_read_part(fd, h.ptx_len, &ptx)) {
    free(log);
    free(cubin);
    return -1;
  }
  r->status = h.status;
  memcpy(r->message, h.message, sizeof r->message);
  r->message[sizeof r->message - 1] = 0;
  memcpy(r->lowered_name, h.lowered_name, sizeof r->lowered_name);
  r->lowered_name[sizeof r->lowered_name - 1] = 0;
  r->report = h.report;
  r->seconds = h.seconds;
  r->log = log ? log : strdup("");
  r->cubin = cubin;
  r->cubin_size = cubin ? (size_t)h.cubin_len : 0;
  r->ptx = ptx;
  return 0;
}

/* The worker: job numbers in, results out, until its job pipe closes.  Its PCH file goes into a
 * folder of its own under the run's (another worker may be writing its file at the same time). */
static void pool_child(int job_fd, int result_fd, const compile_job *jobs,
                       const compile_options *opt_in, void (*hook)(size_t)) {
  compile_options local = *opt_in;
  const compile_options *opt = &local;
  char pch_dir[4096];
  if (local.pch_dir) {
    snprintf(pch_dir, sizeof pch_dir, "%s/%ld", local.pch_dir, (long)getpid());
    local.pch_dir = mkdir(pch_dir, 0700) == 0 ? pch_dir : NULL;
  }
  uint64_t idx;
  while (pool_read_all(job_fd, &idx, sizeof idx) == 0) {
    if (hook) hook((size_t)idx);
    compile_result r;
    compile_source(jobs[idx].source, jobs[idx].name, opt, &r, NULL);
    int bad = pool_send_result(result_fd, &r);
    compile_result_free(&r);
    if (bad) break;
  }
  _exit(0);
}

static void pool_close_worker_fds(pool_worker *w) {
  if (w->job_fd >= 0) close(w->job_fd);
  if (w->result_fd >= 0) close(w->result_fd);
  w->job_fd = w->result_fd = -1;
}

static int pool_spawn(pool_worker *ws, int nw, int i, const compile_job *jobs,
                      const compile_options *opt, void (*hook)(size_t)) {
  int to_child[2], from_child[2];
  if (pipe(to_child)) return -1;
  if (pipe(from_child)) {
    close(to_child[0]);
    close(to_child[1]);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(to_child[0]);
    close(to_child[1]);
    close(from_child[0]);
    close(from_child[1]);
    return -1;
  }
  if (pid == 0) {
    /* other workers' pipe ends must close here, or they never see end of input */
    for (int k = 0; k < nw; k++) pool_close_worker_fds(&ws[k]);
    close(to_child[1]);
    close(from_child[0]);
    pool_child(to_child[0], from_child[1], jobs, opt, hook);
  }
  close(to_child[0]);
  close(from_child[1]);
  ws[i].pid = pid;
  ws[i].job_fd = to_child[1];
  ws[i].result_fd = from_child[0];
  ws[i].job = -1;
  return 0;
}

/* Reaps a worker that died or was killed; describes how into buf. */
static void pool_reap(pool_worker *w, char *buf, size_t size) {
  int st = 0;
  pid_t got;
  do got = waitpid(w->pid, &st, 0);
  while (got < 0 && errno == EINTR);
  if (got == w->pid && WIFSIGNALED(st))
    snprintf(buf, size, "compiler process killed by signal %d (%s)", WTERMSIG(st),
             strsignal(WTERMSIG(st)));
  else if (got == w->pid && WIFEXITED(st))
    snprintf(buf, size, "compiler process exited with status %d before answering", WEXITSTATUS(st));
  else
    snprintf(buf, size, "compiler process vanished");
  pool_close_worker_fds(w);
  w->pid = 0;
  w->job = -1;
}

static void pool_finish(compile_result *results, size_t i, compile_result *r,
                        const compile_pool_options *popt, const unsigned char *key,
                        compile_pool_stats *stats) {
  results[i] = *r;
  if (r->status == RT_OK)
    stats->compiled++;
  else if (r->status == RT_ERR_COMPILE)
    stats->compile_errors++;
  else
    stats->failed++;
  if (!r->cache_hit && key) { /* no key: it failed before a compile */
    stats->compile_seconds += r->seconds;
    if (popt->cache) cubin_cache_put(popt->cache, key, r, NULL);
  }
  if (popt->progress) popt->progress(popt->progress_ctx, i, &results[i]);
}

/* NVRTC's automatic PCH file (7 MB for gemm_mma) lives in a folder that only a normal process
 * exit removes; workers leave with _exit and may be killed, so each run gives them a folder of
 * its own under $TMPDIR and removes it when they are gone. */
static int pool_pch_dir(char *dir, size_t size) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  if ((size_t)snprintf(dir, size, "%s/rooftune-pch-XXXXXX", tmp) >= size) return -1;
  return mkdtemp(dir) ? 0 : -1;
}

static int pool_rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb, (void)type, (void)ftw;
  remove(path);
  return 0;
}

static void pool_failure(compile_result *r, int status, const char *msg) {
  memset(r, 0, sizeof *r);
  r->status = status;
  snprintf(r->message, sizeof r->message, "%.255s", msg);
  r->log = strdup(msg);
}

/* Waits for the busy workers (until the first compile timeout at most) and takes what they
 * finished, or stops the ones past the timeout; each job done counts in *done. */
static rt_status pool_collect(pool_worker *ws, int nw, const compile_pool_options *popt,
                              compile_result *results, unsigned char (*keys)[32],
                              compile_pool_stats *stats, size_t *done, rt_error *err) {
  struct pollfd pfd[256];
  int map[256], np = 0;
  double wait_s = -1;
  double now = rt_now_s();
  for (int i = 0; i < nw && np < 256; i++) {
    if (!ws[i].pid || ws[i].job < 0) continue;
    pfd[np].fd = ws[i].result_fd;
    pfd[np].events = POLLIN;
    pfd[np].revents = 0;
    map[np++] = i;
    if (popt->timeout_s > 0) {
      double left = ws[i].started + popt->timeout_s - now;
      if (left < 0) left = 0;
      if (wait_s < 0 || left < wait_s) wait_s = left;
    }
  }
  if (np == 0) {
    /* no worker could start */
    return rt_error_set(err, RT_ERR_IO, "cannot start a compile worker: %s", strerror(errno));
  }
  int timeout_ms = wait_s < 0 ? -1 : (int)(wait_s * 1000) + 1;
  int got = poll(pfd, (nfds_t)np, timeout_ms);
  if (got < 0 && errno != EINTR) {
    return rt_error_set(err, RT_ERR_IO, "poll: %s", strerror(errno));
  }
  now = rt_now_s();
  for (int k = 0; k < np; k++) {
    pool_worker *w = &ws[map[k]];
    size_t idx = (size_t)w->job;
    compile_result r;
    if (got > 0 && (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) {
      if (pool_recv_result(w->result_fd, &r) == 0) {
        w->job = -1;
      } else {
        char why[256];
        kill(w->pid, SIGKILL);
        pool_reap(w, why, sizeof why);
        pool_failure(&r, RT_ERR_CRASH, why);
      }
      pool_finish(results, idx, &r, popt, keys[idx], stats);
      (*done)++;
    } else if (popt->timeout_s > 0 && now - w->started >= popt->timeout_s) {
      char why[256], msg[256];
      kill(w->pid, SIGKILL);
      pool_reap(w, why, sizeof why);
      snprintf(msg, sizeof msg, "compile took longer than %.3g s; stopped it", popt->timeout_s);
      pool_failure(&r, RT_ERR_TIMEOUT, msg);
      pool_finish(results, idx, &r, popt, keys[idx], stats);
      (*done)++;
    }
  }
  return RT_OK;
}

rt_status compile_pool_run(const compile_job *jobs, size_t n, const compile_options *opt,
                           const compile_pool_options *popt_in, compile_result *results,
                           compile_pool_stats *stats_out, rt_error *err) {
  compile_pool_options popt = {0};
  if (popt_in) popt = *popt_in;
  compile_pool_stats stats = {0};
  stats.jobs = n;
  double t0 = rt_now_s();
  memset(results, 0, n * sizeof *results);

  unsigned char digest[32];
  rt_status s = compile_options_digest(opt, digest, err);
  if (s) return s;
  unsigned char(*keys)[32] = malloc((n ? n : 1) * sizeof *keys);
  size_t *pending = malloc((n ? n : 1) * sizeof *pending);
  if (!keys || !pending) {
    free(keys);
    free(pending);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory for %zu compile jobs", n);
  }
  size_t npending = 0;
  for (size_t i = 0; i < n; i++) {
    compile_result hit;
    rt_error kerr = {0};
    if (compile_key(digest, opt, jobs[i].name, jobs[i].source, keys[i], NULL, &kerr)) {
      /* a header it would read is not a file (a FIFO NVRTC would block on) or cannot be
       * named: that job fails with the reason, uncompiled and unstored */
      pool_failure(&hit, kerr.code ? kerr.code : RT_ERR_IO, kerr.text);
      pool_finish(results, i, &hit, &popt, NULL, &stats);
    } else if (popt.cache && cubin_cache_get(popt.cache, keys[i], &hit)) {
      stats.cache_hits++;
      pool_finish(results, i, &hit, &popt, keys[i], &stats);
    } else {
      pending[npending++] = i;
    }
  }

  /* a dry run (ROOFTUNE_COMPILE_DRY=1): what the cache lacks is reported, not compiled */
  const char *dry = getenv("ROOFTUNE_COMPILE_DRY");
  if (dry && !strcmp(dry, "1")) {
    for (size_t k = 0; k < npending; k++) {
      compile_result *r = &results[pending[k]];
      r->status = RT_ERR_NOT_FOUND;
      snprintf(r->message, sizeof r->message,
               "not in the cubin cache, not compiled (ROOFTUNE_COMPILE_DRY=1)");
      r->log = strdup("");
      stats.failed++;
    }
    npending = 0;
  }
  int nw = popt.workers;
  if (nw <= 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    nw = cores > 0 ? (int)cores : 1;
  }
  if (nw > 256) nw = 256; /* the poll set below holds 256 */
  if ((size_t)nw > npending) nw = (int)npending;
  pool_worker *ws = calloc(nw > 0 ? (size_t)nw : 1, sizeof *ws);
  if (!ws) {
    free(keys);
    free(pending);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory for compile workers");
  }
  for (int i = 0; i < nw; i++) ws[i].job_fd = ws[i].result_fd = -1, ws[i].job = -1;
  stats.workers = nw;

  compile_options wopt = *opt;
  char pch_dir[4096];
  int have_pch_dir = 0;
  wopt.pch_dir = NULL; /* without a folder of the run's own: NVRTC's; compiles still work */
  if (wopt.pch && nw > 0 && pool_pch_dir(pch_dir, sizeof pch_dir) == 0) {
    wopt.pch_dir = pch_dir;
    have_pch_dir = 1;
  }

  struct sigaction ign = {0}, old_pipe;
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old_pipe);

  size_t next = 0, done = 0;
  s = RT_OK;
  while (done < npending) {
    /* keep every worker busy */
    for (int i = 0; i < nw && next < npending; i++) {
      if (!ws[i].pid && pool_spawn(ws, nw, i, jobs, &wopt, popt.child_hook) != 0) {
        if (i == 0 && done == 0 && next == 0) {
          s = rt_error_set(err, RT_ERR_IO, "cannot start a compile worker: %s", strerror(errno));
          goto out;
        }
        continue;
      }
      if (ws[i].job >= 0) continue;
      uint64_t idx = pending[next];
      ws[i].job = (long)idx;
      ws[i].started = rt_now_s();
      next++;
      if (pool_write_all(ws[i].job_fd, &idx, sizeof idx) != 0) {
        /* it died between jobs: the poll below sees its result pipe close */
      }
    }
    s = pool_collect(ws, nw, &popt, results, keys, &stats, &done, err);
    if (s) goto out;
  }

out:
  for (int i = 0; i < nw; i++) {
    if (!ws[i].pid) continue;
    if (s) kill(ws[i].pid, SIGKILL);
    pool_close_worker_fds(&ws[i]); /* end of input: the worker exits */
    int st;
    while (waitpid(ws[i].pid, &st, 0) < 0 && errno == EINTR) {}
    ws[i].pid = 0;
  }
  if (have_pch_dir) nftw(pch_dir, pool_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
  sigaction(SIGPIPE, &old_pipe, NULL);
  if (s) {
    for (size_t i = 0; i < n; i++) compile_result_free(&results[i]);
  }
  free(ws);
  free(keys);
  free(pending);
  stats.seconds = rt_now_s() - t0;
  if (stats_out) *stats_out = stats;
  return s;
}
