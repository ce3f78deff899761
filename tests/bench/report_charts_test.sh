#!/usr/bin/env bash
# report_charts_test.sh COMMITLAB FIXTURES -- the report's charts say what
# their data says, checked on the SVG itself (lines derived from the real
# runs of FIXTURES/bench.jsonl, with the figures each case needs):
#  1. commits per sync: each panel's mean is the runs' commits over their
#     syncs, as the JSON's commits_per_sync (pooled over repeats), within
#     1% -- also for runs whose batches sit in the histogram's last entry,
#     "257+", which says nothing of their size.
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
PY

echo "report_charts: 1 case passed"
