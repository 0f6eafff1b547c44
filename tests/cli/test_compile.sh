#!/usr/bin/env bash
# `rooftune compile` on the test templates (tests/data/templates): the table, JSON, the cache
# (a second run compiles nothing; ROOFTUNE_CACHE_DIR=off turns it off), compile errors shown as
# data, and one clear error with exit 2 for a bad template, arch, dtype, shape or flag.
set -u
bin=${ROOFTUNE_BIN:?}
export ROOFTUNE_TEMPLATE_DIR="${ROOFTUNE_SOURCE_DIR:?}/tests/data/templates"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ROOFTUNE_CACHE_DIR="$tmp/cache"
fail() { echo "FAIL: $*"; exit 1; }

# table: every configuration (9), header, summary
out=$("$bin" compile tiny_gemm --arch sm_80 --jobs 2) || fail "compile exited $?"
echo "$out" | head -1 | grep -q "^config .*regs .*smem .*spills .*occ .*limiter" || fail "no header: $out"
[ "$(echo "$out" | grep -c '^TILE=')" = 9 ] || fail "expected 9 rows: $out"
echo "$out" | tail -1 | grep -q "9 candidates of 9, 9 compiled, 0 failed, 0 cache hits" || fail "summary: $out"

# second run: all from the cache, as JSON
json=$("$bin" compile tiny_gemm --arch sm_80 --json) || fail "compile --json exited $?"
python3 - "$json" <<'PY' || exit 1
import json, sys
d = json.loads(sys.argv[1])
assert d["template"] == "tiny_gemm" and d["arch"] == "sm_80", d
assert d["candidates"] == 9 and d["compiled"] == 9 and d["failed"] == 0, d
assert d["cache_hits"] == 9, d  # a second run compiles nothing
assert isinstance(d["seconds"], float)
assert len(d["results"]) == 9
for r in d["results"]:
    assert r["status"] == "ok", r
    assert set(r["config"]) == {"TILE", "UNROLL"}, r
    assert r["registers"] > 0 and r["smem_bytes"] == 2 * 4 * r["config"]["TILE"] ** 2, r
    assert r["spill_bytes"] == 0 and 0 < r["occupancy"] <= 1, r
    assert r["limiter"] in ("registers", "smem", "threads", "blocks"), r
# deterministic order: the space's order
assert [(r["config"]["TILE"], r["config"]["UNROLL"]) for r in d["results"]][:3] == [(8, 1), (8, 2), (16, 1)]
PY

# --limit spreads a sample evenly; another dtype and arch; the cache off compiles again
json=$(ROOFTUNE_CACHE_DIR=off "$bin" compile tiny_gemm --arch sm_90 --dtype f16 --limit 3 --json) ||
  fail "compile --limit exited $?"
python3 - "$json" <<'PY' || exit 1
import json, sys
d = json.loads(sys.argv[1])
assert d["candidates"] == 3 and d["compiled"] == 3 and d["cache_hits"] == 0, d
assert [r["config"] for r in d["results"]] == [
    {"TILE": 8, "UNROLL": 1}, {"TILE": 16, "UNROLL": 2}, {"TILE": 32, "UNROLL": 2}], d["results"]
PY
[ ! -e "$tmp/off" ] || fail "ROOFTUNE_CACHE_DIR=off created a folder"

# compile errors are data: a row with the error, counted as failed, exit 0
out=$("$bin" compile broken_gemm --arch sm_90) || fail "broken_gemm exited $?"
echo "$out" | grep -q '^VARIANT=1 .*compile_error: broken_gemm.cu(6): error: .*not_declared_anywhere' ||
  fail "no compile error row: $out"
echo "$out" | tail -1 | grep -q "3 candidates of 3, 2 compiled, 1 failed" || fail "summary: $out"
"$bin" compile broken_gemm --arch sm_90 --logs >/dev/null 2>"$tmp/err" || fail "--logs exited $?"
grep -q "^== VARIANT=1: compile_error" "$tmp/err" || fail "--logs: $(cat "$tmp/err")"
grep -q "1 error detected in the compilation of \"broken_gemm.cu\"" "$tmp/err" || fail "--logs: no full log"
json=$("$bin" compile broken_gemm --arch sm_90 --json) || fail "broken_gemm --json exited $?"
python3 - "$json" <<'PY' || exit 1
import json, sys
d = json.loads(sys.argv[1])
assert d["compiled"] == 2 and d["failed"] == 1 and d["cache_hits"] == 3, d
assert [r["status"] for r in d["results"]] == ["ok", "compile_error", "ok"], d
assert "not_declared_anywhere" in d["results"][1]["message"]
PY

