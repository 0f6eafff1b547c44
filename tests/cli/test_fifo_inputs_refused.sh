#!/usr/bin/env bash
# A FIFO given where rooftune reads a file is refused at once, with the reason, instead of
# blocking forever (no writer ever comes): the job file of `job run`, `job status` and
# `report --job`, the --kv-lens file of `tune`, a recorded space for `replay:`.  Each must end
# within 20 s with a non-zero exit and say "FIFO".
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
[ $fail = 0 ] && echo "FIFOs as inputs: $n commands refused at once, naming the FIFO"
exit $fail
