/* vars.c — the name → integer table. */
#include "core/vars.h"

#include <errno.h>
#include <stdlib.h>
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

rt_status rt_vars_parse(rt_vars *v, const char *text, rt_error *err) {
  for (const char *s = text; s && *s;) {
    size_t len = strcspn(s, ",");
    const char *eq = memchr(s, '=', len);
    if (!eq || eq == s || (size_t)(eq - s) >= RT_VAR_NAME_MAX)
      return rt_error_set(err, RT_ERR_INVALID, "vars entry '%.*s' is not NAME=VALUE", (int)len, s);
    char name[RT_VAR_NAME_MAX], num[32];
    size_t nlen = (size_t)(eq - s), vlen = len - nlen - 1;
    memcpy(name, s, nlen);
    name[nlen] = 0;
    if (vlen > 0 && vlen < sizeof num) {
      memcpy(num, eq + 1, vlen);
      num[vlen] = 0;
      char *end = NULL;
      errno = 0;
      long long x = strtoll(num, &end, 10);
      if (!*end && !errno && rt_vars_set(v, name, x))
        return rt_error_set(err, RT_ERR_INVALID, "too many vars (at '%s'): at most %d", name,
                            RT_VARS_MAX);
    }
    s += len;
    if (*s == ',') s++;
  }
  return RT_OK;
}
