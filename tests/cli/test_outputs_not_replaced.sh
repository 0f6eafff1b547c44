#!/usr/bin/env bash
# `-o FILE` and every file rooftune writes never replace what they must not (core/fileio.h):
#   - a character device is written in place and stays a device: /dev/full fails with "No space
#     left" and exit 1 (it used to exit 0 and become a regular file), a device node made here
#     (a copy of /dev/null, root only) takes the output and stays a device;
#   - a FIFO is written in place when something reads it (the reader gets the whole export) and
#     refused at once, with the reason, when nothing does (no hang);
#   - a symbolic link is followed by the kernel (open(2), never a readlink walk of our own): its
#     target gets the file and the link stays a link (also a dangling one, whose target is
#     created; one to /dev/full fails like /dev/full); a link planted by nobody in a sticky
#     folder pointing at a root-only 0600 file is refused to root (EACCES, fs.protected_symlinks,
#     turned on for the check where it is off, else skipped saying why) and the file untouched;
#   - /dev/stdout is where stdout goes: `-o /dev/stdout >> log` appends (the log keeps its lines;
#     it was replaced whole), `-o /dev/stdout | cat` works (it blamed "/proc/self/fd does not
#     exist");
#   - a folder, a socket and a path in a missing folder are refused with the reason;
#   - a regular file is replaced whole and keeps its permissions, and no temporary is left;
#   - the same for `report -o`, for a job's summary.json and report.html made links, a job
#     output folder that is a file ("is a file, not a folder", where it said "cannot take the
#     lock" with no reason), and the cubin cache's database as a FIFO (refused, not "damaged"
#     and moved aside).
set -u
bin=${ROOFTUNE_BIN:?}
fx=${ROOFTUNE_SOURCE_DIR:?}/tests/data/ktfiles
tmp=$(mktemp -d)
# the planted-link check may turn fs.protected_symlinks on: put it back whatever happens
trap '[ "${was_protected:-1}" = 1 ] || echo "$was_protected" >/proc/sys/fs/protected_symlinks 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
db="$tmp/t.db"
"$bin" db import "$fx/small.json" --family gemm --shape 64x64x64 --dtype f32 --db "$db" >/dev/null ||
  { echo "FAIL: cannot make the database"; exit 1; }
"$bin" db export --db "$db" -o "$tmp/want.json" || { echo "FAIL: export to a file"; exit 1; }
was_protected=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null || echo 1)
kinds=0

# a rooftune that replaces a device breaks the machine: put it back (root), PATH and minor number
restore() { [ "$(id -u)" = 0 ] && rm -f "$1" && mknod -m 666 "$1" c 1 "$2"; }

# write WHAT (export or report) to TARGET: prints the exit status, keeps stderr in $tmp/err
out() {
  case $1 in
  export) timeout 20 "$bin" db export --db "$db" -o "$2" >/dev/null 2>"$tmp/err" ;;
  report) timeout 20 "$bin" report --db "$db" -o "$2" >/dev/null 2>"$tmp/err" ;;
  esac
  echo $?
}

