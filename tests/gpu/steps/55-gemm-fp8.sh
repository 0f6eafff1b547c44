# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 4c. fp8 (issue 21): the tuned winner against cuBLASLt's fp8 candidates (promoting and
#     FAST_ACCUM) on 8192^3 and 4096^3 e4m3 (targets: tuned >= 1.0x cuBLASLt fp8 on every shape,
#     own template >= 0.9x at 8192^3, about 1,300 TFLOP/s), then bench_gemm's fp8 rows (sampled
#     configurations, cuBLASLt's default and best of 8)
if want fp8 && [ "$(left)" -gt 100 ]; then
  log "== fp8: rooftune tune gemm --dtype e4m3 (templates and cuBLASLt fp8 candidates, measured)"
  for shape in 8192x8192x8192:nt 4096x4096x4096:nt+out=bf16; do
    [ "$(left)" -gt 80 ] || { log "skipped $shape: out of time"; continue; }
    out=$(timeout "$(cap 60)" "$bin" tune gemm --shape "$shape" --dtype e4m3 --device cuda \
          --budget 12 --timeout 10 --db "$db" --json 2>>"$logs/tune.log")
    [ -n "$out" ] && echo "$out" | summary gemm "e4m3 $shape" | tee -a "$results"
  done
  if [ -x "$build/bench/bench_gemm" ] && [ "$(left)" -gt 60 ]; then
    timeout "$(cap 75)" "$build/bench/bench_gemm" --suite fp8 --configs 4 --reps 5 2>>"$logs/bench_gemm.log" | tee -a "$results"
  fi
fi
