/* sim_driver.c — the CUDA driver table served by the sim: host memory with red zones, modules
 * from sim images compiled by sim_compile, launches by sim_run (sim_driver.h). */
#include "tuner/device/sim_driver.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "driver/cuda_driver.h"

#define SIM_IMAGE_MAGIC  "#rooftune-sim-image 1\n"
#define SIM_MAX_INCLUDES COMPILE_MAX_INCLUDES

struct CUmod_st {
  char *text;       /* the image (owned) */
  const char *arch; /* into text */
  const char *name;
  const char *source;
  const char *includes[SIM_MAX_INCLUDES];
  int nincludes;
  unsigned cluster[3];
  struct CUfunc_st *fns; /* the functions got from it */
};

struct CUfunc_st {
  struct CUmod_st *mod;
  sim_module *sm;
  char entry[256];
  int max_dyn_smem; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
  struct CUfunc_st *next;
};

static sim_driver_gpu sim_gpu;
static char sim_last_error[4096];
static CUresult sim_last_code;
static long long sim_launches, sim_blocks;

static CUresult sim_fail(CUresult r, const char *fmt, const char *text) {
  snprintf(sim_last_error, sizeof sim_last_error, fmt, text);
  sim_last_code = r;
  return r;
}

/* ---- the image ---- */

static unsigned source_cluster(const char *source) {
  if (!strstr(source, "__cluster_dims__(CLUSTER")) return 1;
  const char *d = strstr(source, "#define CLUSTER ");
  long n = d ? strtol(d + 16, NULL, 10) : 1;
  return n >= 1 && n <= 16 ? (unsigned)n : 1;
}

rt_status sim_image_make(const char *source, const char *name, const compile_options *opt,
                         char **out, size_t *size, rt_error *err) {
  *out = NULL;
  if (size) *size = 0;
  size_t n = strlen(SIM_IMAGE_MAGIC) + strlen(source) + strlen(name) + 128;
  for (int i = 0; i < opt->include_count; i++) n += strlen(opt->include_dirs[i]) + 16;
  char *t = malloc(n);
  if (!t) return rt_error_set(err, RT_ERR_NOMEM, "out of memory for a sim image of %s", name);
  size_t k = (size_t)snprintf(t, n, "%sarch %s\nname %s\ncluster %u 1 1\n", SIM_IMAGE_MAGIC,
                              opt->arch ? opt->arch : "", name, source_cluster(source));
  for (int i = 0; i < opt->include_count; i++)
    k += (size_t)snprintf(t + k, n - k, "include %s\n", opt->include_dirs[i]);
  k += (size_t)snprintf(t + k, n - k, "\n%s", source);
  *out = t;
  if (size) *size = k + 1;
  return RT_OK;
}

/* Splits an image's header lines in place; 0 when it is no image. */
static int image_parse(struct CUmod_st *m) {
  char *p = m->text;
  if (strncmp(p, SIM_IMAGE_MAGIC, strlen(SIM_IMAGE_MAGIC))) return 0;
  p += strlen(SIM_IMAGE_MAGIC);
  m->cluster[0] = m->cluster[1] = m->cluster[2] = 1;
  while (*p && *p != '\n') {
    char *eol = strchr(p, '\n');
    if (!eol) return 0;
    *eol = '\0';
    if (!strncmp(p, "arch ", 5))
      m->arch = p + 5;
    else if (!strncmp(p, "name ", 5))
      m->name = p + 5;
    else if (!strncmp(p, "cluster ", 8))
      sscanf(p + 8, "%u %u %u", &m->cluster[0], &m->cluster[1], &m->cluster[2]);
    else if (!strncmp(p, "include ", 8) && m->nincludes < SIM_MAX_INCLUDES)
      m->includes[m->nincludes++] = p + 8;
    p = eol + 1;
  }
  if (*p != '\n' || !m->arch || !m->name) return 0;
  m->source = p + 1;
  return 1;
}

/* ---- the table ---- */

