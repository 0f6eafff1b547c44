/* cubin_cache.h — a content-addressed store of compile results, so a second run compiles nothing.
 *
 * One SQLite file, cubins.db, in $ROOFTUNE_CACHE_DIR, else $XDG_CACHE_HOME/rooftune, else
 * ~/.cache/rooftune; ROOFTUNE_CACHE_DIR=off turns the cache off.  WAL mode, a busy timeout so
 * parallel runs share it, prepared statements only.  The key is compile_key(): SHA-256 over the
 * source text, the NVRTC option list, NVRTC's version, the architecture, the entry and every
 * include lookup the compile makes (the bytes of each file found, each place that was missed),
 * so a row is the result of exactly the files that were there.  A row keeps the whole
 * compile_result: status (compiled or compile error: both are deterministic for those files;
 * crashes and timeouts are not stored), message, log, cubin, PTX,
 * lowered name and the ptxas report.  The table's name carries the row format's version
 * (cubins_v1), so a format change leaves old rows unread at once (tinygrad's habit).
 *
 * A damaged file never stops a run: opening moves it aside (cubins.db.damaged) and starts a new
 * one, and any later SQLite failure turns the cache off for the rest of the run.  Either way the
 * cache keeps one warning (cubin_cache_warning) for the caller to print once.
 *
 * Bounded: its rows (cubins, logs, PTX) take at most ROOFTUNE_CACHE_MAX_MB megabytes (default
 * 2048; rows average ~35 KB, a whole gemm_mma space for one architecture, dtype and layout is
 * ~10 MB, all twelve of them ~120 MB).  A store that goes past the bound deletes the least
 * recently used rows (the last hit, refreshed at most once an hour, else the store) down to
 * 90 % of it.  SQLite reuses the freed pages, so the file stays near the largest bound it has
 * had; deleting the file (always safe: the next run compiles again) gives the space back.  A
 * value that is not a positive number of megabytes is the cache's one warning, and the
 * default holds.
 */
#ifndef ROOFTUNE_CUBIN_CACHE_H
#define ROOFTUNE_CUBIN_CACHE_H

#include <stddef.h>

#include "compile/compile.h"
#include "core/status.h"

typedef struct cubin_cache cubin_cache;

/* The cache folder into buf; returns 0 (and buf "") when ROOFTUNE_CACHE_DIR=off, else 1. */
int cubin_cache_dir(char *buf, size_t size);
/* Opens (creating the folder and file as needed) the cache in dir. */
rt_status cubin_cache_open(const char *dir, cubin_cache **out, rt_error *err);
/* Opens the cache in cubin_cache_dir(); *out is NULL and RT_OK when the cache is off. */
rt_status cubin_cache_open_default(cubin_cache **out, rt_error *err);
void cubin_cache_close(cubin_cache *c);

/* The database file's path. */
const char *cubin_cache_path(const cubin_cache *c);
/* The one warning of this cache's life ("" when none): a damaged file moved aside, or the cache
 * turned off after a SQLite failure. */
const char *cubin_cache_warning(const cubin_cache *c);
/* 1 while the cache is in use; 0 after a failure turned it off. */
int cubin_cache_usable(const cubin_cache *c);

/* 1 and a filled *out (cache_hit = 1, seconds = 0; free with compile_result_free) on a hit;
 * 0 on a miss or when the cache is unusable. */
int cubin_cache_get(cubin_cache *c, const unsigned char key[32], compile_result *out);
/* Stores r under key (replacing a row with the same key); only RT_OK and RT_ERR_COMPILE results
 * are stored, others are ignored.  A SQLite failure turns the cache off and returns RT_ERR_DB. */
rt_status cubin_cache_put(cubin_cache *c, const unsigned char key[32], const compile_result *r,
                          rt_error *err);
/* Rows in the cache (for tests and `rooftune info`); -1 when unusable. */
long cubin_cache_count(cubin_cache *c);
/* Bytes its rows take (what the bound counts); -1 when unusable. */
long long cubin_cache_bytes(cubin_cache *c);
/* The bound in bytes (ROOFTUNE_CACHE_MAX_MB, else the default). */
long long cubin_cache_limit(const cubin_cache *c);
/* Sets the bound (tests; bytes > 0).  The next store evicts down to it. */
void cubin_cache_set_limit(cubin_cache *c, long long max_bytes);
/* Tests only: the clock stores and hits are stamped with (unix seconds); 0: the real one. */
void cubin_cache_set_clock(cubin_cache *c, long long unix_seconds);

#endif
