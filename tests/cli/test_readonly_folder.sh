#!/usr/bin/env bash
# A database in a read-only folder (a tmpfs remounted read-only by this test as root; as
# another user, a folder without write permission): it could not even be read, because a WAL
# reader needs to create its shared-memory file beside it.  Now every read works (db list,
# show, check, export to stdout, lookup), a writer (tune, import) fails with one clear error
# naming the file and saying the folder is read-only, and nothing in the file changes.  As root,
# the same reads again by a user who is not root (nobody) on a folder it cannot write (SQLite
# says READONLY to such a reader, not CANTOPEN: those reads failed), and a database in a folder
# that does not exist is "its folder does not exist", not "read-only".
# Skipped, saying why, where neither can be arranged (the reads by nobody alone, where nobody
# cannot reach even the copy it runs).
set -u
bin=${ROOFTUNE_BIN:?}
here=$(dirname "$0")
tmp=$(mktemp -d)
dir="$tmp/ro"
mounted=0
cleanup() { [ $mounted = 1 ] && umount "$dir"; chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$dir"
fail=0
die() { echo "FAIL: $*"; fail=1; }
if [ "$(id -u)" = 0 ]; then
  mount -t tmpfs -o size=16m tmpfs "$dir" 2>"$tmp/merr" || { echo "SKIP: root, but cannot mount a tmpfs (root ignores folder permissions): $(cat "$tmp/merr")"; exit 77; }
  mounted=1
fi
python3 "$here/space_fixture.py" "$tmp/space.json"
db="$dir/t.db"
"$bin" tune synthetic --device "replay:$tmp/space.json" --budget 100 --db "$db" >/dev/null 2>"$tmp/err" \
  || { echo "FAIL: tune: $(tail -2 "$tmp/err")"; exit 1; }
"$bin" db import "${ROOFTUNE_SOURCE_DIR:?}/tests/data/ktfiles/small.json" --family gemm --shape 64x64x64 --dtype f32 \
  --db "$db" >/dev/null || { echo "FAIL: import"; exit 1; }
sum=$(sha256sum "$db" | cut -d' ' -f1)
if [ $mounted = 1 ]; then
  mount -o remount,ro "$dir" || { echo "SKIP: cannot remount the tmpfs read-only"; exit 77; }
else
  chmod a-w "$dir"
fi
ls "$dir" | grep -q -- "-shm" && echo "note: the WAL's shared-memory file is there"
for c in "db list" "db list --json" "db show" "db check" "db export" "db export --format header" \
         "lookup gemm --shape 64x64x64 --dtype f32 --allow-mismatch"; do
  # shellcheck disable=SC2086
  "$bin" $c --db "$db" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc = 0 ] || die "'$c' in a read-only folder: exit $rc: $(tail -2 "$tmp/err")"
  [ -s "$tmp/out" ] || die "'$c' in a read-only folder printed nothing"
done
"$bin" tune synthetic --device "replay:$tmp/space.json" --budget 120 --db "$db" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 1 ] || die "a tune into a read-only folder exited $rc"
grep -q "t.db: cannot write the database: its folder is read-only" "$tmp/err" || die "tune: $(tail -2 "$tmp/err")"
"$bin" db import "$ROOFTUNE_SOURCE_DIR/tests/data/ktfiles/ktt_small.json" --shape 8x8 --db "$db" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 1 ] || die "an import into a read-only folder exited $rc"
grep -q "read-only" "$tmp/err" || die "import: $(tail -2 "$tmp/err")"
[ "$(sha256sum "$db" | cut -d' ' -f1)" = "$sum" ] || die "the database changed"
# a user who is not root, on a folder it may not write (root's own, mode 555).  nobody runs a
# copy of the binary and its library beside the database: the clone may live where only root
# may enter (/root, a mktemp -d folder), and the build's own binary is out of nobody's reach there
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  mkdir -p "$tmp/nr" "$tmp/nrbin"
  cp "$db" "$tmp/nr/t.db"
  cp "$bin" "$tmp/nrbin/rooftune"
  lib=$(ldd "$bin" | sed -n 's/.*librooftune\.so\.0 => \([^ ]*\) .*/\1/p')
  [ -n "$lib" ] && cp "$lib" "$tmp/nrbin/"
  chmod 755 "$tmp" "$tmp/nrbin" "$tmp/nrbin"/* && chmod 555 "$tmp/nr" && chmod 644 "$tmp/nr/t.db"
  nr() { su nobody -s /bin/sh -c "LD_LIBRARY_PATH='$tmp/nrbin' '$tmp/nrbin/rooftune' $1"; }
  if ! nr --version >/dev/null 2>"$tmp/err" </dev/null; then
    echo "SKIP (the reads by nobody only): nobody cannot run a copy in $tmp/nrbin, a folder above it is closed to other users: $(tail -1 "$tmp/err")"
  else
    for c in "db list" "db show" "db check" "lookup gemm --shape 64x64x64 --dtype f32 --allow-mismatch"; do
      nr "$c --db '$tmp/nr/t.db'" >"$tmp/out" 2>"$tmp/err" </dev/null; rc=$?
      [ $rc = 0 ] || die "'$c' by nobody in a folder it cannot write: exit $rc: $(tail -2 "$tmp/err")"
    done
  fi
fi
"$bin" tune synthetic --device "replay:$tmp/space.json" --budget 1 --db "$tmp/missing/sub/t.db" >/dev/null 2>"$tmp/err"
grep -q "its folder does not exist" "$tmp/err" || die "a database in a missing folder: $(tail -1 "$tmp/err")"
[ $fail = 0 ] && echo "read-only folder: list, show, check, export and lookup work; tune and import fail naming the file; the file is unchanged"
exit $fail
