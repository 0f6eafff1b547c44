/* rooftune.c — the public runtime API (rooftune.h) over the tuning database (db.h): the
 * in-memory index, lookups with provenance checks, loading cubins through the run-time-loaded
 * driver, and rooftune_gemm with its cuBLASLt fallback. */
#include "runtime/include/rooftune.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db/db.h"
#include "kernels/family.h"
#include "kernels/gemm.h"
#include "templates/gemm/gemm_epilogue.h"
#include "tuner/driver/cuda_driver.h"
#include "tuner/template/expr.h"
#include "tuner/model/gpu_spec.h"
#include "tuner/template/catalog.h"
#include "tuner/template/manifest.h"
#include "tuner/core/sha256.h"
#include "tuner/version.h"

/* ---- errors ------------------------------------------------------------------------- */

static _Thread_local char last_error[1024];

const char *rooftune_last_error(void) { return last_error; }
const char *rooftune_version(void) { return ROOFTUNE_VERSION; }

const char *rooftune_strerror(int code) {
  switch (code) {
  case ROOFTUNE_OK: return "success";
  case ROOFTUNE_ERR_INVALID: return "invalid argument";
  case ROOFTUNE_ERR_NOMEM: return "out of memory";
  case ROOFTUNE_ERR_IO: return "the database file is missing or unreadable";
  case ROOFTUNE_ERR_NOT_FOUND: return "nothing tuned fits the query";
  case ROOFTUNE_ERR_DB: return "the database is damaged or locked";
  case ROOFTUNE_ERR_DB_FOREIGN: return "the file is not a rooftune database";
  case ROOFTUNE_ERR_DB_VERSION: return "the database schema does not match this library";
  case ROOFTUNE_ERR_NO_DRIVER: return "no CUDA driver on this machine";
  case ROOFTUNE_ERR_NO_GPU: return "no CUDA GPU or no current CUDA context";
  case ROOFTUNE_ERR_CUDA: return "a CUDA driver call failed";
  case ROOFTUNE_ERR_CUBLAS: return "a cuBLASLt call failed";
  case ROOFTUNE_ERR_LAUNCH: return "the kernel launch failed";
  case ROOFTUNE_ERR_UNSUPPORTED: return "not supported";
  case ROOFTUNE_ERR_INTERNAL: return "internal error";
  default: return "unknown status code";
  }
}

/* The public code for an engine status. */
static int public_code(rt_status s) {
  switch (s) {
  case RT_OK: return ROOFTUNE_OK;
  case RT_ERR_NOMEM: return ROOFTUNE_ERR_NOMEM;
  case RT_ERR_IO: return ROOFTUNE_ERR_IO;
  case RT_ERR_NOT_FOUND: return ROOFTUNE_ERR_NOT_FOUND;
  case RT_ERR_DB: return ROOFTUNE_ERR_DB;
  case RT_ERR_DB_FOREIGN: return ROOFTUNE_ERR_DB_FOREIGN;
  case RT_ERR_DB_VERSION: return ROOFTUNE_ERR_DB_VERSION;
  case RT_ERR_NO_DRIVER: return ROOFTUNE_ERR_NO_DRIVER;
  case RT_ERR_NO_GPU: return ROOFTUNE_ERR_NO_GPU;
  case RT_ERR_CUDA: return ROOFTUNE_ERR_CUDA;
  case RT_ERR_CUBLAS: return ROOFTUNE_ERR_CUBLAS;
  case RT_ERR_LAUNCH: return ROOFTUNE_ERR_LAUNCH;
  case RT_ERR_UNSUPPORTED: return ROOFTUNE_ERR_UNSUPPORTED;
  case RT_ERR_USAGE:
  case RT_ERR_PARSE:
  case RT_ERR_INVALID: return ROOFTUNE_ERR_INVALID;
  default: return ROOFTUNE_ERR_INTERNAL;
  }
}

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return code;
}

static int fail_err(const rt_error *err) {
  rt_error_format(err, last_error, sizeof last_error);
  return public_code(err->code);
}

static void copy(char *dst, size_t size, const char *src) {
  if (!size) return;
  size_t n = src ? strlen(src) : 0;
  if (n >= size) n = size - 1;
  if (n) memcpy(dst, src, n);
  dst[n] = '\0';
}

/* ---- shapes ------------------------------------------------------------------------- */

#define SHAPE_MAX 8

/* A shape as numbers: "[BATCH@]d1xd2x...[:LAYOUT][+OPTION...]". */
typedef struct shape_vec {
  long long batch;        /* 1 when absent */
  long long d[SHAPE_MAX]; /* the dimensions in the text's order */
  int n;                  /* how many */
  char layout[8];         /* the suffix after ':' ("" when absent) */
  char opts[64];          /* the options from the first '+' on (gemm: operand types, epilogue),
                             "" when none: a winner serves only queries with the same options */
} shape_vec;

static int parse_num(const char **s, long long *out) {
  if (!isdigit((unsigned char)**s)) return 0;
  char *end;
  long long v = strtoll(*s, &end, 10);
  if (v <= 0) return 0;
  *s = end;
  *out = v;
  return 1;
}

/* 1 when text is a shape. */
static int shape_parse(const char *text, shape_vec *v) {
  memset(v, 0, sizeof *v);
  v->batch = 1;
  if (!text) return 0;
  const char *s = text;
  long long x;
  if (!parse_num(&s, &x)) return 0;
  if (*s == '@') {
    v->batch = x;
    s++;
    if (!parse_num(&s, &x)) return 0;
  }
  v->d[v->n++] = x;
  while (*s == 'x' || *s == 'X') {
    s++;
    if (v->n == SHAPE_MAX || !parse_num(&s, &v->d[v->n])) return 0;
    v->n++;
  }
  if (*s == ':') {
    size_t n = strcspn(s + 1, "+");
    if (n >= sizeof v->layout) return 0;
    memcpy(v->layout, s + 1, n);
    v->layout[n] = '\0';
    s += 1 + n;
  }
  if (*s == '+') {
    if (strlen(s) >= sizeof v->opts) return 0;
    copy(v->opts, sizeof v->opts, s);
    s += strlen(s);
  }
  return *s == '\0';
}

