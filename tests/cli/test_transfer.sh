#!/usr/bin/env bash
# Transfer by default: a tune seeds each template's search from the database's results of the
# same template and dtype on other devices and at nearby shapes, and says so in one line.
#  - a real database, written by `rooftune tune --device model:h100`; the same problem on
#    model:h200 reports the prior (its count and source), and its first evaluation is the
#    h100's best; a nearby shape on h200 takes both groups;
#  - a replayed result outranks predicted ones: once the database holds one, the predicted are
#    left out and the line says so;
#  - --no-prior: no prior line, JSON prior null; --no-prior with --prior: exit 2, one message;
#    --no-db: no database, no prior line;
#  - --prior DB (an SQLite file named anything) works with --no-db; a damaged file and a
#    foreign SQLite file as --prior are refused, named;
#  - job run: a later problem of the job seeds from the job's earlier shape (its first
#    evaluation is the earlier problem's best); a third shape lists the nearer one first.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
export ROOFTUNE_CACHE_DIR="$tmp/cache"
cd "$tmp" || exit 1
tune() { "$bin" tune gemm_mma --dtype f16 --budget 6 "$@"; }
js() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }

# an empty database: one line saying nothing was found, no error
tune --shape 256x256x256 --device model:h100 --db a.db --json >a.json 2>/dev/null || die "h100 tune failed"
js a.json 'p = d["prior"]; assert p["source"] == "database" and p["results"] == 0 and p["summary"].startswith("none for gemm_mma in the database"), p' ||
  die "empty database: $(cat a.json | head -c 400)"

# the same problem on another device: the h100's 6 results, its best evaluated first
tune --shape 256x256x256 --device model:h200 --db a.db --json >b.json 2>/dev/null || die "h200 tune failed"
js b.json 'p = d["prior"]; assert p["results"] == 6 and "model:h100 at 256x256x256, predicted" in p["summary"], p' ||
  die "h200 prior: $(js b.json 'print(d["prior"])')"
best_a=$(js a.json 'print(",".join("%s=%s" % kv for kv in d["best"]["config"].items()))')
first_b=$(js b.json 'print(d["results"][0]["config"])')
[ "$best_a" = "$first_b" ] || die "the h200 search did not start from the h100's best: $best_a, then $first_b"
out=$(tune --shape 512x256x256 --device model:h200 --db a.db 2>&1) || die "nearby shape failed: $out"
echo "$out" | grep -q "^prior: 12 results of gemm_mma from the database (.*model:h100 at 256x256x256, predicted.*this device at 256x256x256, predicted" ||
  die "nearby shape's prior line: $(echo "$out" | grep prior)"
[ "$(echo "$out" | grep -c '^prior')" = 1 ] || die "more than one prior line: $(echo "$out" | grep prior)"

# a replayed result (the h100's rows exported and replayed): the predicted ones are left out
"$bin" db export --db a.db --device h100 --shape 256x256x256 >e.json || die "export failed"
tune --shape 256x256x256 --device replay:e.json --db a.db >/dev/null 2>&1 || die "replay tune failed"
out=$(tune --shape 1024x256x256 --device model:h200 --db a.db 2>&1) || die "after the replay: $out"
echo "$out" | grep -q "^prior: 6 results of gemm_mma from the database (replay:e.json at 256x256x256, replayed), 18 model-predicted left out" ||
  die "replayed over predicted: $(echo "$out" | grep prior)"

# --no-prior: no line, null in JSON; with --prior: a usage error
out=$(tune --shape 2048x256x256 --device model:h200 --db a.db --no-prior 2>&1) || die "--no-prior failed: $out"
echo "$out" | grep -q "^prior" && die "--no-prior printed a prior line: $(echo "$out" | grep prior)"
tune --shape 2048x512x256 --device model:h200 --db a.db --no-prior --json >n.json 2>/dev/null
js n.json 'assert d["prior"] is None, d["prior"]' || die "--no-prior JSON prior is not null"
out=$(tune --shape 256x256x256 --device model:h200 --no-db --no-prior --prior a.db 2>&1)
rc=$?
[ $rc = 2 ] && [ "$(echo "$out" | grep -c 'no-prior')" = 1 ] || die "--no-prior with --prior: exit $rc, $out"

out=$(tune --shape 256x256x256 --device model:h200 --no-db 2>&1) || die "--no-db failed: $out"
echo "$out" | grep -q "^prior" && die "--no-db (no database to read) printed a prior line: $(echo "$out" | grep prior)"

# --prior DB: by its header, whatever its name
cp a.db results.bin
out=$(tune --shape 256x512x256 --device model:a100 --no-db --prior results.bin 2>&1) || die "--prior DB failed: $out"
echo "$out" | grep -q "^prior: results.bin (.*): gemm_mma [0-9][0-9]* ranked" || die "--prior DB line: $(echo "$out" | grep prior)"
head -c 4096 /dev/urandom >damaged.db
out=$(tune --shape 256x256x256 --device model:h200 --no-db --prior damaged.db 2>&1)
[ $? != 0 ] && echo "$out" | grep -q "damaged.db" || die "a damaged --prior was not refused by name: $out"
python3 -c 'import sqlite3; c = sqlite3.connect("other.sqlite"); c.execute("create table t(x)"); c.commit()'
out=$(tune --shape 256x256x256 --device model:h200 --no-db --prior other.sqlite 2>&1)
[ $? != 0 ] && echo "$out" | grep -q "other.sqlite.*not a rooftune database" || die "a foreign SQLite --prior: $out"

# job run: the second problem seeds from the first's shape in the job's database
cat >job.json <<EOF
{
  "rooftune_job": 1,
  "name": "t",
  "database": "j.db",
  "device": "model:h200",
  "defaults": {"dtype": "f16", "budget": 6, "seed": 1},
  "problems": [
    {"target": "gemm_mma", "shape": "256x256x256"},
    {"target": "gemm_mma", "shape": "512x512x256"}
  ]
}
EOF
"$bin" job run job.json >job.out 2>&1 || die "job run failed: $(cat job.out)"
python3 - j.db <<'EOF' || die "the job's second problem did not start from the first's best"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
def rows(shape):
    return c.execute("SELECT r.config, r.time_ms FROM results r JOIN problems p ON p.id = r.problem_id "
                     "WHERE p.shape = ? ORDER BY r.id", (shape,)).fetchall()
first, second = rows("256x256x256"), rows("512x512x256")
assert first and second, (first, second)
best = min(first, key=lambda r: r[1])[0]
assert second[0][0] == best, (best, second[0][0])
EOF
# nearest first: at 512x512x512 the job's 512x512x256 (distance ln 2) before its 256x256x256
out=$(tune --shape 512x512x512 --device model:h200 --db j.db 2>&1) || die "after the job: $out"
echo "$out" | grep -q "^prior: 12 results of gemm_mma from the database (this device at 512x512x256, predicted; this device at 256x256x256, predicted)" ||
  die "not nearest first: $(echo "$out" | grep prior)"
[ $fail = 0 ] && echo "the database's results elsewhere seed the search, said in one line; --no-prior, --prior DB and bad files as asked; a job's later shape seeds from its earlier one"
exit $fail
