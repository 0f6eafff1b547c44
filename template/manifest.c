/* manifest.c — loading and checking a template manifest (Jansson), building its space by
 * backtracking, evaluating launch and cost, writing the #define prefix, finding templates.
 *
 * Every expression is compiled once at load against one scope: slots 0..nparams-1 are the
 * parameters, then derived values and external names (problem, dtype, device facts) in the
 * order they are met.  Each derived value and constraint gets a level: the deepest parameter
 * it (transitively) reads, or -1 when it reads only external names.  Backtracking binds
 * parameter i and runs exactly the derived values and constraints of level i.
 */
#include "template/manifest.h"
#include "core/fileio.h"

#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "template/catalog.h"
#include "template/expr.h"

typedef struct manifest_expr {
  char field[80]; /* "constraints[2]": where it is in the file */
  expr *e;        /* compiled against the manifest's scope */
  int level;      /* deepest parameter it reads (through derived values), -1 for none */
} manifest_expr;

enum { SLOT_PARAM, SLOT_DERIVED, SLOT_EXTERNAL };

struct manifest {
  char *path;                  /* as given */
  char *name;                  /* "gemm_mma" */
  char *family;                /* "gemm" */
  char *description;           /* "" when absent */
  char *source;                /* resolved path of the .cu file */
  char *source_dir;            /* its folder: the include path for the template's own headers */
  char *source_name;           /* as written */
  char *entry;                 /* kernel function */
  char *instruction;           /* simt | mma | wgmma */
  char **dtypes;               /* supported dtypes */
  int ndtypes;                 /* how many */
  char **archs;                /* NVRTC targets */
  int narchs;                  /* how many */
  char **options;              /* extra NVRTC options */
  int noptions;                /* how many */
  space_param *params;         /* parameters in declaration order */
  int nparams;                 /* how many */
  char **roles;                /* per parameter: role name from "roles", or NULL */
  int has_roles;               /* "roles" was given */
  int (*cover)[2];             /* "cover": pairs of parameter indices whose value pairs a covering
                          set must hold (template/cover.h) */
  int ncover;                  /* how many */
  char **derived_names;        /* derived values in declaration order */
  manifest_expr *derived;      /* their expressions */
  int *derived_slot;           /* their slots */
  unsigned char *derived_emit; /* 1: goes into the source prefix */
  int nderived;                /* how many */
  manifest_expr *constraints;  /* constraints in order */
  int nconstraints;            /* how many */
  manifest_expr grid[3], block[3], smem; /* launch geometry */
  int has_smem;                          /* "smem" was given (else 0) */
  manifest_expr work;                    /* blocks' worth of work the grid shares */
  int has_work;                          /* "work" was given (else the grid's blocks) */
  manifest_expr flops, dram_bytes;       /* cost */
  manifest_expr executed_flops;          /* cost.executed_flops, when has_executed */
  int has_executed;
  manifest_expr inflight; /* cost.bytes_in_flight, when has_inflight */
  int has_inflight;
  manifest_expr scratch; /* cost.scratch_bytes, when has_scratch */
  int has_scratch;
  expr_scope *scope; /* every name any expression reads */
  int nslots;        /* names in the scope */
  int *slot_kind;    /* SLOT_* per slot */
  int *slot_index;   /* parameter or derived index per slot; -1 for externals */
};

static const char *const manifest_dtypes_known[] = {"f32", "tf32", "f16",  "bf16",
                                                    "f64", "e4m3", "e5m2", "i8"};
static const int manifest_dtypes_bytes[] = {4, 4, 2, 2, 8, 1, 1, 1};
#define MANIFEST_NDTYPES 8

static const char *const manifest_fields[] = {
    "name",        "family", "description", "source", "entry",   "dtypes",      "archs",  "options",
    "instruction", "params", "roles",       "cover",  "derived", "constraints", "launch", "cost"};
#define MANIFEST_NFIELDS ((int)(sizeof manifest_fields / sizeof manifest_fields[0]))

/* ---------------------------------------------------------------- small helpers */

static int manifest_is_ident(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (s++; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
  return 1;
}

static char *manifest_strdup(const char *s) { return strdup(s ? s : ""); }

/* 1-based column of NAME as a whole token in text, or 0. */
static int manifest_name_col(const char *text, const char *name) {
  size_t len = strlen(name);
  for (const char *p = text; (p = strstr(p, name)) != NULL; p++) {
    int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.');
    char c = p[len];
    int after =
        isalnum((unsigned char)c) || c == '_' || (c == '.' && isalpha((unsigned char)p[len + 1]));
    if (!before && !after) return (int)(p - text) + 1;
  }
  return 0;
}

int manifest_dtype_bytes(const char *dtype) {
  for (int i = 0; dtype && i < MANIFEST_NDTYPES; i++)
    if (strcmp(dtype, manifest_dtypes_known[i]) == 0) return manifest_dtypes_bytes[i];
  return 0;
}

static const char *manifest_dtype_list(void) { return "f32, tf32, f16, bf16, f64, e4m3, e5m2, i8"; }

static const char *const manifest_device_names[] = {
#define MANIFEST_FACT_NAME(name, from, field) "device." #name,
    MANIFEST_DEVICE_FACTS(MANIFEST_FACT_NAME)
#undef MANIFEST_FACT_NAME
};
#define MANIFEST_NDEVICE_FACTS (sizeof manifest_device_names / sizeof manifest_device_names[0])

const char *manifest_device_facts(void) {
  static char list[512];
  if (!list[0])
    for (size_t i = 0, n = 0; i < MANIFEST_NDEVICE_FACTS; i++)
      n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                            manifest_device_names[i]);
  return list;
}

static int manifest_is_device_fact(const char *name) {
  for (size_t i = 0; i < MANIFEST_NDEVICE_FACTS; i++)
    if (strcmp(name, manifest_device_names[i]) == 0) return 1;
  return 0;
}

static int manifest_is_dtype_fact(const char *name) {
  if (strcmp(name, "dtype_bytes") == 0) return 1;
  if (strncmp(name, "dtype_is_", 9) == 0) return manifest_dtype_bytes(name + 9) > 0;
  return 0;
}

static int manifest_is_arch(const char *s) {
  if (strncmp(s, "sm_", 3) != 0 || !isdigit((unsigned char)s[3])) return 0;
  const char *p = s + 3;
  while (isdigit((unsigned char)*p)) p++;
  if (*p == 'a') p++;
  return *p == '\0' && p - s <= 7;
}

/* ---------------------------------------------------------------- freeing and accessors */

