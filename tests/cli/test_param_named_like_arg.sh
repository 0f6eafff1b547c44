#!/usr/bin/env bash
# A template parameter named like an argument of its kernel (`T`, the block size of
# examples/own_kernel/vscale_ref.json, in a kernel that takes `float T`) became `#define T 256`
# and the compile said only `expected a ")"`.  Now it is refused when the template is read,
# by `templates` and by `tune`, one error naming the manifest, the parameter, the argument (its
# number and declaration) and the kernel's file and line; a derived value in the source prefix
# is held to the same.
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
# as shipped: no clash
ROOFTUNE_TEMPLATE_PATH="$tmp/k" "$bin" templates >"$tmp/out" 2>&1 || die "templates on the shipped example: $(tail -3 "$tmp/out")"
# the scale factor renamed T, the name of vscale_ref's block-size parameter
sed -i 's/float a) {/float T) {/; s/a \* x\[i\]/T * x[i]/' "$own/vscale_ref.cu"
grep -q "float T)" "$own/vscale_ref.cu" || { echo "FAIL: the fixture's edit did not apply"; exit 1; }
want='vscale_ref.json: params.T: parameter T is also the name of argument 4 of kernel vscale_ref ("float T", vscale_ref.cu line 1): its #define would replace the argument; rename one of them'
ROOFTUNE_TEMPLATE_PATH="$tmp/k" "$bin" templates >"$tmp/out" 2>&1
grep -qF "$want" "$tmp/out" || die "templates: $(cat "$tmp/out" | head -5)"
ROOFTUNE_TEMPLATE_PATH="$tmp/k" "$bin" tune vscale --shape 4096 --dtype f32 --device model:h200 --budget 1 --no-db >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] || die "tune with the clash exited $rc"
grep -qF "$want" "$tmp/out" || die "tune: $(head -5 "$tmp/out")"
grep -q 'expected a ")"' "$tmp/out" && die "tune still reached the compiler"
# a derived value in the source prefix named like an argument: the same
cp "$ROOFTUNE_SOURCE_DIR/examples/own_kernel/vscale_ref.cu" "$own/vscale_ref.cu"
python3 - "$own/vscale_vec.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["derived"] = {"n": "THREADS*UNROLL"}
json.dump(d, open(sys.argv[1], "w"))
EOF
ROOFTUNE_TEMPLATE_PATH="$tmp/k" "$bin" templates >"$tmp/out" 2>&1
grep -qF 'vscale_vec.json: derived.n: derived value n is also the name of argument 3 of kernel vscale_vec ("int n", vscale_vec.cu line 2)' "$tmp/out" ||
  die "templates, a derived value: $(head -5 "$tmp/out")"
[ $fail = 0 ] && echo "a parameter or derived value named like a kernel argument is refused when the template is read, naming both"
exit $fail
