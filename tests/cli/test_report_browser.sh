#!/usr/bin/env bash
# `rooftune report` in a real browser: a job's database (10 problems: GEMM, attention, softmax and a
# user's declared stencil on the model device, gemm_skinny and the tensor-core GEMMs on one
# problem, plus a winner made to look faster than it is and rechecked) is rendered by headless
# Chromium to a PNG, which must not be blank and must show the roofs' red and the markers'
# colours; the DOM Chromium built must hold one SVG point per candidate of the database (and as
# many as each plot says), no script, and the regression.  At 1400 px, Chromium measures the
# look (getBBox): a marker class and a legend entry per template, every roof labelled, the roofs
# those of the points' paths, no label over a point, no sideways overflow.  Then the same
# database made hostile (tests/cli/poison_db.py: a script payload, an <img onerror>, an <svg
# onload>, a javascript: link, markup closing what it is in and invalid UTF-8 appended to every
# text column of every row; once every column, once all but the keys and statuses so the rows
# plot): Chromium renders each report and runs no script (each payload would set data-pwned on
# the page), and its DOM holds no script element and shows the payloads as text.  Skipped, with
# the reason, where no Chromium is installed (.ci/deps.sh installs Debian's chromium when run
# as root).
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
cat >"$tmp/r.json" <<'EOF'
{"rooftune_job": 1, "name": "browser", "database": "r.db", "device": "model:h200",
 "recheck": {"every": "0"}, "defaults": {"budget": 4},
 "problems": [{"target": "gemm", "shape": "256x256x256", "dtype": "f16"},
              {"target": "gemm", "shape": "64x512x256:nt", "dtype": "bf16"},
              {"target": "attention", "shape": "1x8x256x64", "dtype": "bf16"},
              {"target": "softmax", "shape": "128x2048", "dtype": "f32"},
              {"target": "gemm", "shape": "128x128x128", "dtype": "f32"},
              {"target": "gemm", "shape": "64x256x128:nt", "dtype": "f32"},
              {"target": "gemm_simt", "shape": "96x96x96", "dtype": "f32"},
              {"target": "attention", "shape": "2x8x128x128", "dtype": "f16"},
              {"target": "gemm", "shape": "16x4096x4096:nt", "dtype": "bf16"},
              {"target": "gemm_skinny", "shape": "16x4096x4096:nt", "dtype": "bf16"},
              {"target": "stencil3", "shape": "1048576", "dtype": "f32"}]}
EOF
# a user's declared family, a 3-point stencil: CUDA cores only, so no tensor-core roof
k=$tmp/kernels/stencil3
mkdir -p "$k"
# the family, its reference and a grid-stride template: tests/data/families/user/stencil3
cp "${ROOFTUNE_SOURCE_DIR:?}/tests/data/families/user/stencil3/"* "$k/"
export ROOFTUNE_TEMPLATE_PATH=$tmp/kernels ROOFTUNE_CACHE_DIR=$tmp/cache
"$bin" job run "$tmp/r.json" >"$tmp/run1" 2>&1 || { cat "$tmp/run1"; die "job run"; }
python3 - "$tmp/r.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE results SET time_ms = time_ms / 2 WHERE id = (SELECT min(result_id) FROM winners)")
c.commit()
PY
"$bin" job run "$tmp/r.json" >"$tmp/run2" 2>&1
[ $? = 3 ] || die "the rechecked regression did not exit 3: $(cat "$tmp/run2")"
html=$tmp/browser-out/report.html
[ -s "$html" ] || die "no report"
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$tmp/profile")
timeout 120 "$browser" "${flags[@]}" --window-size=1000,1500 --screenshot="$tmp/shot.png" "file://$html" >"$tmp/shot.log" 2>&1 ||
  die "chromium could not render the report: $(tail -5 "$tmp/shot.log")"
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$html" >"$tmp/dom.html" 2>"$tmp/dom.log" ||
  die "chromium could not load the report: $(tail -5 "$tmp/dom.log")"
python3 - "$tmp/shot.png" "$tmp/dom.html" "$tmp/r.db" <<'PY' || fail=1
import html.parser, sqlite3, struct, sys, zlib

def png_pixels(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', "not a PNG"
    pos, idat = 8, []
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
        elif kind == b'IDAT':
            idat.append(body)
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), ("unexpected PNG format", depth, ctype)
    bpp = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(b''.join(idat)), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride): line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride): line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a, b, c = (line[i - bpp] if i >= bpp else 0), prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows

w, h, bpp, rows = png_pixels(sys.argv[1])
# the markers' colours (report_page.c's .c0 ... .c6; .c7 is the text's grey)
MARKS = [(9, 105, 218), (191, 135, 0), (26, 127, 55), (130, 80, 223), (225, 111, 36), (27, 124, 131), (191, 57, 137)]
assert (w, h) == (1000, 1500), (w, h)
colours, ink, red, blue = set(), 0, 0, 0
for y in range(0, h, 2):
    r = rows[y]
    for x in range(0, w * bpp, 2 * bpp):
        px = (r[x], r[x + 1], r[x + 2])
        colours.add(px)
        if px != (255, 255, 255): ink += 1
        if abs(px[0] - 207) < 30 and abs(px[1] - 34) < 40 and abs(px[2] - 46) < 40: red += 1
        if any(abs(px[0] - c[0]) < 30 and abs(px[1] - c[1]) < 30 and abs(px[2] - c[2]) < 30 for c in MARKS): blue += 1
total = (h // 2) * (w // 2)
assert ink > total * 0.02, "the page is blank (%d of %d sampled pixels not white)" % (ink, total)
assert len(colours) > 50, "only %d colours" % len(colours)
assert red > 20, "no roof drawn (%d red pixels)" % red
assert blue > 5, "no point drawn (%d pixels of the markers' colours)" % blue

class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.svgs, self.cur, self.scripts, self.text = [], None, 0, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'script': self.scripts += 1
        if tag == 'svg' and 'roofline' in (a.get('class') or '').split():
            self.cur = [int(a['data-candidates']), 0]
            self.svgs.append(self.cur)
        elif self.cur is not None and 'pt' in (a.get('class') or '').split():
            self.cur[1] += 1
    def handle_endtag(self, tag):
        if tag == 'svg': self.cur = None
    def handle_data(self, d): self.text.append(d)
dom = Dom()
dom.feed(open(sys.argv[2]).read())
c = sqlite3.connect(sys.argv[3])
want = c.execute("SELECT count(*) FROM (SELECT DISTINCT r.problem_id, r.device_id, r.template_id, r.toolkit, r.config "
                 "FROM results r WHERE r.status='OK' AND r.flops > 0)").fetchone()[0]
problems = c.execute("SELECT count(*) FROM problems").fetchone()[0]
assert dom.scripts == 0, "the report has scripts"
assert len(dom.svgs) == problems == 10, (len(dom.svgs), problems)
assert all(n == k and n > 0 for n, k in dom.svgs), dom.svgs
assert sum(k for _, k in dom.svgs) == want, (dom.svgs, want)
text = ''.join(dom.text)
assert '1 regression' in text and 'SLOWER' in text, "the regression is not on the page"
print("browser: %dx%d PNG, %d colours, %d sampled pixels with ink; %d rooflines with %d points = the database's %d candidates"
      % (w, h, len(colours), ink, len(dom.svgs), sum(k for _, k in dom.svgs), want))
PY
# the look at 1400 px, measured by Chromium from the SVG's own coordinates (getBBox): a copy of
# the report with a measuring script appended (the report itself has none) writes what it finds
# into the page, and the DOM dump carries it out.  Each template its own marker class and a
# legend entry with that marker; every roof drawn is labelled; the roofs are exactly the paths
# the points ran on (gemm_skinny's CUDA-core point under the CUDA-core roof, no tf32 roof where
# no result used tf32, none but CUDA-core fp32 on the stencil); every point under the roof of
# its path; no label's box meets a point's or the winner ring's; the page does not overflow
# sideways and the charts use the width.
# The tensor-core points of the skinny problem are moved to where the CUDA-core roof's label
# would go first (just above that roof at the right end): the label must find another place.
cp "$tmp/r.db" "$tmp/look.db"
python3 - "$tmp/look.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n = c.execute("UPDATE results SET intensity = 2000, achieved_flops = 80e12 WHERE path = 'tc_f16' AND problem_id IN "
              "(SELECT id FROM problems WHERE shape = '16x4096x4096:nt')").rowcount
