/* test.h — the few checks every C test uses, and the registry of a test file's cases.  A failed
 * CHECK prints file:line, the case it ran in and the expression, and marks the test failed.
 *
 * A test file defines its cases and lists them once, in the order they run:
 *
 *     TEST_CASE(merge_conflict) { CHECK_INT(...); }
 *     TEST_CASE(merge_order) { ... }
 *     TEST_LIST(TEST_ENTRY(merge_conflict), TEST_ENTRY(merge_order))
 *
 * TEST_LIST writes main(): `unit_test_db` runs every case, `unit_test_db merge_order` only the
 * named ones (in the order named), `--list` prints the names; an unknown name is an error that
 * lists the cases.  TEST_LIST_FIXTURE(setup, teardown, ...) runs setup() before the first case
 * and teardown() after the last (either may be NULL).  test_skip(reason) inside a case ends that
 * case as skipped (call it before the case allocates: what the case holds is not freed); in
 * setup it skips the whole file.  The exit code is 0 when no check failed, 1 when one did, 77
 * (CTest's SKIP_RETURN_CODE) when every case that ran skipped.  Each case is a C function, so a
 * case defined but not listed is an unused function: the warnings catch it.
 *
 * A program with its own main() (a few still have one) ends with `return test_done();`. */
#ifndef ROOFTUNE_TEST_H
#define ROOFTUNE_TEST_H

#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;
/* The case running now (its name opens each failure's message), and where test_skip() returns. */
static const char *test_now_case = "";
static jmp_buf test_env_case;
static int test_in_case;
static int test_skipped_now;       /* the running case called test_skip() */
static char test_skip_reason[512]; /* copied: the text may live in the case's frame */
static char test_first_skip[512];  /* the reason printed when every case skipped */
#define TEST_AT_ __FILE__, __LINE__, test_now_case, (*test_now_case ? ": " : "")

