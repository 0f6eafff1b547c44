/* test_serving.c — the serving rules of rooftune.h on the shipped templates' own recipes (as
 * `rooftune tune` stores them: winner_recipe_make), through the public API:
 *   - the runtime's one geometry path agrees with the engine's manifests: for sampled
 *     configurations of every gemm and attention template (attn_decode's split-KV ones too,
 *     where it is installed) and shapes near the tuned one, a
 *     winner admits a shape exactly when its configuration is in that shape's space, with the
 *     launch geometry manifest_launch gives;
 *   - the issue's two cases: 64x64x64 is not served the 4096^3 winner (over the distance cap:
 *     cuBLASLt); 4096x4096x4095 passes over gemm_wgmma (its K constraint fails) and is served
 *     the same shape's gemm_mma winner by the next rule, which says why;
 *   - gemm_skinny's M <= 16 holds the nearest rule back; exact, nearest, next, library and none;
 *     ROOFTUNE_RUNNABLE passes over a winner with nothing to launch; the cap from the query,
 *     from $ROOFTUNE_NEAREST_MAX (a bad value is an error), and the default; a winner stored
 *     without a recipe serves only its own shape;
 *   - attention: exact by the canonical shape, decode problems by (B*HKV, SKV), prefill by
 *     (B*HQ, SQ, SKV), the two never compared. */
/* stages: kernels runtime */
#include <sqlite3.h>

#include "kernels/family.h"
#include "runtime/include/rooftune.h"
#include "test.h"
#include "driver/cudnn.h"
#include "model/gpu_spec.h"
#include "template/catalog.h"
#include "template/manifest.h"
#include "template/recipe.h"
#include "unit/db_fixture.h"

static char toolkit[96];
static const gpu_spec *h200;

/* The environment of SHAPE for family fam on the model H200. */
static int env_of(const char *family, const char *shape, const char *dtype, problem *p,
                  rt_vars *env) {
  rt_error err = {0};
  const family_ops *fam = family_find(family);
  rt_vars_clear(env);
  if (!fam || fam->parse_shape(fam, shape, dtype, NULL, p, &err) ||
      problem_env(fam, p, arch_spec_find(h200->arch), h200, env, &err)) {
    fprintf(stderr, "env of %s %s: %s\n", family, shape, err.text);
    return 0;
  }
  return 1;
}

/* The index of configuration text cfg in the space of mf for env, or -1. */
static long find_config(const manifest *mf, const rt_vars *env, const char *cfg, space **out) {
  space *sp = NULL;
  *out = NULL;
  if (manifest_build_space(mf, env, &sp, NULL)) return -1;
  *out = sp;
  char text[768];
  for (size_t i = 0; i < space_size(sp); i++) {
    space_format_config(sp, i, text, sizeof text);
    if (!strcmp(text, cfg)) return (long)i;
  }
  return -1;
}

/* Stores configuration idx of sp (the space of mf for problem p, environment env) as the winner
 * of its template, with the recipe and launch text the tuner writes; a fake cubin when cubin. */
