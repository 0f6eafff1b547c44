#!/usr/bin/env bash
# Every write is checked: a command whose standard output cannot be written (/dev/full, a pipe
# whose reader is gone while SIGPIPE is ignored) exits 1 saying so, where it used to exit 0
# having written nothing.  `db export -o` into a full file system (a small tmpfs, when this
# runs as root) fails naming the file and leaves neither the file nor its temporary behind.
set -u
bin=${ROOFTUNE_BIN:?}
fx=${ROOFTUNE_SOURCE_DIR:?}/tests/data/ktfiles
tmp=$(mktemp -d)
mnt=""
cleanup() { [ -n "$mnt" ] && umount "$mnt" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

db="$tmp/t.db"
"$bin" db import "$fx/small.json" --family gemm --shape 64x64x64 --dtype f32 --db "$db" >/dev/null \
  || { echo "FAIL: cannot make the database"; exit 1; }

cmds=(
  "db list --db $db"
  "db list --json --db $db"
  "db show --db $db"
  "db show --json --db $db"
  "db export --db $db"
  "db export --format csv --db $db"
  "db export --format header --db $db"
  "db check --db $db"
  "lookup gemm --shape 64x64x64 --dtype f32 --json --db $db"
  "lookup gemm --shape 64x64x64 --dtype f32 --db $db"
  "replay --json --seeds 2 --budget 5 $fx/small.json"
  "tune fixture_kernel --device replay:$fx/small.json --budget 3 --json --db $tmp/r.db"
  "templates"
  "--help"
)
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086
  "$bin" $c >/dev/full 2>"$tmp/err"; rc=$?
  [ $rc -ne 0 ] || die "'rooftune $c' to /dev/full exited 0"
  grep -q "cannot write" "$tmp/err" || die "'rooftune $c' to /dev/full: no error: $(head -3 "$tmp/err")"
done

# a pipe whose reader has gone, with SIGPIPE ignored: EPIPE must be an error too
python3 - "$bin" "$db" <<'PY' || die "a closed pipe was not reported"
import os, signal, subprocess, sys
bin, db = sys.argv[1], sys.argv[2]
r, w = os.pipe()
os.close(r)
p = subprocess.run([bin, "db", "show", "--db", db], stdout=w, stderr=subprocess.PIPE,
                   restore_signals=False)  # Python ignores SIGPIPE: the child inherits that
os.close(w)
assert p.returncode == 1, p.returncode
assert b"cannot write standard output" in p.stderr, p.stderr
PY

# a full file system: the export fails naming the file and leaves nothing behind
if [ "$(id -u)" = 0 ] && mkdir -p "$tmp/full" && mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2>/dev/null; then
  mnt="$tmp/full"
  head -c 60000 /dev/zero >"$mnt/filler" 2>/dev/null
  "$bin" db export --db "$db" -o "$mnt/out.json" 2>"$tmp/err"; rc=$?
  [ $rc = 1 ] || die "export to a full tmpfs: exit $rc"
  grep -q "out.json" "$tmp/err" || die "export to a full tmpfs: the file is not named: $(cat "$tmp/err")"
  [ ! -e "$mnt/out.json" ] && [ ! -e "$mnt/out.json.tmp" ] || die "a half-written export was left behind: $(ls "$mnt")"
else
  echo "SKIP-PART: a full file system needs root and tmpfs mounts (export to a full disk not checked)"
fi
[ $fail = 0 ] && echo "every command's output is checked: /dev/full, a closed pipe and a full disk fail with the reason"
exit $fail
