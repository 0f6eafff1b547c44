/* test_attention_gpu_host.c — the attention family's GPU side (kernels/attention.c: setup,
 * poisoning, launch) on the fake driver of tests/fake_cuda.h, whose device memory is host
 * memory, with the test playing the kernels.
 *
 *  - The split-KV tickets: a faulty split candidate that leaves counters[] non-zero (its last
 *    block never merged, or merged on a wrong ticket) must not make the next split candidate
 *    of the same worker fail: before each candidate's checked run the family's poisoning puts
 *    the counters back to 0 (attn_abi.h).
 *  - The inputs the family uploads: logits q.k * scale that spread over tens of units, and
 *    spike keys (attention.h) whose logit stands well above every other key of their row, at
 *    positions spread over each sequence, contiguous and paged, ragged; K and V rows past a
 *    sequence's length are NaN (a kernel that reads them and multiplies by 0 fails). */
#include <math.h>

#include "fake_cuda.h"
#include "kernels/attention.h"
#include "kernels/numeric.h"
#include "test.h"

static attn_args seen;          /* the reference launch's argument */
static int dirty_at_entry;      /* a split candidate found a counter non-zero when it started */
static int bh;                  /* counters: B * HKV */

/* function 1: the reference (zeros: finite); 2: a split candidate that draws tickets and never
 * resets them; 3: a correct one, which checks the counters at entry and leaves them 0 */
static void kernels(uintptr_t fn, void **args, const unsigned grid[3]) {
  (void)grid;
  const attn_args *a = (const attn_args *)args[0];
  const size_t o_n = (size_t)a->B * a->SQ * a->HQ * a->D, l_n = (size_t)a->B * a->HQ * a->SQ;
  int *counters = (int *)(uintptr_t)a->counters;
  if (fn == 1) {
    seen = *a;
    memset((void *)(uintptr_t)a->o, 0, o_n * 4);
    memset((void *)(uintptr_t)a->lse, 0, l_n * 4);
  } else if (fn == 2) {
    for (int i = 0; i < bh; i++) counters[i] = 3;
  } else if (fn == 3) {
    for (int i = 0; i < bh; i++) dirty_at_entry |= counters[i] != 0;
  }
}

static family_gpu *setup(const char *shape, const char *dtype, const char *lens, problem *p) {
  rt_error err = {0};
  family_gpu *g = NULL;
  CHECK_INT(attention_family.parse_shape(&attention_family, shape, dtype, lens, p, &err), RT_OK);
  static const unsigned char cubin[16];
  family_reference ref;
  memset(&ref, 0, sizeof ref);
  ref.cubin = cubin;
  ref.cubin_size = sizeof cubin;
  ref.entry = "attn_reference";
  ref.grid[0] = ref.grid[1] = ref.grid[2] = ref.block[0] = ref.block[1] = ref.block[2] = 1;
  fake_cuda_install(kernels);
  CHECK_INT(attention_family.gpu_setup(&attention_family, p, 12345, &ref, NULL, &g, &err), RT_OK);
  if (!g) fprintf(stderr, "%s: %s\n", shape, err.text);
  return g;
}

static void check_counters(void) {
  problem p;
  family_gpu *g = setup("3x8:2x1:300x64", "bf16", NULL, &p);
  if (!g) return;
  bh = 3 * 2;
  rt_error err = {0};
  rt_vars cfg;
  rt_vars_clear(&cfg);
  rt_vars_set(&cfg, "SPLITS", 4);
  const unsigned grid[3] = {4, 2, 3}, block[3] = {128, 1, 1};
  /* the faulty candidate, checked (poison, run), then the next one */
  CHECK_INT(attention_family.gpu_poison(g, NULL, &err), RT_OK);
  CHECK_INT(attention_family.gpu_launch(g, (CUfunction)(uintptr_t)2, &cfg, grid, block, 0, NULL, &err), RT_OK);
  dirty_at_entry = 0;
  CHECK_INT(attention_family.gpu_poison(g, NULL, &err), RT_OK);
  CHECK_INT(attention_family.gpu_launch(g, (CUfunction)(uintptr_t)3, &cfg, grid, block, 0, NULL, &err), RT_OK);
  CHECK_INT(dirty_at_entry, 0);
  attention_family.gpu_teardown(g);
  CHECK_INT(fake_cuda_allocs(), 0);
}

int main(void) {
  check_counters();
  return test_done();
}
