// sim_cuda.hpp — the CUDA dialect on the host: what a template's source needs to compile as C++
// with g++ (-DRT_SIM, __CUDACC__ and __CUDA_ARCH__ of the target) and run on the CPU.  The
// launcher (sim/sim.c) force-includes it before the source NVRTC would get and appends
// RT_SIM_ENTRY(kernel); templates/common/rt_ptx.h then takes the twins of its wrappers from
// sim/sim_ptx.hpp.  Compiled into each configuration's shared object, never into the C
// libraries.
//
// Threads are fibers (ucontext, one stack each, ASan told of every switch); the threads of one
// cluster run cooperatively on the calling OS thread, clusters one after another.  A block's
// shared memory is its own: the live window (the dynamic shared memory symbols `smem` and
// `smem_raw`) holds the running block's bytes, swapped with the others' when a cluster's blocks
// take turns; it starts as 0xff bytes (NaN).  A thread yields only where it waits (a barrier, a
// warp or warpgroup rendezvous, an mbarrier, an asynchronous operation), so a round in which no
// thread moves and nothing is in flight is a deadlock, reported with every waiting thread and
// the source line it waits at.  Asynchronous operations complete at the latest legal moment: a
// cp.async group at its wait_group, a TMA box or wgmma group once no thread can move without it.
#pragma once
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim_abi.h"

#define __global__
#define __device__
#define __host__
#define __noinline__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
#define __cluster_dims__(...)
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
// per block: the running block's copy (blocks of one OS thread take turns)
#define __shared__ thread_local
#define __constant__ static

struct uint3 {
  unsigned x, y, z;
};
typedef uint3 dim3;
struct __attribute__((aligned(8))) float2 {
  float x, y;
};
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};
struct __attribute__((aligned(8))) uint2 {
  unsigned x, y;
};
struct __attribute__((aligned(16))) uint4 {
  unsigned x, y, z, w;
};
struct __attribute__((aligned(8))) int2 {
  int x, y;
};
struct __attribute__((aligned(16))) int4 {
  int x, y, z, w;
};
static inline float2 make_float2(float a, float b) { return {a, b}; }
static inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
static inline uint2 make_uint2(unsigned a, unsigned b) { return {a, b}; }
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return {a, b, c, d};
}
static inline int2 make_int2(int a, int b) { return {a, b}; }
static inline int4 make_int4(int a, int b, int c, int d) { return {a, b, c, d}; }
template <class T, class F>
static inline T sim_bits(F f) {
  static_assert(sizeof(T) == sizeof(F), "same size");
  T t;
  memcpy(&t, &f, sizeof t);
  return t;
}
static inline float __uint_as_float(unsigned u) { return sim_bits<float>(u); }
static inline float __int_as_float(int u) { return sim_bits<float>(u); }
static inline unsigned __float_as_uint(float f) { return sim_bits<unsigned>(f); }
static inline int __float_as_int(float f) { return sim_bits<int>(f); }
// glibc's math.h declares __expf and __logf itself: the dialect's are other names
static inline float sim_expf(float x) { return expf(x); }
static inline float sim_logf(float x) { return logf(x); }
#define __expf sim_expf
#define __logf sim_logf
static inline float __fdividef(float a, float b) {
  return fabsf(b) > 8.507059e37f && fabsf(b) < INFINITY ? 0.f : a / b;
}
static inline float __frcp_rn(float x) { return 1.f / x; }
static inline float __saturatef(float x) { return x < 0.f ? 0.f : x > 1.f ? 1.f : x; }
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
template <class T>
static inline T __ldg(const T *p) {
  return *p;
}

// The largest dynamic shared memory of a block (sm_90: 227 KB) and where its first byte sits in
// the shared window: 128-byte aligned (every template's __align__), not 1024-byte aligned, so a
// kernel that needs 1024 must align itself as the GPU makes it do.
#define SIM_SMEM_MAX  (227 * 1024)
#define SIM_SMEM_BASE 0x480u
extern thread_local __attribute__((aligned(1024))) unsigned char smem[SIM_SMEM_MAX + 1024];
extern thread_local __attribute__((aligned(1024))) unsigned char smem_raw[SIM_SMEM_MAX + 1024];

