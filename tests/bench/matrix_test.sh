#!/usr/bin/env bash
# matrix_test.sh COMMITLAB -- runs the real `commitlab matrix` on tmpfs and
# on a loop-mounted ext4 image, short, and checks what it promises: the
# table and a verdict per filesystem, the native baseline beside them (and
# set against the loop filesystem of its type), JSON lines that record the
# filesystem, the loop mode, the device bytes written and read and the
# segment statistics, recycled segments really reused, bad arguments exit
# 2 naming the flag; --device on a loop device this script attaches (and
# its refusals: a file, a mounted device, one that carries a filesystem or
# a partition table, one with a mounted partition, another device named by
# --destroy-data, the root filesystem's device);
# cold recycled segments read from the device; btrfs snapshots counted;
# and -- after a normal run, after SIGINT, and after SIGKILL followed by
# another run -- no mount, no snapshot and no loop device of its own left
# behind; a second run in the same workdir is refused, naming the first,
# whose mounts stay; a directory, file or link of the user's where a run's
# directory would go is refused and left as it was.  Only loop devices this script attached are ever
# formatted.
# Exit 0: passed; 1: failed; 77: skipped (not root, or no loop devices or
# mkfs.ext4).
set -u

BIN=${1:?usage: matrix_test.sh COMMITLAB}
FAILS=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/matrix_test.XXXXXX") || exit 1
WD="$WORK/wd"
DEVLOOP=""   # the loop device this script attached to stand in for a disk
PARTLOOP=""  # and one with a partition table (losetup -P)

