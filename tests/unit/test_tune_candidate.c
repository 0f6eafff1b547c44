/* test_tune_candidate.c — the tuning loop's candidate object (tuner/tune_impl.h): a template's,
 * a library's and a recorded file's candidate made from their plans, and the one device
 * description of each (tune_cand_device) carrying what the device reads; the DRAM bytes the
 * model and the diagnosis share (roofline_candidate_dram); the family's vendor library name. */
/* stages: tune */
#include "kernels/family.h"
#include "test.h"
#include "template/catalog.h"
#include "tuner/tune_impl.h"

static tune_options opt;
static tune_report rep;

/* A run context on the model device for gemm 256x256x256 in dtype. */
static int ctx_open(tune_ctx *c, const char *dtype) {
  memset(c, 0, sizeof *c);
  memset(&opt, 0, sizeof opt);
  memset(&rep, 0, sizeof rep);
  opt.dtype = dtype;
  c->o = &opt;
  c->rep = &rep;
  rt_error err = {0};
  device_options dopt;
  memset(&dopt, 0, sizeof dopt);
  if (device_open("model:h200", &dopt, &c->dev, &err)) {
    fprintf(stderr, "  %s\n", err.text);
    return 0;
  }
  snprintf(rep.device, sizeof rep.device, "%s", device_label(c->dev));
  rep.timing = device_timing(c->dev);
  c->fam = family_find("gemm");
  CHECK(c->fam != NULL);
  if (!c->fam || c->fam->parse_shape(c->fam, "256x256x256", dtype, NULL, &c->prob, &err) ||
      problem_env(c->fam, &c->prob, arch_spec_find("sm_90"), device_spec(c->dev), &c->env, &err)) {
    fprintf(stderr, "  %s\n", err.text);
    return 0;
  }
  return 1;
}

TEST_CASE(library) {
  tune_ctx c;
  if (!ctx_open(&c, "f32")) return;
  tune_search s;
  memset(&s, 0, sizeof s);
  s.kind = TUNE_LIBRARY;
  s.name = c.fam->library;
  s.min_bytes = c.fam->min_bytes(c.fam, &c.prob);
  tune_cand k;
  device_candidate dc;

  /* cuBLASLt's FAST_TF32 algorithm of an f32 run computes in tf32 and is checked at tf32's
   * tolerance, looser than the problem's */
  tune_cand_library(&c, &s, 3, "cublaslt compute=32F_FAST_TF32 id=21", &k);
  tune_cand_device(&k, NULL, 7.5, &dc);
  CHECK_STR(dc.template_name, "cublaslt");
  CHECK_INT(dc.library_index, 3);
  CHECK_STR(dc.plan->config, "cublaslt compute=32F_FAST_TF32 id=21");
  CHECK(dc.cubin == NULL && dc.entry == NULL);
  CHECK_STR(dc.precision, "tf32");
  CHECK_INT(dc.path, PATH_TC_TF32);
  CHECK_INT(dc.wgmma, 1);
  CHECK(dc.tolerance > c.fam->tolerance(c.fam, &c.prob));
  CHECK_NEAR(dc.stop_above_ms, 7.5, 0);
  CHECK_NEAR(dc.plan->flops, c.fam->flops(c.fam, &c.prob), 0);
  CHECK_NEAR(dc.min_bytes, c.fam->min_bytes(c.fam, &c.prob), 0);

  /* the plain algorithm computes in fp32, at the problem's own tolerance */
  tune_cand_library(&c, &s, 0, "cublaslt compute=32F id=7", &k);
  tune_cand_device(&k, NULL, 0, &dc);
  CHECK_INT(dc.library_index, 0);
  CHECK_STR(dc.precision, "fp32");
  CHECK_INT(dc.path, PATH_SIMT_F32);
  CHECK_NEAR(dc.tolerance, 0, 0);
  CHECK_NEAR(dc.stop_above_ms, 0, 0);
  device_close(c.dev);
}

