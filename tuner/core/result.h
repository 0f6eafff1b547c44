/* result.h — one candidate's result as it flows from a device through diagnosis and search
 * into the database: plain data, no behaviour.
 *
 * Every time says what it is (timing: measured on a named GPU, predicted by the model device,
 * or replayed from a file), and a failure is a status with its reason, never an abort.
 */
#ifndef ROOFTUNE_RESULT_H
#define ROOFTUNE_RESULT_H

#include "tuner/core/status.h"

typedef enum {
  TIMING_MEASURED = 0, /* timed on a real GPU (device_name says which) */
  TIMING_PREDICTED,    /* predicted by the model device */
  TIMING_REPLAYED      /* read from a recorded file */
} timing_kind;

/* "measured", "predicted", "replayed" */
const char *timing_kind_name(timing_kind t);
/* -1 when the name is none of those. */
int timing_kind_parse(const char *name);

/* What the compiler (ptxas) and the occupancy calculator say, before any run. */
typedef struct static_facts {
  int registers;        /* per thread */
  int smem_static;      /* bytes of __shared__ in the kernel */
  int smem_dynamic;     /* bytes asked for at launch (from the manifest) */
  int spill_stores;     /* bytes of local-memory spill stores */
  int spill_loads;      /* bytes of local-memory spill loads */
  int stack_bytes;      /* stack frame */
  int threads_per_block;
  int blocks_per_sm;    /* resident blocks per SM (occupancy calculator) */
  double occupancy;     /* resident warps / maximum warps, 0..1 */
  char limiter[16];     /* what caps blocks_per_sm: "registers", "smem", "threads", "blocks", "" */
  long long grid_blocks; /* blocks in the launch */
  long long work_blocks; /* blocks' worth of work (the manifest's launch.work) when a persistent
                            grid loops over more than one unit per block; 0: grid_blocks.  Not
                            stored in the database: the stored waves and tail already count it */
} static_facts;

/* The dominant limit of a candidate and the lever that moves it (see diagnose.h). */
typedef struct diagnosis {
  char limit[24];        /* "memory", "compute", "occupancy", "waves", "spills", "launch", "" */
  char lever[160];       /* "BLOCK_N+,BLOCK_M+": parameters to move and which way */
  char sentence[320];    /* one plain sentence for people */
  double achieved_flops; /* FLOP/s */
  double achieved_bw;    /* modeled DRAM bytes / s */
  double flops_frac;     /* achieved_flops / compute ceiling of the path in use */
  double bw_frac;        /* achieved_bw / bandwidth ceiling */
  double intensity;      /* FLOP per modeled DRAM byte */
  double ridge;          /* ceiling FLOP/s / ceiling bytes/s */
  double waves;          /* grid blocks / (SMs * resident blocks per SM) */
  double tail;           /* fraction of the last wave left idle, 0..1 */
} diagnosis;

typedef struct candidate_result {
  char template_name[64];  /* "gemm_mma", or "cublaslt" for library candidates */
  char config[768];        /* "BLOCK_M=128,BLOCK_N=64,...", or the algorithm's identity */
  rt_status status;        /* RT_OK, RT_ERR_COMPILE, RT_ERR_WRONG_RESULT, RT_ERR_CRASH, ... */
  char detail[256];        /* why it failed, or "" */
  timing_kind timing;      /* what the time is */
  char device_name[64];    /* the GPU measured on, "model:h200", or "replay:FILE" */
  double time_ms;          /* median */
  double spread;           /* (p90 - p10) / median over the repetitions; 0 when one value */
  int repetitions;         /* timed runs behind the median */
  double verify_error;     /* relative Frobenius error against the reference; -1 if not checked */
  double flops;            /* FLOPs of the problem */
  double dram_bytes;       /* modeled DRAM bytes for this config */
  static_facts facts;      /* compiler and occupancy facts */
  diagnosis diag;          /* dominant limit, lever, sentence */
} candidate_result;

#endif
