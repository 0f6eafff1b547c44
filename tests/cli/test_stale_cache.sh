#!/usr/bin/env bash
# The cubin cache never serves a stale result: a copy of gemm_mma in its own folder with its own
# common/ (given with --templates) is keyed by that copy's headers, so `#error stale` added to
# the copy's rt_ptx.h fails the next `tune` with the #error instead of evaluating cached cubins;
# an error from a then-missing header is not served once the header exists; a FIFO or a link to
# /dev/zero that an include would read is refused by its path at once (`tune` and
# `templates --check`), and a FIFO nothing includes is never opened.  Real NVRTC compiles, the
# model device.
set -u
bin=${ROOFTUNE_BIN:?}
src=${ROOFTUNE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
export ROOFTUNE_CACHE_DIR=$tmp/cache
mkdir -p "$tmp/tpl/gemm"
cp -r "$src/templates/common" "$tmp/tpl/"
cp "$src/templates/gemm/gemm_mma.cu" "$src/templates/gemm/gemm_mma.json" "$src"/templates/gemm/*.h "$tmp/tpl/gemm/"
# its own name, so the copy and the shipped template can both be on the path
sed -i '0,/"name": *"gemm_mma"/s//"name": "gemm_mma_copy"/' "$tmp/tpl/gemm/gemm_mma.json"
n=0
tune() { # tune DB: the copy, two configurations
  timeout 120 "$bin" tune gemm_mma_copy --shape 256x256x256 --dtype f16 --device model:h200 \
    --budget 2 --strategy random --templates "$tmp/tpl" --db "$tmp/$1.db" >"$tmp/out" 2>&1 </dev/null
}

tune a; rc=$?
[ $rc = 0 ] || die "first tune of the copy: exit $rc: $(tail -3 "$tmp/out")"
tune b; rc=$?
[ $rc = 0 ] || die "second tune: exit $rc"
grep -q "2 compiles from the cache" "$tmp/out" || die "the unchanged copy was compiled again: $(grep tuned "$tmp/out")"

# 1. the copy's common/rt_ptx.h changes: compiled again, and the #error is what it says
echo '#error stale' >>"$tmp/tpl/common/rt_ptx.h"
tune c; rc=$?
[ $rc != 0 ] || die "tune after #error in the copy's rt_ptx.h: exit 0 (cached cubins served)"
grep -q "#error directive: stale" "$tmp/out" || die "no #error from the copy: $(head -3 "$tmp/out")"
grep -q "$tmp/tpl/gemm/../common/rt_ptx.h" "$tmp/out" || die "the error does not name the copy's header"
n=$((n + 1))
# put back: the first cubins are hits again (the key is the content)
sed -i '/^#error stale$/d' "$tmp/tpl/common/rt_ptx.h"
tune d; rc=$?
[ $rc = 0 ] && grep -q "2 compiles from the cache" "$tmp/out" || die "restored header: exit $rc, $(grep tuned "$tmp/out")"
n=$((n + 1))

# 2. a header missing at first: the error; once it exists, a success (not the stored error)
sed -i 's|#include "../common/rt_ptx.h"|#include "../common/rt_ptx.h"\n#include "../common/late.h"|' "$tmp/tpl/gemm/gemm_index.h"
tune e; rc=$?
[ $rc != 0 ] && grep -q 'late.h' "$tmp/out" || die "missing late.h: exit $rc: $(head -2 "$tmp/out")"
echo '/* late */' >"$tmp/tpl/common/late.h"
tune f; rc=$?
[ $rc = 0 ] || die "late.h added: exit $rc (the stored error served?): $(head -2 "$tmp/out")"
grep -q "0 compiles from the cache" "$tmp/out" || die "late.h added: $(grep tuned "$tmp/out")"
n=$((n + 1))

# 3. a FIFO nothing includes is never opened; one an include finds is refused by its path
mkfifo "$tmp/tpl/gemm/unused.h"
tune g; rc=$?
[ $rc = 124 ] && die "tune blocked on a FIFO that nothing includes"
[ $rc = 0 ] || die "a FIFO nothing includes: exit $rc: $(head -2 "$tmp/out")"
rm "$tmp/tpl/common/late.h"
mkfifo "$tmp/tpl/common/late.h"
tune h; rc=$?
[ $rc = 124 ] && die "tune blocked on the included FIFO late.h"
[ $rc != 0 ] || die "an included FIFO: exit 0"
grep -q "$tmp/tpl/gemm/../common/late.h (included by $tmp/tpl/gemm/gemm_index.h) is a FIFO" "$tmp/out" ||
  die "the FIFO is not named: $(head -2 "$tmp/out")"
timeout 60 "$bin" templates --dir "$tmp/tpl" --check >"$tmp/out" 2>&1 </dev/null; rc=$?
[ $rc = 124 ] && die "templates --check blocked on the FIFO"
grep -q "late.h (included by .*) is a FIFO" "$tmp/out" || die "templates --check: exit $rc: $(head -3 "$tmp/out")"
rm "$tmp/tpl/common/late.h"
ln -s /dev/zero "$tmp/tpl/common/late.h"
tune i; rc=$?
[ $rc != 124 ] && [ $rc != 0 ] && grep -q "late.h .* is a character device" "$tmp/out" ||
  die "a link to /dev/zero: exit $rc: $(head -2 "$tmp/out")"
n=$((n + 1))

[ $fail = 0 ] && echo "stale cache: $n cases (a copied common/ edited and put back, a header added, FIFOs and a device) keyed or refused"
exit $fail