namespace sim {

enum tstate { T_RUN, T_BLOCKED, T_SPIN, T_DONE };

// Where a thread waits: what, the source line, and a detail (a barrier's address, a parity).
struct site {
  const char *what = "";
  const char *file = "";
  int line = 0;
  long long arg = -1;
};

struct cp_copy {
  unsigned dst;
  const unsigned char *src;  // NULL: zero fill
  int n, group;
};

struct block_t;
struct thread_t {
  ucontext_t ctx;
  uint3 tid3;
  int tid = 0;  // linear in the block
  tstate state = T_RUN;
  block_t *b = nullptr;
  site at;
  std::vector<cp_copy> cp;
  int committed = 0;
  int wake_gen = 0;  // named barrier generation it waits for
  char *stack = nullptr;
  void *asan_fake = nullptr;
};

// a rendezvous of `size` threads (a warp: 32, a warpgroup: 128): each deposits, the last one
// computes for all
struct lane_in {
  int kind;
  unsigned addr;
  unsigned a[4], b[2];
  float c[4];
  unsigned long long x;
  int i0, i1;
  const void *p;
  void *q;
};
struct lane_out {
  unsigned r[4];
  float c[4];
  unsigned long long x;
};
struct group_t {
  int arrived = 0, kind = 0, gen = 0;
  const char *file = "";
  int line = 0;
  lane_in in[128];
  lane_out out[128];
};

struct mbar_t {
  unsigned addr = 0;
  int count = 0, pending = 0;
  long long tx = 0;
  unsigned phase = 0;
};
struct named_t {
  int id, arrived, expected, gen;
};

struct wg_op;  // sim_ptx.hpp
struct wg_state {
  std::vector<std::vector<wg_op *>> groups;  // committed, oldest first
  std::vector<wg_op *> open;                 // issued, not committed
};

struct block_t {
  uint3 bid3;
  int rank = 0;  // in its cluster
  std::vector<unsigned char> mem;  // shared memory while another block of the cluster runs
  std::vector<thread_t> th;
  std::vector<group_t> warps, wgs;
  std::vector<mbar_t> bars;
  std::vector<named_t> named;
  std::vector<wg_state> wg;
  int live = 0, arrived = 0, bar_gen = 0;
  const char *bar_file = "";
  int bar_line = 0;
};

struct deferred_t {
  void (*fn)(void *);
  void *arg;
  void (*drop)(void *);  // frees arg when a failed launch never runs fn
};

struct world_t {
  const sim_abi_launch *L = nullptr;
  sim_abi_result *R = nullptr;
  void (*body)(void **) = nullptr;
  uint3 grid3{}, block3{};
  int nthreads = 0;
  size_t shared = 0;
  std::vector<block_t> cl;  // the running cluster
  block_t *live = nullptr;  // whose bytes the window holds
  thread_t *cur = nullptr;
  ucontext_t sched;
  void *sched_fake = nullptr;
  const void *sched_stack = nullptr;
  size_t sched_stack_size = 0;
  long long events = 0;
  std::vector<deferred_t> deferred;
  bool failed = false;
  unsigned long long rng = 0;
  std::vector<char *> stacks;
  size_t stack_bytes = 256 * 1024;
  int cluster_arrived = 0, cluster_gen = 0;
  std::vector<thread_t *> all, order;  // the running cluster's threads (not on the stack: a
                                       // fault the launcher catches jumps over run_cluster)
};
inline world_t W;

#if defined(__SANITIZE_ADDRESS__)
extern "C" void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom,
                                               size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                                size_t *size_old);
#endif

