/* device_sim.c — the sim device, sim:GPU (sim alone: sim:h200): every candidate's output is
 * computed on the CPU by the sim (sim/sim.h) and checked against the family's reference with the
 * family's tolerance, through the families' own GPU code running on the sim's driver table
 * (sim_driver.h: host memory with red zones, launches by sim_run, no vendor library); its time
 * is model:GPU's prediction.  The candidate's code is its source, as a sim image: the cubin NVRTC
 * made is not what runs (its ptxas facts feed the prediction).
 *
 * Per candidate: the prediction (a candidate that cannot be resident fails as on the model);
 * then its image loaded (compiled by the host C++ compiler, cached), the outputs poisoned, one
 * launch, the family's check.  A launch the sim refuses (an out-of-bounds access, a deadlock, a
 * fault the twins saw) and a check that fails are RT_ERR_WRONG_RESULT with the sim's message; a
 * mode the twins do not emulate is RT_ERR_UNSUPPORTED.  What passed is checked_on "sim", never
 * verified (only a GPU verifies). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/device/device_impl.h"
#include "tuner/device/sim_driver.h"
#include "driver/cuda_driver.h"

struct sim_state {
  const family_ops *fam;
  problem prob;
  family_gpu *g;
  double tol; /* the family's tolerance for the problem */
};

/* "" or ":GPU" with GPU of the spec table. */
static rt_status sim_check_arg(const char *arg, rt_error *err) {
  if (!*arg) return RT_OK;
  if (*arg == ':' && gpu_spec_find(arg + 1)) return RT_OK;
  return rt_error_set(err, RT_ERR_INVALID,
                      "unknown GPU '%s' for the sim device; use sim or sim:GPU (%s)",
                      *arg == ':' ? arg + 1 : arg, gpu_spec_keys());
}

static const gpu_spec *sim_gpu_of(const char *arg) {
  return gpu_spec_find(*arg == ':' ? arg + 1 : "h200");
}

static rt_status sim_open(device *d, const char *arg, rt_error *err) {
  d->spec = sim_gpu_of(arg); /* checked */
  if (!d->spec) return rt_error_set(err, RT_ERR_INVALID, "no GPU for the sim device");
  d->sim = calloc(1, sizeof *d->sim);
  if (!d->sim) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  snprintf(d->label, sizeof d->label, "sim:%s", d->spec->key);
  snprintf(d->arch, sizeof d->arch, "%s", d->spec->arch);
  d->sm_count = d->spec->sm_count;
  roofline_from_spec(d->spec, &d->ceil);
  d->have_ceil = 1;
  const arch_spec *a = arch_spec_find(d->spec->arch);
  sim_driver_gpu g;
  memset(&g, 0, sizeof g);
  snprintf(g.name, sizeof g.name, "sim:%.50s", d->spec->key);
  g.cc_major = a ? a->cc / 10 : 9;
  g.cc_minor = a ? a->cc % 10 : 0;
  g.sm_count = d->spec->sm_count;
  g.l2_bytes = 50 << 20;
  g.smem_per_block_optin = a ? a->smem_per_block_optin : 227 * 1024;
  g.smem_per_sm = a ? a->smem_per_sm : 228 * 1024;
  g.regs_per_sm = a ? a->regs_per_sm : 65536;
  g.max_threads_per_sm = a ? a->max_threads_per_sm : 2048;
  g.max_blocks_per_sm = a ? a->max_blocks_per_sm : 32;
  sim_driver_install(&g);
  return RT_OK;
}

static void sim_close(device *d) {
  if (d->sim && d->sim->g) d->sim->fam->gpu_teardown(d->sim->g);
  free(d->sim);
  d->sim = NULL;
}

/* The family's inputs and reference for P, on the sim (the reference runs there too). */
static rt_status sim_begin(device *d, const family_ops *fam, const struct problem *p,
                           const family_reference *ref, rt_error *err) {
  struct sim_state *s = d->sim;
  if (s->g) s->fam->gpu_teardown(s->g);
  s->g = NULL;
  s->fam = fam;
  s->prob = *p;
  s->tol = fam->tolerance(fam, p);
  if (!fam->gpu_setup)
    return rt_error_set(err, RT_ERR_UNSUPPORTED, "the %s family has no GPU side to check with",
                        fam->name);
  rt_status st = fam->gpu_setup(fam, p, d->opt.seed, ref, NULL, &s->g, err);
  if (st) {
    char what[sizeof err->text];
    snprintf(what, sizeof what, "%s", err->text);
    rt_error_set(err, st, "%s on the sim: %s", fam->name, what);
  }
  return st;
}

/* A failed driver call's status for the candidate: what the sim refused is the candidate's
 * fault (WRONG), an unemulated mode is the sim's (UNSUPPORTED), the rest a refused launch. */
