#!/usr/bin/env bash
# 4 concurrent `rooftune tune` processes x 5 repeats, each repeat on a fresh database: two of
# them tune one problem, two another (identical and different problems at once).  Every
# repeat: all 4 exit 0, none sees "database is locked", every candidate a tuner evaluated is
# stored (0 lost), no candidate of a problem is evaluated twice (0 duplicated: the second tuner
# of a problem waits for the first one's claimed candidates and takes their results), every
# tuner evaluates its whole budget of new candidates (--budget counts new evaluations; what the
# other tuner stored is told, not counted), and `db check` passes.  Prints the figures
# the README's reliability section quotes.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
REPEATS=${ROOFTUNE_REPEATS:-5}
B=24
p1=(gemm_simt --shape 256x256x256 --dtype f32 --device model:h200 --strategy random --budget $B)
p2=(gemm_simt --shape 128x256x512 --dtype f32 --device model:h200 --strategy random --budget $B)
# the compiles first (the cubin cache), so the tuners race on the database, not on NVRTC
"$bin" tune "${p1[@]}" --db "$tmp/warm.db" >/dev/null 2>&1 && "$bin" tune "${p2[@]}" --db "$tmp/warm.db" >/dev/null 2>&1 \
  || { echo "FAIL: warm-up"; exit 1; }

tot_ev=0 tot_lost=0 tot_dup=0 tot_locked=0 tot_stored=0
for r in $(seq "$REPEATS"); do
  db="$tmp/r$r.db"
  pids=()
  for w in 1 2 3 4; do
    if [ $w -le 2 ]; then args=("${p1[@]}"); else args=("${p2[@]}"); fi
    "$bin" tune "${args[@]}" --db "$db" --json >"$tmp/w$w.json" 2>"$tmp/w$w.err" &
    pids+=($!)
  done
  for w in 1 2 3 4; do
    wait "${pids[$((w - 1))]}" || die "repeat $r: writer $w exited $?: $(tail -2 "$tmp/w$w.err")"
  done
  locked=$(grep -ci "locked" "$tmp"/w?.err | awk -F: '{s += $NF} END {print s + 0}')
  tot_locked=$((tot_locked + locked))
  read -r ev lost dup stored bad <<<"$(python3 - "$db" "$tmp" $B <<'PY'
import json, sqlite3, sys
db, tmp, budget = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = sqlite3.connect(db)
reps = [json.load(open(f"{tmp}/w{w}.json")) for w in (1, 2, 3, 4)]
ev = lost = dup = stored = bad = 0
for shape, writers in (("256x256x256", (0, 1)), ("128x256x512", (2, 3))):
    rows, keys = c.execute(
        "select count(*), count(distinct r.code_hash) from results r join problems p on p.id=r.problem_id "
        "where p.shape=?", (shape,)).fetchone()
    evaluated = sum(reps[w]["evaluated"] for w in writers)
    ev += evaluated
    stored += rows
    lost += max(0, evaluated - rows)   # evaluated but not in the database
    dup += rows - keys                 # one candidate stored twice: evaluated twice
    for w in writers:                  # each tuner evaluates its whole budget of new candidates
        if reps[w]["evaluated"] != budget: bad += 1
print(ev, lost, dup, stored, bad)
PY
)"
  tot_ev=$((tot_ev + ev)); tot_lost=$((tot_lost + lost)); tot_dup=$((tot_dup + dup)); tot_stored=$((tot_stored + stored))
  [ "$bad" = 0 ] || die "repeat $r: $bad tuners did not reach their budget"
  "$bin" db check --db "$db" >"$tmp/check" 2>&1 || die "repeat $r: db check: $(tail -3 "$tmp/check")"
done
[ $tot_lost = 0 ] || die "$tot_lost evaluated candidates are not in the database"
[ $tot_dup = 0 ] || die "$tot_dup candidates were evaluated twice"
[ $tot_locked = 0 ] || die "$tot_locked 'database is locked' messages"
echo "4 concurrent tuners x $REPEATS repeats (2 problems, 2 tuners each, budget $B): $tot_ev evaluations," \
     "$tot_stored results stored, $tot_lost lost, $tot_locked locked, $tot_dup duplicated evaluations; db check ok"
exit $fail
