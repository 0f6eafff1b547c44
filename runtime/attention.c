/* attention.c — rooftune_attention: the tuned attention kernel served by the rules of
 * rooftune.h for this GPU, launched with the family's argument struct (kernels/attention.h:
 * attention_args), the TMA maps of TMA winners (attention_tma_maps) and the split-KV scratch of
 * split-KV winners (kept per context and stream); a tuned cuDNN plan, and cuDNN's own choice when
 * nothing tuned serves, through attention_library.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/attention.h"
#include "runtime/runtime.h"
#include "driver/cuda_driver.h"

int rooftune_attention_shape(const rooftune_attention_problem *a, char *buf, size_t size) {
  if (!a || !buf || !size)
    return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_attention_shape: NULL argument");
  buf[0] = '\0';
  const char *bad = !a->dtype                          ? "dtype is NULL"
                    : a->batch < 1                     ? "batch must be at least 1"
                    : a->heads_q < 1                   ? "heads_q must be at least 1"
                    : a->heads_kv < 0                  ? "heads_kv must be 0 (= heads_q) or more"
                    : a->seq_q < 1                     ? "seq_q must be at least 1"
                    : a->seq_kv < 0                    ? "seq_kv must be 0 (= seq_q) or more"
                    : a->head_dim < 1                  ? "head_dim must be at least 1"
                    : a->causal != 0 && a->causal != 1 ? "causal must be 0 or 1"
                    : a->page_size && a->page_size != 16 && a->page_size != 32 && a->page_size != 64
                        ? "page_size must be 0 (contiguous), 16, 32 or 64"
                        : NULL;
  if (bad) return rt_fail(ROOFTUNE_ERR_INVALID, "attention problem: %s", bad);
  const long long hkv = a->heads_kv ? a->heads_kv : a->heads_q,
                  skv = a->seq_kv ? a->seq_kv : a->seq_q;
  char text[160];
  int n = snprintf(text, sizeof text, "%lldx%lld", a->batch, a->heads_q);
  if (hkv != a->heads_q) n += snprintf(text + n, sizeof text - (size_t)n, ":%lld", hkv);
  n += snprintf(text + n, sizeof text - (size_t)n, "x%lld", a->seq_q);
  if (skv != a->seq_q) n += snprintf(text + n, sizeof text - (size_t)n, ":%lld", skv);
  n += snprintf(text + n, sizeof text - (size_t)n, "x%lld%s", a->head_dim,
                a->causal ? ":causal" : "");
  if (a->page_size) n += snprintf(text + n, sizeof text - (size_t)n, ":paged%d", a->page_size);
  if (n < 0 || (size_t)n >= sizeof text) /* never a shape cut short: another problem's */
    return rt_fail(ROOFTUNE_ERR_INVALID, "attention problem: its text is over %zu characters",
                   sizeof text - 1);
  static _Thread_local problem p;
  rt_error err = {0};
  if (attention_serving.parse_shape(&attention_serving, text, a->dtype, NULL, &p, &err)) {
    rt_fail_err(&err);
    return ROOFTUNE_ERR_INVALID;
  }
  if (strlen(p.shape) >= size)
    return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_attention_shape: buffer too small");
  rt_copy(buf, size, p.shape);
  return ROOFTUNE_OK;
}

/* Split-KV scratch per (context, stream): partials and the tickets (zero between launches: the
 * kernels leave them so). */
static pthread_mutex_t scratch_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  CUcontext ctx;
  void *stream;
  CUdeviceptr work, counters;
  size_t work_floats, counter_ints;
} scratch[16];

/* Scratch of at least work_floats and counter_ints on (ctx, stream); *temp = 1 when the table is
 * full and the caller frees both after the launch. */
