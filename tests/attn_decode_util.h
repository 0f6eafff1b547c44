/* attn_decode_util.h — shared by attn_decode's compile tests (tests/unit, tests/long): a decode
 * problem written as text, the attention family's problem facts bound into rt_vars (adu_bind:
 * the one function the family's own bind can replace once kernels/attention.c exists), the space
 * of the template for one arch and dtype, the complete source of one configuration, and the
 * check of one compile result.
 *
 * Problem text: "BxHQ:HKVxSQ:SKVxD", then optionally ":pPAGE" (paged, PAGE tokens a page, the
 * pages of each sequence consecutive in the pool) and ":c" (causal).  "64x32:8x1:8192x128" is
 * 64 sequences of 8192 keys, 32 query heads over 8 KV heads, one query, D 128. */
#ifndef ROOFTUNE_ATTN_DECODE_UTIL_H
#define ROOFTUNE_ATTN_DECODE_UTIL_H

#include "compile/compile.h"
#include "model/gpu_spec.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"
#include "test.h"

typedef struct adu_problem {
  int B, HQ, HKV, SQ, SKV, D; /* the problem */
  int causal;                 /* 1: bottom-right causal mask */
  int page;                   /* tokens per page, 0: contiguous */
} adu_problem;

/* Parses the problem text above; 0 on success, -1 on a malformed text. */
static inline int adu_parse(const char *text, adu_problem *p) {
  memset(p, 0, sizeof *p);
  int n = 0;
  if (sscanf(text, "%dx%d:%dx%d:%dx%d%n", &p->B, &p->HQ, &p->HKV, &p->SQ, &p->SKV, &p->D, &n) != 6)
    return -1;
  for (const char *s = text + n; *s;) {
    if (s[0] != ':') return -1;
    if (s[1] == 'c') {
      p->causal = 1;
      s += 2;
    } else if (s[1] == 'p') {
      char *end;
      p->page = (int)strtol(s + 2, &end, 10);
      if (end == s + 2 || p->page <= 0) return -1;
      s = end;
    } else {
      return -1;
    }
  }
  return p->B > 0 && p->HQ > 0 && p->HKV > 0 && p->HQ % p->HKV == 0 && p->SQ > 0 && p->SKV >= 0 &&
                 p->D > 0
             ? 0
             : -1;
}

/* The attention family's problem facts (BRIEF: B HQ HKV SQ SKV D causal group paged page_size
 * max_pages num_pages ragged kv_tokens pairs) for a problem without kv_lens. */
static inline rt_status adu_bind(const adu_problem *p, rt_vars *env) {
  long long pairs = 0;
  for (int i = 0; i < p->SQ; i++) {
    long long bound = p->SKV;
    if (p->causal) {
      bound = (long long)p->SKV - p->SQ + i + 1;
      if (bound < 0) bound = 0;
      if (bound > p->SKV) bound = p->SKV;
    }
    pairs += bound;
  }
  const long long max_pages = p->page ? (p->SKV + p->page - 1) / p->page : 0;
  rt_status st;
  if ((st = rt_vars_set(env, "B", p->B)) || (st = rt_vars_set(env, "HQ", p->HQ)) ||
      (st = rt_vars_set(env, "HKV", p->HKV)) || (st = rt_vars_set(env, "SQ", p->SQ)) ||
      (st = rt_vars_set(env, "SKV", p->SKV)) || (st = rt_vars_set(env, "D", p->D)) ||
      (st = rt_vars_set(env, "causal", p->causal)) ||
      (st = rt_vars_set(env, "group", p->HQ / p->HKV)) ||
      (st = rt_vars_set(env, "paged", p->page > 0)) ||
      (st = rt_vars_set(env, "page_size", p->page)) ||
      (st = rt_vars_set(env, "max_pages", max_pages)) ||
      (st = rt_vars_set(env, "num_pages", max_pages * p->B)) ||
      (st = rt_vars_set(env, "ragged", 0)) ||
      (st = rt_vars_set(env, "kv_tokens", (long long)p->B * p->SKV)) ||
      (st = rt_vars_set(env, "pairs", (long long)p->B * pairs)))
    return st;
  return RT_OK;
}

static inline const char *adu_manifest_path(char *buf, size_t size) {
  snprintf(buf, size, "%s/templates/attention/attn_decode.json", test_source_dir());
  return buf;
}

/* Loads the manifest and builds its space for problem text `shape`, dtype and arch. */
static inline rt_status adu_space(const char *arch, const char *dtype, const char *shape,
                                  manifest **m, space **sp, rt_vars *env, rt_error *err) {
  char path[1024];
  adu_problem p;
  *m = NULL;
  *sp = NULL;
  if (adu_parse(shape, &p))
    return rt_error_set(err, RT_ERR_INVALID, "bad decode problem '%s'", shape);
  rt_status st = manifest_load(adu_manifest_path(path, sizeof path), m, err);
  if (st) return st;
  rt_vars_clear(env);
  if ((st = gpu_spec_env(arch_spec_find(arch), gpu_spec_for_arch(arch), env, err)) ||
      (st = manifest_env_dtype(dtype, env, err)) || (st = adu_bind(&p, env)) ||
      (st = manifest_build_space(*m, env, sp, err))) {
    manifest_free(*m);
    *m = NULL;
    return st;
  }
  return RT_OK;
}

/* The complete source text of configuration idx (malloc'ed). */
static inline char *adu_source(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                               const char *dtype, rt_error *err) {
  char *text = NULL;
  manifest_config_source(m, sp, idx, env, dtype, NULL, &text, err);
  return text;
}

static inline void adu_options(const manifest *m, const char *arch, compile_options *opt) {
  manifest_compile_options(m, arch, opt);
  opt->want_ptx = 1;
}

/* One compile result: compiled, ptxas report found, no spills, at most 255 registers, mma.sync
 * in the PTX, cp.async when the configuration has STAGES > 1 and the streaming loads when it has
 * STAGES == 1.  Returns 1 when all hold (and prints why not otherwise). */
static inline int adu_check(const char *arch, const char *dtype, const char *config,
                            const compile_result *r) {
  const int ring = !strstr(config, "STAGES=1");
  const char *load = ring ? "cp.async" : "ld.global.nc.L1::no_allocate";
  int ok = r->status == RT_OK && r->report.found && r->report.spill_stores == 0 &&
           r->report.spill_loads == 0 && r->report.registers <= 255;
  int has_mma = r->ptx && strstr(r->ptx, "mma.sync.aligned.m16n8k16"),
      has_load = r->ptx && strstr(r->ptx, load);
  if (ok && (!has_mma || !has_load)) ok = 0;
  if (!ok)
    fprintf(stderr,
            "attn_decode %s %s [%s]: status %d %s, %d registers, spills %d/%d, mma %s, %s %s\n",
            arch, dtype, config, r->status, r->message, r->report.registers, r->report.spill_stores,
            r->report.spill_loads, has_mma ? "present" : "missing", load,
            has_load ? "present" : "missing");
  return ok;
}

#endif
