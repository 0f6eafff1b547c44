#!/usr/bin/env bash
# fetch_spaces.sh — downloads brute-forced tuning spaces that are public but not in
# ../shared/data/spaces, for bench_strategies and `rooftune replay`.
#
# Today one space: Kernel Tuner's 2D convolution brute-forced on an RTX 2080 Ti (6,768
# configurations, Kernel Tuner cache format), shipped as a test fixture inside the
# autotuning_methodology 1.1.0 source distribution on PyPI (MIT licence).  rooftune's strategies
# were fixed before this file was looked at, so it is held out in the strict sense.
#
# It goes to $XDG_CACHE_HOME/rooftune/spaces (default ~/.cache/rooftune/spaces) as
# convolution_RTX_2080Ti.json.gz; the download and the extracted file are checked against
# SHA-256 sums.  Needs python3 -m pip (or curl) and network access to PyPI.
#
# usage: bench/fetch_spaces.sh [DEST_DIR]
set -euo pipefail

dest="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/rooftune/spaces}"
sdist=autotuning_methodology-1.1.0.tar.gz
sdist_sha=e3fffd803d6f323942fed6cb3b5744fea51b5e6f1490ec82031cfee7dee08e52
member=autotuning_methodology-1.1.0/tests/autotuning_methodology/integration/mockfiles/mock_gpu.json
member_sha=fc2e58f8a9e65e4cb1799621c091dbcd89e4c827ed12d112edc5881d4a149939
out="$dest/convolution_RTX_2080Ti.json.gz"

if [ -s "$out" ]; then
  echo "fetch_spaces: $out is already there"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$tmp" \
    autotuning_methodology==1.1.0 >/dev/null 2>&1; then
  url=https://files.pythonhosted.org/packages/source/a/autotuning_methodology/$sdist
  if ! curl -fsSL -o "$tmp/$sdist" "$url"; then
    echo "fetch_spaces: could not download $sdist from PyPI (pip and curl both failed);" \
         "check the network, or copy the file into $tmp by hand" >&2
    exit 1
  fi
fi
echo "$sdist_sha  $tmp/$sdist" | sha256sum -c --quiet - || {
  echo "fetch_spaces: $sdist does not have the expected SHA-256; not using it" >&2
  exit 1
}
tar -xzf "$tmp/$sdist" -C "$tmp" "$member"
echo "$member_sha  $tmp/$member" | sha256sum -c --quiet - || {
  echo "fetch_spaces: $member does not have the expected SHA-256; not using it" >&2
  exit 1
}
mkdir -p "$dest"
gzip -c "$tmp/$member" > "$out.tmp" && mv "$out.tmp" "$out"
echo "fetch_spaces: wrote $out"
