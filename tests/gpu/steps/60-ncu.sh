# tier: 3
# plan: 150
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 4b. Nsight Compute on three kernels (no clock control: the card's clocks are left alone), for
#     the next change to read: the best mma.sync configuration and the best wgmma one on 4096^3,
#     and a gemm_skinny one on a decode shape
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
if [ -n "$ncu_bin" ] && [ "$(left)" -gt 120 ]; then
  log "== ncu ($ncu_bin): speed of light, occupancy, warp stalls (full reports in gpu_logs.tgz)"
  for spec in "gemm_mma 4096x4096x4096 BLOCK_M=256,BLOCK_N=128,BLOCK_K=64,WARPS_M=4,WARPS_N=2,STAGES=3,SPLIT_K=1,SWIZZLE=1,B_COL=0" \
              "gemm_wgmma 4096x4096x4096 BLOCK_M=128,BLOCK_N=256,WARPGROUPS=2,PRODUCER=1,STAGES=4,SPLIT_K=1,SWIZZLE=8,B_COL=0,PERSISTENT=1,CLUSTER=1,SETMAXNREG=0,B_E5M2=0,EPI=0,OUT_TYPE=0" \
              "gemm_skinny 1x14336x4096:nt ROWS=1,COLS=4,WARPS=4,UNROLL=2,SPLIT_K=4,B_COL=1,B_E5M2=0,EPI=0,OUT_TYPE=0"; do
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
