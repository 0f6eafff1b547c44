/* state.c — fresh, stale, interrupted, failed or never tuned (see state.h). */
#include "job/state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sha256.h"
#include "core/util.h"
#include "tuner/device/device.h"
#include "template/catalog.h"
#include "kernels/family.h"
#include "template/manifest.h"

static const char *const state_names[] = {"never tuned", "fresh", "stale", "interrupted", "failed"};

const char *job_state_name(job_state_kind k) {
  return k >= 0 && (size_t)k < sizeof state_names / sizeof state_names[0] ? state_names[k] : "?";
}

double job_iso_time(const char *iso) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  if (!iso || !iso[0]) return NAN;
  const char *end = strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end) return NAN;
  return (double)timegm(&tm);
}

static double now_epoch(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- the index: runs and winners by problem ---- */

/* The problem key of a run or a winner: pointers to its four strings. */
typedef struct pkey {
  const char *family, *shape, *dtype, *layout;
} pkey;

static int pkey_cmp(pkey a, pkey b) {
  int c = strcmp(a.shape, b.shape);
  if (!c) c = strcmp(a.family, b.family);
  if (!c) c = strcmp(a.dtype, b.dtype);
  if (!c) c = strcmp(a.layout, b.layout);
  return c;
}

static pkey run_key(const job_run_rec *r) {
  return (pkey){r->family, r->shape, r->dtype, r->layout};
}
static pkey win_key(const job_winner *e) {
  return (pkey){e->family, e->shape, e->dtype, e->layout};
}

static int cmp_run(const void *a, const void *b, void *ctx) {
  const job_env *env = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int c = pkey_cmp(run_key(&env->runs[x]), run_key(&env->runs[y]));
  return c ? c : (x > y) - (x < y); /* a problem's runs keep their order (oldest first) */
}

static int cmp_win(const void *a, const void *b, void *ctx) {
  const job_env *env = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int c = pkey_cmp(win_key(&env->winners[x]), win_key(&env->winners[y]));
  return c ? c : (x > y) - (x < y);
}

static rt_status build_index(job_env *env, rt_error *err) {
  free(env->run_by_problem);
  free(env->win_by_problem);
  env->run_by_problem = malloc((env->nruns ? env->nruns : 1) * sizeof *env->run_by_problem);
  env->win_by_problem = malloc((env->nwinners ? env->nwinners : 1) * sizeof *env->win_by_problem);
  if (!env->run_by_problem || !env->win_by_problem)
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < env->nruns; i++) env->run_by_problem[i] = i;
  for (size_t i = 0; i < env->nwinners; i++) env->win_by_problem[i] = i;
  qsort_r(env->run_by_problem, env->nruns, sizeof *env->run_by_problem, cmp_run, env);
  qsort_r(env->win_by_problem, env->nwinners, sizeof *env->win_by_problem, cmp_win, env);
  return RT_OK;
}

/* [*lo, *hi) of the index entries (runs: 1, winners: 0) of problem key k. */
static void key_range(const job_env *env, int runs, pkey k, size_t *lo, size_t *hi) {
  const size_t *ix = runs ? env->run_by_problem : env->win_by_problem;
  size_t n = runs ? env->nruns : env->nwinners;
  if (!ix) n = 0;
  size_t a = 0, b = n;
  while (a < b) { /* the first not below k */
    size_t m = a + (b - a) / 2;
    pkey x = runs ? run_key(&env->runs[ix[m]]) : win_key(&env->winners[ix[m]]);
    if (pkey_cmp(x, k) < 0)
      a = m + 1;
    else
      b = m;
  }
  *lo = a;
  for (b = a;
       b < n && !pkey_cmp(runs ? run_key(&env->runs[ix[b]]) : win_key(&env->winners[ix[b]]), k);
       b++) {}
  *hi = b;
}

static pkey problem_key(const job_problem *q) {
  return (pkey){q->family, q->key_shape, q->dtype, q->layout};
}

/* Makes room for one more element in *arr (n used of *cap, each size bytes), doubling from 64:
 * 0 when out of memory (*arr untouched). */
