#!/usr/bin/env bash
# The engine's stage libraries link only downwards (ARCHITECTURE.md): no symbol a stage needs
# may be defined only by a stage above it.  Reads the archives in order from the build's
# generated/stages.txt and checks every undefined symbol of each against the ones above.  Then
# the same for includes, which nm cannot see (a header of constants, a generated one): no source
# of a stage includes a header of a stage above it (the folders in order from
# generated/stage_dirs.txt; runtime/ may include what it links, the stages up to kernels/; cli/
# stands above them all).  Last, that every C test declares the stages it links
# (generated/test_stages.txt).
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
# includes: each stage's folder and rank, lowest 0
src=${ROOFTUNE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dirs="$(dirname "$ROOFTUNE_BIN")/generated/stage_dirs.txt"
[ -f "$dirs" ] || { echo "no $dirs: build rooftune first"; exit 1; }
declare -A rank
r=0
while read -r _ ds; do
  for d in $ds; do rank[$d]=$r; done
  r=$((r + 1))
done <"$dirs"
# the command's folder, which no stage archive holds, stands above them all: a stage that
# includes cli/ knows the command line
rank[cli]=$r
rank_runtime=${rank[kernels]}
nincl=0
for d in "${!rank[@]}" runtime; do
  me=${rank[$d]:-$rank_runtime}
  for f in "$src/$d"/*.c "$src/$d"/*.h; do
    [ -f "$f" ] || continue
    while read -r h; do
      hd=$(dirname "$h")
      [ -n "${rank[$hd]:-}" ] || continue # not a stage (templates/, runtime/, the system)
      nincl=$((nincl + 1))
      if [ "${rank[$hd]}" -gt "$me" ]; then
        echo "${f#"$src"/} includes $h, a header of the higher stage $hd/"
        bad=1
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  done
done
# tests: each C test names the stages it links in a `/* stages: ... */` line (tests/CMakeLists.txt);
# one without it links the whole engine, which hides what it depends on
tests="$(dirname "$ROOFTUNE_BIN")/generated/test_stages.txt"
[ -f "$tests" ] || { echo "no $tests: configure the build first"; exit 1; }
ntests=0 nfewer=0
while read -r t words; do
  ntests=$((ntests + 1))
  case " $words " in
  " - "*)
    echo "${words#- } declares no stages: add a line /* stages: ... */ naming the stages it tests" \
         "(their lower stages come along; ARCHITECTURE.md, Tests), or /* stages: all */ end to end"
    bad=1 ;;
  *" all "* | *" job "*) ;;
  *) nfewer=$((nfewer + 1)) ;;
  esac
done <"$tests"
[ $bad = 0 ] && echo "ok: ${#libs[@]} stages, every edge points down ($nincl includes between stages too);" \
  "$nfewer of $ntests C tests link fewer than all stages"
exit $bad
