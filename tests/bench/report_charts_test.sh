#!/usr/bin/env bash
# report_charts_test.sh COMMITLAB FIXTURES -- the report's charts say what
# their data says, checked on the SVG itself (lines derived from the real
# runs of FIXTURES/bench.jsonl, with the figures each case needs):
#  1. commits per sync: each panel's mean is the runs' commits over their
#     syncs, as the JSON's commits_per_sync (pooled over repeats), within
#     1% -- also for runs whose batches sit in the histogram's last entry,
#     "257+", which says nothing of their size -- and the syncs it divides
#     by, a whole number;
#  2. end tags: every line's "[n]" sits at its own line's last point --
#     beside it, nearer to it than to any other line's end, or joined to it
#     by a leader when lines end too close together for that -- and no two
#     tags overlap (four lines ending within a few pixels at 4 clients, a
#     fifth ending at 2 clients at the same height; latencies 2% apart);
#  3. 25 series: in every chart's key, each series' colour and marker
#     (shape, fill) are a pair no other series has;
#  4. panels name what is fixed in them: each commits-per-sync panel its
#     series' number, configuration and client count, each timeline panel
#     its client count, and the percentile curves' key each series' client
#     count (the lines of case 2: four end at 4 clients, one at 2);
#  5. phase bars: totals spanning more than 10x are drawn on a log axis
#     that says so, each bar ending at its total and divided among its
#     phases by their shares, the smallest still a bar; within 10x, a
#     linear axis from zero, each phase its own length; a bar of 0 us
#     draws nothing, and no coordinate is nan or inf;
#  6. crashes: one bar per combination of FIXTURES/crash.jsonl (and two
#     more: one that ran no crash, one n/a whose reason is markup), as long
#     as its acknowledged commits lost, coloured by verdict -- green none
#     lost, amber lost where the policy does not promise durability, red
#     FAILED -- a zero still a visible bar; the one that ran no crash an
#     outline marked not checked, never "none lost".
# Exit 77 when python3 is missing.
set -u
bin=${1:?usage: report_charts_test.sh COMMITLAB FIXTURES}
fx=${2:?usage: report_charts_test.sh COMMITLAB FIXTURES}
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export PYTHONPATH=$work

# svg.py: the charts of a report as XML elements, and the lines to derive
# inputs from (base(): the first ok commitlab run of the fixture).
cat >svg.py <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
def chart(path, cid):
    doc = open(path, encoding="utf-8").read()
    m = re.search(r'<svg[^>]*\bid="%s".*?</svg>' % re.escape(cid), doc, re.S)
    assert m, "no chart " + cid
    return ET.fromstring(m.group(0))
def texts(root):
    return ["".join(t.itertext()) for t in root.iter(NS + "text")]
def base(path):
    for l in open(path):
        try:
            j = json.loads(l)
        except ValueError:
            continue
        if j.get("schema") == "commitlab-bench/1" and j.get("status") == "ok" and j["engine"] == "commitlab":
            return j
def copy(j):
    return json.loads(json.dumps(j))
def num(s):
    return float(s.replace(",", ""))
def shape(el):
    """What an element looks like, wherever it is drawn."""
    tag = el.tag.split("}")[1]
    paint = tuple(el.get(k) for k in ("fill", "stroke", "stroke-width"))
    if tag == "circle":
        return (tag, el.get("r")) + paint
    if tag == "rect":
        return (tag, el.get("width"), el.get("height")) + paint
    if tag == "line":
        return (tag, round(float(el.get("x2")) - float(el.get("x1")), 1),
                round(float(el.get("y2")) - float(el.get("y1")), 1)) + paint
    if tag == "path":                   # absolute points relative to the first
        out, org, cmd = [], None, None
        toks = re.findall(r"[A-Za-z]|-?[0-9.]+", el.get("d"))
        nums = []
        for t in toks + ["Z"]:
            if t.isalpha():
                if cmd in ("M", "L") and nums:
                    if org is None:
                        org = (nums[0], nums[1])
                    nums = [round(v - org[i % 2], 1) for i, v in enumerate(nums)]
                out.append((cmd, tuple(nums)))
                cmd, nums = t, []
            else:
                nums.append(float(t))
        return (tag, tuple(out)) + paint
    return (tag,) + paint
def key(root, pattern=r"[\[(](\d+)[\])] "):
    """The key of a chart: {series number: the shapes drawn just before its
    entry's text (its line, its marker)}; an entry starts "[n] " (or "(n) ")."""
    entries, glyphs = {}, []
    for el in root.iter():
        tag = el.tag.split("}")[1]
        if tag == "text":
            m = re.match(pattern, "".join(el.itertext()))
            if m and el.get("class") != "end-tag" and glyphs:
                entries[int(m.group(1))] = tuple(glyphs)
            glyphs = []
        elif tag in ("circle", "rect", "line", "path"):
            glyphs.append(shape(el))
    return entries