static rt_status sim_failure(const char *text) {
  if (strstr(text, "CUDA_ERROR_ILLEGAL_ADDRESS") || strstr(text, "CUDA_ERROR_LAUNCH_FAILED"))
    return RT_ERR_WRONG_RESULT;
  if (strstr(text, "CUDA_ERROR_NOT_SUPPORTED")) return RT_ERR_UNSUPPORTED;
  if (strstr(text, "CUDA_ERROR_INVALID_IMAGE")) return RT_ERR_COMPILE;
  return RT_ERR_LAUNCH;
}

/* Runs candidate c once on the sim and checks it: r's status, detail and verify_error. */
static void sim_check(device *d, const device_candidate *c, candidate_result *r) {
  struct sim_state *s = d->sim;
  const candidate_plan *pl = c->check_plan ? c->check_plan : c->plan;
  rt_error e = {0};
  char *image = NULL;
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  compile_options opt = *c->copt;
  rt_status st = sim_image_make(c->source, c->source_name ? c->source_name : c->template_name, &opt,
                                &image, NULL, &e);
  if (!st) st = cuda_check(cu.cuModuleLoadData(&mod, image), "load the sim image", &e);
  if (!st) st = cuda_check(cu.cuModuleGetFunction(&fn, mod, c->entry), "sim module", &e);
  free(image);
  if (!st) st = s->fam->gpu_poison(s->g, NULL, &e);
  if (!st) st = s->fam->gpu_launch(s->g, fn, &pl->vars, pl->grid, pl->block, pl->smem, NULL, &e);
  if (st) {
    r->status = st == RT_ERR_CUDA ? sim_failure(e.text) : st;
    snprintf(r->detail, sizeof r->detail, "%.255s", e.text);
    if (mod) cu.cuModuleUnload(mod);
    return;
  }
  const double tol = c->tolerance > 0 ? c->tolerance : s->tol;
  double rel = -1;
  if (tol != s->tol && !s->fam->gpu_tolerance) {
    st = rt_error_set(&e, RT_ERR_UNSUPPORTED,
                      "the %s family cannot check a candidate to another tolerance (%.3g)",
                      s->fam->name, tol);
  } else {
    if (s->fam->gpu_tolerance) s->fam->gpu_tolerance(s->g, tol != s->tol ? tol : 0);
    st = s->fam->gpu_verify(s->g, &rel, &e);
    if (s->fam->gpu_tolerance) s->fam->gpu_tolerance(s->g, 0);
    if (!st && !(rel <= tol))
      st = rt_error_set(&e, RT_ERR_WRONG_RESULT, "relative error %.3g exceeds the tolerance %.3g",
                        rel, tol);
  }
  cu.cuModuleUnload(mod);
  r->verify_error = rel >= 0 ? rel : -1;
  if (st) {
    r->status = st == RT_ERR_CUDA ? sim_failure(e.text) : st;
    snprintf(r->detail, sizeof r->detail, "on the sim: %.240s", e.text);
    return;
  }
  snprintf(r->checked_on, sizeof r->checked_on, "sim");
}

static rt_status sim_evaluate(device *d, const device_candidate *c, candidate_result *r,
                              rt_error *err) {
  (void)err;
  double sec = 0;
  rt_error perr = {0};
  rt_status st = device_model_predict(d->spec, c, &sec, &perr);
  if (st) { /* what cannot be resident on the GPU modelled fails as on the model */
    r->status = st;
    snprintf(r->detail, sizeof r->detail, "%.255s", perr.text);
    return RT_OK;
  }
  r->status = RT_OK;
  r->time_ms = sec * 1e3;
  if (c->library_index >= 0 || !c->source || !c->copt || !c->entry) {
    r->status = RT_ERR_UNSUPPORTED;
    snprintf(
        r->detail, sizeof r->detail, "%.255s",
        c->check_why && c->check_why[0] ? c->check_why : "the sim runs a template's source only");
    return RT_OK;
  }
  if (!d->sim->g) {
    r->status = RT_ERR_INTERNAL;
    snprintf(r->detail, sizeof r->detail, "the sim device has no problem set up");
    return RT_OK;
  }
  sim_check(d, c, r);
  return RT_OK;
}

const device_ops device_sim_ops = {
    .kind = {.prefix = "sim",
             .syntax = "sim | sim:GPU",
             .caps = DEVICE_CAP_SOURCE, /* GPU: as for model:GPU */
             .timing = TIMING_PREDICTED},
    .check = sim_check_arg,
    .gpu = sim_gpu_of,
    .open = sim_open,
    .close = sim_close,
    .begin = sim_begin,
    .evaluate = sim_evaluate,
};
