/* attention_tma.c — the TMA tensor maps of the attention family's TMA templates (attention.h):
 * the plan of attn_tma.h for a problem and a configuration's box sizes, and its encoding with
 * cuTensorMapEncodeTiled.  Apart from attention.c so the runtime library can take it alone. */
#include <stdint.h>
#include <string.h>

#include "kernels/attention.h"
#include "tuner/driver/cuda_driver.h"

rt_status attention_tma_plan(const problem *p, const rt_vars *config, unsigned long long q,
                             unsigned long long k, unsigned long long v,
                             attn_tma_params out[ATTN_TMA_OPERANDS], rt_error *err) {
  long long inner = 0, rq = 0, rkv = 0;
  if (!rt_vars_get(config, "TMA_INNER", &inner) || !rt_vars_get(config, "TMA_ROWS_Q", &rq) ||
      !rt_vars_get(config, "TMA_ROWS_KV", &rkv))
    return rt_error_set(err, RT_ERR_INVALID,
                        "a TMA attention template needs TMA_INNER, TMA_ROWS_Q and TMA_ROWS_KV");
  attn_tma_problem tp = {problem_dim(p, "B"), problem_dim(p, "HQ"), problem_dim(p, "HKV"),
                         problem_dim(p, "SQ"), problem_dim(p, "SKV"), problem_dim(p, "D"),
                         strcmp(p->dtype, "f16") && strcmp(p->dtype, "bf16") ? 4 : 2,
                         strcmp(p->dtype, "bf16") == 0, q, k, v};
  attn_tma_box box = {inner, rq, rkv};
  int bad = -1, rc = attn_tma_plan(&tp, &box, out, &bad);
  if (rc)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "TMA cannot map %s: %s",
                        bad == ATTN_TMA_Q ? "Q" : bad == ATTN_TMA_K ? "K" : bad == ATTN_TMA_V ? "V" : "the problem",
                        attn_tma_strerror(rc));
  return RT_OK;
}

rt_status attention_tma_maps(const problem *p, const rt_vars *config, unsigned long long q,
                             unsigned long long k, unsigned long long v, attn_tma_maps *maps,
                             rt_error *err) {
  attn_tma_params prm[ATTN_TMA_OPERANDS];
  rt_status st = attention_tma_plan(p, config, q, k, v, prm, err);
  if (st) return st;
  if (!cu.cuTensorMapEncodeTiled)
    return rt_error_set(err, RT_ERR_NO_DRIVER, "TMA maps need the CUDA driver (cuTensorMapEncodeTiled)");
  attn_tma_map *dst[ATTN_TMA_OPERANDS] = {&maps->q, &maps->k, &maps->v};
  for (int o = 0; o < ATTN_TMA_OPERANDS; o++) {
    CUtensorMap m;
    cuuint64_t dims[4], strides[3];
    cuuint32_t boxd[4], es[4];
    for (int i = 0; i < 4; i++) {
      dims[i] = prm[o].dims[i];
      boxd[i] = prm[o].box[i];
      es[i] = prm[o].elem_strides[i];
    }
    for (int i = 0; i < 3; i++) strides[i] = prm[o].strides[i];
    st = cuda_check(cu.cuTensorMapEncodeTiled(&m, (CUtensorMapDataType)prm[o].type, prm[o].rank,
                                              (void *)(uintptr_t)prm[o].base, dims, strides, boxd, es,
                                              (CUtensorMapInterleave)prm[o].interleave,
                                              (CUtensorMapSwizzle)prm[o].swizzle,
                                              (CUtensorMapL2promotion)prm[o].l2,
                                              (CUtensorMapFloatOOBfill)prm[o].oob),
                    "cuTensorMapEncodeTiled", err);
    if (st) return st;
    memcpy(dst[o], &m, sizeof *dst[o]);
  }
  return RT_OK;
}
