/* load_vscale.c — run your own tuned kernel: open the tuning database, look up the winner of
 * the vscale family (this folder's family.json) for a size, load its cubin and launch it with
 * the family's arguments (x, y, n, a, in family.json's order).
 *
 *     load_vscale DB [N] [--allow-unverified]        e.g. load_vscale tuning.db 16777216
 *
 * Built against the installed library only (<rooftune.h>, -lrooftune; see the README's "Tune
 * your own kernel").  The CUDA driver is loaded at run time, so without a GPU the program prints
 * what it would run and exits 0.  With a GPU it fills x with 2, runs y = 3x and checks the first
 * and last y.  librooftune launches only a winner whose output passed the reference check when
 * it was tuned on a GPU; one predicted on the model device is refused with the reason, unless
 * --allow-unverified asks for it (ROOFTUNE_ALLOW_UNVERIFIED).
 */
#include <dlfcn.h>
#include <rooftune.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  int (*cuMemsetD32_v2)(devptr, unsigned, size_t);
  int (*cuMemcpyDtoH_v2)(void *, devptr, size_t);
} drv;

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

int main(int argc, char **argv) {
  int allow = argc > 2 && !strcmp(argv[argc - 1], "--allow-unverified");
  argc -= allow;
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: load_vscale DB [N] [--allow-unverified]\n");
    return 2;
  }
  const char *shape = argc > 2 ? argv[2] : "16777216";
  int n = atoi(shape);
  if (n <= 0) {
    fprintf(stderr, "load_vscale: size '%s' is not a positive integer\n", shape);
    return 2;
  }
  rooftune_db *db = NULL;
  if (rooftune_open(argv[1], &db) != ROOFTUNE_OK) {
    fprintf(stderr, "load_vscale: %s\n", rooftune_last_error());
    return 1;
  }
  char gpu[256] = "";
  const char *no_gpu = gpu_start(gpu, sizeof gpu);
  rooftune_query q = {.family = "vscale",
                      .shape = shape,
                      .dtype = "f32",
                      .device = no_gpu ? NULL : gpu,
                      .flags = allow ? ROOFTUNE_ALLOW_UNVERIFIED : 0};
  rooftune_match m;
  if (rooftune_lookup(db, &q, &m) != ROOFTUNE_OK || m.match == ROOFTUNE_MATCH_NONE) {
    fprintf(stderr,
            "load_vscale: nothing tuned for vscale %s (tune it: rooftune tune vscale --shape %s "
            "--dtype f32)\n",
            shape, shape);
    rooftune_close(db);
    return 1;
  }
  printf("tuned: %s %s %s (%s match): %s %s, %.4g ms %s on %s\n", m.family, m.shape, m.dtype,
         m.match == ROOFTUNE_MATCH_EXACT ? "exact" : "nearest", m.template_name, m.config,
         m.time_ms, m.timing, m.device);
  if (m.geometry_ok)
    printf("  launch grid (%u, %u, %u), block (%u, %u, %u)\n", m.grid[0], m.grid[1], m.grid[2],
           m.block[0], m.block[1], m.block[2]);
  printf("  %s\n",
         m.verified ? "verified: its output matched the reference on that GPU"
         : m.runnable
             ? "not verified, launched as asked (--allow-unverified)"
             : "not verified: never checked against the reference, so not launched (tune it on a "
               "GPU, or pass --allow-unverified)");
  if (no_gpu) {
    printf("no GPU here (%s): that is what would run; exiting\n", no_gpu);
    rooftune_close(db);
    return 0;
  }
  rooftune_kernel *k = NULL;
  devptr x = 0, y = 0;
  float a = 3.0f;
  if (rooftune_kernel_load(db, &m, &k) != ROOFTUNE_OK || drv.cuMemAlloc_v2(&x, (size_t)n * 4) ||
      drv.cuMemAlloc_v2(&y, (size_t)n * 4) ||
      drv.cuMemsetD32_v2(x, 0x40000000u /* 2.0f */, (size_t)n)) {
    fprintf(stderr, "load_vscale: %s\n", rooftune_last_error());
    return 1;
  }
  void *args[] = {&x, &y, &n, &a}; /* the family's arguments, in family.json's order */
  int rc = rooftune_kernel_launch(k, NULL, args);
  if (rc == ROOFTUNE_OK && drv.cuCtxSynchronize()) rc = ROOFTUNE_ERR_CUDA;
  if (rc != ROOFTUNE_OK) {
    fprintf(stderr, "load_vscale: launch: %s: %s\n", rooftune_strerror(rc), rooftune_last_error());
    return 1;
  }
  float first = 0, last = 0;
  drv.cuMemcpyDtoH_v2(&first, y, 4);
  drv.cuMemcpyDtoH_v2(&last, y + (devptr)(n - 1) * 4, 4);
  printf("ran %s on %s: y[0] = %g, y[last] = %g (expected 6)\n", m.template_name, gpu, first, last);
  drv.cuMemFree_v2(x);
  drv.cuMemFree_v2(y);
  rooftune_kernel_free(k);
  rooftune_close(db);
  return first == 6.0f && last == 6.0f ? 0 : 1;
}
