/* test_attention_cudnn.c (GPU) — cuDNN's SDPA as the attention family's library candidates.
 *
 *  1. In this process, on seeded bf16 inputs: for 2x8x129x128, 1x32:8x512x128:causal, a ragged
 *     decode 3x8:2x1:1000x128 (lengths 5, 1000, 777) and a paged ragged decode
 *     4x8:2x1:300x128:paged16 (lengths 300, 17, 128, 1; pages shuffled), every candidate cuDNN's
 *     heuristics list is run with O and the LSE poisoned first and compared with the family's
 *     reference row math on the host (templates/attention/attn_ref.h); the first working one is
 *     rebuilt from its identity text (the runtime's replay) and must give bit-identical O and
 *     LSE; a text from another cuDNN version and an engine number the graph lacks are refused.
 *  2. Through the tuner (tune_run on the cuda device, the family as target) for 2x8x129x128 and
 *     1x32:8x512x128:causal: cuDNN candidates are listed, verified against the family's
 *     reference (O and LSE) in the worker and timed; none is wrong, at least one works.
 *  3. A problem cuDNN refuses (causal with SQ > SKV): the tune goes on with the templates and its
 *     note says why there are no library candidates.
 * Skips (77) without a driver, a GPU or cuDNN. */
/* stages: tune */
#include "kernels/attention.h"
#include "kernels/attention_cudnn.h"
#include "kernels/numeric.h"
#include "templates/attention/attn_ref.h"
#include "driver/cuda_driver.h"
#include "driver/cudnn.h"
#include "tuner/tune.h"
#include "test.h"

typedef struct inputs {
  problem p;
  size_t q_elems, kv_elems, lse_elems, pages, max_pages;
  uint16_t *q, *k, *v;
  int *table, *lens;
  CUdeviceptr dq, dk, dv, dout, dlse, dtable;
} inputs;

static void fill(uint16_t *x, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++) x[i] = num_f32_to_bf16((float)num_uniform(&seed, -1.0, 1.0));
}

static int setup(const char *shape, const char *lens, inputs *in) {
  memset(in, 0, sizeof *in);
  rt_error err = {0};
  if (attention_family.parse_shape(&attention_family, shape, "bf16", lens, &in->p, &err)) {
    fprintf(stderr, "%s: %s\n", shape, err.text);
    return -1;
  }
  const problem *p = &in->p;
  const size_t B = (size_t)problem_dim(p, "B"), HQ = (size_t)problem_dim(p, "HQ"),
               HKV = (size_t)problem_dim(p, "HKV"), SQ = (size_t)problem_dim(p, "SQ"),
               SKV = (size_t)problem_dim(p, "SKV"), D = (size_t)problem_dim(p, "D"),
               page = (size_t)problem_dim(p, "PAGE");
  in->lens = malloc(B * sizeof *in->lens);
  for (size_t b = 0; b < B; b++) in->lens[b] = (int)attention_kv_len(p, (int)b);
  if (page) {
    in->max_pages = (SKV + page - 1) / page;
    for (size_t b = 0; b < B; b++) in->pages += ((size_t)in->lens[b] + page - 1) / page;
    if (!problem_dim(p, "RAGGED")) in->pages = B * in->max_pages;
    in->table = calloc(B * in->max_pages, sizeof *in->table);
    /* pages handed out backwards, so neighbours in a sequence are not neighbours in the pool */
    size_t next = in->pages;
    for (size_t b = 0; b < B; b++)
      for (size_t j = 0; j < ((size_t)in->lens[b] + page - 1) / page; j++)
        in->table[b * in->max_pages + j] = (int)--next;
  }
  in->q_elems = B * SQ * HQ * D;
  in->kv_elems = page ? in->pages * page * HKV * D : B * SKV * HKV * D;
  in->lse_elems = B * HQ * SQ;
  in->q = malloc(in->q_elems * 2);
  in->k = malloc(in->kv_elems * 2);
  in->v = malloc(in->kv_elems * 2);
  fill(in->q, in->q_elems, 1);
  fill(in->k, in->kv_elems, 2);
  fill(in->v, in->kv_elems, 3);
  CUresult r = cu.cuMemAlloc_v2(&in->dq, in->q_elems * 2);
  if (!r) r = cu.cuMemAlloc_v2(&in->dk, in->kv_elems * 2);
  if (!r) r = cu.cuMemAlloc_v2(&in->dv, in->kv_elems * 2);
  if (!r) r = cu.cuMemAlloc_v2(&in->dout, in->q_elems * 2);
  if (!r) r = cu.cuMemAlloc_v2(&in->dlse, in->lse_elems * 4);
  if (!r) r = cu.cuMemcpyHtoD_v2(in->dq, in->q, in->q_elems * 2);
  if (!r) r = cu.cuMemcpyHtoD_v2(in->dk, in->k, in->kv_elems * 2);
  if (!r) r = cu.cuMemcpyHtoD_v2(in->dv, in->v, in->kv_elems * 2);
  if (!r && page) r = cu.cuMemAlloc_v2(&in->dtable, B * in->max_pages * 4);
  if (!r && page) r = cu.cuMemcpyHtoD_v2(in->dtable, in->table, B * in->max_pages * 4);
  CHECK_INT(r, CUDA_SUCCESS);
  return r ? -1 : 0;
}

