/* test_ptxas.c — the ptxas -v parser on logs recorded from NVRTC 13 (the .txt files in tests/data/ptxas):
 * one kernel, constant bank, two kernels with spills, a non-inlined call with a stack frame, and
 * the older layout without a barrier count. */
/* stages: compile */
#include "test.h"
#include "compile/compile.h"
#include "core/fileio.h"

static char *slurp(const char *name) {
  char path[1024], *text = NULL;
  rt_error err = {0};
  snprintf(path, sizeof path, "%s/tests/data/ptxas/%s", test_source_dir(), name);
  if (fileio_read(path, &text, NULL, &err)) {
    fprintf(stderr, "%s: %s\n", path, err.text);
    exit(1);
  }
  return text;
}

TEST_CASE(sm90_one_entry) {
  ptxas_report r;
  char *log;
  log = slurp("sm90_one_entry.txt");
  CHECK_INT(compile_parse_ptxas(log, "k", &r), RT_OK);
  CHECK_INT(r.found, 1);
  CHECK_INT(r.registers, 10);
  CHECK_INT(r.smem_static, 1024);
  CHECK_INT(r.barriers, 1);
  CHECK_INT(r.spill_stores, 0);
  CHECK_INT(r.cmem0, 0);                                /* sm_90 logs print no cmem */
  CHECK_INT(compile_parse_ptxas(log, NULL, &r), RT_OK); /* first kernel */
  CHECK_INT(r.registers, 10);
  CHECK_INT(compile_parse_ptxas(log, "kk", &r), RT_ERR_NOT_FOUND);
  CHECK_INT(r.found, 0);
  free(log);
}

TEST_CASE(sm80_cmem) {
  ptxas_report r;
  char *log;
  log = slurp("sm80_cmem.txt");
  CHECK_INT(compile_parse_ptxas(log, "k", &r), RT_OK);
  CHECK_INT(r.cmem0, 372);
  CHECK_INT(r.smem_static, 1024);
  free(log);
}

TEST_CASE(sm80_spills) {
  ptxas_report r;
  char *log;
  log = slurp("sm80_spills_two_entries.txt");
  CHECK_INT(compile_parse_ptxas(log, "other", &r), RT_OK);
  CHECK_INT(r.registers, 8);
  CHECK_INT(r.spill_stores, 0);
  CHECK_INT(r.cmem0, 360);
  CHECK_INT(compile_parse_ptxas(log, "_Z5spillILi64EEvPKfPf", &r), RT_OK);
  CHECK_INT(r.registers, 32);
  CHECK_INT(r.stack_bytes, 8848);
  CHECK_INT(r.spill_stores, 9148);
  CHECK_INT(r.spill_loads, 17508);
  CHECK_INT(r.smem_static, 0);
  CHECK_INT(r.cmem0, 368);
  CHECK_INT(compile_parse_ptxas(log, NULL, &r), RT_OK);
  CHECK_INT(r.registers, 8); /* "other" comes first */
  free(log);
}

TEST_CASE(sm90a_noinline_call) {
  ptxas_report r;
  char *log;
  log = slurp("sm90a_noinline_call.txt");
  CHECK_INT(compile_parse_ptxas(log, "_Z4tileILi64EEvPfi", &r), RT_OK);
  CHECK_INT(r.registers, 40);
  CHECK_INT(r.stack_bytes, 128);
  CHECK_INT(r.smem_static, 256);
  /* the callee's own properties block is not a kernel */
  CHECK_INT(compile_parse_ptxas(log, "_Z6helperPfi", &r), RT_ERR_NOT_FOUND);
  free(log);
}

TEST_CASE(sm80_older_layout) {
  ptxas_report r;
  char *log;
  log = slurp("sm80_older_layout.txt");
  CHECK_INT(compile_parse_ptxas(log, "_Z4gemmILi128EEvPKfS1_Pf", &r), RT_OK);
  CHECK_INT(r.registers, 255);
  CHECK_INT(r.smem_static, 49152);
  CHECK_INT(r.stack_bytes, 24);
  CHECK_INT(r.spill_stores, 20);
  CHECK_INT(r.spill_loads, 16);
  CHECK_INT(r.cmem0, 380);
  CHECK_INT(r.barriers, 0);
  free(log);
}

TEST_CASE(nothing_to_parse) {
  ptxas_report r;
  /* nothing to parse */
  CHECK_INT(compile_parse_ptxas("", NULL, &r), RT_ERR_NOT_FOUND);
  CHECK_INT(compile_parse_ptxas(NULL, NULL, &r), RT_ERR_NOT_FOUND);
  CHECK_INT(compile_parse_ptxas("k.cu(3): error: expected a \";\"\n", "k", &r), RT_ERR_NOT_FOUND);
}

TEST_LIST(TEST_ENTRY(sm90_one_entry), TEST_ENTRY(sm80_cmem), TEST_ENTRY(sm80_spills),
          TEST_ENTRY(sm90a_noinline_call), TEST_ENTRY(sm80_older_layout),
          TEST_ENTRY(nothing_to_parse))
