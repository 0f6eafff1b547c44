/* test_attn_mma_cost.c — attn_mma's manifest against what the kernel does, for every configuration
 * of its space on a set of problems: the launch geometry (grid (ceil(SQ/BLOCK_M), HQ, B), 32*WARPS
 * threads, the shared memory the kernel lays out), cost.flops (4*HQ*D*pairs), and
 * cost.executed_flops and cost.dram_bytes against the KV tiles the kernel visits, counted here
 * block by block with attn_index.h's attn_kv_tiles (which test_attn_emulate checks against a
 * brute force over the mask).
 *
 * The expression language has no sums, so the manifest's causal formula is a closed form: exact
 * without kv_lens when BLOCK_N divides BLOCK_M (the rounding of every query tile's key count to
 * BLOCK_N is then the same), and the mean rounding (BLOCK_N - BLOCK_M)/2 otherwise; ragged
 * sequences use the mean kv_len.  The test holds the exact cases to equality and the others to
 * 10% on the problems below (it prints the largest deviation). */
/* stages: model */
#include "../attn_compile_util.h"
#include "../templates/attention/attn_index.h"

typedef struct prob {
  int B, HQ, HKV, SQ, SKV, D, causal;
  int lens[4]; /* lens[0] < 0: not ragged */
} prob;

TEST_CASE(closed_forms) {
  static const prob probs[] = {
      {2, 32, 8, 4096, 4096, 128, 0, {-1}},
      {2, 32, 8, 4096, 4096, 128, 1, {-1}},
      {1, 8, 8, 1000, 1000, 64, 1, {-1}},
      {3, 4, 2, 777, 2049, 64, 1, {-1}},
      {2, 4, 4, 3000, 500, 128, 1, {-1}},
      {1, 16, 2, 1, 4096, 256, 1, {-1}},
      {2, 4, 1, 333, 4097, 256, 0, {-1}},
      {4, 8, 2, 2048, 4096, 64, 1, {4096, 1000, 3000, 2048}},
      {3, 8, 8, 1024, 2048, 128, 0, {2048, 17, 1500}},
  };
  double worst_exec = 0, worst_dram = 0;
  for (size_t pi = 0; pi < sizeof probs / sizeof probs[0]; pi++) {
    const prob *q = &probs[pi];
    const int ragged = q->lens[0] >= 0;
    acu_problem p = {
        q->B, q->HQ, q->HKV, q->SQ, q->SKV, q->D, q->causal, 0, 0, 0, ragged ? q->lens : NULL};
    manifest *m = NULL;
    space *sp = NULL;
    rt_vars env;
    rt_error err;
    rt_error_clear(&err);
    CHECK_INT(acu_load("attn_mma", &m, &err), RT_OK);
    CHECK_INT(acu_env(&p, "sm_90", "bf16", &env, &err), RT_OK);
    CHECK_INT(m ? manifest_build_space(m, &env, &sp, &err) : RT_ERR_INVALID, RT_OK);
    if (!sp) {
      fprintf(stderr, "problem %zu: %s\n", pi, err.text);
      manifest_free(m);
      continue;
    }
    long long pairs = 0;
    for (int b = 0; b < q->B; b++)
      for (int i = 0; i < q->SQ; i++) pairs += acu_row_keys(&p, i, ragged ? q->lens[b] : q->SKV);
    for (size_t idx = 0; idx < space_size(sp); idx++) {
      rt_vars cv;
      long long bm, bn, w, st, hd;
      CHECK_INT(manifest_config_vars(m, sp, idx, &env, &cv, &err), RT_OK);
      if (!rt_vars_get(&cv, "BLOCK_M", &bm) || !rt_vars_get(&cv, "BLOCK_N", &bn) ||
          !rt_vars_get(&cv, "WARPS", &w) || !rt_vars_get(&cv, "STAGES", &st) ||
          !rt_vars_get(&cv, "HEAD_DIM", &hd)) {
        CHECK(0);
        continue;
      }
      unsigned grid[3], block[3], smem;
      CHECK_INT(manifest_launch(m, &cv, grid, block, &smem, &err), RT_OK);
      CHECK_INT(grid[0], (q->SQ + bm - 1) / bm);
      CHECK_INT(grid[1], q->HQ);
      CHECK_INT(grid[2], q->B);
      CHECK_INT(block[0], 32 * w);
      CHECK_INT(smem, 2 * (bm + 2 * st * bn) * attn_smem_ld((int)hd));
      /* what the kernel visits and reads, block by block */
      long long rows = 0, read = 0;
      for (int b = 0; b < q->B; b++) {
        const int kv = ragged ? q->lens[b] : q->SKV;
        for (int t = 0; t < (q->SQ + bm - 1) / bm; t++) {
          int n_full, n_end;
          attn_kv_tiles(t * (int)bm, (int)bm, (int)bn, q->SQ, kv, q->causal, &n_full, &n_end);
          rows += n_end * bn;
          read += n_end * bn < kv ? n_end * bn : kv;
        }
      }
      const double exec = 4.0 * q->HQ * q->D * bm * rows;
      const double dram =
          2.0 * q->HQ * q->D * (2.0 * q->B * q->SQ + 2.0 * read) + 4.0 * q->B * q->HQ * q->SQ;
      double flops, dram_m, exec_m;
      CHECK_INT(manifest_cost(m, &cv, &flops, &dram_m, &exec_m, &err), RT_OK);
      CHECK(flops == 4.0 * q->HQ * q->D * pairs);
      const int exact = !ragged && (!q->causal || bm % bn == 0);
      const double de = fabs(exec_m - exec) / exec, dd = fabs(dram_m - dram) / dram;
      char config[256];
      space_format_config(sp, idx, config, sizeof config);
      if (exact ? (de != 0 || dd != 0) : (de > 0.10 || dd > 0.10)) {
        fprintf(stderr,
                "problem %zu [%s]: executed_flops %.6g (counted %.6g), dram_bytes %.6g (counted "
                "%.6g)\n",
                pi, config, exec_m, exec, dram_m, dram);
        CHECK(0);
      }
      if (!exact && de > worst_exec) worst_exec = de;
      if (!exact && dd > worst_dram) worst_dram = dd;
    }
    printf("problem %zu (B %d HQ %d HKV %d SQ %d SKV %d D %d causal %d%s): %zu configurations\n",
           pi, q->B, q->HQ, q->HKV, q->SQ, q->SKV, q->D, q->causal, ragged ? " ragged" : "",
           space_size(sp));
    space_free(sp);
    manifest_free(m);
  }
  printf(
      "closed forms off by at most %.2f%% (executed_flops) and %.2f%% (dram_bytes) where not "
      "exact\n",
      100 * worst_exec, 100 * worst_dram);
}

TEST_LIST(TEST_ENTRY(closed_forms))
