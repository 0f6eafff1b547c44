# tier: 3
# plan: 150
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 4. gemm templates and cuBLASLt on the shape suite (sampled configurations; partial
#     output still counts when the step's cap cuts it short)
if [ -x "$build/bench/bench_gemm" ] && [ "$(left)" -gt 90 ]; then
  log "== bench_gemm (TFLOP/s, measured; 8 configurations per template: the model's 4 fastest, 4 spread)"
  timeout "$(cap 150)" "$build/bench/bench_gemm" --configs 8 --reps 5 2>>"$logs/bench_gemm.log" | tee -a "$results"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || [ "$rc" = 124 ] || { log "    bench_gemm: exit $rc"; step_fail=1; }
  grep -q "WRONG RESULT" "$logs/bench_gemm.log" && { log "    bench_gemm: WRONG RESULT"; step_fail=1; }
fi
