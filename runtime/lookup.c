/* lookup.c — the database handle, its in-memory index of winners, the serving rules of
 * rooftune.h (exact, nearest admissible within the cap, next admissible, vendor library) and the
 * cache of earlier answers. */
#include <cublasLt.h>
#include <cuda.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/runtime.h"

struct rt_index_entry {
  const db_entry *e; /* the winner */
  family_coords c;   /* its serving coordinates */
  char layout[8];    /* normalized layout */
  int timing_rank;   /* 0 measured, 1 replayed, 2 predicted */
  int recipe_state;  /* 0 not read yet, 1 read, 2 has none */
  int cubin_state;   /* 0 not checked yet, 1 its bytes have the SHA-256 stored with it */
  db_recipe recipe;  /* when read */
};

struct rt_cache_slot {
  char *key;         /* the query, as text; NULL when free */
  rooftune_match *m; /* the answer */
};

#define CACHE_SLOTS 2048 /* a power of two; the cache starts over when half full */

void rt_toolkit(char *buf, size_t size) {
  snprintf(buf, size, "cuda %d.%d, nvrtc %d.%d, cublaslt %zu", CUDA_VERSION / 1000,
           CUDA_VERSION % 1000 / 10, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10,
           cublasLtGetVersion());
}

int rooftune_open(const char *path, rooftune_db **out) {
  if (!out) return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_open: out is NULL");
  *out = NULL;
  rt_error err = {0};
  db *d = NULL;
  if (db_open(path, DB_READONLY, &d, &err)) return rt_fail_err(&err);
  rooftune_db *r = calloc(1, sizeof *r);
  if (!r) {
    db_close(d);
    return rt_fail(ROOFTUNE_ERR_NOMEM, "out of memory opening %s", path);
  }
  r->d = d;
  rt_toolkit(r->toolkit, sizeof r->toolkit);
  pthread_mutex_init(&r->mu, NULL);
  *out = r;
  return ROOFTUNE_OK;
}

static void cache_clear(rooftune_db *r) {
  if (!r->cache) return;
  for (size_t i = 0; i < CACHE_SLOTS; i++) {
    free(r->cache[i].key);
    free(r->cache[i].m);
    r->cache[i].key = NULL;
    r->cache[i].m = NULL;
  }
  r->cached = 0;
}

static void index_drop(rooftune_db *r) {
  for (size_t i = 0; i < r->n; i++) db_recipe_free(&r->idx[i].recipe);
  free(r->entries);
  free(r->idx);
  cache_clear(r);
  free(r->cache);
  r->cache = NULL;
  r->entries = NULL;
  r->idx = NULL;
  r->n = 0;
  r->indexed = 0;
}

