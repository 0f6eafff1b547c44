# tier: 3
# plan: 100
# sourced by tests/gpu/run.sh.  Skinny LLM shapes, tuned like the main job (templates and
# cuBLASLt's candidates): is an own template ahead of cuBLASLt on some of them?
for shape in 1x14336x4096:nt 16x14336x4096:nt 1x4096x4096:nt 16x4096x4096:nt 64x14336x4096:nt 64x4096x14336:nt; do
  if [ "$(left)" -lt 60 ]; then log "gemm $shape: not reached (out of time)"; continue; fi
  tune_line 3 skinny gemm "$shape" bf16 - 24 || step_fail=1
done
