# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 6. the regression check on what was just tuned: every winner re-measured; on a quiet GPU
#     nothing should come out SLOWER (a 3 here says the timings do not repeat within 5 %)
if want recheck && [ "$(left)" -gt 60 ]; then
  log "== recheck of the winners just stored"
  timeout "$(cap 60)" "$bin" recheck --db "$db" --device cuda --timeout 10 2>>"$logs/tune.log" | tee -a "$results"
  log "recheck exit ${PIPESTATUS[0]}"
fi
