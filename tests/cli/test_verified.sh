#!/usr/bin/env bash
# Never serve an unverified kernel (issue 28), end to end: a user's 3-point stencil whose tuned
# template is wrong (it reads x[i+2], one past the end) tunes fine on the model device, which
# checks nothing, and is stored with its cubin; then every reader says it is not verified:
# `tune`, `lookup` (not runnable by default, nothing would run; --runnable passes it over;
# --allow-unverified serves it), `db show`, `db list`, `db export` (rows and winners) and
# `db check` (a note).  The C API, in a program built against librooftune, shows it with
# verified 0 and refuses to load it with ROOFTUNE_ERR_UNVERIFIED naming why, passes it over for
# what it would launch, and serves and loads it only with ROOFTUNE_ALLOW_UNVERIFIED; the Python
# package says the same.  The predicted winner still seeds a tune as a prior.  On a GPU the
# reference check catches the wrong template and nothing of it is stored as a winner.
set -u
bin=${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}
src=${ROOFTUNE_SOURCE_DIR:?}
libdir=$(dirname "$bin")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
export ROOFTUNE_CACHE_DIR="$tmp/cache"
k="$tmp/kernels/stencil3"
mkdir -p "$k"
# the family, its reference and a grid-stride template: a user's folder,
# tests/data/families/user/stencil3; the template made wrong here
fx=$src/tests/data/families/user/stencil3
cp "$fx/family.json" "$fx/stencil3_ref.cu" "$fx/stencil3_ref.json" "$k/"
# the deliberate bug: x[i + 2] where the stencil reads x[i + 1] (and, at i = n - 2, one past the end)
sed -e 's/stencil3_grid/stencil3_bad/g' -e 's/x\[i + 1\];/x[i + 2];/' "$fx/stencil3_grid.cu" >"$k/stencil3_bad.cu"
sed -e 's/stencil3_grid/stencil3_bad/g' "$fx/stencil3_grid.json" >"$k/stencil3_bad.json"
grep -q 'x\[i + 2\];' "$k/stencil3_bad.cu" || { echo "FAIL: the bug was not written into $k/stencil3_bad.cu"; exit 1; }
db="$tmp/t.db"
export ROOFTUNE_TEMPLATE_PATH="$tmp/kernels"

# 1. tuned on the model device: fine, stored with its cubin, and said to be unverified
json=$("$bin" tune stencil3 --shape 1048576 --dtype f32 --device model:h200 --budget 4 --db "$db" --json 2>"$tmp/err") ||
  die "tune exited $?: $(cat "$tmp/err")"
echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); b=d["best"]; assert d["timing"]=="predicted" and b["template"]=="stencil3_bad" and b["verified"] is False, d' ||
  die "tune --json: $json"
out=$("$bin" tune stencil3 --shape 1048576 --dtype f32 --device model:h200 --budget 1 --db "$db" 2>&1) || die "tune: $out"
echo "$out" | grep -q "not verified: its output was never checked against the reference (nothing ran on a GPU)" ||
  die "tune's text does not say the winner is unverified: $out"

# 2. lookup: shown, verified false, not runnable by default; what would run: nothing
out=$("$bin" lookup stencil3 --shape 1048576 --dtype f32 --db "$db" --json) || die "lookup exited $?"
python3 - "$out" <<'PY' || die "lookup --json: $out"
import json, sys
d = json.loads(sys.argv[1])
assert d["match"] == "exact" and d["template"] == "stencil3_bad" and d["cubin_bytes"] > 0, d
assert d["verified"] is False and d["runnable"] is False, d
w = d["would_run"]
assert w["rule"] == "none" and w["template"] is None, w
assert "1 unverified winner passed over" in w["text"] and "ROOFTUNE_ALLOW_UNVERIFIED" in w["text"], w
PY
out=$("$bin" lookup stencil3 --shape 1048576 --dtype f32 --db "$db") || die "lookup exited $?"
echo "$out" | grep -q "^verified  no: its output was never checked against the reference" || die "lookup text: $out"
echo "$out" | grep -q "^runs      nothing from this winner: it is not verified (predicted on model:h200; --allow-unverified runs it)" ||
  die "lookup's runs line: $out"
