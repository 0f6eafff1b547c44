/* device_replay.c — the replay device: times recorded in a Kernel Tuner / KTT cache file
 * (ktfile.h), or in rooftune's own export (`rooftune db export`), served as TIMING_REPLAYED
 * results.
 *
 * A rooftune export holds many templates and problems; the rows of one template (chosen by
 * device_options.replay_template, or the only one) and one problem (replay_shape and
 * replay_dtype, or the only one) are turned into a Kernel Tuner cache file in memory and read
 * by ktfile.c, so both kinds of file give the same space and the same lookups.  A failed row
 * keeps its status: the failure text starts with the status name ("ERR_WRONG_RESULT: ..."). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "device_impl.h"
#include "ktfile.h"

static size_t replay_gz_read(void *buf, size_t len, void *data) {
  if (len > (1u << 30)) len = 1u << 30;
  int got = gzread((gzFile)data, buf, (unsigned)len);
  return got < 0 ? (size_t)-1 : (size_t)got;
}

static const char *text_of(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

/* The export's rows of one template and problem, as a Kernel Tuner cache object. */
static rt_status export_to_kt(json_t *root, const char *path, const device_options *o,
                              json_t **out, rt_error *err) {
  *out = NULL;
  json_t *rows = json_object_get(root, "results");
  const char *want_t = o->replay_template, *tmpl = NULL, *shape = NULL, *dtype = NULL;
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
    if (o->replay_shape && strcmp(o->replay_shape, sh)) continue;
    if (o->replay_dtype && strcmp(o->replay_dtype, dt)) continue;
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
                          "the export holds %s for %s %s and %s %s: give --shape and --dtype",
                          tmpl, shape, dtype, sh, dt);
    }
  }
  if (!tmpl) {
    rt_error_locate(err, path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_NOT_FOUND, "the export has no results%s%s%s%s%s%s",
                        want_t ? " of " : "", want_t ? want_t : "", o->replay_shape ? " for " : "",
                        o->replay_shape ? o->replay_shape : "", o->replay_dtype ? " " : "",
                        o->replay_dtype ? o->replay_dtype : "");
  }
  json_t *kt = json_object(), *keys = json_array(), *params = json_object(), *cache = json_object();
  const char *devname = NULL;
  json_array_foreach(rows, i, row) {
    if (strcmp(tmpl, text_of(row, "template")) || strcmp(shape, text_of(row, "shape")) ||
        strcmp(dtype, text_of(row, "dtype")))
      continue;
    json_t *cfg = json_object_get(row, "config");
    if (!json_is_object(cfg)) continue;
    if (!devname) devname = json_string_value(json_object_get(json_object_get(row, "device"), "name"));
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
      if (json_is_integer(v)) snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
      else snprintf(text, sizeof text, "%s", json_string_value(v) ? json_string_value(v) : "");
      kl += (size_t)snprintf(key + kl, kl < sizeof key ? sizeof key - kl : 0, "%s%s", kl ? "," : "", text);
      json_object_set(rec, name, v);
    }
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

/* Loads a rooftune export through a temporary Kernel Tuner file.  *is_export = 0 when the
 * file is not one (then nothing is loaded). */
static rt_status load_export(const char *path, const device_options *o, ktfile **kf,
                             int *is_export, rt_error *err) {
  *is_export = 0;
  gzFile gz = gzopen(path, "rb");
  if (!gz) return RT_OK;
  json_error_t jerr;
  json_t *root = json_load_callback(replay_gz_read, gz, 0, &jerr);
  gzclose(gz);
  if (!root || !json_is_object(root) || !json_object_get(root, "rooftune_export")) {
    json_decref(root);
    return RT_OK;
  }
  *is_export = 1;
  json_t *kt = NULL;
  rt_status st = export_to_kt(root, path, o, &kt, err);
  json_decref(root);
  if (st) return st;
  char tmp[] = "/tmp/rooftune_replay_XXXXXX";
  int fd = mkstemp(tmp);
  if (fd < 0) {
    json_decref(kt);
    return rt_error_set(err, RT_ERR_IO, "cannot create a temporary file for %s", path);
  }
  int bad = json_dumpfd(kt, fd, JSON_COMPACT) != 0;
  close(fd);
  json_decref(kt);
  if (!bad) st = ktfile_load(tmp, kf, err);
  unlink(tmp);
  if (bad) return rt_error_set(err, RT_ERR_IO, "cannot write a temporary file for %s", path);
  if (st) {
    rt_error_locate(err, path, NULL, 0, 0);
    return st;
  }
  free((*kf)->path);
  (*kf)->path = strdup(path);
  if (!(*kf)->path) {
    ktfile_free(*kf);
    *kf = NULL;
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  return RT_OK;
}

rt_status device_replay_open(device *d, const char *path, rt_error *err) {
  if (!*path) {
    rt_error_locate(err, "--device", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_INVALID, "replay needs a file: replay:FILE");
  }
  int is_export = 0;
  rt_status st = load_export(path, &d->opt, &d->kf, &is_export, err);
  if (!st && !is_export) st = ktfile_load(path, &d->kf, err);
  if (st) return st;
  snprintf(d->label, sizeof d->label, "replay:%s", path);
  d->arch[0] = 0;
  /* the GPU the file was measured on, when the spec table knows it: its roofs for diagnosis */
  const gpu_spec *all;
  size_t n;
  all = gpu_spec_all(&n);
  for (size_t i = 0; i < n && d->kf->device_name && d->kf->device_name[0]; i++)
    if (strcasestr(d->kf->device_name, all[i].key)) {
      d->spec = &all[i];
      d->sm_count = all[i].sm_count;
      diag_ceilings_from_spec(d->spec, &d->ceil);
      d->have_ceil = 1;
      break;
    }
  return RT_OK;
}

void device_replay_close(device *d) {
  ktfile_free(d->kf);
  d->kf = NULL;
}

rt_status device_replay_evaluate(device *d, const device_candidate *c, candidate_result *r,
                                 rt_error *err) {
  size_t idx;
  rt_status st = ktfile_find(d->kf, c->config_text ? c->config_text : "", &idx, err);
  if (st) return st;
  candidate_result rec;
  memset(&rec, 0, sizeof rec);
  ktfile_result(d->kf, idx, &rec);
  r->status = rec.status;
  snprintf(r->detail, sizeof r->detail, "%s", rec.detail);
  /* a rooftune export's failure keeps its own status: "ERR_WRONG_RESULT: ..." */
  const char *colon = strchr(rec.detail, ':');
  if (rec.status != RT_OK && colon) {
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(colon - rec.detail), rec.detail);
    int code = rt_status_from_name(name);
    if (code > 0) r->status = (rt_status)code;
  }
  r->time_ms = rec.time_ms;
  r->spread = rec.spread;
  r->repetitions = rec.repetitions;
  if (rec.device_name[0]) snprintf(r->device_name, sizeof r->device_name, "%s", rec.device_name);
  return RT_OK;
}

const struct ktfile *device_replay_file(const device *d) { return d->kf; }
