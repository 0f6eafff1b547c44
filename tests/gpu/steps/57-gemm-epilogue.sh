# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 4d. fused epilogues (issue 21): bias + GELU on the MLP's 4096x14336x4096 to bf16, tuned
#     (gemm_wgmma's fused epilogue against cuBLASLt's GELU_BIAS candidates), then bench_gemm's
#     epilogue rows, which also time it unfused: cuBLASLt's GEMM to bf16 and a separate
#     bias + GELU kernel (targets: fused >= 1.3x faster than that, and >= 1.0x cuBLASLt's fused)
if want epilogue && [ "$(left)" -gt 100 ]; then
  log "== epilogue: rooftune tune gemm --shape 4096x14336x4096:nt+bias+gelu+out=bf16 --dtype bf16"
  out=$(timeout "$(cap 60)" "$bin" tune gemm --shape 4096x14336x4096:nt+bias+gelu+out=bf16 --dtype bf16 \
        --device cuda --budget 12 --timeout 10 --db "$db" --json 2>>"$logs/tune.log")
  [ -n "$out" ] && echo "$out" | summary gemm "bf16 4096x14336x4096:nt+bias+gelu+out=bf16" | tee -a "$results"
  if [ -x "$build/bench/bench_gemm" ] && [ "$(left)" -gt 60 ]; then
    timeout "$(cap 75)" "$build/bench/bench_gemm" --suite epilogue --configs 4 --reps 5 2>>"$logs/bench_gemm.log" | tee -a "$results"
  fi
fi
