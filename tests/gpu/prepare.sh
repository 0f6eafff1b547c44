#!/usr/bin/env bash
# Makes, on this machine, what tests/gpu/run.sh runs on a GPU machine where nothing can be
# installed, and which must cost it no compile in tiers 1 and 2:
#   1. a Release build in build-gpu-full/ with SQLite and Jansson linked statically, so it
#      needs only libc, zlib, NVRTC and cuBLASLt there (librooftune.so links SQLite's shared
#      library: a copy of libsqlite3.so.0 travels beside it, found through its $ORIGIN run path);
#   2. build-gpu/: only what the GPU machine runs from it (rooftune, librooftune, the GPU test
#      programs, load_gemm, bench_gemm), not the object files and libraries of the build, nor
#      pytest (the H200 image has it; RT_GPU_PYLIB=1 puts one in pylib/ for a machine without);
#   3. the cubin cache build-gpu/gpu-cache, filled with every candidate of tiers 1 and 2: each
#      line of tests/gpu/tiers.txt tuned on the model device (NVRTC needs no GPU), covering sets
#      as they are and the model's fastest N with twice N (the GPU ranks by the same model, and
#      a measured roof may move a few places); SQLite's cache compacted and packed
#      (gpu-cache.tgz, 5x smaller; run.sh unpacks it);
#   4. the dry run: `run.sh --plan` on that cache, which counts the compiles left (0 when all is
#      in), then the cache packed whatever the count, and the size that travels (the working
#      tree and build-gpu/ together under 64 MiB).
# Then, with the device tool:  run  command: bash tests/gpu/run.sh   carry: ["build-gpu"]
#
# Resumable: the cache survives a rerun (packed or not), and each table line tuned into it is
# recorded in gpu-cache/prepared.txt with a hash of templates/ and the binary once its dry run
# finds nothing left to compile, so a rerun (after a kill, a timeout or a failed line) tunes
# only the lines not yet in; a line whose tune fails is reported and the others go on.  Exit 0: everything in, 0 compiles left; 3: build-gpu/ is
# packed and usable but compiles are left (counted, with the lines that have them: run it again
# to continue); 1: the build or the size failed.
#   RT_GPU_TIERS=FILE   the table instead of tests/gpu/tiers.txt (run.sh reads it too)
#   RT_PREPARE_BIN=PATH a rooftune already built: steps 1 and 2 skipped (build-gpu/ holds only
#                       the cache then), to try the cache's logic on a small table
set -eu
cd "$(dirname "$0")/../.."
tiers=${RT_GPU_TIERS:-tests/gpu/tiers.txt}
[ -f "$tiers" ] || { echo "prepare.sh: no tiers table $tiers (RT_GPU_TIERS)" >&2; exit 1; }
full=build-gpu-full
if [ -n "${RT_PREPARE_BIN:-}" ]; then
  [ -x "$RT_PREPARE_BIN" ] || { echo "prepare.sh: RT_PREPARE_BIN=$RT_PREPARE_BIN is not a program" >&2; exit 1; }
  mkdir -p build-gpu
  [ ! -d build-gpu/gpu-cache ] && [ -f build-gpu/gpu-cache.tgz ] && tar -xzf build-gpu/gpu-cache.tgz -C build-gpu
  bin=$(realpath "$RT_PREPARE_BIN")
