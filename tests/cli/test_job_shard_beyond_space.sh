#!/usr/bin/env bash
# More shards than a problem has configurations: `job run --shard 0/100000` on a one-problem job
# (which splits its candidates over the shards) finds its part of the space empty, which is
# nothing to do, not a failure: exit 0, "nothing to do" saying why, 0 failed in the summary, and
# `job status` of that shard calls the problem fresh with the reason (it recorded it FAILED,
# and every later run tried again).
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
cat >"$tmp/one.json" <<'EOF'
{"rooftune_job": 1, "name": "one", "database": "one.db", "device": "model:h200", "recheck": false,
 "defaults": {"budget": 4}, "problems": [{"target": "softmax", "shape": "128x2048", "dtype": "f32"}]}
EOF
for s in 0 99999; do
  "$bin" job run "$tmp/one.json" --shard $s/100000 >"$tmp/out" 2>&1 || die "shard $s/100000 exited $?: $(cat "$tmp/out")"
  grep -q "nothing to do: shard $s/100000 holds no configuration" "$tmp/out" || die "shard $s/100000: $(head -2 "$tmp/out")"
  grep -q "FAILED" "$tmp/out" && die "shard $s/100000 says FAILED: $(head -2 "$tmp/out")"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["failed"] == 0, d' \
    "$tmp/one-out/summary-shard-$s-of-100000.json" || die "shard $s/100000: the summary counts a failure"
  "$bin" job status "$tmp/one.json" --shard $s/100000 --json >"$tmp/st" 2>&1 || die "status of shard $s"
  python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["problems"][0]; assert p["state"] == "fresh" and "no configuration" in p["reason"], p' \
    "$tmp/st" || die "status of shard $s/100000: $(cat "$tmp/st")"
done
# a shard that holds configurations still tunes them
"$bin" job run "$tmp/one.json" --shard 0/2 >"$tmp/out" 2>&1 || die "shard 0/2: $(cat "$tmp/out")"
grep -q "tuned" "$tmp/out" || die "shard 0/2 did not tune: $(head -2 "$tmp/out")"
[ $fail = 0 ] && echo "shards beyond the space: nothing to do, not failed; status fresh with the reason"
exit $fail
