# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 3a. attention prefill, the main job and its benchmark rows: rooftune's templates tuned
#     on 4x32x4096x128 bf16, causal and not, then PyTorch's scaled_dot_product_attention on the
#     same machine and shapes (bench/attention_torch.py; cuDNN's candidates join the tuning when
#     the family has them)
if want attention && [ "$(left)" -gt 120 ]; then
  log "== attention: rooftune tune attention --shape 4x32x4096x128[:causal] --dtype bf16"
  for shape in 4x32x4096x128 4x32x4096x128:causal; do
    [ "$(left)" -gt 60 ] || { log "skipped $shape: out of time"; continue; }
    out=$(timeout "$(cap 90)" "$bin" tune attention --shape "$shape" --dtype bf16 --device cuda \
          --budget 16 --timeout 10 --db "$db" --json 2>>"$logs/attention.log")
    rc=$?
    log "attention bf16 $shape: exit $rc"
    [ -n "$out" ] && { echo "$out" | summary attention "bf16 $shape" | tee -a "$results"; echo "$out" >"$logs/attention-${shape/:/-}.json"; }
  done
  if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    log "== PyTorch scaled_dot_product_attention on the same GPU (TFLOP/s, the causal pairs counted exactly)"
    timeout "$(cap 60)" python3 bench/attention_torch.py 4x32x4096x128 4x32x4096x128:causal 1x32:8x8192x128:causal \
      2>>"$logs/attention.log" | tee -a "$results"
  else
    log "PyTorch with CUDA is not importable here: no PyTorch comparison"
  fi
fi
