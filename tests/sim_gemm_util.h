/* sim_gemm_util.h — one gemm configuration run on the sim (sim/sim.h) and checked, shared by the
 * sim tests of the gemm templates (tests/unit/test_sim_gemm.c, tests/long/test_sim_gemm_all.c):
 * the template's source for the configuration (manifest_config_source, the text NVRTC gets),
 * the launch geometry of its plan, the family's own TMA encode arguments (gemm_tma_plan) made a
 * sim tensor map, inputs of small multiples of 1/4 (exact in every input type), the output
 * poisoned with NaN (zero for split-K, as the family does), and a double-precision product of
 * the same values (no index header involved) with the output type's tolerance.  A mutation
 * replaces one text of the source, or of a header copied to a folder of its own. */
#ifndef ROOFTUNE_SIM_GEMM_UTIL_H
#define ROOFTUNE_SIM_GEMM_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/gemm.h"
#include "sim/sim.h"
#include "templates/gemm/gemm_epilogue.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"
#include "test.h"

typedef struct sgu_case {
  const char *tmpl;   /* "gemm_wgmma" */
  const char *arch;   /* "sm_90a" */
  const char *dtype;  /* "bf16" */
  const char *shape;  /* the family's syntax: "3@96x200x136:nt" */
  const char *config; /* "BLOCK_M=128,..." (names the space lacks, e.g. BLOCK_K, are checked
                         against the derived values; values not given are the first found) */
} sgu_case;

/* A change to the compiled text: `from` (exactly once) becomes `to`, in the source (file NULL)
 * or in header `file` of the template's folder or common/. */
typedef struct sgu_mutation {
  const char *file, *from, *to;
  int tma_no_swizzle; /* 1: the tensor maps without the 128-byte swizzle the descriptors say */
} sgu_mutation;

static inline int sgu_matches(const rt_vars *v, const char *config) {
  char buf[768];
  snprintf(buf, sizeof buf, "%s", config);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    long long have;
    if (!eq) return 0;
    *eq = 0;
    if (!rt_vars_get(v, tok, &have) || have != atoll(eq + 1)) return 0;
  }
  return 1;
}

/* Replaces `from` (which must occur once) in *text by `to`; 0 when it does not occur once. */
static inline int sgu_replace(char **text, const char *from, const char *to) {
  char *at = strstr(*text, from);
  if (!at || strstr(at + 1, from)) return 0;
  const size_t n = strlen(*text), nf = strlen(from), nt = strlen(to);
  char *out = malloc(n - nf + nt + 1);
  memcpy(out, *text, (size_t)(at - *text));
  memcpy(out + (at - *text), to, nt);
  memcpy(out + (at - *text) + nt, at + nf, n - (size_t)(at - *text) - nf + 1);
  free(*text);
  *text = out;
  return 1;
}

/* Copies folder src's headers into dst, applying mu to mu->file. */
static inline int sgu_copy_headers(const char *src, const char *dst, const sgu_mutation *mu) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "mkdir -p '%.1000s' && cp '%.1000s'/*.h '%.1000s'/", dst, src, dst);
  if (system(cmd) != 0) return 0;
  if (!mu || !mu->file) return 1;
  char path[1200];
  snprintf(path, sizeof path, "%.1000s/%.100s", dst, mu->file);
  FILE *f = fopen(path, "r");
  if (!f) return 1; /* not in this folder */
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = malloc((size_t)n + 1);
  t[fread(t, 1, (size_t)n, f)] = 0;
  fclose(f);
  int ok = sgu_replace(&t, mu->from, mu->to);
  f = fopen(path, "w");
  fputs(t, f);
  fclose(f);
  free(t);
  return ok ? 2 : 0;
}

