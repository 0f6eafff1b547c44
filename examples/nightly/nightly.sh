#!/usr/bin/env bash
# nightly.sh — retune a list of problems into one tuning database, check it, and publish the
# tuned configurations as a C header; meant for cron, a systemd timer or a Slurm job on a GPU
# node (samples beside this file).
#
#   nightly.sh SHAPES_FILE [DB [OUT_DIR]]
#
# SHAPES_FILE has one problem per line, "FAMILY SHAPE DTYPE [BUDGET]", e.g.
#   gemm 4096x4096x4096 bf16 64
#   gemm 16x4096x14336:nt bf16
# Lines starting with # are ignored.  Each tune resumes where an interrupted one stopped (the
# database skips configurations it already holds), so a night cut short loses nothing.  Exit
# status: 0 when every problem tuned and the database checks out, 1 otherwise.  Environment:
# ROOFTUNE (the command, default `rooftune`), ROOFTUNE_DEVICE (default: rooftune's own choice:
# the GPU, else the model device, whose times are predictions).
set -u
shapes=${1:?usage: nightly.sh SHAPES_FILE [DB [OUT_DIR]]}
db=${2:-${ROOFTUNE_DB:-${XDG_DATA_HOME:-$HOME/.local/share}/rooftune/tuning.db}}
out=${3:-$(dirname "$db")}
rt=${ROOFTUNE:-rooftune}
mkdir -p "$(dirname "$db")" "$out"
status=0
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
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
exit $status
