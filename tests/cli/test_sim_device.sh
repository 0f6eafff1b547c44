#!/usr/bin/env bash
# The sim device (issue 34 point 5): `--device sim:h200` (and `sim` alone) computes every
# candidate's output on the CPU through the families' own GPU code on the sim's driver table and
# checks it against the family's reference; times are the model's.  A gemm, an attention decode
# and an attention prefill problem end with a winner whose checked_on is "sim" (verified stays
# false: no GPU ran it), stored so in the database; the shipped softmax passes, and a copy of it
# whose kernel reads one vector past each row (one element at VEC=1: past the input at the last
# row) is refused with WRONG and the sim's out-of-bounds message, and is never a winner.
# Small shapes: the sim runs a block in milliseconds, a configuration's host compile in seconds.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
src=${ROOFTUNE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
command -v "${CXX:-g++}" >/dev/null || { echo "skip: no host C++ compiler for the sim"; exit 77; }
export ROOFTUNE_CACHE_DIR="$tmp/cache"
db="$tmp/t.db"

# a winner checked on the sim, said so in --json (best, its template's best, every result) and
# stored with checked_on 'sim'
winner() { # NAME TARGET SHAPE DTYPE BUDGET [DEVICE]
  local name=$1 target=$2 shape=$3 dtype=$4 budget=$5 dev=${6:-sim:h200}
  "$bin" tune "$target" --shape "$shape" --dtype "$dtype" --device "$dev" --budget "$budget" \
    --db "$db" --json >"$tmp/$name.json" 2>"$tmp/$name.err" || {
    die "$name: tune exited $?: $(tail -3 "$tmp/$name.err")"
    return
  }
  python3 - "$tmp/$name.json" <<'EOF' || die "$name: $(head -c 3000 "$tmp/$name.json")"
import json, sys
d = json.load(open(sys.argv[1]))
b = d["best"]
assert d["device"].startswith("sim:") and d["timing"] == "predicted", d["device"]
assert b and b["checked_on"] == "sim" and b["verified"] is False, b
assert all(t["checked_on"] == "sim" for t in d["best_per_template"].values()), d["best_per_template"]
assert all(r["checked_on"] == "sim" for r in d["results"] if r["status"] == "OK"), d["results"]
assert all(r["checked_on"] is None for r in d["results"] if r["status"] != "OK"), d["results"]
EOF
}

winner gemm gemm 96x160x128 bf16 2
winner decode attention 1x32:8x1:4096x128 bf16 1 sim # the issue's, checked on 1x32:8x1:256x128
winner prefill attention 1x4:2x200x64:causal bf16 1
winner softmax softmax 33x1000 f32 2
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["checked_shape"] is None, d["checked_shape"]' "$tmp/gemm.json" ||
  die "a small problem is checked as it is"
# too large for the CPU: checked on a smaller problem with the same remainders mod 256 and the
# same order of dimensions (1100 > 600 stays so), and said so
winner large gemm 1100x600x96 bf16 1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["checked_shape"]=="588x344x96" and "outputs checked on the sim at 588x344x96" in d["note"], (d["checked_shape"], d.get("note"))' "$tmp/large.json" ||
  die "the large problem's check: $(head -c 1500 "$tmp/large.json")"
n=$(sqlite3 "$db" "SELECT count(*) FROM results WHERE checked_on = 'sim' AND status = 'OK' AND verified = 0" 2>/dev/null)
[ "${n:-0}" -ge 6 ] || die "the database holds $n results checked on the sim (want 6 or more)"

# every reader of a winner says where it was checked: lookup --json, db list, db show, the export
out=$("$bin" lookup gemm --shape 96x160x128 --dtype bf16 --db "$db" --json) || die "lookup exited $?"
echo "$out" | python3 -c 'import json,sys; m=json.load(sys.stdin); assert m["checked_on"]=="sim" and m["verified"] is False and m["runnable"] is False, m' ||
  die "lookup --json: $out"
"$bin" db list --db "$db" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["winners"] and all(w["checked_on"]=="sim" and not w["verified"] for w in d["winners"]), d["winners"]' ||
  die "db list --json"
"$bin" db list --db "$db" | grep -q "^gemm .* predicted  *sim  " || die "db list: $("$bin" db list --db "$db")"
"$bin" db show --db "$db" | grep -q "OK .* ms predicted, not verified (checked on the sim)" || die "db show: $("$bin" db show --db "$db" | head -3)"
"$bin" db export --db "$db" -o "$tmp/x.json" || die "db export exited $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); rs=d["results"]; assert rs and all(r["checked_on"]=="sim" for r in rs if r["status"]=="OK"), rs[:2]' "$tmp/x.json" ||
  die "db export: $(head -c 600 "$tmp/x.json")"

"$bin" report --db "$db" -o "$tmp/r.html" >/dev/null 2>&1 || die "report exited $?"
grep -q "predicted, checked on the sim" "$tmp/r.html" || die "the report does not say what was checked on the sim"

# the text says what the check was
out=$("$bin" tune softmax --shape 33x1000 --dtype f32 --device sim --budget 1 --db "$db" 2>&1)
echo "$out" | grep -q "checked on the sim: its output, computed on the CPU, matches the reference" ||
  die "tune's text does not say the winner was checked on the sim: $out"

# a copy of the softmax family whose kernel reads one vector past each row
k="$tmp/kernels/smoob"
mkdir -p "$k"
for f in "$src"/templates/softmax/*; do
  b=$(basename "$f")
  sed 's/softmax/smoob/g' "$f" >"$k/${b//softmax/smoob}"
done
sed -i 's|const int nv = live ? cols / VEC : 0;|const int nv = live ? cols / VEC + 1 : 0;|' "$k/smoob_rows.cu"
grep -q 'cols / VEC + 1' "$k/smoob_rows.cu" || { echo "FAIL: the bug was not written into $k/smoob_rows.cu"; exit 1; }
"$bin" tune smoob --templates "$tmp/kernels" --shape 33x1000 --dtype f32 --device sim:h200 --budget 2 \
  --db "$db" --json >"$tmp/oob.json" 2>"$tmp/oob.err"
python3 - "$tmp/oob.json" <<'EOF' || die "the reading-past softmax: $(head -c 3000 "$tmp/oob.json") $(tail -3 "$tmp/oob.err")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["best"] is None, d["best"]
rs = d["results"]
assert rs and all(r["status"] == "ERR_WRONG_RESULT" and r["checked_on"] is None for r in rs), rs
assert all("out of bounds" in r["detail"] or "out-of-bounds" in r["detail"] for r in rs), rs
EOF
n=$(sqlite3 "$db" "SELECT count(*) FROM results WHERE status = 'OK' AND config LIKE '%ROW_THREADS%' AND detail LIKE '%bounds%'" 2>/dev/null)
[ "${n:-0}" = 0 ] || die "a refused candidate was stored as OK"

exit $fail
