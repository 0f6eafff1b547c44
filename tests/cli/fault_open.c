/* fault_open.c — an LD_PRELOAD shim for tests: open() of a path whose last component is
 * $RT_FAULT_OPEN fails with EIO, as a disk error would; every other open is the real one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int faulty(const char *path) {
  const char *name = getenv("RT_FAULT_OPEN");
  if (!name || !*name || !path) return 0;
  const char *base = strrchr(path, '/');
  return strcmp(base ? base + 1 : path, name) == 0;
}

#define SHIM(fn)                                                              \
  int fn(const char *path, int flags, ...) {                                  \
    static int (*real)(const char *, int, ...);                               \
    if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #fn); \
    mode_t mode = 0;                                                          \
    if (flags & (O_CREAT | O_TMPFILE)) {                                      \
      va_list ap;                                                             \
      va_start(ap, flags);                                                    \
      mode = (mode_t)va_arg(ap, int);                                         \
      va_end(ap);                                                             \
    }                                                                         \
    if (faulty(path)) return errno = EIO, -1;                                 \
    return real(path, flags, mode);                                           \
  }
SHIM(open)
SHIM(open64)
