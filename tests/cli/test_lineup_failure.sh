#!/usr/bin/env bash
# A failure anywhere in a template lineup fails the run (tuner/tune_budget.c): the first error is
# printed, `tune` exits non-zero, the database's run is stored "failed" and a job's problem is
# "failed".  It used to be overwritten by the next template's close: with the second template's
# source failing to read (EIO, from an LD_PRELOAD shim, fault_open.c), the run exited 0, was
# stored "done", printed the first template's winner and showed the error nowhere.
# The lineup is three gemm templates (gemm_mma, a copy of it, gemm_wgmma) in a folder of our own;
# each in turn is made to fail, so whichever is searched first, second or last fails the run.
set -u
bin=${ROOFTUNE_BIN:?}
src=${ROOFTUNE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler ($cc) to build the fault-injection shim"; exit 77; }
"$cc" -shared -fPIC -o "$tmp/fault_open.so" "$src/tests/cli/fault_open.c" -ldl 2>"$tmp/ccerr" ||
  { echo "SKIP: cannot build the fault-injection shim: $(head -3 "$tmp/ccerr")"; exit 77; }
mkdir -p "$tmp/t"
cp -r "$src/templates/gemm" "$src/templates/common" "$tmp/t/"
sed 's/"name": "gemm_mma"/"name": "gemm_mmb"/; s/"source": "gemm_mma.cu"/"source": "gemm_mmb.cu"/' \
  "$tmp/t/gemm/gemm_mma.json" >"$tmp/t/gemm/gemm_mmb.json"
cp "$tmp/t/gemm/gemm_mma.cu" "$tmp/t/gemm/gemm_mmb.cu"
export ROOFTUNE_TEMPLATE_DIR="$tmp/t"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
status_of() { # the status of the database's last run
  python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select status from runs order by id desc limit 1").fetchone()[0])' "$1" 2>&1
}
tune() { # tune the lineup with FILE failing to open; stdout+stderr in $tmp/out, prints the exit
  rm -f "$tmp/k.db"
  RT_FAULT_OPEN=$1 LD_PRELOAD="$tmp/fault_open.so" timeout 300 "$bin" tune gemm --shape 256x256x256 \
    --dtype f16 --device model:h200 --budget 6 --db "$tmp/k.db" >"$tmp/out" 2>&1
  echo $?
}
# the shim works and the lineup is the three templates: a clean run searches all three
[ "$(tune none)" = 0 ] || { echo "FAIL: a tune without a fault: $(tail -3 "$tmp/out")"; exit 1; }
for t in gemm_mma gemm_mmb gemm_wgmma; do
  grep -q "^$t " "$tmp/out" || die "the lineup has no $t: $(grep -A5 'templates, by roof' "$tmp/out")"
done
n=0
for t in gemm_mma gemm_mmb gemm_wgmma; do
  rc=$(tune $t.cu)
  [ "$rc" = 1 ] || die "$t failing: tune exited $rc: $(grep -E '^best|rooftune' "$tmp/out" | head -3)"
  grep -q "rooftune tune: .*$t.cu: cannot read the file: Input/output error" "$tmp/out" ||
    die "$t failing: the error is not shown: $(tail -3 "$tmp/out")"
  grep -q "^best:" "$tmp/out" && die "$t failing: a winner was printed"
  [ "$(status_of "$tmp/k.db")" = failed ] || die "$t failing: the run is stored '$(status_of "$tmp/k.db")'"
  n=$((n + 1))
done
# a job: the problem's state is failed and job run says so
cat >"$tmp/j.json" <<JOB
{"rooftune_job": 1, "name": "j", "database": "j.db", "device": "model:h200", "output": "jobout",
 "recheck": false, "defaults": {"budget": 6},
 "problems": [{"target": "gemm", "shape": "256x256x256", "dtype": "f16"}]}
JOB
RT_FAULT_OPEN=gemm_mmb.cu LD_PRELOAD="$tmp/fault_open.so" timeout 300 "$bin" job run "$tmp/j.json" \
  >"$tmp/job.log" 2>&1 && die "job run with a failing template exited 0"
grep -q "gemm_mmb.cu: cannot read the file: Input/output error" "$tmp/job.log" ||
  die "job run: the error is not shown: $(tail -3 "$tmp/job.log")"
[ "$(status_of "$tmp/j.db")" = failed ] || die "job run: the run is stored '$(status_of "$tmp/j.db")'"
"$bin" job status "$tmp/j.json" >"$tmp/st.log" 2>&1
grep -q "^gemm .* failed .*the last run (1) failed" "$tmp/st.log" ||
  die "job status does not say the run failed: $(cat "$tmp/st.log")"
[ $fail = 0 ] && echo "lineup failures: $n of 3 templates failing (first, second, last searched) fail the run," \
  "stored failed and shown; a job's problem is failed"
exit $fail
