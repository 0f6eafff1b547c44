/* attn_wgmma_util.h — shared by attn_wgmma's compile tests (tests/unit, tests/long): the problem
 * facts of the attention family bound into rt_vars (awu_bind: the names and meanings of
 * BRIEF-attention.md / attn_abi.h; the lead may replace it with the family's bind once
 * kernels/attention.c exists), the space of attn_wgmma for one problem on sm_90a, the complete
 * source of one configuration, and the checks a compiled configuration must pass. */
#ifndef ROOFTUNE_ATTN_WGMMA_UTIL_H
#define ROOFTUNE_ATTN_WGMMA_UTIL_H

#include "test.h"
#include "compile/compile.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"

/* A prefill problem: contiguous K/V, optional ragged kv_lens (NULL: every sequence SKV keys). */
typedef struct awu_problem {
  int B, HQ, HKV, SQ, SKV, D, causal;
  const int *kv_lens; /* [B] or NULL */
} awu_problem;

/* Pairs (query, key) one head attends over the batch, exact (attn_abi.h's mask). */
static inline long long awu_pairs(const awu_problem *p) {
  long long pairs = 0;
  for (int b = 0; b < p->B; b++) {
    const long long L = p->kv_lens ? p->kv_lens[b] : p->SKV;
    for (long long i = 0; i < p->SQ; i++) {
      long long end = p->causal ? i + L - p->SQ + 1 : L;
      if (end > L) end = L;
      if (end > 0) pairs += end;
    }
  }
  return pairs;
}

/* The attention family's problem facts for p (dtype_bytes 2). */
static inline rt_status awu_bind(const awu_problem *p, rt_vars *env) {
  long long kv_tokens = 0;
  for (int b = 0; b < p->B; b++) kv_tokens += p->kv_lens ? p->kv_lens[b] : p->SKV;
  const struct {
    const char *name;
    long long value;
  } facts[] = {
      {"B", p->B},
      {"HQ", p->HQ},
      {"HKV", p->HKV},
      {"SQ", p->SQ},
      {"SKV", p->SKV},
      {"D", p->D},
      {"causal", p->causal},
      {"group", p->HQ / p->HKV},
      {"paged", 0},
      {"page_size", 0},
      {"max_pages", 0},
      {"num_pages", 0},
      {"ragged", p->kv_lens != NULL},
      {"kv_tokens", kv_tokens},
      {"pairs", awu_pairs(p)},
      {"dtype_bytes", 2},
  };
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
    rt_status st = rt_vars_set(env, facts[i].name, facts[i].value);
    if (st) return st;
  }
  return RT_OK;
}

/* templates/attention/attn_wgmma.json loaded and its space built for problem p and dtype on an
 * H200 (sm_90a facts).  On failure *m is NULL. */
static inline rt_status awu_space(const awu_problem *p, const char *dtype, manifest **m, space **sp,
                                  rt_vars *env, rt_error *err) {
  char path[1024];
  snprintf(path, sizeof path, "%s/templates/attention/attn_wgmma.json", test_source_dir());
  rt_status st = manifest_load(path, m, err);
  if (st) return st;
  rt_vars_clear(env);
  const gpu_spec *gpu = gpu_spec_find("h200");
  if ((st = gpu_spec_env(arch_spec_find("sm_90a"), gpu ? gpu : gpu_spec_for_arch("sm_90a"), env,
                         err)) ||
      (st = manifest_env_dtype(dtype, env, err)) || (st = awu_bind(p, env)) ||
      (st = manifest_build_space(*m, env, sp, err))) {
    manifest_free(*m);
    *m = NULL;
    return st;
  }
  return RT_OK;
}

/* The complete source text of configuration idx (malloc'ed), or NULL. */
static inline char *awu_source(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                               const char *dtype, rt_error *err) {
  char *text = NULL;
  if (manifest_config_source(m, sp, idx, env, dtype, NULL, &text, err)) return NULL;
  return text;
}

static inline void awu_options(const manifest *m, compile_options *opt) {
  manifest_compile_options(m, "sm_90a", opt);
  opt->want_ptx = 1;
}

/* A compiled configuration passes when it compiled, ptxas reported it with no spills, no stack
 * frame and at most 255 registers, its PTX holds wgmma.mma_async (both forms: from shared memory
 * and with A from registers, V read transposed), the bulk tensor copy and mbarrier waits, and
 * ptxas did not serialise the wgmmas (its warning C7510 says "wgmma.mma_async instructions are
 * serialized") nor ignore setmaxnreg (C7508).  Prints why not. */
static inline int awu_check(const char *what, const compile_result *r) {
  static const char *const need[] = {"wgmma.mma_async.sync.aligned", "cp.async.bulk.tensor.4d",
                                     "mbarrier.try_wait.parity", ", 1, 1, 1;", "p, 1, 1, 0, 0;"};
  int ok = r->status == RT_OK && r->report.found && r->report.spill_stores == 0 &&
           r->report.spill_loads == 0 && r->report.stack_bytes == 0 && r->report.registers <= 255;
  const char *missing = NULL;
  for (size_t i = 0; ok && i < sizeof need / sizeof need[0]; i++)
    if (!r->ptx || !strstr(r->ptx, need[i])) missing = need[i], ok = 0;
  const int serialised = r->log && strstr(r->log, "serialized"),
            ignored = r->log && strstr(r->log, "setmaxnreg");
  if (serialised || ignored) ok = 0;
  if (!ok)
    fprintf(stderr, "%s: status %d %s, %d registers, spills %d/%d, stack %d%s%s%s%s\n", what,
            r->status, r->message, r->report.registers, r->report.spill_stores,
            r->report.spill_loads, r->report.stack_bytes, missing ? ", PTX lacks " : "",
            missing ? missing : "", serialised ? ", wgmma serialised" : "",
            ignored ? ", setmaxnreg ignored" : "");
  if (!ok && r->log && r->log[0]) fprintf(stderr, "%s\n", r->log);
  return ok;
}

/* With two consumers the producer warpgroup gives registers back (setmaxnreg.dec 24) and the
 * consumers take them (setmaxnreg.inc 240) from the block's own pool, which holds what the launch
 * allocated: registers per thread x 384.  The hand-over balances only when ptxas gave every
 * thread at least (24*128 + 240*256) / 384 = 168 registers at entry; with fewer, inc would wait
 * for ever.  1 when the compiled count allows it (always for one consumer). */
static inline int awu_regs_balance(long long consumers, const compile_result *r) {
  if (consumers != 2) return 1;
  const int ok = r->report.registers * 384 >= 24 * 128 + 240 * 256;
  if (!ok)
    fprintf(stderr, "two consumers with %d registers at entry: setmaxnreg.inc 240 cannot be met\n",
            r->report.registers);
  return ok;
}

#endif