static void store(db *d, const manifest *mf, const problem *p, const space *sp, size_t idx,
                  const rt_vars *env, double ms, timing_kind timing, int cubin, int recipe) {
  rt_error err = {0};
  candidate_plan pl;
  CHECK_INT(manifest_plan(mf, sp, idx, env, &pl, &err), RT_OK);
  db_run_spec spec = fx_spec(*p, "model:h200");
  snprintf(spec.prov.toolkit, sizeof spec.prov.toolkit, "%s", toolkit);
  db_run *r = NULL;
  CHECK_INT(db_run_begin(d, &spec, &r, &err), RT_OK);
  if (!r) return;
  CHECK_INT(db_run_template(r, manifest_name(mf), manifest_family(mf), "src", "man", &err), RT_OK);
  candidate_result c = fx_result(manifest_name(mf), 0, 0, ms);
  c.timing = timing;
  c.verified = timing == TIMING_MEASURED; /* a measuring device checked it */
  snprintf(c.config, sizeof c.config, "%s", pl.config);
  long long id = 0;
  CHECK_INT(db_run_store(r, &c, &id, &err), RT_OK);
  winner_recipe rec;
  CHECK_INT(winner_recipe_make(mf, &pl.vars, &rec, &err), RT_OK);
  db_winner w;
  memset(&w, 0, sizeof w);
  winner_recipe_apply(&rec, &w);
  if (!recipe) w.env = w.derived = w.constraints = NULL;
  if (cubin) {
    w.cubin = "\177ELF";
    w.cubin_size = 4;
  }
  snprintf(w.entry, sizeof w.entry, "%s", manifest_entry(mf));
  memcpy(w.grid_v, pl.grid, sizeof w.grid_v);
  memcpy(w.block_v, pl.block, sizeof w.block_v);
  w.smem_v = pl.smem;
  CHECK_INT(db_run_set_winner(r, id, &w, NULL, &err), RT_OK);
  winner_recipe_free(&rec);
  db_run_finish(r, "done", &err);
  db_run_free(r);
}

/* A database holding configuration idx of template tpl for (family, shape, dtype) as its only
 * winner; the configuration's text into cfg. */
static rooftune_db *one_winner(const char *path, manifest *mf, const char *family,
                               const char *shape, const char *dtype, size_t pick, char *cfg,
                               size_t cfg_size) {
  problem p;
  rt_vars env;
  space *sp = NULL;
  rt_error err = {0};
  if (!env_of(family, shape, dtype, &p, &env) || manifest_build_space(mf, &env, &sp, &err)) {
    fprintf(stderr, "%s %s: %s\n", manifest_name(mf), shape, err.text);
    CHECK(0);
    return NULL;
  }
  size_t idx = space_size(sp) ? pick * 7919 % space_size(sp) : 0;
  space_format_config(sp, idx, cfg, cfg_size);
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  store(d, mf, &p, sp, idx, &env, 1.0, TIMING_PREDICTED, 1, 1);
  db_close(d);
  space_free(sp);
  rooftune_db *rt = NULL;
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  return rt;
}

/* The property: for sampled configurations of tpl tuned for `tuned` and each query shape, the
 * runtime admits the query exactly when the engine's space for it holds the configuration, with
 * the engine's geometry.  Returns how many (configuration, query) pairs were admitted. */
static int agree(const char *tpl, const char *family, const char *dtype, const char *tuned,
                 const char *const *queries, int nq, int samples) {
  manifest *mf = NULL;
  rt_error err = {0};
  CHECK_INT(catalog_find(NULL, tpl, &mf, &err), RT_OK);
  if (!mf) return 0;
  int admitted = 0, refused = 0;
  for (int s = 0; s < samples; s++) {
    char path[512], cfg[768];
    fx_tmpname(path, sizeof path, "agree");
    rooftune_db *rt = one_winner(path, mf, family, tuned, dtype, (size_t)s, cfg, sizeof cfg);
    for (int i = 0; rt && i < nq; i++) {
      problem p;
      rt_vars env;
      if (!env_of(family, queries[i], dtype, &p, &env)) continue;
      space *sp = NULL;
      long idx = find_config(mf, &env, cfg, &sp);
      rooftune_query q = {
          .family = family, .shape = queries[i], .dtype = dtype, .nearest_max = 100};
      rooftune_match m;
      CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
      int served = m.match != ROOFTUNE_MATCH_NONE;
      if (served != (idx >= 0))
        fprintf(stderr, "%s %s for %s: runtime %s, engine space %s (%s)\n", tpl, cfg, queries[i],
                served ? "admits" : "refuses", idx >= 0 ? "holds it" : "does not", m.passed_over);
      CHECK_INT(served, idx >= 0);
      if (served && idx >= 0) {
        admitted++;
        candidate_plan pl;
        CHECK_INT(manifest_plan(mf, sp, (size_t)idx, &env, &pl, &err), RT_OK);
        CHECK_INT(m.geometry_ok, 1);
        for (int k = 0; k < 3; k++) {
          CHECK_INT(m.grid[k], pl.grid[k]);
          CHECK_INT(m.block[k], pl.block[k]);
        }
        CHECK_INT(m.smem, pl.smem);
        CHECK_INT(m.rule, strcmp(m.shape, p.shape) ? ROOFTUNE_RULE_NEAREST : ROOFTUNE_RULE_EXACT);
      } else if (!served) {
        refused++;
        CHECK(m.passed_count == 1 && strstr(m.passed_over, tpl) != NULL);
      }
      space_free(sp);
    }
    rooftune_close(rt);
    fx_remove(path);
  }
  printf(
      "%-12s %-5s tuned %-22s: %d (configuration, shape) pairs admitted, %d refused, all as the "
      "engine\n",
      tpl, dtype, tuned, admitted, refused);
  manifest_free(mf);
  return admitted;
}

