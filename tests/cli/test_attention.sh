#!/usr/bin/env bash
# The attention family end to end on the model device, from the command line: the issue's main
# job (4x32x4096x128:causal bf16) and a prefill with grouped heads and two lengths are tuned,
# stored and looked up; the reference is never a candidate; bad shapes get one clear error.
# Decode (one query against a long cache, contiguous, paged, ragged, and four queries with the
# causal mask) tunes the split-KV template and is stored and looked up the same way.
set -u
bin=${ROOFTUNE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
db="$tmp/t.db"
tune() { "$bin" tune attention --device model:h200 --budget 6 --db "$db" --json "$@" 2>>"$tmp/err"; }

json=$(tune --shape 4x32x4096x128:causal --dtype bf16) || die "main job exited $?: $(tail -3 "$tmp/err")"
python3 - "$json" <<'PY' || die "main job json: $json"
import json, sys
d = json.loads(sys.argv[1])
assert d["timing"] == "predicted", d
b = d["best"]
assert b["template"] in ("attn_mma", "attn_wgmma"), b
assert b["tflops"] > 0 and b["limit"], b
# the reference never runs as a candidate
assert all(t != "attn_reference" for t in d.get("best_per_template", {})), d
PY
json=$(tune --shape 8x16:4x512:2048x64 --dtype f16) || die "grouped prefill exited $?: $(tail -3 "$tmp/err")"
echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["best"]["template"].startswith("attn_"), d' ||
  die "grouped prefill: $json"

out=$("$bin" lookup attention --shape 4x32x4096x128:causal --dtype bf16 --db "$db" --json) || die "lookup exited $?"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["match"]=="exact" and d["template"].startswith("attn_"), d' ||
  die "lookup: $out"
out=$("$bin" lookup attention --shape 4x32x2048x128:causal --dtype bf16 --db "$db" --json) || die "nearest lookup exited $?"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["match"]=="nearest", d' || die "nearest: $out"

# decode: the issue's shapes on the model device; the split-KV template competes in every one
for spec in "64x32:8x1:8192x128" "64x32:8x1:8192x128:paged16" "8x32:8x4:4096x128:causal" "3x8:1x1:1000x128 5,1000,777"; do
  set -- $spec
  lens=()
  [ $# = 2 ] && lens=(--kv-lens "$2")
  json=$(tune --shape "$1" --dtype bf16 "${lens[@]}") || { die "decode $spec exited $?: $(tail -3 "$tmp/err")"; continue; }
  echo "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["best"]["template"].startswith("attn_"), d["best"]
assert "attn_decode" in d.get("best_per_template", {}), d.get("best_per_template")' || die "decode $spec: $json"
done
out=$("$bin" lookup attention --shape 64x32:8x1:8192x128:paged16 --dtype bf16 --db "$db" --json) || die "decode lookup exited $?"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["match"]=="exact" and d["template"].startswith("attn_"), d' ||
  die "decode lookup: $out"
# ragged problems are stored with their lengths: the database's shape names them by digest
"$bin" db list --db "$db" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert any(w["shape"].startswith("3x8:1x1:1000x128:lens-") for w in d["winners"]), [w["shape"] for w in d["winners"]]' ||
  die "the ragged winner is not stored under its digest"

"$bin" tune attn_reference --shape 1x1x64x64 --dtype bf16 --device model:h200 --no-db >/dev/null 2>"$tmp/err"
[ $? = 2 ] || die "tuning the reference did not exit 2"
grep -q "attn_reference is the attention family's reference" "$tmp/err" || die "reference: $(cat "$tmp/err")"

for bad in "4x30:8x4096x128" "4x32x4096x100" "4x32x4096x128:casual"; do
  "$bin" tune attention --shape "$bad" --dtype bf16 --device model:h200 --no-db >/dev/null 2>"$tmp/err"
  [ $? = 2 ] || die "$bad did not exit 2 (bad usage, as the README's exit codes say)"
  [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "^rooftune tune: --shape: bad attention shape \"$bad\"" "$tmp/err" ||
    die "$bad: $(cat "$tmp/err")"
done
"$bin" tune attention --shape 4x32x4096x128 --dtype f32 --device model:h200 --no-db >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "takes dtype f16 or bf16" "$tmp/err" || die "f32: $(cat "$tmp/err")"
exit $fail
