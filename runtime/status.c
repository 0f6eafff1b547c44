/* status.c — the public status codes (rooftune.h's ROOFTUNE_STATUS_TABLE): their meanings and
 * names, the mapping from the engine's codes (core/status.h), the calling thread's last
 * error, the version and the struct sizes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"
#include "core/version.h"

static _Thread_local char last_error[1024];

const char *rooftune_last_error(void) { return last_error; }
const char *rooftune_version(void) { return ROOFTUNE_VERSION; }

int rooftune_version_number(void) {
  int major = 0, minor = 0, patch = 0;
  sscanf(ROOFTUNE_VERSION, "%d.%d.%d", &major, &minor, &patch);
  return major * 10000 + minor * 100 + patch;
}

const char *rooftune_strerror(int code) {
  switch (code) {
#define MEANING(name, number, meaning) \
  case ROOFTUNE_##name: return meaning;
    ROOFTUNE_STATUS_TABLE(MEANING)
#undef MEANING
    default: return "unknown status code";
  }
}

const char *rooftune_status_name(int code) {
  switch (code) {
#define NAME(name, number, meaning) \
  case ROOFTUNE_##name: return #name;
    ROOFTUNE_STATUS_TABLE(NAME)
#undef NAME
    default: return "UNKNOWN";
  }
}

/* Every public code has an engine code of the same name (RT_<NAME>: this does not compile
 * otherwise), which maps to it; of the engine's other codes, the ones about the caller's input
 * are ERR_INVALID and the tuner's own (compiling, verifying, budgets) never reach the runtime
 * and are ERR_INTERNAL. */
int rt_public_code(rt_status s) {
  switch (s) {
#define SAME(name, number, meaning) \
  case RT_##name: return ROOFTUNE_##name;
    ROOFTUNE_STATUS_TABLE(SAME)
#undef SAME
    case RT_ERR_USAGE:
    case RT_ERR_PARSE: return ROOFTUNE_ERR_INVALID;
    default: return ROOFTUNE_ERR_INTERNAL;
  }
}

int rt_fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return code;
}

/* The structs end in reserved room that later fields come out of: their sizes are those of
 * 0.2 for good (on LP64, where they were first published). */
#if __SIZEOF_POINTER__ == 8 && __SIZEOF_LONG_LONG__ == 8
_Static_assert(sizeof(rooftune_query) == 128, "rooftune_query changed size");
_Static_assert(sizeof(rooftune_match) == 6632, "rooftune_match changed size");
_Static_assert(sizeof(rooftune_info) == 2456, "rooftune_info changed size");
#endif

int rt_fail_err(const rt_error *err) {
  rt_error_format(err, last_error, sizeof last_error);
  return rt_public_code(err->code);
}

size_t rooftune_struct_size(const char *name) {
  static const struct {
    const char *name;
    size_t size;
  } sizes[] = {
      {"rooftune_query", sizeof(rooftune_query)},
      {"rooftune_match", sizeof(rooftune_match)},
      {"rooftune_info", sizeof(rooftune_info)},
      {"rooftune_attention_problem", sizeof(rooftune_attention_problem)},
      {"rooftune_gemm_options", sizeof(rooftune_gemm_options)},
  };
  for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; i++)
    if (!strcmp(sizes[i].name, name)) return sizes[i].size;
  return 0;
}
