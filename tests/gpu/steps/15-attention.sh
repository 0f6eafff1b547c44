# tier: 2
# sourced by tests/gpu/run.sh.  Attention prefill 4x32x4096x128 bf16, causal and not: the
# templates against cuDNN's SDPA candidates measured in the same run (TFLOP/s).
run_table 2 attention || step_fail=1
for f in "$logs"/attention-attention-4x32x4096x128*-bf16.json; do
  [ -s "$f" ] || continue
  python3 - "$f" <<'PY' 2>&1 | tee -a "$results"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    per = d.get("best_per_template", {})
    lib = per.get("cudnn")
    own = [(v["tflops"], t) for t, v in per.items() if t != "cudnn"]
    best = max(own) if own else None
    line = "    cuDNN best %s" % ("%.1f TFLOP/s" % lib["tflops"] if lib else "none")
    if best: line += "; templates best %.1f TFLOP/s (%s)" % best
    if lib and best: line += "; templates/cuDNN %.2f (measured)" % (best[0] / lib["tflops"])
    print(line)
except Exception as e:
    print("    no comparison: %s" % e)
PY
done