TEST_CASE(template) {
  tune_ctx c;
  if (!ctx_open(&c, "f32")) return;
  manifest *m = NULL;
  rt_error err = {0};
  CHECK_INT(catalog_find(NULL, "gemm_simt", &m, &err), RT_OK);
  if (!m) {
    fprintf(stderr, "  %s\n", err.text);
    device_close(c.dev);
    return;
  }
  tune_search s;
  memset(&s, 0, sizeof s);
  s.kind = TUNE_TEMPLATE;
  s.name = manifest_name(m);
  s.m = m;
  s.dtype = "f32";
  s.env = c.env;
  s.path = tune_template_path(m, "f32", &s.wgmma);
  s.precision = "fp32";
  s.min_bytes = c.fam->min_bytes(c.fam, &c.prob);
  s.calibration = 0.8;
  space *sp = NULL;
  CHECK_INT(manifest_build_space(m, &c.env, &sp, &err), RT_OK);
  s.sp = sp;
  CHECK_INT(manifest_read_source(m, &s.source, &err), RT_OK);
  manifest_compile_options(m, "sm_90", &s.copt);
  CHECK_INT(compile_options_digest(&s.copt, s.options_digest, &err), RT_OK);
  if (!sp || !s.source) goto done;

  tune_cand k;
  tune_cand_template(&c, &s, 0, &k);
  CHECK_INT(k.state, CAND_NEW);
  CHECK_INT(strlen(k.code_hash), 64);
  CHECK(k.source != NULL && strstr(k.source, s.source) != NULL);
  char text[768];
  space_format_config(sp, 0, text, sizeof text);
  CHECK_STR(k.plan.config, text);
  CHECK_INT(k.facts.threads_per_block, (int)(k.plan.block[0] * k.plan.block[1] * k.plan.block[2]));
  CHECK_INT(k.facts.grid_blocks, (long long)k.plan.grid[0] * k.plan.grid[1] * k.plan.grid[2]);

  /* a compiled candidate: its cubin and entry, ptxas's facts */
  compile_result cr;
  memset(&cr, 0, sizeof cr);
  static unsigned char cubin[16] = {1, 2, 3};
  cr.cubin = cubin;
  cr.cubin_size = sizeof cubin;
  snprintf(cr.lowered_name, sizeof cr.lowered_name, "gemm_simt_kernel");
  cr.report.registers = 40;
  tune_plan_facts(&k.plan, &cr.report, &k.facts);
  device_candidate dc;
  tune_cand_device(&k, &cr, 0, &dc);
  CHECK_STR(dc.template_name, "gemm_simt");
  CHECK_INT(dc.library_index, -1);
  CHECK(dc.plan == &k.plan);
  CHECK(dc.cubin == cubin && dc.cubin_size == sizeof cubin);
  CHECK_STR(dc.entry, "gemm_simt_kernel");
  CHECK_INT(dc.facts.registers, 40);
  CHECK_INT(dc.path, PATH_SIMT_F32);
  CHECK_STR(dc.precision, "fp32");
  CHECK_NEAR(dc.dram_calibration, 0.8, 0);
  CHECK_NEAR(dc.min_bytes, s.min_bytes, 0);
  CHECK_NEAR(dc.tolerance, 0, 0);

  /* a calibration changes what a prediction is, so the code hash with it */
  tune_cand k2;
  s.calibration = 0;
  tune_cand_template(&c, &s, 0, &k2);
  CHECK(strcmp(k.code_hash, k2.code_hash) != 0);
  free(k.source);
  free(k2.source);

  /* a recorded file's: the configuration and the problem's FLOPs, nothing compiled */
  tune_search rs;
  memset(&rs, 0, sizeof rs);
  rs.kind = TUNE_RECORDED;
  rs.name = "fixture_kernel";
  rs.sp = sp;
  rs.flops = 1e9;
  tune_cand_recorded(&rs, 1, &k);
  tune_cand_device(&k, NULL, 0, &dc);
  CHECK_STR(dc.template_name, "fixture_kernel");
  CHECK_INT(dc.library_index, -1);
  space_format_config(sp, 1, text, sizeof text);
  CHECK_STR(dc.plan->config, text);
  CHECK_NEAR(dc.plan->flops, 1e9, 0);
  CHECK(dc.precision == NULL && dc.cubin == NULL);
done:
  free(s.source);
  space_free(sp);
  manifest_free(m);
  device_close(c.dev);
}

TEST_CASE(dram_bytes) {
  static_facts f;
  memset(&f, 0, sizeof f);
  f.blocks_per_sm = 1;
  f.grid_blocks = 100;
  /* 9 SMs x 1 block resident: re-reads reach DRAM once per patch of 3 x 3 tiles */
  CHECK_NEAR(roofline_candidate_dram(1000.0, 0, 100.0, 0, 9, &f), 100.0 + 900.0 / 3.0, 1e-9);
  CHECK_NEAR(roofline_candidate_dram(1000.0, 50.0, 100.0, 0, 9, &f), 450.0,
             1e-9); /* scratch whole */
  CHECK_NEAR(roofline_candidate_dram(1000.0, 50.0, 100.0, 2.0, 9, &f), 850.0,
             1e-9);                                                          /* calibrated */
  CHECK_NEAR(roofline_candidate_dram(1000.0, 0, 0, 0, 9, &f), 1000.0, 1e-9); /* no min_bytes */
  f.grid_blocks = 4; /* fewer blocks than SMs: the grid is what is resident */
  CHECK_NEAR(roofline_candidate_dram(1000.0, 0, 100.0, 0, 9, &f), 100.0 + 900.0 / 2.0, 1e-9);
}

TEST_CASE(library_names) {
  /* every family with library candidates names the library they are stored under */
  char list[512];
  snprintf(list, sizeof list, "%s", family_names());
  int with_library = 0;
  for (char *save = NULL, *n = strtok_r(list, ", ", &save); n; n = strtok_r(NULL, ", ", &save)) {
    const family_ops *f = family_find(n);
    CHECK(f != NULL);
    if (!f || !f->library_list) continue;
    with_library++;
    CHECK(f->library != NULL && f->library[0]);
  }
  CHECK(with_library >= 2);
  CHECK_STR(family_find("gemm")->library, "cublaslt");
  CHECK_STR(family_find("attention")->library, "cudnn");
}

TEST_LIST(TEST_ENTRY(library), TEST_ENTRY(template), TEST_ENTRY(dram_bytes),
          TEST_ENTRY(library_names))
