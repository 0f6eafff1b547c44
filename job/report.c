/* report.c — the report's data read from a database, drawn by report_page.c through the HTML
 * writer and written by fileio's rules (see report.h). */
#include "job/report.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/util.h"
#include "tuner/device/device.h"
#include "job/html.h"
#include "job/report_page.h"
#include "job/state.h"
#include "model/gpu_spec.h"
#include "model/roofline.h"
#include "tuner/recheck.h"

typedef report_cand cand;
typedef report_section section;

typedef struct rep {
  const report_options *o;
  section *sec;
  size_t nsec, seccap;
  cand *cand;
  size_t ncand, candcap;
  size_t *table; /* open addressing over cand, index + 1 */
  size_t tmask;
  size_t *stable; /* open addressing over sec by problem and device, index + 1 */
  size_t smask;
  size_t *jtable; /* open addressing over the job's problems, index + 1 (NULL: no job) */
  size_t jmask;
  int last; /* section of the previous row */
  int oom;
} rep;

/* FNV-1a of s after h, then a 0xff byte: the texts' separator. */
static uint64_t fnv(uint64_t h, const char *s) { return rt_fnv1a(rt_fnv1a(h, s), "\xff"); }

static uint64_t problem_hash(const char *family, const char *shape, const char *dtype,
                             const char *layout) {
  return fnv(fnv(fnv(fnv(RT_FNV_START, family), shape), dtype), layout);
}

static uint64_t section_hash(const section *s) {
  return fnv(problem_hash(s->family, s->shape, s->dtype, s->layout), s->device.name);
}

/* An open-addressing table of n entries (index + 1), sized for a load of at most 1/2, filled by
 * hash(i); NULL on no memory. */
static size_t *table_build(size_t n, uint64_t (*hash)(const rep *, size_t), const rep *R,
                           size_t *mask) {
  size_t size = 1024;
  while (size < 2 * n + 2) size *= 2;
  size_t *t = calloc(size, sizeof *t);
  if (!t) return NULL;
  for (size_t i = 0; i < n; i++) {
    size_t slot = (size_t)hash(R, i) & (size - 1);
    while (t[slot]) slot = (slot + 1) & (size - 1);
    t[slot] = i + 1;
  }
  *mask = size - 1;
  return t;
}

static uint64_t sec_hash_at(const rep *R, size_t i) { return section_hash(&R->sec[i]); }
static uint64_t job_hash_at(const rep *R, size_t i) {
  const job_problem *q = &R->o->job->problems[i];
  return problem_hash(q->family, q->key_shape, q->dtype, q->layout);
}

/* 1 when problem p is one of the job's (always when there is no job). */
static int in_job(rep *R, const problem *p) {
  if (!R->o->job) return 1;
  if (!R->jtable && !(R->jtable = table_build(R->o->job->nproblems, job_hash_at, R, &R->jmask))) {
    R->oom = 1;
    return 0;
  }
  for (size_t slot = (size_t)problem_hash(p->family, p->shape, p->dtype, p->layout) & R->jmask;
       R->jtable[slot]; slot = (slot + 1) & R->jmask) {
    const job_problem *q = &R->o->job->problems[R->jtable[slot] - 1];
    if (!strcmp(q->family, p->family) && !strcmp(q->key_shape, p->shape) &&
        !strcmp(q->dtype, p->dtype) && !strcmp(q->layout, p->layout))
      return 1;
  }
  return 0;
}

static int same_section(const section *s, const problem *p, const char *dev) {
  return !strcmp(s->shape, p->shape) && !strcmp(s->device.name, dev) &&
         !strcmp(s->family, p->family) && !strcmp(s->dtype, p->dtype) &&
         !strcmp(s->layout, p->layout);
}

