# tier: 1
# sourced by tests/gpu/run.sh (its head names the helpers).  Every template through its
# covering set on the boundary shapes of tests/gpu/tiers.txt (the "cover" lines): every
# candidate checked against the family's reference before it is timed.
run_table 1 cover || step_fail=1