static int room_for_one(void **arr, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 1;
  size_t c = *cap ? 2 * *cap : 64;
  void *g = realloc(*arr, c * size);
  if (!g) return 0;
  *arr = g;
  *cap = c;
  return 1;
}

static void free_winners(job_env *env) {
  for (size_t i = 0; i < env->nwinners; i++) free(env->winners[i].config);
  free(env->winners);
  env->winners = NULL;
  env->nwinners = env->wincap = 0;
}

/* db_entries_each's callback: keeps what a job reads of a winner made on env's GPU model. */
static rt_status keep_winner(const db_entry *e, void *ctx, rt_error *err) {
  job_env *env = ctx;
  if (strcmp(e->device.name, env->device.name)) return RT_OK; /* another GPU's: never current */
  if (!room_for_one((void **)&env->winners, &env->wincap, env->nwinners, sizeof *env->winners))
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading winners");
  job_winner *w = &env->winners[env->nwinners];
  memset(w, 0, sizeof *w);
  if (!(w->config = strdup(e->config)))
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading winners");
  env->nwinners++;
  w->winner_id = e->winner_id;
  rt_copy(w->family, sizeof w->family, e->family);
  rt_copy(w->shape, sizeof w->shape, e->shape);
  rt_copy(w->dtype, sizeof w->dtype, e->dtype);
  rt_copy(w->layout, sizeof w->layout, e->layout);
  rt_copy(w->template_name, sizeof w->template_name, e->template_name);
  rt_copy(w->source_hash, sizeof w->source_hash, e->source_hash);
  rt_copy(w->manifest_hash, sizeof w->manifest_hash, e->manifest_hash);
  rt_copy(w->toolkit, sizeof w->toolkit, e->toolkit);
  rt_copy(w->created_at, sizeof w->created_at, e->created_at);
  w->template_stale = e->template_stale;
  w->driver_version = e->device.driver_version;
  w->timing = e->timing;
  rt_copy(w->checked_on, sizeof w->checked_on, e->checked_on);
  w->time_ms = e->time_ms;
  w->spread = e->spread;
  w->library = e->launch.library_algo[0] != 0;
  return RT_OK;
}

static void free_runs(job_env *env) {
  for (size_t i = 0; i < env->nruns; i++) {
    free(env->runs[i].command);
    free(env->runs[i].last_config);
  }
  free(env->runs);
  env->runs = NULL;
  env->nruns = env->runcap = 0;
}

/* db_runs_each's callback: keeps what a job reads of a run on env's GPU model. */
static rt_status keep_run(const db_run_info *u, void *ctx, rt_error *err) {
  job_env *env = ctx;
  if (strcmp(u->device.name, env->device.name)) return RT_OK; /* another GPU's: never counted */
  if (!room_for_one((void **)&env->runs, &env->runcap, env->nruns, sizeof *env->runs))
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading runs");
  job_run_rec *r = &env->runs[env->nruns];
  memset(r, 0, sizeof *r);
  r->command = strdup(u->command);
  r->last_config = strdup(u->last_config);
  if (!r->command || !r->last_config) {
    free(r->command);
    free(r->last_config);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading runs");
  }
  env->nruns++;
  r->id = u->id;
  rt_copy(r->family, sizeof r->family, u->family);
  rt_copy(r->shape, sizeof r->shape, u->shape);
  rt_copy(r->dtype, sizeof r->dtype, u->dtype);
  rt_copy(r->layout, sizeof r->layout, u->layout);
  rt_copy(r->toolkit, sizeof r->toolkit, u->toolkit);
  rt_copy(r->status, sizeof r->status, u->status);
  rt_copy(r->started_at, sizeof r->started_at, u->started_at);
  rt_copy(r->finished_at, sizeof r->finished_at, u->finished_at);
  rt_copy(r->last_status, sizeof r->last_status, u->last_status);
  rt_copy(r->last_template, sizeof r->last_template, u->last_template);
  r->driver_version = u->device.driver_version;
  r->results = u->results;
  r->recheck = job_run_is_recheck(u);
  r->last_ms = u->last_ms;
  r->last_spread = u->last_spread;
  return RT_OK;
}

