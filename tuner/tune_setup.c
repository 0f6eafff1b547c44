/* tune_setup.c — what a target means (tune_impl.h): the templates of a family (or the one named)
 * that take the dtype and the device's architecture, the problem and its environment, each
 * template's space (a shard of it, or the one configuration asked for), and the family's
 * reference, compiled where kernels run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "tuner/device/sim_driver.h"
#include "template/catalog.h"
#include "template/cover.h"
#include "tuner/tune_impl.h"

/* The architecture to compile template m for on this device: the device's own when listed,
 * its "a" variant (sm_90a) when that is listed, or the device's when the template lists an
 * older minor version of the same major (SASS runs within a major version).  "" when none. */
static void template_arch(const manifest *m, const char *dev_arch, char *out, size_t size) {
  out[0] = 0;
  if (!dev_arch) return;
  char a[24];
  snprintf(a, sizeof a, "%sa", dev_arch);
  if (manifest_has_arch(m, a))
    snprintf(out, size, "%.15s", a);
  else if (manifest_has_arch(m, dev_arch))
    snprintf(out, size, "%s", dev_arch);
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

/* The dtype template m computes the problem in: the problem's, or tf32 for an f32 problem with
 * --allow-tf32 when the template takes tf32 and not f32; NULL when it takes neither. */
static const char *template_dtype(const manifest *m, const tune_options *o) {
  const char *d = o->dtype ? o->dtype : "";
  if (manifest_has_dtype(m, d)) return d;
  if (o->allow_tf32 && !strcmp(d, "f32") && manifest_has_dtype(m, "tf32")) return "tf32";
  return NULL;
}

/* ---- the templates ---- */

/* The target names one template: it must be a tunable template of a known family that takes
 * the dtype on this device. */
static rt_status select_one(tune_ctx *c, const char *tpath, tune_lineup *L, rt_error *err) {
  const tune_options *o = c->o;
  manifest *m = NULL;
  rt_error ferr = {0};
  rt_status rc = RT_OK;
  if (catalog_find(tpath, o->target ? o->target : "", &m, &ferr)) {
    rt_error_locate(err, "FAMILY|TEMPLATE", NULL, 0, 0);
    return rt_error_set(err, ferr.code == RT_ERR_NOT_FOUND ? RT_ERR_NOT_FOUND : ferr.code,
                        "'%s' is neither a kernel family (%s) nor a template: %.500s",
                        o->target ? o->target : "", family_names(), ferr.text);
  }
  c->fam = family_find(manifest_family(m));
  if (!c->fam) {
    rt_error_locate(err, manifest_path(m), "family", 0, 0);
    rc = rt_error_set(err, RT_ERR_MANIFEST, "template %s names an unknown family '%s' (known: %s)",
                      manifest_name(m), manifest_family(m), family_names());
  } else if (c->fam->reference && !strcmp(manifest_name(m), c->fam->reference)) {
    rt_error_locate(err, "FAMILY|TEMPLATE", NULL, 0, 0);
    rc = rt_error_set(err, RT_ERR_USAGE,
                      "%s is the %s family's reference: candidates are checked against it, "
                      "it is not tuned; tune the family or one of its other templates",
                      manifest_name(m), c->fam->name);
  } else if (!(L->dtype[0] = template_dtype(m, o))) {
    rt_error_locate(err, "--dtype", NULL, 0, 0);
    int tf = o->dtype && !strcmp(o->dtype, "f32") && manifest_has_dtype(m, "tf32");
    rc = rt_error_set(
        err, RT_ERR_UNSUPPORTED, "template %s does not support dtype '%s'%s", manifest_name(m),
        o->dtype ? o->dtype : "",
        tf ? " (it computes in tf32: give --dtype tf32, or --allow-tf32 to admit it for f32)" : "");
  } else {
    template_arch(m, device_arch(c->dev), L->arch[0], sizeof L->arch[0]);
    if (!L->arch[0][0])
      rc = rt_error_set(err, RT_ERR_UNSUPPORTED, "template %s does not support %s (%s)",
                        manifest_name(m), device_arch(c->dev), c->rep->device);
  }
  if (rc) {
    manifest_free(m);
    return rc;
  }
  L->m[L->n++] = m;
  return RT_OK;
}

/* The target is a family: its templates in the path that take the dtype on this device (not
 * its reference); a name defined twice is an error. */
static rt_status select_family(tune_ctx *c, const char *tpath, tune_lineup *L, rt_error *err) {
  rt_status rc = catalog_list(tpath, &L->paths, &L->npaths, err);
  if (rc) return rc;
  char **skipped = NULL;
  int nskipped = 0;
  if (catalog_skipped(tpath, &skipped, &nskipped, NULL) == RT_OK)
    for (int i = 0; i < nskipped; i++)
      tune_note(c->rep, "skipped %.300s (not a template manifest)", skipped[i]);
  catalog_list_free(skipped, nskipped);
  for (int i = 0; i < L->npaths && L->n < TUNE_MAX_TEMPLATES; i++) {
    manifest *m = NULL;
    if (manifest_load(L->paths[i], &m, err)) return err ? err->code : RT_ERR_MANIFEST;
    /* two manifests of one name would both be tuned and stored as one template */
    for (int k = 0; k < i; k++) {
      manifest *o2 = NULL;
      if (manifest_load(L->paths[k], &o2, NULL) == RT_OK &&
          !strcmp(manifest_name(o2), manifest_name(m))) {
        rt_error_locate(err, L->paths[i], "name", 0, 0);
        rc = rt_error_set(err, RT_ERR_MANIFEST,
                          "template %s is defined twice: in %s and in %s; rename one",
                          manifest_name(m), L->paths[k], L->paths[i]);
        manifest_free(o2);
        manifest_free(m);
        return rc;
      }
      manifest_free(o2);
    }
    template_arch(m, device_arch(c->dev), L->arch[L->n], sizeof L->arch[L->n]);
    int mine = strcmp(manifest_family(m), c->fam->name) == 0 &&
               !(c->fam->reference && !strcmp(manifest_name(m), c->fam->reference));
    L->in_family += mine;
    if (!mine || !(L->dtype[L->n] = template_dtype(m, c->o)) || !L->arch[L->n][0]) {
      manifest_free(m);
      continue;
    }
    L->m[L->n++] = m;
  }
  return RT_OK;
}

rt_status tune_select(tune_ctx *c, const char *tpath, tune_lineup *L, rt_error *err) {
  c->fam = family_find(c->o->target ? c->o->target : "");
  L->whole_family = c->fam != NULL; /* the family's library runs only then */
  return c->fam ? select_family(c, tpath, L, err) : select_one(c, tpath, L, err);
}

void tune_lineup_free(tune_lineup *L) {
  for (int i = 0; i < L->n; i++) {
    space_free(L->sp[i]);
    manifest_free(L->m[i]);
    free(L->prior[i]);
    free(L->features[i]);
  }
  if (L->paths) catalog_list_free(L->paths, L->npaths);
  memset(L, 0, sizeof *L);
}

/* ---- the problem ---- */

rt_status tune_problem(tune_ctx *c, const tune_lineup *L, const char *tpath, int use_library,
                       rt_error *err) {
  const tune_options *o = c->o;
  rt_status rc = c->fam->parse_shape(c->fam, o->shape ? o->shape : "", o->dtype ? o->dtype : "",
                                     o->problem_args, &c->prob, err);
  if (rc) {
    if (err && !err->source[0]) rt_error_locate(err, "--shape", NULL, 0, 0);
    return rc;
  }
  if ((rc = problem_env(c->fam, &c->prob, arch_spec_find(device_arch(c->dev)), device_spec(c->dev),
                        &c->env, err)))
    return rc;
  if (device_sm_count(c->dev) > 0) rt_vars_set(&c->env, "device.sm_count", device_sm_count(c->dev));
  if (L->n > 0 || use_library) return RT_OK;
  if (L->whole_family && L->in_family == 0) {
    rt_error_locate(err, "FAMILY|TEMPLATE", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_NOT_FOUND,
                        "the template path %s holds no %s template: add a folder "
                        "with --templates DIR or $ROOFTUNE_TEMPLATE_PATH",
                        tpath, c->fam->name);
  }
  rt_error_locate(err, "--dtype", NULL, 0, 0);
  return rt_error_set(err, RT_ERR_UNSUPPORTED,
                      "no %s template supports dtype %s on %s (%s): %d of the "
                      "path's %s templates were left out for their dtypes or architectures",
                      c->fam->name, o->dtype ? o->dtype : "", device_arch(c->dev), c->rep->device,
                      L->in_family, c->fam->name);
}

/* ---- the family's reference ---- */

/* Compiles reference template m (space sp) for the device and plans its launch for the
 * problem: the first valid configuration of its space. */
static rt_status compile_reference(tune_ctx *c, const manifest *m, space **sp, rt_error *err) {
  char arch[16];
  template_arch(m, device_arch(c->dev), arch, sizeof arch);
  if (!arch[0] || !manifest_has_dtype(m, c->prob.dtype))
    return rt_error_set(err, RT_ERR_UNSUPPORTED,
                        "the %s family's reference %s does not support %s on %s", c->fam->name,
                        manifest_name(m), c->prob.dtype, device_arch(c->dev));
  candidate_plan pl;
  compile_options copt;
  char *src = NULL;
  rt_status rc;
  const rt_vars *env = c->have_check ? &c->check_env : &c->env; /* what the device checks on */
  if ((rc = manifest_build_space(m, env, sp, err)) ||
      (rc = manifest_plan(m, *sp, 0, env, &pl, err)) ||
      (rc = manifest_config_source(m, *sp, 0, &pl.vars, c->prob.dtype, NULL, &src, err)))
    return rc;
  manifest_compile_options(m, arch, &copt);
  if (device_has(c->dev, DEVICE_CAP_SOURCE)) { /* the sim runs its source, as an image */
    memset(&c->ref_cr, 0, sizeof c->ref_cr);
    rc = sim_image_make(src, manifest_source_name(m), &copt, (char **)&c->ref_cr.cubin,
                        &c->ref_cr.cubin_size, err);
    snprintf(c->ref_cr.lowered_name, sizeof c->ref_cr.lowered_name, "%s",
             copt.entry ? copt.entry : "");
  } else {
    rc = compile_source(src, manifest_source_name(m), &copt, &c->ref_cr, err);
  }
  free(src);
  if (rc) {
    rt_error_locate(err, manifest_path(m), NULL, 0, 0);
    return rc;
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
  return RT_OK;
}

/* Finds the family's reference template in the path (an error when it is missing or belongs to
 * another family) and, on a device that runs kernels, compiles it. */
rt_status tune_reference(tune_ctx *c, const char *tpath, rt_error *err) {
  if (!c->fam->reference) return RT_OK;
  manifest *m = NULL;
  space *sp = NULL;
  rt_error e = {0};
  rt_status rc = catalog_find(tpath, c->fam->reference, &m, &e);
  if (rc) {
    if (err) *err = e;
    if (rc == RT_ERR_NOT_FOUND) {
      rt_error_locate(err, c->fam->declared_in ? c->fam->declared_in : c->fam->name, "reference", 0,
                      0);
      rc = rt_error_set(err, RT_ERR_NOT_FOUND,
                        "the %s family's reference template %s is not in the template "
                        "path %s",
                        c->fam->name, c->fam->reference, tpath);
    }
    return rc;
  }
  if (strcmp(manifest_family(m), c->fam->name) != 0) {
    rt_error_locate(err, manifest_path(m), "family", 0, 0);
    rc = rt_error_set(err, RT_ERR_MANIFEST,
                      "%s is named the %s family's reference but belongs to family %s",
                      manifest_name(m), c->fam->name, manifest_family(m));
  } else if (device_has(c->dev, DEVICE_CAP_RUNS) ||
             device_has(c->dev, DEVICE_CAP_SOURCE)) { /* nothing runs: nothing to check */
    rc = compile_reference(c, m, &sp, err);
  }
  space_free(sp);
  manifest_free(m);
  return rc;
}

/* ---- the spaces ---- */

int tune_config_shard(const char *config, int count) {
  if (count <= 1) return 0;
  unsigned char dg[32];
  sha256(config, strlen(config), dg);
  uint64_t h = 0;
  for (int i = 0; i < 8; i++) h = h << 8 | dg[i];
  return (int)(h % (uint64_t)count);
}

/* Whether configuration idx of sp belongs to shard ctx = {index, count}. */
static int keep_shard(void *ctx, const space *sp, size_t idx) {
  const int *shard = ctx;
  char text[1024];
  space_format_config(sp, idx, text, sizeof text);
  return tune_config_shard(text, shard[1]) == shard[0];
}

/* The configurations of sp that belong to shard index/count, as a space of their own (maybe
 * empty: space_size 0). */
static rt_status tune_shard_space(const space *sp, int index, int count, space **out,
                                  rt_error *err) {
  *out = NULL;
  if (index < 0 || index >= count)
    return rt_error_set(err, RT_ERR_USAGE, "shard %d of %d does not exist (0 to %d)", index, count,
                        count - 1);
  int shard[2] = {index, count};
  return space_subset(sp, keep_shard, shard, out, err);
}

rt_status tune_template_env(const tune_ctx *c, const char *dtype, rt_vars *env, rt_error *err) {
  *env = c->env;
  return strcmp(dtype, c->prob.dtype) ? manifest_env_dtype(dtype, env, err) : RT_OK;
}

/* Template i's space (*sp; NULL with a note when it has no configuration here and others
 * remain), narrowed to this shard's configurations, or to the one asked for. */
static rt_status space_of(tune_ctx *c, const tune_lineup *L, int i, int use_library, space **sp,
                          rt_error *err) {
  const tune_options *o = c->o;
  const char *name = manifest_name(L->m[i]);
  rt_vars tenv;
  rt_status s = tune_template_env(c, L->dtype[i], &tenv, err);
  if (!s) s = manifest_build_space(L->m[i], &tenv, sp, err);
  if (s == RT_ERR_SPACE_EMPTY && (L->n > 1 || use_library)) {
    const char *why = strstr(err->text, ": \"");
    tune_note(c->rep, "%s skipped for %s%s%s%.240s", name, c->prob.shape,
              c->prob.layout[0] ? ":" : "", c->prob.layout,
              why ? why : " (no valid configuration)");
    return RT_OK;
  }
  if (!s && !o->config && o->shard_count > 1) { /* this shard's configurations only */
    space *part = NULL;
    s = tune_shard_space(*sp, o->shard_index, o->shard_count, &part, err);
    space_free(*sp);
    *sp = part;
    if (!s && space_size(part) == 0) {
      space_free(part);
      *sp = NULL;
      tune_note(c->rep, "%s has no configuration in shard %d/%d", name, o->shard_index,
                o->shard_count);
      return RT_OK;
    }
  }
  if (!s && o->cover) { /* a covering set only */
    space *part = NULL;
    s = manifest_cover_space(L->m[i], *sp, &part, err);
    space_free(*sp);
    *sp = part;
  }
  if (!s && o->config) { /* only the configuration asked for */
    size_t idx;
    space *one = NULL;
    s = space_parse_config(*sp, o->config, &idx, err);
    if (s == RT_ERR_NOT_FOUND)
      rt_error_set(err, s, "configuration %.300s of %s is not valid for %s %s on %s", o->config,
                   name, c->prob.shape, c->prob.dtype, c->rep->device);
    if (!s) s = space_single(*sp, idx, &one, err);
    if (s) rt_error_locate(err, "config", NULL, 0, 0);
    space_free(*sp);
    *sp = one;
    c->rep->budget = c->budget_left = 1;
  }
  return s;
}

/* --cover evaluates every configuration of each covering set: a budget below their sum would
 * leave code paths unrun without a word, so it is refused saying what the sets need. */
static rt_status cover_fits(tune_ctx *c, const tune_lineup *L, rt_error *err) {
  size_t need = 0;
  char sets[512] = "";
  for (int i = 0; i < L->n; i++) {
    if (!L->sp[i]) continue;
    need += space_size(L->sp[i]);
    size_t l = strlen(sets);
    if (l + 1 < sizeof sets)
      snprintf(sets + l, sizeof sets - l, "%s%s %zu", l ? ", " : "", manifest_name(L->m[i]),
               space_size(L->sp[i]));
  }
  if ((size_t)c->budget_left >= need) return RT_OK;
  rt_error_locate(err, "--budget", NULL, 0, 0);
  return rt_error_set(err, RT_ERR_USAGE,
                      "--cover evaluates %zu covering configurations (%s) and the budget is %ld: "
                      "give --budget %zu or more",
                      need, sets, (long)c->budget_left, need);
}

/* Every template's space first, so the budget goes only to templates with candidates. */
rt_status tune_spaces(tune_ctx *c, tune_lineup *L, int use_library, rt_error *err) {
  for (int i = 0; i < L->n; i++) {
    rt_error serr = {0};
    rt_status s = space_of(c, L, i, use_library, &L->sp[i], &serr);
    if (s) {
      if (err) *err = serr;
      return s;
    }
    if (L->sp[i]) L->live++;
  }
  c->rep->templates = (size_t)L->live;
  return c->o->cover ? cover_fits(c, L, err) : RT_OK;
}
