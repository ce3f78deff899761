#!/usr/bin/env bash
# report_chromium_test.sh COMMITLAB FIXTURES -- the report as a browser
# shows it: headless Chromium renders the report of every fixture (offline,
# from a file: URL), the screenshot is not blank, and the DOM Chromium built
# holds every chart, by id, with its caption.  A page Chromium could not
# parse or lay out loses elements here even when the XML checks of
# report_test.sh pass.
# Exit 77 when chromium (or python3) is not installed, unless
# CL_REQUIRE_BROWSER=1 (as CI sets it): then a missing browser fails.
set -u
bin=${1:?usage: report_chromium_test.sh COMMITLAB FIXTURES}
fx=${2:?usage: report_chromium_test.sh COMMITLAB FIXTURES}
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
    [ "${CL_REQUIRE_BROWSER:-0}" = 1 ] && fail "$1, and CL_REQUIRE_BROWSER=1 requires this test to run"
    echo "skipped: $1 (to run it: apt-get install -y chromium, then ctest -R report_chromium)"
    exit 77
}
command -v chromium >/dev/null || skip "no chromium"
command -v python3 >/dev/null || skip "no python3"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

"$bin" report "$fx/bench.jsonl" "$fx/crash.jsonl" "$fx/filesystems.jsonl" -o "$work/report.html" \
    >/dev/null 2>err || { cat err; fail "commitlab report exited $?"; }

# its own profile directory: nothing read from or left in the user's
chrome() {
    timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$work/profile" "$@" 2>>chromium.err
}
chrome --screenshot="$work/shot.png" --window-size=1200,3000 "file://$work/report.html" >/dev/null \
    || { tail chromium.err; fail "chromium --screenshot exited $?"; }
chrome --dump-dom "file://$work/report.html" >dom.html || { tail chromium.err; fail "chromium --dump-dom exited $?"; }

# A blank page compresses to a few kilobytes; charts and tables do not.
size=$(stat -c %s shot.png 2>/dev/null || echo 0)
[ "$size" -gt 50000 ] || fail "the screenshot is $size bytes: a blank page?"
python3 - shot.png <<'PY' || fail "shot.png is not a 1200x3000 PNG"
import struct, sys
head = open(sys.argv[1], "rb").read(24)
assert head[:8] == b"\x89PNG\r\n\x1a\n", head[:8]
w, h = struct.unpack(">II", head[16:24])
assert (w, h) == (1200, 3000), (w, h)
PY

python3 - dom.html <<'PY' || fail "the DOM Chromium built"
import re, sys, html
dom = open(sys.argv[1], encoding="utf-8").read()
want = {
    "chart-tps": "Throughput against client count",
    "chart-p99": "p99 transaction latency against client count",
    "chart-percentiles": "Latency by percentile",
    "chart-phases": "Where a commit's time goes",
    "chart-batches": "Commits made durable per sync",
    "chart-timeline": "second by second at 4 clients",
    "chart-durability": "Acknowledged commits lost under crashes",
}
for cid, caption in want.items():
    m = re.search(r'<figure>\s*<svg[^>]*\bid="%s".*?</svg>\s*<figcaption>(.*?)</figcaption>' % cid, dom, re.S)
    assert m, "no figure with svg#%s and a figcaption" % cid
    assert caption in html.unescape(m.group(1)), (cid, m.group(1))
for tid in ("table-latency", "table-matrix", "table-durability"):
    assert 'id="%s"' % tid in dom, "no " + tid
# the SVG content survived parsing as SVG: lines, markers and text
assert len(re.findall(r"<polyline", dom)) >= 5 and len(re.findall(r"<text", dom)) > 100, "charts lost their marks"
PY

echo "report_chromium: rendered, $size bytes of screenshot, every chart in the DOM"
