/* sim.c — the sim's launcher: one configuration compiled by the host C++ compiler into a cached
 * shared object, loaded, and run over a grid (sim.h). */
#include "sim/sim.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile/cubin_cache.h"
#include "core/sha256.h"
#include "core/util.h"

#ifndef ROOFTUNE_SIM_DIR
#define ROOFTUNE_SIM_DIR "sim"
#endif

extern char **environ;

struct sim_module {
  void *handle;
  sim_abi_launch_fn launch;
  void (*where)(char *, size_t);
  char path[1024];
  char tmpdir[64]; /* a folder of our own when the cache is off: removed on free */
  int cached;
  double seconds;
};

/* ------------------------------------------------------------------ names */

static const char *const sched_names[] = {
#define SIM_SCHED_STR(e, name, what) name,
    SIM_SCHEDULES(SIM_SCHED_STR)
#undef SIM_SCHED_STR
};

const char *sim_schedule_name(sim_schedule s) {
  return s >= 0 && s < SIM_SCHED_COUNT ? sched_names[s] : "unknown";
}

int sim_schedule_from_name(const char *name, sim_schedule *out) {
  for (int i = 0; i < SIM_SCHED_COUNT; i++)
    if (!strcmp(name, sched_names[i])) {
      *out = (sim_schedule)i;
      return 1;
    }
  return 0;
}

/* ------------------------------------------------------------------ the compile */

int sim_cache_dir(char *buf, size_t size) {
  char dir[900];
  if (!cubin_cache_dir(dir, sizeof dir)) {
    if (size) buf[0] = 0;
    return 0;
  }
  snprintf(buf, size, "%s/sim", dir);
  return 1;
}

static const char *sim_dir(void) {
  const char *e = getenv("ROOFTUNE_SIM_DIR");
  return e && *e ? e : ROOFTUNE_SIM_DIR;
}

static const char *sim_cxx(void) {
  const char *e = getenv("CXX");
  return e && *e ? e : "g++";
}

/* __CUDA_ARCH__ of "sm_90a" (900); 0 for an unknown target. */
static int sim_cuda_arch(const char *arch) {
  if (!arch || strncmp(arch, "sm_", 3) != 0 || !compile_arch_valid(arch)) return 0;
  return atoi(arch + 3) * 10;
}

