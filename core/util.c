/* util.c — the small shared facts of util.h. */
#include "core/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

double rt_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void rt_sleep_ms(int ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* mkdir -p of the first LEN bytes of PATH; RT_ERR_IO located at WHERE. */
static rt_status mkdir_prefix(const char *path, size_t len, const char *where, rt_error *err) {
  char dir[4096];
  if (len >= sizeof dir) {
    rt_error_locate(err, where, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_IO, "the path is too long (%zu bytes, at most %zu)", len,
                        sizeof dir - 1);
  }
  memcpy(dir, path, len);
  dir[len] = '\0';
  for (char *p = dir + 1; p <= dir + len; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
      int e = errno;
      rt_error_locate(err, where, NULL, 0, 0);
      rt_error_set(err, RT_ERR_IO, "cannot create the folder %s: %s", dir, strerror(e));
      errno = e;
      return RT_ERR_IO;
    }
    struct stat sb; /* EEXIST says nothing about what exists: a file is not a folder */
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
      rt_error_locate(err, where, NULL, 0, 0);
      rt_error_set(err, RT_ERR_IO, "cannot create the folder %.*s: %s is %s, not a folder",
                   (int)len, path, dir,
                   S_ISREG(sb.st_mode)                          ? "a file"
                   : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device"
                   : S_ISFIFO(sb.st_mode)                       ? "a FIFO"
                                                                : "something else");
      errno = ENOTDIR;
      return RT_ERR_IO;
    }
    *p = c;
  }
  return RT_OK;
}

rt_status rt_mkdir_p(const char *dir, rt_error *err) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  return n ? mkdir_prefix(dir, n, dir, err) : RT_OK;
}

rt_status rt_mkdir_parents(const char *path, rt_error *err) {
  const char *slash = strrchr(path, '/');
  if (!slash || slash == path) return RT_OK; /* in the working folder, or in / */
  return mkdir_prefix(path, (size_t)(slash - path), path, err);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void rt_sort_doubles(double *v, size_t n) { qsort(v, n, sizeof *v, cmp_double); }

double rt_quantile(const double *sorted, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)pos;
  size_t hi = lo + 1 < n ? lo + 1 : lo;
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - (double)lo);
}

void rt_copy(char *dst, size_t size, const char *src) {
  if (!size) return;
  size_t n = src ? strlen(src) : 0;
  if (n >= size) n = size - 1;
  if (n) memcpy(dst, src, n);
  dst[n] = '\0';
}

const char *rt_default_db_path(char *buf, size_t size) {
  const char *env = getenv("ROOFTUNE_DB");
  const char *xdg = getenv("XDG_DATA_HOME");
  const char *home = getenv("HOME");
  if (env && *env)
    rt_copy(buf, size, env);
  else if (xdg && *xdg)
    snprintf(buf, size, "%s/rooftune/tuning.db", xdg);
  else
    snprintf(buf, size, "%s/.local/share/rooftune/tuning.db", home && *home ? home : ".");
  return buf;
}

uint64_t rt_fnv1a(uint64_t h, const char *s) {
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}
