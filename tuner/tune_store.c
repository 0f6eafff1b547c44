/* tune_store.c — where the loop meets the database (tune_impl.h), in one place: the run and its
 * provenance, what a search resumes and the claims that let two tuners of one problem share it,
 * each result as it arrives and again once its counters or verdict are known, the winners,
 * measured ceilings and DRAM calibrations.  Without a database (--no-db) each is a no-op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db.h"
#include "core/sha256.h"
#include "template/recipe.h"
#include "tuner/tune_impl.h"

/* ---- the run ---- */

/* The database's record of a device: its identity (db_device_pseudo for model and replay). */
static void tune_db_device(const device *d, db_device *out) {
  device_identity id;
  device_get_identity(d, &id);
  memset(out, 0, sizeof *out);
  if (id.pseudo) {
    db_device_pseudo(out, id.name);
    return;
  }
  snprintf(out->name, sizeof out->name, "%s", id.name);
  out->sm_count = id.sm_count;
  out->cc_major = id.cc_major;
  out->cc_minor = id.cc_minor;
  out->driver_version = id.driver_version;
}

rt_status tune_store_open(tune_ctx *c, rt_error *err) {
  const tune_options *o = c->o;
  if (!o->db_path) return RT_OK;
  rt_status rc = db_open(o->db_path, DB_CREATE, &c->db, err);
  if (rc) return rc;
  db_run_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.prob = c->prob;
  tune_db_device(c->dev, &spec.prov.device);
  db_toolkit_string(spec.prov.toolkit, sizeof spec.prov.toolkit, NULL);
  snprintf(spec.prov.arch, sizeof spec.prov.arch, "%s",
           device_arch(c->dev) ? device_arch(c->dev) : "");
  snprintf(spec.strategy, sizeof spec.strategy, "%s",
           o->strategy ? o->strategy : strategy_default());
  spec.seed = o->seed;
  spec.budget = c->rep->budget;
  snprintf(spec.command, sizeof spec.command, "%s", o->command ? o->command : "");
  rc = db_run_begin(c->db, &spec, &c->run, err);
  if (!rc) c->rep->run_id = db_run_id(c->run);
  return rc;
}

rt_status tune_store_close(tune_ctx *c, rt_status rc, rt_error *err) {
  if (!rc && c->run) rc = db_run_finish(c->run, c->rep->interrupted ? "interrupted" : "done", err);
  if (rc && c->run) db_run_finish(c->run, "failed", NULL); /* an error never leaves it "running" */
  if (c->run) db_run_free(c->run);
  c->run = NULL;
  db_close(c->db);
  c->db = NULL;
  return rc;
}

/* ---- a search and its candidates ---- */

rt_status tune_store_search(tune_ctx *c, tune_search *s, const char *family, rt_error *err) {
  if (!c->run) return RT_OK;
  rt_status rc = db_run_template(c->run, s->name, family, s->src_hash, s->man_hash, err);
  /* resume: what the database holds is told, not recomputed */
  if (!rc && s->resumes) rc = db_run_previous(c->run, s->name, &s->prev, &s->nprev, err);
  return rc;
}

/* Claims candidate k for this run (db_run_claim): granted, it stays as it is; a result another
 * run stored makes it resumed; held by a live run, CAND_HELD. */
static rt_status claim(tune_ctx *c, const tune_search *s, tune_cand *k, rt_error *err) {
  int state = DB_CLAIM_GRANTED;
  candidate_result done;
  rt_status rc =
      db_run_claim(c->run, s->name, k->plan.config, k->code_hash, &state, &done, NULL, err);
  if (rc) return rc;
  if (state == DB_CLAIM_DONE) {
    k->r = done;
    snprintf(k->r.config, sizeof k->r.config, "%s", k->plan.config);
    k->state = CAND_RESUMED;
  } else if (state == DB_CLAIM_HELD) {
    k->state = CAND_HELD;
  } else if (k->state == CAND_HELD) { /* ours now */
    k->state = k->r.template_name[0] && k->r.status ? CAND_FAILED : CAND_NEW;
  }
  return RT_OK;
}

rt_status tune_store_resume(tune_ctx *c, tune_search *s, tune_cand *k, rt_error *err) {
  /* a stored result of the same code (any template version), or of this configuration before
   * results carried their code (and of a recorded file's), is told, not recomputed */
  const candidate_result *old = NULL;
  for (size_t i = 0; i < s->nprev && !old; i++)
    if (s->prev[i].code_hash[0] ? strcmp(s->prev[i].code_hash, k->code_hash) == 0
                                : strcmp(s->prev[i].config, k->plan.config) == 0)
      old = &s->prev[i];
  if (old) {
    k->r = *old;
    snprintf(k->r.config, sizeof k->r.config, "%s", k->plan.config); /* as this space spells it */
    k->r.verdict[0] = 0; /* this run's verdicts are this run's */
    k->state = CAND_RESUMED;
    free(k->source);
    k->source = NULL;
    free(k->check_source);
    k->check_source = NULL;
    return RT_OK;
  }
  /* another tuner of this problem may be evaluating it, or may have stored it since this run
   * began: claim it first */
  return c->run ? claim(c, s, k, err) : RT_OK;
}

