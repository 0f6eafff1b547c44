/* db_fixture.h — what the database tests share: a GEMM problem, a run spec, a candidate and a
 * temporary file name.  Header-only, included by tests/unit/test_db*.c and bench/bench_db.c. */
#ifndef ROOFTUNE_DB_FIXTURE_H
#define ROOFTUNE_DB_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"

/* A GEMM problem MxNxK with dims M, N, K. */
static inline problem fx_gemm(long long m, long long n, long long k, const char *dtype) {
  problem p;
  memset(&p, 0, sizeof p);
  snprintf(p.family, sizeof p.family, "gemm");
  snprintf(p.dtype, sizeof p.dtype, "%s", dtype);
  p.ndims = 3;
  const char *names[3] = {"M", "N", "K"};
  long long v[3] = {m, n, k};
  for (int i = 0; i < 3; i++) {
    snprintf(p.dim_names[i], sizeof p.dim_names[i], "%s", names[i]);
    p.dims[i] = v[i];
  }
  snprintf(p.shape, sizeof p.shape, "%lldx%lldx%lld", m, n, k);
  return p;
}

/* A run spec on an H200 (measured) or on DEVICE when it starts with model: / replay:. */
static inline db_run_spec fx_spec(problem p, const char *device) {
  db_run_spec s;
  memset(&s, 0, sizeof s);
  s.prob = p;
  if (strncmp(device, "model:", 6) == 0 || strncmp(device, "replay:", 7) == 0) {
    db_device_pseudo(&s.prov.device, device);
  } else {
    snprintf(s.prov.device.name, sizeof s.prov.device.name, "%s", device);
    s.prov.device.sm_count = 132;
    s.prov.device.cc_major = 9;
    s.prov.device.cc_minor = 0;
    s.prov.device.driver_version = 13000;
  }
  snprintf(s.prov.toolkit, sizeof s.prov.toolkit, "cuda 13.0, nvrtc 13.0, cublaslt 130000");
  snprintf(s.prov.arch, sizeof s.prov.arch, "sm_90");
  snprintf(s.strategy, sizeof s.strategy, "random");
  s.seed = 7;
  s.budget = 100;
  snprintf(s.command, sizeof s.command, "test");
  return s;
}

/* A successful measured candidate of TEMPLATE with config "BLOCK_M=<bm>,BLOCK_N=<bn>". */
static inline candidate_result fx_result(const char *tmpl, int bm, int bn, double ms) {
  candidate_result c;
  memset(&c, 0, sizeof c);
  snprintf(c.template_name, sizeof c.template_name, "%s", tmpl);
  snprintf(c.config, sizeof c.config, "BLOCK_M=%d,BLOCK_N=%d", bm, bn);
  c.status = RT_OK;
  c.timing = TIMING_MEASURED;
  snprintf(c.device_name, sizeof c.device_name, "NVIDIA H200");
  c.time_ms = ms;
  c.spread = 0.01;
  c.repetitions = 20;
  c.verify_error = 1e-4;
  c.flops = 2.0 * 4096 * 4096 * 4096;
  c.dram_bytes = 1e8;
  c.facts.registers = 128;
  c.facts.threads_per_block = 256;
  c.facts.blocks_per_sm = 2;
  c.facts.occupancy = 0.25;
  snprintf(c.facts.limiter, sizeof c.facts.limiter, "registers");
  snprintf(c.diag.limit, sizeof c.diag.limit, "compute");
  snprintf(c.diag.lever, sizeof c.diag.lever, "BLOCK_N+");
  c.diag.flops_frac = 0.7;
  return c;
}

/* A gemm_mma-like winner of kernel ENTRY with CUBIN (SIZE bytes): the manifest's launch
 * expressions, 128x128 tiles, 256 threads, 64 KiB of shared memory, one block (callers set
 * grid_v for their problem), and a serving recipe without constraints. */
static inline db_winner fx_winner(const char *entry, const void *cubin, size_t size) {
  db_winner w;
  memset(&w, 0, sizeof w);
  w.cubin = cubin;
  w.cubin_size = size;
  snprintf(w.entry, sizeof w.entry, "%s", entry);
  snprintf(w.grid[0], sizeof w.grid[0], "ceil_div(M,BLOCK_M)*ceil_div(N,BLOCK_N)");
  snprintf(w.grid[1], sizeof w.grid[1], "1");
  snprintf(w.grid[2], sizeof w.grid[2], "SPLIT_K*BATCH");
  snprintf(w.block[0], sizeof w.block[0], "THREADS");
  snprintf(w.block[1], sizeof w.block[1], "1");
  snprintf(w.block[2], sizeof w.block[2], "1");
  snprintf(w.smem, sizeof w.smem, "SMEM");
  snprintf(w.vars, sizeof w.vars, "BLOCK_M=128,BLOCK_N=128,SPLIT_K=1,THREADS=256,SMEM=65536");
  /* its serving recipe: the tuned problem's names (the family recomputes them) and no
   * constraint that reads the shape */
  w.env =
      "M=1,N=1,K=1,BATCH=1,dtype_bytes=2,b_col=0,out_bytes=4,device.smem_per_block_optin=232448";
  w.derived = "";
  w.constraints = "";
  w.grid_v[0] = w.grid_v[1] = w.grid_v[2] = 1;
  w.block_v[0] = 256;
  w.block_v[1] = w.block_v[2] = 1;
  w.smem_v = 65536;
  return w;
}

/* A fresh path under $TMPDIR (the file does not exist). */
static inline void fx_tmpname(char *buf, size_t size, const char *tag) {
  const char *dir = getenv("TMPDIR");
  snprintf(buf, size, "%s/rooftune-%s-%d-%ld.db", dir && *dir ? dir : "/tmp", tag, (int)getpid(),
           (long)rand());
  unlink(buf);
}

/* Removes a database and its WAL and shared-memory files. */
static inline void fx_remove(const char *path) {
  char b[1100];
  unlink(path);
  snprintf(b, sizeof b, "%s-wal", path);
  unlink(b);
  snprintf(b, sizeof b, "%s-shm", path);
  unlink(b);
}

#endif