/* Runs argv with stdout and stderr into log_path; the exit status, -1 when it could not start. */
static int sim_spawn(char *const argv[], const char *log_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The compiler's identity line (its --version first line), once per process. */
static const char *sim_cxx_identity(void) {
  static char id[256];
  if (id[0]) return id;
  char path[] = "/tmp/rooftune-sim-cxx-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return strcpy(id, sim_cxx());
  close(fd);
  char *argv[] = {(char *)sim_cxx(), "--version", NULL};
  sim_spawn(argv, path);
  FILE *f = fopen(path, "r");
  if (!f || !fgets(id, sizeof id, f)) snprintf(id, sizeof id, "%s", sim_cxx());
  if (f) fclose(f);
  unlink(path);
  return id;
}

/* The flags of one compile (the key covers them). */
static int sim_flags(const compile_options *opt, const char *sdir, char *flags[], int max,
                     char storage[][1100]) {
  int n = 0, s = 0;
#define SIM_FLAG(...) \
  (snprintf(storage[s], sizeof storage[s], __VA_ARGS__), flags[n++] = storage[s++])
  flags[n++] = "-std=c++17";
  flags[n++] = "-O1";
  flags[n++] = "-g0";
  flags[n++] = "-fPIC";
  flags[n++] = "-shared";
  flags[n++] = "-w";
  flags[n++] = "-fno-strict-aliasing";
  flags[n++] = "-DRT_SIM=1";
  flags[n++] = "-D__CUDACC__=1";
  SIM_FLAG("-D__CUDA_ARCH__=%d", sim_cuda_arch(opt->arch));
  if (opt->arch && !strcmp(opt->arch, "sm_90a")) flags[n++] = "-D__CUDA_ARCH_FEAT_SM90_ALL=1";
#if defined(ROOFTUNE_SIM_SANITIZE)
  flags[n++] = "-fsanitize=address";
  flags[n++] = "-fno-omit-frame-pointer";
#endif
  SIM_FLAG("-include%s/sim_cuda.hpp", sdir);
  SIM_FLAG("-I%s", sdir);
  SIM_FLAG("-I%s/include", sdir);
  for (int i = 0; i < opt->include_count && n < max - 4; i++)
    SIM_FLAG("-I%s", opt->include_dirs[i]);
  for (int i = 0; i < opt->extra_count && n < max - 4; i++)
    if (!strncmp(opt->extra[i], "-D", 2)) flags[n++] = (char *)opt->extra[i];
#undef SIM_FLAG
  return n;
}

/* Mixes every header file of folder dir (*.h, *.hpp, *.cuh) into c, in name order. */
static void sim_hash_headers(sha256_ctx *c, const char *dir) {
  struct dirent **names = NULL;
  int n = scandir(dir, &names, NULL, alphasort);
  for (int i = 0; i < n; i++) {
    const char *nm = names[i]->d_name, *dot = strrchr(nm, '.');
    if (dot && (!strcmp(dot, ".h") || !strcmp(dot, ".hpp") || !strcmp(dot, ".cuh"))) {
      char path[2048], hex[65];
      snprintf(path, sizeof path, "%s/%s", dir, nm);
      if (sha256_file(path, hex) == 0) {
        sha256_update(c, nm, strlen(nm) + 1);
        sha256_update(c, hex, 64);
      }
    }
    free(names[i]);
  }
  free(names);
}

static void sim_key(const char *source, const compile_options *opt, char *const flags[], int nf,
                    const char *sdir, char hex[65]) {
  sha256_ctx c;
  sha256_init(&c);
  sha256_update(&c, "rooftune-sim-1", 15);
  sha256_update(&c, source, strlen(source) + 1);
  sha256_update(&c, opt->entry, strlen(opt->entry) + 1);
  const char *id = sim_cxx_identity();
  sha256_update(&c, id, strlen(id) + 1);
  for (int i = 0; i < nf; i++)
    if (strncmp(flags[i], "-include", 8) && strncmp(flags[i], "-I", 2))
      sha256_update(&c, flags[i], strlen(flags[i]) + 1);
  char inc[1100];
  sim_hash_headers(&c, sdir);
  snprintf(inc, sizeof inc, "%s/include", sdir);
  sim_hash_headers(&c, inc);
  for (int i = 0; i < opt->include_count; i++) sim_hash_headers(&c, opt->include_dirs[i]);
  unsigned char d[32];
  sha256_final(&c, d);
  sha256_hex(d, hex);
}

/* The compiler's first error line of the log at path, into msg. */
static void sim_first_error(const char *path, char *msg, size_t size) {
  FILE *f = fopen(path, "r");
  char line[1024];
  snprintf(msg, size, "see %.400s", path);
  if (!f) return;
  while (fgets(line, sizeof line, f))
    if (strstr(line, "error")) {
      line[strcspn(line, "\n")] = 0;
      snprintf(msg, size, "%.500s", line);
      break;
    }
  fclose(f);
}

/* Compiles the source (plus the entry) into so_path. */
static rt_status sim_build(const char *source, const char *name, const compile_options *opt,
                           char *flags[], int nf, const char *dir, const char *so_path,
                           rt_error *err) {
  char src_path[1100], tmp_so[1100], log_path[1100];
  snprintf(src_path, sizeof src_path, "%s.%ld.cpp", so_path, (long)getpid());
  snprintf(tmp_so, sizeof tmp_so, "%s.%ld.tmp", so_path, (long)getpid());
  snprintf(log_path, sizeof log_path, "%s.log", so_path);
  FILE *f = fopen(src_path, "w");
  if (!f)
    return rt_error_set(err, RT_ERR_IO, "cannot write %s: %s (check the sim cache folder %s)",
                        src_path, strerror(errno), dir);
  fprintf(f, "#line 1 \"%s\"\n%s\n#line 1 \"rt_sim_entry\"\nRT_SIM_ENTRY(%s)\n", name, source,
          opt->entry);
  if (fclose(f) != 0) return rt_error_set(err, RT_ERR_IO, "cannot write %s", src_path);
  char *argv[80];
  int n = 0;
  argv[n++] = (char *)sim_cxx();
  for (int i = 0; i < nf && n < 74; i++) argv[n++] = flags[i];
  argv[n++] = "-o";
  argv[n++] = tmp_so;
  argv[n++] = src_path;
  argv[n] = NULL;
  const int rc = sim_spawn(argv, log_path);
  unlink(src_path);
  if (rc != 0) {
    unlink(tmp_so);
    char first[512];
    if (rc < 0)
      return rt_error_set(err, RT_ERR_COMPILE, "%s: the host compiler %s did not start (set CXX)",
                          name, sim_cxx());
    sim_first_error(log_path, first, sizeof first);
    return rt_error_set(err, RT_ERR_COMPILE, "%s does not compile for the sim: %s (log: %s)", name,
                        first, log_path);
  }
  if (rename(tmp_so, so_path) != 0) {
    unlink(tmp_so);
    return rt_error_set(err, RT_ERR_IO, "cannot rename %s: %s", tmp_so, strerror(errno));
  }
  return RT_OK;
}

static rt_status sim_load(sim_module *m, const char *name, rt_error *err) {
  m->handle = dlopen(m->path, RTLD_NOW | RTLD_LOCAL);
  if (!m->handle)
    return rt_error_set(err, RT_ERR_COMPILE, "%s: the sim's shared object does not load: %s", name,
                        dlerror());
  sim_abi_version_fn ver = (sim_abi_version_fn)dlsym(m->handle, "rt_sim_abi_version");
  m->launch = (sim_abi_launch_fn)dlsym(m->handle, "rt_sim_launch");
  *(void **)&m->where = dlsym(m->handle, "rt_sim_where");
  if (!ver || !m->launch || ver() != SIM_ABI_VERSION)
    return rt_error_set(err, RT_ERR_COMPILE,
                        "%s: %s is not a sim shared object of ABI version %d (delete it)", name,
                        m->path, SIM_ABI_VERSION);
  return RT_OK;
}

rt_status sim_compile(const char *source, const char *name, const compile_options *opt,
                      const char *cache_dir, sim_module **out, rt_error *err) {
  *out = NULL;
  if (!opt || !opt->entry || !*opt->entry || !sim_cuda_arch(opt->arch))
    return rt_error_set(err, RT_ERR_INVALID,
                        "%s: the sim needs the kernel's name (entry) and one of the targets %s",
                        name, compile_arch_list());
  sim_module *m = calloc(1, sizeof *m);
  if (!m) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  char dir[900];
  rt_status st;
  if (cache_dir)
    snprintf(dir, sizeof dir, "%s", cache_dir);
  else if (!sim_cache_dir(dir, sizeof dir)) {
    snprintf(m->tmpdir, sizeof m->tmpdir, "/tmp/rooftune-sim-XXXXXX");
    if (!mkdtemp(m->tmpdir)) {
      free(m);
      return rt_error_set(err, RT_ERR_IO, "cannot make a temporary folder: %s", strerror(errno));
    }
    snprintf(dir, sizeof dir, "%s", m->tmpdir);
  }
  if ((st = rt_mkdir_p(dir, err))) {
    sim_module_free(m);
    return st;
  }
  char storage[24][1100], *flags[40], hex[65];
  const char *sdir = sim_dir();
  const int nf = sim_flags(opt, sdir, flags, 40, storage);
  sim_key(source, opt, flags, nf, sdir, hex);
  snprintf(m->path, sizeof m->path, "%s/%.40s.so", dir, hex);
  struct stat sb;
  if (stat(m->path, &sb) == 0) {
    m->cached = 1;
  } else {
    const double t0 = rt_now_s();
    if ((st = sim_build(source, name, opt, flags, nf, dir, m->path, err))) {
      sim_module_free(m);
      return st;
    }
    m->seconds = rt_now_s() - t0;
  }
  if ((st = sim_load(m, name, err))) {
    sim_module_free(m);
    return st;
  }
  *out = m;
  return RT_OK;
}

void sim_module_free(sim_module *m) {
  if (!m) return;
  if (m->handle) dlclose(m->handle);
  if (m->tmpdir[0]) {
    unlink(m->path);
    char log[1100];
    snprintf(log, sizeof log, "%s.log", m->path);
    unlink(log);
    rmdir(m->tmpdir);
  }
  free(m);
}

int sim_module_cached(const sim_module *m) { return m && m->cached; }
double sim_module_compile_seconds(const sim_module *m) { return m ? m->seconds : 0; }
const char *sim_module_path(const sim_module *m) { return m ? m->path : ""; }

/* ------------------------------------------------------------------ buffers with red zones */

#define SIM_MAX_BUFFERS 256
#define SIM_PATTERN     0xff /* slack bytes: NaN in every float format */

typedef struct sim_buffer {
  unsigned char *map; /* the whole mapping: front guard, slack, data, end guard */
  size_t map_bytes, bytes;
  unsigned char *user;
  char name[64];
} sim_buffer;
static sim_buffer sim_buffers[SIM_MAX_BUFFERS];

static size_t sim_page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

void *sim_buffer_alloc(size_t bytes, const char *name) {
  const size_t pg = sim_page(), span = (bytes + 15) / 16 * 16;
  const size_t body = (span + pg - 1) / pg * pg + (span % pg == 0 ? 0 : 0);
  int slot = -1;
  for (int i = 0; i < SIM_MAX_BUFFERS && slot < 0; i++)
    if (!sim_buffers[i].map) slot = i;
  if (slot < 0) return NULL;
  const size_t total = pg + (body ? body : pg) + pg;
  unsigned char *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  mprotect(m, pg, PROT_NONE);
  mprotect(m + total - pg, pg, PROT_NONE);
  sim_buffer *b = &sim_buffers[slot];
  b->map = m, b->map_bytes = total, b->bytes = bytes;
  b->user = m + total - pg - span;
  memset(m + pg, SIM_PATTERN, total - 2 * pg);
  snprintf(b->name, sizeof b->name, "%s", name ? name : "buffer");
  return b->user;
}

static sim_buffer *sim_buffer_of(const void *p) {
  for (int i = 0; i < SIM_MAX_BUFFERS; i++)
    if (sim_buffers[i].map && (const unsigned char *)p == sim_buffers[i].user)
      return &sim_buffers[i];
  return NULL;
}

void sim_buffer_free(void *p) {
  sim_buffer *b = p ? sim_buffer_of(p) : NULL;
  if (!b) return;
  munmap(b->map, b->map_bytes);
  memset(b, 0, sizeof *b);
}

/* The buffer whose red zone holds address a, with the byte offset from its start. */
static sim_buffer *sim_buffer_near(uintptr_t a, long long *off) {
  const size_t pg = sim_page();
  for (int i = 0; i < SIM_MAX_BUFFERS; i++) {
    sim_buffer *b = &sim_buffers[i];
    if (!b->map) continue;
    if (a >= (uintptr_t)b->map && a < (uintptr_t)b->map + b->map_bytes) {
      *off = (long long)(a - (uintptr_t)b->user);
      return b;
    }
    (void)pg;
  }
  return NULL;
}

/* A write into a buffer's slack (before its start, past its end within the last 16 bytes). */
static rt_status sim_check_slack(rt_error *err) {
  const size_t pg = sim_page();
  for (int i = 0; i < SIM_MAX_BUFFERS; i++) {
    sim_buffer *b = &sim_buffers[i];
    if (!b->map) continue;
    for (unsigned char *p = b->map + pg; p < b->user; p++)
      if (*p != SIM_PATTERN)
        return rt_error_set(err, RT_ERR_LAUNCH,
                            "out-of-bounds write to %s at byte offset %lld (before its start)",
                            b->name, (long long)(p - b->user));
    for (unsigned char *p = b->user + b->bytes; p < b->map + b->map_bytes - pg; p++)
      if (*p != SIM_PATTERN)
        return rt_error_set(
            err, RT_ERR_LAUNCH,
            "out-of-bounds write to %s at byte offset %lld (%lld bytes past its end of %zu)",
            b->name, (long long)(p - b->user), (long long)(p - b->user - (long long)b->bytes),
            b->bytes);
  }
  return RT_OK;
}

/* ------------------------------------------------------------------ the run */

static sigjmp_buf sim_fault_jump;
static volatile sig_atomic_t sim_faulted;
static char sim_fault_msg[1024];
static sim_module *sim_running;

static void sim_on_fault(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  long long off = 0;
  sim_buffer *b = sim_buffer_near((uintptr_t)si->si_addr, &off);
  if (!b) { /* not ours: the default action */
    signal(sig, SIG_DFL);
    return;
  }
  char where[512] = "";
  if (sim_running && sim_running->where) sim_running->where(where, sizeof where);
  snprintf(sim_fault_msg, sizeof sim_fault_msg,
           "out-of-bounds access to %s at byte offset %lld (%s; it has %zu bytes)%s%s", b->name,
           off, off < 0 ? "before its start" : "past its end", b->bytes, where[0] ? ", " : "",
           where);
  sim_faulted = 1;
  siglongjmp(sim_fault_jump, 1);
}

static rt_status sim_abi_status(int s) {
  switch (s) {
    case SIM_ABI_OK: return RT_OK;
    case SIM_ABI_UNSUPPORTED: return RT_ERR_UNSUPPORTED;
    case SIM_ABI_INVALID: return RT_ERR_INVALID;
    default: return RT_ERR_LAUNCH;
  }
}

rt_status sim_run(sim_module *m, const sim_launch *l, long long *blocks_run, rt_error *err) {
  if (blocks_run) *blocks_run = 0;
  if (!m || !l) return rt_error_set(err, RT_ERR_INVALID, "sim_run needs a module and a launch");
  static sim_abi_launch a;
  static sim_abi_result r;
  memset(&a, 0, sizeof a);
  for (int i = 0; i < 3; i++) {
    a.grid[i] = l->grid[i], a.block[i] = l->block[i];
    a.cluster[i] = l->cluster[0] ? l->cluster[i] : 1;
  }
  a.shared_bytes = l->shared_bytes, a.params = l->params, a.schedule = (int)l->schedule;
  a.seed = l->seed, a.first_block = l->first_block, a.max_blocks = l->max_blocks;
  static char alt[1 << 16];
  stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0}, old_ss;
  struct sigaction sa, old_segv, old_bus;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = sim_on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaltstack(&ss, &old_ss);
  sigaction(SIGSEGV, &sa, &old_segv);
  sigaction(SIGBUS, &sa, &old_bus);
  sim_faulted = 0;
  sim_running = m;
  int rc = SIM_ABI_OK;
  if (sigsetjmp(sim_fault_jump, 1) == 0) rc = m->launch(&a, &r);
  sim_running = NULL;
  sigaction(SIGSEGV, &old_segv, NULL);
  sigaction(SIGBUS, &old_bus, NULL);
  sigaltstack(&old_ss, NULL);
  if (sim_faulted) return rt_error_set(err, RT_ERR_LAUNCH, "%s", sim_fault_msg);
  if (blocks_run) *blocks_run = r.blocks_run;
  if (rc != SIM_ABI_OK) return rt_error_set(err, sim_abi_status(rc), "%s", r.message);
  return sim_check_slack(err);
}

