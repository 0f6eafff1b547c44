#!/usr/bin/env bash
# `rooftune templates`: lists fixture manifests (text and JSON), says plainly when there are
# none (exit 0), reports a broken manifest with its file and field (exit 1), rejects bad flags;
# on a copy of examples/own_kernel: --check compiles each template's covering set on every
# architecture it names (an error one branch or one architecture reaches is found, named with its
# configuration and architecture; --quick compiles one configuration) and reports a CUDA syntax error with the source file and the compiler's line, a missing reference
# template is blamed once on family.json's "reference", and JSON files that are not manifests
# (an editor's settings, a result) are skipped with a note by `templates` and by `tune`; every
# shipped template compiles under --check; the README's lists of families and of the GEMM and
# attention templates are rooftune's.
set -u
bin=${ROOFTUNE_BIN:?}
src=${ROOFTUNE_SOURCE_DIR:?}
valid=$src/tests/data/manifests/valid
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
fresh_kernel() { rm -rf "$empty/k"; mkdir -p "$empty/k"; cp -r "$src/examples/own_kernel" "$empty/k/vscale"; }

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

# every template the project ships loads, and one configuration of each compiles (--quick: the
# covering sets on every architecture are hundreds of compiles; tests/gpu/run.sh tier 1 runs them)
if [ -d "$src/templates" ]; then
  out=$(ROOFTUNE_TEMPLATE_DIR=$src/templates "$bin" templates 2>&1) ||
    { echo "FAIL: a shipped template does not load: $out"; exit 1; }
  out=$(ROOFTUNE_TEMPLATE_DIR=$src/templates "$bin" templates --check --quick 2>&1) ||
    { echo "FAIL: a shipped template does not compile: $out"; exit 1; }
  n=$(echo "$out" | grep -c "^  compiles: ")
  t=$(echo "$out" | grep -c "^  from ")
  [ "$n" -gt 0 ] && [ "$n" = "$t" ] || { echo "FAIL: $n of $t shipped templates compiled: $out"; exit 1; }
fi

# your own kernel: --check compiles each template once
fresh_kernel
out=$("$bin" templates --dir "$empty/k" --check 2>&1) || { echo "FAIL: --check on own_kernel exited $?: $out"; exit 1; }
echo "$out" | grep -q "^  compiles: THREADS=128,UNROLL=1,WAVES=1 for sm_80, f32, vscale 1048576: [0-9]* registers" ||
  { echo "FAIL: no compile line for vscale_vec: $out"; exit 1; }
[ "$(echo "$out" | grep -c "^  compiles: ")" = 2 ] || { echo "FAIL: not both templates compiled: $out"; exit 1; }
json=$("$bin" templates --dir "$empty/k" --check --json) || { echo "FAIL: --check --json exited $?"; exit 1; }
python3 - "$json" <<'PY' || exit 1
import json, sys
d = json.loads(sys.argv[1])
c = {t["name"]: t["check"] for t in d["templates"]}
assert c["vscale_vec"]["status"] == "compiled" and c["vscale_vec"]["arch"] == "sm_80", c
assert c["vscale_vec"]["config"] == "THREADS=128,UNROLL=1,WAVES=1" and c["vscale_vec"]["registers"] > 0, c
assert d["skipped"] == [] and d["errors"] == [], d
PY
# without --check the same folder is only read: a CUDA syntax error passes
sed -i '0,/;/s/;/ oops;/' "$empty/k/vscale/vscale_vec.cu"
line=$(grep -n oops "$empty/k/vscale/vscale_vec.cu" | cut -d: -f1)
"$bin" templates --dir "$empty/k" >/dev/null 2>&1 || { echo "FAIL: templates without --check compiled something"; exit 1; }
err=$("$bin" templates --dir "$empty/k" --check 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] || { echo "FAIL: a CUDA syntax error under --check exited $rc: $err"; exit 1; }
echo "$err" | grep -q "^rooftune templates: $empty/k/vscale/vscale_vec.cu: line $line: error: expected a \";\" (vscale_vec THREADS=128" ||
  { echo "FAIL: the syntax error is not located at the source and its line $line: $err"; exit 1; }


# --check compiles the covering set on every architecture the manifest names: an error only
# UNROLL=4 reaches, and one only sm_90 reaches, are found (the first configuration on sm_80
# compiled alone passed both); --quick compiles that one configuration
fresh_kernel
sed -i 's|^  int v = n / 4;|#if UNROLL == 4\n  unroll_four_oops;\n#endif\n  int v = n / 4;|' "$empty/k/vscale/vscale_vec.cu"
"$bin" templates --dir "$empty/k" --check --quick >"$empty/out.txt" 2>&1 || { echo "FAIL: --quick compiled more than the first configuration: $(cat "$empty/out.txt")"; exit 1; }
err=$("$bin" templates --dir "$empty/k" --check 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] || { echo "FAIL: an error in the UNROLL=4 branch under --check exited $rc: $err"; exit 1; }
echo "$err" | grep -q "vscale_vec.cu: line 4: error: identifier \"unroll_four_oops\" is undefined (vscale_vec THREADS=[0-9]*,UNROLL=4,WAVES=[0-9]* for sm_80" ||
  { echo "FAIL: the UNROLL=4 error is not named with its configuration: $err"; exit 1; }
