#!/usr/bin/env bash
# cut_unseen_test.sh COMMITLAB PLUGIN -- `commitlab crash --mode cut` on
# a plugin (tests/bench/plugins/unseen.c) that claims to survive a power
# failure and writes its log only by a means the cut cannot see (a shared
# writable mapping, a raw system call, io_uring), never syncing it.  Every
# campaign must fail, at its first crash, whatever the seed and however
# many crashes it asks for: exit 1, the row FAILED, and the first failure
# and the JSON line naming the log file and "writes the cut did not see".
# A kill would find nothing wrong: the page cache keeps what it wrote.
# Exit 77: io_uring_setup is refused here (the io_uring plugin's rows are
# n/a).
set -u
cl=$1
plugin=$2
name=$(basename "$plugin" .so)
name=${name#lib}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

words='writes the cut did not see (mmap, raw system calls, io_uring)'

# cut NAME ARGS...: one campaign that must fail by the unseen writes
cut() {
    local run=$1
    shift
    "$cl" crash --mode cut --engine plugin:"$plugin" --sync commit --quiet --dir d --out "$run.jsonl" "$@" \
        >"$run.out" 2>"$run.err"
    local rc=$?
    if grep -q "n/a.*io_uring_setup" "$run.out"; then
        echo "skipped: io_uring_setup is refused here: $(grep -m1 'n/a' "$run.out")"
        exit 77
    fi
    [ $rc -eq 1 ] || fail "$run ($*): exit $rc, wanted 1: $(head -c 400 "$run.err") $(cat "$run.out")"
    grep -qE "^$name +commit .*FAILED$" "$run.out" || fail "$run ($*): the row is not FAILED: $(cat "$run.out")"
    grep -q "^  first failure: .*$words" "$run.out" ||
        fail "$run ($*): the first failure does not say '$words': $(cat "$run.out")"
    grep -q "^  first failure: .*applog\.log" "$run.out" ||
        fail "$run ($*): the first failure does not name applog.log: $(cat "$run.out")"
    python3 - "$run.jsonl" "$words" <<'PY' || fail "$run ($*): the JSON line: $(head -c 800 "$run.jsonl")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 1, rows
r = rows[0]
assert r["status"] == "failed" and r["survives_claimed"]["power"], r
assert sys.argv[2] in r["reason"] and "applog.log" in r["reason"], r["reason"]
assert r["crashes"] == 1, ("not at the first crash", r["crashes"])
PY
    rm -f "$run.jsonl"
}

# one crash, several seeds: every one fails, never ok by luck of the kill
for seed in 1 2 3 4 5; do
    cut one_$seed --iterations 1 --seed "$seed"
done
# more crashes, and in two worker processes
cut many --iterations 20 --seed 11
cut jobs --iterations 20 --seed 31 --jobs 2 --clients 2

# under a kill the page cache keeps every write: nothing to find there
"$cl" crash --mode kill --engine plugin:"$plugin" --sync commit --iterations 4 --quiet --dir d >kill.out 2>&1 ||
    fail "kill: not ok: $(cat kill.out)"
grep -qE "^$name +commit .* ok$" kill.out || fail "kill: the row is not ok: $(cat kill.out)"

[ ! -e d/crash ] && [ ! -e d/crash.cut ] || fail "the campaigns left their directories: $(ls -a d)"
if [ "$fails" -ne 0 ]; then
    echo "cut_unseen $name: $fails failed"
    exit 1
fi
echo "cut_unseen $name: every check passed"