# Whatever happens to this script, nothing of ours stays mounted or attached.
cleanup() {
    local m
    for m in $(awk -v w="$WORK" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    losetup -a 2>/dev/null | grep -F "$WD" | cut -d: -f1 | while read -r d; do losetup -d "$d"; done
    [ -n "$DEVLOOP" ] && losetup -d "$DEVLOOP" 2>/dev/null
    [ -n "$PARTLOOP" ] && losetup -d "$PARTLOOP" 2>/dev/null
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
expect_usage "unknown filesystem" "--fs" --fs ext4,reiserfs
expect_usage "no --fs" "--fs" --duration 1
expect_usage "--dir refused" "--dir" --fs tmpfs --dir /tmp
expect_usage "bad bench option" "--segments" --fs tmpfs --segments sometimes
expect_usage "bad --mount-opts" "--mount-opts" --fs tmpfs --mount-opts noatime
expect_usage "small --image-size" "--image-size" --fs ext4 --image-size 1M
expect_usage "bad --loop" "--loop" --fs ext4 --loop sometimes
expect_usage "--snapshot-every without btrfs" "--snapshot-every" --fs ext4 --snapshot-every 1
expect_usage "bad --snapshot-every" "--snapshot-every" --fs btrfs --snapshot-every 0
expect_usage "--destroy-data without --device" "--destroy-data" --fs ext4 --destroy-data /dev/null
expect_usage "bad --preset" "--preset" --fs tmpfs --preset everything
expect_usage "--device is not a block device" "--device" --fs ext4 --device "$WORK"
expect_usage "--device with tmpfs" "--device" --fs tmpfs --device /dev/null
expect_usage "--device with --loop" "--loop" --fs ext4 --device /dev/null --loop direct
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
NATIVE=$(stat -f -c %T "$WORK" 2>/dev/null)
if grep -qE "^native [a-z0-9/]+ +commitlab +commit +recycle +zero +0 +1 +1 +[0-9]+\.[0-9]" "$WORK/m.out" &&
    grep -qE "^  verdict: native [a-z0-9/]+, commitlab: recycling" "$WORK/m.out"; then
    pass "the native baseline: its rows and its verdict"
else
    fail "the native rows are missing: $(cat "$WORK/m.out")"
fi
if grep -qE "^native ext4 " "$WORK/m.out"; then
    if grep -q "^ext4 on a loop device (buffered, zero-filled image) against native ext4" "$WORK/m.out" &&
        grep -qE "^  commitlab .*segments=recycle +native +[0-9.]+ tps +loop +[0-9.]+ tps +loop/native [0-9.]+$" "$WORK/m.out" &&
        grep -qE "^  (commitlab: the verdicts agree|NOTE: commitlab: the loop verdict disagrees with the native one)" "$WORK/m.out"; then
        pass "ext4 on a loop device set against native ext4, verdicts compared"
    else
        fail "no comparison of loop and native ext4: $(cat "$WORK/m.out")"
    fi
else
    echo "note: the workdir is on $NATIVE, not ext4: the loop/native comparison is not checked"
fi
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
layers = [r for r in runs if r.get("schema") == "commitlab-matrix-layer/1"]
assert len(rows) == 6, len(rows)
native = [r for r in rows if r["matrix"]["native"]]
assert len(native) == 2, native
nfs = native[0]["matrix"]["fs"]
assert nfs.startswith("native "), nfs
assert sorted(v["fs"] for v in verdicts) == sorted(["ext4", "tmpfs", nfs]), verdicts
assert [v["native"] for v in verdicts if v["fs"] == nfs] == [True]
if nfs == "native ext4":
    assert len(layers) == 1 and layers[0]["fs"] == "ext4" and layers[0]["layer"] == "loop", layers
    assert layers[0]["loop"] == "buffered" and layers[0]["image_init"] == "zero", layers
    assert len(layers[0]["configs"]) == 2 and all(c["ratio"] > 0 for c in layers[0]["configs"]), layers
    assert layers[0]["agree"] == (layers[0]["verdict"] == layers[0]["native_verdict"]), layers
for r in rows:
    m, env, seg = r["matrix"], r["env"], r["metrics"]["segments"]
    assert r["status"] == "ok", r
    assert env["fs_type"] == m["fs_type"], (env["fs_type"], m)
    assert m["repeats"] == 1 and m["repeat"] == 1
    assert r["config"]["segment_size"] == 65536 and r["config"]["checkpoint_bytes"] == 262144
    assert "device_read_bytes_per_commit" in r["metrics"]
    if m["native"]:
        assert m["loop"] is None and m["loop_device"] is None and m["mkfs"] is None, m
    if m["fs"] == "ext4":
        assert not m["native"] and m["loop"] == "buffered" and m["image_init"] == "zero", m
        assert m["loop_device"].startswith("/dev/loop"), m
        assert env["device"].startswith("loop"), env
        assert r["metrics"]["device_bytes_per_commit"] > 0, r["metrics"]
        assert r["metrics"]["device_read_bytes_per_commit"] is not None, r["metrics"]
        assert "lazy_itable_init=0" in m["mkfs"], m
    assert seg["switches"] > 0, seg
    if r["config"]["segments"] == "recycle":
        assert seg["reused"] > 0 and seg["recycled"] > 0, seg
    else:
        assert seg["reused"] == 0 and seg["recycled"] == 0 and seg["created"] > 0, seg
    assert any(s["segment_switches"] for s in r["metrics"]["timeline"]), r["metrics"]["timeline"]
    if m["fs"] == "ext4":
        assert env["fs_journal"] is True, env          # mkfs.ext4's default
    if m["fs"] == "tmpfs":
        assert env["fs_journal"] is None, env
    if m["native"] and m["fs_type"] == "ext4":
        assert env["fs_journal"] in (True, False), env
nat = [r["env"]["fs_journal"] for r in rows if r["matrix"]["native"]][0]
if nfs == "native ext4":
    assert layers[0]["native_journal"] == nat and layers[0]["journal"] is True, layers
EOF
fi

# An ext4 made without a journal, beside the native one: the rows say which
# runs a journal, and where one of the two does not, the loop/native block
# says that its ratio is the journal's cost too.  One of the two runs (this
# one or the one above, by the native filesystem's journal) must say so.
if "$BIN" matrix --fs ext4 --mkfs-opts "ext4:-O ^has_journal" --workdir "$WD" --image-size 256M --segments recycle \
    --clients 1 --duration 0.5 --warmup 0.1 --keys 2000 --value-size 2000 --segment-size 64k --checkpoint-bytes 256k \
    --quiet --out "$WORK/nj.jsonl" >"$WORK/nj.out" 2>"$WORK/nj.err"; then
    pass "matrix on an ext4 without a journal exits 0"
else
    fail "matrix on an ext4 without a journal exited non-zero: $(tail -5 "$WORK/nj.err")"
fi
if command -v python3 >/dev/null; then
    if python3 - "$WORK/nj.jsonl" <<'EOF'; then pass "an ext4 without a journal is recorded as one"; else fail "fs_journal of the ext4 without a journal"; fi
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
loop = [r for r in rows if r.get("schema") == "commitlab-bench/1" and not r["matrix"]["native"]]
assert loop and all(r["env"]["fs_journal"] is False for r in loop), [r["env"] for r in loop]
EOF
fi
if grep -q "^native ext4 " "$WORK/m.out"; then
    if grep -q "^  NOTE: native ext4 runs a journal and ext4 does not: loop/native is the journal's cost" "$WORK/nj.out" ||
        grep -q "^  NOTE: native ext4 runs no journal and ext4 does: loop/native is the journal's cost" "$WORK/m.out"; then
        pass "the loop/native block says where only one of the two runs a journal"
    else
        fail "no journal note in either run: $(cat "$WORK/m.out" "$WORK/nj.out")"
    fi
    if grep -q "NOTE: native ext4 runs a journal and ext4 does not" "$WORK/m.out" ||
        grep -q "NOTE: native ext4 runs no journal and ext4 does:" "$WORK/nj.out"; then
        fail "a journal note where both are alike"
    fi
fi
check_nothing_left "after the run without a journal"

# The report takes every line of it, and draws the runs' per-second
# timelines (what a long aging run is read by).
if "$BIN" report "$J" -o "$WORK/m.html" >"$WORK/r.out" 2>"$WORK/r.err" && [ ! -s "$WORK/r.err" ] &&
    grep -q 'id="chart-timeline"' "$WORK/m.html" && grep -q "native " "$WORK/m.html"; then
    pass "the report reads every line, with the native rows and the timeline chart"
else
    fail "the report of the matrix's lines: $(cat "$WORK/r.err")"
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
# With mkfs.btrfs, the killed run is snapshotting its btrfs: the next run
# deletes the snapshot before it unmounts.
HAVE_BTRFS=0
PATH="$PATH:/usr/sbin:/sbin" command -v mkfs.btrfs >/dev/null && HAVE_BTRFS=1
if [ $HAVE_BTRFS -eq 1 ]; then
    KILLFS=(--fs btrfs --snapshot-every 0.2)
else
    KILLFS=(--fs ext4)
    echo "note: no mkfs.btrfs: snapshots are not checked"
fi
"$BIN" matrix "${KILLFS[@]}" --workdir "$WD" --image-size 256M --duration 30 --warmup 0 --keys 1000 --quiet \
    >/dev/null 2>&1 &
pid=$!
if wait_mounted; then
    sleep 0.5
    if [ $HAVE_BTRFS -eq 1 ]; then
        # (a snapshot commits a btrfs transaction: slow on a busy disk)
        for i in $(seq 1 250); do
            ls -d "$WD"/btrfs/mnt/.commitlab-snap-* >/dev/null 2>&1 && break
            sleep 0.1
        done
        ls -d "$WD"/btrfs/mnt/.commitlab-snap-* >/dev/null 2>&1 || fail "the killed run took no snapshot"
    fi
    kill -KILL $pid
    wait $pid 2>/dev/null
    if "$BIN" matrix --fs tmpfs --workdir "$WD" --duration 0.3 --warmup 0 --keys 1000 --quiet \
        >"$WORK/k.out" 2>"$WORK/k.err" && grep -q "left by an earlier run" "$WORK/k.err"; then
        pass "after SIGKILL, the next run removed the leftovers"
    else
        fail "after SIGKILL: $(cat "$WORK/k.err")"
    fi
    if [ $HAVE_BTRFS -eq 1 ]; then
        # one snapshot is kept between rounds; a kill between taking the
        # next one and deleting the older leaves two
        if grep -Eq "^commitlab matrix: deleted (1 snapshot|2 snapshots) in .*/btrfs/mnt, left by an earlier run$" \
            "$WORK/k.err"; then
            pass "after SIGKILL, the next run deleted the snapshot before unmounting"
        else
            fail "after SIGKILL, the snapshot was not deleted: $(cat "$WORK/k.err")"
        fi
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

# ---- 5b. the user's things where the run's directories go: refused, kept ----
# A directory named like a filesystem's (holding an image and a mount
# point of the user's), a file named like the native runs', and a symbolic
# link named like another filesystem's: each refused with one line and
# exit 2 before anything is made, and none is touched.
mkdir -p "$WORK/elsewhere"; echo mine >"$WORK/elsewhere/keep"
for what in ext4 native tmpfs; do
    case $what in
        ext4) mkdir -p "$WD/ext4/mnt"; echo mine >"$WD/ext4/ext4.img"; echo mine >"$WD/ext4/mnt/keep" ;;
        native) echo mine >"$WD/native" ;;
        tmpfs) ln -s "$WORK/elsewhere" "$WD/tmpfs" ;;
    esac
    "$BIN" matrix --fs tmpfs,ext4 --workdir "$WD" --duration 0.3 --warmup 0 --keys 1000 --quiet \
        >"$WORK/u.out" 2>"$WORK/u.err"
    rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l <"$WORK/u.err")" -eq 1 ] \
        && grep -q "^commitlab matrix: --workdir: $WD/$what already exists and is not this command's" "$WORK/u.err"; then
        pass "the user's $what in the workdir is refused"
    else
        fail "the user's $what in the workdir: exit $rc: $(cat "$WORK/u.err")"
    fi
    case $what in
        ext4) [ "$(cat "$WD/ext4/ext4.img" "$WD/ext4/mnt/keep")" = "$(printf 'mine\nmine')" ] \
                  || fail "the user's ext4 directory changed" ;;
        native) [ "$(cat "$WD/native")" = mine ] || fail "the user's native file changed"; rm -f "$WD/native" ;;
        tmpfs) [ -L "$WD/tmpfs" ] && [ "$(cat "$WORK/elsewhere/keep")" = mine ] \
                   && [ "$(ls "$WORK/elsewhere")" = keep ] || fail "the user's link or its target changed"
               rm -f "$WD/tmpfs" ;;
    esac
    rm -rf "$WD/ext4"
