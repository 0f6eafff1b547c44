# tier: 3
# plan: 60
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 6. the regression check on what was just tuned: every winner re-measured; on a quiet GPU
#     nothing should come out SLOWER (a 3 here says the timings do not repeat within 5 %)
if [ "$(left)" -gt 60 ]; then
  log "== recheck of the winners just stored"
  timeout "$(cap 60)" "$bin" recheck --db "$db" --device cuda --timeout 10 2>>"$logs/tune.log" | tee -a "$results"
  log "recheck exit ${PIPESTATUS[0]}"
fi
