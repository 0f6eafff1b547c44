/* test_device.c — the model device (deterministic, sane: a bigger problem takes longer, a
 * memory-heavy configuration is predicted memory-bound, a block that fits nowhere fails), the
 * replay device on a fixture and on the shared brute-forced spaces, and --device errors. */
/* stages: device */
#include <dirent.h>

#include "test.h"
#include "tuner/device/device.h"
#include "template/ktfile.h"

/* A candidate with its own plan: copies of a tcand are independent (tc() points the device
 * candidate at the copy's plan before each use). */
typedef struct tcand {
  device_candidate dc;
  candidate_plan pl;
} tcand;

static const device_candidate *tc(tcand *t) {
  t->dc.plan = &t->pl;
  return &t->dc;
}

/* A 128x128-tile bf16 GEMM candidate on M=N=K=n. */
static tcand gemm_candidate(long long n, int tile) {
  tcand t;
  memset(&t, 0, sizeof t);
  device_candidate *c = &t.dc;
  c->template_name = "gemm_test";
  snprintf(t.pl.config, sizeof t.pl.config, "BLOCK_M=128,BLOCK_N=128");
  t.pl.flops = t.pl.executed_flops = 2.0 * n * n * n;
  t.pl.dram_bytes = 2.0 * ((double)n * n * ((n + tile - 1) / tile) * 2) + 4.0 * n * n;
  c->facts.registers = 128;
  c->facts.threads_per_block = 256;
  c->facts.smem_dynamic = 3 * 2 * tile * 32 * 2;
  c->facts.blocks_per_sm = 1;
  c->facts.occupancy = 0.125;
  c->facts.grid_blocks = ((n + tile - 1) / tile) * ((n + tile - 1) / tile);
  c->path = PATH_TC_F16;
  c->wgmma = 0;
  c->library_index = -1;
  return t;
}

