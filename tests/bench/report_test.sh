#!/usr/bin/env bash
# report_test.sh COMMITLAB FIXTURES -- `commitlab report` on JSON lines made
# by the real commands (FIXTURES: bench.jsonl, bench runs with --repeat, one
# line cut short and one of an unknown schema; crash.jsonl, crash rows only,
# one of them a lying device's failure; filesystems.jsonl, the same runs on
# ext4 and tmpfs; matrix.jsonl, `commitlab matrix` on ext4 and tmpfs):
#  1. bench runs only: exit 0, the two bad lines named FILE:LINE on stderr
#     and listed in the report, every chart of bench data there with its id
#     and caption, the durability and matrix sections named absent and why;
#  2. crash rows only: the durability table green, amber ("as promised") and
#     red ("FAILED"), its chart of commits lost, every other chart named
#     absent;
#  3. everything, plus a line from another host whose strings are hostile:
#     the filesystem matrix, series naming their host, every string escaped;
#     and the matrix file alone: its heat table, verdicts and matrix command;
#  4. in every report, each <svg> parses as XML in the SVG namespace, and
#     nothing is fetched (no script, link, image, and no src/href to http);
#  5. --format md: the markdown and one SVG per chart beside it, each parsing
#     and referenced;
#  6. a missing file exits 2 naming it, a file without a usable line exits
#     1, bad arguments exit 2, --help exits 0;
#  7. `commitlab tour` writes report.html beside its JSON lines and names it
#     on its last line (runs of 0.1 s: no timeline, which the report says),
#     the means of commits per sync it shows are its lines' own, and so
#     are the context switches and file calls per commit of its table of
#     what each commit cost, for every engine;
#  8. untrusted input: a line over 1 MiB, implausible figures (2^32+1
#     clients, 1.7e308 tps, a negative latency), a directory, a device and
#     a 64 MiB file without a newline are each named and skipped or refused,
#     in bounded memory, and no SVG holds nan or inf;
#  9. a label names every setting off its engine's default, and every line
#     carries its legend number at its end;
# 10. a crash row's replay command runs;
# 11. the markdown report of the four fixtures -- JSON lines written before
#     the knobs were one table -- is byte for byte FIXTURES/report.golden.md,
#     so a change to the table of knobs (or the report) that changes how
#     old lines read fails here.  Nothing in it depends on the time or the
#     host it is made on (its dates, hosts and kernels are the lines'); the
#     one line compared after an edit is the skipped line's parse error,
#     jansson's own words, replaced by a placeholder on both sides.
#     CL_UPDATE_GOLDEN=1 writes the file instead, for a change meant;
# 12. a crash row of no crash at all checked nothing: "nothing checked",
#     never "ok", in the HTML and the markdown;
# 13. a count is whole: a crash or bench line with a fraction where a count
#     goes (acked_lost 0.5, crashes 2.5, metrics.txns 10.5, a second's
#     checkpoints, env.cores) is named FILE:LINE with its field and
#     skipped; a whole count written as a real (3.0) is read;
# 14. control characters in the strings of a bench and a crash line (a
#     '\r' in the run directory and the engine, which reach the commands'
#     code blocks; ESC, DEL, tab and '\n' in table cells and headings):
#     the markdown writes each as an escape (\r, \x1b) and holds no control
#     character but its own newlines, so no string ends a code block or a
#     row; the HTML still holds none that XML forbids.
# Exit 77 when python3 is missing.
set -u
bin=${1:?usage: report_test.sh COMMITLAB FIXTURES}
fx=${2:?usage: report_test.sh COMMITLAB FIXTURES}
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
shm=
trap 'rm -rf "$work" ${shm:+"$shm"}' EXIT
cd "$work" || exit 1
cp "$fx"/*.jsonl .

# check.py HTML [--has ID...] [--absent TEXT...] [--text TEXT...] [--not TEXT...]:
# the structure every report must have, and what this one must say.
cat >check.py <<'PY'
import re, sys, html
import xml.etree.ElementTree as ET
path, args = sys.argv[1], sys.argv[2:]
doc = open(path, encoding="utf-8").read()
mode, want = None, {"--has": [], "--absent": [], "--text": [], "--not": []}
for a in args:
    if a in want:
        mode = a
    else:
        want[mode].append(a)
svgs = re.findall(r"<svg\b.*?</svg>", doc, re.S)
ids = []
for s in svgs:
    root = ET.fromstring(s)                      # well-formed, or this raises
    assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
    ids.append(root.get("id"))
    assert root.find("{http://www.w3.org/2000/svg}title") is not None, "an svg without a title"
    assert len(root.findall(".//{http://www.w3.org/2000/svg}text")) >= 4, root.get("id") + ": no axes or legend"
figures = re.findall(r"<figure>\s*(<svg\b.*?</svg>)\s*<figcaption>([^<]+)</figcaption>\s*</figure>", doc, re.S)
assert len(figures) == len(svgs), "%d svgs, %d figures with a figcaption" % (len(svgs), len(figures))
for i in want["--has"]:
    assert i in ids, "no chart %s (have %s)" % (i, ids)
for i in ids:
    assert i in want["--has"], "unexpected chart " + str(i)
# nothing fetched: no script, stylesheet link, image, font or import, and
# no src or href that leaves the page (the svg namespace is neither)
for bad in ("<script", "<link", "<img", "<iframe", "<object", "@import", "url(", "@font-face"):
    assert bad not in doc.lower(), "external resource: " + bad
for attr, val in re.findall(r"""\b(src|href)\s*=\s*["']?([^"' >]*)""", doc, re.I):
    assert "http" not in val.lower() and not val.startswith("//"), "fetches %s=%s" % (attr, val)
assert re.search(r"@media print\s*{", doc), "no print styles"
def plain(h):
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", h)))
text = plain(doc)
absent = plain(doc[doc.index('id="absent"'):doc.index("</nav>")]) if want["--absent"] else ""
for t in want["--absent"]:
    assert t in absent, "absent section not named: " + t
for t in want["--text"]:
    assert t in text, "missing text: " + t
for t in want["--not"]:
    assert t not in doc, "must not appear raw: " + t
PY

charts="chart-tps chart-p99 chart-percentiles chart-phases chart-batches chart-timeline"

# 1. bench runs only
"$bin" report bench.jsonl -o bench.html >out 2>err; rc=$?
[ $rc -eq 0 ] || { cat err; fail "bench.jsonl: exit $rc"; }
grep -qx 'bench.jsonl:6: not JSON .*, skipped' err \
    || { cat err; fail "the line cut short is not named bench.jsonl:6"; }
grep -qx 'bench.jsonl:10: unknown schema "commitlab-bench/9", skipped' err \
    || { cat err; fail "the unknown schema is not named bench.jsonl:10"; }
[ "$(wc -l <err)" -eq 2 ] || { cat err; fail "stderr has more than the two skipped lines"; }
grep -qx 'report: bench.html' out || fail "no 'report: bench.html' line: $(cat out)"
python3 check.py bench.html --has $charts \
    --absent "Durability under crashes: no crash runs in the input" \
             "Filesystem matrix: every run is on one filesystem" \
    --text "Throughput against client count" "p99 transaction latency against client count" \
           "Where a commit's time goes: the mean microseconds" "Commits made durable per sync" \
           "second by second at 4 clients" "bench.jsonl:6: not JSON" "bench.jsonl:10: unknown schema" \
           "lmdb --sync commit, 1 client: n/a" "commitlab bench --engine commitlab --sync group --clients 1,4" \
           "--segment-size 256k --checkpoint-bytes 1M --repeat 2" "] lmdb commit" \
    || fail "bench.html"
grep -q 'id="table-latency"' bench.html || fail "no latency table"
grep -q 'id="table-durability"' bench.html && fail "a durability table without crash rows"

# 1b. two configurations the short labels would not tell apart (a knob one
#     sets to its most common value and the other leaves unset) are named
#     in full, so no two series share a label
python3 - bench.jsonl >alike.jsonl <<'PY'
import json, sys
def parse(l):
    try:
        return json.loads(l)
    except ValueError:
        return {}
runs = [j for j in map(parse, open(sys.argv[1])) if j.get("schema") == "commitlab-bench/1"]
run = next(r for r in runs if r["engine"] == "lmdb" and r["status"] == "ok")
for lat, n in ((8000, 2), (None, 1)):
    for i in range(n):
        r = json.loads(json.dumps(run))
        r["config"]["sync_latency_us"] = lat
        r["config"]["seed"] = i + 1
        print(json.dumps(r))
c = next(r for r in runs if r["engine"] == "commitlab" and r["status"] == "ok")
c["config"]["sync_latency_us"] = 0
print(json.dumps(c))
PY
"$bin" report alike.jsonl -o alike.html >out 2>err || { cat err; fail "alike.jsonl: exit $?"; }
python3 - alike.html <<'PY' || fail "two series share a label"
import re, sys
doc = open(sys.argv[1]).read()
table = doc[doc.index('id="table-tps"'):]
labels = re.findall(r"<tr><td>([^<]+)</td>", table[:table.index("</table>")])
assert len(labels) == 3 and len(set(labels)) == 3, labels
PY

# 2. crash rows only
"$bin" report crash.jsonl -o crash.html >out 2>err || { cat err; fail "crash.jsonl: exit $?"; }
[ -s err ] && { cat err; fail "crash.jsonl: stderr not empty"; }
python3 check.py crash.html --has chart-durability \
    --absent "Throughput: no commitlab-bench/1 run with status ok in the input" "Second by second:" \
             "Filesystem matrix:" \
    --text "ok: durable, none lost" "as promised: not durable, may lose" "FAILED: client" \
           "commitlab crash --mode kill --engine lmdb --workload kv --sync none --clients 4" \
           "commitlab crash --replay 1 --mode sim" \
    || fail "crash.html"
python3 - crash.html <<'PY' || fail "durability colours"
import re, sys
doc = open(sys.argv[1]).read()
cls = re.findall(r'<td class="(good|warn|bad)">([^<]*)</td></tr>', doc)
assert ("bad", "FAILED") in [(c, t[:6]) for c, t in cls], cls
assert any(c == "warn" and t.startswith("as promised") for c, t in cls), cls
assert sum(c == "good" for c, t in cls) == 4, cls      # commit drop, commit torn, and the two kill rows
PY

# 3. everything, with a line from another host whose strings are hostile
python3 - filesystems.jsonl >hostile.jsonl <<'PY'
import json, sys
j = json.loads(open(sys.argv[1]).readline())
j["env"]["hostname"] = "<b>\"evil'&host</b>"
j["env"]["cpu_model"] = "<script>alert(1)</script>"
j["env"]["kernel"] = "bad\u0001control"
j["engine_settings"] = "]]><x>"
print(json.dumps(j))
PY
"$bin" report bench.jsonl crash.jsonl filesystems.jsonl hostile.jsonl -o all.html --title 'All <"&">' >out 2>err \
    || { cat err; fail "all: exit $?"; }
python3 check.py all.html --has $charts chart-durability \
    --text "Filesystem matrix" "ext4 on vm" "tmpfs on vm" "ext4 on <b>\"evil'&host</b>" \
           "commitlab group segment-size=256k checkpoint-bytes=1M, ext4 on vm" "All <\"&\">" \
           "Durability under crashes" \
    --not "<b>\"evil" "<script>alert" $'\x01' "<title>All <" "]]><x>" \
    || fail "all.html"
grep -q 'id="table-matrix"' all.html || fail "no filesystem matrix table"
grep -q 'background:hsl(' all.html || fail "the matrix cells are not coloured"

# ... and a real matrix file: filesystems by matrix.fs, its verdict lines,
# and the matrix command with its own options -- the native baseline's
# rows (every matrix runs them) not among the --fs values
python3 - matrix.jsonl matrix-native.jsonl <<'PY' || fail "adding a native row to matrix.jsonl"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [json.loads(l) for l in lines]
row = next(r for r in rows if (r.get("matrix") or {}).get("fs") == "ext4" and "metrics" in r)
row = json.loads(json.dumps(row))
row["matrix"].update(fs="native ext4", native=True, mkfs=None, mount_options_asked=None, image_size=None,
                     image_init=None, loop_device=None)
with open(sys.argv[2], "w") as f:
    f.write("\n".join(lines + [json.dumps(row)]) + "\n")
PY
"$bin" report matrix-native.jsonl -o matrix.html >out 2>err || { cat err; fail "matrix: exit $?"; }
python3 check.py matrix.html --has $charts \
    --text "commitlab commit segments=recycle, ext4" "tmpfs, commitlab: recycling" "ext4, commitlab: recycling" \
           "commitlab matrix --fs ext4,tmpfs --engine commitlab --sync commit --clients 1,4" \
           "--image-size 512M --image-init sparse --mount-opts ext4:noatime" "mkfs.ext4 -F" \
    || fail "matrix.html"
grep -q 'id="table-matrix"' matrix.html || fail "no heat table for the matrix"
! grep -o 'commitlab matrix --fs [^<]*' matrix.html | grep -q native ||
    fail "a matrix command names the native baseline in --fs: $(grep -o 'commitlab matrix --fs [^<]*' matrix.html | grep native)"

# 5. markdown, each chart an SVG file beside it
mkdir md
"$bin" report bench.jsonl crash.jsonl filesystems.jsonl --format md -o md/results.md >out 2>err \
    || { cat err; fail "md: exit $?"; }
[ -s md/results.md ] || fail "no md/results.md"
for c in tps p99 phases batches timeline durability; do
    [ -s "md/results-$c.svg" ] || fail "no md/results-$c.svg"
    grep -qF "](<results-$c.svg>)" md/results.md || fail "results.md does not show results-$c.svg"
    python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("id") == "chart-" + sys.argv[2], root.attrib
' "md/results-$c.svg" "$c" || fail "md/results-$c.svg does not parse"
done
for t in '| configuration | 1 client | 2 clients | 4 clients |' '| p50 µs | p99 µs | p99.9 µs | max µs |' \
         '| lock | append | apply | queue | write | sync | wakeup |' '| acknowledged commits lost |' \
         '## Filesystem matrix' '    commitlab bench --engine lmdb --sync commit --clients 1,4'; do
    grep -qF -- "$t" md/results.md || fail "results.md lacks: $t"
done
grep -q '<svg' md/results.md && fail "results.md has inline SVG"

# 6. errors
err=$("$bin" report no-such.jsonl 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -q 'no-such.jsonl' <<<"$err" \
    || fail "missing file: exit $rc: $err"
printf 'not json\n{"schema":"other/1"}\n\n' >junk.jsonl
err=$("$bin" report junk.jsonl -o junk.html 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -q 'junk.jsonl:1: not JSON' <<<"$err" && grep -q 'junk.jsonl:2: unknown schema' <<<"$err" \
    && grep -q 'no usable line' <<<"$err" || fail "no usable line: exit $rc: $err"
err=$("$bin" report 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "no file: exit $rc: $err"
err=$("$bin" report bench.jsonl --format pdf 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '--format' <<<"$err" || fail "--format pdf: exit $rc: $err"
err=$("$bin" report bench.jsonl --bogus 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '--bogus' <<<"$err" || fail "--bogus: exit $rc: $err"
out=$("$bin" report --help); rc=$?
[ $rc -eq 0 ] && grep -q '^usage: commitlab report' <<<"$out" || fail "report --help: exit $rc"
"$bin" --help | grep -q '^  report FILE.jsonl' || fail "commitlab --help does not list report"

# 7. the tour's report: beside its JSON lines, named on the last line
#    (tmpfs when there is one: short runs, and no load on the disk)
dir=$work/tour.d
[ -d /dev/shm ] && [ -w /dev/shm ] && shm=$(mktemp -d /dev/shm/report-tour.XXXXXX) && dir=$shm
mkdir -p out.d
"$bin" tour --seconds 0.1 --quiet --dir "$dir" --out "$work/out.d/t.jsonl" >tour.out 2>tour.err; rc=$?
[ $rc -eq 0 ] || { tail tour.out tour.err; fail "tour exited $rc"; }
[ "$(tail -1 tour.out)" = "report: $work/out.d/report.html" ] \
    || { tail -3 tour.out; fail "the tour's last line is not its report"; }
# its sentences follow from its numbers: the commits per sync it quotes
# are the JSON lines', and the reason given matches the figure
python3 - tour.out "$work/out.d/t.jsonl" <<'PY' || fail "the tour's explanation contradicts its numbers"
import json, re, sys
text = open(sys.argv[1]).read()
rows = [json.loads(l) for l in open(sys.argv[2])]
def cps(sync):
    for r in rows:
        c, m = r["config"], r["metrics"]
        if r["engine"] == "commitlab" and c["sync"] == sync and c["clients"] == 64 and "segments" not in c.get("varying", "") \
                and r["status"] == "ok" and m.get("syncs"):
            return m["txns"] / m["syncs"]
found = 0
for sync, head in (("commit", "At 64 clients commitlab --sync commit"), ("group", "Group commit at 64 clients"),
                   ("uring", "io_uring commit at 64 clients")):
    m = re.search(re.escape(head) + r"[^\n]*\n  ([0-9.]+) commits (shared each sync|per sync: each commit was made durable by a sync of its own)", text)
    if not m:
        continue
    found += 1
    quoted, why = float(m.group(1)), m.group(2)
    real = cps(sync)
    assert real is not None and abs(quoted - real) < 0.06, (sync, quoted, real)
    assert (why == "shared each sync") == (quoted >= 1.5), (sync, quoted, why)
assert found >= 1, text
PY
# the means of commits per sync its report shows are its lines' own
# commits_per_sync (commits over syncs), within 1%, not means of the
# histogram, whose last entry "257+" is no size
python3 - out.d/report.html "$work/out.d/t.jsonl" <<'PY' || fail "the tour's report: a mean of commits per sync its lines do not have"
import json, re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
svg = re.search(r'<svg[^>]*id="chart-batches".*?</svg>', doc, re.S).group(0)
shown = [float(m.replace(",", "")) for m in re.findall(r"<text[^>]*>[^<]*\bmean ([0-9][0-9,.]*)", svg)]
cps = [r["metrics"]["commits_per_sync"] for r in map(json.loads, open(sys.argv[2]))
       if r.get("status") == "ok" and r["engine"] == "commitlab" and r["metrics"].get("commits_per_sync")]
assert shown, "no mean in chart-batches"
for v in shown:
    assert any(abs(v - c) <= 0.01 * c for c in cps), (v, cps)
PY
# what each commit cost, for every engine of the tour: its lines' own
# context switches and file calls per commit, beside the engine's own
# syncs per commit where it counts them ('-' for LMDB, which does not)
python3 - out.d/report.html "$work/out.d/t.jsonl" <<'PY' || fail "the tour's report: what each commit cost"
import html, json, re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
t = re.search(r'<table id="table-costs">(.*?)</table>', doc, re.S)
assert t, "no table-costs"
heads = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", t.group(1))]
for h in ("voluntary cs/txn", "involuntary cs/txn", "file syncs/commit", "commits/file sync", "file writes/commit",
          "file bytes/commit", "engine's syncs/commit"):
    assert h in heads, (h, heads)
rows = [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in re.findall(r"<tr>(.*?)</tr>", t.group(1))]
rows = [r for r in rows if r]
lines = [json.loads(l) for l in open(sys.argv[2])]
lines = [l for l in lines if l.get("status") == "ok" and l.get("schema") == "commitlab-bench/1"]
def num(c):
    return float(c.replace(",", ""))
engines = set()
for r in rows:
    cell = dict(zip(heads, r))
    label, clients = cell["configuration"], int(cell["clients"])
    engine, sync = label.split()[:2]
    engines.add(engine)
    own = [l["metrics"] for l in lines
           if l["engine"] == engine and l["config"]["sync"] == sync and l["config"]["clients"] == clients]
    assert own, (label, clients)
    for h, k in (("voluntary cs/txn", "vcsw_per_txn"), ("file syncs/commit", "file_syncs_per_commit"),
                 ("file writes/commit", "file_writes_per_commit")):
        if cell[h] == "-": # not counted: commitlab's io_uring policy
            assert engine == "commitlab" and "uring" in label and all(m.get(k) is None for m in own), (label, h)
            continue
        v = num(cell[h])
        assert any(abs(v - m[k]) <= 0.01 * m[k] + 0.006 for m in own if m.get(k) is not None), (label, clients, h, v)
    if engine == "lmdb":
        assert cell["engine's syncs/commit"] == "-", (label, cell)
        if sync == "commit": # the data's fdatasync and the meta page's O_DSYNC write
            assert num(cell["file syncs/commit"]) >= 2 and cell["commits/file sync"] != "-", (label, cell)
assert {"commitlab", "lmdb"} <= engines, engines
PY
python3 check.py out.d/report.html --has chart-tps chart-p99 chart-percentiles chart-phases chart-batches \
    --absent "Second by second: no run at the largest client count has a per-second timeline" \
    --text "commitlab tour" "lmdb commit" "--clients 1,16,64 --duration 0.1" \
    || fail "the tour's report.html"

# 8. input that must not be trusted: a line of more than 1 MiB is named and
#    skipped (and the report's memory stays bounded), implausible figures
#    are named and skipped, a directory or a device is named as one, and no
#    SVG ever holds nan or inf
good=$(sed -n '/"status":"ok"/{p;q}' bench.jsonl)
[ -n "$good" ] || fail "no ok line in the fixture"
python3 - "$good" >hostile.jsonl <<'PY'
import json, sys
g = json.loads(sys.argv[1])
print("x" * (2 << 20))                                   # line 1: 2 MiB, no JSON at all
def v(f):
    j = json.loads(sys.argv[1]); f(j); print(json.dumps(j))
v(lambda j: j["config"].update(clients=4294967297))     # line 2
v(lambda j: j["metrics"].update(tps=1.7e308))            # line 3
def neg(j):
    for k, x in j["metrics"].items():
        if k.endswith("_us") and isinstance(x, (int, float)):
            j["metrics"][k] = -5.0; return
    j["metrics"]["p99_us"] = -5.0
v(neg)                                                   # line 4
print(sys.argv[1])                                       # line 5: good
PY
# the memory bound: 1 GB of address space, unless the binary is built
# with a sanitizer, whose shadow memory needs terabytes of it
vlimit=1000000
ldd "$bin" 2>/dev/null | grep -qE 'lib(a|t)san' && vlimit=unlimited
err=$( (ulimit -v $vlimit; "$bin" report hostile.jsonl -o hostile.html) 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] || fail "hostile input: exit $rc: $err"
grep -qx 'hostile.jsonl:1: longer than 1048576 bytes, skipped' <<<"$err" || fail "the long line is not named: $err"
grep -q '^hostile.jsonl:2: .*config.clients above 1024.*, skipped$' <<<"$err" || fail "clients 2^32+1 not named: $err"
grep -q '^hostile.jsonl:3: .*metrics.tps above 1e9.*, skipped$' <<<"$err" || fail "tps 1.7e308 not named: $err"
grep -q '^hostile.jsonl:4: .*metrics\..* is -5, negative, skipped$' <<<"$err" || fail "a negative figure not named: $err"
[ "$(grep -c 'skipped$' <<<"$err")" -eq 4 ] || fail "want 4 skipped lines: $err"
python3 - hostile.html <<'PY' || fail "hostile.html: nan or inf in an SVG number"
import re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
for svg in re.findall(r"<svg\b.*?</svg>", doc, re.S):
    for m in re.finditer(r'(?:x|y|x1|y1|x2|y2|cx|cy|width|height|d|points|transform)="([^"]*)"', svg):
        assert not re.search(r"nan|inf", m.group(1), re.I), m.group(0)
    assert "infG" not in svg and "nanG" not in svg
PY
err=$("$bin" report . -o dir.html 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q ': is a directory' <<<"$err" || fail "report DIR: exit $rc: $err"
err=$(timeout 10 "$bin" report /dev/zero -o zero.html 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q '/dev/zero: is a character device' <<<"$err" || fail "report /dev/zero: exit $rc: $err"
# a file of any size without a newline: read through, skipped, bounded memory
head -c $((64 << 20)) /dev/zero | tr '\0' 'y' >nonl.jsonl
err=$( (ulimit -v $vlimit; timeout 60 "$bin" report nonl.jsonl -o nonl.html) 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qx 'nonl.jsonl:1: longer than 1048576 bytes, skipped' <<<"$err" \
    || fail "64 MiB without a newline: exit $rc: $err"

# 9. labels stand alone: a line's label names every setting off its
#    engine's default (commitlab on an emulated 8 ms disk beside LMDB on
#    none: "commitlab commit emulated 8 ms", "lmdb commit"), and every line
#    carries its legend number at its end, for a chart printed in grey
python3 - bench.jsonl >labels.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    try:
        r = json.loads(l)
    except ValueError:
        continue
    if r.get("schema") != "commitlab-bench/1" or r.get("status") != "ok":
        continue
    if r["engine"] == "commitlab" and r["config"]["sync"] == "commit":
        r["config"]["sync_latency_us"] = 8000
    print(json.dumps(r))
PY
"$bin" report labels.jsonl -o labels.html 2>/dev/null || fail "report of labels.jsonl"
python3 - labels.html <<'PY' || fail "labels do not stand alone, or lines carry no end tags"
import re, sys, html
doc = open(sys.argv[1], encoding="utf-8").read()
svg = re.search(r'<svg[^>]*id="chart-tps".*?</svg>', doc, re.S).group(0)
texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
legend = [t for t in texts if re.match(r"\[\d+\] ", t)]
cc = [t for t in legend if " commitlab commit " in t + " "]
assert len(cc) == 1 and cc[0].endswith(" emulated 8 ms"), legend
assert any(t.split("] ", 1)[1] == "lmdb commit" for t in legend), legend
assert not any("emulated" in t for t in legend if t not in cc), legend
tags = re.findall(r'<text class="end-tag"[^>]*>\[(\d+)\]</text>', svg)
assert sorted(tags) == sorted(re.match(r"\[(\d+)\]", t).group(1) for t in legend), (tags, legend)
PY

# 10. a replay command for a crash row runs: a kill or cut row's model is
#     its mode's, which --model does not take
python3 - crash.jsonl >cut.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("status") == "failed" or r.get("first_failure"):
        r.update(mode="cut", model="cut", engine="lmdb")
        print(json.dumps(r))
        break
PY
[ -s cut.jsonl ] || fail "no failed crash row in the fixture"
"$bin" report cut.jsonl -o cut.html 2>/dev/null || fail "report of a cut row"
grep -q -- '--mode cut' cut.html && ! grep -q -- '--model cut' cut.html || fail "a cut row's replay command says --model cut"

# 11. the golden report: old lines read as they always have
mkdir golden.d
"$bin" report bench.jsonl crash.jsonl filesystems.jsonl matrix.jsonl --format md -o golden.d/results.md \
    >/dev/null 2>golden.err || { cat golden.err; fail "the golden report: exit $?"; }
# the parse error of the line cut short is jansson's text, which its
# versions word differently: that line's parenthesis, and nothing else
sed -E 's/^(- bench\.jsonl:6: not JSON) \(.*\)$/\1 (the JSON parser'"'"'s message)/' golden.d/results.md >golden.md
if [ "${CL_UPDATE_GOLDEN:-}" = 1 ]; then
    cp golden.md "$fx/report.golden.md" && echo "report: wrote $fx/report.golden.md"
fi
[ "$(grep -c "^- bench.jsonl:6: not JSON (the JSON parser's message)$" golden.md)" -eq 1 ] \
    || fail "the golden report: the skipped line is not where the placeholder goes"
cmp -s golden.md "$fx/report.golden.md" || {
    diff -u "$fx/report.golden.md" golden.md | head -40
    fail "report --format md of the fixtures differs from $fx/report.golden.md (CL_UPDATE_GOLDEN=1 rewrites it)"
}

# 12. a combination of no crash checked nothing: never "ok"
python3 - crash.jsonl >none.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("status") == "ok" and r.get("sync_durable"):
        for k in ("crashes", "crashes_mid_run", "acked_lost", "acked_lost_worst_crash", "unacked_survived"):
            r[k] = 0
        print(json.dumps(r))
        break
PY
[ -s none.jsonl ] || fail "no ok durable crash row in the fixture"
"$bin" report none.jsonl -o none.html 2>/dev/null || fail "report of a row of no crash"
python3 check.py none.html --has chart-durability --text "nothing checked: no crash ran" --not "ok: durable" "none lost" \
    || fail "a row of no crash: none.html"
grep -q '<td class="na">nothing checked: no crash ran</td></tr>' none.html || fail "a row of no crash is not grey"
"$bin" report none.jsonl --format md -o none.md 2>/dev/null || fail "report --format md of a row of no crash"
grep -q '| nothing checked: no crash ran |$' none.md && ! grep -q 'none lost' none.md \
    || fail "a row of no crash: none.md: $(grep '^|' none.md)"

# 13. counts are whole
python3 - crash.jsonl bench.jsonl >counts.jsonl <<'PY'
import json, sys
crash = json.loads(open(sys.argv[1]).readline())
def parse(l):
    try:
        return json.loads(l)
    except ValueError:
        return {}
bench = next(j for j in map(parse, open(sys.argv[2])) if j.get("schema") == "commitlab-bench/1" and j.get("status") == "ok")
def line(base, f):
    j = json.loads(json.dumps(base)); f(j); print(json.dumps(j))
line(crash, lambda j: j.update(acked_lost=0.5))                        # line 1
line(crash, lambda j: j.update(crashes=2.5))                           # line 2
line(bench, lambda j: j["metrics"].update(txns=10.5))                  # line 3
def tl(j):
    j["metrics"]["timeline"] = [{"t": 1, "tps": 100.0, "p99_us": 50.0, "segment_switches": 0, "checkpoints": 1.5}]
line(bench, tl)                                                        # line 4
line(bench, lambda j: j["env"].update(cores=2.5))                      # line 5
line(crash, lambda j: j.update(crashes=float(j["crashes"])))           # line 6: 20.0, read
line(bench, lambda j: None)                                            # line 7: read
PY
err=$("$bin" report counts.jsonl -o counts.html 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] || fail "counts: exit $rc: $err"
for want in 'counts.jsonl:1: commitlab-crash/1 line whose acked_lost is 0.5, not a whole count, skipped' \
            'counts.jsonl:2: commitlab-crash/1 line whose crashes is 2.5, not a whole count, skipped' \
            'counts.jsonl:3: commitlab-bench/1 line with metrics.txns is 10.5, not a whole count, skipped' \
            'counts.jsonl:4: commitlab-bench/1 line with metrics.timeline[0].checkpoints is 1.5, not a whole count, skipped' \
            'counts.jsonl:5: commitlab-bench/1 line with env.cores is 2.5, not a whole count, skipped'; do
    grep -qxF -- "$want" <<<"$err" || fail "counts: not said: $want: $err"
done
[ "$(wc -l <<<"$err")" -eq 5 ] || fail "counts: want 5 skipped lines: $err"
python3 check.py counts.html --has $charts chart-durability \
    --text "1 crash combination" "20 (" || fail "counts: the whole lines are not in the report"

# 14. control characters: escaped in the markdown, in code blocks and cells
python3 - bench.jsonl crash.jsonl >ctl.jsonl <<'PY'
import json, sys
def parse(l):
    try:
        return json.loads(l)
    except ValueError:
        return {}
bench = next(j for j in map(parse, open(sys.argv[1])) if j.get("schema") == "commitlab-bench/1" and j.get("status") == "ok")
bench["config"]["dir"] = "runs\r## not a heading"
bench["env"]["hostname"] = "host\x1b[31mred\x7f"
bench["env"]["kernel"] = "k\tv\nnext | cell"
bench["env"]["cpu_model"] = "cpu\x00"[:-1] + "\x01\x1f"
print(json.dumps(bench))
crash = json.loads(open(sys.argv[2]).readline())
crash["engine"] = "commitlab\r    evil command"
crash["segments"] = "fresh\x1b]0;title\x07"
print(json.dumps(crash))
PY
"$bin" report ctl.jsonl --format md -o ctl.md >/dev/null 2>ctl.err || { cat ctl.err; fail "ctl: exit $?"; }
python3 - ctl.md <<'PY' || fail "ctl.md: a control character, or a string not escaped"
import re, sys
md = open(sys.argv[1], "rb").read()
bad = [hex(b) for b in md if (b < 0x20 and b != 0x0a) or b == 0x7f]
assert not bad, "control bytes in the markdown: %s" % sorted(set(bad))
text = md.decode("utf-8")
# the code blocks: each command whole on its indented line, the '\r' escaped
assert re.search(r"^    commitlab bench .*--dir 'runs\\r## not a heading'", text, re.M), "the bench command"
assert re.search(r"^    commitlab crash --mode sim --engine 'commitlab\\r    evil command'", text, re.M), "the crash command"
assert not re.search(r"^(## not a heading|    evil command)", text, re.M), "a string ended a code block"
# the cells: escapes, and no row cut short
assert "host\\x1b\\[31mred\\x7f" in text, "the hostname cell"
assert "k\\tv\\nnext \\| cell" in text, "the kernel cell"
assert "cpu\\x01\\x1f" in text, "the CPU cell"
assert "fresh\\x1b\\]0;title\\x07" in text, "the segments cell"
for line in text.splitlines():
    if line.startswith("| field | value |") or not line.startswith("|"):
        continue
    assert line.endswith("|"), "a table row cut short: " + line
PY
"$bin" report ctl.jsonl -o ctl.html >/dev/null 2>&1 || fail "ctl: the HTML report"
python3 check.py ctl.html --has $charts chart-durability --text "host" --not $'\x1b' $'\x01' $'\x07' || fail "ctl.html"

echo "report: 14 cases passed"