static void manifest_strv_free(char **v, int n) {
  if (!v) return;
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

static void manifest_expr_free(manifest_expr *x) {
  expr_free(x->e);
  x->e = NULL;
}

void manifest_free(manifest *m) {
  if (!m) return;
  free(m->path);
  free(m->name);
  free(m->family);
  free(m->description);
  free(m->source);
  free(m->source_dir);
  free(m->source_name);
  free(m->entry);
  free(m->instruction);
  manifest_strv_free(m->dtypes, m->ndtypes);
  manifest_strv_free(m->archs, m->narchs);
  manifest_strv_free(m->options, m->noptions);
  for (int i = 0; i < m->nparams; i++) {
    free(m->params[i].name);
    free(m->params[i].ints);
    manifest_strv_free(m->params[i].idents, m->params[i].count);
  }
  free(m->params);
  manifest_strv_free(m->roles, m->nparams);
  free(m->cover);
  manifest_strv_free(m->derived_names, m->nderived);
  for (int i = 0; i < m->nderived; i++) manifest_expr_free(&m->derived[i]);
  free(m->derived);
  free(m->derived_slot);
  free(m->derived_emit);
  for (int i = 0; i < m->nconstraints; i++) manifest_expr_free(&m->constraints[i]);
  free(m->constraints);
  for (int i = 0; i < 3; i++) {
    manifest_expr_free(&m->grid[i]);
    manifest_expr_free(&m->block[i]);
  }
  manifest_expr_free(&m->smem);
  manifest_expr_free(&m->work);
  manifest_expr_free(&m->flops);
  manifest_expr_free(&m->executed_flops);
  manifest_expr_free(&m->inflight);
  manifest_expr_free(&m->scratch);
  manifest_expr_free(&m->dram_bytes);
  expr_scope_free(m->scope);
  free(m->slot_kind);
  free(m->slot_index);
  free(m);
}

const char *manifest_path(const manifest *m) { return m->path; }
const char *manifest_name(const manifest *m) { return m->name; }
const char *manifest_family(const manifest *m) { return m->family; }
const char *manifest_description(const manifest *m) { return m->description; }
const char *manifest_source(const manifest *m) { return m->source; }
const char *manifest_source_name(const manifest *m) { return m->source_name; }
const char *manifest_source_dir(const manifest *m) { return m->source_dir; }
const char *manifest_entry(const manifest *m) { return m->entry; }
const char *manifest_instruction(const manifest *m) { return m->instruction; }
int manifest_ndtypes(const manifest *m) { return m->ndtypes; }
const char *manifest_dtype(const manifest *m, int i) {
  return i >= 0 && i < m->ndtypes ? m->dtypes[i] : NULL;
}
int manifest_narchs(const manifest *m) { return m->narchs; }
const char *manifest_arch(const manifest *m, int i) {
  return i >= 0 && i < m->narchs ? m->archs[i] : NULL;
}
int manifest_noptions(const manifest *m) { return m->noptions; }
const char *manifest_option(const manifest *m, int i) {
  return i >= 0 && i < m->noptions ? m->options[i] : NULL;
}
int manifest_nparams(const manifest *m) { return m->nparams; }
const space_param *manifest_param(const manifest *m, int i) {
  return i >= 0 && i < m->nparams ? &m->params[i] : NULL;
}
int manifest_nderived(const manifest *m) { return m->nderived; }
const char *manifest_derived_name(const manifest *m, int i) {
  return i >= 0 && i < m->nderived ? m->derived_names[i] : NULL;
}
const char *manifest_derived_text(const manifest *m, int i) {
  return i >= 0 && i < m->nderived ? expr_text(m->derived[i].e) : NULL;
}
int manifest_derived_emitted(const manifest *m, int i) {
  return i >= 0 && i < m->nderived && m->derived_emit[i];
}
int manifest_nconstraints(const manifest *m) { return m->nconstraints; }
const char *manifest_constraint(const manifest *m, int i) {
  return i >= 0 && i < m->nconstraints ? expr_text(m->constraints[i].e) : NULL;
}

static int manifest_in(char **v, int n, const char *s) {
  for (int i = 0; s && i < n; i++)
    if (strcmp(v[i], s) == 0) return 1;
  return 0;
}
int manifest_has_dtype(const manifest *m, const char *dtype) {
  return manifest_in(m->dtypes, m->ndtypes, dtype);
}
int manifest_has_arch(const manifest *m, const char *arch) {
  return manifest_in(m->archs, m->narchs, arch);
}

void manifest_roles(const manifest *m, param_roles *out) {
  memset(out, 0, sizeof *out);
  if (m->has_roles) {
    for (int i = 0; i < m->nparams; i++)
      if (m->roles[i]) roles_add(out, (param_role)role_parse(m->roles[i]), m->params[i].name);
    return;
  }
  const char *names[256];
  int n = m->nparams < 256 ? m->nparams : 256;
  for (int i = 0; i < n; i++) names[i] = m->params[i].name;
  roles_guess(out, names, n);
}

/* ---------------------------------------------------------------- loading */

typedef struct manifest_loader {
  manifest *m;      /* being filled */
  const char *path; /* for errors */
  rt_error *err;    /* where errors go */
} manifest_loader;

static rt_status manifest_get_string(manifest_loader *ld, json_t *root, const char *key,
                                     int required, int ident, char **out) {
  json_t *v = json_object_get(root, key);
  if (!v) {
    if (!required) {
      *out = manifest_strdup("");
      return *out ? RT_OK : rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
    }
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, key, 0, "missing required field \"%s\"",
                       key);
  }
  if (!json_is_string(v) || (required && json_string_length(v) == 0))
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, key, 0,
                       "\"%s\" must be a non-empty string", key);
  const char *s = json_string_value(v);
  if (ident && !manifest_is_ident(s))
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, key, 0,
                       "\"%s\" is not a C identifier (letters, digits, '_'; no digit first)", s);
  *out = manifest_strdup(s);
  return *out ? RT_OK : rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
}

/* A list of strings; check(s) returns 1 when acceptable. */
static rt_status manifest_get_strings(manifest_loader *ld, json_t *root, const char *key,
                                      int required, int (*check)(const char *), const char *what,
                                      char ***out, int *count) {
  json_t *v = json_object_get(root, key);
  *out = NULL;
  *count = 0;
  if (!v && !required) return RT_OK;
  if (!v)
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, key, 0, "missing required field \"%s\"",
                       key);
  if (!json_is_array(v) || (required && json_array_size(v) == 0))
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, key, 0,
                       "\"%s\" must be a %slist of strings", key, required ? "non-empty " : "");
  size_t n = json_array_size(v);
  *out = calloc(n ? n : 1, sizeof(char *));
  if (!*out) return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    json_t *s = json_array_get(v, i);
    char field[96];
    snprintf(field, sizeof field, "%s[%zu]", key, i);
    if (!json_is_string(s))
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0, "must be a string");
    const char *t = json_string_value(s);
    if (check && !check(t))
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0, "\"%s\" is not %s", t, what);
    if (manifest_in(*out, *count, t))
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0, "\"%s\" listed twice", t);
    (*out)[*count] = strdup(t);
    if (!(*out)[*count]) return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
    (*count)++;
  }
  return RT_OK;
}

static int manifest_check_dtype(const char *s) { return manifest_dtype_bytes(s) > 0; }

/* Compiles one expression field (a string or an integer) against the manifest's scope. */
static rt_status manifest_compile(manifest_loader *ld, json_t *v, const char *field,
                                  manifest_expr *out) {
  snprintf(out->field, sizeof out->field, "%s", field);
  char num[32];
  const char *text;
  if (json_is_integer(v)) {
    snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
    text = num;
  } else if (json_is_string(v)) {
    text = json_string_value(v);
  } else {
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                       "must be an expression (a string) or an integer");
  }
  rt_error e2;
  rt_error_clear(&e2);
  rt_status s = expr_parse(text, ld->m->scope, &out->e, &e2);
  if (s) return rt_error_at(ld->err, s, ld->path, field, e2.column, "%s", e2.text);
  return RT_OK;
}

/* An optional expression OBJECT.KEY: compiled into *out with *has = 1 when present. */
static rt_status manifest_compile_optional(manifest_loader *ld, json_t *object,
                                           const char *object_name, const char *key,
                                           manifest_expr *out, int *has) {
  json_t *v = json_object_get(object, key);
  if (!v) return RT_OK;
  char field[96];
  snprintf(field, sizeof field, "%s.%s", object_name, key);
  rt_status s = manifest_compile(ld, v, field, out);
  if (!s) *has = 1;
  return s;
}

/* Duplicate values of a parameter, found by sorting (a list may hold 65535 values): *a and *b
 * get the positions of the first repeat (a < b), and 1 is returned; 0 when all differ. */
typedef struct manifest_pos {
  const space_param *p; /* the parameter */
  int i;                /* a position in its list */
} manifest_pos;

static int manifest_pos_cmp(const void *x, const void *y) {
  const manifest_pos *a = x, *b = y;
  int c;
  if (a->p->ints)
    c = (a->p->ints[a->i] > b->p->ints[b->i]) - (a->p->ints[a->i] < b->p->ints[b->i]);
  else
    c = strcmp(a->p->idents[a->i], b->p->idents[b->i]);
  return c ? c : (a->i > b->i) - (a->i < b->i);
}

static int manifest_find_repeat(const space_param *p, int *first, int *second, int *oom) {
  *oom = 0;
  manifest_pos *v = malloc((size_t)p->count * sizeof *v);
  if (!v) return *oom = 1, 0;
  for (int i = 0; i < p->count; i++) v[i] = (manifest_pos){p, i};
  qsort(v, (size_t)p->count, sizeof *v, manifest_pos_cmp);
  int found = 0;
  *second = INT32_MAX;
  for (int i = 1; i < p->count; i++) {
    int same = p->ints ? p->ints[v[i].i] == p->ints[v[i - 1].i]
                       : strcmp(p->idents[v[i].i], p->idents[v[i - 1].i]) == 0;
    if (same && v[i].i < *second) { /* report the repeat that comes first in the file */
      found = 1;
      *first = v[i - 1].i;
      *second = v[i].i;
    }
  }
  free(v);
  return found;
}

