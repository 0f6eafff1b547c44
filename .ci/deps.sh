#!/usr/bin/env bash
# Installs what rooftune needs to build on Debian/Ubuntu and says what it installs.
# Needs the CUDA toolkit already (nvcc, NVRTC, cuBLASLt, headers): that is not in Debian's
# main archive in the version rooftune wants, so it is checked, not installed.
# Without root it prints the exact command to run instead and exits 1.
set -eu
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# clang-format: tests/format.sh checks the layout (.clang-format).  libxml2-dev: the tests parse the HTML report with libxml2 (tests/html_check.h); rooftune does not link it
for p in cmake make gcc pkg-config libsqlite3-dev libjansson-dev zlib1g-dev libxml2-dev python3 python3-venv clang clang-format; do
  have_pkg "$p" || need+=("$p")
done
# libFuzzer (for tests/fuzz): in libclang-rt-dev on Debian 12 and Ubuntu 24.04
if ! have_pkg libclang-rt-dev && apt-cache show libclang-rt-dev >/dev/null 2>&1; then
  need+=(libclang-rt-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
  cmd="apt-get update && apt-get install -y --no-install-recommends ${need[*]}"
  if [ "$(id -u)" = 0 ]; then
    echo "deps: installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    echo "deps: installing ${need[*]} with sudo"
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "deps: missing ${need[*]}; run as root:" >&2
    echo "  $cmd" >&2
    exit 1
  fi
else
  echo "deps: cmake, gcc, clang, pkg-config, SQLite, Jansson, zlib and libxml2 development files are present"
fi
# What some tests use, and skip with the reason where it is missing: Chromium renders the report
# (tests/cli/test_report_browser.sh), Slurm and munge run a one-node cluster
# (tests/cli/test_slurm.sh).  Installed as root; otherwise the command is printed and the build
# goes on.
opt=()
for p in chromium slurm-wlm munge; do have_pkg "$p" || opt+=("$p"); done
if [ ${#opt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "deps: installing ${opt[*]} for the browser and Slurm tests"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${opt[@]}" >/dev/null; } ||
      echo "deps: could not install ${opt[*]}: the tests that need them will be skipped" >&2
  else
    echo "deps: ${opt[*]} missing (the browser and Slurm tests will be skipped); as root: apt-get install ${opt[*]}" >&2
  fi
fi
cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
if ! [ -f "$cuda/include/nvrtc.h" ] && ! command -v nvcc >/dev/null; then
  echo "deps: the CUDA toolkit (NVRTC, cuBLASLt, headers) was not found in $cuda or on PATH;" >&2
  echo "  install it from NVIDIA (CUDA 12.4 or newer) and set CUDAToolkit_ROOT if it is elsewhere" >&2
  exit 1
fi
