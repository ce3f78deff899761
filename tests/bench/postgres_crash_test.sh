#!/usr/bin/env bash
# postgres_crash_test.sh COMMITLAB -- crash --engine postgres, a private
# server per crash, its processes killed with the clients:
#  1. --mode kill --sync commit,periodic,none (synchronous_commit=on,
#     synchronous_commit=off with wal_writer_delay=10s, fsync=off): exit 0;
#     commit and none lose no acknowledged commit (a kill leaves the page
#     cache: fsync=off's WAL written at each commit survives it); periodic's
#     losses are allowed (it claims no survival; whether two crashes find
#     an acknowledged commit in the WAL buffers is chance, so a loss is
#     printed, not required); no row shows anything partly visible,
#     foreign, or a failed recovery; a replayed crash keeps the cluster,
#     whose log shows the server's crash recovery (the server was killed,
#     not shut down); pipelined (--pipeline 8: libpq's pipeline mode), no
#     commit acknowledged by its sync point's result is lost (--mode cut:
#     postgres_cut_test.sh);
#  2. SIGKILL of commitlab while a crash's server runs: the server
#     outlives it, and the next command in the same --dir stops it before
#     anything else; SIGTERM of that command while its crash runs: exit 143
#     once that crash is whole;
#  3. under an ancestor that adopts orphans and never reaps them (as a
#     container's first process may): the killed server's processes are
#     reaped by commitlab itself, none left a zombie of that ancestor,
#     and the crash is whole (a zombie passes kill(pid, 0) and
#     postmaster.pid's check, so the restart after the kill fails);
#  after each: no postgres process whose working directory is under the
#  test's directory.
# Exit 77 when not root (the server runs as the postgres account), or
# python3, libpq or the server's binaries are missing.
set -u
bin=${1:?usage: postgres_crash_test.sh COMMITLAB}
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
pids=()

