/* util.h — small facts every stage shares, written once: a monotonic clock, a pause, `mkdir -p`,
 * quantiles of sorted samples, a bounded string copy, a text hash (FNV-1a), and where the tuning database lives when
 * no --db names one.  Plain C and POSIX; librooftune links it too. */
#ifndef ROOFTUNE_UTIL_H
#define ROOFTUNE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Seconds on CLOCK_MONOTONIC: for deadlines and durations, never for dates. */
double rt_now_s(void);
/* Sleeps MS milliseconds (0 or less: returns at once). */
void rt_sleep_ms(int ms);

/* Creates folder DIR and every missing folder above it (mode 0755), like `mkdir -p`.  RT_ERR_IO
 * names the folder that could not be made and the system's reason (errno keeps it), located at
 * DIR. */
rt_status rt_mkdir_p(const char *dir, rt_error *err);
/* Creates the folders above file PATH (its parent, `mkdir -p $(dirname PATH)`), for a writer
 * about to create PATH.  RT_ERR_IO as rt_mkdir_p, located at PATH. */
rt_status rt_mkdir_parents(const char *path, rt_error *err);

/* Sorts v ascending (NaNs are not expected). */
void rt_sort_doubles(double *v, size_t n);
/* The q-quantile (0 <= q <= 1) of n >= 1 ascending samples, interpolated linearly between the
 * two nearest (q = 0.5: the median; of two samples, their mean). */
double rt_quantile(const double *sorted, size_t n, double q);

/* Copies src (NULL = "") into dst of SIZE bytes, cut to fit, always terminated (SIZE > 0). */
void rt_copy(char *dst, size_t size, const char *src);

/* FNV-1a (64-bit) of text s (NULL = ""), continued from h: RT_FNV_START for a text alone;
 * rt_fnv1a(rt_fnv1a(h, a), b) hashes a then b (put a separator between them where "ab" must
 * not hash as "a" "b").  A stable hash, not a secure one.  RT_FNV_START is the start rooftune
 * has always used, a digit short of FNV's published offset basis (14695981039346656037): kept,
 * since stored texts carry its values (an attention shape's KV-lengths digest). */
#define RT_FNV_START 1469598103934665603ull
uint64_t rt_fnv1a(uint64_t h, const char *s);

/* The default tuning database: $ROOFTUNE_DB, else $XDG_DATA_HOME/rooftune/tuning.db, else
 * ~/.local/share/rooftune/tuning.db (what `rooftune tune`, `db`, `lookup`, `recheck`, `report`
 * and jobs use without --db).  Writes it into buf and returns buf; creates nothing (writers call
 * rt_mkdir_parents). */
const char *rt_default_db_path(char *buf, size_t size);

#endif
