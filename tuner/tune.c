/* tune.c — the tuning loop (see tune.h). */
#include "tuner/tune.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
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
#include "tuner/template/recipe.h"
#include "tuner/model/occupancy.h"
#include "search/strategy.h"
#include "tuner/core/sha256.h"
#include "tuner/verdict.h"

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
  long long *ids;         /* the database id of each of rep->results (0: not stored by this run) */
  int counters_off;       /* hardware counters cannot be read here: not tried again this run */
  struct seen_cubin *seen; /* every cubin evaluated in this run, by what it runs */
  size_t nseen, seen_cap;
} tune_ctx;

/* A cubin already evaluated in this run: a configuration that compiles to the same code with
 * the same launch gets its result instead of a measurement of its own. */
typedef struct seen_cubin {
  unsigned char key[32];  /* sha256 of the cubin, the launch geometry and the derived values */
  candidate_result r;     /* its result */
  double seconds;         /* what evaluating it took (GPU time on a measuring device) */
} seen_cubin;

#define TUNE_TOP 6     /* compiled candidates each template keeps: re-measured, profiled, tie-broken */
#define TUNE_PROFILE 3 /* the best of each template (and of the library) whose counters are read */

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

/* Appends "; TEXT" (or TEXT) to the report's note. */
static void tune_note(tune_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tune_note(tune_report *rep, const char *fmt, ...) {
  size_t l = strlen(rep->note);
  if (l + 3 >= sizeof rep->note) return;
  if (l) l += (size_t)snprintf(rep->note + l, sizeof rep->note - l, "; ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rep->note + l, sizeof rep->note - l, fmt, ap);
  va_end(ap);
}

/* ---- results ---- */

static rt_status add_result(tune_ctx *c, const candidate_result *r, long long id, int resumed,
                            const char *phase, rt_error *err) {
  tune_report *rep = c->rep;
  if (rep->nresults == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 64;
    candidate_result *n = realloc(rep->results, cap * sizeof *n);
    if (n) rep->results = n;
    long long *ids = n ? realloc(c->ids, cap * sizeof *ids) : NULL;
    if (!n || !ids) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    c->ids = ids;
    c->cap = cap;
  }
  c->ids[rep->nresults] = id;
  rep->results[rep->nresults++] = *r;
  if (!resumed && strncmp(r->detail, "same cubin", 10) == 0) {
    rep->deduplicated++;
    rep->dedup_saved_s += r->saved_s;
  } else if (!resumed && strncmp(r->detail, "stopped after", 13) == 0) {
    rep->stopped_early++;
    rep->early_saved_s += r->saved_s;
  }
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
    p.done = rep->evaluated;
    p.total = (size_t)rep->budget;
    p.resumed = rep->resumed;
    p.last = r;
    p.last_resumed = resumed;
    p.have_best = rep->have_best;
    p.best_ms = rep->best.time_ms;
    snprintf(p.best_template, sizeof p.best_template, "%s", rep->best.template_name);
    p.elapsed_s = now_s() - c->t0;
    p.phase = phase;
    c->o->progress(c->o->progress_ctx, &p);
  }
  return RT_OK;
}

/* Diagnoses r (a template candidate of plan pl, or a library one when pl carries no values),
 * with its measured counters when it has them.  Idempotent: the formula's bytes come from the
 * plan, so a result diagnosed again once its counters are read ends as if diagnosed then. */
static void diagnose_result(tune_ctx *c, candidate_result *r, const candidate_plan *pl,
                            compute_path path, int wgmma, const param_roles *roles,
                            const space *sp) {
  if (r->status != RT_OK || !c->have_ceil || !(r->time_ms > 0)) return; /* 0 FLOPs: data movement */
  /* the bytes that reach DRAM: re-reads by blocks resident together come from L2 */
  double concurrent = roofline_concurrent(c->ceil.sm_count, r->facts.blocks_per_sm, r->facts.grid_blocks);
  double loaded = pl ? pl->dram_bytes : r->dram_bytes; /* the cost formula's bytes: what passes through L2 */
  r->dram_bytes = loaded;
  if (c->fam) r->dram_bytes = roofline_dram_bytes(loaded, c->fam->min_bytes(c->fam, &c->prob), concurrent);
  if (pl) { /* split partials reach DRAM whole */
    r->dram_bytes += pl->scratch_bytes;
    loaded += pl->scratch_bytes;
  }
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
  in.measured = r->counters.measured ? &r->counters : NULL;
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
  int failed_early;       /* 0: to compile and evaluate; 1: failed before compiling; 2: resumed
                             from the database; PENDING_HELD: another run is evaluating it;
                             PENDING_TOLD: told to the strategy */
  size_t job;             /* its compile job in this pass */
} pending;

enum { PENDING_HELD = 3, PENDING_TOLD = 4 };

/* Claims pending candidate p for this run (db_run_claim): granted, it stays as it is; a result
 * another run stored makes it resumed (failed_early 2); held by a live run, PENDING_HELD. */
static rt_status tune_claim(tune_ctx *c, const char *name, pending *p, rt_error *err) {
  int state = DB_CLAIM_GRANTED;
  candidate_result done;
  rt_status rc = db_run_claim(c->run, name, p->plan.config, p->code_hash, &state, &done, NULL, err);
  if (rc) return rc;
  if (state == DB_CLAIM_DONE) {
    p->pre = done;
    snprintf(p->pre.config, sizeof p->pre.config, "%s", p->plan.config);
    p->failed_early = 2;
  } else if (state == DB_CLAIM_HELD) {
    p->failed_early = PENDING_HELD;
  } else if (p->failed_early == PENDING_HELD) {
    p->failed_early = p->pre.template_name[0] && p->pre.status ? 1 : 0; /* ours now */
  }
  return RT_OK;
}

/* Waits until no pending candidate is held by another run: each one's result appears (and is
 * told as resumed) or its claim expires and becomes this run's. */
static rt_status tune_wait_held(tune_ctx *c, const char *name, pending *pend, size_t n,
                                rt_error *err) {
  double t0 = now_s();
  for (int round = 0;; round++) {
    if (now_s() - t0 > DB_CLAIM_LEASE_S) { /* the holder lives but does not finish: evaluate here */
      for (size_t i = 0; i < n; i++)
        if (pend[i].failed_early == PENDING_HELD)
          pend[i].failed_early = pend[i].pre.template_name[0] && pend[i].pre.status ? 1 : 0;
      tune_note(c->rep, "a candidate another tuner claimed was not done after %d s: evaluated here too",
                DB_CLAIM_LEASE_S);
      return RT_OK;
    }
    int held = 0, changed = 0;
    for (size_t i = 0; i < n; i++) {
      if (pend[i].failed_early != PENDING_HELD) continue;
      rt_status rc = tune_claim(c, name, &pend[i], err);
      if (rc) return rc;
      if (pend[i].failed_early == PENDING_HELD) held++;
      else changed++;
    }
    if (!held || changed || TUNE_STOPPED(c)) return RT_OK;
    struct timespec ts = {0, (round < 20 ? 20 : 100) * 1000000L};
    nanosleep(&ts, NULL);
  }
}

typedef struct template_best {
  int have;
  double ms;
  long long id;
  size_t at;              /* its place in rep->results */
  compile_result cr;      /* its compile (cubin), owned */
  candidate_plan plan;    /* its configuration, geometry and cost */
  candidate_result r;     /* its result */
} template_best;

/* Makes tb the candidate just evaluated (a copy of its compile). */
static void template_best_set(template_best *tb, const candidate_result *r, const compile_result *cr,
                              const candidate_plan *pl, long long id, size_t at) {
  compile_result_free(&tb->cr);
  memset(&tb->cr, 0, sizeof tb->cr);
  if (compile_result_copy(&tb->cr, cr) != RT_OK) {
    tb->have = 0;
    return;
  }
  tb->have = 1;
  tb->ms = r->time_ms;
  tb->id = id;
  tb->at = at;
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

/* The verification tolerance of a candidate computing in dtype d in this run: 0 (the family's
 * for the problem) unless d is not the problem's dtype (tf32 in an f32 run), then d's own. */
static double tune_tolerance(const tune_ctx *c, const char *d) {
  if (!strcmp(d, c->prob.dtype) || !c->fam || !c->fam->tolerance) return 0;
  problem p = c->prob;
  snprintf(p.dtype, sizeof p.dtype, "%s", d);
  return c->fam->tolerance(c->fam, &p);
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
      dc.precision = b->r.precision;
      dc.tolerance = !strcmp(b->r.precision, "tf32") ? tune_tolerance(c, "tf32") : 0;
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
  /* the verdict reads the report's results: they carry the medians it was decided by */
  c->rep->results[b1->at].time_ms = b1->ms;
  c->rep->results[b2->at].time_ms = b2->ms;
  if (b2->ms < b1->ms) {
    template_best tmp = *b1; /* the compile results move with their candidates */
    *b1 = *b2;
    *b2 = tmp;
  }
  if (was_best) c->rep->best = b1->r;
}

/* The model device's time for a configuration before it is compiled: launch geometry, cost and
 * shared memory from the manifest, occupancy without the register count (unknown until ptxas
 * runs).  Strategies use it to rank candidates (the model strategy measures in this order). */
typedef struct predict_ctx {
  tune_ctx *c;
  const manifest *m;
  const space *sp;
  const gpu_spec *gpu;
  const rt_vars *env;  /* the template's names (its dtype's facts) */
  const char *dtype;   /* what it computes in */
  double calibration;  /* its DRAM calibration on this GPU; 0: none */
} predict_ctx;

static double predict_config(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                             const gpu_spec *gpu, const char *dtype, double min_bytes, double calibration) {
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
  dc.dram_calibration = calibration;
  double t;
  if (occupancy_fill_facts(arch, &dc.facts, NULL) || device_model_predict(gpu, &dc, &t, NULL)) return HUGE_VAL;
  return t * 1e3;
}

double tune_predict_config(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                           const gpu_spec *gpu, const char *dtype, double min_bytes) {
  return predict_config(m, sp, idx, env, gpu, dtype, min_bytes, 0);
}

static double tune_predict(void *ctx, size_t idx) {
  predict_ctx *pc = ctx;
  return predict_config(pc->m, pc->sp, idx, pc->env, pc->gpu, pc->dtype,
                        pc->c->fam->min_bytes(pc->c->fam, &pc->c->prob), pc->calibration);
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
                      const candidate_plan *pl, double calibration, char out[65]) {
  unsigned char key[32];
  compile_key(options_digest, source, key);
  char text[512];
  int n = snprintf(text, sizeof text, "%02x%02x%02x%02x%02x%02x%02x%02x|%u,%u,%u|%u,%u,%u|%u|%lld", key[0], key[1],
                   key[2], key[3], key[4], key[5], key[6], key[7], pl->grid[0], pl->grid[1], pl->grid[2], pl->block[0],
                   pl->block[1], pl->block[2], pl->smem, pl->work);
  if (!device_has(c->dev, DEVICE_CAP_MEASURES))
    n += snprintf(text + n, sizeof text - (size_t)n, "|%.17g,%.17g,%.17g,%.17g", pl->flops, pl->dram_bytes,
                  pl->executed_flops, pl->inflight_bytes);
  /* a prediction scaled by a calibration is another prediction (none: the text of before) */
  if (!device_has(c->dev, DEVICE_CAP_MEASURES) && calibration > 0 && n > 0 && (size_t)n < sizeof text)
    snprintf(text + n, sizeof text - (size_t)n, "|cal %.17g", calibration);
  unsigned char all[64];
  memcpy(all, key, 32);
  unsigned char tail[32];
  sha256(text, strlen(text), tail);
  memcpy(all + 32, tail, 32);
  unsigned char dg[32];
  sha256(all, sizeof all, dg);
  sha256_hex(dg, out);
}

/* What a candidate computes in, said plainly: "fp32" for fp32 products on the CUDA cores,
 * "tf32" for fp32 inputs rounded to tf32 for tensor-core products, else the input dtype. */
static const char *precision_of(const char *instruction, const char *dtype) {
  if (!strcmp(dtype, "f32")) return !strcmp(instruction, "simt") ? "fp32" : "tf32";
  return dtype;
}

/* A cuBLASLt candidate's precision from its identity text ("compute=32F_FAST_TF32"). */
static const char *library_precision(const char *id, const char *dtype) {
  if (strstr(id, "FAST_TF32")) return "tf32";
  return !strcmp(dtype, "f32") || !strcmp(dtype, "tf32") ? "fp32" : dtype;
}

/* What decides a run's outcome besides the code: the cubin's bytes, the launch geometry and the
 * derived values (the family's launcher reads some of them, e.g. TMA boxes).  Parameters that
 * only reach the source and leave the cubin alone are not part of it. */
static void cubin_key(const compile_result *cr, const manifest *m, const candidate_plan *pl, unsigned char out[32]) {
  unsigned char dg[32];
  sha256(cr->cubin, cr->cubin_size, dg);
  char text[2048];
  size_t n = (size_t)snprintf(text, sizeof text, "%02x%02x%02x%02x%02x%02x%02x%02x|%u,%u,%u|%u,%u,%u|%u|%lld", dg[0],
                              dg[1], dg[2], dg[3], dg[4], dg[5], dg[6], dg[7], pl->grid[0], pl->grid[1], pl->grid[2],
                              pl->block[0], pl->block[1], pl->block[2], pl->smem, pl->work);
  for (int i = 0; i < manifest_nderived(m) && n < sizeof text; i++) {
    long long v = 0;
    rt_vars_get(&pl->vars, manifest_derived_name(m, i), &v);
    n += (size_t)snprintf(text + n, sizeof text - n, "|%s=%lld", manifest_derived_name(m, i), v);
  }
  unsigned char all[64];
  memcpy(all, dg, 32);
  sha256(text, strlen(text), all + 32);
  sha256(all, sizeof all, out);
}

static const seen_cubin *seen_find(const tune_ctx *c, const unsigned char key[32]) {
  for (size_t i = 0; i < c->nseen; i++)
    if (!memcmp(c->seen[i].key, key, 32)) return &c->seen[i];
  return NULL;
}

static void seen_add(tune_ctx *c, const unsigned char key[32], const candidate_result *r, double seconds) {
  if (c->nseen == c->seen_cap) {
    size_t cap = c->seen_cap ? 2 * c->seen_cap : 64;
    seen_cubin *n = realloc(c->seen, cap * sizeof *n);
    if (!n) return; /* without the record the next one is measured: nothing lost but time */
    c->seen = n;
    c->seen_cap = cap;
  }
  seen_cubin *e = &c->seen[c->nseen++];
  memcpy(e->key, key, 32);
  e->r = *r;
  e->seconds = seconds;
}

/* Inserts a successful candidate into a template's top list (fastest first, TUNE_TOP kept with
 * their compiles); the one that falls off is freed. */
static void top_insert(template_best *top, const candidate_result *r, const compile_result *cr,
                       const candidate_plan *pl, long long id, size_t at) {
  int k = 0;
  while (k < TUNE_TOP && top[k].have && top[k].ms <= r->time_ms) k++;
  if (k == TUNE_TOP) return;
  compile_result_free(&top[TUNE_TOP - 1].cr);
  memmove(&top[k + 1], &top[k], (size_t)(TUNE_TOP - 1 - k) * sizeof *top);
  memset(&top[k], 0, sizeof top[k]);
  template_best_set(&top[k], r, cr, pl, id, at);
}

/* Counters could not be read: said once, and the model's facts stand for the rest of the run. */
static void counters_unavailable(tune_ctx *c, const rt_error *e) {
  c->counters_off = 1;
  size_t l = strlen(c->rep->note);
  snprintf(c->rep->note + l, sizeof c->rep->note - l, "%shardware counters not read (%.150s): the diagnosis "
           "uses the model's bytes and occupancy", l ? "; " : "", e->text);
}

/* Reads the counters of one stored candidate (dc describes it) and diagnoses it again with them:
 * into the report's entry `at` and its database row.  Returns 1 when counters were read. */
static int profile_one(tune_ctx *c, const device_candidate *dc, size_t at, const candidate_plan *pl,
                       compute_path path, int wgmma, const param_roles *roles, const space *sp) {
  if (c->counters_off || !device_has(c->dev, DEVICE_CAP_MEASURES) || TUNE_STOPPED(c)) return 0;
  hw_counters ctr;
  rt_error e = {0};
  if (device_profile(c->dev, dc, &ctr, &e) != RT_OK) {
    counters_unavailable(c, &e);
    return 0;
  }
  candidate_result *r = &c->rep->results[at];
  r->counters = ctr;
  diagnose_result(c, r, pl, path, wgmma, roles, sp);
  c->rep->profiled++;
  if (c->run && c->ids[at] > 0) db_run_update_result(c->run, c->ids[at], r, NULL);
  return 1;
}

/* The counters of a template's best few, then the template's calibration on this GPU: the
 * geometric mean of measured over modelled DRAM bytes, stored for the model device. */
static void profile_template(tune_ctx *c, const char *name, template_best *top, compute_path path, int wgmma,
                             const param_roles *roles, const space *sp) {
  double logsum = 0;
  int n = 0;
  for (int k = 0; k < TUNE_PROFILE && k < TUNE_TOP && top[k].have; k++) {
    device_candidate dc;
    memset(&dc, 0, sizeof dc);
    dc.template_name = name;
    dc.plan = &top[k].plan;
    dc.entry = top[k].cr.lowered_name;
    dc.cubin = top[k].cr.cubin;
    dc.cubin_size = top[k].cr.cubin_size;
    dc.facts = top[k].r.facts;
    dc.path = path;
    dc.wgmma = wgmma;
    dc.library_index = -1;
    if (!profile_one(c, &dc, top[k].at, &top[k].plan, path, wgmma, roles, sp)) break;
    const candidate_result *r = &c->rep->results[top[k].at];
    double measured = r->counters.dram_read_bytes + r->counters.dram_write_bytes;
    if (measured > 0 && r->dram_bytes > 0) {
      logsum += log(measured / r->dram_bytes);
      n++;
    }
  }
  const gpu_spec *gpu = device_spec(c->dev);
  if (n == 0 || !gpu) return;
  double ratio = exp(logsum / n);
  if (c->db) db_calibration_set(c->db, gpu->key, name, "dram_bytes", ratio, n, NULL);
  size_t l = strlen(c->rep->calibration);
  snprintf(c->rep->calibration + l, sizeof c->rep->calibration - l, "%s%s %.2fx (%d)", l ? ", " : "", name, ratio, n);
}

static rt_status tune_template(tune_ctx *c, manifest *m, space *sp, const char *arch, long share,
                               const size_t *prior, size_t nprior, const char *tdtype, rt_error *err) {
  const tune_options *o = c->o;
  strategy *st = NULL;
  char *src = NULL;
  candidate_result *prev = NULL;
  size_t nprev = 0;
  size_t *model_prior = NULL;
  template_best top[TUNE_TOP];
  memset(top, 0, sizeof top);
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
  compute_path path = template_path(m, tdtype, &wgmma);
  const char *precision = precision_of(manifest_instruction(m), tdtype);
  /* the names the manifest's expressions see, with the dtype facts of what it computes in (an
   * f32 run with --allow-tf32 runs a tf32 template) */
  rt_vars tenv = c->env;
  if (strcmp(tdtype, c->prob.dtype) && (rc = manifest_env_dtype(tdtype, &tenv, err))) goto done;
  double tolerance = tune_tolerance(c, tdtype); /* its own when it computes in another dtype */
  /* the model device scales the formula's DRAM bytes by what counters measured on this GPU */
  double calibration = 0;
  int model_ranks = !device_has(c->dev, DEVICE_CAP_MEASURES) || tune_prior_is_model(o);
  if (c->db && model_ranks && device_spec(c->dev)) {
    int found = 0;
    db_calibration_get(c->db, device_spec(c->dev)->key, name, "dram_bytes", &calibration, NULL, &found, NULL);
    if (!found) calibration = 0;
    else {
      size_t l = strlen(c->rep->calibration);
      snprintf(c->rep->calibration + l, sizeof c->rep->calibration - l, "%s%s %.2fx (applied)", l ? ", " : "", name,
               calibration);
    }
  }
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
  /* the share counts new evaluations (below), not the results told from the database */
  so.max_evals = 0;
  so.max_seconds = o->max_seconds > 0 ? fmax(1e-3, o->max_seconds - (now_s() - c->t0)) : 0;
  so.prior = prior;
  so.nprior = nprior;
  predict_ctx pc = {c, m, sp, device_spec(c->dev), &tenv, tdtype, calibration};
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
  long fresh = 0; /* new evaluations of this template: what the share counts */

  for (;;) {
    size_t idx[TUNE_MAX_BATCH];
    if (TUNE_STOPPED(c) || fresh >= share) break;
    size_t want = (size_t)batch < (size_t)(share - fresh) ? (size_t)batch : (size_t)(share - fresh);
    size_t n = strategy_ask(st, idx, want);
    if (n == 0) break;
    for (size_t i = 0; i < n; i++) {
      pending *p = &pend[i];
      memset(p, 0, sizeof *p);
      p->plan.idx = idx[i];
      space_format_config(sp, idx[i], p->plan.config, sizeof p->plan.config);
      rt_error cerr = {0};
      rt_status s = manifest_plan(m, sp, idx[i], &tenv, &p->plan, &cerr);
      if (!s) s = manifest_config_source(m, sp, idx[i], &p->plan.vars, tdtype, src, &p->source, &cerr);
      if (!s) code_hash(c, options_digest, p->source, &p->plan, calibration, p->code_hash);
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
        p->pre.verdict[0] = 0; /* this run's verdicts are this run's */
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
      }
      /* another tuner of this problem may be evaluating it, or may have stored it since this
       * run began: claim it first (a configuration asked for by name is measured afresh) */
      if (c->run && !o->config && (rc = tune_claim(c, name, p, err))) goto done;
    }
    /* Passes: compile and evaluate what this run holds; then wait for what other runs hold
     * (their results are told as resumed; a claim that expires becomes this run's). */
    for (int pass = 0;; pass++) {
      if (pass && TUNE_STOPPED(c)) break;
      size_t njobs = 0;
      for (size_t i = 0; i < n; i++) {
        pending *p = &pend[i];
        if (p->failed_early != 0) continue;
        jobs[njobs].source = p->source;
        jobs[njobs].name = manifest_source_name(m);
        p->job = njobs++;
      }
      if (njobs && o->progress) { /* compiling takes a while: say so before it starts */
        tune_progress pr;
        memset(&pr, 0, sizeof pr);
        pr.done = c->rep->evaluated;
        pr.total = (size_t)c->rep->budget;
        pr.resumed = c->rep->resumed;
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
      for (size_t i = 0; i < n && !rc; i++) {
        pending *p = &pend[i];
        if (p->failed_early == PENDING_TOLD || p->failed_early == PENDING_HELD) continue;
        candidate_result r;
        compile_result *cr = NULL;
        if (p->failed_early) {
          r = p->pre;
        } else {
          cr = &crs[p->job];
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
          dc.precision = precision;
          dc.dram_calibration = calibration;
          dc.tolerance = tolerance;
          /* a candidate that cannot win stops repeating: 3x the best so far */
          if (device_has(c->dev, DEVICE_CAP_MEASURES) && c->rep->have_best)
            dc.stop_above_ms = DEVICE_SLOW_FACTOR * c->rep->best.time_ms;
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
            snprintf(r.precision, sizeof r.precision, "%s", precision);
            snprintf(r.code_hash, sizeof r.code_hash, "%s", p->code_hash);
          } else {
            /* a cubin this run evaluated already, with the same launch, runs the same: its
             * result is taken, not measured again */
            unsigned char key[32];
            cubin_key(cr, m, pl, key);
            const seen_cubin *same = seen_find(c, key);
            if (same) {
              r = same->r;
              snprintf(r.config, sizeof r.config, "%s", pl->config);
              snprintf(r.template_name, sizeof r.template_name, "%s", name);
              r.facts = *f;
              r.diag.move[0] = r.verdict[0] = 0;
              memset(&r.counters, 0, sizeof r.counters);
              r.saved_s = device_has(c->dev, DEVICE_CAP_MEASURES) ? same->seconds : 0;
              snprintf(r.detail, sizeof r.detail, "same cubin and launch as %.40s %.160s: measured once",
                       same->r.template_name, same->r.config);
            } else {
              double t0 = now_s();
              rc = device_evaluate(c->dev, &dc, &r, err);
              if (rc) break;
              seen_add(c, key, &r, now_s() - t0);
            }
            snprintf(r.code_hash, sizeof r.code_hash, "%s", p->code_hash);
            diagnose_result(c, &r, pl, path, wgmma, &roles, sp);
          }
        }
        if (!r.precision[0]) snprintf(r.precision, sizeof r.precision, "%s", precision);
        if (TUNE_STOPPED(c)) break; /* its worker may have died with us: drop it */
        long long id = 0;
        int resumed = p->failed_early == 2;
        p->failed_early = PENDING_TOLD;
        if (!resumed && (rc = store_result(c, &r, &id, err))) break;
        if (!resumed) fresh++;
        if ((rc = strategy_tell(st, p->plan.idx, r.status, r.time_ms, &r.diag, err))) break;
        if ((rc = add_result(c, &r, id, resumed, "evaluate", err))) break;
        if (r.status == RT_OK && cr && strncmp(r.detail, "stopped after", 13))
          top_insert(top, &r, cr, &p->plan, id, c->rep->nresults - 1);
      }
      for (size_t k = 0; k < njobs; k++) compile_result_free(&crs[k]);
      if (rc || TUNE_STOPPED(c)) break;
      if ((rc = tune_wait_held(c, name, pend, n, err))) break;
      int more = 0;
      for (size_t i = 0; i < n; i++) more |= pend[i].failed_early != PENDING_TOLD;
      if (!more) break;
    }
    for (size_t i = 0; i < n; i++) {
      free(pend[i].source);
      pend[i].source = NULL;
    }
    if (rc) goto done;
  }
  c->budget_left -= fresh;
  if (!TUNE_STOPPED(c)) remeasure_close(c, name, &top[0], &top[1], path, wgmma, &roles, sp);
  /* the counters of the best few, after every timing of this template */
  if (!TUNE_STOPPED(c)) profile_template(c, name, top, path, wgmma, &roles, sp);
  /* the winner: the fastest, or among those tied with it the tie-break's first (fewer
   * registers, then less shared memory) */
  int w = 0;
  for (int k = 1; k < TUNE_TOP && top[0].have && top[k].have; k++) {
    const candidate_result *rk = &c->rep->results[top[k].at], *rw = &c->rep->results[top[w].at];
    if (verdict_tied(&c->rep->results[top[0].at], rk) && verdict_tie_cmp(rk, rw) < 0) w = k;
  }
  const template_best *best = &top[w];
  if (best->have && c->run && best->id > 0) {
    db_winner dw;
    memset(&dw, 0, sizeof dw);
    dw.cubin = best->cr.cubin;
    dw.cubin_size = best->cr.cubin_size;
    snprintf(dw.entry, sizeof dw.entry, "%.127s", best->cr.lowered_name);
    snprintf(dw.arch, sizeof dw.arch, "%.15s", arch);
    memcpy(dw.grid_v, best->plan.grid, sizeof dw.grid_v);
    memcpy(dw.block_v, best->plan.block, sizeof dw.block_v);
    dw.smem_v = best->plan.smem;
    winner_recipe rec; /* what the runtime needs to serve it, also for another shape */
    if (!(rc = winner_recipe_make(m, &best->plan.vars, &rec, err))) {
      winner_recipe_apply(&rec, &dw);
      rc = db_run_set_winner(c->run, best->id, &dw, NULL, err);
      winner_recipe_free(&rec);
    }
  }
done:
  for (int k = 0; k < TUNE_TOP; k++) compile_result_free(&top[k].cr);
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
  rt_error lerr = {0};
  rt_status rc = device_library_list(c->dev, TUNE_MAX_LIBRARY, ids, &count, &lerr);
  if (rc == RT_ERR_UNSUPPORTED) { /* the library has nothing for this problem: say why, go on */
    size_t l = strlen(c->rep->note);
    snprintf(c->rep->note + l, sizeof c->rep->note - l, "%sno library candidates: %.200s", l ? "; " : "",
             lerr.text);
    return RT_OK;
  }
  if (rc) {
    if (err) *err = lerr;
    return rc;
  }
  if (count == 0) return RT_OK;
  /* the library is the identity's first word: "cublaslt ...", "cudnn sdpa ..." */
  char lib[32];
  snprintf(lib, sizeof lib, "%.*s", (int)strcspn(ids[0], " "), ids[0]);
  if (c->run && (rc = db_run_template(c->run, lib, c->prob.family, "", "", err))) return rc;
  long long best_id = 0;
  double best_ms = 0;
  int best_i = -1;
  candidate_plan pl[TUNE_MAX_LIBRARY];
  size_t at[TUNE_MAX_LIBRARY];
  int evaluated[TUNE_MAX_LIBRARY] = {0};
  for (int i = 0; i < count && !TUNE_STOPPED(c); i++) {
    const char *precision = library_precision(ids[i], c->prob.dtype);
    /* f32 means fp32 math: cuBLASLt's FAST_TF32 algorithms only with --allow-tf32 */
    if (!strcmp(c->prob.dtype, "f32") && !strcmp(precision, "tf32") && !c->o->allow_tf32) continue;
    candidate_plan_library(&pl[i], ids[i], c->fam->flops(c->fam, &c->prob), c->fam->min_bytes(c->fam, &c->prob));
    device_candidate dc;
    memset(&dc, 0, sizeof dc);
    dc.template_name = lib;
    dc.plan = &pl[i];
    dc.library_index = i;
    dc.path = !strcmp(precision, "fp32") ? PATH_SIMT_F32 : roofline_path_for_dtype(precision, 1);
    dc.wgmma = 1;
    dc.precision = precision;
    dc.tolerance = !strcmp(precision, "tf32") ? tune_tolerance(c, "tf32") : 0;
    if (c->rep->have_best) dc.stop_above_ms = DEVICE_SLOW_FACTOR * c->rep->best.time_ms;
    candidate_result r;
    if ((rc = device_evaluate(c->dev, &dc, &r, err))) return rc;
    if (TUNE_STOPPED(c)) break;
    diagnose_result(c, &r, &pl[i], dc.path, 1, NULL, NULL);
    long long id = 0;
    if ((rc = store_result(c, &r, &id, err))) return rc;
    if ((rc = add_result(c, &r, id, 0, "library", err))) return rc;
    at[i] = c->rep->nresults - 1;
    evaluated[i] = 1;
    if (r.status == RT_OK && (best_i < 0 || r.time_ms < best_ms)) {
      best_i = i;
      best_ms = r.time_ms;
      best_id = id;
    }
  }
  /* the counters of the fastest few */
  for (int k = 0; k < TUNE_PROFILE && !c->counters_off; k++) {
    int pick = -1;
    for (int i = 0; i < count; i++) {
      if (!evaluated[i] || evaluated[i] == 2 || c->rep->results[at[i]].status != RT_OK) continue;
      if (pick < 0 || c->rep->results[at[i]].time_ms < c->rep->results[at[pick]].time_ms) pick = i;
    }
    if (pick < 0) break;
    evaluated[pick] = 2;
    const candidate_result *r = &c->rep->results[at[pick]];
    device_candidate dc;
    memset(&dc, 0, sizeof dc);
    dc.template_name = lib;
    dc.plan = &pl[pick];
    dc.library_index = pick;
    dc.path = !strcmp(r->precision, "fp32") ? PATH_SIMT_F32 : roofline_path_for_dtype(r->precision, 1);
    dc.wgmma = 1;
    if (!profile_one(c, &dc, at[pick], &pl[pick], dc.path, 1, NULL, NULL)) break;
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
  if (kf->unfinished) {
    size_t l = strlen(c->rep->note);
    snprintf(c->rep->note + l, sizeof c->rep->note - l, "%s%s is an unfinished Kernel Tuner cache, read as "
             "Kernel Tuner reads it", l ? "; " : "", kf->path);
  }
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
  so.max_evals = 0; /* the budget counts new evaluations (below), as a template's share does */
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
  /* resume: a configuration of this file the database holds for this run's problem and device
   * is told, not evaluated and stored again */
  candidate_result *prev = NULL;
  size_t nprev = 0;
  if (!rc && c->run) rc = db_run_previous(c->run, name, &prev, &nprev, err);
  long long best_id = 0;
  double best_ms = 0;
  long fresh = 0;
  while (!rc && !TUNE_STOPPED(c) && fresh < c->budget_left) {
    size_t idx[TUNE_MAX_BATCH];
    size_t want = c->budget_left - fresh < TUNE_MAX_BATCH ? (size_t)(c->budget_left - fresh) : TUNE_MAX_BATCH;
    size_t n = strategy_ask(st, idx, want);
    if (n == 0) break;
    for (size_t i = 0; i < n && !rc; i++) {
      candidate_plan pl;
      memset(&pl, 0, sizeof pl);
      space_format_config(kf->space, idx[i], pl.config, sizeof pl.config);
      pl.flops = pl.executed_flops = flops;
      candidate_result r;
      int resumed = 0;
      for (size_t k = 0; k < nprev && !resumed; k++)
        if (!strcmp(prev[k].config, pl.config)) r = prev[k], resumed = 1;
      /* another replay of this file into the database: claim the configuration, or take the
       * result its claimant stores */
      double waited = now_s();
      for (int state = DB_CLAIM_HELD, round = 0; !resumed && c->run && state == DB_CLAIM_HELD && !TUNE_STOPPED(c);
           round++) {
        if (now_s() - waited > DB_CLAIM_LEASE_S) break; /* its holder lives but does not finish */
        if ((rc = db_run_claim(c->run, name, pl.config, "", &state, &r, NULL, err))) break;
        if (state == DB_CLAIM_DONE) resumed = 1;
        if (state == DB_CLAIM_HELD) {
          struct timespec ts = {0, (round < 20 ? 5 : 50) * 1000000L};
          nanosleep(&ts, NULL);
        }
      }
      if (rc || TUNE_STOPPED(c)) break;
      if (!resumed) {
        device_candidate dc;
        memset(&dc, 0, sizeof dc);
        dc.template_name = name;
        dc.plan = &pl;
        dc.library_index = -1;
        if ((rc = device_evaluate(c->dev, &dc, &r, err))) break;
      }
      long long id = 0;
      if (!resumed && (rc = store_result(c, &r, &id, err))) break;
      if (!resumed) fresh++;
      /* a recording's counters come diagnosed from the device (recorded.h) */
      if ((rc = strategy_tell(st, idx[i], r.status, r.time_ms, r.diag.limit[0] ? &r.diag : NULL, err))) break;
      rc = add_result(c, &r, id, resumed, "evaluate", err);
      if (!resumed && r.status == RT_OK && (best_id == 0 || r.time_ms < best_ms)) {
        best_id = id;
        best_ms = r.time_ms;
      }
    }
  }
  free(prev);
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

/* ---- shards of one problem's candidates ---- */

int tune_config_shard(const char *config, int count) {
  if (count <= 1) return 0;
  unsigned char dg[32];
  sha256(config, strlen(config), dg);
  uint64_t h = 0;
  for (int i = 0; i < 8; i++) h = h << 8 | dg[i];
  return (int)(h % (uint64_t)count);
}

/* The configurations of sp that belong to shard index/count, as a space of their own (maybe
 * empty: space_size 0). */
static rt_status tune_shard_space(const space *sp, int index, int count, space **out, rt_error *err) {
  *out = NULL;
  if (index < 0 || index >= count)
    return rt_error_set(err, RT_ERR_USAGE, "shard %d of %d does not exist (0 to %d)", index, count, count - 1);
  space *part = space_new();
  if (!part) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  rt_status rc = RT_OK;
  for (int p = 0; p < space_nparams(sp) && !rc; p++) {
    const space_param *q = space_param_at(sp, p);
    rc = space_add_param(part, q->name, q->count, q->ints, (const char *const *)q->idents, err);
  }
  char text[1024];
  for (size_t i = 0; i < space_size(sp) && !rc; i++) {
    space_format_config(sp, i, text, sizeof text);
    if (tune_config_shard(text, count) == index) rc = space_add_config(part, space_config(sp, i), err);
  }
  if (!rc) rc = space_finish(part, err);
  if (rc) {
    space_free(part);
    return rc;
  }
  *out = part;
  return RT_OK;
}

/* ---- the run ---- */

/* The fastest of the tie group other than the winner w (of template tmpl, or any when NULL):
 * what the tie-break decided against; -1 without a tie. */
static long tie_other(const candidate_result *all, size_t n, long w, const char *tmpl, size_t tied) {
  if (!tied) return -1;
  long fast = -1, to = -1;
  for (size_t k = 0; k < n; k++)
    if (all[k].status == RT_OK && (!tmpl || !strcmp(all[k].template_name, tmpl)) &&
        (fast < 0 || all[k].time_ms < all[fast].time_ms))
      fast = (long)k;
  for (size_t k = 0; k < n; k++)
    if ((long)k != w && all[k].status == RT_OK && (!tmpl || !strcmp(all[k].template_name, tmpl)) &&
        verdict_tied(&all[fast], &all[k]) && (to < 0 || all[k].time_ms < all[to].time_ms))
      to = (long)k;
  return to;
}

/* Every template's winner (and the library's) gets its "why this wins" sentence, stored with its
 * result; the run's best is the overall winner, ties broken by the stated rule, with a sentence
 * of its own against the best of the other templates and cuBLASLt's default. */
static void tune_verdicts(tune_ctx *c) {
  tune_report *rep = c->rep;
  const candidate_result *all = rep->results;
  size_t n = rep->nresults;
  long vendor = -1; /* the library's default (cuBLASLt, cuDNN): the first its heuristic returned */
  for (size_t i = 0; i < n && vendor < 0; i++)
    if ((!strcmp(all[i].template_name, "cublaslt") || !strcmp(all[i].template_name, "cudnn")) &&
        all[i].status == RT_OK)
      vendor = (long)i;
  for (size_t i = 0; i < n; i++) {
    const char *name = all[i].template_name;
    int first = 1; /* each template once */
    for (size_t j = 0; j < i && first; j++) first = strcmp(all[j].template_name, name) != 0;
    if (!first) continue;
    size_t tied = 0;
    long w = verdict_pick(all, n, name, &tied);
    if (w < 0) continue;
    long ru = verdict_runner_up(all, n, w, name, 0);
    long to = tie_other(all, n, w, name, tied); /* for the tie-break's words */
    verdict_sentence(&all[w], tied, to >= 0 ? &all[to] : NULL, ru >= 0 ? &all[ru] : NULL,
                     "this template's runner-up", vendor >= 0 && vendor != w ? &all[vendor] : NULL,
                     rep->results[w].verdict, sizeof rep->results[w].verdict);
    if (c->run && c->ids[w] > 0) db_run_update_result(c->run, c->ids[w], &rep->results[w], NULL);
  }
  size_t tied = 0;
  long w = verdict_pick(all, n, NULL, &tied);
  if (w < 0) return;
  long ru = verdict_runner_up(all, n, w, NULL, 1);
  int same = ru < 0; /* one template: its own runner-up */
  if (same) ru = verdict_runner_up(all, n, w, NULL, 0);
  long to = tie_other(all, n, w, NULL, tied);
  char label[96];
  snprintf(label, sizeof label, same ? "the runner-up" : "the best of %s", ru >= 0 ? all[ru].template_name : "");
  rep->best = all[w];
  rep->have_best = 1;
  rep->tied = tied;
  verdict_sentence(&all[w], tied, to >= 0 ? &all[to] : NULL, ru >= 0 ? &all[ru] : NULL, label,
                   vendor >= 0 && vendor != w ? &all[vendor] : NULL, rep->best.verdict, sizeof rep->best.verdict);
}

/* The dtype template m computes the problem in: the problem's, or tf32 for an f32 problem with
 * --allow-tf32 when the template takes tf32 and not f32; NULL when it takes neither. */
static const char *template_dtype(const manifest *m, const tune_options *o) {
  const char *d = o->dtype ? o->dtype : "";
  if (manifest_has_dtype(m, d)) return d;
  if (o->allow_tf32 && !strcmp(d, "f32") && manifest_has_dtype(m, "tf32")) return "tf32";
  return NULL;
}

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
  const char *tdtypes[TUNE_MAX_TEMPLATES]; /* what each template computes in */
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
    if (!rc) tune_verdicts(&c);
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
    tdtypes[0] = template_dtype(m, o);
    if (!tdtypes[0]) {
      rt_error_locate(err, "--dtype", NULL, 0, 0);
      int tf = o->dtype && !strcmp(o->dtype, "f32") && manifest_has_dtype(m, "tf32");
      rc = rt_error_set(err, RT_ERR_UNSUPPORTED, "template %s does not support dtype '%s'%s",
                        manifest_name(m), o->dtype ? o->dtype : "",
                        tf ? " (it computes in tf32: give --dtype tf32, or --allow-tf32 to admit it for f32)" : "");
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
      /* two manifests of one name would both be tuned and stored as one template */
      for (int k = 0; k < i; k++) {
        manifest *o2 = NULL;
        if (manifest_load(paths[k], &o2, NULL) == RT_OK && !strcmp(manifest_name(o2), manifest_name(m))) {
          rt_error_locate(err, paths[i], "name", 0, 0);
          rc = rt_error_set(err, RT_ERR_MANIFEST, "template %s is defined twice: in %s and in %s; rename one",
                            manifest_name(m), paths[k], paths[i]);
          manifest_free(o2);
          manifest_free(m);
          goto done;
        }
        manifest_free(o2);
      }
      template_arch(m, device_arch(c.dev), archs[nms], sizeof archs[nms]);
      int mine = strcmp(manifest_family(m), c.fam->name) == 0 &&
                 !(c.fam->reference && !strcmp(manifest_name(m), c.fam->reference));
      in_family += mine;
      if (!mine || !(tdtypes[nms] = template_dtype(m, o)) || !archs[nms][0]) {
        manifest_free(m);
        continue;
      }
      ms[nms++] = m;
    }
  }

  /* the problem */
  if ((rc = c.fam->parse_shape(c.fam, o->shape ? o->shape : "", o->dtype ? o->dtype : "", o->problem_args, &c.prob, err))) {
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
  const char *ctr_env = getenv("ROOFTUNE_COUNTERS");
  if (device_has(c.dev, DEVICE_CAP_MEASURES) && ctr_env && !strcmp(ctr_env, "0")) {
    rt_error off = {0};
    rt_error_set(&off, RT_ERR_UNSUPPORTED, "ROOFTUNE_COUNTERS=0");
    counters_unavailable(&c, &off);
  }
  c.have_ceil = device_ceilings(c.dev, &c.ceil);
  if (c.have_ceil) snprintf(out->ceilings, sizeof out->ceilings, "%s", c.ceil.gpu);

  rt_error cerr = {0};
  if (cubin_cache_open_default(&c.cache, &cerr) != RT_OK) { /* compile without it, and say so */
    c.cache = NULL;
    tune_note(out, "%.160s; compiling without the cubin cache", cerr.text);
  } else if (c.cache && cubin_cache_warning(c.cache)[0]) {
    tune_note(out, "%.160s", cubin_cache_warning(c.cache));
  }

  /* every template's space first, so the budget goes only to templates with candidates */
  int live = 0;
  for (int i = 0; i < nms; i++) {
    rt_error serr = {0};
    rt_vars tenv = c.env;
    rt_status s = strcmp(tdtypes[i], c.prob.dtype) ? manifest_env_dtype(tdtypes[i], &tenv, &serr) : RT_OK;
    if (!s) s = manifest_build_space(ms[i], &tenv, &spaces[i], &serr);
    if (s == RT_ERR_SPACE_EMPTY && (nms > 1 || use_library)) {
      size_t l = strlen(out->note);
      const char *why = strstr(serr.text, ": \"");
      snprintf(out->note + l, sizeof out->note - l, "%s%s skipped for %s%s%s%.240s",
               l ? "; " : "", manifest_name(ms[i]), c.prob.shape, c.prob.layout[0] ? ":" : "",
               c.prob.layout, why ? why : " (no valid configuration)");
      continue;
    }
    if (!s && !o->config && o->shard_count > 1) { /* this shard's configurations only */
      space *part = NULL;
      s = tune_shard_space(spaces[i], o->shard_index, o->shard_count, &part, &serr);
      space_free(spaces[i]);
      spaces[i] = part;
      if (!s && space_size(part) == 0) {
        space_free(part);
        spaces[i] = NULL;
        size_t l = strlen(out->note);
        snprintf(out->note + l, sizeof out->note - l, "%s%s has no configuration in shard %d/%d",
                 l ? "; " : "", manifest_name(ms[i]), o->shard_index, o->shard_count);
        continue;
      }
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
  char no_budget[192] = "", no_time[192] = ""; /* templates left out, and why */
  for (int i = 0; i < nms; i++) {
    if (!spaces[i]) continue;
    /* an even share of what is left; a budget smaller than the templates gives the first ones
     * one each, in order (a resumed job may have one evaluation left for two templates) */
    long share = c.budget_left / live--;
    if (share < 1 && c.budget_left > 0) share = 1;
    int late = o->max_seconds > 0 && now_s() - c.t0 >= o->max_seconds;
    if (share < 1 || late) {
      char *list = late ? no_time : no_budget;
      size_t l = strlen(list);
      snprintf(list + l, sizeof no_time - l, "%s%s", l ? ", " : "", manifest_name(ms[i]));
      continue;
    }
    if (TUNE_STOPPED(&c)) break;
    if ((rc = tune_template(&c, ms[i], spaces[i], archs[i], share, priors[i], npriors[i], tdtypes[i], err)))
      goto done;
  }
  if (no_budget[0]) tune_note(out, "%s not searched: the evaluation budget (--budget) was spent", no_budget);
  if (no_time[0]) tune_note(out, "%s not searched: the time budget (--seconds) was spent", no_time);
  if (use_library && !TUNE_STOPPED(&c) && (rc = tune_library(&c, err))) goto done;
  tune_verdicts(&c);

finish:
  if (c.cache && !cubin_cache_usable(c.cache) && !strstr(out->note, "cubin cache"))
    tune_note(out, "%.160s", cubin_cache_warning(c.cache)); /* it failed during the run */
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
  free(c.ids);
  free(c.seen);
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