PY

# 1. commits per sync from the exact counts, never from the capped histogram
python3 - "$fx/bench.jsonl" >batches.jsonl <<'PY' || fail "deriving batches.jsonl"
import json, sys, svg
b = svg.base(sys.argv[1])
# no durability: three syncs in the whole run, each of tens of thousands
r = svg.copy(b)
r["config"]["sync"] = "none"
m = r["metrics"]
m.update(txns=193674, engine_commits=193674, syncs=3, commits_per_sync=64558.0, syncs_per_commit=3 / 193674)
m["commits_per_sync_dist"].update(syncs=3, p50=256, p99=256, max=256, max_is_lower_bound=True, hist={"257+": 3})
print(json.dumps(r))
# two repeats of one configuration, pooled: 3000 commits over 37 syncs
for seed, txns, syncs, hist in ((1, 1000, 17, {"1": 10, "2": 5, "257+": 2}), (2, 2000, 20, {"1": 12, "3": 6, "257+": 2})):
    r = svg.copy(b)
    r["config"]["seed"] = seed
    m = r["metrics"]
    m.update(txns=txns, engine_commits=txns, syncs=syncs, commits_per_sync=txns / syncs, syncs_per_commit=syncs / txns)
    m["commits_per_sync_dist"].update(syncs=sum(hist.values()), max_is_lower_bound=True, hist=hist)
    print(json.dumps(r))
PY
"$bin" report batches.jsonl -o batches.html >/dev/null 2>err || { cat err; fail "report of batches.jsonl"; }
python3 - batches.html <<'PY' || fail "a commits-per-sync mean is not the runs' commits over their syncs"
import re, sys, svg
want = [64558.0, 3000 / 37]
shown = [svg.num(m.group(1)) for t in svg.texts(svg.chart(sys.argv[1], "chart-batches"))
         for m in [re.search(r"\bmean ([0-9][0-9,.]*)", t)] if m]
assert len(shown) == len(want), ("one mean per panel", shown)
for v in shown:
    assert any(abs(v - w) <= 0.01 * w for w in want), ("shown %g, want one of %s" % (v, want))
for w in want:
    assert any(abs(v - w) <= 0.01 * w for v in shown), ("%g not shown: %s" % (w, shown))
heads = [t for t in svg.texts(svg.chart(sys.argv[1], "chart-batches")) if " syncs, mean " in t]
assert any(", 3 syncs, mean 64,558" in t for t in heads), ("the syncs the mean divides by, whole", heads)
assert any(", 37 syncs, mean 81.1" in t for t in heads), ("the syncs the mean divides by, whole", heads)
PY

# 2. end tags at their own lines' last points
python3 - "$fx/bench.jsonl" >tags.jsonl <<'PY' || fail "deriving tags.jsonl"
import json, sys, svg
b = svg.base(sys.argv[1])
ends = ((4, 1000), (4, 1010), (4, 1020), (4, 1030), (2, 1000))
for i, (last, tps) in enumerate(ends):
    for c in (1, last):
        r = svg.copy(b)
        r["config"].update(clients=c, value_size=101 + i)
        r["metrics"]["tps"] = tps if c == last else 600 + 50 * i
        lat = r["metrics"]["latency_us"]
        lat.update({k: v * (1 + 0.02 * i) for k, v in lat.items() if v})
        print(json.dumps(r))
