/* problem.h — one problem a family's kernels solve: its family, input precision, layout and
 * named dimensions, plus the canonical shape text that keys it in the database.
 *
 * Plain data with no CUDA types, so every stage (templates, model, search, database, runtime)
 * can carry problems without the driver's headers.  A family (kernels/family.h) parses a shape
 * into a problem and says what its dimensions mean.
 */
#ifndef ROOFTUNE_PROBLEM_H
#define ROOFTUNE_PROBLEM_H

#define PROBLEM_MAX_DIMS 12

typedef struct problem {
  char family[16];                     /* "gemm", "attention" */
  char dtype[8];                       /* "f32", "f16", "bf16" (input precision) */
  char layout[8];                      /* family-specific, e.g. "nt" for GEMM; "" for the default */
  int ndims;                           /* dimensions used */
  char dim_names[PROBLEM_MAX_DIMS][8]; /* "M", "N", "K", "BATCH" */
  long long dims[PROBLEM_MAX_DIMS];    /* their values */
  char shape[64];                      /* canonical text: "4096x4096x4096" (batch as "8@...") */
  char args[8192];                     /* data of the problem beyond its shape text, as the family
                                       parses it (the attention family's per-sequence KV
                                       lengths "5,1000,777"); "" when none.  The shape names it
                                       by a digest, so the pair identifies the problem */
} problem;

/* The value of dimension NAME, 0 when the problem has none of that name. */
long long problem_dim(const problem *p, const char *name);
/* Appends dimension NAME = value; -1 when the problem already has PROBLEM_MAX_DIMS or the name
 * does not fit (at most 7 characters), else 0. */
int problem_add_dim(problem *p, const char *name, long long value);

#endif
