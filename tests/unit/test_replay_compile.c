/* test_replay_compile.c — a recording replayed with its kernel's source: the manifest maps the
 * recorded configurations onto its space, each compiles with NVRTC for the recorded GPU's sm_75,
 * and the ptxas report and launch become its static facts (shared memory BLOCK*UNROLL*4 bytes,
 * the block, the grid, occupancy), with the cost formulas' FLOPs and bytes and the manifest's
 * roles; a replay then gives the strategy those facts and the roofline bound.  On the project's
 * own kernel (tests/data/replay_manifest: saxpy_tile.cu, its manifest and a KTT-format recording
 * of ours).  And what cannot be mapped or compiled is said, naming the file. */
/* stages: tune */
#include <sys/stat.h>
#include <unistd.h>

#include "search/replay.h"
#include "test.h"
#include "model/features.h"
#include "tuner/replay_compile.h"

static char dir[1024], tmp[1024];

static void put(const char *name, const char *text) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* The fixture's manifest with one text replaced, written to tmp/NAME.json (with the source). */
static void variant(const char *name, const char *from, const char *to) {
  char path[1200], text[8192];
  snprintf(path, sizeof path, "%s/saxpy_tile.json", dir);
  const char *m = slurp(path);
  const char *at = strstr(m, from);
  CHECK(at != NULL);
  if (!at) return;
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - m), m, to, at + strlen(from));
  char file[128];
  snprintf(file, sizeof file, "%s.json", name);
  put(file, text);
}

/* The recording, its manifest and the GPU it was recorded on, for every case. */
static char man[1200];
static ktfile *kf;
static const gpu_spec *gpu;

static void setup(void) {
  snprintf(dir, sizeof dir, "%s/tests/data/replay_manifest", test_source_dir());
  snprintf(tmp, sizeof tmp, "/tmp/rt_replay_compile_XXXXXX");
  CHECK(mkdtemp(tmp) != NULL);
  char rec[1200];
  snprintf(rec, sizeof rec, "%s/saxpy_ktt.json", dir);
  snprintf(man, sizeof man, "%s/saxpy_tile.json", dir);
  rt_error err = {0};
  CHECK_INT(ktfile_load(rec, &kf, &err), RT_OK);
  if (!kf) exit(test_done());
  gpu = gpu_spec_match_name(kf->device_name);
  CHECK(gpu == gpu_spec_find("rtx2080ti"));
}

