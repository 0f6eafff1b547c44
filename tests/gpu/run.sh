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
#  3. benchmarks the main job, `rooftune tune gemm --shape 4096x4096x4096 --dtype bf16` (and the
#     :nt layout) against the cuBLASLt candidates measured in the same run, and measures the
#     device's ceilings (step "main");
#  3b. measures gemm_wgmma's levers one at a time on 4096^3 bf16: producer warpgroup, stages,
#     persistent grid, two-block cluster ("levers");
#  3b'. measures gemm_mma's 64x64-warp-tile configurations on 4096^3 bf16, for the mma.sync
#     target (50 % of cuBLASLt): the pipeline rewritten after the first runs ("mma");
#  3c. tunes six skinny LLM shapes like the main job ("skinny");
#  4. bench_gemm on the issue's shape suite, the rows its targets read first ("bench");
#  4b. Nsight Compute on the best mma.sync kernel, the best wgmma one and a gemm_skinny one
#     ("ncu"; full reports in the archive);
#  5. verifies every template against its reference through the tuner: a small `rooftune tune`
#     per template and dtype on the cuda device, where each candidate's output is poisoned,
#     computed and compared with the family's reference before it is timed; any
#     RT_ERR_WRONG_RESULT fails the script ("verify");
#  6. re-measures the stored winners with `rooftune recheck` (do timings repeat?) ("recheck");
#  7. runs examples/load_gemm.c (linked statically: build-gpu/tests/gpu_load_gemm) on the
#     winners just stored, `tune --prior model` and examples/nightly/nightly.sh ("extras");
#  RT_GPU_STEPS picks steps by those names ("tests" for step 2; default all but "levers", which
#     the first H200 runs answered: bench/results/h200-2026-11-30), e.g. RT_GPU_STEPS="tests
#     skinny" for a short second try;
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
# RT_GPU_STEPS: the steps to run (default below; "levers" on request)
steps=" ${RT_GPU_STEPS:-tests main mma skinny bench ncu verify recheck extras} "
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
# 3. the main job against cuBLASLt, and the ceilings (measured once, kept in the database)
want main && log "== main job: rooftune tune gemm --shape 4096x4096x4096 --dtype bf16"
want main && for shape in 4096x4096x4096 4096x4096x4096:nt; do
  [ "$(left)" -gt 30 ] || { log "skipped $shape: out of time"; continue; }
  t0=$(date +%s)
  out=$(timeout "$(cap 150)" "$bin" tune gemm --shape "$shape" --dtype bf16 --device cuda \
        --budget 24 --timeout 10 --db "$db" --json 2>>"$logs/tune.log")
  rc=$?
  log "gemm bf16 $shape: exit $rc in $(( $(date +%s) - t0 )) s"
  [ $rc = 0 ] || log "    $(tail -1 "$logs/tune.log")"
  [ -n "$out" ] && { echo "$out" | summary gemm "bf16 $shape" | tee -a "$results"; echo "$out" >"$logs/main-${shape/:/-}.json"; }
  echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("    roofs:", d.get("ceilings")); print("    diagnosis:", (d.get("best") or {}).get("sentence"))' 2>/dev/null | tee -a "$results"
done
# 3b. the Hopper template's levers one at a time on 4096^3 bf16, from the fastest measured base
#     (128x256, two consumer warpgroups): what the producer warpgroup, the persistent grid and
#     the two-block cluster each cost or gain on this GPU (the model cannot say)
one_config() { # TEMPLATE SHAPE CONFIG → "time_ms limit" of that one configuration, measured
  timeout "$(cap 40)" "$bin" tune "$1" --shape "$2" --dtype bf16 --device cuda --no-db --json \
    --timeout 10 --config "$3" 2>>"$logs/levers.log" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); b=d.get("best") or {}; print("%.4f ms %6.1f TFLOP/s %s %s" % (b.get("time_ms",0), b.get("tflops",0), b.get("limit","-"), d.get("statuses")))' 2>/dev/null || echo "failed"
}
if want levers && [ "$(left)" -gt 120 ]; then
  log "== gemm_wgmma levers on 4096x4096x4096 bf16 (one configuration each, measured)"
  for v in "128,256,2,0,3,0,1" "128,256,2,1,3,0,1" "128,256,2,1,4,0,1" "128,256,2,1,4,1,1" \
           "128,256,2,1,4,0,2" "128,256,2,1,4,1,2" "256,128,2,1,4,0,1" "256,128,2,1,4,1,2"; do
    IFS=, read -r bm bn wg pr st pe cl <<<"$v"
    cfg="BLOCK_M=$bm,BLOCK_N=$bn,BLOCK_K=64,WARPGROUPS=$wg,PRODUCER=$pr,STAGES=$st,SPLIT_K=1,SWIZZLE=8,B_COL=0,PERSISTENT=$pe,CLUSTER=$cl"
    log "    ${bm}x${bn} WG$wg PRODUCER=$pr STAGES=$st PERSISTENT=$pe CLUSTER=$cl: $(one_config gemm_wgmma 4096x4096x4096 "$cfg")"
  done
