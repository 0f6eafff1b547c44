#!/usr/bin/env bash
# Every stored cubin carries the SHA-256 of its bytes (schema 8), and a damaged one is never
# served: 64 bytes flipped in a winner's cubin in the SQLite file make `db check` name that
# winner and exit 1, `lookup --runnable` (librooftune's rules) pass it over to the next winner,
# a plain lookup call it not runnable, and `db merge` refuse the file, merging nothing.  The
# export carries the hash, and a database of schema 7 gets its cubins hashed by `db upgrade`
# from the bytes it holds.  Model device, real NVRTC compiles.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
command -v python3 >/dev/null || { echo "SKIP: no python3 to edit the SQLite file"; exit 77; }
export ROOFTUNE_CACHE_DIR=$tmp/cache
db=$tmp/t.db
# two winners for the one shape (gemm_mma and gemm_wgmma)
"$bin" tune gemm --shape 512x512x512 --dtype bf16 --device model:h200 --budget 4 --db "$db" \
  >"$tmp/out" 2>&1 || { echo "FAIL: tune: $(tail -3 "$tmp/out")"; exit 1; }
cp "$db" "$tmp/clean.db"
"$bin" db check --db "$db" >"$tmp/out" 2>&1 || die "db check of a fresh database: $(tail -3 "$tmp/out")"

# the hash is the bytes' (and the export carries it)
"$bin" db export --db "$db" -o "$tmp/e.json" || die "db export"
python3 - "$db" "$tmp/e.json" <<'PY' || fail=1
import hashlib, json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("SELECT w.id, w.cubin_sha256, c.cubin FROM winners w JOIN winner_cubins c ON c.winner_id=w.id").fetchall()
assert len(rows) >= 2, rows
for wid, h, b in rows:
    assert h == hashlib.sha256(b).hexdigest(), (wid, h)
e = json.load(open(sys.argv[2]))
hs = sorted(w["cubin_sha256"] for w in e["winners"] if w["cubin_bytes"] > 0)
assert hs == sorted(h for _, h, _ in rows), hs
print("stored hashes are the bytes' SHA-256, and the export carries them (%d winners)" % len(rows))
PY

look() { "$bin" lookup gemm --shape 512x512x512 --dtype bf16 --db "$db" --json "$@" 2>&1; }
first=$(look --runnable --allow-unverified)
tpl=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["template"])' "$first") ||
  { echo "FAIL: lookup: $first"; exit 1; }
wid=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT w.id FROM winners w JOIN templates t ON t.id=w.template_id WHERE t.name=?", (sys.argv[2],)).fetchone()[0])' "$db" "$tpl")
# 64 bytes flipped in the middle of that winner's cubin, in the file
python3 - "$db" "$wid" <<'PY' || fail=1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
(b,) = c.execute("SELECT cubin FROM winner_cubins WHERE winner_id=?", (int(sys.argv[2]),)).fetchone()
b = bytearray(b)
mid = len(b) // 2
for i in range(mid, mid + 64):
    b[i] ^= 0xFF
c.execute("UPDATE winner_cubins SET cubin=? WHERE winner_id=?", (bytes(b), int(sys.argv[2])))
c.commit()
PY
n=0
"$bin" db check --db "$db" >"$tmp/out" 2>&1; rc=$?
[ $rc != 0 ] || die "db check passed a damaged cubin"
grep -q "winner $wid ($tpl .*its cubin is damaged" "$tmp/out" || die "db check does not name winner $wid: $(cat "$tmp/out")"
n=$((n + 1))
now=$(look --runnable --allow-unverified)
python3 - "$now" "$wid" "$tpl" <<'PY' || fail=1
import json, sys
d, wid, tpl = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
assert d.get("template") != tpl, d
assert any(tpl in l and "damaged" in l and ("winner %d" % wid) in l for l in d["passed_over"]), d["passed_over"]
assert d["rule"] in ("exact", "next", "library"), d
print("runnable lookup: winner %d (%s) passed over as damaged; served: %s %s" % (wid, tpl, d["rule"], d.get("template") or d.get("library")))
PY
n=$((n + 1))
plain=$(look --allow-unverified)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["template"] == sys.argv[2] and d["runnable"] is False, d' "$plain" "$tpl" ||
  die "a plain lookup calls the damaged winner runnable: $plain"
n=$((n + 1))
count() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM results").fetchone()[0])' "$1"; }
"$bin" tune gemm --shape 256x256x256 --dtype bf16 --device model:h200 --budget 1 --db "$tmp/other.db" >/dev/null 2>&1
before=$(count "$tmp/other.db")
"$bin" db merge "$tmp/other.db" "$db" >"$tmp/out" 2>&1; rc=$?
[ $rc != 0 ] && grep -q "damaged cubin: winner $wid ($tpl" "$tmp/out" || die "merge of the damaged file: exit $rc: $(cat "$tmp/out")"
[ "$(count "$tmp/other.db")" = "$before" ] || die "a refused merge changed the target"
n=$((n + 1))

# a schema-7 file: db upgrade hashes what it holds; then a flip is caught
cp "$tmp/clean.db" "$tmp/v7.db"
python3 - "$tmp/v7.db" <<'PY' || fail=1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("ALTER TABLE winners DROP COLUMN cubin_sha256")
# and what later migrations added (schema 9: results.checked_on)
if any(r[1] == "checked_on" for r in c.execute("PRAGMA table_info(results)")):
    c.execute("ALTER TABLE results DROP COLUMN checked_on")
c.execute("PRAGMA user_version=7")
c.commit()
PY
"$bin" db upgrade --db "$tmp/v7.db" >"$tmp/out" 2>&1 || die "db upgrade of schema 7: $(cat "$tmp/out")"
"$bin" db check --db "$tmp/v7.db" >"$tmp/out" 2>&1 || die "db check after the upgrade: $(cat "$tmp/out")"
python3 - "$tmp/v7.db" <<'PY' || fail=1
import hashlib, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("PRAGMA user_version").fetchone()[0] >= 8
for wid, h, b in c.execute("SELECT w.id, w.cubin_sha256, c.cubin FROM winners w JOIN winner_cubins c ON c.winner_id=w.id"):
    assert h == hashlib.sha256(b).hexdigest(), (wid, h)
print("schema 7 upgraded: every cubin hashed from its bytes")
PY
[ $fail = 0 ] && echo "cubin hashes: $n uses of a damaged cubin refused (db check, runnable lookup, plain lookup, merge)"
exit $fail