out=$("$bin" lookup stencil3 --shape 1048576 --dtype f32 --db "$db" --runnable --json) || die "lookup --runnable exited $?"
python3 - "$out" <<'PY' || die "lookup --runnable: $out"
import json, sys
d = json.loads(sys.argv[1])
assert d["match"] == "none" and d["rule"] == "none", d
assert d["passed_over"] and "stencil3_bad 1048576 (distance 0): not verified: predicted on model:h200" in d["passed_over"][0], d
assert "no verified tuned winner admits stencil3 1048576 f32" in d["reason"], d
PY
out=$("$bin" lookup stencil3 --shape 1048576 --dtype f32 --db "$db" --runnable --allow-unverified --json) ||
  die "lookup --allow-unverified exited $?"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["match"]=="exact" and d["verified"] is False and d["runnable"] is True and d["would_run"]["template"]=="stencil3_bad", d' ||
  die "lookup --allow-unverified: $out"

# 3. the database's readers
"$bin" db show --db "$db" >"$tmp/show" || die "db show"
grep -q "stencil3_bad .* OK .* ms predicted, not verified" "$tmp/show" || die "db show: $(head -3 "$tmp/show")"
"$bin" db list --db "$db" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["schema_version"]==8 and [w["verified"] for w in d["winners"]]==[False], d' ||
  die "db list --json"
"$bin" db list --db "$db" | grep -q "stencil3_bad .* predicted *no " || die "db list: $("$bin" db list --db "$db")"
"$bin" db export --db "$db" -o "$tmp/export.json" || die "db export"
python3 - "$tmp/export.json" <<'PY' || die "export"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["results"] and all(r["verified"] is False for r in d["results"]), d["results"][:1]
assert all(r["path"] == "simt_f32" for r in d["results"]), d["results"][:1]  # what its roof is
assert [w["verified"] for w in d["winners"]] == [False], d["winners"]
PY
"$bin" db export --db "$db" --format csv | head -1 | tr ',' '\n' | grep -qx verified || die "the CSV has no verified column"
out=$("$bin" db check --db "$db" 2>&1) || die "db check exited $?: $out"
echo "$out" | grep -q "note: winner 1 (stencil3_bad, predicted) is not verified" || die "db check: $out"

# 4. the C API, as an application calls it (and 5. Python): not against a sanitizer build's library,
#    which a plain program or Python cannot load first (unit_test_db_verified covers the same calls)
sanitized=0
readelf -d "$libdir/librooftune.so" 2>/dev/null | grep -q 'NEEDED.*libasan' && sanitized=1
[ $sanitized = 1 ] && echo "note: a sanitizer build: the C program and Python parts are not run"
cat >"$tmp/app.c" <<'C'
#include <rooftune.h>
#include <stdio.h>
int main(int argc, char **argv) {
  rooftune_db *db = NULL;
  if (argc < 2 || rooftune_open(argv[1], &db)) return 2;
  rooftune_query q = {.family = "stencil3", .shape = "1048576", .dtype = "f32"};
  rooftune_match m;
  rooftune_kernel *k = NULL;
  if (rooftune_lookup(db, &q, &m)) return 3;
  printf("default: match %d verified %d runnable %d\n", m.match, m.verified, m.runnable);
  int rc = rooftune_kernel_load(db, &m, &k);
  printf("load: %s: %s\n", rooftune_status_name(rc), rooftune_last_error());
  q.flags = ROOFTUNE_RUNNABLE;
  if (rooftune_lookup(db, &q, &m)) return 3;
  printf("runnable: match %d passed %d: %s", m.match, m.passed_count, m.passed_over);
  q.flags = ROOFTUNE_RUNNABLE | ROOFTUNE_ALLOW_UNVERIFIED;
  if (rooftune_lookup(db, &q, &m)) return 3;
  printf("allowed: match %d %s verified %d runnable %d\n", m.match, m.template_name, m.verified, m.runnable);
  rc = rooftune_kernel_load(db, &m, &k);
  printf("allowed load: %s\n", rooftune_status_name(rc));
  rooftune_kernel_free(k);
  rooftune_close(db);
  return 0;
}
C
if [ $sanitized = 1 ]; then
  :
