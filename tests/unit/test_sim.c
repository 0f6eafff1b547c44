/* The sim's runtime on small kernels of its own (sim/sim.h): a block's shared memory, barrier
 * and warp shuffles give the right sums; a cp.async read one group early reads NaN; an mbarrier
 * nobody arrives at is a deadlock naming the waiting threads and the line; a read past a
 * sim_buffer's end is an out-of-bounds fault naming the buffer; a wgmma descriptor of a mode
 * the twins do not emulate fails with its name; a cluster's blocks keep their own shared
 * memory; every schedule gives the same answer and a failure names its seed; a second compile
 * is a cache hit. */
/* stages: sim */
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static sim_module *build(const char *src, const char *entry) {
  compile_options opt;
  memset(&opt, 0, sizeof opt);
  opt.arch = "sm_90a";
  opt.entry = entry;
  opt.include_dirs[0] = ROOFTUNE_SOURCE_DIR "/templates/common";
  opt.include_count = 1;
  sim_module *m = NULL;
  rt_error err;
  rt_error_clear(&err);
  rt_status st = sim_compile(src, "test.cu", &opt, NULL, &m, &err);
  if (st) fprintf(stderr, "sim_compile: %s\n", err.text);
  CHECK_INT(st, RT_OK);
  return m;
}

static rt_status run(sim_module *m, unsigned grid, unsigned block, unsigned cluster, size_t smem,
                     void **params, sim_schedule s, rt_error *err) {
  sim_launch l;
  memset(&l, 0, sizeof l);
  l.grid[0] = grid, l.grid[1] = l.grid[2] = 1;
  l.block[0] = block, l.block[1] = l.block[2] = 1;
  l.cluster[0] = cluster, l.cluster[1] = l.cluster[2] = 1;
  l.shared_bytes = smem, l.params = params, l.schedule = s, l.seed = 7;
  rt_error_clear(err);
  return sim_run(m, &l, NULL, err);
}

/* sums of 256 values per block: shared memory, __syncthreads, shuffles */
static const char *reduce_src =
    "#include \"rt_ptx.h\"\n"
    "extern \"C\" __global__ void reduce(const float *x, float *out) {\n"
    "  __shared__ float part[8];\n"
    "  float v = x[blockIdx.x * 256 + threadIdx.x];\n"
    "  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);\n"
    "  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) {\n"
    "    float s = 0;\n"
    "    for (int i = 0; i < 8; i++) s += part[i];\n"
    "    out[blockIdx.x] = s;\n"
    "  }\n"
    "}\n";

TEST_CASE(reduce_every_schedule) {
  sim_module *m = build(reduce_src, "reduce");
  if (!m) return;
  float *x = sim_buffer_alloc(3 * 256 * sizeof(float), "x"),
        *y = sim_buffer_alloc(3 * sizeof(float), "out");
  for (int i = 0; i < 3 * 256; i++) x[i] = (float)(i % 17);
  for (int s = 0; s < SIM_SCHED_COUNT; s++) {
    void *p[] = {&x, &y};
    rt_error err;
    memset(y, 0xff, 3 * sizeof(float));
    CHECK_INT(run(m, 3, 256, 1, 0, p, (sim_schedule)s, &err), RT_OK);
    for (int b = 0; b < 3; b++) {
      double ref = 0;
      for (int i = 0; i < 256; i++) ref += (double)((b * 256 + i) % 17);
      CHECK_NEAR(y[b], ref, 1e-3);
    }
  }
  sim_buffer_free(x);
  sim_buffer_free(y);
  sim_module_free(m);
  /* the same source again: from the cache */
  m = build(reduce_src, "reduce");
  CHECK(m && sim_module_cached(m));
  sim_module_free(m);
}

/* cp.async of 16 bytes per thread; WAIT_SHORT waits for all but the newest group */
static const char *cp_src =
    "#include \"rt_ptx.h\"\n"
    "extern \"C\" __global__ void cp(const float *x, float *out) {\n"
    "  extern __shared__ __align__(128) unsigned char smem[];\n"
    "  const unsigned s = ptx_smem_u32(smem);\n"
    "  ptx_cp_async16(s + 16 * threadIdx.x, x + 4 * threadIdx.x, true);\n"
    "  ptx_cp_async_commit();\n"
    "  ptx_cp_async_wait<WAIT>();\n"
    "  __syncthreads();\n"
    "  const float *f = (const float *)smem;\n"
    "  out[threadIdx.x] = f[(4 * threadIdx.x + 5) % 128];\n"
    "}\n";

TEST_CASE(cp_async_lands_at_its_wait) {
  for (int wait = 0; wait < 2; wait++) {
    char src[2048];
    snprintf(src, sizeof src, "#define WAIT %d\n%s", wait, cp_src);
    sim_module *m = build(src, "cp");
    if (!m) return;
    float *x = sim_buffer_alloc(128 * sizeof(float), "x"),
          *y = sim_buffer_alloc(32 * sizeof(float), "y");
    for (int i = 0; i < 128; i++) x[i] = (float)i;
    void *p[] = {&x, &y};
    rt_error err;
    CHECK_INT(run(m, 1, 32, 1, 512, p, SIM_SCHED_ROUND_ROBIN, &err), RT_OK);
    for (int t = 0; t < 32; t++) {
      if (wait == 0) CHECK_NEAR(y[t], (float)((4 * t + 5) % 128), 0);
      if (wait == 1) CHECK(isnan(y[t])); /* the copy has not landed */
    }
    sim_buffer_free(x);
    sim_buffer_free(y);
    sim_module_free(m);
  }
}

