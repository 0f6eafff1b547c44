/* The microtest of every rt_ptx.h wrapper (templates/ptxcheck/ptx_twins.cu, run against the
 * GPU by tests/gpu/test_ptx_twins.c) without a GPU: NVRTC compiles it for sm_80 and sm_90a, its
 * cluster kernel for sm_90a (the GPU half builds), and the sim runs it for both targets,
 * deterministically and with the values the twins must give on known inputs (bf16 ties, a
 * shuffle, the barriers, the TMA boxes and the multicast through the 128-byte swizzle's
 * definition); the comparison names a case that differs and no other. */
/* stages: sim compile */
#include "../gpu/ptx_twins_util.h"
#include "compile/compile.h"

TEST_CASE(nvrtc_compiles_for_sm80_and_sm90a) {
  char *src = pt_source();
  if (!src) return;
  const char *arch[] = {"sm_80", "sm_90a", "sm_90a"}; /* the cluster kernel: sm_90 on */
  for (int a = 0; a < 3; a++) {
    compile_options opt;
    pt_options(&opt, arch[a], pt_kernels[a / 2].entry);
    compile_result r;
    rt_error err;
    rt_error_clear(&err);
    rt_status st = compile_source(src, "ptx_twins.cu", &opt, &r, &err);
    if (st == RT_ERR_NVRTC && strstr(err.text, "libnvrtc")) {
      free(src);
      test_skip(err.text);
    }
    if (st) fprintf(stderr, "%s: %s\n", arch[a], err.text);
    CHECK_INT(st, RT_OK);
    if (st) continue;
    if (r.status) fprintf(stderr, "%s: %s\n", arch[a], r.log);
    CHECK_INT(r.status, RT_OK);
    CHECK(r.cubin_size > 0);
    compile_result_free(&r);
  }
  free(src);
}

static unsigned word(const unsigned *o, int c, int t, int k) {
  return o[((size_t)c * PT_THREADS + (size_t)t) * PT_SLOTS + (size_t)k];
}

TEST_CASE(sim_runs_it_for_both_targets) {
  char *src = pt_source();
  if (!src) return;
  unsigned *in = malloc(PT_IN * 4), *a = calloc(PT_OUT, 4), *b = calloc(PT_OUT, 4);
  CHECK(in && a && b);
  if (in && a && b) {
    pt_inputs(in);
    CHECK_INT(pt_run_sim(src, "sm_90a", 1, in, a), RT_OK);
    CHECK_INT(pt_run_sim(src, "sm_90a", 1, in, b), RT_OK);
    CHECK_INT(pt_compare(a, b, 1), 0); /* deterministic */
    /* known values: a register move, bf16 ties to even of 1 + 2^-8 (down) and 1 + 3 * 2^-8
     * (up), a shuffle from lane 7t mod 32, the barriers' neighbours, a wgmma word written */
    CHECK_INT(word(a, PC_REG_MOVE, 5, 3), in[5 * PT_SLOTS + 3]);
    CHECK_INT(word(a, PC_CVT_BF16, 8 * 37 / PT_SLOTS, 8 * 37 % PT_SLOTS), 0x3f80);
    CHECK_INT(word(a, PC_CVT_BF16, 9 * 37 / PT_SLOTS, 9 * 37 % PT_SLOTS), 0x3f82);
    CHECK_INT(word(a, PC_SHFL, 33, 0), in[32 + (1 * 7) % 32]);
    CHECK_INT(word(a, PC_BAR_SYNC1, 100, 0), in[(100 + 37) % 128] ^ 0x5a5a5a5au);
    CHECK_INT(word(a, PC_MBAR, 3, 1), in[128 + (3 + 38) % 128] + 1u);
    CHECK(word(a, PC_WGMMA_SS, 0, 0) != 0 || word(a, PC_WGMMA_SS, 1, 0) != 0);
    /* TMA: word w of the first box is element (40 + row, 32 + col) through the 128-byte
     * swizzle; the second box's rows 8..15 (tensor rows 64..71) are zeros */
    int tma_bad = 0;
    for (int w = 0; w < 1024; w++) {
      int byte = w * 4 % 2048, row = byte / 128, chunk = (byte % 128 / 16) ^ (row % 8);
      int col = (chunk * 16 + byte % 16) / 4;
      unsigned want = w < 512   ? in[(40 + row) * 64 + 32 + col]
                      : row < 8 ? in[(56 + row) * 64 + col]
                                : 0u;
      tma_bad += word(a, PC_TMA, w / 8, w % 8) != want;
    }
    CHECK_INT(tma_bad, 0);
    /* the cluster: ranks 0 and 1, the same multicast box (rows 8..23, the first 512 words) in both blocks, both past
     * the remote arrivals */
    int mc_bad = 0;
    for (int w = 0; w < 512; w++) {
      int byte = w * 4, row = byte / 128, chunk = (byte % 128 / 16) ^ (row % 8);
      unsigned want = in[(8 + row) * 64 + (chunk * 16 + byte % 16) / 4];
      mc_bad +=
          word(a, PC_CLUSTER0, w / 8, w % 8) != want || word(a, PC_CLUSTER1, w / 8, w % 8) != want;
    }
    CHECK_INT(mc_bad, 0);
    CHECK_INT(word(a, PC_CLUSTER1, 77, 8), 1);
    CHECK_INT(word(a, PC_CLUSTER0, 77, 9) + word(a, PC_CLUSTER1, 77, 9), 3);
    /* sm_80: the cases before sm_90 give the same words; the sm_90 ones stay zero */
    CHECK_INT(pt_run_sim(src, "sm_80", 0, in, b), RT_OK);
    CHECK_INT(pt_compare(a, b, 0), 0);
    CHECK_INT(word(b, PC_WGMMA_SS, 0, 0), 0);
    /* the comparison names a case that differs: one word of LDSM flipped, one NaN payload of
     * FMAX changed (equal), one EXP2 word a few ulps off (equal) and one far off */
    memcpy(b, a, PT_OUT * 4);
    b[(size_t)PC_LDSM * PT_THREADS * PT_SLOTS + 7] ^= 1;
    b[(size_t)PC_FMAX * PT_THREADS * PT_SLOTS] = 0x7fc00000u;
    a[(size_t)PC_FMAX * PT_THREADS * PT_SLOTS] = 0xffc00001u;
    b[(size_t)PC_EXP2 * PT_THREADS * PT_SLOTS] += 2;
    CHECK_INT(pt_compare(a, b, 1), 1);
    b[(size_t)PC_EXP2 * PT_THREADS * PT_SLOTS] += 1 << 12;
    CHECK_INT(pt_compare(a, b, 1), 2);
  }
  free(in);
  free(a);
  free(b);
  free(src);
}

TEST_LIST(TEST_ENTRY(nvrtc_compiles_for_sm80_and_sm90a), TEST_ENTRY(sim_runs_it_for_both_targets))
