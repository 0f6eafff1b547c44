#!/usr/bin/env bash
# The one prepared script for a GPU machine (an H200 with the CUDA toolkit and driver; nothing
# installable).  Run from anywhere:
#   bash tests/gpu/run.sh          run the tiers within $RT_GPU_BUDGET_S seconds (default 500)
#   bash tests/gpu/run.sh --plan   without a GPU: each step and its estimated seconds, from the
#                                  candidate counts (the model device's dry run of each tune,
#                                  ROOFTUNE_COMPILE_DRY=1) and the per-candidate costs below;
#                                  its last line reads "tiers 1+2: S s, C compiles left"
#                                  (the line before: those compiles' time on the 16 cores)
#
# Tiers, in this order (a step is a file of tests/gpu/steps/, "# tier: N" in its head):
#   1  correctness, at most about 4 minutes: every template through its covering set on
#      boundary shapes, the declared families, cuDNN with at most 3 candidates (the tier-1 lines
#      of tests/gpu/tiers.txt; every candidate is checked against the family's reference before
#      it is timed; any candidate that is wrong, crashes, hangs or does not build fails)
#   2  the headline figures against the vendor libraries, at most about 3 minutes (the tier-2
#      lines of tiers.txt: the main job and gemm_mma against cuBLASLt, attention against cuDNN,
#      decode against the copy bandwidth, the roof rules on the one-row decode problem, fp8
#      against cuBLASLt fp8, bias + GELU fused against the GEMM alone plus a separate pass)
#   3  everything else, as time allows: the GPU test programs, counters, levers, skinny shapes,
#      bench_gemm, Nsight Compute, recheck, the runtime, extras, jobs (RT_GPU_SKIP, default
#      "levers record", leaves some out; RT_GPU_STEPS picks steps by name)
#
# Cut-proof: the summary ($OUT/gpu_results.txt), the step table ($OUT/gpu_steps.txt: each step
# passed, FAILED, skipped or not reached) and every log ($OUT/gpu_logs.tgz) are written after
# every step, so a kill at any moment keeps all that was learned.  The exit status says only
# whether a verdict failed (1) or not (0); a step not reached is reported, not failed.  Without
# a GPU the script says so in one line and exits 0 at once.
#
# Build: build-gpu/ (or $ROOFTUNE_BUILD_DIR) from tests/gpu/prepare.sh on the development
# machine, carried with the device tool (carry: ["build-gpu"]); it holds the cubin cache of
# every tier-1 and tier-2 candidate (build-gpu/gpu-cache), so those tiers compile nothing.
# Only without one does the script build here itself.
set -u
cd "$(dirname "$0")/../.."
mode=run
case "${1:-}" in
  --plan) mode=plan ;;
  "") ;;
  *) echo "usage: bash tests/gpu/run.sh [--plan]" >&2; exit 2 ;;
esac
start=$(date +%s)
build=${ROOFTUNE_BUILD_DIR:-build-gpu}
case "$build" in /*) ;; *) build=$build ;; esac
table=${RT_GPU_TIERS:-tests/gpu/tiers.txt} # RT_GPU_TIERS=FILE: another table (a reduced one, to try)
budget=${RT_GPU_BUDGET_S:-500}
export ROOFTUNE_CACHE_DIR=${ROOFTUNE_CACHE_DIR:-$build/gpu-cache}
# the carried cubin cache travels packed (5x smaller): unpacked before anything reads it
unpack_cache() {
  if [ ! -d "$build/gpu-cache" ] && [ -f "$build/gpu-cache.tgz" ]; then
    tar -xzf "$build/gpu-cache.tgz" -C "$build" 2>/dev/null || echo "run.sh: $build/gpu-cache.tgz did not unpack" >&2
  fi
}
# a carried build is not the build folder it was made in: it finds this tree's templates here
export ROOFTUNE_TEMPLATE_DIR=${ROOFTUNE_TEMPLATE_DIR:-$PWD/templates}

# ---- the steps: "TIER NAME FILE" in run order ----
step_list() {
  local f n t
  for f in tests/gpu/steps/[0-9]*.sh; do
    n=$(basename "$f" .sh); n=${n#*-}
    t=$(sed -n 's/^# tier: *\([0-9]\).*/\1/p' "$f" | head -1)
    echo "${t:-3} $n $f"
  done | sort -s -n -k1,1
}
skip=" ${RT_GPU_SKIP:-levers record} "
want() { # NAME: the step runs
  if [ -n "${RT_GPU_STEPS:-}" ]; then case " $RT_GPU_STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; fi
  case "$skip" in *" $1 "*) return 1 ;; *) return 0 ;; esac
}
table_lines() { grep -v '^#' "$table" | awk -v t="$1" 'NF >= 7 && $1 == t'; } # TIER

