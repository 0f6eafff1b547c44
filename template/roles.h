/* roles.h — what a template's parameters do, as template data: the diagnosis names its levers
 * by role ("raise the tile_n parameter"), and each manifest says which of its parameters plays
 * which role ("roles": {"BLOCK_N": "tile_n"}), or leaves them to be guessed from common names.
 *
 * The roles are one table (ROLE_TABLE); the enum and the names come from it.  A role may be
 * played by several parameters (WARPS_M and WARPS_N are both "warps").  A parameter the
 * manifest gives no role is never named by a lever: attention's key tile (BLOCK_N) is neither
 * an output tile (K and V are read once per query tile whatever it is) nor a plain reduction
 * step (a larger one pads the causal diagonal more), so the attention templates leave it out
 * and name their query rows (BLOCK_M, or attn_wgmma's CONSUMERS of 64 rows) tile_m.
 */
#ifndef ROOFTUNE_ROLES_H
#define ROOFTUNE_ROLES_H

#define ROLE_TABLE(X)                                                                    \
  X(TILE_M, "tile_m")   /* rows of the output tile per block (BLOCK_M) */                \
  X(TILE_N, "tile_n")   /* columns of the output tile per block (BLOCK_N) */             \
  X(TILE_K, "tile_k")   /* depth of one main-loop step (BLOCK_K) */                      \
  X(SPLIT_K, "split_k") /* blocks that share one output's reduction (SPLIT_K, SPLITS) */ \
  X(STAGES, "stages")   /* software-pipeline depth (STAGES) */                           \
  X(WARPS, "warps")     /* warps per block (WARPS_M, WARPS_N, WARPS) */                  \
  X(VECTOR, "vector")   /* elements per vector load (VEC) */                             \
  X(UNROLL, "unroll")   /* unrolling factor (UNROLL) */

typedef enum {
#define ROLE_ENUM(id, name) ROLE_##id,
  ROLE_TABLE(ROLE_ENUM)
#undef ROLE_ENUM
      ROLE_COUNT
} param_role;

#define ROLE_MAX_PARAMS 3 /* parameters per role */

typedef struct param_roles {
  char names[ROLE_COUNT][ROLE_MAX_PARAMS][48]; /* parameter names per role, "" when unused */
} param_roles;

/* "tile_m", "tile_n", ...: the table's names. */
const char *role_name(param_role r);
/* "tile_m, tile_n, ...": for error messages. */
const char *role_names_list(void);
/* -1 when NAME is none of the table's names. */
int role_parse(const char *name);
/* Adds parameter PARAM to ROLE (ignored when the role is full). */
void roles_add(param_roles *roles, param_role role, const char *param);
/* Guesses roles from common parameter names (case-insensitive): BLOCK_M/TILE_M/BM, BLOCK_N,
 * BLOCK_K, SPLIT_K/SPLITS, STAGES, WARPS*, VEC*, UNROLL*.  Unknown names are left without a role. */
void roles_guess(param_roles *roles, const char *const *params, int count);

#endif
