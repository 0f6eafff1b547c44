/* fileio.h — reading a whole file into memory, and writing a file rooftune produces, with
 * errors that name the file.  Template sources, manifests' neighbours, job files, ptxas logs
 * and fixtures are read this way; reports, exports and job outputs are written this way.
 *
 * Reading refuses what is not a regular file (a FIFO would block the reader forever, a device
 * never ends) before it reads a byte.
 *
 * Writing (fileio_out) never replaces what it must not:
 *   - a regular file, or a path that does not exist yet, is written to a new temporary file in
 *     the same folder (created exclusively, so a planted name is never followed) and renamed
 *     over the target when complete: a reader sees the old file or the new one, never half;
 *     an existing file's permission bits are kept;
 *   - a symbolic link is followed: its target is what gets written (the link stays a link);
 *   - a character device (/dev/null, /dev/stdout, /dev/full) or a FIFO is written in place,
 *     never renamed over; a FIFO nobody reads is refused at once instead of blocking;
 *   - a folder, a block device or a socket is refused with the reason;
 *   - every write, the flush and the close are checked: ENOSPC (/dev/full, a full disk) is an
 *     error naming the file, and the temporary file is removed.
 * Databases are SQLite files opened in place: fileio_check_target holds them to the same rule
 * (a regular file or nothing), which is all that applies to them.
 */
#ifndef ROOFTUNE_FILEIO_H
#define ROOFTUNE_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "tuner/core/status.h"

/* Reads PATH into a malloc'ed, NUL-terminated buffer (*out; the caller frees it) and its length
 * into *len (len may be NULL).  RT_ERR_IO names the file and the system's reason, or says that
 * it is not a regular file. */
rt_status fileio_read(const char *path, char **out, size_t *len, rt_error *err);
/* The same, refusing (RT_ERR_IO) a file longer than max bytes (0: no bound). */
rt_status fileio_read_max(const char *path, size_t max, char **out, size_t *len, rt_error *err);

/* A file being written.  Plain data; fields are read-only for callers except f. */
typedef struct fileio_out {
  FILE *f;           /* write the contents here */
  char path[4096];   /* the target as given, for messages */
  char target[4096]; /* what is written: the path with its symbolic links followed */
  char tmp[4200];    /* the temporary file renamed over target; "" when written in place */
  int in_place;      /* 1: a character device or FIFO, written directly */
} fileio_out;

/* Opens PATH for writing by the rules above.  On error nothing was created. */
rt_status fileio_out_open(fileio_out *o, const char *path, rt_error *err);
/* Flushes, closes and puts the file in place; an error (a write that failed at any point, no
 * space, the rename) names the file and leaves no temporary behind. */
rt_status fileio_out_commit(fileio_out *o, rt_error *err);
/* Gives up: closes and removes the temporary file (the target is untouched). */
void fileio_out_abort(fileio_out *o);

/* What a file of st_mode MODE is, for messages: "a folder", "a FIFO", "a character device",
 * "a block device", "a socket", "not a regular file". */
const char *fileio_kind(unsigned mode);

/* RT_OK when PATH is a regular file or does not exist (following symbolic links); else RT_ERR_IO
 * naming it and saying what it is (a folder, a FIFO, a device, a socket). */
rt_status fileio_check_target(const char *path, rt_error *err);

#endif
