#!/usr/bin/env bash
# A hostile shard database cannot put script into a report: a job's database (GEMM and a
# declared family on the model device, rechecked) has a script payload, markup that closes what
# it is in and invalid UTF-8 appended to every text column of every row (poison_db.py: once
# every column; once all but the problems' and devices' keys, template names, toolkits,
# statuses, timings and cubin hashes, so its rows are the job's problems and still plot), and is merged into
# a team database with `job merge`, as a nightly would.  `db check` flags the markup in both
# (exit 1, naming the table, row and column); `rooftune report` of each, and the report
# `job run` writes into its output, are valid UTF-8 and well-formed, hold only the report's
# elements, no event handler and no outside link, and show the payloads as text
# (report_check.py, Python's own parsers).  The same in a real browser is
# test_report_browser.sh's.
set -u
bin=${ROOFTUNE_BIN:?}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
cat >"$tmp/team.json" <<'EOF'
{"rooftune_job": 1, "name": "team", "database": "team.db", "device": "model:h200",
 "recheck": {"every": "0"}, "defaults": {"budget": 3},
 "problems": [{"target": "gemm", "shape": "256x256x256", "dtype": "f16"},
              {"target": "softmax", "shape": "128x2048", "dtype": "f32"}]}
EOF
sed 's/"team"/"evil"/; s/team.db/evil.db/' "$tmp/team.json" >"$tmp/evil.json"
for j in team evil; do
  for k in 1 2; do # the second run rechecks the winners
    "$bin" job run "$tmp/$j.json" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; die "job run $j"; }
  done
done
cp "$tmp/evil.db" "$tmp/all.db"
python3 "$here/poison_db.py" "$tmp/all.db" >"$tmp/p1" || die "poison every column"
keys=problems.family,problems.shape,problems.dtype,problems.layout,problems.dims,problems.args,devices.name
keys=$keys,templates.name,templates.family,templates.source_hash,templates.manifest_hash,runs.toolkit
keys=$keys,results.toolkit,winners.toolkit,results.status,runs.status,results.timing,runs.command
# a cubin's hash poisoned makes its cubin damaged, and merge refuses such a file whole
# (test_cubin_hash.sh): kept, so the markup merges
keys=$keys,winners.cubin_sha256
python3 "$here/poison_db.py" "$tmp/evil.db" --keep "$keys" >"$tmp/p2" || die "poison"
"$bin" db check --db "$tmp/evil.db" >"$tmp/check" 2>&1 && die "db check calls the hostile shard ok"
grep -q "results row [0-9]*: diag_limit holds markup" "$tmp/check" || die "db check does not flag diag_limit: $(head -3 "$tmp/check")"
grep -q "runs row [0-9]*: started_at holds markup" "$tmp/check" || die "db check does not flag started_at"
grep -q "bytes that are not UTF-8\|markup" "$tmp/check" || die "db check: $(head -3 "$tmp/check")"
"$bin" db check --db "$tmp/team.db" >/dev/null 2>&1 || die "db check of the clean team database"
"$bin" job merge "$tmp/team.db" "$tmp/evil.db" >"$tmp/merge" 2>&1 || die "job merge: $(cat "$tmp/merge")"
"$bin" db check --db "$tmp/team.db" >"$tmp/check2" 2>&1 && die "db check calls the merged team database ok"
grep -q "holds markup" "$tmp/check2" || die "db check of the merged database: $(head -3 "$tmp/check2")"
tried=0
for db in all evil team; do
  "$bin" report --db "$tmp/$db.db" -o "$tmp/$db.html" >"$tmp/rep" 2>&1 || { die "report of $db.db: $(cat "$tmp/rep")"; continue; }
  python3 "$here/report_check.py" "$tmp/$db.html" --text "<script>document" --text "onerror=" || fail=1
  tried=$((tried + 1))
done
# the report a job run writes, of the hostile database itself
sed 's/"recheck": {"every": "0"}/"recheck": false/' "$tmp/evil.json" >"$tmp/evil2.json"
"$bin" job run "$tmp/evil2.json" --no-report >/dev/null 2>&1
"$bin" job run "$tmp/evil2.json" >"$tmp/run.log" 2>&1
if [ -s "$tmp/evil-out/report.html" ]; then
  python3 "$here/report_check.py" "$tmp/evil-out/report.html" --text "<script>document" || fail=1
  tried=$((tried + 1))
else
  die "job run wrote no report: $(tail -3 "$tmp/run.log")"
fi
problems() { "$bin" db check --db "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["problems"])'; }
[ $fail = 0 ] && echo "hostile databases: db check found $(problems "$tmp/evil.db") problems in the shard and" \
  "$(problems "$tmp/team.db") in the merged team database; $tried reports safe ($(cat "$tmp/p1"))"
exit $fail
