#!/usr/bin/env bash
# nightly.sh — re-measure last night's winners and flag regressions, retune a list of problems
# into one tuning database, check it, and publish the tuned configurations as a C header; meant
# for cron, a systemd timer or a Slurm job on a GPU node (samples beside this file).
#
#   nightly.sh SHAPES_FILE [DB [OUT_DIR]]
#
# SHAPES_FILE has one problem per line, "FAMILY SHAPE DTYPE [BUDGET]", e.g.
#   gemm 4096x4096x4096 bf16 64
#   gemm 16x4096x14336:nt bf16
# Lines starting with # are ignored.  Each tune resumes where an interrupted one stopped (the
# database skips configurations it already holds), so a night cut short loses nothing.  Before
# tuning, `rooftune recheck` re-measures every winner already stored for this device and writes
# its table to OUT_DIR/recheck.txt: a winner now slower than its stored time (beyond the
# tolerance and the measurements' spreads) or failing is a regression.  Exit status: 1 when a
# problem failed to tune, the recheck could not run or the database does not check out; else
# 3 when the recheck flagged a regression; else 0.  Environment:
# ROOFTUNE (the command, default `rooftune`), ROOFTUNE_DEVICE (default: rooftune's own choice:
# the GPU, else the model device, whose times are predictions).
set -u
shapes=${1:?usage: nightly.sh SHAPES_FILE [DB [OUT_DIR]]}
db=${2:-${ROOFTUNE_DB:-${XDG_DATA_HOME:-$HOME/.local/share}/rooftune/tuning.db}}
out=${3:-$(dirname "$db")}
rt=${ROOFTUNE:-rooftune}
mkdir -p "$(dirname "$db")" "$out"
status=0
regression=0
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if [ -f "$db" ]; then
  dev=()
  [ -n "${ROOFTUNE_DEVICE:-}" ] && dev=(--device "$ROOFTUNE_DEVICE")
  "$rt" recheck --db "$db" "${dev[@]}" >"$out/recheck.txt"
  case $? in
    0) echo "recheck: no winner got slower (see $out/recheck.txt)" ;;
    3) echo "REGRESSION: a stored winner got slower or broke (see $out/recheck.txt)"; regression=1 ;;
    *) echo "FAILED  recheck (see $out/recheck.txt)"; status=1 ;;
  esac
fi
echo "nightly $stamp: tuning the problems of $shapes into $db"
while read -r family shape dtype budget rest; do
  case "$family" in ''|'#'*) continue ;; esac
  args=("$family" --shape "$shape" --dtype "$dtype" --db "$db" --budget "${budget:-32}")
  [ -n "${ROOFTUNE_DEVICE:-}" ] && args+=(--device "$ROOFTUNE_DEVICE")
  if "$rt" tune "${args[@]}" --json >"$out/last-$family-$shape-$dtype.json"; then
    echo "ok      $family $shape $dtype"
  else
    echo "FAILED  $family $shape $dtype (see $out/last-$family-$shape-$dtype.json)"; status=1
  fi
done <"$shapes"
"$rt" db check --db "$db" || status=1
"$rt" db export --db "$db" --format header -o "$out/rooftune_tuned.h.tmp" &&
  mv "$out/rooftune_tuned.h.tmp" "$out/rooftune_tuned.h" || status=1
"$rt" db list --db "$db"
[ $status = 0 ] && [ $regression = 1 ] && status=3
exit $status
