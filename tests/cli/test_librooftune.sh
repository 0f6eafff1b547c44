#!/usr/bin/env bash
# librooftune as built: it needs only the libraries it promises (readelf -d: cuBLASLt, SQLite
# and the C library; the CUDA driver is dlopen()ed, so libcuda is not among them, nor NVRTC or
# Jansson), it exports exactly the names of its version script (runtime/rooftune.map), and its
# header compiles alone as C99 and as C++.  tests/cli/test_install.sh checks the installed copy
# the same way.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
src=${ROOFTUNE_SOURCE_DIR:?}
lib=$(dirname "$bin")/librooftune.so
fail=0
die() { echo "FAIL: $*"; fail=1; }
[ -f "$lib" ] || { echo "FAIL: no $lib (build the rooftune_shared target)"; exit 1; }
# shellcheck source=/dev/null
. "$src/tests/cli/librooftune_checks.sh"
librooftune_check_needed "$lib" || fail=1
librooftune_check_exports "$lib" "$src/runtime/rooftune.map" || fail=1
echo '#include "rooftune.h"' | cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$src/runtime/include" -x c - ||
  die "rooftune.h does not compile alone as C99"
if command -v c++ >/dev/null; then
  echo '#include "rooftune.h"
int main() { rooftune_query q = {}; return q.flags; }' | c++ -Wall -Werror -fsyntax-only -I"$src/runtime/include" -x c++ - ||
    die "rooftune.h does not compile as C++"
fi
[ $fail = 0 ] && echo "librooftune needs $(readelf -d "$lib" | grep -c NEEDED) libraries, all promised, and exports exactly its $(grep -c 'rooftune_' "$src/runtime/rooftune.map") functions"
exit $fail
