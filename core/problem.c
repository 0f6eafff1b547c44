/* problem.c — named dimensions of a problem. */
#include "core/problem.h"

#include <string.h>

long long problem_dim(const problem *p, const char *name) {
  for (int i = 0; i < p->ndims; i++)
    if (!strcmp(p->dim_names[i], name)) return p->dims[i];
  return 0;
}

int problem_add_dim(problem *p, const char *name, long long value) {
  size_t n = strlen(name);
  if (p->ndims >= PROBLEM_MAX_DIMS || n == 0 || n >= sizeof p->dim_names[0]) return -1;
  memcpy(p->dim_names[p->ndims], name, n + 1);
  p->dims[p->ndims++] = value;
  return 0;
}
