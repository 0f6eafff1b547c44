/* test_recheck.c — the verdict rule of a re-measured winner: slower only beyond the tolerance
 * plus both spreads, faster symmetrically, NAN spreads count as 0, and which verdicts are
 * regressions. */
/* stages: tune */
#include <math.h>

#include "test.h"
#include "tuner/recheck.h"

TEST_CASE(compare) {
  CHECK_INT(recheck_compare(1.0, 0.0, 1.04, 0.0, 0.05), RECHECK_SAME);
  CHECK_INT(recheck_compare(1.0, 0.0, 1.06, 0.0, 0.05), RECHECK_SLOWER);
  CHECK_INT(recheck_compare(1.0, 0.02, 1.06, 0.0, 0.05), RECHECK_SAME); /* within tol + spread */
  CHECK_INT(recheck_compare(1.0, 0.02, 1.10, 0.02, 0.05), RECHECK_SLOWER);
  CHECK_INT(recheck_compare(1.0, NAN, 1.06, NAN, 0.05), RECHECK_SLOWER);
  CHECK_INT(recheck_compare(1.0, 0.0, 0.90, 0.0, 0.05), RECHECK_FASTER);
  CHECK_INT(recheck_compare(1.0, 0.0, 0.96, 0.0, 0.05), RECHECK_SAME);
  CHECK(recheck_is_regression(RECHECK_SLOWER));
  CHECK(recheck_is_regression(RECHECK_FAILS));
  CHECK(!recheck_is_regression(RECHECK_SAME) && !recheck_is_regression(RECHECK_FASTER));
  CHECK(!recheck_is_regression(RECHECK_STALE) && !recheck_is_regression(RECHECK_ERROR));
  CHECK_STR(recheck_verdict_name(RECHECK_SLOWER), "SLOWER");
  CHECK_STR(recheck_verdict_name(RECHECK_LIBRARY), "library");
}

TEST_LIST(TEST_ENTRY(compare))
