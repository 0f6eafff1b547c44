/* declared.h — kernel families declared in JSON (FOLDER/family.json beside their templates),
 * so a user tunes their own kernel with no C code: its problem dimensions and shape syntax, the
 * kernel's arguments, how inputs are made, the reference template, the check, the cost.
 *
 *   {
 *     "family": "softmax",                  C identifier, at most 15 characters
 *     "description": "one line",            optional
 *     "dims": ["ROWS", "COLS"],             problem dimensions; --shape is ROWSxCOLS ("4096x512")
 *     "max": {"COLS": 65536},               optional: largest value per dimension (default
 *                                           2^31 - 1025, what 32-bit tile arithmetic allows)
 *     "example": "4096x4096",               optional: a shape for checks and messages
 *     "dtypes": ["f32", "f16", "bf16"],     what --dtype may be
 *     "facts": {"ELEMS": "ROWS*COLS"},      optional: more names for expressions, in order,
 *                                           each over the dims, dtype facts and earlier facts
 *     "args": [                             the kernel's arguments, in order:
 *       {"name": "x", "buffer": "dtype", "count": "ROWS*COLS", "dir": "in",
 *        "init": {"uniform": [-4, 4]}},     a device buffer: element type, element count,
 *       {"name": "y", "buffer": "dtype", "count": "ROWS*COLS", "dir": "out"},
 *       {"name": "cols", "scalar": "i32", "value": "COLS"}  a scalar from an expression
 *     ],
 *     "reference": "softmax_reference",     the template the candidates are checked against
 *     "check": {"f32": {"rel": 1e-5}, "bf16": {"rel": 1e-2}, "*": {"abs": 1e-3}},
 *     "cost": {"flops": "5*ROWS*COLS", "bytes": "2*ROWS*COLS*dtype_bytes"},
 *     "levers": ["warps", "vector", "unroll"]  optional: roles the diagnosis may move
 *   }
 *
 * Element types: "dtype" (the problem's), f32 f16 bf16 f64 i8 u8 i32 u32 i64.  Scalars: i32 u32
 * i64 from an integer expression, f32 from a real one (expr.h: "value": 0.25, "0.5/COLS",
 * "sqrt(2)/2").  Every count and scalar is evaluated and checked for each problem when its shape
 * is parsed, before anything runs on any device: a buffer has at least one element and at most
 * 1 TiB (its byte count computed without wrapping), a scalar fits its type; the error names the
 * file, the field (args[2].count), the argument, the shape and the value.  dir: in
 * (filled once), out (poisoned before every checked run: NaN for floats, 0xa5 bytes for
 * integers; compared with the reference), inout (filled, reset before every checked run,
 * compared).  init (in and inout): {"uniform": [lo, hi]} seeded uniform values rounded to the
 * element type (integers for integer types), {"int": [lo, hi]} seeded integers, {"const": v}.
 * The seed is the run's, mixed with the argument's name, so every buffer differs and a rerun
 * gets the same data.  check: per dtype (or "*" for the others), "rel" (relative Frobenius
 * error of every compared buffer) and/or "abs" (largest absolute difference); integer buffers
 * must match exactly; a NaN where the reference has a number never passes.  cost.flops and
 * cost.bytes (the compulsory traffic: inputs read once, outputs written once) are expressions;
 * the model device and the diagnosis read them (a template's own cost formulas add its
 * re-reads).  Expressions are those of template/expr.h over the dims, the facts and the
 * dtype facts (dtype_bytes, dtype_is_<d>).  The reference template is a plain kernel of the
 * same family with the same arguments, named here and never tuned itself.
 *
 * Errors name the file and the field ("args[2].count") and, inside an expression, the column;
 * unknown fields are errors.
 */
#ifndef ROOFTUNE_DECLARED_H
#define ROOFTUNE_DECLARED_H

#include "kernels/family.h"

/* Loads and checks PATH into a new family (free with declared_free). */
rt_status declared_load(const char *path, family_ops **out, rt_error *err);
void declared_free(family_ops *f);

#endif
