/* ktfile.c — Kernel Tuner and KTT result files → a space with recorded times. */
#include "template/ktfile.h"

#include "db/export.h"
#include "template/ktfile_internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/fileio.h"

/* One parameter's domain while it is being collected: the distinct JSON values (borrowed from
 * the parsed tree), then their order and the form the space keeps them in. */
typedef struct ktfile_dom {
  const char *name; /* borrowed from the tree */
  json_t **vals;    /* distinct values, in the final domain order after ktfile_dom_finish */
  int n, cap;       /* entries, allocated */
  int is_int;       /* every value is an integer */
  int *slots;       /* open-addressing table: 1 + an index into vals, 0 for an empty slot */
  size_t mask;      /* slots in the table, minus one (a power of two, at least 2 n) */
} ktfile_dom;

/* The most values a parameter's domain may hold: what a space's uint16_t positions can hold. */
#define KTFILE_DOM_MAX 65535

/* 1 when s holds a control character (a file's names and values never need one). */
static int ktfile_has_ctrl(const char *s) {
  for (; s && *s; s++)
    if ((unsigned char)*s < 32 || *s == 127) return 1;
  return 0;
}

/* Replaces every control character with '?': text from a file that reaches a terminal. */
static void ktfile_clean(char *s) {
  for (; s && *s; s++)
    if ((unsigned char)*s < 32 || *s == 127) *s = '?';
}