TEST_CASE(agreement) {
  static const char *const gemm_q[] = {"4096x4096x4096", "4096x4096x4095",   "2048x4096x4096",
                                       "4000x4000x4000", "8@1024x1024x1024", "4096x4096x4100"};
  agree("gemm_simt", "gemm", "f32", "1024x1024x1024", gemm_q, 6, 4);
  agree("gemm_mma", "gemm", "bf16", "4096x4096x4096", gemm_q, 6, 6);
  agree("gemm_wgmma", "gemm", "bf16", "4096x4096x4096", gemm_q, 6, 6);
  static const char *const skinny_q[] = {"16x4096x4096:nt", "8x4096x4096:nt", "32x4096x4096:nt",
                                         "1x14336x4096:nt", "16x4096x4095:nt"};
  agree("gemm_skinny", "gemm", "bf16", "16x4096x4096:nt", skinny_q, 5, 6);
  static const char *const attn_q[] = {"2x16x1024x128",     "2x16x1000x128", "4x16x2048x128",
                                       "2x16:4x1024x128",   "2x16x1024x64",  "2x16x1024x128:causal",
                                       "2x16x1024:3000x128"};
  agree("attn_mma", "attention", "bf16", "2x16x1024x128", attn_q, 7, 5);
  agree("attn_wgmma", "attention", "bf16", "2x16x1024x128", attn_q, 7, 5);
  static const char *const decode_q[] = {
      "8x32:8x1:4096x128",         "16x32:8x1:2048x128", "8x32:8x1:1000x128", "8x32:8x4:4096x128",
      "8x32:8x1:4096x128:paged16", "64x4:1x1:4096x128",  "8x32:8x1:300x128"};
  manifest *dec = NULL;
  if (catalog_find(NULL, "attn_decode", &dec, NULL) ==
      RT_OK) { /* the split-KV template, where installed */
    manifest_free(dec);
    agree("attn_decode", "attention", "bf16", "8x32:8x1:4096x128", decode_q, 7, 8);
    agree("attn_decode", "attention", "bf16", "8x32:8x1:4096x128:paged16", decode_q, 7, 4);
  }
}

/* A database with winners of several templates for one problem: gemm_wgmma (fastest) and
 * gemm_mma, each the first configuration of its 4096^3 space that also serves 4095 for gemm_mma. */
/* What the issue's cases store: gemm_wgmma's and gemm_mma's spaces for 4096^3 bf16, and the
 * gemm_mma configuration (pick) that serves K = 4095 too.  0 when a template is missing. */
typedef struct issue_templates {
  manifest *wg, *mma;
  problem p;
  rt_vars env;
  space *swg, *smma;
  long pick;
} issue_templates;

static void issue_free(issue_templates *t) {
  space_free(t->swg);
  space_free(t->smma);
  manifest_free(t->wg);
  manifest_free(t->mma);
}

