#!/usr/bin/env bash
# The engine's stage libraries link only downwards (ARCHITECTURE.md): no symbol a stage needs
# may be defined only by a stage above it.  Reads the archives in order from the build's
# generated/stages.txt and checks every undefined symbol of each against the ones above.
set -u
stages="$(dirname "$ROOFTUNE_BIN")/generated/stages.txt"
[ -f "$stages" ] || { echo "no $stages: build rooftune first"; exit 1; }
mapfile -t libs <"$stages"
bad=0
for ((i = 0; i < ${#libs[@]}; i++)); do
  lib=${libs[$i]}
  [ -n "$lib" ] || continue
  [ -f "$lib" ] || { echo "missing stage library $lib"; exit 1; }
  for ((j = i + 1; j < ${#libs[@]}; j++)); do
    up=${libs[$j]}
    [ -n "$up" ] || continue
    # symbols lib needs and up defines
    hits=$(comm -12 <(nm -u --no-sort "$lib" 2>/dev/null | awk '{print $NF}' | sort -u) \
                    <(nm --defined-only -g "$up" 2>/dev/null | awk 'NF==3{print $3}' | sort -u))
    if [ -n "$hits" ]; then
      echo "$(basename "$lib") needs symbols of the higher stage $(basename "$up"):" $hits
      bad=1
    fi
  done
done
[ $bad = 0 ] && echo "ok: ${#libs[@]} stages, every edge points down"
exit $bad
