# tier: 2
# sourced by tests/gpu/run.sh.  The main job, `rooftune tune gemm` on 4096^3 bf16 nn and nt, its
# templates (gemm_mma and gemm_wgmma among them) against the cuBLASLt candidates measured in the
# same run; the first run of the database measures the device's ceilings (copy bandwidth,
# matmul) that later steps compare with.
run_table 2 main || step_fail=1
json_report '
lt = per.get("cublaslt")
for t in ("gemm_wgmma", "gemm_mma"):
    if t in per and lt:
        print("    %s: %s / cuBLASLt %.1f / %.1f TFLOP/s = %.2f (measured)" % (name, t, per[t]["tflops"], lt["tflops"], per[t]["tflops"] / lt["tflops"]))
print("    roofs: %s" % d.get("ceilings"))' "$logs"/main-gemm-4096x4096x4096*-bf16.json
