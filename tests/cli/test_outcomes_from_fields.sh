#!/usr/bin/env bash
# What a result was is read from its fields, never from the start of its message: a recording
# whose failed configurations' texts read "same cubin and launch as ..." and "stopped after 1
# timed runs ..." replays as two failures, not as one deduplicated and one stopped-early
# candidate (tune used to print "saved: 1 candidates with a cubin measured before ..., 1 stopped
# early" for them, and kept the second out of its fastest few).
set -u
bin=${ROOFTUNE_BIN:?}
fx=${ROOFTUNE_SOURCE_DIR:?}/tests/data/ktfiles
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
python3 - "$fx/small.json" "$tmp/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = [k for k, v in d["cache"].items() if isinstance(v["time"], float)]
d["cache"][keys[0]]["time"] = "same cubin and launch as a planted row: measured once"
d["cache"][keys[1]]["time"] = "stopped after 1 timed runs: every one over 3x the best so far"
json.dump(d, open(sys.argv[2], "w"))
PY
"$bin" tune fixture_kernel --device "replay:$tmp/s.json" --budget 100 --db "$tmp/k.db" >"$tmp/out" 2>&1 ||
  die "tune: $(tail -3 "$tmp/out")"
grep -q "^saved:" "$tmp/out" && die "planted failure texts counted as saved: $(grep '^saved:' "$tmp/out")"
"$bin" tune fixture_kernel --device "replay:$tmp/s.json" --budget 100 --db "$tmp/k2.db" --json >"$tmp/j" 2>"$tmp/err" ||
  die "tune --json: $(tail -3 "$tmp/err")"
python3 - "$tmp/j" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
s = d["saved"]
if s["same_cubin"] or s["stopped_early"]:
    print("FAIL: planted failure texts counted as saved:", s)
    sys.exit(1)
PY
[ $fail = 0 ] && echo "outcomes from fields: 2 failures whose texts read like shortcuts replay as failures"
exit $fail
