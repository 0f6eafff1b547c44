/* db_old_schema.h — a database file as an older rooftune wrote it, for the migration tests
 * (tests/unit/test_db*.c): the schema's migrations up to a version, its header, and rows in
 * that version's tables.  Header-only; needs test.h before it. */
#ifndef ROOFTUNE_DB_OLD_SCHEMA_H
#define ROOFTUNE_DB_OLD_SCHEMA_H

#include <sqlite3.h>
#include <stdio.h>

#include "db/db.h"
#include "db/schema.h"

/* Writes PATH as a schema-VERSION rooftune database holding ROWS (SQL run after the schema). */
static inline void fx_old_db(const char *path, int version, const char *rows) {
  sqlite3 *h = NULL;
  CHECK_INT(sqlite3_open(path, &h), SQLITE_OK);
  for (int v = 1; v <= version; v++)
    CHECK_INT(sqlite3_exec(h, schema_migrations[v], NULL, NULL, NULL), SQLITE_OK);
  char sql[128];
  snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d", DB_APPLICATION_ID,
           version);
  CHECK_INT(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
  CHECK_INT(sqlite3_exec(h, rows, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
}

/* Opens PATH, an older file: a reader is refused with the upgrade command named, a writer
 * migrates it to this schema.  The writer's handle (NULL when it failed). */
static inline db *fx_old_db_migrate(const char *path) {
  rt_error err = {0};
  db *d = NULL;
  CHECK_INT(db_open(path, DB_READONLY, &d, &err), RT_ERR_DB_VERSION);
  CHECK_CONTAINS(err.text, "rooftune db upgrade");
  CHECK_INT(db_open(path, DB_CREATE, &d, &err), RT_OK);
  if (d) CHECK_INT(db_schema_version(d), DB_SCHEMA_VERSION);
  return d;
}

#endif