/* The log-distance of rooftune.h; -1 when the shapes have different ranks. */
static double shape_distance(const shape_vec *a, const shape_vec *b) {
  if (a->n != b->n) return -1;
  double dl = log((double)a->batch) - log((double)b->batch), sum = dl * dl;
  for (int i = 0; i < a->n; i++) {
    dl = log((double)a->d[i]) - log((double)b->d[i]);
    sum += dl * dl;
  }
  return sqrt(sum);
}

/* A layout with the family's default filled in: GEMM's default is "nn". */
static void layout_norm(const char *family, const char *layout, char *out, size_t size) {
  if (layout && *layout) copy(out, size, layout);
  else copy(out, size, family && strcmp(family, "gemm") == 0 ? "nn" : "");
}

/* ---- the database handle and its index ------------------------------------------------ */

typedef struct idx_entry {
  const db_entry *e;  /* the winner */
  shape_vec shape;    /* its shape as numbers */
  char layout[8];     /* normalized layout */
  int timing_rank;    /* 0 measured, 1 replayed, 2 predicted */
} idx_entry;

typedef struct cache_slot {
  char *key;          /* the query, as text; NULL when free */
  rooftune_match m;   /* the answer */
} cache_slot;

#define CACHE_SLOTS 4096 /* a power of two; the cache is cleared when half full */

typedef struct loaded {
  long long winner_id; /* which winner */
  double time_ms;      /* its time: a replaced winner (faster, same row) is a new key */
  CUcontext ctx;       /* in which context */
  rooftune_kernel *k;  /* the loaded kernel */
} loaded;

struct rooftune_db {
  db *d;                  /* the open database */
  pthread_mutex_t mu;     /* guards everything below */
  int indexed;            /* the index is built */
  db_entry *entries;      /* db_entries() block */
  idx_entry *idx;         /* one per entry */
  size_t n;               /* entries */
  char toolkit[96];       /* this library's toolkit identity */
  cache_slot *cache;      /* CACHE_SLOTS answers */
  size_t cached;          /* slots used */
  loaded kernels[32];     /* rooftune_gemm's loaded kernels */
  int nkernels;           /* entries used */
};

struct rooftune_kernel {
  CUmodule mod;        /* the loaded module */
  CUfunction fn;       /* its entry */
  unsigned grid[3];    /* the match's geometry (valid when geometry_ok) */
  unsigned block[3];
  unsigned smem;
  int geometry_ok;
};

int rooftune_open(const char *path, rooftune_db **out) {
  if (!out) return fail(ROOFTUNE_ERR_INVALID, "rooftune_open: out is NULL");
  *out = NULL;
  rt_error err = {0};
  db *d = NULL;
  if (db_open(path, DB_READONLY, &d, &err)) return fail_err(&err);
  rooftune_db *r = calloc(1, sizeof *r);
  if (!r) {
    db_close(d);
    return fail(ROOFTUNE_ERR_NOMEM, "out of memory opening %s", path);
  }
  r->d = d;
  pthread_mutex_init(&r->mu, NULL);
  *out = r;
  return ROOFTUNE_OK;
}

static void cache_clear(rooftune_db *r) {
  if (!r->cache) return;
  for (size_t i = 0; i < CACHE_SLOTS; i++) free(r->cache[i].key);
  free(r->cache);
  r->cache = NULL;
  r->cached = 0;
}

static void index_drop(rooftune_db *r) {
  free(r->entries);
  free(r->idx);
  r->entries = NULL;
  r->idx = NULL;
  r->n = 0;
  r->indexed = 0;
  cache_clear(r);
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
  if (!r) return fail(ROOFTUNE_ERR_INVALID, "rooftune_reload: db is NULL");
  pthread_mutex_lock(&r->mu);
  index_drop(r);
  pthread_mutex_unlock(&r->mu);
  return ROOFTUNE_OK;
}

static int timing_rank(timing_kind t) {
  return t == TIMING_MEASURED ? 0 : t == TIMING_REPLAYED ? 1 : 2;
}

/* Under the lock: reads every winner (without cubins) into the index. */
static int index_build(rooftune_db *r) {
  if (r->indexed) return ROOFTUNE_OK;
  rt_error err = {0};
  if (!r->toolkit[0] && db_toolkit_string(r->toolkit, sizeof r->toolkit, &err))
    return fail_err(&err);
  db_entry *e = NULL;
  size_t n = 0;
  if (db_entries(r->d, 0, &e, &n, &err)) return fail_err(&err);
  idx_entry *idx = calloc(n ? n : 1, sizeof *idx);
  r->cache = calloc(CACHE_SLOTS, sizeof *r->cache);
  if (!idx || !r->cache) {
    free(e);
    free(idx);
    free(r->cache);
    r->cache = NULL;
    return fail(ROOFTUNE_ERR_NOMEM, "out of memory indexing %s", db_path(r->d));
  }
  for (size_t i = 0; i < n; i++) {
    idx[i].e = &e[i];
    if (!shape_parse(e[i].shape, &idx[i].shape)) idx[i].shape.n = -1; /* never matches */
    layout_norm(e[i].family, e[i].layout[0] ? e[i].layout : idx[i].shape.layout, idx[i].layout,
                sizeof idx[i].layout);
    idx[i].timing_rank = timing_rank(e[i].timing);
  }
  r->entries = e;
  r->idx = idx;
  r->n = n;
  r->indexed = 1;
  return ROOFTUNE_OK;
}