fresh_kernel
sed -i 's|^  int v = n / 4;|#if __CUDA_ARCH__ >= 900\n  hopper_oops;\n#endif\n  int v = n / 4;|' "$empty/k/vscale/vscale_vec.cu"
"$bin" templates --dir "$empty/k" --check --quick >"$empty/out.txt" 2>&1 || { echo "FAIL: --quick compiled more than sm_80: $(cat "$empty/out.txt")"; exit 1; }
err=$("$bin" templates --dir "$empty/k" --check 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] || { echo "FAIL: an sm_90-only error under --check exited $rc: $err"; exit 1; }
echo "$err" | grep -q "hopper_oops\" is undefined (vscale_vec .* for sm_90" || { echo "FAIL: the sm_90 error is not named with its architecture: $err"; exit 1; }
fresh_kernel
out=$("$bin" templates --dir "$empty/k" --check 2>&1) || { echo "FAIL: --check on own_kernel exited $?: $out"; exit 1; }
echo "$out" | grep -q "^  compiles too on sm_90: the same 3 configurations: at most [0-9]* registers" ||
  { echo "FAIL: no line for vscale_vec's covering set on sm_90: $out"; exit 1; }

# a missing reference: blamed once, on family.json's "reference", not on the template
fresh_kernel
rm "$empty/k/vscale/vscale_ref.json"
err=$("$bin" templates --dir "$empty/k" 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] || { echo "FAIL: a missing reference exited $rc"; exit 1; }
echo "$err" | grep -q "^rooftune templates: $empty/k/vscale/family.json: reference: the vscale family's reference template vscale_ref is not in the template path" ||
  { echo "FAIL: the missing reference is not blamed on family.json: $err"; exit 1; }
[ "$(echo "$err" | grep -c "reference template vscale_ref")" = 1 ] || { echo "FAIL: reported more than once: $err"; exit 1; }
echo "$err" | grep -q "vscale_vec.json" && { echo "FAIL: the template is blamed: $err"; exit 1; }

# JSON files that are not manifests are skipped with a note, by templates and by tune
fresh_kernel
echo '{"editor.tabSize": 2}' >"$empty/k/vscale/settings.json"
echo 'not json at all' >"$empty/k/notes.json"
out=$("$bin" templates --dir "$empty/k" 2>&1) || { echo "FAIL: an editor's settings broke templates: $out"; exit 1; }
echo "$out" | grep -q "^rooftune templates: note: $empty/k/vscale/settings.json is not a template manifest (a JSON object without the \"family\" and \"source\" fields a manifest has); skipped" ||
  { echo "FAIL: no note for settings.json: $out"; exit 1; }
echo "$out" | grep -q "note: $empty/k/notes.json is not a template manifest (not valid JSON" || { echo "FAIL: no note for notes.json: $out"; exit 1; }
echo "$out" | grep -q "^vscale_vec  (family vscale" || { echo "FAIL: vscale_vec not listed: $out"; exit 1; }
out=$("$bin" tune vscale --templates "$empty/k" --shape 4096 --dtype f32 --device model:h200 --budget 1 --no-db 2>&1) ||
  { echo "FAIL: an editor's settings broke tune: $out"; exit 1; }
echo "$out" | grep -q "skipped $empty/k/vscale/settings.json: a JSON object without" || { echo "FAIL: tune has no note: $out"; exit 1; }

"$bin" templates --bogus >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: bad option did not exit 2"; exit 1; }

# the README's lists of the shipped families (Usage, its second list), of the GEMM templates
# (beneath its gemm line) and of the attention templates (Attention, its first list) are what
# rooftune lists: the registry's families (family_names(), as an unknown target's message names
# them) and each family's templates as `templates --json` lists them, in their order
readme_list() { # readme_list SECTION N: the Nth list of "## SECTION", its items and sub-items
  awk -v sec="$1" -v want="$2" '/^## /{on = (substr($0, 4) == sec); n = 0; inl = 0; next}
    !on {next} /^- `/{if (!inl) n++; inl = 1} /^$/{inl = 0} inl && n == want' "$src/README.md"
}
names() { sed -n "s/^$1- \`\([a-z_0-9]*\)\`.*/\1/p" | paste -sd, -; }
shipped() { env -u ROOFTUNE_TEMPLATE_PATH ROOFTUNE_TEMPLATE_DIR="$src/templates" "$bin" "$@"; }
hf=$(shipped tune no-such-target --shape 1 --dtype f32 --device model:h200 --no-db 2>&1 |
     sed -n 's/.*is neither a kernel family (\([^)]*\)).*/\1/p' | sed 's/, /,/g')
fam=$(readme_list Usage 2)
rf=$(printf '%s\n' "$fam" | names '')
[ -n "$hf" ] && [ "$rf" = "$hf" ] || {
  echo "FAIL: README.md's list of families (Usage, a line per family) is not rooftune's: the" \
       "README lists '$rf', rooftune '$hf'; write a line per family there, in that order (C" \
       "families first, as CMake finds kernels/*_serve.c, then the declared)"; exit 1; }
tj=$(shipped templates --json) || { echo "FAIL: templates --json of the shipped templates"; exit 1; }
of() { # of FAMILY: its templates, as templates --json lists them
  python3 -c 'import json, sys
t = json.load(sys.stdin)["templates"]
print(",".join(x["name"] for x in t if x["family"] == sys.argv[1]))' "$1" <<<"$tj"
}
rg=$(printf '%s\n' "$fam" | awk '/^- `gemm`/{on=1; next} /^- /{on=0} on' | names '  ')
[ -n "$(of gemm)" ] && [ "$rg" = "$(of gemm)" ] || {
  echo "FAIL: README.md's list of GEMM templates (beneath its gemm line) is not rooftune's: the" \
       "README lists '$rg', templates --json '$(of gemm)'; write a line per template there, in" \
       "that order"; exit 1; }
ra=$(readme_list Attention 1 | names '')
[ -n "$(of attention)" ] && [ "$ra" = "$(of attention)" ] || {
  echo "FAIL: README.md's list of attention templates (Attention) is not rooftune's: the README" \
       "lists '$ra', templates --json '$(of attention)'; write a line per template there, in" \
       "that order"; exit 1; }
exit 0