# ours [DIR]: the postgres processes whose working directory is under
# DIR (default: the test's directory)
ours() {
    local p c under=${1:-$work}
    for p in $(pgrep -x postgres 2>/dev/null); do
        c=$(readlink "/proc/$p/cwd" 2>/dev/null) || continue
        case $c in "$under"/*) echo "$p" ;; esac
    done
}
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
      for p in $(ours); do kill -9 "$p" 2>/dev/null; done
      rm -rf "$work"' EXIT
cd "$work" || exit 1

none_left() {
    local left
    for _ in $(seq 50); do # a killed server's processes take a moment to be reaped
        left=$(ours)
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    fail "$1: postgres still running: $(ps -o pid,args -p "$(echo $left | tr ' ' ,)")"
}

jsonl() {
    python3 - "$1" "$2" <<'PY' || fail "$1: $(cat "$1")"
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
exec(sys.argv[2])
PY
}

# 1. kill
"$bin" crash --engine postgres --mode kill --sync commit,periodic,none --interval 10000 --clients 2 --txns 15 \
    --iterations 2 --dir d --out kill.jsonl --quiet >kill.txt 2>err.txt || fail "kill: exit $?: $(cat kill.txt err.txt)"
jsonl kill.jsonl '
assert len(L) == 3, len(L)
by = {o["sync"]: o for o in L}
for s, o in by.items():
    assert o["engine"] == "postgres" and o["mode"] == "kill", o
    assert o["status"] == "ok", (s, o["reason"], o["first_failure"])
    assert o["crashes"] == 2, (s, o["crashes"])
    for k in ("atomicity_violations", "foreign_values", "phantoms", "recovery_failures"):
        assert o[k] == 0, (s, k, o[k])
assert by["commit"]["acked_lost"] == 0 and by["commit"]["survives_claimed"]["kill"]
assert by["none"]["acked_lost"] == 0 and by["none"]["survives_claimed"]["kill"]
p = by["periodic"]
assert not p["survives_claimed"]["kill"], p["survives_claimed"]
print("periodic: %d acknowledged commits lost in %d crashes (%d mid-run), allowed" % (
    p["acked_lost"], p["crashes"], p["crashes_mid_run"]))
'
none_left kill
# a crash is a crash of the server: the replay keeps its cluster, whose log
# says the start after the kill was a crash recovery, not a start after an
# orderly shutdown
"$bin" crash --engine postgres --mode kill --sync periodic --interval 10000 --clients 2 --txns 5 --replay 1 \
    --dir r --quiet >replay.txt 2>&1 || fail "replay: exit $?: $(cat replay.txt)"
grep -q "database system was not properly shut down; automatic recovery in progress" \
    r/crash/cluster/commitlab-server.log || fail "replay: no crash recovery in the server's log: $(cat r/crash/cluster/commitlab-server.log)"
none_left replay
echo "kill: ${SECONDS}s"
[ "$(ls d)" = "" ] || fail "kill: left in d: $(ls d)"
# pipelined (libpq's pipeline mode, 8 in flight per client): a commit is
# acknowledged only by its sync point's result, and none of those is lost
"$bin" crash --engine postgres --mode kill --sync commit --pipeline 8 --clients 2 --txns 40 --iterations 1 --dir d \
    --out pipe.jsonl --quiet >pipe.txt 2>err.txt || fail "kill --pipeline 8: exit $?: $(cat pipe.txt err.txt)"
jsonl pipe.jsonl '
assert len(L) == 1, len(L)
o = L[0]
assert o["pipeline"] == 8 and o["status"] == "ok", (o["pipeline"], o["reason"], o["first_failure"])
assert o["crashes"] == 1 and o["acked_lost"] == 0, o
for k in ("atomicity_violations", "foreign_values", "phantoms", "recovery_failures"):
    assert o[k] == 0, (k, o[k])
'
none_left "kill --pipeline"
echo "kill --pipeline: ${SECONDS}s"

# 2. SIGKILL of commitlab while a crash's server runs, then SIGTERM of the
# next command in the same --dir while its crash runs
# wait_server DIR: until a crash's server runs under DIR/crash (at most 60 s)
wait_server() {
    for _ in $(seq 600); do
        [ -n "$(ours "$work/$1/crash")" ] && return 0
        sleep 0.1
    done
    fail "no crash's server started under $work/$1/crash"
}
"$bin" crash --engine postgres --mode kill --sync commit --iterations 50 --dir k --quiet >killed.txt 2>&1 &
pids+=($!)
wait_server k
{ kill -KILL "${pids[-1]}" && wait "${pids[-1]}"; } 2>/dev/null # the shell's "Killed" is not the test's output
left=$(ours "$work/k")
[ -n "$left" ] || fail "SIGKILL: the server did not outlive commitlab (nothing to reap)"
"$bin" crash --engine postgres --mode kill --sync commit --iterations 50 --dir k --quiet >term.txt 2>&1 &
pids+=($!)
for _ in $(seq 600); do # the leftover stopped before anything runs
    kill -0 $left 2>/dev/null || break
    sleep 0.1
done
kill -0 $left 2>/dev/null && fail "the next command did not stop the leftover server $left"
wait_server k
kill -TERM "${pids[-1]}"
wait "${pids[-1]}"
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc, want 143: $(cat term.txt)"
grep -q "interrupted by SIGTERM" term.txt || fail "SIGTERM: no note of the stop: $(cat term.txt)"
none_left "SIGKILL, then SIGTERM of the next command"

# 3. an ancestor that is given orphans (PR_SET_CHILD_SUBREAPER) and never
# reaps them: every zombie left its child is a process commitlab did not reap
python3 - "$bin" crash --engine postgres --mode kill --sync commit --clients 2 --txns 10 --iterations 2 --dir z \
    --out z.jsonl --quiet >zombies.txt 2>&1 <<'PY' || fail "orphans: $(cat zombies.txt)"
import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(36, 1, 0, 0, 0) == 0, "PR_SET_CHILD_SUBREAPER: errno %d" % ctypes.get_errno()
try:
    rc = subprocess.run(sys.argv[1:], timeout=120).returncode
except subprocess.TimeoutExpired:
    rc = "timed out after 120 s"
zombies = []
for p in filter(str.isdigit, os.listdir("/proc")):
    try:
        st = open("/proc/%s/stat" % p).read()
    except OSError:
        continue
    comm, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
    if rest[0] == "Z" and int(rest[1]) == os.getpid():
        zombies.append("%s (%s)" % (p, comm))
print("exit %s; zombies left to the ancestor: %s" % (rc, ", ".join(zombies) or "none"))
sys.exit(0 if rc == 0 and not zombies else 1)
PY
jsonl z.jsonl '
assert len(L) == 1 and L[0]["status"] == "ok" and L[0]["crashes"] == 2 and L[0]["acked_lost"] == 0, L
'
none_left orphans
echo "ok: ${SECONDS}s"