static unsigned long hash_text(const char *s) {
  unsigned long h = 1469598103934665603UL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211UL;
  return h;
}

/* ---- geometry for a nearest shape ----------------------------------------------------- */

/* Adds "NAME=value,..." pairs to names/values, skipping a name already there (the first value
 * stands: a stored winner written with the tuned shape's values must not override the queried
 * shape); returns the new count. */
static int vars_pairs(const char *text, char names[][48], long long *values, int n, int cap) {
  const char *s = text;
  while (*s && n < cap) {
    const char *eq = strchr(s, '='), *comma;
    if (!eq) break;
    size_t len = (size_t)(eq - s);
    if (len >= 48) len = 47;
    memcpy(names[n], s, len);
    names[n][len] = '\0';
    char *end;
    values[n] = strtoll(eq + 1, &end, 10);
    comma = strchr(eq, ',');
    int seen = 0; /* the first value of a name stands: the queried shape's over a stored one */
    for (int i = 0; i < n && !seen; i++) seen = strcmp(names[i], names[n]) == 0;
    if (end != eq + 1 && !seen) n++;
    if (!comma) break;
    s = comma + 1;
  }
  return n;
}

/* Evaluates the winner's launch expressions for the queried shape q.  The entry's dims text
 * names its dimensions in shape order (BATCH for the batch prefix); that is checked against
 * the entry's own shape before it is used. */
static int nearest_geometry(const idx_entry *x, const shape_vec *q, rooftune_match *m) {
  enum { CAP = 160 };
  char names[CAP][48];
  long long values[CAP];
  int n = vars_pairs(x->e->dims, names, values, 0, SHAPE_MAX + 1);
  int pos = 0, ok = 1;
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i], "BATCH") == 0) {
      ok &= values[i] == x->shape.batch;
      values[i] = q->batch;
    } else {
      ok &= pos < x->shape.n && values[i] == x->shape.d[pos];
      values[i] = pos < q->n ? q->d[pos] : 0;
      pos++;
    }
  }
  if (!ok || pos != x->shape.n) return 0;
  int have_batch = 0;
  for (int i = 0; i < n; i++) have_batch |= strcmp(names[i], "BATCH") == 0;
  if (!have_batch && n < CAP) {
    copy(names[n], sizeof names[n], "BATCH");
    values[n++] = q->batch;
  }
  n = vars_pairs(x->e->launch.vars, names, values, n, CAP);
  if (x->e->device.sm_count > 0 && n < CAP) { /* a persistent grid's size reads it */
    copy(names[n], sizeof names[n], "device.sm_count");
    values[n++] = x->e->device.sm_count;
  }
  const char *ptrs[CAP];
  for (int i = 0; i < n; i++) ptrs[i] = names[i];
  const db_winner *w = &x->e->launch;
  const char *exprs[7] = {w->grid[0], w->grid[1], w->grid[2], w->block[0], w->block[1],
                          w->block[2], w->smem};
  long long out[7];
  /* the launch limits manifest_launch holds tuned geometry to: grid y and z at most 65535 (a
   * large batch times SPLIT_K can pass it; cuBLASLt then serves the call) */
  static const long long most[7] = {0x7fffffffLL, 65535, 65535, 1024, 1024, 64, 0x7fffffffLL};
  for (int i = 0; i < 7; i++) {
    if (!exprs[i][0]) return 0;
    rt_error err = {0};
    if (expr_eval_text(exprs[i], n, ptrs, values, &out[i], &err) || out[i] < 0 ||
        out[i] > most[i])
      return 0;
  }
  for (int k = 0; k < 3; k++) {
    m->grid[k] = (unsigned)out[k];
    m->block[k] = (unsigned)out[3 + k];
  }
  m->smem = (unsigned)out[6];
  return 1;
}

/* 1 when the file's SHA-256 is hex. */
static int file_has_hash(const char *path, const char *hex) {
  char got[65];
  return sha256_file(path, got) == 0 && strcmp(got, hex) == 0;
}

/* The device facts a manifest's expressions read, for the GPU a winner was made on (a real one
 * by compute capability and name, "model:KEY" by its key). */
static int winner_device(const db_entry *e, const arch_spec **arch, const gpu_spec **gpu) {
  int cc = e->device.cc_major * 10 + e->device.cc_minor;
  *gpu = NULL;
  *arch = NULL;
  if (strncmp(e->device.name, "model:", 6) == 0) {
    *gpu = gpu_spec_find(e->device.name + 6);
    if (*gpu) *arch = arch_spec_find((*gpu)->arch);
  } else if (cc) {
    *arch = arch_spec_for_cc(cc);
    *gpu = gpu_spec_match(e->device.name, cc);
  }
  return *arch != NULL;
}

/* Launch geometry for the queried shape from the template's manifest, when the installed
 * manifest is the very version the winner was tuned with (same SHA-256): the configuration's
 * derived values are recomputed for the new shape, its constraints must still hold, and the
 * manifest's launch expressions give grid, block and shared memory.  The cubin itself is
 * shape-free (manifest.h: problem dimensions never reach the source). */