fi
# 3b'. gemm_mma on 4096^3 bf16, one configuration at a time: the 64x64 warp tiles the tuner
#      picked in the first runs (256x128, 8 warps, 0.4862 ms there) and their neighbours, with
#      the cp.async plans and fragments read ahead across tiles (not yet measured then)
if want mma && [ "$(left)" -gt 120 ]; then
  log "== gemm_mma on 4096x4096x4096 bf16 (one configuration each, measured)"
  for v in "256,128,64,4,2,3,0" "256,128,64,4,2,4,0" "128,256,64,2,4,3,0" "128,128,64,2,2,3,0" \
           "128,128,32,2,2,4,0" "256,128,64,4,2,3,1"; do
    IFS=, read -r bm bn bk wm wn st bc <<<"$v"
    shape=4096x4096x4096; [ "$bc" = 1 ] && shape=$shape:nt
    cfg="BLOCK_M=$bm,BLOCK_N=$bn,BLOCK_K=$bk,WARPS_M=$wm,WARPS_N=$wn,STAGES=$st,SPLIT_K=1,SWIZZLE=8,B_COL=$bc"
    log "    $shape ${bm}x${bn}x${bk} warps ${wm}x${wn} STAGES=$st: $(one_config gemm_mma "$shape" "$cfg")"
  done
fi
# 3c. skinny LLM shapes, tuned like the main job (templates and cuBLASLt's candidates): is an
#     own template ahead of cuBLASLt on some of them?
want skinny && log "== skinny shapes: rooftune tune gemm --dtype bf16 --budget 24"
want skinny && for shape in 1x14336x4096:nt 16x14336x4096:nt 1x4096x4096:nt 16x4096x4096:nt 64x14336x4096:nt 64x4096x14336:nt; do
  [ "$(left)" -gt 150 ] || { log "skipped $shape: out of time"; continue; }
  out=$(timeout "$(cap 60)" "$bin" tune gemm --shape "$shape" --dtype bf16 --device cuda \
        --budget 24 --timeout 10 --db "$db" --json 2>>"$logs/tune.log")
  [ -n "$out" ] && echo "$out" | summary gemm "bf16 $shape" | tee -a "$results"
done
# 4. gemm templates and cuBLASLt on the issue's shape suite (sampled configurations; partial
#     output still counts when the step's cap cuts it short)
if want bench && [ -x "$build/bench/bench_gemm" ] && [ "$(left)" -gt 90 ]; then
  log "== bench_gemm (TFLOP/s, measured; 8 configurations per template: the model's 4 fastest, 4 spread)"
  timeout "$(cap 150)" "$build/bench/bench_gemm" --configs 8 --reps 5 2>>"$logs/bench_gemm.log" | tee -a "$results"
fi

# 4b. Nsight Compute on three kernels (no clock control: the card's clocks are left alone), for
#     the next change to read: the best mma.sync configuration and the best wgmma one on 4096^3,
#     and a gemm_skinny one on a decode shape
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
if want ncu && [ -n "$ncu_bin" ] && [ "$(left)" -gt 120 ]; then
  log "== ncu ($ncu_bin): speed of light, occupancy, warp stalls (full reports in gpu_logs.tgz)"
  for spec in "gemm_mma 4096x4096x4096 BLOCK_M=256,BLOCK_N=128,BLOCK_K=64,WARPS_M=4,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_COL=0" \
              "gemm_wgmma 4096x4096x4096 BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,SWIZZLE=8,B_COL=0,PERSISTENT=1,CLUSTER=1" \
              "gemm_skinny 1x14336x4096:nt ROWS=1,COLS=4,WARPS=4,UNROLL=2,SPLIT_K=4,B_COL=1"; do
    set -- $spec
    [ "$(left)" -gt 60 ] || break
    name=ncu-$1-$(echo "$3" | md5sum | cut -c1-6).txt
    timeout "$(cap 45)" "$ncu_bin" --clock-control none --target-processes all -k "regex:^$1" -c 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis "$bin" tune "$1" --shape "$2" --dtype bf16 \
      --device cuda --no-db --timeout 60 --config "$3" >"$logs/$name" 2>&1
    log "    $1 $2 $3 (exit $?):"
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Stall|L2 Hit|Dynamic Shared" "$logs/$name" |
      head -24 | sed 's/^ */      /' | tee -a "$results"
  done