static int section_of(rep *R, const db_run_spec *spec) {
  const problem *p = &spec->prob;
  const char *dev = spec->prov.device.name;
  int found = -1;
  if (R->last >= 0 && same_section(&R->sec[R->last], p, dev))
    found = R->last; /* rows come grouped */
  uint64_t h = fnv(problem_hash(p->family, p->shape, p->dtype, p->layout), dev);
  for (size_t slot = R->stable ? (size_t)h & R->smask : 0;
       found < 0 && R->stable && R->stable[slot]; slot = (slot + 1) & R->smask)
    if (same_section(&R->sec[R->stable[slot] - 1], p, dev)) found = (int)R->stable[slot] - 1;
  if (found >= 0) {
    R->sec[found].device = spec->prov.device; /* the latest identity (driver) seen */
    return R->last = found;
  }
  if (!in_job(R, p)) return -1; /* only the job's problems */
  if (R->nsec == R->seccap) {
    size_t cap = R->seccap ? 2 * R->seccap : 32;
    section *g = realloc(R->sec, cap * sizeof *g);
    if (!g) {
      R->oom = 1;
      return -1;
    }
    R->sec = g;
    R->seccap = cap;
  }
  section *s = &R->sec[R->nsec];
  memset(s, 0, sizeof *s);
  snprintf(s->family, sizeof s->family, "%s", p->family);
  snprintf(s->shape, sizeof s->shape, "%s", p->shape);
  snprintf(s->dtype, sizeof s->dtype, "%s", p->dtype);
  snprintf(s->layout, sizeof s->layout, "%s", p->layout);
  s->device = spec->prov.device;
  R->nsec++;
  if (2 * R->nsec + 2 > (R->stable ? R->smask + 1 : 0)) { /* grow: rebuild over every section */
    free(R->stable);
    if (!(R->stable = table_build(R->nsec, sec_hash_at, R, &R->smask))) {
      R->oom = 1;
      return -1;
    }
  } else {
    size_t slot = (size_t)section_hash(s) & R->smask;
    while (R->stable[slot]) slot = (slot + 1) & R->smask;
    R->stable[slot] = R->nsec;
  }
  return R->last = (int)R->nsec - 1;
}

static rt_status grow_table(rep *R) {
  size_t size = R->tmask ? 2 * (R->tmask + 1) : 1024;
  size_t *t = calloc(size, sizeof *t);
  if (!t) return RT_ERR_NOMEM;
  for (size_t i = 0; i < R->ncand; i++) {
    size_t slot = (size_t)R->cand[i].hash & (size - 1);
    while (t[slot]) slot = (slot + 1) & (size - 1);
    t[slot] = i + 1;
  }
  free(R->table);
  R->table = t;
  R->tmask = size - 1;
  return RT_OK;
}

static char *sdup(const char *s) { return strdup(s ? s : ""); }

/* What the table shows of result r beside its time: bandwidth, share of the roof, registers,
 * occupancy (measured where its counters were read) and whether its output was checked. */
static void cand_facts(cand *c, const candidate_result *r) {
  const hw_counters *k = &r->counters;
  double bytes = k->measured && k->dram_read_bytes + k->dram_write_bytes > 0
                     ? k->dram_read_bytes + k->dram_write_bytes
                     : r->dram_bytes;
  c->counters = k->measured;
  c->bytes_per_s = bytes > 0 && c->ms > 0 ? bytes / (c->ms * 1e-3) : NAN;
  double f = fmax(r->diag.flops_frac, r->diag.bw_frac);
  c->roof_frac = r->status == RT_OK && f > 0 ? f : NAN;
  c->registers = r->facts.registers;
  double occ = k->measured && k->occupancy > 0 ? k->occupancy : r->facts.occupancy;
  c->occupancy = occ > 0 ? occ : NAN;
  c->verified = r->verified;
}

static rt_status on_result(void *ctx, const db_run_spec *spec, const char *template_name,
                           const char *src, const char *man, const candidate_result *r,
                           rt_error *err) {
  rep *R = ctx;
  int si = section_of(R, spec);
  if (R->oom) return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading results");
  if (si < 0) return RT_OK;
  uint64_t h = fnv(fnv(fnv(fnv(RT_FNV_START, template_name), r->config), spec->prov.toolkit), "") ^
               (uint64_t)si * 0x9e3779b97f4a7c15ULL;
  if (2 * (R->ncand + 1) > R->tmask + 1 && grow_table(R))
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  size_t slot = (size_t)h & R->tmask;
  cand *c = NULL;
  while (R->table[slot]) {
    cand *x = &R->cand[R->table[slot] - 1];
    if (x->hash == h && x->section == si && !strcmp(x->tmpl, template_name) &&
        !strcmp(x->config, r->config) && !strcmp(x->toolkit, spec->prov.toolkit)) {
      c = x;
      break;
    }
    slot = (slot + 1) & R->tmask;
  }
  if (!c) {
    if (R->ncand == R->candcap) {
      size_t cap = R->candcap ? 2 * R->candcap : 1024;
      cand *g = realloc(R->cand, cap * sizeof *g);
      if (!g) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
      R->cand = g;
      R->candcap = cap;
    }
    c = &R->cand[R->ncand];
    memset(c, 0, sizeof *c);
    c->section = si;
    c->hash = h;
    c->tmpl = sdup(template_name);
    c->config = sdup(r->config);
    c->toolkit = sdup(spec->prov.toolkit);
    c->seen = R->ncand;
    R->table[slot] = ++R->ncand;
  } else { /* a later result of the same candidate (a re-measurement, a recheck) */
    free(c->limit);
    free(c->lever);
  }
  c->limit = sdup(r->diag.limit);
  c->lever = sdup(r->diag.lever);
  if (!c->tmpl || !c->config || !c->toolkit || !c->limit || !c->lever)
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  snprintf(c->status, sizeof c->status, "%s", rt_status_name(r->status));
  c->timing = r->timing;
  snprintf(c->checked_on, sizeof c->checked_on, "%s", r->checked_on);
  c->path = compute_path_parse(r->path);
  c->ms = r->status == RT_OK ? r->time_ms : NAN;
  c->intensity = r->diag.intensity > 0 ? r->diag.intensity
                 : r->dram_bytes > 0   ? r->flops / r->dram_bytes
                                       : NAN;
  c->achieved = r->diag.achieved_flops > 0  ? r->diag.achieved_flops
                : r->flops > 0 && c->ms > 0 ? r->flops / (c->ms * 1e-3)
                                            : NAN;
  cand_facts(c, r);
  return RT_OK;
}

