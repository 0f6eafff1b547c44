/* fileio.h — reading a whole file into memory, with an error that names the file.
 * Template sources, manifests' neighbours, ptxas logs and fixtures are all read this way. */
#ifndef ROOFTUNE_FILEIO_H
#define ROOFTUNE_FILEIO_H

#include <stddef.h>

#include "tuner/core/status.h"

/* Reads PATH into a malloc'ed, NUL-terminated buffer (*out; the caller frees it) and its length
 * into *len (len may be NULL).  RT_ERR_IO names the file and the system's reason. */
rt_status fileio_read(const char *path, char **out, size_t *len, rt_error *err);

#endif
