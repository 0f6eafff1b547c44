/* gpu_spec.h — what rooftune knows about GPUs without running on one.
 *
 * Two tables.  The architecture table (sm_75, sm_80, sm_86, sm_89, sm_90) holds the per-SM
 * resource limits and allocation granularities that the occupancy calculator needs; the numbers
 * are those of the CUDA C++ Programming Guide, "Compute Capabilities" (Table: technical
 * specifications per compute capability) and the CUDA Occupancy Calculator spreadsheet
 * (register allocation unit 256 per warp; shared memory allocation unit 128 bytes with 1 KiB
 * reserved by the system per block from sm_80 on, 256 bytes and none reserved on sm_75).  The
 * GPU table (gpu_spec.c: the GPUs rooftune is tuned for and those public recordings were made
 * on; gpu_spec_keys() lists them) adds SM counts, clocks and the datasheet ceilings
 * (DRAM bandwidth, dense tensor and SIMT rates) that the model device predicts from and that
 * diagnosis uses until a device's ceilings have been measured; each entry names its sources.
 * Every ceiling here is a spec-sheet number and is reported as such.  A GPU added to the table
 * takes its line in the README's list of the model device's GPUs, in its row's place
 * (tests/cli/test_help.sh holds that list to gpu_spec_keys(), as tune --help prints it).
 */
#ifndef ROOFTUNE_GPU_SPEC_H
#define ROOFTUNE_GPU_SPEC_H

#include <stddef.h>

#include "core/status.h"
#include "core/vars.h"

typedef struct arch_spec {
  const char *name;            /* "sm_90" */
  int cc;                      /* 90 */
  int max_threads_per_sm;      /* 2048 */
  int max_warps_per_sm;        /* 64 */
  int max_blocks_per_sm;       /* 32 */
  int max_threads_per_block;   /* 1024 */
  int regs_per_sm;             /* 65536 32-bit registers */
  int max_regs_per_thread;     /* 255 */
  int reg_alloc_unit;          /* registers are given to a warp in units of this many */
  int smem_per_sm;             /* bytes usable by blocks on one SM (largest carveout) */
  int smem_per_block_optin;    /* largest dynamic + static shared memory per block */
  int smem_alloc_unit;         /* shared memory is given to a block in units of this many bytes */
  int smem_reserved_per_block; /* bytes the system reserves per resident block */
} arch_spec;

/* The instruction paths a kernel computes on, each with its dense peak rate in FLOP/s below
 * (spec-sheet numbers): X(NAME, key, label), key what a stored result names it by
 * (candidate_result.path), label what a report's roof says.
 *   SIMT_F32  fp32 FMA on CUDA cores
 *   TC_TF32   tensor cores, tf32 inputs, fp32 accumulation
 *   TC_F16    tensor cores, fp16/bf16 inputs, fp32 accumulation
 *   TC_F8     tensor cores, fp8 (e4m3/e5m2) inputs, fp32 accumulation (sm_89, sm_90) */
#define COMPUTE_PATHS(X)                      \
  X(SIMT_F32, "simt_f32", "CUDA-core fp32")   \
  X(TC_TF32, "tc_tf32", "tensor-core tf32")   \
  X(TC_F16, "tc_f16", "tensor-core f16/bf16") \
  X(TC_F8, "tc_f8", "tensor-core fp8")

typedef enum {
#define COMPUTE_PATH_ENUM_(name, key, label) PATH_##name,
  COMPUTE_PATHS(COMPUTE_PATH_ENUM_)
#undef COMPUTE_PATH_ENUM_
      PATH_COUNT
} compute_path;

/* "tc_f16" for PATH_TC_F16; "" outside the table. */
const char *compute_path_key(compute_path p);
/* "tensor-core f16/bf16"; "" outside the table. */
const char *compute_path_label(compute_path p);
/* The path of a key ("tc_f16"); -1 when it names none ("" included). */
int compute_path_parse(const char *key);

typedef struct gpu_spec {
  const char *key;               /* "h200": what --device model:h200 names */
  const char *name;              /* "NVIDIA H200 SXM" */
  const char *arch;              /* "sm_90" */
  int sm_count;                  /* multiprocessors */
  int boost_clock_mhz;           /* SM boost clock */
  size_t l2_bytes;               /* L2 cache */
  size_t memory_bytes;           /* DRAM */
  double dram_bw_spec;           /* bytes/s, datasheet */
  double dram_bw_achievable;     /* bytes/s a large device-to-device copy reaches (measured or,
                                  where unmeasured, 90 % of the datasheet) */
  double peak_flops[PATH_COUNT]; /* dense FLOP/s per path, datasheet */
  double mma_sync_fraction;      /* share of PATH_TC_F16 that mma.sync (not wgmma) reaches */
  double launch_overhead_s;      /* a kernel launch's fixed cost */
  const char *source;            /* where the numbers come from */
} gpu_spec;

/* NULL when unknown.  Names: "sm_80" or "80" (sm_90a maps to sm_90). */
const arch_spec *arch_spec_find(const char *name);
const arch_spec *arch_spec_for_cc(int cc);
/* Lookup by key ("h200"), case-insensitive; NULL when unknown. */
const gpu_spec *gpu_spec_find(const char *key);
/* The table, for listing: *count entries. */
const gpu_spec *gpu_spec_all(size_t *count);
/* Best match for a real GPU by its name and compute capability ("NVIDIA H200", 90): the
 * entry whose name the device name contains, else NULL. */
const gpu_spec *gpu_spec_match(const char *device_name, int cc);
/* The entry a recorded device name stands for ("NVIDIA GeForce RTX 2080 Ti", "NVIDIA
 * A100-PCIE-40GB"): the longest table name (without "NVIDIA ") the device name contains as a
 * whole name, i.e. followed by its end, '-', '(' or a blank and a digit ("RTX 2080" does not
 * stand for "RTX 2080 Ti" or "RTX 2080 SUPER"); NULL when none.  For files recorded elsewhere,
 * where no compute capability is known. */
const gpu_spec *gpu_spec_match_name(const char *device_name);
/* The first GPU of the table with architecture `arch` ("sm_90" or "sm_90a": h200), for
 * contexts that compile without a device but whose launch sizes read device.sm_count; NULL when
 * the table has none. */
const gpu_spec *gpu_spec_for_arch(const char *arch);
/* Sets the device facts expressions see (MANIFEST_DEVICE_FACTS of template/manifest.h)
 * from an architecture and, when gpu is non-NULL, the GPU (device.sm_count and device.l2_bytes
 * are set only then).  RT_ERR_INVALID without an architecture or when env is full. */
rt_status gpu_spec_env(const arch_spec *arch, const gpu_spec *gpu, rt_vars *env, rt_error *err);

/* "h200, h100, a100, l4": for error messages that list what exists. */
const char *gpu_spec_keys(void);

#endif
