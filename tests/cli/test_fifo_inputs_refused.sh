#!/usr/bin/env bash
# A FIFO given where rooftune reads a file is refused at once, with the reason, instead of
# blocking forever (no writer ever comes): the job file of `job run`, `job status` and
# `report --job`, the --kv-lens file of `tune`, a recorded space for `replay:`.  Each must end
# within 20 s with a non-zero exit and say "FIFO".  In the template path (--templates), a FIFO
# manifest or family.json, a manifest that is a link to /dev/zero, a folder named like a manifest
# and a FIFO as a manifest's source are errors naming the file (they were skipped without a word,
# or the source "not found"), as is a FIFO given to `db import`.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
mkfifo "$tmp/fifo"
n=0
while IFS= read -r args; do
  # shellcheck disable=SC2086
  timeout 20 "$bin" $args >"$tmp/out" 2>&1 </dev/null; rc=$?
  [ $rc = 124 ] && { die "rooftune $args blocked on the FIFO"; continue; }
  [ $rc != 0 ] || die "rooftune $args: exit 0"
  grep -q "FIFO" "$tmp/out" || die "rooftune $args: no reason: $(head -3 "$tmp/out")"
  n=$((n + 1))
done <<LIST
job run $tmp/fifo
job status $tmp/fifo
report --job $tmp/fifo -o $tmp/r.html
tune attn_decode --shape 2x8:8x1:256x64 --dtype bf16 --kv-lens $tmp/fifo --device model:h200 --budget 1 --db $tmp/k.db
tune synthetic --device replay:$tmp/fifo --budget 1 --db $tmp/k.db
LIST
# what the template path holds: a .json that is not a file is an error naming it (it was skipped
# without a word), and never opened (a FIFO would block, /dev/zero never ends)
mkdir -p "$tmp/tf/sub" "$tmp/ff/sub" "$tmp/zf" "$tmp/df/sub/folder.json"
mkfifo "$tmp/tf/sub/bad.json" "$tmp/ff/sub/family.json"
ln -s /dev/zero "$tmp/zf/zero.json"
mkdir -p "$tmp/sf"
cp "${ROOFTUNE_SOURCE_DIR:?}/templates/transpose/transpose_tiled.json" "$tmp/sf/"
mkfifo "$tmp/sf/transpose_tiled.cu"
m=0
while IFS='|' read -r args file what; do
  # shellcheck disable=SC2086
  timeout 20 "$bin" $args >"$tmp/out" 2>&1 </dev/null; rc=$?
  [ $rc = 124 ] && { die "rooftune $args blocked on $file"; continue; }
  [ $rc != 0 ] || die "rooftune $args: exit 0 with $file $what"
  grep -q "$file: .*is $what" "$tmp/out" || die "rooftune $args: $file not named: $(head -3 "$tmp/out")"
  m=$((m + 1))
done <<LIST
templates --templates $tmp/tf|$tmp/tf/sub/bad.json|a FIFO
tune softmax --shape 64x256 --dtype f32 --device model:h200 --budget 1 --templates $tmp/tf --db $tmp/k.db|$tmp/tf/sub/bad.json|a FIFO
templates --check --templates $tmp/ff|$tmp/ff/sub/family.json|a FIFO
templates --templates $tmp/zf|$tmp/zf/zero.json|a character device
templates --templates $tmp/df|$tmp/df/sub/folder.json|a folder
templates --templates $tmp/sf|$tmp/sf/transpose_tiled.json: source|a FIFO
db import $tmp/fifo --family gemm --shape 64x64x64 --dtype f32 --db $tmp/i.db|$tmp/fifo|a FIFO
LIST
[ $fail = 0 ] && echo "FIFOs as inputs: $n commands refused at once, naming the FIFO; $m template-path and" \
  "import inputs (FIFO manifests, family.json and source, a link to /dev/zero, a folder) refused naming the file"
exit $fail