rt_status job_env_reload(job_env *env, db *d, rt_error *err) {
  free_winners(env);
  free_runs(env);
  env->now = now_epoch();
  rt_status rc = RT_OK;
  if (d) rc = db_entries_each(d, keep_winner, env, err);
  if (d && !rc) rc = db_runs_each(d, keep_run, env, err);
  if (!rc) rc = build_index(env, err);
  return rc;
}

rt_status job_env_open(job_env *env, const char *spec, db *d, rt_error *err) {
  memset(env, 0, sizeof *env);
  device *dev = NULL;
  device_options dopt;
  memset(&dopt, 0, sizeof dopt);
  rt_status rc = device_open(spec, &dopt, &dev, err);
  if (rc) return rc;
  device_identity id;
  device_get_identity(dev, &id);
  snprintf(env->arch, sizeof env->arch, "%s", device_arch(dev) ? device_arch(dev) : "");
  if (device_spec(dev)) {
    env->gpu = *device_spec(dev);
    env->have_gpu = 1;
  }
  env->sm_count = device_sm_count(dev);
  env->runs_kernels = device_has(dev, DEVICE_CAP_RUNS);
  device_close(dev);
  if (id.pseudo) {
    db_device_pseudo(&env->device, id.name);
  } else {
    snprintf(env->device.name, sizeof env->device.name, "%s", id.name);
    env->device.sm_count = id.sm_count;
    env->device.cc_major = id.cc_major;
    env->device.cc_minor = id.cc_minor;
    env->device.driver_version = id.driver_version;
  }
  db_toolkit_string(env->toolkit, sizeof env->toolkit, NULL);
  return job_env_reload(env, d, err);
}

void job_env_free(job_env *env) {
  free_winners(env);
  free_runs(env);
  free(env->tv);
  free(env->run_by_problem);
  free(env->win_by_problem);
  for (int i = 0; i < env->nmans; i++) manifest_free(env->mans[i]);
  free(env->mans);
  for (size_t i = 0; i < env->memocap; i++) {
    free(env->memo[i].key);
    free(env->memo[i].why);
  }
  free(env->memo);
  memset(env, 0, sizeof *env);
}

/* The template's version in the template path now, as tune.c hashes it. */
static const job_tversion *template_version(job_env *env, const char *name) {
  for (size_t i = 0; i < env->ntv; i++)
    if (!strcmp(env->tv[i].name, name)) return &env->tv[i];
  if (env->ntv == env->tvcap) {
    size_t cap = env->tvcap ? 2 * env->tvcap : 16;
    job_tversion *g = realloc(env->tv, cap * sizeof *g);
    if (!g) return NULL;
    env->tv = g;
    env->tvcap = cap;
  }
  job_tversion *t = &env->tv[env->ntv++];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  manifest *m = NULL;
  char *src = NULL;
  if (catalog_find(NULL, name, &m, NULL) == RT_OK && manifest_read_source(m, &src, NULL) == RT_OK) {
    unsigned char dg[32];
    sha256(src, strlen(src), dg);
    sha256_hex(dg, t->source_hash);
    if (sha256_file(manifest_path(m), t->manifest_hash)) t->manifest_hash[0] = 0;
    t->found = 1;
  }
  free(src);
  manifest_free(m);
  return t;
}

/* ---- the spaces: is a problem's target left any configuration? ---- */

/* Every manifest of the template path, read once (a path that cannot be listed: none). */
static void read_manifests(job_env *env) {
  if (env->mans_read) return;
  env->mans_read = 1;
  char **paths = NULL;
  int n = 0;
  if (catalog_list(NULL, &paths, &n, NULL)) return;
  env->mans = calloc(n ? (size_t)n : 1, sizeof *env->mans);
  for (int i = 0; env->mans && i < n; i++)
    if (manifest_load(paths[i], &env->mans[env->nmans], NULL) == RT_OK) env->nmans++;
  catalog_list_free(paths, n);
}

