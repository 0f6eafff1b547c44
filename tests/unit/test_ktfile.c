/* test_ktfile.c — Kernel Tuner and KTT files load into a space with recorded times; bad files
 * give one error naming the file. */
/* stages: template */
#include <math.h>

#include "test.h"
#include "template/ktfile.h"

static char fixture_path[1024];

static const char *fixture(const char *name) {
  snprintf(fixture_path, sizeof fixture_path, "%s/tests/data/ktfiles/%s", test_source_dir(), name);
  return fixture_path;
}

/* The plain and gzipped fixtures hold the same space; the gz one has every time doubled. */
static void check_small(const char *name, double scale) {
  ktfile *kf = NULL;
  rt_error err = {0};
  CHECK_INT(ktfile_load(fixture(name), &kf, &err), RT_OK);
  if (!kf) {
    fprintf(stderr, "%s: %s\n", name, err.text);
    return;
  }
  CHECK_INT(kf->format, KTFILE_KERNEL_TUNER);
  CHECK_STR(kf->device_name, "Fixture GPU");
  CHECK_STR(kf->kernel_name, "fixture_kernel");
  CHECK_INT(kf->configs, 10);
  CHECK_INT(kf->valid, 7);
  CHECK_INT(space_size(kf->space), 10);
  CHECK_INT(space_nparams(kf->space), 3);
  const space_param *b = space_param_at(kf->space, 0);
  CHECK_STR(b->name, "block_size_x");
  CHECK_INT(b->count, 3);
  CHECK(b->ints && b->ints[0] == 16 && b->ints[1] == 32 && b->ints[2] == 64); /* sorted */
  const space_param *m = space_param_at(kf->space, 2);
  CHECK(m->idents && !m->ints);
  CHECK_STR(m->idents[0], "fast");
  CHECK_STR(m->idents[1], "safe");
  CHECK_NEAR(kf->optimum_ms, 1.0 * scale, 1e-12);
  char cfg[128];
  space_format_config(kf->space, kf->optimum_idx, cfg, sizeof cfg);
  CHECK_STR(cfg, "block_size_x=64,tile=1,method=fast");
  CHECK_INT(ktfile_count_within(kf, 0.05), 2);
  CHECK_INT(ktfile_count_within(kf, 0), 1);

  size_t idx = 0;
  CHECK_INT(ktfile_find(kf, "block_size_x=32,tile=2,method=fast", &idx, &err), RT_OK);
  CHECK_NEAR(kf->time_ms[idx], 1.04 * scale, 1e-12);
  CHECK(kf->failure[idx] == NULL);
  CHECK_INT(ktfile_status(kf, idx), RT_OK);
  candidate_result r;
  ktfile_result(kf, idx, &r);
  CHECK_INT(r.timing, TIMING_REPLAYED);
  CHECK_NEAR(r.time_ms, 1.04 * scale, 1e-12);
  CHECK_CONTAINS(r.device_name, "replay:");
  CHECK_STR(r.config, "block_size_x=32,tile=2,method=fast");

  CHECK_INT(ktfile_find(kf, "method=fast,tile=2,block_size_x=64", &idx, &err), RT_OK);
  CHECK_STR(kf->failure[idx], "CompilationFailedConfig");
  CHECK(isnan(kf->time_ms[idx]));
  CHECK_INT(ktfile_status(kf, idx), RT_ERR_COMPILE);
  ktfile_result(kf, idx, &r);
  CHECK_INT(r.status, RT_ERR_COMPILE);
  CHECK_STR(r.detail, "CompilationFailedConfig");
  CHECK_INT(ktfile_find(kf, "block_size_x=32,tile=1,method=safe", &idx, &err), RT_OK);
  CHECK_INT(ktfile_status(kf, idx), RT_ERR_LAUNCH);
  CHECK_INT(ktfile_find(kf, "block_size_x=64,tile=1,method=safe", &idx, &err), RT_OK);
  CHECK_INT(ktfile_status(kf, idx), RT_ERR_INVALID);
  CHECK_STR(kf->failure[idx], "InvalidConfig");

  /* a configuration the file lacks: a clear error naming the file */
  rt_error_clear(&err);
  CHECK_INT(ktfile_find(kf, "block_size_x=16,tile=2,method=safe", &idx, &err), RT_ERR_NOT_FOUND);
  CHECK_CONTAINS(err.text, "not recorded");
  CHECK_CONTAINS(err.source, name);
  /* a value outside the domain */
  rt_error_clear(&err);
  CHECK(ktfile_find(kf, "block_size_x=48,tile=2,method=safe", &idx, &err) != RT_OK);
  CHECK_CONTAINS(err.source, name);
  ktfile_free(kf);
}

