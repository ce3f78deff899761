#!/usr/bin/env bash
# pgbench-recycle.sh WORKDIR [zero|sparse] [ROUNDS] [SECONDS] -- PostgreSQL's
# own answer to the question docs/lab/recycling.md asks, on the filesystems beside
# which commitlab's native and loop rows stand: pgbench (8 clients, scale
# 20) with wal_recycle and wal_init_zero both on against both off, on
#   native   WORKDIR's own filesystem, no loop device;
#   jext4    ext4 made with a journal (mkfs.ext4's default) in a 2 GiB image;
#   nojext4  ext4 made without one (-O ^has_journal) in another,
# the images zero-filled (default) or sparse, attached as buffered loop
# devices as `commitlab matrix` does.  max_wal_size = 128MB makes the
# checkpoints retire segments every few seconds, so that the "on" runs
# reuse them; each measured run follows a 10 s run under its setting.
# Configurations are shuffled within each round.  One line per run on
# stdout.  Needs root, losetup, mkfs.ext4 and PostgreSQL 15 (apt-get install
# -y postgresql-15); unmounts, detaches and removes what it made on exit.
set -u
[ $# -ge 1 ] || { echo "usage: pgbench-recycle.sh WORKDIR [zero|sparse] [ROUNDS] [SECONDS]" >&2; exit 2; }
work=$1 init=${2:-zero} rounds=${3:-3} secs=${4:-30}
pgbin=/usr/lib/postgresql/15/bin
[ "$(id -u)" -eq 0 ] || { echo "pgbench-recycle: needs root (loop devices, mounts)" >&2; exit 2; }
[ -x $pgbin/postgres ] || { echo "pgbench-recycle: no PostgreSQL 15: apt-get install -y postgresql-15" >&2; exit 2; }
case $init in zero|sparse) ;; *) echo "pgbench-recycle: image init '$init': want zero or sparse" >&2; exit 2 ;; esac
[ -d "$work" ] || { echo "pgbench-recycle: WORKDIR $work: no such directory" >&2; exit 2; }
work=$(cd "$work" && pwd)/pgbench-recycle.d
[ ! -e "$work" ] || { echo "pgbench-recycle: $work exists: remove it or choose another WORKDIR" >&2; exit 2; }
mkdir "$work" && chmod 755 "$work"

fss="native jext4 nojext4"
loops=() mnts=()
cleanup() {
    for fs in $fss; do
        [ -d "$work/$fs/data" ] && su postgres -c "$pgbin/pg_ctl -D $work/$fs/data -m immediate stop" >/dev/null 2>&1
    done
    local ok=1
    for m in "${mnts[@]}"; do umount "$m" || ok=0; done
    for l in "${loops[@]}"; do losetup -d "$l" || ok=0; done
    if [ $ok = 1 ]; then rm -rf "$work"; else echo "pgbench-recycle: left $work: unmount it by hand" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# image NAME MKFS-OPTS: an ext4 in a 2 GiB image, mounted at $work/NAME
image() {
    local img=$work/$1.img l
    if [ "$init" = sparse ]; then truncate -s 2G "$img"; else dd if=/dev/zero of="$img" bs=1M count=2048 status=none; fi
    l=$(losetup -f --show "$img") || exit 1
    loops+=("$l")
    # shellcheck disable=SC2086 # the options are words, and none at all for the default
    mkfs.ext4 -q $2 "$l" || exit 1
    mkdir "$work/$1"
    mount "$l" "$work/$1" || exit 1
    mnts+=("$work/$1")
}
mkdir "$work/native"
image jext4 ""
image nojext4 "-O ^has_journal"
echo "# $(uname -r), PostgreSQL $($pgbin/postgres --version | awk '{print $3}'), images $init, rounds $rounds, ${secs} s"
for fs in $fss; do
    src=$(findmnt -no SOURCE -T "$work/$fs")
    j=no; ls -d /proc/fs/jbd2/"$(basename "$src")"-* >/dev/null 2>&1 && j=yes
    echo "# $fs: $(findmnt -no SOURCE,FSTYPE,OPTIONS -T "$work/$fs"), journal $j"
done

port=5440
declare -A ports
for fs in $fss; do
    d=$work/$fs
    chown postgres: "$d"
    su postgres -c "$pgbin/initdb -D $d/data -A trust" >/dev/null || exit 1
    cat >>"$d/data/postgresql.conf" <<CONF
port = $port
listen_addresses = ''
unix_socket_directories = '$d'
max_wal_size = 128MB
min_wal_size = 80MB
checkpoint_timeout = 30s
wal_sync_method = fdatasync
CONF
    ports[$fs]=$port
    port=$((port + 1))
    su postgres -c "$pgbin/pg_ctl -D $d/data -l $d/log -w start" >/dev/null || exit 1
    su postgres -c "$pgbin/pgbench -h $d -p ${ports[$fs]} -i -s 20 -q postgres" >/dev/null 2>&1 || exit 1
done

ckpts() {
    su postgres -c "$pgbin/psql -h $1 -p $2 -Atc 'SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter' postgres"
}
for r in $(seq "$rounds"); do
    for cfg in $(for fs in $fss; do echo "$fs:on"; echo "$fs:off"; done | shuf); do
        fs=${cfg%%:*} s=${cfg##*:} d=$work/${cfg%%:*} p=${ports[${cfg%%:*}]}
        su postgres -c "$pgbin/psql -h $d -p $p -q -c 'ALTER SYSTEM SET wal_recycle = $s' \
            -c 'ALTER SYSTEM SET wal_init_zero = $s' -c 'SELECT pg_reload_conf()' -c 'CHECKPOINT' postgres" >/dev/null
        su postgres -c "$pgbin/pgbench -h $d -p $p -c 8 -j 2 -T 10 -n postgres" >/dev/null 2>&1
        c0=$(ckpts "$d" "$p")
        out=$(su postgres -c "$pgbin/pgbench -h $d -p $p -c 8 -j 2 -T $secs -n postgres" 2>&1)
        c1=$(ckpts "$d" "$p")
        tps=$(grep -oP 'tps = \K[0-9.]+(?= \(without)' <<<"$out")
        lat=$(grep -oP 'latency average = \K[0-9.]+' <<<"$out")
        echo "round=$r fs=$fs recycle_init_zero=$s tps=${tps:-?} latency_ms=${lat:-?} checkpoints=$((c1 - c0))"
    done
done