/* The template's answer for problem p: 1 when its space is empty (why filled), 0 when it has a
 * configuration, -1 when it is not tuned here (its dtype, architecture or an error: tune says
 * those itself). */
static int template_empty(const job_env *env, const family_ops *fam, const problem *p,
                          const manifest *m, char *why, size_t size) {
  if (!manifest_has_dtype(m, p->dtype)) return -1;
  rt_vars v;
  rt_error e = {0};
  if (problem_env(fam, p, arch_spec_find(env->arch), env->have_gpu ? &env->gpu : NULL, &v, &e))
    return -1;
  if (env->sm_count > 0) rt_vars_set(&v, "device.sm_count", env->sm_count);
  rt_status s = manifest_space_check(m, &v, &e);
  if (s == RT_ERR_SPACE_EMPTY) snprintf(why, size, "%.300s", e.text);
  return s == RT_ERR_SPACE_EMPTY ? 1 : s ? -1 : 0;
}

/* Whether problem q's target has no valid configuration (the reason into why), computed. */
static int space_empty(job_env *env, const job_problem *q, char *why, size_t size) {
  const family_ops *fam = family_find(q->family);
  problem p;
  if (!fam || fam->parse_shape(fam, q->shape, q->dtype, NULL, &p, NULL)) return 0;
  if (!q->is_template && env->runs_kernels && fam->library_list) return 0; /* the library serves */
  read_manifests(env);
  int met = 0;
  size_t n = 0;
  why[0] = 0;
  for (int i = 0; i < env->nmans; i++) {
    const manifest *m = env->mans[i];
    if (q->is_template ? strcmp(manifest_name(m), q->target)
                       : strcmp(manifest_family(m), fam->name) ||
                             (fam->reference && !strcmp(manifest_name(m), fam->reference)))
      continue;
    char one[320];
    int r = template_empty(env, fam, &p, m, one, sizeof one);
    if (r == 0) return 0;
    if (r < 0) continue;
    met++;
    if (q->is_template) { /* the first of that name is the one tuned */
      snprintf(why, size, "%s", one);
      return 1;
    }
    /* as tune notes it: "NAME: "constraint" is false ..." */
    const char *tail = strstr(one, ": \"");
    if (n < size)
      n += (size_t)snprintf(why + n, size - n, "%s%s%s", n ? "; " : "", manifest_name(m),
                            tail ? tail : ": no valid configuration");
  }
  if (!met) return 0;
  if (!q->is_template) {
    char all[320];
    snprintf(all, sizeof all, "no %s template has a valid configuration: %s", fam->name, why);
    snprintf(why, size, "%s", all);
  }
  return 1;
}

static uint64_t memo_hash(const char *k) {
  uint64_t h = 1469598103934665603ull;
  for (; *k; k++) h = (h ^ (unsigned char)*k) * 1099511628211ull;
  return h;
}

/* space_empty once per distinct (target, shape, dtype, layout); *why into env (or NULL). */
static int space_empty_memo(job_env *env, const job_problem *q, const char **why) {
  char key[512];
  snprintf(key, sizeof key, "%s\x1f%s\x1f%s\x1f%s", q->target, q->key_shape, q->dtype, q->layout);
  *why = NULL;
  if (2 * (env->nmemo + 1) > env->memocap) { /* grow: rehash every entry */
    size_t cap = env->memocap ? 2 * env->memocap : 64;
    job_space_memo *g = calloc(cap, sizeof *g);
    if (!g) {
      char text[320];
      return space_empty(env, q, text, sizeof text);
    }
    for (size_t i = 0; i < env->memocap; i++) {
      if (!env->memo[i].key) continue;
      size_t h = memo_hash(env->memo[i].key) & (cap - 1);
      while (g[h].key) h = (h + 1) & (cap - 1);
      g[h] = env->memo[i];
    }
    free(env->memo);
    env->memo = g;
    env->memocap = cap;
  }
  size_t h = memo_hash(key) & (env->memocap - 1);
  while (env->memo[h].key && strcmp(env->memo[h].key, key)) h = (h + 1) & (env->memocap - 1);
  job_space_memo *e = &env->memo[h];
  if (!e->key) {
    char text[320];
    e->empty = space_empty(env, q, text, sizeof text);
    e->why = e->empty ? strdup(text) : NULL;
    e->key = strdup(key);
    env->nmemo++;
  }
  *why = e->why;
  return e->empty;
}

