/* verdict.h — which candidate wins, whether it is tied, and a sentence saying why it wins.
 *
 * Ties: two successful candidates are tied when their times are closer than the measurement
 * spread (measured: |a - b| <= max(spread_a, spread_b) * min(a, b)), or, for times that are
 * not measurements (the model device, a replayed file), equal to one part in 10^9.  Ties break
 * by a stated rule: fewer registers per thread (a candidate whose registers are unknown, a
 * library one, after those known), then less shared memory per block (static + dynamic), then
 * the faster time, then the earlier evaluated.  The sentence says "ties break on fewer
 * registers, then less shared memory" and the fact that decided.
 *
 * "Why this wins": one sentence comparing the winner with the runner-up (the fastest candidate
 * not tied with it) and with the vendor's pick (cuBLASLt's default: the first algorithm its
 * heuristic returns), then what tells them apart in their diagnoses: the dominant limit and how
 * close each is to its roof, the wave tail, spills, the DRAM bytes (measured when counters were
 * read) or the occupancy, e.g. "1.004x faster than the runner-up gemm_mma (0.2010 ms) and
 * 1.09x faster than cuBLASLt's default (0.2170 ms); both compute-bound, at 97 % and 96 % of the
 * roof; wins on the tail: 264 blocks fill 2 waves exactly".  Pure functions over results.
 *
 * Speed-ups are ratios of times, never percentages: "84.4 % faster" (the time saved) meant
 * 6.4x, and a reader takes it for 1.84x.  verdict_ratio writes them for every text that
 * compares two times (the sentence, recheck's and a job's lines).
 */
#ifndef ROOFTUNE_VERDICT_H
#define ROOFTUNE_VERDICT_H

#include <stddef.h>

#include "core/result.h"

#define VERDICT_EQUAL 1e-9 /* relative difference under which unmeasured times are equal */

/* 1 when a and b (both successful) are tied. */
int verdict_tied(const candidate_result *a, const candidate_result *b);

/* The tie-break order: < 0 when a goes before b. */
int verdict_tie_cmp(const candidate_result *a, const candidate_result *b);

/* The winner among the successful results of r[0..n) (of template tmpl only, when not NULL):
 * the fastest, unless others are tied with it, then the tie-break's first of that group.  Its
 * index, -1 when none succeeded; *tied (may be NULL) counts the others tied with it. */
long verdict_pick(const candidate_result *r, size_t n, const char *tmpl, size_t *tied);

/* The index of the fastest successful result of r[0..n) that is neither `win` nor in its tie
 * group (tied with the fastest)
 * (of template tmpl only, when not NULL; of another template than win's when other_template);
 * -1 when there is none. */
long verdict_runner_up(const candidate_result *r, size_t n, long win, const char *tmpl,
                       int other_template);

/* How time_ms compares with other_ms, as a ratio of the two: "1.50x faster", "6.41x faster",
 * "1.004x slower" (three decimals under 1.1x, two under 10x, then one), "as fast" within
 * 0.05 %, "not comparable" for a time that is not positive.  Returns buf. */
const char *verdict_ratio(double time_ms, double other_ms, char *buf, size_t size);

/* The winner's sentence into out: the tie (tied others counted, the tie-break's deciding fact
 * against the fastest of them, tie_other, which may be NULL), the margins over runner_up (may be
 * NULL; runner_label names it: "the runner-up gemm_mma") and vendor (may be NULL: no vendor
 * candidate, or the winner is the vendor's pick), and the diagnoses' differences. */
void verdict_sentence(const candidate_result *win, size_t tied, const candidate_result *tie_other,
                      const candidate_result *runner_up, const char *runner_label,
                      const candidate_result *vendor, char *out, size_t size);

#endif