PY
"$bin" report tags.jsonl -o tags.html >/dev/null 2>err || { cat err; fail "report of tags.jsonl"; }
python3 - tags.html <<'PY' || fail "an end tag is not at its own line's last point"
import re, sys, svg
for cid in ("chart-tps", "chart-p99", "chart-percentiles"):
    root = svg.chart(sys.argv[1], cid)
    last = {}                      # colour: the last point of the line of that colour
    for pl in root.iter(svg.NS + "polyline"):
        pts = [tuple(map(float, p.split(","))) for p in pl.get("points").split()]
        assert pl.get("stroke") not in last, "two lines of one colour"
        last[pl.get("stroke")] = pts[-1]
    leaders = [l for l in root.iter(svg.NS + "line") if l.get("class") == "end-tag-leader"]
    tags = [t for t in root.iter(svg.NS + "text") if t.get("class") == "end-tag"]
    assert len(tags) == len(last) == 5, (cid, len(tags), len(last))
    boxes = []
    for t in tags:
        x, y, c = float(t.get("x")), float(t.get("y")), t.get("fill")
        w, mid = 6.2 * len(t.text), y - 3.5
        boxes.append((x, mid - 5, x + w, mid + 5, t.text))
        px, py = last[c]
        led = [l for l in leaders if l.get("stroke") == c]
        if led:
            l = led[0]
            x1, y1, x2, y2 = (float(l.get(k)) for k in ("x1", "y1", "x2", "y2"))
            assert abs(x1 - px) < 1 and abs(y1 - py) < 1, (cid, t.text, "leader not from its point")
            assert abs(x2 - x) < 3 and abs(y2 - mid) < 3, (cid, t.text, "leader not to its tag")
            continue
        assert 0 < x - px < 14 and abs(mid - py) <= 3, (cid, t.text, "not beside its point", (x, mid), (px, py))
        for oc, (ox, oy) in last.items():
            if oc != c:
                assert (x - ox) ** 2 + (mid - oy) ** 2 > (x - px) ** 2 + (mid - py) ** 2, \
                    (cid, t.text, "nearer to another line's end")
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (cid, "tags overlap", a, b)
PY

# 3. 25 series, 25 pairs of colour and marker
python3 - "$fx/bench.jsonl" >many.jsonl <<'PY' || fail "deriving many.jsonl"
import json, sys, svg
b = svg.base(sys.argv[1])
for i in range(25):
    for c in (1, 4):
        r = svg.copy(b)
        r["config"].update(clients=c, value_size=101 + i)
        r["metrics"]["tps"] = 1000 + 40 * i + 300 * c
        print(json.dumps(r))
PY
"$bin" report many.jsonl -o many.html >/dev/null 2>err || { cat err; fail "report of many.jsonl"; }
python3 - many.html <<'PY' || fail "two series share a colour and marker"
import sys, svg
for cid in ("chart-tps", "chart-p99", "chart-percentiles", "chart-batches", "chart-timeline"):
    k = svg.key(svg.chart(sys.argv[1], cid))
    assert sorted(k) == list(range(1, 26)), (cid, "key entries", sorted(k))
    seen = {}
    for n, g in sorted(k.items()):
        assert g not in seen, (cid, "[%d] looks like [%d]" % (n, seen.get(g, 0)), g)
        seen[g] = n
PY

# 4. panel titles name their configuration
python3 - tags.html <<'PY' || fail "a panel does not name what is fixed in it"
import re, sys, svg
labels = {}
for t in svg.texts(svg.chart(sys.argv[1], "chart-tps")):
    m = re.match(r"\[(\d+)\] (.*)$", t)
    if m:
        labels[int(m.group(1))] = m.group(2)
assert len(labels) == 5, labels
last = {n: 2 if n == 5 else 4 for n in labels}
def words(cid):
    return " ".join(svg.texts(svg.chart(sys.argv[1], cid)))
batches = words("chart-batches")
for n, l in labels.items():
    want = "[%d] %s %d clients, " % (n, l, last[n])
    assert want in batches, ("no panel titled", want)
timeline = [t for t in svg.texts(svg.chart(sys.argv[1], "chart-timeline")) if "each second" in t]
assert len(timeline) == 2 and all(t.endswith(" at 4 clients") for t in timeline), timeline
pct = svg.texts(svg.chart(sys.argv[1], "chart-percentiles"))
for n, l in labels.items():
    assert "[%d] %s, %d clients" % (n, l, last[n]) in pct, ("percentile key", n, pct)
PY

# 5. phase bars: a log axis beyond 10x, labelled, bars ending at their totals
for span in 100 3; do
    python3 - "$fx/bench.jsonl" "$span" >phases$span.jsonl <<'PY' || fail "deriving phases$span.jsonl"
import json, sys, svg
b = svg.base(sys.argv[1])
for i, f in enumerate((1, float(sys.argv[2]), 2, 0)):      # the last: phases of 0 us
    r = svg.copy(b)
    r["config"]["value_size"] = 101 + i
    for ph in r["metrics"]["commit_phases_us"].values():
        ph["mean"] *= f
    print(json.dumps(r))
PY
    "$bin" report phases$span.jsonl -o phases$span.html >/dev/null 2>err || { cat err; fail "report of phases$span.jsonl"; }
    python3 - phases$span.html "$span" <<'PY' || fail "phase bars, totals ${span}x apart"
import math, re, sys, svg
root = svg.chart(sys.argv[1], "chart-phases")
log = float(sys.argv[2]) > 10
words = " ".join(svg.texts(root))
assert ("log scale" in words) == log, ("log scale said", log, words)
def short(t):
    m = re.match(r"^([0-9.]+)([kMG]?)$", t)
    return float(m.group(1)) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(2)] if m else None
