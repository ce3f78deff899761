#!/bin/sh
# deps.sh PACKAGE... -- makes sure what the build needs is installed.
#
# The arguments are Debian package names.  Each is checked by what it
# provides (a command, a pkg-config module or a header), so `make` works on
# any Linux that has the dependencies, whatever installed them; a name not
# known here is checked with dpkg-query.
# Nothing missing: exit 0 without touching anything.  Something missing:
# as root with apt-get, install it (apt-get update once, then install);
# otherwise name what is missing, print the apt-get line where apt-get
# exists, and fail.
set -eu

# provided PACKAGE -- exit status 0 when what PACKAGE provides is present.
provided() {
    case "$1" in
    build-essential) command -v cc >/dev/null && command -v make >/dev/null ;;
    cmake | pkg-config | python3) command -v "$1" >/dev/null ;;
    liblmdb-dev) pkg-config --exists lmdb ;;
    liburing-dev) pkg-config --exists liburing ;;
    check) pkg-config --exists check ;;
    libjansson-dev) pkg-config --exists jansson ;;
    libsqlite3-dev) pkg-config --exists sqlite3 ;;
    libwiredtiger-dev) pkg-config --exists wiredtiger ;;
    librocksdb-dev) pkg-config --exists rocksdb || [ -f /usr/include/rocksdb/c.h ] || [ -f /usr/local/include/rocksdb/c.h ] ;;
    e2fsprogs) command -v mkfs.ext4 >/dev/null || [ -x /sbin/mkfs.ext4 ] ;;
    xfsprogs) command -v mkfs.xfs >/dev/null || [ -x /sbin/mkfs.xfs ] ;;
    btrfs-progs) command -v mkfs.btrfs >/dev/null || [ -x /sbin/mkfs.btrfs ] ;;
    clang) command -v clang >/dev/null ;;
    zfs-fuse) command -v zfs-fuse >/dev/null || [ -x /sbin/zfs-fuse ] || [ -x /usr/sbin/zfs-fuse ] ;;
    libclang-rt-*-dev) ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 ;;
    *) return 1 ;;
    esac
}

installed() {
    provided "$1" 2>/dev/null && return 0
    command -v dpkg-query >/dev/null 2>&1 &&
        dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=""
for p in "$@"; do
    installed "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: missing (Debian package names):$missing" >&2
    echo "deps: install their equivalents with this system's package manager, then run make again" >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: run: sudo apt-get install -y$missing" >&2
    exit 1
fi
