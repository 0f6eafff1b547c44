#!/usr/bin/env bash
# tests/gpu/run.sh without a GPU: one line saying so and exit 0, at once (a bounded wait, no
# traceback); `--plan`: every tier-1 and tier-2 line estimated from its model-device dry run
# (candidates counted, nothing compiled), and tiers 1 and 2 within the 420 s a lease allows.
set -u
src=${ROOFTUNE_SOURCE_DIR:?}
export ROOFTUNE_BIN=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export ROOFTUNE_CACHE_DIR="$tmp/cache" ROOFTUNE_BUILD_DIR="$tmp/no-build"

if ! timeout 4 nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  out=$(PATH=/usr/bin:/bin timeout 10 bash "$src/tests/gpu/run.sh" 2>&1)
  rc=$?
  [ $rc = 0 ] || fail "run.sh without a GPU exited $rc: $out"
  [ "$(echo "$out" | wc -l)" = 1 ] || fail "run.sh without a GPU said more than one line: $out"
  echo "$out" | grep -q "no GPU here" || fail "no 'no GPU here' line: $out"
fi

out=$(timeout 600 bash "$src/tests/gpu/run.sh" --plan 2>"$tmp/err")
rc=$?
[ $rc = 0 ] || fail "--plan exited $rc: $(cat "$tmp/err")"
if echo "$out" | grep -q Traceback || grep -q Traceback "$tmp/err"; then fail "a traceback: $out $(cat "$tmp/err")"; fi
last=$(echo "$out" | tail -1)
echo "$last" | grep -Eq '^tiers 1\+2: [0-9]+ s, [0-9]+ compiles left$' || fail "last line: $last"
secs=$(echo "$last" | sed 's/^tiers 1+2: \([0-9]*\) s.*/\1/')
[ "$secs" -le 420 ] || fail "tiers 1 and 2 need $secs s, over the 420 s: $out"
# every table line of tiers 1 and 2 is there, with candidates
lines=$(grep -v '^#' "$src/tests/gpu/tiers.txt" | awk 'NF >= 7 && ($1 == 1 || $1 == 2)' | wc -l)
rows=$(echo "$out" | awk '($1 == 1 || $1 == 2) && $(NF-2) > 0' | wc -l)
[ "$rows" = "$lines" ] || fail "$rows plan rows with candidates for $lines table lines: $out"
echo "$out" | grep -q "^3 .*tests .*as time allows" || fail "tier 3 steps are not listed: $out"
echo "gpu run ok ($last)"
