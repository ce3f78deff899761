#!/usr/bin/env bash
# postgres_cut_test.sh COMMITLAB -- crash --mode cut --engine postgres: the
# interposer preloaded into every process of a private server, one undo
# journal for all of them, the cluster rolled back to its synced state
# after the kill, then the server's own crash recovery:
#  1. --sync commit,none (synchronous_commit=on; fsync=off), 3 cuts each:
#     exit 0; commit loses no acknowledged commit (sync_durable); none
#     loses some (the WAL it writes at each commit is never synced, and a
#     cut drops it, where a kill keeps it); no row shows anything partly
#     visible, foreign, or a failed recovery;
#  2. a replayed cut keeps its journal and cluster: the server's log
#     shows its crash recovery, and the journal of the first of seeds 1-8
#     whose cut came after a commit's WAL flush holds syncs (the committing
#     process syncs nothing: the server's processes journaled them);
#  after each: no postgres process under the test's directory, no process
#  started with the journal in its environment, and nothing left in the
#  campaign's --dir.
# Exit 77 when not root (the server runs as the postgres account), or
# python3, libpq or the server's binaries are missing.
set -u
bin=${1:?usage: postgres_cut_test.sh COMMITLAB}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
[ "$(id -u)" -eq 0 ] || { echo "skipped: not root"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
line=$("$bin" bench --list-engines | grep '^postgres ')
case $line in
*"not built"*) echo "skipped: built without libpq"; exit 77 ;;
*"no PostgreSQL server binaries"*) echo "skipped: no PostgreSQL server binaries"; exit 77 ;;
esac
id postgres >/dev/null 2>&1 || { echo "skipped: no postgres account"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
chmod 755 "$work" # the server runs as postgres, which must enter it

# ours: the postgres processes whose working directory is under the
# test's directory, and every process whose environment names a journal
# there (a server started with the interposer preloaded)
ours() {
    local p c
    for p in $(pgrep -x postgres 2>/dev/null); do
        c=$(readlink "/proc/$p/cwd" 2>/dev/null) || continue
        case $c in "$work"/*) echo "$p" ;; esac
    done
    for p in /proc/[0-9]*; do
        tr "\0" "\n" 2>/dev/null <"$p/environ" | grep -q "^COMMITLAB_CUT_JOURNAL=$work/" && echo "${p#/proc/}"
    done
}
trap 'for p in $(ours); do kill -9 "$p" 2>/dev/null; done
      rm -rf "$work"' EXIT
cd "$work" || exit 1

none_left() {
    local left
    for _ in $(seq 50); do # a killed server's processes take a moment to be reaped
        left=$(ours)
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    fail "$1: still running: $(ps -o pid,args -p "$(echo $left | tr ' ' ,)")"
}

# 1. commit and none, three cuts each
"$bin" crash --engine postgres --mode cut --sync commit,none --clients 2 --txns 15 --iterations 3 \
    --dir d --out cut.jsonl --quiet >cut.txt 2>err.txt || fail "cut: exit $?: $(cat cut.txt err.txt)"
python3 - cut.jsonl <<'PY' || fail "cut rows do not add up: $(cat cut.txt)"
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
assert len(L) == 2, L
by = {o["sync"]: o for o in L}
for s, o in by.items():
    assert o["engine"] == "postgres" and o["mode"] == "cut" and o["model"] == "cut", o
    assert o["status"] == "ok", (s, o["reason"], o["first_failure"])
    assert o["crashes"] == 3, (s, o["crashes"])
    for k in ("atomicity_violations", "foreign_values", "phantoms", "recovery_failures"):
        assert o[k] == 0, (s, k, o[k])
c, n = by["commit"], by["none"]
assert c["acked_lost"] == 0 and c["sync_durable"] and c["survives_claimed"]["power"], c
assert n["acked_lost"] > 0, ("fsync=off lost nothing in 3 cuts", n)
assert not n["survives_claimed"]["power"], n
print("none: %d acknowledged commits lost in %d cuts" % (n["acked_lost"], n["crashes"]))
PY
none_left cut
[ ! -e d ] || fail "cut: left in d: $(ls -a d)"
echo "cut: ${SECONDS}s"

# 2. a replay keeps the journal: the server's processes wrote it.  A
# cut drawn before the first commit's WAL flush finds no sync to journal
# (the moment is a seed's share of a timed run, which a loaded machine
# stretches), so the seeds are tried in turn until one cut came after one
syncs() { # JOURNAL: its CUT_SYNC records
    python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
i = syncs = 0
while i + 64 <= len(b):
    magic, typ, _, ln = struct.unpack_from("<IHHI", b, i)
    if magic != 0x31545543 or ln < 64:
        break
    syncs += typ == 4  # CUT_SYNC
    i += ln
print(syncs)
PY
}
for seed in 1 2 3 4 5 6 7 8; do
    "$bin" crash --engine postgres --mode cut --sync commit --clients 2 --txns 15 --replay $seed --dir r$seed --quiet \
        >replay.txt 2>&1 || fail "replay $seed: exit $?: $(cat replay.txt)"
    [ -s r$seed/crash.cut/journal ] || fail "replay $seed: no journal kept: $(cat replay.txt)"
    n=$(syncs r$seed/crash.cut/journal) || fail "replay $seed: the journal cannot be read"
    grep -q "database system was not properly shut down; automatic recovery in progress" \
        r$seed/crash/cluster/commitlab-server.log ||
        fail "replay $seed: no crash recovery in the server's log: $(cat r$seed/crash/cluster/commitlab-server.log)"
    [ "$n" -gt 0 ] && break
done
[ "$n" -gt 0 ] || fail "replay: no journal of seeds 1-8 holds a sync"
echo "replay: $n syncs journaled (seed $seed)"
none_left replay
echo "ok: ${SECONDS}s"
