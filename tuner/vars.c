/* vars.c — the name → integer table. */
#include "vars.h"

#include <string.h>

void rt_vars_clear(rt_vars *v) { v->count = 0; }

int rt_vars_find(const rt_vars *v, const char *name) {
  for (int i = 0; i < v->count; i++)
    if (strcmp(v->names[i], name) == 0) return i;
  return -1;
}

rt_status rt_vars_set(rt_vars *v, const char *name, long long value) {
  int i = rt_vars_find(v, name);
  if (i >= 0) {
    v->values[i] = value;
    return RT_OK;
  }
  if (v->count >= RT_VARS_MAX || strlen(name) >= RT_VAR_NAME_MAX) return RT_ERR_INVALID;
  strcpy(v->names[v->count], name);
  v->values[v->count++] = value;
  return RT_OK;
}

int rt_vars_get(const rt_vars *v, const char *name, long long *value) {
  int i = rt_vars_find(v, name);
  if (i < 0) return 0;
  if (value) *value = v->values[i];
  return 1;
}

rt_status rt_vars_merge(rt_vars *dst, const rt_vars *src) {
  for (int i = 0; i < src->count; i++) {
    rt_status s = rt_vars_set(dst, src->names[i], src->values[i]);
    if (s) return s;
  }
  return RT_OK;
}