static int same_problem(const job_problem *q, const char *family, const char *shape,
                        const char *dtype, const char *layout) {
  return !strcmp(q->family, family) && !strcmp(q->key_shape, shape) && !strcmp(q->dtype, dtype) &&
         !strcmp(q->layout, layout);
}

int job_run_is_recheck(const db_run_info *r) {
  return strncmp(r->command, "rooftune recheck (", 18) == 0;
}

/* The winners of problem q on this GPU model (any driver or toolkit when all is set). */
static int winner_matches(const job *j, const job_problem *q, const job_env *env,
                          const job_winner *e, int all) {
  if (!same_problem(q, e->family, e->shape, e->dtype, e->layout)) return 0;
  if (q->is_template && strcmp(e->template_name, q->target)) return 0;
  /* env keeps only the winners of its GPU model (keep_winner) */
  if (all) return 1;
  if (e->template_stale) return 0; /* a newer version of its template has been tuned since */
  if (j->fresh.driver && e->driver_version != env->device.driver_version) return 0;
  if (j->fresh.toolkit && strcmp(e->toolkit, env->toolkit)) return 0;
  return 1;
}

size_t job_current_winners(const job *j, size_t k, const job_env *env, const job_winner **out,
                           size_t cap) {
  size_t n = 0, lo, hi;
  key_range(env, 0, problem_key(&j->problems[k]), &lo, &hi);
  for (size_t x = lo; x < hi; x++) {
    const job_winner *e = &env->winners[env->win_by_problem[x]];
    if (winner_matches(j, &j->problems[k], env, e, 0)) {
      if (n < cap) out[n] = e;
      n++;
    }
  }
  return n;
}

/* A tuning run of problem k on this device (and toolkit) that counts for shard s. */
static int tuning_run(const job *j, size_t k, job_shard s, const job_env *env,
                      const job_run_rec *r) {
  const job_problem *q = &j->problems[k];
  if (r->recheck || !same_problem(q, r->family, r->shape, r->dtype, r->layout)) return 0;
  /* env keeps only the runs of its GPU model (keep_run) */
  if (j->fresh.driver && r->driver_version != env->device.driver_version) return 0;
  if (j->fresh.toolkit && strcmp(r->toolkit, env->toolkit)) return 0;
  if (job_problem_split(j, k, s)) {
    char tag[160];
    job_shard_tag(j, s, tag, sizeof tag);
    if (!strstr(r->command, tag)) return 0;
  }
  return 1;
}

