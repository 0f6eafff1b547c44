# tier: 1
# plan: 20
# sourced by tests/gpu/run.sh.  rooftune_attention's fallback to cuDNN's SDPA at run time (issue
# 28): an untuned shape served by cuDNN with the reason in the returned info, its output checked
# against the reference, and the plan cache reused (tests/gpu/test_attention_cudnn_runtime.c).
t="$build/tests/gpu_test_attention_cudnn_runtime"
if [ -x "$t" ]; then
  ROOFTUNE_CUDNN_MAX=${ROOFTUNE_CUDNN_MAX:-3} timeout "$(cap 120)" "$t" >"$logs/cudnn-runtime.log" 2>&1
  rc=$?
  case $rc in 0) v=passed ;; 77) v=skipped ;; 124) v="TIMED OUT" ;; *) v="FAILED ($rc)" ;; esac
  log "gpu_test_attention_cudnn_runtime: $v"
  tail -25 "$logs/cudnn-runtime.log" | sed 's/^/    /' >>"$results"
  case $rc in 0|77) ;; *) step_fail=1 ;; esac
else
  log "gpu_test_attention_cudnn_runtime: not built in $build (bash tests/gpu/prepare.sh builds it)"
  step_fail=1
fi
