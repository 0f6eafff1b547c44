#!/usr/bin/env bash
# Every subcommand answers -h and --help with exit 0 and a usage line (its device kinds filled in
# from the device table); unknown commands and flags exit 2 with one clear line; --version works;
# the README's lists of strategies and of device kinds (with the model device's GPUs) are the
# search and device stages' tables, as the help lists them.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
fail=0
check() { # check DESCRIPTION EXPECTED_RC ACTUAL_RC
  if [ "$2" != "$3" ]; then echo "FAIL: $1: exit $3, expected $2"; fail=1; fi
}
out=$("$bin" --help); check "rooftune --help" 0 $?
cmds=$(printf '%s\n' "$out" | awk '/^commands:/{on=1;next} on && /^  [a-z]/{print $1}')
[ -n "$cmds" ] || { echo "FAIL: --help lists no commands"; exit 1; }
for c in $cmds; do
  for h in -h --help; do
    o=$("$bin" "$c" "$h" 2>&1); rc=$?
    check "rooftune $c $h" 0 $rc
    case "$o" in "usage: rooftune $c"*) ;; *) echo "FAIL: rooftune $c $h: no usage line"; fail=1 ;; esac
    case "$o" in *"{DEVICES"* | *"{STRATEG"*) echo "FAIL: rooftune $c $h: a list's marker left unfilled"; fail=1 ;; esac
  done
  o=$("$bin" "$c" --no-such-flag 2>&1); rc=$?
  check "rooftune $c --no-such-flag" 2 $rc
  case "$o" in *"unknown option '--no-such-flag'"*) ;; *) echo "FAIL: rooftune $c: unclear error: $o"; fail=1 ;; esac
done
# the device kinds in a usage text come from the device stage's table
o=$("$bin" tune --help)
case "$o" in *"--device DEV     cuda | cuda:N | model:GPU (h200"*"| replay:FILE"*) ;;
  *) echo "FAIL: tune --help does not list the device kinds"; fail=1 ;; esac
o=$("$bin" recheck --help)
case "$o" in *"replay:FILE"*) echo "FAIL: recheck --help offers a recorded file"; fail=1 ;; *"model:GPU"*) ;;
  *) echo "FAIL: recheck --help does not list the device kinds"; fail=1 ;; esac
# the strategies too (the search stage's table): replay offers each one tune offers but those a
# recorded space cannot score, which it refuses saying why
tl=$("$bin" tune --help | sed -n 's/.*--strategy NAME *search strategy: //p')
[ -n "$tl" ] || { echo "FAIL: tune --help lists no strategies"; fail=1; }
rh=$("$bin" replay --help)
for st in ${tl//,/ }; do
  case "$rh" in *" $st,"* | *" $st"$'\n'*) continue ;; esac
  o=$("$bin" replay --strategy "$st" x.json 2>&1)
  case "$o" in *"predicted times, which a recorded space does not have"*) ;;
    *) echo "FAIL: replay --help leaves out strategy $st and does not refuse it: $o"; fail=1 ;; esac
