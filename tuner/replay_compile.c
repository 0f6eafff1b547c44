/* replay_compile.c — a recorded kernel compiled again from its manifest (see replay_compile.h). */
#include "tuner/replay_compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compile_pool.h"
#include "compile/cubin_cache.h"
#include "model/occupancy.h"
#include "template/manifest.h"

static void value_text(const space_param *p, int v, char *buf, size_t size) {
  if (p->ints)
    snprintf(buf, size, "%lld", p->ints[v]);
  else
    snprintf(buf, size, "%s", p->idents[v]);
}

/* map[q][v]: the manifest's position of recording parameter rec[q]'s value v (-1: none), for
 * each manifest parameter q; rec[q] its index in the recording.  An error names what differs. */
static rt_status replay_map(const manifest *m, const space *sp, const ktfile *kf, int *rec,
                            int **map, rt_error *err) {
  int nq = space_nparams(sp);
  if (nq != space_nparams(kf->space))
    return rt_error_set(err, RT_ERR_INVALID,
                        "the manifest has %d parameters and the recording %d: "
                        "they must be the same, by name",
                        nq, space_nparams(kf->space));
  for (int q = 0; q < nq; q++) {
    const space_param *mp = space_param_at(sp, q);
    rec[q] = space_param_index(kf->space, mp->name);
    if (rec[q] < 0)
      return rt_error_set(err, RT_ERR_INVALID,
                          "manifest parameter %s is not a parameter of the "
                          "recording %s",
                          mp->name, kf->path);
    const space_param *rp = space_param_at(kf->space, rec[q]);
    map[q] = malloc((size_t)rp->count * sizeof **map);
    if (!map[q]) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    for (int v = 0; v < rp->count; v++) {
      char a[300], b[300];
      value_text(rp, v, a, sizeof a);
      map[q][v] = -1;
      for (int w = 0; w < mp->count && map[q][v] < 0; w++) {
        value_text(mp, w, b, sizeof b);
        if (!strcmp(a, b)) map[q][v] = w;
      }
      if (map[q][v] < 0)
        return rt_error_set(err, RT_ERR_INVALID,
                            "the recording has %s=%s, which manifest %s does "
                            "not list in params.%s",
                            rp->name, a, manifest_path(m), mp->name);
    }
  }
  return RT_OK;
}

/* The recorded configurations the manifest's space holds: midx[i] its number there, or -1. */
static rt_status replay_find(const manifest *m, const space *sp, const ktfile *kf, long *midx,
                             size_t *mapped, rt_error *err) {
  int nq = space_nparams(sp);
  int rec[64], *map[64] = {0};
  if (nq > 64) return rt_error_set(err, RT_ERR_INVALID, "more than 64 parameters");
  rt_status rc = replay_map(m, sp, kf, rec, map, err);
  uint16_t cfg[64];
  *mapped = 0;
  for (size_t i = 0; !rc && i < kf->configs; i++) {
    const uint16_t *c = space_config(kf->space, i);
    for (int q = 0; q < nq; q++) cfg[q] = (uint16_t)map[q][c[rec[q]]];
    midx[i] = space_index(sp, cfg);
    *mapped += midx[i] >= 0;
  }
  for (int q = 0; q < nq; q++) free(map[q]);
  return rc;
}

/* The environment the manifest's expressions see: dtype and device facts (no problem). */
static rt_status replay_env(const manifest *m, const gpu_spec *gpu, rt_vars *env, rt_error *err) {
  rt_vars_clear(env);
  rt_status rc = gpu_spec_env(arch_spec_find(gpu->arch), gpu, env, err);
  if (!rc && manifest_ndtypes(m) > 0) rc = manifest_env_dtype(manifest_dtype(m, 0), env, err);
  return rc;
}

