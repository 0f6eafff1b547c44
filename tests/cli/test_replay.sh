#!/usr/bin/env bash
# `rooftune replay`: JSON on small fixtures (Kernel Tuner plain and gzipped, KTT), clear errors
# for bad files and flags, a prior from another GPU, and one real brute-forced space when
# ../shared/data is there.
set -u
bin=${ROOFTUNE_BIN:?}
fx=${ROOFTUNE_SOURCE_DIR:?}/tests/data/ktfiles
json=$("$bin" replay --json --seeds 5 --budget 20 --strategy ils "$fx/small.json" "$fx/small.json.gz" "$fx/ktt_small.json") \
  || { echo "FAIL: replay --json exited $?"; exit 1; }
python3 - "$json" <<'PY' || exit 1
import json, sys
r = json.loads(sys.argv[1])["results"]
assert len(r) == 3, r
a, b, k = r
for x in r:
    assert x["strategy"] == "ils" and x["seeds"] == 5, x
    assert x["reached"] == 1.0 and 1 <= x["evals_to_target"]["median"] <= x["evals_to_target"]["p90"] <= 10, x
assert a["valid"] == 7 and a["configs"] == 10 and abs(a["optimum_ms"] - 1.0) < 1e-9, a
assert abs(a["random_expected"] - 8 / 3) < 1e-9, a
assert b["valid"] == 7 and abs(b["optimum_ms"] - 2.0) < 1e-9, b
assert k["valid"] == 3 and abs(k["optimum_ms"] - 0.8) < 1e-9 and abs(k["random_expected"] - 2) < 1e-9, k
print("replay json ok")
PY
# a KTT recording with counters: diagnosed from them, the strategy told the compile facts
json=$("$bin" replay --json --seeds 3 --budget 10 --strategy steer "$fx/ktt_counters.json") \
  || { echo "FAIL: replay --json on ktt_counters.json exited $?"; exit 1; }
python3 - "$json" <<'PY' || exit 1
import json, sys
x = json.loads(sys.argv[1])["results"][0]
assert x["strategy"] == "steer" and x["diagnosed"] == 4 and x["features"] == 7, x
assert x["counters_gpu"] == "NVIDIA GeForce RTX 2080 Ti", x
print("replay with counters ok")
PY
out=$("$bin" replay --seeds 2 --budget 10 "$fx/ktt_counters.json") || { echo "FAIL: replay text on ktt_counters.json"; exit 1; }
echo "$out" | grep -q "4 configurations diagnosed from their recorded counters" || { echo "FAIL: text: $out"; exit 1; }
# --blind: told only times, said in one line; --survey: the facts ahead, their compiles counted
# (0.1 evaluation for each of the file's configurations in every run)
out=$("$bin" replay --seeds 2 --budget 10 --blind "$fx/ktt_counters.json") || { echo "FAIL: replay --blind"; exit 1; }
echo "$out" | grep -q "blind: the strategy is told only times" || { echo "FAIL: --blind text: $out"; exit 1; }
echo "$out" | grep -q "diagnosed from their recorded counters" && { echo "FAIL: --blind still says diagnosed: $out"; exit 1; }
json=$("$bin" replay --json --seeds 3 --budget 10 --strategy steer --blind "$fx/ktt_counters.json") || exit 1
sjson=$("$bin" replay --json --seeds 3 --budget 10 --strategy steer --survey "$fx/ktt_counters.json") || exit 1
python3 - "$json" "$sjson" <<'PY' || exit 1
import json, sys
b = json.loads(sys.argv[1])["results"][0]
s = json.loads(sys.argv[2])["results"][0]
assert b["blind"] is True and b["survey_cost"] == 0 and b["learned_share"] == 0, b
assert s["blind"] is False and abs(s["survey_cost"] - 0.1 * s["configs"]) < 1e-9, s
assert s["evals_to_target"]["median"] >= s["survey_cost"], s
print("replay --blind, --survey ok")
PY
# text output names the default strategy and random search's need
out=$("$bin" replay --seeds 3 "$fx/small.json") || { echo "FAIL: replay text exited $?"; exit 1; }
echo "$out" | grep -q "random search needs 2.7" || { echo "FAIL: text: $out"; exit 1; }
# errors: each names the input; bad files exit 1, bad flags 2
for f in broken.json broken.json.gz foreign.json missing.json; do
  err=$("$bin" replay "$fx/$f" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] || { echo "FAIL: $f exited $rc"; exit 1; }
  echo "$err" | grep -q "$f" || { echo "FAIL: error does not name $f: $err"; exit 1; }
done
"$bin" replay --strategy nope "$fx/small.json" 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: unknown strategy"; exit 1; }
"$bin" replay --seeds 0 "$fx/small.json" 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: --seeds 0"; exit 1; }
"$bin" replay --target -1 "$fx/small.json" 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: --target -1"; exit 1; }
"$bin" replay --bogus "$fx/small.json" 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: --bogus"; exit 1; }
"$bin" replay 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: no file"; exit 1; }
# --prior: another GPU's recording of the kernel; its fastest configuration that this space
# has (block_size_x=32,tile=2: 1.04 ms here, within 5 % of 1.0) is every run's first evaluation
j=$("$bin" replay --json --seeds 4 --strategy annealing --prior "$fx/prior_other_gpu.json" "$fx/small.json") \
  || { echo "FAIL: replay --prior exited $?"; exit 1; }
python3 - "$j" <<'PY' || exit 1
import json, sys
r = json.loads(sys.argv[1])["results"][0]
assert r["prior"]["ranked"] == 5 and r["prior"]["evaluated_first"] == 2, r  # STRATEGY_PRIOR_FIRST
assert r["prior"]["device_name"] == "Other Fixture GPU", r
assert r["evals_to_target"]["median"] == 1 and r["evals_to_target"]["p90"] == 1, r
print("replay --prior ok")
PY
# --prior repeatable: both named, one order for the runs
j=$("$bin" replay --json --seeds 2 --prior "$fx/prior_other_gpu.json" --prior "$fx/small.json" "$fx/small.json") \
  || { echo "FAIL: replay --prior twice exited $?"; exit 1; }
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["results"][0]; assert len(r["prior"]["files"])==2 and r["prior"]["ranked"]>=5, r' "$j" \
  || { echo "FAIL: --prior twice: $j"; exit 1; }
for f in unrelated.json missing.json; do
  err=$("$bin" replay --prior "$fx/$f" "$fx/small.json" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] || { echo "FAIL: --prior $f exited $rc"; exit 1; }
  echo "$err" | grep -q "$f" || { echo "FAIL: --prior error does not name $f: $err"; exit 1; }
done
# a real space, when present
real=${ROOFTUNE_SHARED_DIR:-}/data/spaces/ktt_coulomb3d_RTX_2080.json.gz
if [ -r "$real" ]; then
  j=$("$bin" replay --json --seeds 5 "$real") || { echo "FAIL: replay on $real"; exit 1; }
  python3 -c 'import json,sys; r=json.loads(sys.argv[1])["results"][0]; assert r["valid"]==210 and r["reached"]==1.0, r; print("coulomb: median", r["evals_to_target"]["median"], "random", round(r["random_expected"],2))' "$j" || exit 1
else
  echo "no shared spaces: real-space check skipped"
fi
echo "replay ok"