static void release(inputs *in) {
  CUdeviceptr d[] = {in->dq, in->dk, in->dv, in->dout, in->dlse, in->dtable};
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
    if (d[i]) cu.cuMemFree_v2(d[i]);
  free(in->q);
  free(in->k);
  free(in->v);
  free(in->table);
  free(in->lens);
}

/* The family's reference on the host: O (fp32) and LSE of every row. */
static void reference(const inputs *in, float *o, float *lse) {
  attn_args a;
  attention_args(
      &in->p, (unsigned long long)(uintptr_t)in->q, (unsigned long long)(uintptr_t)in->k,
      (unsigned long long)(uintptr_t)in->v, 0, 0, (unsigned long long)(uintptr_t)in->table,
      problem_dim(&in->p, "RAGGED") ? (unsigned long long)(uintptr_t)in->lens : 0, 0, 0, &a);
  for (int b = 0; b < a.B; b++)
    for (int i = 0; i < a.SQ; i++)
      for (int h = 0; h < a.HQ; h++)
        attn_ref_row(&a, 2, b, i, h, o + attn_ref_q_row(&a, b, i, h),
                     lse + attn_ref_lse_index(&a, b, h, i));
}

/* Runs candidate i with O and LSE poisoned, downloads them; RT_OK or the run's status. */
static rt_status run(attn_cudnn *c, const inputs *in, int i, uint16_t *o, float *lse,
                     rt_error *err) {
  cu.cuMemsetD16Async(in->dout, 0x7fc0u, in->q_elems, NULL);
  cu.cuMemsetD32Async(in->dlse, 0x7fc00000u, in->lse_elems, NULL);
  rt_status st = attn_cudnn_run(c, i, NULL, err);
  if (!st) st = cuda_check(cu.cuCtxSynchronize(), "finish the cuDNN run", err);
  if (!st) st = cuda_check(cu.cuMemcpyDtoH_v2(o, in->dout, in->q_elems * 2), "download O", err);
  if (!st)
    st = cuda_check(cu.cuMemcpyDtoH_v2(lse, in->dlse, in->lse_elems * 4), "download the LSE", err);
  return st;
}

/* O's relative Frobenius error against the reference (NaN counts as infinite), and whether every
 * LSE agrees within 1e-3. */
