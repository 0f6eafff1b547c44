/* load_gemm.c — an application's view of rooftune: open the tuning database, find the tuned
 * GEMM for a shape, and run it on the GPU through librooftune.
 *
 *     load_gemm DB [SHAPE [DTYPE]]        e.g. load_gemm tuning.db 4096x4096x4096 bf16
 *
 * Built against the installed library only (<rooftune.h>, -lrooftune via pkg-config or
 * find_package(rooftune)).  The CUDA driver is loaded at run time here too, so the program
 * starts on a machine without a GPU.  It prints what would actually run: it asks
 * rooftune_lookup exactly what rooftune_gemm asks (this GPU's winners, only those it can
 * launch and that passed their reference check), so the answer names the serving rule (exact,
 * nearest, next, or cuBLASLt), the winners passed over and why.  Without a GPU it asks for any device's winner, prints it and
 * exits 0.  With a GPU it fills A and B with ones, calls rooftune_gemm and checks that every C
 * element it reads back equals K, and prints what ran.
 */
#include <dlfcn.h>
#include <rooftune.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few driver entry points this program needs, with the driver's signatures (cuda.h). */
typedef unsigned long long devptr;
static struct {
  int (*cuInit)(unsigned);
  int (*cuDeviceGet)(int *, int);
  int (*cuDeviceGetName)(char *, int, int);
  int (*cuDevicePrimaryCtxRetain)(void **, int);
  int (*cuCtxSetCurrent)(void *);
  int (*cuCtxSynchronize)(void);
  int (*cuMemAlloc_v2)(devptr *, size_t);
  int (*cuMemFree_v2)(devptr);
  int (*cuMemsetD16_v2)(devptr, unsigned short, size_t);
  int (*cuMemsetD32_v2)(devptr, unsigned, size_t);
  int (*cuMemcpyDtoH_v2)(void *, devptr, size_t);
} drv;

/* Loads the driver and makes GPU 0's primary context current; 0 on success, else a reason. */
static const char *gpu_start(char *name, size_t size) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return "no CUDA driver (libcuda.so.1 is not installed)";
#define SYM(f)                       \
  *(void **)(&drv.f) = dlsym(h, #f); \
  if (!drv.f) return "the CUDA driver lacks " #f
  SYM(cuInit);
  SYM(cuDeviceGet);
  SYM(cuDeviceGetName);
  SYM(cuDevicePrimaryCtxRetain);
  SYM(cuCtxSetCurrent);
  SYM(cuCtxSynchronize);
  SYM(cuMemAlloc_v2);
  SYM(cuMemFree_v2);
  SYM(cuMemsetD16_v2);
  SYM(cuMemsetD32_v2);
  SYM(cuMemcpyDtoH_v2);
#undef SYM
  int dev = 0;
  void *ctx = NULL;
  if (drv.cuInit(0)) return "cuInit failed: no GPU is visible";
  if (drv.cuDeviceGet(&dev, 0) || drv.cuDeviceGetName(name, (int)size, dev) ||
      drv.cuDevicePrimaryCtxRetain(&ctx, dev) || drv.cuCtxSetCurrent(ctx))
    return "cannot make a context on GPU 0";
  return NULL;
}

static const char *rule_name(int rule) {
  return rule == ROOFTUNE_RULE_EXACT     ? "exact"
         : rule == ROOFTUNE_RULE_NEAREST ? "nearest"
         : rule == ROOFTUNE_RULE_NEXT    ? "next"
         : rule == ROOFTUNE_RULE_LIBRARY ? "library"
                                         : "none";
}

/* Prints a lookup's answer: the winner served, or why none is, and what was passed over. */
static void print_match(const rooftune_match *m, const char *served) {
  if (m->match != ROOFTUNE_MATCH_NONE) {
    printf("%s: %s %s %s (%s match, distance %.3g; rule %s)\n", served, m->family, m->shape,
           m->dtype, m->match == ROOFTUNE_MATCH_EXACT ? "exact" : "nearest", m->distance,
           rule_name(m->rule));
    printf("  template %s, config %s\n", m->template_name, m->config);
    printf("  time %.4g ms, %s on %s; %s\n", m->time_ms, m->timing, m->device,
           m->verified ? "verified against the reference"
                       : "not verified (never checked against the reference)");
    if (m->geometry_ok)
      printf("  launch grid (%u, %u, %u), block (%u, %u, %u), %u bytes of shared memory\n",
             m->grid[0], m->grid[1], m->grid[2], m->block[0], m->block[1], m->block[2], m->smem);
    if (m->mismatch)
      printf("  not served by default: made with another %s%s%s\n",
             m->mismatch & ROOFTUNE_MISMATCH_DEVICE ? "GPU " : "",
             m->mismatch & ROOFTUNE_MISMATCH_TOOLKIT ? "toolkit " : "",
             m->mismatch & ROOFTUNE_MISMATCH_TEMPLATE ? "template version" : "");
  } else {
    printf("%s: no tuned winner (rule %s): %s\n", served, rule_name(m->rule), m->reason);
  }
  for (const char *s = m->passed_over; *s;) { /* one line each */
    size_t n = strcspn(s, "\n");
    printf("  passed over: %.*s\n", (int)n, s);
    s += n;
    if (*s) s++;
  }
}

