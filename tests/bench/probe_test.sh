#!/usr/bin/env bash
# probe_test.sh COMMITLAB SOURCE_DIR -- runs the real `commitlab probe` and
# checks what it promises: pg_test_fsync's layout (headings, row labels in
# order, "%13.3f ops/sec  %6.0f usecs/op" columns, n/a at "%21s"), that every
# section runs alone with --only and a fractional --seconds, that the JSON
# record parses and holds every row, that tmpfs is named in the verdict as
# holding no durability, that bad arguments exit 2 with one line naming the
# flag, and that no file is left behind (also after SIGINT); that
# --repeat N measures every row N times and prints it once, with the median
# and the lowest and highest ops/sec (and --repeat 1 prints what no
# --repeat does); that concurrent rows (threads, chains in flight) label
# their time per op per thread or chain, and serial rows never do.
# Exit 0: passed; 1: failed; 77: skipped (no tmpfs could be had).
set -u

BIN=${1:?usage: probe_test.sh COMMITLAB SOURCE_DIR}
SRC=${2:?usage: probe_test.sh COMMITLAB SOURCE_DIR}
SECS=0.05
FAILS=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/probe_test.XXXXXX") || exit 1
MNT=""
cleanup() {
    if [ -n "$MNT" ]; then
        umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
        rmdir "$MNT" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

PY=$(command -v python3 || true)

# Every row of every section: "        " + a 30-column label, then either the
# pg_test_fsync numbers (optionally followed by p50/p99/max) or n/a.
# "%13.3f" is exactly 13 columns (pg_test_fsync 9.4 and older printed 11);
# "%6.0f" is at least 6; "%21s" puts n/a and n/a* flush at column 59.
ROW_OK='^        .{30}[ 0-9]{9}\.[0-9]{3} ops/sec  [ 0-9]{5,}[0-9] usecs/op(  p50 [ 0-9]{5,}[0-9]  p99 [ 0-9]{5,}[0-9]  max [ 0-9]{5,}[0-9])?$'
ROW_NA='^        .{30}( {18}n/a| {17}n/a\*)( \(.*\))?$'
# A concurrent row (beyond pg_test_fsync: several threads or chains in
# flight): its time per op is per thread or chain, and says so.
ROW_CONC='^        .{30}[ 0-9]{9}\.[0-9]{3} ops/sec  [ 0-9]{5,}[0-9] usecs/op/(thread|chain)(  p50 [ 0-9]{5,}[0-9]  p99 [ 0-9]{5,}[0-9]  max [ 0-9]{5,}[0-9])?$'

# No file of the probe may be left in the directory it ran in.
check_clean() {
    if [ -n "$(ls -A "$1")" ]; then
        fail "$2: files left behind in the probe directory: $(ls -A "$1" | head -3)"
    fi
}

# ---- 1. pg_test_fsync's layout --------------------------------------------
D="$WORK/pg"
mkdir "$D"
if ! "$BIN" probe --dir "$D" --seconds "$SECS" --only pg --json "$WORK/pg.json" >"$WORK/pg.out" 2>"$WORK/pg.err"; then
    fail "probe --only pg exited non-zero: $(cat "$WORK/pg.err")"
fi
check_clean "$D" "--only pg"

# The skeleton of pg_test_fsync's output (PostgreSQL 9.5 and later), with
# each measured column written as <ops>: our output, normalised the same
# way, must match it line for line.
cat >"$WORK/pg.expect" <<'EOF'
0.05 seconds per test
O_DIRECT supported on this platform for open_datasync and open_sync.

Compare file sync methods using one 8kB write:
(in wal_sync_method preference order, except fdatasync is Linux's default)
        open_datasync                 <ops>
        fdatasync                     <ops>
        fsync                         <ops>
        fsync_writethrough                              n/a
        open_sync                     <ops>

Compare file sync methods using two 8kB writes:
(in wal_sync_method preference order, except fdatasync is Linux's default)
        open_datasync                 <ops>
        fdatasync                     <ops>
        fsync                         <ops>
        fsync_writethrough                              n/a
        open_sync                     <ops>

Compare open_sync with different write sizes:
(This is designed to compare the cost of writing 16kB in different write
open_sync sizes.)
         1 * 16kB open_sync write     <ops>
         2 *  8kB open_sync writes    <ops>
         4 *  4kB open_sync writes    <ops>
         8 *  2kB open_sync writes    <ops>
        16 *  1kB open_sync writes    <ops>

Test if fsync on non-write file descriptor is honored:
(If the times are similar, fsync() can sync data written on a different
descriptor.)
        write, fsync, close           <ops>
        write, close, fsync           <ops>

Non-sync'ed 8kB writes:
        write                         <ops>
EOF
# A filesystem without O_DIRECT prints n/a* for the open_* rows and a
# footnote, as pg_test_fsync does; both are normalised to <ops>.
sed -E -e 's/^(        .{30})([ 0-9]{9}\.[0-9]{3} ops\/sec  [ 0-9]{5,}[0-9] usecs\/op| {17}n\/a\*)$/\1<ops>/' \
    -e '/^\* This file system and its mount options do not support direct$/d' \
    -e '/^  I\/O, e.g. ext4 in journaled mode.$/d' "$WORK/pg.out" >"$WORK/pg.norm"
if diff -u "$WORK/pg.expect" "$WORK/pg.norm" >"$WORK/pg.diff"; then
    pass "pg_test_fsync layout: headings, labels, order, columns"
else
    fail "pg_test_fsync layout differs:"
    cat "$WORK/pg.diff"
fi
# the exact column widths, checked on the raw lines
while IFS= read -r line; do
    case "$line" in
    "        "*)
        if ! printf '%s\n' "$line" | grep -Eq "$ROW_OK|$ROW_NA"; then
            fail "row not in pg_test_fsync's column format: '$line'"
        fi
        ;;
    esac
done <"$WORK/pg.out"
# %13.3f ops/sec puts "ops/sec" at the same column on every measured row
cols=$(grep -E 'ops/sec' "$WORK/pg.out" | awk '{ print index($0, " ops/sec") }' | sort -u | wc -l)
[ "$cols" -eq 1 ] || fail "ops/sec is not in one column ($cols different columns)"
# byte for byte pg_test_fsync's printf("%13.3f ops/sec  %6.0f usecs/op"):
# each measured line is its own numbers printed again in that format, with
# nothing after them, and usecs/op is 1e6 / ops/sec of the row's record
if [ -n "$PY" ]; then
    "$PY" - "$WORK/pg.json" "$WORK/pg.out" <<'EOF' || fail "pg_test_fsync rows are not byte for byte its format"
import json, sys
rows = [r for r in json.loads(open(sys.argv[1]).read())["rows"] if r["status"] == "ok"]
lines = [l for l in open(sys.argv[2]).read().splitlines() if l.startswith("        ") and "ops/sec" in l]
assert len(rows) == len(lines) and rows, (len(rows), len(lines))
for r, l in zip(rows, lines):
    ops, us = float(l[38:51]), float(l[61:67])
    assert l[38:] == "%13.3f ops/sec  %6.0f usecs/op" % (ops, us), l
    assert abs(ops - r["ops_per_sec"]) <= 0.0011, (l, r)
    assert abs(us - 1e6 / r["ops_per_sec"]) <= 0.51, (l, r)
    assert r["concurrency"] is None and len(r["rounds"]) == 1, r
EOF
fi

# ---- 2. every section alone, with --only --------------------------------------
heading_of() {
    case "$1" in
    sync1) echo "Compare file sync methods using one 8kB write:" ;;
    sync2) echo "Compare file sync methods using two 8kB writes:" ;;
    opensync) echo "Compare open_sync with different write sizes:" ;;
    fdsync) echo "Test if fsync on non-write file descriptor is honored:" ;;
    nosync) echo "Non-sync'ed 8kB writes:" ;;
    latency) echo "Latency of one 8kB write per sync method:" ;;
    uring) echo "io_uring linked write->sync chains, one 8kB write each:" ;;
    zodb) echo "Syncs per transaction (the ZODB FileStorage experiment):" ;;
    segments) echo "WAL segment preparation (the wal_recycle experiment), 16MB segments:" ;;
    appends) echo "Many small appends (the XFS delaylog experiment), 200 files in one directory:" ;;
    overwrite) echo "Durable 8kB writes: appends against overwrites of a written file:" ;;
    verdict) echo "Verdict:" ;;
    esac
}
SECTIONS="sync1 sync2 opensync fdsync nosync latency uring zodb segments appends overwrite verdict"
for s in $SECTIONS; do
    D="$WORK/only-$s"
    mkdir "$D"
    out="$WORK/only-$s.out"
    if ! "$BIN" probe --dir "$D" --seconds "$SECS" --files 200 --only "$s" --json "$WORK/only-$s.json" >"$out" 2>"$WORK/only-$s.err"; then
        fail "--only $s exited non-zero: $(cat "$WORK/only-$s.err")"
        continue
    fi
    check_clean "$D" "--only $s"
    h=$(heading_of "$s")
    grep -Fxq "$h" "$out" || fail "--only $s: heading '$h' missing"
    # exactly one section: a blank line precedes each heading (and the
    # verdict's closing words)
    n=$(grep -c '^$' "$out")
    want=1
    [ "$s" = verdict ] && want=2
    [ "$n" -eq "$want" ] || fail "--only $s: expected one section, saw $n blank-line separated parts"
    rows=$(grep -c '^        ' "$out")
    [ "$rows" -ge 1 ] || fail "--only $s: no rows"
    if [ "$s" != verdict ]; then
        bad=$(grep '^        ' "$out" | grep -Ev "$ROW_OK|$ROW_CONC|$ROW_NA" || true)
        [ -z "$bad" ] || fail "--only $s: rows not in the column format: $bad"
        if grep -E '^        .{30} +failed' "$out" >/dev/null; then
            fail "--only $s: a row failed: $(grep failed "$out")"
        fi
    fi
    if [ -n "$PY" ]; then
        "$PY" - "$WORK/only-$s.json" "$s" <<'EOF' || fail "--only $1: JSON record"