static int issue_load(issue_templates *t) {
  memset(t, 0, sizeof *t);
  rt_error err = {0};
  CHECK_INT(catalog_find(NULL, "gemm_wgmma", &t->wg, &err), RT_OK);
  CHECK_INT(catalog_find(NULL, "gemm_mma", &t->mma, &err), RT_OK);
  problem p5;
  rt_vars env5;
  CHECK(env_of("gemm", "4096x4096x4096", "bf16", &t->p, &t->env));
  CHECK(env_of("gemm", "4096x4096x4095", "bf16", &p5, &env5));
  if (t->wg && t->mma) {
    CHECK_INT(manifest_build_space(t->wg, &t->env, &t->swg, &err), RT_OK);
    CHECK_INT(manifest_build_space(t->mma, &t->env, &t->smma, &err), RT_OK);
  }
  if (!t->swg || !t->smma) {
    issue_free(t);
    return 0;
  }
  /* a gemm_mma configuration that serves K = 4095 too */
  t->pick = -1;
  char cfg[768];
  for (size_t i = 0; i < space_size(t->smma) && t->pick < 0; i++) {
    space_format_config(t->smma, i, cfg, sizeof cfg);
    space *tmp = NULL;
    if (find_config(t->mma, &env5, cfg, &tmp) >= 0) t->pick = (long)i;
    space_free(tmp);
  }
  CHECK(t->pick >= 0);
  if (t->pick < 0) {
    issue_free(t);
    return 0;
  }
  return 1;
}

/* A fresh database for a case's winners (its name in path). */
static db *issue_db(char *path, size_t size, const char *name) {
  rt_error err = {0};
  db *d = NULL;
  fx_tmpname(path, size, name);
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  return d;
}

TEST_CASE(issue_cases) {
  issue_templates t;
  if (!issue_load(&t)) return;
  rt_error err = {0};
  problem p5;
  rt_vars env5;
  CHECK(env_of("gemm", "4096x4096x4095", "bf16", &p5, &env5));
  char path[512];
  fx_tmpname(path, sizeof path, "issue");
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  store(d, t.wg, &t.p, t.swg, 0, &t.env, 0.2, TIMING_MEASURED, 1, 1);
  store(d, t.mma, &t.p, t.smma, (size_t)t.pick, &t.env, 0.5, TIMING_MEASURED, 1, 1);
  db_close(d);
  rooftune_db *rt = NULL;
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  rooftune_match m;

  /* exact: the fastest, gemm_wgmma */
  rooftune_query q = {.family = "gemm", .shape = "4096x4096x4096", .dtype = "bf16"};
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_EXACT);
  CHECK_STR(m.template_name, "gemm_wgmma");

  /* 4096x4096x4095: gemm_wgmma's constraint on K fails; the same shape's gemm_mma serves it */
  q.shape = "4096x4096x4095";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_NEXT);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_STR(m.template_name, "gemm_mma");
  CHECK_STR(m.shape, "4096x4096x4096");
  CHECK_INT(m.passed_count, 1);
  CHECK_CONTAINS(m.passed_over, "gemm_wgmma 4096x4096x4096");
  CHECK_CONTAINS(m.passed_over, "fails for 4096x4096x4095");
  CHECK_INT(m.geometry_ok, 1);
  printf("4096x4096x4095: rule next, %s %s; passed over: %s", m.template_name, m.config,
         m.passed_over);
  {
    char cfg[768]; /* the picked configuration */
    space_format_config(t.smma, (size_t)t.pick, cfg, sizeof cfg);
    space *sp = NULL;
    long idx = find_config(t.mma, &env5, cfg, &sp);
    candidate_plan pl;
    CHECK(idx >= 0);
    if (idx >= 0 && manifest_plan(t.mma, sp, (size_t)idx, &env5, &pl, &err) == RT_OK) {
      CHECK_INT(m.grid[0], pl.grid[0]);
      CHECK_INT(m.grid[2], pl.grid[2]);
      CHECK_INT(m.smem, pl.smem);
    }
    space_free(sp);
  }

  /* 64x64x64: 7.2 from 4096^3, over the cap: cuBLASLt's own choice, and the line says why */
  q.shape = "64x64x64";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NONE);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_STR(m.library, "cublaslt");
  CHECK_CONTAINS(m.passed_over, "over the cap 1.25");
  CHECK_CONTAINS(m.passed_over, "... and 1 more beyond the cap");
  CHECK_INT(m.passed_count, 2);
  CHECK_CONTAINS(m.reason, "no tuned winner admits gemm 64x64x64 bf16 within distance 1.25");
  printf("64x64x64: rule library (%s); %s\n", m.library, m.reason);

  /* the cap: the query's beats the environment's, which beats the default; a bad one is an error */
  q.nearest_max = 100;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK(m.rule == ROOFTUNE_RULE_NEAREST || m.rule == ROOFTUNE_RULE_NEXT);
  CHECK_NEAR(m.nearest_max, 100, 0);
  q.nearest_max = 0;
  q.shape = "2048x4096x4096"; /* ln 2 = 0.69 away */
  setenv("ROOFTUNE_NEAREST_MAX", "0.5", 1);
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_NEAR(m.nearest_max, 0.5, 0);
  setenv("ROOFTUNE_NEAREST_MAX", "0.75", 1);
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_NEAREST);
  CHECK_STR(m.template_name, "gemm_wgmma");
  setenv("ROOFTUNE_NEAREST_MAX", "far", 1);
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_ERR_INVALID);
  CHECK_CONTAINS(rooftune_last_error(), "ROOFTUNE_NEAREST_MAX='far'");
  q.nearest_max = 0.75; /* the query's own cap needs no environment */
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  unsetenv("ROOFTUNE_NEAREST_MAX");
  q.nearest_max = 0;
  q.flags = ROOFTUNE_EXACT_ONLY;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_INT(m.passed_count, 0);
  rooftune_close(rt);
  fx_remove(path);
  issue_free(&t);
}

