#!/usr/bin/env bash
# plugin_test.sh COMMITLAB PLUGIN_DIR -- an engine plugin in `commitlab
# bench` and `commitlab crash`, as a user runs one: the example store
# (examples/applog.c) benchmarked beside LMDB -- kv and tpcb, --verify,
# --rate, --repeat, --sync-latency paid at its fdatasync, its file calls
# counted as its own counters say -- listed by
# --list-engines with its mappings, in `commitlab report`; kill-crashed
# and power-cut (--mode cut) and held to its claims: ok where it claims
# survival, allowed to lose where it claims none, and its
# early-acknowledging variant FAILED where it claims survival.  Then the
# bad plugins (tests/bench/plugins/faulty.c): each refused with one line
# and exit 2, or failing only its own run, never crashing commitlab; a
# store that cannot open refused before anything runs; a plugin that calls
# exit() while it loads or opens refused in one line with its status,
# nothing run, and one that prints while it loads or opens kept out of
# the table; and a store that makes a call the cut cannot model failing
# its cut campaign by that call's name; a table without commit_async (the
# example's) n/a under --pipeline 2, by name.
set -u
# The faulty plugins crash on purpose, and the test checks that commitlab
# names the signal: a sanitizer's own SIGSEGV handler would turn that death
# into an exit of its own (ThreadSanitizer's exits 66).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0"
cl=$1
pd=$2
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# run NAME EXPECTED_STATUS ARGS...: the command, its output in NAME.out/.err
run() {
    local name=$1 want=$2
    shift 2
    "$cl" "$@" >"$name.out" 2>"$name.err"
    local got=$?
    [ "$got" -eq "$want" ] || fail "$name: exit $got, wanted $want: $(head -c 600 "$name.err") $(tail -c 600 "$name.out")"
}
# one_line NAME PATTERN: stderr is one line and matches
one_line() {
    [ "$(wc -l <"$1.err")" -eq 1 ] || fail "$1: stderr is not one line: $(cat "$1.err")"
    grep -q -- "$2" "$1.err" || fail "$1: stderr does not say '$2': $(cat "$1.err")"
}
jq_py() { python3 -c "$1" "$2"; }

# ---- bench: the example beside LMDB ----------------------------------------
run bench 0 bench --engine plugin:"$pd"/libapplog.so,lmdb --workload kv,tpcb --clients 1,4 --sync commit,none \
    --txns 300 --warmup 0 --keys 2000 --scale 1 --verify --quiet --dir d --out b.jsonl
[ "$(grep -c '"engine":"applog"' b.jsonl)" -eq 8 ] || fail "bench: not 8 applog lines"
grep '"engine":"applog"' b.jsonl | grep -v -q '"status":"ok"' && fail "bench: an applog run not ok: $(grep -v '"status":"ok"' b.jsonl | head -c 600)"
grep '"engine":"applog"' b.jsonl | grep -q '"verified":true' || fail "bench: applog not verified"
grep -q '^applog .*read back' bench.out || fail "bench: no applog row in the table: $(cat bench.out)"
grep '"engine":"applog"' b.jsonl | head -1 | grep -q '"engine_plugin":"/[^"]*/libapplog.so"' || fail "bench: the plugin's file is not in the JSON"
grep '"engine":"lmdb"' b.jsonl | head -1 | grep -q '"engine_plugin":null' || fail "bench: lmdb's engine_plugin is not null"
# the counters it reports, and the ones it cannot (null)
grep '"engine":"applog".*"sync":"commit"' b.jsonl | head -1 | grep -q '"syncs":[1-9]' || fail "bench: applog syncs not counted"
grep '"engine":"applog"' b.jsonl | head -1 | grep -q '"checkpoints":null' || fail "bench: applog checkpoints not null"
# its own file calls, counted in its run's process as any engine's are:
# one sync per commit (its fdatasync) as its own count says, none without
# syncing, and its writes; its context switches
python3 - b.jsonl <<'PY' || fail "bench: applog's file calls or context switches: $(grep '"engine":"applog"' b.jsonl | head -c 600)"
import json, math, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["engine"] != "applog":
        continue
    m, sync = o["metrics"], o["config"]["sync"]
    for k in ("vcsw_per_txn", "ivcsw_per_txn", "file_syncs_per_commit", "file_writes_per_commit"):
        v = m[k]
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            sys.exit(f"{sync} {o['workload']}: {k} is {v}")
    if sync == "none" and m["file_syncs"] != 0:
        sys.exit(f"--sync none: {m['file_syncs']} syncs")
    if sync == "commit" and (m["file_syncs"] < 1 or m["file_syncs"] != m["syncs"]):
        sys.exit(f"--sync commit: {m['file_syncs']} syncs counted at its calls, {m['syncs']} by its own count")
    if m["file_writes"] < 1:
        sys.exit(f"{sync}: no write counted")
