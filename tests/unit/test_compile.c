/* test_compile.c — NVRTC compiles without a GPU: a tiny kernel for sm_80 and sm_90 gives a cubin
 * and a ptxas report, a C++ template entry gets its lowered name, a compile error comes back as
 * data with its log, a missing entry is an error, a bad arch is refused before compiling, and the
 * cache key moves with the source and the options. */
/* stages: compile */
#include "test.h"
#include "compile/compile.h"

static const char kernel[] =
    "#define BLOCK 128\n"
    "#line 1\n"
    "#include <cuda_fp16.h>\n"
    "extern \"C\" __global__ void scale(const __half *x, float *y, int n) {\n"
    "  __shared__ float tile[BLOCK];\n"
    "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
    "  tile[threadIdx.x] = i < n ? __half2float(x[i]) : 0.f;\n"
    "  __syncthreads();\n"
    "  if (i < n) y[i] = 2.f * tile[BLOCK - 1 - threadIdx.x];\n"
    "}\n";

static const char templ[] =
    "template <int N> __global__ void fill(float *p) { p[threadIdx.x] = N; }\n"
    "template __global__ void fill<7>(float *);\n";

static const char broken[] =
    "#define BLOCK 64\n"
    "#line 1\n"
    "extern \"C\" __global__ void bad(float *p) {\n"
    "  p[0] = undefined_thing;\n"
    "}\n";

TEST_CASE(sm80) {
  compile_options opt = {0};
  compile_result r;
  rt_error err = {0};
  opt.arch = "sm_80";
  opt.entry = "scale";
  CHECK_INT(compile_source(kernel, "scale.cu", &opt, &r, &err), RT_OK);
  CHECK_INT(r.status, RT_OK);
  CHECK(r.cubin && r.cubin_size > 0);
  CHECK(r.cubin && memcmp(r.cubin,
                          "\x7f"
                          "ELF",
                          4) == 0);
  CHECK_STR(r.lowered_name, "scale");
  CHECK(r.report.found);
  CHECK(r.report.registers > 0);
  CHECK_INT(r.report.smem_static, 128 * 4);
  CHECK_CONTAINS(r.log, "for 'sm_80'");
  CHECK(r.seconds > 0);
  CHECK(r.ptx == NULL);
  compile_result_free(&r);
}

TEST_CASE(sm90_ptx_copy) {
  compile_options opt = {0};
  compile_result r;
  rt_error err = {0};
  opt.arch = "sm_90";
  opt.entry = "scale";
  opt.want_ptx = 1;
  CHECK_INT(compile_source(kernel, "scale.cu", &opt, &r, &err), RT_OK);
  CHECK(r.cubin_size > 0 && r.report.registers > 0);
  CHECK_CONTAINS(r.log, "for 'sm_90'");
  CHECK_CONTAINS(r.ptx, ".target sm_90");
  compile_result copy;
  CHECK_INT(compile_result_copy(&copy, &r), RT_OK);
  CHECK(copy.cubin != r.cubin && copy.cubin_size == r.cubin_size &&
        memcmp(copy.cubin, r.cubin, r.cubin_size) == 0);
  compile_result_free(&copy);
  compile_result_free(&r);
}

TEST_CASE(cpp_names) {
  compile_options opt = {0};
  compile_result r;
  rt_error err = {0};
  /* C++ names: the entry is a name expression, the result the mangled symbol */
  opt.arch = "sm_90";
  opt.entry = "fill<7>";
  CHECK_INT(compile_source(templ, "fill.cu", &opt, &r, &err), RT_OK);
  CHECK_STR(r.lowered_name, "_Z4fillILi7EEvPf");
  CHECK(r.report.registers > 0);
  compile_result_free(&r);
}

TEST_CASE(compile_error) {
  compile_options opt = {0};
  compile_result r;
  rt_error err = {0};
  /* a compile error is data: status, one-line message, the log with the file's own lines */
  opt.arch = "sm_90";
  opt.entry = "bad";
  rt_error_clear(&err);
  CHECK_INT(compile_source(broken, "bad.cu", &opt, &r, &err), RT_ERR_COMPILE);
  CHECK_INT(r.status, RT_ERR_COMPILE);
  CHECK(r.cubin == NULL);
  CHECK_CONTAINS(r.log, "bad.cu(2)");
  CHECK_CONTAINS(r.log, "undefined_thing");
  CHECK_CONTAINS(r.message, "error");
  CHECK_CONTAINS(err.text, "undefined_thing");
  compile_result_free(&r);
}

TEST_CASE(missing_entry) {
  compile_options opt = {0};
  compile_result r;
  rt_error err = {0};
  /* an entry that does not exist is a compile error too */
  opt.arch = "sm_90";
  opt.entry = "no_such_kernel";
  CHECK_INT(compile_source(kernel, "scale.cu", &opt, &r, &err), RT_ERR_COMPILE);
  CHECK_CONTAINS(r.log, "no_such_kernel");
  compile_result_free(&r);
}