static void check_ktt(void) {
  ktfile *kf = NULL;
  rt_error err = {0};
  CHECK_INT(ktfile_load(fixture("ktt_small.json"), &kf, &err), RT_OK);
  if (!kf) {
    fprintf(stderr, "ktt: %s\n", err.text);
    return;
  }
  CHECK_INT(kf->format, KTFILE_KTT);
  CHECK_STR(kf->device_name, "Fixture 2080");
  CHECK_STR(kf->kernel_name, "ktt_fixture");
  CHECK_INT(kf->configs, 4);
  CHECK_INT(kf->valid, 3);
  CHECK_NEAR(kf->optimum_ms, 0.8, 1e-12); /* 800 us as two 400 us computations */
  size_t idx = 0;
  CHECK_INT(ktfile_find(kf, "WG_X=16,UNROLL=2", &idx, &err), RT_OK);
  CHECK_NEAR(kf->time_ms[idx], 1.5, 1e-12);
  CHECK_INT(ktfile_find(kf, "WG_X=32,UNROLL=2", &idx, &err), RT_OK);
  CHECK_STR(kf->failure[idx], "CompilationFailed");
  CHECK_INT(ktfile_status(kf, idx), RT_ERR_COMPILE);
  ktfile_free(kf);
}

/* A KTT file's counters and compile data: the metric table maps sectors to bytes and
 * percentages to fractions, a metric it does not list is ignored, the block and grid become
 * static facts; a failed configuration and the Kernel Tuner formats carry none. */
static void check_counters(void) {
  ktfile *kf = NULL;
  rt_error err = {0};
  CHECK_INT(ktfile_load(fixture("ktt_counters.json"), &kf, &err), RT_OK);
  if (!kf) {
    fprintf(stderr, "ktt_counters: %s\n", err.text);
    return;
  }
  CHECK(kf->counters != NULL && kf->facts != NULL);
  size_t idx = 0;
  CHECK_INT(ktfile_find(kf, "WG_X=32,UNROLL=2", &idx, &err), RT_OK);
  const hw_counters *h = &kf->counters[idx];
  CHECK_INT(h->measured, 1);
  CHECK_NEAR(h->dram_read_bytes, 1000 * 32.0, 1e-9);
  CHECK_NEAR(h->dram_write_bytes, 500 * 32.0, 1e-9);
  CHECK_NEAR(h->l2_bytes, (3000 + 500) * 32.0, 1e-9); /* reads and writes */
  CHECK_NEAR(h->occupancy, 0.5, 1e-12);
  CHECK_NEAR(h->fma_pipe, 0.55, 1e-12);
  CHECK_NEAR(h->fp32_inst, 2.0e6, 1e-9);
  CHECK_NEAR(h->local_bytes, 0, 0);
  const static_facts *f = &kf->facts[idx];
  CHECK_INT(f->registers, 40);
  CHECK_INT(f->smem_static, 1024);
  CHECK_INT(f->threads_per_block, 64);
  CHECK_INT(f->grid_blocks, 128 * 64); /* GlobalSizeType CUDA: the grid in blocks */
  CHECK_INT(ktfile_find(kf, "WG_X=64,UNROLL=2", &idx, &err), RT_OK);
  CHECK_NEAR(kf->counters[idx].local_bytes, 2 * 4000 * 32.0, 1e-9); /* loads and stores */
  CHECK_INT(kf->facts[idx].stack_bytes, 64);
  CHECK_INT(kf->facts[idx].registers, 255);
  /* the result a replay serves carries them */
  candidate_result r;
  ktfile_result(kf, idx, &r);
  CHECK_INT(r.counters.measured, 1);
  CHECK_INT(r.facts.registers, 255);
  CHECK_INT(ktfile_find(kf, "WG_X=128,UNROLL=2", &idx, &err), RT_OK);
  CHECK_INT(kf->counters[idx].measured, 0);
  CHECK_INT(kf->facts[idx].threads_per_block, 0);
  ktfile_free(kf);
  /* the table: every row names a field or says why not, and a name is listed once */
  size_t n = 0;
  const ktfile_metric *t = ktfile_metric_table(&n);
  CHECK(n >= 33);
  for (size_t i = 0; i < n; i++) {
    CHECK((t[i].field != NULL) != (t[i].why != NULL));
    CHECK(ktfile_metric_find(t[i].name) != NULL);
    for (size_t j = i + 1; j < n; j++) CHECK(strcmp(t[i].name, t[j].name) != 0);
  }
  CHECK(ktfile_metric_find("a_metric_no_table_lists") == NULL);
  CHECK_STR(ktfile_metric_find("dram__sectors_read.sum")->field, "dram_read_bytes");
  hw_counters c = {0};
  CHECK_INT(ktfile_metric_apply(ktfile_metric_find("smsp__inst_executed.sum"), 5, &c), 0);
  CHECK_INT(c.measured, 0);
  CHECK_INT(ktfile_metric_apply(ktfile_metric_find("lts__t_bytes.sum"), 5, &c), 1);
  CHECK(c.measured == 1 && c.l2_bytes == 5);
  /* other formats record none */
  CHECK_INT(ktfile_load(fixture("small.json"), &kf, &err), RT_OK);
  CHECK(kf && kf->counters == NULL && kf->facts == NULL);
  ktfile_free(kf);
  CHECK_INT(ktfile_load(fixture("ktt_small.json"), &kf, &err), RT_OK);
  CHECK(kf && kf->counters == NULL && kf->facts == NULL); /* two kernels per result, no counters */
  ktfile_free(kf);
}

