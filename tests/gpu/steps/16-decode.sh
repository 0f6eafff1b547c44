# tier: 2
# sourced by tests/gpu/run.sh.  Decode 64x32:8x1:8192x128 bf16, contiguous and paged: the best
# candidate's KV bytes per second as a fraction of the copy bandwidth the main job measured.
run_table 2 decode || step_fail=1
for f in "$logs"/decode-attention-64x32-8x1-8192x128*-bf16.json; do
  [ -s "$f" ] || continue
  python3 - "$f" "$db" <<'PY' 2>&1 | tee -a "$results"
import json, sqlite3, sys
try:
    d = json.load(open(sys.argv[1]))
    b = d.get("best") or {}
    kv = 2.0 * 64 * 8192 * 8 * 128 * 2
    copy = None
    try:
        c = sqlite3.connect(sys.argv[2])
        row = c.execute("SELECT value FROM device_ceilings WHERE kind = 'copy_bw' ORDER BY measured_at DESC LIMIT 1").fetchone()
        copy = row[0] if row else None
    except sqlite3.Error:
        pass
    bps = kv / (b["time_ms"] * 1e-3) if b.get("time_ms") else 0
    line = "    %s: KV %.3g GB in %.4f ms: %.2f TB/s (measured)" % (sys.argv[1].split("/")[-1][:-5], kv / 1e9, b.get("time_ms", 0), bps / 1e12)
    if copy: line += " = %.0f %% of the copy bandwidth measured here (%.2f TB/s)" % (100 * bps / copy, copy / 1e12)
    print(line)
except Exception as e:
    print("    no figure: %s" % e)
PY
done
