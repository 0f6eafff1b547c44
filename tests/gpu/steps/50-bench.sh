# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 4. gemm templates and cuBLASLt on the shape suite (sampled configurations; partial
#     output still counts when the step's cap cuts it short)
if want bench && [ -x "$build/bench/bench_gemm" ] && [ "$(left)" -gt 90 ]; then
  log "== bench_gemm (TFLOP/s, measured; 8 configurations per template: the model's 4 fastest, 4 spread)"
  timeout "$(cap 150)" "$build/bench/bench_gemm" --configs 8 --reps 5 2>>"$logs/bench_gemm.log" | tee -a "$results"
fi