# ---- estimated costs on the H200 (seconds; from bench/results/h200-2026-11-30: the main job's
# 32 candidates of 4096^3 in 16-23 s with its compiles, the tests' runs; and the compile pool's
# scaling, bench/bench_compile_pool.c) ----
COST_START=3         # one tune process: worker, CUDA context, inputs, the reference
COST_CAND=0.3        # one template candidate of a small (tier-1) shape: check and timing
COST_CAND_BIG=0.6    # of a headline shape (tier 2)
COST_LIB=8           # cuBLASLt candidates a gemm family run adds
COST_CUDNN=3         # building one cuDNN plan (runtime-compiled engines take seconds)
COST_COMPILE=0.07    # one compile left, in the pool on 16 cores (0.557 s on one core)

# ---- one table line: the tune command's arguments ----
tune_args() { # TARGET SHAPE DTYPE LENS BUDGET
  local a="$1 --shape $2 --dtype $3"
  [ "$4" != "-" ] && a="$a --kv-lens $4"
  if [ "$5" = cover ]; then a="$a --cover --strategy brute_force --budget 64"; else a="$a --strategy model --budget $5"; fi
  echo "$a"
}
line_env() { local e="" x; for x in "$@"; do e="$e $x"; done; echo "$e"; } # NAME=VALUE ...

if [ "$mode" = plan ]; then
  # the packed cache read from a copy, so build-gpu/ keeps travelling packed
  if [ ! -d "$build/gpu-cache" ] && [ -f "$build/gpu-cache.tgz" ] && [ "$ROOFTUNE_CACHE_DIR" = "$build/gpu-cache" ]; then
    plan_tmp=$(mktemp -d)
    trap 'rm -rf "$plan_tmp"' EXIT
    tar -xzf "$build/gpu-cache.tgz" -C "$plan_tmp" 2>/dev/null && export ROOFTUNE_CACHE_DIR=$plan_tmp/gpu-cache
  fi
  bin=${ROOFTUNE_BIN:-$build/rooftune}
  [ -x "$bin" ] || bin=$PWD/build/rooftune
  [ -x "$bin" ] || { echo "run.sh --plan: no rooftune binary in $build/ or build/ (bash tests/gpu/prepare.sh builds one)" >&2; exit 2; }
  total12=0 compiles12=0 lines_left=0
  declare -A tier_s
  printf '%-5s %-15s %-58s %6s %6s %7s\n' tier step "run (its model-device dry run)" cands compile "est. s"
  while read -r tier name file; do
    if [ "$tier" -le 2 ]; then
      step_s=0
      while read -r _t _s target shape dtype lens bud envs; do
        [ "$_s" = "$name" ] || continue
        # shellcheck disable=SC2086
        out=$(env ROOFTUNE_COMPILE_DRY=1 ROOFTUNE_COUNTERS=0 $envs timeout 60 "$bin" tune $(tune_args "$target" "$shape" "$dtype" "$lens" "$bud") \
              --device model:h200 --no-db --json 2>/dev/null)
        read -r n hits < <(echo "$out" | python3 -c 'import json,sys
try:
    d = json.load(sys.stdin); print(d["evaluated"], d.get("compile", {}).get("cache_hits", 0))
except Exception: print(0, 0)' 2>/dev/null)
        left=$((n - hits))
        lib=0
        case "$target" in gemm) lib=$COST_LIB ;; esac
        cudnn=$(echo "$envs" | sed -n 's/.*ROOFTUNE_CUDNN_MAX=\([0-9]*\).*/\1/p')
        per=$COST_CAND; [ "$tier" = 2 ] && per=$COST_CAND_BIG
        s=$(python3 -c "print(round($COST_START + ($n + $lib) * $per + ${cudnn:-0} * $COST_CUDNN + $left * $COST_COMPILE, 1))")
        what="$target $shape $dtype"; [ "$lens" = "-" ] || what="$what lens $lens"
        printf '%-5s %-15s %-58s %6s %6s %7s\n' "$tier" "$name" "${what:0:58}" "$n" "$left" "$s"
        step_s=$(python3 -c "print($step_s + $s)")
        compiles12=$((compiles12 + left))
        [ "$left" -gt 0 ] && lines_left=$((lines_left + 1))
      done < <(table_lines "$tier")
      est=$(sed -n 's/^# plan: *\([0-9]*\).*/\1/p' "$file" | head -1) # a step that runs a program
      if [ -n "$est" ]; then
        printf '%-5s %-15s %-58s %6s %6s %7s\n' "$tier" "$name" "(its own programs)" - - "$est"
        step_s=$(python3 -c "print($step_s + $est)")
      fi
      total12=$(python3 -c "print($total12 + $step_s)")
      tier_s[$tier]=$(python3 -c "print(${tier_s[$tier]:-0} + $step_s)")
    else
      est=$(sed -n 's/^# plan: *\([0-9]*\).*/\1/p' "$file" | head -1)
      printf '%-5s %-15s %-58s %6s %6s %7s\n' "$tier" "$name" "(as time allows$(want "$name" || echo '; not run by default'))" - - "${est:-?}"
    fi
  done < <(step_list)
  echo "tier 1: $(python3 -c "print(round(${tier_s[1]:-0}))") s (aim: about 240), tier 2: $(python3 -c "print(round(${tier_s[2]:-0}))") s (aim: about 180), estimated on an H200"
  # what prepare.sh left to compile, and its time there (the pool on 16 cores; in the totals)
  echo "compiles left: $compiles12 in $lines_left lines (the rows above with compile > 0): about $(python3 -c "print(round($compiles12 * $COST_COMPILE))") s on the GPU machine's 16 cores"
  echo "tiers 1+2: $(python3 -c "print(round($total12))") s, $compiles12 compiles left"
  exit 0
