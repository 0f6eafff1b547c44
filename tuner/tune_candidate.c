/* tune_candidate.c — the candidate object (tune_impl.h): made once from its plan, with what
 * the device and the diagnosis read, and the one device description of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "model/occupancy.h"
#include "tuner/tune_impl.h"

compute_path tune_template_path(const manifest *m, const char *dtype, int *wgmma) {
  const char *ins = manifest_instruction(m);
  *wgmma = strcmp(ins, "wgmma") == 0;
  if (strcmp(ins, "simt") == 0) return PATH_SIMT_F32;
  return roofline_path_for_dtype(dtype, 1);
}

double tune_tolerance(const tune_ctx *c, const char *d) {
  if (!strcmp(d, c->prob.dtype) || !c->fam || !c->fam->tolerance) return 0;
  problem p = c->prob;
  snprintf(p.dtype, sizeof p.dtype, "%s", d);
  return c->fam->tolerance(c->fam, &p);
}

void tune_plan_facts(const candidate_plan *pl, const ptxas_report *ptxas, static_facts *f) {
  memset(f, 0, sizeof *f);
  if (ptxas) {
    f->registers = ptxas->registers;
    f->smem_static = ptxas->smem_static;
    f->spill_stores = ptxas->spill_stores;
    f->spill_loads = ptxas->spill_loads;
    f->stack_bytes = ptxas->stack_bytes;
  }
  f->smem_dynamic = (int)pl->smem;
  f->threads_per_block = (int)(pl->block[0] * pl->block[1] * pl->block[2]);
  f->grid_blocks = (long long)pl->grid[0] * pl->grid[1] * pl->grid[2];
  f->work_blocks = pl->work;
}

/* What every candidate of search s shares. */
static void cand_begin(const tune_search *s, tune_cand *k) {
  memset(k, 0, sizeof *k);
  k->name = s->name;
  k->library_index = -1;
  k->path = s->path;
  k->wgmma = s->wgmma;
  k->precision = s->precision;
  k->tolerance = s->tolerance;
  k->min_bytes = s->min_bytes;
  k->calibration = s->calibration;
}

/* What a candidate runs, as a hex digest: the compile key of its complete source (NVRTC, its
 * options, the text and every file its includes find), its launch geometry and, where times are
 * predicted rather than measured, the cost numbers the prediction reads.  Two configurations
 * (or two versions of a manifest) that agree on all of it have the same timing. */
static rt_status code_hash(const tune_ctx *c, const tune_search *s, tune_cand *k, rt_error *err) {
  const candidate_plan *pl = &k->plan;
  unsigned char key[32];
  rt_status st =
      compile_key(s->options_digest, &s->copt, s->source_name, k->source, key, NULL, err);
  if (st) return st;
  char text[512];
  int n = snprintf(text, sizeof text, "%02x%02x%02x%02x%02x%02x%02x%02x|%u,%u,%u|%u,%u,%u|%u|%lld",
                   key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7], pl->grid[0],
                   pl->grid[1], pl->grid[2], pl->block[0], pl->block[1], pl->block[2], pl->smem,
                   pl->work);
  if (!device_has(c->dev, DEVICE_CAP_MEASURES))
    n += snprintf(text + n, sizeof text - (size_t)n, "|%.17g,%.17g,%.17g,%.17g", pl->flops,
                  pl->dram_bytes, pl->executed_flops, pl->inflight_bytes);
  /* a prediction scaled by a calibration is another prediction (none: the text of before) */
  if (!device_has(c->dev, DEVICE_CAP_MEASURES) && k->calibration > 0 && n > 0 &&
      (size_t)n < sizeof text)
    snprintf(text + n, sizeof text - (size_t)n, "|cal %.17g", k->calibration);
  unsigned char all[64];
  memcpy(all, key, 32);
  unsigned char tail[32];
  sha256(text, strlen(text), tail);
  memcpy(all + 32, tail, 32);
  unsigned char dg[32];
  sha256(all, sizeof all, dg);
  sha256_hex(dg, k->code_hash);
  return RT_OK;
}

