/* test_export.c — the export writer and its reader agree: a database's results exported as
 * JSON come back through ktfile (the reader `--prior` and `replay:` use) with the same
 * configurations, times and failures; every RESULT_COLUMNS field is in the JSON row under its
 * export name with the stored value; CSV has one column per field; a C header export of a
 * database whose path holds a comment terminator still compiles as one comment; an export to a
 * file that cannot be completed leaves no file behind; what a GPU run read beside a time (its
 * counters, static facts, FLOPs, precision) replays with it, diagnosed with a measured basis. */
/* stages: tune */
#include <sys/stat.h>
#include <unistd.h>

#include "db/export.h"
#include "test.h"
#include "template/ktfile.h"
#include "tuner/tune.h"
#include "unit/db_fixture.h"

/* The fixture: fill_db()'s database (the cases only read it) and a folder for their outputs. */
static char dbp[512], dir[600];

static void fill_db(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  db_run_spec spec = fx_spec(fx_gemm(512, 512, 512, "bf16"), "model:h200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_mma", "gemm", "src1", "man1", &err), RT_OK);
  candidate_result a = fx_result("gemm_mma", 64, 64, 2.5), b = fx_result("gemm_mma", 128, 64, 1.25),
                   bad = fx_result("gemm_mma", 256, 64, NAN);
  a.facts.registers = 96;
  a.facts.grid_blocks = 1LL << 33;
  snprintf(a.diag.limit, sizeof a.diag.limit, "memory");
  snprintf(a.diag.lever, sizeof a.diag.lever, "BLOCK_N+");
  a.diag.tail = 0.25;
  bad.status = RT_ERR_WRONG_RESULT;
  snprintf(bad.detail, sizeof bad.detail, "off by \"one\", then more");
  long long id;
  CHECK_INT(db_run_store(r, &a, &id, &err), RT_OK);
  CHECK_INT(db_run_store(r, &b, &id, &err), RT_OK);
  CHECK_INT(db_run_store(r, &bad, &id, &err), RT_OK);
  CHECK_INT(db_run_finish(r, "done", &err), RT_OK);
  db_run_free(r);
  db_close(d);
}

TEST_CASE(json_round_trip) {
  char out[1200];
  snprintf(out, sizeof out, "%s/x.json", dir);
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(dbp, DB_READONLY, &d, &err), RT_OK);
  CHECK_INT(db_export_write(d, DB_EXPORT_JSON, NULL, out, &err), RT_OK);
  db_close(d);
  /* the reader: the same rows back, as replay and --prior see them */
  ktfile_select sel = {"gemm_mma", "512x512x512", "bf16"};
  ktfile *kf = NULL;
  CHECK_INT(ktfile_load_select(out, &sel, &kf, &err), RT_OK);
  if (!kf) {
    fprintf(stderr, "  %s\n", err.text);
    return;
  }
  CHECK_INT(kf->configs, 3);
  CHECK_INT(kf->valid, 2);
  CHECK_NEAR(kf->optimum_ms, 1.25, 1e-12);
  size_t idx;
  CHECK_INT(ktfile_find(kf, "BLOCK_M=64,BLOCK_N=64", &idx, &err), RT_OK);
  CHECK_NEAR(kf->time_ms[idx], 2.5, 1e-12);
  CHECK_INT(ktfile_find(kf, "BLOCK_M=256,BLOCK_N=64", &idx, &err), RT_OK);
  CHECK(kf->failure[idx] != NULL);
  CHECK_CONTAINS(kf->failure[idx], "ERR_WRONG_RESULT");
  CHECK_CONTAINS(kf->failure[idx], "off by \"one\", then more");
  ktfile_free(kf);
  /* every stored field is in the row, under its export name and group, with its value */
  json_error_t je;
  json_t *root = json_load_file(out, 0, &je);
  CHECK(root != NULL);
  json_t *row = json_array_get(json_object_get(root, "results"), 0);
  CHECK_STR(json_string_value(json_object_get(row, "config_text")), "BLOCK_M=64,BLOCK_N=64");
  CHECK_INT(json_integer_value(json_object_get(json_object_get(row, "config"), "BLOCK_M")), 64);
  CHECK_NEAR(json_number_value(json_object_get(row, "time_ms")), 2.5, 1e-12);
  json_t *facts = json_object_get(row, "static_facts"), *diag = json_object_get(row, "diagnosis");
  CHECK_INT(json_integer_value(json_object_get(facts, "registers")), 96);
  CHECK(json_integer_value(json_object_get(facts, "grid_blocks")) == (1LL << 33));
  CHECK_STR(json_string_value(json_object_get(diag, "limit")), "memory");
  CHECK_STR(json_string_value(json_object_get(diag, "lever")), "BLOCK_N+");
  CHECK_NEAR(json_number_value(json_object_get(diag, "tail")), 0.25, 1e-12);
  int fields = 0, present = 0;