static rt_status manifest_load_params(manifest_loader *ld, json_t *root) {
  manifest *m = ld->m;
  json_t *params = json_object_get(root, "params");
  if (!params)
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "params", 0,
                       "missing required field \"params\"");
  if (!json_is_object(params) || json_object_size(params) == 0)
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "params", 0,
                       "\"params\" must be an object of NAME: [values] with at least one entry");
  size_t np = json_object_size(params);
  if (np > MANIFEST_NAMES_MAX)
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "params", 0,
                       "too many parameters (%zu, at most %d with the derived values)", np,
                       MANIFEST_NAMES_MAX);
  m->params = calloc(np, sizeof *m->params);
  m->roles = calloc(np, sizeof *m->roles);
  if (!m->params || !m->roles) return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
  const char *key;
  json_t *dom;
  json_object_foreach(params, key, dom) {
    char field[96];
    snprintf(field, sizeof field, "params.%s", key);
    if (!manifest_is_ident(key) || strncmp(key, "RT_", 3) == 0)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "parameter name \"%s\" must be a C identifier not starting with RT_", key);
    if (strlen(key) >= RT_VAR_NAME_MAX)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "parameter name of %zu characters is too long (at most %d)", strlen(key),
                         RT_VAR_NAME_MAX - 1);
    if (!json_is_array(dom) || json_array_size(dom) == 0)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "must be a non-empty list of integers or identifiers");
    size_t n = json_array_size(dom);
    if (n > UINT16_MAX)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "too many values (%zu, at most %d)", n, UINT16_MAX);
    space_param *p = &m->params[m->nparams++];
    p->name = strdup(key);
    p->count = (int)n;
    int is_int = json_is_integer(json_array_get(dom, 0));
    if (is_int)
      p->ints = calloc(n, sizeof *p->ints);
    else
      p->idents = calloc(n, sizeof *p->idents);
    if (!p->name || (!p->ints && !p->idents))
      return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
    for (size_t j = 0; j < n; j++) {
      json_t *v = json_array_get(dom, j);
      snprintf(field, sizeof field, "params.%s[%zu]", key, j);
      if (is_int) {
        if (!json_is_integer(v))
          return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                             "must be an integer like the first value of %s", key);
        p->ints[j] = (long long)json_integer_value(v);
      } else {
        if (!json_is_string(v) || !manifest_is_ident(json_string_value(v)))
          return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                             "must be %s C identifier (values are integers or identifiers)",
                             j ? "a" : "an integer or a");
        p->idents[j] = strdup(json_string_value(v));
        if (!p->idents[j]) return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
      }
    }
    int first = 0, second = 0, oom = 0;
    if (manifest_find_repeat(p, &first, &second, &oom)) {
      snprintf(field, sizeof field, "params.%s[%d]", key, second);
      if (p->ints)
        return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                           "value %lld repeats %s[%d]", p->ints[second], key, first);
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0, "value %s repeats %s[%d]",
                         p->idents[second], key, first);
    }
    if (oom) return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
    if (expr_scope_add(m->scope, key, p->idents ? p->count : 0, (const char *const *)p->idents) < 0)
      return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
  }
  /* the space's size, refused before anything is enumerated, and the longest configuration
   * text (what the database and the tuner store; never cut) */
  double product = 1;
  size_t longest = 0;
  for (int i = 0; i < m->nparams; i++) {
    const space_param *p = &m->params[i];
    product *= p->count;
    size_t w = 0;
    for (int j = 0; j < p->count; j++) {
      char num[32];
      size_t l =
          p->ints ? (size_t)snprintf(num, sizeof num, "%lld", p->ints[j]) : strlen(p->idents[j]);
      if (l > w) w = l;
    }
    longest += (i ? 1 : 0) + strlen(p->name) + 1 + w;
  }
  if (product > MANIFEST_SPACE_MAX)
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "params", 0,
                       "the parameters span %.3g combinations before constraints, more than the "
                       "%.0e rooftune enumerates; shorten their lists or split the template",
                       product, MANIFEST_SPACE_MAX);
  if (longest > MANIFEST_CONFIG_MAX)
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "params", 0,
                       "a configuration's text can reach %zu characters (NAME=VALUE,...), more "
                       "than the %d rooftune stores; shorten parameter names or values",
                       longest, MANIFEST_CONFIG_MAX);
  return RT_OK;
}

static rt_status manifest_load_roles(manifest_loader *ld, json_t *root) {
  manifest *m = ld->m;
  json_t *roles = json_object_get(root, "roles");
  if (!roles) return RT_OK;
  if (!json_is_object(roles))
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "roles", 0,
                       "\"roles\" must be an object of PARAM: role");
  m->has_roles = 1;
  const char *key;
  json_t *v;
  json_object_foreach(roles, key, v) {
    char field[96];
    snprintf(field, sizeof field, "roles.%s", key);
    int pi = -1;
    for (int i = 0; i < m->nparams; i++)
      if (strcmp(m->params[i].name, key) == 0) pi = i;
    if (pi < 0)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "%s is not a parameter of this template", key);
    if (!json_is_string(v) || role_parse(json_string_value(v)) < 0)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "role must be one of tile_m, tile_n, tile_k, split_k, stages, warps, "
                         "vector, unroll");
    m->roles[pi] = strdup(json_string_value(v));
    if (!m->roles[pi]) return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
  }
  return RT_OK;
}

/* "cover": [["A", "B"], ...], pairs of distinct parameters. */
static rt_status manifest_load_cover(manifest_loader *ld, json_t *root) {
  manifest *m = ld->m;
  json_t *cover = json_object_get(root, "cover");
  if (!cover) return RT_OK;
  if (!json_is_array(cover))
    return rt_error_at(
        ld->err, RT_ERR_MANIFEST, ld->path, "cover", 0,
        "\"cover\" must be an array of parameter pairs, e.g. [[\"CLUSTER\", \"PERSISTENT\"]]");
  m->ncover = (int)json_array_size(cover);
  m->cover = calloc(m->ncover ? (size_t)m->ncover : 1, sizeof *m->cover);
  if (!m->cover) return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < m->ncover; i++) {
    json_t *pair = json_array_get(cover, (size_t)i);
    char field[32];
    snprintf(field, sizeof field, "cover[%d]", i);
    if (!json_is_array(pair) || json_array_size(pair) != 2)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "a pair of two parameter names");
    for (int k = 0; k < 2; k++) {
      const char *name = json_string_value(json_array_get(pair, (size_t)k));
      m->cover[i][k] = -1;
      for (int j = 0; name && j < m->nparams; j++)
        if (strcmp(m->params[j].name, name) == 0) m->cover[i][k] = j;
      if (m->cover[i][k] < 0)
        return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                           "%s is not a parameter of this template",
                           name ? name : "(not a string)");
    }
    if (m->cover[i][0] == m->cover[i][1])
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "a pair of two different parameters");
  }
  return RT_OK;
}

int manifest_ncover(const manifest *m) { return m->ncover; }
void manifest_cover_pair(const manifest *m, int i, const char **a, const char **b) {
  *a = m->params[m->cover[i][0]].name;
  *b = m->params[m->cover[i][1]].name;
}

static rt_status manifest_load_derived(manifest_loader *ld, json_t *root) {
  manifest *m = ld->m;
  json_t *derived = json_object_get(root, "derived");
  if (!derived) return RT_OK;
  if (!json_is_object(derived))
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "derived", 0,
                       "\"derived\" must be an object of NAME: expression");
  size_t n = json_object_size(derived);
  m->derived_names = calloc(n ? n : 1, sizeof(char *));
  m->derived = calloc(n ? n : 1, sizeof *m->derived);
  m->derived_slot = calloc(n ? n : 1, sizeof(int));
  m->derived_emit = calloc(n ? n : 1, 1);
  if (!m->derived_names || !m->derived || !m->derived_slot || !m->derived_emit)
    return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
  const char *key;
  json_t *v;
  json_object_foreach(derived, key, v) {
    char field[96];
    snprintf(field, sizeof field, "derived.%s", key);
    if (!manifest_is_ident(key) || strncmp(key, "RT_", 3) == 0)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "derived name \"%s\" must be a C identifier not starting with RT_", key);
    if (strlen(key) >= RT_VAR_NAME_MAX)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "derived name of %zu characters is too long (at most %d)", strlen(key),
                         RT_VAR_NAME_MAX - 1);
    if (m->nparams + m->nderived >= MANIFEST_NAMES_MAX)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "more than %d parameters and derived values together (a configuration's "
                         "values travel beside the problem's and device's facts)",
                         MANIFEST_NAMES_MAX);
    int existing = expr_scope_find(m->scope, key);
    if (existing >= 0 && existing < m->nparams)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0, "%s is already a parameter",
                         key);
    if (existing >= 0) { /* an earlier expression read it before it was declared */
      for (int i = 0; i < m->nderived; i++) {
        int c = manifest_name_col(expr_text(m->derived[i].e), key);
        if (c)
          return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, m->derived[i].field, c,
                             "%s is used before it is declared; derived values may use only "
                             "earlier ones",
                             key);
      }
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0, "%s declared twice", key);
    }
    int i = m->nderived;
    rt_status s = manifest_compile(ld, v, field, &m->derived[i]);
    m->derived_names[i] = strdup(key);
    m->nderived++;
    if (s) return s;
    if (!m->derived_names[i]) return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
    int slot = expr_scope_add(m->scope, key, 0, NULL);
    if (slot < 0) {
      int c = manifest_name_col(expr_text(m->derived[i].e), key);
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, c, "%s refers to itself", key);
    }
    m->derived_slot[i] = slot;
  }
  return RT_OK;
}

