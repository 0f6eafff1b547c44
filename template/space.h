/* space.h — a search space: named parameters with ordered value domains, and the list of the
 * configurations that are valid.
 *
 * One type serves every source of configurations: a template manifest (built by backtracking
 * in manifest.c), a recorded Kernel Tuner space (replay), a set of library algorithms.  A
 * configuration is an array of value indices, one uint16_t per parameter, in parameter order;
 * the valid ones are numbered 0..space_size()-1 in a deterministic order, and a configuration
 * maps to its number and back in O(1) (hash index).  Neighbours are the valid configurations
 * that move one parameter one step along its domain; strategies walk them.
 *
 * Build: space_new, space_add_param for each parameter, space_add_config for each valid
 * configuration, then space_finish (builds the index).  After finish the space is read-only
 * and safe to share between threads.
 */
#ifndef ROOFTUNE_SPACE_H
#define ROOFTUNE_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef struct space space;

typedef struct space_param {
  char *name;      /* "BLOCK_M" */
  int count;       /* values in the domain, >= 1 */
  long long *ints; /* the values when numeric, else NULL */
  char **idents;   /* the values when identifiers ("row", "col"), else NULL */
} space_param;

space *space_new(void);
void space_free(space *s);

/* Adds a parameter; exactly one of ints / idents is non-NULL.  Values are copied. */
rt_status space_add_param(space *s, const char *name, int count, const long long *ints,
                          const char *const *idents, rt_error *err);
/* Appends a valid configuration (value indices, one per parameter). Duplicates are an error
 * after space_finish reports them. */
rt_status space_add_config(space *s, const uint16_t *cfg, rt_error *err);
/* Builds the index; call once after the last add. */
rt_status space_finish(space *s, rt_error *err);

int space_nparams(const space *s);
const space_param *space_param_at(const space *s, int i);
/* Index of the parameter named NAME, or -1. */
int space_param_index(const space *s, const char *name);
/* Number of valid configurations. */
size_t space_size(const space *s);
/* The product of the domain sizes (as a double: it can exceed 2^64). */
double space_product(const space *s);

/* The configuration numbered idx (a pointer into the space; nparams entries). */
const uint16_t *space_config(const space *s, size_t idx);
/* The number of a configuration, or -1 when it is not valid. */
long space_index(const space *s, const uint16_t *cfg);
/* Valid configurations one step away (one parameter, one domain position up or down);
 * writes at most cap indices into out and returns how many exist. */
size_t space_neighbours(const space *s, size_t idx, size_t *out, size_t cap);

/* A move of one parameter that stays inside the space: the configuration cfg with parameter p
 * moved towards larger values (dir > 0) or smaller ones (dir < 0), every other parameter kept,
 * taking the nearest value that way whose configuration is valid (the next value, and the
 * next, until one is valid or the domain ends); `nth` = 2 the second such valid value, and so
 * on.  Numeric domains are ordered by value, identifier domains by position.  The number of
 * that configuration, or -1 when there is none (cfg itself need not be valid). */
long space_move(const space *s, const uint16_t *cfg, int p, int dir, int nth);
/* The value positions of a configuration given by its parameter values (vals: every
 * parameter's numeric value, an identifier parameter's domain position; missing, a name the
 * lookup cannot find): fills cfg (nparams entries); 0 when some parameter is missing or its
 * value is outside its domain. */
int space_values_to_config(const space *s, int (*lookup)(void *ctx, const char *name, long long *v),
                           void *ctx, uint16_t *cfg);

/* Numeric value of parameter p in configuration idx; for identifiers, the domain position. */
long long space_value(const space *s, size_t idx, int p);
/* "BLOCK_M=128,BLOCK_N=64,LAYOUT=row" into buf; returns the length it needed. */
size_t space_format_config(const space *s, size_t idx, char *buf, size_t size);
/* Parses the format above (any parameter order, every parameter once) into its number. */
rt_status space_parse_config(const space *s, const char *text, size_t *idx, rt_error *err);
/* Errors of space_parse_config: RT_ERR_PARSE (bad form, unknown parameter, value outside its
 * domain, a parameter missing or given twice; err->column is the 1-based column in text) and
 * RT_ERR_NOT_FOUND (every value is in its domain but the configuration is not valid). */

/* A new space with s's parameters and only its configuration idx (number 0 there): the space
 * a run that evaluates one known configuration walks.  *out is NULL on error. */
rt_status space_single(const space *s, size_t idx, space **out, rt_error *err);
/* A new space with s's parameters and the configurations of s that keep(ctx, s, i) admits, in
 * s's order (maybe none: space_size 0): a shard of a space, say.  *out is NULL on error. */
rt_status space_subset(const space *s, int (*keep)(void *ctx, const space *s, size_t idx),
                       void *ctx, space **out, rt_error *err);

/* The same format for any configuration (valid or not): value indices cfg, one per parameter. */
size_t space_format_values(const space *s, const uint16_t *cfg, char *buf, size_t size);
/* Parses the format into value indices (nparams entries) without requiring validity. */
rt_status space_parse_values(const space *s, const char *text, uint16_t *cfg, rt_error *err);

#endif
