# tier: 2
# sourced by tests/gpu/run.sh.  fp8: 8192^3 e4m3, the templates against cuBLASLt's fp8
# candidates measured in the same run (issue 21's target: tuned >= 1.0x, own >= 0.9x).
run_table 2 fp8 || step_fail=1
json_report '
lt = per.get("cublaslt")
own = max(((v["tflops"], t) for t, v in per.items() if t != "cublaslt"), default=None)
if lt and own: print("    own best %.1f TFLOP/s (%s) / cuBLASLt fp8 %.1f = %.2f (measured)" % (own[0], own[1], lt["tflops"], own[0] / lt["tflops"]))' \
  "$logs/fp8-gemm-8192x8192x8192-nt-e4m3.json"