fi

# ---- a run: no GPU, one line ----
if ! command -v nvidia-smi >/dev/null 2>&1 || ! timeout 4 nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  echo "tests/gpu/run.sh: no GPU here (nvidia-smi lists none): nothing to run; 'bash tests/gpu/run.sh --plan' shows what a GPU run does"
  exit 0
fi
unpack_cache
if [ -n "${OUT:-}" ]; then results=$OUT/gpu_results.txt; else
  mkdir -p bench/results; results=bench/results/gpu-$(date +%Y%m%d-%H%M%S).txt; fi
outdir=$(dirname "$results")
mkdir -p "$outdir"
: >"$results"
logs=$(mktemp -d)
log() { echo "$*" | tee -a "$results"; }
# seconds left of the budget the script allows itself, and a step's timeout within them
left() { echo $(( budget - ($(date +%s) - start) )); }
cap() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
fail=0
declare -A verdict # step -> passed | FAILED | skipped | not reached
step_order=()
archive() { # the step table and every log, now: a kill keeps them
  { for s in "${step_order[@]}"; do printf '%-18s %s\n' "$s" "${verdict[$s]:-not reached}"; done; } >"$outdir/gpu_steps.txt"
  tar -czf "$outdir/gpu_logs.tgz.part" -C "$logs" . 2>/dev/null && mv -f "$outdir/gpu_logs.tgz.part" "$outdir/gpu_logs.tgz"
}
trap 'archive; rm -rf "$logs"' EXIT
trap 'exit 143' TERM INT # so the EXIT trap archives when a time limit kills the script
while read -r tier name file; do want "$name" && step_order+=("$name"); done < <(step_list)
archive

log "== rooftune GPU run $(date -u +%FT%TZ) on $(hostname), budget $budget s"
timeout 10 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$results"

# 1. the build (carried, or made here)
if [ ! -x "$build/rooftune" ]; then
  static=""
  pkg-config --exists sqlite3 jansson 2>/dev/null || static=-DROOFTUNE_STATIC_DEPS=ON
  log "no carried build: building $build here $static"
  timeout 120 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release $static >"$logs/configure.log" 2>&1 &&
    timeout 200 cmake --build "$build" -j "$(nproc)" >"$logs/build.log" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    log "BUILD FAILED ($rc); last lines:"
    tail -20 "$logs/configure.log" "$logs/build.log" 2>/dev/null | tee -a "$results"
    exit 1
  fi
fi
bin=$build/rooftune
# a carried build finds the CUDA libraries through this machine's paths: where they are not
# found, look in the usual places (bounded: a few folders, a few levels, 20 s at most)
find_one() { timeout 20 find /usr/local /usr/lib /usr/lib64 /opt /usr/local/lib/python3*/dist-packages /usr/lib/python3/dist-packages \
             -maxdepth 6 -name "$1" -print -quit 2>/dev/null | head -1; }
