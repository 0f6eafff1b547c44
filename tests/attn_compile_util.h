/* attn_compile_util.h — shared by the attention tests that build spaces and compile (tests/unit,
 * tests/long): the problem facts an attention manifest sees, the space of a template for one
 * arch, dtype, head dim and mask, the complete source of one configuration, and the check of a
 * compile result.
 *
 * Until the host family exists (kernels/attention.c), acu_bind sets the problem facts of the
 * family brief itself; it is the one function to swap for the family's bind. */
#ifndef ROOFTUNE_ATTN_COMPILE_UTIL_H
#define ROOFTUNE_ATTN_COMPILE_UTIL_H

#include "compile/compile.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"
#include "test.h"

/* An attention problem (attn_abi.h). */
typedef struct acu_problem {
  int B, HQ, HKV, SQ, SKV, D; /* sequences, query heads, KV heads, queries, keys, head dim */
  int causal;                 /* 1: the bottom-right causal mask */
  int page_size;              /* tokens per page when paged, else 0 */
  int max_pages, num_pages;   /* block_table columns, pages in the pools (paged), else 0 */
  const int *kv_lens;         /* [B] keys per sequence, or NULL (all SKV) */
} acu_problem;

/* Keys query i of sequence b attends (kv keys in the sequence): the brief's mask, written here
 * once more so the facts do not come from the code they describe. */
static inline long long acu_row_keys(const acu_problem *p, int i, long long kv) {
  long long n = p->causal ? i + kv - p->SQ + 1 : kv;
  return n < 0 ? 0 : n > kv ? kv : n;
}

/* The family's problem facts into env (device and dtype facts are set apart):
 * B HQ HKV SQ SKV D causal group paged page_size max_pages num_pages ragged kv_tokens pairs
 * dtype_bytes.  pairs is exact: the (query, key) pairs one head attends, summed over b. */
static inline rt_status acu_bind(const acu_problem *p, rt_vars *env) {
  long long kv_tokens = 0, pairs = 0;
  for (int b = 0; b < p->B; b++) {
    const long long kv = p->kv_lens ? p->kv_lens[b] : p->SKV;
    kv_tokens += kv;
    if (!p->causal) {
      pairs += (long long)p->SQ * kv;
    } else {
      for (int i = 0; i < p->SQ; i++) pairs += acu_row_keys(p, i, kv);
    }
  }
  const struct {
    const char *name;
    long long v;
  } f[] = {
      {"B", p->B},
      {"HQ", p->HQ},
      {"HKV", p->HKV},
      {"SQ", p->SQ},
      {"SKV", p->SKV},
      {"D", p->D},
      {"causal", p->causal},
      {"group", p->HKV ? p->HQ / p->HKV : 0},
      {"paged", p->page_size > 0},
      {"page_size", p->page_size},
      {"max_pages", p->max_pages},
      {"num_pages", p->num_pages},
      {"ragged", p->kv_lens != NULL},
      {"kv_tokens", kv_tokens},
      {"pairs", pairs},
      {"dtype_bytes", 2},
  };
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    rt_status st = rt_vars_set(env, f[i].name, f[i].v);
    if (st) return st;
  }
  return RT_OK;
}

/* One (template, arch, dtype, head dim, mask) combination. */
typedef struct acu_variant {
  const char *tmpl;  /* "attn_mma", "attn_reference" */
  const char *arch;  /* "sm_80", "sm_90" */
  const char *dtype; /* "f16", "bf16" */
  int D;             /* 64, 128, 256 */
  int causal;        /* 0, 1 */
} acu_variant;

/* The default problem of the compile tests: B=2, HQ=32, HKV=8, SQ=SKV=4096 (the compiled source
 * does not depend on the shape; D and the mask pick the HEAD_DIM and IS_CAUSAL variants). */
static inline acu_problem acu_default_problem(int D, int causal) {
  acu_problem p = {2, 32, 8, 4096, 4096, D, causal, 0, 0, 0, NULL};
  return p;
}

/* Env for a problem on an arch with a dtype: device facts (the arch's spec GPU), dtype facts and
 * the problem facts. */
