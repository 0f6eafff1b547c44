#!/usr/bin/env bash
# Every C, CUDA and header file follows .clang-format (tests/format.sh): a file laid out otherwise
# fails with its name and the command that lays it out.  Skips (77) without clang-format 14.
set -u
src=${ROOFTUNE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bash "$src/tests/format.sh"