static CUresult s_init(unsigned f) {
  (void)f;
  return CUDA_SUCCESS;
}
static CUresult s_driver_version(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
static CUresult s_error_string(CUresult r, const char **s) {
  *s = r == sim_last_code && sim_last_error[0] ? sim_last_error : "an error of the sim";
  return CUDA_SUCCESS;
}
static CUresult s_error_name(CUresult r, const char **s) {
  switch (r) {
    case CUDA_ERROR_LAUNCH_FAILED: *s = "CUDA_ERROR_LAUNCH_FAILED"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    case CUDA_ERROR_INVALID_IMAGE: *s = "CUDA_ERROR_INVALID_IMAGE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    default: *s = "CUDA_ERROR_UNKNOWN"; break;
  }
  return CUDA_SUCCESS;
}
static CUresult s_device_count(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
static CUresult s_device_get(CUdevice *d, int i) {
  *d = i;
  return i == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
static CUresult s_device_name(char *name, int len, CUdevice d) {
  (void)d;
  snprintf(name, (size_t)len, "%s", sim_gpu.name);
  return CUDA_SUCCESS;
}
static CUresult s_device_attribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = sim_gpu.cc_major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = sim_gpu.cc_minor; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = sim_gpu.sm_count; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = sim_gpu.l2_bytes; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *v = sim_gpu.smem_per_block_optin;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = sim_gpu.smem_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = sim_gpu.regs_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = sim_gpu.max_threads_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = sim_gpu.max_blocks_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}
static CUresult s_total_mem(size_t *b, CUdevice d) {
  (void)d;
  *b = (size_t)64 << 30;
  return CUDA_SUCCESS;
}
static CUresult s_ctx_retain(CUcontext *c, CUdevice d) {
  (void)d;
  *c = (CUcontext)&sim_gpu;
  return CUDA_SUCCESS;
}
static CUresult s_ctx_release(CUdevice d) {
  (void)d;
  return CUDA_SUCCESS;
}
static CUresult s_ctx_set(CUcontext c) {
  (void)c;
  return CUDA_SUCCESS;
}
static CUresult s_sync(void) { return CUDA_SUCCESS; }
static CUresult s_ctx_get(CUcontext *c) {
  *c = (CUcontext)&sim_gpu;
  return CUDA_SUCCESS;
}
static CUresult s_ctx_device(CUdevice *d) {
  *d = 0;
  return CUDA_SUCCESS;
}

static CUresult s_module_load(CUmodule *out, const void *image) {
  *out = NULL;
  struct CUmod_st *m = calloc(1, sizeof *m);
  if (!m || !(m->text = strdup(image))) {
    free(m);
    return sim_fail(CUDA_ERROR_OUT_OF_MEMORY, "%s", "out of memory for a sim module");
  }
  if (!image_parse(m)) {
    free(m->text);
    free(m);
    return sim_fail(CUDA_ERROR_INVALID_IMAGE, "%s",
                    "the sim runs sim images (sim_image_make), not cubins");
  }
  *out = m;
  return CUDA_SUCCESS;
}
static CUresult s_module_unload(CUmodule m) {
  if (!m) return CUDA_SUCCESS;
  for (struct CUfunc_st *f = m->fns, *n; f; f = n) {
    n = f->next;
    sim_module_free(f->sm);
    free(f);
  }
  free(m->text);
  free(m);
  return CUDA_SUCCESS;
}
static CUresult s_module_function(CUfunction *out, CUmodule m, const char *entry) {
  *out = NULL;
  for (struct CUfunc_st *f = m->fns; f; f = f->next)
    if (!strcmp(f->entry, entry)) {
      *out = f;
      return CUDA_SUCCESS;
    }
  struct CUfunc_st *f = calloc(1, sizeof *f);
  if (!f) return sim_fail(CUDA_ERROR_OUT_OF_MEMORY, "%s", "out of memory");
  compile_options opt;
  memset(&opt, 0, sizeof opt);
  opt.arch = m->arch;
  opt.entry = entry;
  for (int i = 0; i < m->nincludes; i++) opt.include_dirs[i] = m->includes[i];
  opt.include_count = m->nincludes;
  rt_error err = {0};
  if (sim_compile(m->source, m->name, &opt, NULL, &f->sm, &err)) {
    free(f);
    return sim_fail(CUDA_ERROR_INVALID_IMAGE, "host compile for the sim failed: %s", err.text);
  }
  snprintf(f->entry, sizeof f->entry, "%s", entry);
  f->mod = m;
  f->max_dyn_smem = 48 * 1024;
  f->next = m->fns;
  m->fns = f;
  *out = f;
  return CUDA_SUCCESS;
}
static CUresult s_func_get(int *v, CUfunction_attribute a, CUfunction f) {
  *v = a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? f->max_dyn_smem
       : a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK       ? 1024
                                                            : 0;
  return CUDA_SUCCESS;
}
static CUresult s_func_set(CUfunction f, CUfunction_attribute a, int v) {
  if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (v > sim_gpu.smem_per_block_optin)
      return sim_fail(CUDA_ERROR_INVALID_VALUE, "%s",
                      "more dynamic shared memory than the GPU gives a block");
    f->max_dyn_smem = v;
  }
  return CUDA_SUCCESS;
}

static CUresult s_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                         void **extra) {
  (void)s;
  if (extra) return sim_fail(CUDA_ERROR_NOT_SUPPORTED, "%s", "the sim takes kernelParams only");
  if ((int)smem > f->max_dyn_smem) {
    char t[160];
    snprintf(t, sizeof t, "%u bytes of dynamic shared memory over the function's limit of %d", smem,
             f->max_dyn_smem);
    return sim_fail(CUDA_ERROR_INVALID_VALUE, "%s", t);
  }
  sim_launch l;
  memset(&l, 0, sizeof l);
  l.grid[0] = gx, l.grid[1] = gy, l.grid[2] = gz;
  l.block[0] = bx, l.block[1] = by, l.block[2] = bz;
  memcpy(l.cluster, f->mod->cluster, sizeof l.cluster);
  l.shared_bytes = smem;
  l.params = params;
  l.schedule = SIM_SCHED_ROUND_ROBIN;
  rt_error err = {0};
  long long blocks = 0;
  rt_status st = sim_run(f->sm, &l, &blocks, &err);
  sim_launches++;
  sim_blocks += blocks;
  if (st == RT_OK) return CUDA_SUCCESS;
  return sim_fail(strstr(err.text, "out of bounds") || strstr(err.text, "out-of-bounds")
                      ? CUDA_ERROR_ILLEGAL_ADDRESS
                      : CUDA_ERROR_LAUNCH_FAILED,
                  "on the sim: %s", err.text);
}

