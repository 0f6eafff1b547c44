#!/usr/bin/env bash
# What `rooftune tune` says about its winner, on the model device: a template whose PAD
# parameter never reaches the compiled code gives configurations with the same cubin, which are
# evaluated once (the others get that result with a note, and the saving is reported), so they
# tie; the tie is reported with the tie-break rule and a "why it wins" sentence, in `tune` and
# in `db show`; every result says what it computed in.  Precision: --dtype f32 is fp32 math
# (gemm_mma, a tf32 template, is left out and named when asked for), --allow-tf32 admits it
# (its results say tf32), --dtype tf32 runs it, and --allow-tf32 with another dtype is a usage
# error.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
export ROOFTUNE_CACHE_DIR="$tmp/cache"
own="$tmp/k/vpad"
mkdir -p "$own"
cat >"$own/family.json" <<'JSON'
{"family": "vpad", "description": "y = 2 x over N floats", "dims": ["N"], "example": "1048576",
 "dtypes": ["f32"],
 "args": [{"name": "x", "buffer": "dtype", "count": "N", "dir": "in", "init": {"uniform": [-1, 1]}},
          {"name": "y", "buffer": "dtype", "count": "N", "dir": "out"},
          {"name": "n", "scalar": "i32", "value": "N"}],
 "reference": "vpad_ref", "check": {"f32": {"rel": 1e-6}}, "cost": {"flops": "N", "bytes": "2*N*dtype_bytes"}}
JSON
cat >"$own/vpad_ref.cu" <<'CU'
extern "C" __global__ void vpad_ref(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
CU
cat >"$own/vpad_ref.json" <<'JSON'
{"name": "vpad_ref", "family": "vpad", "source": "vpad_ref.cu", "entry": "vpad_ref", "dtypes": ["f32"],
 "archs": ["sm_80", "sm_90"], "params": {"T": [256]},
 "launch": {"grid": ["ceil_div(N, T)", 1, 1], "block": ["T", 1, 1]}, "cost": {"flops": "N", "dram_bytes": "8*N"}}
JSON
cat >"$own/vpad.cu" <<'CU'
// PAD is #defined by the prefix and read nowhere: every PAD compiles to the same cubin
extern "C" __global__ void vpad(const float *x, float *y, int n) {
  int i = blockIdx.x * THREADS + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
CU
cat >"$own/vpad.json" <<'JSON'
{"name": "vpad", "family": "vpad", "source": "vpad.cu", "entry": "vpad", "dtypes": ["f32"],
 "archs": ["sm_80", "sm_90"], "instruction": "simt", "params": {"THREADS": [32, 256], "PAD": [0, 1, 2]},
 "launch": {"grid": ["ceil_div(N, THREADS)", 1, 1], "block": ["THREADS", 1, 1]},
 "cost": {"flops": "N", "dram_bytes": "8*N+PAD*N"}}
JSON

# six configurations, two cubins: four results reused; the three of the winner's cubin tie
json=$("$bin" tune vpad --templates "$tmp/k" --shape 16777216 --dtype f32 --device model:h200 --budget 6 \
  --strategy brute_force --db "$tmp/t.db" --json 2>"$tmp/err") || die "tune exited $?: $(tail -3 "$tmp/err")"
python3 - "$json" <<'PY' || fail=1
import json, re, sys
d = json.loads(sys.argv[1])
assert d["evaluated"] == 6, d
assert d["saved"]["same_cubin"] == 4, d["saved"]
assert d["saved"]["stopped_early"] == 0, d["saved"]
b = d["best"]
assert b["tied"] == 2, b
assert b["verdict"].startswith("tied with 2 others at "), b["verdict"]
assert "(equal on the model device)" in b["verdict"], b["verdict"]
assert "; ties break on fewer registers, then less shared memory: equal in both, the first evaluated. " in b["verdict"], b["verdict"]
assert re.search(r"\. [0-9.]+x faster than the runner-up \(", b["verdict"]), b["verdict"]  # a ratio
assert "% faster" not in b["verdict"] and "% slower" not in b["verdict"], b["verdict"]
assert b["config"]["PAD"] == 0, b  # same registers and shared memory: the earliest of the tied
assert b["precision"] == "fp32", b
assert b["measured"] == "", b      # no counters on the model device
print("tie and reuse ok:", b["verdict"])
PY
out=$("$bin" tune vpad --templates "$tmp/k" --shape 16777216 --dtype f32 --device model:h200 --budget 6 \
  --strategy brute_force --no-db 2>/dev/null) || die "tune (text) exited $?"
echo "$out" | grep -q "^      why it wins: tied with 2 others" || die "no why-it-wins line: $out"
echo "$out" | grep -q "^saved: 4 candidates with a cubin measured before (0.00 s of GPU time)" || die "no saving line: $out"
echo "$out" | grep -q "^      facts: DRAM bytes from the cost formula, occupancy calculated" || die "facts not marked modelled: $out"
echo "$out" | grep -Eq "predicted fp32 +(memory|launch|waves|occupancy)" || die "no precision column: $out"
show=$("$bin" db show --db "$tmp/t.db") || die "db show exited $?"
echo "$show" | grep -q "same cubin and launch as vpad THREADS=" || die "db show lacks the reuse note: $show"
echo "$show" | grep -q "^    winner: tied with 2 others" || die "db show lacks the winner's sentence: $show"
echo "$show" | grep -Eq "^    winner: .*[0-9.]+x faster than this template.s runner-up" || die "db show's sentence has no ratio: $show"
echo "$show" | grep -q " in fp32" || die "db show lacks the precision: $show"
[ "$(echo "$show" | grep -c "^    winner:")" = 1 ] || die "one winner sentence per template expected: $show"

# precision: f32 is fp32 math; tf32 is its own dtype
o=$("$bin" tune gemm_mma --shape 64x64x64 --dtype f32 --device model:h200 --no-db 2>&1); rc=$?
[ $rc = 2 ] || die "gemm_mma for f32: exit $rc (a --dtype the template cannot take is bad usage)"
case "$o" in *"template gemm_mma does not support dtype 'f32' (it computes in tf32: give --dtype tf32, or --allow-tf32"*) ;;
  *) die "unclear: $o" ;; esac