static void state_of(const job *j, size_t k, job_shard s, job_env *env, job_state *out) {
  const job_problem *q = &j->problems[k];
  memset(out, 0, sizeof *out);
  out->age_s = NAN;
  out->budget = q->budget;
  if (job_problem_split(j, k, s)) out->budget = (q->budget + s.count - 1) / s.count;
  out->left = out->budget;

  /* the runs: the latest chain of interrupted (or abandoned) ones, the last complete one */
  const job_run_rec *last = NULL, *last_done = NULL;
  long chain = 0; /* results of the trailing interrupted runs */
  int in_chain = 0, nruns = 0, stored = 0;
  size_t lo, hi;
  key_range(env, 1, problem_key(q), &lo, &hi);
  for (size_t x = lo; x < hi; x++) {
    const job_run_rec *r = &env->runs[env->run_by_problem[x]];
    if (!tuning_run(j, k, s, env, r)) continue;
    nruns++;
    stored += r->results > 0;
    last = r;
    if (!strcmp(r->status, "interrupted") || !strcmp(r->status, "running")) {
      if (!in_chain) chain = 0;
      in_chain = 1;
      chain += (long)r->results;
    } else {
      in_chain = 0;
      if (!strcmp(r->status, "done")) last_done = r;
    }
  }
  /* the winners */
  const job_winner *cur[64];
  size_t ncur = job_current_winners(j, k, env, cur, 64);
  if (ncur > 64) ncur = 64;
  const job_winner *any = NULL;
  key_range(env, 0, problem_key(q), &lo, &hi);
  for (size_t x = lo; x < hi; x++)
    if (winner_matches(j, q, env, &env->winners[env->win_by_problem[x]], 1))
      any = &env->winners[env->win_by_problem[x]];
  for (size_t i = 0; i < ncur; i++)
    if (!out->best || cur[i]->time_ms < out->best->time_ms) out->best = cur[i];
  double done_at = last_done ? job_iso_time(last_done->finished_at) : NAN;
  if (isnan(done_at))
    for (size_t i = 0; i < ncur; i++) {
      double t = job_iso_time(cur[i]->created_at);
      if (isnan(done_at) || t > done_at) done_at = t;
    }
  out->age_s = isnan(done_at) ? NAN : env->now - done_at;

  if (in_chain && chain < out->budget) {
    out->kind = JOB_STATE_INTERRUPTED;
    out->left = out->budget - chain;
    snprintf(out->reason, sizeof out->reason,
             "the round stopped after %ld of %ld evaluations (run %lld %s)", chain, out->budget,
             last->id, last->status);
    return;
  }
  if (last && !strcmp(last->status, "failed")) {
    out->kind = JOB_STATE_FAILED;
    snprintf(out->reason, sizeof out->reason, "the last run (%lld) failed", last->id);
    return;
  }
  if (ncur == 0) {
    if (any) {
      out->kind = JOB_STATE_STALE;
      if (j->fresh.toolkit && strcmp(any->toolkit, env->toolkit))
        snprintf(out->reason, sizeof out->reason, "tuned with another toolkit (%.80s; now %.80s)",
                 any->toolkit, env->toolkit);
      else
        snprintf(out->reason, sizeof out->reason, "tuned under driver %d (now %d)",
                 any->driver_version, env->device.driver_version);
      return;
    }
    if (nruns && !stored && job_problem_split(j, k, s) && !strcmp(last->status, "done")) {
      /* this shard's part of the space is empty (more shards than configurations) */
      out->kind = JOB_STATE_FRESH;
      snprintf(out->reason, sizeof out->reason,
               "shard %d/%d holds no configuration of this problem's space", s.index, s.count);
      return;
    }
    if (nruns) {
      out->kind = JOB_STATE_FAILED;
      snprintf(out->reason, sizeof out->reason, "no candidate has succeeded (%d run%s)", nruns,
               nruns > 1 ? "s" : "");
      return;
    }
    out->kind = JOB_STATE_NEVER;
    return;
  }

  if (j->fresh.template_version)
    for (size_t i = 0; i < ncur; i++) {
      if (!cur[i]->source_hash[0]) continue; /* a library winner: no template */
      const job_tversion *t = template_version(env, cur[i]->template_name);
      if (!t || !t->found) continue; /* no longer in the template path: nothing to retune */
      if (strcmp(t->source_hash, cur[i]->source_hash) ||
          strcmp(t->manifest_hash, cur[i]->manifest_hash)) {
        out->kind = JOB_STATE_STALE;
        snprintf(out->reason, sizeof out->reason, "template %s changed since its winner was tuned",
                 cur[i]->template_name);
        return;
      }
    }
  if (j->fresh.max_age_s > 0 && out->age_s > j->fresh.max_age_s) {
    char a[32], m[32];
    job_format_duration(out->age_s, a, sizeof a);
    job_format_duration(j->fresh.max_age_s, m, sizeof m);
    out->kind = JOB_STATE_STALE;
    snprintf(out->reason, sizeof out->reason, "tuned %s ago (max_age %s)", a, m);
    return;
  }
  out->kind = JOB_STATE_FRESH;
}

