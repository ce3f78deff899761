#!/usr/bin/env bash
# matrix_device_test.sh COMMITLAB -- `commitlab matrix --device` refuses
# every other way to the bytes of something mounted or in use, each with
# one line naming the mounted thing and exit 2, before anything is
# written: a second loop device on a mounted one's backing file (also
# after that file was deleted), a loop device stacked on a mounted one,
# and on one stacked on it, on one open exclusively, a loop device under a
# mounted one, another loop device on the same file even idle, a partition of a mounted disk,
# a partition of a disk with a holder and a device with a holder of its
# own (the holder simulated by a tmpfs over the holders directory in
# sysfs, in a private mount namespace: the test needs no device-mapper or
# md).  And what is no alias is still accepted: a loop device
# stacked on an idle one, a sibling partition of a mounted partition.
# A stand-in mkfs.ext4 first in PATH records every call, so nothing is
# ever formatted: a refusal must leave it uncalled, an acceptance must
# reach it.  Only loop devices this script attached, on image files in
# its own temporary directory, are offered.
# Exit 0: passed; 1: failed; 77: skipped (not root, no loop devices, or no
# mkfs.ext4).
set -u

BIN=${1:?usage: matrix_device_test.sh COMMITLAB}
FAILS=0
LOOPS=()     # every loop device this script attached, in order
HOLDER=""    # a process of ours holding a device open exclusively

if [ "$(id -u)" -ne 0 ]; then
    echo "skipped: --device needs root"
    exit 77
fi
MKFS=$(PATH="$PATH:/usr/sbin:/sbin" command -v mkfs.ext4) || MKFS=""
if [ ! -w /dev/loop-control ] || ! command -v losetup >/dev/null || [ -z "$MKFS" ]; then
    echo "skipped: no loop devices, losetup or mkfs.ext4"
    exit 77
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/matrix_device_test.XXXXXX") || exit 1

