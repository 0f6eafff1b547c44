#!/usr/bin/env bash
# The one prepared script for a GPU machine (an H200 with the CUDA toolkit and driver; nothing
# installable).  Run from the repository root:  bash tests/gpu/run.sh
#
#  1. uses the build in build-gpu/ (or $ROOFTUNE_BUILD_DIR) when one is there: the usual way is
#     `bash tests/gpu/prepare.sh` on the development machine (SQLite and Jansson linked
#     statically) and the device tool's carry: ["build-gpu"], since nothing can be installed on
#     the GPU machine; only without one does it build there itself.  Where the carried binaries
#     cannot find NVRTC or cuBLASLt, it looks for them and sets LD_LIBRARY_PATH.  Kernels need
#     no build-time architecture: NVRTC compiles every template for the GPU's own (sm_90 /
#     sm_90a on an H200).
#  2. runs the GPU tests (tests/gpu/test_*.c, built as build-gpu/tests/gpu_test_*);
#     (test_gemm_verify checks every template on the issue's edge shapes in every dtype);
#  3. runs the steps of tests/gpu/steps/ (one file each, in name order):
#     benchmarks the main job, `rooftune tune gemm --shape 4096x4096x4096 --dtype bf16` (and the
#     :nt layout) against the cuBLASLt candidates measured in the same run, and measures the
#     device's ceilings (step "main");
#  3a. hardware counters: the main job's best candidates with their measured DRAM and L2 bytes,
#     occupancy, pipes and stalls, and rooftune's counters against Nsight Compute's on one
#     gemm_wgmma kernel ("counters");
#  3b. measures gemm_wgmma's levers one at a time on 4096^3 bf16: producer warpgroup, stages,
#     persistent grid, two-block cluster ("levers");
#  3b'. measures gemm_mma's 64x64-warp-tile configurations on 4096^3 bf16, for the mma.sync
#     target (50 % of cuBLASLt): the pipeline rewritten after the first runs ("mma");
#  3c. tunes six skinny LLM shapes like the main job ("skinny");
#  4. bench_gemm on the issue's shape suite, the rows its targets read first ("bench");
#  4c. fp8 (issue 21): tune 8192^3 and 4096^3 e4m3 against cuBLASLt's fp8 candidates, bench_gemm
#     --suite fp8 ("fp8");
#  4d. fused epilogues (issue 21): tune bias + GELU on 4096x14336x4096 to bf16, bench_gemm
#     --suite epilogue (fused against cuBLASLt's GEMM plus a separate bias + GELU kernel)
#     ("epilogue");
#  4b. Nsight Compute on the best mma.sync kernel, the best wgmma one and a gemm_skinny one
#     ("ncu"; full reports in the archive);
#  5. verifies every template against its reference through the tuner: a small `rooftune tune`
#     per template and dtype on the cuda device, where each candidate's output is poisoned,
#     computed and compared with the family's reference before it is timed; any
#     RT_ERR_WRONG_RESULT fails the script ("verify");
#  5b. tunes attention 4x32x4096x128 bf16 (causal and not) with cuDNN's SDPA candidates in the
#     same run and prints cuDNN's best against the templates' ("attention-cudnn");
#  6. re-measures the stored winners with `rooftune recheck` (do timings repeat?) ("recheck");
#  7. runs examples/load_gemm.c (build-gpu/tests/gpu_load_gemm, on the carried librooftune) on
#     the winners just stored, `tune --prior model` and examples/nightly/nightly.sh ("extras");
#  8. a job on every GPU of the node at once (`rooftune job run --device cuda:all`), run twice:
#     the rerun evaluates nothing and rechecks the winners measured the first time ("jobs");
#  9. the runtime as applications use it: load_gemm on the serving rules' cases, attention
#     served through rooftune_attention, the Python package's GPU tests ("runtime");
#  (opt-in) brute-forces small own-template spaces with counters into replayable exports for
#     bench_lever ("record");
#  RT_GPU_STEPS picks steps by those names ("tests" for step 2; default all but those in
#     RT_GPU_SKIP, "levers record" unless set: the first H200 runs answered "levers",
#     bench/results/h200-2026-11-30, and "record" is a recording session of its own), e.g.
#     RT_GPU_STEPS="tests skinny" for a short second try;
#  then writes the summary to $OUT/gpu_results.txt (or bench/results/gpu-DATE.txt without $OUT)
#     and every log, and the main job's JSON, into one archive beside it, gpu_logs.tgz (the
#     device tool brings back at most 8 files).
# Every step has a timeout; the whole script stays within $RT_GPU_BUDGET_S seconds (default
# 450: with a machine's start that leaves a 15-minute lease room for a shorter second try).  Exit
# status: 0 when the tests pass and no candidate was wrong.
set -u
cd "$(dirname "$0")/../.."
start=$(date +%s)
if [ -n "${OUT:-}" ]; then results=$OUT/gpu_results.txt; else
  mkdir -p bench/results; results=bench/results/gpu-$(date +%Y%m%d-%H%M%S).txt; fi
