# tier: 3
# plan: 90
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 3b'. gemm_mma on 4096^3 bf16, one configuration at a time: the 64x64 warp tiles the tuner
#      picked in the first runs (256x128, 8 warps, 0.4862 ms there) and their neighbours, with
#      the cp.async plans and fragments read ahead across tiles (not yet measured then)
if [ "$(left)" -gt 120 ]; then
  log "== gemm_mma on 4096x4096x4096 bf16 (one configuration each, measured)"
  for v in "256,128,64,4,2,3,0" "256,128,64,4,2,4,0" "128,256,64,2,4,3,0" "128,128,64,2,2,3,0" \
           "128,128,32,2,2,4,0" "256,128,64,4,2,3,1"; do
    IFS=, read -r bm bn bk wm wn st bc <<<"$v"
    shape=4096x4096x4096; [ "$bc" = 1 ] && shape=$shape:nt
    cfg="BLOCK_M=$bm,BLOCK_N=$bn,BLOCK_K=$bk,WARPS_M=$wm,WARPS_N=$wn,STAGES=$st,SPLIT_K=1,SWIZZLE=8,B_COL=$bc"
    log "    $shape ${bm}x${bn}x${bk} warps ${wm}x${wn} STAGES=$st: $(one_config gemm_mma "$shape" "$cfg")"
  done
fi