static rt_status manifest_load_exprs(manifest_loader *ld, json_t *root) {
  manifest *m = ld->m;
  rt_status s;
  json_t *cons = json_object_get(root, "constraints");
  if (cons) {
    if (!json_is_array(cons))
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "constraints", 0,
                         "\"constraints\" must be a list of expressions");
    size_t n = json_array_size(cons);
    m->constraints = calloc(n ? n : 1, sizeof *m->constraints);
    if (!m->constraints) return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
      char field[48];
      snprintf(field, sizeof field, "constraints[%zu]", i);
      s = manifest_compile(ld, json_array_get(cons, i), field, &m->constraints[i]);
      m->nconstraints++;
      if (s) return s;
    }
  }
  json_t *launch = json_object_get(root, "launch");
  if (!launch || !json_is_object(launch))
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "launch", 0,
                       "missing or not an object: \"launch\": {\"grid\": [x, y, z], "
                       "\"block\": [x, y, z], \"smem\": bytes}");
  const char *key;
  json_t *v;
  json_object_foreach(launch, key, v) {
    if (strcmp(key, "grid") && strcmp(key, "block") && strcmp(key, "smem") && strcmp(key, "work")) {
      char field[96];
      snprintf(field, sizeof field, "launch.%s", key);
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "unknown field; launch has grid, block, smem and work");
    }
  }
  const char *dims[2] = {"grid", "block"};
  for (int d = 0; d < 2; d++) {
    char field[48];
    snprintf(field, sizeof field, "launch.%s", dims[d]);
    json_t *a = json_object_get(launch, dims[d]);
    if (!a || !json_is_array(a) || json_array_size(a) != 3)
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "must be a list of 3 expressions (x, y, z)");
    for (int i = 0; i < 3; i++) {
      snprintf(field, sizeof field, "launch.%s[%d]", dims[d], i);
      s = manifest_compile(ld, json_array_get(a, (size_t)i), field,
                           d == 0 ? &m->grid[i] : &m->block[i]);
      if (s) return s;
    }
  }
  if ((s = manifest_compile_optional(ld, launch, "launch", "smem", &m->smem, &m->has_smem)) ||
      (s = manifest_compile_optional(ld, launch, "launch", "work", &m->work, &m->has_work)))
    return s;
  json_t *cost = json_object_get(root, "cost");
  if (!cost || !json_is_object(cost))
    return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "cost", 0,
                       "missing or not an object: \"cost\": {\"flops\": e, \"dram_bytes\": e}");
  json_object_foreach(cost, key, v) {
    if (strcmp(key, "flops") && strcmp(key, "dram_bytes") && strcmp(key, "executed_flops") &&
        strcmp(key, "bytes_in_flight") && strcmp(key, "scratch_bytes")) {
      char field[96];
      snprintf(field, sizeof field, "cost.%s", key);
      return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                         "unknown field; cost has flops, dram_bytes, executed_flops, "
                         "bytes_in_flight and scratch_bytes");
    }
  }
  if ((s = manifest_compile_optional(ld, cost, "cost", "executed_flops", &m->executed_flops,
                                     &m->has_executed)) ||
      (s = manifest_compile_optional(ld, cost, "cost", "bytes_in_flight", &m->inflight,
                                     &m->has_inflight)) ||
      (s = manifest_compile_optional(ld, cost, "cost", "scratch_bytes", &m->scratch,
                                     &m->has_scratch)))
    return s;
  json_t *f = json_object_get(cost, "flops"), *b = json_object_get(cost, "dram_bytes");
  if (!f) return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "cost.flops", 0, "missing");
  if (!b) return rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, "cost.dram_bytes", 0, "missing");
  s = manifest_compile(ld, f, "cost.flops", &m->flops);
  if (s) return s;
  return manifest_compile(ld, b, "cost.dram_bytes", &m->dram_bytes);
}

/* Every expression, in file order, for scans. */
static int manifest_all_exprs(manifest *m, manifest_expr **out, int cap) {
  int n = 0;
  for (int i = 0; i < m->nderived && n < cap; i++) out[n++] = &m->derived[i];
  for (int i = 0; i < m->nconstraints && n < cap; i++) out[n++] = &m->constraints[i];
  for (int i = 0; i < 3 && n < cap; i++) out[n++] = &m->grid[i];
  for (int i = 0; i < 3 && n < cap; i++) out[n++] = &m->block[i];
  if (m->has_smem && n < cap) out[n++] = &m->smem;
  if (m->has_work && n < cap) out[n++] = &m->work;
  if (n < cap) out[n++] = &m->flops;
  if (n < cap) out[n++] = &m->dram_bytes;
  if (m->has_executed && n < cap) out[n++] = &m->executed_flops;
  if (m->has_inflight && n < cap) out[n++] = &m->inflight;
  if (m->has_scratch && n < cap) out[n++] = &m->scratch;
  return n;
}

/* Slot kinds, levels, and which derived values go into the source. */
static rt_status manifest_analyse(manifest_loader *ld) {
  manifest *m = ld->m;
  int ns = m->nslots = expr_scope_count(m->scope);
  m->slot_kind = calloc((size_t)ns, sizeof(int));
  m->slot_index = calloc((size_t)ns, sizeof(int));
  int *level = calloc((size_t)ns, sizeof(int));
  unsigned char *shapefree = calloc((size_t)ns, 1);
  if (!m->slot_kind || !m->slot_index || !level || !shapefree) {
    free(level);
    free(shapefree);
    return rt_error_set(ld->err, RT_ERR_NOMEM, "out of memory");
  }
  for (int s = 0; s < ns; s++) {
    m->slot_kind[s] = SLOT_EXTERNAL;
    m->slot_index[s] = -1;
    level[s] = -1;
    const char *name = expr_scope_name(m->scope, s);
    shapefree[s] = strncmp(name, "device.", 7) == 0 || strncmp(name, "dtype_", 6) == 0;
  }
  for (int i = 0; i < m->nparams; i++) {
    m->slot_kind[i] = SLOT_PARAM;
    m->slot_index[i] = i;
    level[i] = i;
    shapefree[i] = 1;
  }
  for (int i = 0; i < m->nderived; i++) {
    int s = m->derived_slot[i], n;
    m->slot_kind[s] = SLOT_DERIVED;
    m->slot_index[s] = i;
    const int *used = expr_slots(m->derived[i].e, &n);
    int lv = -1, free_ = 1;
    for (int k = 0; k < n; k++) {
      if (level[used[k]] > lv) lv = level[used[k]];
      if (!shapefree[used[k]]) free_ = 0;
    }
    m->derived[i].level = level[s] = lv;
    shapefree[s] = (unsigned char)free_;
    m->derived_emit[i] = (unsigned char)free_;
  }
  for (int i = 0; i < m->nconstraints; i++) {
    int n, lv = -1;
    const int *used = expr_slots(m->constraints[i].e, &n);
    for (int k = 0; k < n; k++)
      if (level[used[k]] > lv) lv = level[used[k]];
    m->constraints[i].level = lv;
  }
  free(level);
  free(shapefree);
  /* external names that can be checked now: device and dtype facts */
  manifest_expr *all[1024];
  int na = manifest_all_exprs(m, all, 1024);
  for (int s = 0; s < ns; s++) {
    if (m->slot_kind[s] != SLOT_EXTERNAL) continue;
    const char *name = expr_scope_name(m->scope, s);
    int bad_dev = strncmp(name, "device.", 7) == 0 && !manifest_is_device_fact(name);
    int bad_dt = strncmp(name, "dtype_", 6) == 0 && !manifest_is_dtype_fact(name);
    if (!bad_dev && !bad_dt) continue;
    for (int k = 0; k < na; k++) {
      int n;
      const int *used = expr_slots(all[k]->e, &n);
      for (int j = 0; j < n; j++)
        if (used[j] == s) {
          int c = manifest_name_col(expr_text(all[k]->e), name);
          if (bad_dev)
            return rt_error_at(ld->err, RT_ERR_EXPR, ld->path, all[k]->field, c,
                               "unknown device fact %s; device facts are: %s", name,
                               manifest_device_facts());
          return rt_error_at(ld->err, RT_ERR_EXPR, ld->path, all[k]->field, c,
                             "unknown dtype fact %s; dtype facts are: dtype_bytes, "
                             "dtype_is_<d> for d in %s",
                             name, manifest_dtype_list());
        }
    }
  }
  return RT_OK;
}

/* 1 when a source file name can go into `#line 1 "NAME"` as it is: no quote, backslash or
 * control character could end the string or the line and put text into the compiled source. */
static int manifest_safe_file_name(const char *s) {
  for (; *s; s++)
    if (*s == '"' || *s == '\\' || (unsigned char)*s < 32 || *s == 127) return 0;
  return 1;
}

/* ---------------------------------------------------------------- the entry's arguments */

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The kernel's argument list: the text between the parentheses after `entry` where a
 * __global__ declaration names it, comments blanked, into buf; *line its line in src.  0 when
 * the source declares no such kernel (the compile says so). */
static int entry_args(const char *src, const char *entry, char *buf, size_t size, int *line) {
  size_t el = strlen(entry);
  for (const char *p = strstr(src, entry); p; p = strstr(p + 1, entry)) {
    if ((p > src && ident_char(p[-1])) || ident_char(p[el])) continue;
    const char *q = p + el;
    while (isspace((unsigned char)*q)) q++;
    if (*q != '(') continue;
    const char *back = p; /* the declaration's start: after the previous ';', '}' or '{' */
    while (back > src && !strchr(";{}", back[-1])) back--;
    const char *g = strstr(back, "__global__");
    if (!g || g > p) continue;
    size_t n = 0;
    int depth = 0, bol = 0; /* bol: only blanks since the last newline */
    for (q++; *q && n + 1 < size; q++) {
      if (*q == '\n')
        bol = 1;
      else if (bol && *q == '#') { /* a preprocessor line (#if EPI): not an argument's text */
        while (*q && !(*q == '\n' && q[-1] != '\\')) q++;
        if (!*q) break;
        buf[n++] = ' ';
        continue;
      } else if (!isspace((unsigned char)*q))
        bol = 0;
      if (q[0] == '/' && q[1] == '*') {
        const char *e = strstr(q + 2, "*/");
        if (!e) break;
        q = e + 1;
        buf[n++] = ' ';
        continue;
      }
      if (q[0] == '/' && q[1] == '/') {
        while (*q && *q != '\n') q++;
        if (!*q) break;
      }
      if (strchr("(<[", *q)) depth++;
      if (*q == ')' && depth == 0) break;
      if (strchr(")>]", *q)) depth--;
      buf[n++] = *q;
    }
    buf[n] = 0;
    *line = 1;
    for (const char *c = src; c < p; c++) *line += *c == '\n';
    return 1;
  }
  return 0;
}

