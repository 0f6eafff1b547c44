#!/usr/bin/env bash
# A tune that resumes from a database with damaged rows names the file and the row: a success
# whose time is text, a status rooftune never writes, a timing that is none of measured,
# predicted and replayed (a crafted file ignoring the CHECK).  It said "configuration 202: a
# successful result needs a time > 0, not 0", or took the row as a failure or a replay without
# a word.  Each is one error naming the database and "results row N" and pointing at db check,
# exit non-zero; the undamaged database resumes as before.
set -u
bin=${ROOFTUNE_BIN:?}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
python3 "$here/space_fixture.py" "$tmp/space.json"
tune=(synthetic --device "replay:$tmp/space.json" --strategy random)
"$bin" tune "${tune[@]}" --budget 50 --db "$tmp/t.db" >/dev/null 2>"$tmp/err" || { echo "FAIL: tune: $(tail -2 "$tmp/err")"; exit 1; }
n=0
while IFS='|' read -r sql want; do
  cp "$tmp/t.db" "$tmp/d.db"
  python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA ignore_check_constraints=ON"); c.execute(sys.argv[2]); c.commit()' "$tmp/d.db" "$sql"
  "$bin" tune "${tune[@]}" --budget 60 --db "$tmp/d.db" >/dev/null 2>"$tmp/err"; rc=$?
  [ $rc != 0 ] || die "$sql: the tune went on"
  grep -q "d.db: results row 7 (" "$tmp/err" && grep -q -- "$want" "$tmp/err" && grep -q "db check --db" "$tmp/err" ||
    die "$sql: $(tail -1 "$tmp/err")"
  n=$((n + 1))
done <<'LIST'
UPDATE results SET time_ms = 'abc' WHERE id = 7|a successful result with time_ms 'abc', not a time
UPDATE results SET time_ms = -1 WHERE id = 7|a successful result with time_ms -1
UPDATE results SET status = 'BOGUS' WHERE id = 7|status 'BOGUS' is not one rooftune writes
UPDATE results SET timing = 'nonsense' WHERE id = 7|timing 'nonsense' is not measured, predicted or replayed
LIST
"$bin" tune "${tune[@]}" --budget 60 --db "$tmp/t.db" >/dev/null 2>"$tmp/err" || die "the undamaged database: $(tail -1 "$tmp/err")"
# A family's lineup (several templates): the damaged row of its first template is named too (the
# lineup's close once overwrote that error with the next template's success: "no candidate
# succeeded (0 evaluated, 0 failed)").
fam=(gemm --shape 256x256x256 --dtype f16 --device model:h200 --budget 8)
"$bin" tune "${fam[@]}" --db "$tmp/f.db" >/dev/null 2>"$tmp/err" || die "gemm tune: $(tail -1 "$tmp/err")"
sqlite3 "$tmp/f.db" "UPDATE results SET time_ms = 0" 2>/dev/null ||
  python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE results SET time_ms = 0"); c.commit()' "$tmp/f.db"
"$bin" tune "${fam[@]}" --db "$tmp/f.db" >/dev/null 2>"$tmp/err" && die "gemm over damaged rows: the tune went on"
grep -q "f.db: results row [0-9]* (" "$tmp/err" && grep -q "time_ms 0, not a time" "$tmp/err" ||
  die "gemm over damaged rows: $(tail -1 "$tmp/err")"
n=$((n + 1))
[ $fail = 0 ] && echo "damaged rows: $n kinds, each named by file and row"
exit $fail
