# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 3. the main job against cuBLASLt, and the ceilings (measured once, kept in the database)
want main && log "== main job: rooftune tune gemm --shape 4096x4096x4096 --dtype bf16"
want main && for shape in 4096x4096x4096 4096x4096x4096:nt; do
  [ "$(left)" -gt 30 ] || { log "skipped $shape: out of time"; continue; }
  t0=$(date +%s)
  out=$(timeout "$(cap 150)" "$bin" tune gemm --shape "$shape" --dtype bf16 --device cuda \
        --budget 24 --timeout 10 --db "$db" --json 2>>"$logs/tune.log")
  rc=$?
  log "gemm bf16 $shape: exit $rc in $(( $(date +%s) - t0 )) s"
  [ $rc = 0 ] || log "    $(tail -1 "$logs/tune.log")"
  [ -n "$out" ] && { echo "$out" | summary gemm "bf16 $shape" | tee -a "$results"; echo "$out" >"$logs/main-${shape/:/-}.json"; }
  echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("    roofs:", d.get("ceilings")); print("    diagnosis:", (d.get("best") or {}).get("sentence"))' 2>/dev/null | tee -a "$results"
done