#define HAS(col, jname, kind, member, group)                                                   \
  {                                                                                            \
    json_t *in = !strcmp(group, "static_facts") ? facts                                        \
                 : !strcmp(group, "diagnosis")  ? diag                                         \
                 : !strcmp(group, "counters")   ? json_object_get(row, "counters")             \
                                                : row;                                           \
    fields++;                                                                                  \
    present += json_object_get(in, strcmp(#jname, "config") ? #jname : "config_text") != NULL; \
  }
  RESULT_COLUMNS(HAS, HAS)
#undef HAS
  CHECK_INT(present, fields);
  json_t *bad = json_array_get(json_object_get(root, "results"), 2);
  CHECK(json_is_null(json_object_get(bad, "time_ms"))); /* NAN is null, not a number */
  json_decref(root);
}

/* A GPU run's results, the best with the counters the GPU read: replayed from the export, each
 * configuration comes with its counters and facts, and the diagnosis is measured. */
TEST_CASE(counters_replay) {
  char gpu_db[700], out[1200], dev[1300];
  snprintf(gpu_db, sizeof gpu_db, "%s/gpu.db", dir);
  snprintf(out, sizeof out, "%s/gpu.json", dir);
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(gpu_db, DB_CREATE, &d, &err), RT_OK);
  if (!d) return;
  db_run_spec spec = fx_spec(fx_gemm(4096, 4096, 4096, "bf16"), "NVIDIA H200");
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  CHECK_INT(db_run_template(r, "gemm_wgmma", "gemm", "s", "m", &err), RT_OK);
  candidate_result a = fx_result("gemm_wgmma", 128, 256, 0.19),
                   b = fx_result("gemm_wgmma", 64, 64, 0.5);
  snprintf(a.precision, sizeof a.precision, "bf16");
  snprintf(b.precision, sizeof b.precision, "bf16");
  a.counters.measured = 1;
  a.counters.dram_read_bytes = 1.25e8;
  a.counters.dram_write_bytes = 3.4e7;
  a.counters.l2_bytes = 2.1e9;
  a.counters.occupancy = 0.12;
  a.counters.tensor_pipe = 0.74;
  snprintf(a.counters.stalls, sizeof a.counters.stalls, "gmma:0.48,barrier:0.20");
  long long id;
  CHECK_INT(db_run_store(r, &a, &id, &err), RT_OK);
  CHECK_INT(db_run_store(r, &b, &id, &err), RT_OK);
  CHECK_INT(db_run_finish(r, "done", &err), RT_OK);
  db_run_free(r);
  CHECK_INT(db_export_write(d, DB_EXPORT_JSON, NULL, out, &err), RT_OK);
  db_close(d);
  ktfile_select sel = {"gemm_wgmma", NULL, NULL};
  ktfile *kf = NULL;
  CHECK_INT(ktfile_load_select(out, &sel, &kf, &err), RT_OK);
  if (!kf) return;
  size_t ia, ib;
  CHECK_INT(ktfile_find(kf, "BLOCK_M=128,BLOCK_N=256", &ia, &err), RT_OK);
  CHECK_INT(ktfile_find(kf, "BLOCK_M=64,BLOCK_N=64", &ib, &err), RT_OK);
  CHECK(kf->counters != NULL && kf->facts != NULL);
  if (kf->counters && kf->facts) {
    CHECK_INT(kf->counters[ia].measured, 1);
    CHECK_NEAR(kf->counters[ia].dram_read_bytes, 1.25e8, 0);
    CHECK_NEAR(kf->counters[ia].tensor_pipe, 0.74, 1e-12);
    CHECK_STR(kf->counters[ia].stalls, "gmma:0.48,barrier:0.20");
    CHECK_INT(kf->counters[ib].measured, 0); /* not profiled */
    CHECK_INT(kf->facts[ib].registers, 128);
    CHECK_INT(kf->facts[ib].threads_per_block, 256);
  }
  CHECK_NEAR(kf->flops, 2.0 * 4096 * 4096 * 4096, 1);
  CHECK_STR(kf->precision, "bf16");
  ktfile_free(kf);
  /* replayed through the loop: the profiled one is diagnosed on its measured bytes, against the
   * recorded GPU's bf16 tensor roof */
  snprintf(dev, sizeof dev, "replay:%s", out);
  tune_options o;
  memset(&o, 0, sizeof o);
  o.target = "gemm_wgmma";
  o.device = dev;
  o.strategy = "brute_force";
  o.budget = 2;
  tune_report rep;
  CHECK_INT(tune_run(&o, &rep, &err), RT_OK);
  if (rep.nresults == 2) {
    const candidate_result *best = &rep.best;
    CHECK_STR(best->config, "BLOCK_M=128,BLOCK_N=256");
    CHECK_INT(best->counters.measured, 1);
    CHECK_CONTAINS(best->diag.basis, "dram");
    CHECK_NEAR(best->dram_bytes, 1.25e8 + 3.4e7, 1);
    /* 1.37e11 FLOPs in 0.19 ms: 723 TFLOP/s, 73 % of the 989.5 TFLOP/s bf16 tensor roof */
    CHECK_NEAR(best->diag.flops_frac, 2.0 * 4096 * 4096 * 4096 / 0.19e-3 / 989.5e12, 1e-6);
    CHECK_STR(best->diag.limit, "compute");
  }
  tune_report_free(&rep);
}