/* nothing to launch: the exact winner is a prediction without a cubin, the nearest one has
 * one; ROOFTUNE_RUNNABLE (what rooftune_gemm asks) passes over the first */
TEST_CASE(runnable) {
  issue_templates t;
  if (!issue_load(&t)) return;
  rt_error err = {0};
  char path[512];
  db *d = issue_db(path, sizeof path, "runnable");
  store(d, t.wg, &t.p, t.swg, 0, &t.env, 0.2, TIMING_PREDICTED, 0, 1);
  problem p2;
  rt_vars env2;
  space *s2 = NULL;
  CHECK(env_of("gemm", "4096x4096x2048", "bf16", &p2, &env2));
  CHECK_INT(manifest_build_space(t.wg, &env2, &s2, &err), RT_OK);
  if (s2) store(d, t.wg, &p2, s2, 0, &env2, 0.1, TIMING_MEASURED, 1, 1);
  db_close(d);
  rooftune_db *rt = NULL;
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  rooftune_query q = {.family = "gemm", .shape = "4096x4096x4096", .dtype = "bf16"};
  rooftune_match m;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_EXACT);
  CHECK_INT(m.runnable, 0);
  q.flags = ROOFTUNE_RUNNABLE;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_NEXT);
  CHECK_STR(m.shape, "4096x4096x2048");
  CHECK_INT(m.runnable, 1);
  CHECK_CONTAINS(m.passed_over, "nothing to launch: no cubin stored (predicted on model:h200)");
  rooftune_close(rt);
  fx_remove(path);
  space_free(s2);
  issue_free(&t);
}

/* a winner stored without a recipe (before schema 4, an import): its own shape only */
TEST_CASE(no_recipe) {
  issue_templates t;
  if (!issue_load(&t)) return;
  rooftune_query q = {.family = "gemm", .shape = "4096x4096x4096", .dtype = "bf16"};
  rooftune_match m;
  char path[512];
  db *d = issue_db(path, sizeof path, "norecipe");
  store(d, t.mma, &t.p, t.smma, (size_t)t.pick, &t.env, 0.5, TIMING_MEASURED, 1, 0);
  db_close(d);
  rooftune_db *rt = NULL;
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_EXACT);
  CHECK_INT(m.geometry_ok, 1);
  q.shape = "4096x4096x4095";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_CONTAINS(m.passed_over, "served for its own shape only");
  rooftune_close(rt);
  fx_remove(path);
  issue_free(&t);
}