/* What rooftune_gemm runs for that answer. */
static void print_runs(const rooftune_match *m) {
  if (m->match != ROOFTUNE_MATCH_NONE && m->library_algo[0])
    printf("  runs: cuBLASLt with the tuned algorithm\n");
  else if (m->match != ROOFTUNE_MATCH_NONE && m->runnable)
    printf("  runs: %s from its cubin (%zu bytes)\n", m->template_name, m->cubin_size);
  else if (m->match != ROOFTUNE_MATCH_NONE && m->cubin_size && !m->verified)
    printf(
        "  runs: nothing from this winner (not verified: %s on %s); on a GPU rooftune_gemm runs "
        "the next "
        "verified winner or cuBLASLt\n",
        m->timing, m->device);
  else if (m->match != ROOFTUNE_MATCH_NONE)
    printf(
        "  runs: nothing from this winner (no cubin: %s); on a GPU rooftune_gemm runs what it can "
        "launch\n",
        m->timing);
  else
    printf("  runs: cuBLASLt's own choice\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: load_gemm DB [SHAPE [DTYPE]]\n");
    return 2;
  }
  const char *shape = argc > 2 ? argv[2] : "4096x4096x4096";
  const char *dtype = argc > 3 ? argv[3] : "bf16";
  long long M, N, K;
  if (sscanf(shape, "%lldx%lldx%lld", &M, &N, &K) != 3 || M <= 0 || N <= 0 || K <= 0) {
    fprintf(stderr, "load_gemm: shape '%s' is not MxNxK\n", shape);
    return 2;
  }
  rooftune_db *db = NULL;
  if (rooftune_open(argv[1], &db) != ROOFTUNE_OK) {
    fprintf(stderr, "load_gemm: %s\n", rooftune_last_error());
    return 1;
  }
  char gpu[256] = "";
  const char *no_gpu = gpu_start(gpu, sizeof gpu);

  /* exactly what rooftune_gemm asks on this GPU; without one, any device's winner */
  rooftune_query q;
  memset(&q, 0, sizeof q);
  q.family = "gemm";
  q.shape = shape;
  q.dtype = dtype;
  q.device = no_gpu ? NULL : gpu;
  q.flags = no_gpu ? 0 : ROOFTUNE_RUNNABLE;
  rooftune_match m;
  if (rooftune_lookup(db, &q, &m) != ROOFTUNE_OK) {
    fprintf(stderr, "load_gemm: %s\n", rooftune_last_error());
    rooftune_close(db);
    return 1;
  }
  print_match(&m, "tuned");
  print_runs(&m);
  if (m.match == ROOFTUNE_MATCH_NONE) {
    q.flags |= ROOFTUNE_ALLOW_MISMATCH;
    rooftune_match other;
    if (rooftune_lookup(db, &q, &other) == ROOFTUNE_OK && other.match != ROOFTUNE_MATCH_NONE)
      print_match(&other, "found, but refused");
  }
  if (no_gpu) {
    printf("no GPU here (%s): that is what would run; exiting\n", no_gpu);
    rooftune_close(db);
    return 0;
  }

  size_t in_bytes = strcmp(dtype, "f32") ? 2 : 4;
  devptr A = 0, B = 0, C = 0;
  int bad = drv.cuMemAlloc_v2(&A, (size_t)(M * K) * in_bytes) ||
            drv.cuMemAlloc_v2(&B, (size_t)(K * N) * in_bytes) ||
            drv.cuMemAlloc_v2(&C, (size_t)(M * N) * sizeof(float));
  if (!bad && in_bytes == 4)
    bad = drv.cuMemsetD32_v2(A, 0x3f800000u, (size_t)(M * K)) ||
          drv.cuMemsetD32_v2(B, 0x3f800000u, (size_t)(K * N));
  else if (!bad) {
    unsigned short one = strcmp(dtype, "bf16") ? 0x3c00 : 0x3f80; /* 1.0 in f16 / bf16 */
    bad =
        drv.cuMemsetD16_v2(A, one, (size_t)(M * K)) || drv.cuMemsetD16_v2(B, one, (size_t)(K * N));
  }
  if (bad) {
    fprintf(stderr, "load_gemm: cannot allocate or fill the matrices on %s\n", gpu);
    return 1;
  }
  rooftune_info info;
  int rc = rooftune_gemm(db, dtype, NULL, M, N, K, (const void *)A, (const void *)B, (float *)C,
                         NULL, &info);
  if (rc == ROOFTUNE_OK) rc = drv.cuCtxSynchronize() ? ROOFTUNE_ERR_CUDA : ROOFTUNE_OK;
  if (rc != ROOFTUNE_OK) {
    fprintf(stderr, "load_gemm: rooftune_gemm: %s: %s\n", rooftune_strerror(rc),
            rooftune_last_error());
    return 1;
  }
  float first = 0, last = 0;
  drv.cuMemcpyDtoH_v2(&first, C, sizeof first);
  drv.cuMemcpyDtoH_v2(&last, C + (devptr)((M * N - 1) * (long long)sizeof(float)), sizeof last);
  printf("ran %s%s%s on %s (rule %s%s%s): C[0] = %g, C[last] = %g (expected %lld)%s%s\n",
         info.path == ROOFTUNE_PATH_LIBRARY ? "cuBLASLt" : info.template_name,
         info.config[0] ? " " : "", info.config, gpu, rule_name(info.path),
         info.shape[0] ? ", tuned for " : "", info.shape, first, last, K,
         info.reason[0] ? "; fallback because " : "", info.reason);
  if (info.path != m.rule)
    printf("note: the call ran something else than the lookup named (%s)\n", info.reason);
  drv.cuMemFree_v2(A);
  drv.cuMemFree_v2(B);
  drv.cuMemFree_v2(C);
  rooftune_close(db);
  return first == (float)K && last == (float)K ? 0 : 1;
}
