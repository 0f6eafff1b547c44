/* test_gemm_family.c — the gemm family's host side: shape syntax (valid and invalid), its
 * options (fp8 operand types, the epilogue, the output type) and their canonical text, bound
 * names, FLOP and byte formulas, tolerances, the reference epilogue against the templates'
 * (gemm_epilogue.h), dtype conversions, the cuBLASLt algorithm text, and the family registry. */
/* stages: kernels */
#include "kernels/gemm.h"
#include "kernels/numeric.h"
#include "templates/gemm/gemm_epilogue.h"
#include "driver/cuda_driver.h"
#include "test.h"

static void check_bad(const char *shape, const char *dtype, const char *needle) {
  problem p;
  rt_error err;
  rt_error_clear(&err);
  rt_status st = gemm_family.parse_shape(&gemm_family, shape, dtype, NULL, &p, &err);
  CHECK(st != RT_OK);
  CHECK_CONTAINS(err.text, needle);
  if (st == RT_OK) fprintf(stderr, "  \"%s\" was accepted\n", shape);
}

static long long var(const rt_vars *v, const char *name) {
  long long x = -1;
  CHECK(rt_vars_get(v, name, &x));
  return x;
}

TEST_CASE(find) {
  CHECK(family_find("gemm") == &gemm_family);
  CHECK(family_find("nope") == NULL);
  CHECK(family_find(NULL) == NULL);
  CHECK_CONTAINS(family_names(), "gemm");
}

TEST_CASE(valid_shapes) {
  problem p;
  rt_error err;
  rt_vars v;
  /* valid shapes */
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "4096x4096x4096", "bf16", NULL, &p, &err), RT_OK);
  CHECK_STR(p.family, "gemm");
  CHECK_STR(p.shape, "4096x4096x4096");
  CHECK_STR(p.layout, "nn");
  CHECK_STR(p.dtype, "bf16");
  CHECK_INT(p.ndims, 4);
  rt_vars_clear(&v);
  CHECK_INT(gemm_family.bind(&gemm_family, &p, &v), RT_OK);
  CHECK_INT(var(&v, "M"), 4096);
  CHECK_INT(var(&v, "BATCH"), 1);
  CHECK_INT(var(&v, "dtype_bytes"), 2);
  CHECK_INT(var(&v, "b_col"), 0);
  CHECK_INT(var(&v, "out_bytes"), 4);
  CHECK_NEAR(gemm_family.flops(&gemm_family, &p), 2.0 * 4096.0 * 4096.0 * 4096.0, 0);
  CHECK_NEAR(gemm_family.min_bytes(&gemm_family, &p),
             2.0 * (2 * 4096.0 * 4096.0) + 4.0 * 4096.0 * 4096.0, 0);

  CHECK_INT(gemm_family.parse_shape(&gemm_family, "8@127x255x129:nt", "f32", NULL, &p, &err),
            RT_OK);
  CHECK_STR(p.shape, "8@127x255x129:nt");
  CHECK_STR(p.layout, "nt");
  rt_vars_clear(&v);
  CHECK_INT(gemm_family.bind(&gemm_family, &p, &v), RT_OK);
  CHECK_INT(var(&v, "M"), 127);
  CHECK_INT(var(&v, "N"), 255);
  CHECK_INT(var(&v, "K"), 129);
  CHECK_INT(var(&v, "BATCH"), 8);
  CHECK_INT(var(&v, "dtype_bytes"), 4);
  CHECK_INT(var(&v, "b_col"), 1);
  CHECK_NEAR(gemm_family.flops(&gemm_family, &p), 8 * 2.0 * 127 * 255 * 129, 0);
  CHECK_NEAR(gemm_family.min_bytes(&gemm_family, &p),
             8 * (4.0 * (127 * 129 + 129 * 255) + 4.0 * 127 * 255), 0);

  CHECK_INT(gemm_family.parse_shape(&gemm_family, "1x4096x14336:nn", "f16", NULL, &p, &err), RT_OK);
  CHECK_STR(p.shape, "1x4096x14336"); /* nn is the default and is not spelled out */
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "1@2x3x4", "f16", NULL, &p, &err), RT_OK);
  CHECK_STR(p.shape, "2x3x4");
}

