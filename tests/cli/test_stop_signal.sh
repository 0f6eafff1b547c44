#!/usr/bin/env bash
# A stop signal ends a tune cleanly (cli_stop_begin, cli/cli.h): SIGTERM, then SIGINT, to a
# `rooftune tune` that has stored its first result; each time it finishes what it has, exits 1
# saying it was interrupted and keeping the candidates finished, says so in --json, and the
# database records the run as interrupted with its results kept.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
export ROOFTUNE_CACHE_DIR="$tmp/cache"
# results stored so far in database $1 (0 while it has none)
stored() {
  python3 - "$1" <<'PY' 2>/dev/null || echo 0
import sqlite3, sys
print(sqlite3.connect(sys.argv[1], timeout=5).execute("SELECT count(*) FROM results").fetchone()[0])
PY
}
for sig in TERM INT; do
  db="$tmp/$sig.db"
  "$bin" tune gemm --shape 4096x4096x4096 --dtype f16 --device model:h200 --budget 100000 \
    --db "$db" --json >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  for _ in $(seq 600); do # up to a minute for the first stored result
    [ -f "$db" ] && [ "$(stored "$db")" -gt 0 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -"$sig" "$pid" 2>/dev/null || die "SIG$sig: the tune ended before the signal: $(tail -3 "$tmp/err")"
  wait "$pid"
  rc=$?
  pid=
  [ $rc = 1 ] || die "SIG$sig: exit $rc, expected 1: $(tail -3 "$tmp/err")"
  grep -q "rooftune tune: interrupted; the [0-9]* candidates finished are kept" "$tmp/err" ||
    die "SIG$sig: stderr does not say it was interrupted: $(tail -3 "$tmp/err")"
  python3 - "$tmp/out" "$db" <<'PY' || die "SIG$sig: the report or the database: $(head -c 300 "$tmp/out")"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert d.get("interrupted") is True, d.keys()
c = sqlite3.connect(sys.argv[2])
runs = c.execute("SELECT status FROM runs").fetchall()
assert runs == [("interrupted",)], runs
assert c.execute("SELECT count(*) FROM results").fetchone()[0] > 0
PY
done
[ $fail = 0 ] && echo "SIGTERM and SIGINT each end a tune as interrupted, its results kept"
exit $fail