PY

# --plugin-dir finds libNAME.so; --rate and --repeat; the name in the summary
run rate 0 bench --engine plugin:applog --plugin-dir "$pd" --rate 200 --duration 0.5 --warmup 0 --repeat 2 \
    --quiet --dir d
grep -q '^applog .*open loop: 200 tps' rate.out || fail "rate: no open-loop row: $(cat rate.out)"
grep -q 'summary of 2 rounds' rate.out || fail "repeat: no summary"

# --sync-latency reaches a plugin loaded at run time: 20 ms per fdatasync
run lat 0 bench --engine plugin:"$pd"/libapplog.so --sync-latency 20000 --txns 10 --warmup 0 --quiet --dir d \
    --out lat.jsonl
jq_py 'import json,sys; m=json.loads(open(sys.argv[1]).readline())["metrics"]["latency_us"]; sys.exit(0 if m["p50"] >= 20000 else 1)' \
    lat.jsonl || fail "sync-latency: applog's p50 is under 20 ms: $(cat lat.out)"

# --list-engines, with the plugin named and its mappings
run list 0 bench --list-engines --plugin-dir "$pd"
grep -q '^applog     loaded (1.0)' list.out || fail "list: applog not listed: $(cat list.out)"
grep -q '^  --sync commit -> one pwrite of the transaction.s record, then one fdatasync' list.out ||
    fail "list: applog's --sync commit row"
grep -q '^  --sync none -> one pwrite of the record, no sync \[an acknowledged commit survives: a kill\]' list.out ||
    fail "list: applog's --sync none row and its claim"
tr '\n' ' ' <list.out | tr -s ' ' | grep -q -- '--cache\(, --[a-z-]*\)*: n/a (applog has one log file' || fail "list: applog's n/a knobs"
grep -q '^applog_early loaded' list.out || fail "list: applog_early not listed"

# the report draws the plugin's lines like any engine's
run report 0 report b.jsonl -o report.html
grep -q 'applog' report.html || fail "report: no applog in the page"

# ---- crash: the example holds; its early-acknowledging variant does not -----
run crash_ok 0 crash --mode kill --engine plugin:"$pd"/libapplog.so --sync commit,none --workload kv,tpcb \
    --iterations 12 --quiet --dir c --out c.jsonl
[ "$(grep -c '^applog .* ok$' crash_ok.out)" -eq 4 ] || fail "crash: applog not ok in each combination: $(cat crash_ok.out)"
grep -q '"survives_claimed":{"kill":true,"power":true}' c.jsonl || fail "crash: the claim is not in the JSON"
run crash_early 1 crash --mode kill --engine plugin:applog_early --plugin-dir "$pd" --sync commit,none \
    --iterations 40 --quiet --dir c
grep -q '^applog_early commit .*FAILED$' crash_early.out || fail "crash: applog_early --sync commit not FAILED: $(cat crash_early.out)"
grep -q 'acknowledged transaction [0-9]* lost' crash_early.out || fail "crash: the loss is not named"
grep -q '^applog_early none .*ok (may lose: no survival claimed)$' crash_early.out ||
    fail "crash: applog_early --sync none, which claims nothing, is not allowed to lose: $(cat crash_early.out)"

# ---- any file name: a ',' or '\' in a list item is escaped with '\' ------------
# (one rule for every comma list): the example under a name with a comma
# beside LMDB, and its early variant under one with a backslash, whose
# FAILED crash prints a replay line that runs as printed
cp "$pd"/libapplog.so 'app,log.so'
cp "$pd"/libapplog_early.so 'app\early.so'
run comma 0 bench --engine 'plugin:./app\,log.so,lmdb' --txns 50 --warmup 0 --keys 200 --quiet --dir d --out cm.jsonl
grep -q '"engine":"applog".*"status":"ok"' cm.jsonl || fail "comma: applog did not run: $(head -c 600 cm.jsonl)"
grep -q '"engine":"lmdb".*"status":"ok"' cm.jsonl || fail "comma: lmdb did not run beside it"
grep -q '"engine_plugin":"/[^"]*/app,log.so"' cm.jsonl || fail "comma: the plugin's file is not app,log.so"
run bad_escape 2 bench --engine 'plugin:./app\log.so' --txns 10
one_line bad_escape "^commitlab bench: --engine: 'plugin:./app.log.so' has a backslash before something other than"
run backslash 1 crash --mode kill --engine 'plugin:./app\\early.so' --sync commit --iterations 40 --quiet --dir c
line=$(grep '^  replay: commitlab crash ' backslash.out | head -1)
grep -qF -- "--engine 'plugin:$tmp/app\\\\early.so'" <<<"$line" || fail "backslash: the replay line: $line"
eval "\"\$cl\" ${line#  replay: commitlab } --quiet --dir rp" >replay.out 2>replay.err
rm -rf rp
grep -q '^applog_early ' replay.out || fail "backslash: the replay line does not run: $(cat replay.err)"