TEST_CASE(tolerances) {
  problem p;
  rt_error err;
  rt_vars v;
  /* tolerances: tf32 (inputs rounded to 10 mantissa bits) its own; f32 is fp32 math, held like
   * f16/bf16 to fp32 summation-order differences only */
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64", "tf32", NULL, &p, &err), RT_OK);
  CHECK_STR(p.dtype, "tf32");
  double ttf = gemm_family.tolerance(&gemm_family, &p);
  rt_vars_clear(&v);
  CHECK_INT(gemm_family.bind(&gemm_family, &p, &v), RT_OK);
  CHECK_INT(var(&v, "dtype_bytes"), 4); /* tf32 inputs are fp32 in memory */
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64", "f32", NULL, &p, &err), RT_OK);
  double t32 = gemm_family.tolerance(&gemm_family, &p);
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64", "f16", NULL, &p, &err), RT_OK);
  double t16 = gemm_family.tolerance(&gemm_family, &p);
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64", "bf16", NULL, &p, &err), RT_OK);
  CHECK(ttf >= 1e-3 && ttf <= 5e-3);
  CHECK(t32 <= 1e-4 && t32 > 0);
  CHECK(t16 < ttf && t16 > 0);
  CHECK_NEAR(gemm_family.tolerance(&gemm_family, &p), t16, 0);
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64", "fp32", NULL, &p, &err),
            RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "use f32, tf32, f16, bf16, e4m3 or e5m2");
}

TEST_CASE(epilogue_options) {
  problem p;
  rt_error err;
  rt_vars v;
  /* options: the epilogue and the output type, in canonical order */
  gemm_epi e;
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "4096x14336x4096:nt+out=bf16+gelu+bias", "bf16",
                                    NULL, &p, &err),
            RT_OK);
  CHECK_STR(p.shape, "4096x14336x4096:nt+bias+gelu+out=bf16");
  CHECK_STR(p.layout, "nt");
  CHECK_INT(p.ndims, 4);
  CHECK_INT(gemm_problem_epi(&p, &e, &err), RT_OK);
  CHECK_INT(e.on, 1);
  CHECK_INT(e.bias, 1);
  CHECK_INT(e.act, GEMM_ACT_GELU);
  CHECK_INT(e.out_code, GEMM_OUT_BF16);
  CHECK_INT(e.beta + e.residual + e.alpha, 0);
  rt_vars_clear(&v);
  CHECK_INT(gemm_family.bind(&gemm_family, &p, &v), RT_OK);
  CHECK_INT(var(&v, "epi"), 1);
  CHECK_INT(var(&v, "epi_bias"), 1);
  CHECK_INT(var(&v, "epi_act"), 2);
  CHECK_INT(var(&v, "epi_beta"), 0);
  CHECK_INT(var(&v, "epi_res"), 0);
  CHECK_INT(var(&v, "out_bytes"), 2);
  CHECK_INT(var(&v, "out_code"), 2);
  CHECK_INT(var(&v, "b_bytes"), 2);
  CHECK_INT(var(&v, "b_e5m2"), 0);
  /* A, B, D (bf16) and the bias */
  CHECK_NEAR(gemm_family.min_bytes(&gemm_family, &p),
             2.0 * (4096.0 * 4096 + 4096.0 * 14336) + 2.0 * 4096 * 14336 + 2.0 * 14336, 0);
  /* unfused, the bf16 product would be written and read again */
  CHECK_NEAR(gemm_family.fused_bytes(&gemm_family, &p), 2.0 * 2 * 4096 * 14336, 0);
  /* bf16 output: the rounding's 2^-8 on top */
  CHECK_NEAR(gemm_family.tolerance(&gemm_family, &p), 1e-4 + 1.0 / 256, 1e-12);
  CHECK_INT(
      gemm_family.parse_shape(&gemm_family, "2@64x64x64+residual+beta+silu", "f16", NULL, &p, &err),
      RT_OK);
  CHECK_STR(p.shape, "2@64x64x64+beta+silu+residual");
  CHECK_STR(p.layout, "nn");
  CHECK_NEAR(gemm_family.min_bytes(&gemm_family, &p), 2 * (2.0 * (64 * 64 * 2) + 4.0 * 64 * 64 * 3),
             0);
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64+alpha+bias", "f16", NULL, &p, &err),
            RT_OK);
  CHECK_STR(p.shape, "64x64x64+bias"); /* alpha is part of every epilogue */
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64+alpha", "f16", NULL, &p, &err), RT_OK);
  CHECK_STR(p.shape, "64x64x64+alpha");
  CHECK_NEAR(gemm_family.fused_bytes(&gemm_family, &p), 0,
             0); /* nothing a separate pass would do */
  rt_vars_clear(&v);
  CHECK_INT(gemm_family.bind(&gemm_family, &p, &v), RT_OK);
  CHECK_INT(var(&v, "epi"), 1);
  CHECK_INT(var(&v, "out_bytes"), 4);
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64:nn+out=f32", "f16", NULL, &p, &err),
            RT_OK);
  CHECK_STR(p.shape, "64x64x64"); /* the default output: no epilogue */
  rt_vars_clear(&v);
  CHECK_INT(gemm_family.bind(&gemm_family, &p, &v), RT_OK);
  CHECK_INT(var(&v, "epi"), 0);
  CHECK_INT(var(&v, "epi_act"), 0);
}

