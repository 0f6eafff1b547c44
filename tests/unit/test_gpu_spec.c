/* test_gpu_spec.c — the spec tables answer lookups and hold the documented numbers. */
#include "test.h"
#include "tuner/model/gpu_spec.h"

int main(void) {
  const arch_spec *a = arch_spec_find("sm_90");
  CHECK(a && a->cc == 90 && a->smem_per_block_optin == 227 * 1024);
  CHECK(arch_spec_find("sm_90a") == a);
  CHECK(arch_spec_find("90") == a);
  CHECK(arch_spec_find("sm_75") == NULL);
  CHECK(arch_spec_find("sm_9x") == NULL);
  CHECK(arch_spec_find("sm_80")->smem_per_block_optin == 163 * 1024);
  CHECK(arch_spec_find("sm_86")->max_threads_per_sm == 1536);
  const gpu_spec *h = gpu_spec_find("H200");
  CHECK(h && h->sm_count == 132 && strcmp(h->arch, "sm_90") == 0);
  CHECK(h->dram_bw_achievable < h->dram_bw_spec);
  CHECK(gpu_spec_find("v100") == NULL);
  CHECK(gpu_spec_match("NVIDIA H200", 90) == h);
  CHECK(gpu_spec_match("NVIDIA A100-SXM4-80GB", 80) == gpu_spec_find("a100"));
  CHECK(gpu_spec_match("NVIDIA GeForce RTX 3090", 86) == NULL);
  CHECK_STR(gpu_spec_keys(), "h200, h100, a100, l4");
  size_t n;
  const gpu_spec *all = gpu_spec_all(&n);
  CHECK_INT(n, 4);
  for (size_t i = 0; i < n; i++) {
    CHECK(arch_spec_find(all[i].arch) != NULL);
    CHECK(all[i].peak_flops[PATH_TC_F16] > all[i].peak_flops[PATH_TC_TF32]);
    CHECK(all[i].peak_flops[PATH_TC_TF32] > all[i].peak_flops[PATH_SIMT_F32]);
  }
  return test_done();
}
