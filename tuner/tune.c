/* tune.c — the tuning loop (see tune.h). */
#include "tuner/tune.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tuner/compile/compile.h"
#include "tuner/compile/compile_pool.h"
#include "tuner/compile/cubin_cache.h"
#include "tuner/driver/cuda_driver.h"
#include "db/db.h"
#include "tuner/device/device.h"
#include "tuner/model/diagnose.h"
#include "kernels/family.h"
#include "tuner/template/ktfile.h"
#include "tuner/model/gpu_spec.h"
#include "tuner/template/catalog.h"
#include "tuner/template/manifest.h"
#include "tuner/model/occupancy.h"
#include "search/strategy.h"
#include "tuner/core/sha256.h"

#define TUNE_MAX_TEMPLATES 32
#define TUNE_MAX_BATCH 16
#define TUNE_MAX_LIBRARY 16

typedef struct tune_ctx {
  const tune_options *o;
  tune_report *rep;
  device *dev;
  const family_ops *fam;  /* NULL on replay */
  problem prob;
  rt_vars env;            /* problem, dtype and device facts for manifest expressions */
  db *db;
  db_run *run;
  cubin_cache *cache;
  roofline_ceilings ceil;
  int have_ceil;
  double t0;
  size_t cap;             /* capacity of rep->results */
  family_reference ref;   /* the family's compiled reference template (have_ref) */
  compile_result ref_cr;  /* its compile, owned */
  int have_ref;
  long budget_left;       /* evaluations left in the whole run */
} tune_ctx;

#define TUNE_STOPPED(c) ((c)->o->stop && *(c)->o->stop)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

const char *tune_default_db_path(char *buf, size_t size) {
  const char *env = getenv("ROOFTUNE_DB");
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    return buf;
  }
  const char *xdg = getenv("XDG_DATA_HOME");
  const char *home = getenv("HOME");
  char dir[1024];
  if (xdg && *xdg) snprintf(dir, sizeof dir, "%s/rooftune", xdg);
  else snprintf(dir, sizeof dir, "%s/.local/share/rooftune", home && *home ? home : ".");
  /* create the folder and its parents */
  for (char *p = dir + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(dir, 0755);
      *p = '/';
    }
  mkdir(dir, 0755);
  snprintf(buf, size, "%s/tuning.db", dir);
  return buf;
}

/* ---- results ---- */

static rt_status add_result(tune_ctx *c, const candidate_result *r, int resumed, const char *phase,
                            rt_error *err) {
  tune_report *rep = c->rep;
  if (rep->nresults == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 64;
    candidate_result *n = realloc(rep->results, cap * sizeof *n);
    if (!n) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    rep->results = n;
    c->cap = cap;
  }
  rep->results[rep->nresults++] = *r;
  if (resumed) rep->resumed++;
  else rep->evaluated++;
  if (r->status != RT_OK) rep->failed++;
  if (r->status == RT_OK && (!rep->have_best || r->time_ms < rep->best.time_ms)) {
    rep->best = *r;
    rep->have_best = 1;
  }
  if (c->o->progress) {
    tune_progress p;
    memset(&p, 0, sizeof p);
    p.done = rep->evaluated + rep->resumed;
    p.total = (size_t)rep->budget;
    p.last = r;
    p.have_best = rep->have_best;
    p.best_ms = rep->best.time_ms;
    snprintf(p.best_template, sizeof p.best_template, "%s", rep->best.template_name);
    p.elapsed_s = now_s() - c->t0;
    p.phase = phase;
    c->o->progress(c->o->progress_ctx, &p);
  }
  return RT_OK;
}

/* Diagnoses r (a template candidate of plan pl, or a library one when pl carries no values). */
static void diagnose_result(tune_ctx *c, candidate_result *r, const candidate_plan *pl,
                            compute_path path, int wgmma, const param_roles *roles,
                            const space *sp) {
  if (r->status != RT_OK || !c->have_ceil || !(r->time_ms > 0)) return; /* 0 FLOPs: data movement */
  /* the bytes that reach DRAM: re-reads by blocks resident together come from L2 */
  double concurrent = roofline_concurrent(c->ceil.sm_count, r->facts.blocks_per_sm, r->facts.grid_blocks);
  double loaded = r->dram_bytes; /* the cost formula's bytes: what passes through L2 */
  if (c->fam) r->dram_bytes = roofline_dram_bytes(r->dram_bytes, c->fam->min_bytes(c->fam, &c->prob), concurrent);
  diag_input in;
  memset(&in, 0, sizeof in);
  in.flops = r->flops;
  in.executed_flops = pl && pl->vars.count ? pl->executed_flops : 0;
  in.dram_bytes = r->dram_bytes;
  in.l2_bytes = loaded;
  in.min_bytes = c->fam ? c->fam->min_bytes(c->fam, &c->prob) : 0;
  in.time_s = r->time_ms * 1e-3;
  in.facts = r->facts;
  in.path = path;
  in.wgmma = wgmma;
  in.roles = roles;
  in.config = pl && pl->vars.count ? &pl->vars : NULL;
  in.domains = sp;
  in.fused_bytes = c->fam && c->fam->fused_bytes ? c->fam->fused_bytes(c->fam, &c->prob) : 0;
  diagnose(&in, &c->ceil, &r->diag, NULL);
}

static rt_status store_result(tune_ctx *c, const candidate_result *r, long long *id,
                              rt_error *err) {
  *id = 0;
  if (!c->run) return RT_OK;
  return db_run_store(c->run, r, id, err);
}

/* ---- templates ---- */

/* The architecture to compile template m for on this device: the device's own when listed,
 * its "a" variant (sm_90a) when that is listed, or the device's when the template lists an
 * older minor version of the same major (SASS runs within a major version).  "" when none. */
static void template_arch(const manifest *m, const char *dev_arch, char *out, size_t size) {
  out[0] = 0;
  if (!dev_arch) return;
  char a[24];
  snprintf(a, sizeof a, "%sa", dev_arch);
  if (manifest_has_arch(m, a)) snprintf(out, size, "%.15s", a);
  else if (manifest_has_arch(m, dev_arch)) snprintf(out, size, "%s", dev_arch);
  else {
    const arch_spec *d = arch_spec_find(dev_arch);
    for (int i = 0; d && i < manifest_narchs(m); i++) {
      const arch_spec *t = arch_spec_find(manifest_arch(m, i));
      const char *tn = manifest_arch(m, i);
      if (t && tn[strlen(tn) - 1] != 'a' && t->cc / 10 == d->cc / 10 && t->cc <= d->cc) {
        snprintf(out, size, "%s", dev_arch);
        return;
      }
    }
  }
}

static compute_path template_path(const manifest *m, const char *dtype, int *wgmma) {
  const char *ins = manifest_instruction(m);
  *wgmma = strcmp(ins, "wgmma") == 0;
  if (strcmp(ins, "simt") == 0) return PATH_SIMT_F32;
  return roofline_path_for_dtype(dtype, 1);
}

