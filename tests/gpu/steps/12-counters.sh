# tier: 3
# plan: 120
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 3a. hardware counters ("counters"):
#   - the main job's table again from its database (the templates' results resumed, cuBLASLt's
#     measured again): measured DRAM and L2 bytes, occupancy, pipes and stalls of the best
#     candidates, each beside the model's figure, and the winner's diagnosis and why-it-wins;
#   - rooftune's counters against Nsight Compute's on one kernel (gemm_wgmma 128x256 on 4096^3
#     bf16): ncu with its caches flushed (--cache-control all, as rooftune flushes the L2 before
#     each profiled pass); a ratio outside 0.85-1.15 for bytes, or 10 points for percentages,
#     fails the step.
if [ "$(left)" -gt 60 ]; then
  log "== counters: the main job's best candidates, measured"
  out=$(timeout "$(cap 90)" "$bin" tune gemm --shape 4096x4096x4096 --dtype bf16 --device cuda --budget 24 --timeout 10 \
        --db "$db" 2>>"$logs/counters.log")
  rc=$?
  log "    tune (resumed from the main job's database): exit $rc"
  echo "$out" >"$logs/counters-main.txt"
  printf '%s\n' "$out" | sed -n '/^template .*DRAM bytes/,/^$/p' | sed 's/^/    /' | tee -a "$results"
  printf '%s\n' "$out" | sed -n '/^best:/,$p' | sed 's/^/    /' | tee -a "$results"
  printf '%s\n' "$out" | grep -q "measured by the GPU's counters" || { log "    FAIL: the winner's diagnosis used no counters"; step_fail=1; }
fi
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
if [ -n "$ncu_bin" ] && [ "$(left)" -gt 60 ]; then
  cfg="BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,SWIZZLE=8,B_COL=0,PERSISTENT=1,CLUSTER=1"
  log "== counters: rooftune against Nsight Compute on gemm_wgmma 4096^3 bf16 [$cfg]"
  ours=$(timeout "$(cap 60)" "$bin" tune gemm_wgmma --shape 4096x4096x4096 --dtype bf16 --device cuda --no-db \
         --timeout 20 --config "$cfg" --json 2>>"$logs/counters.log")
  metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed
  # rooftune's own profiler would meet ncu's: off under ncu
  ROOFTUNE_COUNTERS=0 timeout "$(cap 60)" "$ncu_bin" --clock-control none --cache-control all --target-processes all \
    -k "regex:^gemm_wgmma" -c 1 --metrics "$metrics" --csv --print-units base \
    "$bin" tune gemm_wgmma --shape 4096x4096x4096 --dtype bf16 --device cuda --no-db --timeout 60 --config "$cfg" \
    >"$logs/counters-ncu.csv" 2>>"$logs/counters.log"
  log "    ncu exit $?"
  python3 - "$ours" "$logs/counters-ncu.csv" <<'PY' | tee -a "$results"
import csv, json, sys
try:
    ours = json.loads(sys.argv[1])["best"]["counters"]
except Exception as e:
    print("    FAIL: rooftune read no counters (%s)" % e); sys.exit(1)
ncu = {}
rows = [l for l in open(sys.argv[2]) if l.startswith('"')]
for r in csv.DictReader(rows):
    try: ncu[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    except (KeyError, ValueError): pass
pairs = [("DRAM read", ours["dram_read_bytes"], ncu.get("dram__bytes_read.sum"), 1),
         ("DRAM write", ours["dram_write_bytes"], ncu.get("dram__bytes_write.sum"), 1),
         ("L2 bytes", ours["l2_bytes"], ncu.get("lts__t_bytes.sum"), 1),
         ("occupancy", 100 * ours["occupancy"], ncu.get("sm__warps_active.avg.pct_of_peak_sustained_active"), 0),
         ("tensor pipe", 100 * ours["tensor_pipe"], ncu.get("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"), 0),
         ("SM throughput", 100 * ours["sm_throughput"], ncu.get("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 0)]
bad = 0
for name, a, b, ratio in pairs:
    if b is None:
        print("    %-14s rooftune %-14.4g ncu -: not reported" % (name, a)); bad = 1; continue
    ok = (0.85 <= a / b <= 1.15) if ratio and b else abs(a - b) <= 10
    bad |= not ok
    print("    %-14s rooftune %-14.4g ncu %-14.4g %s" % (name, a, b, ("ratio %.3f" % (a / b) if ratio and b else "diff %.1f points" % (a - b)) + ("" if ok else "  MISMATCH")))
print("    stalls (rooftune): %s" % ours["stalls"])
sys.exit(bad)
PY
  [ "${PIPESTATUS[0]}" = 0 ] || step_fail=1
fi