void rooftune_close(rooftune_db *r) {
  if (!r) return;
  for (int i = 0; i < r->nkernels; i++) rooftune_kernel_free(r->kernels[i].k);
  index_drop(r);
  db_close(r->d);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

int rooftune_reload(rooftune_db *r) {
  if (!r) return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_reload: db is NULL");
  pthread_mutex_lock(&r->mu);
  index_drop(r);
  pthread_mutex_unlock(&r->mu);
  return ROOFTUNE_OK;
}

static int timing_rank(timing_kind t) {
  return t == TIMING_MEASURED ? 0 : t == TIMING_REPLAYED ? 1 : 2;
}

/* Under the lock: reads every winner (without cubins or recipes) into the index. */
static int index_build(rooftune_db *r) {
  if (r->indexed) return ROOFTUNE_OK;
  rt_error err = {0};
  db_entry *e = NULL;
  size_t n = 0;
  if (db_entries(r->d, 0, &e, &n, &err)) return rt_fail_err(&err);
  rt_index_entry *idx = calloc(n ? n : 1, sizeof *idx);
  r->cache = calloc(CACHE_SLOTS, sizeof *r->cache);
  if (!idx || !r->cache) {
    free(e);
    free(idx);
    free(r->cache);
    r->cache = NULL;
    return rt_fail(ROOFTUNE_ERR_NOMEM, "out of memory indexing %s", db_path(r->d));
  }
  problem p;
  for (size_t i = 0; i < n; i++) {
    const rt_family fam = rt_family_get(e[i].family), *f = &fam;
    idx[i].e = &e[i];
    rt_problem_from_entry(&e[i], &p);
    rt_coords_of(f, &p, &idx[i].c);
    const char *colon = strchr(e[i].shape, ':');
    const char *lay = e[i].layout[0]                  ? e[i].layout
                      : f->default_layout[0] && colon ? colon + 1
                                                      : f->default_layout;
    rt_copy(idx[i].layout, sizeof idx[i].layout, lay);
    idx[i].timing_rank = timing_rank(e[i].timing);
  }
  r->entries = e;
  r->idx = idx;
  r->n = n;
  r->indexed = 1;
  return ROOFTUNE_OK;
}

/* ---- the serving rules ------------------------------------------------------------------ */

typedef struct candidate {
  rt_index_entry *x; /* the winner */
  double dist;       /* its distance to the query */
  unsigned mis;      /* its mismatch bits */
  int exact;         /* tuned for the queried shape */
} candidate;

/* The ranking of rooftune.h: exact first, distance, agreeing provenance, how the time was
 * obtained, the time, the age. */
static int rank_cmp(const void *pa, const void *pb) {
  const candidate *a = pa, *b = pb;
  if (a->exact != b->exact) return a->exact ? -1 : 1;
  if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
  if ((a->mis != 0) != (b->mis != 0)) return a->mis ? 1 : -1;
  if (a->x->timing_rank != b->x->timing_rank) return a->x->timing_rank - b->x->timing_rank;
  double ta = isnan(a->x->e->time_ms) ? INFINITY : a->x->e->time_ms;
  double tb = isnan(b->x->e->time_ms) ? INFINITY : b->x->e->time_ms;
  if (ta != tb) return ta < tb ? -1 : 1;
  return a->x->e->winner_id < b->x->e->winner_id ? -1 : a->x->e->winner_id > b->x->e->winner_id;
}

/* 1 when this library can run winner e: its cubin, or a library winner of a vendor library it
 * calls (cuBLASLt always; cuDNN where it loads, attention_library.c). */
static int launchable(const db_entry *e) {
  if (e->launch.cubin_size && e->launch.entry[0]) return 1;
  if (!e->launch.library_algo[0]) return 0;
  return strcmp(e->family, "attention") ? 1 : rt_attention_library_available();
}

/* Why a winner has nothing to launch. */
static void nothing_to_launch(const db_entry *e, char *why, size_t size) {
  if (e->launch.library_algo[0])
    snprintf(why, size, "a %s library winner, and %s cannot be loaded here", e->template_name,
             e->template_name);
  else
    snprintf(why, size, "nothing to launch: no cubin stored (%s on %s)",
             timing_kind_name(e->timing), e->device.name);
}

/* 1 when winner e may be launched for a query with FLAGS: verified, or unverified ones allowed. */
static int trusted(const db_entry *e, int flags) {
  return e->verified || (flags & ROOFTUNE_ALLOW_UNVERIFIED);
}

/* Why an unverified winner is not launched. */
static void not_verified(const db_entry *e, char *why, size_t size) {
  if (!strcmp(e->checked_on, "sim")) {
    snprintf(why, size,
             "not verified: checked on the sim (%s), its output never checked on a GPU "
             "(tune it on a GPU; ROOFTUNE_ALLOW_UNVERIFIED serves it anyway)",
             e->device.name);
    return;
  }
  snprintf(why, size,
           "not verified: %s on %s, its output was never checked against the reference "
           "(tune it on a GPU; ROOFTUNE_ALLOW_UNVERIFIED serves it anyway)",
           timing_kind_name(e->timing), e->device.name);
}

/* Adds a passed-over line to m. */
static void passed(rooftune_match *m, const candidate *c, const char *why) {
  m->passed_count++;
  size_t used = strlen(m->passed_over);
  char line[640];
  snprintf(line, sizeof line, "%s %s (distance %.3g): %s\n", c->x->e->template_name, c->x->e->shape,
           c->dist, why);
  if (used + strlen(line) + 24 < sizeof m->passed_over) {
    memcpy(m->passed_over + used, line, strlen(line) + 1);
  } else if (!strstr(m->passed_over, "... and ")) {
    snprintf(m->passed_over + used, sizeof m->passed_over - used, "... and more\n");
  }
}

static void fill_from(const candidate *c, int flags, rooftune_match *m) {
  const db_entry *e = c->x->e;
  m->match = c->exact ? ROOFTUNE_MATCH_EXACT : ROOFTUNE_MATCH_NEAREST;
  m->mismatch = c->mis;
  m->distance = c->dist;
  rt_copy(m->family, sizeof m->family, e->family);
  rt_copy(m->shape, sizeof m->shape, e->shape);
  rt_copy(m->dtype, sizeof m->dtype, e->dtype);
  rt_copy(m->layout, sizeof m->layout, c->x->layout);
  rt_copy(m->template_name, sizeof m->template_name, e->template_name);
  rt_copy(m->template_hash, sizeof m->template_hash, e->source_hash);
  rt_copy(m->config, sizeof m->config, e->config);
  rt_copy(m->device, sizeof m->device, e->device.name);
  m->cc_major = e->device.cc_major;
  m->cc_minor = e->device.cc_minor;
  m->sm_count = e->device.sm_count;
  rt_copy(m->toolkit, sizeof m->toolkit, e->toolkit);
  rt_copy(m->timing, sizeof m->timing, timing_kind_name(e->timing));
  m->time_ms = e->time_ms;
  m->spread = e->spread;
  rt_copy(m->entry, sizeof m->entry, e->launch.entry);
  rt_copy(m->arch, sizeof m->arch, e->launch.arch);
  m->cubin_size = e->launch.cubin_size;
  rt_copy(m->library_algo, sizeof m->library_algo, e->launch.library_algo);
  rt_copy(m->vars, sizeof m->vars, e->launch.vars);
  m->id = e->winner_id;
  m->verified = e->verified;
  snprintf(m->checked_on, sizeof m->checked_on, "%s", e->checked_on);
  m->runnable = launchable(e) && trusted(e, flags);
}

/* Under the lock: 1 when winner x has no cubin or one whose bytes have the SHA-256 stored with
 * it (checked once per index); else 0 with why naming the winner (db_winner_cubin's words): a
 * damaged cubin is passed over like any winner that cannot serve, and the next rule is tried. */
static int intact(rooftune_db *r, rt_index_entry *x, char *why, size_t size) {
  if (!x->e->launch.cubin_size || x->cubin_state == 1) return 1;
  void *cubin = NULL;
  size_t n = 0;
  rt_error err = {0};
  rt_status s = db_winner_cubin(r->d, x->e->winner_id, &cubin, &n, &err);
  free(cubin);
  if (s) {
    snprintf(why, size, "%.500s", err.text);
    return 0;
  }
  x->cubin_state = 1;
  return 1;
}

/* What admits() decided about a candidate, as a value (the count of unverified winners passed
 * over comes from it, never from the wording of why). */
typedef enum admit_outcome {
  ADMIT_NO,         /* passed over, why says so */
  ADMIT_YES,        /* admitted: m's geometry filled */
  ADMIT_UNVERIFIED, /* passed over because its output was never checked (ROOFTUNE_RUNNABLE) */
} admit_outcome;

/* Under the lock: whether candidate c admits the queried problem, with why when it does not. */
static admit_outcome admits(rooftune_db *r, const rt_family *f, const candidate *c,
                            const problem *qp, int flags, rooftune_match *m, char *why,
                            size_t size) {
  const db_entry *e = c->x->e;
  if ((flags & ROOFTUNE_RUNNABLE) && !launchable(e)) {
    nothing_to_launch(e, why, size);
    return ADMIT_NO;
  }
  if ((flags & ROOFTUNE_RUNNABLE) && !trusted(e, flags)) {
    not_verified(e, why, size);
    return ADMIT_UNVERIFIED;
  }
  if ((flags & ROOFTUNE_RUNNABLE) && !intact(r, c->x, why, size)) return ADMIT_NO;
  if (c->exact) {
    for (int k = 0; k < 3; k++) {
      m->grid[k] = e->launch.grid_v[k];
      m->block[k] = e->launch.block_v[k];
    }
    m->smem = e->launch.smem_v;
    m->geometry_ok = m->grid[0] > 0 && m->block[0] > 0;
    if (e->launch.cubin_size && !m->geometry_ok) {
      snprintf(why, size, "no launch geometry is stored with its cubin");
      return ADMIT_NO;
    }
    return ADMIT_YES;
  }
  if (e->launch.library_algo[0]) return ADMIT_YES; /* cuBLASLt checks the algorithm at call time */
  if (c->x->recipe_state == 0) {
    rt_error err = {0};
    rt_status s = db_winner_recipe(r->d, e->winner_id, &c->x->recipe, &err);
    c->x->recipe_state = s == RT_OK ? 1 : 2;
    if (s && s != RT_ERR_NOT_FOUND) {
      snprintf(why, size, "its serving recipe does not read: %.300s", err.text);
      c->x->recipe_state = 0;
      return ADMIT_NO;
    }
  }
  if (c->x->recipe_state != 1) {
    snprintf(why, size,
             "stored without constraints (before schema 4, or an import): served for its own shape "
             "only");
    return ADMIT_NO;
  }
  if (!rt_geometry(f, e, &c->x->recipe, qp, m->grid, m->block, &m->smem, why, size))
    return ADMIT_NO;
  m->geometry_ok = 1;
  return ADMIT_YES;
}

/* The distance cap: the query's, else $ROOFTUNE_NEAREST_MAX, else the default. */
static int nearest_cap(const rooftune_query *q, double *cap) {
  if (!(q->nearest_max >= 0) ||
      isinf(q->nearest_max)) /* negative or NaN meant the default silently */
    return rt_fail(ROOFTUNE_ERR_INVALID,
                   "query.nearest_max %g is not a distance cap (a finite number >= 0; 0 for "
                   "$ROOFTUNE_NEAREST_MAX or the default %g)",
                   q->nearest_max, ROOFTUNE_NEAREST_MAX_DEFAULT);
  if (q->nearest_max > 0) {
    *cap = q->nearest_max;
    return ROOFTUNE_OK;
  }
  const char *env = getenv("ROOFTUNE_NEAREST_MAX");
  if (env && *env) {
    char *end;
    errno = 0;
    double v = strtod(env, &end);
    if (*end || errno || !(v >= 0) || isinf(v))
      return rt_fail(ROOFTUNE_ERR_INVALID,
                     "ROOFTUNE_NEAREST_MAX='%s' is not a distance (a number >= 0, "
                     "e.g. %g)",
                     env, ROOFTUNE_NEAREST_MAX_DEFAULT);
    *cap = v;
    return ROOFTUNE_OK;
  }
  *cap = ROOFTUNE_NEAREST_MAX_DEFAULT;
  return ROOFTUNE_OK;
}

/* The options of a canonical shape text: from its first '+' on ("" when none). */
static const char *shape_options(const char *shape) {
  const char *plus = strchr(shape, '+');
  return plus ? plus : "";
}

/* The vendor libraries this build falls back to, by their family_ops.library name. */
typedef struct rt_vendor {
  const char *name;       /* "cublaslt" */
  int (*available)(void); /* NULL: always */
} rt_vendor;

static const rt_vendor vendors[] = {
    {"cublaslt", NULL},
    {"cudnn", rt_attention_library_available},
};

static const rt_vendor *vendor_of(const char *library) {
  for (size_t i = 0; library && i < sizeof vendors / sizeof vendors[0]; i++)
    if (!strcmp(vendors[i].name, library)) return &vendors[i];
  return NULL;
}

/* Under the lock: walks the ranking (rooftune.h's rules) into m. */
static int serve(rooftune_db *r, const rt_family *f, const rooftune_query *q, const problem *qp,
                 const char *layout, const char *toolkit, double cap, rooftune_match *m) {
  family_coords qc;
  rt_coords_of(f, qp, &qc);
  candidate *cs = malloc((r->n ? r->n : 1) * sizeof *cs);
  if (!cs) return rt_fail(ROOFTUNE_ERR_NOMEM, "out of memory looking up %s", q->shape);
  size_t nc = 0;
  int refused = 0, unverified = 0;
  for (size_t i = 0; i < r->n; i++) {
    rt_index_entry *x = &r->idx[i];
    const db_entry *e = x->e;
    if (strcmp(e->family, q->family) || strcmp(e->dtype, q->dtype) || strcmp(x->layout, layout))
      continue;
    /* the problem's options (gemm: fp8 operand types, vector scales, the fused epilogue) are part
     * of what was tuned: a winner serves only queries with the same ones */
    if (strcmp(shape_options(e->shape), shape_options(qp->shape))) continue;
    if (!e->template_name[0] || isnan(e->time_ms)) continue;
    double dist = rt_coords_distance(&x->c, &qc);
    if (dist < 0) continue;
    int exact = f->ops ? !strcmp(e->shape, qp->shape) : dist == 0;
    if ((q->flags & ROOFTUNE_EXACT_ONLY) && !exact) continue;
    unsigned mis = 0;
    if (q->device && *q->device && !strcasestr(e->device.name, q->device))
      mis |= ROOFTUNE_MISMATCH_DEVICE;
    if (strcmp(e->toolkit, toolkit) != 0) mis |= ROOFTUNE_MISMATCH_TOOLKIT;
    if (e->template_stale) mis |= ROOFTUNE_MISMATCH_TEMPLATE;
    if (mis && !(q->flags & ROOFTUNE_ALLOW_MISMATCH)) {
      refused++;
      continue;
    }
    cs[nc++] = (candidate){x, exact ? 0 : dist, mis, exact};
  }
  qsort(cs, nc, sizeof *cs, rank_cmp);
  m->nearest_max = cap;
  char why[512];
  size_t k;
  for (k = 0; k < nc; k++) {
    if (!cs[k].exact && cs[k].dist > cap) { /* this one and all after it are beyond the cap */
      snprintf(why, sizeof why, "distance %.3g is over the cap %.3g (ROOFTUNE_NEAREST_MAX)",
               cs[k].dist, cap);
      passed(m, &cs[k], why);
      if (nc - k > 1) {
        size_t used = strlen(m->passed_over);
        snprintf(m->passed_over + used, sizeof m->passed_over - used,
                 "... and %zu more beyond the cap\n", nc - k - 1);
        m->passed_count += (int)(nc - k - 1);
      }
      k = nc;
      break;
    }
    why[0] = '\0';
    admit_outcome a = admits(r, f, &cs[k], qp, q->flags, m, why, sizeof why);
    if (a == ADMIT_YES) break;
    unverified += a == ADMIT_UNVERIFIED;
    memset(m->grid, 0, sizeof m->grid);
    memset(m->block, 0, sizeof m->block);
    m->smem = 0;
    m->geometry_ok = 0;
    passed(m, &cs[k], why);
  }
  if (k < nc) {
    fill_from(&cs[k], q->flags, m);
    /* a damaged cubin is never called runnable, whether or not the query asked for one */
    if (m->runnable && !intact(r, cs[k].x, why, sizeof why)) m->runnable = 0;
    m->rule = cs[k].exact       ? ROOFTUNE_RULE_EXACT
              : m->passed_count ? ROOFTUNE_RULE_NEXT
                                : ROOFTUNE_RULE_NEAREST;
  } else {
    const rt_vendor *v = vendor_of(f->library);
    const char *lib = v && (!v->available || v->available()) ? f->library : NULL;
    m->rule = lib ? ROOFTUNE_RULE_LIBRARY : ROOFTUNE_RULE_NONE;
    rt_copy(m->library, sizeof m->library, lib);
    size_t n = (size_t)snprintf(m->reason, sizeof m->reason,
                                nc ? "no %stuned winner admits %s %s %s%s%s within distance %.3g"
                                   : "%snothing is tuned for %s %s %s%s%s",
                                unverified ? "verified " : "", q->family, qp->shape, q->dtype,
                                q->device && *q->device ? " on " : "",
                                q->device && *q->device ? q->device : "", cap);
    if (refused && n < sizeof m->reason)
      n += (size_t)snprintf(m->reason + n, sizeof m->reason - n,
                            " (%d winner%s of another device, toolkit or template version refused: "
                            "ROOFTUNE_ALLOW_MISMATCH serves them)",
                            refused, refused > 1 ? "s" : "");
    if (unverified && n < sizeof m->reason)
      n += (size_t)snprintf(
          m->reason + n, sizeof m->reason - n,
          " (%d unverified winner%s passed over: never checked against the reference; "
          "ROOFTUNE_ALLOW_UNVERIFIED serves them)",
          unverified, unverified > 1 ? "s" : "");
    if (n < sizeof m->reason && lib)
      snprintf(m->reason + n, sizeof m->reason - n, "; %s's own choice serves it",
               family_library_label(v->name));
    else if (n < sizeof m->reason && v)
      snprintf(m->reason + n, sizeof m->reason - n,
               "; its vendor library (%s) cannot be loaded here", family_library_label(v->name));
    else if (n < sizeof m->reason && f->library)
      snprintf(m->reason + n, sizeof m->reason - n,
               "; the vendor fallback (%s) is not in this build", f->library);
    else if (n < sizeof m->reason)
      snprintf(m->reason + n, sizeof m->reason - n, "; the family has no vendor library");
  }
  free(cs);
  return ROOFTUNE_OK;
}

int rooftune_set_flags(rooftune_db *r, int flags) {
  if (!r) return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_set_flags: db is NULL");
  if (flags & ~ROOFTUNE_ALLOW_UNVERIFIED)
    return rt_fail(ROOFTUNE_ERR_INVALID,
                   "rooftune_set_flags: flags %#x: only ROOFTUNE_ALLOW_UNVERIFIED (%#x) "
                   "applies to the one-call functions",
                   (unsigned)flags, ROOFTUNE_ALLOW_UNVERIFIED);
  atomic_store(&r->call_flags, flags);
  return ROOFTUNE_OK;
}

int rt_call_flags(rooftune_db *r) { return r ? atomic_load(&r->call_flags) : 0; }

/* The cache's key of query q: every field, at whatever length (malloc'ed; NULL without
 * memory). */
static char *query_key(const rooftune_query *q, double cap) {
  const char *f[] = {q->family,
                     q->dtype,
                     q->layout ? q->layout : "",
                     q->shape,
                     q->device ? q->device : "",
                     q->toolkit ? q->toolkit : ""};
  size_t len = 64;
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) len += strlen(f[i]) + 1;
  char *key = malloc(len);
  if (key)
    snprintf(key, len, "%s|%s|%s|%s|%s|%d|%.17g|%s", f[0], f[1], f[2], f[3], f[4], q->flags, cap,
             f[5]);
  return key;
}

