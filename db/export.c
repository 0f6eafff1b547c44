/* export.c — the export formats (see export.h): JSON and CSV rows generated from the result
 * column table, the winners as a C header, and the reader that turns an export back into a
 * Kernel Tuner cache object. */
#include "db/export.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/fileio.h"

/* ---- JSON ------------------------------------------------------------------------------ */

static json_t *jreal(double v) { return isnan(v) || isinf(v) ? json_null() : json_real(v); }

json_t *db_export_config_json(const char *config) {
  json_t *o = json_object();
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", config);
  int pairs = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '=');
    if (!eq || strchr(t, ' ')) {
      json_decref(o);
      o = json_object();
      json_object_set_new(o, "text", json_string(config));
      return o;
    }
    *eq = '\0';
    char *end;
    long long v = strtoll(eq + 1, &end, 10);
    json_object_set_new(o, t, *end || end == eq + 1 ? json_string(eq + 1) : json_integer(v));
    pairs++;
  }
  if (!pairs && config[0]) json_object_set_new(o, "text", json_string(config));
  return o;
}

static json_t *device_json(const db_device *d) {
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(d->name));
  json_object_set_new(o, "sm_count", json_integer(d->sm_count));
  char cc[32];
  snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
  json_object_set_new(o, "compute_capability", json_string(cc));
  json_object_set_new(o, "driver_version", json_integer(d->driver_version));
  return o;
}

/* One field of each kind as JSON (RESULT_COLUMNS). */
static json_t *json_TEXT(const char *v) { return json_string(v); }
static json_t *json_REAL(double v) { return jreal(v); }
static json_t *json_INT(int v) { return json_integer(v); }
static json_t *json_INT64(long long v) { return json_integer((json_int_t)v); }
static json_t *json_BOOL(int v) { return json_boolean(v); }
static json_t *json_STATUS(rt_status v) { return json_string(rt_status_name(v)); }
static json_t *json_TIMING(timing_kind v) { return json_string(timing_kind_name(v)); }

