#!/usr/bin/env bash
# A full disk (ENOSPC): a small tmpfs, mounted by this test as root.  A tune whose database
# fills the disk fails with one clear error and exit 1; every result committed before is kept,
# PRAGMA integrity_check and `db check` pass, and reads (db list, show, export to stdout,
# lookup) still work on the full disk; an export into it fails naming the file and leaves no
# half-written file; once space is freed the same tune resumes and completes without
# evaluating anything twice.  Skipped, saying why, where tmpfs cannot be mounted.
set -u
export LC_ALL=C
bin=${ROOFTUNE_BIN:?}
here=$(dirname "$0")
tmp=$(mktemp -d)
mnt="$tmp/mnt"
mounted=0
cleanup() { [ $mounted = 1 ] && umount "$mnt"; rm -rf "$tmp"; }
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "SKIP: a full disk needs a small tmpfs, and mounting one needs root"; exit 77; }
mkdir -p "$mnt"
mount -t tmpfs -o size=16m tmpfs "$mnt" 2>"$tmp/merr" || { echo "SKIP: cannot mount a tmpfs here: $(cat "$tmp/merr")"; exit 77; }
mounted=1
fail=0
die() { echo "FAIL: $*"; fail=1; }
uids() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print('\n'.join(sorted(r[0] for r in c.execute('select uid from results'))))" "$1"; }
integrity() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute('pragma integrity_check').fetchone()[0])" "$1"; }

python3 "$here/space_fixture.py" "$tmp/space.json"
db="$mnt/t.db"
tune=(synthetic --device "replay:$tmp/space.json" --strategy random)
"$bin" tune "${tune[@]}" --budget 200 --db "$db" >/dev/null 2>"$tmp/err" || { echo "FAIL: first tune: $(tail -2 "$tmp/err")"; exit 1; }
uids "$db" >"$tmp/committed"
# fill what is left but 256 KiB, then ask for much more: it stores some, then the disk is full
dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null
truncate -s -262144 "$mnt/filler"
"$bin" tune "${tune[@]}" --budget 3000 --db "$db" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 1 ] || die "a tune on a full disk exited $rc, expected 1: $(tail -2 "$tmp/err")"
grep -q "cannot write the database" "$tmp/err" || die "no clear error on a full disk: $(tail -3 "$tmp/err")"
grep -q "t.db" "$tmp/err" || die "the error does not name the database: $(tail -3 "$tmp/err")"
grep -qiE "segmentation|abort|core dumped|assert" "$tmp/err" && die "it crashed: $(tail -3 "$tmp/err")"
uids "$db" >"$tmp/after"
lost=$(comm -23 "$tmp/committed" "$tmp/after" | wc -l)
[ "$lost" = 0 ] || die "$lost committed results lost on a full disk"
[ "$(integrity "$db")" = ok ] || die "integrity_check on a full disk: $(integrity "$db")"
"$bin" db check --db "$db" >"$tmp/check" 2>&1 || die "db check on a full disk: $(tail -3 "$tmp/check")"
for c in "db list" "db show" "db export" "db export --format csv"; do
  # shellcheck disable=SC2086
  "$bin" $c --db "$db" >"$tmp/out" 2>"$tmp/err2" || die "'$c' on a full disk: $(tail -2 "$tmp/err2")"
  [ -s "$tmp/out" ] || die "'$c' on a full disk printed nothing"
done
"$bin" db export --db "$db" -o "$mnt/out.json" 2>"$tmp/err2"; rc=$?
[ $rc = 1 ] || die "an export into the full disk exited $rc"
grep -q "out.json" "$tmp/err2" || die "the failed export does not name its file: $(cat "$tmp/err2")"
[ ! -e "$mnt/out.json" ] && [ ! -e "$mnt/out.json.tmp" ] || die "a half-written export was left: $(ls "$mnt")"
kept=$(wc -l <"$tmp/after")
# free the space: the same tune resumes and completes, evaluating nothing twice
rm -f "$mnt/filler"
"$bin" tune "${tune[@]}" --budget 3000 --db "$db" --json >"$tmp/final.json" 2>"$tmp/err" || die "the resume after freeing space: $(tail -2 "$tmp/err")"
read -r rows keys <<<"$(python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(*c.execute('select count(*), count(distinct config) from results').fetchone())" "$db")"
[ "$rows" = "$keys" ] || die "$((rows - keys)) configurations evaluated twice"
[ "$rows" = 3000 ] || die "$rows results after the resume, expected 3000"
[ $fail = 0 ] && echo "full disk: the tune stopped with one clear error; 0 of $(wc -l <"$tmp/committed") committed results lost" \
  "($kept kept in all); integrity, db check and reads ok on the full disk; the export left nothing; after freeing space" \
  "the resume completed $rows results, none evaluated twice"
exit $fail
