#!/usr/bin/env bash
# Every inline asm statement of the shipped templates is in templates/common/rt_ptx.h: a kernel
# body or index header writes wrapper calls, so the sim (sim/sim.h) runs the very text NVRTC
# compiles with each wrapper's host twin, and a wrapper's PTX is written once.  Fails naming
# each file and line with an asm statement outside rt_ptx.h (comments are not read).
set -u
src=${ROOFTUNE_SOURCE_DIR:?}
bad=0 n=0
while IFS= read -r -d '' f; do
  case $f in */templates/common/rt_ptx.h) continue ;; esac
  n=$((n + 1))
  # strip // and /* */ comments and string literals, then look for asm( or asm volatile(
  hits=$(python3 - "$f" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
t = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), t, flags=re.S)
t = re.sub(r'//[^\n]*', '', t)
t = re.sub(r'"(\\.|[^"\\\n])*"', '""', t)
for i, line in enumerate(t.split('\n'), 1):
    if re.search(r'\b(asm|__asm__|__asm)\b\s*(volatile|__volatile__)?\s*(\(|\{)', line):
        print(i)
PY
)
  for l in $hits; do
    echo "FAIL: ${f#"$src"/}:$l: inline asm outside templates/common/rt_ptx.h (add a wrapper there, with its twin in sim/)"
    bad=1
  done
done < <(find "$src/templates" -type f \( -name '*.cu' -o -name '*.h' -o -name '*.cuh' \) -print0)
[ "$n" -gt 10 ] || { echo "FAIL: only $n template files found under $src/templates"; exit 1; }
[ $bad = 0 ] && echo "ok: no inline asm outside rt_ptx.h in $n template files"
exit $bad
