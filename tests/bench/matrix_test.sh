#!/usr/bin/env bash
# matrix_test.sh COMMITLAB -- runs the real `commitlab matrix` on tmpfs and
# on a loop-mounted ext4 image, short, and checks what it promises: the
# table and a verdict per filesystem, JSON lines that record the
# filesystem, the device bytes and the segment statistics, recycled
# segments really reused, bad arguments exit 2 naming the flag, and --
# after a normal run, after SIGINT, and after SIGKILL followed by another
# run -- no mount and no loop device of its own left behind; a second run
# in the same workdir is refused, naming the first, whose mounts stay.
# Exit 0: passed; 1: failed; 77: skipped (not root, or no loop devices or
# mkfs.ext4).
set -u

BIN=${1:?usage: matrix_test.sh COMMITLAB}
FAILS=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/matrix_test.XXXXXX") || exit 1
WD="$WORK/wd"

# Whatever happens to this script, nothing of ours stays mounted or attached.
cleanup() {
    local m
    for m in $(awk -v w="$WD" 'index($2, w) == 1 { print $2 }' /proc/mounts); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    losetup -a 2>/dev/null | grep -F "$WD" | cut -d: -f1 | while read -r d; do losetup -d "$d"; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

if [ "$(id -u)" -ne 0 ]; then
    echo "skipped: matrix needs root"
    exit 77
fi
if [ ! -w /dev/loop-control ] || ! PATH="$PATH:/usr/sbin:/sbin" command -v mkfs.ext4 >/dev/null; then
    echo "skipped: no loop devices or no mkfs.ext4"
    exit 77
fi

# Nothing of ours is mounted or attached.
check_nothing_left() {
    if awk -v w="$WD" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
        fail "$1: a mount under the workdir is left: $(grep -F "$WD" /proc/mounts)"
    fi
    if losetup -a 2>/dev/null | grep -qF "$WD"; then
        fail "$1: a loop device of ours is left: $(losetup -a | grep -F "$WD")"
    fi
}

# Waits (up to 30 s) until the matrix has mounted something in the workdir.
wait_mounted() {
    local i
    for i in $(seq 1 300); do
        awk -v w="$WD" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/mounts && return 0
        sleep 0.1
    done
    return 1
}

# ---- 1. bad arguments: one line naming the flag, exit 2 --------------------
expect_usage() {
    local what=$1 flag=$2
    shift 2
    "$BIN" matrix "$@" >"$WORK/u.out" 2>"$WORK/u.err"
    local rc=$?
    if [ $rc -ne 2 ]; then
        fail "$what: exit $rc, not 2"
    elif [ "$(wc -l <"$WORK/u.err")" -ne 1 ] || ! grep -q -- "$flag" "$WORK/u.err"; then
        fail "$what: the message is not one line naming $flag: $(cat "$WORK/u.err")"
    else
        pass "$what"
    fi
}
expect_usage "unknown filesystem" "--fs" --fs ext4,zfs
expect_usage "no --fs" "--fs" --duration 1
expect_usage "--dir refused" "--dir" --fs tmpfs --dir /tmp
expect_usage "bad bench option" "--segments" --fs tmpfs --segments sometimes
expect_usage "bad --mount-opts" "--mount-opts" --fs tmpfs --mount-opts noatime
expect_usage "small --image-size" "--image-size" --fs ext4 --image-size 1M
if "$BIN" matrix --help | grep -q -- "--workdir"; then pass "--help"; else fail "--help"; fi

# ---- 2. a short run on tmpfs and ext4 ---------------------------------------
# 2000-byte values: even on a loaded machine (a few hundred commits a
# second) the measured 1.5 s pass several 256k checkpoints, so segments are
# recycled and reused within it, not only during the warm-up.
J="$WORK/m.jsonl"
if "$BIN" matrix --fs tmpfs,ext4 --workdir "$WD" --image-size 256M --segments fresh,recycle --clients 1 \
    --duration 1.5 --warmup 0.2 --keys 2000 --value-size 2000 --segment-size 64k --checkpoint-bytes 256k --quiet \
    --out "$J" >"$WORK/m.out" 2>"$WORK/m.err"; then
    pass "matrix on tmpfs and ext4 exits 0"
else
    fail "matrix exited non-zero: $(tail -5 "$WORK/m.err")"
fi
for fs in tmpfs ext4; do
    if grep -qE "^$fs +commitlab +commit +recycle +zero +0 +1 +1 +[0-9]+\.[0-9]" "$WORK/m.out" &&
        grep -qE "^$fs +commitlab +commit +fresh +zero" "$WORK/m.out"; then
        pass "$fs: a fresh and a recycle row"
    else
        fail "$fs: rows missing: $(cat "$WORK/m.out")"
    fi
    if grep -qE "^  verdict: $fs, commitlab: recycling (helps|hurts|does not matter \(within the noise\)|has a small or mixed effect) here" "$WORK/m.out"; then
        pass "$fs: a verdict"
    else
        fail "$fs: no verdict line"
    fi
done
if grep -q "NOTE: recycling not exercised" "$WORK/m.out"; then
    fail "recycling was not exercised in the short run"
fi
check_nothing_left "after a normal run"
if [ -e "$WD" ]; then fail "the workdir was not removed: $(ls -A "$WD")"; fi

if command -v python3 >/dev/null; then
    if python3 - "$J" <<'EOF'; then pass "JSON lines: environment, device bytes, segment statistics"; else fail "JSON lines"; fi
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in runs if r.get("schema") == "commitlab-bench/1"]
verdicts = [r for r in runs if r.get("schema") == "commitlab-matrix-verdict/1"]
assert len(rows) == 4, len(rows)
assert sorted(v["fs"] for v in verdicts) == ["ext4", "tmpfs"], verdicts
for r in rows:
    m, env, seg = r["matrix"], r["env"], r["metrics"]["segments"]
    assert r["status"] == "ok", r
    assert env["fs_type"] == m["fs_type"], (env["fs_type"], m)
    assert m["repeats"] == 1 and m["repeat"] == 1
    assert r["config"]["segment_size"] == 65536 and r["config"]["checkpoint_bytes"] == 262144
    if m["fs"] == "ext4":
        assert m["loop_device"].startswith("/dev/loop"), m
        assert env["device"].startswith("loop"), env
        assert r["metrics"]["device_bytes_per_commit"] > 0, r["metrics"]
        assert "lazy_itable_init=0" in m["mkfs"], m
    assert seg["switches"] > 0, seg
    if r["config"]["segments"] == "recycle":
        assert seg["reused"] > 0 and seg["recycled"] > 0, seg
    else:
        assert seg["reused"] == 0 and seg["recycled"] == 0 and seg["created"] > 0, seg
    assert any(s["segment_switches"] for s in r["metrics"]["timeline"]), r["metrics"]["timeline"]
