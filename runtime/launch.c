/* launch.c — the CUDA driver (loaded at run time), loading a winner's cubin into the current
 * context, launching it, and the per-handle cache of kernels the one-call entry points use. */
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "driver/cuda_driver.h"

/* cuda_driver_load() keeps its state in statics: the first calls from several threads must not
 * race, so every call here goes through one lock (after the first it returns at once). */
rt_status rt_driver_load(rt_error *err) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&mu);
  rt_status s = cuda_driver_load(err);
  pthread_mutex_unlock(&mu);
  return s;
}

int rt_current(CUcontext *ctx, CUdevice *dev, char *name, size_t size, const char *who) {
  rt_error err = {0};
  if (rt_driver_load(&err)) return rt_fail_err(&err);
  *ctx = NULL;
  if (cu.cuCtxGetCurrent(ctx) != CUDA_SUCCESS || !*ctx || cu.cuCtxGetDevice(dev) != CUDA_SUCCESS)
    return rt_fail(ROOFTUNE_ERR_NO_GPU, "%s: no current CUDA context: make one current first", who);
  if (name && size) {
    name[0] = '\0';
    cu.cuDeviceGetName(name, (int)size, *dev);
  }
  return ROOFTUNE_OK;
}

int rooftune_kernel_load(rooftune_db *r, const rooftune_match *m, rooftune_kernel **out) {
  if (!r || !m || !out) return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_kernel_load: NULL argument");
  *out = NULL;
  if (m->match == ROOFTUNE_MATCH_NONE) return rt_fail(ROOFTUNE_ERR_NOT_FOUND, "the match is empty");
  if (!m->cubin_size || !m->entry[0])
    return rt_fail(ROOFTUNE_ERR_NOT_FOUND, "winner %s %s has no cubin (%s)", m->template_name,
                   m->config, m->library_algo[0] ? "a library candidate" : "not tuned on a GPU");
  if (!m->verified && !m->runnable)
    return rt_fail(
        ROOFTUNE_ERR_UNVERIFIED,
        "winner %s %s (%s on %s) is not verified: its output was never "
        "checked against the reference, so it is not launched; tune it on a GPU (rooftune tune "
        "--device cuda), or look it up with ROOFTUNE_ALLOW_UNVERIFIED to launch it anyway",
        m->template_name, m->config, m->timing, m->device);
  rt_error err = {0};
  if (rt_driver_load(&err)) return rt_fail_err(&err);
  CUcontext ctx = NULL;
  if (cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
    return rt_fail(ROOFTUNE_ERR_NO_GPU, "no current CUDA context: make one current first");
  void *cubin = NULL;
  size_t size = 0;
  pthread_mutex_lock(&r->mu);
  rt_status s = db_winner_cubin(r->d, m->id, &cubin, &size, &err);
  pthread_mutex_unlock(&r->mu);
  if (s) return rt_fail_err(&err);
  rooftune_kernel *k = calloc(1, sizeof *k);
  if (!k) {
    free(cubin);
    return rt_fail(ROOFTUNE_ERR_NOMEM, "out of memory");
  }
  s = cuda_check(cu.cuModuleLoadData(&k->mod, cubin), "cuModuleLoadData", &err);
  free(cubin);
  if (!s)
    s = cuda_check(cu.cuModuleGetFunction(&k->fn, k->mod, m->entry), "cuModuleGetFunction", &err);
  if (!s && m->smem > 48 * 1024)
    s = cuda_check(
        cu.cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)m->smem),
        "cuFuncSetAttribute(max dynamic shared memory)", &err);
  if (s) {
    if (k->mod) cu.cuModuleUnload(k->mod);
    free(k);
    return rt_fail_err(&err);
  }
  memcpy(k->grid, m->grid, sizeof k->grid);
  memcpy(k->block, m->block, sizeof k->block);
  k->smem = m->smem;
  k->geometry_ok = m->geometry_ok;
  *out = k;
  return ROOFTUNE_OK;
}

int rooftune_kernel_launch_geometry(rooftune_kernel *k, const unsigned grid[3],
                                    const unsigned block[3], unsigned smem, void *stream,
                                    void **args) {
  if (!k || !grid || !block)
    return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_kernel_launch: NULL argument");
  rt_error err = {0};
  /* a kernel loaded for a smaller match may need more dynamic shared memory allowed */
  if (smem > 48 * 1024 && smem > k->smem &&
      cu.cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem) ==
          CUDA_SUCCESS)
    k->smem = smem;
  if (cuda_check(cu.cuLaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                   smem, (CUstream)stream, args, NULL),
                 "cuLaunchKernel", &err)) {
    rt_fail_err(&err);
    return ROOFTUNE_ERR_LAUNCH;
  }
  return ROOFTUNE_OK;
}

int rooftune_kernel_launch(rooftune_kernel *k, void *stream, void **args) {
  if (!k) return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_kernel_launch: kernel is NULL");
  if (!k->geometry_ok)
    return rt_fail(ROOFTUNE_ERR_UNSUPPORTED,
                   "the match has no launch geometry for the queried "
                   "shape: use rooftune_kernel_launch_geometry");
  return rooftune_kernel_launch_geometry(k, k->grid, k->block, k->smem, stream, args);
}

void rooftune_kernel_free(rooftune_kernel *k) {
  if (!k) return;
  if (k->mod && cu.cuModuleUnload) cu.cuModuleUnload(k->mod);
  free(k);
}

int rt_kernel_get(rooftune_db *r, const rooftune_match *m, CUcontext ctx, rooftune_kernel **out,
                  int *owned) {
  *owned = 0;
  pthread_mutex_lock(&r->mu);
  for (int i = 0; i < r->nkernels; i++)
    if (r->kernels[i].winner_id == m->id && r->kernels[i].time_ms == m->time_ms &&
        r->kernels[i].ctx == ctx) {
      *out = r->kernels[i].k;
      pthread_mutex_unlock(&r->mu);
      return ROOFTUNE_OK;
    }
  pthread_mutex_unlock(&r->mu);
  int rc = rooftune_kernel_load(r, m, out);
  if (rc) return rc;
  pthread_mutex_lock(&r->mu);
  if (r->nkernels < (int)(sizeof r->kernels / sizeof r->kernels[0])) {
    r->kernels[r->nkernels].winner_id = m->id;
    r->kernels[r->nkernels].time_ms = m->time_ms;
    r->kernels[r->nkernels].ctx = ctx;
    r->kernels[r->nkernels++].k = *out;
    pthread_mutex_unlock(&r->mu);
    return ROOFTUNE_OK;
  }
  pthread_mutex_unlock(&r->mu);
  *owned = 1; /* not cached: the caller frees it */
  return ROOFTUNE_OK;
}

void rt_info_from_match(const rooftune_match *m, rooftune_info *info) {
  info->path = m->rule;
  rt_copy(info->template_name, sizeof info->template_name, m->template_name);
  rt_copy(info->config, sizeof info->config, m->library_algo[0] ? m->library_algo : m->config);
  rt_copy(info->shape, sizeof info->shape, m->shape);
  info->distance = m->distance;
  info->passed_count = m->passed_count;
  rt_copy(info->passed_over, sizeof info->passed_over, m->passed_over);
  info->verified = m->verified;
}