TEST_CASE(model) {
  device *d = NULL;
  rt_error err = {0};
  CHECK_INT(device_open("model:h200", NULL, &d, &err), RT_OK);
  CHECK_STR(device_label(d), "model:h200");
  CHECK_INT(device_timing(d), TIMING_PREDICTED);
  CHECK_STR(device_arch(d), "sm_90");
  CHECK_INT(device_sm_count(d), 132);
  roofline_ceilings ceil;
  CHECK_INT(device_ceilings(d, &ceil), 1);
  CHECK_INT(ceil.measured, 0);

  tcand c = gemm_candidate(4096, 128);
  candidate_result r1, r2;
  CHECK_INT(device_evaluate(d, tc(&c), &r1, &err), RT_OK);
  CHECK_INT(r1.status, RT_OK);
  CHECK_INT(r1.timing, TIMING_PREDICTED);
  CHECK_STR(r1.device_name, "model:h200");
  CHECK_STR(r1.config, "BLOCK_M=128,BLOCK_N=128");
  CHECK(r1.time_ms > 0);
  CHECK_INT(device_evaluate(d, tc(&c), &r2, &err), RT_OK);
  CHECK(r1.time_ms == r2.time_ms); /* deterministic */
  /* 4096^3 bf16 at 128x128 tiles with mma.sync: between the spec's best and 10x slower */
  double tflops = c.pl.flops / (r1.time_ms * 1e-3) / 1e12;
  CHECK(tflops < 989.5 && tflops > 98.9);

  /* a bigger problem takes longer; so does the same problem in more bytes */
  tcand big = gemm_candidate(8192, 128);
  candidate_result rb;
  CHECK_INT(device_evaluate(d, tc(&big), &rb, &err), RT_OK);
  CHECK(rb.time_ms > 4 * r1.time_ms);

  /* tiny 16x16 tiles read the inputs 256x over: predicted memory-bound, and slower */
  tcand small = gemm_candidate(4096, 16);
  small.dc.facts.blocks_per_sm = 8;
  small.dc.facts.occupancy = 1.0;
  small.dc.facts.threads_per_block = 256;
  candidate_result rs;
  CHECK_INT(device_evaluate(d, tc(&small), &rs, &err), RT_OK);
  CHECK(rs.time_ms > r1.time_ms);
  diagnosis dg;
  diag_input in;
  memset(&in, 0, sizeof in);
  in.flops = small.pl.flops;
  in.dram_bytes = small.pl.dram_bytes;
  in.time_s = rs.time_ms * 1e-3;
  in.facts = small.dc.facts;
  in.path = small.dc.path;
  CHECK_INT(diagnose(&in, &ceil, &dg, &err), RT_OK);
  CHECK_STR(dg.limit, "memory");

  /* wave quantization: one block more than a full wave costs nearly a wave */
  tcand w1 = gemm_candidate(4096, 128), w2 = w1;
  w1.dc.facts.grid_blocks = 132;
  w2.dc.facts.grid_blocks = 133;
  w2.pl.flops = w1.pl.flops * 133.0 / 132.0;
  w2.pl.dram_bytes = w1.pl.dram_bytes * 133.0 / 132.0;
  candidate_result rw1, rw2;
  device_evaluate(d, tc(&w1), &rw1, &err);
  device_evaluate(d, tc(&w2), &rw2, &err);
  CHECK(rw2.time_ms > 1.8 * rw1.time_ms);
  /* a persistent grid of 132 blocks doing 133 blocks' worth of work takes two rounds too */
  tcand w3 = w2;
  w3.dc.facts.grid_blocks = 132;
  w3.dc.facts.work_blocks = 133;
  candidate_result rw3;
  device_evaluate(d, tc(&w3), &rw3, &err);
  CHECK_NEAR(rw3.time_ms, rw2.time_ms, 1e-9);

  /* padding: the same launch doing 4x the math (padded tile parts) turns compute-bound and
   * slower; executed flops below the problem's count as the problem's */
  tcand padded = gemm_candidate(4096, 128);
  padded.pl.executed_flops = 4 * padded.pl.flops;
  candidate_result rp;
  CHECK_INT(device_evaluate(d, tc(&padded), &rp, &err), RT_OK);
  CHECK(rp.time_ms > 2 * r1.time_ms);
  CHECK_NEAR(rp.flops, c.pl.flops, 0); /* TFLOP/s stay the problem's */
  padded.pl.executed_flops = 0.5 * padded.pl.flops;
  CHECK_INT(device_evaluate(d, tc(&padded), &rp, &err), RT_OK);
  CHECK_NEAR(rp.time_ms, r1.time_ms, 1e-12);

  /* a streaming block (no shared memory) with 4 KB in flight and one block per SM cannot cover
   * the DRAM latency; stating 64 KB in flight (more unrolled loads) does, and it is faster */
  tcand stream = gemm_candidate(4096, 128);
  stream.pl.flops = 2.0 * 4096 * 4096; /* a decode-sized problem: memory-bound */
  stream.dc.facts.smem_dynamic = 0;
  stream.pl.inflight_bytes = 4096;
  candidate_result rlo, rhi;
  CHECK_INT(device_evaluate(d, tc(&stream), &rlo, &err), RT_OK);
  stream.pl.inflight_bytes = 65536;
  CHECK_INT(device_evaluate(d, tc(&stream), &rhi, &err), RT_OK);
  CHECK(rhi.time_ms < 0.5 * rlo.time_ms);

  /* split partials (cost.scratch_bytes) reach DRAM whole: 1 GB of them costs about 1 GB at the
   * copy bandwidth, where the same bytes as re-reads of shared inputs would mostly come from L2 */
  tcand plain = gemm_candidate(4096, 128);
  plain.dc.min_bytes = plain.pl.dram_bytes; /* what it moves now is compulsory */
  tcand scratch = plain, reread = plain;
  scratch.pl.scratch_bytes = 1e9;
  reread.pl.dram_bytes += 1e9;
  candidate_result rpl, rsc, rre;
  CHECK_INT(device_evaluate(d, tc(&plain), &rpl, &err), RT_OK);
  CHECK_INT(device_evaluate(d, tc(&scratch), &rsc, &err), RT_OK);
  CHECK_INT(device_evaluate(d, tc(&reread), &rre, &err), RT_OK);
  CHECK(rsc.time_ms - rpl.time_ms > 0.8 * 1e9 / 4.3e12 * 1e3);
  CHECK(rsc.time_ms > rre.time_ms);

  /* wgmma's ceiling is higher than mma.sync's on sm_90 */
  tcand wg = gemm_candidate(4096, 128);
  wg.dc.wgmma = 1;
  candidate_result rg;
  device_evaluate(d, tc(&wg), &rg, &err);
  CHECK(rg.time_ms < r1.time_ms);

  /* a block that fits on no SM is a failed candidate, not a device error */
  tcand nofit = gemm_candidate(4096, 128);
  nofit.dc.facts.blocks_per_sm = 0;
  candidate_result rn;
  CHECK_INT(device_evaluate(d, tc(&nofit), &rn, &err), RT_OK);
  CHECK_INT(rn.status, RT_ERR_LAUNCH);
  CHECK_CONTAINS(rn.detail, "no block fits");
  device_close(d);

  /* every spec-table GPU has a model device, and a smaller GPU is slower */
  const char *gpus[] = {"model:h100", "model:a100", "model:l4"};
  double prev = r1.time_ms;
  for (int i = 0; i < 3; i++) {
    CHECK_INT(device_open(gpus[i], NULL, &d, &err), RT_OK);
    candidate_result r;
    CHECK_INT(device_evaluate(d, tc(&c), &r, &err), RT_OK);
    CHECK(r.time_ms >= prev);
    prev = r.time_ms;
    device_close(d);
  }
}