json_t *db_export_row_json(const db_run_spec *s, const char *tmpl, const char *src, const char *man,
                           const candidate_result *r) {
  json_t *o = json_object();
  json_object_set_new(o, "family", json_string(s->prob.family));
  json_object_set_new(o, "shape", json_string(s->prob.shape));
  json_object_set_new(o, "dtype", json_string(s->prob.dtype));
  json_object_set_new(o, "layout", json_string(s->prob.layout));
  json_object_set_new(o, "device", device_json(&s->prov.device));
  json_object_set_new(o, "toolkit", json_string(s->prov.toolkit));
  json_object_set_new(o, "arch", json_string(s->prov.arch));
  json_object_set_new(o, "template", json_string(tmpl));
  json_object_set_new(o, "source_hash", json_string(src));
  json_object_set_new(o, "manifest_hash", json_string(man));
  json_object_set_new(o, "strategy", json_string(s->strategy));
  json_object_set_new(o, "seed", json_integer((json_int_t)s->seed));
  json_t *facts = json_object(), *diag = json_object(), *ctr = json_object();
  json_object_set_new(o, "config", db_export_config_json(r->config));
#define ROW_JSON(col, jname, kind, member, group)                                \
  {                                                                              \
    json_t *into = !strcmp(group, "static_facts") ? facts                        \
                   : !strcmp(group, "diagnosis")  ? diag                         \
                   : !strcmp(group, "counters")   ? ctr                          \
                                                  : o;                             \
    json_object_set_new(into, strcmp(#jname, "config") ? #jname : "config_text", \
                        json_##kind(r->member));                                 \
  }
  RESULT_COLUMNS(ROW_JSON, ROW_JSON)
#undef ROW_JSON
  json_object_set_new(o, "static_facts", facts);
  json_object_set_new(o, "diagnosis", diag);
  json_object_set_new(o, "counters", ctr);
  return o;
}

json_t *db_export_entry_json(const db_entry *e) {
  json_t *o = json_object();
  json_object_set_new(o, "family", json_string(e->family));
  json_object_set_new(o, "shape", json_string(e->shape));
  json_object_set_new(o, "dtype", json_string(e->dtype));
  json_object_set_new(o, "layout", json_string(e->layout));
  json_object_set_new(o, "device", device_json(&e->device));
  json_object_set_new(o, "toolkit", json_string(e->toolkit));
  json_object_set_new(o, "template", json_string(e->template_name));
  json_object_set_new(o, "source_hash", json_string(e->source_hash));
  json_object_set_new(o, "manifest_hash", json_string(e->manifest_hash));
  json_object_set_new(o, "template_stale", json_boolean(e->template_stale));
  json_object_set_new(o, "config", db_export_config_json(e->config));
  json_object_set_new(o, "config_text", json_string(e->config));
  json_object_set_new(o, "timing", json_string(timing_kind_name(e->timing)));
  json_object_set_new(o, "verified", json_boolean(e->verified));
  json_object_set_new(o, "checked_on", e->checked_on[0] ? json_string(e->checked_on) : json_null());
  json_object_set_new(o, "time_ms", jreal(e->time_ms));
  json_object_set_new(o, "spread", jreal(e->spread));
  json_object_set_new(o, "limit", json_string(e->limit));
  json_object_set_new(o, "lever", json_string(e->lever));
  json_object_set_new(o, "entry", json_string(e->launch.entry));
  json_object_set_new(o, "arch", json_string(e->launch.arch));
  json_object_set_new(o, "cubin_bytes", json_integer((json_int_t)e->launch.cubin_size));
  json_object_set_new(o, "cubin_sha256", json_string(e->launch.cubin_sha256));
  json_t *g = json_array(), *b = json_array();
  for (int k = 0; k < 3; k++) {
    json_array_append_new(g, json_integer(e->launch.grid_v[k]));
    json_array_append_new(b, json_integer(e->launch.block_v[k]));
  }
  json_object_set_new(o, "grid", g);
  json_object_set_new(o, "block", b);
  json_object_set_new(o, "smem", json_integer(e->launch.smem_v));
  json_object_set_new(o, "library_algo", json_string(e->launch.library_algo));
  json_object_set_new(o, "updated_at", json_string(e->created_at));
  return o;
}

/* ---- CSV ------------------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *s, int last) {
  if (strpbrk(s, ",\"\n\r")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"') fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
  fputc(last ? '\n' : ',', f);
}

static void csv_num(FILE *f, double v, int last) {
  if (!isnan(v) && !isinf(v)) fprintf(f, "%.9g", v);
  fputc(last ? '\n' : ',', f);
}

static void csv_TEXT(FILE *f, const char *v, int last) { csv_field(f, v, last); }
static void csv_REAL(FILE *f, double v, int last) { csv_num(f, v, last); }
static void csv_INT(FILE *f, int v, int last) { csv_num(f, v, last); }
static void csv_INT64(FILE *f, long long v, int last) { csv_num(f, (double)v, last); }
static void csv_BOOL(FILE *f, int v, int last) { csv_num(f, v != 0, last); }
static void csv_STATUS(FILE *f, rt_status v, int last) { csv_field(f, rt_status_name(v), last); }
static void csv_TIMING(FILE *f, timing_kind v, int last) {
  csv_field(f, timing_kind_name(v), last);
}

#define CSV_HEAD_FIRST(col, jname, kind, member, group) #col
#define CSV_HEAD_REST(col, jname, kind, member, group)  "," #col
static const char csv_header[] =
    "family,shape,dtype,layout,device,sm_count,compute_capability,driver_version,toolkit,arch,"
    "template,source_hash,manifest_hash,strategy,seed," RESULT_COLUMNS(CSV_HEAD_FIRST,
                                                                       CSV_HEAD_REST) "\n";

static void csv_row(FILE *f, const db_run_spec *s, const char *tmpl, const char *src,
                    const char *man, const candidate_result *r) {
  char cc[32], num[32];
  csv_field(f, s->prob.family, 0);
  csv_field(f, s->prob.shape, 0);
  csv_field(f, s->prob.dtype, 0);
  csv_field(f, s->prob.layout, 0);
  csv_field(f, s->prov.device.name, 0);
  csv_num(f, s->prov.device.sm_count, 0);
  snprintf(cc, sizeof cc, "%d.%d", s->prov.device.cc_major, s->prov.device.cc_minor);
  csv_field(f, cc, 0);
  csv_num(f, s->prov.device.driver_version, 0);
  csv_field(f, s->prov.toolkit, 0);
  csv_field(f, s->prov.arch, 0);
  csv_field(f, tmpl, 0);
  csv_field(f, src, 0);
  csv_field(f, man, 0);
  csv_field(f, s->strategy, 0);
  snprintf(num, sizeof num, "%llu", s->seed);
  csv_field(f, num, 0);
  int left = 0;
#define CSV_COUNT(col, jname, kind, member, group) left++;
  RESULT_COLUMNS(CSV_COUNT, CSV_COUNT)
#undef CSV_COUNT
#define CSV_CELL(col, jname, kind, member, group) csv_##kind(f, r->member, --left == 0);
  RESULT_COLUMNS(CSV_CELL, CSV_CELL)
#undef CSV_CELL
}

/* ---- the C header ---------------------------------------------------------------------- */

/* text as a C string literal: quotes and backslashes escaped, control characters dropped. */
static void c_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if ((unsigned char)*s >= 32 && *s != 127) fputc(*s, f);
  }
  fputc('"', f);
}

