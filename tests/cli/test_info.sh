#!/usr/bin/env bash
# `rooftune info` exits 0 with or without a driver and reports NVRTC's targets; --json parses.
set -u
bin=${ROOFTUNE_BIN:?}
out=$("$bin" info) || { echo "FAIL: info exited $?"; exit 1; }
echo "$out" | grep -q "^NVRTC .*sm_90" || { echo "FAIL: no sm_90 in: $out"; exit 1; }
echo "$out" | grep -q "^CUDA driver" || { echo "FAIL: no driver line"; exit 1; }
# cuDNN: its version and file, or why there is none (and a wrong ROOFTUNE_LIBCUDNN is named)
echo "$out" | grep -Eq "^cuDNN         (9\.[0-9]+\.[0-9]+ at /.*libcudnn\.so\.9|none: cuDNN not found \(looked in )" ||
  { echo "FAIL: no cuDNN line in: $out"; exit 1; }
out2=$(ROOFTUNE_LIBCUDNN=/nonexistent/libcudnn.so.9 "$bin" info) || { echo "FAIL: info exited $?"; exit 1; }
echo "$out2" | grep -q "^cuDNN         none: cuDNN not found: ROOFTUNE_LIBCUDNN=/nonexistent/libcudnn.so.9 could not be loaded" ||
  { echo "FAIL: a wrong ROOFTUNE_LIBCUDNN is not named: $out2"; exit 1; }
json=$("$bin" info --json) || { echo "FAIL: info --json exited $?"; exit 1; }
python3 - "$json" <<'PY' || exit 1
import json, sys
d = json.loads(sys.argv[1])
assert "sm_80" in d["nvrtc_archs"] and "sm_90" in d["nvrtc_archs"], d["nvrtc_archs"]
assert isinstance(d["driver"]["present"], bool)
if not d["driver"]["present"]:
    assert d["gpus"] == [] and "driver" in d["driver"]["message"]
for g in d["gpus"]:
    assert g["sm_count"] > 0 and g["memory_bytes"] > 0
c = d["cudnn"]
assert ("version" in c and c["version"].startswith("9.") and c["path"].endswith("libcudnn.so.9")) or "not found" in c["message"], c
print("info ok:", "driver present" if d["driver"]["present"] else "no driver (reported plainly)")
PY
# the cubin cache: where, how much, its bound; a bad bound is said, and the default holds
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(ROOFTUNE_CACHE_DIR=$tmp/c ROOFTUNE_CACHE_MAX_MB=64 "$bin" info) || { echo "FAIL: info with a cache exited $?"; exit 1; }
echo "$out" | grep -q "^cubin cache   $tmp/c/cubins.db: 0 compiles, 0.0 MB of at most 64 MB$" ||
  { echo "FAIL: cache line: $out"; exit 1; }
out=$(ROOFTUNE_CACHE_DIR=$tmp/c ROOFTUNE_CACHE_MAX_MB=lots "$bin" info) || { echo "FAIL: info exited $?"; exit 1; }
echo "$out" | grep -q "ROOFTUNE_CACHE_MAX_MB=lots is not a positive whole number" ||
  { echo "FAIL: bad bound not said: $out"; exit 1; }
echo "$out" | grep -q "of at most 2048 MB" || { echo "FAIL: default bound: $out"; exit 1; }
out=$(ROOFTUNE_CACHE_DIR=off "$bin" info) || { echo "FAIL: info exited $?"; exit 1; }
echo "$out" | grep -q "^cubin cache   off" || { echo "FAIL: cache off: $out"; exit 1; }
ROOFTUNE_CACHE_DIR=$tmp/c "$bin" info --json | python3 -c '
import json, sys
c = json.load(sys.stdin)["cubin_cache"]
assert c["entries"] == 0 and c["bytes"] == 0 and c["limit_bytes"] == 2048 << 20, c
print("cache ok:", c["path"])' || exit 1
