#!/usr/bin/env bash
# crash_test.sh COMMITLAB -- `commitlab crash` end to end:
#  1. a small campaign over the durable policies passes and writes one JSON
#     line per combination;
#  2. the same campaign on a lying device (syncs make nothing durable) must
#     FAIL, naming a lost acknowledged commit and a replay line;
#  3. the replay reruns that crash and keeps a directory `inspect --verify`
#     accepts, and a copy from before recovery that `inspect --records` lists;
#  4. the non-durable policies may lose and still pass;
#  5. bad arguments exit 2 naming the flag;
#  6. --mode kill (SIGKILLed processes on the real file system) loses no
#     acknowledged commit under any policy, for commitlab and LMDB, and kills
#     mostly while clients commit;
#  7. --jobs gives the rows a serial run gives;
#  8. --workload tpcb (read-modify-write transactions on shared rows): the
#     durable policies pass under power failures, every built engine under
#     kills, and a lying device fails;
#  9. --mode cut (the kill, then every unsynced write and name dropped):
#     every built engine's no-sync setting loses acknowledged commits and
#     its durable one none, commitlab's as --mode sim says, and its tpcb
#     too; uring and writemap are n/a; the journal's bound fails naming
#     its figure; --mode cut,sim,kill runs the three campaigns in that
#     order, into one --out, and a mode twice, an unknown one, or an
#     option another mode in the list refuses exits 2;
# 10. --pipeline (commits acknowledged by their callbacks): every policy
#     under power failures, where only none may lose (periodic's callback
#     comes after its sync, and a lying device makes it fail), group,
#     flusher and uring under kills, and group under a cut.
# 11. the knobs crash shares with bench are bench's, parsed by one parser:
#     --uring-sync rwf-dsync runs (or is n/a with the library's reason
#     where io_uring or RWF_DSYNC is refused), and a bad value of a shared
#     knob is the same one line from both commands.
# 12. WiredTiger (when built; sections 8 and 9 run it as every built
#     engine): its --sync none and periodic commits return once their log
#     slot is written to the file (transaction_sync method=none), so a kill
#     loses none of them -- with transaction_sync=(enabled=false) it would.
set -u
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# 1. durable policies, every crash model: no acknowledged commit lost
out=$("$bin" crash --sync commit,group,uring,flusher --sync-method fdatasync,dsync --iterations 40 --quiet \
      --dir "$work/c" --out "$work/c.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "durable campaign exited $rc"; }
rows=$(grep -cE '^commitlab +(commit|group|uring|flusher) ' <<<"$out")
[ "$rows" -eq 24 ] || { echo "$out"; fail "want 24 rows (4 policies x 2 methods x 3 models), got $rows"; }
grep -E '^commitlab +(commit|group|uring|flusher) ' <<<"$out" | grep -vq ' ok$' && { echo "$out"; fail "a row is not ok"; }
[ "$(wc -l <"$work/c.jsonl")" -eq 24 ] || fail "want 24 JSON lines"
python3 - "$work/c.jsonl" <<'PY' || fail "JSON lines do not add up"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    assert r["schema"] == "commitlab-crash/1" and r["status"] == "ok", r
    assert r["crashes"] == 40 and r["acked_lost"] == 0 and r["sync_durable"], r
# the crash points must fall while clients commit, not only after
assert sum(r["crashes_mid_run"] for r in rows) > 0.5 * sum(r["crashes"] for r in rows), rows
PY
[ ! -e "$work/c" ] || fail "the campaign left its directory behind"

# 2. the same check on a lying device must fail: the check can see a loss
out=$("$bin" crash --sync commit --model drop --iterations 40 --quiet --lying-device --dir "$work/l" \
      --out "$work/l.jsonl" 2>&1); rc=$?
[ $rc -eq 1 ] || { echo "$out"; fail "lying device campaign exited $rc, want 1"; }
grep -q 'FAILED' <<<"$out" || { echo "$out"; fail "no FAILED row on a lying device"; }
grep -q '^  first failure: seed [0-9]*: ' <<<"$out" || { echo "$out"; fail "the first failure is not named"; }
# the first failing crash may be a lost commit or a database that no longer
# opens (pages the checkpoint thought synced); lost commits must be counted
python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); assert r["acked_lost"] > 0, r' \
    "$work/l.jsonl" || { echo "$out"; fail "no lost acknowledged commit counted on a lying device"; }
