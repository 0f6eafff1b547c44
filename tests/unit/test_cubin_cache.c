/* test_cubin_cache.c — the cache stores and returns whole results, follows ROOFTUNE_CACHE_DIR and
 * XDG_CACHE_HOME, is off with ROOFTUNE_CACHE_DIR=off, survives a damaged file (moved aside,
 * one warning, a fresh cache), and keeps to its bound, least recently used rows out first. */
/* stages: compile */
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "compile/cubin_cache.h"
#include "core/util.h"

static void fake_result(compile_result *r, int status) {
  memset(r, 0, sizeof *r);
  r->status = status;
  r->log = strdup(status == RT_OK ? "ptxas info : Used 12 registers" : "k.cu(3): error: oops");
  if (status == RT_OK) {
    r->cubin_size = 100;
    r->cubin = malloc(100);
    for (int i = 0; i < 100; i++) r->cubin[i] = (unsigned char)(i * 7);
    r->ptx = strdup(".version 9.0");
    r->report.found = 1;
    r->report.registers = 12;
    r->report.smem_static = 4096;
    r->report.spill_stores = 8;
    r->report.spill_loads = 4;
    r->report.stack_bytes = 16;
  } else {
    snprintf(r->message, sizeof r->message, "k.cu(3): error: oops");
  }
  snprintf(r->lowered_name, sizeof r->lowered_name, "_Z1kPi");
  r->seconds = 1.5;
}

/* A temporary folder for the caches, and sub/ in it: where ROOFTUNE_CACHE_DIR points. */
static char dir[] = "/tmp/rooftune-cache-XXXXXX";
static char sub[600];

static void setup(void) {
  if (!mkdtemp(dir)) test_skip("no temporary folder");
  snprintf(sub, sizeof sub, "%s/a/b", dir);
}

