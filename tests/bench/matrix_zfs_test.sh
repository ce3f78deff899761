#!/usr/bin/env bash
# matrix_zfs_test.sh COMMITLAB -- `commitlab matrix --fs zfs`, short:
# bad --zfs-* values exit 2 with one line naming the flag; a run with two
# datasets (--zfs-recordsize 8k,128k) gives a row each, named after the ZFS
# that ran, with the pool's own write bytes and operations per commit > 0
# (and, --cold-recycle making primarycache=metadata the default, "ARC cold"
# and reads > 0 for recycled segments in 128k records), snapshots
# counted, the dataset's properties and the disk under the pool (for each
# dataset) in the JSON, and the report names the
# ZFS and gives --fs zfs with the --zfs-* lists; after it, after SIGINT,
# and after SIGKILL followed by the next run: no pool, mount or daemon of
# its own left; and a pool it did not create -- this script's own, also
# one a killed run's record was rewritten to name -- survives untouched,
# as does the zfs-fuse daemon it did not start.
# Exit 0: passed; 1: failed; 77: skipped (not root, no ZFS tools, no FUSE).
set -u

BIN=${1:?usage: matrix_zfs_test.sh COMMITLAB}
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
export PATH="$PATH:/usr/sbin:/sbin"
FAILS=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/matrix_zfs.XXXXXX") || exit 1
WD="$WORK/wd"
FOREIGN="cltestforeign$$"
OURDAEMON=""   # a zfs-fuse this script started
KILLED_POOL="" # the pool of a run this script killed, when its record was rewritten
pid=""

