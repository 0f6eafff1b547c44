#!/usr/bin/env bash
# examples/nightly/nightly.sh (the cron/systemd wrapper around `rooftune job run`) with the built
# rooftune on the model device: two problems tuned into a fresh database, the check passes, the
# header is published beside the report and compiles; a second night evaluates nothing and
# rechecks the winners (no regression); a winner made to look faster than it is gets the night
# flagged (exit 3); a problem that fails makes the exit status 1.  The example job files load.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
src=${ROOFTUNE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
cat >"$tmp/n.json" <<'EOF'
{"rooftune_job": 1, "name": "n", "database": "db/t.db", "output": "out", "device": "model:h200",
 "recheck": {"every": "0"}, "defaults": {"dtype": "f32", "budget": 2},
 "problems": [{"target": "gemm", "shape": "128x128x128"}, {"target": "gemm", "shape": "64x256x128:nt"}]}
EOF
export ROOFTUNE="$bin"
bash "$src/examples/nightly/nightly.sh" "$tmp/n.json" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "nightly exit $?"; }
grep -q "^\[1/2\] gemm 128x128x128 f32: tuned (never tuned): 2 evaluated" "$tmp/log" || die "first problem: $(cat "$tmp/log")"
grep -q "^\[2/2\] gemm 64x256x128:nt f32: tuned" "$tmp/log" || die "second problem"
[ -f "$tmp/out/rooftune_tuned.h" ] || die "no header published"
[ -f "$tmp/out/report.html" ] || die "no report"
echo '#include "rooftune_tuned.h"
int main(void) { return ROOFTUNE_TUNED_COUNT >= 2 ? 0 : 1; }' >"$tmp/h.c"
cc -Wall -Werror -I"$tmp/out" -o "$tmp/h" "$tmp/h.c" && "$tmp/h" || die "the header does not compile or lists fewer than 2 winners"
n1=$("$bin" db list --db "$tmp/db/t.db" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['counts']['results'])")
bash "$src/examples/nightly/nightly.sh" "$tmp/n.json" >"$tmp/log2" 2>&1 || die "second night exit $?: $(cat "$tmp/log2")"
grep -q "0 tuned (0 evaluated), 2 fresh, 0 failed, 0 left, 0 regressions" "$tmp/log2" || die "second night: $(cat "$tmp/log2")"
[ "$(grep -o 'recheck [a-z_]* same' "$tmp/log2" | wc -l)" -ge 2 ] || die "second night's rechecks: $(cat "$tmp/log2")"
n2=$("$bin" db list --db "$tmp/db/t.db" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['counts']['results'])")
[ "$n1" -gt 0 ] && [ "$n2" -ge "$n1" ] || die "the second night lost results ($n1 -> $n2)"
python3 - "$tmp/db/t.db" <<'PY' || die "could not edit the database"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE results SET time_ms = time_ms / 3 WHERE id = (SELECT min(result_id) FROM winners)")
c.commit()
PY
bash "$src/examples/nightly/nightly.sh" "$tmp/n.json" >"$tmp/log3" 2>&1
rc=$?
[ $rc = 3 ] || die "a regression night exited $rc, not 3: $(cat "$tmp/log3")"
grep -q "SLOWER .* REGRESSION" "$tmp/log3" || die "the regression is not reported: $(cat "$tmp/log3")"
# a problem whose template has no configuration for it is not tuned, says why, and fails the night (exit 1)
sed -i 's|{"target": "gemm", "shape": "64x256x128:nt"}|{"target": "gemm", "shape": "64x256x128:nt"}, {"target": "gemm_skinny", "shape": "4096x4096x4096:nt"}|' "$tmp/n.json"
bash "$src/examples/nightly/nightly.sh" "$tmp/n.json" >"$tmp/log4" 2>&1 && die "a failing problem still exited 0"
grep -q "gemm_skinny 4096x4096x4096:nt f32: not tuned: the space is empty" "$tmp/log4" || die "the failed problem is not reported: $(cat "$tmp/log4")"
# the shipped job file loads: 17 problems of a Llama-style model, every one never tuned here
"$bin" job status "$src/examples/nightly/llama3-8b.json" --device model:h200 --db "$tmp/l.db" --json >"$tmp/l.json" ||
  die "the example job file does not load"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["problems"]; assert len(p)==17 and all(x["state"]=="never tuned" for x in p) and sum(x["target"]=="attention" for x in p)==3, d' "$tmp/l.json" ||
  die "the example job's problems"
[ $fail = 0 ] && echo "nightly: 2 problems tuned ($n1 results, $n2 after the second night), checked, published, regression and failure flagged"
exit $fail
