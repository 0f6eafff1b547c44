#!/usr/bin/env bash
# `rooftune templates`: lists fixture manifests (text and JSON), says plainly when there are
# none (exit 0), reports a broken manifest with its file and field (exit 1), rejects bad flags.
set -u
bin=${ROOFTUNE_BIN:?}
src=${ROOFTUNE_SOURCE_DIR:?}
valid=$src/tests/data/manifests/valid
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT

out=$(ROOFTUNE_TEMPLATE_DIR=$empty "$bin" templates) || { echo "FAIL: empty dir exited $?"; exit 1; }
echo "$out" | grep -q "^no templates in $empty" || { echo "FAIL: empty dir said: $out"; exit 1; }

out=$(ROOFTUNE_TEMPLATE_DIR=$valid "$bin" templates) || { echo "FAIL: templates exited $?"; exit 1; }
echo "$out" | grep -q "^idents  (family gemm; dtypes f16, bf16; archs sm_80, sm_90)" ||
  { echo "FAIL: no idents line in: $out"; exit 1; }
echo "$out" | grep -q "^  LAYOUT_B     col, row" || { echo "FAIL: no LAYOUT_B values in: $out"; exit 1; }

json=$("$bin" templates --json --dir "$valid") || { echo "FAIL: --json exited $?"; exit 1; }
python3 - "$json" <<'PY' || exit 1
import json, sys
d = json.loads(sys.argv[1])
names = [t["name"] for t in d["templates"]]
assert names == ["chain", "full", "gemm_like", "idents", "late"], names
g = d["templates"][2]
assert g["family"] == "gemm" and g["dtypes"] == ["f16", "bf16"], g
assert g["params"]["BLOCK_M"] == [64, 128, 256] and list(g["params"])[0] == "BLOCK_M", g["params"]
assert d["templates"][1]["params"]["Z"] == ["a", "b", "c"]
assert g["derived"]["THREADS"] == "WARPS_M*WARPS_N*32"
assert d["errors"] == []
print("templates ok:", len(names), "fixture manifests")
PY

err=$("$bin" templates --dir "$src/tests/data/manifests/invalid" 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: broken manifests exited $rc, expected 1"; exit 1; }
echo "$err" | grep -q "unknown_device.json: constraints\[2\]: column 9: unknown device fact" ||
  { echo "FAIL: no located error in: $err"; exit 1; }

# every template the project ships loads
if [ -d "$src/templates" ]; then
  out=$(ROOFTUNE_TEMPLATE_DIR=$src/templates "$bin" templates 2>&1) ||
    { echo "FAIL: a shipped template does not load: $out"; exit 1; }
fi

"$bin" templates --bogus >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: bad option did not exit 2"; exit 1; }
exit 0
