/* job.c — reading and checking a job file, durations and shards (see job.h). */
#include "job/job.h"

#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/family.h"
#include "search/strategy.h"
#include "core/fileio.h"
#include "tuner/device/device.h"
#include "job/jsonline.h"
#include "template/catalog.h"
#include "template/manifest.h"

/* ---- durations ---- */

double job_parse_duration(const char *text) {
  if (!text) return -1;
  const char *s = text;
  while (isspace((unsigned char)*s)) s++;
  if (!*s) return -1;
  double total = 0;
  int parts = 0;
  while (*s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0) return -1;
    s = end;
    while (isspace((unsigned char)*s)) s++;
    double unit = 1;
    switch (*s) {
      case 's':
        unit = 1;
        s++;
        break;
      case 'm':
        unit = 60;
        s++;
        break;
      case 'h':
        unit = 3600;
        s++;
        break;
      case 'd':
        unit = 86400;
        s++;
        break;
      case 'w':
        unit = 7 * 86400;
        s++;
        break;
      case 0:
        if (parts) return -1; /* "1h30" is ambiguous */
        break;
      default: return -1;
    }
    total += v * unit;
    parts++;
    while (isspace((unsigned char)*s)) s++;
  }
  return total;
}

void job_format_duration(double t, char *buf, size_t size) {
  if (!isfinite(t))
    snprintf(buf, size, "-");
  else if (t < 90)
    snprintf(buf, size, "%.0f s", t);
  else if (t < 5400)
    snprintf(buf, size, "%.0f min", t / 60);
  else if (t < 2 * 86400)
    snprintf(buf, size, "%.1f h", t / 3600);
  else
    snprintf(buf, size, "%.1f d", t / 86400);
}

/* ---- shards ---- */

rt_status job_shard_parse(const char *text, job_shard *out, rt_error *err) {
  char *end;
  long i = strtol(text ? text : "", &end, 10);
  long n = -1;
  if (end != text && *end == '/') {
    const char *s = end + 1;
    n = strtol(s, &end, 10);
    if (end == s || *end) n = -1;
  }
  if (n < 1 || n > 100000 || i < 0 || i >= n) {
    rt_error_locate(err, "--shard", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_USAGE,
                        "'%s' is not a shard: give I/N with 0 <= I < N, e.g. 0/4 "
                        "(Slurm: $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)",
                        text ? text : "");
  }
  out->index = (int)i;
  out->count = (int)n;
  return RT_OK;
}

int job_problem_split(const job *j, size_t k, job_shard s) {
  return s.count > 1 && k < j->nproblems && (j->problems[k].split || j->nproblems == 1);
}

int job_shard_owns(const job *j, size_t k, job_shard s) {
  if (k >= j->nproblems) return 0;
  if (s.count <= 1 || job_problem_split(j, k, s)) return 1;
  return (int)(k % (size_t)s.count) == s.index;
}

job_shard job_shard_sub(job_shard s, int g, int count) {
  job_shard r = {s.index * count + g, s.count * count};
  return r;
}

void job_shard_tag(const job *j, job_shard s, char *buf, size_t size) {
  snprintf(buf, size, "[job %s shard %d/%d]", j->name, s.index, s.count > 0 ? s.count : 1);
}

void job_shard_database(const job *j, job_shard s, char *buf, size_t size) {
  buf[0] = 0;
  if (!j->shard_database[0]) return;
  size_t n = 0;
  for (const char *p = j->shard_database; *p && n + 1 < size;) {
    const char *sub = NULL;
    char num[24];
    size_t skip = 0;
    if (!strncmp(p, "{i}", 3))
      snprintf(num, sizeof num, "%d", s.index), sub = num, skip = 3;
    else if (!strncmp(p, "{n}", 3))
      snprintf(num, sizeof num, "%d", s.count), sub = num, skip = 3;
    else if (!strncmp(p, "{name}", 6))
      sub = j->name, skip = 6;
    if (sub) {
      n += (size_t)snprintf(buf + n, size - n, "%s", sub);
      if (n >= size) n = size - 1;
      p += skip;
    } else {
      buf[n++] = *p++;
    }
  }
  buf[n] = 0;
}

/* ---- loading ---- */

