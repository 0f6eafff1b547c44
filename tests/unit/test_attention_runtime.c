/* test_attention_runtime.c — the host side of rooftune_attention: the shape text a call looks
 * up (rooftune_attention_shape) and its refusals; the TMA plan the runtime and the tuner's
 * launcher share (attention_tma_plan: every operand's dims, byte strides and boxes, and the
 * operand named when TMA cannot map it); and a call's argument checks and, on a machine
 * without a driver, its clean failure. */
#include "kernels/attention.h"
#include "runtime/include/rooftune.h"
#include "test.h"

static void test_shape(void) {
  char buf[160];
  rooftune_attention_problem a;
  memset(&a, 0, sizeof a);
  a.dtype = "bf16";
  a.batch = 64;
  a.heads_q = 32;
  a.heads_kv = 8;
  a.seq_q = 1;
  a.seq_kv = 8192;
  a.head_dim = 128;
  a.page_size = 16;
  CHECK_INT(rooftune_attention_shape(&a, buf, sizeof buf), ROOFTUNE_OK);
  CHECK_STR(buf, "64x32:8x1:8192x128:paged16");
  a.page_size = 0;
  a.heads_kv = 0; /* = heads_q */
  a.seq_kv = 0;   /* = seq_q */
  a.seq_q = 4096;
  a.causal = 1;
  CHECK_INT(rooftune_attention_shape(&a, buf, sizeof buf), ROOFTUNE_OK);
  CHECK_STR(buf, "64x32x4096x128:causal");
  CHECK_INT(rooftune_attention_shape(&a, buf, 8), ROOFTUNE_ERR_INVALID); /* too small a buffer */
  CHECK_CONTAINS(rooftune_last_error(), "buffer too small");
  a.page_size = 8;
  CHECK_INT(rooftune_attention_shape(&a, buf, sizeof buf), ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "page_size must be 0 (contiguous), 16, 32 or 64");
  a.page_size = 0;
  a.heads_kv = 7;
  CHECK_INT(rooftune_attention_shape(&a, buf, sizeof buf), ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "HQ must be a multiple of HKV");
  a.heads_kv = 8;
  a.head_dim = 100;
  CHECK_INT(rooftune_attention_shape(&a, buf, sizeof buf), ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "D must be a multiple of 8");
  a.head_dim = 128;
  a.dtype = "f32";
  CHECK_INT(rooftune_attention_shape(&a, buf, sizeof buf), ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "f16 or bf16");
  a.dtype = NULL;
  CHECK_INT(rooftune_attention_shape(&a, buf, sizeof buf), ROOFTUNE_ERR_INVALID);
  CHECK_INT(rooftune_attention_shape(NULL, buf, sizeof buf), ROOFTUNE_ERR_INVALID);
}

