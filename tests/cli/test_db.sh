#!/usr/bin/env bash
# `rooftune db` and `rooftune lookup` end to end on a database built by importing a small Kernel
# Tuner cache file: import (twice: the second adds nothing), list, show, export as json, csv and a
# C header that compiles (a filter choosing results and winners alike in each, the header with
# verified), merge (twice), check, lookup exact / nearest / none with provenance, and one clear error for bad verbs, missing, damaged and foreign files.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
expect_rc() { # expect_rc WANT DESCRIPTION -- command...
  local want=$1 what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ "$rc" = "$want" ] || die "$what: exit $rc, expected $want: $(cat "$tmp/err")"
}
has() { grep -q -- "$2" "$1" || die "$3: '$2' not in $(head -c 600 "$1")"; }

cat >"$tmp/kt.json" <<'EOF'
{"device_name": "NVIDIA H200", "kernel_name": "gemm_mma", "problem_size": [4096, 4096, 4096],
 "tune_params_keys": ["BLOCK_M", "BLOCK_N"],
 "tune_params": {"BLOCK_M": [64, 128], "BLOCK_N": [64, 128]},
 "objective": "time",
 "cache": {
  "64,64": {"BLOCK_M": 64, "BLOCK_N": 64, "time": 2.0, "times": [2.0, 2.0]},
  "128,64": {"BLOCK_M": 128, "BLOCK_N": 64, "time": 1.5, "times": [1.5, 1.5]},
  "128,128": {"BLOCK_M": 128, "BLOCK_N": 128, "time": "CompilationFailedConfig"}
 }}
EOF
db="$tmp/a.db"
expect_rc 0 "import" -- "$bin" db import "$tmp/kt.json" --db "$db" --family gemm --shape 4096x4096x4096 --dtype bf16
has "$tmp/out" "imported 3 results" "import"
expect_rc 0 "import again" -- "$bin" db import "$tmp/kt.json" --db "$db" --family gemm --shape 4096x4096x4096 --dtype bf16
has "$tmp/out" "imported 0 results.*3 already there" "import again"
expect_rc 0 "list" -- "$bin" db list --db "$db"
has "$tmp/out" "3 results" "list"
has "$tmp/out" "gemm_mma .*1.5 .*replayed .*BLOCK_M=128,BLOCK_N=64" "list"
expect_rc 0 "list --json" -- "$bin" db list --db "$db" --json
python3 -c "import json,sys; d=json.load(open('$tmp/out')); assert d['counts']['results']==3; assert d['winners'][0]['timing']=='replayed'" || die "list --json"
expect_rc 0 "show" -- "$bin" db show --db "$db" --dtype bf16
has "$tmp/out" "ERR_COMPILE (CompilationFailedConfig)" "show"
expect_rc 0 "show no match" -- "$bin" db show --db "$db" --dtype f32
has "$tmp/out" "no results match" "show no match"

expect_rc 0 "export json" -- "$bin" db export --db "$db" --format json -o "$tmp/x.json"
python3 - "$tmp/x.json" <<'EOF' || die "export json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["results"]) == 3 and len(d["winners"]) == 1
r = [x for x in d["results"] if x["status"] == "OK"]
assert all(x["timing"] == "replayed" and x["device"]["name"] == "replay:NVIDIA H200" for x in r)
assert d["winners"][0]["config"] == {"BLOCK_M": 128, "BLOCK_N": 64}
EOF
expect_rc 0 "export csv" -- "$bin" db export --db "$db" --format csv
[ "$(wc -l <"$tmp/out")" = 4 ] || die "csv: expected a header and 3 rows"
has "$tmp/out" '"BLOCK_M=128,BLOCK_N=64",OK' "csv quoting"
expect_rc 0 "export header" -- "$bin" db export --db "$db" --format header -o "$tmp/tuned.h"
cat >"$tmp/use.c" <<'EOF'
#include <stdio.h>
#include "tuned.h"
int main(void) { printf("%d %s %s\n", ROOFTUNE_TUNED_COUNT, rooftune_tuned_configs[0].config,
                        rooftune_tuned_configs[0].timing); return 0; }
EOF
if cc -Wall -Werror -o "$tmp/use" "$tmp/use.c" -I"$tmp"; then
  [ "$("$tmp/use")" = "1 BLOCK_M=128,BLOCK_N=64 replayed" ] || die "header content: $("$tmp/use")"
else die "the exported header does not compile"; fi
expect_rc 2 "export bad format" -- "$bin" db export --db "$db" --format xml

# names are never cut and columns fit their content: a long template name in db list
expect_rc 0 "import a long name" -- "$bin" db import "$tmp/kt.json" --db "$tmp/long.db" --family gemm --shape 4096x4096x4096 --dtype bf16 --template gemm_mma_with_a_long_name_v2
expect_rc 0 "list a long name" -- "$bin" db list --db "$tmp/long.db"
python3 - "$tmp/out" <<'EOF' || die "db list: a long name cut or its columns out of line: $(cat "$tmp/out")"
import sys
lines = open(sys.argv[1]).read().splitlines()
head = next(l for l in lines if l.startswith("family"))
row = next(l for l in lines if "gemm_mma_with_a_long_name_v2 " in l)
assert head.index("timing") == row.index("replayed"), (head, row)
assert head.index("template") == row.index("gemm_mma_with_a_long_name_v2"), (head, row)
EOF