static inline unsigned long long rnd() {
  W.rng ^= W.rng << 13, W.rng ^= W.rng >> 7, W.rng ^= W.rng << 17;
  return W.rng;
}
static inline const char *sched_name(int s) {
  switch (s) {
#define SIM_SCHED_NAME(e, name, what) \
  case e: return name;
    SIM_SCHEDULES(SIM_SCHED_NAME)
#undef SIM_SCHED_NAME
  }
  return "?";
}

static void to_scheduler();
// A failure: the message (with where and the schedule), then back to the scheduler for good.
static inline void fail_status(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void fail_status(int status, const char *fmt, ...) {
  if (!W.failed) {
    char what[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    W.failed = true;
    W.R->status = status;
    if (W.cur)
      snprintf(W.R->message, sizeof W.R->message,
               "%s, block (%u,%u,%u) thread %d at %s:%d (schedule %s, seed %llu)", what,
               W.cur->b->bid3.x, W.cur->b->bid3.y, W.cur->b->bid3.z, W.cur->tid, W.cur->at.file,
               W.cur->at.line, sched_name(W.L->schedule), W.L->seed);
    else
      snprintf(W.R->message, sizeof W.R->message, "%s (schedule %s, seed %llu)", what,
               sched_name(W.L->schedule), W.L->seed);
  }
  if (W.cur) to_scheduler();
}
#define sim_fail(...)        sim::fail_status(SIM_ABI_FAULT, __VA_ARGS__)
#define sim_unsupported(...) sim::fail_status(SIM_ABI_UNSUPPORTED, __VA_ARGS__)

// ---- shared memory ----
static inline unsigned char *window() { return ::smem; }
// the bytes of block b at shared address addr (n bytes, inside its dynamic shared memory)
static inline unsigned char *shared_at(block_t *b, unsigned addr, int n, const char *what) {
  if (addr < SIM_SMEM_BASE || (size_t)(addr - SIM_SMEM_BASE) + (size_t)n > W.shared) {
    sim_fail("%s: shared address 0x%x (+%d bytes) outside the block's %zu bytes of dynamic shared "
             "memory at 0x%x",
             what, addr, n, W.shared, SIM_SMEM_BASE);
    return nullptr;
  }
  unsigned char *base = b == W.live ? window() : b->mem.data();
  return base + (addr - SIM_SMEM_BASE);
}
static inline unsigned char *my_shared(unsigned addr, int n, int align, const char *what) {
  if (align && addr % (unsigned)align)
    sim_fail("%s: shared address 0x%x not aligned to %d bytes", what, addr, align);
  return shared_at(W.cur->b, addr, n, what);
}
// the live window shows block b
static inline void show(block_t *b) {
  if (W.live == b) return;
  if (W.live) memcpy(W.live->mem.data(), window(), W.shared);
  memcpy(window(), b->mem.data(), W.shared);
  W.live = b;
}

// ---- fibers ----
static void to_scheduler() {
  thread_t *t = W.cur;
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(t->state == T_DONE ? nullptr : &t->asan_fake, W.sched_stack,
                                 W.sched_stack_size);
#endif
  swapcontext(&t->ctx, &W.sched);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(t->asan_fake, nullptr, nullptr);
#endif
}
static inline void wait_here(tstate s, const char *what, const char *file, int line,
                             long long arg = -1) {
  thread_t *t = W.cur;
  t->state = s;
  t->at.what = what, t->at.file = file, t->at.line = line, t->at.arg = arg;
  to_scheduler();
}
static inline void wake(thread_t &t) {
  if (t.state == T_BLOCKED || t.state == T_SPIN) t.state = T_RUN;
}
static inline void event() { W.events++; }
// Completion `fn(arg)` once no thread can move (the latest legal moment).
static inline void defer(void (*fn)(void *), void *arg, void (*drop)(void *)) {
  W.deferred.push_back({fn, arg, drop});
}

static void fiber_main() {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(nullptr, &W.sched_stack, &W.sched_stack_size);
#endif
  W.body(W.L->params);
  thread_t *t = W.cur;
  block_t *b = t->b;
  t->state = T_DONE;
  t->at = site();
  b->live--;
  event();
  // a barrier the others wait at may now be complete without this thread
  if (b->arrived && b->arrived == b->live) {
    b->arrived = 0, b->bar_gen++;
    for (auto &o : b->th)
      if (o.state == T_BLOCKED && !strcmp(o.at.what, "__syncthreads")) wake(o);
  }
  to_scheduler();
}

// ---- block barrier, warp and warpgroup rendezvous ----
static inline void syncthreads(const char *file, int line) {
  block_t *b = W.cur->b;
  event();
  if (b->arrived == 0) b->bar_file = file, b->bar_line = line;
  if (++b->arrived == b->live) {
    b->arrived = 0, b->bar_gen++;
    for (auto &t : b->th)
      if (t.state == T_BLOCKED && t.at.what && !strcmp(t.at.what, "__syncthreads")) wake(t);
    return;
  }
  const int gen = b->bar_gen;
  while (b->bar_gen == gen) wait_here(T_BLOCKED, "__syncthreads", file, line);
}

// Every thread of the rendezvous deposits `in`; the last runs compute(g) and all read out.
template <class F>
static inline lane_out rendezvous(std::vector<group_t> &gs, int size, int kind, const char *what,
                                  const lane_in &in, const char *file, int line, F compute) {
  thread_t *t = W.cur;
  group_t &g = gs[t->tid / size];
  const int me = t->tid % size, gen = g.gen;
  if (g.arrived == 0) {
    g.kind = kind, g.file = file, g.line = line;
  } else if (g.kind != kind) {
    sim_fail("%s: the threads of a %s are at different instructions (%s:%d and %s:%d): "
             "divergence at a .sync.aligned instruction",
             what, size == 32 ? "warp" : "warpgroup", g.file, g.line, file, line);
  }
  g.in[me] = in;
  event();
  if (++g.arrived == size) {
    compute(g);
    g.arrived = 0, g.gen++;
    for (int l = 0; l < size; l++) wake(t->b->th[(t->tid / size) * size + l]);
  } else {
    while (g.gen == gen && !W.failed) wait_here(T_BLOCKED, what, file, line);
  }
  return g.out[me];
}

// ---- launch ----
static void resume(thread_t *t) {
  if (W.cl.size() > 1) show(t->b);
  W.cur = t;
  t->state = T_RUN;
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(&W.sched_fake, t->stack, W.stack_bytes);
#endif
  swapcontext(&W.sched, &t->ctx);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(W.sched_fake, nullptr, nullptr);
#endif
  W.cur = nullptr;
  W.R->switches++;
}

// "threads 0-31, 64: what at file:line" for every waiting thread of the cluster
static void report_deadlock() {
  char msg[4096];
  size_t n = 0;
  n += (size_t)snprintf(msg + n, sizeof msg - n,
                        "deadlock: no thread can move and nothing is in flight (schedule %s, "
                        "seed %llu):",
                        sched_name(W.L->schedule), W.L->seed);
  for (auto &b : W.cl) {
    int i = 0;
    while (i < W.nthreads && n < sizeof msg - 64) {
      thread_t &t = b.th[i];
      if (t.state == T_DONE) {
        i++;
        continue;
      }
      int j = i;
      while (j + 1 < W.nthreads && b.th[j + 1].state != T_DONE &&
             !strcmp(b.th[j + 1].at.what, t.at.what) && b.th[j + 1].at.line == t.at.line &&
             b.th[j + 1].at.arg == t.at.arg && !strcmp(b.th[j + 1].at.file, t.at.file))
        j++;
      char arg[64] = "";
      if (t.at.arg >= 0 && !strncmp(t.at.what, "mbarrier", 8))
        snprintf(arg, sizeof arg, " (barrier 0x%llx, parity %lld)", t.at.arg / 2, t.at.arg % 2);
      else if (t.at.arg >= 0)
        snprintf(arg, sizeof arg, " (%lld)", t.at.arg);
      n += (size_t)snprintf(msg + n, sizeof msg - n, " block (%u,%u,%u) thread%s %d%s%.0d: %s%s at %s:%d;",
                            b.bid3.x, b.bid3.y, b.bid3.z, j > i ? "s" : "", i, j > i ? "-" : "",
                            j > i ? j : 0, t.at.what, arg, t.at.file, t.at.line);
      i = j + 1;
    }
  }
  W.failed = true;
  W.R->status = SIM_ABI_DEADLOCK;
  snprintf(W.R->message, sizeof W.R->message, "%s", msg);
}

static int runnable(const thread_t &t) { return t.state == T_RUN || t.state == T_SPIN; }

// Runs one cluster's threads to the end (or a failure).
static void run_cluster() {
  std::vector<thread_t *> &all = W.all, &order = W.order;
  all.clear();
  for (auto &b : W.cl)
    for (auto &t : b.th) all.push_back(&t);
  const int s = W.L->schedule;
  order = all;
  if (s == SIM_SCHED_CONSUMER_FIRST) std::reverse(order.begin(), order.end());
  for (;;) {
    const long long before = W.events;
    if (s == SIM_SCHED_RANDOM)
      for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[rnd() % i]);
    bool any = false;
    for (size_t i = 0; i < order.size() && !W.failed; i++) {
      if (!runnable(*order[i])) continue;
      any = true;
      const long long e = W.events;
      resume(order[i]);
      // greedy schedules go back to their first runnable thread after anything happened
      if ((s == SIM_SCHED_PRODUCER_FIRST || s == SIM_SCHED_CONSUMER_FIRST) && W.events != e)
        i = (size_t)-1;
    }
    if (W.failed) return;
    if (W.events != before) continue;
    if (!W.deferred.empty()) {  // nobody moves without it: one completion happens now
      const size_t k = s == SIM_SCHED_RANDOM ? rnd() % W.deferred.size() : 0;
      deferred_t d = W.deferred[k];
      W.deferred.erase(W.deferred.begin() + (long)k);
      d.fn(d.arg);
      if (W.failed) return;
      event();
      continue;
    }
    if (!any) {
      bool all_done = true;
      for (auto *t : all) all_done = all_done && t->state == T_DONE;
      if (all_done) return;
    }
    report_deadlock();
    return;
  }
}

void hopper_block_end(block_t &b);  // sim_ptx.hpp: nothing may be in flight
void hopper_reset();                // sim_ptx.hpp: a launch starts with nothing in flight
void hopper_drop(block_t &b);       // sim_ptx.hpp: what a failed launch left in flight, freed

static void setup_cluster(const unsigned cbase[3]) {
  const unsigned *cd = W.L->cluster;
  const int nb = (int)(cd[0] * cd[1] * cd[2]);
  W.cl.clear();
  W.cl.resize((size_t)nb);
  W.live = nullptr;
  for (int r = 0; r < nb; r++) {
    block_t &b = W.cl[(size_t)r];
    b.bid3 = {cbase[0] + r % cd[0], cbase[1] + r / cd[0] % cd[1], cbase[2] + r / (cd[0] * cd[1])};
    b.rank = r;
    b.live = W.nthreads;
    b.th.resize((size_t)W.nthreads);
    b.warps.resize((size_t)(W.nthreads + 31) / 32);
    b.wgs.resize((size_t)(W.nthreads + 127) / 128);
    b.wg.resize(b.wgs.size());
    if (nb > 1) b.mem.assign(W.shared, 0xff);
    for (int i = 0; i < W.nthreads; i++) {
      thread_t &t = b.th[(size_t)i];
      t.b = &b;
      t.tid = i;
      t.tid3 = {(unsigned)i % W.block3.x, (unsigned)i / W.block3.x % W.block3.y,
                (unsigned)i / (W.block3.x * W.block3.y)};
      t.stack = W.stacks[(size_t)(r * W.nthreads + i)];
      getcontext(&t.ctx);
      t.ctx.uc_stack.ss_sp = t.stack;
      t.ctx.uc_stack.ss_size = W.stack_bytes;
      t.ctx.uc_link = nullptr;
      makecontext(&t.ctx, fiber_main, 0);
    }
  }
  memset(window(), 0xff, W.shared);  // never-written shared memory reads as NaN
  if (nb == 1) W.live = &W.cl[0];
}

static int check_launch(const sim_abi_launch *L) {
  const unsigned *g = L->grid, *b = L->block, *c = L->cluster;
  const long long nt = (long long)b[0] * b[1] * b[2];
  if (!g[0] || !g[1] || !g[2] || nt < 1 || nt > 1024) {
    snprintf(W.R->message, sizeof W.R->message,
             "launch of grid (%u,%u,%u) blocks (%u,%u,%u): every size must be at least 1 and a "
             "block at most 1024 threads",
             g[0], g[1], g[2], b[0], b[1], b[2]);
    return SIM_ABI_INVALID;
  }
  if (!c[0] || !c[1] || !c[2] || c[0] * c[1] * c[2] > 16 || g[0] % c[0] || g[1] % c[1] ||
      g[2] % c[2]) {
    snprintf(W.R->message, sizeof W.R->message,
             "cluster (%u,%u,%u) for grid (%u,%u,%u): at most 16 blocks, dividing the grid", c[0],
             c[1], c[2], g[0], g[1], g[2]);
    return SIM_ABI_INVALID;
  }
  if (L->shared_bytes > SIM_SMEM_MAX) {
    snprintf(W.R->message, sizeof W.R->message,
             "%zu bytes of dynamic shared memory: a block has at most %d", L->shared_bytes,
             SIM_SMEM_MAX);
    return SIM_ABI_INVALID;
  }
  return SIM_ABI_OK;
}

static inline int launch(const sim_abi_launch *L, sim_abi_result *R, void (*body)(void **)) {
  memset(R, 0, sizeof *R);
  W.L = L, W.R = R, W.body = body;
  if ((R->status = check_launch(L)) != SIM_ABI_OK) return R->status;
  W.grid3 = {L->grid[0], L->grid[1], L->grid[2]};
  W.block3 = {L->block[0], L->block[1], L->block[2]};
  W.nthreads = (int)(L->block[0] * L->block[1] * L->block[2]);
  W.shared = L->shared_bytes;
  W.failed = false;
  W.events = 0;
  W.deferred.clear();  // (what a failed launch left is dropped)
  W.cur = nullptr, W.live = nullptr;
  W.cluster_arrived = 0, W.cluster_gen = 0;
  hopper_reset();
  W.rng = L->seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  const int per = (int)(L->cluster[0] * L->cluster[1] * L->cluster[2]);
  W.stacks.assign((size_t)(per * W.nthreads), nullptr);
  for (auto &s : W.stacks) {
    void *p = mmap(nullptr, W.stack_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      snprintf(R->message, sizeof R->message, "no memory for the fibers' stacks");
      R->status = SIM_ABI_INVALID;
      break;
    }
    s = (char *)p;
  }
  // clusters in the order of their first block (x fastest), from first_block on
  const unsigned cx = L->grid[0] / L->cluster[0], cy = L->grid[1] / L->cluster[1],
                 cz = L->grid[2] / L->cluster[2];
  const long long clusters = (long long)cx * cy * cz;
  long long c0 = L->first_block / per, done = 0;
  for (long long c = c0; c < clusters && R->status == SIM_ABI_OK; c++) {
    if (L->max_blocks && done >= L->max_blocks) break;
    const unsigned base[3] = {(unsigned)(c % cx) * L->cluster[0],
                              (unsigned)(c / cx % cy) * L->cluster[1],
                              (unsigned)(c / ((long long)cx * cy)) * L->cluster[2]};
    setup_cluster(base);
    run_cluster();
    if (W.failed) break;
    for (auto &b : W.cl) hopper_block_end(b);
    if (W.failed) break;
    done += per;
    R->blocks_run += per;
  }
  for (auto &s : W.stacks)
    if (s) munmap(s, W.stack_bytes);
  W.stacks.clear();
  for (auto &d : W.deferred) d.drop(d.arg);
  W.deferred.clear();
  for (auto &b : W.cl) hopper_drop(b);
  W.cl.clear();
  hopper_reset();
  return R->status;
}

template <class... A, size_t... I>
static inline void invoke_(void (*f)(A...), void **p, std::index_sequence<I...>) {
  f(*(typename std::remove_cv<typename std::remove_reference<A>::type>::type *)p[I]...);
}
template <class... A>
static inline void invoke(void (*f)(A...), void **p) {
  invoke_(f, p, std::index_sequence_for<A...>{});
}

}  // namespace sim

