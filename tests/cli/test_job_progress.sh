#!/usr/bin/env bash
# `job run`'s progress comes in order: a fresh problem (rechecked first) after one to tune in the
# file was said as [2/2] before [1/2]; now the lines count 1, 2, ... as they are said.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ROOFTUNE_CACHE_DIR="$tmp/cache"
job() { # job FILE PROBLEM...
  local f=$1; shift
  { printf '{"rooftune_job": 1, "name": "p", "database": "t.db", "device": "model:h200",\n "problems": ['
    local sep=""
    for p in "$@"; do printf '%s{"target": "softmax", "shape": "%s", "dtype": "f32", "budget": 2}' "$sep" "$p"; sep=", "; done
    printf ']}\n'; } >"$f"
}
job "$tmp/b.json" 128x128
job "$tmp/a.json" 64x64 128x128
"$bin" job run "$tmp/b.json" >"$tmp/b.out" 2>&1 || { echo "FAIL: the first job: $(tail -3 "$tmp/b.out")"; exit 1; }
"$bin" job run "$tmp/a.json" >"$tmp/a.out" 2>&1 || { echo "FAIL: the second job: $(tail -3 "$tmp/a.out")"; exit 1; }
seq=$(grep -o '^\[[0-9]*/2\]' "$tmp/a.out" | tr -d '[]' | cut -d/ -f1 | tr '\n' ' ')
[ "$seq" = "1 2 " ] || { echo "FAIL: the progress came as '$seq', not '1 2': $(cat "$tmp/a.out")"; exit 1; }
grep -q '^\[1/2\] softmax 128x128 f32: fresh' "$tmp/a.out" || { echo "FAIL: the fresh problem is not said first: $(cat "$tmp/a.out")"; exit 1; }
echo "job run's progress: [1/2], [2/2] in the order said"
