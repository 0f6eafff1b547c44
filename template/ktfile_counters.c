/* ktfile_counters.c — what a KTT result records beside its time: the Nsight Compute metrics
 * (ProfilingData.Counters) mapped onto rooftune's hardware counters by one table, and the
 * compiler's and launch's facts (CompilationData, LocalSize, GlobalSize). */
#include "template/ktfile_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The one table: every metric KTT 2.1's profile-based searcher collects on Turing and later
 * (the 33 of ../shared/data/spaces/ktt_*.json.gz), and the metrics rooftune's own profiler reads
 * (driver/cupti.h), so a recording made with either replays with counters.  A sector is
 * 32 bytes; percentages become fractions.  Several rows may feed one field (reads + writes). */
#define KT_MAP(metric, member, scale) \
  { {metric, #member, scale, NULL}, offsetof(hw_counters, member) }
#define KT_SKIP(metric, why) \
  { {metric, NULL, 0, why}, 0 }
static const struct ktfile_metric_row {
  ktfile_metric m;
  size_t offset; /* of the double it feeds in hw_counters */
} ktfile_metrics[] = {
    KT_MAP("dram__sectors_read.sum", dram_read_bytes, 32.0),
    KT_MAP("dram__sectors_write.sum", dram_write_bytes, 32.0),
    KT_MAP("lts__t_sectors_op_read.sum", l2_bytes, 32.0),
    KT_MAP("lts__t_sectors_op_write.sum", l2_bytes, 32.0),
    KT_MAP("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", local_bytes, 32.0),
    KT_MAP("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", local_bytes, 32.0),
    KT_MAP("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", shared_wavefronts, 1.0),
    KT_MAP("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", shared_wavefronts, 1.0),
    KT_MAP("sm__warps_active.avg.pct_of_peak_sustained_active", occupancy, 0.01),
    KT_MAP("smsp__cycles_active.avg.pct_of_peak_sustained_elapsed", sm_active, 0.01),
    KT_MAP("smsp__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", fma_pipe, 0.01),
    KT_MAP("smsp__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", xu_pipe, 0.01),
    KT_MAP("smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", lsu_pipe, 0.01),
    KT_MAP("smsp__issue_active.avg.pct_of_peak_sustained_active", issue_active, 0.01),
    KT_MAP("smsp__sass_thread_inst_executed_op_fp32_pred_on.sum", fp32_inst, 1.0),
    /* rooftune's own metric names (cupti.h) */
    KT_MAP("dram__bytes_read.sum", dram_read_bytes, 1.0),
    KT_MAP("dram__bytes_write.sum", dram_write_bytes, 1.0),
    KT_MAP("lts__t_bytes.sum", l2_bytes, 1.0),
    KT_MAP("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", fma_pipe, 0.01),
    KT_MAP("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", tensor_pipe, 0.01),
    KT_MAP("sm__throughput.avg.pct_of_peak_sustained_elapsed", sm_throughput, 0.01),
    KT_MAP("gpu__time_duration.sum", duration_ms, 1e-6),
    /* recorded and not used, with what stands for each */
    KT_SKIP("dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "the DRAM bytes over the time, against the GPU's bandwidth"),
    KT_SKIP("lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
            "the L2 bytes over the time, against the L2 roof"),
    KT_SKIP("l1tex__t_requests_pipe_lsu_mem_global_op_ld.avg.pct_of_peak_sustained_active",
            "L1 request rate: rooftune holds no L1 roof"),
    KT_SKIP("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            "requests, not bytes: the L2 "
            "and DRAM sectors count the traffic"),
    KT_SKIP("l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
            "the shared-memory wavefronts count that traffic"),
    KT_SKIP("smsp__sass_thread_inst_executed_op_fp16_pred_on.sum",
            "foreign kernels are held against the fp32 SIMT roof"),
    KT_SKIP("smsp__sass_thread_inst_executed_op_fp64_pred_on.sum",
            "the spec table holds no fp64 roof"),
    KT_SKIP("smsp__sass_thread_inst_executed_op_integer_pred_on.sum", "instruction mix: no roof"),
    KT_SKIP("smsp__sass_thread_inst_executed_op_control_pred_on.sum", "instruction mix: no roof"),
    KT_SKIP("smsp__sass_thread_inst_executed_op_memory_pred_on.sum", "instruction mix: no roof"),
    KT_SKIP("smsp__sass_thread_inst_executed_op_misc_pred_on.sum", "instruction mix: no roof"),
    KT_SKIP("smsp__sass_thread_inst_executed_op_conversion_pred_on.sum",
            "instruction mix: no roof"),
    KT_SKIP("smsp__inst_executed.sum", "issue_active says how busy issue is"),
    KT_SKIP("smsp__inst_executed_pipe_fp16.sum",
            "foreign kernels are held against the fp32 SIMT roof"),
    KT_SKIP("smsp__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active",
            "the spec table holds no fp64 roof"),
    KT_SKIP("smsp__inst_executed_pipe_tex.avg.pct_of_peak_sustained_active",
            "texture pipe: no roof"),
    KT_SKIP("smsp__thread_inst_executed_per_inst_executed.ratio", "divergence: no roof"),
    KT_SKIP("smsp__thread_inst_executed_per_inst_executed.pct", "divergence: no roof"),
};
#undef KT_MAP
#undef KT_SKIP
#define KTFILE_NMETRICS (sizeof ktfile_metrics / sizeof ktfile_metrics[0])

const ktfile_metric *ktfile_metric_find(const char *name) {
  for (size_t i = 0; name && i < KTFILE_NMETRICS; i++)
    if (strcmp(ktfile_metrics[i].m.name, name) == 0) return &ktfile_metrics[i].m;
  return NULL;
}

const ktfile_metric *ktfile_metric_table(size_t *count) {
  static ktfile_metric plain[KTFILE_NMETRICS];
  if (!plain[0].name)
    for (size_t i = 0; i < KTFILE_NMETRICS; i++) plain[i] = ktfile_metrics[i].m;
  *count = KTFILE_NMETRICS;
  return plain;
}

int ktfile_metric_apply(const ktfile_metric *m, double value, hw_counters *out) {
  for (size_t i = 0; m && i < KTFILE_NMETRICS; i++)
    if (strcmp(ktfile_metrics[i].m.name, m->name) == 0) {
      if (!ktfile_metrics[i].m.field) return 0;
      double *f = (double *)((char *)out + ktfile_metrics[i].offset);
      *f += value * ktfile_metrics[i].m.scale;
      out->measured = 1;
      return 1;
    }
  return 0;
}

/* Nsight Compute's percentages of a peak sustained over the elapsed cycles come a little over
 * 100 (100.18 in a recorded convolution on an RTX 2080 Ti): beyond this one is no measurement. */
#define KTFILE_PCT_MAX 110.0

/* A counter's value within what a GPU can count: a percentage (scale 0.01, or ".pct" in its
 * name) at most KTFILE_PCT_MAX, anything else finite once scaled
 * (1e308 sectors are no bytes).  Rates against the GPU's peaks need its time and spec: the
 * replay device checks those (device_replay.c). */
static rt_status ktfile_metric_check(const ktfile_metric *m, const char *name, double value,
                                     const char *what, rt_error *err) {
  int pct = (m && m->field && m->scale == 0.01) || strstr(name, ".pct") != NULL;
  if (pct && value > KTFILE_PCT_MAX)
    return rt_error_set(err, RT_ERR_PARSE,
                        "%s: counter %.120s is %g %%, over the 100 %% of a peak a GPU can reach "
                        "(%g %% with Nsight Compute's rounding)",
                        what, name, value, KTFILE_PCT_MAX);
  if (m && m->field && !isfinite(value * m->scale))
    return rt_error_set(err, RT_ERR_PARSE, "%s: counter %.120s is %g, beyond any GPU's count", what,
                        name, value);
  return RT_OK;
}

/* A whole number >= 0 (at most lim) from obj[key]; -1 when absent, -2 when not such a number. */
static long long ktfile_count(const json_t *obj, const char *key, long long lim) {
  json_t *v = json_object_get(obj, key);
  if (!v) return -1;
  double d = json_is_number(v) ? json_number_value(v) : -1;
  if (!(d >= 0) || d != floor(d) || d > (double)lim) return -2;
  return (long long)d;
}

/* The product of a {X, Y, Z} size (each 1..2^31-1); -1 when absent, -2 when malformed. */
static long long ktfile_size3(const json_t *obj, const char *key) {
  json_t *s = json_object_get(obj, key);
  if (!s) return -1;
  if (!json_is_object(s)) return -2;
  long long p = 1;
  static const char *const axes[] = {"X", "Y", "Z"};
  for (int a = 0; a < 3; a++) {
    long long v = ktfile_count(s, axes[a], 2147483647LL);
    if (v == -1) continue; /* a missing axis is 1 */
    if (v < 1) return -2;
    p *= v;
    if (p > (1LL << 62) / 2147483647LL) return -2;
  }
  return p;
}

rt_status ktfile_ktt_record(const json_t *comp, const char *what, int grid_in_blocks,
                            hw_counters *ctr, static_facts *facts, rt_error *err) {
  memset(ctr, 0, sizeof *ctr);
  memset(facts, 0, sizeof *facts);
  json_t *prof = json_object_get(comp, "ProfilingData");
  json_t *list = prof ? json_object_get(prof, "Counters") : NULL;
  if (prof && list && !json_is_array(list))
    return rt_error_set(err, RT_ERR_PARSE, "%s: ProfilingData.Counters is not a list", what);
  for (size_t i = 0; list && i < json_array_size(list); i++) {
    json_t *c = json_array_get(list, i);
    const char *name = json_string_value(json_object_get(c, "Name"));
    json_t *v = json_object_get(c, "Value");
    if (!name)
      return rt_error_set(err, RT_ERR_PARSE, "%s: ProfilingData.Counters[%zu] has no Name", what,
                          i);
    double d = json_is_number(v) ? json_number_value(v) : -1;
    if (!(d >= 0) || !isfinite(d))
      return rt_error_set(err, RT_ERR_PARSE,
                          "%s: counter %.120s has no Value that is a number >= 0", what, name);
    rt_status rc = ktfile_metric_check(ktfile_metric_find(name), name, d, what, err);
    if (rc) return rc;
    ktfile_metric_apply(ktfile_metric_find(name), d, ctr);
  }
  json_t *cd = json_object_get(comp, "CompilationData");
  long long threads = ktfile_size3(comp, "LocalSize"), grid = ktfile_size3(comp, "GlobalSize");
  if (threads == -2 || grid == -2)
    return rt_error_set(err, RT_ERR_PARSE, "%s: %s is not {X, Y, Z} of whole numbers >= 1", what,
                        threads == -2 ? "LocalSize" : "GlobalSize");
  if (!cd) return RT_OK;
  long long regs = ktfile_count(cd, "RegistersCount", 65536);
  long long smem = ktfile_count(cd, "LocalMemorySize", 1 << 30);
  long long local = ktfile_count(cd, "PrivateMemorySize", 1 << 30);
  if (regs == -2 || smem == -2 || local == -2)
    return rt_error_set(err, RT_ERR_PARSE, "%s: CompilationData.%s is not a whole number >= 0",
                        what,
                        regs == -2   ? "RegistersCount"
                        : smem == -2 ? "LocalMemorySize"
                                     : "PrivateMemorySize");
  if (threads < 1 || threads > 1 << 20 || regs < 0) return RT_OK; /* no block: no facts to use */
  facts->threads_per_block = (int)threads;
  facts->registers = (int)regs;
  facts->smem_static = smem > 0 ? (int)smem : 0;
  facts->stack_bytes = local > 0 ? (int)local : 0;
  if (grid > 0) facts->grid_blocks = grid_in_blocks ? grid : (grid + threads - 1) / threads;
  return RT_OK;
}
