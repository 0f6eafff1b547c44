/* test_chaos_manifest.c — the Nth allocation fails, for every N, while a manifest is loaded,
 * its space built and a configuration's vars and source prefix produced (Jansson's chaos test).
 *
 * malloc, calloc, realloc and strdup are wrapped at link time (tests/CMakeLists.txt gives this
 * program -Wl,--wrap=...) and Jansson is pointed at the same allocator, so every
 * out-of-memory path in expr.c, space.c and manifest.c runs.  Each must return an error (never
 * crash, never report success with a wrong result); the sanitizer build checks for leaks.
 */
/* stages: model */
#include <stdint.h>

#include <jansson.h>

#include "test.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

static long chaos_count;   /* allocations so far */
static long chaos_fail_at; /* the allocation that fails (1-based); 0: none */
static int chaos_failed;   /* the planned failure happened */

static int chaos_fail(void) {
  if (chaos_fail_at && ++chaos_count == chaos_fail_at) {
    chaos_failed = 1;
    return 1;
  }
  return 0;
}

void *__wrap_malloc(size_t n) { return chaos_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { return chaos_fail() ? NULL : __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { return chaos_fail() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = __wrap_malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}
static void *chaos_json_malloc(size_t n) { return __wrap_malloc(n); }
static void chaos_json_free(void *p) { free(p); }

/* One full pass; returns the status of the first step that failed, with *size the space's
 * size on success. */
static rt_status chaos_pass(const char *path, const rt_vars *env, size_t *size) {
  manifest *m = NULL;
  space *sp = NULL;
  char *prefix = NULL;
  rt_vars vars;
  rt_error err = {0};
  rt_status s = manifest_load(path, &m, &err);
  if (!s) s = manifest_build_space(m, env, &sp, &err);
  if (!s) s = manifest_config_vars(m, sp, space_size(sp) / 2, env, &vars, &err);
  if (!s) s = manifest_source_prefix(m, sp, space_size(sp) / 2, env, "f16", &prefix, &err);
  if (!s) {
    size_t idx;
    char buf[256];
    space_format_config(sp, 3, buf, sizeof buf);
    s = space_parse_config(sp, buf, &idx, &err);
    if (!s && idx != 3) s = RT_ERR_INTERNAL;
  }
  if (s && err.code != s) s = RT_ERR_INTERNAL; /* an error must be described */
  *size = sp ? space_size(sp) : 0;
  free(prefix);
  space_free(sp);
  manifest_free(m);
  return s;
}

TEST_CASE(every_allocation) {
  json_set_alloc_funcs(chaos_json_malloc, chaos_json_free);
  char path[1100];
  snprintf(path, sizeof path, "%s/tests/data/manifests/valid/idents.json", test_source_dir());
  rt_vars env;
  rt_vars_clear(&env);
  rt_vars_set(&env, "M", 512);
  rt_vars_set(&env, "N", 512);
  rt_vars_set(&env, "K", 512);
  manifest_env_dtype("f16", &env, NULL);
  gpu_spec_env(arch_spec_find("sm_90"), gpu_spec_find("h200"), &env, NULL);
  size_t want;
  CHECK_INT(chaos_pass(path, &env, &want), RT_OK);
  CHECK(want > 3);
  long n;
  int bad = 0;
  for (n = 1; n < 100000; n++) {
    chaos_count = 0;
    chaos_fail_at = n;
    chaos_failed = 0;
    size_t size;
    rt_status s = chaos_pass(path, &env, &size);
    chaos_fail_at = 0;
    if (!chaos_failed) { /* every allocation of a pass has been failed once */
      CHECK_INT(s, RT_OK);
      break;
    }
    /* a failed allocation is an error, or (inside Jansson's parser) a reported JSON error;
     * success is allowed only with the right result */
    if (s == RT_OK && size != want) bad++;
    if (s == RT_ERR_INTERNAL) bad++;
  }
  CHECK_INT(bad, 0);
  CHECK(n > 50 && n < 100000);
  printf("failed each of %ld allocations in turn\n", n - 1);
}

TEST_LIST(TEST_ENTRY(every_allocation))
