#!/usr/bin/env bash
# `rooftune tune` end to end on the model device (JSON: timing "predicted", the winner stored),
# the default device's first line when there is no GPU, replay of the fixture, another GPU's
# export as a prior, and the
# usage errors (exit 2) and input errors (exit 1) with clear messages.
set -u
bin=${ROOFTUNE_BIN:?}
src=${ROOFTUNE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check_rc() { [ "$2" = "$3" ] || { echo "FAIL: $1: exit $3, expected $2"; fail=1; }; }

json=$("$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --device model:h200 --budget 2 \
  --strategy random --db "$tmp/t.db" --json 2>"$tmp/err"); rc=$?
check_rc "tune --json" 0 $rc
json0=$json
python3 - "$json" <<'PY' || fail=1
import json, sys
d = json.loads(sys.argv[1])
assert d["device"] == "model:h200", d
assert d["timing"] == "predicted", d
assert d["evaluated"] == 2 and d["budget"] == 2, d
b = d["best"]
assert b["template"] == "gemm_mma", b
assert b["time_ms"] > 0 and b["tflops"] > 0, b
assert isinstance(b["config"]["BLOCK_M"], int), b
assert b["limit"] in ("memory", "compute", "occupancy", "waves", "spills", "launch"), b
assert d["run_id"] >= 1
print("tune --json ok:", b["limit"], "%.1f TFLOP/s predicted" % b["tflops"])
PY
grep -q '^\[1/2\] gemm_mma ' "$tmp/err" || { echo "FAIL: no plain progress lines on stderr"; cat "$tmp/err"; fail=1; }
python3 - "$tmp/t.db" <<'PY' || fail=1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n, size = c.execute("SELECT (SELECT count(*) FROM winners), (SELECT max(length(cubin)) FROM winner_cubins)").fetchone()
assert n == 1 and size > 0, (n, size)
print("winner stored with a %d-byte cubin" % size)
PY

# the same again: the two stored configurations come from the database, and the budget buys
# two new ones (--budget counts new evaluations)
json=$("$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --device model:h200 --budget 2 \
  --strategy random --db "$tmp/t.db" --json 2>"$tmp/err2")
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["evaluated"]==2 and d["resumed"]==2, d' "$json" \
  || { echo "FAIL: the rerun did not resume and go on: $json"; fail=1; }
[ "$(grep -c '^\[db\] gemm_mma ' "$tmp/err2")" = 2 ] || { echo "FAIL: resumed lines: $(cat "$tmp/err2")"; fail=1; }
python3 - "$tmp/t.db" <<'PY2' || fail=1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n, d = c.execute("SELECT count(*), count(DISTINCT config) FROM results").fetchone()
assert n == 4 and d == 4, (n, d)
PY2

# text output: the table, the budget, and (without a GPU) the first line about predictions
out=$("$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --budget 1 --no-db 2>/dev/null); rc=$?
check_rc "tune (default device)" 0 $rc
if ! "$bin" info --json | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpus"] else 1)'; then
  first=$(printf '%s\n' "$out" | head -1)
  case "$first" in "note: "*"predictions"*) ;; *) echo "FAIL: first line is not the prediction note: $first"; fail=1 ;; esac
fi
printf '%s\n' "$out" | grep -q "budget 1" || { echo "FAIL: the budget is not said: $out"; fail=1; }
printf '%s\n' "$out" | grep -q "TFLOP/s" || { echo "FAIL: no table: $out"; fail=1; }

# replay of a recorded Kernel Tuner file
json=$("$bin" tune vector_add --device "replay:$src/tests/data/replay/small.json" --strategy brute_force \
  --no-db --json 2>/dev/null); rc=$?
check_rc "tune replay" 0 $rc
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["timing"]=="replayed" and d["best"]["time_ms"]==0.4 and d["best"]["config"]=={"block_size_x":64,"tile":2}, d' "$json" \
  || { echo "FAIL: replay: $json"; fail=1; }
# --blind: the strategy told only times, said on the first line and in --json
out=$("$bin" tune vector_add --device "replay:$src/tests/data/replay/small.json" --strategy steer \
  --no-db --blind 2>/dev/null); rc=$?
check_rc "tune --blind" 0 $rc
printf '%s\n' "$out" | grep -q "strategy steer (blind: told only times)" || { echo "FAIL: --blind not said: $out"; fail=1; }
json=$("$bin" tune vector_add --device "replay:$src/tests/data/replay/small.json" --no-db --blind --json 2>/dev/null)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["blind"] is True, d' "$json" \
  || { echo "FAIL: --blind json: $json"; fail=1; }

# replay of rooftune's own export: the same best time comes back, marked as replayed
best=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT min(time_ms) FROM results WHERE status=\"OK\"").fetchone()[0])' "$tmp/t.db")
"$bin" db export --db "$tmp/t.db" -o "$tmp/export.json" || { echo "FAIL: db export"; fail=1; }
json=$("$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --device "replay:$tmp/export.json" \
  --strategy brute_force --no-db --json 2>/dev/null); rc=$?
check_rc "tune replay of an export" 0 $rc
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["timing"]=="replayed" and d["evaluated"]==4 and abs(d["best"]["time_ms"]-float(sys.argv[2]))<1e-12 and d["best"]["template"]=="gemm_mma" and d["best"]["tflops"]>0, d' "$json" "$best" \
  || { echo "FAIL: replay of the export: $json"; fail=1; }

# errors
o=$("$bin" tune gemm --dtype f16 2>&1); check_rc "missing --shape" 2 $?
case "$o" in *"missing --shape"*) ;; *) echo "FAIL: unclear: $o"; fail=1 ;; esac
o=$("$bin" tune gemm --shape 64x64x64 --dtype f16 --budget 0 2>&1); check_rc "--budget 0" 2 $?
o=$("$bin" tune no_such --shape 64x64x64 --dtype f16 --no-db 2>&1); check_rc "unknown target" 2 $?
case "$o" in *"'no_such' is neither a kernel family"*) ;; *) echo "FAIL: unclear: $o"; fail=1 ;; esac
o=$("$bin" tune gemm --shape 64x64x64 --dtype f16 --device tpu --no-db 2>&1); check_rc "unknown device" 2 $?
case "$o" in *"--device"*"unknown device 'tpu'"*) ;; *) echo "FAIL: unclear: $o"; fail=1 ;; esac
o=$("$bin" tune gemm --shape 64xx64 --dtype f16 --device model:h200 --no-db 2>&1); check_rc "bad shape" 2 $?
o=$("$bin" tune gemm --shape 64x64x64 --dtype f16 --device replay:/nonexistent.json --no-db 2>&1)
check_rc "missing replay file" 1 $?
case "$o" in *"/nonexistent.json"*) ;; *) echo "FAIL: unclear: $o"; fail=1 ;; esac
# --config: that configuration alone, afresh although the database holds it
cfg=$(python3 -c 'import json,sys; b=json.loads(sys.argv[1])["best"]["config"]; print(",".join("%s=%s" % kv for kv in b.items()))' "$json0")
json=$("$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --device model:h200 --db "$tmp/t.db" \
  --config "$cfg" --json 2>/dev/null); rc=$?
check_rc "tune --config" 0 $rc
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["evaluated"] == 1 and d["resumed"] == 0, d' "$json" ||
  { echo "FAIL: --config did not evaluate the one configuration afresh"; fail=1; }
"$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --device model:h200 --no-db --config BLOCK_M=128 \
  >/dev/null 2>"$tmp/err"
check_rc "tune --config incomplete" 1 $?
grep -q "lacks parameter" "$tmp/err" || { echo "FAIL: incomplete --config: $(cat "$tmp/err")"; fail=1; }
"$bin" tune gemm --shape 256x256x256 --dtype f16 --device model:h200 --no-db --config "$cfg" >/dev/null 2>"$tmp/err"
check_rc "tune gemm --config" 2 $?

# --prior: another GPU's export (model:a100 here) orders the search on this one: its fastest
# configuration is the first one evaluated
"$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:a100 --budget 6 \
  --strategy random --db "$tmp/a100.db" >/dev/null 2>&1 || { echo "FAIL: tune on model:a100"; fail=1; }
"$bin" db export --db "$tmp/a100.db" -o "$tmp/a100.json" || { echo "FAIL: export"; fail=1; }
json=$("$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h200 --budget 4 \
  --no-db --prior "$tmp/a100.json" --json 2>"$tmp/err"); rc=$?
check_rc "tune --prior" 0 $rc
python3 - "$json" "$tmp/a100.json" "$tmp/err" <<'PY' || fail=1
import json, sys
d = json.loads(sys.argv[1])
assert d["prior"]["summary"] == "gemm_mma 6 ranked", d["prior"]
rows = [r for r in json.load(open(sys.argv[2]))["results"] if r["status"] == "OK"]
best = min(rows, key=lambda r: r["time_ms"])["config"]
text = ",".join("%s=%s" % kv for kv in best.items())
first = [l for l in open(sys.argv[3]) if l.startswith("[1/4] ")][0]
assert first.split()[2].rstrip(":") == text, (first, text)
print("tune --prior ok: the A100's fastest first:", text)
PY
# --prior repeatable: the same export twice ranks as once (mean rank), both files named
json=$("$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h200 --budget 2 \
  --no-db --prior "$tmp/a100.json" --prior "$tmp/a100.json" --json 2>/dev/null); rc=$?
check_rc "tune --prior twice" 0 $rc
python3 -c 'import json,sys; p=json.loads(sys.argv[1])["prior"]; assert p["summary"]=="gemm_mma 6 ranked" and len(p["files"])==2, p' "$json" \
  || { echo "FAIL: --prior twice: $json"; fail=1; }
"$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h200 --no-db \
  --prior model --prior "$tmp/a100.json" >/dev/null 2>&1
check_rc "tune --prior model with a file" 2 $?
"$bin" tune gemm_mma --shape 256x256x512 --dtype bf16 --device model:h200 --no-db \
  --prior "$tmp/a100.json" >/dev/null 2>"$tmp/err"
check_rc "tune --prior of another dtype" 1 $?
grep -q "ranks no configuration of gemm_mma for 256x256x512 bf16" "$tmp/err" ||
  { echo "FAIL: --prior without matching rows: $(cat "$tmp/err")"; fail=1; }
"$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h200 --no-db \
  --prior "$tmp/none.json" >/dev/null 2>"$tmp/err"
check_rc "tune --prior missing" 1 $?
grep -q "none.json: cannot open" "$tmp/err" || { echo "FAIL: missing --prior: $(cat "$tmp/err")"; fail=1; }
"$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h200 --no-db --config "$cfg" \
  --prior "$tmp/a100.json" >/dev/null 2>&1
check_rc "tune --config --prior" 2 $?

# a family: each template gets its own rows; one the A100 could not run gets none
json=$("$bin" tune gemm --shape 256x256x512 --dtype f16 --device model:h200 --budget 4 --no-db \
  --prior "$tmp/a100.json" --json 2>/dev/null) || { echo "FAIL: tune gemm --prior"; fail=1; }
python3 -c 'import json,sys; p=json.loads(sys.argv[1])["prior"]["summary"]; assert p=="gemm_mma 6 ranked, gemm_wgmma none (no results for this problem)", p' "$json" ||
  { echo "FAIL: family prior summary"; fail=1; }

# an export with two devices' results for the problem is refused, not mixed; db export
# --device takes one device's rows out of it
"$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h100 --budget 3 \
  --strategy random --db "$tmp/a100.db" >/dev/null 2>&1 || { echo "FAIL: tune on model:h100"; fail=1; }
"$bin" db export --db "$tmp/a100.db" -o "$tmp/mixed.json" || { echo "FAIL: export mixed"; fail=1; }
"$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h200 --no-db \
  --prior "$tmp/mixed.json" >/dev/null 2>"$tmp/err"
check_rc "tune --prior of two devices" 1 $?
grep -q "from two devices (model:a100 and model:h100)" "$tmp/err" ||
  { echo "FAIL: two-device prior: $(cat "$tmp/err")"; fail=1; }
"$bin" db export --db "$tmp/a100.db" --device A100 -o "$tmp/only.json" || { echo "FAIL: export --device"; fail=1; }
json=$("$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h200 --budget 1 --no-db \
  --prior "$tmp/only.json" --json 2>/dev/null) || { echo "FAIL: --prior of one device's rows"; fail=1; }
python3 -c 'import json,sys; p=json.loads(sys.argv[1])["prior"]; assert p["summary"]=="gemm_mma 6 ranked", p' "$json" ||
  { echo "FAIL: db export --device did not keep the A100's 6 rows"; fail=1; }

# --prior model: the model's best first (STRATEGY_PRIOR_FIRST), as the model strategy orders them
"$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h100 --budget 4 --no-db \
  --prior model >/dev/null 2>"$tmp/pm" || { echo "FAIL: --prior model"; fail=1; }
"$bin" tune gemm_mma --shape 256x256x512 --dtype f16 --device model:h100 --budget 3 --no-db \
  --strategy model >/dev/null 2>"$tmp/sm" || { echo "FAIL: --strategy model"; fail=1; }
a=$(grep -E '^\[1/' "$tmp/pm" | awk '{print $3}'); b=$(grep -E '^\[1/' "$tmp/sm" | awk '{print $3}')
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: --prior model did not start with the model's order: $a / $b"; fail=1; }
"$bin" tune convolution --device "replay:$src/tests/data/ktfiles/small.json" --no-db --prior model \
  >/dev/null 2>"$tmp/err"
check_rc "replay --prior model" 2 $?
grep -q "no model to rank" "$tmp/err" || { echo "FAIL: replay --prior model: $(cat "$tmp/err")"; fail=1; }

# a budget smaller than the live templates still buys what it says (attn_mma and attn_wgmma
# both fit this prefill shape; one evaluation goes to the first); the skip note is whole
"$bin" tune attention --shape 1x8x512x64 --dtype bf16 --device model:h200 --budget 1 --no-db --json \
  2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["evaluated"] == 1 and d["best"] is not None, d
assert "whatever the parameters;" in d["note"] + ";", d["note"]' || { echo "FAIL: --budget 1 over two templates"; fail=1; }

# the budget across templates: on a one-row decode problem the prefill templates are ruled out
# by their roof bounds and attn_decode stops at its roof; --json and the table say so
"$bin" tune attention --shape 1x32:8x1:32768x128 --dtype bf16 --device model:h200 --budget 16 --no-db \
  --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = {x["template"]: x for x in d["templates"]}
assert t["attn_mma"]["outcome"] == "ruled out" and t["attn_mma"]["evaluated"] == 0, t
assert t["attn_mma"]["bound_ms"] > 1.05 * t["attn_mma"]["ruled_out_against_ms"], t
assert t["attn_decode"]["outcome"] == "at its roof", t
assert d["roof_rules"]["on"] and d["roof_rules"]["unspent"] == 16 - d["evaluated"], d["roof_rules"]
assert "ruled out" in d["note"], d["note"]' || { echo "FAIL: the roof rules in --json"; fail=1; }
out=$("$bin" tune attention --shape 1x32:8x1:32768x128 --dtype bf16 --device model:h200 --budget 16 --no-db 2>/dev/null)
printf '%s\n' "$out" | grep -q "^attn_wgmma .*ruled out against" || { echo "FAIL: the templates table: $out"; fail=1; }
printf '%s\n' "$out" | grep -q "^saved by the roof rules: " || { echo "FAIL: the saving line: $out"; fail=1; }

# bad usage exits 2, as the README's exit codes say: a value a flag or the target cannot take
for c in "nosuch --shape 64 --dtype f32" "gemm --shape abc --dtype bf16" "gemm --shape 64x64x64 --dtype xx" \
         "gemm --shape 64x64x64 --dtype bf16 --device bogus" "gemm --shape 64x64x64 --dtype bf16 --strategy nope"; do
  # shellcheck disable=SC2086
  "$bin" tune $c --no-db >/dev/null 2>"$tmp/err"; rc=$?
  [ $rc = 2 ] || { echo "FAIL: 'tune $c' exited $rc, not 2: $(cat "$tmp/err")"; fail=1; }
done
grep -q "^rooftune tune: --strategy: unknown strategy 'nope'; the strategies are brute_force" "$tmp/err" ||
  { echo "FAIL: an unknown strategy: $(cat "$tmp/err")"; fail=1; }

# names are never cut: softmax_rows (12 characters) whole in every table, its columns in line
out=$("$bin" tune softmax --shape 256x1024 --dtype f32 --device model:h200 --budget 2 --no-db 2>/dev/null)
printf '%s\n' "$out" | python3 -c '
import sys
lines = sys.stdin.read().splitlines()
rows = [l for l in lines if " softmax_rows " in l or l.startswith("softmax_rows ")]
assert len(rows) >= 2, lines
head = next(l for l in lines if l.lstrip().startswith("time ms"))
row = next(l for l in lines if " softmax_rows " in l)
assert head.index("lever") == row.index("softmax_rows") + len("softmax_rows") + 1, (head, row)
assert not any("softmax_row " in l for l in lines), lines' || { echo "FAIL: a template name cut in tune's tables: $out"; fail=1; }

[ $fail = 0 ] && echo "tune: model, resume, default device, replay, prior and errors ok"
exit $fail