typedef struct loader {
  const char *path; /* the file */
  const char *text; /* its text, for lines */
  rt_error *err;
  const int *lines;   /* the line of each problem (jsonline_elements), or NULL */
  manifest **targets; /* the templates problems have named so far, each read from the template
                         path once (not once per problem: 100,000 problems of one template) */
  size_t ntargets, targets_cap;
} loader;

/* The template called NAME from the path: found once, then kept in L for the next problem. */
static rt_status loader_template(loader *L, const char *tpath, const char *name, manifest **out,
                                 rt_error *err) {
  for (size_t i = 0; i < L->ntargets; i++)
    if (!strcmp(manifest_name(L->targets[i]), name)) {
      *out = L->targets[i];
      return RT_OK;
    }
  if (L->ntargets == L->targets_cap) {
    size_t cap = L->targets_cap ? 2 * L->targets_cap : 8;
    manifest **g = realloc(L->targets, cap * sizeof *g);
    if (!g) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    L->targets = g;
    L->targets_cap = cap;
  }
  rt_status rc = catalog_find(tpath, name, out, err);
  if (!rc) L->targets[L->ntargets++] = *out;
  return rc;
}

static void loader_free(loader *L) {
  for (size_t i = 0; i < L->ntargets; i++) manifest_free(L->targets[i]);
  free(L->targets);
}

/* An error about FIELD of the file, with its line. */
static rt_status bad(loader *L, const char *field, rt_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static rt_status bad(loader *L, const char *field, rt_status code, const char *fmt, ...) {
  if (!L->err) return code;
  char text[sizeof L->err->text];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  rt_error_clear(L->err);
  rt_error_locate(L->err, L->path, field, jsonline_find(L->text, field), 0);
  return rt_error_set(L->err, code, "%s", text);
}

static const char *json_kind(const json_t *v) {
  switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a text";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "true/false";
    default: return "null";
  }
}

/* Refuses keys of object O (at FIELD) that are not in KNOWN ("a,b,c"). */
static rt_status known_keys(loader *L, const char *field, json_t *o, const char *known) {
  const char *k;
  json_t *v;
  json_object_foreach(o, k, v) {
    char pat[80];
    snprintf(pat, sizeof pat, ",%s,", k);
    char list[512];
    snprintf(list, sizeof list, ",%s,", known);
    if (!strstr(list, pat)) {
      char f[256];
      snprintf(f, sizeof f, "%s%s%s", field, field[0] ? "." : "", k);
      char shown[512];
      snprintf(shown, sizeof shown, "%s", known);
      for (char *c = shown; *c; c++)
        if (*c == ',') *c = ' ';
      return bad(L, f, RT_ERR_PARSE, "unknown field '%s' (the fields here are: %s)", k, shown);
    }
  }
  return RT_OK;
}

static rt_status get_string(loader *L, json_t *o, const char *field, const char *key, char *out,
                            size_t size, int required) {
  json_t *v = json_object_get(o, key);
  char f[256];
  snprintf(f, sizeof f, "%s%s%s", field, field[0] ? "." : "", key);
  if (!v) return required ? bad(L, field, RT_ERR_PARSE, "missing field '%s'", key) : RT_OK;
  if (!json_is_string(v)) return bad(L, f, RT_ERR_PARSE, "must be a text, not %s", json_kind(v));
  if (strlen(json_string_value(v)) >= size)
    return bad(L, f, RT_ERR_PARSE, "is longer than %zu characters", size - 1);
  if (!json_string_value(v)[0]) return bad(L, f, RT_ERR_PARSE, "is empty");
  snprintf(out, size, "%s", json_string_value(v));
  return RT_OK;
}

static rt_status get_duration(loader *L, json_t *o, const char *field, const char *key, double *out,
                              int allow_zero) {
  json_t *v = json_object_get(o, key);
  if (!v) return RT_OK;
  char f[256];
  snprintf(f, sizeof f, "%s%s%s", field, field[0] ? "." : "", key);
  double t = -1;
  if (json_is_null(v) && allow_zero)
    t = 0;
  else if (json_is_number(v))
    t = json_number_value(v);
  else if (json_is_string(v))
    t = job_parse_duration(json_string_value(v));
  if (!(t >= 0) || !isfinite(t) || (!allow_zero && t == 0))
    return bad(L, f, RT_ERR_PARSE,
               "is not a duration%s: give seconds or a text like \"90m\", "
               "\"1h30m\", \"7d\" (units s m h d w)",
               allow_zero ? "" : " above 0");
  *out = t;
  return RT_OK;
}