static int manifest_geometry(const idx_entry *x, const char *query, rooftune_match *m) {
  const db_entry *e = x->e;
  const family_ops *fam = family_find(e->family);
  const arch_spec *arch;
  const gpu_spec *gpu;
  if (!fam || !e->manifest_hash[0] || !winner_device(e, &arch, &gpu)) return 0;
  problem p;
  if (fam->parse_shape(fam, query, e->dtype, NULL, &p, NULL)) return 0;
  manifest *mf = NULL;
  if (catalog_find(NULL, e->template_name, &mf, NULL)) return 0;
  int ok = 0;
  space *sp = NULL;
  rt_vars env, vars;
  if (!file_has_hash(manifest_path(mf), e->manifest_hash)) goto done;
  if (problem_env(fam, &p, arch, gpu, &env, NULL) ||
      (e->device.sm_count > 0 && rt_vars_set(&env, "device.sm_count", e->device.sm_count)))
    goto done;
  /* A one-configuration space holding the winner's configuration. */
  sp = space_new();
  int np = manifest_nparams(mf);
  uint16_t cfg[64];
  if (!sp || np > 64) goto done;
  for (int i = 0; i < np; i++) {
    const space_param *par = manifest_param(mf, i);
    if (space_add_param(sp, par->name, par->count, par->ints, (const char *const *)par->idents,
                        NULL))
      goto done;
    char key[80];
    snprintf(key, sizeof key, "%s=", par->name);
    const char *v = NULL;
    for (const char *s = e->config; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL)
      if (strncmp(s, key, strlen(key)) == 0) v = s + strlen(key);
    if (!v) goto done;
    size_t vlen = strcspn(v, ",");
    int found = -1;
    for (int k = 0; k < par->count && found < 0; k++) {
      char text[64];
      if (par->ints) snprintf(text, sizeof text, "%lld", par->ints[k]);
      else snprintf(text, sizeof text, "%s", par->idents[k]);
      if (strlen(text) == vlen && strncmp(text, v, vlen) == 0) found = k;
    }
    if (found < 0) goto done;
    cfg[i] = (uint16_t)found;
  }
  if (space_add_config(sp, cfg, NULL) || space_finish(sp, NULL) ||
      manifest_config_vars(mf, sp, 0, &env, &vars, NULL))
    goto done;
  const char *names[RT_VARS_MAX];
  for (int i = 0; i < vars.count; i++) names[i] = vars.names[i];
  for (int i = 0; i < manifest_nconstraints(mf); i++) {
    long long holds = 0;
    if (expr_eval_text(manifest_constraint(mf, i), vars.count, names, vars.values, &holds, NULL) ||
        !holds)
      goto done; /* not valid for this shape (or not checkable here): no geometry */
  }
  ok = manifest_launch(mf, &vars, m->grid, m->block, &m->smem, NULL) == RT_OK;
done:
  space_free(sp);
  manifest_free(mf);
  return ok;
}

static void fill_match(const idx_entry *x, int kind, double dist, unsigned mismatch,
                       const shape_vec *q, const char *query, rooftune_match *m) {
  const db_entry *e = x->e;
  memset(m, 0, sizeof *m);
  m->match = kind;
  m->mismatch = mismatch;
  m->distance = dist;
  copy(m->family, sizeof m->family, e->family);
  copy(m->shape, sizeof m->shape, e->shape);
  copy(m->dtype, sizeof m->dtype, e->dtype);
  copy(m->layout, sizeof m->layout, x->layout);
  copy(m->template_name, sizeof m->template_name, e->template_name);
  copy(m->template_hash, sizeof m->template_hash, e->source_hash);
  copy(m->config, sizeof m->config, e->config);
  copy(m->device, sizeof m->device, e->device.name);
  m->cc_major = e->device.cc_major;
  m->cc_minor = e->device.cc_minor;
  m->sm_count = e->device.sm_count;
  copy(m->toolkit, sizeof m->toolkit, e->toolkit);
  copy(m->timing, sizeof m->timing, timing_kind_name(e->timing));
  m->time_ms = e->time_ms;
  m->spread = e->spread;
  copy(m->entry, sizeof m->entry, e->launch.entry);
  copy(m->arch, sizeof m->arch, e->launch.arch);
  m->cubin_size = e->launch.cubin_size;
  copy(m->library_algo, sizeof m->library_algo, e->launch.library_algo);
  copy(m->vars, sizeof m->vars, e->launch.vars);
  m->id = e->winner_id;
  if (kind == ROOFTUNE_MATCH_EXACT) {
    for (int k = 0; k < 3; k++) {
      m->grid[k] = e->launch.grid_v[k];
      m->block[k] = e->launch.block_v[k];
    }
    m->smem = e->launch.smem_v;
    m->geometry_ok = m->grid[0] > 0 && m->block[0] > 0;
  } else {
    m->geometry_ok = nearest_geometry(x, q, m) || manifest_geometry(x, query, m);
  }
}

/* Is a better than b for the same query?  Shape distance, then provenance, then how the time
 * was obtained, then the time, then age. */
static int better(const idx_entry *a, double da, unsigned ma, const idx_entry *b, double dbest,
                  unsigned mb) {
  if (da != dbest) return da < dbest;
  if ((ma != 0) != (mb != 0)) return ma == 0;
  if (a->timing_rank != b->timing_rank) return a->timing_rank < b->timing_rank;
  double ta = isnan(a->e->time_ms) ? INFINITY : a->e->time_ms;
  double tb = isnan(b->e->time_ms) ? INFINITY : b->e->time_ms;
  if (ta != tb) return ta < tb;
  return a->e->winner_id < b->e->winner_id;
}

