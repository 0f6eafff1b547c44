/* test_roof_budget.c — the pure functions the tune loop spends its budget by: a template's
 * roofline bound (its fewest executed FLOPs on its path's peak, on the SMs its largest grid can
 * fill, the problem's compulsory bytes on the bandwidth, one launch), the across-template rule (a template whose bound cannot come
 * within a few percent of the incumbent gets no more evaluations) and the within-template stop
 * (the best within a share of its bound).  Numbers worked by hand from the spec table. */
/* stages: model */
#include <math.h>

#include "test.h"
#include "model/diagnose.h"
#include "model/roofline.h"

TEST_CASE(gemm_bounds) {
  roofline_ceilings h;
  roofline_from_spec(gpu_spec_find("h200"), &h); /* 4.3 TB/s, f16 989.5 TFLOP/s, mma.sync 0.66 */
  template_roof r;
  rt_error err = {0};
  /* a 4096^3 bf16 GEMM through wgmma: 2*4096^3 = 1.374e11 FLOPs / 989.5e12 = 138.9 us; its
   * compulsory bytes 3*4096^2*2 = 1.007e8 / 4.3e12 = 23.4 us: compute-bound, + 4 us launch */
  double flops = 2.0 * 4096 * 4096 * 4096, bytes = 3.0 * 4096 * 4096 * 2;
  CHECK_INT(roofline_template_roof(flops, bytes, 0, PATH_TC_F16, 1, &h, &r, &err), RT_OK);
  CHECK_NEAR(r.compute_s, flops / 989.5e12, 1e-12);
  CHECK_NEAR(r.memory_s, bytes / 4.3e12, 1e-12);
  CHECK_NEAR(r.seconds, flops / 989.5e12 + 4e-6, 1e-12);
  CHECK_INT(r.memory_bound, 0);
  /* the same GEMM through mma.sync: 66 % of the f16 rate, a higher bound */
  template_roof mma;
  CHECK_INT(roofline_template_roof(flops, bytes, 0, PATH_TC_F16, 0, &h, &mma, &err), RT_OK);
  CHECK_NEAR(mma.compute_s, flops / (0.66 * 989.5e12), 1e-12);
  CHECK_NEAR(roofline_path_peak(&h, PATH_TC_F16, 0), 0.66 * 989.5e12, 1);
  CHECK_NEAR(roofline_path_peak(&h, PATH_TC_F16, 1), 989.5e12, 1);
}

TEST_CASE(gemv_padding) {
  roofline_ceilings h;
  roofline_from_spec(gpu_spec_find("h200"), &h); /* 4.3 TB/s, f16 989.5 TFLOP/s, mma.sync 0.66 */
  template_roof r;
  rt_error err = {0};
  /* a decode GEMV 1x14336x4096 bf16: 1.17e8 FLOPs, but a 128-row tile executes 128x that; its
   * bytes 4096*14336*2 = 1.17e8 / 4.3e12 = 27.3 us still bound it: memory-bound */
  double gf = 2.0 * 14336 * 4096, gb = 2.0 * 14336 * 4096;
  CHECK_INT(roofline_template_roof(128 * gf, gb, 0, PATH_TC_F16, 1, &h, &r, &err), RT_OK);
  CHECK_INT(r.memory_bound, 1);
  CHECK_NEAR(r.seconds, gb / 4.3e12 + 4e-6, 1e-12);
  /* padding counts: a template whose smallest tile executes 1024x the problem's math is bound
   * by compute (1.2e11 / 989.5e12 = 121 us) above its 27 us of bytes */
  CHECK_INT(roofline_template_roof(1024 * gf, gb, 0, PATH_TC_F16, 1, &h, &r, &err), RT_OK);
  CHECK_INT(r.memory_bound, 0);
  CHECK_NEAR(r.compute_s, 1024 * gf / 989.5e12, 1e-12);
}

TEST_CASE(prefill_on_decode) {
  double gb = 2.0 * 14336 * 4096;
  roofline_ceilings h;
  roofline_from_spec(gpu_spec_find("h200"), &h); /* 4.3 TB/s, f16 989.5 TFLOP/s, mma.sync 0.66 */
  template_roof r;
  rt_error err = {0};
  /* a prefill template on a one-row decode problem: its largest grid is 32 blocks (one per
   * head), so at most 32 of the 132 SMs compute: 1.7e10 FLOPs at 32/132 of 989.5 TFLOP/s = 71 us,
   * above its 27 us of bytes; the same FLOPs over a grid that fills the GPU: 17 us */
  CHECK_INT(roofline_template_roof(1.7e10, gb, 32, PATH_TC_F16, 1, &h, &r, &err), RT_OK);
  CHECK_NEAR(r.compute_s, 1.7e10 / (989.5e12 * 32 / 132), 1e-12);
  CHECK_INT(r.memory_bound, 0);
  CHECK_INT(roofline_template_roof(1.7e10, gb, 264, PATH_TC_F16, 1, &h, &r, &err), RT_OK);
  CHECK_NEAR(r.compute_s, 1.7e10 / 989.5e12, 1e-12);
  CHECK_INT(r.memory_bound, 1);
}