assert n > 0, "no tensor-core result of the skinny problem to move"
c.commit()
PY
"$bin" report --db "$tmp/look.db" -o "$tmp/look-src.html" >"$tmp/look.log" 2>&1 || die "report: $(cat "$tmp/look.log")"
python3 - "$tmp/look-src.html" "$tmp/look.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
js = r"""
(function () {
  function bb(e) { var b = e.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; }
  function marks(e) { return Array.prototype.filter.call(e.classList, function (c) { return /^mk\d+$/.test(c); }); }
  var out = {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, charts: []};
  document.querySelectorAll("section").forEach(function (sec) {
    var svg = sec.querySelector("svg.roofline");
    if (!svg) return;
    var c = {title: sec.querySelector("h2").textContent, width: svg.getBoundingClientRect().width,
             pts: [], rings: [], roofs: [], labels: [], legend: []};
    svg.querySelectorAll(".pt").forEach(function (p) {
      c.pts.push({t: p.getAttribute("data-template"), marks: marks(p), path: p.getAttribute("data-path"), box: bb(p)});
    });
    svg.querySelectorAll(".win").forEach(function (p) { c.rings.push(bb(p)); });
    svg.querySelectorAll("polyline.roof").forEach(function (r) {
      var pts = [];
      for (var i = 0; i < r.points.numberOfItems; i++) { var q = r.points.getItem(i); pts.push([q.x, q.y]); }
      c.roofs.push({key: r.getAttribute("data-roof"), points: pts});
    });
    svg.querySelectorAll("text.rooflabel, text.winlabel").forEach(function (t) {
      c.labels.push({key: t.getAttribute("data-roof"), text: t.textContent, box: bb(t)});
    });
    sec.querySelectorAll("table.legend tr.entry").forEach(function (e) {
      var k = e.querySelector(".keymark");
      c.legend.push({t: e.getAttribute("data-template"), marks: k ? marks(k) : []});
    });
    out.charts.push(c);
  });
  var pre = document.createElement("pre");
  pre.id = "look";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", "<script>" + js + "</script></body>"))
PY
timeout 120 "$browser" "${flags[@]}" --window-size=1400,1000 --virtual-time-budget=5000 --dump-dom "file://$tmp/look.html" \
  >"$tmp/look.dom" 2>"$tmp/look.log" || die "chromium could not load the report at 1400 px: $(tail -5 "$tmp/look.log")"
python3 - "$tmp/look.dom" <<'PY' || fail=1
import html, json, re, sys
m = re.search(r'<pre id="look">(.*?)</pre>', open(sys.argv[1], encoding="utf-8").read(), re.S)
assert m, "the measuring script wrote nothing"
d = json.loads(html.unescape(m.group(1)))
LABEL = {"simt_f32": "CUDA-core fp32", "tc_tf32": "tensor-core tf32", "tc_f16": "tensor-core f16/bf16",
         "tc_f8": "tensor-core fp8", "dram": "DRAM"}
assert d["scroll"] <= d["inner"] == 1400, "the page overflows sideways at 1400 px: %d > %d" % (d["scroll"], d["inner"])
meet = lambda a, b: a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
seen, labels, overlaps = {}, 0, 0
for c in d["charts"]:
    t = c["title"]
    assert c["width"] > 900, "%s: the chart is %.0f px wide at 1400 px (use the width)" % (t, c["width"])
    by = {}
    for p in c["pts"]:
        assert len(p["marks"]) == 1, "%s: a point of %s has marker classes %s" % (t, p["t"], p["marks"])
        by.setdefault(p["t"], set()).add(p["marks"][0])
    for tmpl, ms in by.items():
        assert len(ms) == 1, "%s: %s is drawn with %s" % (t, tmpl, sorted(ms))
        m0 = next(iter(ms))
        assert seen.setdefault(tmpl, m0) == m0, "%s: %s is %s here, %s elsewhere" % (t, tmpl, m0, seen[tmpl])
    owners = [tm for tm in by for _ in by[tm]]
    assert len(set(next(iter(v)) for v in by.values())) == len(by), "%s: two templates share a marker: %s" % (t, by)
    legend = {e["t"]: e["marks"] for e in c["legend"]}
    assert set(legend) == set(by), "%s: legend %s, templates %s" % (t, sorted(legend), sorted(by))
    for tmpl, ms in by.items():
        assert legend[tmpl] == list(ms), "%s: %s's legend marker %s, its points' %s" % (t, tmpl, legend[tmpl], ms)
    roofs = {r["key"]: r["points"] for r in c["roofs"]}
    keys = {l["key"] for l in c["labels"] if l["key"]}
    assert set(roofs) - {"dram"} <= keys and "dram" in keys, "%s: roofs %s, labels %s" % (t, sorted(roofs), sorted(keys))
    for l in c["labels"]:
        if l["key"]:
            assert l["text"].startswith(LABEL[l["key"]]), "%s: the %s roof is labelled %r" % (t, l["key"], l["text"])
    paths = {p["path"] for p in c["pts"]}
    assert paths == set(roofs) - {"dram"}, "%s: roofs %s for points on %s" % (t, sorted(roofs), sorted(paths))
    for p in c["pts"]:
        x, y = (p["box"][0] + p["box"][2]) / 2, (p["box"][1] + p["box"][3]) / 2
        r = roofs[p["path"]]
        for (x0, y0), (x1, y1) in zip(r, r[1:]):
            if x0 <= x <= x1 and x1 > x0:
                ry = y0 + (y1 - y0) * (x - x0) / (x1 - x0)
                assert y >= ry - 1, "%s: a point of %s is above its %s roof" % (t, p["t"], p["path"])
    if t.startswith("stencil3"):
        assert set(roofs) == {"simt_f32"}, "%s: the stencil's roofs are %s" % (t, sorted(roofs))
    if t.startswith("gemm 16x4096x4096:nt"):
        assert "gemm_skinny" in by and {"simt_f32", "tc_f16"} <= set(roofs), "%s: %s, %s" % (t, sorted(by), sorted(roofs))
        assert all(p["path"] == "simt_f32" for p in c["pts"] if p["t"] == "gemm_skinny"), t
    for l in c["labels"]:
        labels += 1
        for b in [p["box"] for p in c["pts"]] + c["rings"]:
            if meet(l["box"], b):
                overlaps += 1
                print("%s: label %r %s covers a point %s" % (t, l["text"], l["box"], b))
assert not overlaps, "%d labels cover points" % overlaps
assert len(seen) >= 6, seen
print("look at 1400 px: %d charts, %d templates each with its marker and legend entry, %d labels (every roof's) "
      "covering no point, page %d px wide" % (len(d["charts"]), len(seen), labels, d["scroll"]))
PY
# the hostile databases: no script runs (a short payload too, that fits the fixed-size fields
# rooftune reads: a long one is cut and would not run even unescaped)
keys=problems.family,problems.shape,problems.dtype,problems.layout,problems.dims,problems.args,devices.name
keys=$keys,templates.name,templates.family,templates.source_hash,templates.manifest_hash,runs.toolkit
keys=$keys,results.toolkit,winners.toolkit,results.status,runs.status,results.timing,runs.command,results.uid,runs.uid
for v in all keys short; do
  cp "$tmp/r.db" "$tmp/h-$v.db"
  case $v in
  all) python3 "$(dirname "$0")/poison_db.py" "$tmp/h-$v.db" >/dev/null ;;
  keys) python3 "$(dirname "$0")/poison_db.py" "$tmp/h-$v.db" --keep "$keys" >/dev/null ;;
  short) python3 "$(dirname "$0")/poison_db.py" "$tmp/h-$v.db" --keep "$keys" --set '<svg onload=id=7>' >/dev/null ;;
  esac
  "$bin" report --db "$tmp/h-$v.db" -o "$tmp/h-$v.html" >"$tmp/h.log" 2>&1 || { die "report of the hostile database: $(cat "$tmp/h.log")"; continue; }
  timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=3000 --dump-dom "file://$tmp/h-$v.html" \
    >"$tmp/h-$v.dom" 2>"$tmp/h.log" || { die "chromium could not load the hostile report: $(tail -3 "$tmp/h.log")"; continue; }
  python3 - "$tmp/h-$v.dom" "$v" <<'PY' || fail=1
import html.parser, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
class D(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.pwned, self.scripts, self.text = [], [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-pwned" in a: self.pwned.append(a["data-pwned"])
        if a.get("id") == "7": self.pwned.append("onload set an id")
        if tag in ("script", "img", "iframe", "object", "embed") or any(k.startswith("on") for k in a):
            self.scripts.append(tag)
    def handle_data(self, d): self.text.append(d)
d = D()
d.feed(dom)
assert not d.pwned, "%s: the hostile report ran script in Chromium: %s" % (sys.argv[2], d.pwned)
assert not d.scripts, "%s: script, img or event handlers in Chromium's DOM: %s" % (sys.argv[2], d.scripts)
text = "".join(d.text)
want = "<svg onload=id=7>" if sys.argv[2] == "short" else "<script>document.documentElement"
assert want in text, "%s: the payloads are not on the page as text" % sys.argv[2]
print("hostile report (%s): Chromium ran no script; the payloads show as text" % sys.argv[2])
PY
done
[ $fail = 0 ] && echo "report rendered by $("$browser" --version 2>/dev/null | head -1)"
exit $fail
