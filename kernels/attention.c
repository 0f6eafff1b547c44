/* attention.c — the attention family's tuning half (see attention.h): FLOPs, compulsory bytes
 * and tolerance, and on the GPU its inputs (contiguous or paged KV, ragged lengths), the
 * reference run, the split-KV scratch, verification of O and the LSE; the whole
 * attention_family.  attention_serve.c has what serving needs. */
#include "kernels/attention_impl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/attention_cudnn.h"
#include "kernels/numeric.h"
#include "templates/attention/attn_tma.h"
#include "driver/cuda_driver.h"

/* ---- the problem's costs ---- */

static double attn_flops(const family_ops *self, const problem *p) {
  (void)self;
  return 4.0 * (double)dim(p, "HQ") * (double)dim(p, "D") * (double)dim(p, "PAIRS");
}

static double attn_min_bytes(const family_ops *self, const problem *p) {
  (void)self;
  const double B = (double)dim(p, "B"), HQ = (double)dim(p, "HQ"), HKV = (double)dim(p, "HKV"),
               SQ = (double)dim(p, "SQ"), D = (double)dim(p, "D"), kv = (double)dim(p, "KVTOK");
  double bytes = 2.0 * (2.0 * B * SQ * HQ * D + 2.0 * kv * HKV * D) + 4.0 * B * HQ * SQ;
  if (dim(p, "PAGE")) bytes += 4.0 * B * (double)max_pages(p);
  if (dim(p, "RAGGED")) bytes += 4.0 * B;
  return bytes;
}

static double attn_tolerance(const family_ops *self, const problem *p) {
  (void)self;
  return strcmp(p->dtype, "bf16") ? 2e-3 : 1e-2;
}

/* ---- the GPU side ---- */

struct family_gpu {
  problem p;
  int bf16;
  size_t q_elems, kv_elems, o_elems, lse_elems;
  CUdeviceptr q, k, v, o, lse; /* inputs and the candidate's outputs */
  CUdeviceptr ref_o, ref_lse;  /* the reference's fp32 outputs */
  CUdeviceptr table, lens;     /* block table, per-sequence lengths (0 when unused) */
  CUdeviceptr work, counters;  /* split-KV scratch (grown on demand), tickets */
  size_t work_floats;          /* work's size */
  float *want_o, *want_lse;    /* the reference, on the host */
  uint16_t *got_o;             /* the candidate's O, downloaded */
  float *got_lse;
  double ref_sq;   /* sum of squares of the reference O */
  attn_cudnn *dnn; /* cuDNN's candidates (attention_cudnn.h), on first use */
};

static rt_status alloc(CUdeviceptr *p, size_t bytes, const char *what, rt_error *err) {
  CUresult r = cu.cuMemAlloc_v2(p, bytes ? bytes : 16);
  if (r == CUDA_SUCCESS) return RT_OK;
  char w[128];
  snprintf(w, sizeof w, "allocate %zu bytes for attention %s", bytes, what);
  return cuda_check(r, w, err);
}

/* ---- the inputs a candidate is checked on (attention.h) ----
 * Element by element a hash of (seed, tensor, element index), so a tensor of billions of
 * elements is made by every core at once, piece by piece, and the same seed makes the same
 * inputs.  With u uniform in [-1, 1) and sign(d) a fixed +-1 per head-dim column:
 *   Q = IN_A u + IN_B sign(d),   K = IN_A u,   V = u,
 * so the scaled logits q.k / sqrt(D) spread with a standard deviation of about 3 (tens of units
 * over a long row).  Each sequence has ATTN_SPIKES spike keys, one in each quarter of its length
 * (jittered), whose K is IN_GAIN[n] / (IN_B sqrt(D)) sign(d): their logits stand about 5, 7, 9
 * and 11 above the mean, comparable to the whole of a row's ordinary keys, so the running
 * maximum jumps late in a row (the rescale matters) while the ordinary keys keep their share, and
 * a causal row whose diagonal key is a spike is wrong by its weight when the mask is off by one.
 * K and V rows that belong to no key (past a ragged sequence's length, the tail of its last
 * page) are NaN: no kernel may read them into O, not even multiplied by 0. */