static rt_status get_bool(loader *L, json_t *o, const char *field, const char *key, int *out) {
  json_t *v = json_object_get(o, key);
  if (!v) return RT_OK;
  char f[256];
  snprintf(f, sizeof f, "%s%s%s", field, field[0] ? "." : "", key);
  if (!json_is_boolean(v))
    return bad(L, f, RT_ERR_PARSE, "must be true or false, not %s", json_kind(v));
  *out = json_is_true(v);
  return RT_OK;
}

static rt_status get_count(loader *L, json_t *o, const char *field, const char *key, long min,
                           long long *out) {
  json_t *v = json_object_get(o, key);
  if (!v) return RT_OK;
  char f[256];
  snprintf(f, sizeof f, "%s%s%s", field, field[0] ? "." : "", key);
  if (!json_is_integer(v) || json_integer_value(v) < min)
    return bad(L, f, RT_ERR_PARSE, "must be a whole number >= %ld", min);
  *out = (long long)json_integer_value(v);
  return RT_OK;
}

/* PATH resolved against the job's folder (an absolute one as it is); -1 when it does not fit. */
static int resolve(const job *j, const char *path, char *out, size_t size) {
  int n =
      path[0] == '/' ? snprintf(out, size, "%s", path) : snprintf(out, size, "%s/%s", j->dir, path);
  return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int is_dir(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int valid_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 48) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("._-", *s)) return 0;
  return 1;
}

static rt_status load_devices(loader *L, job *j, json_t *v) {
  if (!v) return RT_OK;
  json_t *one = json_is_string(v) ? v : NULL;
  size_t n = one ? 1 : json_is_array(v) ? json_array_size(v) : 0;
  if ((!one && !json_is_array(v)) || n == 0)
    return bad(L, "device", RT_ERR_PARSE,
               "must be a device (\"cuda\", \"cuda:all\", \"model:h200\") "
               "or a non-empty list of them");
  if (n > JOB_MAX_DEVICES)
    return bad(L, "device", RT_ERR_PARSE, "lists more than %d devices", JOB_MAX_DEVICES);
  for (size_t i = 0; i < n; i++) {
    json_t *d = one ? one : json_array_get(v, i);
    char f[64];
    snprintf(f, sizeof f, one ? "device" : "device[%zu]", i);
    if (!json_is_string(d) || !json_string_value(d)[0] ||
        strlen(json_string_value(d)) >= sizeof j->devices[0])
      return bad(L, f, RT_ERR_PARSE, "must be a device name such as \"cuda:0\" or \"model:h200\"");
    const char *s = json_string_value(d);
    rt_error e = {0};
    char kinds[512];
    if (!strcmp(s, "cuda:all")) { /* one process per GPU of the node (job_devices) */
      if (!one) return bad(L, f, RT_ERR_PARSE, "cuda:all stands alone, not in a list");
    } else if (!device_kind_lookup(s)) {
      return bad(L, f, RT_ERR_PARSE, "'%s' is not a device a job can run on: give %s, or cuda:all",
                 s, device_kinds_help(0, kinds, sizeof kinds));
    } else if (device_check(s, &e)) {
      return bad(L, f, RT_ERR_PARSE, "%s", e.text);
    }
    snprintf(j->devices[j->ndevices++], sizeof j->devices[0], "%s", s);
  }
  return RT_OK;
}

static rt_status load_templates(loader *L, job *j, json_t *v) {
  if (!v) return RT_OK;
  size_t n = json_is_string(v) ? 1 : json_is_array(v) ? json_array_size(v) : 0;
  if (!json_is_string(v) && !json_is_array(v))
    return bad(L, "templates", RT_ERR_PARSE, "must be a folder or a list of folders");
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    json_t *d = json_is_string(v) ? v : json_array_get(v, i);
    char f[64];
    snprintf(f, sizeof f, json_is_string(v) ? "templates" : "templates[%zu]", i);
    if (!json_is_string(d) || !json_string_value(d)[0])
      return bad(L, f, RT_ERR_PARSE, "must be a folder name");
    char dir[1024];
    if (resolve(j, json_string_value(d), dir, sizeof dir))
      return bad(L, f, RT_ERR_PARSE, "the path is too long");
    if (!is_dir(dir)) return bad(L, f, RT_ERR_PARSE, "%s is not a folder", dir);
    if (strchr(dir, ':'))
      return bad(L, f, RT_ERR_PARSE, "a template folder's name cannot contain ':' (%s)", dir);
    int w = snprintf(j->templates + used, sizeof j->templates - used, "%s%s", used ? ":" : "", dir);
    if (w < 0 || (size_t)w >= sizeof j->templates - used)
      return bad(L, f, RT_ERR_PARSE, "the template folders are too long together");
    used += (size_t)w;
  }
  return RT_OK;
}

