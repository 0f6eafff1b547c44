/* result.c — names of the timing kinds. */
#include "core/result.h"

#include <string.h>

static const char *const timing_names[] = {"measured", "predicted", "replayed"};

const char *timing_kind_name(timing_kind t) {
  return (t >= TIMING_MEASURED && t <= TIMING_REPLAYED) ? timing_names[t] : "unknown";
}

int timing_kind_parse(const char *name) {
  for (int i = 0; i < 3; i++)
    if (strcmp(name, timing_names[i]) == 0) return i;
  return -1;
}