#define ATTN_IN_A   2.75f
#define ATTN_IN_B   1.0f
#define ATTN_SPIKES 4
static const float attn_in_gain[ATTN_SPIKES] = {5.f, 7.f, 9.f, 11.f};

/* The head-dim column's fixed sign. */
static float col_sign(int d) { return (num_hash(0x5157u, (uint64_t)d) >> 63) ? -1.f : 1.f; }

/* Which spike key (0 .. ATTN_SPIKES-1) token t of sequence b (of L keys) is, or -1: spike n
 * lies in the n-th quarter of [0, L), somewhere in its middle half. */
static int spike_of(uint64_t seed, int b, long long t, long long L) {
  for (int n = 0; n < ATTN_SPIKES; n++) {
    const long long q0 = n * L / ATTN_SPIKES, q = (n + 1) * L / ATTN_SPIKES - q0,
                    span = q / 2 > 1 ? q / 2 : 1;
    const long long pos =
        q0 + q / 4 +
        (long long)(num_hash(seed ^ 0x5b1cull, (uint64_t)b * ATTN_SPIKES + n) % (uint64_t)span);
    if (q > 0 && pos == t) return n;
  }
  return -1;
}

typedef struct input_fill {
  const problem *p;
  uint64_t seed;
  int which; /* 0 Q, 1 K, 2 V */
  int bf16;
  const long long *owner; /* paged K/V: pool token row -> b * SKV + t, or -1 (no key) */
  uint16_t *out;          /* rows [row0, row0 + rows) of D elements */
  size_t row0, rows;
} input_fill;

static void *fill_rows(void *arg) {
  const input_fill *f = arg;
  const problem *p = f->p;
  const long long D = dim(p, "D"), SKV = dim(p, "SKV"),
                  heads = f->which ? dim(p, "HKV") : dim(p, "HQ");
  const float gain_scale = 1.f / sqrtf((float)D);
  float sign[256]; /* D <= 256 (the shape's rule) */
  for (long long d = 0; d < D && d < 256; d++) sign[d] = col_sign((int)d);
  const uint64_t seed = f->seed ^ (0x51ull + (uint64_t)f->which * 0x1f3ull);
  for (size_t r = 0; r < f->rows; r++) {
    const size_t row = f->row0 + r;
    uint16_t *o = f->out + r * (size_t)D;
    float shift = f->which == 0 ? ATTN_IN_B : 0.f; /* along sign(d) */
    int none = 0, spike = -1;
    if (f->which) { /* K or V: which token of which sequence, if any */
      const long long tok = (long long)(row / (size_t)heads);
      const long long bt = f->owner ? f->owner[tok] : tok;
      const int b = bt < 0 ? 0 : (int)(bt / SKV);
      const long long t = bt < 0 ? 0 : bt % SKV, L = attention_kv_len(p, b);
      none = bt < 0 || t >= L;
      spike = none || f->which == 2 ? -1 : spike_of(f->seed, b, t, L);
      if (spike >= 0) shift = attn_in_gain[spike] * gain_scale / ATTN_IN_B;
    }
    /* three 21-bit uniforms from each 64-bit hash (the dtype keeps 8 or 11 bits of them) */
    const float a = f->which == 2 ? 1.f : spike >= 0 ? 0.f : ATTN_IN_A;
    for (long long d = 0; d < D; d += 3) {
      const uint64_t h = num_hash(seed, (uint64_t)row * (uint64_t)D + (uint64_t)d);
      for (long long e = d; e < d + 3 && e < D; e++) {
        const float u = (float)((h >> (43 - 21 * (e - d))) & 0x1fffff) * (2.f / 2097152.f) - 1.f;
        const float x = none ? NAN : a * u + shift * sign[e];
        o[e] = f->bf16 ? num_f32_to_bf16(x) : num_f32_to_f16(x);
      }
    }
  }
  return NULL;
}

/* Tensor `which` (rows of D elements) made and uploaded piece by piece, each piece by up to 16
 * threads. */
