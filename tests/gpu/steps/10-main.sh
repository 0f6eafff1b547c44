# tier: 2
# sourced by tests/gpu/run.sh.  The main job, `rooftune tune gemm` on 4096^3 bf16 nn and nt, its
# templates (gemm_mma and gemm_wgmma among them) against the cuBLASLt candidates measured in the
# same run; the first run of the database measures the device's ceilings (copy bandwidth,
# matmul) that later steps compare with.
run_table 2 main || step_fail=1
for f in "$logs"/main-gemm-4096x4096x4096*-bf16.json; do
  [ -s "$f" ] || continue
  python3 - "$f" <<'PY' 2>&1 | tee -a "$results"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    per = d.get("best_per_template", {})
    lt = per.get("cublaslt")
    for t in ("gemm_wgmma", "gemm_mma"):
        if t in per and lt:
            print("    %s / cuBLASLt: %.1f / %.1f TFLOP/s = %.2f (measured, %s)" % (t, per[t]["tflops"], lt["tflops"],
                  per[t]["tflops"] / lt["tflops"], sys.argv[1].split("/")[-1][:-5]))
    print("    roofs: %s" % d.get("ceilings"))
except Exception as e:
    print("    no comparison: %s" % e)
PY
done