typedef struct pending {
  candidate_plan plan;    /* configuration, values, geometry, cost */
  char code_hash[65];     /* what it runs (code_hash()) */
  char *source;           /* prefix + template source (owned) */
  candidate_result pre;   /* set when the candidate failed before compiling */
  int failed_early;       /* 1: failed before compiling; 2: resumed from the database */
} pending;

typedef struct template_best {
  int have;
  double ms;
  long long id;
  compile_result cr;      /* its compile (cubin), owned */
  candidate_plan plan;    /* its configuration, geometry and cost */
  candidate_result r;     /* its result */
} template_best;

/* Makes tb the candidate just evaluated (a copy of its compile). */
static void template_best_set(template_best *tb, const candidate_result *r, const compile_result *cr,
                              const candidate_plan *pl, long long id) {
  compile_result_free(&tb->cr);
  memset(&tb->cr, 0, sizeof tb->cr);
  if (compile_result_copy(&tb->cr, cr) != RT_OK) {
    tb->have = 0;
    return;
  }
  tb->have = 1;
  tb->ms = r->time_ms;
  tb->id = id;
  tb->plan = *pl;
  tb->r = *r;
}

static double median_of(double *v, int n) {
  for (int i = 1; i < n; i++) /* insertion sort: n <= 3 */
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* On a GPU, a template's best and runner-up closer than their spread are measured twice more
 * each, alternately, and ranked by the median of their three medians (design.md: re-measure
 * when two candidates are closer than the spread).  The re-measurements are stored too. */
static void remeasure_close(tune_ctx *c, const char *name, template_best *b1, template_best *b2,
                            compute_path path, int wgmma, const param_roles *roles, const space *sp) {
  if (!device_has(c->dev, DEVICE_CAP_MEASURES) || !b1->have || !b2->have) return;
  double noise = fmax(b1->r.spread, b2->r.spread);
  if (!(b2->ms - b1->ms < noise * b1->ms)) return;
  double t[2][3] = {{b1->ms}, {b2->ms}};
  int n[2] = {1, 1};
  for (int round = 0; round < 2; round++)
    for (int k = 0; k < 2; k++) {
      template_best *b = k ? b2 : b1;
      device_candidate dc;
      memset(&dc, 0, sizeof dc);
      dc.template_name = name;
      dc.plan = &b->plan;
      dc.entry = b->cr.lowered_name;
      dc.cubin = b->cr.cubin;
      dc.cubin_size = b->cr.cubin_size;
      dc.min_bytes = c->fam->min_bytes(c->fam, &c->prob);
      dc.facts = b->r.facts;
      dc.path = path;
      dc.wgmma = wgmma;
      dc.library_index = -1;
      candidate_result r;
      if (device_evaluate(c->dev, &dc, &r, NULL) != RT_OK || r.status != RT_OK) continue;
      diagnose_result(c, &r, &b->plan, path, wgmma, roles, sp);
      snprintf(r.code_hash, sizeof r.code_hash, "%s", b->r.code_hash);
      snprintf(r.detail, sizeof r.detail, "re-measured: within the spread of another candidate");
      long long id = 0;
      store_result(c, &r, &id, NULL);
      t[k][n[k]++] = r.time_ms;
    }
  int was_best = c->rep->have_best && !strcmp(c->rep->best.template_name, name) &&
                 (!strcmp(c->rep->best.config, b1->plan.config) ||
                  !strcmp(c->rep->best.config, b2->plan.config));
  b1->ms = b1->r.time_ms = median_of(t[0], n[0]);
  b2->ms = b2->r.time_ms = median_of(t[1], n[1]);
  if (b2->ms < b1->ms) {
    template_best tmp = *b1; /* the compile results move with their candidates */
    *b1 = *b2;
    *b2 = tmp;
  }
  if (was_best) c->rep->best = b1->r;
}

/* The manifest's launch expressions as written ("ceil_div(N,BLOCK_N)", or a number), so the
 * runtime can compute a winner's geometry for a nearby shape. */
static void winner_launch_text(const manifest *m, db_winner *w) {
  json_t *root = json_load_file(manifest_path(m), 0, NULL);
  json_t *launch = json_object_get(root, "launch");
  struct {
    const char *key;
    int i;
    char *out;
  } items[] = {{"grid", 0, w->grid[0]},  {"grid", 1, w->grid[1]},  {"grid", 2, w->grid[2]},
               {"block", 0, w->block[0]}, {"block", 1, w->block[1]}, {"block", 2, w->block[2]},
               {"smem", -1, w->smem}};
  for (size_t k = 0; k < sizeof items / sizeof items[0]; k++) {
    json_t *v = json_object_get(launch, items[k].key);
    if (items[k].i >= 0) v = json_array_get(v, (size_t)items[k].i);
    if (json_is_string(v)) snprintf(items[k].out, 128, "%s", json_string_value(v));
    else if (json_is_integer(v)) snprintf(items[k].out, 128, "%lld", (long long)json_integer_value(v));
    else if (!v && items[k].i < 0) snprintf(items[k].out, 128, "0"); /* smem is optional */
  }
  json_decref(root);
}

/* The configuration and its shape-free derived values: the runtime evaluates the launch
 * expressions with them for a nearby shape, so a value computed from this problem's dimensions
 * would be stale there and stays out. */
static void winner_vars_text(const manifest *m, const template_best *b, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s", b->plan.config);
  for (int i = 0; i < manifest_nderived(m) && n < size; i++) {
    long long v;
    const char *name = manifest_derived_name(m, i);
    if (manifest_derived_emitted(m, i) && rt_vars_get(&b->plan.vars, name, &v))
      n += (size_t)snprintf(buf + n, size - n, ",%s=%lld", name, v);
  }
}

/* The model device's time for a configuration before it is compiled: launch geometry, cost and
 * shared memory from the manifest, occupancy without the register count (unknown until ptxas
 * runs).  Strategies use it to rank candidates (the model strategy measures in this order). */
typedef struct predict_ctx {
  tune_ctx *c;
  const manifest *m;
  const space *sp;
  const gpu_spec *gpu;
} predict_ctx;

double tune_predict_config(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                           const gpu_spec *gpu, const char *dtype, double min_bytes) {
  const arch_spec *arch = gpu ? arch_spec_find(gpu->arch) : NULL;
  candidate_plan pl;
  device_candidate dc;
  memset(&dc, 0, sizeof dc);
  if (!arch || manifest_plan(m, sp, idx, env, &pl, NULL)) return HUGE_VAL;
  dc.plan = &pl;
  dc.min_bytes = min_bytes;
  dc.path = template_path(m, dtype, &dc.wgmma);
  dc.facts.threads_per_block = (int)(pl.block[0] * pl.block[1] * pl.block[2]);
  dc.facts.smem_dynamic = (int)pl.smem;
  dc.facts.grid_blocks = (long long)pl.grid[0] * pl.grid[1] * pl.grid[2];
  dc.facts.work_blocks = pl.work;
  double t;
  if (occupancy_fill_facts(arch, &dc.facts, NULL) || device_model_predict(gpu, &dc, &t, NULL)) return HUGE_VAL;
  return t * 1e3;
}

static double tune_predict(void *ctx, size_t idx) {
  predict_ctx *pc = ctx;
  return tune_predict_config(pc->m, pc->sp, idx, &pc->c->env, pc->gpu, pc->c->o->dtype,
                             pc->c->fam->min_bytes(pc->c->fam, &pc->c->prob));
}

/* ---- a prior: the same kernel's results elsewhere, or the model's ranking ---- */

/* --prior model: the model device ranks each template's space for the GPU tuned on. */
static int tune_prior_is_model(const tune_options *o) {
  return o->prior && strcmp(o->prior, "model") == 0;
}

/* The configurations of sp (template NAME) in the order of o->prior's times, into *order;
 * none (and RT_OK) when the file holds nothing for this template and problem or shares no
 * parameter with it; either way rep->prior says what it gave.  Errors: a file that cannot be
 * read. */
static rt_status tune_prior(tune_ctx *c, const char *name, const space *sp, size_t **order,
                            size_t *n, rt_error *err) {
  *order = NULL;
  *n = 0;
  /* the problem as given (a replay without --shape/--dtype: the file's only one) */
  ktfile_select sel = {name, c->o->shape ? c->prob.shape : NULL, c->o->dtype ? c->prob.dtype : NULL};
  ktfile *kf = NULL;
  rt_error e = {0};
  const char *none = NULL; /* why the file ranks nothing here, when it does not */
  rt_status rc = ktfile_load_select(c->o->prior, &sel, &kf, &e);
  if (rc == RT_ERR_NOT_FOUND) {
    none = "no results for this problem";
    rc = RT_OK;
  } else if (rc == RT_OK) {
    rc = ktfile_rank_in(kf, sp, order, n, &e);
    if (rc == RT_ERR_INVALID) none = "no parameter in common", rc = RT_OK;
  }
  ktfile_free(kf);
  if (rc) {
    if (err) *err = e;
    return rc;
  }
  char *p = c->rep->prior;
  size_t l = strlen(p);
  if (none) snprintf(p + l, sizeof c->rep->prior - l, "%s%s none (%s)", l ? ", " : "", name, none);
  else snprintf(p + l, sizeof c->rep->prior - l, "%s%s %zu ranked", l ? ", " : "", name, *n);
  return RT_OK;
}

/* After every template's prior: an error when none ranked anything (a wrong file or problem). */
static rt_status tune_prior_check(tune_ctx *c, size_t ranked, rt_error *err) {
  if (!c->o->prior || tune_prior_is_model(c->o) || ranked > 0) return RT_OK;
  rt_error_locate(err, c->o->prior, NULL, 0, 0);
  return rt_error_set(err, RT_ERR_NOT_FOUND,
                      "the --prior file ranks no configuration of %s for %s %s (%s): give "
                      "results of the same kernel and problem",
                      c->o->target ? c->o->target : "the target", c->prob.shape, c->prob.dtype,
                      c->rep->prior);
}

/* What a candidate runs, as a hex digest: the compile key of its complete source (NVRTC, its
 * options, the headers of its folder, the text), its launch geometry and, where times are
 * predicted rather than measured, the cost numbers the prediction reads.  Two configurations
 * (or two versions of a manifest) that agree on all of it have the same timing. */
static void code_hash(const tune_ctx *c, const unsigned char options_digest[32], const char *source,
                      const candidate_plan *pl, char out[65]) {
  unsigned char key[32];
  compile_key(options_digest, source, key);
  char text[512];
  int n = snprintf(text, sizeof text, "%02x%02x%02x%02x%02x%02x%02x%02x|%u,%u,%u|%u,%u,%u|%u|%lld", key[0], key[1],
                   key[2], key[3], key[4], key[5], key[6], key[7], pl->grid[0], pl->grid[1], pl->grid[2], pl->block[0],
                   pl->block[1], pl->block[2], pl->smem, pl->work);
  if (!device_has(c->dev, DEVICE_CAP_MEASURES))
    snprintf(text + n, sizeof text - (size_t)n, "|%.17g,%.17g,%.17g,%.17g", pl->flops, pl->dram_bytes,
             pl->executed_flops, pl->inflight_bytes);
  unsigned char all[64];
  memcpy(all, key, 32);
  unsigned char tail[32];
  sha256(text, strlen(text), tail);
  memcpy(all + 32, tail, 32);
  unsigned char dg[32];
  sha256(all, sizeof all, dg);
  sha256_hex(dg, out);
}

static rt_status tune_template(tune_ctx *c, manifest *m, space *sp, const char *arch, long share,
                               const size_t *prior, size_t nprior, rt_error *err) {
  const tune_options *o = c->o;
  strategy *st = NULL;
  char *src = NULL;
  candidate_result *prev = NULL;
  size_t nprev = 0;
  size_t *model_prior = NULL;
  template_best best, second;
  memset(&best, 0, sizeof best);
  memset(&second, 0, sizeof second);
  pending *pend = calloc(TUNE_MAX_BATCH, sizeof *pend);
  compile_job *jobs = calloc(TUNE_MAX_BATCH, sizeof *jobs);
  compile_result *crs = calloc(TUNE_MAX_BATCH, sizeof *crs);
  rt_status rc = RT_OK;
  if (!pend || !jobs || !crs) {
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  const char *name = manifest_name(m);
  param_roles roles;
  memset(&roles, 0, sizeof roles);
  manifest_roles(m, &roles);
  for (int k = 0; k < ROLE_COUNT; k++) /* the family says which roles may be levers */
    if (!family_allows_lever(c->fam, role_name((param_role)k))) memset(roles.names[k], 0, sizeof roles.names[k]);
  int wgmma = 0;
  compute_path path = template_path(m, o->dtype, &wgmma);
  if ((rc = manifest_read_source(m, &src, err))) goto done;
  char src_hash[65], man_hash[65];
  unsigned char dg[32];
  sha256(src, strlen(src), dg);
  sha256_hex(dg, src_hash);
  if (sha256_file(manifest_path(m), man_hash)) man_hash[0] = 0;
  if (c->run) {
    if ((rc = db_run_template(c->run, name, manifest_family(m), src_hash, man_hash, err))) goto done;
    /* resume: what the database holds is told, not recomputed (not for a configuration asked
     * for by name: that one is measured afresh) */
    if (!c->o->config && (rc = db_run_previous(c->run, name, &prev, &nprev, err))) goto done;
  }
  strategy_options so;
  memset(&so, 0, sizeof so);
  so.name = o->strategy;
  so.seed = o->seed;
  so.max_evals = share;
  so.max_seconds = o->max_seconds > 0 ? fmax(1e-3, o->max_seconds - (now_s() - c->t0)) : 0;
  so.prior = prior;
  so.nprior = nprior;
  predict_ctx pc = {c, m, sp, device_spec(c->dev)};
  if (pc.gpu && arch_spec_find(pc.gpu->arch)) {
    so.predict = tune_predict;
    so.predict_ctx = &pc;
  }
  if (tune_prior_is_model(o) && !o->config) {
    /* --prior model: the model device's ranking of this GPU */
    if (!so.predict) {
      rt_error_locate(err, "--prior", NULL, 0, 0);
      rc = rt_error_set(err, RT_ERR_UNSUPPORTED, "the model has no figures for %s (%s) to rank "
                        "%s with", c->rep->device, arch, name);
      goto done;
    }
    if ((rc = strategy_rank_predicted(sp, tune_predict, &pc, &model_prior, err))) goto done;
    so.prior = model_prior;
    so.nprior = space_size(sp);
    size_t l = strlen(c->rep->prior);
    snprintf(c->rep->prior + l, sizeof c->rep->prior - l, "%s%s %zu ranked by the model",
             l ? ", " : "", name, space_size(sp));
  }
  if ((rc = strategy_new(sp, &so, &st, err))) goto done;
  snprintf(c->rep->strategy, sizeof c->rep->strategy, "%s", strategy_name(st));

  compile_options copt;
  manifest_compile_options(m, arch, &copt);
  unsigned char options_digest[32];
  if ((rc = compile_options_digest(&copt, options_digest, err))) goto done;
  compile_pool_options popt;
  memset(&popt, 0, sizeof popt);
  popt.workers = o->compile_workers;
  popt.timeout_s = 120;
  popt.cache = c->cache;
  const arch_spec *aspec = arch_spec_find(arch);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int batch = o->batch > 0 ? o->batch
              : o->compile_workers > 0 ? o->compile_workers
                                       : (int)(cores > 1 ? cores : 2);
  if (batch > TUNE_MAX_BATCH) batch = TUNE_MAX_BATCH;

  for (;;) {
    size_t idx[TUNE_MAX_BATCH];
    if (TUNE_STOPPED(c)) break;
    size_t n = strategy_ask(st, idx, (size_t)batch);
    if (n == 0) break;
    size_t njobs = 0;
    for (size_t i = 0; i < n; i++) {
      pending *p = &pend[i];
      memset(p, 0, sizeof *p);
      p->plan.idx = idx[i];
      space_format_config(sp, idx[i], p->plan.config, sizeof p->plan.config);
      rt_error cerr = {0};
      rt_status s = manifest_plan(m, sp, idx[i], &c->env, &p->plan, &cerr);
      if (!s) s = manifest_config_source(m, sp, idx[i], &p->plan.vars, o->dtype, src, &p->source, &cerr);
      if (!s) code_hash(c, options_digest, p->source, &p->plan, p->code_hash);
      /* resume: a stored result of the same code (any template version), or of this
       * configuration of this version before results carried their code, is told, not
       * recomputed */
      const candidate_result *old = NULL;
      for (size_t k = 0; k < nprev && !old; k++)
        if (prev[k].code_hash[0] ? strcmp(prev[k].code_hash, p->code_hash) == 0
                                 : strcmp(prev[k].config, p->plan.config) == 0)
          old = &prev[k];
      if (old) {
        p->pre = *old;
        snprintf(p->pre.config, sizeof p->pre.config, "%s", p->plan.config); /* as this space spells it */
        p->failed_early = 2;
        free(p->source);
        p->source = NULL;
        continue;
      }
      if (s) {
        candidate_result *r = &p->pre;
        memset(r, 0, sizeof *r);
        snprintf(r->template_name, sizeof r->template_name, "%s", name);
        snprintf(r->config, sizeof r->config, "%s", p->plan.config);
        r->status = s;
        snprintf(r->detail, sizeof r->detail, "%.255s", cerr.text);
        r->timing = c->rep->timing;
        snprintf(r->device_name, sizeof r->device_name, "%.63s", c->rep->device);
        r->verify_error = -1;
        p->failed_early = 1;
        continue;
      }
      jobs[njobs].source = p->source;
      jobs[njobs].name = manifest_source_name(m);
      njobs++;
    }
    if (njobs && o->progress) { /* compiling takes a while: say so before it starts */
      tune_progress pr;
      memset(&pr, 0, sizeof pr);
      pr.done = c->rep->evaluated + c->rep->resumed;
      pr.total = (size_t)c->rep->budget;
      pr.have_best = c->rep->have_best;
      pr.best_ms = c->rep->best.time_ms;
      snprintf(pr.best_template, sizeof pr.best_template, "%s", c->rep->best.template_name);
      pr.elapsed_s = now_s() - c->t0;
      pr.phase = "compile";
      o->progress(o->progress_ctx, &pr);
    }
    if (njobs) {
      compile_pool_stats stats;
      memset(&stats, 0, sizeof stats);
      memset(crs, 0, sizeof *crs * njobs);
      double tc = now_s();
      rc = compile_pool_run(jobs, njobs, &copt, &popt, crs, &stats, err);
      c->rep->compile_seconds += now_s() - tc;
      c->rep->cache_hits += stats.cache_hits;
      if (rc) goto done;
      if (TUNE_STOPPED(c)) { /* the compile workers died with us: nothing of this batch counts */
        for (size_t k = 0; k < njobs; k++) compile_result_free(&crs[k]);
        for (size_t i = 0; i < n; i++) {
          free(pend[i].source);
          pend[i].source = NULL;
        }
        break;
      }
    }
    size_t j = 0;
    for (size_t i = 0; i < n && !rc; i++) {
      pending *p = &pend[i];
      candidate_result r;
      compile_result *cr = NULL;
      if (p->failed_early) {
        r = p->pre;
      } else {
        cr = &crs[j++];
        const candidate_plan *pl = &p->plan;
        device_candidate dc;
        memset(&dc, 0, sizeof dc);
        dc.template_name = name;
        dc.plan = pl;
        dc.entry = cr->lowered_name;
        dc.cubin = cr->cubin;
        dc.cubin_size = cr->cubin_size;
        dc.min_bytes = c->fam->min_bytes(c->fam, &c->prob);
        dc.path = path;
        dc.wgmma = wgmma;
        dc.library_index = -1;
        static_facts *f = &dc.facts;
        f->registers = cr->report.registers;
        f->smem_static = cr->report.smem_static;
        f->smem_dynamic = (int)pl->smem;
        f->spill_stores = cr->report.spill_stores;
        f->spill_loads = cr->report.spill_loads;
        f->stack_bytes = cr->report.stack_bytes;
        f->threads_per_block = (int)(pl->block[0] * pl->block[1] * pl->block[2]);
        f->grid_blocks = (long long)pl->grid[0] * pl->grid[1] * pl->grid[2];
        f->work_blocks = pl->work;
        if (cr->status == RT_OK && aspec) occupancy_fill_facts(aspec, f, NULL);
        if (cr->status != RT_OK) {
          memset(&r, 0, sizeof r);
          snprintf(r.template_name, sizeof r.template_name, "%s", name);
          snprintf(r.config, sizeof r.config, "%s", pl->config);
          r.status = cr->status ? (rt_status)cr->status : RT_ERR_COMPILE;
          snprintf(r.detail, sizeof r.detail, "%s", cr->message);
          r.timing = c->rep->timing;
          snprintf(r.device_name, sizeof r.device_name, "%.63s", c->rep->device);
          r.verify_error = -1;
          r.flops = pl->flops;
          r.dram_bytes = pl->dram_bytes;
          r.facts = *f;
          snprintf(r.code_hash, sizeof r.code_hash, "%s", p->code_hash);
        } else {
          rc = device_evaluate(c->dev, &dc, &r, err);
          if (rc) break;
          snprintf(r.code_hash, sizeof r.code_hash, "%s", p->code_hash);
          diagnose_result(c, &r, pl, path, wgmma, &roles, sp);
        }
      }
      if (TUNE_STOPPED(c)) break; /* its worker may have died with us: drop it */
      long long id = 0;
      if (p->failed_early != 2 && (rc = store_result(c, &r, &id, err))) break;
      if ((rc = strategy_tell(st, p->plan.idx, r.status, r.time_ms, &r.diag, err))) break;
      if ((rc = add_result(c, &r, p->failed_early == 2, "evaluate", err))) break;
      if (r.status == RT_OK && cr && (!best.have || r.time_ms < best.ms)) {
        compile_result_free(&second.cr);
        second = best; /* the old best (and its compile) becomes the runner-up */
        memset(&best, 0, sizeof best);
        template_best_set(&best, &r, cr, &p->plan, id);
      } else if (r.status == RT_OK && cr && (!second.have || r.time_ms < second.ms)) {
        template_best_set(&second, &r, cr, &p->plan, id);
      }
    }
    for (size_t k = 0; k < j; k++) compile_result_free(&crs[k]);
    for (size_t i = 0; i < n; i++) {
      free(pend[i].source);
      pend[i].source = NULL;
    }
    if (rc) goto done;
  }
  c->budget_left -= (long)strategy_evaluations(st);
  if (!TUNE_STOPPED(c)) remeasure_close(c, name, &best, &second, path, wgmma, &roles, sp);
  if (best.have && c->run && best.id > 0) {
    db_winner w;
    memset(&w, 0, sizeof w);
    w.cubin = best.cr.cubin;
    w.cubin_size = best.cr.cubin_size;
    snprintf(w.entry, sizeof w.entry, "%.127s", best.cr.lowered_name);
    snprintf(w.arch, sizeof w.arch, "%.15s", arch);
    memcpy(w.grid_v, best.plan.grid, sizeof w.grid_v);
    memcpy(w.block_v, best.plan.block, sizeof w.block_v);
    w.smem_v = best.plan.smem;
    winner_vars_text(m, &best, w.vars, sizeof w.vars);
    winner_launch_text(m, &w);
    rc = db_run_set_winner(c->run, best.id, &w, NULL, err);
  }
done:
  compile_result_free(&best.cr);
  compile_result_free(&second.cr);
  free(prev);
  free(src);
  free(pend);
  free(jobs);
  free(crs);
  free(model_prior);
  strategy_free(st);
  return rc;
}

/* ---- library candidates (cuBLASLt), cuda only ---- */

static rt_status tune_library(tune_ctx *c, rt_error *err) {
  char ids[TUNE_MAX_LIBRARY][256];
  int count = 0;
  rt_status rc = device_library_list(c->dev, TUNE_MAX_LIBRARY, ids, &count, err);
  if (rc || count == 0) return rc;
  if (c->run && (rc = db_run_template(c->run, "cublaslt", c->prob.family, "", "", err))) return rc;
  long long best_id = 0;
  double best_ms = 0;
  int best_i = -1;
  for (int i = 0; i < count && !TUNE_STOPPED(c); i++) {
    candidate_plan pl;
    candidate_plan_library(&pl, ids[i], c->fam->flops(c->fam, &c->prob), c->fam->min_bytes(c->fam, &c->prob));
    device_candidate dc;
    memset(&dc, 0, sizeof dc);
    dc.template_name = "cublaslt";
    dc.plan = &pl;
    dc.library_index = i;
    dc.path = roofline_path_for_dtype(c->prob.dtype, 1);
    dc.wgmma = 1;
    candidate_result r;
    if ((rc = device_evaluate(c->dev, &dc, &r, err))) return rc;
    if (TUNE_STOPPED(c)) break;
    diagnose_result(c, &r, &pl, dc.path, 1, NULL, NULL);
    long long id = 0;
    if ((rc = store_result(c, &r, &id, err))) return rc;
    if ((rc = add_result(c, &r, 0, "library", err))) return rc;
    if (r.status == RT_OK && (best_i < 0 || r.time_ms < best_ms)) {
      best_i = i;
      best_ms = r.time_ms;
      best_id = id;
    }
  }
  if (best_i >= 0 && c->run && best_id > 0) {
    db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.library_algo, sizeof w.library_algo, "%s", ids[best_i]);
    rc = db_run_set_winner(c->run, best_id, &w, NULL, err);
  }
  return rc;
}

/* ---- replay: the file's space ---- */

static rt_status tune_replay(tune_ctx *c, rt_error *err) {
  const ktfile *kf = device_replay_file(c->dev);
  /* a family names no template: the file's kernel (a rooftune export's template) does */
  const char *name = c->o->target && *c->o->target && !(c->fam && kf->kernel_name[0])
                         ? c->o->target
                     : kf->kernel_name[0] ? kf->kernel_name
                                          : "replay";
  /* with a known family and problem, times become FLOP/s */
  problem p;
  double flops = 0;
  if (c->fam && c->o->shape && c->o->dtype &&
      c->fam->parse_shape(c->fam, c->o->shape, c->o->dtype, NULL, &p, NULL) == RT_OK)
    flops = c->fam->flops(c->fam, &p);
  strategy_options so;
  memset(&so, 0, sizeof so);
  so.name = c->o->strategy;
  so.seed = c->o->seed;
  so.max_evals = c->budget_left;
  so.max_seconds = c->o->max_seconds;
  size_t *prior = NULL;
  rt_status rc = RT_OK;
  if (tune_prior_is_model(c->o)) {
    rt_error_locate(err, "--prior", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_USAGE, "a replayed file has no model to rank it: give "
                                           "another recording as --prior");
  }
  if (c->o->prior) {
    if ((rc = tune_prior(c, name, kf->space, &prior, &so.nprior, err)) ||
        (rc = tune_prior_check(c, so.nprior, err)))
      return rc;
    so.prior = prior;
  }
  strategy *st = NULL;
  rc = strategy_new(kf->space, &so, &st, err);
  free(prior);
  if (rc) return rc;
  snprintf(c->rep->strategy, sizeof c->rep->strategy, "%s", strategy_name(st));
  if (c->run) rc = db_run_template(c->run, name, c->o->target ? c->o->target : "", "", "", err);
  long long best_id = 0;
  double best_ms = 0;
  while (!rc && !TUNE_STOPPED(c)) {
    size_t idx[TUNE_MAX_BATCH];
    size_t n = strategy_ask(st, idx, TUNE_MAX_BATCH);
    if (n == 0) break;
    for (size_t i = 0; i < n && !rc; i++) {
      candidate_plan pl;
      memset(&pl, 0, sizeof pl);
      space_format_config(kf->space, idx[i], pl.config, sizeof pl.config);
      pl.flops = pl.executed_flops = flops;
      device_candidate dc;
      memset(&dc, 0, sizeof dc);
      dc.template_name = name;
      dc.plan = &pl;
      dc.library_index = -1;
      candidate_result r;
      if ((rc = device_evaluate(c->dev, &dc, &r, err))) break;
      long long id = 0;
      if ((rc = store_result(c, &r, &id, err))) break;
      if ((rc = strategy_tell(st, idx[i], r.status, r.time_ms, NULL, err))) break;
      rc = add_result(c, &r, 0, "evaluate", err);
      if (r.status == RT_OK && (best_id == 0 || r.time_ms < best_ms)) {
        best_id = id;
        best_ms = r.time_ms;
      }
    }
  }
  c->rep->templates = 1;
  if (!rc && c->run && best_id > 0) {
    db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.vars, sizeof w.vars, "%s", c->rep->best.config);
    rc = db_run_set_winner(c->run, best_id, &w, NULL, err);
  }
  strategy_free(st);
  return rc;
}