static const char *deadlock_src =
    "#include \"rt_ptx.h\"\n"
    "extern \"C\" __global__ void dl(int *out) {\n"
    "  extern __shared__ __align__(128) unsigned char smem[];\n"
    "  const unsigned bar = ptx_smem_u32(smem);\n"
    "  if (threadIdx.x == 0) ptx_mbar_init(bar, 2);\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) ptx_mbar_arrive(bar);\n"
    "  ptx_mbar_wait(bar, 0); /* line 8: one arrival of two */\n"
    "  out[threadIdx.x] = 1;\n"
    "}\n";

TEST_CASE(deadlock_names_threads_and_line) {
  sim_module *m = build(deadlock_src, "dl");
  if (!m) return;
  int *o = sim_buffer_alloc(64 * sizeof(int), "out");
  void *p[] = {&o};
  rt_error err;
  CHECK_INT(run(m, 1, 64, 1, 64, p, SIM_SCHED_RANDOM, &err), RT_ERR_LAUNCH);
  CHECK_CONTAINS(err.text, "deadlock");
  CHECK_CONTAINS(err.text, "threads 0-63: mbarrier.try_wait.parity");
  CHECK_CONTAINS(err.text, "test.cu:8");
  CHECK_CONTAINS(err.text, "seed 7");
  sim_buffer_free(o);
  sim_module_free(m);
}

static const char *oob_src =
    "extern \"C\" __global__ void oob(const float *x, float *y, int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i + 1]; /* one past */\n"
    "}\n";

TEST_CASE(read_past_a_buffer_is_named) {
  sim_module *m = build(oob_src, "oob");
  if (!m) return;
  int n = 64;
  float *x = sim_buffer_alloc((size_t)n * sizeof(float), "x"),
        *y = sim_buffer_alloc((size_t)n * sizeof(float), "y");
  void *p[] = {&x, &y, &n};
  rt_error err;
  CHECK_INT(run(m, 2, 32, 1, 0, p, SIM_SCHED_ROUND_ROBIN, &err), RT_ERR_LAUNCH);
  CHECK_CONTAINS(err.text, "out-of-bounds access to x at byte offset 256");
  CHECK_CONTAINS(err.text, "block (1,0,0) thread 31");
  sim_buffer_free(x);
  sim_buffer_free(y);
  sim_module_free(m);
}

/* a wgmma whose A descriptor says the 64-byte swizzle */
static const char *mode_src =
    "#include \"rt_ptx.h\"\n"
    "PTX_WGMMA_SS(mma64, 64, \"bf16.bf16\", \"16\", \"p, 1, 1, 0, 0\")\n"
    "extern \"C\" __global__ void mode(float *out) {\n"
    "  extern __shared__ __align__(1024) unsigned char smem[];\n"
    "  const unsigned s = (ptx_smem_u32(smem) + 1023u) & ~1023u;\n"
    "  float d[32];\n"
    "  unsigned long long da = ptx_desc(s, 16, 1024), db = ptx_desc(s + 8192, 16, 1024);\n"
    "  da = (da & ~(3ull << 62)) | (2ull << 62);\n"
    "  ptx_wgmma_fence();\n"
    "  mma64(d, da, db, true);\n"
    "  ptx_wgmma_commit();\n"
    "  ptx_wgmma_wait<0>();\n"
    "  out[threadIdx.x] = d[0];\n"
    "}\n";

TEST_CASE(unemulated_mode_named) {
  sim_module *m = build(mode_src, "mode");
  if (!m) return;
  float *o = sim_buffer_alloc(128 * sizeof(float), "out");
  void *p[] = {&o};
  rt_error err;
  CHECK_INT(run(m, 1, 128, 1, 20000, p, SIM_SCHED_ROUND_ROBIN, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "64-byte swizzle");
  sim_buffer_free(o);
  sim_module_free(m);
}

/* each block of a 2-block cluster writes its rank into its shared memory, syncs the cluster,
 * and reads it back */
static const char *cluster_src =
    "#include \"rt_ptx.h\"\n"
    "extern \"C\" __global__ void cl(int *out) {\n"
    "  extern __shared__ __align__(128) unsigned char smem[];\n"
    "  int *v = (int *)smem;\n"
    "  v[threadIdx.x] = 100 * ptx_cluster_rank() + threadIdx.x;\n"
    "  ptx_cluster_sync();\n"
    "  out[blockIdx.x * 64 + threadIdx.x] = v[63 - threadIdx.x];\n"
    "}\n";

TEST_CASE(cluster_blocks_keep_their_shared_memory) {
  sim_module *m = build(cluster_src, "cl");
  if (!m) return;
  int *o = sim_buffer_alloc(4 * 64 * sizeof(int), "out");
  void *p[] = {&o};
  rt_error err;
  CHECK_INT(run(m, 4, 64, 2, 256, p, SIM_SCHED_RANDOM, &err), RT_OK);
  for (int b = 0; b < 4; b++)
    for (int t = 0; t < 64; t++) CHECK_INT(o[b * 64 + t], 100 * (b % 2) + 63 - t);
  sim_buffer_free(o);
  sim_module_free(m);
}

TEST_CASE(schedule_names) {
  sim_schedule s;
  CHECK(sim_schedule_from_name("producer-first", &s) && s == SIM_SCHED_PRODUCER_FIRST);
  CHECK(!sim_schedule_from_name("fifo", &s));
  CHECK_STR(sim_schedule_name(SIM_SCHED_RANDOM), "random");
}

TEST_LIST(TEST_ENTRY(reduce_every_schedule), TEST_ENTRY(cp_async_lands_at_its_wait),
          TEST_ENTRY(deadlock_names_threads_and_line), TEST_ENTRY(read_past_a_buffer_is_named),
          TEST_ENTRY(unemulated_mode_named), TEST_ENTRY(cluster_blocks_keep_their_shared_memory),
          TEST_ENTRY(schedule_names))
