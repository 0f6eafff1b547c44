# tier: 3
# plan: 120
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 7. what has run only on the model device so far: the example program on the winners just
#    tuned, `tune --prior model` and the nightly script, on the cuda device ("extras")
if [ "$(left)" -gt 90 ]; then
  log "== extras: examples/load_gemm.c, tune --prior model, examples/nightly/nightly.sh"
  if [ -x "$build/tests/gpu_load_gemm" ]; then
    out=$(timeout "$(cap 30)" "$build/tests/gpu_load_gemm" "$db" 4096x4096x4096 bf16 2>&1)
    rc=$?
    log "load_gemm $db 4096x4096x4096 bf16: exit $rc"
    echo "$out" | tail -6 | sed 's/^/    /' | tee -a "$results"
    [ $rc = 0 ] || step_fail=1
  else
    log "load_gemm: not built (bash tests/gpu/prepare.sh builds it)"
  fi
  out=$(timeout "$(cap 60)" "$bin" tune gemm_mma --shape 2048x2048x2048 --dtype bf16 --device cuda \
        --prior model --budget 6 --timeout 10 --no-db --json 2>>"$logs/tune.log")
  rc=$?
  log "tune gemm_mma 2048^3 bf16 --prior model: exit $rc"
  if [ -n "$out" ]; then
    echo "$out" | summary 3 "gemm_mma bf16 2048^3 --prior model" | tee -a "$results"
    [ "${PIPESTATUS[1]}" = 1 ] && step_fail=1
  fi
  # two nights of a job on a database of its own: the first tunes, the second rechecks that winner
  mkdir -p "$logs/nightly"
  printf '{"rooftune_job": 1, "name": "gpu-nightly", "database": "tuning.db", "output": ".", "device": "cuda",\n'\
' "timeout": 10, "recheck": {"every": "0"}, "problems": [{"target": "gemm", "shape": "1024x1024x1024", "dtype": "bf16", "budget": 4}]}\n' \
    >"$logs/nightly/job.json"
  for night in 1 2; do
    [ "$(left)" -gt 45 ] || break
    timeout "$(cap 45)" env ROOFTUNE="$bin" bash examples/nightly/nightly.sh "$logs/nightly/job.json" \
      >"$logs/nightly-$night.log" 2>&1
    rc=$?
    log "nightly.sh, night $night: exit $rc"
    grep -E "^\[|^job |REGRESSION" "$logs/nightly-$night.log" | head -4 | sed 's/^/    /' | tee -a "$results"
    [ -s "$logs/nightly/rooftune_tuned.h" ] && log "    header: $(grep -c '' "$logs/nightly/rooftune_tuned.h") lines"
    case $rc in 0|3) ;; *) step_fail=1 ;; esac
  done
fi
