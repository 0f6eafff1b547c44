#!/usr/bin/env bash
# Checks that every C, CUDA and header file follows .clang-format (exit 1 naming the files that do
# not, and the command that fixes them); `--fix` rewrites them.  Fixtures under tests/data/ are
# data, kept byte for byte.  The layout is clang-format 14's (Debian 12's clang-format package, which .ci/deps.sh installs): another major version lays some
# lines out differently, so without version 14 the check says so and exits 77 (skipped), as it
# does without clang-format.  tests/cli/test_format.sh runs the check in the test suite.
set -eu
cd "$(dirname "$0")/.."
fix=0
case "${1:-}" in --fix) fix=1 ;; "") ;; *) echo "usage: bash tests/format.sh [--fix]" >&2; exit 2 ;; esac
cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null; then
  echo "format: no clang-format here (apt-get install clang-format); the layout is not checked" >&2
  exit 77
fi
major=$("$cf" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$major" != 14 ] && [ $fix = 0 ]; then
  echo "format: $cf is version $major, the tree is laid out by version 14: not checked" >&2
  exit 77
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' '*.cuh' ':!tests/data/')
else
  mapfile -t files < <(find . \( -path './build*' -o -path ./tests/data \) -prune -o \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print | sort)
fi
if [ $fix = 1 ]; then
  printf '%s\0' "${files[@]}" | xargs -0 "$cf" -i
  echo "format: ${#files[@]} files laid out"
  exit 0
fi
# one clang-format for every file: each line it would change is a warning naming its file
mapfile -t bad < <(printf '%s\0' "${files[@]}" | xargs -0 "$cf" --dry-run 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  echo "format: ${#bad[@]} of ${#files[@]} files do not follow .clang-format:" >&2
  printf '  %s\n' "${bad[@]:0:20}" >&2
  [ ${#bad[@]} -gt 20 ] && echo "  ... and $((${#bad[@]} - 20)) more" >&2
  echo "  'bash tests/format.sh --fix' lays them out" >&2
  exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