#define threadIdx (sim::W.cur->tid3)
#define blockIdx  (sim::W.cur->b->bid3)
#define gridDim   (sim::W.grid3)
#define blockDim  (sim::W.block3)
#define warpSize  32

static inline void __syncthreads(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  sim::syncthreads(file, line);
}
static inline void __threadfence() {}
static inline void __threadfence_block() {}

// ---- warp collectives (every lane of the warp, as the templates call them) ----
enum { SIM_C_SYNCWARP = 1, SIM_C_SHFL, SIM_C_VOTE, SIM_C_LDSM, SIM_C_LDSM_T, SIM_C_MMA };
static inline void __syncwarp(unsigned mask = 0xffffffffu, const char *file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  if (mask != 0xffffffffu) sim_unsupported("__syncwarp with a partial mask 0x%x", mask);
  sim::lane_in in{};
  sim::rendezvous(sim::W.cur->b->warps, 32, SIM_C_SYNCWARP, "__syncwarp", in, file, line,
                  [](sim::group_t &) {});
}
// mode 0 xor, 1 index, 2 down, 3 up; width a power of two up to 32
template <class T>
static inline T sim_shfl(int mode, unsigned mask, T v, int arg, int width, const char *file,
                         int line) {
  static_assert(sizeof(T) <= 8, "a shuffled value has at most 8 bytes");
  if (mask != 0xffffffffu) sim_unsupported("a shuffle with a partial mask 0x%x", mask);
  sim::lane_in in{};
  memcpy(&in.x, &v, sizeof v);
  in.i0 = mode, in.i1 = arg, in.addr = (unsigned)width;
  sim::lane_out o = sim::rendezvous(
      sim::W.cur->b->warps, 32, SIM_C_SHFL, "a warp shuffle", in, file, line,
      [](sim::group_t &g) {
        for (int l = 0; l < 32; l++) {
          const int w = (int)g.in[l].addr, a = g.in[l].i1, base = l & ~(w - 1);
          int src = l;
          switch (g.in[l].i0) {
            case 0: src = base | ((l ^ a) & (w - 1)); break;
            case 1: src = base | (a & (w - 1)); break;
            case 2: src = (l - base) + a < w ? l + a : l; break;
            case 3: src = (l - base) - a >= 0 ? l - a : l; break;
          }
          g.out[l].x = g.in[src].x;
        }
      });
  T r;
  memcpy(&r, &o.x, sizeof r);
  return r;
}
template <class T>
static inline T __shfl_xor_sync(unsigned m, T v, int lm, int w = 32,
                                const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  return sim_shfl(0, m, v, lm, w, file, line);
}
template <class T>
static inline T __shfl_sync(unsigned m, T v, int src, int w = 32,
                            const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  return sim_shfl(1, m, v, src, w, file, line);
}
template <class T>
static inline T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32,
                                 const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  return sim_shfl(2, m, v, (int)d, w, file, line);
}
template <class T>
static inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32,
                               const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  return sim_shfl(3, m, v, (int)d, w, file, line);
}
static inline unsigned sim_ballot(unsigned mask, int p, const char *file, int line) {
  if (mask != 0xffffffffu) sim_unsupported("a vote with a partial mask 0x%x", mask);
  sim::lane_in in{};
  in.i0 = p != 0;
  return (unsigned)sim::rendezvous(sim::W.cur->b->warps, 32, SIM_C_VOTE, "a warp vote", in, file,
                                   line, [](sim::group_t &g) {
                                     unsigned b = 0;
                                     for (int l = 0; l < 32; l++) b |= (unsigned)g.in[l].i0 << l;
                                     for (int l = 0; l < 32; l++) g.out[l].x = b;
                                   })
      .x;
}
static inline unsigned __ballot_sync(unsigned m, int p, const char *file = __builtin_FILE(),
                                     int line = __builtin_LINE()) {
  return sim_ballot(m, p, file, line);
}
static inline int __any_sync(unsigned m, int p, const char *file = __builtin_FILE(),
                             int line = __builtin_LINE()) {
  return sim_ballot(m, p, file, line) != 0;
}
static inline int __all_sync(unsigned m, int p, const char *file = __builtin_FILE(),
                             int line = __builtin_LINE()) {
  return sim_ballot(m, p, file, line) == 0xffffffffu;
}

