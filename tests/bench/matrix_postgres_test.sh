#!/usr/bin/env bash
# matrix_postgres_test.sh COMMITLAB -- `commitlab matrix --engine postgres`,
# PostgreSQL's own wal_recycle on a loop-mounted ext4 image and on the
# native filesystem, short:
#  1. --segments recycle,fresh: exit 0; the table says that segments is
#     PostgreSQL's wal_recycle; a JSON line per run, status ok, whose
#     settings (read back from the server) have wal_recycle on for
#     recycle and off for fresh, 1 MB segments and max_wal_size 4MB (the
#     matrix's small segments and frequent checkpoints); the checkpoints
#     recycled segments under recycle and none under fresh, where they
#     removed them instead;
#  2. --pg-set listen_addresses=*: refused before anything is made, one
#     line, exit 2;
#  3. after each: no server left running, nothing mounted or attached,
#     --workdir removed.
# Exit 77 when not root, without loop devices or mkfs.ext4, or without
# PostgreSQL (libpq and the server's binaries).
set -u

bin=${1:?usage: matrix_postgres_test.sh COMMITLAB}
work=$(mktemp -d "${TMPDIR:-/tmp}/matrix_pg.XXXXXX") || exit 1
chmod 755 "$work" # the server's account enters it
wd=$work/wd

cleanup() {
    local m
    for p in $(servers); do kill -KILL "$p" 2>/dev/null; done
    for m in $(awk -v w="$work" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    losetup -a 2>/dev/null | grep -F "$work" | cut -d: -f1 | while read -r d; do losetup -d "$d"; done
    rm -rf "$work"
}
# postgres processes whose working directory is under $work
servers() {
    local p
    for p in $(pgrep -x postgres 2>/dev/null); do
        case "$(readlink "/proc/$p/cwd" 2>/dev/null)" in "$work"/*) echo "$p" ;; esac
    done
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

[ "$(id -u)" -eq 0 ] || { echo "skipped: matrix needs root"; exit 77; }
if [ ! -w /dev/loop-control ] || ! PATH="$PATH:/usr/sbin:/sbin" command -v mkfs.ext4 >/dev/null; then
    echo "skipped: no loop devices or no mkfs.ext4"
    exit 77
fi
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
if ! "$bin" bench --list-engines | grep -q '^postgres .*built'; then
    echo "skipped: --engine postgres is not built (libpq-dev)"
    exit 77
fi
cd "$work" || exit 1

nothing_left() {
    [ -z "$(servers)" ] || fail "$1: postgres still running: $(servers)"
    ! awk -v w="$work" 'index($2, w) == 1 { f = 1 } END { exit !f }' /proc/mounts ||
        fail "$1: still mounted: $(grep -F "$work" /proc/mounts)"
    [ -z "$(losetup -a 2>/dev/null | grep -F "$work")" ] || fail "$1: loop device left: $(losetup -a | grep -F "$work")"
    [ ! -e "$wd" ] || fail "$1: --workdir left: $(ls -A "$wd")"
}

# 1. PostgreSQL's own recycling, against none
"$bin" matrix --fs ext4 --engine postgres --segments recycle,fresh --duration 3 --warmup 0.3 --keys 1000 \
    --value-size 4000 --image-size 512M --image-init sparse --workdir "$wd" --out m.jsonl --quiet \
    >table.txt 2>err.txt
rc=$?
if [ $rc -eq 2 ] && grep -q "engine postgres" err.txt; then
    echo "skipped: $(head -1 err.txt)"
    exit 77
fi
[ $rc -eq 0 ] || fail "matrix exited $rc: $(tail -5 err.txt)"
grep -q "^postgres: segments is PostgreSQL's own wal_recycle" table.txt || fail "the table does not say what segments is"
python3 - m.jsonl <<'PY' || fail "the JSON lines"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
runs = [r for r in runs if "metrics" in r]
assert len(runs) == 4, [r.get("status") for r in runs]
recycled = {"recycle": 0, "fresh": 0}
removed_fresh = 0
for r in runs:
    assert r["engine"] == "postgres" and r["status"] == "ok", (r["engine"], r["status"], r.get("reason"))
    seg = r["config"]["segments"]
    s = dict(x.split("=", 1) for x in r["engine_settings"].split())
    assert s["wal_recycle"] == ("on" if seg == "recycle" else "off"), (seg, s["wal_recycle"])
    assert s["wal_segment_size"] == "1MB" and s["max_wal_size"] == "4MB", s
    assert s["log_checkpoints"] == "on", s
    m = r["metrics"]["segments"]
    assert m["recycled"] is not None and m["removed"] is not None, m
    recycled[seg] += m["recycled"]
    if seg == "fresh":
        removed_fresh += m["removed"]
assert recycled["recycle"] > 0, recycled
assert recycled["fresh"] == 0, recycled
assert removed_fresh > 0, removed_fresh
PY
nothing_left "after the matrix"
echo "ok: wal_recycle on and off, read back; segments recycled only with it on"

# 2. a setting that would listen on the network: refused before any work
"$bin" matrix --fs ext4 --engine postgres --pg-set 'listen_addresses=*' --duration 1 --keys 100 \
    --workdir "$wd" --quiet >out.txt 2>err.txt
rc=$?
[ $rc -eq 2 ] || fail "--pg-set listen_addresses=*: exit $rc, not 2: $(cat err.txt)"
[ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^commitlab matrix: --pg-set listen_addresses: refused" err.txt ||
    fail "--pg-set listen_addresses=*: $(cat err.txt)"
nothing_left "after the refusal"
echo "ok: --pg-set listen_addresses refused"