/* ------------------------------------------------------------------ tensor maps */

rt_status sim_tensor_map_encode(void *map, int data_type, unsigned rank, void *base,
                                const unsigned long long *dims, const unsigned long long *strides,
                                const unsigned *box, const unsigned *elem_strides, int interleave,
                                int swizzle, int l2_promotion, int oob_fill, rt_error *err) {
  static const int es_of[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (data_type < 0 || data_type > 12)
    return rt_error_set(err, RT_ERR_INVALID,
                        "tensor map: data type %d is not a CUtensorMapDataType", data_type);
  if (rank < 1 || rank > 5)
    return rt_error_set(err, RT_ERR_INVALID, "tensor map: rank %u outside 1..5", rank);
  if ((uintptr_t)base % 16)
    return rt_error_set(err, RT_ERR_INVALID, "tensor map: globalAddress %p not 16-byte aligned",
                        base);
  const int es = es_of[data_type];
  for (unsigned i = 0; i < rank; i++) {
    if (dims[i] < 1 || dims[i] > (1ull << 32))
      return rt_error_set(err, RT_ERR_INVALID, "tensor map: globalDim[%u] = %llu outside 1..2^32",
                          i, dims[i]);
    if (box[i] < 1 || box[i] > 256)
      return rt_error_set(err, RT_ERR_INVALID, "tensor map: boxDim[%u] = %u outside 1..256", i,
                          box[i]);
    if (elem_strides[i] < 1 || elem_strides[i] > 8)
      return rt_error_set(err, RT_ERR_INVALID, "tensor map: elementStrides[%u] = %u outside 1..8",
                          i, elem_strides[i]);
    if (i > 0 && (strides[i - 1] % 16 || strides[i - 1] >= (1ull << 40)))
      return rt_error_set(err, RT_ERR_INVALID,
                          "tensor map: globalStrides[%u] = %llu not a multiple of 16 below 2^40",
                          i - 1, strides[i - 1]);
  }
  if ((box[0] * (unsigned)es) % 16)
    return rt_error_set(err, RT_ERR_INVALID,
                        "tensor map: the inner box of %u bytes is not a multiple of 16",
                        box[0] * (unsigned)es);
  static const unsigned span[] = {0, 32, 64, 128};
  if (swizzle < 0 || swizzle > 3)
    return rt_error_set(err, RT_ERR_INVALID, "tensor map: swizzle %d is not a CUtensorMapSwizzle",
                        swizzle);
  if (swizzle && box[0] * (unsigned)es > span[swizzle])
    return rt_error_set(err, RT_ERR_INVALID,
                        "tensor map: the inner box of %u bytes exceeds the %u-byte swizzle span",
                        box[0] * (unsigned)es, span[swizzle]);
  sim_tensor_map t;
  memset(&t, 0, sizeof t);
  t.magic = SIM_TENSOR_MAP_MAGIC;
  t.data_type = (uint8_t)data_type, t.rank = (uint8_t)rank, t.interleave = (uint8_t)interleave;
  t.swizzle = (uint8_t)swizzle, t.l2_promotion = (uint8_t)l2_promotion,
  t.oob_fill = (uint8_t)oob_fill;
  t.base = (uint64_t)(uintptr_t)base;
  for (unsigned i = 0; i < rank; i++) {
    t.dims[i] = dims[i], t.box[i] = box[i], t.elem_strides[i] = (uint8_t)elem_strides[i];
    if (i > 0) t.strides[i - 1] = strides[i - 1];
  }
  memset(map, 0, 128);
  memcpy(map, &t, sizeof t);
  return RT_OK;
}
