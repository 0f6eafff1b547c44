/* gpu_spec.c — the architecture and GPU tables.  Sources are named next to each entry. */
#include "model/gpu_spec.h"

#include "template/manifest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* CUDA C++ Programming Guide, Compute Capabilities, technical specifications table;
 * shared memory per SM is the largest carveout (sm_80: 164 KB, sm_86/89: 100 KB, sm_90: 228 KB)
 * and the opt-in block maximum is that less the 1 KB the system reserves. */
static const arch_spec arch_table[] = {
    /* Turing: 64 KB of shared memory per SM at most, allocated in 256-byte units, none reserved
     * per block (the occupancy calculator's granularity for compute capability 7.x) */
    {"sm_75", 75, 1024, 32, 16, 1024, 65536, 255, 256, 65536, 65536, 256, 0},
    {"sm_80", 80, 2048, 64, 32, 1024, 65536, 255, 256, 167936, 166912, 128, 1024},
    {"sm_86", 86, 1536, 48, 16, 1024, 65536, 255, 256, 102400, 101376, 128, 1024},
    {"sm_89", 89, 1536, 48, 24, 1024, 65536, 255, 256, 102400, 101376, 128, 1024},
    {"sm_90", 90, 2048, 64, 32, 1024, 65536, 255, 256, 233472, 232448, 128, 1024},
};

#define TB  1e12
#define TF  1e12
#define GB  1000000000ULL
#define MiB (1024ULL * 1024ULL)

static const gpu_spec gpu_table[] = {
    {"h200",
     "NVIDIA H200",
     "sm_90",
     132,
     1980,
     60 * MiB,
     141 * GB,
     4.8 * TB,
     4.3 * TB,
     {67 * TF, 494.5 * TF, 989.5 * TF, 1979 * TF},
     0.66,
     4e-6,
     "NVIDIA H200 datasheet (SXM); copy bandwidth 4.3 TB/s measured on one H200"},
    {"h100",
     "NVIDIA H100",
     "sm_90",
     132,
     1980,
     50 * MiB,
     80 * GB,
     3.35 * TB,
     0.9 * 3.35 * TB,
     {67 * TF, 494.5 * TF, 989.5 * TF, 1979 * TF},
     0.66,
     4e-6,
     "NVIDIA H100 datasheet (SXM5)"},
    {"a100",
     "NVIDIA A100",
     "sm_80",
     108,
     1410,
     40 * MiB,
     80 * GB,
     2.039 * TB,
     0.9 * 2.039 * TB,
     {19.5 * TF, 156 * TF, 312 * TF, 0},
     1.0,
     4e-6,
     "NVIDIA A100 datasheet (SXM4 80GB)"},
    {"l4",
     "NVIDIA L4",
     "sm_89",
     58,
     2040,
     48 * MiB,
     24 * GB,
     0.3 * TB,
     0.9 * 0.3 * TB,
     {30.3 * TF, 60 * TF, 121 * TF, 242 * TF},
     1.0,
     4e-6,
     "NVIDIA L4 datasheet (dense rates)"},
    /* The GPUs the public recordings were measured on (../shared/data/spaces): replay holds
     * their configurations against these roofs.  Reference-board clocks, dense tensor rates;
     * GeForce boards run f16 tensor cores at half rate with fp32 accumulation, and Turing has
     * no tf32 (0).  Bandwidth: data rate x bus width / 8. */
    {"a100-pcie",
     "NVIDIA A100-PCIE-40GB",
     "sm_80",
     108,
     1410,
     40 * MiB,
     40 * GB,
     1.555 * TB,
     0.9 * 1.555 * TB,
     {19.5 * TF, 156 * TF, 312 * TF, 0},
     1.0,
     4e-6,
     "NVIDIA A100 PCIe datasheet (40GB): 108 SMs, 1410 MHz, 40 MB L2, 1555 GB/s HBM2, 19.5 "
     "TFLOPS fp32, 156 tf32, 312 f16 tensor (dense)"},
    {"a6000",
     "NVIDIA RTX A6000",
     "sm_86",
     84,
     1800,
     6 * MiB,
     48 * GB,
     0.768 * TB,
     0.9 * 0.768 * TB,
     {38.7 * TF, 77.4 * TF, 154.8 * TF, 0},
     1.0,
     4e-6,
     "NVIDIA RTX A6000 datasheet: 10752 CUDA cores (84 SMs), 1800 MHz, 768 GB/s (16 Gbps GDDR6, "
     "384-bit), 38.7 TFLOPS fp32, 309.7 TFLOPS f16 tensor with sparsity (154.8 dense, tf32 half "
     "of that); 6 MB L2: NVIDIA Ampere GA102 GPU Architecture whitepaper"},
    {"a4000",
     "NVIDIA RTX A4000",
     "sm_86",
     48,
     1560,
     4 * MiB,
     16 * GB,
     0.448 * TB,
     0.9 * 0.448 * TB,
     {19.2 * TF, 38.35 * TF, 76.7 * TF, 0},
     1.0,
     4e-6,
     "NVIDIA RTX A4000 datasheet: 6144 CUDA cores (48 SMs), 1560 MHz, 448 GB/s (14 Gbps GDDR6, "
     "256-bit), 19.2 TFLOPS fp32, 153.4 TFLOPS f16 tensor with sparsity (76.7 dense, tf32 half "
     "of that); 4 MB L2 (GA104)"},
    {"rtx3090",
     "NVIDIA GeForce RTX 3090",
     "sm_86",
     82,
     1695,
     6 * MiB,
     24 * GB,
     0.936 * TB,
     0.9 * 0.936 * TB,
     {35.6 * TF, 35.6 * TF, 71 * TF, 0},
     1.0,
     4e-6,
     "NVIDIA Ampere GA102 GPU Architecture whitepaper, GeForce RTX 3090: 82 SMs, 1695 MHz, 6 MB "
     "L2, 936 GB/s (19.5 Gbps GDDR6X, 384-bit), 35.6 TFLOPS fp32, 71 f16 tensor with fp32 "
     "accumulation, 35.6 tf32 (dense)"},
    {"rtx2080ti",
     "NVIDIA GeForce RTX 2080 Ti",
     "sm_75",
     68,
     1545,
     5632 * 1024ULL,
     11 * GB,
     0.616 * TB,
     0.9 * 0.616 * TB,
     {13.4 * TF, 0, 53.8 * TF, 0},
     1.0,
     4e-6,
     "NVIDIA Turing GPU Architecture whitepaper, Table 1, GeForce RTX 2080 Ti reference: 68 SMs, "
     "1545 MHz, 5.5 MB L2, 616 GB/s (14 Gbps GDDR6, 352-bit), 13.4 TFLOPS fp32, 53.8 f16 tensor "
     "with fp32 accumulation"},
    {"rtx2080",
     "NVIDIA GeForce RTX 2080",
     "sm_75",
     46,
     1710,
     4 * MiB,
     8 * GB,
     0.448 * TB,
     0.9 * 0.448 * TB,
     {10.1 * TF, 0, 40.3 * TF, 0},
     1.0,
     4e-6,
     "NVIDIA Turing GPU Architecture whitepaper, Table 1, GeForce RTX 2080 reference: 46 SMs, "
     "1710 MHz, 4 MB L2, 448 GB/s (14 Gbps GDDR6, 256-bit), 10.1 TFLOPS fp32, 40.3 f16 tensor "
     "with fp32 accumulation"},
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

static const struct {
  const char *key, *label;
} path_names[] = {
#define COMPUTE_PATH_NAME_(name, key, label) {key, label},
    COMPUTE_PATHS(COMPUTE_PATH_NAME_)
#undef COMPUTE_PATH_NAME_
};

const char *compute_path_key(compute_path p) {
  return p >= 0 && p < PATH_COUNT ? path_names[p].key : "";
}
const char *compute_path_label(compute_path p) {
  return p >= 0 && p < PATH_COUNT ? path_names[p].label : "";
}

int compute_path_parse(const char *key) {
  for (int i = 0; key && i < PATH_COUNT; i++)
    if (!strcmp(path_names[i].key, key)) return i;
  return -1;
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
    if (device_name && strstr(device_name, gpu_table[i].name + 7 /* after "NVIDIA " */) && a &&
        a->cc == cc)
      return &gpu_table[i];
  }
  return NULL;
}

