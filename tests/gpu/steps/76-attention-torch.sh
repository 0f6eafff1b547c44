# tier: 3
# plan: 60
# sourced by tests/gpu/run.sh.  PyTorch's scaled_dot_product_attention on the tier-2 attention
# and decode shapes (bench/attention_torch.py; TFLOP/s, the causal pairs counted exactly), to set
# beside the tuned templates and cuDNN of tier 2.
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  timeout "$(cap 60)" python3 bench/attention_torch.py 4x32x4096x128 4x32x4096x128:causal 1x32:8x8192x128:causal \
    64x32:8x1:8192x128 >"$logs/attention-torch.log" 2>&1
  rc=$?
  log "PyTorch SDPA (exit $rc):"
  sed 's/^/    /' "$logs/attention-torch.log" | tail -12 | tee -a "$results"
else
  log "PyTorch with CUDA is not importable here: no PyTorch comparison"
fi
