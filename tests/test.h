/* test.h — the few checks every C test uses.  A failed CHECK prints file:line and the
 * expression and marks the test failed; test_done() returns the exit code (0 ok, 1 failed).
 * test_skip() prints the reason and exits 77, which CTest reports as skipped. */
#ifndef ROOFTUNE_TEST_H
#define ROOFTUNE_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                              \
  do {                                                                           \
    test_checks++;                                                               \
    if (!(cond)) {                                                               \
      test_failures++;                                                           \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

#define CHECK_INT(a, b)                                                                    \
  do {                                                                                     \
    long long a_ = (long long)(a), b_ = (long long)(b);                                    \
    test_checks++;                                                                         \
    if (a_ != b_) {                                                                        \
      test_failures++;                                                                     \
      fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, \
              a_, #b, b_);                                                                 \
    }                                                                                      \
  } while (0)

#define CHECK_STR(a, b)                                                                  \
  do {                                                                                   \
    const char *a_ = (a), *b_ = (b);                                                     \
    test_checks++;                                                                       \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                             \
      test_failures++;                                                                   \
      fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
              a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                   \
    }                                                                                    \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                                           \
  do {                                                                                        \
    const char *h_ = (hay), *n_ = (needle);                                                   \
    test_checks++;                                                                            \
    if (!h_ || !strstr(h_, n_)) {                                                             \
      test_failures++;                                                                        \
      fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,         \
              h_ ? h_ : "(null)", n_);                                                        \
    }                                                                                         \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                 \
  do {                                                                                        \
    double a_ = (a), b_ = (b);                                                                \
    test_checks++;                                                                            \
    if (!(fabs(a_ - b_) <= (tol))) {                                                          \
      test_failures++;                                                                        \
      fprintf(stderr, "%s:%d: %s == %g, expected %g (+-%g)\n", __FILE__, __LINE__, #a, a_, b_, \
              (double)(tol));                                                                 \
    }                                                                                         \
  } while (0)

/* The command line a test's cuda device runs its worker with (device_options.worker_argv): the
 * rooftune binary's own `__worker`, as the command hands it down (cli_worker_argv). */
#define TEST_WORKER_ARGV ((const char *const[]){"rooftune", "__worker", NULL})

static inline int test_done(void) {
  if (test_failures) fprintf(stderr, "%d of %d checks failed\n", test_failures, test_checks);
  else printf("%d checks passed\n", test_checks);
  return test_failures ? 1 : 0;
}

static inline void test_skip(const char *reason) {
  printf("SKIP: %s\n", reason);
  exit(77);
}

/* The project's source folder (tests run from the build folder). */
static inline const char *test_source_dir(void) {
  const char *s = getenv("ROOFTUNE_SOURCE_DIR");
  return s ? s : ROOFTUNE_SOURCE_DIR;
}

/* ../shared/data beside the checkout, or NULL: tests that read it skip when it is absent. */
static inline const char *test_shared_dir(void) {
  const char *s = getenv("ROOFTUNE_SHARED_DIR");
  return s ? s : ROOFTUNE_SOURCE_DIR "/../shared";
}

#endif