/* The problem at problems[k]: fields, defaults, and its family's parse of the shape. */
static rt_status load_problem(loader *L, job *j, json_t *p, json_t *defaults, size_t k,
                              const char *tpath) {
  char field[64];
  snprintf(field, sizeof field, "problems[%zu]", k);
  job_problem *q = &j->problems[k];
  memset(q, 0, sizeof *q);
  q->line = L->lines ? L->lines[k] : jsonline_find(L->text, field);
  if (!json_is_object(p))
    return bad(L, field, RT_ERR_PARSE, "must be an object with target, shape and dtype, not %s",
               json_kind(p));
  rt_status rc = known_keys(L, field, p, "target,shape,dtype,budget,strategy,seed,split");
  if (rc) return rc;
  long long budget = JOB_DEFAULT_BUDGET, seed = 0;
  /* defaults first, the problem's own fields over them */
  if (defaults) {
    if ((rc = get_string(L, defaults, "defaults", "dtype", q->dtype, sizeof q->dtype, 0)) ||
        (rc =
             get_string(L, defaults, "defaults", "strategy", q->strategy, sizeof q->strategy, 0)) ||
        (rc = get_count(L, defaults, "defaults", "budget", 1, &budget)) ||
        (rc = get_count(L, defaults, "defaults", "seed", 0, &seed)))
      return rc;
  }
  if ((rc = get_string(L, p, field, "target", q->target, sizeof q->target, 1)) ||
      (rc = get_string(L, p, field, "shape", q->shape, sizeof q->shape, 1)) ||
      (rc = get_string(L, p, field, "dtype", q->dtype, sizeof q->dtype, !q->dtype[0])) ||
      (rc = get_string(L, p, field, "strategy", q->strategy, sizeof q->strategy, 0)) ||
      (rc = get_count(L, p, field, "budget", 1, &budget)) ||
      (rc = get_count(L, p, field, "seed", 0, &seed)) ||
      (rc = get_bool(L, p, field, "split", &q->split)))
    return rc;
  q->budget = (long)(budget > LONG_MAX ? LONG_MAX : budget);
  q->seed = (uint64_t)seed;
  char f[96];
  if (q->strategy[0]) {
    int ok = 0;
    for (const char *const *s = strategy_names(); *s; s++) ok |= !strcmp(*s, q->strategy);
    if (!ok) {
      char list[256];
      snprintf(f, sizeof f, "%s.strategy", json_object_get(p, "strategy") ? field : "defaults");
      return bad(L, f, RT_ERR_PARSE, "unknown strategy '%s' (the strategies are %s)", q->strategy,
                 strategy_list(0, list, sizeof list));
    }
  }
  /* the target: a family, or a template whose family parses the shape */
  const family_ops *fam = family_find(q->target);
  if (!fam) {
    manifest *m = NULL;
    rt_error e = {0};
    snprintf(f, sizeof f, "%s.target", field);
    if (loader_template(L, tpath, q->target, &m, &e))
      return bad(L, f, RT_ERR_NOT_FOUND,
                 "'%s' is neither a kernel family (%s) nor a template in the "
                 "template path: %.400s",
                 q->target, family_names(), e.text);
    fam = family_find(manifest_family(m));
    int dt = manifest_has_dtype(m, q->dtype);
    char fname[32];
    snprintf(fname, sizeof fname, "%s", manifest_family(m));
    if (!fam)
      return bad(L, f, RT_ERR_NOT_FOUND, "template %s names an unknown family '%s'", q->target,
                 fname);
    if (!dt) {
      snprintf(f, sizeof f, "%s.dtype", json_object_get(p, "dtype") ? field : "defaults");
      return bad(L, f, RT_ERR_UNSUPPORTED, "template %s does not support dtype '%s'", q->target,
                 q->dtype);
    }
    q->is_template = 1;
  }
  problem prob;
  rt_error e = {0};
  if (fam->parse_shape(fam, q->shape, q->dtype, NULL, &prob, &e)) {
    int about_dtype = !strcmp(e.source, "--dtype"); /* the family says which input it is about */
    snprintf(f, sizeof f, "%s.%s",
             about_dtype && json_object_get(p, "dtype") ? field
             : about_dtype                              ? "defaults"
                                                        : field,
             about_dtype ? "dtype" : "shape");
    return bad(L, f, RT_ERR_PARSE, "%s", e.text);
  }
  snprintf(q->family, sizeof q->family, "%s", prob.family);
  snprintf(q->key_shape, sizeof q->key_shape, "%s", prob.shape);
  snprintf(q->layout, sizeof q->layout, "%s", prob.layout);
  return RT_OK;
}