done
# a dead run's leftovers are removed only where they carry the mark: a
# tmpfs run beside the user's ext4 directory leaves that directory whole
# (nor a file of the user's named like an image, nor a directory named
# like a mount point, at the top of the workdir)
mkdir -p "$WD/ext4/mnt" "$WD/mnt-xfs"; echo mine >"$WD/ext4/ext4.img"; echo mine >"$WD/xfs.img"
"$BIN" matrix --fs tmpfs --workdir "$WD" --duration 0.3 --warmup 0 --keys 1000 --quiet >/dev/null 2>&1 \
    || fail "a tmpfs run beside the user's ext4 directory failed"
[ -f "$WD/ext4/ext4.img" ] && [ -d "$WD/ext4/mnt" ] && pass "the leftover cleanup keeps the user's directory" \
    || fail "the leftover cleanup removed the user's directory"
[ "$(cat "$WD/xfs.img")" = mine ] && [ -d "$WD/mnt-xfs" ] && pass "the leftover cleanup keeps the user's files" \
    || fail "the leftover cleanup removed the user's xfs.img or mnt-xfs"
rm -rf "$WD/ext4" "$WD/mnt-xfs" "$WD/xfs.img" "$WORK/elsewhere"
check_nothing_left "after the refusals"

# ---- 6. --device: a loop device of this script's own stands in for a disk --
DISK="$WORK/disk.img"
truncate -s 256M "$DISK"
DEVLOOP=$(losetup -f --show "$DISK" 2>/dev/null) || DEVLOOP=""
if [ -z "$DEVLOOP" ]; then
    fail "could not attach a loop device to stand in for a disk"
