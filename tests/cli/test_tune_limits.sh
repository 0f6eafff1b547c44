#!/usr/bin/env bash
# `rooftune tune` where its budgets and surroundings are hostile:
#   - a --budget below the number of templates evaluated nothing: now each template in order
#     gets one until the budget is spent, and the note names those left out;
#   - --seconds started every template anyway (2 s ran 7.7 s): a template is not started once
#     the time is spent, and the note says so;
#   - an unusable cubin cache was never reported: the note says the run compiled without it;
#   - two manifests of one name were both tuned: now an error naming both files.
set -u
bin=${ROOFTUNE_BIN:?}
src=${ROOFTUNE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get(sys.argv[2], ''))" "$@"; }

# f16 on the H200 model: gemm_mma and gemm_wgmma both have candidates for this shape
"$bin" tune gemm --shape 256x256x256 --dtype f16 --device model:h200 --budget 1 --json --db "$tmp/b1.db" \
  >"$tmp/b1.json" 2>"$tmp/b1.err" || die "--budget 1: $(tail -2 "$tmp/b1.err")"
[ "$(field "$tmp/b1.json" evaluated)" = 1 ] || die "--budget 1 evaluated $(field "$tmp/b1.json" evaluated), expected 1"
field "$tmp/b1.json" note | grep -q "not searched: the evaluation budget" || die "--budget 1: no note: $(field "$tmp/b1.json" note)"

# a cold cubin cache: the first template's first batch of compiles alone takes longer than 1 s
ROOFTUNE_CACHE_DIR="$tmp/cold" "$bin" tune gemm --shape 256x256x256 --dtype f16 --device model:h200 --budget 64 \
  --seconds 1 --json --db "$tmp/s.db" >"$tmp/s.json" 2>"$tmp/s.err" || die "--seconds: $(tail -2 "$tmp/s.err")"
field "$tmp/s.json" note | grep -q "not searched: the time budget" || die "--seconds: no note: $(field "$tmp/s.json" note)"
n=$(field "$tmp/s.json" evaluated)
[ "$n" -le 16 ] || die "--seconds 1 evaluated $n candidates: more than one batch"

ROOFTUNE_CACHE_DIR=/dev/null/cache "$bin" tune gemm_simt --shape 128x128x128 --dtype f32 --device model:h200 \
  --budget 1 --json --db "$tmp/c.db" >"$tmp/c.json" 2>"$tmp/c.err" || die "no cache: $(tail -2 "$tmp/c.err")"
field "$tmp/c.json" note | grep -q "without the cubin cache" || die "an unusable cache was not reported: $(field "$tmp/c.json" note)"

mkdir -p "$tmp/t"
cp "$src/templates/gemm/gemm_simt.cu" "$tmp/t/"
for f in a b; do
  python3 - "$src/templates/gemm/gemm_simt.json" "$tmp/t/mine_$f.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["name"] = "my_simt"
json.dump(m, open(sys.argv[2], "w"))
PY
done
"$bin" tune gemm --templates "$tmp/t" --shape 128x128x128 --dtype f32 --device model:h200 --budget 2 \
  --db "$tmp/d.db" >/dev/null 2>"$tmp/d.err"; rc=$?
[ $rc = 1 ] || die "a name defined twice: exit $rc"
grep -q "my_simt is defined twice" "$tmp/d.err" && grep -q "mine_a.json" "$tmp/d.err" && grep -q "mine_b.json" "$tmp/d.err" \
  || die "a name defined twice: $(cat "$tmp/d.err")"
[ $fail = 0 ] && echo "budgets below the templates, time budgets, an unusable cache and a doubled name are handled and said"
exit $fail
