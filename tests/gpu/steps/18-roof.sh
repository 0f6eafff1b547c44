# tier: 2
# sourced by tests/gpu/run.sh.  The budget across templates, measured (search/budget.h): on the
# one-row decode problem the prefill templates' roof bounds (datasheet ceilings, no launch) rule
# them out against what attn_decode measures; no measured time may beat its template's bound (the
# rule is sound on this GPU: a result that did would turn the rules off, and the note says so);
# what stopping at the roof left unspent, in GPU seconds at attn_decode's mean evaluation time.
run_table 2 roof || step_fail=1
json_report '
t = {x["template"]: x for x in d.get("templates", [])}
for n, x in t.items():
    print("    %-11s bound %s ms, roof %s ms, best %s ms, %d evaluations: %s" % (n, x.get("bound_ms"), x.get("roof_ms"), x.get("best_ms"), x["evaluated"], x["outcome"]))
r = d.get("roof_rules", {})
print("    rules on: %s; %d evaluations unspent, about %.1f s of GPU time" % (r.get("on"), r.get("unspent", 0), r.get("unspent_gpu_s", 0)))
beat = [n for n, x in t.items() if x.get("best_ms") and x.get("bound_ms") and x["best_ms"] < x["bound_ms"]]
if beat or "beat its roof bound" in d.get("note", ""): print("    VERDICT FAILED: a measured time beat its roof bound: %s" % d.get("note", ""))
if t.get("attn_mma", {}).get("evaluated") or t.get("attn_wgmma", {}).get("evaluated"): print("    note: a prefill template was searched: %s" % d.get("note", ""))' "$logs"/roof-attention-1x32-8x1-32768x128-bf16.json
grep -q "VERDICT FAILED: a measured time beat" "$results" && step_fail=1
