# tier: 1
# plan: 8
# sourced by tests/gpu/run.sh.  Every rt_ptx.h wrapper on known inputs on the GPU against its
# host twin on the sim (tests/gpu/test_ptx_twins.c: templates/ptxcheck/ptx_twins.cu run on both,
# compared bit for bit; each wrapper that differs is named), so the twins the sim tests rely on
# are checked against silicon.  The sim compiles with this machine's g++ (CXX) from this tree's
# sim/ (ROOFTUNE_SIM_DIR).
t="$build/tests/gpu_test_ptx_twins"
if [ -x "$t" ]; then
  ROOFTUNE_SIM_DIR=$PWD/sim timeout "$(cap 60)" "$t" >"$logs/ptx-twins.log" 2>&1
  rc=$?
  case $rc in 0) v=passed ;; 77) v=skipped ;; 124) v="TIMED OUT" ;; *) v="FAILED ($rc)" ;; esac
  log "gpu_test_ptx_twins: $v"
  grep -v "agrees$" "$logs/ptx-twins.log" | tail -40 | sed 's/^/    /' | tee -a "$results" >/dev/null
  case $rc in 0|77) ;; *) step_fail=1 ;; esac
else
  log "gpu_test_ptx_twins: not built in $build (bash tests/gpu/prepare.sh builds it)"
  step_fail=1
fi