fi

# 5. every template against its reference through the tuner (the tests above verify them too)
want verify && log "== verification: every template, every dtype it supports"
want verify && for spec in "gemm_simt f32 1024x1024x1024" "gemm_mma f32 1024x1024x1024" "gemm_mma f16 1024x1024x1024" \
            "gemm_mma bf16 1000x1000x1000" "gemm_wgmma f16 1024x1024x1024:nt" "gemm_wgmma bf16 1024x1024x1024:nt" \
            "gemm_skinny bf16 16x4096x4096:nt" "gemm_skinny f16 1x4096x4095:nt" "gemm_skinny f32 3x1000x1000:nt"; do
  set -- $spec
  [ -f "templates/gemm/$1.json" ] || continue
  [ "$(left)" -gt 60 ] || { log "$1 $2 $3: not run, out of time"; fail=1; continue; }
  out=$(timeout "$(cap 60)" "$bin" tune "$1" --dtype "$2" --shape "$3" --device cuda --strategy random --budget 6 \
        --timeout 10 --db "$db" --json 2>>"$logs/tune.log")
  rc=$?
  if [ $rc != 0 ] && [ -z "$out" ]; then log "$1 $2 $3: tune exited $rc: $(tail -1 "$logs/tune.log")"; fail=1; continue; fi
  echo "$out" | summary "$1" "$2 $3" | tee -a "$results"
  [ "${PIPESTATUS[1]}" = 0 ] || { log "WRONG RESULTS in $1 $2"; fail=1; }
done

# 6. the regression check on what was just tuned: every winner re-measured; on a quiet GPU
#     nothing should come out SLOWER (a 3 here says the timings do not repeat within 5 %)
if want recheck && [ "$(left)" -gt 60 ]; then
  log "== recheck of the winners just stored"
  timeout "$(cap 60)" "$bin" recheck --db "$db" --device cuda --timeout 10 2>>"$logs/tune.log" | tee -a "$results"
  log "recheck exit ${PIPESTATUS[0]}"
fi
# 7. what has run only on the model device so far: the example program on the winners just
#    tuned, `tune --prior model` and the nightly script, on the cuda device ("extras")
if want extras && [ "$(left)" -gt 90 ]; then
  log "== extras: examples/load_gemm.c, tune --prior model, examples/nightly/nightly.sh"
  if [ -x "$build/tests/gpu_load_gemm" ]; then
    out=$(timeout "$(cap 30)" "$build/tests/gpu_load_gemm" "$db" 4096x4096x4096 bf16 2>&1)
    rc=$?
    log "load_gemm $db 4096x4096x4096 bf16: exit $rc"
    echo "$out" | tail -6 | sed 's/^/    /' | tee -a "$results"
    [ $rc = 0 ] || fail=1
  else
    log "load_gemm: not built (bash tests/gpu/prepare.sh builds it)"
  fi
  out=$(timeout "$(cap 60)" "$bin" tune gemm_mma --shape 2048x2048x2048 --dtype bf16 --device cuda \
        --prior model --budget 6 --timeout 10 --no-db --json 2>>"$logs/tune.log")
  rc=$?
  log "tune gemm_mma 2048^3 bf16 --prior model: exit $rc"
  [ -n "$out" ] && echo "$out" | summary gemm_mma "bf16 2048^3 prior" | tee -a "$results"
  # two nights on a database of their own: the first tunes, the second rechecks that winner
  echo "gemm 1024x1024x1024 bf16 4" >"$logs/nightly-shapes.txt"
  for night in 1 2; do
    [ "$(left)" -gt 45 ] || break
    timeout "$(cap 45)" env ROOFTUNE="$bin" bash examples/nightly/nightly.sh "$logs/nightly-shapes.txt" \
      "$logs/nightly/tuning.db" "$logs/nightly" >"$logs/nightly-$night.log" 2>&1
    rc=$?
    log "nightly.sh, night $night: exit $rc"
    grep -E "recheck|REGRESSION|FAILED|^ok" "$logs/nightly-$night.log" | head -4 | sed 's/^/    /' | tee -a "$results"
    [ -s "$logs/nightly/rooftune_tuned.h" ] && log "    header: $(grep -c '' "$logs/nightly/rooftune_tuned.h") lines"
    case $rc in 0|3) ;; *) fail=1 ;; esac
  done
fi
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
