# tier: 3
# plan: 90
# sourced by tests/gpu/run.sh.  Decode at 32k cached tokens (B 1 and 64, contiguous and paged)
# and B 1 at 8k: rooftune's split-KV template tuned like tier 2's 8k rows (the model's fastest),
# their KV bytes per second against the copy bandwidth measured by the main job.
for shape in 1x32:8x1:8192x128 1x32:8x1:32768x128 64x32:8x1:32768x128 64x32:8x1:32768x128:paged16; do
  if [ "$(left)" -lt 45 ]; then log "decode $shape: not reached (out of time)"; continue; fi
  tune_line 3 decode-long attention "$shape" bf16 - 8 || step_fail=1
done
