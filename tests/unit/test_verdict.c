/* test_verdict.c — ties, the tie-break and the "why this wins" sentence (tuner/verdict.h) on
 * crafted results: measured times tie within their spread and not outside it, unmeasured ones
 * only when equal; the tie-break takes fewer registers, then less shared memory, and puts unknown
 * registers (library candidates) last; the runner-up skips the tied; the sentence gives the
 * margins over the runner-up and cuBLASLt's default (faster or slower), the limits, and the fact
 * that tells them apart (the wave tail, spills, measured bytes). */
/* stages: tune */
#include "test.h"
#include "tuner/verdict.h"

static candidate_result make(const char *tmpl, double ms, double spread, int regs, int smem,
                             timing_kind t) {
  candidate_result r;
  memset(&r, 0, sizeof r);
  snprintf(r.template_name, sizeof r.template_name, "%s", tmpl);
  r.status = RT_OK;
  r.time_ms = ms;
  r.spread = spread;
  r.timing = t;
  r.facts.registers = regs;
  r.facts.smem_dynamic = smem;
  snprintf(r.diag.limit, sizeof r.diag.limit, "compute");
  r.diag.flops_frac = 0.9;
  return r;
}

TEST_CASE(ties) {
  candidate_result a = make("gemm_wgmma", 1.00, 0.02, 168, 200000, TIMING_MEASURED);
  candidate_result b = make("gemm_wgmma", 1.015, 0.01, 128, 200000, TIMING_MEASURED);
  candidate_result c = make("gemm_wgmma", 1.03, 0.02, 96, 100000, TIMING_MEASURED);
  /* measured: 1.00 and 1.015 ms with a 2 % spread tie; 1.03 does not */
  CHECK(verdict_tied(&a, &b));
  CHECK(!verdict_tied(&a, &c));
  /* predicted: equal only */
  candidate_result p1 = make("gemm_mma", 0.2009, 0, 128, 0, TIMING_PREDICTED);
  candidate_result p2 = make("gemm_mma", 0.2009 * (1 + 1e-12), 0, 128, 0, TIMING_PREDICTED);
  candidate_result p3 = make("gemm_mma", 0.2010, 0, 128, 0, TIMING_PREDICTED);
  CHECK(verdict_tied(&p1, &p2));
  CHECK(!verdict_tied(&p1, &p3));
  candidate_result failed = a;
  failed.status = RT_ERR_WRONG_RESULT;
  CHECK(!verdict_tied(&a, &failed));

  /* tie-break: fewer registers first; equal registers: less shared memory; unknown registers last */
  CHECK(verdict_tie_cmp(&b, &a) < 0);
  candidate_result d = make("gemm_wgmma", 1.01, 0.02, 128, 150000, TIMING_MEASURED);
  CHECK(verdict_tie_cmp(&d, &b) < 0);
  candidate_result lib = make("cublaslt", 0.99, 0.02, 0, 0, TIMING_MEASURED);
  CHECK(verdict_tie_cmp(&a, &lib) < 0);
}

TEST_CASE(pick) {
  candidate_result a = make("gemm_wgmma", 1.00, 0.02, 168, 200000, TIMING_MEASURED);
  candidate_result b = make("gemm_wgmma", 1.015, 0.01, 128, 200000, TIMING_MEASURED);
  candidate_result c = make("gemm_wgmma", 1.03, 0.02, 96, 100000, TIMING_MEASURED);
  candidate_result failed = a;
  failed.status = RT_ERR_WRONG_RESULT;
  /* the pick among a, b, c: a is fastest, b ties with it and has fewer registers */
  candidate_result set[5] = {a, b, c, failed, make("cublaslt", 1.20, 0.01, 0, 0, TIMING_MEASURED)};
  size_t tied = 9;
  CHECK_INT(verdict_pick(set, 5, "gemm_wgmma", &tied), 1);
  CHECK_INT(tied, 1);
  CHECK_INT(verdict_pick(set, 5, "cublaslt", &tied), 4);
  CHECK_INT(tied, 0);
  CHECK_INT(verdict_pick(set, 5, "none", &tied), -1);
  /* the runner-up skips the candidate tied with the winner; other_template looks elsewhere */
  CHECK_INT(verdict_runner_up(set, 5, 1, "gemm_wgmma", 0), 2);
  CHECK_INT(verdict_runner_up(set, 5, 1, NULL, 1), 4);

  /* the sentence of a tied winner against its runner-up and the vendor */
  char s[512];
  set[1].diag.waves = 2;
  set[1].diag.tail = 0;
  set[1].facts.grid_blocks = 264;
  set[2].diag.waves = 1.94;
  set[2].diag.tail = 0.06 + 0.01;
  set[2].diag.flops_frac = 0.88;
  verdict_sentence(&set[1], 1, &set[0], &set[2], "this template's runner-up", &set[4], s, sizeof s);
  CHECK_CONTAINS(s, "tied with 1 other within the 2.0 % spread");
  CHECK_CONTAINS(
      s, "ties break on fewer registers, then less shared memory: 128 registers against 168");
  CHECK_CONTAINS(s, "1.015x faster than this template's runner-up (1.03 ms)");
  CHECK_CONTAINS(s, "and 1.18x faster than cuBLASLt's default (1.2 ms)");
  CHECK_CONTAINS(s, "both compute-bound, at 90 % and 88 % of the roof");
  CHECK_CONTAINS(s, "wins on the tail: 264 blocks fill 2 waves exactly");
  printf("%s\n", s);
}