/* Problems a and b in the order of (target, family, shape, dtype, layout), then of the file. */
static int cmp_problem(const void *a, const void *b) {
  const job_problem *x = *(const job_problem *const *)a, *y = *(const job_problem *const *)b;
  int c = strcmp(x->target, y->target);
  if (!c) c = strcmp(x->family, y->family);
  if (!c) c = strcmp(x->key_shape, y->key_shape);
  if (!c) c = strcmp(x->dtype, y->dtype);
  if (!c) c = strcmp(x->layout, y->layout);
  return c ? c : (x > y) - (x < y);
}

/* The first problem (in file order) that repeats an earlier one is an error naming both; by
 * sorting, so a job of 100,000 problems is not 5 * 10^9 comparisons. */
static rt_status no_duplicates(loader *L, const job *j) {
  const job_problem **v = malloc((j->nproblems ? j->nproblems : 1) * sizeof *v);
  if (!v) return rt_error_set(L->err, RT_ERR_NOMEM, "out of memory for %zu problems", j->nproblems);
  for (size_t k = 0; k < j->nproblems; k++) v[k] = &j->problems[k];
  qsort(v, j->nproblems, sizeof *v, cmp_problem);
  /* in a run of equal problems the file's order holds: its first is the original, its second
   * the first repetition; the error is about the repetition that comes first in the file */
  const job_problem *first = NULL, *dup = NULL;
  for (size_t k = 1; k < j->nproblems; k++) {
    const job_problem *a = v[k - 1], *b = v[k];
    int same = !strcmp(a->target, b->target) && !strcmp(a->family, b->family) &&
               !strcmp(a->key_shape, b->key_shape) && !strcmp(a->dtype, b->dtype) &&
               !strcmp(a->layout, b->layout);
    int starts_run = k < 2 || strcmp(v[k - 2]->target, a->target) ||
                     strcmp(v[k - 2]->family, a->family) ||
                     strcmp(v[k - 2]->key_shape, a->key_shape) ||
                     strcmp(v[k - 2]->dtype, a->dtype) || strcmp(v[k - 2]->layout, a->layout);
    if (same && starts_run && (!dup || b < dup)) dup = b, first = a;
  }
  free(v);
  if (!dup) return RT_OK;
  char field[64];
  snprintf(field, sizeof field, "problems[%zu]", (size_t)(dup - j->problems));
  return bad(L, field, RT_ERR_PARSE, "the same problem as problems[%zu] (line %d): %s %s %s",
             (size_t)(first - j->problems), first->line, dup->target, dup->key_shape, dup->dtype);
}

/* The job's path, folder and name, and the paths it names (database, output, shard_database),
 * relative ones taken from the job file's folder. */