/* The name an argument declaration declares ("const float *x" → "x", "int n = 4" → "n"); "" when
 * it declares none ("void"). */
static void arg_name(const char *decl, size_t len, char *name, size_t size) {
  size_t end = len;
  for (size_t i = 0; i < len; i++)
    if (decl[i] == '=' || decl[i] == '[') {
      end = i;
      break;
    }
  while (end > 0 && !ident_char(decl[end - 1])) end--;
  size_t start = end;
  while (start > 0 && ident_char(decl[start - 1])) start--;
  size_t words = 0; /* a lone word is a type ("void"), not a name */
  for (size_t i = 0; i < start; i++)
    words += ident_char(decl[i]) && (i == 0 || !ident_char(decl[i - 1]));
  snprintf(name, size, "%.*s", words ? (int)(end - start) : 0, decl + start);
}

/* A parameter or derived value that goes into the source prefix as a #define named like an
 * argument of the entry kernel would replace it (`#define T 256` in `float T`, and the compile
 * said only "expected a ')'"): refused when the template is read, naming both. */
static rt_status manifest_check_entry_args(manifest_loader *ld) {
  manifest *m = ld->m;
  char *src = NULL;
  if (fileio_read(m->source, &src, NULL, NULL) != RT_OK) return RT_OK; /* the compile says */
  char args[4096];
  int line = 0;
  rt_status s = RT_OK;
  if (entry_args(src, m->entry, args, sizeof args, &line)) {
    int k = 0;
    for (const char *a = args; *a && !s; k++) {
      int depth = 0;
      const char *e = a;
      for (; *e && !(*e == ',' && depth == 0); e++)
        depth += strchr("(<[", *e) ? 1 : strchr(")>]", *e) ? -1 : 0;
      char name[128];
      arg_name(a, (size_t)(e - a), name, sizeof name);
      char decl[160];
      const char *d0 = a;
      while (isspace((unsigned char)*d0)) d0++;
      snprintf(decl, sizeof decl, "%.*s", (int)(e - d0), d0);
      for (size_t t = strlen(decl); t > 0 && isspace((unsigned char)decl[t - 1]); t--)
        decl[t - 1] = 0;
      for (int i = 0; name[0] && !s && i < m->nparams + m->nderived; i++) {
        int is_param = i < m->nparams;
        const char *pn = is_param ? m->params[i].name : m->derived_names[i - m->nparams];
        if (!is_param && !manifest_derived_emitted(m, i - m->nparams)) continue;
        if (strcmp(pn, name)) continue;
        char field[160];
        snprintf(field, sizeof field, "%s.%s", is_param ? "params" : "derived", pn);
        s = rt_error_at(ld->err, RT_ERR_MANIFEST, ld->path, field, 0,
                        "%s %s is also the name of argument %d of kernel %s (\"%s\", %s line %d): "
                        "its #define would replace the argument; rename one of them",
                        is_param ? "parameter" : "derived value", pn, k + 1, m->entry, decl,
                        m->source_name, line);
      }
      a = *e ? e + 1 : e;
    }
  }
  free(src);
  return s;
}

rt_status manifest_load(const char *path, manifest **out, rt_error *err) {
  *out = NULL;
  struct stat fst;
  if (stat(path, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_size > MANIFEST_FILE_MAX)
    return rt_error_at(err, RT_ERR_MANIFEST, path, NULL, 0,
                       "the manifest is %lld bytes, more than the %d a manifest may have",
                       (long long)fst.st_size, MANIFEST_FILE_MAX);
  /* a FIFO, a device or a link to one is refused by name, never opened (fileio.h) */
  char *text = NULL;
  size_t len = 0;
  rt_status rs = fileio_read_max(path, MANIFEST_FILE_MAX, &text, &len, err);
  if (rs) return rs;
  json_error_t jerr;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  free(text);
  if (!root) {
    rt_status s = rt_error_at(err, RT_ERR_PARSE, path, NULL, 0, "invalid JSON: %s", jerr.text);
    if (err) err->line = jerr.line, err->column = jerr.column;
    return s;
  }
  manifest *m = calloc(1, sizeof *m);
  manifest_loader ld = {m, path, err};
  rt_status s = RT_OK;
  if (!m || !(m->scope = expr_scope_new()) || !(m->path = strdup(path))) {
    s = rt_error_set(err, RT_ERR_NOMEM, "out of memory loading %s", path);
    goto done;
  }
  if (!json_is_object(root)) {
    s = rt_error_at(err, RT_ERR_MANIFEST, path, NULL, 0,
                    "a manifest is a JSON object (see manifest.h for its fields)");
    goto done;
  }
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    int known = 0;
    for (int i = 0; i < MANIFEST_NFIELDS; i++)
      if (strcmp(key, manifest_fields[i]) == 0) known = 1;
    if (!known) {
      char list[256] = "";
      for (int i = 0; i < MANIFEST_NFIELDS; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 manifest_fields[i]);
      s = rt_error_at(err, RT_ERR_MANIFEST, path, key, 0, "unknown field; fields are: %s", list);
      goto done;
    }
  }
  if ((s = manifest_get_string(&ld, root, "name", 1, 1, &m->name)) ||
      (s = manifest_get_string(&ld, root, "family", 1, 1, &m->family)) ||
      (s = manifest_get_string(&ld, root, "description", 0, 0, &m->description)) ||
      (s = manifest_get_string(&ld, root, "source", 1, 0, &m->source_name)) ||
      (s = manifest_get_string(&ld, root, "entry", 1, 1, &m->entry)) ||
      (s = manifest_get_string(&ld, root, "instruction", 0, 0, &m->instruction)))
    goto done;
  if (!m->instruction[0]) {
    free(m->instruction);
    m->instruction = strdup("simt");
  } else if (strcmp(m->instruction, "simt") && strcmp(m->instruction, "mma") &&
             strcmp(m->instruction, "wgmma")) {
    s = rt_error_at(err, RT_ERR_MANIFEST, path, "instruction", 0,
                    "\"%s\" is not an instruction path; use simt, mma or wgmma", m->instruction);
    goto done;
  }
  if ((s = manifest_get_strings(&ld, root, "dtypes", 1, manifest_check_dtype,
                                "a dtype (f32, tf32, f16, bf16, f64, e4m3, e5m2, i8)", &m->dtypes,
                                &m->ndtypes)) ||
      (s = manifest_get_strings(&ld, root, "archs", 1, manifest_is_arch,
                                "an NVRTC target like sm_80, sm_90 or sm_90a", &m->archs,
                                &m->narchs)) ||
      (s = manifest_get_strings(&ld, root, "options", 0, NULL, "", &m->options, &m->noptions)))
    goto done;
  /* the source, next to the manifest */
  {
    const char *sn = m->source_name;
    if (!manifest_safe_file_name(sn)) {
      s = rt_error_at(err, RT_ERR_MANIFEST, path, "source", 0,
                      "the file name holds a quote, a backslash or a control character; name "
                      "the source file without them");
      goto done;
    }
    if (sn[0] == '/' || strstr(sn, "..")) {
      s = rt_error_at(err, RT_ERR_MANIFEST, path, "source", 0,
                      "\"%s\" must be a path inside the manifest's folder", sn);
      goto done;
    }
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path + 1) : 0;
    m->source = malloc(dl + strlen(sn) + 1);
    if (!m->source) {
      s = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
      goto done;
    }
    memcpy(m->source, path, dl);
    strcpy(m->source + dl, sn);
    const char *last = strrchr(m->source, '/');
    m->source_dir = last ? strndup(m->source, (size_t)(last - m->source)) : strdup(".");
    if (!m->source_dir) {
      s = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
      goto done;
    }
    struct stat st;
    if (stat(m->source, &st) != 0) {
      s = rt_error_at(err, RT_ERR_MANIFEST, path, "source", 0,
                      "source file %s not found next to the manifest", sn);
      goto done;
    }
    if (!S_ISREG(st.st_mode)) { /* a FIFO would block its reader, a device never ends */
      s = rt_error_at(err, RT_ERR_MANIFEST, path, "source", 0,
                      "source file %s next to the manifest is %s, not a regular file", sn,
                      fileio_kind(st.st_mode));
      goto done;
    }
  }
  if ((s = manifest_load_params(&ld, root)) || (s = manifest_load_roles(&ld, root)) ||
      (s = manifest_load_cover(&ld, root)))
    goto done;
  /* names no parameter or derived value declares are external (problem, dtype, device facts) */
  expr_scope_set_open(m->scope, 1);
  if ((s = manifest_load_derived(&ld, root)) || (s = manifest_load_exprs(&ld, root)) ||
      (s = manifest_analyse(&ld)) || (s = manifest_check_entry_args(&ld)))
    goto done;
done:
  json_decref(root);
  if (s) {
    manifest_free(m);
    return s;
  }
  *out = m;
  return RT_OK;
}

