#!/usr/bin/env bash
# Builds, on this machine, what tests/gpu/run.sh runs on a GPU machine where nothing can be
# installed: a Release build in build-gpu/ with SQLite and Jansson linked statically, so it
# needs only libc, zlib, NVRTC and cuBLASLt there.  librooftune.so (which the command, the
# examples and the Python package load) links SQLite's shared library, so a copy of
# libsqlite3.so.0 travels beside it, found through its $ORIGIN run path; pytest goes into
# build-gpu/pylib for the Python GPU tests.  Then, with the device tool:
#   run  command: bash tests/gpu/run.sh    carry: ["build-gpu"]
# run.sh uses the carried build (and builds one itself only when none came).  Prints the size
# that will travel (the limit is 64 MiB with the working tree).
set -eu
cd "$(dirname "$0")/../.."
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DROOFTUNE_STATIC_DEPS=ON >/dev/null
targets=(rooftune rooftune_shared bench_gemm gpu_load_gemm)
for f in tests/gpu/test_*.c; do t=$(basename "$f" .c); targets+=("gpu_$t"); done
cmake --build build-gpu -j "$(nproc)" --target "${targets[@]}" >/dev/null
rm -rf build-gpu/gpu-cache build-gpu/gpu-tuning.db* build-gpu/gpu-runtime.db*
sqlite=$(ldd build-gpu/librooftune.so | sed -n 's/.*libsqlite3\.so\.0 => \([^ ]*\) .*/\1/p')
[ -n "$sqlite" ] && [ "$sqlite" != "$PWD/build-gpu/libsqlite3.so.0" ] && cp -L "$sqlite" build-gpu/libsqlite3.so.0
for b in build-gpu/rooftune build-gpu/tests/gpu_test_* build-gpu/tests/gpu_load_gemm build-gpu/librooftune.so; do
  # Jansson linked in statically; SQLite too, or else the carried copy (librooftune's)
  found=$(ldd "$b" | sed -n 's/.*libsqlite3\.so\.0 => \([^ ]*\) .*/\1/p')
  if ldd "$b" | grep -q libjansson ||
     { [ -n "$found" ] && [ "$(realpath "$found")" != "$(realpath build-gpu/libsqlite3.so.0)" ]; }; then
    echo "prepare.sh: $b links SQLite or Jansson from this machine" >&2
    exit 1
  fi
done
if python3 -m pip --version >/dev/null 2>&1; then
  rm -rf build-gpu/pylib
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --target build-gpu/pylib pytest >/dev/null ||
    echo "prepare.sh: pytest could not be put in build-gpu/pylib; the Python GPU tests will not run there" >&2
fi
echo "build-gpu ready: $(du -sh build-gpu | cut -f1) (carry it: [\"build-gpu\"])"