// ---- atomics: the threads of a cluster run one at a time, so a read-modify-write is one ----
template <class T>
static inline T atomicAdd(T *p, T v) {
  T o = *p;
  *p = o + v;
  sim::event();
  return o;
}
template <class T>
static inline T atomicExch(T *p, T v) {
  T o = *p;
  *p = v;
  sim::event();
  return o;
}
template <class T>
static inline T atomicCAS(T *p, T cmp, T v) {
  T o = *p;
  if (o == cmp) *p = v;
  sim::event();
  return o;
}
template <class T>
static inline T atomicMax(T *p, T v) {
  T o = *p;
  if (v > o) *p = v;
  sim::event();
  return o;
}

static inline size_t __cvta_generic_to_shared(const void *p) {
  const unsigned char *c = (const unsigned char *)p;
  if (c >= ::smem && c <= ::smem + sim::W.shared) return SIM_SMEM_BASE + (size_t)(c - ::smem);
  sim_unsupported("__cvta_generic_to_shared of %p, not in dynamic shared memory (the sim gives "
                  "static __shared__ variables no shared address)",
                  p);
  return 0;
}

// The entry the launcher appends: rt_sim_launch runs a grid of `kernel`.
#define RT_SIM_ENTRY(kernel)                                                                 \
  thread_local __attribute__((aligned(1024))) unsigned char smem[SIM_SMEM_MAX + 1024];       \
  extern thread_local unsigned char smem_raw[SIM_SMEM_MAX + 1024] __attribute__((alias("smem"))); \
  static void rt_sim_body(void **params) { sim::invoke(&(kernel), params); }                 \
  extern "C" __attribute__((visibility("default"))) int rt_sim_abi_version(void) {           \
    return SIM_ABI_VERSION;                                                                  \
  }                                                                                          \
  extern "C" __attribute__((visibility("default"))) int rt_sim_launch(const sim_abi_launch *l, \
                                                                      sim_abi_result *r) {   \
    return sim::launch(l, r, rt_sim_body);                                                   \
  }

// every wrapper's twin, also for a template that does not include rt_ptx.h
#include "sim_ptx.hpp"

// Where the running thread is (for a fault the launcher catches): block, thread, last site.
extern "C" __attribute__((visibility("default"), used)) void rt_sim_where(char *buf, size_t size) {
  sim::thread_t *t = sim::W.cur;
  if (!t) {
    snprintf(buf, size, "outside any thread");
    return;
  }
  if (t->at.line)
    snprintf(buf, size, "block (%u,%u,%u) thread %d, after %s:%d", t->b->bid3.x, t->b->bid3.y,
             t->b->bid3.z, t->tid, t->at.file, t->at.line);
  else
    snprintf(buf, size, "block (%u,%u,%u) thread %d", t->b->bid3.x, t->b->bid3.y, t->b->bid3.z,
             t->tid);
}
