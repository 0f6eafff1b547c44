/* test_manifest_limits.c — a manifest's limits and the inputs that once got through, each
 * refused where it enters with the field named:
 *   - a source file name with a quote and a newline (it was pasted into `#line 1 "..."`, so the
 *     file name put a #define into the compiled and stored kernel);
 *   - negative cost formulas (accepted, and the model device timed the FLOPs it was told);
 *   - a space of 1.2e12 combinations (enumerated until memory ran out) is refused up front with
 *     its size;
 *   - a configuration text longer than the database stores, too many names, a name longer than
 *     a configuration's value table holds, a file larger than a manifest may be;
 *   - a parameter with 65535 values loads in linear-logarithmic time (the repeat check was
 *     quadratic: 35 s), and a repeat among them is still found, at its first place. */
/* stages: model */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"

static char dir[256];

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_manifest_limits: too slow (alarm after 60 s)\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(2);
  _exit(1);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

/* A manifest PARAMS (the "params" object's text), COST_FLOPS and SOURCE into DIR/NAME.json;
 * the source file is created.  Returns the path (static). */
static const char *manifest_with(const char *name, const char *source, const char *params,
                                 const char *flops) {
  static char path[512];
  char src[1024];
  snprintf(src, sizeof src, "%s/%s", dir, source);
  if (!strchr(source, '\\')) write_text(src, "extern \"C\" __global__ void k() {}\n");
  size_t n = strlen(params) + strlen(source) + 4096;
  char *text = malloc(n);
  snprintf(text, n,
           "{\"name\": \"%s\", \"family\": \"gemm\", \"source\": \"%s\", \"entry\": \"k\",\n"
           " \"dtypes\": [\"f32\"], \"archs\": [\"sm_80\"], \"params\": %s,\n"
           " \"launch\": {\"grid\": [1, 1, 1], \"block\": [32, 1, 1]},\n"
           " \"cost\": {\"flops\": \"%s\", \"dram_bytes\": 1}}\n",
           name, source, params, flops);
  snprintf(path, sizeof path, "%s/%s.json", dir, name);
  write_text(path, text);
  free(text);
  return path;
}

static rt_status load(const char *path, manifest **m, rt_error *err) {
  rt_error_clear(err);
  *m = NULL;
  return manifest_load(path, m, err);
}

static void test_source_name_injection(void) {
  /* the name as JSON writes it: a quote, a newline, a #define, a line comment */
  const char *json_name = "k\\\"\\n#define INJECTED 1\\n#pragma x.cu";
  const char *disk_name = "k\"\n#define INJECTED 1\n#pragma x.cu";
  char src[1024];
  snprintf(src, sizeof src, "%s/%s", dir, disk_name);
  write_text(src, "extern \"C\" __global__ void k() {}\n");
  const char *path = manifest_with("inject", json_name, "{\"X\": [1, 2]}", "1");
  manifest *m;
  rt_error err;
  CHECK_INT(load(path, &m, &err), RT_ERR_MANIFEST);
  CHECK_STR(err.field, "source");
  CHECK_CONTAINS(err.text, "quote");
  if (m) { /* before the fix: show what got into the source */
    rt_vars env;
    rt_vars_clear(&env);
    space *sp = NULL;
    char *prefix = NULL;
    if (manifest_build_space(m, &env, &sp, &err) == RT_OK &&
        manifest_source_prefix(m, sp, 0, &env, NULL, &prefix, &err) == RT_OK)
      fprintf(stderr, "the prefix was:\n%s\n", prefix);
    free(prefix);
    space_free(sp);
    manifest_free(m);
  }
  unlink(src);
  /* a backslash and a tab too */
  path = manifest_with("backslash", "dir\\\\k.cu", "{\"X\": [1]}", "1");
  CHECK_INT(load(path, &m, &err), RT_ERR_MANIFEST);
  CHECK_STR(err.field, "source");
  manifest_free(m);
}

static void test_negative_cost(void) {
  const char *path = manifest_with("negcost", "k.cu", "{\"X\": [1, 2]}", "X - 2");
  manifest *m;
  rt_error err;
  CHECK_INT(load(path, &m, &err), RT_OK);
  if (!m) return;
  rt_vars env;
  rt_vars_clear(&env);
  space *sp = NULL;
  CHECK_INT(manifest_build_space(m, &env, &sp, &err), RT_OK);
  candidate_plan pl;
  CHECK_INT(manifest_plan(m, sp, 1, &env, &pl, &err), RT_OK); /* X=2: 0 FLOPs is a cost */
  rt_error_clear(&err);
  CHECK_INT(manifest_plan(m, sp, 0, &env, &pl, &err), RT_ERR_INVALID); /* X=1: -1 */
  CHECK_STR(err.field, "cost.flops");
  CHECK_CONTAINS(err.text, "negative (-1)");
  space_free(sp);
  manifest_free(m);
}