static void test_tma_plan(void) {
  problem p;
  rt_error err = {0};
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x16:4x1000:1500x128", "bf16", NULL, &p, &err), RT_OK);
  rt_vars cfg;
  rt_vars_clear(&cfg);
  rt_vars_set(&cfg, "TMA_INNER", 64);
  rt_vars_set(&cfg, "TMA_ROWS_Q", 128);
  rt_vars_set(&cfg, "TMA_ROWS_KV", 176);
  attn_tma_params prm[ATTN_TMA_OPERANDS];
  const unsigned long long q = 0x10000, k = 0x200000, v = 0x3000000;
  CHECK_INT(attention_tma_plan(&p, &cfg, q, k, v, prm, &err), RT_OK);
  /* Q: (D, HQ, SQ, B), strides D*2, HQ*D*2, SQ*HQ*D*2; box (64, 1, 128, 1) */
  CHECK_INT(prm[ATTN_TMA_Q].type, ATTN_TMA_DTYPE_BFLOAT16);
  CHECK_INT(prm[ATTN_TMA_Q].rank, 4);
  CHECK_INT(prm[ATTN_TMA_Q].base, q);
  CHECK_INT(prm[ATTN_TMA_Q].dims[0], 128);
  CHECK_INT(prm[ATTN_TMA_Q].dims[1], 16);
  CHECK_INT(prm[ATTN_TMA_Q].dims[2], 1000);
  CHECK_INT(prm[ATTN_TMA_Q].dims[3], 2);
  CHECK_INT(prm[ATTN_TMA_Q].strides[0], 256);
  CHECK_INT(prm[ATTN_TMA_Q].strides[1], 16 * 256);
  CHECK_INT(prm[ATTN_TMA_Q].strides[2], 1000LL * 16 * 256);
  CHECK_INT(prm[ATTN_TMA_Q].box[0], 64);
  CHECK_INT(prm[ATTN_TMA_Q].box[1], 1);
  CHECK_INT(prm[ATTN_TMA_Q].box[2], 128);
  CHECK_INT(prm[ATTN_TMA_Q].box[3], 1);
  /* K and V: (D, HKV, SKV, B), rows TMA_ROWS_KV */
  for (int o = ATTN_TMA_K; o <= ATTN_TMA_V; o++) {
    CHECK_INT(prm[o].base, o == ATTN_TMA_K ? k : v);
    CHECK_INT(prm[o].dims[1], 4);
    CHECK_INT(prm[o].dims[2], 1500);
    CHECK_INT(prm[o].strides[1], 4 * 256);
    CHECK_INT(prm[o].strides[2], 1500LL * 4 * 256);
    CHECK_INT(prm[o].box[2], 176);
    CHECK_INT(prm[o].swizzle, ATTN_TMA_SWIZZLE_128B);
    CHECK_INT(prm[o].oob, ATTN_TMA_OOB_FILL_ZERO);
  }
  /* f16 */
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x16:4x1000:1500x128", "f16", NULL, &p, &err), RT_OK);
  CHECK_INT(attention_tma_plan(&p, &cfg, q, k, v, prm, &err), RT_OK);
  CHECK_INT(prm[ATTN_TMA_K].type, ATTN_TMA_DTYPE_FLOAT16);
  /* a misaligned V is named */
  CHECK_INT(attention_tma_plan(&p, &cfg, q, k, v + 8, prm, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "TMA cannot map V");
  CHECK_CONTAINS(err.text, "16-byte aligned");
  /* a head dim the inner box does not divide */
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x16x64x96", "f16", NULL, &p, &err), RT_OK);
  CHECK_INT(attention_tma_plan(&p, &cfg, q, k, v, prm, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "the problem");
  /* a configuration without box sizes */
  rt_vars none;
  rt_vars_clear(&none);
  CHECK_INT(attention_tma_plan(&p, &none, q, k, v, prm, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "TMA_INNER, TMA_ROWS_Q and TMA_ROWS_KV");
  /* encoding needs the driver: none is loaded here */
  attn_tma_maps maps;
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x16x64x128", "f16", NULL, &p, &err), RT_OK);
  rt_status s = attention_tma_maps(&p, &cfg, q, k, v, &maps, &err);
  CHECK(s == RT_ERR_NO_DRIVER || s == RT_OK);
}

static void test_call(void) {
  static char buf[64] __attribute__((aligned(16)));
  rooftune_attention_problem a;
  memset(&a, 0, sizeof a);
  a.dtype = "f16";
  a.batch = 1;
  a.heads_q = 8;
  a.seq_q = 1;
  a.seq_kv = 64;
  a.head_dim = 64;
  rooftune_info info;
  CHECK_INT(rooftune_attention(NULL, &a, NULL, &info), ROOFTUNE_ERR_INVALID); /* no pointers */
  CHECK_CONTAINS(rooftune_last_error(), "q, k, v and o are required");
  a.q = a.k = a.v = a.o = buf;
  a.page_size = 16;
  CHECK_INT(rooftune_attention(NULL, &a, NULL, &info), ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "block_table and num_pages");
  a.page_size = 0;
  int rc = rooftune_attention(NULL, &a, NULL, &info);
  /* no driver or GPU here: a clean status and a message; with one, no context is current */
  CHECK(rc == ROOFTUNE_ERR_NO_DRIVER || rc == ROOFTUNE_ERR_NO_GPU);
  CHECK(rooftune_last_error()[0] != '\0');
}

int main(void) {
  test_shape();
  test_tma_plan();
  test_call();
  return test_done();
}
