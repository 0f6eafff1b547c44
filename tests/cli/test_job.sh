#!/usr/bin/env bash
# `rooftune job` end to end on the model device:
#  - a job of 8 problems (gemm, a template, attention, a declared family) runs, reruns
#    incrementally (0 evaluated, every problem fresh), tunes only a problem added to the file,
#    writes summary.json and report.html; `job status` (text and JSON);
#  - a changed template makes its problem stale and retuned; a winner made to look faster than
#    it is is rechecked SLOWER (exit 3) and shown as a regression by status and the report;
#  - the time budget stops a run cleanly and the next run resumes: every problem ends with its
#    budget of distinct configurations, none evaluated twice;
#  - a run killed with SIGKILL leaves its run "running"; status says interrupted; the next run
#    marks it interrupted and finishes the round;
#  - 4 shards own disjoint quarters that cover the job; merged (in either order, twice) their
#    winners equal an unsharded run's; two devices in parallel give the same; a split problem's
#    candidates are partitioned over two shards;
#  - bad job files and flags: one line naming file, field and line, exit 2.
set -u
bin=${ROOFTUNE_BIN:?}
src=${ROOFTUNE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
check_rc() { [ "$2" = "$3" ] || die "$1: exit $3, expected $2"; }
jq() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }
sq() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$@"; }

# a template of our own (a copy of transpose_tiled under another name), to change later
mkdir -p "$tmp/my"
sed 's/"name": "transpose_tiled"/"name": "transpose_x"/; s/"source": "transpose_tiled.cu"/"source": "transpose_x.cu"/' \
  "$src/templates/transpose/transpose_tiled.json" >"$tmp/my/transpose_x.json"
sed 's/transpose_tiled/transpose_x/g' "$src/templates/transpose/transpose_tiled.cu" >"$tmp/my/transpose_x.cu"
sed -i 's/"entry": "transpose_tiled"/"entry": "transpose_x"/' "$tmp/my/transpose_x.json"

problems='
    {"target": "gemm", "shape": "128x128x128"},
    {"target": "gemm", "shape": "64x256x128:nt"},
    {"target": "gemm", "shape": "256x128x64"},
    {"target": "gemm_simt", "shape": "96x96x96"},
    {"target": "gemm_mma", "shape": "256x256x256", "dtype": "f16", "strategy": "random"},
    {"target": "attention", "shape": "1x8x256x64", "dtype": "bf16"},
    {"target": "transpose_x", "shape": "256x512"},
    {"target": "softmax", "shape": "64x1024"}'
cat >"$tmp/a.json" <<EOF
{
  "rooftune_job": 1,
  "name": "a",
  "database": "a.db",
  "device": "model:h200",
  "templates": ["my"],
  "defaults": {"dtype": "f32", "budget": 2, "seed": 1},
  "recheck": {"every": "1h"},
  "problems": [$problems
  ]
}
EOF
"$bin" job run "$tmp/a.json" >"$tmp/run1" 2>&1; check_rc "first run" 0 $?
[ "$(grep -c '^\[[1-8]/8\] .*: tuned (never tuned): 2 evaluated' "$tmp/run1")" = 8 ] || die "first run lines: $(cat "$tmp/run1")"
grep -q "^job a on model:h200: 8 tuned (16 evaluated), 0 fresh, 0 failed, 0 left, 0 regressions" "$tmp/run1" ||
  die "first run summary: $(tail -4 "$tmp/run1")"
[ -s "$tmp/a-out/report.html" ] && [ -s "$tmp/a-out/summary.json" ] || die "no report or summary in a-out"
jq "$tmp/a-out/summary.json" 'assert d["evaluated"] == 16 and d["complete"] and len(d["problems"]) == 8, d' || die "summary.json"
[ "$(sq "$tmp/a.db" "SELECT count(*) FROM runs WHERE status != 'done'")" = 0 ] || die "a run not done"