mkdir -p "$(dirname "$results")"
: >"$results"
logs=$(mktemp -d)
trap 'tar -czf "$(dirname "$results")/gpu_logs.tgz" -C "$logs" . 2>/dev/null; rm -rf "$logs"' EXIT
log() { echo "$*" | tee -a "$results"; }
budget=${RT_GPU_BUDGET_S:-450}
# seconds left of the budget the script allows itself, and a step's timeout within them
left() { echo $(( budget - ($(date +%s) - start) )); }
cap() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
fail=0
# default: "tests" and every step file's NAME but those listed in $RT_GPU_SKIP (default "levers record")
all_steps="tests"
for f in tests/gpu/steps/[0-9]*.sh; do n=$(basename "$f" .sh); all_steps="$all_steps ${n#*-}"; done
skip=" ${RT_GPU_SKIP:-levers record} "
default_steps=""
for n in $all_steps; do case "$skip" in *" $n "*) ;; *) default_steps="$default_steps $n" ;; esac; done
steps=" ${RT_GPU_STEPS:-$default_steps} "
want() { case "$steps" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
build=${ROOFTUNE_BUILD_DIR:-build-gpu}
export ROOFTUNE_CACHE_DIR=${ROOFTUNE_CACHE_DIR:-$PWD/$build/gpu-cache}
db=$PWD/$build/gpu-tuning.db
# a run with the main job starts a fresh database; a second try without it keeps the first's
# (a warm machine keeps build-gpu/), so recheck and extras still find its winners
want main && rm -f "$db" "$db-wal" "$db-shm"

log "== rooftune GPU run $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$results"

# 1. build
if [ ! -x "$build/rooftune" ]; then
  static=""
  if ! pkg-config --exists sqlite3 jansson 2>/dev/null; then
    static=-DROOFTUNE_STATIC_DEPS=ON
    log "SQLite/Jansson development files missing: trying $static"
  fi
  timeout 120 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release $static >"$logs/configure.log" 2>&1 &&
    timeout 200 cmake --build "$build" -j "$(nproc)" >"$logs/build.log" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    log "BUILD FAILED ($rc); last lines:"
    tail -20 "$logs/configure.log" "$logs/build.log" 2>/dev/null | tee -a "$results"
    exit 1
  fi
fi
bin=$PWD/$build/rooftune
# a build made elsewhere finds the CUDA libraries through that machine's paths: when they are
# not found here, look for them and put their folder on LD_LIBRARY_PATH
if ldd "$bin" | grep -q "not found"; then
  for lib in libnvrtc.so.13 libcublasLt.so.13; do
    dir=$(dirname "$(find / -xdev -name "$lib" -print -quit 2>/dev/null)" 2>/dev/null)
    [ -n "$dir" ] && [ "$dir" != . ] && export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  done
  log "libraries not found by the carried build; LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldd "$bin" | grep "not found" | tee -a "$results"
fi
# NVRTC needs the toolkit's headers (cuda_fp16.h ...): the build's own path, else CUDA_HOME
if [ -z "${CUDA_HOME:-}" ] && [ ! -f /usr/local/cuda/include/cuda_fp16.h ]; then
  hdr=$(find / -xdev -name cuda_fp16.h -path "*/include/*" -print -quit 2>/dev/null)
  [ -n "$hdr" ] && export CUDA_HOME=$(dirname "$(dirname "$hdr")") && log "CUDA_HOME=$CUDA_HOME (for NVRTC's headers)"
fi
# cuDNN (the attention family's library candidates): where rooftune's own search
# (tuner/driver/cudnn.h) finds none, the first libcudnn.so.9 on the machine
if [ -z "${ROOFTUNE_LIBCUDNN:-}" ] && timeout 30 "$bin" info 2>/dev/null | grep -q "^cuDNN *none"; then
  lib=$(find / -xdev -name libcudnn.so.9 -print -quit 2>/dev/null)
  [ -n "$lib" ] && export ROOFTUNE_LIBCUDNN=$lib && log "ROOFTUNE_LIBCUDNN=$lib (outside rooftune's search)"
fi
log "build ready after $(( $(date +%s) - start )) s"
timeout 30 "$bin" info | tee -a "$results"

# 2. GPU tests (run directly, so a build made elsewhere and carried here works too)
log "== GPU tests"
export ROOFTUNE_BIN=$bin ROOFTUNE_SOURCE_DIR=$PWD ROOFTUNE_SHARED_DIR=$PWD/../shared ROOFTUNE_TEMPLATE_DIR=$PWD/templates
for t in "$build"/tests/gpu_test_*; do
  [ -x "$t" ] || continue
  [ "$(left)" -gt 20 ] || { log "$(basename "$t"): not run, out of time"; fail=1; continue; }
  timeout "$(cap 120)" "$t" >"$logs/$(basename "$t").log" 2>&1
  rc=$?
  case $rc in 0) verdict=passed ;; 77) verdict=skipped ;; 124) verdict="TIMED OUT" ;; *) verdict="FAILED ($rc)" ;; esac
  log "$(basename "$t"): $verdict"
  tail -25 "$logs/$(basename "$t").log" | sed 's/^/    /' | tee -a "$results"
  case $rc in 0|77) ;; *) fail=1 ;; esac