cleanup() {
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    zpool list -H -o name "$FOREIGN" >/dev/null 2>&1 && zpool destroy -f "$FOREIGN"
    [ -n "$KILLED_POOL" ] && zpool list -H -o name "$KILLED_POOL" >/dev/null 2>&1 && zpool destroy -f "$KILLED_POOL"
    if [ -n "$OURDAEMON" ]; then
        kill "$OURDAEMON" 2>/dev/null
        for _ in $(seq 1 150); do kill -0 "$OURDAEMON" 2>/dev/null || break; sleep 0.2; done
    fi
    local m
    for m in $(awk -v w="$WORK" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

[ "$(id -u)" -eq 0 ] || { echo "skipped: matrix needs root"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
KERNEL=0
if grep -qw zfs /proc/filesystems && command -v zpool >/dev/null; then
    KERNEL=1
elif ! command -v zfs-fuse >/dev/null || ! command -v zpool >/dev/null; then
    echo "skipped: no ZFS: the kernel has none loaded and zfs-fuse is not installed (apt-get install zfs-fuse)"
    exit 77
elif [ ! -w /dev/fuse ]; then
    echo "skipped: zfs-fuse needs /dev/fuse, which is not usable here"
    exit 77
fi
daemon_pids() { pgrep -x zfs-fuse 2>/dev/null | sort; }
BEFORE=$(daemon_pids)

# No pool, mount, image or daemon of matrix's left.
check_nothing_left() {
    if awk -v w="$WD" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
        fail "$1: a mount under the workdir is left: $(grep -F "$WD" /proc/mounts)"
    fi
    if zpool list -H -o name 2>/dev/null | grep -q '^commitlab-'; then
        fail "$1: a pool of matrix's is left: $(zpool list -H -o name | grep '^commitlab-')"
    fi
    if [ "$KERNEL" = 0 ] && [ "$(daemon_pids)" != "$2" ]; then
        fail "$1: the zfs-fuse daemons are $(daemon_pids | tr '\n' ' '), not as before ($2)"
    fi
    [ -e "$WD/zfs" ] && fail "$1: $WD/zfs is left"
    return 0
}

wait_mounted() {
    for _ in $(seq 1 300); do
        awk -v w="$WD" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/mounts && return 0
        sleep 0.1
    done
    return 1
}

# ---- 1. bad values: one line naming the flag, exit 2 --------------------------
expect_usage() {
    local what=$1 flag=$2
    shift 2
    "$BIN" matrix --workdir "$WD" "$@" >"$WORK/u.out" 2>"$WORK/u.err"
    local rc=$?
    if [ $rc -ne 2 ]; then
        fail "$what: exit $rc, not 2"
    elif [ "$(wc -l <"$WORK/u.err")" -ne 1 ] || ! grep -q -- "$flag" "$WORK/u.err"; then
        fail "$what: the message is not one line naming $flag: $(cat "$WORK/u.err")"
    else
        pass "$what"
    fi
}
expect_usage "bad --zfs-recordsize" "--zfs-recordsize" --fs zfs --zfs-recordsize 8k,3k
expect_usage "too large --zfs-recordsize" "--zfs-recordsize" --fs zfs --zfs-recordsize 1M
expect_usage "bad --zfs-primarycache" "--zfs-primarycache" --fs zfs --zfs-primarycache none
expect_usage "bad --zfs-logbias" "--zfs-logbias" --fs zfs --zfs-logbias fast
expect_usage "bad --zfs-compression" "--zfs-compression" --fs zfs --zfs-compression gzip
expect_usage "--zfs-recordsize without zfs" "--zfs-recordsize" --fs tmpfs --zfs-recordsize 8k
[ "$KERNEL" = 0 ] && expect_usage "lz4 on zfs-fuse" "--zfs-compression" --fs zfs --zfs-compression lz4

RUN=(--workdir "$WD" --image-size 512M --image-init sparse --clients 1 --keys 2000 --value-size 2000
    --segment-size 64k --checkpoint-bytes 256k --quiet)

# ---- 2. two datasets: rows, pool counters, snapshots, cleanup -----------------
J="$WORK/m.jsonl"
if "$BIN" matrix --fs zfs "${RUN[@]}" --zfs-recordsize 8k,128k --segments recycle --cold-recycle \
    --snapshot-every 1 --duration 2.5 --warmup 0.2 --out "$J" >"$WORK/m.out" 2>"$WORK/m.err"; then
    pass "matrix --fs zfs exits 0"
else
    fail "matrix --fs zfs exited non-zero: $(tail -5 "$WORK/m.err")"
fi
for rs in 8k 128k; do
    if grep -qE "^zfs \((zfs-fuse|OpenZFS)[^)]*, (userspace|kernel)\) recordsize=$rs +commitlab +commit +recycle .* pool rd/wr B/txn [0-9]+/[0-9]+ ops/txn [0-9.]+/[0-9.]+  ARC cold( |$)" "$WORK/m.out"; then
        pass "a row for recordsize=$rs, naming the ZFS that ran, with the pool's counters"
    else
        fail "no zfs row for recordsize=$rs: $(cat "$WORK/m.out")"
    fi
done
if python3 - "$J" <<'EOF'; then pass "JSON: properties, pool counters > 0, cold reads, snapshots, the device under the pool"; else fail "JSON: see above"; fi
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
runs = [r for r in rows if r.get("matrix", {}).get("zfs")]
ok = len(runs) == 2
if not ok:
    print("expected 2 zfs runs, got", len(runs))
for r in runs:
    z, m = r["matrix"]["zfs"], r["matrix"]
    # --cold-recycle makes primarycache=metadata the default: cold in the ARC too
    if z["recordsize"] not in (8192, 131072) or z["primarycache"] != "metadata" or z["logbias"] != "latency" \
            or z["compression"] != "off" or not z["dataset"].startswith(z["pool"] + "/"):
        print("properties:", z); ok = False
    if not (z["pool_write_bytes_per_commit"] or 0) > 0 or not (z["pool_write_ops_per_commit"] or 0) > 0:
        print("pool writes not > 0:", z); ok = False
    # the disk under the pool's image, for every dataset: a FUSE mount names none of its own
    if not r["env"].get("device") or r["metrics"].get("device_bytes_per_commit") is None:
        print("no device under the pool for", m["fs"], r["env"].get("device")); ok = False
    if not (z["cold_recycle"] or "").startswith("ARC cold"):
        print("cold_recycle not said:", z); ok = False
    # a cold recycled segment in 128k records: each partial overwrite reads the record from the pool
    if z["recordsize"] == 131072 and not (z["pool_read_bytes_per_commit"] or 0) > 0:
        print("no pool reads for cold 128k records:", z); ok = False
    if not (m["snapshots"] or 0) >= 1:
        print("no snapshot counted:", m); ok = False
    if not m["fs"].startswith("zfs ("):
        print("fs does not name the ZFS:", m["fs"]); ok = False
sys.exit(0 if ok else 1)
EOF
if "$BIN" report "$J" -o "$WORK/r.html" >/dev/null 2>&1 && grep -qE "zfs \((zfs-fuse|OpenZFS)" "$WORK/r.html" &&
    grep -qE "commitlab matrix --fs zfs --[^<]*--zfs-recordsize (8192,131072|131072,8192) --zfs-primarycache metadata" "$WORK/r.html"; then
    pass "the report names the ZFS that ran, and its command says --fs zfs and the --zfs-* lists"
else
    fail "the report: $(grep -o "commitlab matrix[^<]*" "$WORK/r.html" | head -2)"
fi
check_nothing_left "after a normal run" "$BEFORE"

# ---- 3. SIGINT: exit 130, everything destroyed and stopped --------------------
"$BIN" matrix --fs zfs "${RUN[@]}" --segments recycle --duration 30 >"$WORK/i.out" 2>"$WORK/i.err" &
pid=$!
if wait_mounted; then
    sleep 1
    kill -INT $pid
    wait $pid
    rc=$?
    pid=""
    if [ $rc -eq 130 ]; then pass "SIGINT: exit 130"; else fail "SIGINT: exit $rc: $(tail -3 "$WORK/i.err")"; fi
    check_nothing_left "after SIGINT" "$BEFORE"
else
    fail "the interrupted run never mounted its dataset: $(cat "$WORK/i.err")"
fi

# ---- 4. SIGKILL: the next run destroys the pool and stops the daemon ----------
"$BIN" matrix --fs zfs "${RUN[@]}" --segments recycle --duration 30 >/dev/null 2>&1 &
pid=$!
if wait_mounted; then
    kill -KILL $pid
    wait $pid 2>/dev/null
    pid=""
    left=$(cut -d' ' -f1 "$WD/zfs/pool")
    if zpool list -H -o name "$left" >/dev/null 2>&1; then pass "after SIGKILL, its pool $left is still there"; else
        fail "after SIGKILL, no pool was left to clean up"; fi
    "$BIN" matrix --fs zfs "${RUN[@]}" --segments recycle --duration 0.3 --warmup 0 >"$WORK/k.out" 2>"$WORK/k.err"
    if grep -q "destroyed the pool $left, left by an earlier run" "$WORK/k.err"; then
        pass "the next run destroyed the killed run's pool"
    else
        fail "the next run did not say it destroyed $left: $(cat "$WORK/k.err")"
    fi
    if [ "$KERNEL" = 0 ] && [ -z "$BEFORE" ] && ! grep -q "stopped zfs-fuse (pid [0-9]*), started by an earlier run" "$WORK/k.err"; then
        fail "the next run did not stop the daemon the killed run started: $(cat "$WORK/k.err")"
    fi
    check_nothing_left "after SIGKILL and another run" "$BEFORE"
else
    fail "the killed run never mounted its dataset"
fi

# ---- 5. a pool matrix did not create survives -----------------------------------
if [ "$KERNEL" = 0 ] && [ -z "$BEFORE" ]; then
    setsid zfs-fuse -n --no-kstat-mount -p "$WORK/zfs-fuse.pid" >"$WORK/zfs-fuse.log" 2>&1 &
    OURDAEMON=$!
    for _ in $(seq 1 100); do zpool list >/dev/null 2>&1 && break; sleep 0.2; done
fi
truncate -s 256M "$WORK/foreign.img"
if ! zpool create -o cachefile=none -O mountpoint=none -O commitlab:owner=someone "$FOREIGN" "$WORK/foreign.img"; then
    fail "could not create this script's own pool"
else
    DAEMONS=$(daemon_pids)
    "$BIN" matrix --fs zfs "${RUN[@]}" --segments recycle --duration 0.3 --warmup 0 >"$WORK/f.out" 2>"$WORK/f.err" ||
        fail "matrix beside a foreign pool exited non-zero: $(tail -3 "$WORK/f.err")"
    if zpool list -H -o name "$FOREIGN" >/dev/null 2>&1 &&
        [ "$(zfs get -H -o value commitlab:owner "$FOREIGN")" = someone ]; then
        pass "the foreign pool survived a run, untouched"
    else
        fail "the foreign pool is gone or changed"
    fi
    check_nothing_left "beside a foreign pool (the daemon it did not start still runs)" "$DAEMONS"
    # a killed run's record rewritten to name the foreign pool: refused, kept
    "$BIN" matrix --fs zfs "${RUN[@]}" --segments recycle --duration 30 >/dev/null 2>&1 &
    pid=$!
    if wait_mounted; then
        kill -KILL $pid
        wait $pid 2>/dev/null
        pid=""
        read -r KILLED_POOL token <"$WD/zfs/pool"
        echo "$FOREIGN $token" >"$WD/zfs/pool"
        "$BIN" matrix --fs zfs "${RUN[@]}" --segments recycle --duration 0.3 --warmup 0 >"$WORK/r.out" 2>"$WORK/r.err"
        if zpool list -H -o name "$FOREIGN" >/dev/null 2>&1 && grep -q "the pool $FOREIGN does not carry" "$WORK/r.err"; then
            pass "a record naming a foreign pool: refused, the pool survives"
        else
            fail "a record naming a foreign pool: $(cat "$WORK/r.err")"
        fi
    else
        fail "the run to kill never mounted its dataset"
    fi
fi

if [ "$FAILS" -ne 0 ]; then
    echo "$FAILS check(s) failed"
    exit 1
fi
echo "all matrix zfs checks passed"
