# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 5. every template against its reference through the tuner (the tests above verify them too)
want verify && log "== verification: every template, every dtype it supports"
want verify && for spec in "gemm_simt f32 1024x1024x1024" "gemm_mma tf32 1024x1024x1024" "gemm_mma f16 1024x1024x1024" \
            "gemm_mma bf16 1000x1000x1000" "gemm_wgmma f16 1024x1024x1024:nt" "gemm_wgmma bf16 1024x1024x1024:nt" \
            "gemm_skinny bf16 16x4096x4096:nt" "gemm_skinny f16 1x4096x4095:nt" "gemm_skinny f32 3x1000x1000:nt"; do
  set -- $spec
  [ -f "templates/gemm/$1.json" ] || continue
  [ "$(left)" -gt 60 ] || { log "$1 $2 $3: not run, out of time"; fail=1; continue; }
  out=$(timeout "$(cap 60)" "$bin" tune "$1" --dtype "$2" --shape "$3" --device cuda --strategy random --budget 6 \
        --timeout 10 --db "$db" --json 2>>"$logs/tune.log")
  rc=$?
  if [ $rc != 0 ] && [ -z "$out" ]; then log "$1 $2 $3: tune exited $rc: $(tail -1 "$logs/tune.log")"; fail=1; continue; fi
  echo "$out" | summary "$1" "$2 $3" | tee -a "$results"
  [ "${PIPESTATUS[1]}" = 0 ] || { log "WRONG RESULTS in $1 $2"; fail=1; }
done
