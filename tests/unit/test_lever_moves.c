/* test_lever_moves.c — every move a lever proposes is a valid configuration.
 *
 * For every shipped template and every problem of the shipped suites (gemm: bench_gemm's shape
 * suite, the main job and the skinny LLM shapes in bf16, the squares in bf16, f16 and f32;
 * attention: prefill and decode, contiguous and paged, in f16 and bf16; softmax and transpose:
 * a square, a wide and a tall problem in each dtype), every configuration of the template's
 * space on model:h200 is diagnosed as `rooftune tune` diagnoses it (the model's time, the
 * facts known before a compile; then again as if ptxas had reported 255 registers, and as if
 * it had reported spills, so the register- and spill-limited levers are reached too), and each
 * item of its lever ("BLOCK_N+") must come with its concrete move ("BLOCK_N=256"), which must
 * go the lever's way and, applied to the configuration, give one that `--config` accepts
 * (space_parse_config: every constraint holds).  No lever may name a parameter that cannot
 * move.  The counts printed say how many levers were checked. */
/* stages: device */
#include "test.h"
#include "kernels/family.h"
#include "tuner/device/device.h"
#include "model/diagnose.h"
#include "model/gpu_spec.h"
#include "model/occupancy.h"
#include "template/catalog.h"
#include "template/manifest.h"

static long levers_checked, configs_checked, moves_checked;

/* Checks one diagnosis of configuration idx of sp. */
static void check_lever(const manifest *m, const space *sp, size_t idx, const diagnosis *d,
                        const char *what) {
  if (!d->lever[0]) return;
  levers_checked++;
  char lever[160], move[160];
  snprintf(lever, sizeof lever, "%s", d->lever);
  snprintf(move, sizeof move, "%s", d->move);
  char *ls = NULL, *ms = NULL;
  char *li = strtok_r(lever, ",", &ls), *mi = strtok_r(move, ",", &ms);
  for (; li; li = strtok_r(NULL, ",", &ls), mi = strtok_r(NULL, ",", &ms)) {
    size_t n = strlen(li);
    char sign = li[n - 1];
    li[n - 1] = 0;
    char cfgtext[768];
    space_format_config(sp, idx, cfgtext, sizeof cfgtext);
    if (!mi) {
      fprintf(stderr, "%s %s [%s]: lever %s%c has no move\n", manifest_name(m), what, cfgtext, li,
              sign);
      CHECK(mi != NULL);
      return;
    }
    char *eq = strchr(mi, '=');
    CHECK(eq && (size_t)(eq - mi) == strlen(li) && !strncmp(mi, li, strlen(li)));
    if (!eq) return;
    int p = space_param_index(sp, li);
    CHECK(p >= 0);
    if (p < 0) return;
    const space_param *pp = space_param_at(sp, p);
    uint16_t cfg[64];
    memcpy(cfg, space_config(sp, idx), (size_t)space_nparams(sp) * sizeof cfg[0]);
    int pos = -1;
    for (int k = 0; k < pp->count && pos < 0; k++)
      if (pp->ints ? atoll(eq + 1) == pp->ints[k] && eq[1] : !strcmp(eq + 1, pp->idents[k]))
        pos = k;
    CHECK(pos >= 0);
    if (pos < 0) return;
    long long from = pp->ints ? pp->ints[cfg[p]] : cfg[p], to = pp->ints ? pp->ints[pos] : pos;
    if (!(sign == '+' ? to > from : to < from))
      fprintf(stderr, "%s %s [%s]: %s%c moves it to %s\n", manifest_name(m), what, cfgtext, li,
              sign, eq + 1);
    CHECK(sign == '+' ? to > from : to < from);
    cfg[p] = (uint16_t)pos;
    char moved[768];
    space_format_values(sp, cfg, moved, sizeof moved);
    size_t got;
    rt_error err = {0};
    rt_status s = space_parse_config(sp, moved, &got, &err);
    if (s)
      fprintf(stderr, "%s %s: lever %s%c of [%s] proposes [%s]: %s\n", manifest_name(m), what, li,
              sign, cfgtext, moved, err.text);
    CHECK_INT(s, RT_OK);
    moves_checked++;
  }
  CHECK(mi == NULL); /* as many moves as lever items */
}