static int scratch_get(CUcontext ctx, void *stream, size_t work_floats, size_t counter_ints,
                       CUdeviceptr *work, CUdeviceptr *counters, int *temp) {
  rt_error err = {0};
  *temp = 0;
  pthread_mutex_lock(&scratch_mu);
  int i;
  for (i = 0; i < 16 && scratch[i].ctx && !(scratch[i].ctx == ctx && scratch[i].stream == stream);
       i++) {}
  rt_status s = RT_OK;
  if (i == 16) { /* all taken: a scratch for this call only */
    *temp = 1;
    *work = *counters = 0;
    if (!(s = cuda_check(cu.cuMemAlloc_v2(work, work_floats * 4), "allocate split-KV partials",
                         &err)) &&
        !(s = cuda_check(cu.cuMemAlloc_v2(counters, counter_ints * 4), "allocate split-KV tickets",
                         &err)))
      s = cuda_check(cu.cuMemsetD32Async(*counters, 0, counter_ints, (CUstream)stream),
                     "zero the tickets", &err);
    pthread_mutex_unlock(&scratch_mu);
    if (s) {
      if (*work) cu.cuMemFree_v2(*work);
      if (*counters) cu.cuMemFree_v2(*counters);
      return rt_fail_err(&err);
    }
    return ROOFTUNE_OK;
  }
  scratch[i].ctx = ctx;
  scratch[i].stream = stream;
  if (scratch[i].work_floats < work_floats || scratch[i].counter_ints < counter_ints)
    cu.cuStreamSynchronize(
        (CUstream)stream); /* earlier launches on this stream may still read them */
  if (scratch[i].work_floats < work_floats) {
    if (scratch[i].work) cu.cuMemFree_v2(scratch[i].work);
    scratch[i].work = 0;
    scratch[i].work_floats = 0;
    if (!(s = cuda_check(cu.cuMemAlloc_v2(&scratch[i].work, work_floats * 4),
                         "allocate split-KV partials", &err)))
      scratch[i].work_floats = work_floats;
  }
  if (!s && scratch[i].counter_ints < counter_ints) {
    if (scratch[i].counters) cu.cuMemFree_v2(scratch[i].counters);
    scratch[i].counters = 0;
    scratch[i].counter_ints = 0;
    if (!(s = cuda_check(cu.cuMemAlloc_v2(&scratch[i].counters, counter_ints * 4),
                         "allocate split-KV tickets", &err)) &&
        !(s = cuda_check(
              cu.cuMemsetD32Async(scratch[i].counters, 0, counter_ints, (CUstream)stream),
              "zero the split-KV tickets", &err)))
      scratch[i].counter_ints = counter_ints;
  }
  *work = scratch[i].work;
  *counters = scratch[i].counters;
  pthread_mutex_unlock(&scratch_mu);
  return s ? rt_fail_err(&err) : ROOFTUNE_OK;
}