TEST_CASE(open_errors) {
  device *d = NULL;
  rt_error err = {0};
  CHECK_INT(device_open("model:v100", NULL, &d, &err), RT_ERR_INVALID);
  CHECK(d == NULL);
  CHECK_CONTAINS(err.text, "unknown GPU 'v100'");
  CHECK_CONTAINS(err.text, "h200");
  CHECK_STR(err.source, "--device");
  rt_error_clear(&err);
  CHECK_INT(device_open("tpu", NULL, &d, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "replay:FILE");
  rt_error_clear(&err);
  CHECK_INT(device_open("cuda:x", NULL, &d, &err), RT_ERR_INVALID);
  rt_error_clear(&err);
  CHECK(device_open("replay:/nonexistent/file.json", NULL, &d, &err) != RT_OK);
  CHECK_CONTAINS(err.text, "");
  CHECK(d == NULL);
  /* without a driver the cuda device says so */
  rt_error_clear(&err);
  rt_status st = device_open("cuda", NULL, &d, &err);
  if (st == RT_OK)
    device_close(d);
  else
    CHECK(st == RT_ERR_NO_DRIVER || st == RT_ERR_NO_GPU || st == RT_ERR_CUDA);
}

/* The kinds' table: lookup by prefix, checks without opening, the generated help. */
TEST_CASE(kinds) {
  const device_kind *k = device_kind_lookup("cuda:3");
  CHECK(k != NULL);
  if (k) CHECK(k->caps & DEVICE_CAP_MEASURES);
  CHECK(device_kind_lookup("cuda") == k);
  CHECK(device_kind_lookup("cudax") == NULL); /* a prefix is the whole word, or ends in ':' */
  CHECK(device_kind_lookup("tpu") == NULL);
  k = device_kind_lookup("replay:any.json");
  CHECK(k && k->caps & DEVICE_CAP_RECORDED && k->timing == TIMING_REPLAYED);
  k = device_kind_lookup("model:nosuch"); /* the kind, whatever follows */
  CHECK(k && k->timing == TIMING_PREDICTED);
  rt_error err = {0};
  CHECK_INT(device_check("model:h200", &err), RT_OK);
  CHECK_INT(device_check("cuda", &err), RT_OK);
  CHECK_INT(device_check("cuda:12", &err), RT_OK);
  CHECK_INT(device_check("replay:x.json", &err), RT_OK); /* whether it reads is open's to say */
  CHECK_INT(device_check("model:nosuch", &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "unknown GPU 'nosuch'");
  CHECK_STR(err.source, ""); /* the caller says where the text came from */
  CHECK_INT(device_check("cuda:-1", &err), RT_ERR_INVALID);
  CHECK_INT(device_check("cuda:1x", &err), RT_ERR_INVALID);
  CHECK_INT(device_check("cuda: 1", &err), RT_ERR_INVALID);
  CHECK_INT(device_check("replay:", &err), RT_ERR_INVALID);
  CHECK_INT(device_check("tpu", &err), RT_ERR_INVALID);
  /* the help text is every kind of the table in its order, "SYNTAX (CHOICES)" joined by " | ",
   * the kinds with a capability left out leaving out; the model's choices are the spec table's */
  for (int without = 0; without <= DEVICE_CAP_RECORDED; without += DEVICE_CAP_RECORDED) {
    char help[512], want[512] = "";
    for (size_t i = 0; (k = device_kind_at(i)) != NULL; i++) {
      if (k->caps & without) continue;
      size_t n = strlen(want);
      snprintf(want + n, sizeof want - n, "%s%s%s%s%s", n ? " | " : "", k->syntax,
               k->choices ? " (" : "", k->choices ? k->choices() : "", k->choices ? ")" : "");
    }
    CHECK_STR(device_kinds_help(without, help, sizeof help), want);
  }
  CHECK(device_kind_lookup("model:h200")->choices == gpu_spec_keys);
  CHECK_CONTAINS(gpu_spec_keys(), "h200");
  char help[512];
  CHECK(strstr(device_kinds_help(0, help, sizeof help), device_kind_lookup("replay:x")->syntax));
  CHECK(!strstr(device_kinds_help(DEVICE_CAP_RECORDED, help, sizeof help),
                device_kind_lookup("replay:x")->syntax));
  CHECK(device_kind_gpu("model:a100") == gpu_spec_find("a100"));
  /* the sim: sim alone is sim:h200; its outputs are checked from the source, its times predicted */
  k = device_kind_lookup("sim");
  CHECK(k && k->caps == DEVICE_CAP_SOURCE && k->timing == TIMING_PREDICTED);
  CHECK(device_kind_lookup("sim:h100") == k);
  CHECK(device_kind_lookup("simx") == NULL);
  CHECK_INT(device_check("sim", &err), RT_OK);
  CHECK_INT(device_check("sim:a100", &err), RT_OK);
  CHECK_INT(device_check("sim:nosuch", &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "unknown GPU 'nosuch' for the sim device");
  CHECK(device_kind_gpu("sim") == gpu_spec_find("h200"));
  CHECK(device_kind_gpu("sim:l4") == gpu_spec_find("l4"));
  CHECK(device_kind_gpu("model:nosuch") == NULL);
  CHECK(device_kind_gpu("cuda") == NULL);
}

TEST_CASE(replay_fixture) {
  const char *src = getenv("ROOFTUNE_SOURCE_DIR");
  if (!src) return;
  char spec[1024];
  snprintf(spec, sizeof spec, "replay:%s/tests/data/replay/small.json", src);
  device *d = NULL;
  rt_error err = {0};
  CHECK_INT(device_open(spec, NULL, &d, &err), RT_OK);
  if (!d) {
    fprintf(stderr, "  %s\n", err.text);
    return;
  }
  CHECK_INT(device_timing(d), TIMING_REPLAYED);
  CHECK(device_arch(d) == NULL);
  const ktfile *kf = device_replay_file(d);
  CHECK(kf != NULL);
  CHECK_INT(space_size(kf->space), 3);
  candidate_plan pl;
  memset(&pl, 0, sizeof pl);
  device_candidate c;
  memset(&c, 0, sizeof c);
  c.plan = &pl;
  c.library_index = -1;
  candidate_result r;
  snprintf(pl.config, sizeof pl.config, "block_size_x=64,tile=2");
  CHECK_INT(device_evaluate(d, &c, &r, &err), RT_OK);
  CHECK_INT(r.status, RT_OK);
  CHECK_NEAR(r.time_ms, 0.4, 1e-12);
  CHECK_INT(r.timing, TIMING_REPLAYED);
  CHECK_CONTAINS(r.device_name, "replay:");
  snprintf(pl.config, sizeof pl.config, "tile=1,block_size_x=128"); /* any order */
  CHECK_INT(device_evaluate(d, &c, &r, &err), RT_OK);
  CHECK_INT(r.status, RT_ERR_COMPILE);
  CHECK_CONTAINS(r.detail, "CompilationFailedConfig");
  snprintf(pl.config, sizeof pl.config, "block_size_x=128,tile=2"); /* not in the file */
  CHECK_INT(device_evaluate(d, &c, &r, &err), RT_ERR_NOT_FOUND);
  CHECK_CONTAINS(err.source, "small.json");
  CHECK_CONTAINS(err.text, "block_size_x=128,tile=2");
  /* the A100 it was measured on is in the spec table: its roofs serve diagnosis */
  roofline_ceilings ceil;
  CHECK_INT(device_ceilings(d, &ceil), 1);
  CHECK_INT(ceil.sm_count, 108);
  device_close(d);
}

/* Every shared brute-forced space replays: the file's optimum comes back as its time. */
TEST_CASE(replay_shared) {
  const char *shared = getenv("ROOFTUNE_SHARED_DIR");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/data/spaces", shared ? shared : "");
  DIR *dp = shared ? opendir(dir) : NULL;
  if (!dp) {
    printf("note: %s not present, shared spaces not replayed\n", dir);
    return;
  }
  struct dirent *e;
  int files = 0;
  while ((e = readdir(dp)) != NULL) {
    if (!strstr(e->d_name, ".json")) continue;
    char spec[1400];
    snprintf(spec, sizeof spec, "replay:%s/%s", dir, e->d_name);
    device *d = NULL;
    rt_error err = {0};
    CHECK_INT(device_open(spec, NULL, &d, &err), RT_OK);
    if (!d) {
      fprintf(stderr, "  %s: %s\n", e->d_name, err.text);
      continue;
    }
    const ktfile *kf = device_replay_file(d);
    candidate_plan pl;
    memset(&pl, 0, sizeof pl);
    space_format_config(kf->space, kf->optimum_idx, pl.config, sizeof pl.config);
    device_candidate c;
    memset(&c, 0, sizeof c);
    c.plan = &pl;
    c.library_index = -1;
    candidate_result r;
    CHECK_INT(device_evaluate(d, &c, &r, &err), RT_OK);
    CHECK_INT(r.status, RT_OK);
    CHECK_NEAR(r.time_ms, kf->optimum_ms, 1e-12);
    device_close(d);
    files++;
  }
  closedir(dp);
  CHECK(files > 0);
  printf("replayed the optimum of %d shared spaces\n", files);
}

/* The cuda device's repetition rule (device_timing_next), decided on the host: steady once the
 * spread is small after min_reps, capped by time or max_reps, and the early stop of a candidate
 * whose first DEVICE_SLOW_RUNS runs are all over the threshold (3x the best). */
TEST_CASE(timing_rule) {
  double sp = -1;
  const double steady[5] = {1.00, 1.001, 1.002, 1.003, 1.004};
  for (int n = 1; n < 5; n++)
    CHECK_INT(device_timing_next(steady, n, 5, 200, 0.02, 0.01, 0.5, 0, &sp), DEVICE_TIMING_MORE);
  CHECK_INT(device_timing_next(steady, 5, 5, 200, 0.02, 0.01, 0.5, 0, &sp), DEVICE_TIMING_STEADY);
  CHECK(sp >= 0 && sp < 0.02);
  const double noisy[5] = {1.0, 1.2, 1.4, 1.6, 1.8};
  CHECK_INT(device_timing_next(noisy, 5, 5, 200, 0.02, 0.01, 0.5, 0, &sp), DEVICE_TIMING_MORE);
  CHECK_INT(device_timing_next(noisy, 5, 5, 200, 0.02, 0.6, 0.5, 0, &sp),
            DEVICE_TIMING_STEADY); /* capped */
  CHECK_INT(device_timing_next(noisy, 5, 5, 5, 0.02, 0.01, 0.5, 0, &sp),
            DEVICE_TIMING_STEADY); /* max_reps */
  /* best so far 1 ms: threshold 3 ms */
  const double slow[2] = {3.1, 3.3}, mixed[2] = {2.9, 3.4};
  CHECK_INT(device_timing_next(slow, 1, 5, 200, 0.02, 0.01, 0.5, 3.0, &sp), DEVICE_TIMING_MORE);
  CHECK_INT(device_timing_next(slow, 2, 5, 200, 0.02, 0.01, 0.5, 3.0, &sp), DEVICE_TIMING_SLOW);
  CHECK_INT(device_timing_next(mixed, 2, 5, 200, 0.02, 0.01, 0.5, 3.0, &sp), DEVICE_TIMING_MORE);
  CHECK_INT(device_timing_next(slow, 2, 5, 200, 0.02, 0.01, 0.5, 0, &sp),
            DEVICE_TIMING_MORE); /* no best yet */
}

TEST_LIST(TEST_ENTRY(model), TEST_ENTRY(open_errors), TEST_ENTRY(kinds), TEST_ENTRY(replay_fixture),
          TEST_ENTRY(replay_shared), TEST_ENTRY(timing_rule))