# the rerun: nothing new, every problem fresh, one line each; JSON
"$bin" job run "$tmp/a.json" --json >"$tmp/run2.json" 2>"$tmp/run2.err"; check_rc "rerun" 0 $?
jq "$tmp/run2.json" '
assert d["evaluated"] == 0 and d["fresh"] == 8 and d["tuned"] == 0, d
assert all(p["action"] == "fresh" and p["state"] == "fresh" and p["best"]["time_ms"] > 0 and p["rechecks"] == [] for p in d["problems"]), d
assert all(p["best"]["timing"] == "predicted" for p in d["problems"])' || die "rerun JSON: $(cat "$tmp/run2.json")"
[ "$(grep -c ': fresh (tuned ' "$tmp/run2.err")" = 8 ] || die "rerun lines: $(cat "$tmp/run2.err")"
out=$("$bin" job status "$tmp/a.json"); check_rc "status" 0 $?
[ "$(echo "$out" | grep -c ' fresh ')" = 8 ] || die "status: $out"
"$bin" job status "$tmp/a.json" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["gpu"] == "model:h200" and len(d["problems"]) == 8, d
assert all(p["state"] == "fresh" and p["best"]["template"] and p["age_s"] >= 0 for p in d["problems"]), d' ||
  die "status --json"

# one problem more in the file: only it is tuned
sed -i 's|{"target": "softmax", "shape": "64x1024"}|{"target": "softmax", "shape": "64x1024"},\n    {"target": "gemm", "shape": "32x32x32"}|' "$tmp/a.json"
"$bin" job run "$tmp/a.json" --json >"$tmp/run3.json" 2>/dev/null; check_rc "run with a new problem" 0 $?
jq "$tmp/run3.json" 'assert d["evaluated"] == 2 and d["tuned"] == 1 and d["fresh"] == 8, d' || die "new problem: $(cat "$tmp/run3.json")"

# the report: one roofline per problem, one point per candidate with a FLOP count
python3 - "$tmp/a-out/report.html" "$tmp/a.db" <<'PY' || die "report"
import re, sqlite3, sys
html = open(sys.argv[1]).read()
c = sqlite3.connect(sys.argv[2])
want = c.execute("SELECT count(*) FROM (SELECT DISTINCT p.id, r.device_id, r.template_id, r.toolkit, r.config FROM results r "
                 "JOIN problems p ON p.id=r.problem_id WHERE r.status='OK' AND r.flops > 0)").fetchone()[0]
assert len(re.findall(r'<svg class="roofline"', html)) == 9, "sections"
assert len(re.findall(r'class="pt ', html)) == want, (len(re.findall(r'class="pt ', html)), want)
assert "<script" not in html
print("report: 9 rooflines, %d points" % want)
PY

# a changed template: its problem is stale and retuned, the others stay fresh
echo "// changed" >>"$tmp/my/transpose_x.cu"
"$bin" job status "$tmp/a.json" | grep -q "stale .*template transpose_x changed since its winner was tuned" ||
  die "status after the template edit: $("$bin" job status "$tmp/a.json")"
"$bin" job run "$tmp/a.json" --json >"$tmp/run4.json" 2>/dev/null; check_rc "run after the template edit" 0 $?
jq "$tmp/run4.json" '
t = [p for p in d["problems"] if p["target"] == "transpose_x"][0]
assert t["state"] == "stale" and t["action"] == "tuned" and t["evaluated"] == 2, t
assert d["tuned"] == 1 and d["fresh"] == 8, d' || die "retune after the template edit: $(cat "$tmp/run4.json")"

# a regression: a winner made to look 3x faster than it is, rechecked at every run
sed -i 's/"recheck": {"every": "1h"}/"recheck": {"every": "0", "tolerance": 5}/' "$tmp/a.json"
python3 - "$tmp/a.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE results SET time_ms = time_ms / 3 WHERE id = (SELECT w.result_id FROM winners w JOIN problems p "
          "ON p.id=w.problem_id JOIN templates t ON t.id=w.template_id WHERE p.shape='96x96x96' AND t.name='gemm_simt')")