/* ---- the family's reference ---- */

/* Finds the family's reference template in the path (an error when it is missing or belongs to
 * another family) and, on a device that runs kernels, compiles it and plans its launch for the
 * problem: the first valid configuration of its space. */
static rt_status tune_reference(tune_ctx *c, const char *tpath, rt_error *err) {
  if (!c->fam->reference) return RT_OK;
  manifest *m = NULL;
  space *sp = NULL;
  char *src = NULL;
  rt_error e = {0};
  rt_status rc = catalog_find(tpath, c->fam->reference, &m, &e);
  if (rc) {
    if (err) *err = e;
    if (rc == RT_ERR_NOT_FOUND) {
      rt_error_locate(err, c->fam->declared_in ? c->fam->declared_in : c->fam->name, "reference", 0, 0);
      rc = rt_error_set(err, RT_ERR_NOT_FOUND, "the %s family's reference template %s is not in the template "
                        "path %s", c->fam->name, c->fam->reference, tpath);
    }
    return rc;
  }
  if (strcmp(manifest_family(m), c->fam->name) != 0) {
    rt_error_locate(err, manifest_path(m), "family", 0, 0);
    rc = rt_error_set(err, RT_ERR_MANIFEST, "%s is named the %s family's reference but belongs to family %s",
                      manifest_name(m), c->fam->name, manifest_family(m));
    goto done;
  }
  if (!device_has(c->dev, DEVICE_CAP_RUNS)) goto done; /* nothing runs: nothing to check */
  char arch[16];
  template_arch(m, device_arch(c->dev), arch, sizeof arch);
  if (!arch[0] || !manifest_has_dtype(m, c->prob.dtype)) {
    rc = rt_error_set(err, RT_ERR_UNSUPPORTED, "the %s family's reference %s does not support %s on %s",
                      c->fam->name, manifest_name(m), c->prob.dtype, device_arch(c->dev));
    goto done;
  }
  candidate_plan pl;
  compile_options copt;
  if ((rc = manifest_build_space(m, &c->env, &sp, err)) || (rc = manifest_plan(m, sp, 0, &c->env, &pl, err)) ||
      (rc = manifest_config_source(m, sp, 0, &pl.vars, c->prob.dtype, NULL, &src, err)))
    goto done;
  manifest_compile_options(m, arch, &copt);
  if ((rc = compile_source(src, manifest_source_name(m), &copt, &c->ref_cr, err))) {
    rt_error_locate(err, manifest_path(m), NULL, 0, 0);
    goto done;
  }
  memset(&c->ref, 0, sizeof c->ref);
  c->ref.cubin = c->ref_cr.cubin;
  c->ref.cubin_size = c->ref_cr.cubin_size;
  c->ref.entry = c->ref_cr.lowered_name;
  c->ref.vars = pl.vars;
  memcpy(c->ref.grid, pl.grid, sizeof pl.grid);
  memcpy(c->ref.block, pl.block, sizeof pl.block);
  c->ref.smem = pl.smem;
  c->have_ref = 1;
done:
  free(src);
  space_free(sp);
  manifest_free(m);
  return rc;
}

