/* recipe.h — a winner's serving recipe: what librooftune needs to serve a tuned configuration
 * for a shape it was not tuned on, without the template's manifest (the runtime reads none).
 *
 * The tuner stores it beside each template winner (db_winner.vars, .env, .derived,
 * .constraints; schema 4).  Serving shape S with it (runtime/geometry.c):
 *   1. the environment: env (the tuned problem's names: the family's dimensions and facts, the
 *      dtype facts, the tuning device's facts), with the family's own names recomputed for S;
 *   2. the configuration: vars (every parameter as a number, an identifier parameter as its
 *      domain position, and every derived value that reads no problem name: those are the same
 *      for any shape and went into the compiled source);
 *   3. derived: the derived values that read the problem, re-evaluated for S in manifest order;
 *   4. constraints: every constraint that reads the problem, checked for S (a false one means
 *      the compiled kernel must not run S: gemm_wgmma's K % BLOCK_K, gemm_skinny's M <= 16);
 *      the constraints that read no problem name held when the configuration was tuned and
 *      hold for any shape on that device;
 *   5. the launch expressions (db_winner.grid/block/smem) for the geometry.
 * A shape-dependent expression that compares an identifier parameter with a bare identifier
 * (LAYOUT_B == col) cannot be evaluated without the parameter's domain: the runtime then
 * serves that winner for its own shape only, and says so.
 */
#ifndef ROOFTUNE_RECIPE_H
#define ROOFTUNE_RECIPE_H

#include "db/db.h"
#include "core/vars.h"
#include "template/manifest.h"

typedef struct winner_recipe {
  char grid[3][512]; /* the launch expressions as written ("ceil_div(N,BLOCK_N)", or a number) */
  char block[3][512];
  char smem[512];
  char vars[1024];   /* parameters and shape-free derived values: "BLOCK_M=128,...,SMEM=65536" */
  char *env;         /* malloc'ed: "M=4096,...,dtype_bytes=2,device.sm_count=132" */
  char *derived;     /* malloc'ed: "NAME=EXPR" lines */
  char *constraints; /* malloc'ed: one expression a line */
} winner_recipe;

/* The recipe of the configuration whose plan values (manifest_plan's vars: env, parameters and
 * derived values) are plan_vars.  RT_ERR_INVALID when the values do not fit db_winner.vars;
 * RT_ERR_EXPR when an expression of the manifest does not parse (it loaded, so it does);
 * RT_ERR_IO when the manifest file cannot be read again for its launch expressions. */
rt_status winner_recipe_make(const manifest *m, const rt_vars *plan_vars, winner_recipe *out,
                             rt_error *err);
void winner_recipe_free(winner_recipe *r);
/* Copies the launch expressions and vars into w and points w's env, derived and constraints at
 * r's (r must outlive the db_run_set_winner call). */
void winner_recipe_apply(const winner_recipe *r, db_winner *w);

#endif