/* A recipe line longer than the runtime's line buffer is refused, never cut: "1", 1100 blanks
 * and "== 0" fails, and cut after 1023 characters it was "1" and held, so another shape was
 * served by a constraint that does not hold. */
TEST_CASE(long_recipe_line) {
  issue_templates t;
  if (!issue_load(&t)) return;
  rooftune_query q = {.family = "gemm", .shape = "4096x4096x4095", .dtype = "bf16"};
  rooftune_match m;
  char path[512];
  db *d = issue_db(path, sizeof path, "longline");
  store(d, t.mma, &t.p, t.smma, (size_t)t.pick, &t.env, 0.5, TIMING_MEASURED, 1, 1);
  db_close(d);
  sqlite3 *h = NULL;
  CHECK_INT(sqlite3_open(path, &h), SQLITE_OK);
  CHECK_INT(sqlite3_exec(h,
                         "UPDATE winner_recipes SET constraints = '1' || printf('%.*c', 1100, ' ') "
                         "|| '== 0'",
                         NULL, NULL, NULL),
            SQLITE_OK);
  sqlite3_close(h);
  rooftune_db *rt = NULL;
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_CONTAINS(m.passed_over, "a constraint of its recipe is longer than 1023 characters");
  rooftune_close(rt);
  fx_remove(path);
  issue_free(&t);
}

/* gemm_skinny admits at most 16 rows: 8 rows are served its 16-row winner, 32 are not. */
TEST_CASE(skinny) {
  manifest *mf = NULL;
  rt_error err = {0};
  CHECK_INT(catalog_find(NULL, "gemm_skinny", &mf, &err), RT_OK);
  if (!mf) return;
  char path[512], cfg[768];
  fx_tmpname(path, sizeof path, "skinny");
  rooftune_db *rt = one_winner(path, mf, "gemm", "16x4096x4096:nt", "bf16", 0, cfg, sizeof cfg);
  rooftune_query q = {.family = "gemm", .shape = "8x4096x4096", .dtype = "bf16", .layout = "nt"};
  rooftune_match m;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_NEAREST);
  CHECK_STR(m.template_name, "gemm_skinny");
  CHECK_STR(m.layout, "nt");
  q.shape = "32x4096x4096:nt";
  q.layout = NULL;
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_CONTAINS(m.passed_over, "M <= 16");
  q.shape = "8x4096x4096"; /* the other layout: never compared */
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_LIBRARY);
  CHECK_CONTAINS(m.reason, "nothing is tuned for gemm 8x4096x4096 bf16");
  rooftune_close(rt);
  fx_remove(path);
  manifest_free(mf);
}

