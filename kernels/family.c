/* family.c — the registry of kernel families: the C families (the generated C_FAMILIES list),
 * and those declared in the family.json files of the template search path, loaded on first
 * use. */
#include "kernels/family.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/c_families.h"
#include "kernels/declared.h"
#include "driver/cuda_driver.h"
#include "template/catalog.h"
#include "template/manifest.h"

/* The C families (C_FAMILIES: kernels/NAME_serve.c and kernels/NAME.c each), whole. */
#define FAMILY_DECL(name) extern const family_ops name##_family;
C_FAMILIES(FAMILY_DECL)
#undef FAMILY_DECL
static const family_ops *const builtin[] = {
#define FAMILY_ENTRY(name) &name##_family,
    C_FAMILIES(FAMILY_ENTRY)
#undef FAMILY_ENTRY
};
#define NBUILTIN     (sizeof builtin / sizeof builtin[0])
#define MAX_DECLARED 64

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static family_ops *declared[MAX_DECLARED]; /* loaded declarations, never freed (process-wide) */
static int ndeclared;
static char loaded_path[8192]; /* the search path last loaded */

static const family_ops *find_locked(const char *name) {
  for (size_t i = 0; i < NBUILTIN; i++)
    if (!strcmp(builtin[i]->name, name)) return builtin[i];
  for (int i = 0; i < ndeclared; i++)
    if (!strcmp(declared[i]->name, name)) return declared[i];
  return NULL;
}

/* Registers the declaration at PATH (already registered: *out is that one). */
static rt_status load_file_locked(const char *path, const family_ops **out, rt_error *err) {
  for (int i = 0; i < ndeclared; i++)
    if (!strcmp(declared[i]->declared_in, path)) {
      if (out) *out = declared[i];
      return RT_OK;
    }
  family_ops *f = NULL;
  rt_status s = declared_load(path, &f, err);
  if (s) return s;
  const family_ops *other = find_locked(f->name);
  if (other) {
    rt_error_locate(err, path, "family", 0, 0);
    s = rt_error_set(
        err, RT_ERR_MANIFEST, "family %s is declared twice: in %s and in %s; rename one", f->name,
        other->declared_in ? other->declared_in : "rooftune itself (a C family)", path);
    declared_free(f);
    return s;
  }
  if (ndeclared == MAX_DECLARED) {
    declared_free(f);
    rt_error_locate(err, path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_INVALID, "more than %d declared families", MAX_DECLARED);
  }
  declared[ndeclared++] = f;
  if (out) *out = f;
  return RT_OK;
}

rt_status family_load_file(const char *path, const family_ops **out, rt_error *err) {
  pthread_mutex_lock(&reg_mu);
  rt_status s = load_file_locked(path, out, err);
  pthread_mutex_unlock(&reg_mu);
  return s;
}

rt_status family_load_path(const char *path, rt_error *err) {
  char buf[8192];
  if (!path) path = catalog_path(buf, sizeof buf);
  char **files = NULL;
  int n = 0;
  rt_status s = catalog_families(path, &files, &n, err);
  if (s) return s;
  pthread_mutex_lock(&reg_mu);
  for (int i = 0; i < n && !s; i++) s = load_file_locked(files[i], NULL, err);
  if (!s) snprintf(loaded_path, sizeof loaded_path, "%s", path);
  pthread_mutex_unlock(&reg_mu);
  catalog_list_free(files, n);
  return s;
}

const family_ops *family_find(const char *name) {
  if (!name) return NULL;
  pthread_mutex_lock(&reg_mu);
  const family_ops *f = find_locked(name);
  pthread_mutex_unlock(&reg_mu);
  if (f) return f;
  /* not known yet: load the search path's declarations (once per path) and look again */
  char path[8192];
  catalog_path(path, sizeof path);
  pthread_mutex_lock(&reg_mu);
  int fresh = strcmp(path, loaded_path) != 0;
  pthread_mutex_unlock(&reg_mu);
  if (fresh) family_load_path(path, NULL);
  pthread_mutex_lock(&reg_mu);
  f = find_locked(name);
  pthread_mutex_unlock(&reg_mu);
  return f;
}

const char *family_names(void) {
  static _Thread_local char list[1024];
  size_t n = 0;
  list[0] = '\0';
  pthread_mutex_lock(&reg_mu);
  for (size_t i = 0; i < NBUILTIN; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", builtin[i]->name);
  for (int i = 0; i < ndeclared && n < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", declared[i]->name);
  pthread_mutex_unlock(&reg_mu);
  return list;
}

rt_status problem_env(const family_ops *fam, const problem *p, const arch_spec *arch,
                      const gpu_spec *gpu, rt_vars *env, rt_error *err) {
  rt_vars_clear(env);
  rt_status st = fam->bind(fam, p, env);
  if (st) return rt_error_set(err, st, "cannot bind %s problem %s", fam->name, p->shape);
  if ((st = manifest_env_dtype(p->dtype, env, err))) {
    rt_error_locate(err, "--dtype", NULL, 0, 0);
    return st;
  }
  return gpu_spec_env(arch, gpu, env, err);
}

int family_allows_lever(const family_ops *fam, const char *role) {
  if (!fam || !fam->levers) return 1;
  size_t n = strlen(role);
  for (const char *p = fam->levers; (p = strstr(p, role)) != NULL; p += n)
    if ((p == fam->levers || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

rt_status family_allow_smem(CUfunction fn, unsigned smem, rt_error *err) {
  if (smem <= 48 * 1024) return RT_OK;
  return cuda_check(
      cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
      "allow the kernel's dynamic shared memory", err);
}

rt_status family_reference_run(family_gpu *g, const family_reference *ref, CUstream stream,
                               family_reference_launch launch, rt_error *err) {
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  rt_status st =
      cuda_check(cu.cuModuleLoadData(&mod, ref->cubin), "load the reference's cubin", err);
  if (!st)
    st = cuda_check(cu.cuModuleGetFunction(&fn, mod, ref->entry ? ref->entry : ""),
                    "find the reference kernel", err);
  if (!st) st = family_allow_smem(fn, ref->smem, err);
  if (!st) st = launch(g, ref, fn, stream, err);
  if (!st) st = cuda_check(cu.cuStreamSynchronize(stream), "run the reference", err);
  if (mod) cu.cuModuleUnload(mod);
  return st;
}