replay=$(grep -o 'commitlab crash --replay .*' <<<"$out" | head -1)
[ -n "$replay" ] || fail "no replay line"

# 3. the replay reruns that crash and keeps the directory
seed=$(awk '{print $4}' <<<"$replay")
out=$("$bin" crash --replay "$seed" --sync commit --model drop --clients 1 --dir "$work/r" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "replay of seed $seed (honest device) exited $rc"; }
[ -f "$work/r/crash/data.clp" ] || { echo "$out"; fail "the replay did not keep its directory"; }
"$bin" inspect "$work/r/crash" --verify >/dev/null 2>&1 || fail "inspect --verify rejects the recovered directory"
# ... and a copy as the crash left it, whose log inspect --records lists
# record by record (as many COMMIT lines as it counts) and explains its end
[ -f "$work/r/crash.crashed/data.clp" ] || { echo "$out"; fail "no copy of the directory before recovery"; }
out=$("$bin" inspect "$work/r/crash.crashed" --records 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "inspect --records of the crashed directory exited $rc"; }
commits=$(awk '/commit records/ {print $3}' <<<"$out")
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ COMMIT ' <<<"$out")" -eq "$commits" ] || { echo "$out"; fail "COMMIT lines != $commits"; }
grep -qE 'why the log ends +(zeros|torn tail|bytes left|segment)' <<<"$out" || { echo "$out"; fail "no reason for the log's end"; }

# 4. non-durable policies may lose acknowledged commits and still pass
out=$("$bin" crash --sync none --model drop --iterations 40 --quiet --dir "$work/n" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "sync none campaign exited $rc"; }
grep -q 'not durable' <<<"$out" || { echo "$out"; fail "sync none lost nothing in 40 crashes: the crash points miss the commits"; }