else
cmake -S . -B "$full" -DCMAKE_BUILD_TYPE=Release -DROOFTUNE_STATIC_DEPS=ON >/dev/null
targets=(rooftune rooftune_shared bench_gemm gpu_load_gemm)
for f in tests/gpu/test_*.c; do t=$(basename "$f" .c); targets+=("gpu_$t"); done
cmake --build "$full" -j "$(nproc)" --target "${targets[@]}" >/dev/null
sqlite=$(ldd "$full/librooftune.so" | sed -n 's/.*libsqlite3\.so\.0 => \([^ ]*\) .*/\1/p')
[ -n "$sqlite" ] && [ "$sqlite" != "$PWD/$full/libsqlite3.so.0" ] && cp -L "$sqlite" "$full/libsqlite3.so.0"
for b in "$full"/rooftune "$full"/tests/gpu_test_* "$full"/tests/gpu_load_gemm "$full"/librooftune.so; do
  # Jansson linked in statically; SQLite too, or else the carried copy (librooftune's)
  found=$(ldd "$b" | sed -n 's/.*libsqlite3\.so\.0 => \([^ ]*\) .*/\1/p')
  if ldd "$b" | grep -q libjansson ||
     { [ -n "$found" ] && [ "$(realpath "$found")" != "$(realpath "$full/libsqlite3.so.0")" ]; }; then
    echo "prepare.sh: $b links SQLite or Jansson from this machine" >&2
    exit 1
  fi
done

# 2. build-gpu: what runs there, laid out as in the build (run.sh and the steps expect it)
cache_keep=""
[ ! -d build-gpu/gpu-cache ] && [ -f build-gpu/gpu-cache.tgz ] && tar -xzf build-gpu/gpu-cache.tgz -C build-gpu
[ -d build-gpu/gpu-cache ] && cache_keep=$(mktemp -d) && mv build-gpu/gpu-cache "$cache_keep/"
rm -rf build-gpu
mkdir -p build-gpu/tests build-gpu/bench
cp -a "$full"/rooftune "$full"/librooftune.so* build-gpu/
[ -f "$full/libsqlite3.so.0" ] && cp -a "$full/libsqlite3.so.0" build-gpu/
cp -a "$full"/tests/gpu_test_* "$full"/tests/gpu_load_gemm build-gpu/tests/
cp -a "$full"/bench/bench_gemm build-gpu/bench/
[ -n "$cache_keep" ] && mv "$cache_keep/gpu-cache" build-gpu/ && rmdir "$cache_keep"
if [ "${RT_GPU_PYLIB:-0}" = 1 ] && python3 -m pip --version >/dev/null 2>&1; then
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --target build-gpu/pylib pytest >/dev/null ||
    echo "prepare.sh: pytest could not be put in build-gpu/pylib; the Python GPU tests will not run there" >&2
fi
bin=$PWD/build-gpu/rooftune
fi