# a filter chooses every part of an export, in every format: a second problem (f16) in a copy
cp "$db" "$tmp/two.db"
expect_rc 0 "import f16" -- "$bin" db import "$tmp/kt.json" --db "$tmp/two.db" --family gemm --shape 4096x4096x4096 --dtype f16
expect_rc 0 "export json --dtype f16" -- "$bin" db export --db "$tmp/two.db" --dtype f16
python3 - "$tmp/out" <<'EOF' || die "export json --dtype f16: winners not filtered"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["results"]) == 3 and all(x["dtype"] == "f16" for x in d["results"]), d["results"]
assert len(d["winners"]) == 1 and d["winners"][0]["dtype"] == "f16", d["winners"]
EOF
expect_rc 0 "export json --family softmax" -- "$bin" db export --db "$tmp/two.db" --family softmax
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['results']==[] and d['winners']==[], d" ||
  die "export --family softmax exported another family's rows"
expect_rc 0 "export csv --dtype f16" -- "$bin" db export --db "$tmp/two.db" --dtype f16 --format csv
[ "$(wc -l <"$tmp/out")" = 4 ] || die "csv --dtype f16: expected a header and 3 rows"
expect_rc 0 "export header --dtype f16" -- "$bin" db export --db "$tmp/two.db" --dtype f16 --format header -o "$tmp/f16.h"
cat >"$tmp/use16.c" <<'EOF'
#include <stdio.h>
#include "f16.h"
int main(void) { const rooftune_tuned *t = &rooftune_tuned_configs[0];
                 printf("%d %s %s %d\n", ROOFTUNE_TUNED_COUNT, t->dtype, t->timing, t->verified); return 0; }
EOF
if cc -Wall -Werror -o "$tmp/use16" "$tmp/use16.c" -I"$tmp"; then
  [ "$("$tmp/use16")" = "1 f16 replayed 0" ] || die "header --dtype f16: $("$tmp/use16")"
else die "the filtered header (with verified) does not compile"; fi

# lookup: provenance (the import's toolkit is unknown) is refused unless allowed
expect_rc 0 "lookup strict" -- "$bin" lookup gemm --shape 4096x4096x4096 --dtype bf16 --db "$db" --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['match']=='none' and d['refused_mismatch']=='toolkit', d" || die "lookup strict"
expect_rc 0 "lookup exact" -- "$bin" lookup gemm --shape 4096x4096x4096 --dtype bf16 --db "$db" --allow-mismatch --json
python3 - "$tmp/out" <<'EOF' || die "lookup exact json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["match"] == "exact" and d["template"] == "gemm_mma", d
assert d["config"] == {"BLOCK_M": 128, "BLOCK_N": 64} and d["time_ms"] == 1.5, d
assert d["timing"] == "replayed" and d["mismatch"] == ["toolkit"], d
EOF
# an imported winner carries no constraints: it serves its own shape only, and the answer says so
expect_rc 0 "lookup nearest" -- "$bin" lookup gemm --shape 2048x4096x4096 --dtype bf16 --db "$db" --allow-mismatch --json
python3 - "$tmp/out" <<'EOF' || die "lookup nearest"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["match"] == "none" and d["rule"] == "library" and d["library"] == "cublaslt", d
assert d["passed_over"] == ["gemm_mma 4096x4096x4096 (distance 0.693): stored without constraints (before schema 4, or an import): served for its own shape only"], d
assert d["would_run"]["template"] == "cublaslt", d
EOF
expect_rc 0 "lookup nearest, text" -- "$bin" lookup gemm --shape 2048x4096x4096 --dtype bf16 --db "$db" --allow-mismatch
has "$tmp/out" "^rule      library" "lookup names the rule"
has "$tmp/out" "^passed    gemm_mma 4096x4096x4096 (distance 0.693): stored without constraints" "lookup says what it passed over"
has "$tmp/out" "^runs      cuBLASLt (its own choice)" "lookup says what runs"
expect_rc 0 "lookup exact only" -- "$bin" lookup gemm --shape 2048x4096x4096 --dtype bf16 --db "$db" --allow-mismatch --exact
has "$tmp/out" "^none" "lookup --exact"
expect_rc 0 "lookup other device" -- "$bin" lookup gemm --shape 4096x4096x4096 --dtype bf16 --db "$db" --allow-mismatch --device A100 --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['mismatch']==['device','toolkit'], d" || die "lookup device mismatch"
expect_rc 2 "lookup bad shape" -- "$bin" lookup gemm --shape 40x --dtype bf16 --db "$db"
has "$tmp/err" "40x" "lookup bad shape names it"
expect_rc 2 "lookup without --shape" -- "$bin" lookup gemm --dtype bf16 --db "$db"

