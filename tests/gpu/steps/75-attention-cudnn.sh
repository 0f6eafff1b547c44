# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 5b. attention against cuDNN's fused SDPA: `rooftune tune attention` on 4x32x4096x128 bf16,
#     causal and not, where the family's templates and cuDNN's engine configurations (library
#     candidates, kernels/attention_cudnn.h) are verified and timed in the same run; prints
#     cuDNN's best and the templates' best in TFLOP/s ("attention-cudnn").  At most 6 cuDNN
#     candidates per shape (ROOFTUNE_CUDNN_MAX): a runtime-compiled engine's plan takes seconds
#     to build, and the step keeps to about a minute.
if want attention-cudnn; then
  log "== attention vs cuDNN SDPA: rooftune tune attention --shape 4x32x4096x128[:causal] --dtype bf16"
  for shape in 4x32x4096x128 4x32x4096x128:causal; do
    [ "$(left)" -gt 40 ] || { log "attention $shape: not run, out of time"; continue; }
    t0=$(date +%s)
    out=$(ROOFTUNE_CUDNN_MAX=6 timeout "$(cap 45)" "$bin" tune attention --shape "$shape" --dtype bf16 \
          --device cuda --budget 4 --timeout 10 --db "$db" --json 2>>"$logs/attention.log")
    rc=$?
    log "attention bf16 $shape: exit $rc in $(( $(date +%s) - t0 )) s"
    [ $rc = 0 ] || log "    $(tail -1 "$logs/attention.log")"
    [ -n "$out" ] || continue
    echo "$out" >"$logs/attention-${shape/:/-}.json"
    echo "$out" | summary attention "bf16 $shape" | tee -a "$results"
    [ "${PIPESTATUS[1]}" = 0 ] || { log "WRONG RESULTS in attention $shape"; fail=1; }
    echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
per = d.get("best_per_template", {})
lib = per.get("cudnn")
own = min((v for t, v in per.items() if t != "cudnn"), key=lambda v: v["time_ms"], default=None)
own_t = min((t for t, v in per.items() if t != "cudnn"), key=lambda t: per[t]["time_ms"], default="-")
line = "    measured: cuDNN best %s" % ("%.1f TFLOP/s (%s)" % (lib["tflops"], lib["config"]) if lib else "none")
line += "; templates best %s" % ("%.1f TFLOP/s (%s %s)" % (own["tflops"], own_t, own["config"]) if own else "none")
if lib and own: line += "; templates/cuDNN %.2f" % (own["tflops"] / lib["tflops"])
if d.get("note"): line += "\n    note: %s" % d["note"]
print(line)' 2>&1 | tee -a "$results"
  done
fi