# ---- one plugin named twice, by two paths of its file: refused, as --engine lmdb,lmdb is
run twice 2 bench --engine plugin:"$pd"/libapplog.so,plugin:applog --plugin-dir "$pd" --txns 10 --quiet --dir d
one_line twice "^commitlab bench: --engine: 'plugin:.*' names one engine twice ('plugin:applog' is the plugin applog"
run crash_twice 2 crash --mode kill --engine plugin:applog,plugin:"$pd"/libapplog.so --plugin-dir "$pd" --quiet --dir c
one_line crash_twice "^commitlab crash: --engine: .* names one engine twice"

# ---- the power cut: the claim of surviving a power failure --------------------
# applog's --sync commit claims it (ok, nothing lost); its --sync none claims
# a kill only, so under a cut it may lose, and does; applog_early's --sync
# commit claims it and loses acknowledged commits: FAILED.
run cut_ok 0 crash --mode cut --engine plugin:"$pd"/libapplog.so --sync commit,none --iterations 6 --quiet \
    --dir c --out cut.jsonl
grep -q '^applog  *commit .* ok$' cut_ok.out || fail "cut: applog --sync commit not ok: $(cat cut_ok.out)"
grep -q '^applog  *none .*ok (may lose: no survival claimed)$' cut_ok.out ||
    fail "cut: applog --sync none, which claims no power failure, is not 'may lose': $(cat cut_ok.out)"
grep '"sync":"commit"' cut.jsonl | grep -q '"mode":"cut".*"survives_claimed":{"kill":true,"power":true}.*"status":"ok".*"acked_lost":0,' ||
    fail "cut: applog --sync commit's JSON line: $(head -c 600 cut.jsonl)"
grep '"sync":"none"' cut.jsonl | grep -q '"survives_claimed":{"kill":true,"power":false}.*"status":"ok"' ||
    fail "cut: applog --sync none's JSON line: $(tail -c 600 cut.jsonl)"
run cut_early 1 crash --mode cut --engine plugin:applog_early --plugin-dir "$pd" --sync commit --iterations 8 \
    --quiet --dir c
grep -q '^applog_early commit .*FAILED$' cut_early.out || fail "cut: applog_early --sync commit not FAILED: $(cat cut_early.out)"
grep -q 'acknowledged transaction [0-9]* lost' cut_early.out || fail "cut: applog_early's loss is not named"

# ---- bad plugins: one line, exit 2 ----------------------------------------------
printf 'not an ELF file\n' >fake.so
run not_so 2 bench --engine plugin:./fake.so --txns 10
one_line not_so "not a shared library"
run missing 2 bench --engine plugin:./nothing-here.so --txns 10
one_line missing "nothing-here.so"
run no_dir 2 bench --engine plugin:applog --txns 10
one_line no_dir "needs --plugin-dir"
run not_found 2 bench --engine plugin:nosuch --plugin-dir "$pd" --txns 10
one_line not_found "none of .*/nosuch.so, commitlab-nosuch.so or libnosuch.so exists"
# commitlab-NAME.so, the name that cannot clash with the store's own libNAME.so
mkdir cdir && cp "$pd"/libapplog.so cdir/commitlab-applog.so
run cname 0 bench --engine plugin:applog --plugin-dir cdir --txns 10 --warmup 0 --quiet --dir d
grep -q '^applog ' cname.out || fail "commitlab-applog.so: applog did not run: $(cat cname.out)"
rm -rf cdir
run version 2 bench --engine plugin:"$pd"/faulty/libfaulty1.so --txns 10
one_line version "engine ABI version 99; this commitlab reads version 1"
run size 2 bench --engine plugin:"$pd"/faulty/libfaulty2.so --txns 10
one_line size "its table is 16 bytes"
run no_entry 2 bench --engine plugin:"$pd"/faulty/libfaulty3.so --txns 10
one_line no_entry "no entry point commitlab_engine_plugin"
run load_segv 2 bench --engine plugin:"$pd"/faulty/libfaulty6.so --txns 10
one_line load_segv "killed the process with signal 11"
run bad_row 2 bench --engine plugin:"$pd"/faulty/libfaulty8.so --txns 10
one_line bad_row "(--wal-compression) is not a knob of this commitlab"
run half_pipe 2 bench --engine plugin:"$pd"/faulty/libfaulty13.so --txns 10
one_line half_pipe "its table has commit_async without sync_wait: pipelining needs both"
run crash_version 2 crash --mode kill --engine plugin:"$pd"/faulty/libfaulty1.so
one_line crash_version "engine ABI version 99"
run crash_sim 2 crash --engine plugin:"$pd"/libapplog.so
one_line crash_sim "runs on commitlab's fault-injecting file layer"