/* ---------------------------------------------------------------- environments */

rt_status manifest_env_dtype(const char *dtype, rt_vars *env, rt_error *err) {
  int b = manifest_dtype_bytes(dtype);
  if (!b)
    return rt_error_set(err, RT_ERR_INVALID, "unknown dtype %s; dtypes are: %s",
                        dtype ? dtype : "(none)", manifest_dtype_list());
  if (rt_vars_set(env, "dtype_bytes", b))
    return rt_error_set(err, RT_ERR_INVALID, "too many variables setting dtype facts");
  for (int i = 0; i < MANIFEST_NDTYPES; i++) {
    char name[32];
    snprintf(name, sizeof name, "dtype_is_%s", manifest_dtypes_known[i]);
    if (rt_vars_set(env, name, strcmp(dtype, manifest_dtypes_known[i]) == 0))
      return rt_error_set(err, RT_ERR_INVALID, "too many variables setting dtype facts");
  }
  return RT_OK;
}

/* ---------------------------------------------------------------- evaluation helpers */

/* Lists "params..., derived..., and env names" for an unknown-name error. */
static void manifest_names_list(const manifest *m, const rt_vars *env, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
#define ADD(s)                                                          \
  do {                                                                  \
    if (n < size) {                                                     \
      int w_ = snprintf(buf + n, size - n, "%s%s", n ? ", " : "", (s)); \
      if (w_ > 0) n += (size_t)w_;                                      \
    }                                                                   \
  } while (0)
  for (int i = 0; i < m->nparams; i++) ADD(m->params[i].name);
  for (int i = 0; i < m->nderived; i++) ADD(m->derived_names[i]);
  for (int i = 0; env && i < env->count; i++)
    if (expr_scope_find(m->scope, env->names[i]) < 0 ||
        m->slot_kind[expr_scope_find(m->scope, env->names[i])] == SLOT_EXTERNAL)
      ADD(env->names[i]);
#undef ADD
  if (n >= size && size > 4) strcpy(buf + size - 4, "...");
}

/* Fills external slots from vars; have[s] = 1 for those found. */
static void manifest_bind_externals(const manifest *m, const rt_vars *vars, long long *vals,
                                    unsigned char *have) {
  for (int s = 0; s < m->nslots; s++) {
    if (m->slot_kind[s] != SLOT_EXTERNAL) continue;
    have[s] = (unsigned char)rt_vars_get(vars, expr_scope_name(m->scope, s), &vals[s]);
  }
}

/* RT_ERR_EXPR naming the first slot x reads that is not bound. */
static rt_status manifest_check_bound(const manifest *m, const manifest_expr *x,
                                      const unsigned char *have, const rt_vars *env,
                                      rt_error *err) {
  int n;
  const int *used = expr_slots(x->e, &n);
  for (int k = 0; k < n; k++) {
    if (have[used[k]]) continue;
    const char *name = expr_scope_name(m->scope, used[k]);
    char list[560];
    manifest_names_list(m, env, list, sizeof list);
    return rt_error_at(err, RT_ERR_EXPR, m->path, x->field,
                       manifest_name_col(expr_text(x->e), name), "unknown name %s; names are: %s",
                       name, list);
  }
  return RT_OK;
}

static rt_status manifest_eval(const manifest *m, const manifest_expr *x, const long long *vals,
                               long long *out, rt_error *err) {
  rt_error e2;
  if (expr_eval(x->e, vals, out, &e2) == RT_OK) return RT_OK;
  return rt_error_at(err, RT_ERR_EXPR, m->path, x->field, e2.column, "%s", e2.text);
}

/* ---------------------------------------------------------------- space construction */

typedef struct manifest_build {
  const manifest *m;  /* the template */
  long long *vals;    /* slot values */
  uint16_t *cfg;      /* value indices being built */
  space *sp;          /* output */
  int **lvl_derived;  /* per level (index level+1): derived indices */
  int *n_lvl_derived; /* how many */
  int **lvl_cons;     /* per level: constraint indices */
  int *n_lvl_cons;    /* how many */
  size_t *rejected;   /* per constraint: subtrees it pruned */
  rt_error *err;      /* where errors go */
  int first_only;     /* stop at the first valid configuration (manifest_space_check) */
  int stop;           /* set when it was found */
} manifest_build;

static rt_status manifest_build_fail(manifest_build *b, const manifest_expr *x, rt_error *e2,
                                     int bound) {
  char cfg[512] = "";
  size_t n = 0;
  for (int i = 0; i < bound && n < sizeof cfg; i++) {
    const space_param *p = &b->m->params[i];
    int w = p->ints ? snprintf(cfg + n, sizeof cfg - n, "%s%s=%lld", i ? "," : "", p->name,
                               p->ints[b->cfg[i]])
                    : snprintf(cfg + n, sizeof cfg - n, "%s%s=%s", i ? "," : "", p->name,
                               p->idents[b->cfg[i]]);
    if (w > 0) n += (size_t)w;
  }
  return rt_error_at(b->err, RT_ERR_EXPR, b->m->path, x->field, e2->column, "%s (at %s)", e2->text,
                     bound ? cfg : "no parameters bound");
}

/* Runs the derived values and constraints of one level; 1 when all pass, 0 when pruned,
 * -1 on an error (in b->err). */
static int manifest_run_level(manifest_build *b, int lv) {
  const manifest *m = b->m;
  long long r;
  rt_error e2;
  int k = lv + 1;
  for (int j = 0; j < b->n_lvl_derived[k]; j++) {
    const manifest_expr *x = &m->derived[b->lvl_derived[k][j]];
    if (expr_eval(x->e, b->vals, &b->vals[m->derived_slot[b->lvl_derived[k][j]]], &e2)) {
      manifest_build_fail(b, x, &e2, lv + 1);
      return -1;
    }
  }
  for (int j = 0; j < b->n_lvl_cons[k]; j++) {
    const manifest_expr *x = &m->constraints[b->lvl_cons[k][j]];
    if (expr_eval(x->e, b->vals, &r, &e2)) {
      manifest_build_fail(b, x, &e2, lv + 1);
      return -1;
    }
    if (!r) {
      b->rejected[b->lvl_cons[k][j]]++;
      return 0;
    }
  }
  return 1;
}

static rt_status manifest_build_level(manifest_build *b, int i) {
  const space_param *p = &b->m->params[i];
  int last = i + 1 == b->m->nparams;
  for (int v = 0; v < p->count; v++) {
    b->cfg[i] = (uint16_t)v;
    b->vals[i] = p->ints ? p->ints[v] : v;
    int ok = manifest_run_level(b, i);
    if (ok < 0) return b->err ? b->err->code : RT_ERR_EXPR;
    if (!ok) continue;
    if (last && space_size(b->sp) >= MANIFEST_CONFIGS_MAX)
      return rt_error_at(b->err, RT_ERR_MANIFEST, b->m->path, "params", 0,
                         "template %s has more than %d valid configurations for this problem; "
                         "shorten its parameter lists or add constraints",
                         b->m->name, MANIFEST_CONFIGS_MAX);
    rt_status s = last ? space_add_config(b->sp, b->cfg, b->err) : manifest_build_level(b, i + 1);
    if (s) return s;
    if (last && b->first_only) b->stop = 1;
    if (b->stop) return RT_OK;
  }
  return RT_OK;
}

