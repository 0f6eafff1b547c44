#!/usr/bin/env bash
# examples/nightly/nightly.sh with the built rooftune on the model device: two problems tuned
# into a fresh database, the check passes, the header is published and compiles; a second night
# re-measures the stored winners (no regression), resumes the tuning (evaluates nothing already
# stored); a winner made to look faster than it is gets the night flagged (exit 3); a bad line
# makes the exit status 1.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
src=${ROOFTUNE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
cat >"$tmp/shapes.txt" <<'S'
# a comment, then two problems
gemm 128x128x128 f32 2
gemm 64x256x128:nt f32 2
S
export ROOFTUNE="$bin" ROOFTUNE_DEVICE=model:h200
bash "$src/examples/nightly/nightly.sh" "$tmp/shapes.txt" "$tmp/db/t.db" "$tmp/out" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "nightly exit $?"; }
grep -q "^ok      gemm 128x128x128 f32" "$tmp/log" || die "first problem: $(cat "$tmp/log")"
grep -q "^ok      gemm 64x256x128:nt f32" "$tmp/log" || die "second problem"
grep -q "ok: integrity" "$tmp/log" || die "db check did not pass"
[ -f "$tmp/out/rooftune_tuned.h" ] || die "no header published"
echo '#include "rooftune_tuned.h"
int main(void) { return ROOFTUNE_TUNED_COUNT >= 2 ? 0 : 1; }' >"$tmp/h.c"
cc -Wall -Werror -I"$tmp/out" -o "$tmp/h" "$tmp/h.c" && "$tmp/h" || die "the header does not compile or lists fewer than 2 winners"
n1=$("$bin" db list --db "$tmp/db/t.db" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['counts']['results'])")
bash "$src/examples/nightly/nightly.sh" "$tmp/shapes.txt" "$tmp/db/t.db" "$tmp/out" >"$tmp/log2" 2>&1 || die "second night exit $?"
n2=$("$bin" db list --db "$tmp/db/t.db" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['counts']['results'])")
[ "$n1" -gt 0 ] || die "nothing stored"
[ "$n2" -ge "$n1" ] || die "the second night lost results ($n1 -> $n2)"
grep -q "^recheck: no winner got slower" "$tmp/log2" || die "second night's recheck: $(head -3 "$tmp/log2")"
{ grep -q " same$" "$tmp/out/recheck.txt" && ! grep -q "SLOWER" "$tmp/out/recheck.txt"; } ||
  die "recheck table: $(cat "$tmp/out/recheck.txt")"
python3 - "$tmp/db/t.db" <<'PY' || die "could not edit the database"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE results SET time_ms = time_ms / 3 WHERE id = (SELECT min(result_id) FROM winners)")
c.commit()
PY
bash "$src/examples/nightly/nightly.sh" "$tmp/shapes.txt" "$tmp/db/t.db" "$tmp/out" >"$tmp/log4" 2>&1
rc=$?
[ $rc = 3 ] || die "a regression night exited $rc, not 3: $(head -3 "$tmp/log4")"
grep -q "^REGRESSION" "$tmp/log4" || die "the regression is not reported"
grep -q "SLOWER" "$tmp/out/recheck.txt" || die "recheck.txt does not say SLOWER"
echo "gemm 12x f32" >>"$tmp/shapes.txt"
bash "$src/examples/nightly/nightly.sh" "$tmp/shapes.txt" "$tmp/db/t.db" "$tmp/out" >"$tmp/log3" 2>&1 && die "a bad shape still exited 0"
grep -q "^FAILED  gemm 12x f32" "$tmp/log3" || die "the bad line is not reported: $(tail -5 "$tmp/log3")"
[ $fail = 0 ] && echo "nightly: 2 problems tuned ($n1 results, $n2 after the second night), checked and published"
exit $fail
