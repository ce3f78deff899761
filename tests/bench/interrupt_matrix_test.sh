#!/usr/bin/env bash
# interrupt_matrix_test.sh COMMITLAB -- `commitlab matrix --fs tmpfs`
# stopped by SIGINT after its first run finished and during the second
# says what it measured: exit 130; one line on stderr naming the signal,
# the run (2 of 4, its filesystem and label) and how far it got; the
# finished run's row in the table and the interrupted run in a row of its
# own, marked INTERRUPTED, with no verdict; the finished run's JSON line
# and the interrupted one's (status "interrupted", what it measured), each
# whole; nothing mounted under --workdir, and --workdir (which it made)
# gone.
# Exit 77 when not root (matrix mounts tmpfs) or python3 is missing.
set -u
bin=${1:?usage: interrupt_matrix_test.sh COMMITLAB}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
[ "$(id -u)" -eq 0 ] || { echo "skipped: matrix needs root"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
wd="$work/wd"
pid=
# whatever happens, nothing of ours stays mounted
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    local m
    for m in $(awk -v w="$work" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
cd "$work" || exit 1

# Four runs: one client then two, each on tmpfs and on the native
# filesystem, in that order (no --repeat: no shuffle).
"$bin" matrix --fs tmpfs --workdir "$wd" --duration 3 --warmup 0 --no-preload --clients 1,2 --quiet \
    --out m.jsonl >m.out 2>m.err &
pid=$!
for _ in $(seq 600); do [ -s m.jsonl ] && break; sleep 0.1; done
[ -s m.jsonl ] || fail "matrix: the first run did not finish in 60 s: $(cat m.err)"
sleep 1 # the second run is measuring (no preload, no warm-up)
kill -INT "$pid"; wait "$pid"; rc=$?
pid=
[ $rc -eq 130 ] || fail "matrix after SIGINT: exit $rc: $(cat m.err)"
[ "$(wc -l <m.err)" -eq 1 ] &&
    grep -Eq '^commitlab matrix: interrupted by SIGINT during run 2 of 4 \(native [a-z0-9]+: commitlab --sync commit --clients 1\) after [0-9]+\.[0-9] s of 3 s; everything it snapshotted, mounted and attached is deleted, unmounted and detached$' m.err \
    || fail "matrix: want one line naming the run and how far it got: $(cat m.err)"
grep -Eq '^tmpfs +commitlab +commit +fresh +zero +0 +1 +1 +[0-9]+\.[0-9] ' m.out || fail "matrix: no row for the finished run: $(cat m.out)"
grep -Eq '^native [a-z0-9]+ +commitlab +commit +fresh +zero +0 +1 +- +[0-9]+\.[0-9] .*INTERRUPTED by SIGINT after [0-9]+\.[0-9] s of 3 s$' m.out \
    || fail "matrix: no INTERRUPTED row of its own for the second run: $(cat m.out)"
! grep -Eq '^(tmpfs|native [a-z0-9]+) +commitlab +commit +fresh +zero +0 +2 ' m.out \
    || fail "matrix: a run after the interrupted one: $(cat m.out)"
grep -q '^  no verdicts: the sweep was interrupted$' m.out && ! grep -q 'verdict: ' m.out \
    || fail "matrix: a verdict on an interrupted sweep: $(cat m.out)"
python3 - m.jsonl <<'PY' || fail "matrix's JSON lines: $(cat m.jsonl)"
import json, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n")
L = [json.loads(l) for l in text.splitlines()]
assert [l["status"] for l in L] == ["ok", "interrupted"], [l["status"] for l in L]
ok, st = L
assert ok["matrix"]["fs"] == "tmpfs" and ok["config"]["clients"] == 1
assert st["matrix"]["native"] and st["config"]["clients"] == 1, st["matrix"]
assert st["interrupted"] == {"signal": "SIGINT", "during": "measured phase"}, st["interrupted"]
m = st["metrics"]
assert m["txns"] > 0 and 0 < m["seconds"] < 3 and m["tps"] > 0, m
PY
if awk -v w="$wd" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    fail "matrix after SIGINT left a mount: $(grep -F "$wd" /proc/mounts)"
fi
[ ! -e "$wd" ] || fail "matrix after SIGINT left $(find "$wd")"
echo "interrupt_matrix: passed"
