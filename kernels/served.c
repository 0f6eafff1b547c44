/* served.c — the C families' serving halves in one table, from the one list of C families
 * (C_FAMILIES, generated from the kernels/NAME_serve.c files): what librooftune serves by name. */
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
