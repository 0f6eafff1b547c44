# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 3a'. the declared example families, measured: softmax over rows and a tiled transpose, tuned
#      on the cuda device (every candidate checked against the family's reference template
#      first); their best bandwidth against the measured copy bandwidth is in the summary
if want families && [ "$(left)" -gt 90 ]; then
  log "== declared families: softmax 16384x4096 bf16, transpose 8192x8192 f32"
  for spec in "softmax 16384x4096 bf16" "transpose 8192x8192 f32"; do
    set -- $spec
    [ "$(left)" -gt 45 ] || { log "skipped $spec: out of time"; continue; }
    out=$(timeout "$(cap 60)" "$bin" tune "$1" --shape "$2" --dtype "$3" --device cuda --budget 12 \
          --timeout 10 --db "$db" --json 2>>"$logs/families.log")
    log "$spec: exit $?"
    [ -n "$out" ] && echo "$out" | summary "$1" "$3 $2" | tee -a "$results"
  done
fi
