/* sim_abi.h — what the sim's C launcher (sim/sim.c) and a configuration's shared object (the
 * template compiled as host C++ with sim/sim_cuda.hpp) hand each other: one launch in, one
 * outcome out, plain C structures so neither side needs the other's language.  The shared
 * object exports rt_sim_abi_version() (SIM_ABI_VERSION) and rt_sim_launch(); the tensor maps
 * the TMA twins read are sim_tensor_map, the arguments of cuTensorMapEncodeTiled stored in the
 * 128 bytes of a CUtensorMap. */
#ifndef ROOFTUNE_SIM_ABI_H
#define ROOFTUNE_SIM_ABI_H

#include <stddef.h>
#include <stdint.h>

#define SIM_ABI_VERSION 1

/* The order in which runnable threads (fibers) are resumed.  Every schedule completes an
 * asynchronous operation (cp.async group, TMA box, wgmma group) at the latest legal moment;
 * they differ in who runs first between two such moments. */
#define SIM_SCHEDULES(X)                                                                   \
  X(SIM_SCHED_ROUND_ROBIN, "round-robin", "each runnable thread once per round, in order") \
  X(SIM_SCHED_RANDOM, "random", "a seeded random order every round")                       \
  X(SIM_SCHED_PRODUCER_FIRST, "producer-first",                                            \
    "the lowest-numbered runnable thread first, again after every event")                  \
  X(SIM_SCHED_CONSUMER_FIRST, "consumer-first",                                            \
    "the highest-numbered runnable thread first, again after every event")
typedef enum {
#define SIM_SCHED_ENUM(e, name, what) e,
  SIM_SCHEDULES(SIM_SCHED_ENUM)
#undef SIM_SCHED_ENUM
      SIM_SCHED_COUNT
} sim_schedule;

/* Outcomes of a launch (sim_abi_result.status). */
enum {
  SIM_ABI_OK = 0,
  SIM_ABI_FAULT = 1,       /* a bad access the twins saw (shared memory, alignment, a map) */
  SIM_ABI_DEADLOCK = 2,    /* no thread can progress and nothing is in flight */
  SIM_ABI_UNSUPPORTED = 3, /* a mode of an instruction the twins do not emulate (named) */
  SIM_ABI_INVALID = 4      /* the launch itself (sizes, cluster shape) */
};

typedef struct sim_abi_launch {
  unsigned grid[3], block[3]; /* as cuLaunchKernel */
  unsigned cluster[3];        /* blocks per cluster (1,1,1 without clusters) */
  size_t shared_bytes;        /* dynamic shared memory of a block */
  void **params;              /* one pointer per kernel parameter, as kernelParams */
  int schedule;               /* sim_schedule */
  unsigned long long seed;    /* SIM_SCHED_RANDOM's seed */
  long long first_block;      /* run clusters from this block's on (0) ... */
  long long max_blocks;       /* ... and at most this many blocks (0: all) */
} sim_abi_launch;

typedef struct sim_abi_result {
  int status;           /* SIM_ABI_* */
  char message[4096];   /* what went wrong, with the block, threads and source lines */
  long long blocks_run; /* blocks that ran to completion */
  long long switches;   /* fiber switches (a measure of the schedule's work) */
} sim_abi_result;

typedef int (*sim_abi_version_fn)(void);
typedef int (*sim_abi_launch_fn)(const sim_abi_launch *launch, sim_abi_result *result);

/* A tensor map as the sim reads it: exactly the arguments of cuTensorMapEncodeTiled (the
 * CU_TENSOR_MAP_* enum values as ints), in the 128 bytes of a CUtensorMap. */
typedef struct sim_tensor_map {
  uint32_t magic;     /* SIM_TENSOR_MAP_MAGIC: a map the sim encoded */
  uint8_t data_type;  /* CUtensorMapDataType */
  uint8_t rank;       /* 1..5 */
  uint8_t interleave; /* CUtensorMapInterleave */
  uint8_t swizzle;    /* CUtensorMapSwizzle */
  uint8_t l2_promotion, oob_fill;
  uint8_t elem_strides[5]; /* elementStrides */
  uint64_t base;           /* globalAddress */
  uint64_t dims[5];        /* globalDim, innermost first */
  uint64_t strides[4];     /* globalStrides in bytes (dims 1..rank-1) */
  uint32_t box[5];         /* boxDim */
} sim_tensor_map;
#define SIM_TENSOR_MAP_MAGIC 0x51a7e3a9u
/* the CUtensorMap it lives in */
typedef char sim_tensor_map_fits[sizeof(sim_tensor_map) <= 128 ? 1 : -1];

#endif
