/* gpu_spec.c — the architecture and GPU tables.  Sources are named next to each entry. */
#include "tuner/model/gpu_spec.h"

#include "tuner/template/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* CUDA C++ Programming Guide, Compute Capabilities, technical specifications table;
 * shared memory per SM is the largest carveout (sm_80: 164 KB, sm_86/89: 100 KB, sm_90: 228 KB)
 * and the opt-in block maximum is that less the 1 KB the system reserves. */
static const arch_spec arch_table[] = {
    {"sm_80", 80, 2048, 64, 32, 1024, 65536, 255, 256, 167936, 166912, 128, 1024},
    {"sm_86", 86, 1536, 48, 16, 1024, 65536, 255, 256, 102400, 101376, 128, 1024},
    {"sm_89", 89, 1536, 48, 24, 1024, 65536, 255, 256, 102400, 101376, 128, 1024},
    {"sm_90", 90, 2048, 64, 32, 1024, 65536, 255, 256, 233472, 232448, 128, 1024},
};

#define TB 1e12
#define TF 1e12
#define GB 1000000000ULL
#define MiB (1024ULL * 1024ULL)

static const gpu_spec gpu_table[] = {
    {"h200", "NVIDIA H200", "sm_90", 132, 1980, 60 * MiB, 141 * GB, 4.8 * TB, 4.3 * TB,
     {67 * TF, 494.5 * TF, 989.5 * TF, 1979 * TF}, 0.66, 4e-6,
     "NVIDIA H200 datasheet (SXM); copy bandwidth 4.3 TB/s measured on one H200"},
    {"h100", "NVIDIA H100", "sm_90", 132, 1980, 50 * MiB, 80 * GB, 3.35 * TB, 0.9 * 3.35 * TB,
     {67 * TF, 494.5 * TF, 989.5 * TF, 1979 * TF}, 0.66, 4e-6, "NVIDIA H100 datasheet (SXM5)"},
    {"a100", "NVIDIA A100", "sm_80", 108, 1410, 40 * MiB, 80 * GB, 2.039 * TB, 0.9 * 2.039 * TB,
     {19.5 * TF, 156 * TF, 312 * TF, 0}, 1.0, 4e-6, "NVIDIA A100 datasheet (SXM4 80GB)"},
    {"l4", "NVIDIA L4", "sm_89", 58, 2040, 48 * MiB, 24 * GB, 0.3 * TB, 0.9 * 0.3 * TB,
     {30.3 * TF, 60 * TF, 121 * TF, 242 * TF}, 1.0, 4e-6, "NVIDIA L4 datasheet (dense rates)"},
};

const arch_spec *arch_spec_for_cc(int cc) {
  for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++)
    if (arch_table[i].cc == cc) return &arch_table[i];
  return NULL;
}

const arch_spec *arch_spec_find(const char *name) {
  if (!name) return NULL;
  if (strncmp(name, "sm_", 3) == 0 || strncmp(name, "SM_", 3) == 0) name += 3;
  char *end = NULL;
  long cc = strtol(name, &end, 10);
  if (end == name || (*end && strcmp(end, "a") != 0)) return NULL;
  return arch_spec_for_cc((int)cc);
}

const gpu_spec *gpu_spec_all(size_t *count) {
  *count = sizeof gpu_table / sizeof gpu_table[0];
  return gpu_table;
}

const gpu_spec *gpu_spec_find(const char *key) {
  if (!key) return NULL;
  for (size_t i = 0; i < sizeof gpu_table / sizeof gpu_table[0]; i++)
    if (strcasecmp(gpu_table[i].key, key) == 0) return &gpu_table[i];
  return NULL;
}

const gpu_spec *gpu_spec_match(const char *device_name, int cc) {
  for (size_t i = 0; i < sizeof gpu_table / sizeof gpu_table[0]; i++) {
    const arch_spec *a = arch_spec_find(gpu_table[i].arch);
    if (device_name && strstr(device_name, gpu_table[i].name + 7 /* after "NVIDIA " */) &&
        a && a->cc == cc)
      return &gpu_table[i];
  }
  return NULL;
}

const gpu_spec *gpu_spec_for_arch(const char *arch) {
  const arch_spec *want = arch_spec_find(arch);
  for (size_t i = 0; want && i < sizeof gpu_table / sizeof gpu_table[0]; i++)
    if (arch_spec_find(gpu_table[i].arch) == want) return &gpu_table[i];
  return NULL;
}

const char *gpu_spec_keys(void) {
  static char buf[128];
  if (!buf[0]) {
    size_t n = 0;
    for (size_t i = 0; i < sizeof gpu_table / sizeof gpu_table[0]; i++)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", gpu_table[i].key);
  }
  return buf;
}

rt_status gpu_spec_env(const arch_spec *arch, const gpu_spec *gpu, rt_vars *env, rt_error *err) {
  if (!arch) return rt_error_set(err, RT_ERR_INVALID, "no architecture given for device facts");
#define FACT_ARCH(f) 1, (long long)arch->f
#define FACT_GPU(f) gpu != NULL, gpu ? (long long)gpu->f : 0
#define FACT_CONST(v) 1, (long long)(v)
#define FACT_SET(name, from, field)                                                        \
  {                                                                                        \
    struct {                                                                               \
      int known;                                                                           \
      long long v;                                                                         \
    } f_ = {FACT_##from(field)};                                                           \
    if (f_.known && rt_vars_set(env, "device." #name, f_.v))                               \
      return rt_error_set(err, RT_ERR_INVALID, "too many variables setting device." #name); \
  }
  MANIFEST_DEVICE_FACTS(FACT_SET)
#undef FACT_SET
#undef FACT_ARCH
#undef FACT_GPU
#undef FACT_CONST
  return RT_OK;
}
