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
/* stages: kernels */
#include <math.h>

#include "fake_cuda.h"
#include "kernels/attention.h"
#include "kernels/numeric.h"
#include "test.h"

static attn_args seen;     /* the reference launch's argument */
static int dirty_at_entry; /* a split candidate found a counter non-zero when it started */
static int bh;             /* counters: B * HKV */

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
  CHECK_INT(
      attention_family.gpu_launch(g, (CUfunction)(uintptr_t)2, &cfg, grid, block, 0, NULL, &err),
      RT_OK);
  dirty_at_entry = 0;
  CHECK_INT(attention_family.gpu_poison(g, NULL, &err), RT_OK);
  CHECK_INT(
      attention_family.gpu_launch(g, (CUfunction)(uintptr_t)3, &cfg, grid, block, 0, NULL, &err),
      RT_OK);
  CHECK_INT(dirty_at_entry, 0);
  attention_family.gpu_teardown(g);
  CHECK_INT(fake_cuda_allocs(), 0);
}

/* Element d of key token t of sequence b, KV head hk, through the layout of `seen`. */
static float key_elem(const attn_args *a, int bf16, int paged, int b, int t, int hk, int d) {
  long long row;
  if (paged) {
    const int *table = (const int *)(uintptr_t)a->block_table;
    row = (long long)table[b * a->max_pages + t / a->page_size] * a->page_size + t % a->page_size;
  } else {
    row = (long long)b * a->SKV + t;
  }
  const uint16_t h = ((const uint16_t *)(uintptr_t)a->k)[(row * a->HKV + hk) * a->D + d];
  return bf16 ? num_bf16_to_f32(h) : num_f16_to_f32(h);
}
static float query_elem(const attn_args *a, int bf16, int b, int i, int h, int d) {
  const uint16_t x =
      ((const uint16_t *)(uintptr_t)a->q)[(((long long)b * a->SQ + i) * a->HQ + h) * a->D + d];
  return bf16 ? num_bf16_to_f32(x) : num_f16_to_f32(x);
}

/* A spike key: its K row has one magnitude in every column (attention.c makes it a multiple of
 * the column signs); ordinary rows are uniform noise. */
static int is_spike(const attn_args *a, int bf16, int paged, int b, int t, int hk) {
  const float k0 = fabsf(key_elem(a, bf16, paged, b, t, hk, 0));
  for (int d = 1; d < a->D; d++)
    if (fabsf(key_elem(a, bf16, paged, b, t, hk, d)) != k0) return 0;
  return k0 > 0;
}

/* The uploaded inputs of one problem: the scaled logits of a row spread over at least 12 units
 * when it has 128 keys or more, 15 from 512; each sequence of 16 keys or more has 4 spike keys, one in each quarter
 * of its length, and in a row that reaches its last one that spike stands 6 or more above the
 * row's mean logit; K and V are finite exactly where a key is, NaN past each sequence's length
 * (contiguous: the rest of SKV; paged: the pool rows no key lives in). */
static void check_inputs(const char *shape, const char *dtype, const char *lens) {
  problem p;
  family_gpu *g = setup(shape, dtype, lens, &p);
  if (!g) return;
  const attn_args a = seen;
  const int bf16 = !strcmp(dtype, "bf16"), paged = a.page_size > 0, group = a.HQ / a.HKV;
  const double scale = 1 / sqrt((double)a.D);
  int rows = 0, wide = 0, spike_rows = 0, lifted = 0, bad_spikes = 0, bad_finite = 0, bad_nan = 0;
  for (int b = 0; b < a.B; b++) {
    const int L = (int)attention_kv_len(&p, b);
    for (int hk = 0; hk < a.HKV; hk++) { /* the spikes of the sequence, one per quarter */
      int per_quarter[4] = {0}, last = -1;
      for (int t = 0; t < L; t++)
        if (is_spike(&a, bf16, paged, b, t, hk)) per_quarter[4 * t / L]++, last = t;
      for (int q = 0; q < 4 && L >= 16; q++) bad_spikes += per_quarter[q] != 1;
      if (L < 16) continue;
      for (int h = hk * group; h < (hk + 1) * group; h++)
        for (int i = 0; i < a.SQ; i++) {
          int n = a.causal ? i + L - a.SQ + 1 : L;
          if (n > L) n = L;
          double lo = INFINITY, hi = -INFINITY, sum = 0, z_last = 0;
          for (int j = 0; j < n; j++) {
            double dot = 0;
            for (int d = 0; d < a.D; d++)
              dot +=
                  (double)query_elem(&a, bf16, b, i, h, d) * key_elem(&a, bf16, paged, b, j, hk, d);
            const double z = dot * scale;
            lo = fmin(lo, z), hi = fmax(hi, z), sum += z;
            if (j == last) z_last = z;
          }
          if (n >= 128) rows++, wide += hi - lo >= (n >= 512 ? 15 : 12);
          if (n > last) spike_rows++, lifted += z_last >= sum / n + 6;
        }
    }
    /* K and V rows: finite for t < L, NaN past it (contiguous), every head, some columns */
    for (int t = 0; t < (paged ? L : a.SKV); t++)
      for (int hk = 0; hk < a.HKV; hk++)
        for (int d = 0; d < a.D; d += 7) {
          const float k = key_elem(&a, bf16, paged, b, t, hk, d);
          if (t < L)
            bad_finite += !isfinite(k);
          else
            bad_nan += !isnan(k);
        }
  }
  if (paged) { /* pool rows no key lives in: the tails of the sequences' last pages */
    const int *table = (const int *)(uintptr_t)a.block_table;
    for (int b = 0; b < a.B; b++) {
      const int L = (int)attention_kv_len(&p, b);
      for (int t = L; t < (L + a.page_size - 1) / a.page_size * a.page_size; t++) {
        const long long row =
            (long long)table[b * a.max_pages + t / a.page_size] * a.page_size + t % a.page_size;
        const uint16_t x = ((const uint16_t *)(uintptr_t)a.v)[(row * a.HKV) * a.D];
        bad_nan += !isnan(bf16 ? num_bf16_to_f32(x) : num_f16_to_f32(x));
      }
    }
  }
  printf(
      "%s %s%s%s: %d of %d long rows over 12 (15) units, %d of %d rows with the last spike 6 above "
      "their mean\n",
      shape, dtype, lens ? " lens " : "", lens ? lens : "", wide, rows, lifted, spike_rows);
  CHECK(spike_rows > 0);
  CHECK(wide >= rows * 9 / 10);
  CHECK(lifted >= spike_rows * 9 / 10);
  CHECK_INT(bad_spikes, 0);
  CHECK_INT(bad_finite, 0);
  CHECK_INT(bad_nan, 0);
  attention_family.gpu_teardown(g);
}

TEST_CASE(inputs) {
  check_counters();
  check_inputs("2x4:2x256x64:causal", "bf16", NULL);
  check_inputs("2x2x1:300x128", "f16", "300,40");
  check_inputs("2x8:2x1:200x64:paged16", "bf16", "200,77");
  check_inputs("1x2x2:600x256", "bf16", NULL);
  check_inputs("1x2:1x700x128:causal", "f16", NULL);
}

TEST_LIST(TEST_ENTRY(inputs))