# Whatever happens to this script, nothing of ours stays mounted or
# attached: the mounts first, then the loop devices, the upper ones first.
cleanup() {
    local m i
    [ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null && wait "$HOLDER" 2>/dev/null
    for m in $(awk -v w="$WORK" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    for ((i = ${#LOOPS[@]} - 1; i >= 0; i--)); do
        losetup -d "${LOOPS[i]}" 2>/dev/null
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

# attach VAR LOSETUP-ARGS...: a free loop device attached, its name in VAR.
attach() {
    local var_=$1 dev_
    shift
    dev_=$(losetup -f --show "$@") || return 1
    LOOPS+=("$dev_")
    printf -v "$var_" %s "$dev_"
}
# An ext4 image of 32 MiB at $1 (made by the real mkfs, on the file).
ext4_image() { truncate -s 32M "$1" && "$MKFS" -q -F "$1"; }
# mount_at DEV NAME: DEV mounted on $WORK/NAME.
mount_at() { mkdir -p "$WORK/$2" && mount "$1" "$WORK/$2"; }

# A DOS partition table on the image $1: one Linux partition per "START
# COUNT" pair (in 512-byte sectors) that follows.
le32() {
    local i
    for i in 0 8 16 24; do printf '%b' "\\x$(printf %02x $(($1 >> i & 255)))"; done
}
dos_table() {
    local img=$1 at=446
    shift
    while [ $# -ge 2 ]; do
        { printf '\x00\x00\x00\x00\x83\x00\x00\x00'; le32 "$1"; le32 "$2"; } |
            dd of="$img" bs=1 seek=$at conv=notrunc status=none
        at=$((at + 16))
        shift 2
    done
    printf '\x55\xaa' | dd of="$img" bs=1 seek=510 conv=notrunc status=none
}
# attach_parts VAR IMG N: IMG attached with its partitions (losetup -P),
# waiting for the first N partition nodes.
attach_parts() {
    local var=$1 img=$2 n=$3 d i
    attach "$var" -P "$img" || return 1
    d=${!var}
    sleep 0.2
    [ -b "${d}p$n" ] || partx -a "$d" 2>/dev/null # (a kernel without the DOS partition parser)
    for i in $(seq 50); do [ -b "${d}p$n" ] && return 0; sleep 0.1; done
    return 1
}

FAKE="$WORK/fakebin"
mkdir -p "$FAKE"
printf '#!/bin/sh\necho "stand-in mkfs.ext4: $*" >>"%s"\nexit 1\n' "$FAKE/called" >"$FAKE/mkfs.ext4"
chmod +x "$FAKE/mkfs.ext4"

# The matrix with DEV given up, and the stand-in mkfs first in PATH; a
# prefix command (e.g. a private mount namespace) may come first.
run_matrix() {
    local dev=$1
    shift
    rm -f "$FAKE/called"
    PATH="$FAKE:$PATH" "$@" "$BIN" matrix --fs ext4 --device "$dev" --destroy-data "$dev" --workdir "$WORK/wd" \
        --duration 0.2 --warmup 0 --keys 100 --quiet >"$WORK/out" 2>"$WORK/err"
}
# expect_refused WHAT DEV MESSAGE [PREFIX...]: exit 2, the one line
# "commitlab matrix: --device: MESSAGE", and no mkfs.
expect_refused() {
    local what=$1 dev=$2 msg=$3 rc
    shift 3
    run_matrix "$dev" "$@"
    rc=$?
    if [ -e "$FAKE/called" ]; then
        fail "$what: mkfs was run: $(cat "$FAKE/called")"
    elif [ $rc -ne 2 ]; then
        fail "$what: exit $rc, not 2: $(cat "$WORK/err")"
    elif [ "$(wc -l <"$WORK/err")" -ne 1 ] || [ "$(cat "$WORK/err")" != "commitlab matrix: --device: $msg" ]; then
        fail "$what: the message is not the one line expected"
        echo "  expected: commitlab matrix: --device: $msg"
        echo "  got:      $(cat "$WORK/err")"
    else
        pass "$what"
    fi
}
# expect_accepted WHAT DEV [PREFIX...]: the checks pass, and mkfs is run
# on DEV (the stand-in fails it, so nothing is written).
expect_accepted() {
    local what=$1 dev=$2
    shift 2
    run_matrix "$dev" "$@"
    if grep -q "stand-in mkfs.ext4: .* $dev\$" "$FAKE/called" 2>/dev/null; then
        pass "$what"
    else
        fail "$what: refused, or mkfs not run on $dev: $(cat "$WORK/err")"
    fi
    rm -f "$FAKE/called"
}

# ---- loop devices over one mounted image ----------------------------------
if ! { ext4_image "$WORK/a.img" && attach LA "$WORK/a.img" && mount_at "$LA" mnt-a; }; then
    echo "skipped: cannot attach a loop device and mount it"
    exit 77
fi
if attach LB "$WORK/a.img"; then
    expect_refused "a second loop device on a mounted one's backing file" "$LB" \
        "$LB shares its backing file with $LA, mounted on $WORK/mnt-a"
else
    fail "could not attach a second loop device to a.img"
fi
if attach LC "$LA"; then
    expect_refused "a loop device stacked on a mounted one" "$LC" "$LC is stacked on $LA, mounted on $WORK/mnt-a"
    if attach LD "$LC"; then
        expect_refused "a loop device stacked on one stacked on a mounted one" "$LD" \
            "$LD is stacked on $LC, which is stacked on $LA, mounted on $WORK/mnt-a"
    else
        fail "could not stack a loop device on $LC"
    fi
else
    fail "could not stack a loop device on $LA"
fi

# The backing file deleted: the inode still names it (LOOP_GET_STATUS64),
# where the path in sysfs no longer does.
if ext4_image "$WORK/d.img" && attach LE "$WORK/d.img" && mount_at "$LE" mnt-e && attach LF "$WORK/d.img"; then
    rm -f "$WORK/d.img"
    expect_refused "a second loop device on a mounted one's deleted backing file" "$LF" \
        "$LF shares its backing file with $LE, mounted on $WORK/mnt-e"
else
    fail "could not set up two loop devices on d.img"
fi

# Under a mounted loop device: the device given up is the backing device
# of a mounted one.
truncate -s 32M "$WORK/g.img"
if attach LG "$WORK/g.img" && attach LH "$LG" && "$MKFS" -q -F "$LH" && mount_at "$LH" mnt-h; then
    expect_refused "a loop device under a mounted one" "$LG" "$LG is the backing device of $LH, mounted on $WORK/mnt-h"
else
    fail "could not mount a loop device stacked on another"
fi

# Idle: another loop device on the same file is refused; the device under
# an idle stacked one too; the one stacked on an idle one is accepted.
truncate -s 32M "$WORK/i.img"
if attach LI "$WORK/i.img" && attach LJ "$WORK/i.img"; then
    expect_refused "another loop device on the same file, idle" "$LI" \
        "$LI shares its backing file with $LJ, attached, though not mounted"
else
    fail "could not attach two loop devices to i.img"
fi
truncate -s 32M "$WORK/k.img"
if attach LK "$WORK/k.img" && attach LL "$LK"; then
    expect_refused "the backing device of an idle loop device" "$LK" \
        "$LK is the backing device of $LL, attached, though not mounted"
    expect_accepted "a loop device stacked on an idle one is accepted" "$LL"
    # the idle one open exclusively (O_EXCL, as a program holding it would)
    if command -v python3 >/dev/null; then
        python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
print("held", flush=True)
time.sleep(120)' "$LK" >"$WORK/held" &
        HOLDER=$!
        for _ in $(seq 50); do grep -q held "$WORK/held" && break; sleep 0.1; done
        if grep -q held "$WORK/held"; then
            expect_refused "a loop device stacked on one open exclusively" "$LL" \
                "$LL is stacked on $LK, in use (claimed exclusively: mounted, swap, or held)"
        else
            fail "could not open $LK exclusively"
        fi
        kill "$HOLDER" 2>/dev/null
        wait "$HOLDER" 2>/dev/null
        HOLDER=""
    else
        echo "note: no python3: the exclusive open of an alias is not checked"
    fi
else
    fail "could not stack a loop device on $LK"
fi

# ---- partitions --------------------------------------------------------------
# A disk mounted whole (its ext4 made before its partition table, which
# sits in the ext4's unused first sectors): its partition is refused.
if ext4_image "$WORK/pw.img" && dos_table "$WORK/pw.img" 2048 20480 && attach_parts LP "$WORK/pw.img" 1 &&
    mount_at "$LP" mnt-pw; then
    expect_refused "a partition of a mounted disk" "${LP}p1" "${LP}p1 is a partition of $LP, mounted on $WORK/mnt-pw"
else
    fail "could not mount a partitioned loop device whole"
fi
# Partition 1 mounted: partition 2 is no alias of it and is accepted (the
# disk itself is refused: matrix_test.sh); with a holder on the disk, it is
# refused, and so is a partition with a holder of its own.
truncate -s 64M "$WORK/ps.img"
if dos_table "$WORK/ps.img" 2048 40960 43008 81920 && attach_parts LQ "$WORK/ps.img" 2 &&
    "$MKFS" -q -F "${LQ}p1" && mount_at "${LQ}p1" mnt-q1; then
    expect_accepted "a sibling partition of a mounted partition is accepted" "${LQ}p2"
    if command -v unshare >/dev/null && unshare -m --propagation private true 2>/dev/null; then
        # the holders directories in sysfs, of the disk and of partition 2
        QSYS=$(readlink -f "/sys/class/block/${LQ#/dev/}")
        # fake_holder DIR: a private tmpfs over DIR/holders, holding "dm-99"
        FAKE_HOLDER='mount -t tmpfs none "$1/holders" && touch "$1/holders/dm-99" && shift && exec "$@"'
        if unshare -m --propagation private sh -c "$FAKE_HOLDER" _ "$QSYS" true 2>/dev/null; then
            expect_refused "a partition of a disk with a holder" "${LQ}p2" \
                "${LQ}p2 is a partition of $LQ, held by dm-99 (a device built on it, e.g. device-mapper or md)" \
                unshare -m --propagation private sh -c "$FAKE_HOLDER" _ "$QSYS"
            expect_refused "a partition with a holder" "${LQ}p2" \
                "${LQ}p2 is held by dm-99 (a device built on it, e.g. device-mapper or md)" \
                unshare -m --propagation private sh -c "$FAKE_HOLDER" _ "$QSYS/${LQ#/dev/}p2"
        else
            echo "note: a tmpfs cannot be mounted over sysfs here: the holder refusals are not checked"
        fi
    else
        echo "note: no private mount namespace (unshare): the holder refusals are not checked"
    fi
else
    fail "could not mount partition 1 of a partitioned loop device"
fi

# Nothing the refused runs could have left: no mount in the workdir.
if awk -v w="$WORK/wd" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    fail "a mount under the workdir is left: $(grep -F "$WORK/wd" /proc/mounts)"
fi

if [ $FAILS -ne 0 ]; then
    echo "$FAILS check(s) failed"
    exit 1
fi
echo "all --device alias checks passed"
exit 0