elif cc -std=c11 -Wall -Werror -I"$src/runtime/include" -o "$tmp/app" "$tmp/app.c" -L"$libdir" -lrooftune \
     -Wl,-rpath,"$libdir" 2>"$tmp/cc.log"; then
  out=$("$tmp/app" "$db" 2>&1) || die "the program exited $?: $out"
  echo "$out" | grep -q "^default: match 1 verified 0 runnable 0$" || die "C lookup: $out"
  echo "$out" | grep -q "^load: ERR_UNVERIFIED: winner stencil3_bad THREADS=.* (predicted on model:h200) is not verified: its output was never checked against the reference" ||
    die "C kernel_load did not refuse with the reason: $out"
  echo "$out" | grep -q "^runnable: match 0 passed 1: stencil3_bad 1048576 (distance 0): not verified" || die "C runnable lookup: $out"
  echo "$out" | grep -q "^allowed: match 1 stencil3_bad verified 0 runnable 1$" || die "C opt-in lookup: $out"
  if [ -e /dev/nvidia0 ]; then
    echo "$out" | grep -q "^allowed load: ERR_NO_GPU$" || die "C opt-in load (no context made): $out"
  else
    echo "$out" | grep -Eq "^allowed load: (ERR_NO_DRIVER|ERR_NO_GPU)$" || die "C opt-in load went no further than the check: $out"
  fi
else
  die "the program did not build against librooftune: $(cat "$tmp/cc.log")"
fi

# 5. the Python package
[ $sanitized = 1 ] || PYTHONPATH="$src/python" ROOFTUNE_LIBRARY="$libdir/librooftune.so.0" python3 - "$db" <<'PY' || die "python"
import sys
import rooftune
db = rooftune.Database(sys.argv[1])
m = db.lookup("stencil3", "1048576", "f32")
assert m.found and m.verified is False and m.runnable is False, m
r = db.lookup("stencil3", "1048576", "f32", runnable=True)
assert not r.found and "not verified" in r.passed_over[0], r.passed_over
a = db.lookup("stencil3", "1048576", "f32", runnable=True, allow_unverified=True)
assert a.found and a.runnable and not a.verified, a
PY

# 6. a predicted winner still seeds a tune as a prior
json=$("$bin" tune stencil3 --shape 1048576 --dtype f32 --device model:h200 --budget 2 --prior "$tmp/export.json" \
       --db "$tmp/prior.db" --json 2>"$tmp/err") || die "tune --prior exited $?: $(cat "$tmp/err")"
echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["prior"]["file"] and d["best"]["template"]=="stencil3_bad", d' ||
  die "tune --prior: $json"

# 7. on a GPU the reference check catches it: nothing of the wrong template is a winner
if [ -e /dev/nvidia0 ]; then
  "$bin" tune stencil3 --shape 1048576 --dtype f32 --device cuda --budget 6 --db "$tmp/gpu.db" --json >"$tmp/gpu.json" 2>"$tmp/err"
  python3 - "$tmp/gpu.db" <<'PY' || die "on the GPU: $(cat "$tmp/err")"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
st = [s for (s,) in c.execute("SELECT status FROM results")]
assert st and all(s == "ERR_WRONG_RESULT" for s in st), st
assert c.execute("SELECT count(*) FROM winners").fetchone()[0] == 0
PY
fi
[ $fail = 0 ] && echo "the wrong stencil is stored unverified, shown as such everywhere, launched only when asked"
exit $fail
