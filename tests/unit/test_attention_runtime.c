/* test_attention_runtime.c — the host side of rooftune_attention: the shape text a call looks
 * up (rooftune_attention_shape) and its refusals; the TMA plan the runtime and the tuner's
 * launcher share (attention_tma_plan: every operand's dims, byte strides and boxes, and the
 * operand named when TMA cannot map it); a call's argument checks and, on a machine without a
 * driver, its clean failure; and the lookups of its cuDNN fallback, with and without cuDNN (a
 * tuned cuDNN plan served or passed over, cuDNN's own choice for an untuned shape). */
/* stages: kernels runtime */
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/attention.h"
#include "runtime/include/rooftune.h"
#include "test.h"
#include "driver/cudnn.h"
#include "unit/db_fixture.h"

TEST_CASE(shape) {
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

TEST_CASE(tma_plan) {
  problem p;
  rt_error err = {0};
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x16:4x1000:1500x128", "bf16", NULL,
                                         &p, &err),
            RT_OK);
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
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x16:4x1000:1500x128", "f16", NULL, &p,
                                         &err),
            RT_OK);
  CHECK_INT(attention_tma_plan(&p, &cfg, q, k, v, prm, &err), RT_OK);
  CHECK_INT(prm[ATTN_TMA_K].type, ATTN_TMA_DTYPE_FLOAT16);
  /* a misaligned V is named */
  CHECK_INT(attention_tma_plan(&p, &cfg, q, k, v + 8, prm, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "TMA cannot map V");
  CHECK_CONTAINS(err.text, "16-byte aligned");
  /* a head dim the inner box does not divide */
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x16x64x96", "f16", NULL, &p, &err),
            RT_OK);
  CHECK_INT(attention_tma_plan(&p, &cfg, q, k, v, prm, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "the problem");
  /* a configuration without box sizes */
  rt_vars none;
  rt_vars_clear(&none);
  CHECK_INT(attention_tma_plan(&p, &none, q, k, v, prm, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "TMA_INNER, TMA_ROWS_Q and TMA_ROWS_KV");
  /* encoding needs the driver: none is loaded here */
  attn_tma_maps maps;
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x16x64x128", "f16", NULL, &p, &err),
            RT_OK);
  rt_status s = attention_tma_maps(&p, &cfg, q, k, v, &maps, &err);
  CHECK(s == RT_ERR_NO_DRIVER || s == RT_OK);
}

TEST_CASE(call) {
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

/* A tuned cuDNN plan (a library winner: no cubin, its identity) for prefill 2x8x1024x128 bf16,
 * and the lookups rooftune_attention makes (ROOFTUNE_RUNNABLE).  Where cuDNN loads, the plan is
 * served and an untuned shape goes to cuDNN's own choice (rule 4, library "cudnn"); where it does
 * not, the plan is passed over and nothing serves, each saying why.  Returns the checks failed. */
static int fallback_lookups(const char *path, int cudnn_here) {
  int before = test_failures;
  rooftune_db *rdb = NULL;
  CHECK_INT(rooftune_open(path, &rdb), ROOFTUNE_OK);
  rooftune_query q = {
      .family = "attention", .shape = "2x8x1024x128", .dtype = "bf16", .flags = ROOFTUNE_RUNNABLE};
  rooftune_match m;
  CHECK_INT(rooftune_lookup(rdb, &q, &m), ROOFTUNE_OK);
  if (cudnn_here) {
    CHECK_INT(m.match, ROOFTUNE_MATCH_EXACT);
    CHECK_INT(m.runnable, 1);
    CHECK_STR(m.template_name, "cudnn");
    CHECK_STR(m.library_algo, "cudnn sdpa engine=3 knobs=- version=91900");
  } else {
    CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
    CHECK_INT(m.rule, ROOFTUNE_RULE_NONE);
    CHECK_CONTAINS(m.passed_over, "a cudnn library winner, and cudnn cannot be loaded here");
    CHECK_CONTAINS(m.reason, "its vendor library (cuDNN) cannot be loaded here");
  }
  q.shape = "1x32:8x8192x128:causal"; /* nothing tuned near it */
  CHECK_INT(rooftune_lookup(rdb, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
  CHECK_INT(m.rule, cudnn_here ? ROOFTUNE_RULE_LIBRARY : ROOFTUNE_RULE_NONE);
  CHECK_STR(m.library, cudnn_here ? "cudnn" : "");
  CHECK_CONTAINS(m.reason, cudnn_here ? "cuDNN's own choice serves it" : "cannot be loaded here");
  rooftune_close(rdb);
  return test_failures - before;
}

TEST_CASE(fallback_lookups) {
  char path[512], tk[96];
  fx_tmpname(path, sizeof path, "attn-cudnn");
  rt_error err = {0};
  problem p;
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x8x1024x128", "bf16", NULL, &p, &err),
            RT_OK);
  CHECK_INT(db_toolkit_string(tk, sizeof tk, &err), RT_OK);
  db_run_spec spec = fx_spec(p, "NVIDIA H200");
  snprintf(spec.prov.toolkit, sizeof spec.prov.toolkit, "%s", tk);
  db *d = NULL;
  db_run *r = NULL;
  candidate_result c = fx_result("cudnn", 0, 0, 0.5);
  c.verified = 1; /* measured, its check passed */
  snprintf(c.config, sizeof c.config, "cudnn sdpa engine=3 knobs=- version=91900");
  db_winner w;
  memset(&w, 0, sizeof w);
  snprintf(w.library_algo, sizeof w.library_algo, "%s", c.config);
  long long id = 0;
  CHECK(!db_open(path, DB_CREATE, &d, &err) && !db_run_begin(d, &spec, &r, &err) &&
        !db_run_template(r, "cudnn", "attention", "", "", &err) &&
        !db_run_store(r, &c, &id, &err) && !db_run_set_winner(r, id, &w, NULL, &err));
  if (err.text[0]) fprintf(stderr, "  %s\n", err.text);
  db_run_free(r);
  db_close(d);
  /* without cuDNN: a child that points the loader at nothing before anything loads it */
  pid_t pid = fork();
  if (pid == 0) {
    setenv("ROOFTUNE_LIBCUDNN", "/nonexistent/libcudnn.so.9", 1);
    _exit(fallback_lookups(path, 0) ? 1 : 0);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
  CHECK_INT(WEXITSTATUS(status), 0);
  int here = cudnn_load(&err) == RT_OK;
  if (!here) printf("cuDNN does not load here (%s): the lookups without it only\n", err.text);
  fallback_lookups(path, here);
  fx_remove(path);
}

TEST_LIST(TEST_ENTRY(fallback_lookups), /* first: its child must load cuDNN itself */
          TEST_ENTRY(shape), TEST_ENTRY(tma_plan), TEST_ENTRY(call))