rt_status tune_store_wait_held(tune_ctx *c, tune_search *s, tune_cand *k, size_t n, rt_error *err) {
  double t0 = rt_now_s();
  for (int round = 0;; round++) {
    if (rt_now_s() - t0 >
        DB_CLAIM_LEASE_S) { /* the holder lives but does not finish: evaluate here */
      for (size_t i = 0; i < n; i++)
        if (k[i].state == CAND_HELD)
          k[i].state = k[i].r.template_name[0] && k[i].r.status ? CAND_FAILED : CAND_NEW;
      tune_note(c->rep,
                "a candidate another tuner claimed was not done after %d s: evaluated here too",
                DB_CLAIM_LEASE_S);
      return RT_OK;
    }
    int held = 0, changed = 0;
    for (size_t i = 0; i < n; i++) {
      if (k[i].state != CAND_HELD) continue;
      rt_status rc = claim(c, s, &k[i], err);
      if (rc) return rc;
      if (k[i].state == CAND_HELD)
        held++;
      else
        changed++;
    }
    if (!held || changed || TUNE_STOPPED(c)) return RT_OK;
    rt_sleep_ms(round < 20 ? 20 : 100);
  }
}

rt_status tune_store_result(tune_ctx *c, const candidate_result *r, long long *id, rt_error *err) {
  *id = 0;
  if (!c->run) return RT_OK;
  return db_run_store(c->run, r, id, err);
}

void tune_store_update(tune_ctx *c, size_t at) {
  if (c->run && c->ids[at] > 0)
    db_run_update_result(c->run, c->ids[at], &c->rep->results[at], NULL);
}

rt_status tune_store_winner(tune_ctx *c, const tune_search *s, int w, rt_error *err) {
  const tune_kept *best = &s->top[w];
  if (!best->have || !c->run || best->id <= 0) return RT_OK;
  db_winner dw;
  memset(&dw, 0, sizeof dw);
  if (s->kind == TUNE_LIBRARY) { /* the algorithm's identity, for the runtime to ask for again */
    snprintf(dw.library_algo, sizeof dw.library_algo, "%s", best->cand.plan.config);
    return db_run_set_winner(c->run, best->id, &dw, NULL, err);
  }
  if (s->kind == TUNE_RECORDED) {
    snprintf(dw.vars, sizeof dw.vars, "%s", c->rep->best.config);
    return db_run_set_winner(c->run, best->id, &dw, NULL, err);
  }
  dw.cubin = best->cr.cubin;
  dw.cubin_size = best->cr.cubin_size;
  snprintf(dw.entry, sizeof dw.entry, "%.127s", best->cr.lowered_name);
  snprintf(dw.arch, sizeof dw.arch, "%.15s", s->arch);
  memcpy(dw.grid_v, best->cand.plan.grid, sizeof dw.grid_v);
  memcpy(dw.block_v, best->cand.plan.block, sizeof dw.block_v);
  dw.smem_v = best->cand.plan.smem;
  winner_recipe rec; /* what the runtime needs to serve it, also for another shape */
  rt_status rc = winner_recipe_make(s->m, &best->cand.plan.vars, &rec, err);
  if (!rc) {
    winner_recipe_apply(&rec, &dw);
    rc = db_run_set_winner(c->run, best->id, &dw, NULL, err);
    winner_recipe_free(&rec);
  }
  return rc;
}

/* ---- what the run measures about the GPU ---- */

double tune_store_calibration(tune_ctx *c, const char *name) {
  double calibration = 0;
  int found = 0;
  if (!c->db || !device_spec(c->dev)) return 0;
  db_calibration_get(c->db, device_spec(c->dev)->key, name, "dram_bytes", &calibration, NULL,
                     &found, NULL);
  return found ? calibration : 0;
}

void tune_store_set_calibration(tune_ctx *c, const char *name, double ratio, int n) {
  if (c->db)
    db_calibration_set(c->db, device_spec(c->dev)->key, name, "dram_bytes", ratio, n, NULL);
}

rt_status tune_ceilings(tune_ctx *c, rt_error *err) {
  if (!device_has(c->dev, DEVICE_CAP_MEASURES)) return RT_OK;
  db_device dev;
  tune_db_device(c->dev, &dev);
  double bw = 0, fl = 0;
  int fb = 0, ff = 0;
  if (c->db) {
    db_ceiling_get(c->db, &dev, "copy_bw", "", &bw, NULL, 0, &fb, NULL);
    db_ceiling_get(c->db, &dev, "matmul", c->prob.dtype, &fl, NULL, 0, &ff, NULL);
  }
  roofline_ceilings m;
  if (fb && ff) {
    device_ceilings(c->dev, &m);
    m.bw = bw;
    m.l2_bw = ROOFLINE_L2_BW_FACTOR * bw;
    m.flops[roofline_path_for_dtype(c->prob.dtype, 0)] = fl;
    m.measured = 1;
    m.sm_count = device_sm_count(c->dev);
    snprintf(m.gpu, sizeof m.gpu, "%.50s (measured)", device_label(c->dev));
    device_set_ceilings(c->dev, &m);
    return RT_OK;
  }
  rt_error merr = {0};
  if (device_measure_ceilings(c->dev, c->prob.dtype, &m, &merr) != RT_OK) {
    /* the spec table stays in use; the run goes on */
    tune_note(c->rep, "ceilings not measured (%.100s); the spec table is used", merr.text);
    return RT_OK;
  }
  device_set_ceilings(c->dev, &m);
  if (c->db) {
    db_ceiling_set(c->db, &dev, "copy_bw", "", m.bw, err);
    db_ceiling_set(c->db, &dev, "matmul", c->prob.dtype,
                   m.flops[roofline_path_for_dtype(c->prob.dtype, 0)], err);
  }
  return RT_OK;
}
