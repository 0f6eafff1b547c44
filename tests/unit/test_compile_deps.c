/* test_compile_deps.c — a compile is keyed by every file it reads, found as NVRTC finds it: a
 * template folder copied with its own common/ is keyed by that copy (an #error added to the
 * copy's header is compiled, not a cached cubin served), a compile error from a missing header
 * is not served once the header exists (nor a __has_include's answer once it does), a FIFO or a link to a device that an include would read
 * is refused by its path (one that nothing includes is never opened), and the files the key
 * follows are those NVRTC reports opening (its -fdevice-time-trace) outside the toolkit.  Real NVRTC compiles. */
/* stages: compile */
#include <glob.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "compile/compile_pool.h"
#include "core/fileio.h"

static char dir[] = "/tmp/rooftune-deps-XXXXXX";

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_compile_deps: still running after 120 s: a header read hangs\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(1);
  _exit(1);
}

static void setup(void) {
  if (!mkdtemp(dir)) test_skip("no temporary folder");
  signal(SIGALRM, on_alarm);
  alarm(120); /* a hang fails the test instead of holding CTest until its timeout */
}

static void teardown(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void put(const char *rel, const char *text, const char *mode) {
  char path[600], cmd[700];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname %s)\"", path);
  if (system(cmd) != 0) return;
  FILE *f = fopen(path, mode);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static const char source[] =
    "#define N 3\n"
    "#line 1\n"
    "#include \"idx.h\"\n"
    "#include \"rt.h\"\n"
    "extern \"C\" __global__ void k(int *p) { p[0] = N * IDX * RT_SCALE; }\n";

/* A template folder T/NAME/fam (idx.h includes "../common/rt.h" and whatever `more` adds) with
 * its own common/, and the shipped-like common folder T/shipped/common on the path after it, as
 * manifest_compile_options puts a template's folder and the shipped common/. */
static void tree(const char *name, const char *more, compile_options *opt, char dirs[2][600]) {
  char rel[300], text[400];
  snprintf(rel, sizeof rel, "%s/fam/idx.h", name);
  snprintf(text, sizeof text, "#pragma once\n#include \"../common/rt.h\"\n%s#define IDX 5\n",
           more ? more : "");
  put(rel, text, "w");
  snprintf(rel, sizeof rel, "%s/common/rt.h", name);
  put(rel, "#pragma once\n#define RT_SCALE 2\n", "w");
  put("shipped/common/rt.h", "#pragma once\n#define RT_SCALE 2\n", "w");
  memset(opt, 0, sizeof *opt);
  opt->arch = "sm_80";
  opt->entry = "k";
  snprintf(dirs[0], 600, "%s/%s/fam", dir, name);
  snprintf(dirs[1], 600, "%s/shipped/common", dir);
  opt->include_dirs[opt->include_count++] = dirs[0];
  opt->include_dirs[opt->include_count++] = dirs[1];
}

/* One compile through the pool and the cache in T/cache: *r is its result. */
static rt_status pool_one(const compile_options *opt, compile_result *r) {
  char cdir[600];
  snprintf(cdir, sizeof cdir, "%s/cache", dir);
  cubin_cache *cache = NULL;
  rt_error err = {0};
  rt_status s = cubin_cache_open(cdir, &cache, &err);
  if (s) return s;
  compile_job job = {source, "k.cu"};
  compile_pool_options popt = {.workers = 1, .timeout_s = 100, .cache = cache};
  compile_pool_stats st;
  s = compile_pool_run(&job, 1, opt, &popt, r, &st, &err);
  cubin_cache_close(cache);
  return s;
}

/* The copy's common/rt.h gets #error: the next compile fails with it, no cached cubin served;
 * put back as it was, the first result is a hit again (the key is the content). */
TEST_CASE(copied_common_is_keyed) {
  compile_options opt;
  char dirs[2][600];
  compile_result r;
  tree("copy", NULL, &opt, dirs);
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_OK);
  CHECK_INT(r.cache_hit, 0);
  compile_result_free(&r);
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_OK);
  CHECK_INT(r.cache_hit, 1);
  compile_result_free(&r);
  put("copy/common/rt.h", "#error stale\n", "a");
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_ERR_COMPILE);
  CHECK_INT(r.cache_hit, 0);
  CHECK_CONTAINS(r.message, "stale");
  compile_result_free(&r);
  put("copy/common/rt.h", "#pragma once\n#define RT_SCALE 2\n", "w");
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_OK);
  CHECK_INT(r.cache_hit, 1);
  compile_result_free(&r);
}

/* A header missing at the first compile: an error (stored); once it exists the compile runs
 * again and succeeds, the stored error is not served; removed again, the error is a hit. */
TEST_CASE(missing_header_not_served_after_it_appears) {
  compile_options opt;
  char dirs[2][600];
  compile_result r;
  tree("late", "#include \"../common/late.h\"\n", &opt, dirs);
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_ERR_COMPILE);
  CHECK_CONTAINS(r.message, "late.h");
  compile_result_free(&r);
  put("late/common/late.h", "#define LATE 1\n", "w");
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_OK);
  CHECK_INT(r.cache_hit, 0);
  compile_result_free(&r);
  char path[600];
  snprintf(path, sizeof path, "%s/late/common/late.h", dir);
  unlink(path);
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_ERR_COMPILE);
  CHECK_INT(r.cache_hit, 1);
  compile_result_free(&r);
}