static rt_status load_paths(loader *L, job *j, json_t *root, const char *path) {
  rt_status rc = RT_OK;
  /* the file's absolute path: relative paths in it stay right from any working folder */
  char absolute[PATH_MAX];
  if (!realpath(path, absolute)) snprintf(absolute, sizeof absolute, "%s", path);
  if (strlen(absolute) >= sizeof j->path) {
    rc = rt_error_set(L->err, RT_ERR_IO, "%s: the job file's path is longer than %zu characters",
                      path, sizeof j->path - 1);
    return rc;
  }
  memcpy(j->path, absolute, strlen(absolute) + 1);
  const char *slash = strrchr(j->path, '/');
  if (slash)
    snprintf(j->dir, sizeof j->dir, "%.*s", (int)(slash - j->path), j->path);
  else
    snprintf(j->dir, sizeof j->dir, ".");
  if (!j->dir[0]) snprintf(j->dir, sizeof j->dir, "/");
  /* name: the file's name without .json by default */
  const char *base = slash ? slash + 1 : j->path;
  snprintf(j->name, sizeof j->name, "%.*s", (int)strcspn(base, "."), base);
  if ((rc = get_string(L, root, "", "name", j->name, sizeof j->name, 0))) return rc;
  if (!valid_name(j->name)) {
    rc = bad(L, json_object_get(root, "name") ? "name" : "", RT_ERR_PARSE,
             "'%s' is not a job name: letters, digits, '.', '_' and '-', at most 48%s", j->name,
             json_object_get(root, "name") ? "" : " (taken from the file name; set \"name\")");
    return rc;
  }
  char buf[1024];
  buf[0] = 0;
  if ((rc = get_string(L, root, "", "database", buf, sizeof buf, 0))) return rc;
  if (buf[0] && resolve(j, buf, j->database, sizeof j->database)) {
    rc = bad(L, "database", RT_ERR_PARSE, "the path is too long");
    return rc;
  }
  snprintf(buf, sizeof buf, "%s-out", j->name);
  if ((rc = get_string(L, root, "", "output", buf, sizeof buf, 0))) return rc;
  if (resolve(j, buf, j->output, sizeof j->output)) {
    rc = bad(L, "output", RT_ERR_PARSE, "the path is too long");
    return rc;
  }
  buf[0] = 0;
  if ((rc = get_string(L, root, "", "shard_database", buf, sizeof buf, 0))) return rc;
  if (buf[0]) {
    if (!strstr(buf, "{i}")) {
      rc = bad(L, "shard_database", RT_ERR_PARSE,
               "must contain {i} (the shard's number), e.g. "
               "\"shards/%s-{i}-of-{n}.db\"",
               j->name);
      return rc;
    }
    if (resolve(j, buf, j->shard_database, sizeof j->shard_database)) {
      rc = bad(L, "shard_database", RT_ERR_PARSE, "the path is too long");
      return rc;
    }
  }
  return rc;
}

/* "fresh" (when a winner is stale) and "recheck" (how often and how close), with their defaults. */
static rt_status load_fresh_recheck(loader *L, job *j, json_t *root) {
  rt_status rc = RT_OK;
  j->fresh.max_age_s = JOB_DEFAULT_MAX_AGE_S;
  j->fresh.driver = j->fresh.toolkit = j->fresh.template_version = 1;
  json_t *fr = json_object_get(root, "fresh");
  if (fr) {
    if (!json_is_object(fr)) {
      rc = bad(L, "fresh", RT_ERR_PARSE,
               "must be an object: {\"max_age\": \"7d\", \"driver\": true, "
               "\"toolkit\": true, \"template\": true}");
      return rc;
    }
    if ((rc = known_keys(L, "fresh", fr, "max_age,driver,toolkit,template")) ||
        (rc = get_duration(L, fr, "fresh", "max_age", &j->fresh.max_age_s, 1)) ||
        (rc = get_bool(L, fr, "fresh", "driver", &j->fresh.driver)) ||
        (rc = get_bool(L, fr, "fresh", "toolkit", &j->fresh.toolkit)) ||
        (rc = get_bool(L, fr, "fresh", "template", &j->fresh.template_version)))
      return rc;
  }
  j->recheck = 1;
  j->recheck_every_s = JOB_DEFAULT_RECHECK_EVERY_S;
  j->tolerance = 0.05;
  json_t *rk = json_object_get(root, "recheck");
  if (rk && json_is_boolean(rk)) {
    j->recheck = json_is_true(rk);
  } else if (rk) {
    if (!json_is_object(rk)) {
      rc = bad(L, "recheck", RT_ERR_PARSE,
               "must be true, false or {\"every\": \"20h\", \"tolerance\": 5}");
      return rc;
    }
    if ((rc = known_keys(L, "recheck", rk, "every,tolerance")) ||
        (rc = get_duration(L, rk, "recheck", "every", &j->recheck_every_s, 1)))
      return rc;
    json_t *t = json_object_get(rk, "tolerance");
    if (t && (!json_is_number(t) || !(json_number_value(t) >= 0) || json_number_value(t) > 1000)) {
      rc = bad(L, "recheck.tolerance", RT_ERR_PARSE, "must be a percentage between 0 and 1000");
      return rc;
    }
    if (t) j->tolerance = json_number_value(t) / 100;
  }
  return rc;
}