done
# and the README's list of them (its "Search strategies and replay" section, a line per strategy)
# is the table's: the same names in the same order, the one it calls the default the help's
src=${ROOFTUNE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
readme=$(awk '/^## /{on = ($0 ~ /^## Search strategies/)} on && /^- `[a-z_0-9]+`/{print; seen=1; next}
              on && seen && /^$/{exit}' "$src/README.md")
rl=$(printf '%s\n' "$readme" | sed -n 's/^- `\([a-z_0-9]*\)`.*/\1/p' | paste -sd, - | sed 's/,/, /g')
if [ "$rl" != "$tl" ]; then
  echo "FAIL: README.md's list of strategies (Search strategies and replay) is not the search" \
       "stage's table: the README lists '$rl', tune --help '$tl'; write a line per strategy there," \
       "in the table's order (search/strategy.c)"
  fail=1
fi
rd=$(printf '%s\n' "$readme" | sed -n 's/^- `\([a-z_0-9]*\)` (the default).*/\1/p')
hd=$("$bin" tune --help | awk '/--strategy NAME/{on=1} on' | sed -n 's/.*(default \([a-z_0-9]*\)[;)].*/\1/p' | head -1)
[ -n "$hd" ] && [ "$rd" = "$hd" ] ||
  { echo "FAIL: README.md's list of strategies calls '$rd' the default, tune --help '$hd'"; fail=1; }
# the README's list of device kinds (its "--device" lines, a line per kind) is the device stage's
# table: the kinds of tune --help's {DEVICES} ("cuda | cuda:N | model:GPU (...) | ..."), each
# named by what its texts start with, in the table's order; the model kind's sub-list of GPUs is
# the spec table's, as the help lists them after model:GPU; the defaults they name are the help's
dl=$("$bin" tune --help | sed -n 's/^  --device DEV *//p' | head -1)
hk=$(printf '%s\n' "$dl" | sed 's/ ([^)]*)//g; s/ | /\n/g' | sed 's/:.*//' | uniq | paste -sd, -)
hg=$(printf '%s\n' "$dl" | sed -n 's/.*model:GPU (\([^)]*\)).*/\1/p' | sed 's/, /,/g')
[ -n "$hk" ] && [ -n "$hg" ] ||
  { echo "FAIL: tune --help lists no device kinds or no GPUs: '$dl'"; fail=1; }
rdev=$(awk '/^## /{on = ($0 ~ /^## Usage/)} on && /^- `--device [a-z]/{print; seen=1; next}
            on && seen && /^  - `/{print; next} on && seen && /^  /{next} on && seen{exit}' \
       "$src/README.md")
rk=$(printf '%s\n' "$rdev" | sed -n 's/^- `--device \([a-z_0-9]*\).*/\1/p' | paste -sd, -)
if [ "$rk" != "$hk" ]; then
  echo "FAIL: README.md's list of device kinds (Usage, its '- \`--device KIND' lines) is not the" \
       "device stage's table: the README lists '$rk', tune --help '$hk'; write a line per kind" \
       "there, in the table's order (tuner/device/device.c)"
  fail=1
fi
rg=$(printf '%s\n' "$rdev" | awk '/^- `--device model:/{on=1; next} /^- /{on=0} on' |
     sed -n 's/^  - `\([a-z0-9_.-]*\)`.*/\1/p' | paste -sd, -)
if [ "$rg" != "$hg" ]; then
  echo "FAIL: README.md's list of the model device's GPUs (under '- \`--device model:GPU') is not" \
       "the spec table's: the README lists '$rg', tune --help '$hg'; write a line per GPU there," \
       "in the table's order (model/gpu_spec.c)"
  fail=1
fi
hdef=$("$bin" tune --help | awk '/^  --device DEV/{on=1; next} on && /^  --/{exit} on' |
       tr -s ' \n' ' ')
rgd=$(printf '%s\n' "$rdev" | sed -n 's/^  - `\([a-z0-9_.-]*\)` (the default without a GPU).*/\1/p')
rkd=$(printf '%s\n' "$rdev" |
      sed -n 's/^- `--device \([a-z_0-9]*\)` (the default when a GPU is present).*/\1/p')
case "$hdef" in *"default: $rkd when a GPU is present, else model:$rgd "*) ;;
  *) echo "FAIL: README.md's list of device kinds calls '$rkd' the default with a GPU and" \
          "model:'$rgd' without one, tune --help:$hdef"; fail=1 ;; esac
o=$("$bin" no-such-command 2>&1); check "unknown command" 2 $?
case "$o" in *"'no-such-command' is not a rooftune command"*) ;; *) echo "FAIL: unclear: $o"; fail=1 ;; esac
o=$("$bin" --no-such-flag 2>&1); check "unknown global flag" 2 $?
o=$("$bin" --version); check "--version" 0 $?
case "$o" in "rooftune "[0-9]*) ;; *) echo "FAIL: --version printed: $o"; fail=1 ;; esac
"$bin" >/dev/null 2>&1; check "no command" 2 $?
[ $fail = 0 ] && echo "all $(echo $cmds | wc -w) commands answer -h, --help and reject unknown flags"
exit $fail
