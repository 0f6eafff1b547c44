/* status.h — one table of status codes for all of rooftune, and the caller-owned error struct.
 *
 * Every fallible function returns an rt_status; RT_OK is 0.  The enum, rt_status_name() and
 * rt_status_message() are all generated from RT_STATUS_TABLE, so a code cannot exist without
 * its name and message.  Details go into an rt_error the caller owns (it may pass NULL): the
 * text, and what it is about (a file or other input, a field inside it, a line and column).
 * Messages start lowercase, name the thing and carry no trailing full stop (git's habit).
 * Only main(), examples and tests exit; library code returns a status.
 */
#ifndef ROOFTUNE_STATUS_H
#define ROOFTUNE_STATUS_H

#include <stddef.h>

#define RT_STATUS_TABLE(X)                                          \
  X(OK, "success")                                                  \
  X(ERR_USAGE, "bad command-line usage")                            \
  X(ERR_NOMEM, "out of memory")                                     \
  X(ERR_IO, "file could not be read or written")                    \
  X(ERR_PARSE, "input could not be parsed")                         \
  X(ERR_INVALID, "invalid argument or input")                       \
  X(ERR_NOT_FOUND, "not found")                                     \
  X(ERR_MANIFEST, "invalid template manifest")                      \
  X(ERR_EXPR, "invalid expression")                                 \
  X(ERR_SPACE_EMPTY, "search space has no valid configuration")     \
  X(ERR_NVRTC, "NVRTC call failed")                                 \
  X(ERR_COMPILE, "kernel did not compile")                          \
  X(ERR_NO_DRIVER, "no CUDA driver on this machine")                \
  X(ERR_NO_GPU, "no CUDA GPU on this machine")                      \
  X(ERR_CUDA, "CUDA driver call failed")                            \
  X(ERR_CUBLAS, "cuBLASLt call failed")                             \
  X(ERR_LAUNCH, "kernel launch failed")                             \
  X(ERR_WRONG_RESULT, "kernel output does not match the reference") \
  X(ERR_CRASH, "worker process crashed")                            \
  X(ERR_TIMEOUT, "timed out")                                       \
  X(ERR_UNSUPPORTED, "not supported")                               \
  X(ERR_DB, "database error")                                       \
  X(ERR_DB_FOREIGN, "not a rooftune database")                      \
  X(ERR_DB_VERSION, "database schema is newer than this rooftune")  \
  X(ERR_BUDGET, "budget exhausted")                                 \
  X(ERR_INTERNAL, "internal error")                                 \
  X(ERR_UNVERIFIED, "never checked against the reference")

typedef enum {
#define RT_STATUS_ENUM(name, msg) RT_##name,
  RT_STATUS_TABLE(RT_STATUS_ENUM)
#undef RT_STATUS_ENUM
      RT_STATUS_COUNT
} rt_status;

/* "ERR_MANIFEST" for RT_ERR_MANIFEST; "unknown" outside the table. */
const char *rt_status_name(int code);
/* The table's one-line message for a code. */
const char *rt_status_message(int code);
/* Parses a name back to its code; -1 when no code has that name. */
int rt_status_from_name(const char *name);

typedef struct rt_error {
  rt_status code;   /* RT_OK when nothing went wrong */
  char text[768];   /* the message: lowercase start, no trailing full stop */
  char source[512]; /* the input it is about: a file path, a flag, "--shape"; "" if none */
  char field[128];  /* the field inside the source ("constraints[2]"); "" if none */
  int line;         /* 1-based line in the source; 0 if none */
  int column;       /* 1-based column (in the field's text for expressions); 0 if none */
} rt_error;

/* Clears err (code RT_OK, empty strings).  err may be NULL. */
void rt_error_clear(rt_error *err);
/* Sets code and a printf-style text, keeping any location already set; returns code.
 * err may be NULL, in which case only code is returned. */
rt_status rt_error_set(rt_error *err, rt_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* rt_error_set and rt_error_locate(err, source, field, 0, column) in one call: the usual way an
 * input's loader reports a fault in a file's field (and column inside an expression). */
rt_status rt_error_at(rt_error *err, rt_status code, const char *source, const char *field,
                      int column, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Sets where the error is: source, field (either may be NULL), line and column. */
void rt_error_locate(rt_error *err, const char *source, const char *field, int line, int column);
/* Writes one line: "SOURCE: FIELD: line L, column C: TEXT" with the empty parts left out. */
void rt_error_format(const rt_error *err, char *buf, size_t size);

#endif