import json, sys
rec = json.loads(open(sys.argv[1]).read())
sec = sys.argv[2]
assert rec["config"]["sections"] == [sec], rec["config"]["sections"]
if sec == "verdict":
    assert rec["verdict"]["durability"] in ("none", "suspect", "plausible", "unknown")
else:
    assert rec["rows"], "no rows"
    assert all(r["section"] == sec for r in rec["rows"])
EOF
    fi
    pass "--only $s"
done

# ---- 3. everything at once, and the JSON record ---------------------------------
D="$WORK/all"
mkdir "$D"
if ! "$BIN" probe --dir "$D" --seconds "$SECS" --files 200 --json - >"$WORK/all.json" 2>"$WORK/all.out"; then
    fail "full probe exited non-zero: $(tail -3 "$WORK/all.out")"
fi
check_clean "$D" "full run"
prev=0
for s in $SECTIONS; do
    h=$(heading_of "$s")
    at=$(grep -Fxn "$h" "$WORK/all.out" | head -1 | cut -d: -f1)
    if [ -z "$at" ]; then
        fail "full run: heading '$h' missing"
    elif [ "$at" -le "$prev" ]; then
        fail "full run: '$h' out of order"
    else
        prev=$at
    fi
done
if [ -n "$PY" ]; then
    if "$PY" -m json.tool "$WORK/all.json" >/dev/null &&
        "$PY" - "$WORK/all.json" "$WORK/all.out" <<'EOF'; then