for w in export report; do
  # /dev/full: an error, and still a device
  [ "$(out $w /dev/full)" = 1 ] || die "$w -o /dev/full did not fail"
  grep -q "No space left" "$tmp/err" || die "$w -o /dev/full: $(cat "$tmp/err")"
  [ -c /dev/full ] || { die "$w -o /dev/full replaced /dev/full"; restore /dev/full 7; }
  # /dev/null and /dev/stdout: written in place
  [ "$(out $w /dev/null)" = 0 ] || die "$w -o /dev/null: $(cat "$tmp/err")"
  [ -c /dev/null ] || { die "$w -o /dev/null replaced it"; restore /dev/null 3; }
  # a device node of our own (root): written in place, stays a device
  if [ "$(id -u)" = 0 ] && mknod "$tmp/dev-$w" c 1 3 2>/dev/null; then
    [ "$(out $w "$tmp/dev-$w")" = 0 ] || die "$w -o a device node: $(cat "$tmp/err")"
    [ -c "$tmp/dev-$w" ] || die "$w -o a device node replaced it with $(stat -c %F "$tmp/dev-$w")"
    kinds=$((kinds + 1))
  fi
  # a FIFO with a reader gets everything; without one, refused at once
  mkfifo "$tmp/fifo-$w"
  timeout 30 cat "$tmp/fifo-$w" >"$tmp/got-$w" & # bounded: a FIFO replaced by a file has no writer
  reader=$!
  sleep 0.2
  [ "$(out $w "$tmp/fifo-$w")" = 0 ] || die "$w -o a FIFO with a reader: $(cat "$tmp/err")"
  wait $reader
  [ -p "$tmp/fifo-$w" ] || die "$w -o a FIFO replaced it"
  [ -s "$tmp/got-$w" ] || die "$w -o a FIFO: the reader got nothing"
  [ $w = report ] || cmp -s "$tmp/got-$w" "$tmp/want.json" || die "export -o a FIFO: the reader got another export"
  rc=$(out $w "$tmp/fifo-$w")
  [ "$rc" = 1 ] || die "$w -o a FIFO nobody reads exited $rc (124: it blocked)"
  grep -q "FIFO and nothing reads it" "$tmp/err" || die "$w -o a FIFO nobody reads: $(cat "$tmp/err")"
  # a symbolic link: followed, stays a link
  echo placeholder-before >"$tmp/real-$w"
  ln -s "real-$w" "$tmp/link-$w"
  [ "$(out $w "$tmp/link-$w")" = 0 ] || die "$w -o a symlink: $(cat "$tmp/err")"
  [ -L "$tmp/link-$w" ] || die "$w -o a symlink replaced the link"
  grep -q placeholder-before "$tmp/real-$w" && die "$w -o a symlink did not write its target"
  ln -s "new-$w" "$tmp/dangling-$w"
  [ "$(out $w "$tmp/dangling-$w")" = 0 ] || die "$w -o a dangling symlink: $(cat "$tmp/err")"
  [ -L "$tmp/dangling-$w" ] && [ -s "$tmp/new-$w" ] || die "$w -o a dangling symlink: no target made"
  ln -s /dev/full "$tmp/tofull-$w"
  [ "$(out $w "$tmp/tofull-$w")" = 1 ] || die "$w -o a symlink to /dev/full did not fail"
  [ -L "$tmp/tofull-$w" ] && [ -c /dev/full ] || die "$w -o a symlink to /dev/full replaced something"
  # refused with the reason
  mkdir "$tmp/dir-$w"
  [ "$(out $w "$tmp/dir-$w")" = 1 ] && grep -q "it is a folder" "$tmp/err" || die "$w -o a folder: $(cat "$tmp/err")"
  python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$tmp/sock-$w"
  [ "$(out $w "$tmp/sock-$w")" = 1 ] && grep -q "it is a socket" "$tmp/err" || die "$w -o a socket: $(cat "$tmp/err")"
  [ "$(out $w "$tmp/nowhere/x.json")" = 1 ] && grep -q "folder $tmp/nowhere does not exist" "$tmp/err" ||
    die "$w -o in a missing folder: $(cat "$tmp/err")"
  # a regular file: replaced whole, permissions kept, no temporary left
  echo old >"$tmp/file-$w"
  chmod 600 "$tmp/file-$w"
  [ "$(out $w "$tmp/file-$w")" = 0 ] || die "$w -o a file: $(cat "$tmp/err")"
  [ "$(stat -c %a "$tmp/file-$w")" = 600 ] || die "$w -o a file changed its mode to $(stat -c %a "$tmp/file-$w")"
  kinds=$((kinds + 11)) # /dev/full, /dev/null, 2 FIFOs, 3 symlinks, folder, socket, missing folder, file
done
ls "$tmp" | grep -q '\.tmp$' && die "a temporary file was left: $(ls "$tmp" | grep '\.tmp$')"

# /dev/stdout is where stdout goes: appended to a log opened with >>, written into a pipe
printf 'line one\nline two\n' >"$tmp/log"
"$bin" db export --db "$db" -o /dev/stdout >>"$tmp/log" 2>"$tmp/err" || die "export -o /dev/stdout >> log: $(cat "$tmp/err")"
[ "$(head -2 "$tmp/log")" = "$(printf 'line one\nline two')" ] || die "export -o /dev/stdout >> log replaced the log's lines"
tail -n +3 "$tmp/log" | cmp -s - "$tmp/want.json" || die "export -o /dev/stdout >> log: the log does not end with the export"
"$bin" db export --db "$db" -o /dev/stdout 2>"$tmp/err" | cat >"$tmp/piped" || die "export -o /dev/stdout | cat failed"
[ -s "$tmp/err" ] && die "export -o /dev/stdout | cat: $(cat "$tmp/err")"
cmp -s "$tmp/piped" "$tmp/want.json" || die "export -o /dev/stdout | cat: cat got another export"
kinds=$((kinds + 2))