else
    # an empty device needs no --destroy-data; the runs are cold recycles
    J6="$WORK/d.jsonl"
    if "$BIN" matrix --fs ext4 --device "$DEVLOOP" --workdir "$WD" --segments recycle --cold-recycle --clients 1 \
        --duration 1.5 --warmup 0.2 --keys 2000 --value-size 2000 --segment-size 64k --checkpoint-bytes 256k \
        --quiet --out "$J6" >"$WORK/d.out" 2>"$WORK/d.err"; then
        pass "--device on an empty loop device exits 0"
    else
        fail "--device: exit non-zero: $(tail -5 "$WORK/d.err")"
    fi
    if grep -qE "^ext4 +commitlab +commit +recycle +zero +0 +1 +1 +[0-9]+\.[0-9]" "$WORK/d.out" &&
        grep -qE "^native [a-z0-9/]+ +commitlab +commit +recycle" "$WORK/d.out"; then
        pass "--device: the ext4 row and the native row"
    else
        fail "--device: rows missing: $(cat "$WORK/d.out")"
    fi
    if [ "$(blkid -p -o value -s TYPE "$DEVLOOP" 2>/dev/null)" = ext4 ]; then
        pass "--device: the device was formatted"
    else
        fail "--device: no ext4 on the device afterwards"
    fi
    check_nothing_left "after a run on --device"
    if awk -v d="$DEVLOOP" '$1 == d { found = 1 } END { exit !found }' /proc/mounts; then
        fail "--device: the device is still mounted"
    fi
    if command -v python3 >/dev/null; then
        if python3 - "$J6" "$DEVLOOP" <<'EOF'; then pass "--device JSON: the device, and cold recycled segments read from it"; else fail "--device JSON"; fi
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in runs if r.get("schema") == "commitlab-bench/1"]
dev = [r for r in rows if not r["matrix"]["native"]]
assert len(dev) == 1 and len(rows) == 2, rows
m, met = dev[0]["matrix"], dev[0]["metrics"]
assert m["device"] == sys.argv[2] and m["loop"] is None and m["image_init"] is None and m["loop_device"] is None, m
assert dev[0]["config"]["cold_recycle"] is True, dev[0]["config"]
assert met["segments"]["reused"] > 0, met["segments"]
# a recycled segment out of the page cache: its partial pages are read first
assert met["device_read_bytes_per_commit"] > 100, met["device_read_bytes_per_commit"]
EOF
    fi
    # the refusals: one line naming the reason, exit 2, nothing written
    before=$(md5sum <"$DEVLOOP")
    expect_usage "--device carrying a filesystem" "give --destroy-data $DEVLOOP" --fs ext4 --device "$DEVLOOP" \
        --workdir "$WD"
    expect_usage "--destroy-data naming another device" "--destroy-data names /dev/null" --fs ext4 \
        --device "$DEVLOOP" --destroy-data /dev/null --workdir "$WD"
    [ "$(md5sum <"$DEVLOOP")" = "$before" ] || fail "a refused --device was written to"
    MNT6="$WORK/mnt6"
    mkdir -p "$MNT6"
    if mount "$DEVLOOP" "$MNT6"; then
        expect_usage "--device mounted" "is mounted" --fs ext4 --device "$DEVLOOP" --destroy-data "$DEVLOOP" \
            --workdir "$WD"
        umount "$MNT6"
    else
        fail "could not mount the stand-in device to test the refusal"
    fi
