#!/usr/bin/env bash
# The Python package as a user gets it: `pip install ./python` into a fresh virtual environment
# (a copy of the folder, so the source tree gets no build files), then its pytest tests against
# the built librooftune (ROOFTUNE_LIBRARY) and rooftune command (ROOFTUNE_BIN, for the test
# databases).  The GPU tests in it skip with their reasons without PyTorch and a GPU.  Skips
# (77) only when pytest cannot be installed (no package index reachable).
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
src=${ROOFTUNE_SOURCE_DIR:?}
lib=$(dirname "$bin")/librooftune.so.0
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v "$py" >/dev/null || { echo "SKIP: no $py"; exit 77; }
"$py" -m venv "$tmp/venv" >"$tmp/venv.log" 2>&1 || { echo "FAIL: $py -m venv: $(tail -2 "$tmp/venv.log")"; exit 1; }
cp -r "$src/python" "$tmp/pkg"
rm -rf "$tmp/pkg/build" "$tmp/pkg"/*.egg-info
pip="$tmp/venv/bin/python -m pip --disable-pip-version-check -q"
if ! $pip install "$tmp/pkg" >"$tmp/pip.log" 2>&1; then
  # no index for the build backend: the environment's own setuptools builds it
  $pip install --no-build-isolation "$tmp/pkg" >>"$tmp/pip.log" 2>&1 ||
    { echo "FAIL: pip install ./python:"; tail -5 "$tmp/pip.log"; exit 1; }
fi
$pip install pytest >"$tmp/pytest.log" 2>&1 || { echo "SKIP: pytest could not be installed: $(tail -1 "$tmp/pytest.log")"; exit 77; }
cd "$tmp" # not the source tree: `import rooftune` must find the installed copy
where=$("$tmp/venv/bin/python" -c 'import rooftune; print(rooftune.__file__)')
case "$where" in "$tmp/venv/"*) ;; *) echo "FAIL: rooftune imported from $where, not the installed package"; exit 1 ;; esac
ROOFTUNE_LIBRARY=$lib ROOFTUNE_BIN=$bin "$tmp/venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$src/python/tests"
