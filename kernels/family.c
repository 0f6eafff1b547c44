/* family.c — the registry of kernel families. */
#include "kernels/family.h"

#include <string.h>

#include "kernels/gemm.h"

static const family_ops *const family_table[] = {&gemm_family};

const family_ops *family_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof family_table / sizeof family_table[0]; i++)
    if (!strcmp(family_table[i]->name, name)) return family_table[i];
  return NULL;
}

const char *family_names(void) { return "gemm"; }