# open fails: opened once in a scratch directory before anything runs, and
# refused there -- one line naming the plugin and its message, exit 2, no
# run of any engine, no --out file, no directory left
run open_err 2 bench --engine plugin:"$pd"/faulty/libfaulty4.so,lmdb --txns 50 --warmup 0 --quiet --dir d \
    --out oe.jsonl
one_line open_err "plugin faulty could not open a fresh store, so nothing was run: faulty: the disk at .* is on fire"
grep -q 'libfaulty4.so' open_err.err || fail "open error: the plugin's file is not named: $(cat open_err.err)"
[ ! -s open_err.out ] || fail "open error: something ran: $(head -c 400 open_err.out)"
[ ! -e oe.jsonl ] || fail "open error: --out was written: $(head -c 400 oe.jsonl)"
[ ! -e d ] || fail "open error: the directory was left: $(ls -a d)"
# ... and the same before a kill or a cut campaign
for m in kill cut; do
    run crash_open_err_$m 2 crash --mode $m --engine plugin:"$pd"/faulty/libfaulty4.so --iterations 3 --quiet \
        --dir c --out coe.jsonl
    one_line crash_open_err_$m "plugin faulty could not open a fresh store, so nothing was run: faulty: the disk at .* is on fire"
    [ ! -s crash_open_err_$m.out ] || fail "crash --mode $m open error: something ran: $(head -c 400 crash_open_err_$m.out)"
    [ ! -e coe.jsonl ] || fail "crash --mode $m open error: --out was written"
    [ ! -e c ] || fail "crash --mode $m open error: the directory was left: $(ls -a c)"
done

# ---- a plugin that ends the process, or prints, while it loads or opens ------------
# exit(0) in its constructor on its second load -- commitlab's own, after the
# checking child's passed -- and the same by quick_exit: one line naming the
# file and the status, exit 2, nothing run, no --out file, no directory
rm -f loads
FAULTY_LOADS=$tmp/loads FAULTY_EXIT_LOAD=2 run exit_load2 2 bench --engine plugin:"$pd"/faulty/libfaulty11.so,lmdb \
    --txns 50 --warmup 0 --quiet --dir d --out el.jsonl
one_line exit_load2 "libfaulty11.so: it exited (status 0) during its load into commitlab"
[ ! -s exit_load2.out ] || fail "exit on load: something ran: $(head -c 400 exit_load2.out)"
[ ! -e el.jsonl ] || fail "exit on load: --out was written"
[ ! -e d ] || fail "exit on load: the directory was left: $(ls -a d)"
rm -f loads
FAULTY_LOADS=$tmp/loads FAULTY_EXIT_LOAD=2 FAULTY_QUICK_EXIT=1 run quick_exit_load2 2 crash --mode kill \
    --engine plugin:"$pd"/faulty/libfaulty11.so --iterations 2 --quiet --dir c
one_line quick_exit_load2 "^commitlab crash: .*libfaulty11.so: it called quick_exit() during its load into commitlab"
[ ! -s quick_exit_load2.out ] || fail "quick_exit on load: something ran: $(head -c 400 quick_exit_load2.out)"
# ... on its first load, in the checking child, with its status
rm -f loads
FAULTY_LOADS=$tmp/loads FAULTY_EXIT_LOAD=1 FAULTY_EXIT_STATUS=3 run exit_load1 2 bench \
    --engine plugin:"$pd"/faulty/libfaulty11.so --txns 10 --quiet --dir d
one_line exit_load1 "libfaulty11.so: it exited (status 3) during its load"
# ... in its open, before the first run: named with its status, nothing run
FAULTY_EXIT_OPEN=1 run exit_open 2 bench --engine plugin:"$pd"/faulty/libfaulty11.so,lmdb --txns 50 --warmup 0 \
    --quiet --dir d --out eo.jsonl