import json, re, sys
rec = json.loads(open(sys.argv[1]).read())
table = open(sys.argv[2]).read().splitlines()
rows = rec["rows"]
printed = [l for l in table if re.match(r"^        .{30}( *\d+\.\d{3} ops/sec| +(n/a\*?|failed)( \(.*\))?$)", l)]
assert len(rows) == len(printed), (len(rows), len(printed))
for r, line in zip(rows, printed):
    assert line[8:38].rstrip() == r["label"], (line, r["label"])
    assert r["status"] in ("ok", "n/a", "n/a*", "failed")
    if r["status"] == "ok":
        assert r["ops"] > 0 and r["seconds"] > 0 and r["ops_per_sec"] > 0
        shown = float(line[38:51])
        assert abs(shown - r["ops_per_sec"]) <= 0.001 * r["ops_per_sec"] + 0.01, (shown, r)
secs = {r["section"] for r in rows}
for s in ["sync1", "sync2", "opensync", "fdsync", "nosync", "latency", "uring", "zodb", "segments", "appends",
          "overwrite"]:
    assert s in secs, s
assert [r["label"] for r in rows if r["section"] == "overwrite"] == [
    "append, fdatasync", "append, O_DSYNC", "overwrite, fdatasync", "overwrite, O_DSYNC"]
