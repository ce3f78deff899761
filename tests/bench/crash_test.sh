#!/usr/bin/env bash
# crash_test.sh COMMITLAB -- `commitlab crash` end to end: a small campaign
# over the durable policies passes and writes one JSON line per
# combination; the same campaign on a lying device (syncs make nothing
# durable) must FAIL, naming a lost acknowledged commit and a replay line;
# the replay reruns that crash and keeps a directory `inspect --verify`
# accepts; the non-durable policies may lose and still pass; bad arguments
# exit 2 naming the flag.
set -u
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# 1. durable policies, every crash model: no acknowledged commit lost
out=$("$bin" crash --sync commit,group,uring --sync-method fdatasync,dsync --iterations 40 --quiet \
      --dir "$work/c" --out "$work/c.jsonl" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "durable campaign exited $rc"; }
rows=$(grep -cE '^(commit|group|uring) ' <<<"$out")
[ "$rows" -eq 18 ] || { echo "$out"; fail "want 18 rows (3 policies x 2 methods x 3 models), got $rows"; }
grep -E '^(commit|group|uring) ' <<<"$out" | grep -vq ' ok$' && { echo "$out"; fail "a row is not ok"; }
[ "$(wc -l <"$work/c.jsonl")" -eq 18 ] || fail "want 18 JSON lines"
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
out=$("$bin" crash --sync commit --model drop --iterations 40 --quiet --lying-device --dir "$work/l" 2>&1); rc=$?
[ $rc -eq 1 ] || { echo "$out"; fail "lying device campaign exited $rc, want 1"; }
grep -q 'FAILED' <<<"$out" || { echo "$out"; fail "no FAILED row on a lying device"; }
grep -q 'acknowledged transaction [0-9]* lost' <<<"$out" || { echo "$out"; fail "no lost acknowledged commit named"; }
replay=$(grep -o 'commitlab crash --replay .*' <<<"$out" | head -1)
[ -n "$replay" ] || fail "no replay line"

# 3. the replay reruns that crash and keeps the directory
seed=$(awk '{print $4}' <<<"$replay")
out=$("$bin" crash --replay "$seed" --sync commit --model drop --clients 1 --dir "$work/r" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "replay of seed $seed (honest device) exited $rc"; }
[ -f "$work/r/crash/data.clp" ] || { echo "$out"; fail "the replay did not keep its directory"; }
"$bin" inspect "$work/r/crash" --verify >/dev/null 2>&1 || fail "inspect --verify rejects the recovered directory"

# 4. non-durable policies may lose acknowledged commits and still pass
out=$("$bin" crash --sync none --model drop --iterations 40 --quiet --dir "$work/n" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "sync none campaign exited $rc"; }
grep -q 'not durable' <<<"$out" || { echo "$out"; fail "sync none lost nothing in 40 crashes: the crash points miss the commits"; }

# 5. arguments
err=$("$bin" crash --sync bogus 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '--sync' <<<"$err" || fail "--sync bogus: exit $rc: $err"
err=$("$bin" crash --replay 3 --model drop,torn 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "--replay with two models: exit $rc"
err=$("$bin" crash --mode kill 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q 'not built' <<<"$err" || fail "--mode kill: exit $rc: $err"
out=$("$bin" crash --help); rc=$?
[ $rc -eq 0 ] && grep -q '^usage: commitlab crash' <<<"$out" || fail "crash --help: exit $rc"
echo "crash: 5 cases passed"