TEST_CASE(fp8) {
  gemm_epi e;
  problem p;
  rt_error err;
  rt_vars v;
  /* fp8: one-byte inputs, always an epilogue (the per-tensor scales), B's type as an option */
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "256x512x1024:nt", "e4m3", NULL, &p, &err),
            RT_OK);
  CHECK_STR(p.shape, "256x512x1024:nt");
  CHECK_STR(p.dtype, "e4m3");
  rt_vars_clear(&v);
  CHECK_INT(gemm_family.bind(&gemm_family, &p, &v), RT_OK);
  CHECK_INT(var(&v, "dtype_bytes"), 1);
  CHECK_INT(var(&v, "b_bytes"), 1);
  CHECK_INT(var(&v, "b_e5m2"), 0);
  CHECK_INT(var(&v, "epi"), 1);
  CHECK_INT(var(&v, "out_bytes"), 4);
  CHECK_NEAR(gemm_family.min_bytes(&gemm_family, &p), 256.0 * 1024 + 1024.0 * 512 + 4.0 * 256 * 512,
             0);
  /* 4 * 2^-13 * sqrt(K/32) */
  CHECK_NEAR(gemm_family.tolerance(&gemm_family, &p), 4.0 / 8192 * sqrt(32.0), 1e-12);
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "8192x8192x8192:nt+out=bf16+b=e5m2", "e4m3", NULL,
                                    &p, &err),
            RT_OK);
  CHECK_STR(p.shape, "8192x8192x8192:nt+b=e5m2+out=bf16");
  CHECK_INT(gemm_problem_epi(&p, &e, &err), RT_OK);
  CHECK_INT(e.a_code, GEMM_CODE_E4M3);
  CHECK_INT(e.b_code, GEMM_CODE_E5M2);
  rt_vars_clear(&v);
  CHECK_INT(gemm_family.bind(&gemm_family, &p, &v), RT_OK);
  CHECK_INT(var(&v, "b_e5m2"), 1);
  CHECK_NEAR(gemm_family.tolerance(&gemm_family, &p), 4.0 / 8192 * 16 + 1.0 / 256, 1e-12);
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "16x4096x4096:nt+b=e4m3", "e4m3", NULL, &p, &err),
            RT_OK);
  CHECK_STR(p.shape, "16x4096x4096:nt"); /* B's type is A's: not spelled out */
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "16x4096x4096:nt+b=e4m3", "e5m2", NULL, &p, &err),
            RT_OK);
  CHECK_STR(p.shape, "16x4096x4096:nt+b=e4m3");
  /* per-row / per-column fp8 scales: M + N floats more to read */
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "256x512x1024:nt+out=bf16+vscale+b=e5m2", "e4m3",
                                    NULL, &p, &err),
            RT_OK);
  CHECK_STR(p.shape, "256x512x1024:nt+b=e5m2+vscale+out=bf16");
  CHECK_INT(gemm_problem_epi(&p, &e, &err), RT_OK);
  CHECK_INT(e.vscale, 1);
  CHECK_NEAR(gemm_family.min_bytes(&gemm_family, &p),
             256.0 * 1024 + 1024.0 * 512 + 2.0 * 256 * 512 + 4.0 * (256 + 512), 0);
  check_bad("4x4x4:nt+vscale", "bf16", "+vscale scales fp8 inputs");
  CHECK_INT(gemm_dtype_bytes("e4m3"), 1);
  CHECK_INT(gemm_dtype_bytes("e5m2"), 1);
  CHECK_INT(gemm_dtype_code("e5m2"), GEMM_CODE_E5M2);
}