static rt_status ktfile_fail(rt_error *err, const char *path, rt_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static rt_status ktfile_fail(rt_error *err, const char *path, rt_status code, const char *fmt,
                             ...) {
  if (!err) return code;
  char text[sizeof err->text];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  rt_error_set(err, code, "%s", text);
  rt_error_locate(err, path, NULL, 0, 0);
  return code;
}

/* Numbers are equal by value (1 == 1.0), strings by text, true/false/null by kind. */
static int ktfile_val_eq(const json_t *a, const json_t *b) {
  if (json_is_number(a) && json_is_number(b)) return json_number_value(a) == json_number_value(b);
  if (json_is_string(a) && json_is_string(b))
    return strcmp(json_string_value(a), json_string_value(b)) == 0;
  return json_typeof(a) == json_typeof(b) && !json_is_string(a) && !json_is_number(a);
}

static int ktfile_val_is_int(const json_t *v) {
  if (json_is_integer(v)) return 1;
  if (!json_is_real(v)) return 0;
  double d = json_real_value(v);
  return d == floor(d) && fabs(d) < 9e15;
}

static void ktfile_val_text(const json_t *v, char *buf, size_t size) {
  if (json_is_string(v))
    snprintf(buf, size, "%s", json_string_value(v));
  else if (json_is_integer(v))
    snprintf(buf, size, "%lld", (long long)json_integer_value(v));
  else if (json_is_real(v))
    snprintf(buf, size, "%.15g", json_real_value(v));
  else if (json_is_true(v))
    snprintf(buf, size, "true");
  else if (json_is_false(v))
    snprintf(buf, size, "false");
  else
    snprintf(buf, size, "null");
}

/* A hash that agrees with ktfile_val_eq: numbers by value (-0 as 0), strings by their text up
 * to the first NUL (as strcmp compares them), the rest by kind. */
static uint64_t ktfile_val_hash(const json_t *v) {
  uint64_t h = 0xcbf29ce484222325ull;
  if (json_is_number(v)) {
    double x = json_number_value(v);
    if (x == 0) x = 0; /* -0.0 == 0.0 */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    h ^= bits;
    h *= 0x100000001b3ull;
  } else if (json_is_string(v)) {
    for (const unsigned char *c = (const unsigned char *)json_string_value(v); *c; c++)
      h = (h ^ *c) * 0x100000001b3ull;
  } else {
    h ^= (uint64_t)json_typeof(v) + 1;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

/* The slot of v in d's table: the one holding it, or the empty one where it would go. */
static size_t ktfile_dom_slot(const ktfile_dom *d, const json_t *v) {
  size_t i = (size_t)ktfile_val_hash(v) & d->mask;
  while (d->slots[i] && !ktfile_val_eq(d->vals[d->slots[i] - 1], v)) i = (i + 1) & d->mask;
  return i;
}

/* Makes the table again for d->vals as they are (grown to hold want values, or reordered). */
static rt_status ktfile_dom_index(ktfile_dom *d, int want) {
  size_t size = 16;
  while (size < 2 * (size_t)want) size *= 2;
  int *t = calloc(size, sizeof *t);
  if (!t) return RT_ERR_NOMEM;
  free(d->slots);
  d->slots = t;
  d->mask = size - 1;
  for (int i = 0; i < d->n; i++) d->slots[ktfile_dom_slot(d, d->vals[i])] = i + 1;
  return RT_OK;
}

static int ktfile_dom_find(const ktfile_dom *d, const json_t *v) {
  if (!d->slots) return -1;
  int k = d->slots[ktfile_dom_slot(d, v)];
  return k ? k - 1 : -1;
}

/* Adds v to d's domain unless it is there; a value past KTFILE_DOM_MAX is refused as it comes
 * (the file is not read on to count them). */
static rt_status ktfile_dom_add(ktfile_dom *d, json_t *v, rt_error *err) {
  if (ktfile_dom_find(d, v) >= 0) return RT_OK;
  if (d->n == KTFILE_DOM_MAX)
    return rt_error_set(err, RT_ERR_INVALID,
                        "parameter %s has more than the %d distinct values a space holds: "
                        "record fewer values of it",
                        d->name, KTFILE_DOM_MAX);
  if (d->n == d->cap) {
    int nc = d->cap ? 2 * d->cap : 8;
    json_t **nv = realloc(d->vals, (size_t)nc * sizeof *nv);
    if (!nv) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    d->vals = nv;
    d->cap = nc;
    if (ktfile_dom_index(d, nc)) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  d->slots[ktfile_dom_slot(d, v)] = d->n + 1;
  d->vals[d->n++] = v;
  return RT_OK;
}

static void ktfile_doms_free(ktfile_dom *doms, int np) {
  for (int p = 0; doms && p < np; p++) {
    free(doms[p].vals);
    free(doms[p].slots);
  }
  free(doms);
}

static int ktfile_cmp_num(const void *a, const void *b) {
  double x = json_number_value(*(json_t *const *)a), y = json_number_value(*(json_t *const *)b);
  return (x > y) - (x < y);
}

/* Sorts numeric domains ascending (a step along the domain then means a larger value) and adds
 * the parameter to the space: integers as ints, anything else as identifiers (its text). */
static rt_status ktfile_dom_finish(ktfile_dom *d, space *s, rt_error *err) {
  int all_int = 1, all_num = 1;
  for (int i = 0; i < d->n; i++) {
    all_int &= ktfile_val_is_int(d->vals[i]);
    all_num &= json_is_number(d->vals[i]) ? 1 : 0;
  }
  if (ktfile_has_ctrl(d->name))
    return rt_error_set(err, RT_ERR_PARSE, "a parameter name holds a control character");
  /* a configuration is written NAME=VALUE,NAME=VALUE: what cannot be written so is refused
   * (it could never be found again) */
  if (!d->name[0] || strpbrk(d->name, "=, \t"))
    return rt_error_set(err, RT_ERR_PARSE,
                        "parameter name \"%.100s\" is empty or holds '=', ',' or "
                        "a blank, which configuration texts cannot carry",
                        d->name);
  for (int i = 0; i < d->n; i++) {
    char buf[KTFILE_VALUE_MAX + 2];
    ktfile_val_text(d->vals[i], buf, sizeof buf);
    if (strlen(buf) > KTFILE_VALUE_MAX ||
        (json_is_string(d->vals[i]) && json_string_length(d->vals[i]) > KTFILE_VALUE_MAX))
      return rt_error_set(err, RT_ERR_PARSE, "a value of parameter %s is longer than %d characters",
                          d->name, KTFILE_VALUE_MAX);
    if (ktfile_has_ctrl(buf) ||
        (json_is_string(d->vals[i]) &&
         strlen(json_string_value(d->vals[i])) != json_string_length(d->vals[i])))
      return rt_error_set(err, RT_ERR_PARSE, "a value of parameter %s holds a control character",
                          d->name);
    size_t bl = strlen(buf);
    if (strchr(buf, ',') || (bl && (buf[0] == ' ' || buf[bl - 1] == ' ')))
      return rt_error_set(err, RT_ERR_PARSE,
                          "value \"%.100s\" of parameter %s holds a ',' or starts or "
                          "ends with a blank, which configuration texts cannot carry",
                          buf, d->name);
  }
  if (all_num) qsort(d->vals, (size_t)d->n, sizeof *d->vals, ktfile_cmp_num);
  d->is_int = all_int;
  if (ktfile_dom_index(d, d->n)) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  rt_status rc;
  if (all_int) {
    long long *ints = malloc((size_t)d->n * sizeof *ints);
    if (!ints) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    for (int i = 0; i < d->n; i++) ints[i] = (long long)llround(json_number_value(d->vals[i]));
    rc = space_add_param(s, d->name, d->n, ints, NULL, err);
    free(ints);
  } else {
    char **texts = calloc((size_t)d->n, sizeof *texts);
    if (!texts) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    rc = RT_OK;
    for (int i = 0; i < d->n && rc == RT_OK; i++) {
      char buf[KTFILE_VALUE_MAX + 1];
      ktfile_val_text(d->vals[i], buf, sizeof buf);
      if (!(texts[i] = strdup(buf))) rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    }
    if (rc == RT_OK) rc = space_add_param(s, d->name, d->n, NULL, (const char *const *)texts, err);
    for (int i = 0; i < d->n; i++) free(texts[i]);
    free(texts);
  }
  return rc;
}

static const char *ktfile_intern(ktfile *kf, const char *reason) {
  char clean[256];
  snprintf(clean, sizeof clean, "%s", reason);
  ktfile_clean(clean);
  for (int i = 0; i < kf->nreasons; i++)
    if (strcmp(kf->reasons[i], clean) == 0) return kf->reasons[i];
  char **nr = realloc(kf->reasons, (size_t)(kf->nreasons + 1) * sizeof *nr);
  if (!nr) return NULL;
  kf->reasons = nr;
  if (!(nr[kf->nreasons] = strdup(reason))) return NULL;
  ktfile_clean(nr[kf->nreasons]);
  return nr[kf->nreasons++];
}

/* Appends one configuration and its outcome (time in ms, or reason when failed). */
static rt_status ktfile_push(ktfile *kf, size_t *cap, const uint16_t *cfg, double ms,
                             const char *reason, rt_error *err) {
  if (kf->configs == *cap) {
    size_t nc = *cap ? 2 * *cap : 1024;
    double *nt = realloc(kf->time_ms, nc * sizeof *nt);
    if (!nt) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    kf->time_ms = nt;
    const char **nf = realloc(kf->failure, nc * sizeof *nf);
    if (!nf) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    kf->failure = nf;
    *cap = nc;
  }
  rt_status rc = space_add_config(kf->space, cfg, err);
  if (rc) return rc;
  if (reason) {
    const char *r = ktfile_intern(kf, reason);
    if (!r) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    kf->time_ms[kf->configs] = NAN;
    kf->failure[kf->configs] = r;
  } else {
    kf->time_ms[kf->configs] = ms;
    kf->failure[kf->configs] = NULL;
    kf->valid++;
  }
  kf->configs++;
  return RT_OK;
}

static char *ktfile_strdup_or_empty(const json_t *v) {
  char *s = strdup(json_is_string(v) ? json_string_value(v) : "");
  ktfile_clean(s);
  return s;
}

/* The longest configuration text the space's parameters can make ("A=1,B=row"), checked
 * against what results store. */
static rt_status ktfile_check_config_len(const ktfile *kf, rt_error *err) {
  size_t longest = 0;
  for (int p = 0; p < space_nparams(kf->space); p++) {
    const space_param *sp = space_param_at(kf->space, p);
    size_t w = 0;
    for (int v = 0; v < sp->count; v++) {
      char num[32];
      size_t l =
          sp->ints ? (size_t)snprintf(num, sizeof num, "%lld", sp->ints[v]) : strlen(sp->idents[v]);
      if (l > w) w = l;
    }
    longest += (p ? 1 : 0) + strlen(sp->name) + 1 + w;
  }
  if (longest > KTFILE_CONFIG_MAX)
    return rt_error_set(err, RT_ERR_PARSE,
                        "a configuration's text (NAME=VALUE,...) can reach %zu "
                        "characters, more than the %d rooftune stores",
                        longest, KTFILE_CONFIG_MAX);
  return RT_OK;
}

/* A recorded time in ms: RT_OK and *ms when it is one, *failed = 1 for Kernel Tuner's failure
 * marker (1e20 and above), an error naming the record otherwise. */
static rt_status ktfile_check_time(double t, const char *what, const char *key, double *ms,
                                   int *failed, rt_error *err) {
  *failed = 0;
  *ms = t;
  if (isfinite(t) && t >= 1e20) {
    *failed = 1;
    return RT_OK;
  }
  if (!isfinite(t) || !(t >= KTFILE_MIN_MS))
    return rt_error_set(err, RT_ERR_PARSE,
                        "%s \"%.200s\": time %g ms is not a kernel time (at least "
                        "%g ms, finite)",
                        what, key, t, KTFILE_MIN_MS);
  return RT_OK;
}

/* Counters or facts that no configuration recorded: NULL, as for a file that has none. */
static void ktfile_drop_unrecorded(ktfile *kf) {
  int any_ctr = 0, any_facts = 0;
  for (size_t i = 0; kf->counters && i < kf->configs; i++) any_ctr |= kf->counters[i].measured;
  for (size_t i = 0; kf->facts && i < kf->configs; i++)
    any_facts |= kf->facts[i].threads_per_block > 0;
  if (!any_ctr) free(kf->counters), kf->counters = NULL;
  if (!any_facts) free(kf->facts), kf->facts = NULL;
}

/* A file of more parameters than a configuration text can carry ("A=1," at least four
 * characters each) is refused before its domains are read. */
static rt_status ktfile_check_nparams(const char *path, size_t np, rt_error *err) {
  if (np <= (KTFILE_CONFIG_MAX + 1) / 4) return RT_OK;
  return ktfile_fail(err, path, RT_ERR_PARSE,
                     "the file has %zu parameters: a configuration's text (NAME=VALUE,...) of "
                     "so many cannot fit the %d characters rooftune stores",
                     np, KTFILE_CONFIG_MAX);
}

static rt_status ktfile_from_kernel_tuner(ktfile *kf, json_t *root, rt_error *err) {
  const char *path = kf->path;
  json_t *keys = json_object_get(root, "tune_params_keys");
  json_t *params = json_object_get(root, "tune_params");
  json_t *cache = json_object_get(root, "cache");
  if (!json_is_array(keys) || json_array_size(keys) == 0 || !json_is_object(params) ||
      !json_is_object(cache))
    return ktfile_fail(err, path, RT_ERR_PARSE,
                       "not a Kernel Tuner cache file: tune_params_keys, tune_params or cache "
                       "is missing");
  kf->format = KTFILE_KERNEL_TUNER;
  kf->device_name = ktfile_strdup_or_empty(json_object_get(root, "device_name"));
  kf->kernel_name = ktfile_strdup_or_empty(json_object_get(root, "kernel_name"));
  if (!kf->device_name || !kf->kernel_name) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");

  if (ktfile_check_nparams(path, json_array_size(keys), err)) return RT_ERR_PARSE;
  int np = (int)json_array_size(keys);
  ktfile_dom *doms = calloc((size_t)np, sizeof *doms);
  uint16_t *cfg = calloc((size_t)np, sizeof *cfg);
  rt_status rc = RT_OK;
  if (!doms || !cfg) rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (int p = 0; p < np && rc == RT_OK; p++) {
    json_t *k = json_array_get(keys, (size_t)p);
    json_t *vals = json_is_string(k) ? json_object_get(params, json_string_value(k)) : NULL;
    if (!json_is_array(vals) || json_array_size(vals) == 0) {
      rc = ktfile_fail(err, path, RT_ERR_PARSE,
                       "tune_params_keys[%d] names no list of values in tune_params", p);
      break;
    }
    doms[p].name = json_string_value(k);
    if (ktfile_has_ctrl(doms[p].name) || strlen(doms[p].name) != json_string_length(k)) {
      rc =
          ktfile_fail(err, path, RT_ERR_PARSE, "tune_params_keys[%d] holds a control character", p);
      break;
    }
    for (size_t i = 0; i < json_array_size(vals) && rc == RT_OK; i++)
      rc = ktfile_dom_add(&doms[p], json_array_get(vals, i), err);
    if (rc == RT_OK) rc = ktfile_dom_finish(&doms[p], kf->space, err);
  }

  size_t cap = 0;
  const char *key;
  json_t *rec;
  /* a rooftune export's records keep their rows: counters and static facts per configuration */
  size_t nrec = json_object_size(cache);
  int rows = 0;
  json_object_foreach(cache, key, rec) rows |= json_is_object(json_object_get(rec, "rooftune_row"));
  if (!rc && rows) {
    kf->counters = calloc(nrec ? nrec : 1, sizeof *kf->counters);
    kf->facts = calloc(nrec ? nrec : 1, sizeof *kf->facts);
    if (!kf->counters || !kf->facts) rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  json_object_foreach(cache, key, rec) {
    if (rc) break;
    if (!json_is_object(rec)) {
      rc = ktfile_fail(err, path, RT_ERR_PARSE, "cache entry \"%s\" is not an object", key);
      break;
    }
    for (int p = 0; p < np; p++) {
      json_t *v = json_object_get(rec, doms[p].name);
      int pos = v ? ktfile_dom_find(&doms[p], v) : -1;
      if (pos < 0) {
        char t[128] = "nothing";
        if (v) ktfile_val_text(v, t, sizeof t);
        rc = ktfile_fail(err, path, RT_ERR_PARSE,
                         "cache entry \"%s\" gives %s=%s, which tune_params does not declare", key,
                         doms[p].name, t);
        break;
      }
      cfg[p] = (uint16_t)pos;
    }
    if (rc) break;
    json_t *t = json_object_get(rec, "time");
    if (json_is_number(t)) {
      double ms = 0;
      int failed = 0;
      if (!(rc = ktfile_check_time(json_number_value(t), "cache entry", key, &ms, &failed, err)))
        rc = failed ? ktfile_push(kf, &cap, cfg, 0, "InvalidConfig (time 1e20)", err)
                    : ktfile_push(kf, &cap, cfg, ms, NULL, err);
    } else if (json_is_string(t)) {
      rc = ktfile_push(kf, &cap, cfg, 0, json_string_value(t), err);
    } else {
      rc = ktfile_fail(err, path, RT_ERR_PARSE,
                       "cache entry \"%.200s\" has %s time: a time in ms "
                       "or a failure name is expected",
                       key, t ? "a time that is not a number, its" : "no");
    }
    json_t *row = json_object_get(rec, "rooftune_row");
    if (!rc && kf->counters && json_is_object(row) && kf->configs > 0) {
      candidate_result r;
      db_export_row_read(row, &r);
      if (r.counters.measured) kf->counters[kf->configs - 1] = r.counters;
      kf->facts[kf->configs - 1] = r.facts;
      if (r.flops > 0 && !(kf->flops > 0)) kf->flops = r.flops;
      if (r.precision[0] && !kf->precision[0])
        snprintf(kf->precision, sizeof kf->precision, "%s", r.precision);
    }
    if (rc && err && !err->source[0]) rt_error_locate(err, path, NULL, 0, 0);
  }
  ktfile_doms_free(doms, np);
  free(cfg);
  ktfile_drop_unrecorded(kf);
  return rc;
}

static double ktfile_ktt_unit(json_t *root) {
  const char *u = json_string_value(json_object_get(json_object_get(root, "Metadata"), "TimeUnit"));
  if (!u || strcmp(u, "Microseconds") == 0) return 1e-3;
  if (strcmp(u, "Nanoseconds") == 0) return 1e-6;
  if (strcmp(u, "Milliseconds") == 0) return 1.0;
  if (strcmp(u, "Seconds") == 0) return 1e3;
  return -1;
}

static rt_status ktfile_from_ktt(ktfile *kf, json_t *root, rt_error *err) {
  const char *path = kf->path;
  json_t *results = json_object_get(root, "Results");
  kf->format = KTFILE_KTT;
  double unit = ktfile_ktt_unit(root);
  if (unit < 0)
    return ktfile_fail(err, path, RT_ERR_PARSE, "Metadata.TimeUnit is not a unit KTT writes");
  json_t *meta = json_object_get(root, "Metadata");
  kf->device_name = ktfile_strdup_or_empty(json_object_get(meta, "Device"));
  json_t *first = json_array_get(results, 0);
  kf->kernel_name = ktfile_strdup_or_empty(json_object_get(first, "KernelName"));
  if (!kf->device_name || !kf->kernel_name) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");

  /* The parameters are the first result's, in its order; every result must name the same. */
  json_t *conf0 = json_object_get(first, "Configuration");
  int np = (int)json_array_size(conf0);
  if (!json_is_array(conf0) || np == 0)
    return ktfile_fail(err, path, RT_ERR_PARSE, "Results[0].Configuration is missing or empty");
  if (ktfile_check_nparams(path, (size_t)np, err)) return RT_ERR_PARSE;
  ktfile_dom *doms = calloc((size_t)np, sizeof *doms);
  uint16_t *cfg = calloc((size_t)np, sizeof *cfg);
  json_t **vals = calloc((size_t)np, sizeof *vals);
  rt_status rc = RT_OK;
  if (!doms || !cfg || !vals) rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (int p = 0; p < np && rc == RT_OK; p++) {
    doms[p].name = json_string_value(json_object_get(json_array_get(conf0, (size_t)p), "Name"));
    if (!doms[p].name)
      rc = ktfile_fail(err, path, RT_ERR_PARSE, "Results[0].Configuration[%d] has no Name", p);
  }
  /* counters and static facts, per record (trimmed to the configurations at the end) */
  const char *gst = json_string_value(json_object_get(meta, "GlobalSizeType"));
  int grid_in_blocks = gst && strcmp(gst, "CUDA") == 0;
  size_t nres = json_array_size(results);
  kf->counters = calloc(nres ? nres : 1, sizeof *kf->counters);
  kf->facts = calloc(nres ? nres : 1, sizeof *kf->facts);
  if (!kf->counters || !kf->facts) rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  /* Pass 1: the domains; pass 2: the configurations. */
  for (int pass = 0; pass < 2 && rc == RT_OK; pass++) {
    size_t cap = 0;
    for (size_t r = 0; r < json_array_size(results) && rc == RT_OK; r++) {
      json_t *res = json_array_get(results, r);
      json_t *conf = json_object_get(res, "Configuration");
      if (!json_is_array(conf) || (int)json_array_size(conf) != np) {
        rc = ktfile_fail(err, path, RT_ERR_PARSE,
                         "Results[%zu].Configuration does not list the %d parameters of "
                         "Results[0]",
                         r, np);
        break;
      }
      for (int p = 0; p < np; p++) vals[p] = NULL;
      for (int i = 0; i < np; i++) {
        json_t *e = json_array_get(conf, (size_t)i);
        const char *name = json_string_value(json_object_get(e, "Name"));
        if (name && !strcmp(name, doms[i].name)) { /* in Results[0]'s order, as KTT writes */
          vals[i] = json_object_get(e, "Value");
          continue;
        }
        for (int p = 0; name && p < np; p++)
          if (strcmp(name, doms[p].name) == 0) vals[p] = json_object_get(e, "Value");
      }
      for (int p = 0; p < np && rc == RT_OK; p++) {
        if (!vals[p]) {
          rc = ktfile_fail(err, path, RT_ERR_PARSE, "Results[%zu].Configuration lacks %s", r,
                           doms[p].name);
        } else if (pass == 0) {
          rc = ktfile_dom_add(&doms[p], vals[p], err);
        } else {
          cfg[p] = (uint16_t)ktfile_dom_find(&doms[p], vals[p]);
        }
      }
      if (rc || pass == 0) continue;
      const char *st = json_string_value(json_object_get(res, "Status"));
      json_t *comps = json_object_get(res, "ComputationResults");
      double us = 0;
      int have = json_is_array(comps) && json_array_size(comps) > 0;
      for (size_t c = 0; have && c < json_array_size(comps); c++) {
        json_t *d = json_object_get(json_array_get(comps, c), "Duration");
        if (!json_is_number(d))
          have = 0;
        else if (!(json_number_value(d) >= 0))
          have = -1;
        else
          us += json_number_value(d);
      }
      char what[48];
      snprintf(what, sizeof what, "Results[%zu]", r);
      if (st && strcmp(st, "Ok") != 0) {
        rc = ktfile_push(kf, &cap, cfg, 0, st, err);
      } else if (have == 0) {
        rc = ktfile_push(kf, &cap, cfg, 0, "NoDuration", err);
      } else if (have < 0) {
        rc = ktfile_fail(err, path, RT_ERR_PARSE, "%s has a negative Duration", what);
      } else {
        double ms = 0;
        int failed = 0;
        if (!(rc = ktfile_check_time(us * unit, "result", what, &ms, &failed, err)))
          rc = failed ? ktfile_push(kf, &cap, cfg, 0, "InvalidDuration", err)
                      : ktfile_push(kf, &cap, cfg, ms, NULL, err);
        /* what one kernel's run recorded beside its time: counters and static facts */
        if (!rc && !failed && json_array_size(comps) == 1)
          rc = ktfile_ktt_record(json_array_get(comps, 0), what, grid_in_blocks,
                                 &kf->counters[kf->configs - 1], &kf->facts[kf->configs - 1], err);
      }
      if (rc && err && !err->source[0]) rt_error_locate(err, path, NULL, 0, 0);
    }
    if (pass == 0)
      for (int p = 0; p < np && rc == RT_OK; p++) rc = ktfile_dom_finish(&doms[p], kf->space, err);
  }
  ktfile_doms_free(doms, np);
  free(cfg);
  free(vals);
  ktfile_drop_unrecorded(kf);
  return rc;
}

rt_status ktfile_load(const char *path, ktfile **out, rt_error *err) {
  return ktfile_load_select(path, NULL, out, err);
}

/* 0 when the gzip file PATH is gzip streams to its last byte; else the offset of the first byte
 * after them (zlib's gzread ignores what follows a stream when it is not another one), or -1
 * when it cannot be read back. */
static long long gz_trailing(const char *path) {
  int fd;
  if (fileio_open_read(path, 0, &fd, NULL) != RT_OK) return -1;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return -1;
  }
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    fclose(f);
    return -1;
  }
  unsigned char in[1 << 16], out[1 << 16];
  long long consumed = 0,
            at = 0;           /* bytes of the file inflate has taken; where the last stream ended */
  int rc = Z_OK, between = 0; /* between: a stream ended, the next has not begun */
  size_t got;
  while ((got = fread(in, 1, sizeof in, f)) > 0) {
    zs.next_in = in;
    zs.avail_in = (uInt)got;
    while (zs.avail_in > 0) {
      if (between) { /* what follows a stream: another stream's magic, or trailing bytes */
        if (zs.next_in[0] != 0x1f) break;
        between = 0;
        inflateReset(&zs);
      }
      zs.next_out = out;
      zs.avail_out = sizeof out;
      uInt before = zs.avail_in;
      rc = inflate(&zs, Z_NO_FLUSH);
      consumed += before - zs.avail_in;
      if (rc == Z_STREAM_END) {
        at = consumed;
        between = 1;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        break;
      }
    }
    if (zs.avail_in > 0) break;
  }
  inflateEnd(&zs);
  fclose(f);
  struct stat sb;
  if (stat(path, &sb) != 0) return -1;
  return between && at == (long long)sb.st_size ? 0 : at > 0 ? at : -1;
}

/* The whole (decompressed) text of PATH: zlib reads plain and gzipped files alike.  A gzip
 * stream that ends early is an error even when every byte of its data is there (a truncation
 * inside the CRC trailer would otherwise pass unnoticed). */
static rt_status ktfile_read(const char *path, char **out, size_t *len, rt_error *err) {
  *out = NULL;
  *len = 0;
  /* a FIFO, a device or a link to one is refused by name, never opened (fileio.h) */
  int fd;
  rt_status rs = fileio_open_read(path, 0, &fd, err);
  if (rs) return rs;
  struct stat sb;
  if (fstat(fd, &sb) != 0) sb.st_size = 0;
  gzFile gz = gzdopen(fd, "rb");
  if (!gz) {
    int e = errno;
    close(fd);
    return ktfile_fail(err, path, RT_ERR_IO, "cannot open the file: %s", strerror(e));
  }
  gzbuffer(gz, 1 << 17);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  rt_status rc = buf ? RT_OK : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  while (!rc) {
    if (n == cap) {
      if (cap >= KTFILE_MAX_BYTES) {
        rc = ktfile_fail(err, path, RT_ERR_PARSE,
                         "the file holds more than %u MiB of text, more "
                         "than a tuning results file may",
                         KTFILE_MAX_BYTES >> 20);
        break;
      }
      size_t nc = cap * 2 > KTFILE_MAX_BYTES ? KTFILE_MAX_BYTES : cap * 2;
      char *g = realloc(buf, nc + 2); /* one more byte tells a file of exactly the limit */
      if (!g) {
        rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory reading %s", path);
        break;
      }
      buf = g;
      cap = nc + (nc == KTFILE_MAX_BYTES ? 1 : 0);
    }
    int got = gzread(gz, buf + n, (unsigned)(cap - n > (1u << 30) ? 1u << 30 : cap - n));
    if (got <= 0) {
      int zerr = Z_OK;
      const char *zmsg = gzerror(gz, &zerr);
      if (got < 0 || zerr != Z_OK) {
        if (zerr == Z_BUF_ERROR)
          rc = ktfile_fail(err, path, RT_ERR_IO,
                           "cannot decompress the file: it ends early (truncated)");
        else {
          const char *m = zmsg ? strrchr(zmsg, ':') : NULL;
          rc = ktfile_fail(err, path, RT_ERR_IO, "cannot decompress the file: %s",
                           m      ? m + 2
                           : zmsg ? zmsg
                                  : "read error");
        }
      }
      break;
    }
    n += (size_t)got;
    if (n > KTFILE_MAX_BYTES) {
      rc = ktfile_fail(err, path, RT_ERR_PARSE,
                       "the file holds more than %u MiB of text, more "
                       "than a tuning results file may",
                       KTFILE_MAX_BYTES >> 20);
      break;
    }
  }
  if (!rc && !gzdirect(gz)) { /* a gzip file: nothing may follow its streams */
    long long end = gz_trailing(path);
    if (end > 0)
      rc = ktfile_fail(err, path, RT_ERR_PARSE,
                       "the gzip data ends at byte %lld and %lld more bytes follow it "
                       "(not another gzip stream): a damaged file, or one with bytes appended",
                       end, (long long)sb.st_size - end);
  }
  int zc = gzclose_r(gz);
  if (!rc && zc != Z_OK)
    rc = ktfile_fail(err, path, RT_ERR_IO,
                     zc == Z_BUF_ERROR ? "cannot decompress the file: it ends early (truncated)"
                                       : "cannot read the file (error %d closing it)",
                     zc);
  if (rc) {
    free(buf);
    return rc;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return RT_OK;
}

rt_status ktfile_load_select(const char *path, const ktfile_select *sel, ktfile **out,
                             rt_error *err) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  rt_status rc = ktfile_read(path, &text, &len, err);
  if (!rc) rc = ktfile_load_buffer(path, text, len, sel, out, err);
  free(text);
  return rc;
}

/* Kernel Tuner's reading of its own cache (util.py, correct_open_cache): whitespace stripped;
 * a text that does not end in "}\n}" or "}}}" loses one trailing comma and gets "}\n}".  NULL
 * when that changes nothing. */
static char *ktfile_kt_close(const char *data, size_t len, size_t *out_len) {
  size_t a = 0, b = len;
  while (a < b && (data[a] == ' ' || data[a] == '\t' || data[a] == '\n' || data[a] == '\r')) a++;
  while (b > a &&
         (data[b - 1] == ' ' || data[b - 1] == '\t' || data[b - 1] == '\n' || data[b - 1] == '\r'))
    b--;
  if (b - a >= 3 && (!memcmp(data + b - 3, "}\n}", 3) || !memcmp(data + b - 3, "}}}", 3)))
    return NULL;
  if (b > a && data[b - 1] == ',') b--;
  if (b == a) return NULL;
  char *t = malloc(b - a + 4);
  if (!t) return NULL;
  memcpy(t, data + a, b - a);
  memcpy(t + (b - a), "}\n}", 4);
  *out_len = b - a + 3;
  return t;
}

rt_status ktfile_load_buffer(const char *path, const char *data, size_t len,
                             const ktfile_select *sel, ktfile **out, rt_error *err) {
  *out = NULL;
  if (len > KTFILE_MAX_BYTES)
    return ktfile_fail(err, path, RT_ERR_PARSE,
                       "the file holds more than %u MiB of text, more than "
                       "a tuning results file may",
                       KTFILE_MAX_BYTES >> 20);
  size_t blank = 0;
  while (blank < len &&
         (data[blank] == ' ' || data[blank] == '\t' || data[blank] == '\n' || data[blank] == '\r'))
    blank++;
  if (blank == len)
    return ktfile_fail(err, path, RT_ERR_PARSE,
                       len ? "the file holds only white space: no tuning "
                             "results in it"
                           : "the file is empty: no tuning results in it");
  ktfile *kf = calloc(1, sizeof *kf);
  if (!kf || !(kf->path = strdup(path)) || !(kf->space = space_new())) {
    ktfile_free(kf);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  json_error_t jerr;
  json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!root && json_error_code(&jerr) != json_error_duplicate_key) {
    /* an interrupted Kernel Tuner run leaves its cache without the closing braces */
    size_t fl = 0;
    char *fixed = ktfile_kt_close(data, len, &fl);
    json_error_t jerr2;
    json_t *r2 = fixed ? json_loadb(fixed, fl, JSON_REJECT_DUPLICATES, &jerr2) : NULL;
    free(fixed);
    if (r2 && json_is_object(r2) && json_object_get(r2, "cache") &&
        json_object_get(r2, "tune_params")) {
      root = r2;
      kf->unfinished = 1;
    } else {
      json_decref(r2);
    }
  }
  rt_status rc = RT_OK;
  if (!root) {
    rc = ktfile_fail(err, path, RT_ERR_PARSE, "not a tuning results file (invalid JSON): %s",
                     jerr.text);
    if (err) err->line = jerr.line, err->column = jerr.column;
  } else if (!json_is_object(root)) {
    rc = ktfile_fail(err, path, RT_ERR_PARSE,
                     "not a tuning results file: expected a Kernel Tuner cache or KTT results "
                     "object");
  } else if (json_object_get(root, "rooftune_export")) {
    ktfile_select all = {NULL, NULL, NULL};
    json_t *kt = NULL;
    {
      const ktfile_select *o = sel ? sel : &all;
      rc = db_export_to_kt(root, path, o->template_name, o->shape, o->dtype, &kt, err);
    }
    if (rc == RT_OK) rc = ktfile_from_kernel_tuner(kf, kt, err);
    kf->format = KTFILE_ROOFTUNE;
    json_decref(kt);
  } else if (json_is_array(json_object_get(root, "Results"))) {
    rc = ktfile_from_ktt(kf, root, err);
  } else if (json_object_get(root, "cache") || json_object_get(root, "tune_params")) {
    rc = ktfile_from_kernel_tuner(kf, root, err);
  } else {
    rc = ktfile_fail(err, path, RT_ERR_PARSE,
                     "not a tuning results file: neither a Kernel Tuner cache (tune_params, "
                     "cache) nor KTT results (Results)");
  }
  json_decref(root);
  if (rc == RT_OK && kf->configs == 0)
    rc = ktfile_fail(err, path, RT_ERR_SPACE_EMPTY, "the file records no configuration");
  if (rc == RT_OK) rc = ktfile_check_config_len(kf, err);
  if (rc == RT_OK) rc = space_finish(kf->space, err);
  if (rc == RT_OK && kf->valid == 0)
    rc = ktfile_fail(err, path, RT_ERR_SPACE_EMPTY,
                     "every one of the %zu configurations failed; nothing to replay", kf->configs);
  if (rc) {
    /* every error names the file (a message from the space or a domain may not) */
    if (err && strcmp(err->source, path) != 0) {
      rt_error_locate(err, path, NULL, err->line, err->column);
      err->field[0] = '\0';
    }
    ktfile_free(kf);
    return rc;
  }
  kf->optimum_ms = INFINITY;
  for (size_t i = 0; i < kf->configs; i++)
    if (!kf->failure[i] && kf->time_ms[i] < kf->optimum_ms) {
      kf->optimum_ms = kf->time_ms[i];
      kf->optimum_idx = i;
    }
  *out = kf;
  return RT_OK;
}

void ktfile_free(ktfile *kf) {
  if (!kf) return;
  space_free(kf->space);
  free(kf->path);
  free(kf->device_name);
  free(kf->kernel_name);
  free(kf->time_ms);
  free(kf->failure);
  free(kf->counters);
  free(kf->facts);
  for (int i = 0; i < kf->nreasons; i++) free(kf->reasons[i]);
  free(kf->reasons);
  free(kf);
}

rt_status ktfile_find(const ktfile *kf, const char *config, size_t *idx, rt_error *err) {
  rt_status rc = space_parse_config(kf->space, config, idx, err);
  if (rc == RT_ERR_NOT_FOUND)
    return ktfile_fail(err, kf->path, rc,
                       "configuration %s is not recorded in the file (the kernel's restrictions "
                       "exclude it, or it was never measured)",
                       config);
  if (rc) rt_error_locate(err, kf->path, "configuration", 0, err ? err->column : 0);
  return rc;
}

rt_status ktfile_status(const ktfile *kf, size_t idx) {
  const char *f = kf->failure[idx];
  if (!f) return RT_OK;
  if (strstr(f, "Compil") || strstr(f, "compil")) return RT_ERR_COMPILE;
  if (strstr(f, "Runtime") || strstr(f, "runtime") || strstr(f, "Launch")) return RT_ERR_LAUNCH;
  return RT_ERR_INVALID;
}

void ktfile_result(const ktfile *kf, size_t idx, candidate_result *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->template_name, sizeof r->template_name, "%s", kf->kernel_name);
  space_format_config(kf->space, idx, r->config, sizeof r->config);
  r->status = ktfile_status(kf, idx);
  if (kf->failure[idx]) snprintf(r->detail, sizeof r->detail, "%s", kf->failure[idx]);
  r->timing = TIMING_REPLAYED;
  snprintf(r->device_name, sizeof r->device_name, "replay:%s", kf->path);
  r->time_ms = kf->failure[idx] ? NAN : kf->time_ms[idx];
  r->repetitions = 1;
  r->verify_error = -1;
  if (kf->counters) r->counters = kf->counters[idx];
  if (kf->facts) r->facts = kf->facts[idx];
}

size_t ktfile_count_within(const ktfile *kf, double eps) {
  double lim = kf->optimum_ms * (1 + eps);
  size_t k = 0;
  for (size_t i = 0; i < kf->configs; i++)
    if (!kf->failure[i] && kf->time_ms[i] <= lim) k++;
  return k;
}

/* ---- a recorded file as a prior for another space ---- */

/* The text of value v of parameter p ("128", "row"). */
static void ktfile_value_text(const space_param *p, int v, char *buf, size_t size) {
  if (p->ints)
    snprintf(buf, size, "%lld", p->ints[v]);
  else
    snprintf(buf, size, "%s", p->idents[v]);
}

typedef struct {
  const uint16_t *key; /* the configuration's values on the shared parameters (kf positions) */
  int nkey;            /* entries in key */
  size_t idx;          /* its number in s */
} ktfile_rank_key;

static int ktfile_rank_cmp_key(const void *a, const void *b) {
  const ktfile_rank_key *x = a, *y = b;
  return memcmp(x->key, y->key, (size_t)x->nkey * sizeof *x->key);
}

static int ktfile_rank_cmp(const void *a, const void *b) {
  const ktfile_rank_key *x = a, *y = b;
  int c = ktfile_rank_cmp_key(a, b);
  return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int ktfile_time_cmp(const void *a, const void *b, void *ctx) {
  const double *t = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  if (t[x] < t[y]) return -1;
  if (t[x] > t[y]) return 1;
  return (x > y) - (x < y);
}

rt_status ktfile_rank_in(const ktfile *kf, const space *s, size_t **order, size_t *n,
                         rt_error *err) {
  *order = NULL;
  *n = 0;
  int nps = space_nparams(s), npk = space_nparams(kf->space);
  size_t ns = space_size(s);
  /* shared parameters: sp[i] in s, kp[i] in kf; map[i][v]: kf's position of s's value v */
  int *sp = malloc((size_t)(nps + 1) * 2 * sizeof *sp), *kp = sp ? sp + nps + 1 : NULL;
  uint16_t **map = calloc((size_t)nps + 1, sizeof *map);
  uint16_t *keys = NULL, *probe = NULL;
  ktfile_rank_key *rk = NULL;
  size_t *byt = NULL, *out = NULL;
  uint8_t *taken = NULL;
  rt_status rc = RT_OK;
  int nsh = 0;
  if (!sp || !map) {
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (int p = 0; p < nps; p++) {
    const space_param *a = space_param_at(s, p);
    int q = space_param_index(kf->space, a->name);
    if (q < 0) continue;
    const space_param *b = space_param_at(kf->space, q);
    map[nsh] = malloc((size_t)a->count * sizeof **map);
    if (!map[nsh]) {
      rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
      goto done;
    }
    for (int v = 0; v < a->count; v++) {
      char ta[128], tb[128];
      ktfile_value_text(a, v, ta, sizeof ta);
      map[nsh][v] = UINT16_MAX; /* a value kf never declares */
      for (int w = 0; w < b->count; w++) {
        ktfile_value_text(b, w, tb, sizeof tb);
        if (!strcmp(ta, tb)) map[nsh][v] = (uint16_t)w;
      }
    }
    sp[nsh] = p;
    kp[nsh++] = q;
  }
  if (nsh == 0) {
    char names[256] = "";
    for (int q = 0; q < npk && strlen(names) < 200; q++)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", q ? ", " : "",
               space_param_at(kf->space, q)->name);
    char theirs[256] = "";
    for (int p = 0; p < nps && strlen(theirs) < 200; p++)
      snprintf(theirs + strlen(theirs), sizeof theirs - strlen(theirs), "%s%s", p ? ", " : "",
               space_param_at(s, p)->name);
    rc = ktfile_fail(err, kf->path, RT_ERR_INVALID,
                     "shares no parameter with the space it should rank (its parameters are %s; "
                     "the space's are %s): give a recording of the same kernel",
                     names, theirs);
    goto done;
  }
  /* s's configurations sorted by their values on the shared parameters */
  keys = malloc((ns ? ns : 1) * (size_t)nsh * sizeof *keys);
  rk = malloc((ns ? ns : 1) * sizeof *rk);
  probe = malloc((size_t)nsh * sizeof *probe);
  byt = malloc((kf->configs ? kf->configs : 1) * sizeof *byt);
  out = malloc((ns ? ns : 1) * sizeof *out);
  taken = calloc(ns ? ns : 1, 1);
  if (!keys || !rk || !probe || !byt || !out || !taken) {
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < ns; i++) {
    const uint16_t *c = space_config(s, i);
    uint16_t *k = keys + i * (size_t)nsh;
    for (int j = 0; j < nsh; j++) k[j] = map[j][c[sp[j]]];
    rk[i].key = k;
    rk[i].nkey = nsh;
    rk[i].idx = i;
  }
  qsort(rk, ns, sizeof *rk, ktfile_rank_cmp);
  /* kf's timed records, fastest first, each standing for the configurations with its key */
  size_t nt = 0;
  for (size_t i = 0; i < kf->configs; i++)
    if (!kf->failure[i]) byt[nt++] = i;
  qsort_r(byt, nt, sizeof *byt, ktfile_time_cmp, kf->time_ms);
  size_t got = 0;
  for (size_t t = 0; t < nt && got < ns; t++) {
    const uint16_t *c = space_config(kf->space, byt[t]);
    for (int j = 0; j < nsh; j++) probe[j] = c[kp[j]];
    ktfile_rank_key want = {probe, nsh, 0};
    ktfile_rank_key *hit = bsearch(&want, rk, ns, sizeof *rk, ktfile_rank_cmp_key);
    if (!hit) continue;
    while (hit > rk && !ktfile_rank_cmp_key(hit - 1, &want)) hit--;
    for (; hit < rk + ns && !ktfile_rank_cmp_key(hit, &want); hit++)
      if (!taken[hit->idx]) {
        taken[hit->idx] = 1;
        out[got++] = hit->idx;
      }
  }
  *order = out;
  *n = got;
  out = NULL;
done:
  for (int j = 0; map && j < nsh; j++) free(map[j]);
  free(map);
  free(sp);
  free(keys);
  free(rk);
  free(probe);
  free(byt);
  free(out);
  free(taken);
  return rc;
}
