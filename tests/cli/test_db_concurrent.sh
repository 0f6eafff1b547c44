#!/usr/bin/env bash
# Two `rooftune tune` processes (model device) write into one new database at the same time:
# both succeed, nothing says "database is locked", and both problems' results and winners are
# there; `db check` passes.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
db="$tmp/shared.db"
"$bin" tune gemm --shape 128x128x128 --dtype f32 --device model:h200 --budget 3 --db "$db" --json >"$tmp/a.json" 2>"$tmp/a.err" &
pa=$!
"$bin" tune gemm --shape 64x256x128 --dtype f32 --device model:h200 --budget 3 --db "$db" --json >"$tmp/b.json" 2>"$tmp/b.err" &
pb=$!
wait $pa || die "first tune exited $?: $(tail -3 "$tmp/a.err")"
wait $pb || die "second tune exited $?: $(tail -3 "$tmp/b.err")"
grep -qi "locked" "$tmp/a.err" "$tmp/b.err" && die "a tuner saw a locked database"
"$bin" db list --db "$db" --json >"$tmp/list.json" || die "db list"
python3 - "$tmp/list.json" <<'PY' || die "the database lacks one tuner's work"
import json, sys
d = json.load(open(sys.argv[1]))
shapes = {w["shape"] for w in d["winners"]}
assert shapes == {"128x128x128", "64x256x128"}, shapes
assert d["counts"]["runs"] == 2 and d["counts"]["results"] >= 2, d["counts"]
PY
"$bin" db check --db "$db" >/dev/null || die "db check after concurrent tuners"
[ $fail = 0 ] && echo "two concurrent tuners: both stored, no lock errors, check passes"
exit $fail
