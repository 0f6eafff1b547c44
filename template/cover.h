/* cover.h — a covering set of a search space: a few configurations in which every value of
 * every parameter the space varies appears at least once, and every value pair of the
 * parameter pairs the manifest names as interacting ("cover", manifest.h), wherever some valid
 * configuration has that value or pair.  A random sample of a space leaves code paths out (a
 * value of CLUSTER, an OVERLAP with two CONSUMERS); a covering set checks each of them once,
 * which is what tier 1 of tests/gpu/run.sh runs (`rooftune tune TEMPLATE --cover`).
 *
 * The set is chosen greedily, deterministically: each step takes the configuration that holds
 * the most values and pairs not held yet (the lowest index among equals), until all are held.
 * The greedy set is within a factor ln(items) of the smallest (set cover), which is small here:
 * the items are the values and pairs, a few dozen. */
#ifndef ROOFTUNE_COVER_H
#define ROOFTUNE_COVER_H

#include <stddef.h>

#include "core/status.h"
#include "template/manifest.h"
#include "template/space.h"

/* The covering set of s for the parameter pairs pairs[0..npairs-1] (each two parameter names
 * of s): *out (malloc'ed) holds *n configuration indices in the order chosen; *items is the
 * count of values and pairs they hold (every one the space has).  RT_ERR_INVALID names a pair's
 * parameter the space lacks. */
rt_status space_cover(const space *s, const char *const (*pairs)[2], int npairs, size_t **out,
                      size_t *n, size_t *items, rt_error *err);

/* space_cover with manifest m's "cover" pairs, as a space of its own (space_subset: the chosen
 * configurations in the space's order). */
rt_status manifest_cover_space(const manifest *m, const space *s, space **out, rt_error *err);

#endif