/* ---- the run ---- */

const char *tune_default_device(char *note, size_t size) {
  int n = 0;
  rt_error e = {0};
  if (size) note[0] = 0;
  if (cuda_driver_load(&e) == RT_OK && cuda_gpu_count(&n, &e) == RT_OK && n > 0) return "cuda";
  snprintf(note, size,
           "no CUDA GPU here (%.120s): times are predictions of the model:h200 device, not "
           "measurements",
           e.text[0] ? e.text : "no device");
  return "model:h200";
}

/* The database's record of a device: its identity (db_device_pseudo for model and replay). */
static void tune_db_device(const device *d, db_device *out) {
  device_identity id;
  device_get_identity(d, &id);
  memset(out, 0, sizeof *out);
  if (id.pseudo) {
    db_device_pseudo(out, id.name);
    return;
  }
  snprintf(out->name, sizeof out->name, "%s", id.name);
  out->sm_count = id.sm_count;
  out->cc_major = id.cc_major;
  out->cc_minor = id.cc_minor;
  out->driver_version = id.driver_version;
}

static rt_status open_db(tune_ctx *c, rt_error *err) {
  const tune_options *o = c->o;
  if (!o->db_path) return RT_OK;
  rt_status rc = db_open(o->db_path, DB_CREATE, &c->db, err);
  if (rc) return rc;
  db_run_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.prob = c->prob;
  tune_db_device(c->dev, &spec.prov.device);
  db_toolkit_string(spec.prov.toolkit, sizeof spec.prov.toolkit, NULL);
  snprintf(spec.prov.arch, sizeof spec.prov.arch, "%s", device_arch(c->dev) ? device_arch(c->dev) : "");
  snprintf(spec.strategy, sizeof spec.strategy, "%s", o->strategy ? o->strategy : strategy_default());
  spec.seed = o->seed;
  spec.budget = c->rep->budget;
  snprintf(spec.command, sizeof spec.command, "%s", o->command ? o->command : "");
  rc = db_run_begin(c->db, &spec, &c->run, err);
  if (!rc) c->rep->run_id = db_run_id(c->run);
  return rc;
}