const gpu_spec *gpu_spec_match_name(const char *device_name) {
  const gpu_spec *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; device_name && i < sizeof gpu_table / sizeof gpu_table[0]; i++) {
    const char *name = gpu_table[i].name;
    if (strncmp(name, "NVIDIA ", 7) == 0) name += 7;
    size_t len = strlen(name);
    for (const char *at = strstr(device_name, name); at; at = strstr(at + 1, name)) {
      const char *after = at + len;
      int whole = !*after || *after == '-' || *after == '(' ||
                  (*after == ' ' && (isdigit((unsigned char)after[1]) || after[1] == '('));
      if (whole && len > best_len) best = &gpu_table[i], best_len = len;
    }
  }
  return best;
}

const gpu_spec *gpu_spec_for_arch(const char *arch) {
  const arch_spec *want = arch_spec_find(arch);
  for (size_t i = 0; want && i < sizeof gpu_table / sizeof gpu_table[0]; i++)
    if (arch_spec_find(gpu_table[i].arch) == want) return &gpu_table[i];
  return NULL;
}

const char *gpu_spec_keys(void) {
  static char buf[256];
  if (!buf[0]) {
    size_t n = 0;
    for (size_t i = 0; i < sizeof gpu_table / sizeof gpu_table[0]; i++)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", gpu_table[i].key);
  }
  return buf;
}

rt_status gpu_spec_env(const arch_spec *arch, const gpu_spec *gpu, rt_vars *env, rt_error *err) {
  if (!arch) return rt_error_set(err, RT_ERR_INVALID, "no architecture given for device facts");
#define FACT_ARCH(f)  1, (long long)arch->f
#define FACT_GPU(f)   gpu != NULL, gpu ? (long long)gpu->f : 0
#define FACT_CONST(v) 1, (long long)(v)
#define FACT_SET(name, from, field)                                                         \
  {                                                                                         \
    struct {                                                                                \
      int known;                                                                            \
      long long v;                                                                          \
    } f_ = {FACT_##from(field)};                                                            \
    if (f_.known && rt_vars_set(env, "device." #name, f_.v))                                \
      return rt_error_set(err, RT_ERR_INVALID, "too many variables setting device." #name); \
  }
  MANIFEST_DEVICE_FACTS(FACT_SET)
#undef FACT_SET
#undef FACT_ARCH
#undef FACT_GPU
#undef FACT_CONST
  return RT_OK;
}
