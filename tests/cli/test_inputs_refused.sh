#!/usr/bin/env bash
# Inputs from the command line that were answered or cut instead of refused:
#   - `lookup` answered shapes `tune` refuses (a tn layout, a zero or too large dimension) and
#     printed "nothing tuned" with exit 0 for malformed ones: now it reads the shape as the
#     family does and exits 2 naming --shape, --dtype or the family;
#   - `db import` cut a family name to 15 characters and a dtype to 7, so two families could
#     become one problem: now a name that does not fit is refused;
#   - `lookup` (and librooftune) cut a shape at 191 characters and served another problem
#     ('0' x 178 + 1024x1024x1024 as 1024x1024x102): the whole text is read;
#   - `tune FAMILY --strategy nope` blamed the budget: an unknown strategy is refused for every
#     target, naming the strategies;
#   - `tune --cover --budget 1` evaluated 1 of the covering configurations and exited 0: a budget
#     below the covering set is refused saying what it needs.
set -u
bin=${ROOFTUNE_BIN:?}
fx=${ROOFTUNE_SOURCE_DIR:?}/tests/data/ktfiles
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
db="$tmp/t.db"
"$bin" db import "$fx/small.json" --family gemm --shape 64x64x64 --dtype f32 --db "$db" >/dev/null \
  || { echo "FAIL: cannot make the database"; exit 1; }

"$bin" lookup gemm --shape 64x64x64 --dtype f32 --db "$db" >/dev/null || die "a good lookup failed"
while IFS='|' read -r args want; do
  # shellcheck disable=SC2086
  "$bin" lookup $args --db "$db" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc = 2 ] || die "lookup $args: exit $rc, expected 2 ($(cat "$tmp/out"))"
  grep -q -- "$want" "$tmp/err" || die "lookup $args: no '$want' in: $(cat "$tmp/err")"
  grep -q "nothing tuned" "$tmp/out" && die "lookup $args answered 'nothing tuned'"
done <<'EOF'
gemm --shape 64x64x64:tn --dtype f32|row-major
gemm --shape 0x64x64 --dtype f32|--shape
gemm --shape 64x64 --dtype f32|--shape
gemm --shape 64x64x64:zz --dtype f32|nn or nt
gemm --shape 4294967296x1x1 --dtype f32|larger than
gemm --shape 64x64x64 --layout tt --dtype f32|row-major
gemm --shape 64x64x64 --dtype f64|--dtype
nosuchfamily --shape 64 --dtype f32|not a kernel family
attention --shape 1x8x128x100 --dtype f16|multiple of 8
EOF

# db import: names that do not fit are refused, not cut
"$bin" db import "$fx/small.json" --family a_family_name_longer_than_15 --shape 64x64 --db "$db" \
  >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] || die "a 28-character family: exit $rc"
grep -q "longer than 15 characters" "$tmp/err" || die "family: $(cat "$tmp/err")"
"$bin" db import "$fx/small.json" --family kernel --dtype bfloat16x --shape 64x64 --db "$db" \
  >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] || die "a 9-character dtype: exit $rc"
grep -q "longer than 7 characters" "$tmp/err" || die "dtype: $(cat "$tmp/err")"
long=$(printf 't%.0s' $(seq 70))
"$bin" db import "$fx/small.json" --template "$long" --shape 64x64 --db "$db" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] || die "a 70-character template: exit $rc"
n=$("$bin" db list --db "$db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"]["problems"])')
[ "$n" = 1 ] || die "a refused import stored a problem ($n problems)"
# a long shape is read whole: never another problem's
"$bin" db import "$fx/small.json" --family gemm --shape 1024x1024x102 --dtype f32 --db "$tmp/s.db" \
  >/dev/null || die "cannot import 1024x1024x102"
"$bin" db import "$fx/small.json" --family gemm --shape 1024x1024x1024 --dtype f32 --db "$tmp/s.db" \
  >/dev/null || die "cannot import 1024x1024x1024"
zeros=$(printf '0%.0s' $(seq 178))
"$bin" lookup gemm --shape "${zeros}1024x1024x1024" --dtype f32 --db "$tmp/s.db" --allow-mismatch \
  >"$tmp/out" 2>&1
grep -Eq '1024x1024x102([^0-9]|$)' "$tmp/out" && die "a 192-character shape served 1024x1024x102: $(cat "$tmp/out")"
grep -q '1024x1024x1024' "$tmp/out" || die "a 192-character shape: $(cat "$tmp/out")"

# tune: an unknown strategy, for a family and a template alike; --cover below its set
for target in gemm gemm_mma; do
  "$bin" tune $target --shape 256x256x256 --dtype f16 --device model:h200 --no-db --strategy nope \
    >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc = 2 ] || die "tune $target --strategy nope: exit $rc"
  grep -q "unknown strategy 'nope'.* the strategies are .*bayes" "$tmp/err" \
    || die "tune $target --strategy nope: $(cat "$tmp/err")"
done
"$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --device model:h200 --no-db --cover --budget 1 \
  >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] || die "tune --cover --budget 1: exit $rc"
grep -q -- "--cover evaluates [0-9]* covering configurations (gemm_mma [0-9]*) and the budget is 1" \
  "$tmp/err" || die "tune --cover --budget 1: $(cat "$tmp/err")"
"$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --device model:h200 --no-db --cover --budget 64 \
  >"$tmp/out" 2>"$tmp/err" || die "tune --cover --budget 64: $(cat "$tmp/err")"
[ $fail = 0 ] && echo "lookup reads shapes as tune does; import refuses names it would cut"
exit $fail
