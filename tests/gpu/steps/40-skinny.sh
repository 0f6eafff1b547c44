# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 3c. skinny LLM shapes, tuned like the main job (templates and cuBLASLt's candidates): is an
#     own template ahead of cuBLASLt on some of them?
want skinny && log "== skinny shapes: rooftune tune gemm --dtype bf16 --budget 24"
want skinny && for shape in 1x14336x4096:nt 16x14336x4096:nt 1x4096x4096:nt 16x4096x4096:nt 64x14336x4096:nt 64x4096x14336:nt; do
  [ "$(left)" -gt 150 ] || { log "skipped $shape: out of time"; continue; }
  out=$(timeout "$(cap 60)" "$bin" tune gemm --shape "$shape" --dtype bf16 --device cuda \
        --budget 24 --timeout 10 --db "$db" --json 2>>"$logs/tune.log")
  [ -n "$out" ] && echo "$out" | summary gemm "bf16 $shape" | tee -a "$results"
done
