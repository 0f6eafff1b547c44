/* sim_attn_util.h — one attention configuration run on the sim (sim/sim.h) and checked, shared by
 * the sim tests of the attention templates: the source of the configuration (the text NVRTC
 * gets), its plan's geometry, the family's kernel argument (attention_args) and TMA encode
 * arguments (attention_tma_plan) made sim tensor maps; Q, K and V of small multiples of 1/8
 * (exact in f16 and bf16), every K and V row past a sequence's length and every unused page NaN,
 * O and LSE NaN before the launch; the reference in double precision from attn_abi.h's
 * definition (mask, grouped heads, pages), no index header involved.  A mutation replaces one
 * text of the source (sim_gemm_util.h's sgu_replace). */
#ifndef ROOFTUNE_SIM_ATTN_UTIL_H
#define ROOFTUNE_SIM_ATTN_UTIL_H

#include "kernels/attention.h"
#include "sim_gemm_util.h"
#include "templates/attention/attn_tma.h"

typedef struct sau_case {
  const char *tmpl;    /* "attn_mma" */
  const char *arch;    /* "sm_90a" */
  const char *dtype;   /* "bf16" */
  const char *shape;   /* the family's syntax: "2x8:2x300:1000x128:causal" */
  const char *kv_lens; /* "L1,L2,..." or NULL */
  const char *config;  /* "BLOCK_M=64,..." */
} sau_case;

static inline int sau_open(const sau_case *c, sgu_run *r, char *msg, size_t size) {
  char path[1024];
  rt_error err;
  rt_error_clear(&err);
  memset(r, 0, sizeof *r);
  snprintf(path, sizeof path, "%s/templates/attention/%s.json", ROOFTUNE_SOURCE_DIR, c->tmpl);
  if (manifest_load(path, &r->m, &err) ||
      attention_family.parse_shape(&attention_family, c->shape, c->dtype, c->kv_lens, &r->p,
                                   &err) ||
      problem_env(&attention_family, &r->p, arch_spec_find(c->arch), gpu_spec_for_arch(c->arch),
                  &r->env, &err) ||
      manifest_build_space(r->m, &r->env, &r->sp, &err)) {
    snprintf(msg, size, "%s %s: %s", c->tmpl, c->shape, err.text);
    return 0;
  }
  return sgu_find_config(r, c->tmpl, c->dtype, c->shape, c->config, msg, size);
}

