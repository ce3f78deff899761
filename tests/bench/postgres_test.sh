#!/usr/bin/env bash
# postgres_test.sh COMMITLAB -- --engine postgres, a private server per run:
#  1. bench --engine postgres,commitlab --sync commit,none --clients 1,4:
#     exit 0; a JSON line per run, status ok; each postgres line records
#     the settings the server ran with (synchronous_commit, fsync) as read
#     back, WAL syncs per commit > 0 under --sync commit and == 0 under
#     --sync none, log bytes and writes per commit, and CPU per transaction;
#     no server left running, no directory left but --dir's own;
#  2. a knob it cannot express (--sync-method direct): n/a with the reason;
#  3. SIGINT in the measured phase: exit 130, the run interrupted, no
#     server left running;
#  4. SIGKILL of commitlab while its server runs: the server outlives it;
#     the next command in the same --dir stops it before it runs, and
#     leaves nothing running; its run with --verify reads every key back
#     from the cluster started again after the run;
#  5. --pg-set listen_addresses=*, log_checkpoints (its lines are read)
#     and a setting the server does not have: one line naming it, exit 2; a value the server
#     refuses: its start fails, one line with its log, exit 2; nothing
#     left running, and the --dir those commands made removed;
#  6. --reuse: each run with its own settings;
#  7. --pipeline 16 (libpq pipeline mode) at 2 clients: ok, its JSON
#     recording pipeline 16 and the settings with it, and --verify from an
#     empty store finds every key its acknowledged commits wrote; a
#     transaction failing after it was handed over (a serialisation failure
#     under repeatable read) fails the run with the server's reason; tpcb
#     n/a with the reason.
# Exit 77 when python3, libpq or the server's binaries are missing.
set -u
bin=${1:?usage: postgres_test.sh COMMITLAB}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
line=$("$bin" bench --list-engines | grep '^postgres ')
case $line in
*"not built"*) echo "skipped: built without libpq"; exit 77 ;;
*"no PostgreSQL server binaries"*) echo "skipped: no PostgreSQL server binaries"; exit 77 ;;
esac
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
chmod 755 "$work" # as root the server runs as postgres, which must enter it
pids=()
# a server left by a failed check is stopped as the next command would
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
      for p in $(pgrep -f "^[^ ]*postgres -D $work/" 2>/dev/null); do kill -QUIT "$p"; done
      rm -rf "$work"' EXIT
cd "$work" || exit 1

# servers DIR: the postmasters serving a cluster under DIR.
servers() { pgrep -f "^[^ ]*postgres -D $1/" || true; }

none_left() {
    local left
    left=$(servers "$work")
    [ -z "$left" ] || fail "$1: postgres still running: $(ps -o pid,args -p "$(echo $left | tr ' ' ,)")"
}

jsonl() {
    python3 - "$1" "$2" <<'PY' || fail "$1: $(cat "$1")"
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
exec(sys.argv[2])
PY
}

one_line() {
    [ "$(wc -l <"$1")" -eq 1 ] && grep -Eq "$2" "$1" || fail "$1: want one line matching /$2/, got: $(cat "$1")"
}

# wait_server DIR: until a server runs under DIR (at most 30 s).
wait_server() {
    for _ in $(seq 300); do
        [ -n "$(servers "$1")" ] && return 0
        sleep 0.1
    done
    fail "no server started under $1"
}

# 1. the sweep
"$bin" bench --engine postgres,commitlab --sync commit,none --clients 1,4 --duration 0.5 --warmup 0.2 \
    --keys 1000 --pg-set work_mem=8MB --pg-set wal_buffers=1MB --dir d --out runs.jsonl --quiet >table.txt \
    2>err.txt || fail "bench: exit $?: $(cat err.txt)"
jsonl runs.jsonl '
assert len(L) == 8, len(L)
pg = [o for o in L if o["engine"] == "postgres"]
assert len(pg) == 4
for o in L:
    assert o["status"] == "ok", (o["engine"], o["reason"])