ticks = [(float(t.get("x")), short(t.text)) for t in root.iter(svg.NS + "text")
         if t.get("text-anchor") == "middle" and t.text and short(t.text) is not None]
assert len(ticks) >= 3, ticks
f = (lambda v: math.log10(v)) if log else (lambda v: v)
if not log:
    assert min(v for x, v in ticks) == 0, ("a linear axis from zero", ticks)
(x0, v0), (x1, v1) = ticks[0], ticks[-1]
def pos(v):
    return x0 + (f(v) - f(v0)) * (x1 - x0) / (f(v1) - f(v0))
for x, v in ticks:
    assert abs(pos(v) - x) < 1, ("ticks are not on one %s scale" % ("log" if log else "linear"), ticks)
bars = {}
for rect in root.iter(svg.NS + "rect"):
    t = rect.find(svg.NS + "title")
    m = t is not None and re.match(r"^(\w+): ([0-9,.]+) µs", t.text)
    if m:
        bars.setdefault(rect.get("y"), []).append((float(rect.get("x")), float(rect.get("width")), svg.num(m.group(2))))
assert len(bars) == 3, bars
for el in root.iter():
    for k in ("x", "y", "width", "x1", "x2"):
        assert not re.search(r"nan|inf", el.get(k) or "", re.I), ("not a number", el.tag, k, el.get(k))
for y, segs in bars.items():
    total = sum(v for _, _, v in segs)
    start, end = segs[0][0], segs[-1][0] + segs[-1][1]
    assert abs(end - pos(total)) < 2, ("a bar does not end at its total", total, end, pos(total))
    assert abs(start - (pos(ticks[0][1]) if log else pos(0))) < 1, ("a bar does not start at the axis", start)
    assert end - start > 20, ("a bar too short to see", end - start)
    for x, w, v in segs:
        assert abs(w / (end - start) - v / total) < 0.015, ("a phase is not its share of the bar", v, total, w)
PY
done

# 6. acknowledged commits lost per crash combination
python3 - "$fx/crash.jsonl" >crash.jsonl <<'PY' || fail "deriving crash.jsonl"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    print(json.dumps(r))
r = json.loads(json.dumps(rows[0]))
r.update(clients=16, crashes=0, crashes_mid_run=0, acked_lost=0, acked_lost_worst_crash=0, unacked_survived=0)
print(json.dumps(r))
r = json.loads(json.dumps(rows[0]))
r.update(engine="sqlite", status="n/a", reason="<b>sim</b> needs the engine's own log", crashes=None, acked_lost=None)
print(json.dumps(r))
PY
"$bin" report crash.jsonl -o crash.html >/dev/null 2>err || { cat err; fail "report of crash.jsonl"; }
python3 - crash.html crash.jsonl <<'PY' || fail "the crash chart does not show each combination's loss and verdict"
import json, re, sys, svg
root = svg.chart(sys.argv[1], "chart-durability")
rows = [json.loads(l) for l in open(sys.argv[2])]
bars = [r for r in root.iter(svg.NS + "rect") if r.find(svg.NS + "title") is not None]
assert len(bars) == len(rows), (len(bars), len(rows))
green, amber, red = "#59a14f", "#e8a33d", "#e15759"
per = []
words = " ".join(svg.texts(root))
for j, bar in zip(rows, bars):
    title = bar.find(svg.NS + "title").text
    if j["status"] == "n/a":
        assert title.startswith("n/a: <b>sim</b>"), title
        assert bar.get("fill") == "#ffffff", ("n/a drawn as a count", title)
        continue
    if j["crashes"] == 0:
        assert title.startswith("not checked") and "lost" not in title, title
        assert bar.get("fill") == "#ffffff", ("no crash drawn as a count", title)
        continue
    lost = j["acked_lost"]
    assert title.startswith("%s acknowledged commit" % format(lost, ",")), (lost, title)
    want = red if j["status"] == "failed" or (j["sync_durable"] and lost) else amber if lost else green
    assert bar.get("fill") == want, (j["sync"], j["model"], lost, bar.get("fill"), want)
    w = float(bar.get("width"))
    assert w >= 3, ("a bar too thin to see", w)
    if lost:
        per.append(w / lost)
assert per and max(per) - min(per) < 0.01 * max(per), ("bars not in proportion to the losses", per)
assert "not checked: no crash ran" in words, words
assert "durable, FAILED" in words and "not durable, as promised" in words, words
PY

echo "report_charts: 6 cases passed"
