/* fileio.h — reading a whole file into memory, and writing a file rooftune produces, with
 * errors that name the file.  Template sources, manifests' neighbours, job files, ptxas logs
 * and fixtures are read this way; reports, exports and job outputs are written this way.
 *
 * Reading refuses what is not a regular file (a FIFO would block the reader forever, a device
 * never ends), a symbolic link to one too, by name and before it is opened.
 *
 * Writing (fileio_out) is what the operating system means by the path, and never replaces what
 * it must not:
 *   - a regular file that is not a symbolic link, or a path that does not exist yet, is written
 *     to a new temporary file in the same folder (created exclusively, so a planted name is never
 *     followed) and renamed over it when complete: a reader sees the old file or the new one,
 *     never half; an existing file's permission bits are kept;
 *   - anything else is opened by the kernel and written in place through that descriptor: a
 *     symbolic link is followed by open(2) itself, so fs.protected_symlinks and the permissions
 *     apply (a link planted in a sticky folder is refused, EACCES), and the link stays a link (a
 *     dangling one's target is created; a regular file behind one is written whole); a
 *     character device (/dev/null, /dev/full) or a FIFO stays what it is, and a FIFO nobody
 *     reads is refused at once instead of blocking;
 *   - what is the same file as our stdout or stderr (/dev/stdout, a link to where stdout goes)
 *     is written through that descriptor: into a pipe, after what was printed, and appended when
 *     the shell opened it for `>>`;
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

#include "core/status.h"

/* RT_OK when PATH is a regular file (following symbolic links); else RT_ERR_IO naming it: it
 * does not exist (the system's reason), or what it is (a FIFO, a device, a folder).  Nothing is
 * opened. */
rt_status fileio_check_source(const char *path, rt_error *err);
/* Opens PATH for reading into *fd (the caller closes it) when it is a regular file of at most
 * max bytes (0: no bound), by the rule above; else RT_ERR_IO naming it, nothing left open. */
rt_status fileio_open_read(const char *path, size_t max, int *fd, rt_error *err);
/* Reads PATH into a malloc'ed, NUL-terminated buffer (*out; the caller frees it) and its length
 * into *len (len may be NULL).  RT_ERR_IO names the file and the system's reason, or says that
 * it is not a regular file. */
rt_status fileio_read(const char *path, char **out, size_t *len, rt_error *err);
/* The same, refusing (RT_ERR_IO) a file longer than max bytes (0: no bound). */
rt_status fileio_read_max(const char *path, size_t max, char **out, size_t *len, rt_error *err);

/* A file being written.  Plain data; fields are read-only for callers except f. */
typedef struct fileio_out {
  FILE *f;         /* write the contents here */
  char path[4096]; /* the target as given, for messages */
  char tmp[4200];  /* the temporary file renamed over path; "" when written in place */
  int in_place;    /* 1: opened by the kernel (a link, a device, a FIFO, our stdout), written in
                      place */
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