env = rec["environment"]
assert env["fs_type"] and env["kernel"]
# the device and what is under it, each with its write cache and FUA
chain = env["device_chain"]
assert isinstance(chain, list)
if env["device"]:
    assert chain and chain[0]["device"] == env["device"], chain
    assert env["fua"] in ("0", "1", None) and env["write_cache"] == chain[0]["write_cache"], env
    for i, d in enumerate(chain):
        assert d["fua"] in (True, False, None) and "write_cache" in d and d["disk"], d
        if i + 1 < len(chain):
            assert d["backing_file"], chain
    if not chain[-1]["backing_file"]:
        assert any(l.startswith("        write cache         ") for l in table), "no write cache line"
else:
    assert chain == [], chain
assert rec["config"]["seconds"] == 0.05 and rec["config"]["files"] == 200
assert rec["verdict"]["text"]
EOF
        pass "JSON record parses and matches the table row for row"
    else
        fail "JSON record"
    fi
    # --json FILE appends one line per run (JSON Lines)
    "$BIN" probe --dir "$D" --seconds "$SECS" --only nosync --json "$WORK/two.jsonl" >/dev/null 2>&1
    "$BIN" probe --dir "$D" --seconds "$SECS" --only nosync --json "$WORK/two.jsonl" >/dev/null 2>&1
    if "$PY" -c 'import json,sys; ls=open(sys.argv[1]).read().splitlines(); assert len(ls)==2; [json.loads(l) for l in ls]' "$WORK/two.jsonl"; then
        pass "--json FILE appends one JSON line per run"
    else
        fail "--json FILE appending"
    fi
else
    echo "note: no python3, the JSON record was not parsed"
fi

# ---- 4. bad arguments: exit 2, one line naming the flag ----------------------
badarg() {
    flag=$1
    shift
    "$BIN" probe "$@" >"$WORK/bad.out" 2>"$WORK/bad.err"
    rc=$?
    if [ "$rc" -ne 2 ]; then
        fail "probe $*: exit $rc, expected 2"
    elif [ "$(wc -l <"$WORK/bad.err")" -ne 1 ] || ! grep -Fq -- "$flag" "$WORK/bad.err"; then
        fail "probe $*: expected one line naming $flag, got: $(cat "$WORK/bad.err")"
    elif [ -s "$WORK/bad.out" ]; then
        fail "probe $*: printed on stdout"
    fi
}
badarg --seconds --seconds 0
badarg --seconds --seconds abc
badarg --seconds --seconds=-1
badarg --only --only nosuch
badarg --files --files 0
badarg --files --files 12x
badarg --json --json
badarg --dir --dir "$WORK/does-not-exist"
badarg --repeat --repeat 0
badarg --repeat --repeat 101
badarg --repeat --repeat 2x
badarg --repeat --repeat=-1
badarg --repeat --repeat
badarg --frobnicate --frobnicate
pass "bad arguments exit 2 naming the flag"

# ---- 5. SIGINT: the work directory goes away ------------------------------------
D="$WORK/sigint"
mkdir "$D"
"$BIN" probe --dir "$D" --seconds 1 --only pg >"$WORK/sigint.out" 2>&1 &
pid=$!
sleep 0.7
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT: exit $rc, expected 130"
check_clean "$D" "SIGINT"
pass "SIGINT cleans up"

# ---- 6. the docs describe every section ---------------------------------------
if [ -f "$SRC/docs/probe.md" ]; then
    for s in $SECTIONS; do
        grep -q -- "--only $s\b\|\`$s\`" "$SRC/docs/probe.md" || fail "docs/probe.md does not describe section $s"
    done
else
    fail "docs/probe.md missing"
fi

# ---- 7. --repeat: every row N times, in rounds, printed once ---------------------
D="$WORK/repeat"
mkdir "$D"
before=$FAILS
if ! "$BIN" probe --dir "$D" --seconds "$SECS" --files 200 --only nosync,latency,appends --repeat 3 \
    --json "$WORK/repeat.json" >"$WORK/repeat.out" 2>"$WORK/repeat.err"; then
    fail "--repeat 3 exited non-zero: $(cat "$WORK/repeat.err")"
fi
check_clean "$D" "--repeat 3"
grep -Fxq "3 rounds of every row, one after the other: each row shows the median ops/sec of" "$WORK/repeat.out" ||
    fail "--repeat 3: the header does not say what the rows show"
