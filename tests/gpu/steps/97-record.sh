# tier: 3
# plan: 600
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 8. ("record", on request: RT_GPU_STEPS=record) the four own-template spaces bench_lever scores
#    on the model device, brute-forced on this GPU with counters for each template's best: the
#    measured times, static facts, diagnoses and counters as rooftune exports (record-*.json in
#    gpu_logs.tgz), for bench/results and for scoring the lever strategy on real measurements.
if true; then
  rdb=$logs/record.db
  for spec in "gemm_wgmma 4096x4096x4096:nt bf16" "gemm_wgmma 16x4096x14336:nt bf16" \
              "gemm_mma 4096x4096x4096 bf16" "gemm_mma 64x14336x4096:nt f16"; do
    set -- $spec
    [ "$(left)" -gt 60 ] || { log "record $1 $2: out of time"; break; }
    t0=$(date +%s)
    timeout "$(cap 240)" "$bin" tune "$1" --shape "$2" --dtype "$3" --device cuda --strategy brute_force \
      --budget 100000 --timeout 10 --db "$rdb" --json >"$logs/record-$1-${2/:/-}.tune.json" 2>>"$logs/record.log"
    rc=$?
    "$bin" db export --db "$rdb" --shape "$2" --dtype "$3" -o "$logs/record-$1-${2/:/-}-$3.json" 2>>"$logs/record.log"
    log "record $1 $2 $3: tune exit $rc in $(( $(date +%s) - t0 )) s, export exit $?"
  done
fi