static const gpu_spec *spec_for(const db_device *d) {
  const gpu_spec *g = device_kind_gpu(d->name); /* model:GPU names its GPU */
  if (g) return g;
  g = gpu_spec_match(d->name, d->cc_major * 10 + d->cc_minor);
  if (g) return g;
  size_t n = 0;
  const gpu_spec *all = gpu_spec_all(&n);
  for (size_t i = 0; i < n; i++) { /* "NVIDIA H200" is the table's "h200" */
    char key[16];
    snprintf(key, sizeof key, "%s", all[i].key);
    for (char *c = key; *c; c++) *c = (char)toupper((unsigned char)*c);
    if (strstr(d->name, key)) return &all[i];
  }
  return NULL;
}

/* Section s's roofs: the spec table's peak of every path, the measured copy bandwidth and
 * library matmul rate where the device has them; which paths are drawn is the candidates'
 * (section_paths). */
static void section_roofs(db *d, const section *s, report_roofs *r) {
  memset(r, 0, sizeof *r);
  const gpu_spec *g = spec_for(&s->device);
  roofline_ceilings c;
  roofline_from_spec(g, &c);
  snprintf(r->gpu, sizeof r->gpu, "%s", g ? g->name : s->device.name);
  r->bw = c.bw;
  for (int p = 0; p < PATH_COUNT; p++) r->path[p].peak = c.flops[p];
  double v = 0;
  int found = 0;
  if (db_ceiling_get(d, &s->device, "copy_bw", "", &v, NULL, 0, &found, NULL) == RT_OK && found &&
      v > 0) {
    r->bw = v;
    r->bw_measured = 1;
    c.measured = 1;
  }
  roofline_bw_basis(&c, g, r->bw_basis, sizeof r->bw_basis);
  found = 0;
  if (db_ceiling_get(d, &s->device, "matmul", s->dtype, &v, NULL, 0, &found, NULL) == RT_OK &&
      found && v > 0) {
    /* the library matmul's rate: the dtype's tensor path (tf32 for f32) */
    compute_path p = roofline_path_for_dtype(s->dtype, 1);
    r->path[p].peak = v;
    r->path[p].measured = 1;
  }
}

/* Marks the roofs the plotted candidates of each section ran on; a section none of whose
 * candidates says (rows stored before schema 7) gets its dtype's path: the tensor cores for
 * f16/bf16/fp8, the CUDA cores for f32. */
static void section_paths(rep *R) {
  for (size_t i = 0; i < R->ncand; i++) {
    const cand *c = &R->cand[i];
    if (report_plottable(c) && c->path >= 0 && c->path < PATH_COUNT)
      R->sec[c->section].roofs.path[c->path].present = 1;
  }
  for (size_t i = 0; i < R->nsec; i++) {
    report_roofs *r = &R->sec[i].roofs;
    int any = 0;
    for (int p = 0; p < PATH_COUNT; p++) any |= r->path[p].present;
    if (!any)
      r->path[roofline_path_for_dtype(R->sec[i].dtype, strcmp(R->sec[i].dtype, "f32") != 0)]
          .present = 1;
  }
}

static int cmp_time(const void *a, const void *b) {
  const cand *x = *(const cand *const *)a, *y = *(const cand *const *)b;
  int fx = !(x->ms > 0), fy = !(y->ms > 0);
  if (fx != fy) return fx - fy;
  if (fx) return 0;
  return (x->ms > y->ms) - (x->ms < y->ms);
}

/* The problem and device of a winner or a run, for sorting them into sections. */
typedef struct skey {
  const char *family, *shape, *dtype, *layout, *device;
} skey;