TEST_CASE(epilogue_reference) {
  /* the reference epilogue (double) against the templates' (gemm_epilogue.h, fp32): the order
   * of the steps, and the activations within a few fp32 ulps over the range that matters */
  {
    gemm_epi r = {0};
    r.beta = r.bias = r.residual = 1;
    r.act = GEMM_ACT_RELU;
    /* 0.5*2 + 0.5*(-4) + (-1) = -2 -> relu 0 -> + residual 0.25 */
    CHECK_NEAR(gemm_epi_reference(&r, 0.5, 0.5, 2.0, -4.0, -1.0, 0.25), 0.25, 0);
    r.act = GEMM_ACT_GELU;
    r.beta = r.bias = r.residual = 0;
    CHECK_NEAR(gemm_epi_reference(&r, 1, 0, 1.0, 0, 0, 0), 0.8411919906082768, 1e-12);
    r.act = GEMM_ACT_SILU;
    CHECK_NEAR(gemm_epi_reference(&r, 1, 0, 1.0, 0, 0, 0), 0.7310585786300049, 1e-12);
    CHECK_NEAR(gemm_epi_reference(&r, 1, 0, -200.0, 0, 0, 0), 0, 1e-60);
    double worst = 0;
    for (int act = 1; act <= 3; act++) {
      r.act = act;
      for (int i = -4000; i <= 4000; i++) {
        const double x = i / 200.0, ref = gemm_epi_reference(&r, 1, 0, x, 0, 0, 0);
        const double got = gemm_epi_act(act, (float)x);
        worst = fmax(worst, fabs(got - ref) / fmax(1.0, fabs(x)));
      }
    }
    CHECK(worst < 2e-6);
    printf(
        "templates' activations against the reference: largest error %.2e (relative to max(1, "
        "|x|))\n",
        worst);
    CHECK(fabsf(gemm_epi_act(GEMM_ACT_GELU, -100.0f)) < 1e-30f);
    CHECK(!isnan(gemm_epi_act(GEMM_ACT_SILU, -1e30f)));
  }
}

TEST_CASE(invalid_shapes) {
  problem p;
  rt_error err;
  /* invalid shapes name the problem and the syntax */
  check_bad("", "f32", "empty");
  check_bad("4096x4096", "f32", "separated by 'x'");
  check_bad("4096x4096x", "f32", "K must be a positive integer");
  check_bad("0x4x4", "f32", "M must be a positive integer");
  check_bad("4x-4x4", "f32", "N must be a positive integer");
  check_bad("4x4x4x4", "f32", "unexpected text after K");
  check_bad("4x4x4:tn", "f32", "A must be row-major");
  check_bad("4x4x4:xx", "f32", "must be nn or nt");
  check_bad("4x4x4 ", "f32", "unexpected text");
  check_bad("@4x4x4", "f32", "batch");
  check_bad("0@4x4x4", "f32", "batch");
  check_bad("99999@4x4x4", "f32", "larger than 4096");
  check_bad("3000000000x4x4", "f32", "larger than 2147482623");
  check_bad("4x2147483000x4", "f32", "N is larger than 2147482623");
  check_bad("99999999999999999999999x4x4", "f32", "positive integer");
  check_bad("4x4x4", "f64", "unknown gemm dtype \"f64\": use f32, tf32, f16, bf16, e4m3 or e5m2");
  check_bad("4x4x4", NULL, "unknown gemm dtype");
  check_bad("4x4x4", "e4m3", "layout nt");
  check_bad("4x4x4:nn", "e5m2", "fp8 inputs need B stored N x K");
  check_bad("4x4x4:nt+b=e5m2", "bf16", "+b= gives B an fp8 type");
  check_bad("4x4x4:nt+b=bf16", "e4m3", "+b= gives B an fp8 type");
  check_bad("4x4x4:nt+b=e5m2+b=e5m2", "e4m3", "+b= is given twice");
  check_bad("4x4x4+gelu+relu", "bf16", "one activation at most (+gelu and +relu)");
  check_bad("4x4x4+bias+bias", "bf16", "option +bias is given twice");
  check_bad("4x4x4+bias+swish", "bf16", "unknown option +swish");
  check_bad("4x4x4:nt+", "bf16", "empty");
  check_bad("4x4x4++bias", "bf16", "empty");
  check_bad("4x4x4+out=f64", "bf16", "+out= takes f32, f16 or bf16");
  check_bad("4x4x4+out=bf16+out=f16", "bf16", "+out= is given twice");
  check_bad("4x4x4:ntt", "bf16", "must be nn or nt");
  check_bad("4x4x4:nt bias", "bf16", "must be nn or nt");
  check_bad("4096@1000000000x1000000000x1000000000:nt+beta+bias+gelu+residual", "bf16",
            "longer than 63");
  rt_error_clear(&err);
  gemm_family.parse_shape(&gemm_family, "12x", "f32", NULL, &p, &err);
  CHECK_CONTAINS(err.text, "\"12x\"");
  CHECK_CONTAINS(err.text, "[BATCH@]MxNxK");
  CHECK_STR(err.source, "--shape");
}