if ldd "$bin" | grep -q "not found"; then
  for lib in libnvrtc.so.13 libcublasLt.so.13; do
    dir=$(dirname "$(find_one "$lib")" 2>/dev/null)
    [ -n "$dir" ] && [ "$dir" != . ] && export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  done
  log "libraries not found by the carried build; LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldd "$bin" | grep "not found" | tee -a "$results"
fi
# NVRTC needs the toolkit's headers (cuda_fp16.h ...): the build's own path, else CUDA_HOME
if [ -z "${CUDA_HOME:-}" ] && [ ! -f /usr/local/cuda/include/cuda_fp16.h ]; then
  hdr=$(find_one cuda_fp16.h)
  [ -n "$hdr" ] && export CUDA_HOME=$(dirname "$(dirname "$hdr")") && log "CUDA_HOME=$CUDA_HOME (for NVRTC's headers)"
fi
# cuDNN (the attention family's library candidates): where rooftune's own search finds none
if [ -z "${ROOFTUNE_LIBCUDNN:-}" ] && timeout 30 "$bin" info 2>/dev/null | grep -q "^cuDNN *none"; then
  lib=$(find_one libcudnn.so.9)
  [ -n "$lib" ] && export ROOFTUNE_LIBCUDNN=$lib && log "ROOFTUNE_LIBCUDNN=$lib (outside rooftune's search)"
fi
log "build ready after $(( $(date +%s) - start )) s"
timeout 30 "$bin" info 2>&1 | tee -a "$results"
export ROOFTUNE_BIN=$bin ROOFTUNE_SOURCE_DIR=$PWD ROOFTUNE_SHARED_DIR=$PWD/../shared
db=$build/gpu-tuning.db
# a run with tier 2 starts a fresh database; a second try without it keeps the first's (a warm
# machine keeps build-gpu/), so recheck and extras still find its winners
want main && rm -f "$db" "$db-wal" "$db-shm"