TEST_CASE(slower_than_vendor) {
  char s[512];
  /* slower than the vendor, a different limit, spills */
  candidate_result w = make("gemm_mma", 1.10, 0.01, 200, 0, TIMING_MEASURED);
  candidate_result o = make("gemm_simt", 1.50, 0.01, 255, 0, TIMING_MEASURED);
  snprintf(o.diag.limit, sizeof o.diag.limit, "spills");
  o.facts.spill_stores = 64;
  candidate_result v = make("cublaslt", 1.00, 0.01, 0, 0, TIMING_MEASURED);
  verdict_sentence(&w, 0, NULL, &o, "the best of gemm_simt", &v, s, sizeof s);
  CHECK_CONTAINS(s,
                 "1.36x faster than the best of gemm_simt (1.5 ms) and 1.10x slower than "
                 "cuBLASLt's default (1 ms)");
  CHECK_CONTAINS(s, "it is compute-bound at 90 % of its roof where the runner-up is spills-bound");
  CHECK_CONTAINS(s, "no spills where the runner-up spills 64 bytes");
}

TEST_CASE(dram_bytes_and_ratios) {
  char s[512];
  /* measured DRAM bytes */
  candidate_result m1 = make("gemm_wgmma", 1.0, 0.01, 128, 0, TIMING_MEASURED), m2 = m1;
  m2.time_ms = 1.2;
  m1.counters.measured = m2.counters.measured = 1;
  m1.counters.dram_read_bytes = 1e8;
  m2.counters.dram_read_bytes = 2e8;
  verdict_sentence(&m1, 0, NULL, &m2, NULL, NULL, s, sizeof s);
  CHECK_CONTAINS(s, "1.20x faster than the runner-up (1.2 ms)");
  CHECK_CONTAINS(s, "moves 50 % fewer DRAM bytes (measured)");
  /* speed-ups are ratios: the 84.4 % of time saved that read as 1.84x is 6.41x */
  char r[32];
  CHECK_STR(verdict_ratio(1.0, 6.41, r, sizeof r), "6.41x faster");
  CHECK_STR(verdict_ratio(1.0 - 0.844, 1.0, r, sizeof r), "6.41x faster");
  CHECK_STR(verdict_ratio(6.41, 1.0, r, sizeof r), "6.41x slower");
  CHECK_STR(verdict_ratio(1.0, 1.004, r, sizeof r), "1.004x faster");
  CHECK_STR(verdict_ratio(1.0, 15.4, r, sizeof r), "15.4x faster");
  CHECK_STR(verdict_ratio(1.0, 1.0003, r, sizeof r), "as fast");
  CHECK_STR(verdict_ratio(0, 1.0, r, sizeof r), "not comparable");
  m2.time_ms = 1.0002;
  verdict_sentence(&m1, 0, NULL, &m2, NULL, NULL, s, sizeof s);
  CHECK_CONTAINS(s, "as fast as the runner-up (1 ms)");
  CHECK(!strstr(s, "% faster") && !strstr(s, "% slower"));
  /* alone */
  verdict_sentence(&m1, 0, NULL, NULL, NULL, NULL, s, sizeof s);
  CHECK_STR(s, "the only successful candidate");
}

TEST_LIST(TEST_ENTRY(ties), TEST_ENTRY(pick), TEST_ENTRY(slower_than_vendor),
          TEST_ENTRY(dram_bytes_and_ratios))