static rt_status upload_input(CUdeviceptr dst, size_t elems, int which, const family_gpu *g,
                              const long long *owner, uint64_t seed, rt_error *err) {
  const size_t D = (size_t)dim(&g->p, "D"), rows = elems / D,
               piece = ((size_t)1 << 24) / D; /* rows */
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const int nt = cpus < 1 ? 1 : cpus > 16 ? 16 : (int)cpus;
  uint16_t *buf = malloc(piece * D * 2);
  if (!buf) return rt_error_set(err, RT_ERR_NOMEM, "out of memory for attention inputs");
  rt_status st = RT_OK;
  for (size_t r0 = 0; r0 < rows && !st; r0 += piece) {
    const size_t n = rows - r0 < piece ? rows - r0 : piece;
    input_fill f[16];
    pthread_t th[16];
    int started[16] = {0};
    for (int i = 0; i < nt; i++) {
      const size_t a = n * (size_t)i / (size_t)nt, b = n * (size_t)(i + 1) / (size_t)nt;
      f[i] = (input_fill){&g->p, seed, which, g->bf16, owner, buf + a * D, r0 + a, b - a};
      started[i] = i > 0 && pthread_create(&th[i], NULL, fill_rows, &f[i]) == 0;
    }
    fill_rows(&f[0]);
    for (int i = 1; i < nt; i++) {
      if (started[i])
        pthread_join(th[i], NULL);
      else
        fill_rows(&f[i]); /* no thread: this one does it */
    }
    st = cuda_check(cu.cuMemcpyHtoD_v2(dst + r0 * D * 2, buf, n * D * 2), "upload attention inputs",
                    err);
  }
  free(buf);
  return st;
}

static void attn_gpu_teardown(family_gpu *g) {
  if (!g) return;
  attn_cudnn_close(g->dnn);
  CUdeviceptr *bufs[] = {&g->q,       &g->k,     &g->v,    &g->o,    &g->lse,     &g->ref_o,
                         &g->ref_lse, &g->table, &g->lens, &g->work, &g->counters};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (*bufs[i]) cu.cuMemFree_v2(*bufs[i]);
  free(g->want_o);
  free(g->want_lse);
  free(g->got_o);
  free(g->got_lse);
  free(g);
}

rt_status attention_gpu_cudnn(family_gpu *g, attn_cudnn **out, rt_error *err) {
  if (!g->dnn) {
    attn_cudnn_io io = {g->q, g->k, g->v, g->o, g->lse, g->table, 0};
    rt_status st = attn_cudnn_open(&g->p, &io, &g->dnn, err);
    if (st) return st;
  }
  *out = g->dnn;
  return RT_OK;
}

/* The device buffers of g's problem (its sizes set here), the split-KV counters zeroed and, for a
 * ragged batch, the KV lengths uploaded. */
static rt_status attn_gpu_buffers(family_gpu *g, const int *lens, CUstream stream, rt_error *err) {
  const problem *p = &g->p;
  const size_t B = (size_t)dim(p, "B"), HQ = (size_t)dim(p, "HQ"), HKV = (size_t)dim(p, "HKV"),
               SQ = (size_t)dim(p, "SQ"), SKV = (size_t)dim(p, "SKV"), D = (size_t)dim(p, "D"),
               page = (size_t)dim(p, "PAGE");
  g->q_elems = g->o_elems = B * SQ * HQ * D;
  g->kv_elems = page ? (size_t)num_pages(p) * page * HKV * D : B * SKV * HKV * D;
  g->lse_elems = B * HQ * SQ;
  rt_status st;
  if ((st = alloc(&g->q, g->q_elems * 2, "Q", err)) ||
      (st = alloc(&g->k, g->kv_elems * 2, "K", err)) ||
      (st = alloc(&g->v, g->kv_elems * 2, "V", err)) ||
      (st = alloc(&g->o, g->o_elems * 2, "O", err)) ||
      (st = alloc(&g->lse, g->lse_elems * 4, "LSE", err)) ||
      (st = alloc(&g->ref_o, g->o_elems * 4, "the reference O", err)) ||
      (st = alloc(&g->ref_lse, g->lse_elems * 4, "the reference LSE", err)) ||
      (st = alloc(&g->counters, B * HKV * 4, "split-KV counters", err)) ||
      (st = cuda_check(cu.cuMemsetD32Async(g->counters, 0, B * HKV, stream),
                       "zero the split-KV counters", err)))
    return st;
  if (dim(p, "RAGGED") &&
      ((st = alloc(&g->lens, B * 4, "KV lengths", err)) ||
       (st = cuda_check(cu.cuMemcpyHtoD_v2(g->lens, lens, B * 4), "upload KV lengths", err))))
    return st;
  return RT_OK;
}