c.commit()
PY
"$bin" job run "$tmp/a.json" >"$tmp/run5" 2>&1; check_rc "a regression night" 3 $?
grep -q "gemm_simt 96x96x96 f32: fresh .*recheck gemm_simt SLOWER .* REGRESSION" "$tmp/run5" || die "regression line: $(cat "$tmp/run5")"
grep -q " 1 regression in" "$tmp/run5" || die "regression count: $(tail -3 "$tmp/run5")"
n_same=$(grep -o 'recheck [a-z_]* same' "$tmp/run5" | wc -l); n_all=$(grep -o 'recheck [a-z_]* [A-Za-z]*' "$tmp/run5" | wc -l)
[ "$n_all" -ge 10 ] && [ "$n_same" = $((n_all - 1)) ] || die "the other winners are not 'same' ($n_same of $n_all): $(cat "$tmp/run5")"
grep -q "transpose_x 256x512 f32: fresh" "$tmp/run5" || die "the retuned template's problem is not fresh again: $(cat "$tmp/run5")"
"$bin" job status "$tmp/a.json" | grep -q "96x96x96 .*REGRESSION (SLOWER)" || die "status shows no regression"
grep -q '1 regression</span>' "$tmp/a-out/report.html" || die "the report does not show the regression"
"$bin" db check --db "$tmp/a.db" >/dev/null || die "db check after the job runs"

# the time budget stops a run cleanly; the next run resumes (cold compiles: a cache of its own)
cat >"$tmp/t.json" <<'EOF'
{
  "rooftune_job": 1, "name": "t", "database": "t.db", "device": "model:h200", "time_budget": "1s",
  "defaults": {"dtype": "bf16", "budget": 3},
  "problems": [
    {"target": "attention", "shape": "1x8x512x64"},
    {"target": "attention", "shape": "2x8x256x128"},
    {"target": "attention", "shape": "1x16:8x128x64"}
  ]
}
EOF
export ROOFTUNE_CACHE_DIR_SAVE=${ROOFTUNE_CACHE_DIR:-}
ROOFTUNE_CACHE_DIR=$tmp/cold "$bin" job run "$tmp/t.json" --json >"$tmp/t1.json" 2>"$tmp/t1.err"; check_rc "run cut by the time budget" 0 $?
jq "$tmp/t1.json" '
assert d["complete"] is False and d["stopped"] == "time budget", d
assert d["left"] >= 1, d
assert any(p["action"] in ("interrupted", "left") for p in d["problems"]), d' || die "time budget: $(cat "$tmp/t1.json")"
"$bin" job status "$tmp/t.json" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert any(p["state"] in ("interrupted", "never tuned") for p in d["problems"]), d' || die "status after the time budget"
sed -i 's/"time_budget": "1s",//' "$tmp/t.json"
ROOFTUNE_CACHE_DIR=$tmp/cold "$bin" job run "$tmp/t.json" --json >"$tmp/t2.json" 2>/dev/null; check_rc "the resuming run" 0 $?
jq "$tmp/t2.json" 'assert d["complete"] and d["left"] == 0 and d["failed"] == 0, d' || die "resume: $(cat "$tmp/t2.json")"
python3 - "$tmp/t.db" <<'PY' || die "after resuming, every problem has its 3 configurations once"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("SELECT p.shape, count(*), count(DISTINCT r.config) FROM results r JOIN problems p ON p.id=r.problem_id "
                 "GROUP BY p.id").fetchall()
assert len(rows) == 3 and all(n == 3 and k == 3 for _, n, k in rows), rows
assert c.execute("SELECT count(*) FROM runs WHERE status='running'").fetchone()[0] == 0
print("time budget: stopped, resumed, 3 x 3 configurations, none twice")
PY
"$bin" job run "$tmp/t.json" --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["evaluated"]==0 and d["fresh"]==3, d' ||
  die "the resumed job is not fresh"

# a killed run: SIGKILL while it tunes; status says interrupted; the next run marks and resumes
cat >"$tmp/k.json" <<'EOF'
{"rooftune_job": 1, "name": "k", "database": "k.db", "device": "model:h200",
 "problems": [{"target": "attention", "shape": "1x8x384x64", "dtype": "bf16", "budget": 3},
              {"target": "attention", "shape": "1x4x128x128", "dtype": "bf16", "budget": 2}]}