int rooftune_lookup(rooftune_db *r, const rooftune_query *q, rooftune_match *m) {
  if (!r || !q || !m) return fail(ROOFTUNE_ERR_INVALID, "rooftune_lookup: NULL argument");
  memset(m, 0, sizeof *m);
  if (!q->family || !q->shape || !q->dtype)
    return fail(ROOFTUNE_ERR_INVALID, "rooftune_lookup: family, shape and dtype are required");
  shape_vec qs;
  if (!shape_parse(q->shape, &qs))
    return fail(ROOFTUNE_ERR_INVALID,
                "shape '%s' is not [BATCH@]DIMxDIMx...[:LAYOUT] with positive integers", q->shape);
  char layout[8];
  layout_norm(q->family, q->layout && *q->layout ? q->layout : qs.layout, layout, sizeof layout);
  char key[512];
  snprintf(key, sizeof key, "%s|%s|%s|%lld@", q->family, q->dtype, layout, qs.batch);
  for (int i = 0; i < qs.n; i++)
    snprintf(key + strlen(key), sizeof key - strlen(key), "%lldx", qs.d[i]);
  snprintf(key + strlen(key), sizeof key - strlen(key), "%s|%s|%d", qs.opts, q->device ? q->device : "",
           q->flags);

  pthread_mutex_lock(&r->mu);
  int rc = index_build(r);
  if (rc) {
    pthread_mutex_unlock(&r->mu);
    return rc;
  }
  unsigned long h = hash_text(key);
  size_t slot = h & (CACHE_SLOTS - 1);
  while (r->cache[slot].key) {
    if (strcmp(r->cache[slot].key, key) == 0) {
      *m = r->cache[slot].m;
      pthread_mutex_unlock(&r->mu);
      return ROOFTUNE_OK;
    }
    slot = (slot + 1) & (CACHE_SLOTS - 1);
  }

  const idx_entry *best = NULL;
  double best_d = 0;
  unsigned best_m = 0;
  for (size_t i = 0; i < r->n; i++) {
    const idx_entry *x = &r->idx[i];
    const db_entry *e = x->e;
    if (strcmp(e->family, q->family) || strcmp(e->dtype, q->dtype) || strcmp(x->layout, layout) ||
        strcmp(x->shape.opts, qs.opts))
      continue;
    if (e->template_name[0] == '\0' || isnan(e->time_ms)) continue;
    double dist = shape_distance(&x->shape, &qs);
    if (dist < 0) continue;
    if ((q->flags & ROOFTUNE_EXACT_ONLY) && dist > 0) continue;
    unsigned mis = 0;
    if (q->device && *q->device && !strcasestr(e->device.name, q->device))
      mis |= ROOFTUNE_MISMATCH_DEVICE;
    if (strcmp(e->toolkit, r->toolkit) != 0) mis |= ROOFTUNE_MISMATCH_TOOLKIT;
    if (e->template_stale) mis |= ROOFTUNE_MISMATCH_TEMPLATE;
    if (mis && !(q->flags & ROOFTUNE_ALLOW_MISMATCH)) continue;
    if (!best || better(x, dist, mis, best, best_d, best_m)) {
      best = x;
      best_d = dist;
      best_m = mis;
    }
  }
  if (best) {
    /* The queried problem in the family's syntax, with its layout. */
    char query[160];
    snprintf(query, sizeof query, "%.*s%s%s%s", (int)strcspn(q->shape, ":+"), q->shape,
             layout[0] ? ":" : "", layout, qs.opts);
    fill_match(best, best_d == 0 ? ROOFTUNE_MATCH_EXACT : ROOFTUNE_MATCH_NEAREST, best_d,
               best_m, &qs, query, m);
  }

  if (r->cached >= CACHE_SLOTS / 2) { /* keep probing short: start over */
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
      free(r->cache[i].key);
      r->cache[i].key = NULL;
    }
    r->cached = 0;
    slot = h & (CACHE_SLOTS - 1);
  }
  char *k = strdup(key);
  if (k) {
    r->cache[slot].key = k;
    r->cache[slot].m = *m;
    r->cached++;
  }
  pthread_mutex_unlock(&r->mu);
  return ROOFTUNE_OK;
}

/* ---- load and launch ------------------------------------------------------------------ */

/* cuda_driver_load() keeps its state in statics: the first calls from several threads must not
 * race, so every call here goes through one lock (after the first it returns at once). */
static rt_status driver_load(rt_error *err) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&mu);
  rt_status s = cuda_driver_load(err);
  pthread_mutex_unlock(&mu);
  return s;
}

int rooftune_kernel_load(rooftune_db *r, const rooftune_match *m, rooftune_kernel **out) {
  if (!r || !m || !out) return fail(ROOFTUNE_ERR_INVALID, "rooftune_kernel_load: NULL argument");
  *out = NULL;
  if (m->match == ROOFTUNE_MATCH_NONE) return fail(ROOFTUNE_ERR_NOT_FOUND, "the match is empty");
  if (!m->cubin_size || !m->entry[0])
    return fail(ROOFTUNE_ERR_NOT_FOUND, "winner %s %s has no cubin (%s)", m->template_name,
                m->config, m->library_algo[0] ? "a cuBLASLt algorithm" : "not tuned on a GPU");
  rt_error err = {0};
  if (driver_load(&err)) return fail_err(&err);
  CUcontext ctx = NULL;
  if (cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
    return fail(ROOFTUNE_ERR_NO_GPU, "no current CUDA context: make one current first");
  void *cubin = NULL;
  size_t size = 0;
  pthread_mutex_lock(&r->mu);
  rt_status s = db_winner_cubin(r->d, m->id, &cubin, &size, &err);
  pthread_mutex_unlock(&r->mu);
  if (s) return fail_err(&err);
  rooftune_kernel *k = calloc(1, sizeof *k);
  if (!k) {
    free(cubin);
    return fail(ROOFTUNE_ERR_NOMEM, "out of memory");
  }
  s = cuda_check(cu.cuModuleLoadData(&k->mod, cubin), "cuModuleLoadData", &err);
  free(cubin);
  if (!s) s = cuda_check(cu.cuModuleGetFunction(&k->fn, k->mod, m->entry), "cuModuleGetFunction",
                         &err);
  if (!s && m->smem > 48 * 1024)
    s = cuda_check(cu.cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         (int)m->smem),
                   "cuFuncSetAttribute(max dynamic shared memory)", &err);
  if (s) {
    if (k->mod) cu.cuModuleUnload(k->mod);
    free(k);
    return fail_err(&err);
  }
  memcpy(k->grid, m->grid, sizeof k->grid);
  memcpy(k->block, m->block, sizeof k->block);
  k->smem = m->smem;
  k->geometry_ok = m->geometry_ok;
  *out = k;
  return ROOFTUNE_OK;
}

