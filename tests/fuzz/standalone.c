/* standalone.c — runs a fuzz target on files instead of under libFuzzer: every regular file
 * named on the command line, and every regular file in the folders named there.  What the
 * default and sanitizer builds run, so the seed corpora and every crash found so far are
 * tests on machines without libFuzzer. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *g = realloc(buf, cap *= 2);
      if (!g) break;
      buf = g;
    }
  }
  fclose(f);
  if (!buf) return 1;
  /* an exact-size copy, so reading one byte past the input is caught under ASan */
  uint8_t *exact = malloc(n ? n : 1);
  memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  return 0;
}

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int files = 0, bad = 0;
  for (int i = 1; i < argc; i++) {
    struct stat sb;
    if (stat(argv[i], &sb) != 0) {
      fprintf(stderr, "no such file or folder: %s\n", argv[i]);
      bad++;
      continue;
    }
    if (!S_ISDIR(sb.st_mode)) {
      bad += run_file(argv[i]);
      files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      if (n == cap) names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
      size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
      names[n] = malloc(len);
      snprintf(names[n++], len, "%s/%s", argv[i], e->d_name);
    }
    if (d) closedir(d);
    qsort(names, n, sizeof *names, cmp);
    for (size_t k = 0; k < n; k++) {
      if (stat(names[k], &sb) == 0 && S_ISREG(sb.st_mode)) {
        bad += run_file(names[k]);
        files++;
      }
      free(names[k]);
    }
    free(names);
  }
  printf("%s: %d inputs ran, %d unreadable\n", argv[0], files, bad);
  return bad ? 1 : 0;
}