static CUresult s_alloc(CUdeviceptr *p, size_t bytes) {
  char name[64];
  static int count;
  snprintf(name, sizeof name, "allocation %d (%zu bytes)", ++count, bytes);
  void *h = sim_buffer_alloc(bytes ? bytes : 1, name);
  if (!h) return sim_fail(CUDA_ERROR_OUT_OF_MEMORY, "%s", "host memory for a sim buffer");
  *p = (CUdeviceptr)(uintptr_t)h;
  return CUDA_SUCCESS;
}
static CUresult s_free(CUdeviceptr p) {
  if (p) sim_buffer_free((void *)(uintptr_t)p);
  return CUDA_SUCCESS;
}
static CUresult s_htod(CUdeviceptr d, const void *h, size_t n) {
  memcpy((void *)(uintptr_t)d, h, n);
  return CUDA_SUCCESS;
}
static CUresult s_dtoh(void *h, CUdeviceptr d, size_t n) {
  memcpy(h, (const void *)(uintptr_t)d, n);
  return CUDA_SUCCESS;
}
static CUresult s_dtod(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  (void)st;
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult s_memset8(CUdeviceptr d, unsigned char v, size_t n, CUstream st) {
  (void)st;
  memset((void *)(uintptr_t)d, v, n);
  return CUDA_SUCCESS;
}
static CUresult s_memset16(CUdeviceptr d, unsigned short v, size_t n, CUstream st) {
  (void)st;
  unsigned short *p = (unsigned short *)(uintptr_t)d;
  for (size_t i = 0; i < n; i++) p[i] = v;
  return CUDA_SUCCESS;
}
static CUresult s_memset32(CUdeviceptr d, unsigned v, size_t n, CUstream st) {
  (void)st;
  unsigned *p = (unsigned *)(uintptr_t)d;
  for (size_t i = 0; i < n; i++) p[i] = v;
  return CUDA_SUCCESS;
}
static CUresult s_stream_create(CUstream *s, unsigned f) {
  (void)f;
  *s = (CUstream)&sim_gpu;
  return CUDA_SUCCESS;
}
static CUresult s_stream_op(CUstream s) {
  (void)s;
  return CUDA_SUCCESS;
}
static CUresult s_event_create(CUevent *e, unsigned f) {
  (void)f;
  *e = (CUevent)&sim_gpu;
  return CUDA_SUCCESS;
}
static CUresult s_event_destroy(CUevent e) {
  (void)e;
  return CUDA_SUCCESS;
}
static CUresult s_event_record(CUevent e, CUstream s) {
  (void)e, (void)s;
  return CUDA_SUCCESS;
}
static CUresult s_event_sync(CUevent e) {
  (void)e;
  return CUDA_SUCCESS;
}
static CUresult s_event_elapsed(float *ms, CUevent a, CUevent b) {
  (void)a, (void)b;
  *ms = 0;
  return sim_fail(CUDA_ERROR_NOT_SUPPORTED, "%s", "the sim measures no time");
}
static CUresult s_tensor_map(CUtensorMap *map, CUtensorMapDataType t, cuuint32_t rank, void *base,
                             const cuuint64_t *dims, const cuuint64_t *strides,
                             const cuuint32_t *box, const cuuint32_t *es, CUtensorMapInterleave il,
                             CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                             CUtensorMapFloatOOBfill oob) {
  rt_error err = {0};
  if (sim_tensor_map_encode(map, (int)t, rank, base, (const unsigned long long *)dims,
                            (const unsigned long long *)strides, box, es, (int)il, (int)sw, (int)l2,
                            (int)oob, &err))
    return sim_fail(CUDA_ERROR_INVALID_VALUE, "%s", err.text);
  return CUDA_SUCCESS;
}

void sim_driver_install(const sim_driver_gpu *g) {
  sim_gpu = *g;
  static cuda_driver t;
  memset(&t, 0, sizeof t);
  t.cuInit = s_init;
  t.cuDriverGetVersion = s_driver_version;
  t.cuGetErrorString = s_error_string;
  t.cuGetErrorName = s_error_name;
  t.cuDeviceGetCount = s_device_count;
  t.cuDeviceGet = s_device_get;
  t.cuDeviceGetName = s_device_name;
  t.cuDeviceGetAttribute = s_device_attribute;
  t.cuDeviceTotalMem_v2 = s_total_mem;
  t.cuDevicePrimaryCtxRetain = s_ctx_retain;
  t.cuDevicePrimaryCtxRelease_v2 = s_ctx_release;
  t.cuCtxSetCurrent = s_ctx_set;
  t.cuCtxSynchronize = s_sync;
  t.cuCtxGetCurrent = s_ctx_get;
  t.cuCtxGetDevice = s_ctx_device;
  t.cuModuleLoadData = s_module_load;
  t.cuModuleUnload = s_module_unload;
  t.cuModuleGetFunction = s_module_function;
  t.cuFuncGetAttribute = s_func_get;
  t.cuFuncSetAttribute = s_func_set;
  t.cuLaunchKernel = s_launch;
  t.cuMemAlloc_v2 = s_alloc;
  t.cuMemFree_v2 = s_free;
  t.cuMemcpyHtoD_v2 = s_htod;
  t.cuMemcpyDtoH_v2 = s_dtoh;
  t.cuMemcpyDtoDAsync_v2 = s_dtod;
  t.cuMemsetD8Async = s_memset8;
  t.cuMemsetD16Async = s_memset16;
  t.cuMemsetD32Async = s_memset32;
  t.cuStreamCreate = s_stream_create;
  t.cuStreamDestroy_v2 = s_stream_op;
  t.cuStreamSynchronize = s_stream_op;
  t.cuEventCreate = s_event_create;
  t.cuEventDestroy_v2 = s_event_destroy;
  t.cuEventRecord = s_event_record;
  t.cuEventSynchronize = s_event_sync;
  t.cuEventElapsedTime = s_event_elapsed;
  t.cuTensorMapEncodeTiled = s_tensor_map;
  t.handle = &sim_gpu;
  t.sim = sim_gpu.name;
  cuda_driver_use(&t);
}

void sim_driver_stats(long long *launches, long long *blocks) {
  if (launches) *launches = sim_launches;
  if (blocks) *blocks = sim_blocks;
}
