/* fuzz_util.h — what the fuzz targets share: a private temporary folder (for the loaders that
 * read files) and writing one input into it.  Each target defines LLVMFuzzerTestOneInput; with
 * ROOFTUNE_FUZZ=ON it links with libFuzzer, otherwise with standalone.c, which runs the target
 * on every file it is given (the seed corpora and the crashes found so far). */
#ifndef ROOFTUNE_FUZZ_UTIL_H
#define ROOFTUNE_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A folder of this process's own under $ROOFTUNE_FUZZ_TMP, else /dev/shm (no disk syncs: the
 * database target syncs on every commit), else $TMPDIR; made on first use, removed at exit. */
static inline const char *fuzz_dir(void);

static char fuzz_dir_buf[256];

static inline void fuzz_dir_remove(void) {
  char cmd[320];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir_buf);
  if (fuzz_dir_buf[0] && system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", fuzz_dir_buf);
}

static inline const char *fuzz_dir(void) {
  if (!fuzz_dir_buf[0]) {
    const char *t = getenv("ROOFTUNE_FUZZ_TMP");
    if (!t || !*t) t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(fuzz_dir_buf, sizeof fuzz_dir_buf, "%s/rooftune-fuzz-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(fuzz_dir_buf)) abort();
    atexit(fuzz_dir_remove);
  }
  return fuzz_dir_buf;
}

/* Writes data to DIR/NAME and returns the path (static). */
static inline const char *fuzz_write(const char *name, const uint8_t *data, size_t size) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  if (fclose(f) != 0) abort();
  return path;
}

/* The input as a NUL-terminated string (malloc'ed; embedded NULs end it early). */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

#endif