/* A paged problem's block table: every sequence's pages, drawn from a shuffled pool so
 * neighbours are not neighbours, uploaded to g->table; *owner (malloc'ed) maps each pool token
 * row to b * SKV + t, -1 for none. */
static rt_status attn_gpu_block_table(family_gpu *g, const int *lens, uint64_t seed,
                                      long long **owner, rt_error *err) {
  const problem *p = &g->p;
  const size_t B = (size_t)dim(p, "B"), SKV = (size_t)dim(p, "SKV"), page = (size_t)dim(p, "PAGE");
  const size_t pages = (size_t)num_pages(p), mp = (size_t)max_pages(p);
  int *table = calloc(B * mp, sizeof *table), *perm = malloc(pages * sizeof *perm);
  *owner = malloc(pages * page * sizeof **owner);
  rt_status st = RT_OK;
  if (!table || !perm || !*owner) {
    st = rt_error_set(err, RT_ERR_NOMEM, "out of memory for the block table");
    goto done;
  }
  uint64_t rs = seed ^ 0x9a6e5eedull;
  for (size_t i = 0; i < pages; i++) perm[i] = (int)i;
  for (size_t i = pages; i > 1; i--) {
    size_t j = (size_t)(num_rng(&rs) % i);
    int t = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = t;
  }
  size_t next = 0;
  for (size_t i = 0; i < pages * page; i++) (*owner)[i] = -1;
  for (size_t b = 0; b < B; b++)
    for (size_t j = 0; j < (size_t)((lens[b] + (int)page - 1) / (int)page); j++) {
      table[b * mp + j] = perm[next++];
      for (size_t r = 0; r < page && j * page + r < (size_t)lens[b]; r++)
        (*owner)[(size_t)table[b * mp + j] * page + r] = (long long)(b * SKV + j * page + r);
    }
  if (!(st = alloc(&g->table, B * mp * 4, "the block table", err)))
    st = cuda_check(cu.cuMemcpyHtoD_v2(g->table, table, B * mp * 4), "upload the block table", err);
done:
  free(table);
  free(perm);
  return st;
}

/* The reference's launch (family_reference_run): its O poisoned, then run into ref_o, ref_lse. */
static rt_status attn_reference_launch(family_gpu *g, const family_reference *ref, CUfunction fn,
                                       CUstream stream, rt_error *err) {
  attn_args a;
  attention_args(&g->p, g->q, g->k, g->v, g->ref_o, g->ref_lse, g->table, g->lens, 0, 0, &a);
  void *args[] = {&a};
  rt_status st = cuda_check(cu.cuMemsetD32Async(g->ref_o, 0x7fc00000u, g->o_elems, stream),
                            "poison the reference O", err);
  if (!st)
    st = cuda_check(cu.cuLaunchKernel(fn, ref->grid[0], ref->grid[1], ref->grid[2], ref->block[0],
                                      ref->block[1], ref->block[2], ref->smem, stream, args, NULL),
                    "launch the reference", err);
  return st;
}

/* What the reference wrote, on the host (want_o, want_lse; got_o, got_lse made for the
 * candidates), every element finite, and its O's squared norm (ref_sq). */
static rt_status attn_reference_download(family_gpu *g, rt_error *err) {
  g->want_o = malloc(g->o_elems * 4);
  g->want_lse = malloc(g->lse_elems * 4);
  g->got_o = malloc(g->o_elems * 2);
  g->got_lse = malloc(g->lse_elems * 4);
  if (!g->want_o || !g->want_lse || !g->got_o || !g->got_lse)
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory for %zu output elements", g->o_elems);
  rt_status st;
  if ((st = cuda_check(cu.cuMemcpyDtoH_v2(g->want_o, g->ref_o, g->o_elems * 4),
                       "download the reference O", err)) ||
      (st = cuda_check(cu.cuMemcpyDtoH_v2(g->want_lse, g->ref_lse, g->lse_elems * 4),
                       "download the reference LSE", err)))
    return st;
  for (size_t i = 0; i < g->o_elems; i++) {
    if (!isfinite(g->want_o[i]))
      return rt_error_set(err, RT_ERR_INTERNAL,
                          "the reference left O[%zu] = %g: it must write every element", i,
                          (double)g->want_o[i]);
    g->ref_sq += (double)g->want_o[i] * g->want_o[i];
  }
  return RT_OK;
}

