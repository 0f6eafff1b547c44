/* test_gpu_spec.c — the spec tables answer lookups and hold the documented numbers. */
/* stages: model */
#include <math.h>

#include "test.h"
#include "model/gpu_spec.h"

TEST_CASE(arch_lookups) {
  const arch_spec *a = arch_spec_find("sm_90");
  CHECK(a && a->cc == 90 && a->smem_per_block_optin == 227 * 1024);
  CHECK(arch_spec_find("sm_90a") == a);
  CHECK(arch_spec_find("90") == a);
  const arch_spec *t = arch_spec_find("sm_75");
  CHECK(t && t->max_warps_per_sm == 32 && t->smem_per_sm == 64 * 1024 &&
        t->smem_alloc_unit == 256 && t->smem_reserved_per_block == 0 && t->max_blocks_per_sm == 16);
  CHECK(arch_spec_find("sm_70") == NULL);
  CHECK(arch_spec_find("sm_9x") == NULL);
  CHECK(arch_spec_find("sm_80")->smem_per_block_optin == 163 * 1024);
  CHECK(arch_spec_find("sm_86")->max_threads_per_sm == 1536);
}

TEST_CASE(gpu_lookups) {
  const gpu_spec *h = gpu_spec_find("H200");
  CHECK(h && h->sm_count == 132 && strcmp(h->arch, "sm_90") == 0);
  CHECK(h->dram_bw_achievable < h->dram_bw_spec);
  CHECK(gpu_spec_find("v100") == NULL);
  CHECK(gpu_spec_match("NVIDIA H200", 90) == h);
  CHECK(gpu_spec_match("NVIDIA A100-SXM4-80GB", 80) == gpu_spec_find("a100"));
  CHECK(gpu_spec_match("NVIDIA GeForce RTX 3090", 86) == gpu_spec_find("rtx3090"));
  CHECK(gpu_spec_match("NVIDIA GeForce RTX 4090", 89) == NULL);
  /* recorded device names: the whole name, the longest that fits */
  CHECK(gpu_spec_match_name("NVIDIA GeForce RTX 2080 Ti") == gpu_spec_find("rtx2080ti"));
  CHECK(gpu_spec_match_name("NVIDIA GeForce RTX 2080") == gpu_spec_find("rtx2080"));
  CHECK(gpu_spec_match_name("NVIDIA GeForce RTX 2080 SUPER") == NULL);
  CHECK(gpu_spec_match_name("NVIDIA A100-PCIE-40GB") == gpu_spec_find("a100-pcie"));
  CHECK(gpu_spec_match_name("NVIDIA A100-SXM4-80GB") == gpu_spec_find("a100"));
  CHECK(gpu_spec_match_name("NVIDIA H100 80GB HBM3") == gpu_spec_find("h100"));
  CHECK(gpu_spec_match_name("NVIDIA RTX A4000") == gpu_spec_find("a4000"));
  CHECK(gpu_spec_match_name("NVIDIA RTX A6000") == gpu_spec_find("a6000"));
  CHECK(gpu_spec_match_name("NVIDIA GeForce RTX 3090") == gpu_spec_find("rtx3090"));
  CHECK(gpu_spec_match_name("") == NULL && gpu_spec_match_name(NULL) == NULL);
}

TEST_CASE(table) {
  CHECK_STR(gpu_spec_keys(),
            "h200, h100, a100, l4, a100-pcie, a6000, a4000, rtx3090, rtx2080ti, rtx2080");
  size_t n;
  const gpu_spec *all = gpu_spec_all(&n);
  CHECK_INT(n, 10);
  for (size_t i = 0; i < n; i++) {
    CHECK(arch_spec_find(all[i].arch) != NULL);
    CHECK(all[i].sm_count > 0 && all[i].dram_bw_spec > 0 && all[i].peak_flops[PATH_SIMT_F32] > 0);
    CHECK(all[i].dram_bw_achievable < all[i].dram_bw_spec);
    CHECK(all[i].peak_flops[PATH_TC_F16] > all[i].peak_flops[PATH_TC_TF32]);
    CHECK(all[i].peak_flops[PATH_TC_TF32] >= all[i].peak_flops[PATH_SIMT_F32] ||
          all[i].peak_flops[PATH_TC_TF32] == 0); /* Turing has no tf32 */
    CHECK(all[i].source && strlen(all[i].source) > 20);
  }
  /* datasheet figures, one per recorded GPU */
  CHECK_INT(gpu_spec_find("rtx2080ti")->sm_count, 68);
  CHECK(fabs(gpu_spec_find("rtx2080ti")->dram_bw_spec - 616e9) < 1e3);
  CHECK_INT(gpu_spec_find("rtx2080")->sm_count, 46);
  CHECK(fabs(gpu_spec_find("rtx3090")->dram_bw_spec - 936e9) < 1e3);
  CHECK(fabs(gpu_spec_find("a100-pcie")->dram_bw_spec - 1555e9) < 1e3);
  CHECK_INT(gpu_spec_find("a4000")->sm_count, 48);
  CHECK_INT(gpu_spec_find("a6000")->sm_count, 84);
}

/* the compute paths' names: a stored result's key, a report roof's label, and back */
TEST_CASE(compute_paths) {
  for (int p = 0; p < PATH_COUNT; p++) {
    CHECK(compute_path_key((compute_path)p)[0] && compute_path_label((compute_path)p)[0]);
    CHECK_INT(compute_path_parse(compute_path_key((compute_path)p)), p);
  }
  CHECK_STR(compute_path_key(PATH_TC_F16), "tc_f16");
  CHECK_STR(compute_path_label(PATH_SIMT_F32), "CUDA-core fp32");
  CHECK_INT(compute_path_parse(""), -1);
  CHECK_INT(compute_path_parse("tc_f32"), -1);
  CHECK_STR(compute_path_key(PATH_COUNT), "");
}

TEST_LIST(TEST_ENTRY(arch_lookups), TEST_ENTRY(gpu_lookups), TEST_ENTRY(table),
          TEST_ENTRY(compute_paths))
