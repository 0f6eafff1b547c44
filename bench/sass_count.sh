#!/usr/bin/env bash
# sass_count.sh — compile one configuration of a template with rooftune (NVRTC, through a
# throw-away cubin cache) and count its SASS: instructions in the kernel, the tensor-core
# instructions, and the main loop (the innermost loop holding them: from its label to the
# branch back), by opcode.  Needs nvdisasm (the CUDA toolkit's, or the pip wheel
# nvidia-cuda-nvdisasm; NVDISASM=path overrides).  No GPU needed.
#   bench/sass_count.sh TEMPLATE SHAPE DTYPE CONFIG [BUILD_DIR]
# e.g. bench/sass_count.sh gemm_wgmma 4096x4096x4096:nt e4m3 BLOCK_M=128,BLOCK_N=256,...
set -eu
tmpl=$1 shape=$2 dtype=$3 config=$4 build=${5:-build}
nvd=${NVDISASM:-$(command -v nvdisasm || true)}
[ -n "$nvd" ] || { echo "sass_count.sh: no nvdisasm: install the toolkit's or pip install nvidia-cuda-nvdisasm, or set NVDISASM" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ROOFTUNE_CACHE_DIR=$dir "$build/rooftune" tune "$tmpl" --shape "$shape" --dtype "$dtype" --device model:h200 \
  --no-db --config "$config" >"$dir/tune.log" 2>&1 || { cat "$dir/tune.log" >&2; exit 1; }
python3 - "$dir" "$nvd" <<'PY'
import re, sqlite3, subprocess, sys, collections
d, nvd = sys.argv[1], sys.argv[2]
rows = sqlite3.connect(d + "/cubins.db").execute("SELECT cubin, registers, spill_stores FROM cubins_v1 WHERE cubin IS NOT NULL").fetchall()
if len(rows) != 1: sys.exit("sass_count.sh: expected one cubin, found %d" % len(rows))
open(d + "/k.cubin", "wb").write(rows[0][0])
sass = subprocess.run([nvd, "-c", d + "/k.cubin"], capture_output=True, text=True, check=True).stdout
ins = []  # (label-or-None, opcode, text)
label = None
for line in sass.splitlines():
    m = re.match(r"\s*\.(L_x_\d+):", line)
    if m: label = m.group(1); continue
    m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)(.*?);", line)
    if m:
        ins.append((label, m.group(2), m.group(3))); label = None
ops = [o.split(".")[0] for _, o, _ in ins]
mma = [i for i, o in enumerate(ops) if o in ("HGMMA", "HMMA", "QGMMA", "IGMMA")]
print("registers %d, spill stores %d bytes; %d instructions, %d tensor-core (%s)" % (rows[0][1], rows[0][2], len(ins), len(mma),
      ", ".join("%s %d" % kv for kv in collections.Counter(ops[i] for i in mma).items())))
if not mma: sys.exit(0)
# the innermost loop holding tensor-core instructions: the shortest span from a label to a
# branch back to it that contains one
labels = {l: i for i, (l, _, _) in enumerate(ins) if l}
best = None
for j, (_, o, rest) in enumerate(ins):
    if o.split(".")[0] != "BRA": continue
    t = re.search(r"(L_x_\d+)", rest)
    if not t or t.group(1) not in labels or labels[t.group(1)] > j: continue
    lo = labels[t.group(1)]
    if any(lo <= i <= j for i in mma) and (best is None or j - lo < best[1] - best[0]):
        best = (lo, j)
if best:
    lo, hi = best
    body = collections.Counter(ops[lo:hi + 1])
    n = hi - lo + 1
    nm = sum(v for k, v in body.items() if k in ("HGMMA", "HMMA", "QGMMA", "IGMMA"))
    print("main loop: %d instructions, %d tensor-core, %.2f instructions per tensor-core instruction" % (n, nm, n / max(nm, 1)))
    print("  " + ", ".join("%s %d" % kv for kv in body.most_common()))
PY
