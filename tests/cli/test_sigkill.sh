#!/usr/bin/env bash
# SIGKILL at 20 random points of a model-device tune and of a replay tune, each resumed after
# every kill: after each kill every result committed before it is still there (by uid),
# PRAGMA integrity_check says ok and `rooftune db check` passes; the final, uninterrupted run
# completes the budget and no configuration was evaluated twice (one row per candidate key);
# every killed run ends up "interrupted", none "running".  Prints the figures the README's
# reliability section quotes.
set -u
export LC_ALL=C
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
KILLS=${ROOFTUNE_KILLS:-20}

# runs left 'running' (a kill that landed before the run recorded its end)
running_runs() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute(\"select count(*) from runs where status='running'\").fetchone()[0])" "$1"; }
# uids of the committed results, one per line, sorted
uids() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print('\n'.join(sorted(r[0] for r in c.execute('select uid from results'))))" "$1"; }
integrity() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute('pragma integrity_check').fetchone()[0])" "$1"; }
# rows, distinct candidate keys (code hash, else template and configuration), runs still running
summary() { python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
rows = c.execute("select count(*) from results").fetchone()[0]
keys = c.execute("select count(distinct case when code_hash<>'' then 'h'||code_hash else 'c'||template_id||':'||config end) from results").fetchone()[0]
running = c.execute("select count(*) from runs where status='running'").fetchone()[0]
inter = c.execute("select count(*) from runs where status='interrupted'").fetchone()[0]
print(rows, keys, running, inter)
PY
}

# kill_series NAME DB STEP -- tune args...: KILLS rounds, each resuming the tune and killing it
# with SIGKILL at a random point of work it has not done yet: once its progress has passed
# 1..STEP candidates beyond those already stored, after a further random 0-40 ms (so the kill
# lands anywhere: in a compile, an evaluation, a transaction, a commit)
kill_series() {
  local name=$1 db=$2 step=$3; shift 4
  local lost=0 checked=0 mid=0 cut=0
  for k in $(seq "$KILLS"); do
    uids "$db" >"$tmp/before" 2>/dev/null || : >"$tmp/before"
    local stored target
    stored=$(wc -l <"$tmp/before")
    target=$((stored + 1 + RANDOM % step))
    : >"$tmp/progress"
    "$bin" tune "$@" --db "$db" >/dev/null 2>"$tmp/progress" &
    local pid=$!
    while kill -0 $pid 2>/dev/null && [ "$(grep -c '^\[' "$tmp/progress")" -lt "$target" ]; do sleep 0.005; done
    sleep "0.0$((RANDOM % 40))"
    if kill -9 $pid 2>/dev/null; then mid=$((mid + 1)); fi
    wait $pid 2>/dev/null
    [ -f "$db" ] || continue
    # a kill can land after the run recorded its end (while the process exits): not an interrupted run
    [ "$(running_runs "$db")" -gt 0 ] && cut=$((cut + 1))
    uids "$db" >"$tmp/after"
    n=$(comm -23 "$tmp/before" "$tmp/after" | wc -l)
    lost=$((lost + n))
    checked=$((checked + stored))
    [ "$(integrity "$db")" = ok ] || die "$name: integrity_check after kill $k: $(integrity "$db")"
    "$bin" db check --db "$db" >"$tmp/check" 2>&1 || die "$name: db check after kill $k: $(tail -3 "$tmp/check")"
  done
  [ $lost = 0 ] || die "$name: $lost committed results lost"
  [ $mid = "$KILLS" ] || die "$name: only $mid of $KILLS kills found the tuner still running (budget too small)"
  # the uninterrupted resume
  "$bin" tune "$@" --db "$db" --json >"$tmp/final.json" 2>"$tmp/err" || die "$name: the resumed run failed: $(tail -3 "$tmp/err")"
  read -r rows keys running inter <<<"$(summary "$db")"
  read -r ev res <<<"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['evaluated'], d['resumed'])" "$tmp/final.json")"
  dup=$((rows - keys))
  [ $dup = 0 ] || die "$name: $dup configurations evaluated twice ($rows rows, $keys candidates)"
  [ "$running" = 0 ] || die "$name: $running runs still 'running' after the resume"
  [ "$inter" -ge "$cut" ] || die "$name: $inter runs marked interrupted, expected the $cut kills that cut a run short"
  [ $((2 * cut)) -ge "$KILLS" ] || die "$name: only $cut of $KILLS kills cut a run short (the kills came too late)"
  echo "$name: $KILLS kills at random points of the work: $lost of $checked committed results lost," \
       "$dup re-evaluated ($rows results, $keys candidates; the resume evaluated $ev and took $res" \
       "from the database; $cut kills cut a run short, $inter runs marked interrupted); integrity_check" \
       "and db check ok after every kill"
}

# --- a model-device tune (every candidate a compile through the cubin cache) ---
# a cubin cache of its own, cold: every new candidate is a compile, as on a first run
export ROOFTUNE_CACHE_DIR="$tmp/cache"
model=(gemm_simt --shape 256x256x256 --dtype f32 --device model:h200 --strategy random --budget 48)
kill_series model "$tmp/model.db" 2 -- "${model[@]}"

# --- a replay tune of a recorded space (every candidate one stored row) ---
python3 "$(dirname "$0")/space_fixture.py" "$tmp/space.json"
replay=(synthetic --device "replay:$tmp/space.json" --strategy random --budget 1500)
kill_series replay "$tmp/replay.db" 60 -- "${replay[@]}"
exit $fail