/* Buffers, the block table when paged, the seeded inputs, then the reference run once and read
 * back. */
static rt_status attn_gpu_setup(const family_ops *self, const problem *p, uint64_t seed,
                                const family_reference *ref, CUstream stream, family_gpu **out,
                                rt_error *err) {
  (void)self;
  *out = NULL;
  if (!cu.handle)
    return rt_error_set(err, RT_ERR_NO_DRIVER,
                        "attention needs a loaded CUDA driver and a current context");
  if (!ref || !ref->cubin)
    return rt_error_set(
        err, RT_ERR_INVALID,
        "attention checks against its reference template attn_reference, which was not given");
  family_gpu *g = calloc(1, sizeof *g);
  if (!g) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  g->p = *p;
  g->bf16 = strcmp(p->dtype, "bf16") == 0;
  int *lens = malloc((size_t)dim(p, "B") * sizeof *lens);
  long long *owner = NULL; /* paged: pool token row -> b * SKV + t, -1 for none */
  rt_status st = lens ? RT_OK : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  if (!st) kv_lens_of(p, lens);
  if (!st) st = attn_gpu_buffers(g, lens, stream, err);
  if (!st && dim(p, "PAGE")) st = attn_gpu_block_table(g, lens, seed, &owner, err);
  if (!st && !(st = upload_input(g->q, g->q_elems, 0, g, NULL, seed, err)) &&
      !(st = upload_input(g->k, g->kv_elems, 1, g, owner, seed, err)) &&
      !(st = upload_input(g->v, g->kv_elems, 2, g, owner, seed, err)))
    st = cuda_check(cu.cuCtxSynchronize(), "finish the input upload", err);
  if (!st) st = family_reference_run(g, ref, stream, attn_reference_launch, err);
  if (!st) st = attn_reference_download(g, err);
  free(lens);
  free(owner);
  if (st) {
    attn_gpu_teardown(g);
    return st;
  }
  *out = g;
  return RT_OK;
}

/* Before a candidate's checked run: O and the LSE NaN, and the split-KV tickets back to 0 (a
 * correct template leaves them 0 after every launch, attn_abi.h; a faulty one may not, and must
 * not make the next split candidate of this worker fail). */
static rt_status attn_gpu_poison(family_gpu *g, CUstream stream, rt_error *err) {
  const size_t groups = (size_t)dim(&g->p, "B") * (size_t)dim(&g->p, "HKV");
  rt_status st = cuda_check(
      cu.cuMemsetD16Async(g->o, g->bf16 ? 0x7fc0u : 0x7e00u, g->o_elems, stream), "poison O", err);
  if (!st)
    st = cuda_check(cu.cuMemsetD32Async(g->lse, 0x7fc00000u, g->lse_elems, stream),
                    "poison the LSE", err);
  if (!st)
    st = cuda_check(cu.cuMemsetD32Async(g->counters, 0, groups, stream),
                    "zero the split-KV counters", err);
  return st;
}

static rt_status attn_gpu_launch(family_gpu *g, CUfunction fn, const rt_vars *config,
                                 const unsigned grid[3], const unsigned block[3], unsigned smem,
                                 CUstream stream, rt_error *err) {
  long long splits = 1;
  rt_vars_get(config, "SPLITS", &splits);
  size_t need = attention_work_floats(&g->p, splits);
  rt_status st;
  if (splits > 1 && need > g->work_floats) { /* split-KV scratch, grown to the largest asked for */
    if (g->work) cu.cuMemFree_v2(g->work);
    g->work = 0;
    g->work_floats = 0;
    if ((st = alloc(&g->work, need * 4, "split-KV partials", err))) return st;
    g->work_floats = need;
  }
  if ((st = family_allow_smem(fn, smem, err))) return st;
  attn_args a;
  attention_args(&g->p, g->q, g->k, g->v, g->o, g->lse, g->table, g->lens, splits > 1 ? g->work : 0,
                 g->counters, &a);
  long long tma = 0;
  rt_vars_get(config, "ATTN_TMA", &tma);
  if (tma) {
    attn_tma_maps maps;
    if ((st = attention_tma_maps(&g->p, config, g->q, g->k, g->v, &maps, err))) return st;
    void *args[] = {&maps, &a};
    return cuda_check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                        smem, stream, args, NULL),
                      "launch attention template", err);
  }
  void *args[] = {&a};
  return cuda_check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                      smem, stream, args, NULL),
                    "launch attention template", err);
}