int rooftune_lookup(rooftune_db *r, const rooftune_query *q, rooftune_match *m) {
  if (!r || !q || !m) return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_lookup: NULL argument");
  if (!q->family || !q->shape || !q->dtype) {
    memset(m, 0, sizeof *m);
    return rt_fail(ROOFTUNE_ERR_INVALID, "rooftune_lookup: family, shape and dtype are required");
  }
  double cap = ROOFTUNE_NEAREST_MAX_DEFAULT;
  int rc = nearest_cap(q, &cap);
  if (rc) {
    memset(m, 0, sizeof *m);
    return rc;
  }
  /* the query as given: a repeated one is answered from the cache before anything is parsed */
  char *key = query_key(q, cap); /* the whole query: a key cut short would answer another one */
  if (!key) {
    memset(m, 0, sizeof *m);
    return rt_fail(ROOFTUNE_ERR_NOMEM, "rooftune_lookup: out of memory");
  }
  pthread_mutex_lock(&r->mu);
  if ((rc = index_build(r))) {
    pthread_mutex_unlock(&r->mu);
    free(key);
    memset(m, 0, sizeof *m);
    return rc;
  }
  unsigned long h = (unsigned long)rt_fnv1a(RT_FNV_START, key);
  size_t slot = h & (CACHE_SLOTS - 1);
  while (r->cache[slot].key) {
    if (strcmp(r->cache[slot].key, key) == 0) {
      *m = *r->cache[slot].m;
      pthread_mutex_unlock(&r->mu);
      free(key);
      return ROOFTUNE_OK;
    }
    slot = (slot + 1) & (CACHE_SLOTS - 1);
  }
  memset(m, 0, sizeof *m);
  const rt_family fam = rt_family_get(q->family), *f = &fam;
  static _Thread_local problem qp; /* large (per-sequence lengths): not on the stack */
  rt_error err = {0};
  if (rt_problem_parse(f, q->shape, q->dtype, q->layout, &qp, &err)) {
    pthread_mutex_unlock(&r->mu);
    free(key);
    rt_fail_err(&err);
    return ROOFTUNE_ERR_INVALID;
  }
  rc = serve(r, f, q, &qp, qp.layout, q->toolkit ? q->toolkit : r->toolkit, cap, m);
  if (rc == ROOFTUNE_OK) {
    if (r->cached >= CACHE_SLOTS / 2) { /* keep probing short: start over */
      cache_clear(r);
      slot = h & (CACHE_SLOTS - 1);
    }
    rooftune_match *copy = malloc(sizeof *copy);
    if (copy) {
      *copy = *m;
      r->cache[slot].key = key;
      r->cache[slot].m = copy;
      r->cached++;
      key = NULL;
    }
  }
  pthread_mutex_unlock(&r->mu);
  free(key);
  return rc;
}