static void teardown(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* where the cache lives */
TEST_CASE(location) {
  char buf[1024];
  setenv("ROOFTUNE_CACHE_DIR", "off", 1);
  CHECK_INT(cubin_cache_dir(buf, sizeof buf), 0);
  cubin_cache *c = (cubin_cache *)1;
  CHECK_INT(cubin_cache_open_default(&c, NULL), RT_OK);
  CHECK(c == NULL);
  unsetenv("ROOFTUNE_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  CHECK_INT(cubin_cache_dir(buf, sizeof buf), 1);
  CHECK_STR(buf, "/x/cache/rooftune");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/someone", 1);
  cubin_cache_dir(buf, sizeof buf);
  CHECK_STR(buf, "/home/someone/.cache/rooftune");
  setenv("ROOFTUNE_CACHE_DIR", sub, 1);
  cubin_cache_dir(buf, sizeof buf);
  CHECK_STR(buf, sub);
}

/* store and read back, in a folder that does not exist yet; reopened: still there */
TEST_CASE(store) {
  cubin_cache *c = NULL;
  setenv("ROOFTUNE_CACHE_DIR", sub, 1);
  rt_error err = {0};
  CHECK_INT(cubin_cache_open_default(&c, &err), RT_OK);
  CHECK(c && cubin_cache_usable(c));
  CHECK_STR(cubin_cache_warning(c), "");
  unsigned char k1[32], k2[32], k3[32];
  memset(k1, 1, 32);
  memset(k2, 2, 32);
  memset(k3, 3, 32);
  compile_result r, got;
  CHECK_INT(cubin_cache_get(c, k1, &got), 0);
  fake_result(&r, RT_OK);
  CHECK_INT(cubin_cache_put(c, k1, &r, &err), RT_OK);
  CHECK_INT(cubin_cache_get(c, k1, &got), 1);
  CHECK_INT(got.status, RT_OK);
  CHECK(got.cache_hit && got.seconds == 0);
  CHECK_INT(got.cubin_size, 100);
  CHECK(memcmp(got.cubin, r.cubin, 100) == 0);
  CHECK_STR(got.log, r.log);
  CHECK_STR(got.ptx, ".version 9.0");
  CHECK_STR(got.lowered_name, "_Z1kPi");
  CHECK_INT(got.report.registers, 12);
  CHECK_INT(got.report.smem_static, 4096);
  CHECK_INT(got.report.spill_stores, 8);
  CHECK_INT(got.report.spill_loads, 4);
  CHECK_INT(got.report.stack_bytes, 16);
  compile_result_free(&got);
  compile_result_free(&r);
  fake_result(&r, RT_ERR_COMPILE);
  CHECK_INT(cubin_cache_put(c, k2, &r, &err), RT_OK);
  compile_result_free(&r);
  CHECK_INT(cubin_cache_get(c, k2, &got), 1);
  CHECK_INT(got.status, RT_ERR_COMPILE);
  CHECK(got.cubin == NULL);
  CHECK_STR(got.message, "k.cu(3): error: oops");
  compile_result_free(&got);
  fake_result(&r, RT_OK);
  r.status = RT_ERR_CRASH; /* not deterministic: never stored */
  CHECK_INT(cubin_cache_put(c, k3, &r, &err), RT_OK);
  compile_result_free(&r);
  CHECK_INT(cubin_cache_get(c, k3, &got), 0);
  CHECK_INT(cubin_cache_count(c), 2);
  cubin_cache_close(c);

  /* reopened: still there */
  CHECK_INT(cubin_cache_open(sub, &c, &err), RT_OK);
  CHECK_INT(cubin_cache_get(c, k1, &got), 1);
  compile_result_free(&got);
  cubin_cache_close(c);
}

/* a damaged file: moved aside, one warning, a working empty cache */
TEST_CASE(damaged) {
  cubin_cache *c = NULL;
  rt_error err = {0};
  compile_result r, got;
  unsigned char k1[32];
  memset(k1, 1, 32);
  rt_mkdir_p(sub, &err); /* there already when the store case ran first */
  char path[700], aside[720];
  snprintf(path, sizeof path, "%s/cubins.db", sub);
  snprintf(aside, sizeof aside, "%s.damaged", path);
  unlink(path);
  char side[720];
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  for (int i = 0; i < 4096; i++) fputc("not a database "[i % 15], f);
  fclose(f);
  CHECK_INT(cubin_cache_open(sub, &c, &err), RT_OK);
  CHECK(c && cubin_cache_usable(c));
  CHECK_CONTAINS(cubin_cache_warning(c), "damaged");
  CHECK_CONTAINS(cubin_cache_warning(c), aside);
  struct stat sb;
  CHECK(stat(aside, &sb) == 0);
  CHECK_INT(cubin_cache_count(c), 0);
  CHECK_INT(cubin_cache_get(c, k1, &got), 0);
  fake_result(&r, RT_OK);
  CHECK_INT(cubin_cache_put(c, k1, &r, &err), RT_OK);
  compile_result_free(&r);
  CHECK_INT(cubin_cache_count(c), 1);
  cubin_cache_close(c);
}

TEST_CASE(bound) {
  cubin_cache *c = NULL;
  compile_result r, got;
  rt_error err = {0};
  /* the bound: 100-byte cubins cost about 330 bytes a row (log, PTX, message, overhead); with
   * room for ten, storing an eleventh evicts down to nine, least recently used first: a row
   * hit after the others were stored outlives them */
  {
    char bdir[700];
    snprintf(bdir, sizeof bdir, "%s/bounded", dir);
    CHECK_INT(cubin_cache_open(bdir, &c, &err), RT_OK);
    fake_result(&r, RT_OK);
    long long row = (long long)r.cubin_size + (long long)strlen(r.log) + (long long)strlen(r.ptx) +
                    (long long)strlen(r.message) + 128;
    cubin_cache_set_limit(c, 10 * row);
    unsigned char key[32];
    memset(key, 0, sizeof key);
    for (int i = 0; i < 10; i++) {
      key[0] = (unsigned char)i;
      cubin_cache_set_clock(c, 1000000 + i);
      CHECK_INT(cubin_cache_put(c, key, &r, &err), RT_OK);
    }
    CHECK_INT(cubin_cache_count(c), 10);
    CHECK_INT(cubin_cache_bytes(c), 10 * row);
    /* row 0 is hit two hours later: now the most recently used */
    cubin_cache_set_clock(c, 1000000 + 7200);
    key[0] = 0;
    CHECK_INT(cubin_cache_get(c, key, &got), 1);
    compile_result_free(&got);
    key[0] = 10;
    cubin_cache_set_clock(c, 1000000 + 7201);
    CHECK_INT(cubin_cache_put(c, key, &r, &err), RT_OK);
    CHECK_INT(cubin_cache_count(c), 9);
    CHECK(cubin_cache_bytes(c) <= 9 * row);
    int alive[11];
    for (int i = 0; i <= 10; i++) {
      key[0] = (unsigned char)i;
      alive[i] = cubin_cache_get(c, key, &got);
      if (alive[i]) compile_result_free(&got);
    }
    CHECK(alive[0] && alive[10]);  /* hit, and just stored */
    CHECK(!alive[1] && !alive[2]); /* stored first, never hit */
    CHECK(alive[3] && alive[9]);
    compile_result_free(&r);
    cubin_cache_close(c);

    /* the bound from the environment; a bad value is the one warning and the default holds */
    setenv("ROOFTUNE_CACHE_MAX_MB", "3", 1);
    CHECK_INT(cubin_cache_open(bdir, &c, &err), RT_OK);
    CHECK_INT(cubin_cache_limit(c), 3LL << 20);
    CHECK_STR(cubin_cache_warning(c), "");
    cubin_cache_close(c);
    setenv("ROOFTUNE_CACHE_MAX_MB", "lots", 1);
    CHECK_INT(cubin_cache_open(bdir, &c, &err), RT_OK);
    CHECK_INT(cubin_cache_limit(c), 2048LL << 20);
    CHECK_CONTAINS(cubin_cache_warning(c), "ROOFTUNE_CACHE_MAX_MB=lots");
    cubin_cache_close(c);
    unsetenv("ROOFTUNE_CACHE_MAX_MB");
  }
}

/* a cache folder that cannot be created is an error the caller can step around */
TEST_CASE(uncreatable) {
  cubin_cache *c = NULL;
  rt_error err = {0};
  CHECK_INT(cubin_cache_open("/proc/no/such/place", &c, &err), RT_ERR_IO);
  CHECK(c == NULL);
  CHECK_CONTAINS(err.text, "/proc/no/such/place");
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(location), TEST_ENTRY(store), TEST_ENTRY(damaged),
                  TEST_ENTRY(bound), TEST_ENTRY(uncreatable))
