#!/usr/bin/env bash
# A user's own kernel, outside the repository (a copy of examples/own_kernel, what the README's
# "Tune your own kernel" walks through): a folder with its family declared in family.json, a
# reference template and a tuned template is listed and checked by `rooftune templates`, tuned on the model device through ROOFTUNE_TEMPLATE_PATH (and --templates),
# stored, and looked up (exact and nearest).  Its reference is never tuned; the same template
# name in two folders, a broken declaration and a template of an unknown family are each one
# clear error.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
export ROOFTUNE_CACHE_DIR="$tmp/cache"
own="$tmp/my-kernels/vscale"
mkdir -p "$own"
cp "${ROOFTUNE_SOURCE_DIR:?}"/examples/own_kernel/*.json "$ROOFTUNE_SOURCE_DIR"/examples/own_kernel/*.cu "$own/"

# listed and checked, with where each came from
out=$(ROOFTUNE_TEMPLATE_PATH="$tmp/my-kernels" "$bin" templates 2>&1) || die "templates exited $?: $out"
echo "$out" | grep -q "^family vscale  (shape N; reference vscale_ref)" || die "family not listed: $out"
echo "$out" | grep -q "from $own/vscale_vec.json" || die "origin not shown: $out"
echo "$out" | grep -q "^gemm_mma " || die "the shipped templates are no longer listed beside: $out"

# tuned on the model device, stored
json=$(ROOFTUNE_TEMPLATE_PATH="$tmp/my-kernels" "$bin" tune vscale --shape 1048576 --dtype f32 \
       --device model:h200 --budget 6 --db "$tmp/t.db" --json 2>"$tmp/err") || die "tune exited $?: $(cat "$tmp/err")"
python3 - "$json" <<'PY' || die "tune json: $json"
import json, sys
d = json.loads(sys.argv[1])
assert d["timing"] == "predicted", d
assert d["evaluated"] >= 1, d
assert d["best"]["template"] == "vscale_vec", d["best"]
assert d["best"]["limit"] in ("memory", "waves", "occupancy", "launch"), d["best"]
PY
# the same with --templates instead of the environment; a rerun evaluates nothing twice
n0=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM results").fetchone()[0])' "$tmp/t.db")
json=$("$bin" tune vscale_vec --templates "$tmp/my-kernels" --shape 1048576 --dtype f32 --device model:h200 \
       --budget 6 --db "$tmp/t.db" --json 2>"$tmp/err") || die "tune --templates exited $?: $(cat "$tmp/err")"
echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["resumed"] >= 1, d' ||
  die "a rerun did not resume: $json"
python3 -c 'import sqlite3,sys; n,d=sqlite3.connect(sys.argv[1]).execute("SELECT count(*), count(DISTINCT config) FROM results WHERE run_id IN (SELECT id FROM runs WHERE problem_id=(SELECT id FROM problems WHERE shape=\"1048576\"))").fetchone(); assert n==d, (n,d)' "$tmp/t.db" ||
  die "a rerun evaluated a configuration twice (had $n0 results)"

# looked up as the runtime would serve it
out=$("$bin" lookup vscale --shape 1048576 --dtype f32 --db "$tmp/t.db" --json) || die "lookup exited $?"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["match"]=="exact" and d["template"]=="vscale_vec", d' ||
  die "lookup: $out"
out=$("$bin" lookup vscale --shape 1000000 --dtype f32 --db "$tmp/t.db" --json) || die "nearest lookup exited $?"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["match"]=="nearest", d' ||
  die "nearest lookup: $out"

# stored timings survive an unrelated manifest edit: results are keyed by what was compiled and
# launched, so adding a value to one parameter's list evaluates only the new configurations
json=$("$bin" tune vscale_vec --templates "$tmp/my-kernels" --shape 65536 --dtype f32 --device model:h200 \
       --strategy brute_force --budget 27 --db "$tmp/t.db" --json 2>"$tmp/err") || die "brute force exited $?: $(cat "$tmp/err")"
echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["evaluated"] == 27, d' || die "first pass: $json"
sed -i 's/"THREADS": \[128, 256, 512\]/"THREADS": [64, 128, 256, 512]/' "$own/vscale_vec.json"
json=$("$bin" tune vscale_vec --templates "$tmp/my-kernels" --shape 65536 --dtype f32 --device model:h200 \
       --strategy brute_force --budget 36 --db "$tmp/t.db" --json 2>"$tmp/err") || die "after the edit exited $?: $(cat "$tmp/err")"
echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["resumed"] == 27 and d["evaluated"] == 9, d' ||
  die "after adding a THREADS value: $json"

# the reference is never a candidate
ROOFTUNE_TEMPLATE_PATH="$tmp/my-kernels" "$bin" tune vscale_ref --shape 1024 --dtype f32 --device model:h200 \
  --no-db >/dev/null 2>"$tmp/err"
[ $? = 2 ] || die "tuning the reference did not exit 2"
grep -q "is the vscale family's reference" "$tmp/err" || die "reference message: $(cat "$tmp/err")"

# the same template name in two folders: one error naming both
mkdir -p "$tmp/other"
cp "$own/vscale_vec.json" "$own/vscale_vec.cu" "$tmp/other/"
ROOFTUNE_TEMPLATE_PATH="$tmp/my-kernels:$tmp/other" "$bin" tune vscale_vec --shape 1024 --dtype f32 \
  --device model:h200 --no-db >/dev/null 2>"$tmp/err"
[ $? = 1 ] || die "a duplicate template did not exit 1"
grep -q "template vscale_vec is defined twice" "$tmp/err" && grep -q "$tmp/other/vscale_vec.json" "$tmp/err" ||
  die "duplicate message: $(cat "$tmp/err")"

# a broken declaration: the file and field
sed -i 's/"dir": "out"/"dir": "output"/' "$own/family.json"
ROOFTUNE_TEMPLATE_PATH="$tmp/my-kernels" "$bin" tune vscale --shape 1024 --dtype f32 --device model:h200 \
  --no-db >/dev/null 2>"$tmp/err"
[ $? = 1 ] || die "a broken family.json did not exit 1"
grep -q "family.json: args\[1\].dir: \"output\" is not in, out or inout" "$tmp/err" || die "broken family: $(cat "$tmp/err")"
ROOFTUNE_TEMPLATE_PATH="$tmp/my-kernels" "$bin" templates >/dev/null 2>"$tmp/err"
[ $? = 1 ] || die "templates with a broken family.json did not exit 1"

# a template of a family nobody declared
rm "$own/family.json"
ROOFTUNE_TEMPLATE_PATH="$tmp/my-kernels" "$bin" templates >/dev/null 2>"$tmp/err"
[ $? = 1 ] || die "a template of an unknown family did not fail the listing"
grep -q "vscale_vec.json: family: unknown family 'vscale'" "$tmp/err" || die "unknown family: $(cat "$tmp/err")"
exit $fail