# 3. the cubin cache of tiers 1 and 2, line by line, skipping those a previous run put in
export ROOFTUNE_CACHE_DIR=$PWD/build-gpu/gpu-cache ROOFTUNE_TEMPLATE_DIR=$PWD/templates
mkdir -p "$ROOFTUNE_CACHE_DIR"
done_list=$ROOFTUNE_CACHE_DIR/prepared.txt
touch "$done_list"
# what a line's cubins depend on besides the line: the templates and the compiling binary
stamp=$({ find templates -type f -print0 | sort -z | xargs -0 sha256sum; sha256sum <"$bin"; } | sha256sum | cut -c1-16)
n=0 skipped=0 failed=0
while read -r line; do
  read -r tier _step target shape dtype lens bud envs <<<"$line"
  case "$tier" in 1|2) ;; *) continue ;; esac
  if grep -qxF "$stamp $line" "$done_list"; then skipped=$((skipped + 1)); continue; fi
  args="$target --shape $shape --dtype $dtype"
  [ "$lens" = "-" ] || args="$args --kv-lens $lens"
  if [ "$bud" = cover ]; then args="$args --cover --strategy brute_force --budget 64" plan_args=$args
  else plan_args="$args --strategy model --budget $bud" args="$args --strategy model --budget $((2 * bud))"; fi
  # shellcheck disable=SC2086
  if env ROOFTUNE_COUNTERS=0 $envs "$bin" tune $args --device model:h200 --no-db >/dev/null 2>"$ROOFTUNE_CACHE_DIR.log"; then
    n=$((n + 1))
    # in only when run.sh's run of it (budget N, not 2N) would compile nothing: else a rerun retries it
    # shellcheck disable=SC2086
    dry_left=$(env ROOFTUNE_COMPILE_DRY=1 ROOFTUNE_COUNTERS=0 $envs "$bin" tune $plan_args \
               --device model:h200 --no-db --json 2>/dev/null | python3 -c 'import json,sys
try:
    d = json.load(sys.stdin); print(d["evaluated"] - d.get("compile", {}).get("cache_hits", 0))
except Exception: print(-1)')
    [ "$dry_left" = 0 ] && echo "$stamp $line" >>"$done_list" # at once: a kill keeps what was done
  else
    echo "prepare.sh: tier $tier: rooftune tune $args --device model:h200 failed (the other lines go on):" >&2
    tail -3 "$ROOFTUNE_CACHE_DIR.log" >&2
    failed=$((failed + 1))
  fi
done < <(grep -v '^#' "$tiers" | awk 'NF >= 7')
rm -f "$ROOFTUNE_CACHE_DIR.log"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.execute('VACUUM')" \
  "$ROOFTUNE_CACHE_DIR/cubins.db" 2>/dev/null || true
rm -f "$ROOFTUNE_CACHE_DIR"/cubins.db-wal "$ROOFTUNE_CACHE_DIR"/cubins.db-shm
cubins=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from cubins_v1').fetchone()[0])" "$ROOFTUNE_CACHE_DIR/cubins.db" 2>/dev/null || echo 0)
echo "prepare.sh: $n tune runs of tiers 1 and 2 on the model device, $skipped already in the cache, $failed failed: $cubins cubins cached"

# 4. the dry run on the unpacked cache: the compiles left, per line; packed whatever it says
plan=$(ROOFTUNE_BIN=$bin RT_GPU_TIERS=$tiers bash tests/gpu/run.sh --plan)
left=$(echo "$plan" | tail -1 | sed -n 's/.*, \([0-9]*\) compiles left$/\1/p')
echo "prepare.sh: dry run (run.sh --plan): $(echo "$plan" | tail -1)"
if [ "${left:-1}" != 0 ]; then
  echo "prepare.sh: ${left:-an unknown number of} compiles left for the GPU machine, in:" >&2
  echo "$plan" | awk '($1 == 1 || $1 == 2) && $(NF-1) ~ /^[0-9]+$/ && $(NF-1) > 0 {print "    " $0}' >&2
  echo "$plan" | grep "^compiles left" >&2 || true
fi
tar -czf build-gpu/gpu-cache.tgz.part -C build-gpu gpu-cache && mv -f build-gpu/gpu-cache.tgz.part build-gpu/gpu-cache.tgz &&
  rm -rf build-gpu/gpu-cache
tree_kb=$(git ls-files -z | xargs -0 du -ck 2>/dev/null | tail -1 | cut -f1)
other_kb=$(git ls-files -z --others --exclude-standard | xargs -0 -r du -ck 2>/dev/null | tail -1 | cut -f1)
build_kb=$(du -sk build-gpu | cut -f1)
total_mb=$(( (tree_kb + ${other_kb:-0} + build_kb) / 1024 ))
echo "build-gpu ready: $((build_kb / 1024)) MiB (the packed cache $(du -sk build-gpu/gpu-cache.tgz | cut -f1) KiB), with the working tree $total_mb MiB of the 64 MiB that travel (carry it: [\"build-gpu\"])"
[ "$total_mb" -lt 64 ] || { echo "prepare.sh: over the 64 MiB the device tool carries" >&2; exit 1; }
if [ "${left:-1}" != 0 ] || [ "$failed" != 0 ]; then
  echo "prepare.sh: packed with ${left:-?} compiles left and $failed failed lines: run it again to continue (the lines in are skipped)" >&2
  exit 3
fi