/* __has_include of a header that then appears: its answer changes, so the key does. */
TEST_CASE(has_include_keyed) {
  compile_options opt;
  char dirs[2][600];
  compile_result r;
  tree("has", "#if __has_include(\"../common/opt.h\")\n#error opt.h is here\n#endif\n", &opt, dirs);
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_OK);
  compile_result_free(&r);
  put("has/common/opt.h", "/* opt */\n", "w");
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_ERR_COMPILE);
  CHECK_INT(r.cache_hit, 0);
  CHECK_CONTAINS(r.message, "opt.h is here");
  compile_result_free(&r);
}

/* A FIFO or a link to /dev/zero that an include finds is refused by its path without a compile;
 * a FIFO in the folder that nothing includes is never opened. */
TEST_CASE(fifo_header_refused) {
  compile_options opt;
  char dirs[2][600], path[700];
  compile_result r;
  tree("fifo", NULL, &opt, dirs);
  snprintf(path, sizeof path, "%s/fifo/fam/unused.h", dir);
  CHECK_INT(mkfifo(path, 0600), 0);
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_OK); /* unused.h is no part of it */
  compile_result_free(&r);
  snprintf(path, sizeof path, "%s/fifo/common/rt.h", dir);
  unlink(path);
  CHECK_INT(mkfifo(path, 0600), 0);
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_ERR_IO);
  CHECK_CONTAINS(r.message, "fifo/fam/../common/rt.h");
  CHECK_CONTAINS(r.message, "FIFO");
  compile_result_free(&r);
  unlink(path);
  CHECK_INT(symlink("/dev/zero", path), 0);
  CHECK_INT(pool_one(&opt, &r), RT_OK);
  CHECK_INT(r.status, RT_ERR_IO);
  CHECK_CONTAINS(r.message, "fifo/fam/../common/rt.h");
  CHECK_CONTAINS(r.message, "character device");
  compile_result_free(&r);
}

/* The files compile_key follows: every one NVRTC reports opening is among them. */
typedef struct found_list {
  char paths[32][700];
  int n;
} found_list;

static void on_found(void *ctx, const char *path, int toolkit) {
  found_list *l = ctx;
  (void)toolkit;
  if (l->n < 32) snprintf(l->paths[l->n++], sizeof l->paths[0], "%s", path);
}

TEST_CASE(key_follows_what_nvrtc_opens) {
  compile_options opt;
  char dirs[2][600], trace[700], arg[760];
  tree("trace", "#include <cuda_fp16.h>\n#include \"sub/deep.h\"\n", &opt, dirs);
  put("trace/fam/sub/deep.h", "#include \"../../common/rt.h\"\n#include \"rt.h\"\n", "w");
  put("trace/fam/sub/rt.h", "#pragma once\n", "w"); /* sub/'s own rt.h comes before -I's */
  unsigned char dg[32], key[32];
  rt_error err = {0};
  found_list l = {0};
  compile_deps_stats st = {.found = on_found, .ctx = &l};
  CHECK_INT(compile_options_digest(&opt, dg, &err), RT_OK);
  CHECK_INT(compile_key(dg, &opt, "k.cu", source, key, &st, &err), RT_OK);
  CHECK(st.files >= 5 && st.misses > 0);
  snprintf(trace, sizeof trace, "%s/trace.json", dir);
  snprintf(arg, sizeof arg, "-fdevice-time-trace=%s", trace);
  opt.extra[opt.extra_count++] = arg;
  /* in a pool worker: NVRTC 13.0 leaks what the trace takes, and the worker's exit drops it */
  compile_job job = {source, "k.cu"};
  compile_pool_options popt = {.workers = 1, .timeout_s = 100};
  compile_pool_stats pst;
  compile_result r;
  CHECK_INT(compile_pool_run(&job, 1, &opt, &popt, &r, &pst, &err), RT_OK);
  CHECK_INT(r.status, RT_OK);
  compile_result_free(&r);
  glob_t g;
  char pattern[720];
  snprintf(pattern, sizeof pattern, "%s*", trace); /* NVRTC 13.0 writes trace.json.json */
  char *text = NULL;
  if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0)
    CHECK_INT(fileio_read(g.gl_pathv[0], &text, NULL, &err), RT_OK);
  globfree(&g);
  CHECK(text != NULL);
  int reported = 0;
  for (const char *p = text; p && (p = strstr(p, "{\"args\":{\"detail\":\"")); p++) {
    const char *a = p + strlen("{\"args\":{\"detail\":\""), *b = strchr(a, '"');
    const char *name = b ? strstr(b, "\"name\":\"") : NULL;
    if (!b || !name || strncmp(name + 8, "Processing Header File\"", 23) != 0) continue;
    if ((size_t)(b - a) == strlen("__nv_nvrtc_builtin_header.h") &&
        !strncmp(a, "__nv_nvrtc_builtin_header.h", (size_t)(b - a)))
      continue;
    reported++;
    /* inside the toolkit, what a toolkit header includes is the toolkit's (keyed by NVRTC's
     * version and the toolkit's folder, not followed) */
    const char *tk = compile_cuda_include_dir();
    int known = !strncmp(a, tk, strlen(tk)) && a[strlen(tk)] == '/';
    for (int i = 0; i < l.n; i++)
      known |= strlen(l.paths[i]) == (size_t)(b - a) && !strncmp(l.paths[i], a, (size_t)(b - a));
    if (!known)
      fprintf(stderr, "NVRTC opened %.*s, which the key does not follow\n", (int)(b - a), a);
    CHECK(known);
  }
  CHECK(reported >= 5); /* idx.h, rt.h, cuda_fp16.h (and what it includes), deep.h, sub/rt.h */
  free(text);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(copied_common_is_keyed),
                  TEST_ENTRY(missing_header_not_served_after_it_appears),
                  TEST_ENTRY(has_include_keyed), TEST_ENTRY(fifo_header_refused),
                  TEST_ENTRY(key_follows_what_nvrtc_opens))