int rooftune_kernel_launch_geometry(rooftune_kernel *k, const unsigned grid[3],
                                    const unsigned block[3], unsigned smem, void *stream,
                                    void **args) {
  if (!k || !grid || !block) return fail(ROOFTUNE_ERR_INVALID, "rooftune_kernel_launch: NULL argument");
  rt_error err = {0};
  if (cuda_check(cu.cuLaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                   smem, (CUstream)stream, args, NULL),
                 "cuLaunchKernel", &err)) {
    fail_err(&err);
    return ROOFTUNE_ERR_LAUNCH;
  }
  return ROOFTUNE_OK;
}

int rooftune_kernel_launch(rooftune_kernel *k, void *stream, void **args) {
  if (!k) return fail(ROOFTUNE_ERR_INVALID, "rooftune_kernel_launch: kernel is NULL");
  if (!k->geometry_ok)
    return fail(ROOFTUNE_ERR_UNSUPPORTED, "the match has no launch geometry for the queried "
                "shape: use rooftune_kernel_launch_geometry");
  return rooftune_kernel_launch_geometry(k, k->grid, k->block, k->smem, stream, args);
}

void rooftune_kernel_free(rooftune_kernel *k) {
  if (!k) return;
  if (k->mod && cu.cuModuleUnload) cu.cuModuleUnload(k->mod);
  free(k);
}

/* ---- GEMM ----------------------------------------------------------------------------- */

/* cuBLASLt state shared by every caller: one handle, and one workspace per (context, stream)
 * so that matmuls running at once on different streams never share scratch memory; past 16
 * pairs cuBLASLt runs without a workspace. */
static pthread_mutex_t lt_mu = PTHREAD_MUTEX_INITIALIZER;
static cublasLtHandle_t lt_handle;
static struct {
  CUcontext ctx;
  void *stream;
  CUdeviceptr ws;
} lt_ws[16];
#define LT_WS_BYTES (32u << 20)

static int lt_fallback(const problem *p, const gemm_lt_algo *algo, const void *A, const void *B,
                       void *C, const gemm_epi_args *epi, CUcontext ctx, void *stream) {
  rt_error err = {0};
  pthread_mutex_lock(&lt_mu);
  if (!lt_handle && cublasLtCreate(&lt_handle) != CUBLAS_STATUS_SUCCESS) {
    pthread_mutex_unlock(&lt_mu);
    return fail(ROOFTUNE_ERR_CUBLAS, "cublasLtCreate failed");
  }
  CUdeviceptr ws = 0;
  int i;
  for (i = 0; i < 16 && lt_ws[i].ctx; i++)
    if (lt_ws[i].ctx == ctx && lt_ws[i].stream == stream) ws = lt_ws[i].ws;
  if (!ws && i < 16) {
    if (cu.cuMemAlloc_v2(&ws, LT_WS_BYTES) == CUDA_SUCCESS) {
      lt_ws[i].ctx = ctx;
      lt_ws[i].stream = stream;
      lt_ws[i].ws = ws;
    } else {
      ws = 0;
    }
  }
  pthread_mutex_unlock(&lt_mu);
  rt_status s = gemm_lt_matmul_epi(lt_handle, p, algo, (CUdeviceptr)A, (CUdeviceptr)B, (CUdeviceptr)C, epi,
                                   ws, ws ? LT_WS_BYTES : 0, (CUstream)stream, &err);
  return s ? fail_err(&err) : ROOFTUNE_OK;
}

/* The kernel for winner `m` in context ctx, loaded once per database handle; *owned = 1 when
 * the cache was full and the caller must free it after use. */
static int gemm_kernel(rooftune_db *r, const rooftune_match *m, CUcontext ctx,
                       rooftune_kernel **out, int *owned) {
  *owned = 0;
  pthread_mutex_lock(&r->mu);
  for (int i = 0; i < r->nkernels; i++)
    if (r->kernels[i].winner_id == m->id && r->kernels[i].time_ms == m->time_ms &&
        r->kernels[i].ctx == ctx) {
      *out = r->kernels[i].k;
      pthread_mutex_unlock(&r->mu);
      return ROOFTUNE_OK;
    }
  pthread_mutex_unlock(&r->mu);
  int rc = rooftune_kernel_load(r, m, out);
  if (rc) return rc;
  pthread_mutex_lock(&r->mu);
  if (r->nkernels < (int)(sizeof r->kernels / sizeof r->kernels[0])) {
    r->kernels[r->nkernels].winner_id = m->id;
    r->kernels[r->nkernels].time_ms = m->time_ms;
    r->kernels[r->nkernels].ctx = ctx;
    r->kernels[r->nkernels++].k = *out;
    pthread_mutex_unlock(&r->mu);
    return ROOFTUNE_OK;
  }
  pthread_mutex_unlock(&r->mu);
  *owned = 1; /* not cached: the caller frees it */
  return ROOFTUNE_OK;
}

static long long var_value(const char *vars, const char *name, long long dflt) {
  size_t n = strlen(name);
  for (const char *s = vars; s && *s;) {
    if (strncmp(s, name, n) == 0 && s[n] == '=') return strtoll(s + n + 1, NULL, 10);
    s = strchr(s, ',');
    if (s) s++;
  }
  return dflt;
}

