/* test_compile_pool.c — the pool on a handful of tiny kernels: results come back in job order, a
 * worker that aborts or hangs costs only its job (RT_ERR_CRASH with the signal, RT_ERR_TIMEOUT),
 * a compile error is data, a second run through the cache compiles nothing, and the PCH files
 * NVRTC writes are in a folder of the run's own while it runs and gone after it. */
/* stages: compile */
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include "test.h"
#include "compile/compile_pool.h"

static void hook(size_t index) {
  if (index == 1) abort();
  if (index == 2) sleep(60); /* the pool's timeout stops it */
}

/* Inside the worker, before its third job: is the PCH its first jobs made in the pool's folder
 * (a rooftune-pch- folder in $TMPDIR, then PID)?  Leaves "$TMPDIR/seen" holding the worker's pid and the answer. */
static void pch_hook(size_t index) {
  if (index != 2) return;
  const char *tmp = getenv("TMPDIR");
  int found = 0;
  DIR *d = opendir(tmp);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (strncmp(e->d_name, "rooftune-pch-", 13)) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%ld", tmp, e->d_name, (long)getpid());
    DIR *w = opendir(path);
    for (struct dirent *f; w && (f = readdir(w));) found |= strstr(f->d_name, ".pch") != NULL;
    if (w) closedir(w);
  }
  if (d) closedir(d);
  char seen[1024];
  snprintf(seen, sizeof seen, "%s/seen", tmp);
  FILE *f = fopen(seen, "w");
  if (f) fprintf(f, "%ld %d\n", (long)getpid(), found), fclose(f);
}

/* NVRTC's automatic PCH: a worker's PCH file lives in the pool's folder, and nothing is left
 * behind in $TMPDIR, neither that folder nor NVRTC's own __nvrtc_auto_pch_PID_N (which NVRTC
 * makes in $TMPDIR too, and which the workers' _exit skips removing). */