EOF
ROOFTUNE_CACHE_DIR=$tmp/cold2 setsid "$bin" job run "$tmp/k.json" >"$tmp/k1" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [ -f "$tmp/k.db" ] && [ "$(sq "$tmp/k.db" "SELECT count(*) FROM runs WHERE status='running'" 2>/dev/null)" = 1 ] && break
  sleep 0.1
done
kill -KILL -- -"$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ "$(sq "$tmp/k.db" "SELECT count(*) FROM runs WHERE status='running'")" = 1 ] || die "the killed run is not left running"
"$bin" job status "$tmp/k.json" | grep -q "1x8x384x64 .* interrupted " || die "status after the kill: $("$bin" job status "$tmp/k.json")"
ROOFTUNE_CACHE_DIR=$tmp/cold2 "$bin" job run "$tmp/k.json" >"$tmp/k2" 2>&1; check_rc "the run after the kill" 0 $?
grep -q "^note: 1 run of a killed k process marked interrupted" "$tmp/k2" || die "no note about the killed run: $(cat "$tmp/k2")"
grep -q "1x8x384x64 bf16: resumed (interrupted" "$tmp/k2" || die "not resumed: $(cat "$tmp/k2")"
[ "$(sq "$tmp/k.db" "SELECT count(*) FROM runs WHERE status='running'")" = 0 ] || die "a run is still running"
[ "$(sq "$tmp/k.db" "SELECT count(*) FROM runs WHERE status='interrupted'")" = 1 ] || die "the killed run is not interrupted"
[ "$(sq "$tmp/k.db" "SELECT count(DISTINCT config) FROM results r JOIN problems p ON p.id=r.problem_id WHERE p.shape LIKE '1x8x384x64%'")" = 3 ] ||
  die "the killed problem's round did not end with 3 configurations"
"$bin" db check --db "$tmp/k.db" >/dev/null || die "db check after the kill"

# shards: 4 disjoint quarters, merged equal to one run; two devices in parallel equal too
mk() { # NAME EXTRA: a job of 6 small problems
  cat >"$tmp/$1.json" <<EOF
{"rooftune_job": 1, "name": "$1", "database": "$1.db", "device": "model:h200", $2
 "defaults": {"dtype": "f32", "budget": 2, "seed": 5},
 "problems": [$(echo "$problems" | sed -n 2,4p) {"target": "gemm", "shape": "32x64x128"},
   {"target": "gemm", "shape": "48x48x48"}, {"target": "gemm", "shape": "160x32x64:nt"}]}
EOF
}
mk one ""
mk sh '"shard_database": "shards/{name}-{i}-of-{n}.db",'
mk par '"device": ["model:h200", "model:h200"], "output": "par-out", "shard_database": "pshards/{i}.db",'
sed -i 's/"device": "model:h200", "device"/"device"/' "$tmp/par.json"
"$bin" job run "$tmp/one.json" >/dev/null 2>&1; check_rc "unsharded" 0 $?
for i in 0 1 2 3; do "$bin" job run "$tmp/sh.json" --shard $i/4 --json >"$tmp/sh$i.json" 2>/dev/null & done
wait
for i in 0 1 2 3; do [ -s "$tmp/sh$i.json" ] || die "shard $i wrote no summary"; done
"$bin" job merge --job "$tmp/sh.json" >"$tmp/merge1" 2>&1; check_rc "merge --job" 0 $?
grep -q "^merged 4 databases into $tmp/sh.db" "$tmp/merge1" || die "merge: $(cat "$tmp/merge1")"
[ -s "$tmp/sh-out/report.html" ] || die "merge --job wrote no report"
# the output folder is made before merging (it failed after merging when missing), and one that
# cannot be made is refused before the database is touched
rm -rf "$tmp/sh-out"
"$bin" job merge --job "$tmp/sh.json" >"$tmp/merge1" 2>&1; check_rc "merge --job, no output folder" 0 $?
[ -s "$tmp/sh-out/report.html" ] || die "merge --job without its output folder: $(cat "$tmp/merge1")"
: >"$tmp/blocker"
sed 's|"database": "sh.db"|"database": "blocked.db", "output": "blocker/out"|' "$tmp/sh.json" >"$tmp/blocked.json"
"$bin" job merge --job "$tmp/blocked.json" >"$tmp/merge1" 2>&1; check_rc "merge --job, output under a file" 1 $?
grep -q "blocker" "$tmp/merge1" || die "merge --job, output under a file: $(cat "$tmp/merge1")"
[ -e "$tmp/blocked.db" ] && die "merge --job merged before finding its output folder unusable"
# a damaged row of a shard is named by the shard's file and row, not blamed on the database
# merged into (and nothing is merged)
cp "$tmp/shards/sh-0-of-4.db" "$tmp/damaged.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA ignore_check_constraints=ON"); c.execute("UPDATE results SET verified=7 WHERE id=(SELECT min(id) FROM results)"); c.commit()' "$tmp/damaged.db"
"$bin" job merge "$tmp/into.db" "$tmp/damaged.db" >"$tmp/merge1" 2>&1; check_rc "merge of a damaged shard" 1 $?
grep -q "damaged.db: results row [0-9]*: CHECK constraint failed: verified IN (0,1)" "$tmp/merge1" ||
  die "merge of a damaged shard: $(cat "$tmp/merge1")"
