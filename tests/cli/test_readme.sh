#!/usr/bin/env bash
# The README's newcomer lines, run as written: every ```sh block that follows a line
# "<!-- tests/cli/test_readme.sh runs the block below -->" is taken from README.md itself (so the
# README and this test cannot drift) and run, in order, in one shell, as a new user would: in a
# clone of the repository (here: a folder whose build/ and examples/ are this build's and this
# source tree's, and a copy of python/), with a fresh home folder and none of rooftune's variables
# set.  The blocks install rooftune into ~/.local, tune your own kernel and build the C programs
# against the installed library with pkg-config, and install the Python package into a virtual
# environment whose ```python block (run as one script) looks the winner up in the default
# database, finding the installed library without ROOFTUNE_LIBRARY; then the output is checked
# (without a GPU the programs say what would run and exit 0).
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
src=${ROOFTUNE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

marker='<!-- tests/cli/test_readme.sh runs the block below -->'
awk -v m="$marker" '
  $0 == m { want = 1; next }
  want && /^```sh$/ { inblock = 1; want = 0; next }
  want && /^```python$/ { inblock = 1; want = 0; print "# python block"; py = 1; next }
  inblock && /^```$/ { inblock = 0; blocks++; if (py) print "# end python block"; py = 0; next }
  inblock { print }
  END { if (inblock) exit 2; print "# blocks: " blocks + 0 }
' "$src/README.md" >"$tmp/lines.sh" || { echo "FAIL: README.md has an unclosed tested block"; exit 1; }
nblocks=$(sed -n 's/^# blocks: //p' "$tmp/lines.sh")
[ "$nblocks" -ge 2 ] || { echo "FAIL: README.md has $nblocks tested blocks, expected the own kernel's and load_gemm's"; exit 1; }
for want in 'cmake --install build' 'pkg-config --cflags --libs rooftune' './load_vscale' './load_gemm' \
            'pip install ./python' 'import rooftune'; do
  grep -qF -- "$want" "$tmp/lines.sh" || die "the README's tested blocks lack '$want'"
done

# a clone: the build folder and the examples; a fresh home; nothing of rooftune's in the environment
mkdir -p "$tmp/clone" "$tmp/home"
ln -s "$(cd "$(dirname "$bin")" && pwd)" "$tmp/clone/build"
ln -s "$src/examples" "$tmp/clone/examples"
cp -r "$src/python" "$tmp/clone/python" # pip builds in it: a copy, so the source tree gets nothing
rm -rf "$tmp/clone/python/build" "$tmp/clone/python"/*.egg-info
# the script: each README line, echoed before it runs
{
  echo 'set -e -o pipefail'
  echo 'trap '\''echo "README line failed (exit $?): $BASH_COMMAND" >&2'\'' ERR'
  py=0
  while IFS= read -r line; do
    case "$line" in
      '# blocks: '*) continue ;;
      '# python block') py=1; echo "echo '\$ python (the Python block of README.md)'"; echo "python - <<'README_PY'"; continue ;;
      '# end python block') py=0; echo "README_PY"; continue ;;
    esac
    if [ $py = 1 ]; then printf '%s\n' "$line"; else printf 'echo %q\n%s\n' "\$ $line" "$line"; fi
  done <"$tmp/lines.sh"
} >"$tmp/run.sh"
start=$(date +%s)
(cd "$tmp/clone" && env -u ROOFTUNE_DB -u ROOFTUNE_TEMPLATE_PATH -u ROOFTUNE_TEMPLATE_DIR -u XDG_DATA_HOME \
   -u XDG_CONFIG_HOME -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH -u ROOFTUNE_LIBRARY HOME="$tmp/home" \
   bash "$tmp/run.sh") >"$tmp/out.txt" 2>&1
rc=$?
echo "the README's lines ran in $(( $(date +%s) - start )) s (exit $rc)"
[ $rc = 0 ] || { tail -40 "$tmp/out.txt"; die "a README line failed"; exit 1; }
out=$(cat "$tmp/out.txt")
check() { echo "$out" | grep -qE -- "$1" || die "$2"; }
check "^  compiles: THREADS=128,UNROLL=1,WAVES=1 for sm_80, f32, vscale 1048576" "templates --check did not compile vscale_vec"
check "^rule      exact" "lookup vscale did not find the tuned winner"
check "^python: vscale_vec .* exact .*verified False" "the README's Python block did not look the winner up"
if [ -e /dev/nvidia0 ]; then
  check "^ran vscale_vec on .*expected 6" "load_vscale did not run the winner on the GPU"
  check "^ran " "load_gemm did not run on the GPU"
else
  check "^tuned: vscale 16777216 f32 \(exact match\): vscale_vec .* predicted on model:h200" "load_vscale did not find the winner"
  check "^no GPU here .*: that is what would run; exiting" "load_vscale did not say what would run"
  check "runs: cuBLASLt's own choice" "load_gemm did not say that cuBLASLt would run"
fi
# what the programs use: the installed library, found through the rpath of rooftune.pc's Libs
lib=$(ldd "$tmp/clone/load_vscale" | sed -n 's/.*librooftune\.so\.0 => \([^ ]*\) .*/\1/p')
[ -n "$lib" ] && [ "$(realpath "$(dirname "$lib")")" = "$(realpath "$tmp/home/.local/lib")" ] ||
  die "load_vscale uses ${lib:-no librooftune} instead of the installed one"
# the Python package finds the installed library beside the installed command, with neither
# ROOFTUNE_LIBRARY nor pkg-config's path set (the README's environment minus PKG_CONFIG_PATH)
found=$(cd "$tmp" && env -i HOME="$tmp/home" PATH="$tmp/home/.local/bin:/usr/bin:/bin" \
  "$tmp/home/rooftune-venv/bin/python" -c 'import rooftune; print(rooftune.library_path())' 2>&1)
[ "$(realpath "$(dirname "$found")" 2>/dev/null)" = "$(realpath "$tmp/home/.local/lib")" ] ||
  die "the Python package did not find the installed librooftune: $found"

# the examples a newcomer copies build without a warning under -Wall -Wextra
for ex in examples/own_kernel/load_vscale.c examples/load_gemm.c; do
  cc -Wall -Wextra -Werror -fsyntax-only -I"$src/runtime/include" "$src/$ex" 2>"$tmp/warn" ||
    die "$ex warns under -Wall -Wextra: $(head -3 "$tmp/warn")"
done
[ $fail = 0 ] && echo "the README's $nblocks tested blocks run as written"
exit $fail
