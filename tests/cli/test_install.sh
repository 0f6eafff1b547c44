#!/usr/bin/env bash
# `cmake --install` into a temporary prefix; the installed librooftune needs only the promised
# libraries (readelf -d) and exports exactly its version script's names; then the example is
# built against the installed copy twice (pkg-config and find_package(rooftune)) and run on a
# database made by the installed `rooftune` (whose `lookup` uses the installed library): without
# a GPU it prints what it would run and exits 0.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
src=${ROOFTUNE_SOURCE_DIR:?}
build=$(dirname "$bin")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
prefix="$tmp/prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; die "cmake --install"; exit 1; }
libdir=$(ls -d "$prefix"/lib*/ | head -1); libdir=${libdir%/}
for f in bin/rooftune include/rooftune.h; do [ -e "$prefix/$f" ] || die "not installed: $f"; done
for f in librooftune.so pkgconfig/rooftune.pc cmake/rooftune/rooftuneConfig.cmake \
         cmake/rooftune/rooftuneConfigVersion.cmake cmake/rooftune/rooftuneTargets.cmake; do
  [ -e "$libdir/$f" ] || die "not installed: $libdir/$f"
done
# the library needs what it promises and exports the public API and nothing else
# shellcheck source=/dev/null
. "$src/tests/cli/librooftune_checks.sh"
librooftune_check_needed "$libdir/librooftune.so" || fail=1
librooftune_check_exports "$libdir/librooftune.so" "$src/runtime/rooftune.map" || fail=1
used=$(ldd "$prefix/bin/rooftune" | sed -n 's/.*librooftune\.so[.0-9]* => \([^ ]*\) .*/\1/p')
[ -n "$used" ] && [ "$(realpath "$(dirname "$used")")" = "$(realpath "$libdir")" ] ||
  die "the installed rooftune does not use the installed librooftune (it finds: ${used:-none})"
# the header stands alone
echo '#include <rooftune.h>' | cc -std=c99 -Wall -Werror -fsyntax-only -I"$prefix/include" -x c - || die "rooftune.h does not compile alone"

# a database made by the installed command
cat >"$tmp/kt.json" <<'JSON'
{"device_name": "NVIDIA H200", "kernel_name": "gemm_mma", "tune_params_keys": ["BLOCK_M"],
 "tune_params": {"BLOCK_M": [64, 128]}, "objective": "time",
 "cache": {"64": {"BLOCK_M": 64, "time": 2.0}, "128": {"BLOCK_M": 128, "time": 1.5}}}
JSON
"$prefix/bin/rooftune" db import "$tmp/kt.json" --db "$tmp/t.db" --family gemm --shape 4096x4096x4096 --dtype bf16 >/dev/null || die "installed rooftune db import"
# and a real winner with its cubin and launch geometry, tuned on the model device
"$prefix/bin/rooftune" tune gemm --shape 256x256x256 --dtype f32 --device model:h200 --budget 2 --db "$tmp/m.db" >"$tmp/tune.log" 2>&1 || { tail -5 "$tmp/tune.log"; die "installed rooftune tune"; }

# the installed command's lookup, through the installed library
out=$("$prefix/bin/rooftune" lookup gemm --shape 256x256x256 --dtype f32 --db "$tmp/m.db" 2>&1) || die "installed rooftune lookup: $out"
# (a predicted winner is not verified: what would run is cuBLASLt, and --allow-unverified runs it)
case "$out" in *"rule      exact"*"verified  no"*"runs      nothing from this winner: it is not verified"*"cuBLASLt"*) ;;
  *) die "installed rooftune lookup printed: $out" ;; esac
out=$("$prefix/bin/rooftune" lookup gemm --shape 256x256x256 --dtype f32 --db "$tmp/m.db" --allow-unverified 2>&1) ||
  die "installed rooftune lookup --allow-unverified: $out"
case "$out" in *"runs      gemm_"*) ;; *) die "installed rooftune lookup --allow-unverified printed: $out" ;; esac

# 1. pkg-config
export PKG_CONFIG_PATH="$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs rooftune) || die "pkg-config rooftune"
# (no -Wl,-rpath here: outside /usr the .pc file's Libs carry it)
cc -std=c11 -Wall -Werror -o "$tmp/load_gemm_pc" "$src/examples/load_gemm.c" $flags -ldl || die "example via pkg-config"
# a /usr install (as a package is staged, with DESTDIR) gets a .pc without an rpath
DESTDIR="$tmp/stage" cmake --install "$build" --prefix /usr >"$tmp/stage.log" 2>&1 || die "cmake --install --prefix /usr"
pc_usr=$(find "$tmp/stage/usr" -name rooftune.pc | head -1)
grep -q '^Libs: -L${libdir} -lrooftune$' "$pc_usr" || die "the /usr rooftune.pc: $(grep '^Libs' "$pc_usr")"
grep -q '^Libs: -L${libdir} -Wl,-rpath,${libdir} -lrooftune$' "$libdir/pkgconfig/rooftune.pc" ||
  die "the prefix's rooftune.pc has no rpath: $(grep '^Libs' "$libdir/pkgconfig/rooftune.pc")"