"$bin" job merge "$tmp/rev.db" "$tmp"/shards/sh-3-of-4.db "$tmp"/shards/sh-2-of-4.db "$tmp"/shards/sh-1-of-4.db \
  "$tmp"/shards/sh-0-of-4.db >/dev/null; check_rc "merge in reverse" 0 $?
"$bin" job merge "$tmp/rev.db" "$tmp"/shards/sh-*-of-4.db >"$tmp/merge2"; check_rc "merge again" 0 $?
grep -q ": 0 new results" "$tmp/merge2" || die "a second merge added results: $(cat "$tmp/merge2")"
# shards writing one database at once (one host): the same again
mk shared ""
for i in 0 1; do "$bin" job run "$tmp/shared.json" --shard $i/2 >/dev/null 2>&1 & done
wait
"$bin" job run "$tmp/par.json" >"$tmp/par1" 2>&1; check_rc "two devices in parallel" 0 $?
grep -q "^model:h200 \[1/3\]" "$tmp/par1" || die "parallel lines: $(cat "$tmp/par1")"
[ ! -e "$tmp/pshards" ] || die "the processes of one node wrote shard databases: $(ls "$tmp/pshards")"
python3 - "$tmp" <<'PY' || die "shards"
import json, sqlite3, sys
t = sys.argv[1]
def winners(p):
    c = sqlite3.connect(p)
    return sorted(c.execute("SELECT p.shape, t.name, r.config, r.time_ms FROM winners w JOIN results r ON r.id=w.result_id "
                            "JOIN problems p ON p.id=w.problem_id JOIN templates t ON t.id=w.template_id").fetchall())
one = winners(t + "/one.db")
assert len(one) >= 6, one
for other in ("sh.db", "rev.db", "par.db", "shared.db"):
    assert winners(t + "/" + other) == one, (other, winners(t + "/" + other), one)
owned = [set(p["shape"] for p in json.load(open("%s/sh%d.json" % (t, i)))["problems"]) for i in range(4)]
assert sum(len(o) for o in owned) == 6 and len(set().union(*owned)) == 6, owned
print("shards: 4 disjoint quarters", [len(o) for o in owned], "; merged winners equal one run's (%d), in both orders and in parallel" % len(one))
PY

# a split problem: one problem's candidates over two shards, brute force over its space
cat >"$tmp/sp.json" <<'EOF'
{"rooftune_job": 1, "name": "sp", "database": "sp.db", "device": "model:h200",
 "problems": [{"target": "transpose_tiled", "shape": "512x256", "dtype": "f32", "budget": 100, "strategy": "brute_force"}]}
