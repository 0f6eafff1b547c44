#!/usr/bin/env bash
# The report's candidate table sorts without script (issue 37.6): in headless Chromium, a page
# opened at #p0-by-gbs shows that copy of problem 0's table alone, its rows by GB/s, largest
# first; opened bare or at #p0-by-time, the table by time alone; at a point's row (#p0r2) the
# table by time with that row.  What Chromium shows is read by a script added to a copy of the
# report (the report itself has none) that writes which tables are displayed into the DOM dump
# once the page has loaded (the fragment is targeted then).
# Skipped, with the reason, where no Chromium is installed.
set -u
bin=${ROOFTUNE_BIN:?}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "SKIP: no Chromium here (as root, .ci/deps.sh installs Debian's chromium package)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
cat >"$tmp/s.json" <<'EOF'
{"rooftune_job": 1, "name": "s", "database": "s.db", "device": "model:h200", "recheck": false,
 "defaults": {"budget": 12}, "problems": [{"target": "softmax", "shape": "128x2048", "dtype": "f32"}]}
EOF
export ROOFTUNE_CACHE_DIR=$tmp/cache
"$bin" job run "$tmp/s.json" >"$tmp/run" 2>&1 || { cat "$tmp/run"; die "job run"; }
page=$tmp/s-out/report.html
[ -s "$page" ] || die "no report"
grep -q '<script' "$page" && die "the report holds a script"
python3 - "$page" "$tmp/probe.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
js = r"""
window.addEventListener("load", function () { setTimeout(function () {
  var shown = [];
  document.querySelectorAll("#p0 div.sorts > div").forEach(function (d) {
    if (getComputedStyle(d).display === "none") return;
    var col = -1, gbs = [];
    d.querySelectorAll("th").forEach(function (th, i) { if (th.textContent.indexOf("GB/s") === 0) col = i; });
    d.querySelectorAll("tr").forEach(function (tr) {
      var td = tr.querySelectorAll("td");
      if (td.length > col && col >= 0) gbs.push(parseFloat(td[col].textContent));
    });
    shown.push({id: d.id, rows: gbs.length, gbs: gbs, height: d.getBoundingClientRect().height});
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(shown);
  document.body.appendChild(pre);
}, 100); });
"""
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", "<script>" + js + "</script></body>"))
PY
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$tmp/profile")
for at in "" "#p0-by-time" "#p0-by-gbs" "#p0-by-registers" "#p0r2"; do
  timeout 120 "$browser" "${flags[@]}" --window-size=1400,2000 --virtual-time-budget=3000 --dump-dom "file://$tmp/probe.html$at" \
    >"$tmp/dom" 2>"$tmp/log" || { die "chromium could not load the report at '$at': $(tail -3 "$tmp/log")"; continue; }
  python3 - "$tmp/dom" "$at" <<'PY' || die "at '$at'"
import html, json, re, sys
m = re.search(r'<pre id="probe">(.*?)</pre>', open(sys.argv[1], encoding="utf-8").read(), re.S)
assert m, "the probe wrote nothing"
shown = json.loads(html.unescape(m.group(1)))
at = sys.argv[2]
want = {"": "p0-by-time", "#p0r2": "p0-by-time"}.get(at, at[1:])
assert len(shown) == 1, "%d tables shown at '%s': %s" % (len(shown), at, [s["id"] for s in shown])
s = shown[0]
assert s["id"] == want and s["rows"] >= 2 and s["height"] > 0, s
if want == "p0-by-gbs":
    assert s["gbs"] == sorted(s["gbs"], reverse=True) and s["gbs"][0] > s["gbs"][-1], s["gbs"]
print("%-18s shows %s (%d rows)" % (at or "(bare)", s["id"], s["rows"]))
PY
done
timeout 120 "$browser" "${flags[@]}" --window-size=1400,2000 --screenshot="${SHOT:-$tmp/shot.png}" "file://$page#p0-by-gbs" \
  >"$tmp/shot.log" 2>&1 || die "chromium could not screenshot the report: $(tail -3 "$tmp/shot.log")"
[ $fail = 0 ] && echo "the table sorts by its headers' links, one copy shown at a time, without script"
exit $fail