TEST_CASE(conversions) {
  /* conversions: round to nearest even */
  CHECK_INT(num_f32_to_f16(1.0f), 0x3c00);
  CHECK_INT(num_f32_to_f16(-2.0f), 0xc000);
  CHECK_INT(num_f32_to_f16(0.1f), 0x2e66);
  CHECK_INT(num_f32_to_f16(65504.0f), 0x7bff);
  CHECK_INT(num_f32_to_f16(1e6f), 0x7c00);
  CHECK_INT(num_f32_to_f16(5.960464477539063e-08f), 0x0001); /* smallest subnormal */
  CHECK_INT(num_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);     /* tie to even */
  CHECK_INT(num_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);     /* tie to even, upwards */
  CHECK_INT(num_f32_to_bf16(1.0f), 0x3f80);
  CHECK_INT(num_f32_to_bf16(-0.5f), 0xbf00);
  CHECK_INT(num_f32_to_bf16(1.0f + 1.0f / 256), 0x3f80); /* tie to even */
  CHECK_INT(num_f32_to_bf16(1.0f + 3.0f / 256), 0x3f82);
  for (int i = -1000; i <= 1000; i++) {
    float f = i / 1000.0f;
    CHECK_NEAR(num_f16_to_f32(num_f32_to_f16(f)), f, fabs(f) / 1024 + 1e-7);
    CHECK_NEAR(num_bf16_to_f32(num_f32_to_bf16(f)), f, fabs(f) / 128 + 1e-30);
  }
}

TEST_CASE(cublaslt_algo_text) {
  rt_error err;
  /* cuBLASLt algorithm text round trip */
  gemm_lt_algo a = {1, 21, 20, 19, 4, 2, 1, 3, 7, 9, 0}, b;
  char text[256];
  gemm_lt_algo_format(&a, text, sizeof text);
  CHECK_STR(text,
            "cublaslt compute=32F_FAST_TF32 id=21 tile=20 stages=19 splitk=4 reduction=2 swizzle=1 "
            "custom=3 inner=7 cluster=9");
  CHECK_INT(gemm_lt_algo_parse(text, &b, &err), RT_OK);
  CHECK(memcmp(&a, &b, sizeof a) == 0);
  a.tf32 = 0;
  gemm_lt_algo_format(&a, text, sizeof text);
  CHECK_INT(gemm_lt_algo_parse(text, &b, &err), RT_OK);
  CHECK_INT(b.tf32, 0);
  rt_error_clear(&err);
  CHECK_INT(gemm_lt_algo_parse("cutlass id=1", &b, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "must start with");
  CHECK_INT(gemm_lt_algo_parse("cublaslt compute=64F id=1", &b, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "compute must be");
  CHECK_INT(gemm_lt_algo_parse("cublaslt compute=32F id=1 tile=2", &b, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "stages= is missing");
  CHECK_INT(gemm_lt_algo_parse("cublaslt compute=32F id=x tile=0 stages=0 splitk=1 reduction=0 "
                               "swizzle=0 custom=0 inner=0 cluster=0",
                               &b, &err),
            RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "id must be");
  /* fp8 fast accumulation travels in the text (and an old text without it still parses) */
  a.fast_accum = 1;
  gemm_lt_algo_format(&a, text, sizeof text);
  CHECK_CONTAINS(text, " fastaccum=1");
  CHECK_INT(gemm_lt_algo_parse(text, &b, &err), RT_OK);
  CHECK(memcmp(&a, &b, sizeof a) == 0);
  CHECK_INT(gemm_lt_algo_parse("cublaslt compute=32F id=1 tile=0 stages=0 splitk=1 reduction=0 "
                               "swizzle=0 custom=0 inner=0 cluster=0 fastaccum=2",
                               &b, &err),
            RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "fastaccum must be 0 or 1");
}

TEST_CASE(no_driver_setup) {
  problem p;
  rt_error err;
  /* no driver here: GPU setup fails cleanly */
  family_gpu *g = NULL;
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64", "f32", NULL, &p, &err), RT_OK);
  if (cuda_driver_load(NULL) != RT_OK) {
    CHECK(gemm_family.gpu_setup(&gemm_family, &p, 1, NULL, NULL, &g, &err) != RT_OK);
    CHECK(g == NULL);
  }
}

TEST_LIST(TEST_ENTRY(find), TEST_ENTRY(valid_shapes), TEST_ENTRY(tolerances),
          TEST_ENTRY(epilogue_options), TEST_ENTRY(fp8), TEST_ENTRY(epilogue_reference),
          TEST_ENTRY(invalid_shapes), TEST_ENTRY(conversions), TEST_ENTRY(cublaslt_algo_text),
          TEST_ENTRY(no_driver_setup))
