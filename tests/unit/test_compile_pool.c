/* test_compile_pool.c — the pool on a handful of tiny kernels: results come back in job order, a
 * worker that aborts or hangs costs only its job (RT_ERR_CRASH with the signal, RT_ERR_TIMEOUT),
 * a compile error is data, and a second run through the cache compiles nothing. */
#include <signal.h>
#include <unistd.h>

#include "test.h"
#include "tuner/compile_pool.h"

static void hook(size_t index) {
  if (index == 1) abort();
  if (index == 2) sleep(60); /* the pool's timeout stops it */
}

static char *make_source(int value) {
  char *s = malloc(512);
  snprintf(s, 512,
           "#define VALUE %d\n#line 1\n"
           "extern \"C\" __global__ void k(int *p) { p[threadIdx.x] = VALUE * threadIdx.x; }\n",
           value);
  return s;
}

int main(void) {
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
  src[4] = strdup("#define VALUE 5\n#line 1\nextern \"C\" __global__ void k(int *p) { p[0] = nope; }\n");
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
  return test_done();
}
