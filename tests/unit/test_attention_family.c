/* test_attention_family.c — the attention family's host side: every shape form of the issue
 * parses to the right dims and canonical text; bad shapes, dtypes and lengths are each one clear
 * error; the names manifest expressions see equal an independent computation
 * (tests/attn_compile_util.h's acu_bind, which counts the causal pairs row by row) for prefill,
 * decode, causal, grouped, paged and ragged problems; FLOPs and compulsory bytes; the argument
 * struct the launcher and the runtime fill; ragged lengths travel as the problem's args and the
 * shape names them by a digest that must match. */
/* stages: kernels */
#include "../attn_compile_util.h"
#include "kernels/attention.h"

static const family_ops *fam;

static void parse_ok(const char *shape, const char *args, const char *canon, problem *p) {
  rt_error err = {0};
  rt_status s = fam->parse_shape(fam, shape, "bf16", args, p, &err);
  CHECK_INT(s, RT_OK);
  if (s) fprintf(stderr, "  %s: %s\n", shape, err.text);
  if (canon) CHECK_STR(p->shape, canon);
}

static void parse_bad(const char *shape, const char *dtype, const char *args, const char *needle) {
  rt_error err = {0};
  problem p;
  CHECK(fam->parse_shape(fam, shape, dtype, args, &p, &err) != RT_OK);
  CHECK_CONTAINS(err.text, needle);
}

/* The family's bind equals acu_bind's independent facts. */
static void same_facts(const problem *p, const int *lens) {
  acu_problem a = {(int)problem_dim(p, "B"),
                   (int)problem_dim(p, "HQ"),
                   (int)problem_dim(p, "HKV"),
                   (int)problem_dim(p, "SQ"),
                   (int)problem_dim(p, "SKV"),
                   (int)problem_dim(p, "D"),
                   (int)problem_dim(p, "CAUSAL"),
                   (int)problem_dim(p, "PAGE"),
                   0,
                   0,
                   lens};
  long long page = a.page_size;
  a.max_pages = page ? (int)((a.SKV + page - 1) / page) : 0;
  long long pages = 0;
  for (int b = 0; page && b < a.B; b++) pages += ((lens ? lens[b] : a.SKV) + page - 1) / page;
  a.num_pages = (int)pages;
  rt_vars want, got;
  rt_vars_clear(&want);
  rt_vars_clear(&got);
  CHECK_INT(acu_bind(&a, &want), RT_OK);
  CHECK_INT(fam->bind(fam, p, &got), RT_OK);
  for (int i = 0; i < want.count; i++) {
    long long v = -1;
    int has = rt_vars_get(&got, want.names[i], &v);
    CHECK(has);
    if (has && v != want.values[i])
      fprintf(stderr, "  %s: %s = %lld, expected %lld\n", p->shape, want.names[i], v,
              want.values[i]);
    CHECK(has && v == want.values[i]);
  }
}

static void setup(void) {
  fam = family_find("attention");
  CHECK(fam != NULL);
  if (!fam) exit(test_done());
  CHECK_STR(fam->reference, "attn_reference");
}

TEST_CASE(forms) {
  problem p;
  /* the forms */
  parse_ok("4x32x4096x128", NULL, "4x32x4096x128", &p);
  CHECK_INT(problem_dim(&p, "HKV"), 32);
  CHECK_INT(problem_dim(&p, "SKV"), 4096);
  same_facts(&p, NULL);
  CHECK_NEAR(fam->flops(fam, &p), 4.0 * 4 * 32 * 4096.0 * 4096 * 128, 0);
  /* Q, K, V, O once in bf16 and the fp32 LSE */
  CHECK_NEAR(fam->min_bytes(fam, &p), 2.0 * 4 * 4096 * 32 * 128 * 4 + 4.0 * 4 * 32 * 4096, 0);
  parse_ok("1x32:8x8192x128:causal", NULL, "1x32:8x8192x128:causal", &p);
  same_facts(&p, NULL);
  /* causal, SQ = SKV: exactly S(S+1)/2 pairs per head, not half */
  CHECK_INT(problem_dim(&p, "PAIRS"), 8192LL * 8193 / 2);
  parse_ok("8x16x512:2048x64", NULL, "8x16x512:2048x64", &p);
  same_facts(&p, NULL);
  parse_ok("8x16x512:2048x64:causal", NULL, NULL,
           &p); /* bottom-right: every query sees 1537+ keys */
  same_facts(&p, NULL);
  CHECK_INT(problem_dim(&p, "PAIRS"), 8LL * (512LL * 1536 + 512LL * 513 / 2));
  parse_ok("2x8x2048:512x128:causal", NULL, NULL,
           &p); /* SQ > SKV: the first 1536 queries see nothing */
  same_facts(&p, NULL);
  CHECK_INT(problem_dim(&p, "PAIRS"), 2LL * 512 * 513 / 2);
  parse_ok("64x32:8x1:8192x128", NULL, "64x32:8x1:8192x128", &p);
  same_facts(&p, NULL);
  parse_ok("64x32:8x1:8192x128:paged", NULL, "64x32:8x1:8192x128:paged16", &p);
  CHECK_INT(problem_dim(&p, "PAGE"), 16);
  same_facts(&p, NULL);
  parse_ok("8x32:8x4:4096x128:paged32:causal", NULL, "8x32:8x4:4096x128:causal:paged32", &p);
  same_facts(&p, NULL);
  parse_ok("1x1x1:1x64", NULL, "1x1x1x64", &p); /* SKV == SQ is left out of the canonical text */
  same_facts(&p, NULL);
}