TEST_CASE(pch_folder) {
  char tmp[] = "/tmp/rooftune-pchtest-XXXXXX";
  if (!mkdtemp(tmp)) test_skip("no temporary folder");
  char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
  setenv("TMPDIR", tmp, 1);
  enum { N = 3 };
  char *src[N];
  compile_job jobs[N];
  for (int i = 0; i < N; i++) {
    src[i] = malloc(256);
    snprintf(
        src[i], 256,
        "#include <cuda_fp16.h>\n#define VALUE %d\n#line 1\n"
        "extern \"C\" __global__ void k(__half *p) { p[threadIdx.x] = __float2half(VALUE); }\n",
        i);
    jobs[i].source = src[i];
    jobs[i].name = "k.cu";
  }
  compile_options opt = {0};
  opt.arch = "sm_80";
  opt.entry = "k";
  opt.pch = 1;
  compile_pool_options popt = {0};
  popt.workers = 1;
  popt.child_hook = pch_hook;
  compile_result res[N];
  compile_pool_stats st;
  rt_error err = {0};
  CHECK_INT(compile_pool_run(jobs, N, &opt, &popt, res, &st, &err), RT_OK);
  for (int i = 0; i < N; i++) {
    CHECK_INT(res[i].status, RT_OK);
    compile_result_free(&res[i]);
    free(src[i]);
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/seen", tmp);
  long pid = 0; /* the worker's, for the record */
  int found = 0;
  FILE *f = fopen(path, "r");
  CHECK(f && fscanf(f, "%ld %d", &pid, &found) == 2);
  if (f) fclose(f);
  CHECK(found); /* the PCH was in the pool's folder while the worker ran */
  remove(path);
  CHECK(rmdir(tmp) == 0); /* empty: no folder left */
  if (old)
    setenv("TMPDIR", old, 1), free(old);
  else
    unsetenv("TMPDIR");
}

static char *make_source(int value) {
  char *s = malloc(512);
  snprintf(s, 512,
           "#define VALUE %d\n#line 1\n"
           "extern \"C\" __global__ void k(int *p) { p[threadIdx.x] = VALUE * threadIdx.x; }\n",
           value);
  return s;
}

/* five jobs through two workers (one crashes, one times out, one does not compile), then again
 * from the cache */
TEST_CASE(runs) {
  char dir[] = "/tmp/rooftune-pool-XXXXXX";
  if (!mkdtemp(dir)) test_skip("no temporary folder");
  enum { N = 5 };
  char *src[N];
  compile_job jobs[N];
  for (int i = 0; i < N; i++) {
    src[i] = make_source(i + 1);
    jobs[i].source = src[i];
    jobs[i].name = "k.cu";
  }
  /* job 4 does not compile */
  free(src[4]);
  src[4] =
      strdup("#define VALUE 5\n#line 1\nextern \"C\" __global__ void k(int *p) { p[0] = nope; }\n");
  jobs[4].source = src[4];

  cubin_cache *cache = NULL;
  rt_error err = {0};
  CHECK_INT(cubin_cache_open(dir, &cache, &err), RT_OK);

  compile_options opt = {0};
  opt.arch = "sm_80";
  opt.entry = "k";
  compile_pool_options popt = {0};
  popt.workers = 2;
  popt.timeout_s = 4.0; /* generous: the tiny kernels take well under a second each */
  popt.cache = cache;
  popt.child_hook = hook;
  compile_result res[N];
  compile_pool_stats st;
  CHECK_INT(compile_pool_run(jobs, N, &opt, &popt, res, &st, &err), RT_OK);
  CHECK_INT(res[0].status, RT_OK);
  CHECK(res[0].cubin_size > 0 && res[0].report.registers > 0);
  CHECK_INT(res[1].status, RT_ERR_CRASH);
  CHECK_CONTAINS(res[1].message, "signal 6");
  CHECK_INT(res[2].status, RT_ERR_TIMEOUT);
  CHECK_CONTAINS(res[2].message, "longer than");
  CHECK_INT(res[3].status, RT_OK);
  CHECK_INT(res[4].status, RT_ERR_COMPILE);
  CHECK_CONTAINS(res[4].log, "nope");
  CHECK_CONTAINS(res[4].log, "k.cu(1)");
  CHECK_INT(st.jobs, N);
  CHECK_INT(st.compiled, 2);
  CHECK_INT(st.compile_errors, 1);
  CHECK_INT(st.failed, 2);
  CHECK_INT(st.cache_hits, 0);
  CHECK_INT(st.workers, 2);
  /* the same source compiled by different workers gives the same cubin as in-process */
  compile_result direct;
  CHECK_INT(compile_source(src[3], "k.cu", &opt, &direct, &err), RT_OK);
  CHECK_INT(direct.cubin_size, res[3].cubin_size);
  CHECK(memcmp(direct.cubin, res[3].cubin, direct.cubin_size) == 0);
  CHECK_INT(direct.report.registers, res[3].report.registers);
  compile_result_free(&direct);
  for (int i = 0; i < N; i++) compile_result_free(&res[i]);
  /* crashes and timeouts are not cached; results and compile errors are */
  CHECK_INT(cubin_cache_count(cache), 3);

  /* second run: no hook; the three cached ones are hits, the other two compile now */
  popt.child_hook = NULL;
  CHECK_INT(compile_pool_run(jobs, N, &opt, &popt, res, &st, &err), RT_OK);
  CHECK_INT(st.cache_hits, 3);
  CHECK_INT(st.compiled, 4);
  CHECK_INT(st.compile_errors, 1);
  CHECK_INT(st.failed, 0);
  CHECK(res[0].cache_hit && !res[1].cache_hit && res[4].cache_hit);
  CHECK_INT(res[4].status, RT_ERR_COMPILE);
  CHECK_CONTAINS(res[4].log, "nope");
  for (int i = 0; i < N; i++) compile_result_free(&res[i]);

  /* third run: everything from the cache, no worker started */
  CHECK_INT(compile_pool_run(jobs, N, &opt, &popt, res, &st, &err), RT_OK);
  CHECK_INT(st.cache_hits, N);
  CHECK_INT(st.workers, 0);
  CHECK_INT(res[1].status, RT_OK);
  CHECK(res[1].cubin_size > 0);
  for (int i = 0; i < N; i++) compile_result_free(&res[i]);

  /* a bad arch is an error before anything runs */
  opt.arch = "sm_70";
  CHECK_INT(compile_pool_run(jobs, N, &opt, &popt, res, &st, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "sm_70");

  cubin_cache_close(cache);
  for (int i = 0; i < N; i++) free(src[i]);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TEST_LIST(TEST_ENTRY(runs), TEST_ENTRY(pch_folder))