/* The two CUtensorMap arguments of a TMA winner (vars holds its TMA_BOX_* values) over the
 * caller's A and B: gemm_tma_maps, the tuning launcher's own builder, from the stored vars.
 * Built per call (host-side encoding, about a microsecond), so new pointers or shapes always get
 * fresh descriptors.  RT_ERR_UNSUPPORTED when TMA cannot address the operands. */
static rt_status gemm_tma_args(const problem *p, const char *vars, const void *A, const void *B,
                               CUtensorMap *ma, CUtensorMap *mb, rt_error *err) {
  rt_vars v;
  rt_vars_clear(&v);
  rt_status s = rt_vars_parse(&v, vars, err);
  if (s) return s;
  long long b_col = 0;
  if (rt_vars_get(&v, "B_COL", &b_col) && b_col != !strcmp(p->layout, "nt"))
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "the winner was compiled for the other layout (B_COL=%lld)",
                        b_col);
  return gemm_tma_maps(p, &v, (CUdeviceptr)A, (CUdeviceptr)B, ma, mb, err);
}

int rooftune_gemm(rooftune_db *r, const char *dtype, const char *layout, long long M,
                  long long N, long long K, const void *A, const void *B, float *C, void *stream,
                  rooftune_gemm_info *info) {
  return rooftune_gemm_batched(r, dtype, layout, 1, M, N, K, A, B, C, stream, info);
}

int rooftune_gemm_batched(rooftune_db *r, const char *dtype, const char *layout, long long batch,
                          long long M, long long N, long long K, const void *A, const void *B,
                          float *C, void *stream, rooftune_gemm_info *info) {
  if (!dtype || (strcmp(dtype, "f32") && strcmp(dtype, "f16") && strcmp(dtype, "bf16"))) {
    if (info) memset(info, 0, sizeof *info);
    return fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: dtype '%s' is not f32, f16 or bf16 (fp8 goes through rooftune_gemm_ex)",
                dtype ? dtype : "(null)");
  }
  return rooftune_gemm_ex(r, dtype, layout, batch, M, N, K, A, B, C, NULL, stream, info);
}

/* The options text of kernels/gemm.h for opt ("" for none) and the epilogue argument of the
 * kernels; an unknown name is ROOFTUNE_ERR_INVALID. */
static int gemm_options(const char *dtype, const rooftune_gemm_options *opt, char *text, size_t size,
                        gemm_epi_args *args) {
  memset(args, 0, sizeof *args);
  args->alpha = 1.0f;
  text[0] = '\0';
  if (!opt) return ROOFTUNE_OK;
  size_t n = 0;
#define OPT_ADD(...) n += (size_t)snprintf(text + n, n < size ? size - n : 0, __VA_ARGS__)
  if (opt->b_dtype && strcmp(opt->b_dtype, dtype)) OPT_ADD("+b=%s", opt->b_dtype);
  if (opt->vector_scales) {
    if (!opt->scale_a || !opt->scale_b)
      return fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm_ex: vector_scales needs scale_a (M floats) and scale_b (N floats)");
    OPT_ADD("+vscale");
  }
  if (opt->alpha != 1.0f) OPT_ADD("+alpha");
  if (opt->C) OPT_ADD("+beta");
  if (opt->bias) OPT_ADD("+bias");
  if (opt->activation && *opt->activation && strcmp(opt->activation, "none")) {
    if (strcmp(opt->activation, "relu") && strcmp(opt->activation, "gelu") && strcmp(opt->activation, "silu"))
      return fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm_ex: activation '%s' is not none, relu, gelu or silu",
                  opt->activation);
    OPT_ADD("+%s", opt->activation);
  }
  if (opt->residual) OPT_ADD("+residual");
  if (opt->out_dtype) OPT_ADD("+out=%s", opt->out_dtype);
#undef OPT_ADD
  if (n >= size) return fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm_ex: too many options");
  args->c = (unsigned long long)(uintptr_t)opt->C;
  args->bias = (unsigned long long)(uintptr_t)opt->bias;
  args->residual = (unsigned long long)(uintptr_t)opt->residual;
  args->scale_a = (unsigned long long)(uintptr_t)opt->scale_a;
  args->scale_b = (unsigned long long)(uintptr_t)opt->scale_b;
  args->alpha = opt->alpha;
  args->beta = opt->C ? opt->beta : 0.0f;
  return ROOFTUNE_OK;
}