/* manifest_build_space, or (first_only) its first valid configuration only. */
static rt_status build_space(const manifest *m, const rt_vars *env, int first_only, space **out,
                             rt_error *err) {
  *out = NULL;
  int np = m->nparams, ns = m->nslots;
  manifest_build b = {.m = m, .err = err, .first_only = first_only};
  rt_status s = RT_OK;
  unsigned char *have = calloc((size_t)ns, 1);
  b.vals = calloc((size_t)ns, sizeof *b.vals);
  b.cfg = calloc((size_t)np, sizeof *b.cfg);
  b.lvl_derived = calloc((size_t)np + 1, sizeof *b.lvl_derived);
  b.n_lvl_derived = calloc((size_t)np + 1, sizeof(int));
  b.lvl_cons = calloc((size_t)np + 1, sizeof *b.lvl_cons);
  b.n_lvl_cons = calloc((size_t)np + 1, sizeof(int));
  b.rejected = calloc((size_t)m->nconstraints + 1, sizeof *b.rejected);
  b.sp = space_new();
  if (!have || !b.vals || !b.cfg || !b.lvl_derived || !b.n_lvl_derived || !b.lvl_cons ||
      !b.n_lvl_cons || !b.rejected || !b.sp) {
    s = rt_error_set(err, RT_ERR_NOMEM, "out of memory building the space of %s", m->name);
    goto done;
  }
  for (int i = 0; i < np; i++) have[i] = 1;
  for (int i = 0; i < m->nderived; i++) have[m->derived_slot[i]] = 1;
  manifest_bind_externals(m, env, b.vals, have);
  for (int i = 0; i < m->nderived; i++)
    if ((s = manifest_check_bound(m, &m->derived[i], have, env, err))) goto done;
  for (int i = 0; i < m->nconstraints; i++)
    if ((s = manifest_check_bound(m, &m->constraints[i], have, env, err))) goto done;
  /* launch and cost read the same problem and device facts: a name missing there is a
   * manifest error worth reporting before anything is compiled */
  {
    manifest_expr *all[1024];
    int na = manifest_all_exprs((manifest *)m, all, 1024);
    for (int i = m->nderived + m->nconstraints; i < na; i++)
      if ((s = manifest_check_bound(m, all[i], have, env, err))) goto done;
  }
  for (int l = 0; l <= np; l++) {
    b.lvl_derived[l] = calloc((size_t)m->nderived + 1, sizeof(int));
    b.lvl_cons[l] = calloc((size_t)m->nconstraints + 1, sizeof(int));
    if (!b.lvl_derived[l] || !b.lvl_cons[l]) {
      s = rt_error_set(err, RT_ERR_NOMEM, "out of memory building the space of %s", m->name);
      goto done;
    }
  }
  for (int i = 0; i < m->nderived; i++) {
    int l = m->derived[i].level + 1;
    b.lvl_derived[l][b.n_lvl_derived[l]++] = i;
  }
  for (int i = 0; i < m->nconstraints; i++) {
    int l = m->constraints[i].level + 1;
    b.lvl_cons[l][b.n_lvl_cons[l]++] = i;
  }
  for (int i = 0; i < np; i++) {
    const space_param *p = &m->params[i];
    if ((s = space_add_param(b.sp, p->name, p->count, p->ints, (const char *const *)p->idents,
                             err)))
      goto done;
  }
  int ok = manifest_run_level(&b, -1);
  if (ok < 0) {
    s = err ? err->code : RT_ERR_EXPR;
    goto done;
  }
  if (ok == 0) {
    int c = -1;
    for (int i = 0; i < m->nconstraints; i++)
      if (b.rejected[i]) c = i;
    s = rt_error_at(err, RT_ERR_SPACE_EMPTY, m->path, m->constraints[c].field, 0,
                    "template %s has no valid configuration: \"%s\" is false for this "
                    "problem and device whatever the parameters",
                    m->name, expr_text(m->constraints[c].e));
    goto done;
  }
  if ((s = manifest_build_level(&b, 0))) goto done;
  if (space_size(b.sp) == 0) {
    int c = 0;
    for (int i = 1; i < m->nconstraints; i++)
      if (b.rejected[i] > b.rejected[c]) c = i;
    s = rt_error_at(
        err, RT_ERR_SPACE_EMPTY, m->path, m->nconstraints ? m->constraints[c].field : NULL, 0,
        "template %s has no valid configuration for this problem and device: \"%s\" "
        "rejected the most of its %.0f combinations",
        m->name, m->nconstraints ? expr_text(m->constraints[c].e) : "", space_product(b.sp));
    goto done;
  }
  s = space_finish(b.sp, err);
done:
  if (b.lvl_derived)
    for (int l = 0; l <= np; l++) free(b.lvl_derived[l]);
  if (b.lvl_cons)
    for (int l = 0; l <= np; l++) free(b.lvl_cons[l]);
  free(b.lvl_derived);
  free(b.n_lvl_derived);
  free(b.lvl_cons);
  free(b.n_lvl_cons);
  free(b.rejected);
  free(b.cfg);
  free(b.vals);
  free(have);
  if (s) {
    space_free(b.sp);
    return s;
  }
  *out = b.sp;
  return RT_OK;
}

rt_status manifest_build_space(const manifest *m, const rt_vars *env, space **out, rt_error *err) {
  return build_space(m, env, 0, out, err);
}

rt_status manifest_space_check(const manifest *m, const rt_vars *env, rt_error *err) {
  space *sp = NULL;
  rt_status s = build_space(m, env, 1, &sp, err);
  space_free(sp);
  return s;
}

/* ---------------------------------------------------------------- one configuration */

/* Slot values for configuration idx: parameters from the space, externals from vars, and the
 * derived values (all of them, or only those emitted into the source). */
static rt_status manifest_config_slots(const manifest *m, const space *sp, size_t idx,
                                       const rt_vars *vars, int emitted_only, long long *vals,
                                       unsigned char *have, rt_error *err) {
  if (!sp || space_nparams(sp) != m->nparams || idx >= space_size(sp))
    return rt_error_at(err, RT_ERR_INVALID, m->path, NULL, 0,
                       "configuration %zu is not in a space of template %s", idx, m->name);
  const uint16_t *cfg = space_config(sp, idx);
  for (int i = 0; i < m->nparams; i++) {
    vals[i] = m->params[i].ints ? m->params[i].ints[cfg[i]] : cfg[i];
    have[i] = 1;
  }
  manifest_bind_externals(m, vars, vals, have);
  for (int i = 0; i < m->nderived; i++) {
    if (emitted_only && !m->derived_emit[i]) continue;
    rt_status s = manifest_check_bound(m, &m->derived[i], have, vars, err);
    if (!s) s = manifest_eval(m, &m->derived[i], vals, &vals[m->derived_slot[i]], err);
    if (s) return s;
    have[m->derived_slot[i]] = 1;
  }
  return RT_OK;
}

rt_status manifest_config_vars(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                               rt_vars *out, rt_error *err) {
  long long *vals = calloc((size_t)m->nslots, sizeof *vals);
  unsigned char *have = calloc((size_t)m->nslots, 1);
  rt_status s = RT_OK;
  if (!vals || !have) {
    s = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((s = manifest_config_slots(m, sp, idx, env, 0, vals, have, err))) goto done;
  rt_vars_clear(out);
  if (env && (s = rt_vars_merge(out, env))) goto vars_full;
  for (int i = 0; i < m->nparams; i++)
    if ((s = rt_vars_set(out, m->params[i].name, vals[i]))) goto vars_full;
  for (int i = 0; i < m->nderived; i++)
    if ((s = rt_vars_set(out, m->derived_names[i], vals[m->derived_slot[i]]))) goto vars_full;
  goto done;
vars_full:
  s = rt_error_set(err, RT_ERR_INVALID,
                   "too many names for one configuration of %s (at most %d, names of at most %d "
                   "characters)",
                   m->name, RT_VARS_MAX, RT_VAR_NAME_MAX - 1);
done:
  free(vals);
  free(have);
  return s;
}

rt_status manifest_check_names(const manifest *m, const rt_vars *env, rt_error *err) {
  unsigned char *have = calloc((size_t)m->nslots, 1);
  if (!have) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < m->nslots; i++)
    have[i] =
        m->slot_kind[i] != SLOT_EXTERNAL || rt_vars_find(env, expr_scope_name(m->scope, i)) >= 0;
  manifest_expr *all[256];
  int n = manifest_all_exprs((manifest *)m, all, 256);
  rt_status s = RT_OK;
  for (int i = 0; i < n && !s; i++) s = manifest_check_bound(m, all[i], have, env, err);
  free(have);
  return s;
}