fi
# A disk with a partition table (one DOS partition from sector 2048, written
# by hand), attached with its partitions: refused without --destroy-data as
# carrying a partition table; with a filesystem of its partition mounted,
# refused even with it.
PDISK="$WORK/pdisk.img"
truncate -s 64M "$PDISK"
python3 - "$PDISK" <<'EOF'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    entry = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, 64 * 2048 - 2048)
    f.seek(446); f.write(entry); f.seek(510); f.write(b"\x55\xaa")
EOF
PARTLOOP=$(losetup -f -P --show "$PDISK" 2>/dev/null) || PARTLOOP=""
# (a kernel without the DOS partition parser: the partition added by hand)
[ -n "$PARTLOOP" ] && { sleep 0.2; [ -b "${PARTLOOP}p1" ] || partx -a "$PARTLOOP" 2>/dev/null; }
for _ in $(seq 20); do [ -b "${PARTLOOP}p1" ] && break; sleep 0.1; done
if [ -z "$PARTLOOP" ] || [ ! -b "${PARTLOOP}p1" ]; then
    fail "could not attach a partitioned loop device to stand in for a disk"
else
    before=$(md5sum <"$PARTLOOP")
    expect_usage "--device carrying a partition table" "give --destroy-data $PARTLOOP" --fs ext4 \
        --device "$PARTLOOP" --workdir "$WD"
    [ "$(md5sum <"$PARTLOOP")" = "$before" ] || fail "a refused --device with partitions was written to"
    MNTP="$WORK/mntp"
    mkdir -p "$MNTP"
    if PATH="$PATH:/usr/sbin:/sbin" mkfs.ext4 -q -F "${PARTLOOP}p1" && mount "${PARTLOOP}p1" "$MNTP"; then
        expect_usage "--device holding a mounted partition" "holds a mounted partition" --fs ext4 \
            --device "$PARTLOOP" --destroy-data "$PARTLOOP" --workdir "$WD"
        umount "$MNTP"
    else
        fail "could not mount the stand-in device's partition to test the refusal"
    fi
    losetup -d "$PARTLOOP" && PARTLOOP=""
