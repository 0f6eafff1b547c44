#!/usr/bin/env bash
# librooftune as built: it needs only the libraries it promises (readelf -d: cuBLASLt, SQLite
# and the C library; the CUDA driver is dlopen()ed, so libcuda is not among them, nor NVRTC or
# Jansson), it exports exactly the names of its version script (runtime/rooftune.map), it holds
# only what serving needs of the engine (the database's open and read halves, no code that
# writes, merges or checks a database, nor a family's tuning half; its symbol table, nm), and
# its header compiles alone as C99 and as C++.  tests/cli/test_install.sh checks the installed copy
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
# What serving does not need: the database's write, claim, merge and check halves (db/db_run.c,
# db_claim.c, db_merge.c, db_check.c) and the C families' tuning halves (kernels/NAME.c: the GPU
# side, cuDNN's candidates).
tuning_only="db_run_begin db_run_store_many db_run_set_winner db_run_claim db_ceiling_set
  db_calibration_set db_run_set_status db_merge db_check
  gemm_family gemm_gpu_setup gemm_gpu_verify gemm_library_list attention_family attn_gpu_setup
  attn_gpu_verify attention_cudnn_library_list"
defined=$(nm --defined-only "$lib" 2>/dev/null | awk 'NF==3{print $3}')
if ! echo "$defined" | grep -qx db_open; then
  echo "note: $lib has no symbol table (stripped): what it links is not checked"
else
  for f in $tuning_only; do
    echo "$defined" | grep -qx "$f" && die "$lib carries $f, which only the tuner needs"
  done
fi
echo '#include "rooftune.h"' | cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$src/runtime/include" -x c - ||
  die "rooftune.h does not compile alone as C99"
if command -v c++ >/dev/null; then
  echo '#include "rooftune.h"
int main() { rooftune_query q = {}; return q.flags; }' | c++ -Wall -Werror -fsyntax-only -I"$src/runtime/include" -x c++ - ||
    die "rooftune.h does not compile as C++"
fi
# attention's cuDNN fallback is in (kernels/attention_sdpa.c: the graph, plans and runs), and with
# it nothing of NVRTC, Jansson or the manifests (the symbol table, where the build keeps one)
syms=$(nm --defined-only "$lib" 2>/dev/null | awk 'NF==3{print $3}')
if echo "$syms" | grep -qx rooftune_attention; then
  for f in attn_cudnn_open_call attn_cudnn_graph_build_call attn_cudnn_bind attn_cudnn_run; do
    echo "$syms" | grep -qx "$f" || die "$lib lacks $f: no cuDNN fallback for rooftune_attention"
  done
  bad=$(echo "$syms" | grep -E '^(nvrtc|json_|manifest_|catalog_|compile_source)' | head -3)
  [ -z "$bad" ] || die "$lib carries engine code it must not: $(echo $bad)"
fi
[ $fail = 0 ] && echo "librooftune needs $(readelf -d "$lib" | grep -c NEEDED) libraries, all promised, and exports exactly its $(grep -c 'rooftune_' "$src/runtime/rooftune.map") functions"
exit $fail
