# tier: 3
# plan: 120
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 8. a job on every GPU of the node (`--device cuda:all`: one measuring process per GPU, each a
#    sub-shard of the job), twice: the first run tunes three small problems, the rerun must
#    evaluate nothing, find them fresh and recheck their winners (a SLOWER here says measured
#    times do not repeat within 5 %); the report is written ("jobs")
if [ "$(left)" -gt 75 ]; then
  log "== jobs: rooftune job run --device cuda:all, twice"
  mkdir -p "$logs/job"
  cat >"$logs/job/gpu.json" <<'JOB'
{"rooftune_job": 1, "name": "gpu", "database": "gpu.db", "output": "out", "device": "cuda:all", "timeout": 10,
 "time_budget": "50s", "recheck": {"every": "0"}, "defaults": {"dtype": "bf16", "budget": 3},
 "problems": [{"target": "gemm", "shape": "2048x2048x2048"}, {"target": "gemm", "shape": "16x4096x4096:nt"},
              {"target": "attention", "shape": "1x16:4x1024x128:causal"}]}
JOB
  for pass in 1 2; do
    [ "$(left)" -gt 30 ] || break
    timeout "$(cap 60)" "$bin" job run "$logs/job/gpu.json" --json >"$logs/job/run$pass.json" 2>"$logs/job/run$pass.log"
    rc=$?
    log "job run $pass (cuda:all): exit $rc"
    sed 's/^/    /' "$logs/job/run$pass.log" | head -8 | tee -a "$results"
    python3 - "$logs/job/run$pass.json" "$pass" <<'PY' 2>&1 | tee -a "$results"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print("    devices %s: evaluated %d, tuned %d, fresh %d, failed %d, regressions %d, complete %s" % (
        d["device"], d["evaluated"], d["tuned"], d["fresh"], d["failed"], d["regressions"], d["complete"]))
    if sys.argv[2] == "2" and d["evaluated"] != 0: print("    THE RERUN EVALUATED %d" % d["evaluated"])
except Exception as e:
    print("    no job report (%s)" % (str(e).splitlines()[0] if str(e) else "empty"))
PY
    case $rc in 0|3) ;; *) step_fail=1 ;; esac
  done
  [ -s "$logs/job/out/report.html" ] && log "    report: $(wc -c <"$logs/job/out/report.html") bytes"
fi
