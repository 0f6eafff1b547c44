/* result.h — one candidate's result as it flows from a device through diagnosis and search
 * into the database: plain data, no behaviour.
 *
 * Every time says what it is (timing: measured on a named GPU, predicted by the model device,
 * or replayed from a file), and a failure is a status with its reason, never an abort.
 */
#ifndef ROOFTUNE_RESULT_H
#define ROOFTUNE_RESULT_H

#include "core/status.h"

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
  int registers;    /* per thread */
  int smem_static;  /* bytes of __shared__ in the kernel */
  int smem_dynamic; /* bytes asked for at launch (from the manifest) */
  int spill_stores; /* bytes of local-memory spill stores */
  int spill_loads;  /* bytes of local-memory spill loads */
  int stack_bytes;  /* stack frame */
  int threads_per_block;
  int blocks_per_sm;     /* resident blocks per SM (occupancy calculator) */
  double occupancy;      /* resident warps / maximum warps, 0..1 */
  char limiter[16];      /* what caps blocks_per_sm: "registers", "smem", "threads", "blocks", "" */
  long long grid_blocks; /* blocks in the launch */
  long long work_blocks; /* blocks' worth of work (the manifest's launch.work) when a persistent
                            grid loops over more than one unit per block; 0: grid_blocks.  Not
                            stored in the database: the stored waves and tail already count it */
} static_facts;

/* The dominant limit of a candidate and the lever that moves it (see diagnose.h). */
typedef struct diagnosis {
  char limit[24];        /* "memory", "compute", "occupancy", "waves", "spills", "launch", "" */
  char lever[160];       /* "BLOCK_N+,BLOCK_M+": parameters to move and which way; each names a
                            move that lands on a valid configuration of the space */
  char move[160];        /* the configurations the lever proposes, as the changed values, one per
                            lever item: "BLOCK_N=256,BLOCK_M=256" (BLOCK_N+ moves BLOCK_N to
                            256, every other value kept); "" when the diagnosis had no space */
  char sentence[320];    /* one plain sentence for people */
  double achieved_flops; /* FLOP/s */
  double achieved_bw;    /* modeled DRAM bytes / s */
  double flops_frac;     /* achieved_flops / compute ceiling of the path in use */
  double bw_frac;        /* achieved_bw / bandwidth ceiling */
  double intensity;      /* FLOP per modeled DRAM byte */
  double ridge;          /* ceiling FLOP/s / ceiling bytes/s */
  double waves;          /* grid blocks / (SMs * resident blocks per SM) */
  double tail;           /* fraction of the last wave left idle, 0..1 */
  char basis[64];        /* the facts read from the GPU's counters, "dram,l2,occupancy,stalls";
                            "" when every fact but the time is modelled (cost formula bytes,
                            calculated occupancy) */
} diagnosis;

/* Hardware counters of one run of a candidate, read with CUPTI's range profiler after its
 * timing (driver/cupti.h); all 0 with measured = 0 when none were read. */
typedef struct hw_counters {
  int measured;            /* 1: read from the GPU's counters */
  double dram_read_bytes;  /* dram__bytes_read.sum */
  double dram_write_bytes; /* dram__bytes_write.sum */
  double l2_bytes;         /* lts__t_bytes.sum: every byte the L2 slices served or took */
  double occupancy;        /* achieved: sm__warps_active.avg.pct_of_peak_sustained_active, 0..1 */
  double tensor_pipe;   /* sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active, 0..1 */
  double fma_pipe;      /* sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active, 0..1 */
  double sm_throughput; /* sm__throughput.avg.pct_of_peak_sustained_elapsed, 0..1 */
  double duration_ms;   /* gpu__time_duration.sum of the profiled run (no L2 flush before it) */
  char stalls[96];      /* the top warp-stall reasons with their share of all stalled warp
                              cycles, largest first: "long_scoreboard:0.41,barrier:0.22,wait:0.11" */
  /* What recordings made by other tuners carry beside the above (template/ktfile.h maps
   * KTT's Nsight Compute metrics onto them); not stored in the database (no RESULT_COLUMNS
   * row), 0 when unknown. */
  double local_bytes;       /* local-memory traffic, loads and stores (spills, stack arrays) */
  double shared_wavefronts; /* shared-memory wavefronts, loads and stores */
  double fp32_inst;    /* fp32 instructions executed, per thread (FADD, FMUL, FFMA: one each) */
  double issue_active; /* fraction of cycles a warp scheduler issued an instruction, 0..1 */
  double sm_active;    /* fraction of the elapsed cycles the SMs had a warp, 0..1 */
  double xu_pipe;      /* special-function (XU: rsqrt, sin, ...) pipe, fraction of peak, 0..1 */
  double lsu_pipe;     /* load/store pipe, fraction of peak, 0..1 */
} hw_counters;

