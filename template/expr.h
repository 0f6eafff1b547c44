/* expr.h — the expression language of template manifests, parsed once and evaluated fast.
 *
 * Manifests state constraints, derived values, launch geometry and cost formulas as
 * expressions; space construction evaluates them millions of times.  So an expression is parsed
 * once into a small stack program whose names are already resolved to slots of a caller's
 * value array (long long slots[]): evaluation does no string work.  The names an expression
 * may use are declared in an expr_scope; each gets a slot (its position in the scope).
 *
 * The language (64-bit signed integers throughout; truth is 0 / 1, any non-zero is true):
 *   literals      123  0x40
 *   names         BLOCK_M  M  dtype_bytes  device.smem_per_block_optin  (dots join words)
 *   unary         -x  +x  !x
 *   binary        * / %   + -   < <= > >=   == !=   &&   ||     (C precedence, left assoc.)
 *   conditional   c ? a : b                                      (right assoc., lowest)
 *   functions     min(a,b,...)  max(a,b,...)  ceil_div(a,b)  round_up(a,b)  abs(a)
 *                 is_pow2(a)  log2(a) (floor; a > 0)  pow2(a) (2^a; 0 <= a <= 62)
 * `/` and `%` truncate toward zero as in C; ceil_div rounds toward +infinity; round_up(a,b) is
 * ceil_div(a,b)*b.  && || and ?: evaluate only the side they need.  Division or remainder by
 * zero, overflow, log2 of a non-positive value and pow2 out of range are evaluation errors
 * (RT_ERR_EXPR with the column of the operator or function), never a crash.
 *
 * Real expressions (expr_parse_real, for a family's float scalars: a stencil's or a GELU's
 * coefficients) are the same language in double precision: literals may have a fraction or an
 * exponent (0.25, 1e-3, .5), names are their integer values, `/` divides exactly, and sqrt(a)
 * (a >= 0) joins min, max and abs; % and the integer functions (ceil_div, round_up, is_pow2,
 * log2, pow2) are parse errors there, as a fraction or an exponent and sqrt are in an integer
 * expression.  A result that is not finite is an evaluation error (RT_ERR_EXPR).
 *
 * Identifier values.  A name may carry an identifier domain (a parameter such as
 * LAYOUT_B: [row, col]); its slot holds the position in that domain (row = 0, col = 1).  A bare
 * identifier compared with such a name (LAYOUT_B == col, col != LAYOUT_B, also < <= > >=) is
 * that identifier's position in the name's own domain.  Elsewhere a bare identifier that is not
 * a name is looked up in every declared domain: it is accepted when it has the same position in
 * each domain that holds it, and is an error ("ambiguous") otherwise.  In a closed scope, a
 * name compared with an identifier parameter that is neither in its domain nor declared is an
 * error listing the domain; in an open scope it becomes an external name like any other, so
 * LAYOUT_B == b_col compares the position with an integer fact (b_col: 0 or 1).
 *
 * An open scope (expr_scope_set_open) accepts unknown names by adding them as new slots: the
 * manifest parses with its parameters and derived values declared and learns which external
 * names (problem dimensions, dtype and device facts) it needs, and binds them later.  A closed
 * scope reports an unknown name with the list of names that exist.  Errors carry the 1-based
 * column in the expression text (err->column).
 */
#ifndef ROOFTUNE_EXPR_H
#define ROOFTUNE_EXPR_H

#include <stddef.h>

#include "core/status.h"

/* Limits, enforced by expr_parse (RT_ERR_EXPR, never a truncation): the text of one expression
 * has at most EXPR_TEXT_MAX characters, and its syntax tree at most EXPR_HEIGHT_MAX levels
 * (each operator, call or conditional is one level above its deepest operand; parentheses
 * nest at most 100 deep), so evaluation and name resolution run in bounded stack. */
#define EXPR_TEXT_MAX   4096
#define EXPR_HEIGHT_MAX 256

typedef struct expr expr;
typedef struct expr_scope expr_scope;

/* --- scopes --- */
expr_scope *expr_scope_new(void);
void expr_scope_free(expr_scope *sc);
/* Declares NAME and returns its slot (or -1 when it exists already or on no memory); idents is
 * NULL for an integer name, else its identifier domain (nidents entries, copied). */
int expr_scope_add(expr_scope *sc, const char *name, int nidents, const char *const *idents);
/* Slot of NAME or -1. */
int expr_scope_find(const expr_scope *sc, const char *name);
int expr_scope_count(const expr_scope *sc);
const char *expr_scope_name(const expr_scope *sc, int slot);
/* 1: unknown names become new slots (after the declared ones); 0 (default): they are errors. */
void expr_scope_set_open(expr_scope *sc, int open);
/* "A, B, C" into buf: for error messages that list the names that exist. */
void expr_scope_list(const expr_scope *sc, int first, char *buf, size_t size);

/* --- expressions --- */
/* Parses text against the scope (which an open scope may grow).  RT_ERR_EXPR with
 * err->column on a syntax error or an unknown or ambiguous name. */
rt_status expr_parse(const char *text, expr_scope *sc, expr **out, rt_error *err);
/* The same for a real expression (see above); evaluate it with expr_eval_real. */
rt_status expr_parse_real(const char *text, expr_scope *sc, expr **out, rt_error *err);
void expr_free(expr *e);
/* Evaluates with slots[i] the value of scope slot i.  RT_ERR_EXPR with err->column on
 * division by zero, overflow and the other evaluation errors listed above. */
rt_status expr_eval(const expr *e, const long long *slots, long long *out, rt_error *err);
/* Evaluates a real expression (expr_parse_real) in double precision, the slots' integers as
 * doubles.  RT_ERR_EXPR with err->column on division by zero, sqrt of a negative value and a
 * result that is not finite. */
rt_status expr_eval_real(const expr *e, const long long *slots, double *out, rt_error *err);
/* The distinct slots the expression reads, ascending (*count of them). */
const int *expr_slots(const expr *e, int *count);
/* 1 and *value when the expression reads no slot (a constant), else 0. */
int expr_constant(const expr *e, long long *value);
/* The text it was parsed from. */
const char *expr_text(const expr *e);
/* One-line parse and evaluate against a closed scope built from names/values (tests, CLI). */
rt_status expr_eval_text(const char *text, int n, const char *const *names, const long long *values,
                         long long *out, rt_error *err);

#endif