/* Attention: exact by canonical shape, decode by (B*HKV, SKV), prefill by (B*HQ, SQ, SKV). */
TEST_CASE(attention) {
  manifest *mf = NULL;
  rt_error err = {0};
  CHECK_INT(catalog_find(NULL, "attn_mma", &mf, &err), RT_OK);
  if (!mf) return;
  char path[512];
  fx_tmpname(path, sizeof path, "attn");
  db *d = NULL;
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  static const char *const tuned[] = {"8x32:8x1:4096x128", "2x32:8x1024x128:causal"};
  for (int t = 0; t < 2; t++) {
    problem p;
    rt_vars env;
    space *sp = NULL;
    CHECK(env_of("attention", tuned[t], "bf16", &p, &env));
    CHECK_INT(manifest_build_space(mf, &env, &sp, &err), RT_OK);
    if (sp) store(d, mf, &p, sp, 0, &env, 0.05, TIMING_MEASURED, 1, 1);
    space_free(sp);
  }
  db_close(d);
  rooftune_db *rt = NULL;
  CHECK_INT(rooftune_open(path, &rt), ROOFTUNE_OK);
  rooftune_match m;
  rooftune_query q = {.family = "attention", .shape = "8x32:8x1:4096x128", .dtype = "bf16"};
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_EXACT);
  /* decode: 64 sequences of one KV head have the tuned B*HKV = 64 and SKV: distance 0, not exact */
  q.shape = "64x4:1x1:4096x128";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.match, ROOFTUNE_MATCH_NEAREST);
  CHECK_NEAR(m.distance, 0, 1e-12);
  CHECK_STR(m.shape, "8x32:8x1:4096x128");
  /* twice the sequences, half the keys */
  q.shape = "16x32:8x1:2048x128";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_NEAREST);
  CHECK_NEAR(m.distance, sqrt(2.0) * log(2.0), 1e-9);
  /* a prefill problem is never served a decode winner, nor the other way round; causal and the
   * head dim are the kernels' own constraints */
  q.shape = "2x32:8x1024x128:causal";
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_EXACT);
  q.shape =
      "4x32:8x512:2048x128:causal"; /* prefill: (B*HQ, SQ, SKV) = (2, 0.5, 2) times the tuned */
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, ROOFTUNE_RULE_NEAREST);
  CHECK_NEAR(m.distance, sqrt(3.0) * log(2.0), 1e-9);
  q.shape = "2x32:8x1024x128"; /* not causal: IS_CAUSAL == causal fails */
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  /* nothing tuned admits it: cuDNN's own choice where cuDNN loads, else nothing */
  rt_error cerr = {0};
  const int lib = cudnn_load(&cerr) == RT_OK ? ROOFTUNE_RULE_LIBRARY : ROOFTUNE_RULE_NONE;
  CHECK_INT(m.rule, lib);
  CHECK_CONTAINS(m.passed_over, "IS_CAUSAL == causal");
  CHECK_CONTAINS(m.reason, lib ? "cuDNN's own choice serves it"
                               : "its vendor library (cuDNN) cannot be loaded here");
  q.shape = "8x32:8x1:4096x64"; /* decode, another head dim */
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK_INT(m.rule, lib);
  CHECK_CONTAINS(m.passed_over, "HEAD_DIM == D");
  q.shape = "8x32:8x9:4096x128"; /* nine queries: prefill, only the prefill winner compares */
  CHECK_INT(rooftune_lookup(rt, &q, &m), ROOFTUNE_OK);
  CHECK(m.match == ROOFTUNE_MATCH_NONE || strcmp(m.shape, "8x32:8x1:4096x128") != 0);
  q.shape = "8x32:7x1:4096x128";
  CHECK_INT(rooftune_lookup(rt, &q, &m),
            ROOFTUNE_ERR_INVALID); /* 32 % 7: the family's own message */
  CHECK_CONTAINS(rooftune_last_error(), "HQ must be a multiple of HKV");
  rooftune_close(rt);
  fx_remove(path);
  manifest_free(mf);
}

/* The fixture: the toolkit string winners are stored with, the H200's spec, and no nearest
 * cap from the environment. */
static void setup(void) {
  srand((unsigned)getpid());
  rt_error err = {0};
  CHECK_INT(db_toolkit_string(toolkit, sizeof toolkit, &err), RT_OK);
  h200 = gpu_spec_find("h200");
  CHECK(h200 != NULL);
  if (!h200) exit(test_done());
  unsetenv("ROOFTUNE_NEAREST_MAX");
}

TEST_LIST_FIXTURE(setup, NULL, TEST_ENTRY(issue_cases), TEST_ENTRY(runnable), TEST_ENTRY(no_recipe),
                  TEST_ENTRY(long_recipe_line), TEST_ENTRY(skinny), TEST_ENTRY(attention),
                  TEST_ENTRY(agreement))