# a link planted by another user in a sticky folder is followed by the kernel, which refuses root
# (fs.protected_symlinks): the root-only file it points at is untouched
planted() {
  [ "$(id -u)" = 0 ] || { echo "not root"; return; }
  id nobody >/dev/null 2>&1 || { echo "no user nobody"; return; }
  local was
  was=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null) || { echo "no fs.protected_symlinks"; return; }
  if [ "$was" != 1 ]; then # the usual setting; this machine has it off: on for this check
    echo 1 2>/dev/null >/proc/sys/fs/protected_symlinks || { echo "fs.protected_symlinks is $was and cannot be set"; return; }
  fi
  chmod 755 "$tmp" && mkdir -m 1777 "$tmp/sticky" && echo "root's secret" >"$tmp/secret" && chmod 600 "$tmp/secret"
  if su nobody -s /bin/sh -c "ln -s '$tmp/secret' '$tmp/sticky/link'" 2>"$tmp/suerr" </dev/null; then
    [ "$(out export "$tmp/sticky/link")" = 1 ] || echo "FAIL: export -o a link planted by nobody in a sticky folder did not fail"
    grep -q "Permission denied" "$tmp/err" || echo "FAIL: export -o a planted link: $(cat "$tmp/err")"
    [ "$(cat "$tmp/secret")" = "root's secret" ] && [ "$(stat -c %a "$tmp/secret")" = 600 ] ||
      echo "FAIL: export -o a planted link changed the root-only file it points at"
    [ -L "$tmp/sticky/link" ] || echo "FAIL: export -o a planted link replaced the link"
    echo "ok"
  else
    echo "nobody cannot make a link here: $(head -1 "$tmp/suerr")"
  fi
  [ "$was" = 1 ] || echo "$was" >/proc/sys/fs/protected_symlinks
}
res=$(planted)
case $res in
*FAIL*) echo "$res" | grep FAIL; fail=1 ;;
ok) kinds=$((kinds + 1)) ;;
*) echo "note: the planted-link check skipped: $res" ;;
esac

# a job: summary.json and report.html as links are followed; an output "folder" that is a file
cat >"$tmp/j.json" <<'EOF'
{"rooftune_job": 1, "name": "j", "database": "j.db", "device": "model:h200", "output": "out",
 "recheck": false, "defaults": {"budget": 2},
 "problems": [{"target": "softmax", "shape": "64x256", "dtype": "f32"}]}
EOF
mkdir -p "$tmp/out" "$tmp/elsewhere"
ln -s ../elsewhere/summary.json "$tmp/out/summary.json"
ln -s ../elsewhere/report.html "$tmp/out/report.html"
"$bin" job run "$tmp/j.json" >"$tmp/job.log" 2>&1 || die "job run: $(tail -3 "$tmp/job.log")"
[ -L "$tmp/out/summary.json" ] && [ -s "$tmp/elsewhere/summary.json" ] || die "job run replaced its summary's link"
[ -L "$tmp/out/report.html" ] && [ -s "$tmp/elsewhere/report.html" ] || die "job run replaced its report's link"
sed 's/"output": "out"/"output": "afile"/' "$tmp/j.json" >"$tmp/j2.json"
echo x >"$tmp/afile"
"$bin" job run "$tmp/j2.json" >"$tmp/job.log" 2>&1 && die "a job whose output folder is a file ran"
grep -q "afile is a file, not a folder" "$tmp/job.log" || die "output folder a file: $(tail -2 "$tmp/job.log")"
sed 's|"output": "out"|"output": "/dev/null"|' "$tmp/j.json" >"$tmp/j3.json"
"$bin" job run "$tmp/j3.json" >"$tmp/job.log" 2>&1 && die "a job whose output folder is /dev/null ran"
grep -q "/dev/null is a device, not a folder" "$tmp/job.log" ||
  die "output folder a device: $(tail -2 "$tmp/job.log")"
[ -c /dev/null ] || { die "a job replaced /dev/null"; restore /dev/null 3; }

# the cubin cache's database a FIFO: refused, not moved aside as damaged, the tune goes on
mkdir -p "$tmp/cache"
mkfifo "$tmp/cache/cubins.db"
ROOFTUNE_CACHE_DIR="$tmp/cache" timeout 300 "$bin" tune softmax --shape 64x256 --dtype f32 --device model:h200 \
  --budget 1 --db "$tmp/c.db" >"$tmp/tune.log" 2>&1; rc=$?
[ $rc = 0 ] || die "tune with a FIFO as the cubin cache exited $rc: $(tail -2 "$tmp/tune.log")"
grep -q "cubins.db: it is a FIFO" "$tmp/tune.log" || die "no note on the FIFO cache: $(grep -i cache "$tmp/tune.log")"
[ -p "$tmp/cache/cubins.db" ] && [ ! -e "$tmp/cache/cubins.db.damaged" ] || die "the FIFO cache was moved aside"
[ $fail = 0 ] && echo "outputs: $kinds targets of export and report (/dev/full, /dev/null, device nodes, FIFOs with" \
  "and without a reader, symlinks live, dangling, to /dev/full and planted, a folder, a socket, a missing folder, a file," \
  "/dev/stdout appended to and piped) as" \
  "they must be; job outputs through links; a FIFO cubin cache refused"
exit $fail