done

summary() { # JSON on stdin → one line; exits 1 when a candidate was wrong
  python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d.get("statuses", {})
b = d.get("best") or {}
per = d.get("best_per_template", {})
line = "%-12s %-22s evaluated %3d  statuses %s" % (sys.argv[1], sys.argv[2], d["evaluated"], s)
if b: line += "\n    best %s %.4f ms %.1f TFLOP/s limit %s" % (b["template"], b["time_ms"], b["tflops"], b["limit"])
for t, v in sorted(per.items()):
    line += "\n    %-10s %.4f ms %7.1f TFLOP/s  %s" % (t, v["time_ms"], v["tflops"], v["config"])
print(line)
sys.exit(1 if s.get("ERR_WRONG_RESULT", 0) else 0)' "$1" "$2"
}
# 3... the steps, in the order of their file names (tests/gpu/steps/NN-NAME.sh, each sourced
#     here with log, left, cap, want, summary and one_config in scope; a step runs when NAME is
#     in $steps).  A new GPU check is a new step file.
one_config() { # TEMPLATE SHAPE CONFIG → "time_ms limit" of that one configuration, measured
  timeout "$(cap 40)" "$bin" tune "$1" --shape "$2" --dtype bf16 --device cuda --no-db --json \
    --timeout 10 --config "$3" 2>>"$logs/levers.log" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); b=d.get("best") or {}; print("%.4f ms %6.1f TFLOP/s %s %s" % (b.get("time_ms",0), b.get("tflops",0), b.get("limit","-"), d.get("statuses")))' 2>/dev/null || echo "failed"
}
for step in tests/gpu/steps/[0-9]*.sh; do
  name=$(basename "$step" .sh); name=${name#*-}
  want "$name" || continue
  # shellcheck source=/dev/null
  . "$step"
done
log "== ceilings stored"
python3 - "$db" <<'PY' 2>&1 | tee -a "$results"
import os, sqlite3, sys
if not os.path.exists(sys.argv[1]): sys.exit("    no database was written")
c = sqlite3.connect(sys.argv[1])
for row in c.execute("SELECT d.name, c.* FROM device_ceilings c JOIN devices d ON d.id = c.device_id"):
    print("   ", row)
PY
log "== done in $(( $(date +%s) - start )) s; status $fail; results in $results"
exit $fail