/* Measured ceilings from the database, or measured now and stored (cuda only). */
static rt_status cuda_ceilings(tune_ctx *c, rt_error *err) {
  if (!device_has(c->dev, DEVICE_CAP_MEASURES)) return RT_OK;
  db_device dev;
  tune_db_device(c->dev, &dev);
  double bw = 0, fl = 0;
  int fb = 0, ff = 0;
  if (c->db) {
    db_ceiling_get(c->db, &dev, "copy_bw", "", &bw, NULL, 0, &fb, NULL);
    db_ceiling_get(c->db, &dev, "matmul", c->prob.dtype, &fl, NULL, 0, &ff, NULL);
  }
  roofline_ceilings m;
  if (fb && ff) {
    device_ceilings(c->dev, &m);
    m.bw = bw;
    m.l2_bw = ROOFLINE_L2_BW_FACTOR * bw;
    m.flops[roofline_path_for_dtype(c->prob.dtype, 0)] = fl;
    m.measured = 1;
    m.sm_count = device_sm_count(c->dev);
    snprintf(m.gpu, sizeof m.gpu, "%.50s (measured)", device_label(c->dev));
    device_set_ceilings(c->dev, &m);
    return RT_OK;
  }
  rt_error merr = {0};
  if (device_measure_ceilings(c->dev, c->prob.dtype, &m, &merr) != RT_OK) {
    /* the spec table stays in use; the run goes on */
    snprintf(c->rep->note + strlen(c->rep->note), sizeof c->rep->note - strlen(c->rep->note),
             "%sceilings not measured (%.100s); the spec table is used", c->rep->note[0] ? "; " : "",
             merr.text);
    return RT_OK;
  }
  device_set_ceilings(c->dev, &m);
  if (c->db) {
    db_ceiling_set(c->db, &dev, "copy_bw", "", m.bw, err);
    db_ceiling_set(c->db, &dev, "matmul", c->prob.dtype, m.flops[roofline_path_for_dtype(c->prob.dtype, 0)],
                   err);
  }
  return RT_OK;
}

