/* report.h — one self-contained HTML page about a tuning database (`rooftune report`, and each
 * job run's report.html): no network, no script, every chart inline SVG.
 *
 * For each problem and device: the roofline of every candidate (x: arithmetic intensity in FLOP
 * per modeled DRAM byte, y: achieved FLOP/s, both log scale), under the device's memory and
 * compute roofs, each labelled with its figure and whether it was measured on the device or
 * comes from the spec table; one point per candidate (a configuration of a template: its latest
 * result), filled when measured, hollow when predicted, square when replayed, the winner ringed;
 * a table of the fastest candidates with their dominant limit and lever; the winner's time run
 * after run (the best of each tuning run, and each recheck) with regressions highlighted; and
 * at the top the problems in one table, regressions first.
 *
 * Points carry class "pt" (and "measured", "predicted" or "replayed"), one SVG element per
 * candidate, so a test can count them; each SVG of a roofline carries data-candidates.
 */
#ifndef ROOFTUNE_JOB_REPORT_H
#define ROOFTUNE_JOB_REPORT_H

#include <stddef.h>

#include "db/db.h"
#include "job/job.h"

typedef struct report_options {
  const job *job;    /* NULL: every problem in the database; else the job's problems */
  const char *title; /* NULL: the job's name, or "rooftune report" */
  double tolerance;  /* for recheck verdicts, a fraction (0: the job's, else 5 %) */
  int top;           /* rows of each candidates table (0: 10) */
} report_options;

typedef struct report_stats {
  size_t sections;    /* problem-device sections */
  size_t candidates;  /* candidates in them */
  size_t points;      /* plotted (successful, with a FLOP count) */
  size_t failed;      /* candidates without a time */
  size_t regressions; /* winners whose latest recheck is SLOWER or FAILS */
  long bytes;         /* the file's size */
} report_stats;

/* Writes the report of database d to path by fileio.h's rules (a new file renamed over a
 * regular one when complete, a device or FIFO written in place, a symbolic link followed); st
 * may be NULL.  Every value from the database reaches the page through html.h's writer, so
 * none can become markup.  RT_ERR_IO names the file when it cannot be written. */
rt_status report_write(db *d, const report_options *o, const char *path, report_stats *st,
                       rt_error *err);

#endif
