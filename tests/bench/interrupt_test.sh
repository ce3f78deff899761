#!/usr/bin/env bash
# interrupt_test.sh COMMITLAB -- a command stopped by SIGINT or SIGTERM says
# what it measured, as fio does ("fio: terminating on signal 2"):
#  1. bench, SIGINT after its first run finished and during the second:
#     exit 130; one line on stderr naming the signal, the run (2 of 3, its
#     label) and how far it got; the finished run's row and JSON line as
#     ever; the interrupted run's row marked INTERRUPTED with its figures,
#     and its JSON line with status "interrupted" and what it measured
#     (transactions, seconds under the 3 asked, tps over them, latencies);
#     no third run; every line whole JSON; the run directory gone;
#  2. bench, SIGTERM in its only run: exit 143 and the same, by SIGTERM;
#  3. crash --mode sim and --mode kill (and cut), SIGINT during the
#     campaign: exit 130; one line naming the combination and the crashes
#     done of those asked; the combination's row marked INTERRUPTED with
#     the crashes done, the same count as the "N crashes in" line and its
#     JSON line (status "interrupted"); no child process, directory or
#     journal left;
#  4. probe, SIGINT in a timed row: exit 130, one line, the --json record
#     written with the rows so far, the last one "interrupted", and its
#     work directory gone; and SIGTERM to probe --repeat 3, in whichever
#     round it lands (timed for the second): exit 143; one line naming the
#     round and the row; the record with "round", every row the first
#     round began with its rounds so far (those before the stop one more
#     than those after), only the row in progress interrupted, in its
#     last round; the table printed all the same, each of those rows once
#     with its median, lowest and highest over its finished rounds, a
#     note where fewer than 3, the row in progress marked with its round;
#  5. tour, SIGINT after its first row: exit 130, one line, the rows so far
#     in tour.jsonl with the last one interrupted, no report drawn, its
#     directory gone;
#  6. report reads the interrupted lines: the bench run in a table of its
#     own, labelled, outside the medians; the crash row labelled.
# (matrix: interrupt_matrix_test.sh, which needs root.)
# Exit 77 when python3 is missing.
set -u
bin=${1:?usage: interrupt_test.sh COMMITLAB}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
pids=()
kids_seen=()
trap 'for p in "${pids[@]}" "${kids_seen[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
cd "$work" || exit 1

# one_line FILE REGEX: FILE (stderr) is exactly one line, matching REGEX.
one_line() {
    [ "$(wc -l <"$1")" -eq 1 ] && grep -Eq "$2" "$1" || fail "$1: want one line matching /$2/, got: $(cat "$1")"
}

# jsonl FILE PYTHON: every line of FILE is whole JSON (and the file ends
# with a newline); PYTHON then asserts on L, the list of objects.
jsonl() {
    python3 - "$1" "$2" <<'PY' || fail "$1: $(cat "$1")"
import json, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n"), "the last line is cut short"
L = [json.loads(l) for l in text.splitlines()]
exec(sys.argv[2])
PY
}

# ---- 1. bench: SIGINT during the second of three runs ----------------------
"$bin" bench --duration 3 --warmup 0 --no-preload --clients 1,2,4 --dir b --out b.jsonl --quiet >b.out 2>b.err &
b=$!
pids+=("$b")
for _ in $(seq 600); do [ -s b.jsonl ] && break; sleep 0.1; done
[ -s b.jsonl ] || fail "bench: the first run did not finish in 60 s"
sleep 1 # the second run is measuring (no preload, no warm-up)
kill -INT "$b"; wait "$b"; rc=$?
[ $rc -eq 130 ] || fail "bench after SIGINT: exit $rc: $(cat b.err)"
one_line b.err '^commitlab bench: interrupted by SIGINT during run 2 of 3 \(commitlab --sync commit --clients 2\) after [0-9]+\.[0-9] s of 3 s$'
grep -Eq '^commitlab +commit +1 +[0-9]+\.[0-9]{3} +[0-9]+ ' b.out && ! grep -E '^commitlab +commit +1 ' b.out | grep -q INTERRUPTED \
    || fail "bench: no whole row for the finished run: $(cat b.out)"