rt_status job_load(const char *path, job **out, rt_error *err) {
  *out = NULL;
  char *text = NULL;
  rt_status rc = fileio_read(path, &text, NULL, err);
  if (rc) return rc;
  loader L = {path, text, err, NULL, NULL, 0, 0};
  json_error_t je;
  json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
  job *j = NULL;
  if (!root) {
    rt_error_clear(err);
    rt_error_locate(err, path, NULL, je.line, je.column);
    rc = rt_error_set(err, RT_ERR_PARSE, "not a valid JSON job file: %s", je.text);
    goto done;
  }
  if (!json_is_object(root)) {
    rc = bad(&L, "", RT_ERR_PARSE, "a job file is one JSON object, not %s", json_kind(root));
    goto done;
  }
  json_t *ver = json_object_get(root, "rooftune_job");
  if (!ver) {
    rc = bad(&L, "", RT_ERR_PARSE, "not a rooftune job file: it needs \"rooftune_job\": %d",
             JOB_FORMAT_VERSION);
    goto done;
  }
  if (!json_is_integer(ver) || json_integer_value(ver) != JOB_FORMAT_VERSION) {
    rc = bad(&L, "rooftune_job", RT_ERR_PARSE,
             "format version must be %d (this rooftune reads version %d)", JOB_FORMAT_VERSION,
             JOB_FORMAT_VERSION);
    goto done;
  }
  if ((rc = known_keys(&L, "", root,
                       "rooftune_job,name,database,output,device,time_budget,timeout,"
                       "templates,shard_database,defaults,fresh,recheck,problems")))
    goto done;
  j = calloc(1, sizeof *j);
  if (!j) {
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((rc = load_paths(&L, j, root, path))) goto done;
  if ((rc = load_devices(&L, j, json_object_get(root, "device"))) ||
      (rc = get_duration(&L, root, "", "time_budget", &j->time_budget_s, 0)) ||
      (rc = get_duration(&L, root, "", "timeout", &j->timeout_s, 0)) ||
      (rc = load_templates(&L, j, json_object_get(root, "templates"))))
    goto done;
  if ((rc = load_fresh_recheck(&L, j, root))) goto done;
  json_t *defaults = json_object_get(root, "defaults");
  if (defaults && (!json_is_object(defaults) ||
                   (rc = known_keys(&L, "defaults", defaults, "dtype,budget,strategy,seed")))) {
    if (!rc)
      rc = bad(&L, "defaults", RT_ERR_PARSE,
               "must be an object of dtype, budget, strategy and seed");
    goto done;
  }
  json_t *ps = json_object_get(root, "problems");
  if (!ps) {
    rc = bad(&L, "", RT_ERR_PARSE, "missing field 'problems': the list of problems to keep tuned");
    goto done;
  }
  if (!json_is_array(ps) || json_array_size(ps) == 0) {
    rc = bad(&L, "problems", RT_ERR_PARSE,
             "must be a non-empty list of {\"target\", \"shape\", \"dtype\"}");
    goto done;
  }
  /* the template path the problems resolve against, and the families declared in it */
  char cbuf[8192], tpath[12288];
  snprintf(tpath, sizeof tpath, "%s%s%s", j->templates, j->templates[0] ? ":" : "",
           catalog_path(cbuf, sizeof cbuf));
  if ((rc = family_load_path(tpath, err))) goto done;
  j->nproblems = json_array_size(ps);
  j->problems = calloc(j->nproblems, sizeof *j->problems);
  if (!j->problems) {
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory for %zu problems", j->nproblems);
    goto done;
  }
  int *lines = calloc(j->nproblems, sizeof *lines);
  if (lines && jsonline_elements(text, "problems", lines, j->nproblems) == j->nproblems)
    L.lines = lines;
  for (size_t k = 0; k < j->nproblems && !rc; k++)
    rc = load_problem(&L, j, json_array_get(ps, k), defaults, k, tpath);
  if (!rc) rc = no_duplicates(&L, j);
  L.lines = NULL;
  free(lines);
done:
  loader_free(&L);
  json_decref(root);
  free(text);
  if (rc) {
    job_free(j);
    return rc;
  }
  *out = j;
  return RT_OK;
}

void job_free(job *j) {
  if (!j) return;
  free(j->problems);
  free(j);
}
