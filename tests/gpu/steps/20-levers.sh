# tier: 3
# plan: 120
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 3b. the Hopper template's levers one at a time on 4096^3 bf16, from the fastest measured base
#     (128x256, two consumer warpgroups): what the producer warpgroup, the persistent grid and
#     the two-block cluster each cost or gain on this GPU (the model cannot say)
if [ "$(left)" -gt 120 ]; then
  log "== gemm_wgmma levers on 4096x4096x4096 bf16 (one configuration each, measured)"
  for v in "128,256,2,0,3,0,1" "128,256,2,1,3,0,1" "128,256,2,1,4,0,1" "128,256,2,1,4,1,1" \
           "128,256,2,1,4,0,2" "128,256,2,1,4,1,2" "256,128,2,1,4,0,1" "256,128,2,1,4,1,2"; do
    IFS=, read -r bm bn wg pr st pe cl <<<"$v"
    cfg="BLOCK_M=$bm,BLOCK_N=$bn,WARPGROUPS=$wg,PRODUCER=$pr,STAGES=$st,SPLIT_K=1,SWIZZLE=8,B_COL=0,PERSISTENT=$pe,CLUSTER=$cl,SETMAXNREG=0,B_E5M2=0,EPI=0,OUT_TYPE=0"
    log "    ${bm}x${bn} WG$wg PRODUCER=$pr STAGES=$st PERSISTENT=$pe CLUSTER=$cl: $(one_config gemm_wgmma 4096x4096x4096 "$cfg")"
  done
fi
