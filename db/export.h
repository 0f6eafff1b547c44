/* export.h — rooftune's export formats, written and read in one place: a database's results
 * and winners as JSON (what `--prior FILE` and `--device replay:FILE` read back), as CSV, and
 * the winners as a C header.
 *
 * JSON: {"rooftune_export": 1, "database", "schema_version", "results": [row...],
 * "winners": [winner...]}.  A row carries the problem (family, shape, dtype, layout), the
 * device ({name, sm_count, compute_capability, driver_version}), toolkit, arch, template and
 * its hashes, strategy and seed, "config" (the configuration as an object: {"BLOCK_M": 128},
 * or {"text": ...} for a library algorithm) and "config_text", then every field of
 * RESULT_COLUMNS (core/result.h) under its export name, the static facts and the
 * diagnosis in objects of their own.  Numbers that are not finite are null.  A winner carries
 * its cubin's size and the SHA-256 of its bytes ("cubin_bytes", "cubin_sha256"; "" without a
 * cubin), not the bytes: a database travels whole by `db merge`, which refuses a source whose
 * cubin does not have its hash.
 *
 * The reader turns one template's rows for one problem into a Kernel Tuner cache object, the
 * form template/ktfile.h loads, each record keeping its row ("rooftune_row"), so what a
 * GPU run measured beside the time (its counters, static facts, FLOPs, precision) replays with
 * it (db_export_row_read); an export holding two templates, two problems or two devices for the
 * selection is refused with a message that says how to narrow it.  What it reads back is a
 * recording: its times are replayed and never verified here, whatever a row's "verified" says
 * (only a check on this machine's GPU makes a result verified).
 *
 * Output files are written to FILE.tmp and renamed over FILE once complete, so a failed or
 * interrupted export never leaves half a file under the name asked for.
 */
#ifndef ROOFTUNE_EXPORT_H
#define ROOFTUNE_EXPORT_H

#include <jansson.h>
#include <stdio.h>

#include "db/db.h"

/* Which rows to export: NULL fields match everything; device matches part of the name. */
typedef struct db_export_filter {
  const char *family, *shape, *dtype, *device;
} db_export_filter;

enum { DB_EXPORT_JSON = 1, DB_EXPORT_CSV = 2, DB_EXPORT_HEADER = 3 };

/* Writes the database's matching rows in FORMAT to path (NULL: stdout).  RT_ERR_IO names the
 * file when it cannot be written completely (a full disk, a closed pipe). */
rt_status db_export_write(db *d, int format, const db_export_filter *f, const char *path,
                          rt_error *err);

/* One result row as the JSON export writes it (a new reference). */
json_t *db_export_row_json(const db_run_spec *spec, const char *template_name,
                           const char *source_hash, const char *manifest_hash,
                           const candidate_result *r);
/* One winner as the JSON export (and `db list --json`) writes it (a new reference). */
json_t *db_export_entry_json(const db_entry *e);
/* A configuration text as JSON: "A=1,B=row" → {"A": 1, "B": "row"}; a text that is not
 * NAME=VALUE pairs (a cuBLASLt algorithm's identity) → {"text": "..."}.  A new reference. */
json_t *db_export_config_json(const char *config);

/* Every field of RESULT_COLUMNS an export row (db_export_row_json's) holds, read back into *r
 * (zeroed first); a field it lacks, or of the wrong type, stays 0 or "". */
void db_export_row_read(const json_t *row, candidate_result *r);

/* The reader: the export's rows of one template and problem as a Kernel Tuner cache object
 * (*out, a new reference).  template_name may name the template or its family; shape and
 * dtype may be NULL when the export holds one problem.  path names the file in errors. */
rt_status db_export_to_kt(json_t *root, const char *path, const char *template_name,
                          const char *shape, const char *dtype, json_t **out, rt_error *err);

#endif