static double compare(const inputs *in, const uint16_t *o, const float *lse, const float *ro,
                      const float *rlse, int *lse_ok) {
  double num = 0, den = 0;
  for (size_t i = 0; i < in->q_elems; i++) {
    double c = num_bf16_to_f32(o[i]), r = ro[i];
    if (!isfinite(c)) return INFINITY;
    num += (c - r) * (c - r);
    den += r * r;
  }
  *lse_ok = 1;
  for (size_t i = 0; i < in->lse_elems; i++)
    if (!(fabs((double)lse[i] - rlse[i]) <= 1e-3 * fmax(1.0, fabs((double)rlse[i])))) *lse_ok = 0;
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void in_process(const char *shape, const char *lens) {
  inputs in;
  if (setup(shape, lens, &in)) return;
  float *ro = malloc(in.q_elems * 4), *rlse = malloc(in.lse_elems * 4),
        *lse = malloc(in.lse_elems * 4), *lse2 = malloc(in.lse_elems * 4);
  uint16_t *o = malloc(in.q_elems * 2), *o2 = malloc(in.q_elems * 2);
  reference(&in, ro, rlse);
  attn_cudnn_io io = {in.dq, in.dk, in.dv, in.dout, in.dlse, in.dtable, 0};
  attn_cudnn *c = NULL;
  rt_error err = {0};
  CHECK_INT(attn_cudnn_open(&in.p, &io, &c, &err), RT_OK);
  int count = 0;
  if (c) CHECK_INT(attn_cudnn_list(c, 16, &count, &err), RT_OK);
  if (err.text[0]) fprintf(stderr, "%s: %s\n", in.p.shape, err.text);
  CHECK(count >= 1);
  int working = -1;
  for (int i = 0; i < count && i < 8; i++) {
    char text[256];
    CHECK_INT(attn_cudnn_describe(c, i, text, sizeof text, &err), RT_OK);
    rt_error_clear(&err);
    rt_status st = run(c, &in, i, o, lse, &err);
    if (st) {
      /* a configuration the heuristics named may still not build: its result says why */
      CHECK_INT(st, RT_ERR_UNSUPPORTED);
      printf("%-38s %-58s not built: %.200s\n", in.p.shape, text, err.text);
      continue;
    }
    int lse_ok = 0;
    double rel = compare(&in, o, lse, ro, rlse, &lse_ok);
    CHECK(rel <= 1e-2);
    CHECK(lse_ok);
    printf("%-38s %-58s O error %.2e, LSE %s, workspace %zu\n", in.p.shape, text, rel,
           lse_ok ? "ok" : "WRONG", attn_cudnn_workspace(c, i));
    if (working < 0 && rel <= 1e-2 && lse_ok) working = i;
  }
  CHECK(working >= 0);
  if (working >= 0) {
    /* the replay: the plan rebuilt from the text gives the same bits */
    char text[256];
    attn_cudnn_describe(c, working, text, sizeof text, &err);
    run(c, &in, working, o, lse, &err);
    int j = -1;
    CHECK_INT(attn_cudnn_add(c, text, &j, &err), RT_OK);
    CHECK(j >= count);
    CHECK_INT(run(c, &in, j, o2, lse2, &err), RT_OK);
    CHECK(memcmp(o, o2, in.q_elems * 2) == 0);
    CHECK(memcmp(lse, lse2, in.lse_elems * 4) == 0);
    /* another cuDNN's text, and an engine the graph does not have, are refused */
    attn_cudnn_id id;
    CHECK_INT(attn_cudnn_id_parse(text, &id, &err), RT_OK);
    id.version = id.version == 99999 ? 90000 : id.version + 1;
    char other[256];
    attn_cudnn_id_format(&id, other, sizeof other);
    CHECK_INT(attn_cudnn_add(c, other, &j, &err), RT_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.text, "tune again");
    id.version = dnn.version;
    id.engine = 100000;
    attn_cudnn_id_format(&id, other, sizeof other);
    CHECK_INT(attn_cudnn_add(c, other, &j, &err), RT_ERR_UNSUPPORTED);
  }
  attn_cudnn_close(c);
  free(ro);
  free(rlse);
  free(lse);
  free(lse2);
  free(o);
  free(o2);
  release(&in);
}

static void through_tuner(const char *bin, const char *shape) {
  tune_options opt;
  memset(&opt, 0, sizeof opt);
  opt.target = "attention";
  opt.shape = shape;
  opt.dtype = "bf16";
  opt.device = "cuda";
  opt.budget = 3;
  opt.strategy = "random";
  opt.worker_exe = bin;
  opt.worker_argv = TEST_WORKER_ARGV;
  opt.timeout_s = 30;
  tune_report rep;
  rt_error err = {0};
  CHECK_INT(tune_run(&opt, &rep, &err), RT_OK);
  if (err.text[0]) {
    fprintf(stderr, "  %s: %s\n", shape, err.text);
    return;
  }
  int listed = 0, ok = 0;
  for (size_t i = 0; i < rep.nresults; i++) {
    const candidate_result *r = &rep.results[i];
    if (strcmp(r->template_name, "cudnn") != 0) continue;
    listed++;
    CHECK(r->status != RT_ERR_WRONG_RESULT);
    if (r->status == RT_OK) {
      ok++;
      CHECK(r->verify_error >= 0 && r->verify_error <= 1e-2);
      CHECK(r->time_ms > 0);
    }
    printf("%-24s %-60s %-16s %.4f ms err %.2g %s\n", shape, r->config, rt_status_name(r->status),
           r->time_ms, r->verify_error, r->detail);
  }
  CHECK(listed >= 1);
  CHECK(ok >= 1);
  if (rep.note[0]) printf("%s note: %s\n", shape, rep.note);
  printf("%s best: %s %s %.4f ms\n", shape, rep.best.template_name, rep.best.config,
         rep.best.time_ms);
  tune_report_free(&rep);
}

static void refused_by_cudnn(const char *bin) {
  tune_options opt;
  memset(&opt, 0, sizeof opt);
  opt.target = "attention";
  opt.shape = "1x8x64:32x64:causal"; /* SQ > SKV, nothing padded: cuDNN's mask cannot say it */
  opt.dtype = "bf16";
  opt.device = "cuda";
  opt.budget = 2;
  opt.strategy = "random";
  opt.worker_exe = bin;
  opt.worker_argv = TEST_WORKER_ARGV;
  tune_report rep;
  rt_error err = {0};
  CHECK_INT(tune_run(&opt, &rep, &err), RT_OK);
  if (err.text[0]) {
    fprintf(stderr, "  %s\n", err.text);
    return;
  }
  CHECK_CONTAINS(rep.note, "no library candidates: ");
  CHECK_CONTAINS(rep.note, "bottom-right causal mask");
  for (size_t i = 0; i < rep.nresults; i++)
    CHECK(strcmp(rep.results[i].template_name, "cudnn") != 0);
  CHECK(rep.have_best);
  printf("1x8x64:32x64:causal note: %s\n", rep.note);
  tune_report_free(&rep);
}

TEST_CASE(cudnn_candidates) {
  rt_error err = {0};
  int n = 0;
  if (cuda_driver_load(&err) != RT_OK || cuda_gpu_count(&n, &err) != RT_OK || n == 0) {
    test_skip(err.text[0] ? err.text : "no CUDA GPU");
  }
  if (cudnn_load(&err) != RT_OK) {
    test_skip(err.text);
  }
  char v[32];
  cudnn_version_text(dnn.version, v, sizeof v);
  printf("cuDNN %s at %s\n", v, dnn.path);
  const char *bin = getenv("ROOFTUNE_BIN");
  if (!bin) test_skip("ROOFTUNE_BIN is not set (run through ctest or tests/gpu/run.sh)");

  CUdevice dev;
  CUcontext ctx;
  CHECK_INT(cu.cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  CHECK_INT(cu.cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  CHECK_INT(cu.cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  in_process("2x8x129x128", NULL);
  in_process("1x32:8x512x128:causal", NULL);
  in_process("3x8:2x1:1000x128", "5,1000,777");
  in_process("4x8:2x1:300x128:paged16", "300,17,128,1");
  cu.cuDevicePrimaryCtxRelease_v2(dev);

  through_tuner(bin, "2x8x129x128");
  through_tuner(bin, "1x32:8x512x128:causal");
  refused_by_cudnn(bin);
}

TEST_LIST(TEST_ENTRY(cudnn_candidates))
