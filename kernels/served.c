/* served.c — the C families' serving halves in one table, from the one list of C families
 * (C_FAMILIES, generated from the kernels/NAME_serve.c files): what librooftune serves by name. */
#include <math.h>
#include <string.h>

#include "kernels/c_families.h"
#include "kernels/family.h"

#define SERVING_DECL(name) extern const family_ops name##_serving;
C_FAMILIES(SERVING_DECL)
#undef SERVING_DECL

static const family_ops *const serving[] = {
#define SERVING_ENTRY(name) &name##_serving,
    C_FAMILIES(SERVING_ENTRY)
#undef SERVING_ENTRY
};

const family_ops *family_serving_find(const char *name) {
  for (size_t i = 0; name && i < sizeof serving / sizeof serving[0]; i++)
    if (!strcmp(serving[i]->name, name)) return serving[i];
  return NULL;
}

const char *family_library_label(const char *library) {
  for (size_t i = 0; library && i < sizeof serving / sizeof serving[0]; i++)
    if (serving[i]->library && !strcmp(serving[i]->library, library) && serving[i]->library_label)
      return serving[i]->library_label;
  return library;
}

void family_coords_of(const family_ops *ops, const problem *p, family_coords *out) {
  memset(out, 0, sizeof *out);
  if (ops && ops->coords) {
    ops->coords(ops, p, out);
    return;
  }
  /* the batch, then the dimensions in order */
  out->x[out->n++] = family_ln_dim(p, "BATCH");
  for (int i = 0; i < p->ndims && out->n < FAMILY_COORDS_MAX; i++)
    if (strcmp(p->dim_names[i], "BATCH"))
      out->x[out->n++] = log((double)(p->dims[i] > 0 ? p->dims[i] : 1));
  out->kind = 10 + out->n;
}

double family_coords_distance(const family_coords *a, const family_coords *b) {
  if (a->kind != b->kind || a->n != b->n) return -1;
  double sum = 0;
  for (int i = 0; i < a->n; i++) sum += (a->x[i] - b->x[i]) * (a->x[i] - b->x[i]);
  return sqrt(sum);
}