/* Plans and compiles the mapped configurations; fills out's facts and costs. */
static rt_status replay_build(const manifest *m, const space *sp, const rt_vars *env,
                              const long *midx, const gpu_spec *gpu, int jobs, replay_facts *out,
                              rt_error *err) {
  char *body = NULL;
  rt_status rc = manifest_read_source(m, &body, err);
  if (rc) {
    rt_error_set(err, rc,
                 "cannot read the kernel's source %s: put the recorded kernel's source "
                 "there (rooftune does not ship it)",
                 manifest_source(m));
    return rc;
  }
  size_t n = out->n, nj = 0;
  compile_job *cj = calloc(n ? n : 1, sizeof *cj);
  size_t *of = calloc(n ? n : 1, sizeof *of);
  candidate_plan *pl = calloc(n ? n : 1, sizeof *pl);
  compile_result *res = calloc(n ? n : 1, sizeof *res);
  const char *dtype = manifest_ndtypes(m) ? manifest_dtype(m, 0) : NULL;
  if (!cj || !of || !pl || !res) rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (size_t i = 0; !rc && i < n; i++) {
    if (midx[i] < 0) continue;
    char *text = NULL;
    if ((rc = manifest_plan(m, sp, (size_t)midx[i], env, &pl[nj], err)) ||
        (rc = manifest_config_source(m, sp, (size_t)midx[i], env, dtype, body, &text, err)))
      break;
    cj[nj].source = text;
    cj[nj].name = manifest_source_name(m);
    of[nj++] = i;
  }
  cubin_cache *cache = NULL;
  if (!rc && cubin_cache_open_default(&cache, NULL) != RT_OK) cache = NULL;
  compile_options copt;
  manifest_compile_options(m, out->arch, &copt);
  compile_pool_options popt = {0};
  popt.workers = jobs;
  popt.timeout_s = 300;
  popt.cache = cache;
  compile_pool_stats stats = {0};
  if (!rc && nj) rc = compile_pool_run(cj, nj, &copt, &popt, res, &stats, err);
  const arch_spec *arch = arch_spec_find(gpu->arch);
  for (size_t j = 0; !rc && j < nj; j++) {
    size_t i = of[j];
    out->flops[i] = pl[j].flops;
    out->executed_flops[i] = pl[j].executed_flops;
    out->dram_bytes[i] = pl[j].dram_bytes;
    if (res[j].status != RT_OK) continue;
    static_facts *f = &out->facts[i];
    f->registers = res[j].report.registers;
    f->smem_static = res[j].report.smem_static;
    f->spill_stores = res[j].report.spill_stores;
    f->spill_loads = res[j].report.spill_loads;
    f->stack_bytes = res[j].report.stack_bytes;
    f->threads_per_block = (int)(pl[j].block[0] * pl[j].block[1] * pl[j].block[2]);
    f->smem_dynamic = (int)pl[j].smem;
    f->grid_blocks = (long long)pl[j].grid[0] * pl[j].grid[1] * pl[j].grid[2];
    if (occupancy_fill_facts(arch, f, NULL) != RT_OK) f->threads_per_block = 0;
  }
  out->compiled = stats.compiled;
  out->failed = stats.compile_errors + stats.failed;
  out->cache_hits = stats.cache_hits;
  for (size_t j = 0; j < nj; j++) {
    free((char *)cj[j].source);
    compile_result_free(&res[j]);
  }
  cubin_cache_close(cache);
  free(body);
  free(cj);
  free(of);
  free(pl);
  free(res);
  return rc;
}

rt_status replay_compile(const ktfile *kf, const char *manifest_path, const gpu_spec *gpu, int jobs,
                         replay_facts *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  if (!gpu)
    return rt_error_set(err, RT_ERR_INVALID,
                        "the recording's GPU (%s) is not in the spec table: "
                        "no architecture to compile for",
                        kf->device_name[0] ? kf->device_name : "unnamed");
  manifest *m = NULL;
  rt_status rc = manifest_load(manifest_path, &m, err);
  if (rc) return rc;
  snprintf(out->arch, sizeof out->arch, "%s", gpu->arch);
  space *sp = NULL;
  long *midx = NULL;
  rt_vars env;
  if (!manifest_has_arch(m, gpu->arch)) {
    rc = rt_error_set(err, RT_ERR_INVALID,
                      "manifest %s does not list %s, the architecture of the "
                      "recorded %s, in \"archs\"",
                      manifest_path, gpu->arch, gpu->name);
    goto done;
  }
  out->n = kf->configs;
  out->facts = calloc(out->n ? out->n : 1, sizeof *out->facts);
  out->flops = calloc(out->n ? out->n : 1, sizeof *out->flops);
  out->executed_flops = calloc(out->n ? out->n : 1, sizeof *out->executed_flops);
  out->dram_bytes = calloc(out->n ? out->n : 1, sizeof *out->dram_bytes);
  midx = malloc((out->n ? out->n : 1) * sizeof *midx);
  if (!out->facts || !out->flops || !out->executed_flops || !out->dram_bytes || !midx) {
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  manifest_roles(m, &out->roles);
  if ((rc = replay_env(m, gpu, &env, err)) || (rc = manifest_build_space(m, &env, &sp, err)) ||
      (rc = replay_find(m, sp, kf, midx, &out->mapped, err)) ||
      (rc = replay_build(m, sp, &env, midx, gpu, jobs, out, err)))
    goto done;
  for (size_t i = 0; kf->facts && i < out->n; i++)
    if (out->facts[i].threads_per_block > 0 && kf->facts[i].threads_per_block > 0) {
      out->compared++;
      out->agree += out->facts[i].registers == kf->facts[i].registers;
    }
done:
  if (rc && err && !err->source[0]) rt_error_locate(err, manifest_path, NULL, 0, 0);
  if (rc) replay_facts_free(out);
  space_free(sp);
  free(midx);
  manifest_free(m);
  return rc;
}

void replay_facts_free(replay_facts *f) {
  free(f->facts);
  free(f->flops);
  free(f->executed_flops);
  free(f->dram_bytes);
  f->facts = NULL;
  f->flops = f->executed_flops = f->dram_bytes = NULL;
}
