#!/usr/bin/env bash
# More budget means more search, for a family of your own as the Quick start says ("the same
# command again goes on searching"): the roof rule stops vscale_vec's first tune after a few
# evaluations; the same command again evaluates its whole --budget anew (it evaluated 0 and said
# "24 of the budget's 24 evaluations not spent"); once every configuration is measured, the note
# says in one line that the space is exhausted and how to go further.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
export ROOFTUNE_CACHE_DIR="$tmp/cache"
mkdir -p "$tmp/k"
cp -r "${ROOFTUNE_SOURCE_DIR:?}/examples/own_kernel" "$tmp/k/vscale"
tune() { "$bin" tune vscale --templates "$tmp/k" --shape 16777216 --dtype f32 --device model:h200 --budget "$1" \
  --db "$tmp/t.db" --json 2>/dev/null; }
ev() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["evaluated"], d.get("note", ""))'; }
first=$(tune 24 | ev)
n1=${first%% *}
[ "$n1" -lt 24 ] && echo "$first" | grep -q "the same command again searches on" || die "first run: $first"
second=$(tune 20 | ev)
[ "${second%% *}" = 20 ] || die "the same command again evaluated ${second%% *} of 20: $second"
echo "$second" | grep -q "vscale_vec was stopped at .* by an earlier run: searched on" || die "second run's note: $second"
third=$(tune 24 | ev) # 27 configurations in all: the space runs out
echo "$third" | grep -q "evaluations not spent: every configuration of vscale_vec is measured (its space is exhausted: more values for its parameters" ||
  die "the exhausted space is not said: $third"
[ $fail = 0 ] && echo "the same command again searched on: $n1, then 20, then the rest of the space, said so"
exit $fail
