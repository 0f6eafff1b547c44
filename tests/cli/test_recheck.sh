#!/usr/bin/env bash
# `rooftune recheck` on the model device: an unchanged winner is "same" (exit 0); a winner whose
# stored time is made to look twice as fast is flagged SLOWER (exit 3, the regression code); a
# winner from another device is left out; a winner whose configuration the template no longer
# has is "stale"; every recheck is stored as a finished run; bad input gets one clear line.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check_rc() { [ "$2" = "$3" ] || { echo "FAIL: $1: exit $3, expected $2"; fail=1; }; }
db=$tmp/t.db

"$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --device model:h200 --budget 2 --db "$db" \
  --strategy random >/dev/null 2>&1
check_rc "tune on model:h200" 0 $?
"$bin" tune gemm_mma --shape 256x256x256 --dtype f16 --device model:a100 --budget 1 --db "$db" \
  --strategy random >/dev/null 2>&1
check_rc "tune on model:a100" 0 $?

out=$("$bin" recheck --db "$db" --device model:h200 2>"$tmp/err"); rc=$?
check_rc "recheck unchanged" 0 $rc
echo "$out" | grep -q "1 winners for this device, 1 re-measured, 0 slower, 0 failing" ||
  { echo "FAIL: recheck summary: $out"; fail=1; }
echo "$out" | grep -q " same$" || { echo "FAIL: unchanged winner not 'same': $out"; fail=1; }

# the stored winner's time halved: the same kernel now takes twice as long
python3 - "$db" <<'PY' || fail=1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("""UPDATE results SET time_ms = time_ms / 2 WHERE id IN (SELECT w.result_id FROM winners w
             JOIN devices d ON d.id = w.device_id WHERE d.name = 'model:h200')""")
c.commit()
PY
json=$("$bin" recheck --db "$db" --device model:h200 --json 2>"$tmp/err"); rc=$?
check_rc "recheck after a regression" 3 $rc
grep -q "slower .* a regression" "$tmp/err" || { echo "FAIL: no regression line: $(cat "$tmp/err")"; fail=1; }
python3 - "$json" <<'PY' || fail=1
import json, sys
d = json.loads(sys.argv[1])
assert d["device"] == "model:h200" and d["slower"] == 1 and d["rechecked"] == 1, d
r = d["results"][0]
assert r["verdict"] == "SLOWER" and abs(r["change"] - 1.0) < 1e-6, r
print("recheck --json ok: %s %+.0f %%" % (r["verdict"], 100 * r["change"]))
PY
# within a generous tolerance it is not a regression; the text says the change as a ratio
out=$("$bin" recheck --db "$db" --device model:h200 --tolerance 150 2>&1)
check_rc "recheck --tolerance 150" 0 $?
echo "$out" | grep -q " 2.00x slower  same$" || { echo "FAIL: the doubled time is not '2.00x slower': $out"; fail=1; }

# a configuration the template no longer has: stale, not a regression
python3 - "$db" <<'PY' || fail=1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("""UPDATE results SET config = replace(config, 'STAGES=', 'STAGEZ=') WHERE id IN
             (SELECT w.result_id FROM winners w JOIN devices d ON d.id = w.device_id
              WHERE d.name = 'model:a100')""")
c.commit()
PY
out=$("$bin" recheck --db "$db" --device model:a100 2>/dev/null); rc=$?
check_rc "recheck stale" 0 $rc
echo "$out" | grep -q "stale: config:" || { echo "FAIL: stale winner: $out"; fail=1; }

# every recheck is a finished run; the database checks out
"$bin" db check --db "$db" >"$tmp/check" 2>&1
check_rc "db check" 0 $?
grep -q "never finished" "$tmp/check" && { echo "FAIL: a recheck left a run running"; cat "$tmp/check"; fail=1; }

# bad input
"$bin" recheck --db "$tmp/none.db" --device model:h200 >/dev/null 2>"$tmp/err"
check_rc "missing database" 1 $?
grep -q "none.db" "$tmp/err" || { echo "FAIL: missing database not named: $(cat "$tmp/err")"; fail=1; }
"$bin" recheck --tolerance lots >/dev/null 2>"$tmp/err"
check_rc "bad --tolerance" 2 $?
"$bin" recheck --device replay:x.json >/dev/null 2>"$tmp/err"
check_rc "replay device" 2 $?
"$bin" recheck --db "$db" --device model:v100 >/dev/null 2>"$tmp/err"
check_rc "unknown device" 2 $? # bad usage, as the README's exit codes say
grep -q "v100" "$tmp/err" || { echo "FAIL: unknown device not named: $(cat "$tmp/err")"; fail=1; }

[ $fail = 0 ] && echo "recheck: all checks passed"
exit $fail