/* Every configuration of template m for one problem, with three sets of facts. */
static void check_problem(const manifest *m, const family_ops *fam, const char *shape,
                          const char *dtype) {
  rt_error err = {0};
  problem p;
  rt_vars env;
  rt_vars_clear(&env);
  const gpu_spec *gpu = gpu_spec_find("h200");
  const arch_spec *arch = arch_spec_find("sm_90");
  if (fam->parse_shape(fam, shape, dtype, NULL, &p, &err) ||
      problem_env(fam, &p, arch, gpu, &env, &err)) {
    fprintf(stderr, "%s %s %s: %s\n", manifest_name(m), shape, dtype, err.text);
    CHECK(0);
    return;
  }
  rt_vars_set(&env, "device.sm_count", gpu->sm_count);
  space *sp = NULL;
  rt_status s = manifest_build_space(m, &env, &sp, &err);
  if (s == RT_ERR_SPACE_EMPTY) return; /* the template does not take this problem */
  CHECK_INT(s, RT_OK);
  if (s) {
    fprintf(stderr, "%s %s %s: %s\n", manifest_name(m), shape, dtype, err.text);
    return;
  }
  param_roles roles;
  memset(&roles, 0, sizeof roles);
  manifest_roles(m, &roles);
  for (int k = 0; k < ROLE_COUNT; k++)
    if (!family_allows_lever(fam, role_name((param_role)k)))
      memset(roles.names[k], 0, sizeof roles.names[k]);
  const char *ins = manifest_instruction(m);
  int wgmma = !strcmp(ins, "wgmma");
  compute_path path = !strcmp(ins, "simt") ? PATH_SIMT_F32 : roofline_path_for_dtype(dtype, 1);
  roofline_ceilings ceil;
  roofline_from_spec(gpu, &ceil);
  double min_bytes = fam->min_bytes(fam, &p);
  char problem_text[96];
  snprintf(problem_text, sizeof problem_text, "%s %s", shape, dtype);
  for (size_t idx = 0; idx < space_size(sp); idx++) {
    candidate_plan pl;
    if (manifest_plan(m, sp, idx, &env, &pl, NULL)) continue;
    for (int variant = 0; variant < 3; variant++) {
      device_candidate dc;
      memset(&dc, 0, sizeof dc);
      dc.plan = &pl;
      dc.min_bytes = min_bytes;
      dc.path = path;
      dc.wgmma = wgmma;
      static_facts *f = &dc.facts;
      f->threads_per_block = (int)(pl.block[0] * pl.block[1] * pl.block[2]);
      f->smem_dynamic = (int)pl.smem;
      f->grid_blocks = (long long)pl.grid[0] * pl.grid[1] * pl.grid[2];
      f->work_blocks = pl.work;
      if (variant == 1) f->registers = 255;
      if (variant == 2) f->spill_stores = f->spill_loads = 64;
      if (occupancy_fill_facts(arch, f, NULL) || f->blocks_per_sm <= 0) continue;
      double t;
      if (device_model_predict(gpu, &dc, &t, NULL)) continue;
      diag_input in;
      memset(&in, 0, sizeof in);
      in.flops = pl.flops;
      in.executed_flops = pl.executed_flops;
      double concurrent = roofline_concurrent(ceil.sm_count, f->blocks_per_sm, f->grid_blocks);
      in.dram_bytes = roofline_dram_bytes(pl.dram_bytes, min_bytes, concurrent);
      in.l2_bytes = pl.dram_bytes;
      in.min_bytes = min_bytes;
      in.time_s = t;
      in.facts = *f;
      in.path = path;
      in.wgmma = wgmma;
      in.roles = &roles;
      in.config = &pl.vars;
      in.domains = sp;
      diagnosis d;
      if (diagnose(&in, &ceil, &d, NULL)) continue;
      configs_checked++;
      check_lever(m, sp, idx, &d, problem_text);
    }
  }
  space_free(sp);
}

typedef struct suite {
  const char *family;
  const char *dtypes[3];
  const char *shapes[32];
} suite;

TEST_CASE(every_template) {
  rt_error err = {0};
  if (family_load_path(NULL, &err)) {
    fprintf(stderr, "%s\n", err.text);
    exit(1);
  }
  static const suite suites[] = {
      {"gemm",
       {"bf16", NULL, NULL},
       {"4096x4096x4096:nt", "4096x4096x4096", "1x4096x4096:nt", "1x14336x4096:nt",
        "1x4096x14336:nt", "16x4096x4096:nt", "16x14336x4096:nt", "16x4096x14336:nt",
        "64x4096x4096:nt", "64x14336x4096:nt", "64x4096x14336:nt", "256x4096x4096:nt",
        "256x14336x4096:nt", "256x4096x14336:nt", NULL}},
      {"gemm",
       {"bf16", "f16", "f32"},
       {"1024x1024x1024:nt", "2048x2048x2048:nt", "4096x4096x4096:nt", "8192x8192x8192:nt", NULL}},
      {"attention",
       {"f16", "bf16", NULL},
       {"4x32x4096x128", "1x32:8x8192x128:causal", "8x16x512:2048x64", "64x32:8x1:8192x128:paged16",
        "16x32:8x1:4096x128", NULL}},
      {"softmax", {"f32", "f16", "bf16"}, {"4096x4096", "32x32000", "65536x128", NULL}},
      {"transpose", {"f32", "f16", NULL}, {"4096x4096", "64x65536", "65536x64", NULL}},
  };
  char **paths = NULL;
  int npaths = 0;
  if (catalog_list(NULL, &paths, &npaths, &err)) {
    fprintf(stderr, "%s\n", err.text);
    exit(1);
  }
  int templates = 0;
  for (int i = 0; i < npaths; i++) {
    manifest *m = NULL;
    if (manifest_load(paths[i], &m, &err)) {
      fprintf(stderr, "%s\n", err.text);
      CHECK(0);
      continue;
    }
    const family_ops *fam = family_find(manifest_family(m));
    int counted = 0;
    for (size_t s = 0; fam && s < sizeof suites / sizeof suites[0]; s++) {
      if (strcmp(suites[s].family, manifest_family(m))) continue;
      if (fam->reference && !strcmp(fam->reference, manifest_name(m))) continue; /* not tuned */
      if (!counted++) templates++;
      for (int d = 0; d < 3 && suites[s].dtypes[d]; d++) {
        if (!manifest_has_dtype(m, suites[s].dtypes[d])) continue;
        for (int k = 0; suites[s].shapes[k]; k++)
          check_problem(m, fam, suites[s].shapes[k], suites[s].dtypes[d]);
      }
    }
    manifest_free(m);
  }
  catalog_list_free(paths, npaths);
  printf("%d templates: %ld diagnoses, %ld levers, %ld moves, every one a valid configuration\n",
         templates, configs_checked, levers_checked, moves_checked);
  CHECK(templates >= 8);
  CHECK(levers_checked > 1000);
}

TEST_LIST(TEST_ENTRY(every_template))