grep -Eq '^commitlab +commit +2 +[0-9]+\.[0-9]{3} +[0-9]+ .* INTERRUPTED by SIGINT after [0-9]+\.[0-9] s of 3 s; ' b.out \
    || fail "bench: no INTERRUPTED row with figures for the second run: $(cat b.out)"
! grep -Eq '^commitlab +commit +4 ' b.out || fail "bench: the third run ran: $(cat b.out)"
[ "$(wc -l <b.out)" -eq 3 ] || fail "bench: want the header and two rows: $(cat b.out)"
jsonl b.jsonl '
assert len(L) == 2, len(L)
ok, st = L
assert ok["status"] == "ok" and ok["config"]["clients"] == 1 and ok["interrupted"] is None, ok["status"]
assert ok["metrics"]["txns"] > 0
assert st["status"] == "interrupted", st["status"]
assert st["config"]["clients"] == 2 and st["run"] == 2 and st["runs"] == 3
assert st["interrupted"] == {"signal": "SIGINT", "during": "measured phase"}, st["interrupted"]
assert st["reason"].startswith("interrupted by SIGINT after ") and st["reason"].endswith(" s of 3 s"), st["reason"]
m = st["metrics"]
assert m["txns"] > 0 and 0 < m["seconds"] < 3, (m["txns"], m["seconds"])
assert abs(m["tps"] - m["txns"] / m["seconds"]) <= 1e-6 * m["tps"], (m["tps"], m["txns"], m["seconds"])
assert 0 < m["latency_us"]["p50"] <= m["latency_us"]["p99"] <= m["latency_us"]["max"], m["latency_us"]
assert m["syncs"] > 0 and m["verified"] is None
'
[ ! -e b ] || fail "bench after SIGINT left $(find b)"

# ---- 2. bench: SIGTERM in its only run ---------------------------------------
"$bin" bench --duration 30 --warmup 0 --no-preload --dir t --out t.jsonl --quiet >t.out 2>t.err &
b=$!
pids+=("$b")
sleep 1.5
kill -TERM "$b"; wait "$b"; rc=$?
[ $rc -eq 143 ] || fail "bench after SIGTERM: exit $rc: $(cat t.err)"
one_line t.err '^commitlab bench: interrupted by SIGTERM during run 1 of 1 \(commitlab --sync commit --clients 1\) (after [0-9]+\.[0-9] s of 30 s|in its warm-up .*|while opening .*)$'
grep -q 'INTERRUPTED by SIGTERM\|interrupted by SIGTERM' t.out || fail "bench after SIGTERM: no interrupted row: $(cat t.out)"
jsonl t.jsonl '
assert len(L) == 1 and L[0]["status"] == "interrupted", [l["status"] for l in L]
assert L[0]["interrupted"]["signal"] == "SIGTERM", L[0]["interrupted"]
'
[ ! -e t ] || fail "bench after SIGTERM left $(find t)"

