# tier: 2
# sourced by tests/gpu/run.sh.  bias + GELU on the MLP's 4096x14336x4096 to bf16: fused (the
# templates' epilogue, cuBLASLt's GELU_BIAS) against the GEMM alone plus a separate pass over its
# output.  The GEMM alone is measured; the separate pass is derived, not measured: reading D
# and the bias and writing D (3 x M x N x 2 bytes) at the copy bandwidth the main job measured.
# bench_gemm --suite epilogue (tier 3, "gemm-epilogue") measures a separate kernel.
run_table 2 epilogue || step_fail=1
python3 - "$logs/epilogue-gemm-4096x14336x4096-nt-bias-gelu-out-bf16-bf16.json" \
          "$logs/epilogue-gemm-4096x14336x4096-nt-out-bf16-bf16.json" "$db" <<'PY' 2>&1 | tee -a "$results"
import json, sqlite3, sys
try:
    fused = (json.load(open(sys.argv[1])).get("best") or {}).get("time_ms")
    plain = (json.load(open(sys.argv[2])).get("best") or {}).get("time_ms")
    copy = sqlite3.connect(sys.argv[3]).execute("SELECT value FROM device_ceilings WHERE kind = 'copy_bw' ORDER BY measured_at DESC LIMIT 1").fetchone()
    sep = 3 * 4096 * 14336 * 2 / copy[0] * 1e3 if copy else None
    if fused and plain and sep:
        print("    fused %.4f ms; GEMM alone %.4f ms (measured) + separate pass %.4f ms (derived) = %.4f ms: fused is %.2fx faster"
              % (fused, plain, sep, plain + sep, (plain + sep) / fused))
    else:
        print("    no comparison (fused %s, plain %s, copy bandwidth %s)" % (fused, plain, copy))
except Exception as e:
    print("    no comparison: %s" % e)
PY