TEST_CASE(arch_refused) {
  compile_options opt = {0};
  compile_result r;
  rt_error err = {0};
  /* a bad arch is refused before compiling and lists the valid ones */
  opt.arch = "sm_70";
  opt.entry = "scale";
  CHECK_INT(compile_source(kernel, "scale.cu", &opt, &r, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "sm_70");
  CHECK_CONTAINS(err.text, "sm_75, sm_80");
  CHECK_CONTAINS(err.text, "sm_90a");
  CHECK(r.log != NULL);
  compile_result_free(&r);
  CHECK(compile_arch_valid("sm_90a") && !compile_arch_valid("sm_90b") && !compile_arch_valid(NULL));
  /* Turing (sm_75), the recorded GPUs' architecture, compiles: replay compiles their kernels */
  CHECK(compile_arch_valid("sm_75"));
  opt.arch = "sm_75";
  CHECK_INT(compile_source(kernel, "scale.cu", &opt, &r, &err), RT_OK);
  CHECK(r.report.found && r.report.registers > 0);
  compile_result_free(&r);
}

TEST_CASE(pch) {
  compile_options opt = {0};
  compile_result r;
  rt_error err = {0};
  /* with precompiled headers the kernel compiles the same (twice: create, then use the PCH) */
  opt.arch = "sm_90";
  opt.entry = "scale";
  opt.pch = 1;
  int regs_plain = 0;
  {
    compile_options plain = opt;
    plain.pch = 0;
    CHECK_INT(compile_source(kernel, "scale.cu", &plain, &r, &err), RT_OK);
    regs_plain = r.report.registers;
    compile_result_free(&r);
  }
  for (int i = 0; i < 2; i++) {
    CHECK_INT(compile_source(kernel, "scale.cu", &opt, &r, &err), RT_OK);
    CHECK_INT(r.report.registers, regs_plain);
    CHECK(strstr(r.log, "20283") == NULL); /* the #line warning is suppressed */
    compile_result_free(&r);
  }
  /* errors keep the file's own line numbers with pch too */
  opt.entry = "bad";
  CHECK_INT(compile_source(broken, "bad.cu", &opt, &r, &err), RT_ERR_COMPILE);
  CHECK_CONTAINS(r.log, "bad.cu(2)");
  compile_result_free(&r);
}

TEST_CASE(option_list) {
  compile_options opt = {0};
  rt_error err = {0};
  /* option list: arch, standard, ptxas verbosity, the toolkit headers */
  opt.entry = "scale";
  opt.arch = "sm_90a";
  opt.pch = 1;
  const char **argv;
  int argc;
  char *storage;
  CHECK_INT(compile_build_options(&opt, &argv, &argc, &storage, &err), RT_OK);
  int seen_arch = 0, seen_ptxas = 0, seen_inc = 0, seen_pch = 0;
  for (int i = 0; i < argc; i++) {
    seen_arch |= !strcmp(argv[i], "-arch=sm_90a");
    seen_ptxas |= !strcmp(argv[i], "--ptxas-options=-v");
    seen_inc |=
        strncmp(argv[i], "-I", 2) == 0 && strstr(argv[i], compile_cuda_include_dir()) != NULL;
    seen_pch |= !strcmp(argv[i], "-pch");
  }
  CHECK(seen_arch && seen_ptxas && seen_inc && seen_pch);
  free(storage);
}

TEST_CASE(cache_key) {
  compile_options opt = {0};
  rt_error err = {0};
  /* the cache key follows the source, the options and the arch */
  unsigned char d1[32], d2[32], k1[32], k2[32], k3[32];
  opt.arch = "sm_90a";
  opt.entry = "scale";
  CHECK_INT(compile_options_digest(&opt, d1, &err), RT_OK);
  opt.arch = "sm_90";
  CHECK_INT(compile_options_digest(&opt, d2, &err), RT_OK);
  CHECK(memcmp(d1, d2, 32) != 0);
  CHECK_INT(compile_key(d1, &opt, "scale.cu", kernel, k1, NULL, &err), RT_OK);
  CHECK_INT(compile_key(d1, &opt, "scale.cu", broken, k2, NULL, &err), RT_OK);
  CHECK_INT(compile_key(d2, &opt, "scale.cu", kernel, k3, NULL, &err), RT_OK);
  CHECK(memcmp(k1, k2, 32) != 0 && memcmp(k1, k3, 32) != 0);
  CHECK_INT(compile_key(d1, &opt, "scale.cu", kernel, k2, NULL, &err), RT_OK);
  CHECK(memcmp(k1, k2, 32) == 0);
  CHECK_INT(compile_key(d1, &opt, "other.cu", kernel, k2, NULL, &err), RT_OK);
  CHECK(memcmp(k1, k2, 32) != 0); /* the name: where quoted includes start, __FILE__ */
}

TEST_LIST(TEST_ENTRY(sm80), TEST_ENTRY(sm90_ptx_copy), TEST_ENTRY(cpp_names),
          TEST_ENTRY(compile_error), TEST_ENTRY(missing_entry), TEST_ENTRY(arch_refused),
          TEST_ENTRY(pch), TEST_ENTRY(option_list), TEST_ENTRY(cache_key))