/* Non-integer values become identifiers (numbers sorted by value); 1.0 counts as the integer 1. */
static void check_mixed(void) {
  ktfile *kf = NULL;
  rt_error err = {0};
  CHECK_INT(ktfile_load(fixture("mixed.json"), &kf, &err), RT_OK);
  if (!kf) return;
  const space_param *a = space_param_at(kf->space, 0), *v = space_param_at(kf->space, 1);
  const space_param *f = space_param_at(kf->space, 2);
  CHECK(a->idents && a->count == 2);
  CHECK_STR(a->idents[0], "0.5");
  CHECK_STR(a->idents[1], "1.5");
  CHECK(v->ints && v->ints[0] == 1 && v->ints[1] == 2);
  CHECK(f->idents && f->count == 2);
  CHECK_INT(kf->configs, 8);
  size_t idx;
  CHECK_INT(ktfile_find(kf, "alpha=1.5,vec=2,flag=true", &idx, &err), RT_OK);
  CHECK_NEAR(kf->time_ms[idx], 3.1, 1e-12);
  CHECK_NEAR(kf->optimum_ms, 0.5, 1e-12);
  ktfile_free(kf);
}

/* Another GPU's recording as a prior: matched by parameter name, a missing parameter open, an
 * extra one ignored, values outside the domains and failures skipped. */
static void check_rank_in(void) {
  ktfile *kf = NULL, *pk = NULL, *un = NULL;
  rt_error err = {0};
  CHECK_INT(ktfile_load(fixture("small.json"), &kf, &err), RT_OK);
  CHECK_INT(ktfile_load(fixture("prior_other_gpu.json"), &pk, &err), RT_OK);
  CHECK_INT(ktfile_load(fixture("unrelated.json"), &un, &err), RT_OK);
  if (!kf || !pk || !un) return;
  size_t *order = NULL, n = 0;
  CHECK_INT(ktfile_rank_in(pk, kf->space, &order, &n, &err), RT_OK);
  static const char *const want[] = {
      "block_size_x=32,tile=2,method=fast", "block_size_x=32,tile=2,method=safe",  /* 0.8 */
      "block_size_x=64,tile=2,method=fast",                                        /* 1.0 */
      "block_size_x=16,tile=1,method=fast", "block_size_x=16,tile=1,method=safe"}; /* 2.0 */
  CHECK_INT(n, 5);
  for (size_t i = 0; i < n && i < 5; i++) {
    char text[128];
    space_format_config(kf->space, order[i], text, sizeof text);
    CHECK_STR(text, want[i]);
  }
  free(order);
  /* the file's own ranking: every timed configuration, fastest first */
  CHECK_INT(ktfile_rank_in(kf, kf->space, &order, &n, &err), RT_OK);
  CHECK_INT(n, 7);
  if (n) CHECK_INT(order[0], kf->optimum_idx);
  free(order);
  CHECK_INT(ktfile_rank_in(un, kf->space, &order, &n, &err), RT_ERR_INVALID);
  CHECK(order == NULL && n == 0);
  CHECK_CONTAINS(err.source, "unrelated.json");
  CHECK_CONTAINS(err.text, "shares no parameter");
  CHECK_CONTAINS(err.text, "threads");
  ktfile_free(kf);
  ktfile_free(pk);
  ktfile_free(un);
}

static void check_bad(const char *name, rt_status code, const char *text) {
  ktfile *kf = (ktfile *)1;
  rt_error err = {0};
  CHECK_INT(ktfile_load(fixture(name), &kf, &err), code);
  CHECK(kf == NULL);
  CHECK_CONTAINS(err.source, name);
  CHECK_CONTAINS(err.text, text);
}

TEST_CASE(files) {
  check_rank_in();
  check_small("small.json", 1.0);
  check_small("small.json.gz", 2.0);
  check_ktt();
  check_counters();
  check_mixed();
  check_bad("broken.json", RT_ERR_PARSE, "invalid JSON");
  check_bad("broken.json.gz", RT_ERR_IO, "decompress");
  check_bad("foreign.json", RT_ERR_PARSE, "neither a Kernel Tuner cache");
  check_bad("undeclared.json", RT_ERR_PARSE, "block_size_x=128");
  check_bad("no-such-file.json", RT_ERR_IO, "cannot open");
}

TEST_LIST(TEST_ENTRY(files))