/* Runs served winner m; ROOFTUNE_OK, an error, or -1 with why when the call must fall back. */
static int run_tuned(rooftune_db *r, const rooftune_match *m, const problem *p,
                     const rooftune_attention_problem *a, CUcontext ctx, void *stream, char *why,
                     size_t size) {
  rt_error err = {0};
  rt_vars v;
  rt_vars_clear(&v);
  if (rt_vars_parse(&v, m->vars, &err)) {
    snprintf(why, size, "the winner's values do not read back: %.200s", err.text);
    return -1;
  }
  if (((uintptr_t)a->q | (uintptr_t)a->k | (uintptr_t)a->v | (uintptr_t)a->o) % 16) {
    snprintf(why, size,
             "the tuned kernel reads Q, K and V and writes O in 16-byte pieces: it needs them "
             "16-byte aligned, as the allocations it was tuned on were");
    return -1;
  }
  long long splits = 1, tma = 0;
  rt_vars_get(&v, "SPLITS", &splits);
  rt_vars_get(&v, "ATTN_TMA", &tma);
  attn_tma_maps maps;
  if (tma && attention_tma_maps(p, &v, (unsigned long long)(uintptr_t)a->q,
                                (unsigned long long)(uintptr_t)a->k,
                                (unsigned long long)(uintptr_t)a->v, &maps, &err)) {
    if (err.code != RT_ERR_UNSUPPORTED) return rt_fail_err(&err);
    snprintf(why, size, "the winner %.40s uses TMA, which cannot take these operands: %.150s",
             m->template_name, err.text);
    return -1;
  }
  CUdeviceptr work = 0, counters = 0;
  int temp = 0, rc;
  if (splits > 1 && (rc = scratch_get(ctx, stream, attention_work_floats(p, splits),
                                      (size_t)(problem_dim(p, "B") * problem_dim(p, "HKV")), &work,
                                      &counters, &temp)))
    return rc;
  attn_args args;
  attention_args(p, (uintptr_t)a->q, (uintptr_t)a->k, (uintptr_t)a->v, (uintptr_t)a->o,
                 (uintptr_t)a->lse, (uintptr_t)a->block_table, (uintptr_t)a->kv_lens, work,
                 counters, &args);
  if (a->page_size)
    args.num_pages = (int)a->num_pages; /* the caller's pool, not the tuned problem's */
  if (a->scale != 0) {
    args.scale = a->scale;
    args.scale_log2 = (float)(a->scale * 1.4426950408889634);
  }
  rooftune_kernel *k = NULL;
  int owned = 0;
  rc = rt_kernel_get(r, m, ctx, &k, &owned);
  if (!rc) {
    void *targs[] = {&maps, &args}, *plain[] = {&args};
    rc =
        rooftune_kernel_launch_geometry(k, m->grid, m->block, m->smem, stream, tma ? targs : plain);
  }
  if (owned || temp)
    cu.cuStreamSynchronize((CUstream)stream); /* what the launch reads must outlive it */
  if (owned) rooftune_kernel_free(k);
  if (temp) {
    cu.cuMemFree_v2(work);
    cu.cuMemFree_v2(counters);
  }
  return rc;
}

int rooftune_attention(rooftune_db *r, const rooftune_attention_problem *a, void *stream,
                       rooftune_info *info) {
  rooftune_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  char shape[160];
  int rc = rooftune_attention_shape(a, shape, sizeof shape);
  if (rc) return rc;
  if (!a->q || !a->k || !a->v || !a->o)
    return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_attention: q, k, v and o are required");
  if (a->page_size && (!a->block_table || a->num_pages < 1 || a->num_pages > 0x7fffffff))
    return rt_fail(
        ROOFTUNE_ERR_INVALID,
        "rooftune_attention: a paged problem needs block_table and num_pages (1..2^31-1)");
  CUcontext ctx = NULL;
  CUdevice dev = 0;
  char devname[128];
  if ((rc = rt_current(&ctx, &dev, devname, sizeof devname, "rooftune_attention"))) return rc;
  static _Thread_local problem p;
  rt_error err = {0};
  if (attention_serving.parse_shape(&attention_serving, shape, a->dtype, NULL, &p, &err))
    return rt_fail_err(&err);

  char why[512] = "no tuning database given";
  rooftune_match m;
  memset(&m, 0, sizeof m);
  if (r) {
    rooftune_query q = {.family = "attention",
                        .shape = shape,
                        .dtype = a->dtype,
                        .device = devname,
                        .flags = ROOFTUNE_RUNNABLE | rt_call_flags(r)};
    if ((rc = rooftune_lookup(r, &q, &m))) return rc;
    rt_copy(why, sizeof why, m.reason);
  }
  if (m.match != ROOFTUNE_MATCH_NONE) {
    rc = m.library_algo[0] ? rt_attention_library(&p, a, stream, m.library_algo, why, sizeof why,
                                                  info) /* a cuDNN plan */
                           : run_tuned(r, &m, &p, a, ctx, stream, why, sizeof why);
    if (rc == ROOFTUNE_OK) {
      rt_info_from_match(&m, info);
      return ROOFTUNE_OK;
    }
    if (rc > 0) return rc;
  }
  info->passed_count = m.passed_count;
  rt_copy(info->passed_over, sizeof info->passed_over, m.passed_over);
  return rt_attention_library(&p, a, stream, NULL, why, sizeof why, info);
}
