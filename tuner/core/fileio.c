/* fileio.c — whole-file reads. */
#include "tuner/core/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rt_status fileio_read(const char *path, char **out, size_t *len, rt_error *err) {
  *out = NULL;
  if (len) *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    int e = errno;
    rt_error_locate(err, path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_IO, "cannot read the file: %s", strerror(e));
  }
  size_t cap = 1 << 16, n = 0, got;
  char *buf = malloc(cap + 1);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      char *grown = realloc(buf, cap * 2 + 1);
      if (!grown) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = grown;
      cap *= 2;
    }
  }
  int failed = ferror(f);
  fclose(f);
  if (!buf) {
    rt_error_locate(err, path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading the file");
  }
  if (failed) {
    free(buf);
    rt_error_locate(err, path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_IO, "read error");
  }
  buf[n] = '\0';
  *out = buf;
  if (len) *len = n;
  return RT_OK;
}
