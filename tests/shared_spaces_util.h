/* shared_spaces_util.h — loading the brute-forced spaces of ../shared/data/spaces in tests. */
#ifndef ROOFTUNE_TESTS_SHARED_SPACES_UTIL_H
#define ROOFTUNE_TESTS_SHARED_SPACES_UTIL_H

#include "test.h"
#include "template/ktfile.h"

/* dir/file loaded, or NULL (a failed check, the reason on stderr). */
static inline ktfile *test_load_space(const char *dir, const char *file) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  ktfile *kf = NULL;
  rt_error err = {0};
  CHECK_INT(ktfile_load(path, &kf, &err), RT_OK);
  if (!kf) fprintf(stderr, "%s: %s\n", file, err.text);
  return kf;
}

#endif
