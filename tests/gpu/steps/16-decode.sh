# sourced by tests/gpu/run.sh: see its header for the helpers (log, left, cap, want, summary)
# 3a''. attention decode, a sample of the suite (B 1 and 64, GQA 32:8, D 128, 8k and 32k
#       cached tokens, bf16, contiguous and paged): rooftune's split-KV template tuned on the cuda
#       device, its KV bytes per second against the measured copy bandwidth (the target: 80 % at
#       B*SKV >= 64k), then PyTorch's SDPA on the contiguous rows
if want decode && [ "$(left)" -gt 120 ]; then
  log "== decode: rooftune tune attention --shape Bx32:8x1:SKVx128[:paged16] --dtype bf16"
  for shape in 1x32:8x1:8192x128 64x32:8x1:8192x128 1x32:8x1:32768x128 64x32:8x1:32768x128 \
               64x32:8x1:8192x128:paged16 64x32:8x1:32768x128:paged16; do
    [ "$(left)" -gt 45 ] || { log "skipped $shape: out of time"; continue; }
    out=$(timeout "$(cap 45)" "$bin" tune attention --shape "$shape" --dtype bf16 --device cuda \
          --budget 8 --timeout 10 --db "$db" --json 2>>"$logs/decode.log")
    log "decode bf16 $shape: exit $?"
    [ -n "$out" ] && echo "$out" | summary attention "bf16 $shape" | tee -a "$results"
    [ -n "$out" ] && echo "$out" | python3 -c '
import json, sys, re
d = json.load(sys.stdin); b = d.get("best") or {}
m = re.match(r"(\d+)x(\d+):(\d+)x\d+:(\d+)x(\d+)", sys.argv[1])
B, HQ, HKV, SKV, D = (int(x) for x in m.groups())
kv = 2.0 * B * SKV * HKV * D * 2
if b.get("time_ms"): print("    KV bytes %.3g GB in %.4f ms: %.2f TB/s" % (kv / 1e9, b["time_ms"], kv / b["time_ms"] / 1e9))' "$shape" | tee -a "$results"
  done
  if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    timeout "$(cap 45)" python3 bench/attention_torch.py 1x32:8x1:8192x128 64x32:8x1:8192x128 64x32:8x1:32768x128 \
      2>>"$logs/decode.log" | tee -a "$results"
  fi
fi