for o in pg:
    m, sync = o["metrics"], o["config"]["sync"]
    s = dict(kv.split("=", 1) for kv in o["engine_settings"].split())
    want = {"commit": ("on", "on"), "none": ("on", "off")}[sync]
    assert (s["synchronous_commit"], s["fsync"]) == want, (sync, s)
    assert s["wal_sync_method"] and s["wal_segment_size"] == "16MB", s
    assert (s["work_mem"], s["wal_buffers"]) == ("8MB", "1MB"), s
    assert o["config"]["pg_set"] == "work_mem=8MB;wal_buffers=1MB", o["config"]["pg_set"]
    if sync == "commit":
        assert m["syncs_per_commit"] > 0, m["syncs_per_commit"]
    else:
        assert m["syncs"] == 0, m["syncs"]
    assert m["log_bytes_per_commit"] > 0 and m["log_writes_per_commit"] > 0, m
    assert m["cpu_us_per_txn"] > 0
    # the server'"'"'s context switches are counted; its file calls are not
    # this process'"'"'s to count: null, never 0
    assert m["vcsw_per_txn"] > 0 and m["ivcsw_per_txn"] >= 0, m
    assert m["file_syncs"] is None and m["file_syncs_per_commit"] is None, m
    assert o["env"]["engine_version"].startswith("postgres (PostgreSQL)"), o["env"]["engine_version"]
'
none_left "after the sweep"
[ "$(ls d)" = "" ] || fail "left in --dir: $(ls -a d)"

# 2. n/a, with its reason, and no server for it; --pg-bindir (the one the
# sweep found) and, as root, --pg-user recorded
bindir=$(python3 -c 'import json,sys,re; print(re.search(r" in (/\S+),", json.loads(open("runs.jsonl").readline())["env"]["engine_version"]).group(1))')
as=()
[ "$(id -u)" -eq 0 ] && as=(--pg-user postgres)
"$bin" bench --engine postgres --sync-method direct --duration 0.2 --warmup 0 --keys 100 --dir d \
    --pg-bindir "$bindir" "${as[@]}" --out na.jsonl --quiet >/dev/null 2>err.txt || fail "n/a run: exit $?: $(cat err.txt)"
jsonl na.jsonl "
assert len(L) == 1 and L[0]['status'] == 'n/a', L
assert '--sync-method direct' in L[0]['reason'], L[0]['reason']
assert L[0]['config']['pg_bindir'] == '$bindir', L[0]['config']
assert L[0]['config']['pg_user'] == ('postgres' if $(id -u) == 0 else None), L[0]['config']
"

# 3. SIGINT in the measured phase
"$bin" bench --engine postgres --duration 30 --warmup 0 --keys 1000 --dir d3 --out int.jsonl --quiet \
    >/dev/null 2>int.err &
pids+=($!)
wait_server "$work/d3/postgres.db"
sleep 1.5
kill -INT "${pids[-1]}"
wait "${pids[-1]}"
rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT: exit $rc, want 130: $(cat int.err)"
jsonl int.jsonl 'assert len(L) == 1 and L[0]["status"] == "interrupted", L'
none_left "after SIGINT"

# 4. SIGKILL: the server outlives commitlab; the next command stops it
"$bin" bench --engine postgres --duration 30 --warmup 0 --keys 1000 --dir d4 --quiet >/dev/null 2>&1 &
pids+=($!)
wait_server "$work/d4/postgres.db"
kill -KILL "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null
[ -n "$(servers "$work/d4/postgres.db")" ] || fail "after SIGKILL: the server went with commitlab (nothing to check)"
# (with --verify: its store reopened after the run, the same cluster started again)
"$bin" bench --engine postgres --duration 0.3 --warmup 0 --keys 100 --verify --dir d4 --out v.jsonl --quiet \
    >/dev/null 2>err.txt || fail "the command after SIGKILL: exit $?: $(cat err.txt)"
jsonl v.jsonl 'assert len(L) == 1 and L[0]["status"] == "ok" and L[0]["metrics"]["verified"] is True, L'
[ ! -e d4/postgres.db ] || fail "the run's directory is still there: $(ls -A d4)"
none_left "after the command that followed SIGKILL"

# 5. --pg-set refused
"$bin" bench --engine postgres --pg-set 'listen_addresses=*' --duration 0.2 --dir d5 --quiet >/dev/null 2>err.txt
rc=$?
[ "$rc" -eq 2 ] || fail "--pg-set listen_addresses: exit $rc, want 2"
one_line err.txt 'pg-set listen_addresses.*refused'
"$bin" bench --engine postgres --pg-set no_such_setting=1 --duration 0.2 --dir d5 --quiet >/dev/null 2>err.txt
rc=$?
[ "$rc" -eq 2 ] || fail "--pg-set no_such_setting: exit $rc, want 2"
one_line err.txt 'pg-set no_such_setting: no such PostgreSQL setting'
# the checkpoints' log lines are what the segment counts are read from
"$bin" bench --engine postgres --pg-set Log_Checkpoints=off --duration 0.2 --dir d5 --quiet >/dev/null 2>err.txt
rc=$?
[ "$rc" -eq 2 ] || fail "--pg-set log_checkpoints: exit $rc, want 2"
one_line err.txt 'pg-set log_checkpoints: refused: commitlab counts the WAL segments'
# a line break would make a second line of the server's configuration:
# listen_addresses behind an allowed name
"$bin" bench --engine postgres --pg-set "$(printf 'work_mem=8MB\nlisten_addresses=*')" --duration 0.2 --dir d5 \
    --quiet >/dev/null 2>err.txt
