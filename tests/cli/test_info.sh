#!/usr/bin/env bash
# `rooftune info` exits 0 with or without a driver and reports NVRTC's targets; --json parses.
set -u
bin=${ROOFTUNE_BIN:?}
out=$("$bin" info) || { echo "FAIL: info exited $?"; exit 1; }
echo "$out" | grep -q "^NVRTC .*sm_90" || { echo "FAIL: no sm_90 in: $out"; exit 1; }
echo "$out" | grep -q "^CUDA driver" || { echo "FAIL: no driver line"; exit 1; }
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
print("info ok:", "driver present" if d["driver"]["present"] else "no driver (reported plainly)")
PY
