/* test_attn_decode_space.c (long) — EVERY configuration of attn_decode's default space compiles
 * for sm_80 and sm_90 without spills, with mma.sync and the configuration's loads in the PTX
 * (adu_check).  The spaces are those of problems that together bind every HEAD_DIM, PAGE and
 * Q_ROWS value: the brief's 64x32:8x1:8192x128 contiguous and paged by 16, D 64 and D 256 with
 * 32 and 64 query rows per block, paged by 32 and 64.  Compiles run in the compile pool (one
 * worker per core).  ROOFTUNE_ATTN_DECODE_SPACE=TEXT keeps only the variants whose
 * "arch dtype problem" line contains TEXT (e.g. "sm_90 f16 64x32"). */
/* stages: model */
#include "../attn_decode_util.h"
#include "../space_compile_util.h"

/* ctx: the arch and dtype */
static int decode_check(void *ctx, const manifest *m, const space *sp, size_t idx,
                        const char *config, const compile_result *r) {
  (void)m, (void)sp, (void)idx;
  const char *const *what = ctx;
  return adu_check(what[0], what[1], config, r);
}

int main(void) {
  static const char *const archs[] = {"sm_80", "sm_90"};
  static const struct {
    const char *dtype, *shape;
  } problems[] = {
      {"f16", "64x32:8x1:8192x128"},      {"bf16", "64x32:8x1:8192x128:p16"},
      {"bf16", "8x64:8x4:4096x64:p32:c"}, {"f16", "8x64:8x8:4096x64:p64:c"},
      {"f16", "4x32:8x1:4096x256"},       {"bf16", "4x64:8x4:4096x256:p32:c"},
      {"f16", "2x16:2x8:4096x128:p16"},
  };
  size_t total = 0, failed = 0;
  for (int a = 0; a < 2; a++)
    for (size_t k = 0; k < sizeof problems / sizeof problems[0]; k++) {
      const char *arch = archs[a], *dtype = problems[k].dtype, *shape = problems[k].shape;
      const char *only = getenv("ROOFTUNE_ATTN_DECODE_SPACE");
      char line[128];
      snprintf(line, sizeof line, "%s %s %s", arch, dtype, shape);
      if (only && *only && !strstr(line, only)) continue;
      manifest *m = NULL;
      space *sp = NULL;
      rt_vars env;
      rt_error err;
      rt_error_clear(&err);
      rt_status st = adu_space(arch, dtype, shape, &m, &sp, &env, &err);
      CHECK_INT(st, RT_OK);
      if (st) {
        fprintf(stderr, "%s: %s\n", line, err.text);
        continue;
      }
      const char *what[2] = {arch, dtype};
      sc_stats r;
      sc_compile_space(m, sp, &env, dtype, arch, decode_check, what, &r);
      printf("%-5s %-4s %-24s: %zu configurations, %zu failed, at most %d registers\n", arch, dtype,
             shape, r.n, r.bad, r.most_regs);
      fflush(stdout);
      total += r.n;
      failed += r.bad;
      space_free(sp);
      manifest_free(m);
    }
  printf("%zu configurations compiled, %zu failed\n", total, failed);
  return test_done();
}