/* Evaluates a list of expressions against vars (config vars: every slot by name). */
static rt_status manifest_eval_vars(const manifest *m, const rt_vars *vars,
                                    const manifest_expr *const *xs, int n, long long *out,
                                    rt_error *err) {
  long long *vals = calloc((size_t)m->nslots, sizeof *vals);
  unsigned char *have = calloc((size_t)m->nslots, 1);
  rt_status s = RT_OK;
  if (!vals || !have) {
    s = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (int i = 0; i < m->nslots; i++)
    have[i] = (unsigned char)rt_vars_get(vars, expr_scope_name(m->scope, i), &vals[i]);
  for (int i = 0; i < n && !s; i++) {
    s = manifest_check_bound(m, xs[i], have, vars, err);
    if (!s) s = manifest_eval(m, xs[i], vals, &out[i], err);
  }
done:
  free(vals);
  free(have);
  return s;
}

rt_status manifest_launch(const manifest *m, const rt_vars *vars, unsigned grid[3],
                          unsigned block[3], unsigned *smem, rt_error *err) {
  const manifest_expr *xs[7] = {&m->grid[0],  &m->grid[1],  &m->grid[2], &m->block[0],
                                &m->block[1], &m->block[2], &m->smem};
  long long v[7] = {0};
  rt_status s = manifest_eval_vars(m, vars, xs, m->has_smem ? 7 : 6, v, err);
  if (s) return s;
  const long long gmax[3] = {2147483647LL, 65535, 65535};
  for (int i = 0; i < 3; i++)
    if (v[i] < 1 || v[i] > gmax[i])
      return rt_error_at(err, RT_ERR_INVALID, m->path, xs[i]->field, 0,
                         "grid dimension %lld is out of range (1..%lld)", v[i], gmax[i]);
  for (int i = 3; i < 6; i++)
    if (v[i] < 1 || v[i] > 1024)
      return rt_error_at(err, RT_ERR_INVALID, m->path, xs[i]->field, 0,
                         "block dimension %lld is out of range (1..1024)", v[i]);
  if (v[3] * v[4] * v[5] > 1024)
    return rt_error_at(err, RT_ERR_INVALID, m->path, "launch.block", 0,
                       "block of %lld threads exceeds 1024", v[3] * v[4] * v[5]);
  if (v[6] < 0 || v[6] > 0xffffffffLL)
    return rt_error_at(err, RT_ERR_INVALID, m->path, "launch.smem", 0,
                       "shared memory size %lld is out of range", v[6]);
  for (int i = 0; i < 3; i++) {
    grid[i] = (unsigned)v[i];
    block[i] = (unsigned)v[3 + i];
  }
  *smem = (unsigned)v[6];
  return RT_OK;
}

rt_status manifest_work(const manifest *m, const rt_vars *vars, const unsigned grid[3],
                        long long *work, rt_error *err) {
  *work = (long long)grid[0] * grid[1] * grid[2];
  if (!m->has_work) return RT_OK;
  const manifest_expr *xs[1] = {&m->work};
  long long v;
  rt_status s = manifest_eval_vars(m, vars, xs, 1, &v, err);
  if (s) return s;
  if (v < *work)
    return rt_error_at(err, RT_ERR_INVALID, m->path, "launch.work", 0,
                       "work of %lld blocks is less than the grid's %lld blocks", v, *work);
  *work = v;
  return RT_OK;
}

rt_status manifest_cost(const manifest *m, const rt_vars *vars, double *flops, double *dram_bytes,
                        double *executed_flops, rt_error *err) {
  const manifest_expr *xs[3] = {&m->flops, &m->dram_bytes, &m->executed_flops};
  long long v[3];
  int n = m->has_executed && executed_flops ? 3 : 2;
  rt_status s = manifest_eval_vars(m, vars, xs, n, v, err);
  if (s) return s;
  for (int i = 0; i < n; i++)
    if (v[i] < 0)
      return rt_error_at(err, RT_ERR_INVALID, m->path, xs[i]->field, 0,
                         "is negative (%lld) for this configuration: a cost counts FLOPs or "
                         "bytes",
                         v[i]);
  *flops = (double)v[0];
  *dram_bytes = (double)v[1];
  if (executed_flops) *executed_flops = n == 3 ? (double)v[2] : *flops;
  return RT_OK;
}

rt_status manifest_inflight(const manifest *m, const rt_vars *vars, double *bytes, rt_error *err) {
  *bytes = 0;
  if (!m->has_inflight) return RT_OK;
  const manifest_expr *xs[1] = {&m->inflight};
  long long v = 0;
  rt_status s = manifest_eval_vars(m, vars, xs, 1, &v, err);
  if (s) return s;
  if (v < 0)
    return rt_error_at(err, RT_ERR_INVALID, m->path, "cost.bytes_in_flight", 0,
                       "is negative (%lld) for this configuration", v);
  *bytes = (double)v;
  return RT_OK;
}

rt_status manifest_plan(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                        candidate_plan *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  out->idx = idx;
  space_format_config(sp, idx, out->config, sizeof out->config);
  rt_status s = manifest_config_vars(m, sp, idx, env, &out->vars, err);
  if (!s) s = manifest_launch(m, &out->vars, out->grid, out->block, &out->smem, err);
  if (!s) s = manifest_work(m, &out->vars, out->grid, &out->work, err);
  if (!s)
    s = manifest_cost(m, &out->vars, &out->flops, &out->dram_bytes, &out->executed_flops, err);
  if (!s) s = manifest_inflight(m, &out->vars, &out->inflight_bytes, err);
  if (!s && m->has_scratch) {
    const manifest_expr *xs[1] = {&m->scratch};
    long long v = 0;
    s = manifest_eval_vars(m, &out->vars, xs, 1, &v, err);
    if (!s && v < 0)
      s = rt_error_at(err, RT_ERR_INVALID, m->path, "cost.scratch_bytes", 0,
                      "scratch bytes %lld are negative", v);
    out->scratch_bytes = (double)v;
  }
  return s;
}

void candidate_plan_library(candidate_plan *out, const char *text, double flops,
                            double dram_bytes) {
  memset(out, 0, sizeof *out);
  snprintf(out->config, sizeof out->config, "%s", text ? text : "");
  out->flops = out->executed_flops = flops;
  out->dram_bytes = dram_bytes;
}

/* ---------------------------------------------------------------- source prefix */

typedef struct manifest_buf {
  char *p;    /* text */
  size_t n;   /* used */
  size_t cap; /* allocated */
  int oom;    /* an allocation failed */
} manifest_buf;

static void manifest_printf(manifest_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void manifest_printf(manifest_buf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (w < 0) {
      b->oom = 1;
      return;
    }
    if (b->p && b->n + (size_t)w < b->cap) {
      b->n += (size_t)w;
      return;
    }
    size_t nc = b->cap ? b->cap * 2 : 1024;
    while (nc < b->n + (size_t)w + 1) nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np) {
      b->oom = 1;
      return;
    }
    b->p = np;
    b->cap = nc;
  }
}

static void manifest_define(manifest_buf *b, const char *name, long long v) {
  if (v < 0)
    manifest_printf(b, "#define %s (%lld)\n", name, v);
  else
    manifest_printf(b, "#define %s %lld\n", name, v);
}

rt_status manifest_source_prefix(const manifest *m, const space *sp, size_t idx,
                                 const rt_vars *vars, const char *dtype, char **out,
                                 rt_error *err) {
  *out = NULL;
  if (dtype && !manifest_has_dtype(m, dtype)) {
    char list[128] = "";
    size_t n = 0;
    for (int i = 0; i < m->ndtypes && n < sizeof list; i++)
      n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", m->dtypes[i]);
    return rt_error_at(err, RT_ERR_UNSUPPORTED, m->path, "dtypes", 0,
                       "template %s does not support dtype %s; it supports: %s", m->name, dtype,
                       list);
  }
  long long *vals = calloc((size_t)m->nslots, sizeof *vals);
  unsigned char *have = calloc((size_t)m->nslots, 1);
  rt_status s = RT_OK;
  manifest_buf b = {0};
  if (!vals || !have) {
    s = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((s = manifest_config_slots(m, sp, idx, vars, 1, vals, have, err))) goto done;
  if (dtype) {
    manifest_printf(&b, "#define RT_DTYPE_%s 1\n", dtype);
    manifest_printf(&b, "#define RT_DTYPE_BYTES %d\n", manifest_dtype_bytes(dtype));
  }
  const uint16_t *cfg = space_config(sp, idx);
  for (int i = 0; i < m->nparams; i++) {
    const space_param *p = &m->params[i];
    if (p->ints) {
      manifest_define(&b, p->name, p->ints[cfg[i]]);
    } else {
      manifest_printf(&b, "#define %s %s\n", p->name, p->idents[cfg[i]]);
      manifest_printf(&b, "#define %s_%s 1\n", p->name, p->idents[cfg[i]]);
    }
  }
  for (int i = 0; i < m->nderived; i++)
    if (m->derived_emit[i]) manifest_define(&b, m->derived_names[i], vals[m->derived_slot[i]]);
  const char *base = strrchr(m->source_name, '/');
  manifest_printf(&b, "#line 1 \"%s\"\n", base ? base + 1 : m->source_name);
  if (b.oom) s = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
done:
  free(vals);
  free(have);
  if (s) {
    free(b.p);
    return s;
  }
  *out = b.p;
  return RT_OK;
}

rt_status manifest_read_source(const manifest *m, char **out, rt_error *err) {
  return fileio_read(manifest_source(m), out, NULL, err);
}

rt_status manifest_config_source(const manifest *m, const space *sp, size_t idx,
                                 const rt_vars *vars, const char *dtype, const char *body,
                                 char **out, rt_error *err) {
  *out = NULL;
  char *prefix = NULL, *read = NULL;
  rt_status s = body ? RT_OK : manifest_read_source(m, &read, err);
  if (!s) s = manifest_source_prefix(m, sp, idx, vars, dtype, &prefix, err);
  if (s) {
    free(read);
    return s;
  }
  if (!body) body = read;
  size_t lp = strlen(prefix), lb = strlen(body);
  char *text = malloc(lp + lb + 1);
  if (text) {
    memcpy(text, prefix, lp);
    memcpy(text + lp, body, lb + 1);
  }
  free(prefix);
  free(read);
  if (!text) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  *out = text;
  return RT_OK;
}

/* The shipped templates' common/ folder (templates/common/rt_ptx.h, the PTX wrappers every
 * template may include), found once per process; "" when there is none. */
static char common_dir[1100];
static pthread_once_t common_once = PTHREAD_ONCE_INIT;
static void find_common_dir(void) {
  char shipped[1024];
  struct stat st;
  snprintf(common_dir, sizeof common_dir, "%s/common",
           catalog_shipped_dir(shipped, sizeof shipped));
  if (stat(common_dir, &st) || !S_ISDIR(st.st_mode)) common_dir[0] = 0;
}

void manifest_compile_options(const manifest *m, const char *arch, compile_options *opt) {
  memset(opt, 0, sizeof *opt);
  opt->arch = arch;
  opt->entry = manifest_entry(m);
  opt->include_dirs[opt->include_count++] = m->source_dir;
  pthread_once(&common_once, find_common_dir);
  if (common_dir[0]) opt->include_dirs[opt->include_count++] = common_dir;
  for (int i = 0; i < manifest_noptions(m) && opt->extra_count < COMPILE_MAX_EXTRA; i++)
    opt->extra[opt->extra_count++] = manifest_option(m, i);
  opt->pch = 1;
}