void job_state_of(const job *j, size_t k, job_shard s, job_env *env, job_state *out) {
  state_of(j, k, s, env, out);
  /* nothing stored for this GPU model (never tuned, failed or interrupted): anything to tune? */
  if (out->best || out->kind == JOB_STATE_STALE || out->kind == JOB_STATE_FRESH) return;
  const char *why = NULL;
  if (space_empty_memo(env, &j->problems[k], &why)) {
    out->empty = 1;
    snprintf(out->reason, sizeof out->reason, "the space is empty: %.298s", why ? why : "");
  }
}

/* What a recheck of a winner is matched by, from a db_entry or a job_winner. */
typedef struct recheck_key {
  const char *family, *shape, *dtype, *layout, *device, *toolkit, *template_name, *config;
  int driver_version;
  double time_ms, spread;
} recheck_key;

/* 1 when run r (its fields, from a db_run_info or a job_run) is a recheck of key e with a
 * result. */
static int rechecks(const recheck_key *e, int recheck, long long results, const char *family,
                    const char *shape, const char *dtype, const char *layout, const char *dev,
                    int driver, const char *toolkit, const char *tmpl, const char *config) {
  return recheck && results && !strcmp(family, e->family) && !strcmp(shape, e->shape) &&
         !strcmp(dtype, e->dtype) && !strcmp(layout, e->layout) && !strcmp(dev, e->device) &&
         driver == e->driver_version && !strcmp(toolkit, e->toolkit) &&
         !strcmp(tmpl, e->template_name) && !strcmp(config, e->config);
}

/* The verdict of a recheck's last result against key e. */
static recheck_verdict verdict_of(const recheck_key *e, const char *status, double ms,
                                  double spread, double tol) {
  if (strcmp(status, "OK") || isnan(ms)) return RECHECK_FAILS;
  return recheck_compare(e->time_ms, e->spread, ms, spread, tol);
}

/* The recheck of e among runs (every one), n of them. */
static const db_run_info *last_recheck(const recheck_key *e, const db_run_info *runs, size_t n,
                                       double tol, recheck_verdict *verdict) {
  const db_run_info *found = NULL;
  for (size_t i = 0; i < n; i++) {
    const db_run_info *r = &runs[i];
    if (rechecks(e, job_run_is_recheck(r), r->results, r->family, r->shape, r->dtype, r->layout,
                 r->device.name, r->device.driver_version, r->toolkit, r->last_template,
                 r->last_config))
      found = r;
  }
  if (found && verdict)
    *verdict = verdict_of(e, found->last_status, found->last_ms, found->last_spread, tol);
  return found;
}

const db_run_info *job_last_recheck(const db_entry *e, const db_run_info *runs, size_t nruns,
                                    double tol, recheck_verdict *verdict) {
  recheck_key k = {e->family,        e->shape,       e->dtype,
                   e->layout,        e->device.name, e->toolkit,
                   e->template_name, e->config,      e->device.driver_version,
                   e->time_ms,       e->spread};
  return last_recheck(&k, runs, nruns, tol, verdict);
}

const job_run_rec *job_env_last_recheck(const job_env *env, const job_winner *e, double tol,
                                        recheck_verdict *verdict) {
  size_t lo, hi;
  key_range(env, 1, win_key(e), &lo, &hi);
  recheck_key k = {e->family,         e->shape,   e->dtype,         e->layout,
                   env->device.name,  e->toolkit, e->template_name, e->config,
                   e->driver_version, e->time_ms, e->spread};
  const job_run_rec *found = NULL;
  for (size_t x = lo; x < hi; x++) { /* env keeps only its GPU model's runs */
    const job_run_rec *r = &env->runs[env->run_by_problem[x]];
    if (rechecks(&k, r->recheck, r->results, r->family, r->shape, r->dtype, r->layout,
                 env->device.name, r->driver_version, r->toolkit, r->last_template, r->last_config))
      found = r;
  }
  if (found && verdict)
    *verdict = verdict_of(&k, found->last_status, found->last_ms, found->last_spread, tol);
  return found;
}