one_line exit_open "the plugin faulty could not open a fresh store, so nothing was run: it exited (status 0) during its open"
[ ! -s exit_open.out ] || fail "exit in open: something ran: $(head -c 400 exit_open.out)"
[ ! -e eo.jsonl ] || fail "exit in open: --out was written"
# what it prints while it loads and opens goes to stderr, never into the table
run chatter 0 bench --engine plugin:"$pd"/faulty/libfaulty12.so --txns 10 --warmup 0 --quiet --dir d --format csv
grep -q "faulty12:" chatter.out && fail "chatter: the plugin's output is in the table: $(cat chatter.out)"
[ "$(grep -c ',faulty,' chatter.out)" -eq 1 ] && [ "$(wc -l <chatter.out)" -eq 2 ] ||
    fail "chatter: not a header and one row: $(cat chatter.out)"
for w in "the constructor" "the entry point" open; do
    grep -q "faulty12: hello from $w" chatter.err || fail "chatter: what $w printed is not on stderr: $(cat chatter.err)"
done

# ---- a plugin that fails its run, not the command ---------------------------------
# SIGSEGV in the middle of a run: that run's error, with the signal; the sweep goes on
run segv 1 bench --engine plugin:"$pd"/faulty/libfaulty5.so,lmdb --txns 200 --warmup 0 --no-preload --quiet --dir d \
    --out sv.jsonl
grep -q '"engine":"faulty".*"status":"error","reason":"the plugin faulty died of signal 11' sv.jsonl ||
    fail "segv: not an error row naming signal 11: $(head -c 600 sv.jsonl)"
grep -q '"engine":"lmdb".*"status":"ok"' sv.jsonl || fail "segv: lmdb did not run after it"
[ -z "$(ls d 2>/dev/null)" ] || fail "segv: the run directory was left: $(ls d)"
# ... and under a kill campaign (the example store, dying at its 20th commit), its
# crash is named, and never counted as lost commits
run crash_segv 1 crash --mode kill --engine plugin:"$pd"/faulty/libfaulty9.so --sync commit --iterations 8 \
    --quiet --dir c --out cs.jsonl
grep -q 'the engine died of signal 11' crash_segv.out || fail "crash segv: signal not named: $(cat crash_segv.out)"
grep -q '"acked_lost":0,' cs.jsonl || fail "crash segv: counted as lost commits: $(cat crash_segv.out)"
# a commit that calls copy_file_range, which the cut cannot model: the cut
# campaign fails naming the call (the calibration run meets it), never ok
run cut_refused 1 crash --mode cut --engine plugin:"$pd"/faulty/libfaulty10.so --sync commit --iterations 3 \
    --quiet --dir c --out cr.jsonl
grep -q '^faulty  *commit .*FAILED$' cut_refused.out || fail "cut refused: not FAILED: $(cat cut_refused.out)"
grep -q 'first failure: .*a call the cut cannot model: copy_file_range' cut_refused.out ||
    fail "cut refused: copy_file_range not named: $(cat cut_refused.out)"
grep -q '"status":"failed","reason":"the engine made a call the cut cannot model: copy_file_range' cr.jsonl ||
    fail "cut refused: the JSON line: $(head -c 600 cr.jsonl)"
# no read-modify-write transactions: tpcb is n/a, with the reason
run tpcb_na 0 bench --engine plugin:"$pd"/faulty/libfaulty7.so --workload tpcb --txns 10 --warmup 0 --quiet --dir d \
    --out na.jsonl
grep -q '"status":"n/a","reason":"--workload tpcb: faulty declares no read-modify-write' na.jsonl ||
    fail "tpcb n/a: $(cat na.jsonl | head -c 400)"
# a table without commit_async (the example, as every plugin built before
# the member): --pipeline 1 runs, --pipeline 2 is n/a by name
run pipe_na 0 bench --engine plugin:"$pd"/libapplog.so --pipeline 1,2 --txns 10 --warmup 0 --keys 100 --quiet \
    --dir d --out pipe.jsonl
jq_py 'import json,sys
L = [json.loads(l) for l in open(sys.argv[1])]
assert [(o["config"]["pipeline"], o["status"]) for o in L] == [(1, "ok"), (2, "n/a")], L
assert L[1]["reason"] == "--pipeline 2: its engine table has no commit_async: one blocking commit at a time", L[1]
' pipe.jsonl || fail "pipeline n/a: $(head -c 800 pipe.jsonl)"

if [ "$fails" -ne 0 ]; then
    echo "plugin: $fails failed"
    exit 1
fi
echo "plugin: every check passed"
