/* The declared families' kernels on the sim (sim/sim.h): softmax_rows (one-pass and three-pass,
 * rows shared by one and by two warps, vectors of 1 to 4, f32 and bf16) against a
 * double-precision softmax, and transpose_tiled (padded and not, two 16-bit elements a thread)
 * exactly, on shapes that leave partial blocks.  A softmax that reads one vector past each row
 * (the defect issue 34 names: on the model device it tuned like the right one) is refused: the
 * last row's read is an out-of-bounds access naming the input. */
/* stages: sim kernels */
#include "sim_gemm_util.h"
#include "template/catalog.h"

typedef struct srow_case {
  const char *family, *tmpl, *dtype, *shape, *config;
} srow_case;

/* wrong outputs, or -1 with msg */
static long run_rows(const srow_case *c, const sgu_mutation *mu, char *msg, size_t size) {
  char dir[1200], path[1300];
  rt_error err;
  rt_error_clear(&err);
  snprintf(dir, sizeof dir, "%s/templates", ROOFTUNE_SOURCE_DIR);
  snprintf(path, sizeof path, "%s/%s/%s.json", dir, c->family, c->tmpl);
  sgu_run r;
  memset(&r, 0, sizeof r);
  const family_ops *fam = NULL;
  if (family_load_path(dir, &err) || !(fam = family_find(c->family)) ||
      manifest_load(path, &r.m, &err) ||
      fam->parse_shape(fam, c->shape, c->dtype, NULL, &r.p, &err) ||
      problem_env(fam, &r.p, arch_spec_find("sm_90"), gpu_spec_for_arch("sm_90"), &r.env, &err) ||
      manifest_build_space(r.m, &r.env, &r.sp, &err)) {
    snprintf(msg, size, "%s %s: %s", c->tmpl, c->shape, fam ? err.text : "no such family");
    sgu_close(&r);
    return -1;
  }
  int found = 0;
  for (size_t i = 0; i < space_size(r.sp) && !found; i++)
    if (!manifest_plan(r.m, r.sp, i, &r.env, &r.plan, &err) && sgu_matches(&r.plan.vars, c->config))
      r.idx = i, found = 1;
  if (!found) {
    snprintf(msg, size, "%s: no configuration %s", c->tmpl, c->config);
    sgu_close(&r);
    return -1;
  }
  const sgu_case gc = {c->tmpl, "sm_90", c->dtype, c->shape, c->config};
  sim_module *mod = sgu_compile(&gc, &r, mu, msg, size);
  if (!mod) {
    sgu_close(&r);
    return -1;
  }
  const int rows = (int)problem_dim(&r.p, "ROWS"), cols = (int)problem_dim(&r.p, "COLS");
  const int code = !strcmp(c->dtype, "f32") ? 0 : !strcmp(c->dtype, "f16") ? 1 : 2;
  const size_t n = (size_t)rows * (size_t)cols, es = code ? 2 : 4;
  void *x = sim_buffer_alloc(n * es, "x"), *y = sim_buffer_alloc(n * es, "y");
  double *xf = malloc(n * sizeof(double));
  unsigned long long seed = 5;
  for (size_t i = 0; i < n; i++) sgu_store(x, i, (float)(xf[i] = 4 * sgu_value(&seed)), code);
  memset(y, 0xff, n * es);
  void *params[] = {&x, &y, (void *)&rows, (void *)&cols};
  sim_launch l;
  memset(&l, 0, sizeof l);
  for (int i = 0; i < 3; i++) l.grid[i] = r.plan.grid[i], l.block[i] = r.plan.block[i];
  l.shared_bytes = r.plan.smem, l.params = params, l.schedule = SIM_SCHED_RANDOM, l.seed = 99;
  long bad = -1;
  const int outc = code == 0 ? GEMM_OUT_F32 : code == 1 ? GEMM_OUT_F16 : GEMM_OUT_BF16;
  if (sim_run(mod, &l, NULL, &err)) {
    snprintf(msg, size, "%s", err.text);
  } else if (!strcmp(c->family, "softmax")) {
    bad = 0;
    for (int i = 0; i < rows; i++) {
      double mx = -INFINITY, s = 0;
      for (int j = 0; j < cols; j++) mx = fmax(mx, xf[(size_t)i * cols + j]);
      for (int j = 0; j < cols; j++) s += exp(xf[(size_t)i * cols + j] - mx);
      for (int j = 0; j < cols; j++) {
        const double want = exp(xf[(size_t)i * cols + j] - mx) / s,
                     got = sgu_out(y, (size_t)i * cols + j, outc);
        if (!(fabs(got - want) <= (code ? 1e-2 : 1e-5) * want + 1e-7)) {
          if (!bad) snprintf(msg, size, "y[%d][%d] = %g, expected %g", i, j, got, want);
          bad++;
        }
      }
    }
  } else {
    bad = 0;
    for (int i = 0; i < rows; i++)
      for (int j = 0; j < cols; j++) {
        const double got = sgu_out(y, (size_t)j * rows + i, outc), want = xf[(size_t)i * cols + j];
        if (got != want) {
          if (!bad) snprintf(msg, size, "out[%d][%d] = %g, expected %g", j, i, got, want);
          bad++;
        }
      }
  }
  free(xf);
  sim_buffer_free(x);
  sim_buffer_free(y);
  sim_module_free(mod);
  sgu_close(&r);
  return bad;
}

static void expect_ok(const srow_case *c) {
  char msg[1024];
  const long bad = run_rows(c, NULL, msg, sizeof msg);
  if (bad)
    fprintf(stderr, "%s %s %s [%s]: %ld wrong: %s\n", c->tmpl, c->dtype, c->shape, c->config, bad,
            msg);
  CHECK_INT(bad, 0);
}

TEST_CASE(softmax_rows) {
  static const srow_case cs[] = {
      {"softmax", "softmax_rows", "f32", "37x250",
       "WARPS=2,ROW_THREADS=64,VEC=2,UNROLL=2,ONLINE=1"},
      {"softmax", "softmax_rows", "bf16", "37x256",
       "WARPS=4,ROW_THREADS=32,VEC=4,UNROLL=1,ONLINE=0"},
      {"softmax", "softmax_rows", "f16", "9x100", "WARPS=1,ROW_THREADS=8,VEC=1,UNROLL=4,ONLINE=1"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) expect_ok(&cs[i]);
}

TEST_CASE(transpose_tiled) {
  static const srow_case cs[] = {
      {"transpose", "transpose_tiled", "f32", "50x70", "TILE=32,BLOCK_ROWS=8,PAD=1,VEC=1"},
      {"transpose", "transpose_tiled", "bf16", "33x66", "PAD=0,VEC=2"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) expect_ok(&cs[i]);
}

TEST_CASE(softmax_reading_past_its_row_refused) {
  const srow_case c = {"softmax", "softmax_rows", "f32", "16x256",
                       "WARPS=2,ROW_THREADS=64,VEC=4,UNROLL=1,ONLINE=1"};
  const sgu_mutation mu = {NULL, "const int nv = live ? cols / VEC : 0;",
                           "const int nv = live ? cols / VEC + 1 : 0;", 0};
  char msg[1024];
  const long bad = run_rows(&c, &mu, msg, sizeof msg);
  fprintf(stderr, "one vector past each row: %ld (%s)\n", bad, msg);
  CHECK_INT(bad, -1);
  CHECK_CONTAINS(msg, "out-of-bounds access to x");
}

TEST_LIST(TEST_ENTRY(softmax_rows), TEST_ENTRY(transpose_tiled),
          TEST_ENTRY(softmax_reading_past_its_row_refused))