void tune_cand_template(tune_ctx *c, const tune_search *s, size_t idx, tune_cand *k) {
  cand_begin(s, k);
  candidate_plan *pl = &k->plan;
  pl->idx = idx;
  space_format_config(s->sp, idx, pl->config, sizeof pl->config);
  /* the one visit to the manifest: the plan and the source NVRTC compiles */
  rt_error cerr = {0};
  rt_status st = manifest_plan(s->m, s->sp, idx, &s->env, pl, &cerr);
  if (!st)
    st =
        manifest_config_source(s->m, s->sp, idx, &pl->vars, s->dtype, s->source, &k->source, &cerr);
  if (!st) st = code_hash(c, s, k, &cerr); /* a header that is not a file fails it here */
  if (!st) {
    tune_plan_facts(pl, NULL, &k->facts);
    tune_cand_check(c, s, idx, k);
    return;
  }
  candidate_result *r = &k->r;
  snprintf(r->template_name, sizeof r->template_name, "%s", s->name);
  snprintf(r->config, sizeof r->config, "%s", pl->config);
  r->status = st;
  snprintf(r->detail, sizeof r->detail, "%.255s", cerr.text);
  r->timing = c->rep->timing;
  snprintf(r->device_name, sizeof r->device_name, "%.63s", c->rep->device);
  r->verify_error = -1;
  k->state = CAND_FAILED;
}

/* A library candidate's precision from its identity text (cuBLASLt's "compute=32F_FAST_TF32"). */
static const char *library_precision(const char *id, const char *dtype) {
  if (strstr(id, "FAST_TF32")) return "tf32";
  return !strcmp(dtype, "f32") || !strcmp(dtype, "tf32") ? "fp32" : dtype;
}

void tune_cand_library(tune_ctx *c, const tune_search *s, int i, const char *id, tune_cand *k) {
  cand_begin(s, k);
  k->library_index = i;
  k->precision = library_precision(id, c->prob.dtype);
  k->path =
      !strcmp(k->precision, "fp32") ? PATH_SIMT_F32 : roofline_path_for_dtype(k->precision, 1);
  k->wgmma = 1;
  k->tolerance = !strcmp(k->precision, "tf32") ? tune_tolerance(c, "tf32") : 0;
  candidate_plan_library(&k->plan, id, c->fam->flops(c->fam, &c->prob),
                         c->fam->min_bytes(c->fam, &c->prob));
}

void tune_cand_recorded(const tune_search *s, size_t idx, tune_cand *k) {
  cand_begin(s, k);
  k->plan.idx = idx;
  space_format_config(s->sp, idx, k->plan.config, sizeof k->plan.config);
  k->plan.flops = k->plan.executed_flops = s->flops;
}

void tune_cand_device(const tune_cand *k, const compile_result *cr, double stop_above_ms,
                      device_candidate *dc) {
  memset(dc, 0, sizeof *dc);
  dc->template_name = k->name;
  dc->plan = &k->plan;
  if (cr) {
    dc->entry = cr->lowered_name;
    dc->cubin = cr->cubin;
    dc->cubin_size = cr->cubin_size;
  }
  dc->min_bytes = k->min_bytes;
  dc->facts = k->facts;
  dc->path = k->path;
  dc->wgmma = k->wgmma;
  dc->library_index = k->library_index;
  dc->stop_above_ms = stop_above_ms;
  dc->dram_calibration = k->calibration;
  dc->precision = k->precision;
  dc->tolerance = k->tolerance;
}

/* What decides a run's outcome besides the code: the cubin's bytes, the launch geometry and the
 * derived values (the family's launcher reads some of them, e.g. TMA boxes).  Parameters that
 * only reach the source and leave the cubin alone are not part of it. */
void tune_cubin_key(const compile_result *cr, const tune_search *s, const candidate_plan *pl,
                    unsigned char out[32]) {
  unsigned char dg[32];
  sha256(cr->cubin, cr->cubin_size, dg);
  char text[2048];
  size_t n = (size_t)snprintf(
      text, sizeof text, "%02x%02x%02x%02x%02x%02x%02x%02x|%u,%u,%u|%u,%u,%u|%u|%lld", dg[0], dg[1],
      dg[2], dg[3], dg[4], dg[5], dg[6], dg[7], pl->grid[0], pl->grid[1], pl->grid[2], pl->block[0],
      pl->block[1], pl->block[2], pl->smem, pl->work);
  for (int i = 0; i < s->nderived && n < sizeof text; i++) {
    long long v = 0;
    rt_vars_get(&pl->vars, s->derived[i], &v);
    n += (size_t)snprintf(text + n, sizeof text - n, "|%s=%lld", s->derived[i], v);
  }
  unsigned char all[64];
  memcpy(all, dg, 32);
  sha256(text, strlen(text), all + 32);
  sha256(all, sizeof all, out);
}