/* How a fresh evaluation was cut short: the loop counts these from the field, never from the
 * wording of a result's detail. */
typedef enum result_shortcut {
  RESULT_FULL = 0,      /* measured (or predicted, or failed) in full */
  RESULT_SAME_CUBIN,    /* the result of an identical cubin and launch this run evaluated */
  RESULT_STOPPED_EARLY, /* timing stopped after the first runs: every one far over the best */
} result_shortcut;

typedef struct candidate_result {
  char template_name[64];   /* "gemm_mma", or "cublaslt" for library candidates */
  char config[768];         /* "BLOCK_M=128,BLOCK_N=64,...", or the algorithm's identity */
  char code_hash[65];       /* what was run: a digest of the compiled source, NVRTC options and
                              toolkit, the launch geometry and, for a time that is not measured,
                              the cost it was predicted from; "" for library and replayed
                              candidates.  Resume matches results by it, so a manifest edit that
                              leaves a configuration's code alone keeps its timing */
  rt_status status;         /* RT_OK, RT_ERR_COMPILE, RT_ERR_WRONG_RESULT, RT_ERR_CRASH, ... */
  char detail[256];         /* why it failed, or "" */
  timing_kind timing;       /* what the time is */
  char device_name[64];     /* the GPU measured on, "model:h200", or "replay:FILE" */
  double time_ms;           /* median */
  double spread;            /* (p90 - p10) / median over the repetitions; 0 when one value */
  int repetitions;          /* timed runs behind the median */
  double verify_error;      /* relative Frobenius error against the reference; -1 if not checked */
  int verified;             /* 1: the output was checked against the family's reference on the GPU
                              that measured it, and the check passed (only a measuring device sets
                              it); 0: no check passed (predicted, replayed, imported, failed) */
  char checked_on[4];       /* where its output was checked against the reference and passed:
                               "gpu" (verified), "sim" (computed on the CPU by the sim device,
                               never verified), "" not checked (null in JSON) */
  double flops;             /* FLOPs of the problem */
  double dram_bytes;        /* modeled DRAM bytes for this config */
  static_facts facts;       /* compiler and occupancy facts */
  diagnosis diag;           /* dominant limit, lever, sentence */
  char precision[8];        /* what the candidate computed in: "fp32" (fp32 products), "tf32"
                              (fp32 inputs rounded to tf32 for tensor-core products), "f16",
                              "bf16" (products of those inputs, fp32 accumulation); "" unknown */
  char path[12];            /* the instruction path it computed on, whose peak is its compute
                              roof: "simt_f32", "tc_tf32", "tc_f16", "tc_f8" (compute_path_key of
                              model/gpu_spec.h); "" unknown (stored before schema 7) */
  hw_counters counters;     /* measured counters (the best few candidates on a GPU) */
  char verdict[512];        /* a winner's "why this wins" (and tie) sentence; "" for the others */
  double saved_s;           /* GPU seconds this evaluation did not spend (stopped early, or the
                              result of an identical cubin reused); not stored in the database */
  result_shortcut shortcut; /* how this evaluation was cut short, if it was (detail says it in
                               words); not stored in the database */
} candidate_result;

/* Every stored field of a candidate_result, once: the database's result columns, their bind and
 * read code, the merge's column lists and the JSON/CSV export rows are all generated from it
 * (db/db.c, db/export.c), and `db check` compares it with a file's real columns.
 *   FIRST(column, json, kind, member, group) for the first field, REST(...) for the others:
 *   column  the SQL column of the results table
 *   json    its name in an export row (inside the group's object, or at the top for "")
 *   kind    TEXT (char array), REAL (double), INT (int), INT64 (long long), BOOL (int, 0 or 1;
 *           a JSON boolean in exports), STATUS (rt_status, stored by name), TIMING (timing_kind,
 *           stored by name)
 *   member  the field of candidate_result
 *   group   "" (the row itself), "static_facts", "diagnosis" or "counters" */