static inline float sgu_value(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return 0.25f * (float)((int)((*s >> 33) % 9) - 4);
}
/* v (a multiple of 1/4 in [-1, 1]) in the input type: f32 (and tf32), f16, bf16, e4m3, e5m2 */
static inline void sgu_store(void *dst, size_t i, float v, int code) {
  if (code == 0) {
    ((float *)dst)[i] = v;
  } else if (code == 1 || code == 2) {
    unsigned u;
    memcpy(&u, &v, 4);
    unsigned short h;
    if (code == 2) {
      h = (unsigned short)(u >> 16);
    } else { /* f16 of an exact multiple of 1/4 */
      _Float16 x = (_Float16)v;
      memcpy(&h, &x, 2);
    }
    ((unsigned short *)dst)[i] = h;
  } else { /* fp8: |v| in {0, .25, .5, .75, 1} */
    const int neg = v < 0, q = (int)lroundf(fabsf(v) * 4);
    static const unsigned char e4m3[5] = {0x00, 0x28, 0x30, 0x34, 0x38},
                               e5m2[5] = {0x00, 0x34, 0x38, 0x3a, 0x3c};
    ((unsigned char *)dst)[i] = (unsigned char)((code == 4 ? e4m3[q] : e5m2[q]) | (neg ? 0x80 : 0));
  }
}
static inline double sgu_out(const void *c, size_t i, int out_code) {
  if (out_code == GEMM_OUT_F32) return ((const float *)c)[i];
  const unsigned short h = ((const unsigned short *)c)[i];
  if (out_code == GEMM_OUT_BF16) {
    unsigned u = (unsigned)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  _Float16 x;
  memcpy(&x, &h, 2);
  return (double)x;
}

typedef struct sgu_run {
  manifest *m;
  space *sp;
  rt_vars env;
  problem p;
  candidate_plan plan;
  size_t idx;
} sgu_run;

/* Plans r's configuration CONFIG from its space (r->idx, r->plan): 1, else 0 with msg naming
 * the template, dtype and shape. */
static inline int sgu_find_config(sgu_run *r, const char *tmpl, const char *dtype,
                                  const char *shape, const char *config, char *msg, size_t size) {
  rt_error err = {0};
  for (size_t i = 0; i < space_size(r->sp); i++) {
    if (manifest_plan(r->m, r->sp, i, &r->env, &r->plan, &err)) continue;
    if (sgu_matches(&r->plan.vars, config)) {
      r->idx = i;
      return 1;
    }
  }
  snprintf(msg, size, "%s %s %s: no configuration %s in the space", tmpl, dtype, shape, config);
  return 0;
}

/* The problem, space and configuration of c; 0 and a message when any is missing. */
static inline int sgu_open(const sgu_case *c, sgu_run *r, char *msg, size_t size) {
  char path[1024];
  rt_error err;
  rt_error_clear(&err);
  memset(r, 0, sizeof *r);
  snprintf(path, sizeof path, "%s/templates/gemm/%s.json", ROOFTUNE_SOURCE_DIR, c->tmpl);
  if (manifest_load(path, &r->m, &err) ||
      gemm_family.parse_shape(&gemm_family, c->shape, c->dtype, NULL, &r->p, &err) ||
      problem_env(&gemm_family, &r->p, arch_spec_find(c->arch), gpu_spec_for_arch(c->arch), &r->env,
                  &err) ||
      manifest_build_space(r->m, &r->env, &r->sp, &err)) {
    snprintf(msg, size, "%s %s: %s", c->tmpl, c->shape, err.text);
    return 0;
  }
  return sgu_find_config(r, c->tmpl, c->dtype, c->shape, c->config, msg, size);
}

static inline void sgu_close(sgu_run *r) {
  if (r->sp) space_free(r->sp);
  if (r->m) manifest_free(r->m);
}

/* Compiles configuration r (with mutation mu) for the sim. */
static inline sim_module *sgu_compile(const sgu_case *c, sgu_run *r, const sgu_mutation *mu,
                                      char *msg, size_t size) {
  rt_error err;
  rt_error_clear(&err);
  char *src = NULL;
  if (manifest_config_source(r->m, r->sp, r->idx, &r->env, c->dtype, NULL, &src, &err)) {
    snprintf(msg, size, "source: %s", err.text);
    return NULL;
  }
  compile_options opt;
  manifest_compile_options(r->m, c->arch, &opt);
  char dirs[2][1100];
  if (mu && mu->file) { /* the headers copied, one changed */
    int found = 0;
    for (int i = 0; i < opt.include_count && i < 2; i++) {
      snprintf(dirs[i], sizeof dirs[i], "%.1000s/test-sim-mutant/%d", ROOFTUNE_BUILD_DIR, i);
      const int rc = sgu_copy_headers(opt.include_dirs[i], dirs[i], mu);
      found += rc == 2;
      opt.include_dirs[i] = dirs[i];
    }
    if (!found) {
      snprintf(msg, size, "mutation: \"%s\" not found once in %s", mu->from, mu->file);
      free(src);
      return NULL;
    }
  } else if (mu && mu->from && !sgu_replace(&src, mu->from, mu->to)) {
    snprintf(msg, size, "mutation: \"%s\" not found once in the source", mu->from);
    free(src);
    return NULL;
  }
  char name[64];
  snprintf(name, sizeof name, "%s.cu", c->tmpl);
  sim_module *mod = NULL;
  if (sim_compile(src, name, &opt, NULL, &mod, &err)) snprintf(msg, size, "%s", err.text);
  free(src);
  return mod;
}

static inline void sgu_maps(const sgu_run *r, void *A, void *B, int no_swizzle,
                            unsigned char maps[2][128], rt_error *err) {
  gemm_tma_params prm[2];
  if (gemm_tma_plan(&r->p, &r->plan.vars, (CUdeviceptr)(uintptr_t)A, (CUdeviceptr)(uintptr_t)B, prm,
                    err))
    return;
  for (int i = 0; i < 2; i++) {
    const gemm_tma_params *o = &prm[i];
    unsigned long long dims[3], strides[2];
    unsigned box[3], es[3];
    for (int d = 0; d < 3; d++)
      dims[d] = o->dims[d], box[d] = o->box[d], es[d] = o->elem_strides[d];
    strides[0] = o->strides[0], strides[1] = o->strides[1];
    sim_tensor_map_encode(maps[i], (int)o->type, o->rank, (void *)(uintptr_t)o->base, dims, strides,
                          box, es, (int)o->interleave, no_swizzle ? 0 : (int)o->swizzle, (int)o->l2,
                          (int)o->oob, err);
  }
}

/* Runs case c (mutation mu may be NULL) under schedule s: the number of wrong outputs, or -1
 * with msg saying why it did not run to the end (a compile error, a fault, a deadlock). */
static inline long sgu_run_case(const sgu_case *c, const sgu_mutation *mu, sim_schedule s,
                                char *msg, size_t size) {
  sgu_run r;
  msg[0] = 0;
  if (!sgu_open(c, &r, msg, size)) return -1;
  long bad = -1;
  sim_module *mod = sgu_compile(c, &r, mu, msg, size);
  gemm_epi e;
  rt_error err;
  rt_error_clear(&err);
  if (!mod || gemm_problem_epi(&r.p, &e, &err)) {
    if (!msg[0]) snprintf(msg, size, "%s", err.text);
    sim_module_free(mod);
    sgu_close(&r);
    return -1;
  }
  const long long M = problem_dim(&r.p, "M"), N = problem_dim(&r.p, "N"),
                  K = problem_dim(&r.p, "K"), BATCH = problem_dim(&r.p, "BATCH");
  const int nt = !strcmp(r.p.layout, "nt"), code = gemm_dtype_code(r.p.dtype),
            es = gemm_dtype_bytes(r.p.dtype), os = gemm_out_bytes(e.out_code);
  const size_t na = (size_t)(BATCH * M * K), nb = (size_t)(BATCH * K * N),
               nc = (size_t)(BATCH * M * N);
  void *A = sim_buffer_alloc(na * (size_t)es, "A"), *B = sim_buffer_alloc(nb * (size_t)es, "B"),
       *C = sim_buffer_alloc(nc * (size_t)os, "C");
  double *Af = malloc(na * sizeof(double)), *Bf = malloc(nb * sizeof(double));
  unsigned long long seed = 99;
  for (size_t i = 0; i < na; i++) sgu_store(A, i, (float)(Af[i] = sgu_value(&seed)), code);
  const int bcode = e.b_code;
  for (size_t i = 0; i < nb; i++) sgu_store(B, i, (float)(Bf[i] = sgu_value(&seed)), bcode);
  long long split = 1, cluster = 1, epi = 0;
  rt_vars_get(&r.plan.vars, "SPLIT_K", &split);
  rt_vars_get(&r.plan.vars, "CLUSTER", &cluster);
  rt_vars_get(&r.plan.vars, "EPI", &epi);
  memset(C, split > 1 ? 0 : 0xff, nc * (size_t)os);
  unsigned char maps[2][128] __attribute__((aligned(64)));
  gemm_epi_args ea;
  memset(&ea, 0, sizeof ea);
  ea.alpha = 1.f;
  /* the epilogue's inputs (output type) and scalars, as the family sets them */
  void *cin = NULL, *bias = NULL, *res = NULL;
  const int ocode = e.out_code == GEMM_OUT_F32 ? 0 : e.out_code == GEMM_OUT_F16 ? 1 : 2;
  if (e.on) {
    ea.alpha = (float)(3.0 / sqrt((double)K));
    ea.beta = e.beta ? 0.5f : 0.f;
    ea.flags = (e.beta ? GEMM_EPI_BETA : 0u) | (e.bias ? GEMM_EPI_BIAS : 0u) |
               (e.residual ? GEMM_EPI_RES : 0u) | ((unsigned)e.act << GEMM_EPI_ACT_SHIFT);
    if (e.beta) cin = sim_buffer_alloc(nc * (size_t)os, "C_in");
    if (e.bias) bias = sim_buffer_alloc((size_t)N * (size_t)os, "bias");
    if (e.residual) res = sim_buffer_alloc(nc * (size_t)os, "residual");
    for (size_t i = 0; i < nc; i++) {
      if (cin) sgu_store(cin, i, sgu_value(&seed), ocode);
      if (res) sgu_store(res, i, sgu_value(&seed), ocode);
    }
    for (long long j = 0; bias && j < N; j++) sgu_store(bias, (size_t)j, sgu_value(&seed), ocode);
    ea.c = (uintptr_t)cin, ea.bias = (uintptr_t)bias, ea.residual = (uintptr_t)res;
  }
  int Mi = (int)M, Ni = (int)N, Ki = (int)K;
  void *params[7] = {&A, &B, &C, &Mi, &Ni, &Ki, &ea};
  if (!strcmp(c->tmpl, "gemm_wgmma")) {
    sgu_maps(&r, A, B, mu && mu->tma_no_swizzle, maps, &err);
    params[0] = maps[0], params[1] = maps[1];
  }
  (void)epi;
  sim_launch l;
  memset(&l, 0, sizeof l);
  for (int i = 0; i < 3; i++) l.grid[i] = r.plan.grid[i], l.block[i] = r.plan.block[i];
  l.cluster[0] = (unsigned)cluster, l.cluster[1] = l.cluster[2] = 1;
  l.shared_bytes = r.plan.smem, l.params = params, l.schedule = s, l.seed = 1234;
  if (err.code) {
    snprintf(msg, size, "tensor maps: %s", err.text);
  } else if (sim_run(mod, &l, NULL, &err)) {
    snprintf(msg, size, "%s", err.text);
  } else {
    bad = 0;
    const double tol = e.out_code == GEMM_OUT_F32 ? 1e-5 : 1e-2;
    for (long long b = 0; b < BATCH; b++)
      for (long long i = 0; i < M; i++)
        for (long long j = 0; j < N; j++) {
          double ref = 0;
          for (long long k = 0; k < K; k++)
            ref +=
                Af[(b * M + i) * K + k] * (nt ? Bf[(b * N + j) * K + k] : Bf[(b * K + k) * N + j]);
          const size_t at = (size_t)((b * M + i) * N + j);
          if (e.on)
            ref = gemm_epi_reference(&e, ea.alpha, ea.beta, ref,
                                     cin ? sgu_out(cin, at, e.out_code) : 0,
                                     bias ? sgu_out(bias, (size_t)j, e.out_code) : 0,
                                     res ? sgu_out(res, at, e.out_code) : 0);
          const double got = sgu_out(C, at, e.out_code);
          if (!(fabs(got - ref) <= tol * (1 + fabs(ref)))) {
            if (!bad)
              snprintf(msg, size, "D[%lld][%lld][%lld] = %g, expected %g", b, i, j, got, ref);
            bad++;
          }
        }
  }
  free(Af);
  free(Bf);
  sim_buffer_free(A);
  sim_buffer_free(B);
  sim_buffer_free(C);
  sim_buffer_free(cin);
  sim_buffer_free(bias);
  sim_buffer_free(res);
  sim_module_free(mod);
  sgu_close(&r);
  return bad;
}

#endif
