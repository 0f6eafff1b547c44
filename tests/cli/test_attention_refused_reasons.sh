#!/usr/bin/env bash
# Attention shapes that parse but that no template admits (a head dimension no template has, a
# paged prefill, ...) end with "no template admits SHAPE" and exit 1, and the note names, for
# every template, the constraint that refused the shape (they ended with "no candidate
# succeeded (0 evaluated, 0 failed)" and no reason for the templates whose space was empty
# through a combination of parameters, not one constraint alone).
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
n=0
for shape in 1x8x128x72 2x8x8192x24 1x16x64x8 4x8x512x200 1x8x128x64:paged16; do
  "$bin" tune attention --shape "$shape" --dtype bf16 --device model:h200 --budget 2 --db "$tmp/a.db" \
    >"$tmp/out" 2>&1; rc=$?
  [ $rc = 1 ] || die "$shape: exit $rc, expected 1"
  grep -q "no template admits $shape bf16" "$tmp/out" || die "$shape: $(grep rooftune "$tmp/out")"
  for t in attn_decode attn_mma attn_wgmma; do
    grep -qF "$t skipped for $shape: \"" "$tmp/out" && grep -oE "$t skipped for [^;]*" "$tmp/out" | grep -qE "is false|rejected the most" ||
      die "$shape: no constraint named for $t: $(grep note "$tmp/out")"
  done
  n=$((n + 1))
done
[ $fail = 0 ] && echo "attention shapes no template admits: $n, each template's refusing constraint named"
exit $fail
