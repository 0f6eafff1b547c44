/* roles.c — the role table's names, and roles guessed from parameter names. */
#include "template/roles.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const role_names[ROLE_COUNT] = {
#define ROLE_NAME(id, name) name,
    ROLE_TABLE(ROLE_NAME)
#undef ROLE_NAME
};

const char *role_name(param_role r) { return r >= 0 && r < ROLE_COUNT ? role_names[r] : "unknown"; }

const char *role_names_list(void) {
  static char list[128];
  if (!list[0])
    for (int i = 0, n = 0; i < ROLE_COUNT; i++)
      n += snprintf(list + n, sizeof list - (size_t)n, "%s%s", i ? ", " : "", role_names[i]);
  return list;
}

int role_parse(const char *name) {
  for (int i = 0; name && i < ROLE_COUNT; i++)
    if (strcmp(role_names[i], name) == 0) return i;
  return -1;
}

void roles_add(param_roles *roles, param_role role, const char *param) {
  if (!roles || role < 0 || role >= ROLE_COUNT || !param || !*param) return;
  for (int i = 0; i < ROLE_MAX_PARAMS; i++) {
    if (strcmp(roles->names[role][i], param) == 0) return;
    if (!roles->names[role][i][0]) {
      snprintf(roles->names[role][i], sizeof roles->names[role][i], "%s", param);
      return;
    }
  }
}

static int name_is(const char *p, const char *const *list) {
  for (; *list; list++)
    if (strcasecmp(p, *list) == 0) return 1;
  return 0;
}

static int starts_with_ci(const char *p, const char *prefix) {
  return strncasecmp(p, prefix, strlen(prefix)) == 0;
}

void roles_guess(param_roles *roles, const char *const *params, int count) {
  static const char *const tm[] = {"BLOCK_M", "TILE_M", "BM", "MWG", "BLOCK_SIZE_M", NULL};
  static const char *const tn[] = {"BLOCK_N", "TILE_N", "BN", "NWG", "BLOCK_SIZE_N", NULL};
  static const char *const tk[] = {"BLOCK_K", "TILE_K", "BK", "KWG", "BLOCK_SIZE_K", NULL};
  static const char *const sk[] = {"SPLIT_K", "SPLITK",     "SPLIT_K_SLICES",
                                   "SPLITS",  "NUM_SPLITS", NULL};
  static const char *const st[] = {"STAGES", "NUM_STAGES", "PIPELINE_STAGES", NULL};
  for (int i = 0; i < count; i++) {
    const char *p = params[i];
    if (!p) continue;
    if (name_is(p, tm))
      roles_add(roles, ROLE_TILE_M, p);
    else if (name_is(p, tn))
      roles_add(roles, ROLE_TILE_N, p);
    else if (name_is(p, tk))
      roles_add(roles, ROLE_TILE_K, p);
    else if (name_is(p, sk))
      roles_add(roles, ROLE_SPLIT_K, p);
    else if (name_is(p, st))
      roles_add(roles, ROLE_STAGES, p);
    else if (starts_with_ci(p, "WARPS") || starts_with_ci(p, "NUM_WARPS"))
      roles_add(roles, ROLE_WARPS, p);
    else if (starts_with_ci(p, "VEC"))
      roles_add(roles, ROLE_VECTOR, p);
    else if (starts_with_ci(p, "UNROLL"))
      roles_add(roles, ROLE_UNROLL, p);
  }
}