# 2. find_package(rooftune)
cmake -S "$src/examples" -B "$tmp/ex" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/ex.log" 2>&1 &&
  cmake --build "$tmp/ex" >>"$tmp/ex.log" 2>&1 || { tail -20 "$tmp/ex.log"; die "example via find_package"; }

for exe in "$tmp/load_gemm_pc" "$tmp/ex/load_gemm"; do
  [ -x "$exe" ] || continue
  got=$(ldd "$exe" | sed -n 's/.*librooftune\.so\.0 => \([^ ]*\) .*/\1/p')
  [ -n "$got" ] && [ "$(realpath "$(dirname "$got")")" = "$(realpath "$libdir")" ] ||
    die "$exe does not use the installed librooftune (it finds: ${got:-none})"
  out=$("$exe" "$tmp/t.db" 4096x4096x4096 bf16 2>&1); rc=$?
  if [ -e /dev/nvidia0 ] && [ "$rc" = 0 ]; then
    case "$out" in *"ran "*) ;; *) die "$exe on a GPU: $out" ;; esac
  else
    [ $rc = 0 ] || die "$exe exited $rc: $out"
    case "$out" in *"template gemm_mma, config BLOCK_M=128"*"no GPU here"*) ;; *) die "$exe printed: $out" ;; esac
  fi
  out=$("$exe" "$tmp/m.db" 256x256x256 f32 2>&1); rc=$?
  if ! [ -e /dev/nvidia0 ]; then
    [ $rc = 0 ] || die "$exe on the model database exited $rc: $out"
    case "$out" in *"tuned: gemm 256x256x256 f32 (exact match, distance 0; rule exact)"*"template gemm_"*"predicted on model:h200"*"launch grid ("*"runs: nothing from this winner (not verified: predicted on model:h200)"*"no GPU here"*) ;;
      *) die "$exe on the model database printed: $out" ;; esac
  fi
  out=$("$exe" "$tmp/missing.db" 2>&1); rc=$?
  [ $rc = 1 ] || die "$exe with a missing database exited $rc"
  case "$out" in *"missing.db: no such database"*) ;; *) die "$exe missing db: $out" ;; esac
done
# 3. your own kernel (the README's "Tune your own kernel"): a folder outside the tree, tuned by the
#    installed rooftune, served to examples/own_kernel/load_vscale.c built against the library
mkdir -p "$tmp/my-kernels/vscale"
cp "$src"/examples/own_kernel/*.json "$src"/examples/own_kernel/*.cu "$tmp/my-kernels/vscale/"
"$prefix/bin/rooftune" tune vscale --templates "$tmp/my-kernels" --shape 16777216 --dtype f32 --device model:h200 \
  --budget 4 --db "$tmp/own.db" >"$tmp/own.log" 2>&1 || { tail -5 "$tmp/own.log"; die "installed rooftune tune vscale"; }
cc -std=c11 -Wall -Werror -o "$tmp/load_vscale" "$src/examples/own_kernel/load_vscale.c" $flags -ldl -lm ||
  die "load_vscale via pkg-config"
[ -x "$tmp/ex/load_vscale" ] || die "load_vscale via find_package"
out=$("$tmp/load_vscale" "$tmp/own.db" 16777216 2>&1); rc=$?
if ! [ -e /dev/nvidia0 ]; then
  [ $rc = 0 ] || die "load_vscale exited $rc: $out"
  case "$out" in *"tuned: vscale 16777216 f32 (exact match): vscale_vec"*"not verified: never checked"*"no GPU here"*) ;;
    *) die "load_vscale printed: $out" ;; esac
  out=$("$tmp/load_vscale" "$tmp/own.db" 16777216 --allow-unverified 2>&1) || die "load_vscale --allow-unverified: $out"
  case "$out" in *"not verified, launched as asked"*) ;; *) die "load_vscale --allow-unverified printed: $out" ;; esac
fi
[ $fail = 0 ] && echo "installed into $prefix; the examples build with pkg-config and find_package and run"
exit $fail
