/* worker.c — the child process that owns the CUDA context: spawning, framing, crash and hang
 * detection on the parent side; the request loop and the --test handler on the child side. */
#include "tuner/device/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define WORKER_MAX_JSON (64u << 20)
#define WORKER_MAX_BLOB (1u << 30)

struct worker {
  char *exe;        /* program to run */
  char **argv;      /* its arguments, NULL-terminated */
  pid_t pid;        /* running child, or 0 */
  int to_child;     /* write end of the request pipe, or -1 */
  int from_child;   /* read end of the reply pipe, or -1 */
  int starts;       /* children started */
  char *setup_json; /* the remembered WORKER_SETUP request, or NULL */
  void *setup_blob; /* its blob */
  size_t setup_blob_len;
  double setup_timeout_s; /* the limit it was sent with, kept for its replays */
};

/* ---- frames ---- */

static rt_status write_all(int fd, const void *buf, size_t n, rt_error *err) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      return rt_error_set(err, errno == EPIPE ? RT_ERR_CRASH : RT_ERR_IO,
                          "worker pipe: write failed: %s", strerror(errno));
    p += w;
    n -= (size_t)w;
  }
  return RT_OK;
}

/* Reads exactly n bytes; deadline <= 0 means wait forever.  RT_ERR_CRASH at end of input,
 * RT_ERR_TIMEOUT when the deadline passes. */
static rt_status read_all(int fd, void *buf, size_t n, double deadline, rt_error *err) {
  char *p = buf;
  while (n > 0) {
    if (deadline > 0) {
      double left = deadline - rt_now_s();
      if (left <= 0) return rt_error_set(err, RT_ERR_TIMEOUT, "worker did not answer in time");
      struct pollfd pfd = {fd, POLLIN, 0};
      int ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
      int r = poll(&pfd, 1, ms);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0)
        return rt_error_set(err, RT_ERR_IO, "worker pipe: poll failed: %s", strerror(errno));
      if (r == 0) continue; /* loop re-checks the deadline */
    }
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return rt_error_set(err, RT_ERR_IO, "worker pipe: read failed: %s", strerror(errno));
    if (got == 0) return rt_error_set(err, RT_ERR_CRASH, "worker pipe closed");
    p += got;
    n -= (size_t)got;
  }
  return RT_OK;
}

rt_status worker_write_frame(int fd, int type, const char *json, const void *blob, size_t blob_len,
                             rt_error *err) {
  size_t jl = json ? strlen(json) : 0;
  if (jl > WORKER_MAX_JSON || blob_len > WORKER_MAX_BLOB)
    return rt_error_set(err, RT_ERR_INVALID, "worker request too large (%zu + %zu bytes)", jl,
                        blob_len);
  uint32_t hdr[3] = {(uint32_t)type, (uint32_t)jl, (uint32_t)blob_len};
  rt_status st = write_all(fd, hdr, sizeof hdr, err);
  if (!st && jl) st = write_all(fd, json, jl, err);
  if (!st && blob_len) st = write_all(fd, blob, blob_len, err);
  return st;
}

static rt_status read_frame_deadline(int fd, int *type, char **json, void **blob, size_t *blob_len,
                                     double deadline, rt_error *err) {
  uint32_t hdr[3];
  *json = NULL;
  if (blob) *blob = NULL;
  if (blob_len) *blob_len = 0;
  rt_status st = read_all(fd, hdr, sizeof hdr, deadline, err);
  if (st) return st;
  if (hdr[1] > WORKER_MAX_JSON || hdr[2] > WORKER_MAX_BLOB)
    return rt_error_set(err, RT_ERR_IO, "worker pipe: frame too large (%u + %u bytes)", hdr[1],
                        hdr[2]);
  char *j = malloc((size_t)hdr[1] + 1);
  void *b = hdr[2] ? malloc(hdr[2]) : NULL;
  if (!j || (hdr[2] && !b)) {
    free(j);
    free(b);
    return rt_error_set(err, RT_ERR_NOMEM, "worker pipe: out of memory for a frame");
  }
  st = read_all(fd, j, hdr[1], deadline, err);
  if (!st && hdr[2]) st = read_all(fd, b, hdr[2], deadline, err);
  if (st) {
    free(j);
    free(b);
    return st;
  }
  j[hdr[1]] = 0;
  *type = (int)hdr[0];
  *json = j;
  if (blob) {
    *blob = b;
    *blob_len = hdr[2];
  } else {
    free(b);
  }
  return RT_OK;
}

rt_status worker_read_frame(int fd, int *type, char **json, void **blob, size_t *blob_len,
                            rt_error *err) {
  return read_frame_deadline(fd, type, json, blob, blob_len, 0, err);
}

/* ---- parent side ---- */