rc=$?
[ "$rc" -eq 2 ] || fail "--pg-set with a line break: exit $rc, want 2"
one_line err.txt 'pg-set: .* is not accepted; expected NAME=VALUE'
# a setting the server has, at a value it refuses: the start fails, one
# line with the server's log, exit 2
"$bin" bench --engine postgres --pg-set shared_buffers=lots --duration 0.2 --dir d5 --quiet >/dev/null 2>err.txt
rc=$?
[ "$rc" -eq 2 ] || fail "--pg-set shared_buffers=lots: exit $rc, want 2"
one_line err.txt 'did not start.*invalid value for parameter "shared_buffers"'
none_left "after --pg-set"
[ ! -e d5 ] || fail "--dir d5, which the refused commands made, left behind: $(ls -A d5)"

# 6. --reuse: one cluster for the sweep, each run with its own settings and
# none of the run before -- --sync none's fsync=off must not reach commit
"$bin" bench --engine postgres --sync none,commit --clients 1 --duration 0.2 --warmup 0 --keys 100 --reuse \
    --dir d6 --out reuse.jsonl --quiet >/dev/null 2>err.txt || fail "--reuse: exit $?: $(cat err.txt)"
jsonl reuse.jsonl '
assert [o["config"]["sync"] for o in L] == ["none", "commit"], L
for o in L:
    s = dict(kv.split("=", 1) for kv in o["engine_settings"].split())
    assert s["fsync"] == {"none": "off", "commit": "on"}[o["config"]["sync"]], (o["config"]["sync"], s)
'
none_left "after --reuse"
rm -rf d6

# 7. --pipeline: libpq's pipeline mode, 16 transactions in flight per
# connection, each acknowledged by its sync point's result; from an empty
# store, so that --verify finds every key a commit wrote, and none other
"$bin" bench --engine postgres --clients 2 --pipeline 16 --duration 0.5 --warmup 0.2 --keys 2000 --no-preload \
    --verify --dir d7 --out pipe.jsonl --quiet >/dev/null 2>err.txt || fail "--pipeline 16: exit $?: $(cat err.txt)"
jsonl pipe.jsonl '
assert len(L) == 1, L
o = L[0]
m = o["metrics"]
assert o["status"] == "ok", o["reason"]
assert o["config"]["pipeline"] == 16 and o["config"]["clients"] == 2, o["config"]
assert o["engine_settings"].endswith(" pipeline=16(PQenterPipelineMode)"), o["engine_settings"]
s = dict(kv.split("=", 1) for kv in o["engine_settings"].split())
assert s["synchronous_commit"] == "on" and s["fsync"] == "on", s
assert m["txns"] > 0 and m["syncs_per_commit"] > 0, m
assert m["verified"] is True, m["verified"]
assert m["latency_us"]["p50"] > 0, m["latency_us"]
'
# a transaction that fails after it was handed over: its ticket fails the
# run, with the server's reason (a serialisation failure cannot be run
# again in its place); tpcb cannot be pipelined (its writes need its reads)
"$bin" bench --engine postgres --clients 2 --pipeline 16 --duration 1 --warmup 0 --keys 4 \
    --pg-set "default_transaction_isolation=repeatable read" --dir d7 --out pfail.jsonl --quiet >/dev/null 2>err.txt
jsonl pfail.jsonl '
assert len(L) == 1 and L[0]["status"] == "error", L
r = L[0]["reason"]
assert "cannot be run again in its place" in r and "could not serialize access" in r, r
'
"$bin" bench --engine postgres --workload tpcb --pipeline 4 --duration 0.2 --dir d7 --out ptpcb.jsonl --quiet \
    >/dev/null 2>err.txt || fail "--pipeline with tpcb: exit $?: $(cat err.txt)"
jsonl ptpcb.jsonl '
assert len(L) == 1 and L[0]["status"] == "n/a", L
assert L[0]["reason"].startswith("--pipeline 4 with --workload tpcb: each balance it writes"), L[0]["reason"]
'
none_left "after --pipeline"
echo "ok"
