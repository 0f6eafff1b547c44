/* evidence.c — parameters' roles learned from the evaluations (evidence_internal.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "search/evidence_internal.h"
#include "model/features.h"

/* Which signal each limit moves, and which way helps: X(limit, signal, way). */
#define EVIDENCE_LIMITS(X)                                                       \
  X("compute", EV_FLOPS, +1)       /* under the compute roof: more of it used */ \
  X("memory", EV_INTENSITY, +1)    /* at the bandwidth: fewer bytes per FLOP */  \
  X("waves", EV_TAIL, -1)          /* an idle last wave: fill it */              \
  X("occupancy", EV_OCCUPANCY, +1) /* latency not hidden: more warps resident */ \
  X("spills", EV_LOCAL, -1)        /* local memory: fewer registers' worth spilled */

/* Result idx's signals into y (NaN where it has none). */
static void evidence_signals(const strategy *st, size_t idx, double y[EV_COUNT]) {
  for (int k = 0; k < EV_COUNT; k++) y[k] = NAN;
  const diagnosis *d = st->told;
  if (d && d->limit[0]) {
    y[EV_FLOPS] = d->flops_frac > 0 ? d->flops_frac : NAN;
    y[EV_INTENSITY] = d->intensity > 0 ? log(d->intensity) : NAN;
    y[EV_TAIL] = d->waves > 0 ? d->tail : NAN;
  }
  if (st->feat && st->nfeat == FEATURE_COUNT) {
    const double *f = st->feat + idx * (size_t)st->nfeat;
    y[EV_OCCUPANCY] = f[FEATURE_OCCUPANCY];
    y[EV_LOCAL] = f[FEATURE_LOCAL];
  }
}

void evidence_add(evidence *ev, const strategy *st, size_t idx) {
  if (st->np > EVIDENCE_PARAMS || !isfinite(st->time[idx])) return;
  double y[EV_COUNT];
  evidence_signals(st, idx, y);
  const uint16_t *c = space_config(st->sp, idx);
  for (int p = 0; p < st->np; p++) {
    int count = space_param_at(st->sp, p)->count;
    if (count < 2) continue;
    double x = (double)c[p] / (count - 1);
    for (int k = 0; k < EV_COUNT; k++) {
      if (!isfinite(y[k])) continue;
      ev->n[p][k]++;
      ev->sx[p][k] += x, ev->sy[p][k] += y[k];
      ev->sxx[p][k] += x * x, ev->syy[p][k] += y[k] * y[k], ev->sxy[p][k] += x * y[k];
    }
  }
  if (st->best == (long)idx)
    snprintf(ev->best_limit, sizeof ev->best_limit, "%s", st->told ? st->told->limit : "");
}

/* The correlation of parameter p's position with signal k over the results; 0 when too few. */
static double evidence_corr(const evidence *ev, int p, int k) {
  double n = ev->n[p][k];
  if (n < EVIDENCE_MIN_RESULTS) return 0;
  double vx = ev->sxx[p][k] - ev->sx[p][k] * ev->sx[p][k] / n;
  double vy = ev->syy[p][k] - ev->sy[p][k] * ev->sy[p][k] / n;
  double cxy = ev->sxy[p][k] - ev->sx[p][k] * ev->sy[p][k] / n;
  return vx > 1e-12 && vy > 1e-12 ? cxy / sqrt(vx * vy) : 0;
}

void evidence_lever(const evidence *ev, const strategy *st, char *out, size_t size) {
  out[0] = '\0';
  int sig = -1, way = 0;
#define EVIDENCE_MATCH(limit, signal, dir) \
  if (sig < 0 && strcmp(ev->best_limit, limit) == 0) sig = signal, way = dir;
  EVIDENCE_LIMITS(EVIDENCE_MATCH)
#undef EVIDENCE_MATCH
  if (sig < 0 || st->np > EVIDENCE_PARAMS) return;
  int chosen[EVIDENCE_LEVER_ITEMS] = {0};
  double r[EVIDENCE_LEVER_ITEMS] = {0};
  int nc = 0;
  for (int p = 0; p < st->np; p++) { /* the clearest few, strongest first */
    double c = evidence_corr(ev, p, sig);
    if (fabs(c) < EVIDENCE_MIN_CORR) continue;
    int at = nc < EVIDENCE_LEVER_ITEMS ? nc++ : EVIDENCE_LEVER_ITEMS;
    if (at == EVIDENCE_LEVER_ITEMS && fabs(c) <= fabs(r[at - 1])) continue;
    if (at == EVIDENCE_LEVER_ITEMS) at--;
    while (at > 0 && fabs(r[at - 1]) < fabs(c))
      chosen[at] = chosen[at - 1], r[at] = r[at - 1], at--;
    chosen[at] = p, r[at] = c;
  }
  size_t len = 0;
  for (int i = 0; i < nc && len < size; i++)
    len += (size_t)snprintf(out + len, size - len, "%s%s%c", i ? "," : "",
                            space_param_at(st->sp, chosen[i])->name, r[i] * way > 0 ? '+' : '-');
}