TEST_CASE(ragged) {
  problem p;
  /* ragged: the args, named by a digest; the same lengths again parse the canonical shape */
  static const int lens[3] = {5, 1000, 777};
  parse_ok("3x8:1x1:1000x128", "5,1000,777", NULL, &p);
  CHECK_CONTAINS(p.shape, "3x8:1x1:1000x128:lens-");
  CHECK_STR(p.args, "5,1000,777");
  CHECK_INT(problem_dim(&p, "RAGGED"), 1);
  CHECK_INT(problem_dim(&p, "KVTOK"), 1782);
  CHECK_INT(attention_kv_len(&p, 2), 777);
  same_facts(&p, lens);
  problem q;
  char canon[64];
  snprintf(canon, sizeof canon, "%s", p.shape);
  parse_ok(canon, "5,1000,777", canon, &q);
  parse_bad(canon, "bf16", NULL, "give the lengths themselves with --kv-lens");
  parse_bad(canon, "bf16", "5,1000,778", "are not the ones the shape names");
  parse_ok("3x8:1x1:1000x128:paged16", "5,1000,777", NULL, &p);
  same_facts(&p, lens);
  parse_ok("3x8:1x4:1000x128:causal", "5,1000,777", NULL, &p); /* SQ 4 against 5 keys and more */
  same_facts(&p, lens);
}

TEST_CASE(args) {
  problem p;
  /* the argument struct */
  attn_args a;
  parse_ok("2x8:2x129x128:causal", NULL, NULL, &p);
  attention_args(&p, 16, 32, 48, 64, 80, 0, 0, 0, 96, &a);
  CHECK_INT(a.B, 2);
  CHECK_INT(a.HQ, 8);
  CHECK_INT(a.HKV, 2);
  CHECK_INT(a.SQ, 129);
  CHECK_INT(a.SKV, 129);
  CHECK_INT(a.D, 128);
  CHECK_INT(a.causal, 1);
  CHECK(a.q == 16 && a.k == 32 && a.v == 48 && a.o == 64 && a.lse == 80 && a.counters == 96);
  CHECK_NEAR(a.scale, 1.0 / sqrt(128.0), 1e-7);
  CHECK_NEAR(a.scale_log2, 1.0 / sqrt(128.0) * 1.4426950408889634, 1e-6);
  CHECK_INT(attention_work_floats(&p, 4), 2 * 8 * 129 * 4 * 130);
}

TEST_CASE(bad_input) {
  /* bad input: one clear error each */
  parse_bad("4x32x4096", "bf16", NULL, "D must follow");
  parse_bad("4x30:8x4096x128", "bf16", NULL, "HQ must be a multiple of HKV");
  parse_bad("4x32x4096x100", "bf16", NULL, "D must be a multiple of 8");
  parse_bad("4x32x4096x512", "bf16", NULL, "at most 256");
  parse_bad("4x32x4096x128:casual", "bf16", NULL, "the suffixes are :causal and :paged");
  parse_bad("4x32x4096x128:paged8", "bf16", NULL, "pages hold 16, 32 or 64 tokens");
  parse_bad("4x32x4096x128:causal:causal", "bf16", NULL, ":causal given twice");
  parse_bad("0x32x4096x128", "bf16", NULL, "B must be a positive integer");
  parse_bad("4x32x4096x128", "f32", NULL, "takes dtype f16 or bf16");
  parse_bad("3x8:1x1:1000x128", "bf16", "5,1000", "needs 3 lengths");
  parse_bad("3x8:1x1:1000x128", "bf16", "5,1001,777", "from 0 to SKV = 1000");
  parse_bad("3x8:1x1:1000x128", "bf16", "5,x,777", "length 2 is wrong");
  parse_bad("70000x1x1x64", "bf16", NULL, "larger than 65535");
}

TEST_LIST_FIXTURE(setup, NULL, TEST_ENTRY(forms), TEST_ENTRY(ragged), TEST_ENTRY(args),
                  TEST_ENTRY(bad_input))
