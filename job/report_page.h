/* report_page.h — the report's page drawn from plain data: report.c reads the data from a
 * database, the escaping test and the fuzz target make it up.  Every string in it, whatever it
 * holds, reaches the page through the HTML writer (html.h), so none can become markup.  What
 * the page shows is report.h's. */
#ifndef ROOFTUNE_JOB_REPORT_PAGE_H
#define ROOFTUNE_JOB_REPORT_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "job/html.h"
#include "job/report.h"
#include "model/gpu_spec.h"
#include "tuner/recheck.h"

/* One candidate: a template's configuration on one problem and device, its latest result. */
typedef struct report_cand {
  int section; /* index into report_page.sec */
  char *tmpl, *config, *toolkit, *limit, *lever;
  char status[24]; /* rt_status_name() of the result */
  timing_kind timing;
  char checked_on[4]; /* where its output was checked: "gpu", "sim", "" */
  double ms;          /* NAN when it failed */
  double intensity;   /* FLOP per modeled DRAM byte */
  double achieved;    /* FLOP/s */
  int path;           /* the compute_path it ran on (results.path); -1 unknown (a row
                              stored before schema 7) */
  double bytes_per_s; /* DRAM bytes/s: measured bytes where counters were read, else the
                         model's; NAN unknown */
  double roof_frac;   /* of the nearer roof (the diagnosis's larger fraction); NAN unknown */
  int registers;      /* per thread (ptxas); 0 unknown */
  double occupancy;   /* measured where counters were read, else calculated; NAN unknown */
  int counters;       /* 1: bytes and occupancy measured by the GPU's counters */
  int verified;       /* 1: its output passed the reference check on the GPU that measured it */
  size_t seen;        /* its first result's place among those read (the order of evaluation) */
  uint64_t hash;      /* report.c's table */
} report_cand;

/* One compute roof: the peak of an instruction path (gpu_spec.h's COMPUTE_PATHS, whose label
 * the chart prints). */
typedef struct report_roof {
  double peak;  /* FLOP/s; 0 unknown */
  int measured; /* 1: this device's measured rate, 0: the spec table's */
  int present;  /* drawn: a plotted candidate computed on this path */
} report_roof;

/* A section's roofs: the memory slope and one compute roof per path its candidates ran on
 * (CUDA-core fp32 for gemm_skinny, tensor-core f16/bf16 for gemm_mma, tf32 only where a result
 * used it; a declared family computes on the CUDA cores). */
typedef struct report_roofs {
  double bw; /* bytes/s; 0 unknown */
  int bw_measured;
  char bw_basis[96]; /* what bw is (roofline_bw_basis): "measured here", "measured on an NVIDIA
                        H200", "90 % of the datasheet"; "" as bw_measured says */
  report_roof path[PATH_COUNT]; /* by compute_path */
  char gpu[128];                /* whose roofs (a db_device name fits) */
} report_roofs;

/* One problem on one device. */
typedef struct report_section {
  char family[16], shape[64], dtype[8], layout[8];
  db_device device;
  size_t ncand, npoints, nfailed;
  int have_winner;
  db_entry winner; /* the fastest current winner */
  int regression;  /* its latest recheck is SLOWER or FAILS */
  recheck_verdict verdict;
  int have_verdict;
  double recheck_ms;
  char last_run[32];
  report_roofs roofs;
  const db_run_info *runs; /* the section's runs, oldest first (a slice of report.c's copy) */
  size_t nruns;
} report_section;

typedef struct report_page {
  const char *title;
  const char *source;    /* the database's path */
  const char *generated; /* "2026-12-01 02:30 UTC" */
  const report_section *sec;
  size_t nsec;
  const report_cand *const *order; /* the candidates grouped by section, each group by time */
  const size_t *start;             /* section i's are order[start[i] .. start[i+1]) */
  size_t ncand;
  double tol; /* for recheck verdicts, a fraction */
  int top;    /* rows of each candidates table */
  size_t regressions;
} report_page;

/* 1 when candidate c has a point on the roofline (a time and a FLOP count). */
int report_plottable(const report_cand *c);

/* Writes the page onto h; adds the points, candidates and failures drawn to st. */
void report_page_write(const report_page *p, html *h, report_stats *st);

#endif
