# tier: 2
# sourced by tests/gpu/run.sh.  Decode 64x32:8x1:8192x128 bf16, contiguous and paged: the best
# candidate's KV bytes per second as a fraction of the copy bandwidth the main job measured.
run_table 2 decode || step_fail=1
json_report '
b = d.get("best") or {}
kv = 2.0 * 64 * 8192 * 8 * 128 * 2
row = sqlite3.connect(sys.argv[2]).execute("SELECT value FROM device_ceilings WHERE kind = \x27copy_bw\x27 ORDER BY measured_at DESC LIMIT 1").fetchone()
bps = kv / (b["time_ms"] * 1e-3) if b.get("time_ms") else 0
line = "    %s: KV %.3g GB in %.4f ms: %.2f TB/s (measured)" % (name, kv / 1e9, b.get("time_ms", 0), bps / 1e12)
if row: line += " = %.0f %% of the copy bandwidth measured here (%.2f TB/s)" % (100 * bps / row[0], row[0] / 1e12)
print(line)' "$logs"/decode-attention-64x32-8x1-8192x128*-bf16.json