/* text inside a C comment: "*" followed by "/" cannot end it, control characters dropped. */
static void c_comment_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if ((unsigned char)*s < 32 || *s == 127) continue;
    fputc(*s, f);
    if (*s == '*' && s[1] == '/') fputc(' ', f);
  }
}

/* ---- the filter ------------------------------------------------------------------------ */

/* Whether a problem and device pass filter f (NULL: everything): every part of an export, the
 * results and the winners, in every format, is chosen by this one test. */
static int filter_passes(const db_export_filter *f, const char *family, const char *shape,
                         const char *dtype, const char *device) {
  return !f ||
         !((f->family && strcmp(f->family, family)) || (f->dtype && strcmp(f->dtype, dtype)) ||
           (f->shape && strcmp(f->shape, shape)) || (f->device && !strcasestr(device, f->device)));
}

/* The winners that pass f, moved to the front of e[0..*n) (*n: how many). */
static void filter_entries(const db_export_filter *f, db_entry *e, size_t *n) {
  size_t k = 0;
  for (size_t i = 0; i < *n; i++)
    if (filter_passes(f, e[i].family, e[i].shape, e[i].dtype, e[i].device.name)) {
      if (k != i) e[k] = e[i];
      k++;
    }
  *n = k;
}

static rt_status export_header(db *d, const db_export_filter *flt, FILE *f, rt_error *err) {
  db_entry *e = NULL;
  size_t n = 0;
  rt_status s = db_entries(d, 0, &e, &n, err);
  if (s) return s;
  filter_entries(flt, e, &n);
  fputs("/* rooftune_tuned.h — the tuned configurations of ", f);
  c_comment_text(f, db_path(d));
  fprintf(f,
          ", written by `rooftune db export\n"
          " * --format header`.  One row per winner (problem, device, template version, toolkit);\n"
          " * `timing` says whether its time was measured on `device`, predicted by the model or\n"
          " * replayed from a recorded file.  grid/block/smem are the launch geometry for exactly\n"
          " * this shape.  To load the kernels themselves, use librooftune (<rooftune.h>). */\n"
          "#ifndef ROOFTUNE_TUNED_H\n#define ROOFTUNE_TUNED_H\n\n"
          "typedef struct rooftune_tuned {\n"
          "  const char *family, *shape, *dtype, *layout; /* the problem */\n"
          "  const char *device;   /* GPU name, model:GPU or replay:FILE */\n"
          "  const char *toolkit;  /* CUDA, NVRTC and cuBLASLt versions */\n"
          "  const char *template_name, *source_hash; /* the template version */\n"
          "  const char *config;   /* NAME=VALUE,... or a cuBLASLt algorithm */\n"
          "  const char *timing;   /* measured | predicted | replayed */\n"
          "  double time_ms;       /* median time */\n"
          "  unsigned grid[3], block[3], smem; /* launch geometry for this shape */\n"
          "  int verified;         /* 1: its output passed the reference check on device's GPU */\n"
          "} rooftune_tuned;\n\n"
          "#define ROOFTUNE_TUNED_COUNT %zu\n\n"
          "static const rooftune_tuned rooftune_tuned_configs[%zu] = {\n",
          n, n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    const db_entry *x = &e[i];
    fputs("    {", f);
    const char *fields[] = {
        x->family,  x->shape,         x->dtype,       x->layout, x->device.name,
        x->toolkit, x->template_name, x->source_hash, x->config, timing_kind_name(x->timing)};
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
      c_string(f, fields[k]);
      fputs(", ", f);
    }
    fprintf(f, "%.9g, {%u, %u, %u}, {%u, %u, %u}, %u, %d},\n",
            isnan(x->time_ms) ? -1.0 : x->time_ms, x->launch.grid_v[0], x->launch.grid_v[1],
            x->launch.grid_v[2], x->launch.block_v[0], x->launch.block_v[1], x->launch.block_v[2],
            x->launch.smem_v, x->verified != 0);
  }
  if (!n) fputs("    {0},\n", f);
  fputs("};\n\n#endif\n", f);
  free(e);
  return RT_OK;
}