# each row once (the rounds before the last print nothing), each with its
# range: "  lowest %13.3f  highest %13.3f" after the usecs
for h in "Non-sync'ed 8kB writes:" "Latency of one 8kB write per sync method:" \
    "Many small appends (the XFS delaylog experiment), 200 files in one directory:"; do
    n=$(grep -cFx "$h" "$WORK/repeat.out")
    [ "$n" -eq 1 ] || fail "--repeat 3: heading '$h' printed $n times"
done
RANGE='  lowest [ 0-9]{9}\.[0-9]{3}  highest [ 0-9]{9}\.[0-9]{3}'
ROW_REP="^        .{30}[ 0-9]{9}\.[0-9]{3} ops/sec  [ 0-9]{5,}[0-9] usecs/op(/thread)?$RANGE(  p50 [ 0-9]{5,}[0-9]  p99 [ 0-9]{5,}[0-9]  max [ 0-9]{5,}[0-9])?$"
bad=$(grep '^        ' "$WORK/repeat.out" | grep -Ev "$ROW_REP" || true)
[ -z "$bad" ] || fail "--repeat 3: rows not in the repeat format: $bad"
[ "$(grep -c '^        ' "$WORK/repeat.out")" -eq 8 ] || fail "--repeat 3: expected 8 rows: $(cat "$WORK/repeat.out")"
if [ -n "$PY" ]; then
    "$PY" - "$WORK/repeat.json" "$WORK/repeat.out" <<'EOF' || fail "--repeat 3: JSON record of the rounds"
import json, statistics, sys
rec = json.loads(open(sys.argv[1]).read())
assert rec["config"]["repeat"] == 3, rec["config"]
lines = [l for l in open(sys.argv[2]).read().splitlines() if l.startswith("        ")]
assert len(rec["rows"]) == len(lines) == 8
for r, l in zip(rec["rows"], lines):
    assert r["status"] == "ok", r
    rounds = r["rounds"]
    assert len(rounds) == 3 and all(x["status"] == "ok" and x["ops"] > 0 for x in rounds), r
    v = [x["ops_per_sec"] for x in rounds]
    for x in rounds:
        assert abs(x["ops_per_sec"] - x["ops"] / x["seconds"]) <= 1e-6 * x["ops_per_sec"], x
    assert abs(r["ops_per_sec_min"] - min(v)) <= 1e-6 * min(v), r
    assert abs(r["ops_per_sec_max"] - max(v)) <= 1e-6 * max(v), r
    assert abs(r["ops_per_sec_median"] - statistics.median(v)) <= 1e-6 * max(v), r
    assert r["ops_per_sec"] == r["ops_per_sec_median"], r
    assert r["ops"] == sum(x["ops"] for x in rounds), r
    # the table shows the median, then the lowest and the highest
    shown = float(l[38:l.index(" ops/sec")])
    lo, hi = float(l.split(" lowest ")[1].split()[0]), float(l.split(" highest ")[1].split()[0])
    assert abs(shown - r["ops_per_sec"]) <= 0.0011 and abs(lo - min(v)) <= 0.0011 and abs(hi - max(v)) <= 0.0011, (l, r)
    assert lo <= shown <= hi, l
    if r["p50_usecs"] is not None:
        assert abs(r["p50_usecs"] - statistics.median(x["p50_usecs"] for x in rounds)) <= 1e-6 * r["p50_usecs"] + 1e-9, r
EOF
fi
[ "$FAILS" -ne "$before" ] || pass "--repeat 3: every row measured in 3 rounds, printed once with median, lowest and highest"
# --repeat 1 is the default: the same lines, numbers aside
"$BIN" probe --dir "$D" --seconds "$SECS" --only nosync,uring --repeat 1 >"$WORK/rep1.out" 2>&1 ||
    fail "--repeat 1 exited non-zero: $(cat "$WORK/rep1.out")"
"$BIN" probe --dir "$D" --seconds "$SECS" --only nosync,uring >"$WORK/rep0.out" 2>&1 ||
    fail "probe without --repeat exited non-zero: $(cat "$WORK/rep0.out")"
norm() { sed -E 's/[0-9]+(\.[0-9]+)?/N/g; s/ +/ /g' "$1"; }
if [ "$(norm "$WORK/rep1.out")" = "$(norm "$WORK/rep0.out")" ] && ! grep -q lowest "$WORK/rep1.out"; then
    pass "--repeat 1 prints what the default does"
else
    fail "--repeat 1 differs from the default: $(diff <(norm "$WORK/rep0.out") <(norm "$WORK/rep1.out"))"