# merge: a second database with the same import and a different problem
db2="$tmp/b.db"
"$bin" db import "$tmp/kt.json" --db "$db2" --family gemm --shape 1024x1024x1024 --dtype f16 >/dev/null || die "import b"
expect_rc 0 "merge" -- "$bin" db merge "$db" "$db2"
has "$tmp/out" "3 new results" "merge"
expect_rc 0 "merge again" -- "$bin" db merge "$db" "$db2"
has "$tmp/out" "0 new results" "merge again"
expect_rc 0 "check" -- "$bin" db check --db "$db"
has "$tmp/out" "ok: integrity" "check"
expect_rc 0 "check --json" -- "$bin" db check --db "$db" --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['ok'] and d['problems']==0" || die "check json"

# errors: one clear line naming the file
expect_rc 2 "no verb" -- "$bin" db --db "$db"
expect_rc 2 "bad verb" -- "$bin" db frobnicate
has "$tmp/err" "'frobnicate' is not a verb" "bad verb"
expect_rc 2 "merge one file" -- "$bin" db merge "$db"
expect_rc 1 "missing db" -- "$bin" db list --db "$tmp/none.db"
has "$tmp/err" "none.db: no such database" "missing db"
head -c 5000 /dev/urandom >"$tmp/junk.db"
expect_rc 1 "junk db" -- "$bin" db check --db "$tmp/junk.db"
has "$tmp/err" "junk.db: not a rooftune database" "junk db"
expect_rc 1 "junk lookup" -- "$bin" lookup gemm --shape 1x1x1 --dtype f32 --db "$tmp/junk.db"
has "$tmp/err" "not a rooftune database" "junk lookup"
python3 -c "import sqlite3; c=sqlite3.connect('$tmp/foreign.db'); c.execute('create table t(x)'); c.commit()"
expect_rc 1 "foreign db" -- "$bin" db list --db "$tmp/foreign.db"
has "$tmp/err" "another program" "foreign db"
expect_rc 1 "merge foreign" -- "$bin" db merge "$db" "$tmp/foreign.db"
has "$tmp/err" "foreign.db" "merge foreign names the file"
expect_rc 1 "import missing" -- "$bin" db import "$tmp/nope.json" --db "$db" --shape 1x1 --dtype f32
has "$tmp/err" "nope.json" "import missing names the file"
expect_rc 2 "import without shape" -- "$bin" db import "$tmp/kt.json" --db "$db"
cp "$db" "$tmp/trunc.db"; truncate -s 5000 "$tmp/trunc.db"
"$bin" db check --db "$tmp/trunc.db" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 1 ] || die "truncated db: check exit $rc, expected 1"
grep -q "Segmentation\|Aborted" "$tmp/err" && die "truncated db crashed"

# shared data, when present: a real 17956-config space imports and serves its optimum
space=${ROOFTUNE_SHARED_DIR:-}/data/spaces/gemm_clblast_RTX_3090.json.gz
if [ -f "$space" ]; then
  expect_rc 0 "import clblast" -- "$bin" db import "$space" --db "$tmp/c.db" --shape 4096x4096 --dtype f32
  has "$tmp/out" "imported 17956 results" "import clblast"
fi
# db check: every table and view the schema makes (a dropped table, a view in place of one),
# texts longer than what reads them (10 MB), a tuned problem whose dims were emptied
if command -v sqlite3 >/dev/null; then
  "$bin" tune gemm_mma --shape 128x128x128 --dtype f16 --device model:h200 --db "$tmp/m.db" \
    --budget 2 >/dev/null 2>&1 || die "cannot tune into m.db"
  expect_rc 0 "check of a tuned db" -- "$bin" db check --db "$tmp/m.db"
  while IFS='|' read -r sql want; do
    cp "$tmp/m.db" "$tmp/h.db"
    sqlite3 "$tmp/h.db" "$sql" || die "sqlite3: $sql"
    expect_rc 1 "check after $sql" -- "$bin" db check --db "$tmp/h.db"
    has "$tmp/out" "$want" "check after $sql"
  done <<'EOF'
DROP TABLE winner_recipes|schema: table winner_recipes is missing
DROP TABLE calibrations|schema: table calibrations is missing
ALTER TABLE calibrations RENAME TO c2; CREATE VIEW calibrations AS SELECT * FROM c2|schema: calibrations is a view, not the table rooftune makes
UPDATE results SET detail = printf('%.*c', 10000000, 'x') WHERE id = 1|results row 1: detail is 10000000 characters, more than the 255 rooftune reads
UPDATE winner_recipes SET env = printf('%.*c', 10000000, 'e')|winner_recipes row 1: env is 10000000 characters, more than the 1048576 any text holds
UPDATE winners SET vars = printf('%.*c', 2000, 'v')|winners row 1: vars is 2000 characters, more than the 1023 rooftune reads
UPDATE problems SET dims = ''|problem 1 (gemm 128x128x128): its dims are empty, yet results of it ran or were predicted
EOF
fi
[ $fail = 0 ] && echo "db and lookup commands behave"
exit $fail