rt_status worker_new(const char *exe, const char *const *argv, worker **out, rt_error *err) {
  *out = NULL;
  worker *w = calloc(1, sizeof *w);
  if (!w) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  size_t n = 0;
  while (argv[n]) n++;
  w->exe = strdup(exe);
  w->argv = calloc(n + 1, sizeof *w->argv);
  if (!w->exe || !w->argv) {
    worker_free(w);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++)
    if (!(w->argv[i] = strdup(argv[i]))) {
      worker_free(w);
      return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    }
  w->to_child = w->from_child = -1;
  signal(SIGPIPE, SIG_IGN); /* a dead child's pipe must give EPIPE, not kill the tuner */
  *out = w;
  return RT_OK;
}

static void close_pipes(worker *w) {
  if (w->to_child >= 0) close(w->to_child);
  if (w->from_child >= 0) close(w->from_child);
  w->to_child = w->from_child = -1;
}

/* Reaps the child and describes how it ended. */
static void reap(worker *w, int kill_first, char *how, size_t size) {
  if (!w->pid) return;
  if (kill_first) kill(w->pid, SIGKILL);
  int st = 0;
  pid_t r;
  do r = waitpid(w->pid, &st, 0);
  while (r < 0 && errno == EINTR);
  if (how && size) {
    if (r < 0)
      snprintf(how, size, "worker vanished");
    else if (WIFSIGNALED(st))
      snprintf(how, size, "worker killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
      snprintf(how, size, "worker could not be started: %s", w->exe);
    else
      snprintf(how, size, "worker exited with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
  w->pid = 0;
  close_pipes(w);
}

static rt_status spawn(worker *w, rt_error *err) {
  int req[2], rep[2];
  if (pipe2(req, O_CLOEXEC) != 0)
    return rt_error_set(err, RT_ERR_IO, "worker: pipe failed: %s", strerror(errno));
  if (pipe2(rep, O_CLOEXEC) != 0) {
    close(req[0]);
    close(req[1]);
    return rt_error_set(err, RT_ERR_IO, "worker: pipe failed: %s", strerror(errno));
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(req[0]);
    close(req[1]);
    close(rep[0]);
    close(rep[1]);
    return rt_error_set(err, RT_ERR_IO, "worker: fork failed: %s", strerror(errno));
  }
  if (pid == 0) {
    /* dup2 clears close-on-exec on the new descriptors */
    if (dup2(req[0], 0) < 0 || dup2(rep[1], 1) < 0) _exit(127);
    signal(SIGPIPE, SIG_DFL);
    execv(w->exe, w->argv);
    _exit(127);
  }
  close(req[0]);
  close(rep[1]);
  w->pid = pid;
  w->to_child = req[1];
  w->from_child = rep[0];
  w->starts++;
  return RT_OK;
}

/* One request on a running child: write, then wait for the reply. */
static rt_status exchange(worker *w, int type, const char *json, const void *blob, size_t blob_len,
                          double timeout_s, char **reply, void **rblob, size_t *rblob_len,
                          rt_error *err) {
  double deadline = timeout_s > 0 ? rt_now_s() + timeout_s : 0;
  rt_status st = worker_write_frame(w->to_child, type, json, blob, blob_len, err);
  int rtype = 0;
  if (!st) st = read_frame_deadline(w->from_child, &rtype, reply, rblob, rblob_len, deadline, err);
  if (st == RT_ERR_TIMEOUT) {
    reap(w, 1, NULL, 0);
    return rt_error_set(err, RT_ERR_TIMEOUT, "worker did not answer within %.3g s and was killed",
                        timeout_s);
  }
  if (st == RT_ERR_CRASH || st == RT_ERR_IO) {
    char how[160];
    reap(w, st == RT_ERR_IO, how, sizeof how);
    return rt_error_set(err, RT_ERR_CRASH, "%s", how);
  }
  if (!st && rtype != WORKER_REPLY) {
    free(*reply);
    *reply = NULL;
    reap(w, 1, NULL, 0);
    return rt_error_set(err, RT_ERR_CRASH, "worker answered with frame type %d", rtype);
  }
  return st;
}

rt_status worker_request(worker *w, int type, const char *json, const void *blob, size_t blob_len,
                         double timeout_s, char **reply, rt_error *err) {
  *reply = NULL;
  if (type == WORKER_SETUP) {
    char *j = strdup(json ? json : "{}");
    void *b = blob_len ? malloc(blob_len) : NULL;
    if (!j || (blob_len && !b)) {
      free(j);
      free(b);
      return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    }
    if (blob_len) memcpy(b, blob, blob_len);
    free(w->setup_json);
    free(w->setup_blob);
    w->setup_json = j;
    w->setup_blob = b;
    w->setup_blob_len = blob_len;
    w->setup_timeout_s = timeout_s;
  }
  if (!w->pid) {
    rt_status st = spawn(w, err);
    if (st) return st;
    if (w->setup_json && type != WORKER_SETUP) {
      char *r = NULL;
      st = exchange(w, WORKER_SETUP, w->setup_json, w->setup_blob, w->setup_blob_len,
                    w->setup_timeout_s, &r, NULL, NULL, err);
      if (st) return st;
      json_t *o = json_loads(r, 0, NULL);
      const char *s = o ? json_string_value(json_object_get(o, "status")) : NULL;
      if (!s || strcmp(s, "OK") != 0) {
        const char *e = o ? json_string_value(json_object_get(o, "error")) : NULL;
        st = rt_error_set(err, s ? (rt_status)rt_status_from_name(s) : RT_ERR_INTERNAL,
                          "fresh worker's setup failed: %s", e ? e : r);
        if ((int)st < 0) st = rt_error_set(err, RT_ERR_INTERNAL, "fresh worker's setup failed");
      }
      json_decref(o);
      free(r);
      if (st) return st;
    }
  }
  return exchange(w, type, json, blob, blob_len, timeout_s, reply, NULL, NULL, err);
}

int worker_starts(const worker *w) { return w->starts; }
int worker_pid(const worker *w) { return w->pid; }

/* Gives the child up to a second to exit on its own after QUIT (or after a fatal reply), then
 * kills it. */
static void stop_child(worker *w, int send_quit) {
  if (!w->pid) return;
  if (!send_quit || worker_write_frame(w->to_child, WORKER_QUIT, NULL, NULL, 0, NULL) == RT_OK) {
    close_pipes(w);
    for (int i = 0; i < 100; i++) {
      int st;
      if (waitpid(w->pid, &st, WNOHANG) == w->pid) {
        w->pid = 0;
        return;
      }
      usleep(10000);
    }
  }
  reap(w, 1, NULL, 0);
}

void worker_retire(worker *w) { stop_child(w, 0); }

void worker_free(worker *w) {
  if (!w) return;
  stop_child(w, 1);
  if (w->argv)
    for (char **a = w->argv; *a; a++) free(*a);
  free(w->argv);
  free(w->exe);
  free(w->setup_json);
  free(w->setup_blob);
  free(w);
}

/* ---- child side ---- */

int worker_serve(int in_fd, int out_fd, worker_handler handler, void *ctx) {
  for (;;) {
    int type = 0;
    char *json = NULL;
    void *blob = NULL;
    size_t blob_len = 0;
    rt_error err = {0};
    rt_status st = worker_read_frame(in_fd, &type, &json, &blob, &blob_len, &err);
    if (st == RT_ERR_CRASH) return 0; /* the parent closed the pipe */
    if (st) return 1;
    if (type == WORKER_QUIT) {
      free(json);
      free(blob);
      return 0;
    }
    char *reply = NULL;
    void *rblob = NULL;
    size_t rblob_len = 0;
    int stop = handler(ctx, type, json, blob, blob_len, &reply, &rblob, &rblob_len);
    free(json);
    free(blob);
    st = worker_write_frame(out_fd, WORKER_REPLY, reply ? reply : "{\"status\":\"ERR_INTERNAL\"}",
                            rblob, rblob_len, &err);
    free(reply);
    free(rblob);
    if (st) return 1;
    if (stop) return 0;
  }
}

int worker_test_handler(void *ctx, int type, const char *json, const void *blob, size_t blob_len,
                        char **reply_json, void **reply_blob, size_t *reply_blob_len) {
  json_t *req = json_loads(json, 0, NULL);
  const char *action = req ? json_string_value(json_object_get(req, "action")) : NULL;
  json_t *rep = json_object();
  if (type == WORKER_SETUP) {
    json_object_set_new(rep, "status", json_string("OK"));
  } else if (type != WORKER_TEST || !action) {
    json_object_set_new(rep, "status", json_string("ERR_INVALID"));
    json_object_set_new(rep, "error", json_string("test worker: expected {\"action\": ...}"));
  } else if (strcmp(action, "abort") == 0) {
    abort();
  } else if (strcmp(action, "segv") == 0) {
    raise(SIGSEGV);
  } else if (strcmp(action, "hang") == 0) {
    for (;;) pause();
  } else if (strcmp(action, "exit") == 0) {
    _exit(3);
  } else {
    json_object_set_new(rep, "status", json_string("OK"));
    json_object_set_new(rep, "action", json_string(action));
    json_object_set_new(rep, "pid", json_integer(getpid()));
    json_object_set_new(rep, "blob_len", json_integer((json_int_t)blob_len));
  }
  json_decref(req);
  *reply_json = json_dumps(rep, JSON_COMPACT);
  json_decref(rep);
  return 0;
}
