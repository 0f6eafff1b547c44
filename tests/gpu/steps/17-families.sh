# tier: 3
# plan: 45
# sourced by tests/gpu/run.sh.  The declared example families at size: softmax over rows and a
# tiled transpose, tuned on the cuda device like tier 2 (the model's fastest; every candidate
# checked against the family's reference first); their best bandwidth is in the summary.
for spec in "softmax 16384x4096 bf16" "transpose 8192x8192 f32"; do
  set -- $spec
  if [ "$(left)" -lt 45 ]; then log "$spec: not reached (out of time)"; continue; fi
  tune_line 3 families "$1" "$2" "$3" - 12 || step_fail=1
done
