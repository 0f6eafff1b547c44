# tier: 3
# plan: 30
# sourced by tests/gpu/run.sh.  Verified winners ("verified", issue 28): every winner the cuda
# device stored in this run's database passed its reference check (db list --json says
# verified), and the wrong 3-point stencil of tests/cli/test_verified.sh, which tunes fine on the
# model device and is served only when asked, is caught on this GPU: every candidate of it is
# ERR_WRONG_RESULT and none is a winner (that test's GPU part).
if [ "$(left)" -gt 40 ]; then
  log "== verified: the winners measured here, the wrong stencil on the GPU"
  if [ -f "$db" ]; then
    timeout 20 "$bin" db list --db "$db" --json 2>"$logs/verified_list.err" | python3 -c '
import json, sys
d = json.load(sys.stdin)
gpu = [w for w in d["winners"] if w["timing"] == "measured"]
bad = [w["template"] + " " + w["shape"] for w in gpu if not w["verified"]]
print("    %d measured winners, %d verified%s" % (len(gpu), len(gpu) - len(bad), ": NOT " + ", ".join(bad) if bad else ""))
sys.exit(1 if bad else 0)' | tee -a "$results"
    [ "${PIPESTATUS[1]}" = 0 ] || step_fail=1
  fi
  timeout "$(cap 90)" bash tests/cli/test_verified.sh >"$logs/verified.log" 2>&1
  rc=$?
  log "tests/cli/test_verified.sh on the GPU: exit $rc"
  tail -4 "$logs/verified.log" | sed 's/^/    /' | tee -a "$results"
  [ $rc = 0 ] || step_fail=1
fi
