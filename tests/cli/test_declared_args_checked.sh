#!/usr/bin/env bash
# A declared family's element counts and scalars are evaluated and checked for the problem
# before anything runs, on the model device too (it allocates nothing, so it never evaluated
# them: every one of these passed `templates` and `tune` with exit 0): counts of -1, 0, 1/0, an
# overflow, 2^62 bytes and 2^62+1 f32 elements (whose byte count wrapped to 4), scalars that do
# not fit their type.  Each is one error naming the family file, the field (args[N].count or
# .value), the argument and the value, from `templates` (the example shape) or from `tune` (the
# shape asked for).  An f32 scalar takes floating-point constants and expressions ("value":
# 0.25, "0.5 + 1/N"), an integer one refuses them saying why.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
export ROOFTUNE_CACHE_DIR="$tmp/cache"
own="$tmp/k/vscale"
mkdir -p "$own"
cp "${ROOFTUNE_SOURCE_DIR:?}"/examples/own_kernel/*.json "$ROOFTUNE_SOURCE_DIR"/examples/own_kernel/*.cu "$own/"
cp "$own/family.json" "$tmp/family.orig"
# edit ARG VALUE: sets args[ARG]'s count (buffers) or value (scalars) to VALUE (JSON)
edit() {
  python3 - "$tmp/family.orig" "$own/family.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a = d["args"][int(sys.argv[3])]
a["count" if "buffer" in a else "value"] = json.loads(sys.argv[4])
json.dump(d, open(sys.argv[2], "w"))
PY
}
n=0
# ARG|VALUE|SHAPE (empty: the example, through `templates`)|what the error must say
while IFS='|' read -r arg value shape want; do
  edit "$arg" "$value"
  if [ -z "$shape" ]; then
    ROOFTUNE_TEMPLATE_PATH="$tmp/k" "$bin" templates >"$tmp/out" 2>&1; rc=$?
  else
    ROOFTUNE_TEMPLATE_PATH="$tmp/k" timeout 300 "$bin" tune vscale --shape "$shape" --dtype f32 --device model:h200 \
      --budget 2 --db "$tmp/t.db" >"$tmp/out" 2>&1; rc=$?
  fi
  [ $rc != 0 ] || die "args[$arg] = $value${shape:+ for $shape} passed with exit 0"
  grep -q "family.json" "$tmp/out" && grep -q "args\[$arg\]" "$tmp/out" && grep -q -- "$want" "$tmp/out" ||
    die "args[$arg] = $value${shape:+ for $shape}: no '$want' naming the file and field: $(head -3 "$tmp/out")"
  grep -qiE "segmentation|abort|core dumped" "$tmp/out" && die "args[$arg] = $value crashed"
  n=$((n + 1))
done <<'LIST'
0|"-1"||buffer x has -1 elements for 1048576; a buffer needs at least one
1|"0"||buffer y has 0 elements for 1048576
0|"1/0"||division by zero
0|"N*9223372036854775807"||integer overflow in multiplication
0|"pow2(62)"||buffer x has 4611686018427387904 elements of 4 bytes for 1048576: more than the
1|"pow2(62)+1"||buffer y has 4611686018427387905 elements of 4 bytes
0|"N - 4096"|1024|buffer x has -3072 elements for 1024
1|"N * 268435456"|8192|more than the 1099511627776 bytes
2|"N * 4096"||scalar n = 4294967296 for 1048576 does not fit an i32
2|"N - 3000000000"|1048576|scalar n = -2998951424 for 1048576 does not fit an i32
2|0.25||0.25 is not an integer
3|"1e39"||scalar a = 1e+39 for 1048576 does not fit an f32
3|"1/(N-1024)"|1024|division by zero
3|"sqrt(-1)"||sqrt of a negative value
3|"5 % 2"||% takes integers
LIST
# floating-point constants and expressions for an f32 scalar
for v in 0.25 '"0.5 + 1/N"' '"sqrt(2)/2"' '-1.5e-3' 3; do
  edit 3 "$v"
  ROOFTUNE_TEMPLATE_PATH="$tmp/k" "$bin" templates >"$tmp/out" 2>&1 || die "f32 scalar = $v: templates: $(head -3 "$tmp/out")"
  ROOFTUNE_TEMPLATE_PATH="$tmp/k" timeout 300 "$bin" tune vscale --shape 4096 --dtype f32 --device model:h200 \
    --budget 1 --db "$tmp/f.db" >"$tmp/out" 2>&1 || die "f32 scalar = $v: tune: $(tail -3 "$tmp/out")"
done
[ $fail = 0 ] && echo "declared arguments: $n impossible counts and scalars refused naming the file, field and value;" \
  "5 float scalar values tuned on the model device"
exit $fail