# ---- helpers the steps use ----
# summary TIER WHAT < JSON: one line per tune run (and the best per template); exits 1 when a
# verdict fails (any wrong candidate; in tier 1 also any that crashed, hung, did not launch or
# did not build), 2 when there is no result
summary() {
  python3 -c '
import json, sys
tier, what = sys.argv[1], sys.argv[2]
try:
    d = json.load(sys.stdin)
except Exception as e:
    print("%-44s no result (%s)" % (what, str(e).splitlines()[0] if str(e) else "no output")); sys.exit(2)
s = d.get("statuses", {})
bad = ["ERR_WRONG_RESULT"] + (["ERR_CRASH", "ERR_TIMEOUT", "ERR_LAUNCH", "ERR_COMPILE", "ERR_NVRTC", "ERR_CUDA", "ERR_INTERNAL"] if tier == "1" else [])
line = "%-44s evaluated %3d  statuses %s" % (what, d.get("evaluated", 0), s)
b = d.get("best") or {}
if b: line += "\n    best %s %.4f ms %.1f TFLOP/s limit %s" % (b.get("template"), b.get("time_ms", 0), b.get("tflops", 0), b.get("limit"))
for t, v in sorted(d.get("best_per_template", {}).items()):
    line += "\n    %-11s %.4f ms %7.1f TFLOP/s  %s" % (t, v.get("time_ms", 0), v.get("tflops", 0), v.get("config"))
failed = [k for k in bad if s.get(k, 0)]
if failed: line += "\n    VERDICT FAILED: %s" % ", ".join("%d %s" % (s[k], k) for k in failed)
print(line)
sys.exit(1 if failed else 0 if d.get("evaluated") else 2)' "$1" "$2" 2>&1
}
# tune_line TIER STEP TARGET SHAPE DTYPE LENS BUDGET [ENV...]: one table line, measured; its
# JSON into the logs; returns 1 when its verdict fails
tune_line() {
  local tier=$1 step=$2 target=$3 shape=$4 dtype=$5 lens=$6 bud=$7; shift 7
  local tag="$step-$target-${shape//[:+=]/-}-$dtype"
  local t0=$(date +%s) rc src
  # shellcheck disable=SC2046
  env ROOFTUNE_COUNTERS=0 "$@" timeout "$(cap 120)" "$bin" tune $(tune_args "$target" "$shape" "$dtype" "$lens" "$bud") \
    --device cuda --timeout 10 --db "$db" --json >"$logs/$tag.json" 2>"$logs/$tag.log"
  rc=$?
  local what="$target $shape $dtype"
  [ "$lens" = - ] || what="$what lens $lens"
  summary "$tier" "$what (exit $rc, $(( $(date +%s) - t0 )) s)" <"$logs/$tag.json" >"$logs/$tag.summary"
  src=$?
  tee -a "$results" <"$logs/$tag.summary"
  [ $rc = 0 ] || tail -2 "$logs/$tag.log" | sed 's/^/    /' | tee -a "$results" >/dev/null
  # 1: a verdict failed; 2: no result, which fails only tier 1 (correctness went unchecked)
  [ $src = 1 ] && return 1
  [ $src = 2 ] && [ "$tier" = 1 ] && return 1
  return 0
}
# the table's lines of a tier's step, while time lasts; 1 when a verdict failed
run_table() { # TIER STEP
  local bad=0
  while read -r tier step target shape dtype lens bud envs; do
    [ "$step" = "$2" ] || continue
    if [ "$(left)" -lt 20 ]; then log "$target $shape $dtype: not reached (out of time)"; continue; fi
    # shellcheck disable=SC2086
    tune_line "$tier" "$step" "$target" "$shape" "$dtype" "$lens" "$bud" $envs || bad=1
    archive
  done < <(table_lines "$1")
  return $bad
}
# json_report CODE FILE...: Python CODE run on each tune JSON FILE that exists, with d (the JSON),
# per (its best per template) and name (the file's tag) set; prints into the summary, one line
# instead of a traceback when it fails
json_report() {
  local code=$1 f; shift
  for f in "$@"; do
    [ -s "$f" ] || continue
    python3 -c "import json, sqlite3, sys
try:
    d = json.load(open(sys.argv[1])); per = d.get('best_per_template', {}); name = sys.argv[1].split('/')[-1][:-5]
$(echo "$code" | sed 's/^/    /')
except Exception as e:
    print('    no figure: %s' % e)" "$f" "$db" 2>&1 | tee -a "$results"
  done
}
one_config() { # TEMPLATE SHAPE CONFIG → "time_ms limit" of that one configuration, measured
  timeout "$(cap 40)" "$bin" tune "$1" --shape "$2" --dtype bf16 --device cuda --no-db --json \
    --timeout 10 --config "$3" 2>>"$logs/levers.log" |
    python3 -c 'import json,sys
try:
    d=json.load(sys.stdin); b=d.get("best") or {}; print("%.4f ms %6.1f TFLOP/s %s %s" % (b.get("time_ms",0), b.get("tflops",0), b.get("limit","-"), d.get("statuses")))
except Exception: print("failed")' 2>/dev/null
}

# ---- the steps, each sourced with the helpers above in scope; it sets step_fail=1 when one of
# its verdicts failed ----
for name in "${step_order[@]}"; do
  file=$(step_list | awk -v n="$name" '$2 == n {print $3}')
  if [ "$(left)" -lt 20 ]; then verdict[$name]="not reached (out of time)"; continue; fi
  log "== step $name ($(sed -n 's/^# tier: *\([0-9]\).*/tier \1/p' "$file" | head -1), $(left) s left)"
  step_fail=0
  step_t0=$(date +%s)
  verdict[$name]="cut short (the run was killed during it)"
  archive
  # shellcheck source=/dev/null
  . "$file"
  if [ "$step_fail" != 0 ]; then verdict[$name]="FAILED"; fail=1; else verdict[$name]="passed"; fi
  verdict[$name]="${verdict[$name]} ($(( $(date +%s) - step_t0 )) s)"
  archive
done
log "== ceilings stored"
python3 - "$db" <<'PY' 2>&1 | tee -a "$results"
import os, sqlite3, sys
try:
    if not os.path.exists(sys.argv[1]): sys.exit("    no database was written")
    c = sqlite3.connect(sys.argv[1])
    for row in c.execute("SELECT d.name, c.* FROM device_ceilings c JOIN devices d ON d.id = c.device_id"):
        print("   ", row)
except sqlite3.Error as e:
    print("    the database could not be read: %s" % e)
PY
log "== done in $(( $(date +%s) - start )) s; a verdict failed: $([ $fail = 0 ] && echo no || echo YES); steps in $outdir/gpu_steps.txt"
exit $fail