# ---- 3. crash: SIGINT during a campaign, in each mode ---------------------------
for mode in sim kill cut; do
    model=$([ $mode = sim ] && echo "--model drop")
    "$bin" crash --mode $mode $model --sync commit --iterations 1000000 --dir c$mode --out c$mode.jsonl --quiet \
        >c$mode.out 2>c$mode.err &
    b=$!
    pids+=("$b")
    # sim: a few seconds; kill and cut: until children past the three
    # calibration runs' (two each) were seen, so that crashes were done
    seen=0
    end=$((SECONDS + 30))
    if [ $mode = sim ]; then
        sleep 3
    else
        declare -A kids=()
        while [ $SECONDS -lt $end ] && [ ${#kids[@]} -lt 8 ]; do
            for k in $(pgrep -P "$b"); do kids[$k]=1; kids_seen+=("$k"); done
            sleep 0.02
        done
        seen=${#kids[@]}
        unset kids
    fi
    kill -INT "$b"; wait "$b"; rc=$?
    [ $rc -eq 130 ] || fail "crash --mode $mode after SIGINT: exit $rc: $(cat c$mode.err)"
    m=$([ $mode = sim ] && echo "--model drop" || echo "--mode $mode")
    one_line c$mode.err "^commitlab crash: interrupted by SIGINT during combination 1 of 1 \\(commitlab kv --sync commit --sync-method fdatasync $m, 4 clients\\) after [0-9]+ of 1000000 crashes \\([0-9]+\\.[0-9] s\\)$"
    n=$(sed -nE 's/^([0-9]+) crashes in [0-9.]+ s: .*/\1/p' c$mode.out)
    [ -n "$n" ] || fail "crash --mode $mode: no 'N crashes in' line: $(cat c$mode.out)"
    grep -Eq "^commitlab +commit .* $n +[0-9]+ +[0-9]+ .*INTERRUPTED by SIGINT after $n of 1000000 crashes \\([0-9.]+ s\\): (ok|FAILED)" \
        c$mode.out || fail "crash --mode $mode: no INTERRUPTED row with its $n crashes: $(cat c$mode.out)"
    grep -q "after $n of 1000000 crashes" c$mode.err || fail "crash --mode $mode: the line does not say $n crashes"
    if [ $mode = sim ] || [ "$seen" -ge 8 ]; then
        [ "$n" -ge 1 ] || fail "crash --mode $mode: no crash done before the signal"
    fi
    jsonl c$mode.jsonl "
assert len(L) == 1, len(L)
r = L[0]
assert r['status'] == 'interrupted' and r['mode'] == '$mode', (r['status'], r['mode'])
assert r['crashes'] == $n, r['crashes']
assert r['interrupted']['signal'] == 'SIGINT' and r['interrupted']['crashes_asked'] == 1000000, r['interrupted']
assert r['reason'].startswith('interrupted by SIGINT after $n of 1000000 crashes'), r['reason']
"
    [ -z "$(ls -d c$mode c$mode/* 2>/dev/null)" ] || fail "crash --mode $mode after SIGINT left $(find c$mode)"
    for k in "${kids_seen[@]}"; do
        kill -0 "$k" 2>/dev/null && fail "crash --mode $mode left its child $k running"
    done
done

# ---- 4. probe: SIGINT in a timed row ---------------------------------------------
mkdir pd
"$bin" probe --dir pd --seconds 2 --only pg --json p.json >p.out 2>p.err &
b=$!
pids+=("$b")
sleep 1
kill -INT "$b"; wait "$b"; rc=$?
[ $rc -eq 130 ] || fail "probe after SIGINT: exit $rc: $(cat p.err)"
one_line p.err "^commitlab probe: interrupted by SIGINT (during the row '[^']+' \\(.*\\) after [0-9]+\\.[0-9] s of 2 s, [0-9]+ rows? done before it|after [0-9]+ rows?, .*|before its first row)\$"
jsonl p.json '
assert len(L) == 1, len(L)
r = L[0]
assert r["interrupted"] == {"signal": "SIGINT"}, r["interrupted"]
assert r["verdict"] is None
st = [x["status"] for x in r["rows"]]
assert st.count("interrupted") <= 1 and (not st or "interrupted" not in st[:-1]), st
if st and st[-1] == "interrupted" and r["rows"][-1].get("ops"):
    x = r["rows"][-1]
    assert x["seconds"] < 2 and x["ops_per_sec"] > 0, x
'
if grep -q "during the row" p.err; then
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["rows"][-1]["status"] == "interrupted"' p.json \
        || fail "probe: the line names a row, the JSON has none interrupted"
    grep -q "(interrupted after\|interrupted (after" p.out || fail "probe: the row is not marked interrupted: $(cat p.out)"
fi
[ -z "$(ls -A pd)" ] || fail "probe after SIGINT left $(ls -A pd)"

# probe --repeat 3: 3 timed rows of 1 s per round after the 16 MiB file,
# so 4.5 s is most likely inside round 2; what is checked holds wherever
# the signal lands (the line says which round, the rest follows from it)
"$bin" probe --dir pd --seconds 1 --only fdsync,nosync --repeat 3 --json pr.json >pr.out 2>pr.err &
b=$!
pids+=("$b")
sleep 4.5
kill -TERM "$b"; wait "$b"; rc=$?
[ $rc -eq 143 ] || fail "probe --repeat after SIGTERM: exit $rc: $(cat pr.err)"
one_line pr.err "^commitlab probe: interrupted by SIGTERM (during the row '[^']+' \\(.*\\) in round [123] of 3 after [0-9]+\\.[0-9] s of 1 s, [0-9]+ rows? of that round done before it|in round [123] of 3 after [0-9]+ rows? of it, the last '[^']+' \\(.*\\)|in round [123] of 3, before its first row)\$"
[ -z "$(ls -A pd)" ] || fail "probe --repeat after SIGTERM left $(ls -A pd)"
python3 - pr.json pr.out pr.err <<'PY' || fail "probe --repeat after SIGTERM: $(cat pr.out pr.err)"
import json, re, statistics, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n") and len(text.splitlines()) == 1, "want one whole JSON line"
rec = json.loads(text)
table = open(sys.argv[2]).read().splitlines()
line = open(sys.argv[3]).read()
R = int(re.search(r" in round ([123]) of 3", line).group(1))
assert rec["config"]["repeat"] == 3
assert rec["interrupted"] == {"signal": "SIGTERM", "round": R}, rec["interrupted"]
assert rec["verdict"] is None
rows = rec["rows"]
labels = ["write, fsync, close", "write, close, fsync", "write"]
assert [r["label"] for r in rows] == labels[:len(rows)], [r["label"] for r in rows]
assert R == 1 or len(rows) == 3, "a later round with rows the first did not begin"
n = [len(r["rounds"]) for r in rows]
# the rows before the stop have R rounds, those after R - 1; every round ok
# but the row in progress's last, which is "interrupted"
assert all(k in (R - 1, R) for k in n) and n == sorted(n, reverse=True), (R, n)
cut = [i for i, r in enumerate(rows) if r["status"] == "interrupted"]
assert len(cut) <= 1, cut
m = re.search(r"during the row '([^']+)'", line)
if m:
    assert cut and rows[cut[0]]["label"] == m.group(1), (cut, m.group(1))
    assert n[cut[0]] == R and (cut[0] + 1 == len(rows) or n[cut[0] + 1] == R - 1), (cut, n)
else:
    assert not cut, cut
for i, r in enumerate(rows):
    rounds = r["rounds"]
    for k, x in enumerate(rounds):
        want = "interrupted" if i in cut and k == len(rounds) - 1 else "ok"
        assert x["status"] == want, (r["label"], k, x)
    done = [x["ops_per_sec"] for x in rounds if x["status"] == "ok"]
    if done:
        assert r["ops_per_sec"] == r["ops_per_sec_median"], r
        assert abs(r["ops_per_sec_median"] - statistics.median(done)) <= 1e-6 * max(done), (r, done)
        assert abs(r["ops_per_sec_min"] - min(done)) <= 1e-6 * min(done), (r, done)
        assert abs(r["ops_per_sec_max"] - max(done)) <= 1e-6 * max(done), (r, done)
    elif i in cut and rounds[-1].get("ops"):
        assert r["ops_per_sec"] == rounds[-1]["ops_per_sec"] and r["seconds"] < 1, r
# the table: each of these rows once, in the repeat format, with its median,
# lowest and highest; "(over k of 3 rounds)" where fewer than 3 finished,
# the row in progress marked with its round
assert table.count("Test if fsync on non-write file descriptor is honored:") == 1, table
nosync = table.count("Non-sync'ed 8kB writes:")
assert nosync == 1 if len(rows) == 3 else nosync <= 1, table
printed = [l for l in table if l.startswith("        ")]
assert len(printed) == len(rows), (printed, rows)
NUM = r"[ 0-9]{9}\.[0-9]{3} ops/sec  [ 0-9]{5,}[0-9] usecs/op  lowest [ 0-9]{9}\.[0-9]{3}  highest [ 0-9]{9}\.[0-9]{3}"
for i, (r, l) in enumerate(zip(rows, printed)):
    assert l[8:38].rstrip() == r["label"], (l, r["label"])
    done = sum(x["status"] == "ok" for x in r["rounds"])
    if i in cut:
        if done:
            tail = r"  \(over %d of 3 rounds; round %d interrupted after [0-9]+\.[0-9] s\)" % (done, R)
        elif r["rounds"][-1].get("ops"):
            tail = r"  \(interrupted in round %d of 3 after [0-9]+\.[0-9] s\)" % R
        else:
            assert re.fullmatch(r"        .{30} {10}interrupted \(in round %d of 3 after [0-9]+\.[0-9] s, before any "
                                r"operation completed\)" % R, l), l
            continue
    else:
        tail = "" if done == 3 else r"  \(over %d of 3 rounds\)" % done
    assert re.fullmatch("        .{30}" + NUM + tail, l), (l, tail)
    shown = float(l[38:l.index(" ops/sec")])
    lo, hi = float(l.split(" lowest ")[1].split()[0]), float(l.split(" highest ")[1].split()[0])
    assert abs(shown - r["ops_per_sec"]) <= 0.0011, (l, r)
    assert abs(lo - r["ops_per_sec_min"]) <= 0.0011 and abs(hi - r["ops_per_sec_max"]) <= 0.0011, (l, r)
PY

# ---- 5. tour: SIGINT after its first row ---------------------------------------------
"$bin" tour --seconds 0.5 --dir td --out tour.jsonl --quiet >tour.out 2>tour.err &
b=$!
pids+=("$b")
for _ in $(seq 600); do [ -s tour.jsonl ] && break; sleep 0.1; done
[ -s tour.jsonl ] || fail "tour: the first row did not finish in 60 s"
sleep 0.5
kill -INT "$b"; wait "$b"; rc=$?
[ $rc -eq 130 ] || fail "tour after SIGINT: exit $rc: $(cat tour.err)"
one_line tour.err '^commitlab tour: interrupted by SIGINT (during run [0-9]+ of [0-9]+ \(.*\) .*|with [0-9]+ of [0-9]+ done); its run directories are removed$'
jsonl tour.jsonl '
assert len(L) >= 1 and L[0]["status"] != "interrupted", [l["status"] for l in L]
assert [l["status"] for l in L[:-1]].count("interrupted") == 0
'
if grep -q "during run" tour.err; then
    python3 -c 'import json,sys; L=open(sys.argv[1]).read().splitlines(); assert json.loads(L[-1])["status"] == "interrupted"' \
        tour.jsonl || fail "tour: the line names a run, the JSON's last line is not interrupted"
fi
[ ! -e td ] && [ ! -e report.html ] || fail "tour after SIGINT left $(ls -d td report.html 2>/dev/null)"

# ---- 6. the report reads them ------------------------------------------------------
"$bin" report b.jsonl csim.jsonl --format md -o r.md >/dev/null 2>r.err || fail "report: $(cat r.err)"
[ ! -s r.err ] || fail "report skipped a line: $(cat r.err)"
grep -q '^1 measured run of 1 configuration' r.md || fail "report: the interrupted run is among the measured: $(head -3 r.md)"
grep -q '^### Interrupted runs' r.md || fail "report: no Interrupted runs table"
grep -Eq '^\| b\.jsonl:2 \| commitlab kv --sync commit, 2 clients \| interrupted by SIGINT after [0-9.]+ s of 3 s \| [0-9,]+ \|' r.md \
    || fail "report: the interrupted run's row: $(grep -A6 'Interrupted runs' r.md)"
grep -Eq '\| interrupted after [0-9]+ of 1000000 crashes: ' r.md || fail "report: the crash row is not labelled interrupted"

echo "interrupt: 6 cases passed"
