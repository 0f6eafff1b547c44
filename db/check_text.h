/* check_text.h — `db check`'s look at the stored texts: what rooftune writes in its names,
 * statuses, times, hashes, configurations and diagnoses is plain text, so markup there (any of
 * < > & ", as a hostile shard merged in would carry a script payload for the report), a control
 * character or bytes that are not UTF-8 mean the file was made or changed by something else.
 * Free-text columns (compiler messages, sentences, command lines, launch expressions, recipes)
 * may hold < & and quotes; they are held to UTF-8 without control characters other than tab and
 * newline (a terminal escape would reach `db show`).  The report escapes every text whatever it
 * holds (job/html.h); this check says the database is not what rooftune wrote. */
#ifndef ROOFTUNE_DB_CHECK_TEXT_H
#define ROOFTUNE_DB_CHECK_TEXT_H

#include <sqlite3.h>
#include <stddef.h>

#include "core/status.h"

/* Appends one line per offending text to buf (size bytes, *used of them used, NUL-terminated,
 * as db_check's report; at most 20 lines a column, then a count) and adds each to *problems.
 * Columns a crafted file lacks are skipped.  RT_ERR_DB when a query fails. */
rt_status db_check_texts(sqlite3 *h, char *buf, size_t size, size_t *used, int *problems,
                         rt_error *err);

#endif
