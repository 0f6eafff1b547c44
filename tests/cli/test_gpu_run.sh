#!/usr/bin/env bash
# tests/gpu/run.sh without a GPU: one line saying so and exit 0, at once (a bounded wait, no
# traceback); `--plan`: every tier-1 and tier-2 line estimated from its model-device dry run
# (candidates counted, nothing compiled), and tiers 1 and 2 within the 420 s a lease allows;
# and a run on a stand-in GPU machine (below).
set -u
src=${ROOFTUNE_SOURCE_DIR:?}
export ROOFTUNE_BIN=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export ROOFTUNE_CACHE_DIR="$tmp/cache" ROOFTUNE_BUILD_DIR="$tmp/no-build"

if ! timeout 4 nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  out=$(PATH=/usr/bin:/bin timeout 10 bash "$src/tests/gpu/run.sh" 2>&1)
  rc=$?
  [ $rc = 0 ] || fail "run.sh without a GPU exited $rc: $out"
  [ "$(echo "$out" | wc -l)" = 1 ] || fail "run.sh without a GPU said more than one line: $out"
  echo "$out" | grep -q "no GPU here" || fail "no 'no GPU here' line: $out"
fi

out=$(timeout 600 bash "$src/tests/gpu/run.sh" --plan 2>"$tmp/err")
rc=$?
[ $rc = 0 ] || fail "--plan exited $rc: $(cat "$tmp/err")"
if echo "$out" | grep -q Traceback || grep -q Traceback "$tmp/err"; then fail "a traceback: $out $(cat "$tmp/err")"; fi
last=$(echo "$out" | tail -1)
echo "$last" | grep -Eq '^tiers 1\+2: [0-9]+ s, [0-9]+ compiles left$' || fail "last line: $last"
secs=$(echo "$last" | sed 's/^tiers 1+2: \([0-9]*\) s.*/\1/')
[ "$secs" -le 420 ] || fail "tiers 1 and 2 need $secs s, over the 420 s: $out"
# every table line of tiers 1 and 2 is there, with candidates
lines=$(grep -v '^#' "$src/tests/gpu/tiers.txt" | awk 'NF >= 7 && ($1 == 1 || $1 == 2)' | wc -l)
rows=$(echo "$out" | awk '($1 == 1 || $1 == 2) && $(NF-2) > 0' | wc -l)
[ "$rows" = "$lines" ] || fail "$rows plan rows with candidates for $lines table lines: $out"
echo "$out" | grep -q "^3 .*tests .*as time allows" || fail "tier 3 steps are not listed: $out"
# a run's flow on a stand-in GPU machine: a fake nvidia-smi that lists a GPU and a fake rooftune
# whose tune answers at once (WRONG for tf32); the step table, the summary and the logs are in
# $OUT, a wrong candidate fails the verdict (exit 1), and steps past the time budget are "not
# reached", which fails nothing (exit 0)
fake=$tmp/fake
mkdir -p "$fake/bin" "$fake/build" "$tmp/out1" "$tmp/out2"
printf '#!/bin/sh\n[ "$1" = -L ] && echo "GPU 0: Stand-in GPU (UUID: GPU-0)"\nexit 0\n' >"$fake/bin/nvidia-smi"
cat >"$fake/build/rooftune" <<'FAKE'
#!/bin/sh
case "$1" in
  info) echo "rooftune (stand-in)"; exit 0 ;;
  tune) case "$*" in
          *tf32*) echo '{"evaluated": 2, "statuses": {"OK": 1, "ERR_WRONG_RESULT": 1}}' ;;
          *) echo '{"evaluated": 2, "statuses": {"OK": 2}, "best": {"template": "t", "time_ms": 1.0, "tflops": 1.0, "limit": "compute"}}' ;;
        esac ;;
esac
exit 0
FAKE
chmod +x "$fake/bin/nvidia-smi" "$fake/build/rooftune"
OUT=$tmp/out1 PATH=$fake/bin:$PATH ROOFTUNE_BUILD_DIR=$fake/build RT_GPU_STEPS="cover main" \
  timeout 300 bash "$src/tests/gpu/run.sh" >"$tmp/run1" 2>&1
rc=$?
[ $rc = 1 ] || fail "a wrong tf32 candidate: exit $rc, expected 1: $(tail -5 "$tmp/run1")"
grep -q "^cover .*FAILED" "$tmp/out1/gpu_steps.txt" || fail "step table: $(cat "$tmp/out1/gpu_steps.txt")"
grep -q "^main .*passed" "$tmp/out1/gpu_steps.txt" || fail "step table: $(cat "$tmp/out1/gpu_steps.txt")"
grep -q "VERDICT FAILED: 1 ERR_WRONG_RESULT" "$tmp/out1/gpu_results.txt" || fail "no failed verdict in the summary"
tar -tzf "$tmp/out1/gpu_logs.tgz" | grep -q "cover-gemm_mma-1000x1000x1000-nt-tf32.json" || fail "logs not archived"
OUT=$tmp/out2 PATH=$fake/bin:$PATH ROOFTUNE_BUILD_DIR=$fake/build RT_GPU_STEPS="cover main" RT_GPU_BUDGET_S=10 \
  timeout 300 bash "$src/tests/gpu/run.sh" >"$tmp/run2" 2>&1
rc=$?
[ $rc = 0 ] || fail "steps not reached: exit $rc, expected 0: $(tail -5 "$tmp/run2")"
[ "$(grep -c "not reached" "$tmp/out2/gpu_steps.txt")" = 2 ] || fail "step table: $(cat "$tmp/out2/gpu_steps.txt")"
if grep -q Traceback "$tmp/run1" "$tmp/run2"; then fail "a traceback"; fi
echo "gpu run ok ($last)"