rt_status tune_run(const tune_options *o, tune_report *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  tune_ctx c;
  memset(&c, 0, sizeof c);
  c.o = o;
  c.rep = out;
  c.t0 = now_s();
  out->budget = o->budget > 0 ? o->budget : TUNE_DEFAULT_BUDGET;
  c.budget_left = out->budget;
  manifest *ms[TUNE_MAX_TEMPLATES];
  space *spaces[TUNE_MAX_TEMPLATES] = {0};
  char archs[TUNE_MAX_TEMPLATES][16];
  size_t *priors[TUNE_MAX_TEMPLATES] = {0}, npriors[TUNE_MAX_TEMPLATES] = {0};
  int nms = 0;
  char **paths = NULL;
  int npaths = 0;
  rt_status rc;

  if (o->config && family_find(o->target ? o->target : "")) {
    rt_error_locate(err, "FAMILY|TEMPLATE", NULL, 0, 0);
    rc = rt_error_set(err, RT_ERR_USAGE, "one configuration needs one template as the target, not the family %s",
                      o->target);
    goto done;
  }
  const char *spec = o->device && *o->device ? o->device
                     : tune_default_device(out->note, sizeof out->note);
  device_options dopt;
  memset(&dopt, 0, sizeof dopt);
  dopt.timeout_s = o->timeout_s;
  dopt.seed = o->seed;
  dopt.worker_exe = o->worker_exe;
  dopt.replay_template = o->target;
  dopt.replay_shape = o->shape;
  dopt.replay_dtype = o->dtype;
  if ((rc = device_open(spec, &dopt, &c.dev, err))) goto done;
  snprintf(out->device, sizeof out->device, "%s", device_label(c.dev));
  out->timing = device_timing(c.dev);
  c.have_ceil = device_ceilings(c.dev, &c.ceil);

  /* the template path and the families declared in it */
  char tbuf[8192];
  const char *tpath = o->template_path ? o->template_path : catalog_path(tbuf, sizeof tbuf);
  if ((rc = family_load_path(tpath, err))) goto done;

  if (device_has(c.dev, DEVICE_CAP_RECORDED) && o->config) {
    rc = rt_error_set(err, RT_ERR_USAGE, "a replayed file has no template configuration to re-evaluate");
    goto done;
  }
  if (device_has(c.dev, DEVICE_CAP_RECORDED)) {
    /* the recorded file is the space; the shape and dtype only label the run */
    c.fam = o->target ? family_find(o->target) : NULL;
    manifest *rm = NULL;
    if (!c.fam && o->target && catalog_find(tpath, o->target, &rm, NULL) == RT_OK)
      c.fam = family_find(manifest_family(rm)); /* a template's family */
    manifest_free(rm);
    snprintf(c.prob.family, sizeof c.prob.family, "%s", o->target ? o->target : "replay");
    /* without --shape/--dtype the run is labelled as the file's recorded problem */
    snprintf(c.prob.dtype, sizeof c.prob.dtype, "%s", o->dtype ? o->dtype : "-");
    snprintf(c.prob.shape, sizeof c.prob.shape, "%s", o->shape ? o->shape : "recorded");
    if ((rc = open_db(&c, err))) goto done;
    rc = tune_replay(&c, err);
    goto finish;
  }

  /* the family and the templates */
  c.fam = family_find(o->target ? o->target : "");
  int in_family = 0; /* the family's templates in the path, before dtype and arch choose */
  const int whole_family = c.fam != NULL; /* the family's library (cuBLASLt) runs only then */
  if (!c.fam) {
    manifest *m = NULL;
    rt_error ferr = {0};
    if (catalog_find(tpath, o->target ? o->target : "", &m, &ferr)) {
      rt_error_locate(err, "FAMILY|TEMPLATE", NULL, 0, 0);
      rc = rt_error_set(err, ferr.code == RT_ERR_NOT_FOUND ? RT_ERR_NOT_FOUND : ferr.code,
                        "'%s' is neither a kernel family (%s) nor a template: %.500s",
                        o->target ? o->target : "", family_names(), ferr.text);
      goto done;
    }
    c.fam = family_find(manifest_family(m));
    if (!c.fam) {
      rt_error_locate(err, manifest_path(m), "family", 0, 0);
      rc = rt_error_set(err, RT_ERR_MANIFEST, "template %s names an unknown family '%s' (known: %s)",
                        manifest_name(m), manifest_family(m), family_names());
      manifest_free(m);
      goto done;
    }
    if (c.fam->reference && !strcmp(manifest_name(m), c.fam->reference)) {
      rt_error_locate(err, "FAMILY|TEMPLATE", NULL, 0, 0);
      rc = rt_error_set(err, RT_ERR_USAGE, "%s is the %s family's reference: candidates are checked against it, "
                        "it is not tuned; tune the family or one of its other templates",
                        manifest_name(m), c.fam->name);
      manifest_free(m);
      goto done;
    }
    if (!manifest_has_dtype(m, o->dtype ? o->dtype : "")) {
      rt_error_locate(err, "--dtype", NULL, 0, 0);
      rc = rt_error_set(err, RT_ERR_UNSUPPORTED, "template %s does not support dtype '%s'",
                        manifest_name(m), o->dtype ? o->dtype : "");
      manifest_free(m);
      goto done;
    }
    template_arch(m, device_arch(c.dev), archs[0], sizeof archs[0]);
    if (!archs[0][0]) {
      rc = rt_error_set(err, RT_ERR_UNSUPPORTED, "template %s does not support %s (%s)",
                        manifest_name(m), device_arch(c.dev), out->device);
      manifest_free(m);
      goto done;
    }
    ms[nms++] = m;
  } else {
    if ((rc = catalog_list(tpath, &paths, &npaths, err))) goto done;
    for (int i = 0; i < npaths && nms < TUNE_MAX_TEMPLATES; i++) {
      manifest *m = NULL;
      if (manifest_load(paths[i], &m, err)) {
        rc = err ? err->code : RT_ERR_MANIFEST;
        goto done;
      }
      template_arch(m, device_arch(c.dev), archs[nms], sizeof archs[nms]);
      int mine = strcmp(manifest_family(m), c.fam->name) == 0 &&
                 !(c.fam->reference && !strcmp(manifest_name(m), c.fam->reference));
      in_family += mine;
      if (!mine || !manifest_has_dtype(m, o->dtype ? o->dtype : "") || !archs[nms][0]) {
        manifest_free(m);
        continue;
      }
      ms[nms++] = m;
    }
  }

  /* the problem */
  if ((rc = c.fam->parse_shape(c.fam, o->shape ? o->shape : "", o->dtype ? o->dtype : "", NULL, &c.prob, err))) {
    if (err && !err->source[0]) rt_error_locate(err, "--shape", NULL, 0, 0);
    goto done;
  }
  if ((rc = problem_env(c.fam, &c.prob, arch_spec_find(device_arch(c.dev)), device_spec(c.dev), &c.env,
                       err)))
    goto done;
  if (device_sm_count(c.dev) > 0) rt_vars_set(&c.env, "device.sm_count", device_sm_count(c.dev));
  int use_library = whole_family && device_has(c.dev, DEVICE_CAP_RUNS) && c.fam->library_list;
  if (nms == 0 && !use_library) {
    if (whole_family && in_family == 0) {
      rt_error_locate(err, "FAMILY|TEMPLATE", NULL, 0, 0);
      rc = rt_error_set(err, RT_ERR_NOT_FOUND, "the template path %s holds no %s template: add a folder "
                        "with --templates DIR or $ROOFTUNE_TEMPLATE_PATH", tpath, c.fam->name);
      goto done;
    }
    rt_error_locate(err, "--dtype", NULL, 0, 0);
    rc = rt_error_set(err, RT_ERR_UNSUPPORTED, "no %s template supports dtype %s on %s (%s): %d of the "
                      "path's %s templates were left out for their dtypes or architectures",
                      c.fam->name, o->dtype ? o->dtype : "", device_arch(c.dev), out->device, in_family,
                      c.fam->name);
    goto done;
  }
  /* the family's reference template: in the path always, compiled where kernels run */
  if ((rc = tune_reference(&c, tpath, err))) goto done;

  if ((rc = open_db(&c, err))) goto done;
  if ((rc = device_begin(c.dev, c.fam, &c.prob, c.have_ref ? &c.ref : NULL, err))) goto done;
  if ((rc = cuda_ceilings(&c, err))) goto done;
  c.have_ceil = device_ceilings(c.dev, &c.ceil);
  if (c.have_ceil) snprintf(out->ceilings, sizeof out->ceilings, "%s", c.ceil.gpu);

  rt_error cerr = {0};
  if (cubin_cache_open_default(&c.cache, &cerr) != RT_OK) c.cache = NULL; /* compile without */

  /* every template's space first, so the budget goes only to templates with candidates */
  int live = 0;
  for (int i = 0; i < nms; i++) {
    rt_error serr = {0};
    rt_status s = manifest_build_space(ms[i], &c.env, &spaces[i], &serr);
    if (s == RT_ERR_SPACE_EMPTY && (nms > 1 || use_library)) {
      size_t l = strlen(out->note);
      const char *why = strstr(serr.text, ": \"");
      snprintf(out->note + l, sizeof out->note - l, "%s%s skipped for %s%s%s%.120s",
               l ? "; " : "", manifest_name(ms[i]), c.prob.shape, c.prob.layout[0] ? ":" : "",
               c.prob.layout, why ? why : " (no valid configuration)");
      continue;
    }
    if (!s && o->config) { /* only the configuration asked for */
      size_t idx;
      space *one = NULL;
      s = space_parse_config(spaces[i], o->config, &idx, &serr);
      if (s == RT_ERR_NOT_FOUND)
        rt_error_set(&serr, s, "configuration %.300s of %s is not valid for %s %s on %s", o->config,
                     manifest_name(ms[i]), c.prob.shape, c.prob.dtype, out->device);
      if (!s) s = space_single(spaces[i], idx, &one, &serr);
      if (s) rt_error_locate(&serr, "config", NULL, 0, 0);
      space_free(spaces[i]);
      spaces[i] = one;
      out->budget = c.budget_left = 1;
    }
    if (s) {
      if (err) *err = serr;
      rc = s;
      goto done;
    }
    live++;
  }
  out->templates = (size_t)live;
  /* the prior's ranking of every template's space, before any candidate is evaluated */
  size_t ranked = 0;
  for (int i = 0; i < nms && o->prior && !tune_prior_is_model(o) && !o->config; i++) {
    if (!spaces[i]) continue;
    if ((rc = tune_prior(&c, manifest_name(ms[i]), spaces[i], &priors[i], &npriors[i], err)))
      goto done;
    ranked += npriors[i];
  }
  if (!o->config && (rc = tune_prior_check(&c, ranked, err))) goto done;
  for (int i = 0; i < nms; i++) {
    if (!spaces[i]) continue;
    long share = c.budget_left / live--;
    if (share < 1 || TUNE_STOPPED(&c)) break;
    if ((rc = tune_template(&c, ms[i], spaces[i], archs[i], share, priors[i], npriors[i], err)))
      goto done;
  }
  if (use_library && !TUNE_STOPPED(&c) && (rc = tune_library(&c, err))) goto done;

finish:
  out->interrupted = TUNE_STOPPED(&c);
  if (!rc && c.run) rc = db_run_finish(c.run, out->interrupted ? "interrupted" : "done", err);
done:
  if (rc && c.run) db_run_finish(c.run, "failed", NULL); /* an error never leaves it "running" */
  out->seconds = now_s() - c.t0;
  if (c.run) db_run_free(c.run);
  db_close(c.db);
  cubin_cache_close(c.cache);
  for (int i = 0; i < nms; i++) {
    space_free(spaces[i]);
    manifest_free(ms[i]);
    free(priors[i]);
  }
  if (paths) catalog_list_free(paths, npaths);
  device_close(c.dev);
  compile_result_free(&c.ref_cr);
  if (rc) {
    tune_report_free(out);
    memset(out, 0, sizeof *out);
  }
  return rc;
}

void tune_report_free(tune_report *r) {
  if (!r) return;
  free(r->results);
  r->results = NULL;
  r->nresults = 0;
}