static int skey_cmp(skey a, skey b) {
  int c = strcmp(a.shape, b.shape);
  if (!c) c = strcmp(a.family, b.family);
  if (!c) c = strcmp(a.dtype, b.dtype);
  if (!c) c = strcmp(a.layout, b.layout);
  if (!c) c = strcmp(a.device, b.device);
  return c;
}

static skey entry_key(const db_entry *e) {
  return (skey){e->family, e->shape, e->dtype, e->layout, e->device.name};
}
static skey run_key(const db_run_info *r) {
  return (skey){r->family, r->shape, r->dtype, r->layout, r->device.name};
}
static skey section_key(const section *s) {
  return (skey){s->family, s->shape, s->dtype, s->layout, s->device.name};
}

static int cmp_entry(const void *a, const void *b) {
  const db_entry *x = a, *y = b;
  int c = skey_cmp(entry_key(x), entry_key(y));
  return c ? c : (x->winner_id > y->winner_id) - (x->winner_id < y->winner_id);
}

static int cmp_run(const void *a, const void *b, void *ctx) {
  const db_run_info *runs = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int c = skey_cmp(run_key(&runs[x]), run_key(&runs[y]));
  return c ? c : (x > y) - (x < y); /* within a section, the order of db_runs: oldest first */
}

/* Sorts winners and runs by problem and device, so each section's are one slice found by binary
 * search (a report of 100,000 problems is not 10^10 comparisons); *runs is replaced by a sorted
 * copy.  RT_ERR_NOMEM. */
static rt_status sort_by_section(db_entry *w, size_t nw, db_run_info **runs, size_t nruns) {
  qsort(w, nw, sizeof *w, cmp_entry);
  size_t *ix = malloc((nruns ? nruns : 1) * sizeof *ix);
  db_run_info *sorted = malloc((nruns ? nruns : 1) * sizeof *sorted);
  if (!ix || !sorted) {
    free(ix);
    free(sorted);
    return RT_ERR_NOMEM;
  }
  for (size_t i = 0; i < nruns; i++) ix[i] = i;
  qsort_r(ix, nruns, sizeof *ix, cmp_run, *runs);
  for (size_t i = 0; i < nruns; i++) sorted[i] = (*runs)[ix[i]];
  free(ix);
  free(*runs);
  *runs = sorted;
  return RT_OK;
}

/* The slice [*lo, *hi) of the n items (of size `size`, keys by key()) of section s. */
static void slice_of(const section *s, const void *base, size_t n, size_t size,
                     skey (*key)(const void *), size_t *lo, size_t *hi) {
  skey k = section_key(s);
  size_t a = 0, b = n;
  while (a < b) {
    size_t m = a + (b - a) / 2;
    if (skey_cmp(key((const char *)base + m * size), k) < 0)
      a = m + 1;
    else
      b = m;
  }
  *lo = a;
  for (b = a; b < n && !skey_cmp(key((const char *)base + b * size), k); b++) {}
  *hi = b;
}

static skey entry_key_v(const void *p) { return entry_key(p); }
static skey run_key_v(const void *p) { return run_key(p); }

/* Each section's winner (the fastest current one), its latest recheck, its runs and last run,
 * its roofs and its counts; returns how many regressed.  w and runs sorted by sort_by_section. */
static size_t fill_sections(db *d, rep *R, const db_entry *w, size_t nw, const db_run_info *runs,
                            size_t nruns, double tol) {
  size_t regressions = 0;
  for (size_t i = 0; i < R->nsec; i++) {
    section *s = &R->sec[i];
    size_t wlo, whi, rlo, rhi;
    slice_of(s, w, nw, sizeof *w, entry_key_v, &wlo, &whi);
    slice_of(s, runs, nruns, sizeof *runs, run_key_v, &rlo, &rhi);
    s->runs = runs + rlo;
    s->nruns = rhi - rlo;
    if (s->nruns) snprintf(s->last_run, sizeof s->last_run, "%s", s->runs[s->nruns - 1].started_at);
    for (size_t k = wlo; k < whi; k++) {
      const db_entry *e = &w[k];
      if (e->template_stale) continue;
      if (!s->have_winner || e->time_ms < s->winner.time_ms) {
        s->winner = *e;
        s->have_winner = 1;
      }
      recheck_verdict v; /* any current winner regressed */
      const db_run_info *r = job_last_recheck(e, s->runs, s->nruns, tol, &v);
      if (!r) continue;
      if (recheck_is_regression(v) || !s->have_verdict) {
        s->verdict = v;
        s->have_verdict = 1;
        s->recheck_ms = r->last_ms;
      }
      if (recheck_is_regression(v)) s->regression = 1;
    }
    regressions += (size_t)s->regression;
    section_roofs(d, s, &s->roofs);
  }
  for (size_t i = 0; i < R->ncand; i++) {
    section *s = &R->sec[R->cand[i].section];
    s->ncand++;
    if (report_plottable(&R->cand[i]))
      s->npoints++;
    else if (strcmp(R->cand[i].status, "OK"))
      s->nfailed++;
  }
  section_paths(R);
  return regressions;
}

