/* test_gemm_family.c — the gemm family's host side: shape syntax (valid and invalid), bound
 * names, FLOP and byte formulas, tolerances, dtype conversions, the cuBLASLt algorithm text,
 * and the family registry. */
#include "kernels/gemm.h"
#include "kernels/numeric.h"
#include "tuner/driver/cuda_driver.h"
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

int main(void) {
  problem p;
  rt_error err;
  rt_vars v;

  CHECK(family_find("gemm") == &gemm_family);
  CHECK(family_find("nope") == NULL);
  CHECK(family_find(NULL) == NULL);
  CHECK_CONTAINS(family_names(), "gemm");

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
  CHECK_NEAR(gemm_family.min_bytes(&gemm_family, &p), 2.0 * (2 * 4096.0 * 4096.0) + 4.0 * 4096.0 * 4096.0, 0);

  CHECK_INT(gemm_family.parse_shape(&gemm_family, "8@127x255x129:nt", "f32", NULL, &p, &err), RT_OK);
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
  CHECK_NEAR(gemm_family.min_bytes(&gemm_family, &p), 8 * (4.0 * (127 * 129 + 129 * 255) + 4.0 * 127 * 255), 0);

  CHECK_INT(gemm_family.parse_shape(&gemm_family, "1x4096x14336:nn", "f16", NULL, &p, &err), RT_OK);
  CHECK_STR(p.shape, "1x4096x14336"); /* nn is the default and is not spelled out */
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "1@2x3x4", "f16", NULL, &p, &err), RT_OK);
  CHECK_STR(p.shape, "2x3x4");

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
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64", "fp32", NULL, &p, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "use f32, tf32, f16 or bf16");

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
  check_bad("4x4x4", "f64", "unknown gemm dtype \"f64\"");
  check_bad("4x4x4", NULL, "unknown gemm dtype");
  rt_error_clear(&err);
  gemm_family.parse_shape(&gemm_family, "12x", "f32", NULL, &p, &err);
  CHECK_CONTAINS(err.text, "\"12x\"");
  CHECK_CONTAINS(err.text, "[BATCH@]MxNxK");
  CHECK_STR(err.source, "--shape");

  /* conversions: round to nearest even */
  CHECK_INT(num_f32_to_f16(1.0f), 0x3c00);
  CHECK_INT(num_f32_to_f16(-2.0f), 0xc000);
  CHECK_INT(num_f32_to_f16(0.1f), 0x2e66);
  CHECK_INT(num_f32_to_f16(65504.0f), 0x7bff);
  CHECK_INT(num_f32_to_f16(1e6f), 0x7c00);
  CHECK_INT(num_f32_to_f16(5.960464477539063e-08f), 0x0001); /* smallest subnormal */
  CHECK_INT(num_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);      /* tie to even */
  CHECK_INT(num_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);      /* tie to even, upwards */
  CHECK_INT(num_f32_to_bf16(1.0f), 0x3f80);
  CHECK_INT(num_f32_to_bf16(-0.5f), 0xbf00);
  CHECK_INT(num_f32_to_bf16(1.0f + 1.0f / 256), 0x3f80);      /* tie to even */
  CHECK_INT(num_f32_to_bf16(1.0f + 3.0f / 256), 0x3f82);
  for (int i = -1000; i <= 1000; i++) {
    float f = i / 1000.0f;
    CHECK_NEAR(num_f16_to_f32(num_f32_to_f16(f)), f, fabs(f) / 1024 + 1e-7);
    CHECK_NEAR(num_bf16_to_f32(num_f32_to_bf16(f)), f, fabs(f) / 128 + 1e-30);
  }

  /* cuBLASLt algorithm text round trip */
  gemm_lt_algo a = {1, 21, 20, 19, 4, 2, 1, 3, 7, 9}, b;
  char text[256];
  gemm_lt_algo_format(&a, text, sizeof text);
  CHECK_STR(text, "cublaslt compute=32F_FAST_TF32 id=21 tile=20 stages=19 splitk=4 reduction=2 swizzle=1 custom=3 inner=7 cluster=9");
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
  CHECK_INT(gemm_lt_algo_parse("cublaslt compute=32F id=x tile=0 stages=0 splitk=1 reduction=0 swizzle=0 custom=0 inner=0 cluster=0",
                               &b, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "id must be");

  /* no driver here: GPU setup fails cleanly */
  family_gpu *g = NULL;
  CHECK_INT(gemm_family.parse_shape(&gemm_family, "64x64x64", "f32", NULL, &p, &err), RT_OK);
  if (cuda_driver_load(NULL) != RT_OK) {
    CHECK(gemm_family.gpu_setup(&gemm_family, &p, 1, NULL, NULL, &g, &err) != RT_OK);
    CHECK(g == NULL);
  }
  return test_done();
}