TEST_CASE(csv_and_header) {
  rt_error err = {0};
  db *d = NULL;
  char csv[1200], hdr[1200], cfile[1200], cmd[4000];
  snprintf(csv, sizeof csv, "%s/x.csv", dir);
  CHECK_INT(db_open(dbp, DB_READONLY, &d, &err), RT_OK);
  CHECK_INT(db_export_write(d, DB_EXPORT_CSV, NULL, csv, &err), RT_OK);
  FILE *f = fopen(csv, "r");
  char line[4096];
  CHECK(f && fgets(line, sizeof line, f));
  int cols = 1;
  for (char *p = line; *p; p++) cols += *p == ',';
  int fields = 15; /* the provenance columns */
#define COUNT(col, jname, kind, member, group) fields++;
  RESULT_COLUMNS(COUNT, COUNT)
#undef COUNT
  CHECK_INT(cols, fields);
  CHECK_CONTAINS(line, "diag_sentence");
  int rows = 0;
  while (f && fgets(line, sizeof line, f)) rows++;
  if (f) fclose(f);
  CHECK_INT(rows, 3);
  db_close(d);

  /* a database path with a comment terminator and a newline in it */
  char odd[700];
  snprintf(odd, sizeof odd, "%s/a*/b\nc.db", dir);
  char sub[1200];
  snprintf(sub, sizeof sub, "%s/a*", dir);
  mkdir(sub, 0755);
  fill_db(odd);
  CHECK_INT(db_open(odd, DB_READONLY, &d, &err), RT_OK);
  snprintf(hdr, sizeof hdr, "%s/tuned.h", dir);
  CHECK_INT(db_export_write(d, DB_EXPORT_HEADER, NULL, hdr, &err), RT_OK);
  db_close(d);
  snprintf(cfile, sizeof cfile, "%s/use.c", dir);
  f = fopen(cfile, "w");
  fprintf(f,
          "#include \"tuned.h\"\nint main(void) { return ROOFTUNE_TUNED_COUNT == 0 && sizeof "
          "rooftune_tuned_configs ? 0 : 1; }\n");
  fclose(f);
  snprintf(cmd, sizeof cmd, "cd '%s' && cc -Wall -Werror -o use use.c 2>&1 && ./use", dir);
  int rc = system(cmd);
  CHECK_INT(rc, 0);
  if (rc) {
    snprintf(cmd, sizeof cmd, "cat '%s' >&2", hdr);
    if (system(cmd)) {}
  }
  fx_remove(odd);

  /* an export that cannot be written completely leaves nothing under the name asked for */
  CHECK_INT(db_open(dbp, DB_READONLY, &d, &err), RT_OK);
  if (access("/dev/full", W_OK) == 0) {
    rt_error_clear(&err);
    FILE *saved = stdout;
    stdout = fopen("/dev/full", "w");
    rt_status s = db_export_write(d, DB_EXPORT_JSON, NULL, NULL, &err);
    fclose(stdout);
    stdout = saved;
    CHECK_INT(s, RT_ERR_IO);
    CHECK_CONTAINS(err.text, "cannot write");
  }
  char nodir[1200];
  snprintf(nodir, sizeof nodir, "%s/missing/x.json", dir);
  rt_error_clear(&err);
  CHECK_INT(db_export_write(d, DB_EXPORT_JSON, NULL, nodir, &err), RT_ERR_IO);
  CHECK_STR(err.source, nodir);
  CHECK(access(nodir, F_OK) != 0);
  db_close(d);
}

static void setup(void) {
  fx_tmpname(dbp, sizeof dbp, "export");
  snprintf(dir, sizeof dir, "%s.d", dbp);
  mkdir(dir, 0755);
  fill_db(dbp);
}

static void teardown(void) {
  fx_remove(dbp);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(json_round_trip), TEST_ENTRY(csv_and_header),
                  TEST_ENTRY(counters_replay))
