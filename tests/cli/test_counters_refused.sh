#!/usr/bin/env bash
# Counters a GPU cannot have counted were shown as facts: a KTT recording's 1e308 DRAM sectors
# became "inf GB", 10^15 fp32 instructions in 0.3 ms "inf TFLOP/s", an occupancy of 10^6 %
# "1000000 %".  Now a file is refused as it loads (replay, replay:FILE, db import), naming the
# counter, the file and the row: a percentage over 100, a count beyond any float, a rate over
# the spec table's fastest GPU by its margin.
set -u
bin=${ROOFTUNE_BIN:?}
fx=${ROOFTUNE_SOURCE_DIR:?}/tests/data/ktfiles/ktt_counters.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
python3 - "$fx" "$tmp" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
for name, metric, val in (("huge", "dram__sectors_read.sum", 1e308),
                          ("pct", "sm__warps_active.avg.pct_of_peak_sustained_active", 1e6),
                          ("flops", "smsp__sass_thread_inst_executed_op_fp32_pred_on.sum", 1e15),
                          ("dram", "dram__sectors_write.sum", 1e12)):
    d = json.load(open(src))
    for c in d["Results"][1]["ComputationResults"][0]["ProfilingData"]["Counters"]:
        if c["Name"] == metric:
            c["Value"] = val
    json.dump(d, open("%s/%s.json" % (out, name), "w"))
PY
"$bin" replay "$fx" --seeds 1 --budget 2 >/dev/null 2>&1 || die "the fixture itself is refused"
while IFS='|' read -r name want; do
  f="$tmp/$name.json"
  "$bin" replay "$f" --seeds 1 --budget 2 >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc = 1 ] || die "replay $name: exit $rc"
  grep -q "$f: Results\[1\].*$want" "$tmp/err" || die "replay $name: $(cat "$tmp/err")"
  grep -Eq "inf|1000000 %" "$tmp/out" && die "replay $name showed: $(cat "$tmp/out")"
  "$bin" db import "$f" --family kernel --shape 64 --db "$tmp/t.db" >/dev/null 2>"$tmp/err" \
    && die "db import $name was accepted"
  grep -q "Results\[1\].*$want" "$tmp/err" || die "db import $name: $(cat "$tmp/err")"
done <<'EOF2'
huge|counter dram__sectors_read.sum is 1e+308, beyond any GPU's count
pct|counter sm__warps_active.avg.pct_of_peak_sustained_active is 1e+06 %, over the 100 %
flops|counter smsp__sass_thread_inst_executed_op_fp32_pred_on.sum says .* TFLOP/s, over 4 x the fastest GPU
dram|counter dram__sectors_read.sum .*dram__sectors_write.sum.* says .* GB/s, over 4 x the fastest GPU
EOF2
[ $fail = 0 ] && echo "counters outside a GPU's limits are refused naming the counter, file and row"
exit $fail
