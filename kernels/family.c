/* family.c — the registry of kernel families. */
#include "kernels/family.h"

#include <string.h>

#include "tuner/template/manifest.h"

#include "kernels/gemm.h"

static const family_ops *const family_table[] = {&gemm_family};

const family_ops *family_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof family_table / sizeof family_table[0]; i++)
    if (!strcmp(family_table[i]->name, name)) return family_table[i];
  return NULL;
}

const char *family_names(void) { return "gemm"; }

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
