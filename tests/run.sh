#!/usr/bin/env bash
# Builds rooftune and runs every test: the default suite in build/, then the same suite built
# with AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/.  GPU tests skip with a
# printed reason on a machine without a GPU.  The long suite (whole spaces) runs only with
# ROOFTUNE_LONG=1.  Exits non-zero when any test fails.
set -eu
cd "$(dirname "$0")/.."
bash .ci/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
werror=${CI:+-DROOFTUNE_WERROR=ON}
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo ${werror:-} >/dev/null
cmake --build build -j "$jobs"
exclude=long
[ "${ROOFTUNE_LONG:-0}" = 1 ] && exclude='^$'
skip_reasons() { # prints why each skipped test skipped (the "SKIP: ..." line it printed)
  awk '/^[0-9]+\/[0-9]+ Testing: /{t=$3} /^SKIP:/{sub(/^SKIP: */,""); print "  skipped " t ": " $0}' \
    "$1/Testing/Temporary/LastTest.log"
}
ctest --test-dir build --output-on-failure -j "$jobs" -LE "$exclude"
skip_reasons build
echo "== the same tests under AddressSanitizer + UndefinedBehaviorSanitizer =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DROOFTUNE_SANITIZE=ON ${werror:-} >/dev/null
cmake --build build-asan -j "$jobs"
# NVRTC and cuBLASLt are not instrumented and keep memory on purpose; leak checks stay on for ours.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE "long|heavy"
skip_reasons build-asan
echo "== the fuzz targets under libFuzzer, ASan and UBSan (tests/fuzz) =="
if command -v clang >/dev/null &&
   printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' |
     clang -fsanitize=fuzzer,address -x c - -o build/fuzz-probe 2>/dev/null; then
  rm -f build/fuzz-probe
  CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROOFTUNE_FUZZ=ON >/dev/null
  cmake --build build-fuzz -j "$jobs" --target fuzz_all
  labels='^fuzz$'
  [ "${ROOFTUNE_LONG:-0}" = 1 ] && labels='^fuzz$|^fuzz_long$'
  ctest --test-dir build-fuzz --output-on-failure -j "$jobs" -L "$labels"
else
  echo "  skipped the fuzz targets: no clang with libFuzzer here (install clang and libclang-rt-dev)"
fi