static void test_space_refused_up_front(void) {
  /* 12 parameters of 10 values: 1e12 combinations, no constraint */
  char params[4096];
  size_t n = (size_t)snprintf(params, sizeof params, "{");
  for (int i = 0; i < 12; i++)
    n += (size_t)snprintf(params + n, sizeof params - n, "%s\"P%d\": [0,1,2,3,4,5,6,7,8,9]",
                          i ? ", " : "", i);
  snprintf(params + n, sizeof params - n, "}");
  const char *path = manifest_with("huge", "k.cu", params, "1");
  manifest *m;
  rt_error err;
  CHECK_INT(load(path, &m, &err), RT_ERR_MANIFEST);
  CHECK_STR(err.field, "params");
  CHECK_CONTAINS(err.text, "1e+12 combinations");
  manifest_free(m);
}

static void test_config_text_limit(void) {
  /* 8 parameters named with 40 characters, values of 60: each pair ~100 characters */
  char params[8192];
  size_t n = (size_t)snprintf(params, sizeof params, "{");
  for (int i = 0; i < 8; i++)
    n += (size_t)snprintf(params + n, sizeof params - n, "%s\"P%039d\": [\"v%059d\"]",
                          i ? ", " : "", i, i);
  snprintf(params + n, sizeof params - n, "}");
  const char *path = manifest_with("longcfg", "k.cu", params, "1");
  manifest *m;
  rt_error err;
  CHECK_INT(load(path, &m, &err), RT_ERR_MANIFEST);
  CHECK_STR(err.field, "params");
  CHECK_CONTAINS(err.text, "815 characters");
  manifest_free(m);
}

static void test_names_limits(void) {
  char params[8192];
  size_t n = (size_t)snprintf(params, sizeof params, "{");
  for (int i = 0; i < MANIFEST_NAMES_MAX + 1; i++)
    n += (size_t)snprintf(params + n, sizeof params - n, "%s\"P%d\": [1]", i ? ", " : "", i);
  snprintf(params + n, sizeof params - n, "}");
  const char *path = manifest_with("manynames", "k.cu", params, "1");
  manifest *m;
  rt_error err;
  CHECK_INT(load(path, &m, &err), RT_ERR_MANIFEST);
  CHECK_CONTAINS(err.text, "too many parameters");
  manifest_free(m);
  /* a name longer than a configuration's value table holds */
  char longname[128];
  snprintf(longname, sizeof longname, "{\"P%0*d\": [1]}", RT_VAR_NAME_MAX, 0);
  path = manifest_with("longname", "k.cu", longname, "1");
  CHECK_INT(load(path, &m, &err), RT_ERR_MANIFEST);
  CHECK_CONTAINS(err.text, "too long");
  manifest_free(m);
}

static void test_file_size_limit(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/big.json", dir);
  FILE *f = fopen(path, "w");
  fputs("{\"name\": \"big\", \"description\": \"", f);
  for (int i = 0; i < MANIFEST_FILE_MAX; i++) fputc('x', f);
  fputs("\"}\n", f);
  fclose(f);
  manifest *m;
  rt_error err;
  CHECK_INT(load(path, &m, &err), RT_ERR_MANIFEST);
  CHECK_CONTAINS(err.text, "bytes, more than");
  manifest_free(m);
}

static void test_long_value_list(void) {
  enum { N = 65535 };
  size_t cap = (size_t)N * 8 + 64, n = 0;
  char *params = malloc(cap);
  n += (size_t)snprintf(params + n, cap - n, "{\"X\": [");
  for (int i = 0; i < N; i++)
    n += (size_t)snprintf(params + n, cap - n, "%s%d", i ? "," : "", i * 3);
  snprintf(params + n, cap - n, "]}");
  const char *path = manifest_with("longlist", "k.cu", params, "1");
  manifest *m;
  rt_error err;
  CHECK_INT(load(path, &m, &err), RT_OK);
  if (m) CHECK_INT(manifest_param(m, 0)->count, N);
  manifest_free(m);
  /* a repeat near the end is found and reported at the later of the two places */
  char *at = strstr(params, ",196599"); /* value 65533*3 */
  CHECK(at != NULL);
  if (at) memcpy(at, ",3     ", 7); /* now 3 again: repeats X[1] */
  path = manifest_with("repeat", "k.cu", params, "1");
  CHECK_INT(load(path, &m, &err), RT_ERR_MANIFEST);
  CHECK_STR(err.field, "params.X[65533]");
  CHECK_CONTAINS(err.text, "value 3 repeats X[1]");
  manifest_free(m);
  free(params);
}

TEST_CASE(limits) {
  signal(SIGALRM, on_alarm);
  alarm(60);
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/rooftune-mlimits-XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(dir)) test_skip("cannot create a temporary folder");
  test_source_name_injection();
  test_negative_cost();
  test_space_refused_up_front();
  test_config_text_limit();
  test_names_limits();
  test_file_size_limit();
  test_long_value_list();
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

TEST_LIST(TEST_ENTRY(limits))