#define RESULT_COLUMNS(FIRST, REST)                                                        \
  FIRST(config, config, TEXT, config, "")                                                  \
  REST(status, status, STATUS, status, "")                                                 \
  REST(detail, detail, TEXT, detail, "")                                                   \
  REST(timing, timing, TIMING, timing, "")                                                 \
  REST(time_ms, time_ms, REAL, time_ms, "")                                                \
  REST(spread, spread, REAL, spread, "")                                                   \
  REST(repetitions, repetitions, INT, repetitions, "")                                     \
  REST(verify_error, verify_error, REAL, verify_error, "")                                 \
  REST(flops, flops, REAL, flops, "")                                                      \
  REST(dram_bytes, dram_bytes, REAL, dram_bytes, "")                                       \
  REST(registers, registers, INT, facts.registers, "static_facts")                         \
  REST(smem_static, smem_static, INT, facts.smem_static, "static_facts")                   \
  REST(smem_dynamic, smem_dynamic, INT, facts.smem_dynamic, "static_facts")                \
  REST(spill_stores, spill_stores, INT, facts.spill_stores, "static_facts")                \
  REST(spill_loads, spill_loads, INT, facts.spill_loads, "static_facts")                   \
  REST(stack_bytes, stack_bytes, INT, facts.stack_bytes, "static_facts")                   \
  REST(threads_per_block, threads_per_block, INT, facts.threads_per_block, "static_facts") \
  REST(blocks_per_sm, blocks_per_sm, INT, facts.blocks_per_sm, "static_facts")             \
  REST(occupancy, occupancy, REAL, facts.occupancy, "static_facts")                        \
  REST(limiter, limiter, TEXT, facts.limiter, "static_facts")                              \
  REST(grid_blocks, grid_blocks, INT64, facts.grid_blocks, "static_facts")                 \
  REST(diag_limit, limit, TEXT, diag.limit, "diagnosis")                                   \
  REST(diag_lever, lever, TEXT, diag.lever, "diagnosis")                                   \
  REST(diag_sentence, sentence, TEXT, diag.sentence, "diagnosis")                          \
  REST(achieved_flops, achieved_flops, REAL, diag.achieved_flops, "diagnosis")             \
  REST(achieved_bw, achieved_bw, REAL, diag.achieved_bw, "diagnosis")                      \
  REST(flops_frac, flops_frac, REAL, diag.flops_frac, "diagnosis")                         \
  REST(bw_frac, bw_frac, REAL, diag.bw_frac, "diagnosis")                                  \
  REST(intensity, intensity, REAL, diag.intensity, "diagnosis")                            \
  REST(ridge, ridge, REAL, diag.ridge, "diagnosis")                                        \
  REST(waves, waves, REAL, diag.waves, "diagnosis")                                        \
  REST(tail, tail, REAL, diag.tail, "diagnosis")                                           \
  REST(code_hash, code_hash, TEXT, code_hash, "")                                          \
  REST(precision, precision, TEXT, precision, "")                                          \
  REST(diag_move, move, TEXT, diag.move, "diagnosis")                                      \
  REST(diag_basis, basis, TEXT, diag.basis, "diagnosis")                                   \
  REST(verdict, verdict, TEXT, verdict, "")                                                \
  REST(ctr_measured, measured, INT, counters.measured, "counters")                         \
  REST(ctr_dram_read, dram_read_bytes, REAL, counters.dram_read_bytes, "counters")         \
  REST(ctr_dram_write, dram_write_bytes, REAL, counters.dram_write_bytes, "counters")      \
  REST(ctr_l2_bytes, l2_bytes, REAL, counters.l2_bytes, "counters")                        \
  REST(ctr_occupancy, occupancy, REAL, counters.occupancy, "counters")                     \
  REST(ctr_tensor_pipe, tensor_pipe, REAL, counters.tensor_pipe, "counters")               \
  REST(ctr_fma_pipe, fma_pipe, REAL, counters.fma_pipe, "counters")                        \
  REST(ctr_sm_throughput, sm_throughput, REAL, counters.sm_throughput, "counters")         \
  REST(ctr_duration_ms, duration_ms, REAL, counters.duration_ms, "counters")               \
  REST(ctr_stalls, stalls, TEXT, counters.stalls, "counters")                              \
  REST(verified, verified, BOOL, verified, "")                                             \
  REST(path, path, TEXT, path, "")                                                         \
  REST(checked_on, checked_on, TEXT, checked_on, "")

#endif