static inline double sau_elem(const unsigned short *x, size_t i, int bf16) {
  const unsigned short h = x[i];
  if (bf16) {
    unsigned u = (unsigned)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  _Float16 v;
  memcpy(&v, &h, 2);
  return (double)v;
}

typedef struct sau_data {
  attn_args a;
  unsigned short *q, *k, *v, *o;
  float *lse, *work;
  int *table, *lens, *counters;
  int bf16;
} sau_data;

/* Row of key token t of sequence b, KV head kvh, in K or V (elements). */
static inline size_t sau_kv_row(const attn_args *a, int b, int t, int kvh) {
  if (a->page_size) {
    const int page = ((const int *)(uintptr_t)a->block_table)[b * a->max_pages + t / a->page_size];
    return (((size_t)page * (size_t)a->page_size + (size_t)(t % a->page_size)) * (size_t)a->HKV +
            (size_t)kvh) *
           (size_t)a->D;
  }
  return (((size_t)b * (size_t)a->SKV + (size_t)t) * (size_t)a->HKV + (size_t)kvh) * (size_t)a->D;
}

static inline void sau_fill(const sgu_run *r, sau_data *d, long long splits) {
  const problem *p = &r->p;
  d->bf16 = !strcmp(p->dtype, "bf16");
  attention_args(p, 0, 0, 0, 0, 0, 0, 0, 0, 0, &d->a);
  attn_args *a = &d->a;
  const size_t D = (size_t)a->D, nq = (size_t)a->B * (size_t)a->SQ * (size_t)a->HQ * D;
  const size_t kv_rows =
      a->page_size ? (size_t)a->num_pages * (size_t)a->page_size : (size_t)a->B * (size_t)a->SKV;
  const size_t nkv = kv_rows * (size_t)a->HKV * D;
  d->q = sim_buffer_alloc(nq * 2, "Q");
  d->k = sim_buffer_alloc(nkv * 2, "K");
  d->v = sim_buffer_alloc(nkv * 2, "V");
  d->o = sim_buffer_alloc(nq * 2, "O");
  d->lse = sim_buffer_alloc((size_t)a->B * (size_t)a->HQ * (size_t)a->SQ * 4, "LSE");
  d->lens = sim_buffer_alloc((size_t)a->B * sizeof(int), "kv_lens");
  d->counters = sim_buffer_alloc((size_t)a->B * (size_t)a->HKV * sizeof(int), "counters");
  d->work = sim_buffer_alloc(attention_work_floats(p, splits) * sizeof(float), "work");
  memset(d->counters, 0, (size_t)a->B * (size_t)a->HKV * sizeof(int));
  memset(d->k, 0xff, nkv * 2); /* NaN wherever no valid key is */
  memset(d->v, 0xff, nkv * 2);
  memset(d->o, 0xff, nq * 2);
  memset(d->lse, 0xff, (size_t)a->B * (size_t)a->HQ * (size_t)a->SQ * 4);
  const char *l = p->args;
  for (int b = 0; b < a->B; b++) {
    d->lens[b] = l && *l ? atoi(l) : a->SKV;
    if (l && *l) l = strchr(l, ',') ? strchr(l, ',') + 1 : l + strlen(l);
  }
  if (a->page_size) { /* pages in a scrambled order */
    d->table = sim_buffer_alloc((size_t)a->B * (size_t)a->max_pages * sizeof(int), "block_table");
    for (int i = 0; i < a->B * a->max_pages; i++) d->table[i] = (int)((i * 7 + 3) % a->num_pages);
    a->block_table = (unsigned long long)(uintptr_t)d->table;
  }
  unsigned long long seed = 17;
  for (size_t i = 0; i < nq; i++) sgu_store(d->q, i, 0.5f * sgu_value(&seed), d->bf16 ? 2 : 1);
  for (int b = 0; b < a->B; b++)
    for (int t = 0; t < d->lens[b]; t++)
      for (int h = 0; h < a->HKV; h++)
        for (size_t e = 0; e < D; e++) {
          const size_t i = sau_kv_row(a, b, t, h) + e;
          sgu_store(d->k, i, 0.5f * sgu_value(&seed), d->bf16 ? 2 : 1);
          sgu_store(d->v, i, sgu_value(&seed), d->bf16 ? 2 : 1);
        }
  a->q = (uintptr_t)d->q, a->k = (uintptr_t)d->k, a->v = (uintptr_t)d->v, a->o = (uintptr_t)d->o;
  a->lse = (uintptr_t)d->lse, a->work = (uintptr_t)d->work, a->counters = (uintptr_t)d->counters;
  a->kv_lens = l ? (uintptr_t)d->lens : 0;
  if (p->args[0]) a->kv_lens = (uintptr_t)d->lens;
}

static inline void sau_free(sau_data *d) {
  void *all[] = {d->q, d->k, d->v, d->o, d->lse, d->work, d->table, d->lens, d->counters};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sim_buffer_free(all[i]);
}

/* Wrong outputs (O and LSE) against the double-precision reference; the first in msg. */
static inline long sau_check(const sau_data *d, char *msg, size_t size) {
  const attn_args *a = &d->a;
  const int D = a->D, group = a->HQ / a->HKV;
  const double tol = d->bf16 ? 2e-2 : 5e-3;
  long bad = 0;
  double *s = malloc((size_t)a->SKV * sizeof(double));
  for (int b = 0; b < a->B; b++)
    for (int h = 0; h < a->HQ; h++)
      for (int i = 0; i < a->SQ; i++) {
        const int L = d->lens[b], kvh = h / group;
        const size_t qrow =
            (((size_t)b * (size_t)a->SQ + (size_t)i) * (size_t)a->HQ + (size_t)h) * (size_t)D;
        double mx = -INFINITY;
        int n = 0;
        for (int j = 0; j < L; j++) {
          if (a->causal && j > i + L - a->SQ) break;
          double dot = 0;
          for (int e = 0; e < D; e++)
            dot += sau_elem(d->q, qrow + (size_t)e, d->bf16) *
                   sau_elem(d->k, sau_kv_row(a, b, j, kvh) + (size_t)e, d->bf16);
          s[j] = dot * (double)a->scale;
          mx = s[j] > mx ? s[j] : mx;
          n = j + 1;
        }
        double sum = 0;
        for (int j = 0; j < n; j++) sum += exp(s[j] - mx);
        for (int e = 0; e < D; e++) {
          double o = 0;
          for (int j = 0; j < n; j++)
            o += exp(s[j] - mx) / sum *
                 sau_elem(d->v, sau_kv_row(a, b, j, kvh) + (size_t)e, d->bf16);
          const double got = sau_elem(d->o, qrow + (size_t)e, d->bf16);
          if (!(fabs(got - o) <= tol * (1 + fabs(o)))) {
            if (!bad)
              snprintf(msg, size, "O[%d][%d][%d][%d] = %g, expected %g", b, i, h, e, got, o);
            bad++;
          }
        }
        const double
            lse = n ? mx + log(sum) : -INFINITY,
            got = d->lse[((size_t)b * (size_t)a->HQ + (size_t)h) * (size_t)a->SQ + (size_t)i];
        if (!(n ? fabs(got - lse) <= 1e-3 * (1 + fabs(lse)) : got == -INFINITY)) {
          if (!bad) snprintf(msg, size, "LSE[%d][%d][%d] = %g, expected %g", b, h, i, got, lse);
          bad++;
        }
      }
  for (int i = 0; i < a->B * a->HKV; i++)
    if (d->counters[i] != 0) {
      if (!bad) snprintf(msg, size, "counter %d is %d after the launch, not 0", i, d->counters[i]);
      bad++;
    }
  free(s);
  return bad;
}

/* Runs case c (mutation mu may be NULL) under schedule s: wrong outputs, or -1 with msg. */
static inline long sau_run_case(const sau_case *c, const sgu_mutation *mu, sim_schedule s,
                                char *msg, size_t size) {
  sgu_run r;
  msg[0] = 0;
  if (!sau_open(c, &r, msg, size)) return -1;
  const sgu_case gc = {c->tmpl, c->arch, c->dtype, c->shape, c->config};
  sim_module *mod = sgu_compile(&gc, &r, mu, msg, size);
  if (!mod) {
    sgu_close(&r);
    return -1;
  }
  long long splits = 1;
  rt_vars_get(&r.plan.vars, "SPLITS", &splits);
  sau_data d;
  memset(&d, 0, sizeof d);
  sau_fill(&r, &d, splits);
  rt_error err;
  rt_error_clear(&err);
  attn_tma_maps maps;
  void *params[2] = {&d.a, NULL};
  if (!strcmp(c->tmpl, "attn_wgmma")) {
    attn_tma_params prm[ATTN_TMA_OPERANDS];
    if (!attention_tma_plan(&r.p, &r.plan.vars, d.a.q, d.a.k, d.a.v, prm, &err)) {
      attn_tma_map *dst[3] = {&maps.q, &maps.k, &maps.v};
      for (int o = 0; o < 3 && !err.code; o++) {
        unsigned long long dims[4], strides[3];
        unsigned box[4], es[4];
        for (int i = 0; i < 4; i++)
          dims[i] = prm[o].dims[i], box[i] = prm[o].box[i], es[i] = prm[o].elem_strides[i];
        for (int i = 0; i < 3; i++) strides[i] = prm[o].strides[i];
        sim_tensor_map_encode(dst[o], prm[o].type, prm[o].rank, (void *)(uintptr_t)prm[o].base,
                              dims, strides, box, es, prm[o].interleave,
                              mu && mu->tma_no_swizzle ? 0 : prm[o].swizzle, prm[o].l2, prm[o].oob,
                              &err);
      }
    }
    params[0] = &maps, params[1] = &d.a;
  }
  long bad = -1;
  sim_launch l;
  memset(&l, 0, sizeof l);
  for (int i = 0; i < 3; i++) l.grid[i] = r.plan.grid[i], l.block[i] = r.plan.block[i];
  l.shared_bytes = r.plan.smem, l.params = params, l.schedule = s, l.seed = 4321;
  if (err.code)
    snprintf(msg, size, "tensor maps: %s", err.text);
  else if (sim_run(mod, &l, NULL, &err))
    snprintf(msg, size, "%s", err.text);
  else
    bad = sau_check(&d, msg, size);
  sau_free(&d);
  sim_module_free(mod);
  sgu_close(&r);
  return bad;
}

#endif
