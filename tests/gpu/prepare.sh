#!/usr/bin/env bash
# Builds, on this machine, what tests/gpu/run.sh runs on a GPU machine where nothing can be
# installed: a Release build in build-gpu/ with SQLite and Jansson linked statically, so it
# needs only libc, zlib, NVRTC and cuBLASLt there.  Then, with the device tool:
#   run  command: bash tests/gpu/run.sh    carry: ["build-gpu"]
# run.sh uses the carried build (and builds one itself only when none came).  Prints the size
# that will travel (the limit is 64 MiB with the working tree).
set -eu
cd "$(dirname "$0")/../.."
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DROOFTUNE_STATIC_DEPS=ON >/dev/null
targets=(rooftune bench_gemm gpu_load_gemm)
for f in tests/gpu/test_*.c; do t=$(basename "$f" .c); targets+=("gpu_$t"); done
cmake --build build-gpu -j "$(nproc)" --target "${targets[@]}" >/dev/null
rm -rf build-gpu/gpu-cache build-gpu/gpu-tuning.db*
for b in build-gpu/rooftune build-gpu/tests/gpu_test_* build-gpu/tests/gpu_load_gemm; do
  if ldd "$b" | grep -Eq 'libsqlite3|libjansson'; then
    echo "prepare.sh: $b still links SQLite or Jansson dynamically" >&2
    exit 1
  fi
done
echo "build-gpu ready: $(du -sh build-gpu | cut -f1) (carry it: [\"build-gpu\"])"