EOF
fi

# ---- 3. SIGINT in the middle of a run: cleaned up, exit 130 ----------------
"$BIN" matrix --fs ext4 --workdir "$WD" --image-size 256M --duration 30 --warmup 0 --keys 1000 --quiet \
    >"$WORK/i.out" 2>"$WORK/i.err" &
pid=$!
if wait_mounted; then
    sleep 1
    kill -INT $pid
    wait $pid
    rc=$?
    if [ $rc -eq 130 ]; then pass "SIGINT: exit 130"; else fail "SIGINT: exit $rc: $(cat "$WORK/i.err")"; fi
    check_nothing_left "after SIGINT"
else
    fail "the interrupted run never mounted its filesystem: $(cat "$WORK/i.err")"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
fi

# ---- 4. SIGKILL: the next run in the same workdir removes what was left ----
"$BIN" matrix --fs ext4 --workdir "$WD" --image-size 256M --duration 30 --warmup 0 --keys 1000 --quiet \
    >/dev/null 2>&1 &
pid=$!
if wait_mounted; then
    sleep 0.5
    kill -KILL $pid
    wait $pid 2>/dev/null
    if "$BIN" matrix --fs tmpfs --workdir "$WD" --duration 0.3 --warmup 0 --keys 1000 --quiet \
        >"$WORK/k.out" 2>"$WORK/k.err" && grep -q "left by an earlier run" "$WORK/k.err"; then
        pass "after SIGKILL, the next run removed the leftovers"
    else
        fail "after SIGKILL: $(cat "$WORK/k.err")"
    fi
    check_nothing_left "after SIGKILL and another run"
else
    fail "the killed run never mounted its filesystem"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
fi

# ---- 5. two runs in one workdir: the second is refused, the first untouched --
"$BIN" matrix --fs tmpfs --workdir "$WD" --duration 3 --warmup 0 --keys 1000 --quiet \
    >"$WORK/t1.out" 2>"$WORK/t1.err" &
pid=$!
if wait_mounted; then
    mounts=$(awk -v w="$WD" 'index($2, w) == 1 { print $2 }' /proc/mounts)
    "$BIN" matrix --fs tmpfs --workdir "$WD" --duration 0.3 --warmup 0 --keys 1000 --quiet \
        >"$WORK/t2.out" 2>"$WORK/t2.err"
    rc=$?
    if [ $rc -eq 2 ] && grep -qx "commitlab matrix: --workdir $WD is in use by another run (process $pid)" "$WORK/t2.err"; then
        pass "a second run in the same workdir is refused, naming the first"
    else
        fail "a second run in the same workdir: exit $rc: $(cat "$WORK/t2.err")"
    fi
    if [ "$(awk -v w="$WD" 'index($2, w) == 1 { print $2 }' /proc/mounts)" = "$mounts" ]; then
        pass "the first run's mounts are intact"
    else
        fail "the refused run changed the first one's mounts"
    fi
    if wait $pid; then pass "the first run finished"; else fail "the first run failed: $(tail -3 "$WORK/t1.err")"; fi
    check_nothing_left "after two runs in one workdir"
else
    fail "the first of two runs never mounted its filesystem: $(cat "$WORK/t1.err")"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
fi

if [ $FAILS -ne 0 ]; then
    echo "$FAILS check(s) failed"
    exit 1
fi
echo "all matrix checks passed"
exit 0
