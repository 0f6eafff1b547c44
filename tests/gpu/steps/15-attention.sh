# tier: 2
# sourced by tests/gpu/run.sh.  Attention prefill 4x32x4096x128 bf16, causal and not: the
# templates against cuDNN's SDPA candidates measured in the same run (TFLOP/s).
run_table 2 attention || step_fail=1
json_report '
lib = per.get("cudnn")
best = max(((v["tflops"], t) for t, v in per.items() if t != "cudnn"), default=None)
line = "    %s: cuDNN best %s" % (name, "%.1f TFLOP/s" % lib["tflops"] if lib else "none")
if best: line += "; templates best %.1f TFLOP/s (%s)" % best
if lib and best: line += "; templates/cuDNN %.2f (measured)" % (best[0] / lib["tflops"])
print(line)' "$logs"/attention-attention-4x32x4096x128*-bf16.json