# 5. arguments
err=$("$bin" crash --sync bogus 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '--sync' <<<"$err" || fail "--sync bogus: exit $rc: $err"
err=$("$bin" crash --replay 3 --model drop,torn 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "--replay with two models: exit $rc"
err=$("$bin" crash --mode kill --model drop 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '--model' <<<"$err" || fail "--mode kill --model: exit $rc: $err"
err=$("$bin" crash --engine lmdb 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q 'mode kill' <<<"$err" || fail "--engine lmdb under sim: exit $rc: $err"
err=$("$bin" crash --mode kill --engine raw 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q 'nothing to recover' <<<"$err" || fail "--engine raw: exit $rc: $err"
out=$("$bin" crash --help); rc=$?
[ $rc -eq 0 ] && grep -q '^usage: commitlab crash' <<<"$out" || fail "crash --help: exit $rc"
# 6. process crashes: the page cache survives a SIGKILL, so even `none`
#    (and LMDB's MDB_NOSYNC) loses no acknowledged commit
out=$("$bin" crash --mode kill --engine commitlab,lmdb --sync commit,none --iterations 12 --quiet \
      --dir "$work/k" --out "$work/k.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "kill campaign exited $rc"; }
[ "$(grep -cE '^(commitlab|lmdb) +(commit|none) .* ok$' <<<"$out")" -eq 4 ] || { echo "$out"; fail "want 4 ok rows"; }
python3 - "$work/k.jsonl" <<'PY' || { echo "$out"; fail "kill JSON lines do not add up"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 4, rows
for r in rows:
    assert r["mode"] == "kill" and r["status"] == "ok" and r["crashes"] == 12 and r["acked_lost"] == 0, r
assert sum(r["crashes_mid_run"] for r in rows) >= 0.5 * 48, rows
PY

# 7. --jobs: the same crashes in worker processes; the same seeds give the
#    same crash points, so a single-client sim row adds up the same
a=$("$bin" crash --sync commit --model torn --clients 1 --iterations 30 --quiet --dir "$work/j1" --out "$work/j1.jsonl" 2>&1) \
    || { echo "$a"; fail "serial run failed"; }
b=$("$bin" crash --sync commit --model torn --clients 1 --iterations 30 --jobs 3 --quiet --dir "$work/j3" --out "$work/j3.jsonl" 2>&1) \
    || { echo "$b"; fail "--jobs 3 run failed"; }
python3 - "$work/j1.jsonl" "$work/j3.jsonl" <<'PY' || { echo "$a"; echo "$b"; fail "--jobs 3 differs from the serial run"; }
import json, sys
a, b = (json.loads(open(f).readline()) for f in sys.argv[1:3])
for k in ("crashes", "crashes_mid_run", "acked_lost", "unacked_survived", "status"):
    assert a[k] == b[k], (k, a[k], b[k])
PY
[ ! -e "$work/j3" ] || fail "--jobs left its directories behind"
# 8. tpcb
out=$("$bin" crash --workload tpcb --sync commit,group --model drop,torn --iterations 30 --quiet --dir "$work/t" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "tpcb campaign exited $rc"; }
[ "$(grep -cE '^commitlab +(commit|group) .* tpcb .* ok$' <<<"$out")" -eq 4 ] || { echo "$out"; fail "want 4 ok tpcb rows"; }
# every store built (raw, the floor, keeps no data and is refused; postgres,
# a server, runs under --mode kill only, in postgres_crash_test.sh, and is
# refused under --mode sim, the fault layer's)
engines=$("$bin" bench --list-engines | awk '$2 == "built" && $1 != "raw" && $1 != "postgres" {print $1}' | paste -sd, -)
"$bin" crash --engine postgres --iterations 1 --quiet --dir "$work/pg" >/dev/null 2>"$work/pg.err"
[ $? -eq 2 ] && grep -q -- "--engine postgres: --mode sim runs on commitlab's fault-injecting file layer" "$work/pg.err" ||
    fail "crash --engine postgres: $(cat "$work/pg.err")"
out=$("$bin" crash --mode kill --workload tpcb --engine "$engines" --sync commit --iterations 5 --quiet --dir "$work/tk" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "tpcb kill campaign on $engines exited $rc"; }
[ "$(grep -cE ' tpcb .* ok$' <<<"$out")" -eq "$(tr , '\n' <<<"$engines" | wc -l)" ] || { echo "$out"; fail "want one ok row per engine"; }
out=$("$bin" crash --workload tpcb --lying-device --sync commit --model drop --iterations 30 --quiet --dir "$work/tl" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q 'FAILED' <<<"$out" || { echo "$out"; fail "tpcb on a lying device exited $rc, want 1"; }
# 9. power cuts for every engine: the mechanism must be able to fail
out=$("$bin" crash --mode cut --engine "$engines" --sync none,commit --iterations 8 --quiet \
      --dir "$work/cut" --out "$work/cut.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "cut campaign on $engines exited $rc"; }
grep -q '^  not modelled: torn or reordered writes, writes through mmap or io_uring' <<<"$out" ||
    { echo "$out"; fail "the cut's header does not say what it leaves out"; }
"$bin" crash --mode sim --sync none,commit --model drop --iterations 8 --quiet --dir "$work/cs" \
    --out "$work/cs.jsonl" >/dev/null 2>&1 || fail "the sim campaign beside the cut failed"
python3 - "$work/cut.jsonl" "$work/cs.jsonl" "$engines" <<'PY' || { echo "$out"; fail "cut rows do not add up"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sim = {r["sync"]: r for r in map(json.loads, open(sys.argv[2]))}
engines = sys.argv[3].split(",")
assert len(rows) == 2 * len(engines), rows
for r in rows:
    assert r["mode"] == "cut" and r["model"] == "cut" and r["status"] == "ok" and r["crashes"] == 8, r
    assert r["atomicity_violations"] == 0 and r["foreign_values"] == 0 and r["recovery_failures"] == 0, r
    if r["sync"] == "none":   # acknowledged before any sync: a power cut takes some of them
        assert r["acked_lost"] > 0, ("no-sync lost nothing under cut", r)
    else:                     # the durable commit: nothing
        assert r["acked_lost"] == 0 and r["sync_durable"], r
    if r["engine"] == "commitlab":  # the same verdict as the fault layer's power failure
        s = sim[r["sync"]]
        assert (s["acked_lost"] > 0) == (r["acked_lost"] > 0) and s["status"] == r["status"], (r, s)
assert sum(r["crashes_mid_run"] for r in rows) >= 0.4 * sum(r["crashes"] for r in rows), rows
PY
[ ! -e "$work/cut" ] && [ ! -e "$work/cut/crash.cut" ] || fail "the cut campaign left its directories behind"
# read-modify-write transactions under a cut: commitlab's durable commit
# loses none, and every balance still adds up
out=$("$bin" crash --mode cut --workload tpcb --sync commit --iterations 6 --quiet --dir "$work/ct" \
      --out "$work/ct.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "tpcb cut campaign exited $rc"; }
grep -qE '^commitlab +commit .* cut .* tpcb .* ok$' <<<"$out" || { echo "$out"; fail "commitlab tpcb under cut is not ok"; }
python3 - "$work/ct.jsonl" <<'PY' || { echo "$out"; fail "the tpcb cut row does not add up"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 1, rows
r = rows[0]
assert r["mode"] == "cut" and r["workload"] == "tpcb" and r["status"] == "ok" and r["crashes"] == 6, r
assert r["acked_lost"] == 0 and r["atomicity_violations"] == 0 and r["recovery_failures"] == 0, r
PY
# what the cut cannot see is n/a, never run as if checked
out=$("$bin" crash --mode cut --engine commitlab,lmdb --sync uring,commit --lmdb-flags writemap --iterations 2 \
      --quiet --dir "$work/cn" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "cut n/a campaign exited $rc"; }
grep -qE '^commitlab +uring .* n/a .*io_uring' <<<"$out" || { echo "$out"; fail "commitlab uring under cut is not n/a"; }
grep -qE '^lmdb +commit .* n/a .*writemap' <<<"$out" || { echo "$out"; fail "LMDB writemap under cut is not n/a"; }
# a run whose undo journal outgrows its bound fails with the figure
out=$("$bin" crash --mode cut --engine commitlab --sync commit --cut-journal-max 16K --iterations 2 --quiet \
      --dir "$work/cb" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q 'FAILED' <<<"$out" && grep -q 'bound of 16K' <<<"$out" \
    || { echo "$out"; fail "an outgrown journal: exit $rc, want 1 and the bound named"; }
err=$("$bin" crash --mode cut --model torn 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '--model' <<<"$err" || fail "--mode cut --model: exit $rc: $err"
err=$("$bin" crash --mode kill --cut-journal-max 1M 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '--cut-journal-max' <<<"$err" || fail "--cut-journal-max under kill: exit $rc: $err"
# --mode takes a list: one campaign per mode, in its order, one heading
# and table each, every row in one --out; sim's default models, kill and
# cut their own
out=$("$bin" crash --mode cut,sim,kill --sync none,commit --iterations 4 --clients 2 --quiet --dir "$work/ml" \
      --out "$work/ml.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "--mode cut,sim,kill: exit $rc"; }
[ "$(grep -c '^commitlab crash: ' <<<"$out")" -eq 3 ] || { echo "$out"; fail "--mode cut,sim,kill: want 3 headings"; }
python3 - "$work/ml.jsonl" <<'PY' || fail "--mode cut,sim,kill"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
got = [(r["mode"], r["model"], r["sync"]) for r in rows]
want = [("cut", "cut", s) for s in ("none", "commit")] + \
       [("sim", m, s) for s in ("none", "commit") for m in ("drop", "torn", "reorder")] + \
       [("kill", "kill", s) for s in ("none", "commit")]
assert sorted(got[:2]) == sorted(want[:2]) and sorted(got[2:8]) == sorted(want[2:8]) and \
    sorted(got[8:]) == sorted(want[8:]) and len(got) == 10, got
for r in rows:
    assert r["status"] == "ok" and r["crashes"] == 4, r
    if r["sync"] == "commit":
        assert r["acked_lost"] == 0, r
PY
[ ! -e "$work/ml" ] || fail "--mode cut,sim,kill: left $(ls -a "$work/ml")"
for bad in "kill,kill:names one value twice" "kill,fly:'fly' is not accepted; accepted: sim, kill, cut" \
    "sim,kill --model drop:--model: crash models apply to --mode sim" "kill,cut --replay 3:--replay: give one --mode" \
    "sim,kill --cut-journal-max 1M:--cut-journal-max applies to --mode cut" \
    "kill,sim --engine lmdb:--engine lmdb: --mode sim runs on"; do
    # shellcheck disable=SC2086 # the options after the list are words
    err=$("$bin" crash --mode ${bad%%:*} 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && grep -qF -- "${bad#*:}" <<<"$err" || fail "--mode ${bad%%:*}: exit $rc: $err"
done
# 10. pipelined clients (--pipeline: commits acknowledged by their callbacks):
#     under power failures and kills no policy whose callback means durable
#     (every one but none: periodic's comes after the periodic sync) loses
#     an acknowledged commit, and none still loses under a power failure
out=$("$bin" crash --sync none,group,flusher,uring --pipeline 8 --model drop,torn --iterations 20 --quiet \
      --dir "$work/pp" --out "$work/pp.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "pipelined campaign exited $rc"; }
# commit and periodic, fewer crashes: commit syncs once per commit, and
# periodic's callbacks wait for its interval
out=$("$bin" crash --sync commit,periodic --pipeline 8 --model drop,torn --iterations 10 --quiet \
      --dir "$work/pp" --out "$work/pp.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "pipelined commit and periodic campaign exited $rc"; }
out=$("$bin" crash --mode kill --sync group,flusher,uring --pipeline 8 --iterations 6 --quiet --dir "$work/pp" \
      --out "$work/pp.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "pipelined kill campaign exited $rc"; }
out=$("$bin" crash --mode cut --sync group --pipeline 4 --iterations 6 --quiet --dir "$work/pp" \
      --out "$work/pp.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "pipelined cut campaign exited $rc"; }
python3 - "$work/pp.jsonl" <<'PY' || fail "pipelined campaigns"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 16 and all(r["pipeline"] == (4 if r["mode"] == "cut" else 8) for r in rows), rows
assert {(r["sync"], r["mode"]) for r in rows} == {(s, "sim") for s in
        ("none", "periodic", "commit", "group", "flusher", "uring")} | {(s, "kill") for s in
        ("group", "flusher", "uring")} | {("group", "cut")}, rows
for r in rows:
    if r["sync"] == "uring" and r["mode"] == "kill" and r["status"] == "n/a":
        assert "io_uring" in r["reason"], r  # io_uring refused on this machine
        continue
    assert r["status"] == "ok" and r["atomicity_violations"] == 0 and r["recovery_failures"] == 0, r
    if r["sync"] == "none" and r["mode"] == "sim":
        assert r["acked_lost"] > 0, ("none lost nothing", r)
    else:
        assert r["acked_lost"] == 0, r
    # what the verdict holds a row to: a pipelined commit's callback means durable but under none
    assert r["survives_claimed"]["power"] == (r["sync"] != "none"), r
PY
# ... and is held to it: on a lying device pipelined periodic fails
out=$("$bin" crash --sync periodic --pipeline 8 --model drop --iterations 10 --quiet --lying-device \
      --dir "$work/pl" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q 'FAILED' <<<"$out" || { echo "$out"; fail "pipelined periodic on a lying device: exit $rc"; }
err=$("$bin" crash --pipeline 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '--pipeline' <<<"$err" || fail "--pipeline 0: exit $rc: $err"
# 11. the knobs shared with bench: --uring-sync, which bench has, crash
#     takes too (one value for the campaign), and it reaches the library:
#     with the dsync method, which links no sync to replace, cl_open
#     refuses it, and the row says why
out=$("$bin" crash --uring-sync rwf-dsync --sync uring --iterations 2 --quiet --dir "$work/us" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "crash --uring-sync rwf-dsync --sync uring exited $rc"; }
rows=$(grep -E '^commitlab +uring ' <<<"$out")
[ "$(wc -l <<<"$rows")" -eq 3 ] || { echo "$out"; fail "want 3 uring rows (one per model)"; }
grep -vqE ' ok$| n/a +\(cl_open: .+\)$' <<<"$rows" \
    && { echo "$out"; fail "a uring row neither ok nor n/a with a reason"; }
out=$("$bin" crash --uring-sync rwf-dsync --sync uring --sync-method dsync --model drop --iterations 2 --quiet \
      --dir "$work/us" 2>&1); rc=$?
[ $rc -eq 0 ] && grep -qE '^commitlab +uring +dsync .* n/a .*uring_sync = rwf-dsync' <<<"$out" \
    || { echo "$out"; fail "--uring-sync rwf-dsync with dsync: exit $rc, not n/a naming uring_sync"; }
# ... and a bad value of a knob both commands take is the same one line
# from both (but for the command's name)
for a in "--sync sometimes" "--sync-method osync" "--segments reuse" "--segment-init lazy" "--prealloc 65" \
         "--elr maybe" "--workload tpcc" "--engine mysql" "--clients 1,,4" "--sync commit,,none" \
         "--lmdb-flags nosync" "--clients 1,1" "--sync commit,commit" "--clients 4 --clients 8" \
         "--segments fresh,recycle,fresh" "--lmdb-flags writemap,writemap"; do
    # shellcheck disable=SC2086
    b=$("$bin" bench $a 2>&1 >/dev/null); rb=$?
    # shellcheck disable=SC2086
    c=$("$bin" crash $a 2>&1 >/dev/null); rc=$?
    [ $rb -eq 2 ] && [ $rc -eq 2 ] && [ "$(wc -l <<<"$c")" -eq 1 ] || fail "$a: bench exit $rb, crash exit $rc: $c"
    [ "${b#commitlab bench: }" = "${c#commitlab crash: }" ] || fail "$a: bench says '$b', crash says '$c'"
    [ "${b#commitlab bench: }" != "$b" ] || fail "$a: '$b'"
done
# one value for the campaign where bench sweeps a list: the same words,
# as one of them
c=$("$bin" crash --uring-sync fdatasync 2>&1 >/dev/null); rc=$?
want="commitlab crash: --uring-sync: 'fdatasync' is not accepted; expected one of fsync, rwf-dsync"
[ $rc -eq 2 ] && [ "$c" = "$want" ] || fail "--uring-sync fdatasync: exit $rc: $c"
# 12. WiredTiger's unsynced commits under kills
if "$bin" bench --list-engines | grep -qE '^wiredtiger +built'; then
    out=$("$bin" crash --mode kill --engine wiredtiger --sync none,periodic --iterations 4 --quiet \
          --dir "$work/wk" --out "$work/wk.jsonl" 2>&1); rc=$?
    [ $rc -eq 0 ] || { echo "$out"; fail "WiredTiger kill campaign exited $rc"; }
    python3 - "$work/wk.jsonl" <<'PY' || { echo "$out"; fail "WiredTiger kill rows do not add up"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["sync"] for r in rows] == ["none", "periodic"], rows
for r in rows:
    assert r["engine"] == "wiredtiger" and r["mode"] == "kill" and r["status"] == "ok" and r["crashes"] == 4, r
    assert r["survives_claimed"] == {"kill": True, "power": False}, r
    assert r["acked_lost"] == 0 and r["atomicity_violations"] == 0 and r["recovery_failures"] == 0, r
PY
else
    echo "crash: WiredTiger is not built here: section 12 skipped"
fi
echo "crash: 12 cases passed"
