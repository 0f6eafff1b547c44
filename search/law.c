/* law.c — facts and counted work predicted by a log-linear law in the parameters (law_internal.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/bayes_internal.h"
#include "search/law_internal.h"

rt_status law_init(const strategy *st, fact_law *law, rt_error *err) {
  memset(law, 0, sizeof *law);
  int nz = 1;
  for (int p = 0; p < st->np; p++) {
    const space_param *sp = space_param_at(st->sp, p);
    if (sp->count > 1) nz += bo_is_mode(sp) ? sp->count - 1 : 1;
  }
  if (nz > LAW_MAX_TERMS) return RT_OK;
  law->z = malloc(st->n * (size_t)nz * sizeof *law->z);
  if (!law->z) return rt_error_set(err, RT_ERR_NOMEM, "out of memory for the facts' laws");
  law->nz = nz;
  for (size_t i = 0; i < st->n; i++) {
    const uint16_t *c = space_config(st->sp, i);
    double *z = law->z + i * (size_t)nz;
    int k = 0;
    z[k++] = 1;
    for (int p = 0; p < st->np; p++) {
      const space_param *sp = space_param_at(st->sp, p);
      if (sp->count < 2) continue;
      if (bo_is_mode(sp)) {
        for (int v = 1; v < sp->count; v++) z[k++] = c[p] == v;
        continue;
      }
      int positive = sp->ints != NULL;
      for (int v = 0; positive && v < sp->count; v++) positive = sp->ints[v] > 0;
      z[k++] = positive ? log2((double)sp->ints[c[p]]) : (double)c[p] / (sp->count - 1);
    }
  }
  return RT_OK;
}

void law_free(fact_law *law) {
  free(law->z);
  law->z = NULL;
  law->nz = 0;
}

/* Cholesky of the nz x nz matrix a in place (lower); 0 when it is not positive definite. */
static int law_cholesky(double *a, int nz) {
  for (int j = 0; j < nz; j++) {
    double d = a[j * nz + j];
    for (int k = 0; k < j; k++) d -= a[j * nz + k] * a[j * nz + k];
    if (!(d > 1e-12)) return 0;
    a[j * nz + j] = sqrt(d);
    for (int i = j + 1; i < nz; i++) {
      double s = a[i * nz + j];
      for (int k = 0; k < j; k++) s -= a[i * nz + k] * a[j * nz + k];
      a[i * nz + j] = s / a[j * nz + j];
    }
  }
  return 1;
}

/* Solves (L L^T) x = b in place for the factor in a. */
static void law_solve(const double *a, int nz, double *b) {
  for (int i = 0; i < nz; i++) {
    double s = b[i];
    for (int k = 0; k < i; k++) s -= a[i * nz + k] * b[k];
    b[i] = s / a[i * nz + i];
  }
  for (int i = nz - 1; i >= 0; i--) {
    double s = b[i];
    for (int k = i + 1; k < nz; k++) s -= a[k * nz + i] * b[k];
    b[i] = s / a[i * nz + i];
  }
}

double law_fit(const fact_law *law, const size_t *obs, const double *y, size_t m, double *beta) {
  int nz = law->nz;
  if (nz == 0) return -INFINITY;
  double a[LAW_MAX_TERMS * LAW_MAX_TERMS] = {0}, h[LAW_MAX_TERMS];
  size_t known = 0;
  double sy = 0, syy = 0;
  for (int k = 0; k < nz; k++) beta[k] = 0;
  for (size_t i = 0; i < m; i++) {
    if (!isfinite(y[i])) continue;
    const double *z = law->z + obs[i] * (size_t)nz;
    for (int r = 0; r < nz; r++) {
      for (int c = 0; c <= r; c++) a[r * nz + c] += z[r] * z[c];
      beta[r] += z[r] * y[i];
    }
    known++, sy += y[i], syy += y[i] * y[i];
  }
  double ss = syy - sy * sy / (double)(known ? known : 1);
  if (known < (size_t)nz + 2 || !(ss > 1e-12 * (1 + syy))) return -INFINITY;
  /* a ridge a millionth of each term's own weight: a term no result moves (a value never
   * tried) gets no weight instead of an unsolvable system */
  for (int r = 0; r < nz; r++) a[r * nz + r] += 1e-6 * (1 + a[r * nz + r]);
  if (!law_cholesky(a, nz)) return -INFINITY;
  law_solve(a, nz, beta);
  double press = 0;
  for (size_t i = 0; i < m; i++) {
    if (!isfinite(y[i])) continue;
    const double *z = law->z + obs[i] * (size_t)nz;
    memcpy(h, z, (size_t)nz * sizeof *h);
    law_solve(a, nz, h);
    double hii = 0, fit = 0;
    for (int k = 0; k < nz; k++) hii += z[k] * h[k], fit += z[k] * beta[k];
    if (!(hii < 1 - 1e-9)) return -INFINITY; /* a result that alone sets a term */
    double e = (y[i] - fit) / (1 - hii);
    press += e * e;
  }
  return 1 - press / ss;
}

double law_predict(const fact_law *law, size_t idx, const double *beta) {
  const double *z = law->z + idx * (size_t)law->nz;
  double v = 0;
  for (int k = 0; k < law->nz; k++) v += z[k] * beta[k];
  return v;
}