fi
check_clean "$D" "--repeat 1"

# ---- 8. concurrent rows say their time is per thread or per chain -----------------
# The rows with several threads (appends) or chains in flight (uring, 8 in
# flight) measure throughput over all of them: usecs/op/thread (or /chain)
# = streams / (ops/sec), and the JSON's usecs_per_op is null for them; every
# other row is serial, a plain usecs/op = 1 / (ops/sec).
if [ -n "$PY" ]; then
    if "$PY" - "$WORK/all.json" "$WORK/all.out" <<'EOF'; then
import json, re, sys
rec = json.loads(open(sys.argv[1]).read())
table = open(sys.argv[2]).read().splitlines()
printed = [l for l in table if re.match(r"^        .{30}( *\d+\.\d{3} ops/sec| +(n/a\*?|failed)( \(.*\))?$)", l)]
assert len(printed) == len(rec["rows"])
seen = set()
for r, l in zip(rec["rows"], printed):
    if r["status"] != "ok":
        continue
    want = None
    if r["section"] == "appends":
        want = (4, "thread")
    elif r["section"] == "uring" and "8 in flight" in r["label"]:
        want = (8, "chain")
    us = float(re.search(r"ops/sec +(\d+) usecs/op", l).group(1))
    if want:
        seen.add(want[1])
        c = r["concurrency"]
        assert c and (c["streams"], c["unit"]) == want, (r["label"], c)
        assert re.search(r" usecs/op/%s(  |$)" % want[1], l), l
        assert r["usecs_per_op"] is None, r
        assert abs(c["usecs_per_op"] - want[0] * 1e6 / r["ops_per_sec"]) <= 1e-6 * c["usecs_per_op"], r
        assert abs(us - c["usecs_per_op"]) <= 0.51, (l, c)
    else:
        assert r["concurrency"] is None, r
        assert re.search(r" usecs/op(  |$)", l), l
        assert abs(us - r["usecs_per_op"]) <= 0.51, (l, r)
        assert abs(r["usecs_per_op"] - 1e6 / r["ops_per_sec"]) <= 1e-6 * r["usecs_per_op"], r
assert "thread" in seen, "no appends row measured"
EOF
        pass "concurrent rows: usecs/op/thread and /chain; serial rows: usecs/op"
    else
        fail "concurrent rows are not labelled per thread or chain"
    fi
fi

# ---- 9. tmpfs is named in the verdict -------------------------------------------
skipped=0
T=""
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && T=$(mktemp -d /dev/shm/probe_test.XXXXXX 2>/dev/null); then
    :
elif [ "$(id -u)" -eq 0 ] && MNT=$(mktemp -d "${TMPDIR:-/tmp}/probe_tmpfs.XXXXXX") &&
    mount -t tmpfs -o size=64m tmpfs "$MNT" 2>/dev/null; then
    T="$MNT"
else
    MNT=""
    skipped=1
fi
if [ "$skipped" -eq 0 ]; then
    "$BIN" probe --dir "$T" --seconds "$SECS" --only verdict --json "$WORK/tmpfs.json" >"$WORK/tmpfs.out" 2>&1 ||
        fail "probe on tmpfs exited non-zero: $(cat "$WORK/tmpfs.out")"
    grep -Eq '^        filesystem +tmpfs ' "$WORK/tmpfs.out" || fail "verdict does not name tmpfs: $(cat "$WORK/tmpfs.out")"
    tr '\n' ' ' <"$WORK/tmpfs.out" | tr -s ' ' | grep -q "no durability: data lives in memory" ||
        fail "verdict on tmpfs does not say 'no durability: data lives in memory'"
    if [ -n "$PY" ]; then
        "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["verdict"]["durability"]=="none" and r["environment"]["in_memory"]' "$WORK/tmpfs.json" ||
            fail "tmpfs JSON verdict is not durability=none"
    fi
    check_clean "$T" "tmpfs"
    [ "$T" = "$MNT" ] || rmdir "$T"
    pass "tmpfs named in the verdict: no durability"
fi

if [ "$FAILS" -ne 0 ]; then
    echo "probe_test: $FAILS failure(s)"
    exit 1
fi
if [ "$skipped" -eq 1 ]; then
    echo "probe_test: no tmpfs available (no /dev/shm tmpfs, not root): skipped"
    exit 77
fi
echo "probe_test: all passed"
exit 0
