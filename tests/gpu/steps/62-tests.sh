# tier: 3
# plan: 300
# sourced by tests/gpu/run.sh.  The GPU test programs (tests/gpu/test_*.c, built as
# build-gpu/tests/gpu_test_*), run directly so a build made elsewhere works; each within 120 s.
for t in "$build"/tests/gpu_test_*; do
  [ -x "$t" ] || continue
  n=$(basename "$t")
  case "$n" in gpu_test_attention_cudnn_runtime | gpu_test_ptx_twins) continue ;; esac # tier 1 ran them
  if [ "$(left)" -lt 30 ]; then log "$n: not reached (out of time)"; continue; fi
  ROOFTUNE_CUDNN_MAX=${ROOFTUNE_CUDNN_MAX:-3} timeout "$(cap 120)" "$t" >"$logs/$n.log" 2>&1
  rc=$?
  case $rc in 0) v=passed ;; 77) v=skipped ;; 124) v="TIMED OUT" ;; *) v="FAILED ($rc)" ;; esac
  log "$n: $v"
  tail -25 "$logs/$n.log" | sed 's/^/    /' >>"$results"
  case $rc in 0|77) ;; *) step_fail=1 ;; esac
done