/* The candidates grouped by section (a counting sort), each group by time: *order and *start
 * (section i's are order[start[i] .. start[i+1])), malloc'ed. */
static rt_status order_candidates(const rep *R, const cand ***order, size_t **start) {
  *order = malloc((R->ncand ? R->ncand : 1) * sizeof **order);
  *start = calloc(R->nsec + 1, sizeof **start);
  size_t *fill = calloc(R->nsec ? R->nsec : 1, sizeof *fill);
  if (!*order || !*start || !fill) {
    free(fill);
    return RT_ERR_NOMEM;
  }
  for (size_t i = 0; i < R->ncand; i++) (*start)[R->cand[i].section + 1]++;
  for (size_t i = 0; i < R->nsec; i++) (*start)[i + 1] += (*start)[i];
  for (size_t i = 0; i < R->ncand; i++) {
    int s = R->cand[i].section;
    (*order)[(*start)[s] + fill[s]++] = &R->cand[i];
  }
  free(fill);
  for (size_t i = 0; i < R->nsec; i++)
    qsort(*order + (*start)[i], (*start)[i + 1] - (*start)[i], sizeof **order, cmp_time);
  return RT_OK;
}

/* Draws the page onto path by fileio's rules (a file renamed into place, a device in place). */
static rt_status write_page(const report_page *p, const char *path, report_stats *st,
                            rt_error *err) {
  fileio_out out;
  rt_status rc = fileio_out_open(&out, path, err);
  if (rc) return rc;
  html *h = html_new(out.f);
  if (!h) {
    fileio_out_abort(&out);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  }
  report_page_write(p, h, st);
  rc = html_finish(h, err);
  st->bytes = (long)html_bytes(h);
  html_free(h);
  if (rc) {
    rt_error_locate(err, path, NULL, 0, 0);
    fileio_out_abort(&out);
    return rc;
  }
  return fileio_out_commit(&out, err);
}

rt_status report_write(db *d, const report_options *o, const char *path, report_stats *st,
                       rt_error *err) {
  report_stats local;
  if (!st) st = &local;
  memset(st, 0, sizeof *st);
  rep R;
  memset(&R, 0, sizeof R);
  R.o = o;
  R.last = -1;
  db_entry *w = NULL;
  db_run_info *runs = NULL;
  size_t nw = 0, nruns = 0, *start = NULL;
  const cand **order = NULL;
  double tol = o->tolerance > 0 ? o->tolerance : o->job ? o->job->tolerance : 0.05;
  rt_status rc = db_each_result(d, on_result, &R, err);
  if (!rc) rc = db_entries(d, 0, &w, &nw, err);
  if (!rc) rc = db_runs(d, &runs, &nruns, err);
  if (rc) goto done;
  if (sort_by_section(w, nw, &runs, nruns)) {
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  st->regressions = fill_sections(d, &R, w, nw, runs, nruns, tol);
  if (order_candidates(&R, &order, &start)) {
    rc = rt_error_set(err, RT_ERR_NOMEM, "out of memory");
    goto done;
  }
  char now[32];
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", &tm);
  report_page page = {.title = o->title ? o->title
                               : o->job ? o->job->name
                                        : "rooftune report",
                      .source = db_path(d),
                      .generated = now,
                      .sec = R.sec,
                      .nsec = R.nsec,
                      .order = order,
                      .start = start,
                      .ncand = R.ncand,
                      .tol = tol,
                      .top = o->top > 0 ? o->top : INT_MAX, /* every candidate */
                      .regressions = st->regressions};
  st->sections = R.nsec;
  rc = write_page(&page, path, st, err);
done:
  for (size_t i = 0; i < R.ncand; i++) {
    free(R.cand[i].tmpl);
    free(R.cand[i].config);
    free(R.cand[i].toolkit);
    free(R.cand[i].limit);
    free(R.cand[i].lever);
  }
  free(R.cand);
  free(R.table);
  free(R.stable);
  free(R.jtable);
  free(R.sec);
  free(order);
  free(start);
  free(w);
  free(runs);
  return rc;
}
