/* recheck.h — re-measuring a stored winner and the verdict on it: is it the same, faster,
 * slower (a regression), broken, or no longer current?  `rooftune recheck` and the nightly job
 * call it for every winner of a device; the rule lives here, not in a command.
 *
 * The rule: the winner is re-evaluated afresh (tune_run with its configuration, stored as a run
 * of its own).  It is SLOWER when the new time exceeds the stored one by more than the
 * tolerance plus both measurements' spreads, faster when it is below by as much, else the
 * same.  It FAILS when it no longer compiles, launches or verifies.  It is stale when the
 * database holds a newer version of its template or the template no longer has the
 * configuration (retune rather than re-measure); a library winner (cuBLASLt's own choice) is
 * not re-measured.  SLOWER and FAILS are regressions.
 */
#ifndef ROOFTUNE_RECHECK_H
#define ROOFTUNE_RECHECK_H

#include "db/db.h"

#define RECHECK_VERDICTS(X) \
  X(SAME, "same", 0)        \
  X(FASTER, "faster", 0)    \
  X(SLOWER, "SLOWER", 1)    \
  X(FAILS, "FAILS", 1)      \
  X(STALE, "stale", 0)      \
  X(LIBRARY, "library", 0)  \
  X(ERROR, "error", 0) /* the recheck itself could not run */

typedef enum {
#define RECHECK_ENUM(id, name, regression) RECHECK_##id,
  RECHECK_VERDICTS(RECHECK_ENUM)
#undef RECHECK_ENUM
} recheck_verdict;

/* "same", "faster", "SLOWER", ... */
const char *recheck_verdict_name(recheck_verdict v);
/* 1 for SLOWER and FAILS. */
int recheck_is_regression(recheck_verdict v);

/* The comparison alone: SAME, FASTER or SLOWER for a stored time and a new one (spreads may be
 * NAN, counting as 0; tol is a fraction: 0.05 for 5 %). */
recheck_verdict recheck_compare(double then_ms, double then_spread, double now_ms,
                                double now_spread, double tol);

typedef struct recheck_result {
  recheck_verdict verdict;
  double now_ms;    /* NAN when not re-measured */
  char detail[300]; /* why, for FAILS, stale, library and error */
} recheck_result;

/* Re-measures winner e on device spec (storing into db_path), with the per-candidate timeout
 * timeout_s (0: the device's default), into out; worker_argv is the measuring worker's command
 * (tune_options.worker_argv, given by the command line: cli_worker_argv). */
void recheck_winner(const db_entry *e, const char *device_spec, const char *db_path, double tol,
                    double timeout_s, const char *const *worker_argv, recheck_result *out);
/* The same, with TAG (may be NULL) appended to the stored run's command, so the caller can find
 * its runs again (a job marks the runs of a killed process interrupted); stop as in
 * tune_options (may be NULL). */
void recheck_winner_tagged(const db_entry *e, const char *device_spec, const char *db_path,
                           double tol, double timeout_s, const char *const *worker_argv,
                           const char *tag, volatile int *stop, recheck_result *out);

#endif
