/* vars.h — a small name → integer table: the facts an expression or a kernel launch sees.
 *
 * Problem dimensions (M, N, K, BATCH), dtype facts (dtype_bytes), device facts
 * (device.sm_count, device.smem_per_block_optin, ...), and a configuration's parameter and
 * derived values all travel as rt_vars.  Names are copied in; setting a name again replaces
 * its value.  Fixed capacity, no allocation, so it can live on the stack and be copied.
 */
#ifndef ROOFTUNE_VARS_H
#define ROOFTUNE_VARS_H

#include "core/status.h"

#define RT_VARS_MAX     96
#define RT_VAR_NAME_MAX 48

typedef struct rt_vars {
  int count;                                /* entries used */
  char names[RT_VARS_MAX][RT_VAR_NAME_MAX]; /* NUL-terminated names */
  long long values[RT_VARS_MAX];            /* their values */
} rt_vars;

void rt_vars_clear(rt_vars *v);
/* Adds or replaces NAME; RT_ERR_INVALID when full or the name is too long. */
rt_status rt_vars_set(rt_vars *v, const char *name, long long value);
/* 1 and *value when NAME is present, else 0. */
int rt_vars_get(const rt_vars *v, const char *name, long long *value);
/* Index of NAME or -1. */
int rt_vars_find(const rt_vars *v, const char *name);
/* Copies every entry of src into dst (src wins on a shared name). */
rt_status rt_vars_merge(rt_vars *dst, const rt_vars *src);

/* Adds the integer entries of a "NAME=V,NAME=V" text (a stored winner's vars) to v; entries
 * whose value is not an integer (identifier parameters) are skipped.  RT_ERR_INVALID naming the
 * entry when one has no '=' or v is full. */
rt_status rt_vars_parse(rt_vars *v, const char *text, rt_error *err);

#endif