EOF
"$bin" job run "$tmp/sp.json" --db "$tmp/sp1.db" >/dev/null 2>&1; check_rc "split problem unsharded" 0 $?
"$bin" job run "$tmp/sp.json" --shard 0/2 --db "$tmp/sp2.db" >/dev/null 2>&1; check_rc "split shard 0" 0 $?
"$bin" job run "$tmp/sp.json" --shard 1/2 --db "$tmp/sp3.db" >/dev/null 2>&1; check_rc "split shard 1" 0 $?
"$bin" job merge "$tmp/spm.db" "$tmp/sp2.db" "$tmp/sp3.db" >/dev/null; check_rc "split merge" 0 $?
python3 - "$tmp" <<'PY' || die "split problem"
import sqlite3, sys
t = sys.argv[1]
cfg = lambda p: [r[0] for r in sqlite3.connect(p).execute("SELECT config FROM results")]
a, b, whole = cfg(t + "/sp2.db"), cfg(t + "/sp3.db"), cfg(t + "/sp1.db")
assert a and b and not set(a) & set(b), "the shards overlap"
assert sorted(a + b) == sorted(whole), (len(a), len(b), len(whole))
best = lambda p: sqlite3.connect(p).execute("SELECT min(r.time_ms) FROM winners w JOIN results r ON r.id=w.result_id").fetchone()[0]
assert best(t + "/spm.db") == best(t + "/sp1.db")
print("split problem: %d + %d of %d configurations, the same best time" % (len(a), len(b), len(whole)))
PY

# bad input: one line naming the file, the field and the line; exit 2
printf '{\n  "rooftune_job": 1,\n  "problems": [\n    {"target": "gemm", "shape": "64x64x64", "dtype": "f99"}\n  ]\n}\n' >"$tmp/bad.json"
o=$("$bin" job run "$tmp/bad.json" 2>&1); check_rc "bad dtype" 2 $?
case "$o" in "rooftune job: $tmp/bad.json: problems[0].dtype: line 4: "*) ;; *) die "bad dtype message: $o" ;; esac
[ "$(echo "$o" | wc -l)" = 1 ] || die "more than one line: $o"
o=$("$bin" job run "$tmp/none.json" 2>&1); check_rc "missing job file" 1 $?
case "$o" in *"$tmp/none.json"*) ;; *) die "missing file message: $o" ;; esac
o=$("$bin" job run "$tmp/a.json" --shard 4/4 2>&1); check_rc "bad --shard" 2 $?
case "$o" in *"--shard: '4/4' is not a shard"*) ;; *) die "bad --shard message: $o" ;; esac
if command -v flock >/dev/null; then # a second process of the same job and shard is refused
  o=$(flock "$tmp/a-out/.lock-a-shard-0-of-1" "$bin" job run "$tmp/a.json" 2>&1); check_rc "the same shard twice" 1 $?
  case "$o" in *"job a shard 0/1 is already running"*) ;; *) die "second process: $o" ;; esac
fi
o=$("$bin" job 2>&1); check_rc "no verb" 2 $?
o=$("$bin" job frobnicate x 2>&1); check_rc "unknown verb" 2 $?
o=$("$bin" job merge "$tmp/x.db" 2>&1); check_rc "merge without shards" 2 $?
o=$("$bin" job merge --job "$tmp/a.json" 2>&1); check_rc "merge --job without shard_database" 1 $?
case "$o" in *"shard_database"*) ;; *) die "merge --job message: $o" ;; esac
o=$("$bin" report -o "$tmp/r.html" --db "$tmp/none.db" 2>&1); check_rc "report of a missing database" 1 $?
"$bin" report --db "$tmp/a.db" --job "$tmp/a.json" -o "$tmp/r.html" >"$tmp/rep" 2>&1; check_rc "report --job" 0 $?
grep -q "^wrote $tmp/r.html: 9 problems," "$tmp/rep" || die "report: $(cat "$tmp/rep")"

[ $fail = 0 ] && echo "job: incremental, stale, regression, time budget, kill, shards, split, merge and errors ok"
exit $fail