TEST_CASE(bytes_only) {
  roofline_ceilings h;
  roofline_from_spec(gpu_spec_find("h200"), &h); /* 4.3 TB/s, f16 989.5 TFLOP/s, mma.sync 0.66 */
  template_roof r;
  rt_error err = {0};
  /* data movement only (a transpose): bytes alone */
  CHECK_INT(roofline_template_roof(0, 1e9, 0, PATH_SIMT_F32, 0, &h, &r, &err), RT_OK);
  CHECK_NEAR(r.seconds, 1e9 / 4.3e12 + 4e-6, 1e-12);
}

TEST_CASE(across_templates) {
  /* across templates: a prefill template bounded at 60 us cannot win against a decode template
   * measured at 10 us; one bounded at 10.4 us can come within 5 % of 10 us, one at 10.6 cannot */
  template_roof b = {.seconds = 60e-6};
  CHECK_INT(roofline_can_win(&b, 10e-6, 0.05), 0);
  b.seconds = 10.4e-6;
  CHECK_INT(roofline_can_win(&b, 10e-6, 0.05), 1);
  b.seconds = 10.6e-6;
  CHECK_INT(roofline_can_win(&b, 10e-6, 0.05), 0);
  CHECK_INT(roofline_can_win(&b, 0, 0.05), 1); /* no incumbent yet: every template may run */
  CHECK_INT(roofline_can_win(&b, 10.6e-6, 0), 1);
}

TEST_CASE(within_template) {
  roofline_ceilings h;
  roofline_from_spec(gpu_spec_find("h200"), &h); /* 4.3 TB/s, f16 989.5 TFLOP/s, mma.sync 0.66 */
  template_roof b = {0};
  /* within a template: spec ceilings stop at 85 % of the bound (the diagnosis' "at the roof"),
   * measured ones at 95 % */
  CHECK(ROOFLINE_STOP_SPEC == DIAG_AT_ROOF);
  CHECK_NEAR(roofline_stop_fraction(&h), ROOFLINE_STOP_SPEC, 0);
  roofline_ceilings m = h;
  m.measured = 1;
  CHECK_NEAR(roofline_stop_fraction(&m), ROOFLINE_STOP_MEASURED, 0);
  b.seconds = 100e-6;
  CHECK_INT(roofline_at_roof(&b, 110e-6, 0.85), 1); /* 91 % of its bound */
  CHECK_INT(roofline_at_roof(&b, 125e-6, 0.85), 0); /* 80 % */
  CHECK_INT(roofline_at_roof(&b, 104e-6, 0.95), 1);
  CHECK_INT(roofline_at_roof(&b, 110e-6, 0.95), 0);
  CHECK_INT(roofline_at_roof(&b, 0, 0.85), 0);
}

TEST_CASE(unbounded) {
  roofline_ceilings h;
  roofline_from_spec(gpu_spec_find("h200"), &h); /* 4.3 TB/s, f16 989.5 TFLOP/s, mma.sync 0.66 */
  template_roof r;
  rt_error err = {0};
  /* what cannot be bounded is said, not guessed */
  CHECK_INT(roofline_template_roof(0, 0, 0, PATH_SIMT_F32, 0, &h, &r, &err), RT_ERR_INVALID);
  CHECK_INT(roofline_template_roof(-1, 5, 0, PATH_SIMT_F32, 0, &h, &r, &err), RT_ERR_INVALID);
  CHECK_INT(roofline_template_roof(NAN, 5, 0, PATH_SIMT_F32, 0, &h, &r, &err), RT_ERR_INVALID);
  roofline_ceilings t;
  roofline_from_spec(gpu_spec_find("rtx2080ti"), &t); /* Turing: no tf32 */
  CHECK_INT(roofline_template_roof(1e9, 1e6, 0, PATH_TC_TF32, 0, &t, &r, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "RTX 2080 Ti");
  CHECK_INT(roofline_template_roof(1e9, 1e6, 0, PATH_SIMT_F32, 0, &t, &r, &err), RT_OK);
  CHECK_NEAR(r.compute_s, 1e9 / 13.4e12, 1e-15);
}

TEST_LIST(TEST_ENTRY(gemm_bounds), TEST_ENTRY(gemv_padding), TEST_ENTRY(prefill_on_decode),
          TEST_ENTRY(bytes_only), TEST_ENTRY(across_templates), TEST_ENTRY(within_template),
          TEST_ENTRY(unbounded))