/* compiled for sm_75, then again from the cubin cache, then replayed with the facts */
TEST_CASE(compiled) {
  rt_error err = {0};
  replay_facts rf;
  CHECK_INT(replay_compile(kf, man, gpu, 1, &rf, &err), RT_OK);
  if (err.text[0]) fprintf(stderr, "%s\n", err.text);
  CHECK_STR(rf.arch, "sm_75");
  CHECK_INT(rf.n, 9);
  CHECK_INT(rf.mapped, 8); /* BLOCK=256,UNROLL=4 breaks the manifest's BLOCK*UNROLL <= 512 */
  CHECK_INT(rf.compiled, 8);
  CHECK_INT(rf.failed, 0);
  CHECK_INT(rf.compared, 8);
  CHECK(rf.agree <= rf.compared);
  CHECK_STR(rf.roles.names[ROLE_UNROLL][0], "UNROLL");
  for (size_t i = 0; rf.facts && i < kf->configs; i++) {
    long long b = space_value(kf->space, i, space_param_index(kf->space, "BLOCK"));
    long long u = space_value(kf->space, i, space_param_index(kf->space, "UNROLL"));
    const static_facts *f = &rf.facts[i];
    if (b * u > 512) {
      CHECK_INT(f->threads_per_block, 0);
      continue;
    }
    CHECK_INT(f->smem_static, (int)(b * u * 4));
    CHECK_INT(f->threads_per_block, (int)b);
    CHECK_INT(f->grid_blocks, 1048576 / (b * u));
    CHECK(f->registers > 0 && f->blocks_per_sm > 0 && f->occupancy > 0 && f->limiter[0]);
    CHECK_NEAR(rf.flops[i], 2.0 * 1048576, 0);
    CHECK_NEAR(rf.dram_bytes[i], 12.0 * 1048576, 0);
    if (f->registers != kf->facts[i].registers)
      printf("BLOCK=%lld UNROLL=%lld: %d registers compiled, %d recorded\n", b, u, f->registers,
             kf->facts[i].registers);
  }
  /* a second run takes every compile from the cubin cache */
  replay_facts again;
  CHECK_INT(replay_compile(kf, man, gpu, 1, &again, &err), RT_OK);
  CHECK_INT(again.compiled, 8);
  CHECK_INT(again.cache_hits, 8);
  replay_facts_free(&again);
  /* a replay given them: compile facts and the roofline bound as features, diagnoses with the
   * cost formula's FLOPs and the manifest's roles */
  replay_given given = {rf.facts, rf.flops, rf.executed_flops, rf.dram_bytes, &rf.roles, 0, 0};
  replay_stats rs;
  CHECK_INT(replay_run_given(kf, "steer", 3, 9, 0.05, NULL, 0, &given, &rs, &err), RT_OK);
  CHECK_INT(rs.features, FEATURE_COUNT);
  CHECK_INT(rs.diagnosed, 8);
  CHECK_NEAR(rs.reached, 1, 0);
  replay_stats_free(&rs);
  replay_facts_free(&rf);
}

/* what cannot be done is said, naming the manifest */
TEST_CASE(refused) {
  rt_error err = {0};
  replay_facts rf;
  char src[1200], path[1200];
  snprintf(src, sizeof src, "%s/saxpy_tile.cu", dir);
  put("saxpy_tile.cu", slurp(src));
  variant("no_sm75", "\"archs\": [\"sm_75\", \"sm_80\"]", "\"archs\": [\"sm_80\"]");
  snprintf(path, sizeof path, "%s/no_sm75.json", tmp);
  CHECK_INT(replay_compile(kf, path, gpu, 1, &rf, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "does not list sm_75");
  CHECK_CONTAINS(err.source, "no_sm75.json");
  variant("few_blocks", "\"BLOCK\": [64, 128, 256]", "\"BLOCK\": [64, 128]");
  snprintf(path, sizeof path, "%s/few_blocks.json", tmp);
  CHECK_INT(replay_compile(kf, path, gpu, 1, &rf, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "BLOCK=256");
  variant("other_param", "\"N\": [1048576]", "\"N\": [1048576], \"EXTRA\": [1]");
  snprintf(path, sizeof path, "%s/other_param.json", tmp);
  CHECK_INT(replay_compile(kf, path, gpu, 1, &rf, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "the manifest has 4 parameters and the recording 3");
  snprintf(path, sizeof path, "%s/saxpy_tile.cu", tmp);
  unlink(path);
  variant("no_source", "\"name\": \"saxpy_tile\"", "\"name\": \"saxpy_tile\"");
  snprintf(path, sizeof path, "%s/no_source.json", tmp);
  CHECK(replay_compile(kf, path, gpu, 1, &rf, &err) != RT_OK);
  CHECK_CONTAINS(err.text, "saxpy_tile.cu");
  CHECK_INT(replay_compile(kf, man, NULL, 1, &rf, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "spec table");
}

static void teardown(void) {
  static const char *const names[] = {"no_sm75.json", "few_blocks.json", "other_param.json",
                                      "no_source.json", "saxpy_tile.cu"};
  char path[1200];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", tmp, names[i]);
    unlink(path);
  }
  rmdir(tmp);
  ktfile_free(kf);
}

TEST_LIST_FIXTURE(setup, teardown, TEST_ENTRY(compiled), TEST_ENTRY(refused))
