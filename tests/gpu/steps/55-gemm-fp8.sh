# tier: 3
# plan: 120
# sourced by tests/gpu/run.sh.  fp8 beyond tier 2's 8192^3: 4096^3 e4m3 to bf16 against
# cuBLASLt's fp8 candidates, then bench_gemm's fp8 rows (sampled configurations, cuBLASLt's
# default and best of 8).
if [ "$(left)" -gt 80 ]; then
  tune_line 3 gemm-fp8 gemm 4096x4096x4096:nt+out=bf16 e4m3 - 12 || step_fail=1
fi
if [ -x "$build/bench/bench_gemm" ] && [ "$(left)" -gt 60 ]; then
  timeout "$(cap 75)" "$build/bench/bench_gemm" --suite fp8 --configs 4 --reps 5 >"$logs/bench_gemm_fp8.log" 2>&1
  rc=$?
  tee -a "$results" <"$logs/bench_gemm_fp8.log" | tail -12
  [ $rc = 0 ] || [ $rc = 124 ] || { log "    bench_gemm --suite fp8: exit $rc"; step_fail=1; }
  grep -q "WRONG RESULT" "$logs/bench_gemm_fp8.log" && { log "    bench_gemm: WRONG RESULT"; step_fail=1; }
fi