int rooftune_gemm_ex(rooftune_db *r, const char *dtype, const char *layout, long long batch,
                     long long M, long long N, long long K, const void *A, const void *B, void *C,
                     const rooftune_gemm_options *opt, void *stream, rooftune_gemm_info *info) {
  rooftune_gemm_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  if (gemm_dtype_code(dtype) < 0)
    return fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: dtype '%s' is not f32, f16, bf16, e4m3 or e5m2",
                dtype ? dtype : "(null)");
  if (!layout || !*layout) layout = "nn";
  if (strcmp(layout, "nn") && strcmp(layout, "nt"))
    return fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: layout '%s' is not nn or nt", layout);
  if (M <= 0 || N <= 0 || K <= 0 || M > 0x7fffffff || N > 0x7fffffff || K > 0x7fffffff)
    return fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: M, N, K must be in 1..2^31-1");
  if (batch < 1 || batch > 4096)
    return fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: batch %lld is not in 1..4096", batch);
  if (!A || !B || !C) return fail(ROOFTUNE_ERR_INVALID, "rooftune_gemm: a NULL matrix pointer");
  rt_error err = {0};
  if (driver_load(&err)) return fail_err(&err);
  CUcontext ctx = NULL;
  CUdevice dev = 0;
  if (cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx || cu.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
    return fail(ROOFTUNE_ERR_NO_GPU, "rooftune_gemm: no current CUDA context");
  char shape[160], opts[96];
  char prefix[24] = "";
  gemm_epi_args epi;
  int rc0 = gemm_options(dtype, opt, opts, sizeof opts, &epi);
  if (rc0) return rc0;
  if (batch > 1) snprintf(prefix, sizeof prefix, "%lld@", batch);
  snprintf(shape, sizeof shape, "%s%lldx%lldx%lld%s%s", prefix, M, N, K, strcmp(layout, "nt") ? "" : ":nt", opts);
  problem p;
  if (gemm_family.parse_shape(&gemm_family, shape, dtype, NULL, &p, &err)) return fail_err(&err);
  gemm_epi pe;
  if (gemm_problem_epi(&p, &pe, &err)) return fail_err(&err);
  epi.flags = (pe.beta ? GEMM_EPI_BETA : 0u) | (pe.bias ? GEMM_EPI_BIAS : 0u) | (pe.residual ? GEMM_EPI_RES : 0u) |
              (pe.vscale ? GEMM_EPI_VSCALE : 0u) | ((unsigned)pe.act << GEMM_EPI_ACT_SHIFT);
  /* the canonical text is what was tuned (it drops a +b= equal to the dtype, +alpha beside others) */
  snprintf(shape, sizeof shape, "%s", p.shape);

  char devname[128] = "";
  cu.cuDeviceGetName(devname, sizeof devname, dev);
  const char *why = "no tuning database given";
  char whybuf[256];
  rooftune_match m;
  memset(&m, 0, sizeof m);
  if (r) {
    rooftune_query q = {"gemm", shape, dtype, layout, devname, 0};  /* the options travel in the shape */
    int rc = rooftune_lookup(r, &q, &m);
    if (rc) return rc;
    why = "nothing tuned for this shape, dtype and layout on this GPU";
  }
  if (m.match != ROOFTUNE_MATCH_NONE && m.library_algo[0]) {
    gemm_lt_algo algo;
    if (gemm_lt_algo_parse(m.library_algo, &algo, &err) == RT_OK &&
        lt_fallback(&p, &algo, A, B, C, pe.on ? &epi : NULL, ctx, stream) == ROOFTUNE_OK) {
      info->path = m.match == ROOFTUNE_MATCH_EXACT ? ROOFTUNE_PATH_TUNED : ROOFTUNE_PATH_NEAREST;
      copy(info->template_name, sizeof info->template_name, m.template_name);
      copy(info->config, sizeof info->config, m.library_algo);
      return ROOFTUNE_OK;
    }
    why = "the tuned cuBLASLt algorithm cannot run here";
  } else if (m.match != ROOFTUNE_MATCH_NONE) {
    const int tma = var_value(m.vars, "TMA_BOX_K", -1) >= 0;
    CUtensorMap ma, mb;
    rt_error terr = {0};
    if (!m.cubin_size) why = "the winner has no cubin (it was predicted or replayed)";
    else if (!m.geometry_ok) why = "no launch geometry for this shape from the nearest winner";
    else if (!tma && ((uintptr_t)A | (uintptr_t)B | (uintptr_t)C) % 16)
      why = "the tuned kernel reads A and B in 16-byte vectors and writes C in pairs: it needs "
            "16-byte-aligned operands, as the allocations it was tuned on were";
    else if (tma && gemm_tma_args(&p, m.vars, A, B, &ma, &mb, &terr)) {
      snprintf(whybuf, sizeof whybuf, "the winner %.40s uses TMA, which cannot take these operands: %.150s",
               m.template_name, terr.text);
      why = whybuf;
    } else {
      rooftune_kernel *k = NULL;
      int owned = 0;
      int rc = gemm_kernel(r, &m, ctx, &k, &owned);
      if (rc) return rc;
      /* split-K adds fp32 partial sums (the manifests allow it only with an fp32 output) */
      if (var_value(m.vars, "SPLIT_K", 1) > 1 &&
          cuda_check(cu.cuMemsetD32Async((CUdeviceptr)C, 0, (size_t)(batch * M * N), (CUstream)stream),
                     "cuMemsetD32Async", &err))
        return fail_err(&err);
      int im = (int)M, in = (int)N, ik = (int)K;
      CUdeviceptr pa = (CUdeviceptr)A, pb = (CUdeviceptr)B, pc = (CUdeviceptr)C;
      /* a kernel with the epilogue (kernels/gemm.h) takes its argument seventh */
      void *args[] = {&pa, &pb, &pc, &im, &in, &ik, &epi};
      if (tma) { /* TMA templates take A's and B's tensor maps in place of the pointers */
        args[0] = &ma;
        args[1] = &mb;
      }
      /* the match's geometry: a kernel cached from an earlier call holds that call's shape */
      rc = rooftune_kernel_launch_geometry(k, m.grid, m.block, m.smem, stream, args);
      if (owned) { /* the module must outlive the launch */
        cu.cuStreamSynchronize((CUstream)stream);
        rooftune_kernel_free(k);
      }
      if (rc) return rc;
      info->path = m.match == ROOFTUNE_MATCH_EXACT ? ROOFTUNE_PATH_TUNED : ROOFTUNE_PATH_NEAREST;
      copy(info->template_name, sizeof info->template_name, m.template_name);
      copy(info->config, sizeof info->config, m.config);
      return ROOFTUNE_OK;
    }
  }
  int rc = lt_fallback(&p, NULL, A, B, C, pe.on ? &epi : NULL, ctx, stream);
  if (rc) return rc;
  info->path = ROOFTUNE_PATH_CUBLASLT;
  copy(info->template_name, sizeof info->template_name, "cublaslt");
  copy(info->reason, sizeof info->reason, why);
  return ROOFTUNE_OK;
}