#define CHECK(cond)                                                      \
  do {                                                                   \
    test_checks++;                                                       \
    if (!(cond)) {                                                       \
      test_failures++;                                                   \
      fprintf(stderr, "%s:%d: %s%scheck failed: %s\n", TEST_AT_, #cond); \
    }                                                                    \
  } while (0)

#define CHECK_INT(a, b)                                                                          \
  do {                                                                                           \
    long long a_ = (long long)(a), b_ = (long long)(b);                                          \
    test_checks++;                                                                               \
    if (a_ != b_) {                                                                              \
      test_failures++;                                                                           \
      fprintf(stderr, "%s:%d: %s%s%s == %lld, expected %s == %lld\n", TEST_AT_, #a, a_, #b, b_); \
    }                                                                                            \
  } while (0)

#define CHECK_STR(a, b)                                                           \
  do {                                                                            \
    const char *a_ = (a), *b_ = (b);                                              \
    test_checks++;                                                                \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                      \
      test_failures++;                                                            \
      fprintf(stderr, "%s:%d: %s%s%s is \"%s\", expected \"%s\"\n", TEST_AT_, #a, \
              a_ ? a_ : "(null)", b_ ? b_ : "(null)");                            \
    }                                                                             \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                \
  do {                                                                                             \
    const char *h_ = (hay), *n_ = (needle);                                                        \
    test_checks++;                                                                                 \
    if (!h_ || !strstr(h_, n_)) {                                                                  \
      test_failures++;                                                                             \
      fprintf(stderr, "%s:%d: %s%s\"%s\" does not contain \"%s\"\n", TEST_AT_, h_ ? h_ : "(null)", \
              n_);                                                                                 \
    }                                                                                              \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                            \
  do {                                                                                   \
    double a_ = (a), b_ = (b);                                                           \
    test_checks++;                                                                       \
    if (!(fabs(a_ - b_) <= (tol))) {                                                     \
      test_failures++;                                                                   \
      fprintf(stderr, "%s:%d: %s%s%s == %g, expected %g (+-%g)\n", TEST_AT_, #a, a_, b_, \
              (double)(tol));                                                            \
    }                                                                                    \
  } while (0)

/* The command line a test's cuda device runs its worker with (device_options.worker_argv): the
 * rooftune binary's own `__worker`, as the command hands it down (cli_worker_argv). */
#define TEST_WORKER_ARGV ((const char *const[]){"rooftune", "__worker", NULL})

static inline int test_done(void) {
  if (test_failures)
    fprintf(stderr, "%d of %d checks failed\n", test_failures, test_checks);
  else
    printf("%d checks passed\n", test_checks);
  return test_failures ? 1 : 0;
}

static inline void test_copy_text(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  if (n >= size) n = size - 1; /* a long reason is cut: it is only printed */
  memcpy(dst, src, n);
  dst[n] = 0;
}

static inline void test_skip(const char *reason) {
  if (test_in_case) { /* in a case: that case ends, the others still run */
    test_copy_text(test_skip_reason, sizeof test_skip_reason, reason);
    test_skipped_now = 1;
    longjmp(test_env_case, 1);
  }
  printf("SKIP: %s\n", reason);
  exit(77);
}

typedef struct {
  const char *name;
  void (*run)(void);
} test_case;

#define TEST_CASE(name) static void test_case_##name(void)
#define TEST_ENTRY(name) \
  { #name, test_case_##name }
#define TEST_LIST(...) TEST_LIST_FIXTURE(NULL, NULL, __VA_ARGS__)
#define TEST_LIST_FIXTURE(setup, teardown, ...)                                              \
  int main(int argc, char **argv) {                                                          \
    static const test_case cases_[] = {__VA_ARGS__};                                         \
    return test_main(cases_, (int)(sizeof cases_ / sizeof cases_[0]), setup, teardown, argc, \
                     argv);                                                                  \
  }

static inline const test_case *test_find_case(const test_case *cases, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(cases[i].name, name) == 0) return &cases[i];
  return NULL;
}

static inline void test_print_cases(FILE *f, const test_case *cases, int n, const char *indent) {
  for (int i = 0; i < n; i++) fprintf(f, "%s%s\n", indent, cases[i].name);
}

/* Runs one case; returns 1 when it skipped.  Its failures are counted in test_failures. */
static inline int test_run_case(const test_case *c) {
  int failures = test_failures, checks = test_checks;
  test_now_case = c->name;
  test_skipped_now = 0;
  test_in_case = 1;
  if (setjmp(test_env_case) == 0) c->run();
  test_in_case = 0;
  test_now_case = "";
  if (test_skipped_now) {
    printf("skip %s: %s\n", c->name, test_skip_reason);
    if (!test_first_skip[0])
      test_copy_text(test_first_skip, sizeof test_first_skip, test_skip_reason);
    if (test_failures > failures)
      fprintf(stderr, "FAIL %s: %d of %d checks failed before it skipped\n", c->name,
              test_failures - failures, test_checks - checks);
    return 1;
  }
  if (test_failures > failures)
    fprintf(stderr, "FAIL %s: %d of %d checks failed\n", c->name, test_failures - failures,
            test_checks - checks);
  else
    printf("ok   %s (%d checks)\n", c->name, test_checks - checks);
  return 0;
}

static inline int test_main(const test_case *cases, int n, void (*setup)(void),
                            void (*teardown)(void), int argc, char **argv) {
  const char *prog = argc > 0 ? argv[0] : "test";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--list") == 0) {
      test_print_cases(stdout, cases, n, "");
      return 0;
    }
    if (argv[i][0] == '-' || !test_find_case(cases, n, argv[i])) {
      fprintf(stderr,
              "%s: %s '%s'; run it with no argument for every case, --list for the names, "
              "or name cases among:\n",
              prog, argv[i][0] == '-' ? "unknown option" : "no case named", argv[i]);
      test_print_cases(stderr, cases, n, "  ");
      return 2;
    }
  }
  if (setup) setup();
  int ran = 0, skipped = 0;
  if (argc > 1)
    for (int i = 1; i < argc; i++, ran++)
      skipped += test_run_case(test_find_case(cases, n, argv[i]));
  else
    for (int i = 0; i < n; i++, ran++) skipped += test_run_case(&cases[i]);
  if (teardown) teardown();
  if (ran && skipped == ran && !test_failures) {
    printf("SKIP: %s%s\n", test_first_skip, ran > 1 ? " (every case skipped)" : "");
    return 77;
  }
  return test_done();
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