fi
# The root filesystem's device: refused.  A stand-in mkfs first in PATH
# makes sure nothing could be formatted even if the check failed.
# (its major:minor named in /sys/dev/block, else the mount's source)
ROOTNUM=$(awk '$5 == "/" { print $3 }' /proc/self/mountinfo | tail -1)
ROOTDEV=$(sed -n 's/^DEVNAME=//p' "/sys/dev/block/$ROOTNUM/uevent" 2>/dev/null)
[ -n "$ROOTDEV" ] && ROOTDEV="/dev/$ROOTDEV"
[ -b "$ROOTDEV" ] || ROOTDEV=$(awk '$5 == "/" { sub(/.* - /, ""); print $2 }' /proc/self/mountinfo | tail -1)
if [ -b "$ROOTDEV" ]; then
    mkdir -p "$WORK/fakebin"
    printf '#!/bin/sh\necho "stand-in mkfs: $*" >>"%s"\nexit 1\n' "$WORK/fakebin/called" >"$WORK/fakebin/mkfs.ext4"
    chmod +x "$WORK/fakebin/mkfs.ext4"
    PATH="$WORK/fakebin:$PATH" expect_usage "--device holding the root filesystem" "(the root filesystem)" \
        --fs ext4 --device "$ROOTDEV" --destroy-data "$ROOTDEV" --workdir "$WD"
    [ -e "$WORK/fakebin/called" ] && fail "mkfs was called for the root filesystem's device"
else
    echo "note: the root filesystem has no block device here: its refusal is not checked"
fi

# ---- 7. btrfs snapshots, counted -----------------------------------------------
if [ $HAVE_BTRFS -eq 1 ]; then
    J7="$WORK/s.jsonl"
    if "$BIN" matrix --fs btrfs-nodatacow --snapshot-every 0.3 --workdir "$WD" --image-size 256M \
        --segments recycle --clients 1 --duration 1.5 --warmup 0.2 --keys 2000 --value-size 2000 \
        --segment-size 64k --checkpoint-bytes 256k --quiet --out "$J7" >"$WORK/s.out" 2>"$WORK/s.err" &&
        grep -qE "^btrfs-nodatacow +commitlab .*  snapshots [1-9]" "$WORK/s.out"; then
        pass "--snapshot-every: the run took snapshots, and the table says how many"
    else
        fail "--snapshot-every: $(cat "$WORK/s.out" "$WORK/s.err")"
    fi
    if command -v python3 >/dev/null; then
        if python3 - "$J7" <<'EOF'; then pass "--snapshot-every JSON: snapshots counted"; else fail "--snapshot-every JSON"; fi
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if r.get("schema") == "commitlab-bench/1"]
b = [r["matrix"] for r in rows if r["matrix"]["fs"] == "btrfs-nodatacow"]
n = [r["matrix"] for r in rows if r["matrix"]["native"]]
assert len(b) == 1 and b[0]["snapshots"] >= 2 and b[0]["snapshot_every_s"] == 0.3, b
assert b[0]["snapshot_error"] is None and b[0]["nodatacow"] is True, b
assert n[0]["snapshots"] is None, n
EOF
    fi
    check_nothing_left "after a run with snapshots"
fi

if [ $FAILS -ne 0 ]; then
    echo "$FAILS check(s) failed"
    exit 1
fi
echo "all matrix checks passed"
exit 0