static rt_status attn_gpu_verify(family_gpu *g, double *rel_error, rt_error *err) {
  *rel_error = NAN;
  rt_status st;
  if ((st = cuda_check(cu.cuCtxSynchronize(), "finish the attention candidate", err)) ||
      (st = cuda_check(cu.cuMemcpyDtoH_v2(g->got_o, g->o, g->o_elems * 2), "download O", err)) ||
      (st = cuda_check(cu.cuMemcpyDtoH_v2(g->got_lse, g->lse, g->lse_elems * 4), "download the LSE",
                       err)))
    return st;
  const double tol = attn_tolerance(NULL, &g->p), rms = sqrt(g->ref_sq / (double)g->o_elems);
  double diff_sq = 0;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < g->o_elems; i++) {
    double c = g->bf16 ? num_bf16_to_f32(g->got_o[i]) : num_f16_to_f32(g->got_o[i]),
           r = g->want_o[i], d = c - r;
    if (!isfinite(c) || fabs(d) > 32 * tol * (rms > 0 ? rms : 1)) {
      if (!bad++) first = i;
      if (!isfinite(c)) diff_sq = INFINITY;
    }
    diff_sq += d * d;
  }
  double rel = g->ref_sq > 0 ? sqrt(diff_sq / g->ref_sq) : sqrt(diff_sq);
  if (bad && isfinite(rel) && rel <= tol)
    rel = nextafter(tol, INFINITY); /* an outlier never passes */
  *rel_error = rel;
  const size_t D = (size_t)dim(&g->p, "D"), HQ = (size_t)dim(&g->p, "HQ"),
               SQ = (size_t)dim(&g->p, "SQ");
  if (bad || !(rel <= tol)) {
    if (!bad)
      return rt_error_set(err, RT_ERR_WRONG_RESULT,
                          "O differs from the reference: relative error %.3g over %.1g for %s", rel,
                          tol, g->p.dtype);
    size_t row = first / D;
    double c = g->bf16 ? num_bf16_to_f32(g->got_o[first]) : num_f16_to_f32(g->got_o[first]);
    return rt_error_set(
        err, RT_ERR_WRONG_RESULT,
        "O differs from the reference: relative error %.3g (tolerance %.1g for %s), %zu elements "
        "NaN "
        "or off by more than 32 tolerances of the reference RMS, first at sequence %zu query %zu "
        "head %zu dim %zu (%g, expected %g)",
        rel, tol, g->p.dtype, bad, row / (SQ * HQ), row / HQ % SQ, row % HQ, first % D, c,
        (double)g->want_o[first]);
  }
  for (size_t i = 0; i < g->lse_elems; i++) {
    double c = g->got_lse[i], r = g->want_lse[i];
    int ok = isinf(r) && r < 0 ? isinf(c) && c < 0
                               : isfinite(c) && fabs(c - r) <= 1e-3 * fmax(1.0, fabs(r));
    if (!ok)
      return rt_error_set(
          err, RT_ERR_WRONG_RESULT,
          "the LSE differs from the reference at sequence %zu head %zu query %zu (%g, expected %g)",
          i / (HQ * SQ), i / SQ % HQ, i % SQ, c, r);
  }
  return RT_OK;
}

const family_ops attention_family = {
    ATTN_SERVING_OPS,
    .reference = "attn_reference",
    .flops = attn_flops,
    .min_bytes = attn_min_bytes,
    .tolerance = attn_tolerance,
    .gpu_setup = attn_gpu_setup,
    .gpu_teardown = attn_gpu_teardown,
    .gpu_poison = attn_gpu_poison,
    .gpu_launch = attn_gpu_launch,
    .gpu_verify = attn_gpu_verify,
    .library_list = attention_cudnn_library_list,
    .library_describe = attention_cudnn_library_describe,
    .library_launch = attention_cudnn_library_launch,
};