static inline rt_status acu_env(const acu_problem *p, const char *arch, const char *dtype,
                                rt_vars *env, rt_error *err) {
  rt_status st;
  rt_vars_clear(env);
  if ((st = gpu_spec_env(arch_spec_find(arch), gpu_spec_for_arch(arch), env, err)) ||
      (st = manifest_env_dtype(dtype, env, err)) || (st = acu_bind(p, env)))
    return st;
  return RT_OK;
}

static inline rt_status acu_load(const char *tmpl, manifest **m, rt_error *err) {
  char path[1024];
  snprintf(path, sizeof path, "%s/templates/attention/%s.json", test_source_dir(), tmpl);
  return manifest_load(path, m, err);
}

/* Loads the variant's manifest and builds its space for the default problem. */
static inline rt_status acu_space(const acu_variant *v, manifest **m, space **sp, rt_vars *env,
                                  rt_error *err) {
  rt_status st = acu_load(v->tmpl, m, err);
  if (st) return st;
  const acu_problem p = acu_default_problem(v->D, v->causal);
  if ((st = acu_env(&p, v->arch, v->dtype, env, err)) ||
      (st = manifest_build_space(*m, env, sp, err))) {
    manifest_free(*m);
    *m = NULL;
    return st;
  }
  return RT_OK;
}

/* The complete source text of configuration idx (malloc'ed). */
static inline char *acu_source(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                               const char *dtype, rt_error *err) {
  char *text = NULL;
  manifest_config_source(m, sp, idx, env, dtype, NULL, &text, err);
  return text;
}

static inline void acu_options(const acu_variant *v, const manifest *m, compile_options *opt) {
  manifest_compile_options(m, v->arch, opt);
  opt->want_ptx = 1;
}

/* Checks one compile result: compiled, ptxas report found, no spills, at most 255 registers,
 * and the template's instructions in the PTX (attn_mma: mma.sync m16n8k16 of its dtype,
 * ldmatrix .x4 and .x4.trans, cp.async with zero fill, ex2.approx; the reference: fp32 fmas and
 * no tensor-core instruction).  Returns 1 when all hold. */
static inline int acu_check(const acu_variant *v, const char *config, const compile_result *r) {
  int ok = r->status == RT_OK && r->report.found && r->report.spill_stores == 0 &&
           r->report.spill_loads == 0 && r->report.registers <= 255;
  const char *missing = NULL;
  if (ok && !r->ptx) missing = "the PTX";
  if (ok && r->ptx && !strcmp(v->tmpl, "attn_mma")) {
    static const char *const need_f16[] = {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
                                           "cvt.rn.f16x2.f32", NULL};
    static const char *const need_bf16[] = {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                                            "cvt.rn.bf16x2.f32", NULL};
    static const char *const need[] = {"ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                                       "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
                                       "cp.async.cg.shared.global",
                                       "cp.async.wait_group",
                                       "ex2.approx.ftz.f32",
                                       NULL};
    const char *const *dt = !strcmp(v->dtype, "bf16") ? need_bf16 : need_f16;
    for (int i = 0; dt[i] && !missing; i++)
      if (!strstr(r->ptx, dt[i])) missing = dt[i];
    for (int i = 0; need[i] && !missing; i++)
      if (!strstr(r->ptx, need[i])) missing = need[i];
  } else if (ok && r->ptx) {
    if (!strstr(r->ptx, "fma.rn.f32"))
      missing = "fma.rn.f32";
    else if (strstr(r->ptx, "mma.sync"))
      missing = "no mma.sync (found one)";
  }
  if (missing) ok = 0;
  if (!ok)
    fprintf(stderr, "%s %s %s D=%d causal=%d [%s]: status %d %s, %d registers, spills %d/%d%s%s\n",
            v->tmpl, v->arch, v->dtype, v->D, v->causal, config, r->status, r->message,
            r->report.registers, r->report.spill_stores, r->report.spill_loads,
            missing ? ", PTX lacks " : "", missing ? missing : "");
  return ok;
}

#endif