/* ---- writing a whole export ------------------------------------------------------------- */

typedef struct walk {
  const db_export_filter *f;
  FILE *out;
  int format;
  json_t *rows;
} walk;

static rt_status walk_row(void *ctx, const db_run_spec *s, const char *tmpl, const char *src,
                          const char *man, const candidate_result *r, rt_error *err) {
  (void)err;
  walk *w = ctx;
  if (!filter_passes(w->f, s->prob.family, s->prob.shape, s->prob.dtype, s->prov.device.name))
    return RT_OK;
  if (w->format == DB_EXPORT_JSON)
    json_array_append_new(w->rows, db_export_row_json(s, tmpl, src, man, r));
  else
    csv_row(w->out, s, tmpl, src, man, r);
  return RT_OK;
}

static rt_status export_to(db *d, int format, const db_export_filter *f, FILE *out, rt_error *err) {
  if (format == DB_EXPORT_HEADER) return export_header(d, f, out, err);
  walk w = {f, out, format, format == DB_EXPORT_JSON ? json_array() : NULL};
  if (format == DB_EXPORT_CSV) fputs(csv_header, out);
  rt_status s = db_each_result(d, walk_row, &w, err);
  if (s || format != DB_EXPORT_JSON) {
    json_decref(w.rows);
    return s;
  }
  db_entry *e = NULL;
  size_t n = 0;
  if ((s = db_entries(d, 0, &e, &n, err))) {
    json_decref(w.rows);
    return s;
  }
  filter_entries(f, e, &n);
  json_t *root = json_object(), *wins = json_array();
  json_object_set_new(root, "rooftune_export", json_integer(1));
  json_object_set_new(root, "database", json_string(db_path(d)));
  json_object_set_new(root, "schema_version", json_integer(db_schema_version(d)));
  json_object_set_new(root, "results", w.rows);
  for (size_t i = 0; i < n; i++) json_array_append_new(wins, db_export_entry_json(&e[i]));
  json_object_set_new(root, "winners", wins);
  free(e);
  int bad = json_dumpf(root, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0;
  fputc('\n', out);
  json_decref(root);
  if (bad) return rt_error_set(err, RT_ERR_IO, "cannot write the export: %s", strerror(errno));
  return RT_OK;
}

rt_status db_export_write(db *d, int format, const db_export_filter *f, const char *path,
                          rt_error *err) {
  if (format != DB_EXPORT_JSON && format != DB_EXPORT_CSV && format != DB_EXPORT_HEADER)
    return rt_error_set(err, RT_ERR_INVALID, "unknown export format %d", format);
  if (!path) {
    rt_status s = export_to(d, format, f, stdout, err);
    if (!s && (fflush(stdout) != 0 || ferror(stdout))) {
      rt_error_locate(err, "standard output", NULL, 0, 0);
      s = rt_error_set(err, RT_ERR_IO, "cannot write the export: %s", strerror(errno));
    }
    return s;
  }
  fileio_out o;
  rt_status s = fileio_out_open(&o, path, err);
  if (s) return s;
  s = export_to(d, format, f, o.f, err);
  if (s) {
    fileio_out_abort(&o);
    if (err && !err->source[0]) rt_error_locate(err, path, NULL, 0, 0);
    return s;
  }
  return fileio_out_commit(&o, err);
}

/* ---- reading an export back ------------------------------------------------------------- */

/* One field of each kind from JSON (RESULT_COLUMNS), into a member of that kind. */
#define READ_TEXT(v, member) \
  snprintf(member, sizeof member, "%s", json_string_value(v) ? json_string_value(v) : "")
#define READ_REAL(v, member) member = json_is_number(v) ? json_number_value(v) : 0
#define READ_INT(v, member)  member = json_is_integer(v) ? (int)json_integer_value(v) : 0
/* an export read back is a recording: never verified here, whatever its row says (export.h) */
#define READ_BOOL(v, member)  ((void)(v), member = 0)
#define READ_INT64(v, member) member = json_is_integer(v) ? (long long)json_integer_value(v) : 0
#define READ_STATUS(v, member)                                                    \
  member = json_string_value(v) && rt_status_from_name(json_string_value(v)) >= 0 \
               ? (rt_status)rt_status_from_name(json_string_value(v))             \
               : RT_OK
#define READ_TIMING(v, member)                                                  \
  member = json_string_value(v) && timing_kind_parse(json_string_value(v)) >= 0 \
               ? (timing_kind)timing_kind_parse(json_string_value(v))           \
               : (timing_kind)0

void db_export_row_read(const json_t *row, candidate_result *r) {
  memset(r, 0, sizeof *r);
#define ROW_READ(col, jname, kind, member, group)                                               \
  {                                                                                             \
    const json_t *from = *group ? json_object_get(row, group) : row;                            \
    const json_t *v = json_object_get(from, strcmp(#jname, "config") ? #jname : "config_text"); \
    READ_##kind(v, r->member);                                                                  \
  }
  RESULT_COLUMNS(ROW_READ, ROW_READ)
#undef ROW_READ
}

static const char *text_of(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

rt_status db_export_to_kt(json_t *root, const char *path, const char *template_name,
                          const char *want_shape, const char *want_dtype, json_t **out,
                          rt_error *err) {
  *out = NULL;
  json_t *rows = json_object_get(root, "results");
  const char *want_t = template_name, *tmpl = NULL, *shape = NULL, *dtype = NULL;
  size_t i;
  json_t *row;
  /* pick the template and the problem */
  json_array_foreach(rows, i, row) {
    const char *t = json_string_value(json_object_get(row, "template"));
    const char *fam = json_string_value(json_object_get(row, "family"));
    const char *sh = json_string_value(json_object_get(row, "shape"));
    const char *dt = json_string_value(json_object_get(row, "dtype"));
    if (!t || !sh || !dt) continue;
    if (want_t && strcmp(want_t, t) && !(fam && !strcmp(want_t, fam))) continue;
    if (want_shape && strcmp(want_shape, sh)) continue;
    if (want_dtype && strcmp(want_dtype, dt)) continue;
    if (!tmpl) {
      tmpl = t;
      shape = sh;
      dtype = dt;
    } else if (strcmp(tmpl, t)) {
      rt_error_locate(err, path, NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID,
                          "the export holds templates %s and %s: name one to replay", tmpl, t);
    } else if (strcmp(shape, sh) || strcmp(dtype, dt)) {
      rt_error_locate(err, path, NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID,
                          "the export holds %s for %s %s and %s %s: give --shape and --dtype", tmpl,
                          shape, dtype, sh, dt);
    }
  }
  if (!tmpl) {
    rt_error_locate(err, path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_NOT_FOUND, "the export has no results%s%s%s%s%s%s",
                        want_t ? " of " : "", want_t ? want_t : "", want_shape ? " for " : "",
                        want_shape ? want_shape : "", want_dtype ? " " : "",
                        want_dtype ? want_dtype : "");
  }
  json_t *kt = json_object(), *keys = json_array(), *params = json_object(), *cache = json_object();
  const char *devname = NULL;
  json_array_foreach(rows, i, row) {
    if (strcmp(tmpl, text_of(row, "template")) || strcmp(shape, text_of(row, "shape")) ||
        strcmp(dtype, text_of(row, "dtype")))
      continue;
    json_t *cfg = json_object_get(row, "config");
    if (!json_is_object(cfg)) continue;
    const char *dn = json_string_value(json_object_get(json_object_get(row, "device"), "name"));
    if (!devname) {
      devname = dn;
    } else if (dn && strcmp(dn, devname)) { /* never mix two GPUs' times in one space */
      json_decref(kt);
      json_decref(keys);
      json_decref(params);
      json_decref(cache);
      rt_error_locate(err, path, NULL, 0, 0);
      return rt_error_set(err, RT_ERR_INVALID,
                          "the export holds results of %s for %s %s from two devices (%s and %s): "
                          "export one with 'rooftune db export --device NAME'",
                          tmpl, shape, dtype, devname, dn);
    }
    char key[1024];
    size_t kl = 0;
    json_t *rec = json_object();
    const char *name;
    json_t *v;
    key[0] = 0;
    json_object_foreach(cfg, name, v) {
      if (json_array_size(keys) < json_object_size(cfg) && !json_object_get(params, name)) {
        json_array_append_new(keys, json_string(name));
        json_object_set_new(params, name, json_array());
      }
      json_t *dom = json_object_get(params, name);
      int seen = 0;
      size_t k;
      json_t *dv;
      json_array_foreach(dom, k, dv) seen |= json_equal(dv, v);
      if (!seen) json_array_append(dom, v);
      char text[256];
      if (json_is_integer(v))
        snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
      else
        snprintf(text, sizeof text, "%s", json_string_value(v) ? json_string_value(v) : "");
      kl += (size_t)snprintf(key + kl, kl < sizeof key ? sizeof key - kl : 0, "%s%s", kl ? "," : "",
                             text);
      json_object_set(rec, name, v);
    }
    json_object_set(rec, "rooftune_row", row); /* its counters and facts replay with it */
    const char *status = json_string_value(json_object_get(row, "status"));
    if (status && !strcmp(status, "OK")) {
      json_object_set(rec, "time", json_object_get(row, "time_ms"));
    } else {
      const char *detail = json_string_value(json_object_get(row, "detail"));
      char why[400];
      snprintf(why, sizeof why, "%s: %s", status ? status : "ERR_INTERNAL", detail ? detail : "");
      json_object_set_new(rec, "time", json_string(why));
    }
    json_object_set_new(cache, key, rec); /* a later row of the same config replaces it */
  }
  json_object_set_new(kt, "device_name", json_string(devname ? devname : ""));
  json_object_set_new(kt, "kernel_name", json_string(tmpl));
  json_object_set_new(kt, "tune_params_keys", keys);
  json_object_set_new(kt, "tune_params", params);
  json_object_set_new(kt, "objective", json_string("time"));
  json_object_set_new(kt, "cache", cache);
  *out = kt;
  return RT_OK;
}