# a damaged cache file: one warning, the run still works
printf 'this is not a database at all%.0s' $(seq 200) > "$tmp/cache/cubins.db"
rm -f "$tmp/cache/cubins.db-wal" "$tmp/cache/cubins.db-shm"
out=$("$bin" compile broken_gemm --arch sm_80 2>"$tmp/err") || fail "damaged cache: exit $?"
grep -q "warning: .*damaged" "$tmp/err" || fail "no warning for the damaged cache: $(cat "$tmp/err")"
[ "$(grep -c warning "$tmp/err")" = 1 ] || fail "more than one warning: $(cat "$tmp/err")"

# the selections tier 1 and 2 of tests/gpu/run.sh compile ahead: the covering set (every value
# of TILE and UNROLL at least once), the model's fastest; --dry-run says what the cache holds
# and compiles nothing
export ROOFTUNE_CACHE_DIR="$tmp/cache2"
json=$("$bin" compile tiny_gemm --arch sm_80 --cover --dry-run --json) || fail "compile --cover --dry-run exited $?"
all=$("$bin" compile tiny_gemm --arch sm_80 --dry-run --json) || fail "compile --dry-run exited $?"
python3 - "$json" "$all" <<'PY' || exit 1
import json, sys
d, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert d["cache_hits"] == 0 and d["to_compile"] == d["candidates"], d
assert all(r["status"] == "not_cached" for r in d["results"]), d
for p in ("TILE", "UNROLL"):
    assert {r["config"][p] for r in d["results"]} == {r["config"][p] for r in a["results"]}, (p, d, a)
assert d["candidates"] < a["candidates"] == 9, d
PY
n=$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["candidates"])')
"$bin" compile tiny_gemm --arch sm_80 --cover >/dev/null || fail "compile --cover exited $?"
out=$("$bin" compile tiny_gemm --arch sm_80 --cover --dry-run) || fail "second dry run exited $?"
echo "$out" | tail -1 | grep -q "$n candidates of 9, $n in the cache, 0 to compile (dry run: nothing compiled)" || fail "dry run after the compile: $out"
out=$("$bin" compile tiny_gemm --arch sm_80 --best 2 --dry-run) || fail "--best exited $?"
echo "$out" | tail -1 | grep -q "2 candidates of 9" || fail "--best 2: $out"
export ROOFTUNE_CACHE_DIR="$tmp/cache"

# bad input: one clear error, exit 2
expect2() {
  local want=$1; shift
  "$bin" compile "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ $rc = 2 ] || fail "'compile $*' exited $rc, expected 2"
  grep -q -- "$want" "$tmp/err" || fail "'compile $*' said: $(cat "$tmp/err"), expected '$want'"
  [ ! -s "$tmp/out" ] || fail "'compile $*' printed to stdout"
}
expect2 "no template named nope.*tiny_gemm" nope --arch sm_90
expect2 "unknown architecture 'sm_70'; valid: sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a" tiny_gemm --arch sm_70
expect2 "arch is required" tiny_gemm
expect2 "no dtype 'bf16'; it has: f32, f16" tiny_gemm --arch sm_90 --dtype bf16
expect2 "does not support sm_86" broken_gemm --arch sm_86
expect2 "shape '12xx'" tiny_gemm --arch sm_90 --shape 12xx
expect2 "jobs" tiny_gemm --arch sm_90 --jobs two
expect2 "unknown option '--fast'" tiny_gemm --arch sm_90 --fast
expect2 "unexpected argument" tiny_gemm extra --arch sm_90
expect2 "give one of them" tiny_gemm --arch sm_90 --cover --best 2
expect2 "best takes a count" tiny_gemm --arch sm_90 --best 0
expect2 "dry-run reads the cache" tiny_gemm --arch sm_90 --dry-run --no-cache
echo "compile ok"
