#!/usr/bin/env bash
# A problem whose space is empty (issue 37.10): `job status` says so with the reason `tune`
# gives, for a template target and for a family target whose every template is empty, instead
# of listing it as never tuned; `job run` says it before running and tunes the others.  The
# README's own family (examples/own_kernel: vscale_vec's "N >= 4") at N = 2 and 3.
set -u
bin=${ROOFTUNE_BIN:?}
src=${ROOFTUNE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
cat >"$tmp/e.json" <<EOF
{"rooftune_job": 1, "name": "e", "database": "e.db", "device": "model:h200", "recheck": false,
 "templates": ["$src/examples/own_kernel"], "defaults": {"budget": 2},
 "problems": [{"target": "vscale_vec", "shape": "2", "dtype": "f32"},
              {"target": "vscale", "shape": "3", "dtype": "f32"},
              {"target": "vscale_vec", "shape": "4096", "dtype": "f32"}]}
EOF
"$bin" job status "$tmp/e.json" --json >"$tmp/st" 2>&1 || die "job status exited $?: $(cat "$tmp/st")"
python3 - "$tmp/st" <<'EOF' || die "job status --json: $(cat "$tmp/st")"
import json, sys
p = json.load(open(sys.argv[1]))["problems"]
for q in p[:2]:
    assert q["state"] == "empty space", q
    assert '"N >= 4" is false' in q["reason"], q
assert p[0]["reason"].startswith("the space is empty: template vscale_vec has no valid"), p[0]
assert "no vscale template has a valid configuration: vscale_vec" in p[1]["reason"], p[1]
assert p[2]["state"] == "never tuned" and p[2]["reason"] == "", p[2]
EOF
"$bin" job status "$tmp/e.json" >"$tmp/txt" 2>&1 || die "job status (text) exited $?"
grep -q 'vscale_vec *2 .*empty space .*the space is empty: template vscale_vec' "$tmp/txt" ||
  die "job status's table: $(cat "$tmp/txt")"
"$bin" job run "$tmp/e.json" >"$tmp/run" 2>&1
rc=$?
[ $rc = 1 ] || die "job run exited $rc, not 1 (two problems cannot be tuned): $(cat "$tmp/run")"
grep -q '\] vscale_vec 2 f32: not tuned: the space is empty: template vscale_vec has no valid configuration: "N >= 4"' "$tmp/run" ||
  die "job run does not say the space is empty: $(cat "$tmp/run")"
grep -q '\] vscale 3 f32: not tuned: the space is empty: no vscale template' "$tmp/run" ||
  die "job run, the family: $(cat "$tmp/run")"
grep -q 'vscale_vec 4096 f32: tuned' "$tmp/run" || die "the tunable problem was not tuned: $(cat "$tmp/run")"
[ $fail = 0 ] && echo "empty spaces said by job status and job run, with tune's reason"
exit $fail