o=$("$bin" tune gemm --shape 64x64x64 --dtype bf16 --allow-tf32 --no-db 2>&1); rc=$?
[ $rc = 2 ] || die "--allow-tf32 with bf16: exit $rc"
case "$o" in *"--allow-tf32 admits tf32 candidates to an f32 run; --dtype is bf16"*) ;; *) die "unclear: $o" ;; esac
for allow in "" --allow-tf32; do
  json=$("$bin" tune gemm --shape 64x64x64 --dtype f32 $allow --device model:h200 --budget 4 --strategy brute_force \
    --no-db --json 2>/dev/null) || die "gemm f32 $allow exited $?"
  python3 - "$json" "$allow" <<'PY' || fail=1
import json, sys
d, allow = json.loads(sys.argv[1]), sys.argv[2]
per = d["best_per_template"]
assert per["gemm_simt"]["precision"] == "fp32", per
if allow:
    assert per["gemm_mma"]["precision"] == "tf32", per
else:
    assert "gemm_mma" not in per, per
print("f32", allow or "(fp32 only)", {k: v["precision"] for k, v in per.items()})
PY
done
json=$("$bin" tune gemm --shape 64x64x64 --dtype tf32 --device model:h200 --budget 2 --no-db --json 2>/dev/null) ||
  die "gemm tf32 exited $?"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); p=d["best_per_template"]; assert list(p)==["gemm_mma"] and p["gemm_mma"]["precision"]=="tf32", p' "$json" ||
  die "tf32 run: $json"
exit $fail
