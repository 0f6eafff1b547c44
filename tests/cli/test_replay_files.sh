#!/usr/bin/env bash
# `rooftune replay` over several files when some do not load: each failure is reported (naming
# the file) and the others are still scored, in text and in --json; the exit status is 1.  An
# unfinished Kernel Tuner cache (what an interrupted run leaves) is scored with a note, an empty
# file is reported as empty, and `db import` and `tune --device replay:` read an unfinished
# cache the same way.
set -u
bin=${ROOFTUNE_BIN:?}
fx=${ROOFTUNE_SOURCE_DIR:?}/tests/data/ktfiles
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

# an unfinished cache: small.json without its closing braces, a comma after the last entry
python3 - "$fx/small.json" "$tmp/open.json" <<'PY'
import sys
t = open(sys.argv[1]).read().rstrip()
assert t.endswith("}\n}"), t[-10:]
open(sys.argv[2], "w").write(t[:-3] + ",\n")
PY
: >"$tmp/empty.json"

out=$("$bin" replay --seeds 3 --budget 10 "$fx/small.json" "$fx/broken.json" "$tmp/empty.json" \
      "$tmp/open.json" "$fx/ktt_small.json" 2>"$tmp/err"); rc=$?
[ $rc -eq 1 ] || die "a failing file: exit $rc, expected 1"
n=$(echo "$out" | grep -c "configurations (")
[ "$n" = 3 ] || die "$n files scored, expected 3 (small, open, ktt_small): $out"
grep -q "broken.json.*invalid JSON" "$tmp/err" || die "broken.json not reported: $(cat "$tmp/err")"
grep -q "empty.json: the file is empty" "$tmp/err" || die "the empty file not reported as empty: $(cat "$tmp/err")"
grep -q "open.json is an unfinished Kernel Tuner cache" "$tmp/err" || die "no note for the unfinished cache"
grep -q "3 of 5 files scored" "$tmp/err" || die "no summary: $(cat "$tmp/err")"

j=$("$bin" replay --json --seeds 3 --budget 10 "$fx/broken.json" "$tmp/open.json" 2>/dev/null); rc=$?
[ $rc -eq 1 ] || die "--json with a failing file: exit $rc"
python3 - "$j" <<'PY' || die "--json does not hold both the error and the score"
import json, sys
r = json.loads(sys.argv[1])["results"]
assert len(r) == 2, r
assert r[0]["space"].endswith("broken.json") and "invalid JSON" in r[0]["error"], r[0]
assert r[1]["unfinished"] is True and r[1]["valid"] == 7 and r[1]["configs"] == 10, r[1]
assert r[1]["space"].endswith("open.json") and r[1]["timing"] == "replayed", r[1]
PY

# the same file through db import and a replay tune
db="$tmp/t.db"
"$bin" db import "$tmp/open.json" --shape 64x64 --db "$db" >"$tmp/imp" 2>&1 || die "import of the unfinished cache: $(cat "$tmp/imp")"
grep -q "unfinished Kernel Tuner cache" "$tmp/imp" || die "import says nothing about the unfinished cache"
"$bin" tune fixture_kernel --device "replay:$tmp/open.json" --budget 5 --db "$db" --json >"$tmp/tune" 2>&1 \
  || die "replay tune of the unfinished cache: $(cat "$tmp/tune")"
grep -q "unfinished Kernel Tuner cache" "$tmp/tune" || die "the replay tune says nothing about the unfinished cache"
[ $fail = 0 ] && echo "multi-file replay scores the files that load; unfinished caches read as Kernel Tuner reads them"
exit $fail
